"""The app on a socket: listening, signals, the ready line's port, the access log."""

from stub.http.listener import ListenError, is_running, serve

__all__ = ["ListenError", "is_running", "serve"]
