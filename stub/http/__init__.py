"""The way in: every request's life, one module a stage (see docs/about/architecture.md).

target -> (the namespace: stub/namespaces.py) -> admission -> pipeline (fault, answer, error
envelope, warning, CORS, sent) -> exchange (the journal entry); lane is the same stages for a
plain evaluate or capture, straight from the parser; connection is the door to aiohttp's
internals; listener puts an app on a socket; client_side lets the `svc-stub` command import
aiohttp's server side without its client side."""
