"""The wire-conformance kit: any client library, through a small adapter, against the spec's
rules and the stub's real faults (`svc-stub conformance --adapter URL`)."""
