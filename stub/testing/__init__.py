"""Running the stub from a test suite: the pytest plugin and a stub as a child process."""
