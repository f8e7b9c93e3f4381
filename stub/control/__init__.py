"""The test-control plane: /health and /_test/*, and the bounded recordings it reads."""
