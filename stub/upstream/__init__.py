"""The real service as the reference: one HTTP client for it (`client.py`) and proxy mode
(`proxy.py`), svc-stub's faults in front of the service."""
