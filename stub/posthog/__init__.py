"""The legacy PostHog routes: /flags, the definitions poll, /batch."""
