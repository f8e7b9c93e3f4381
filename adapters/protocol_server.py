"""What every reference adapter shares: the conformance kit's adapter protocol (version 1) over
the standard library's threading HTTP server. An adapter supplies its `GET /` document, how to
make a client from `POST /clients`, and one function per command."""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Json = dict[str, Any]
Command = Callable[[Any, Json], Json]


class Refused(Exception):
    """The library refused to make a client: reported as `{"error": {"kind", "message"}}`."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class Clients:
    """The clients the kit made, by id; what each command returned, or raised."""

    def __init__(self, create: Callable[[Json], Any], commands: Mapping[str, Command]) -> None:
        self._create = create
        self._commands = commands
        self._ids = itertools.count(1)
        self._clients: dict[str, Any] = {}
        self._lock = threading.Lock()

    def create(self, body: Json) -> Json:
        try:
            client = self._create(body)
        except Refused as exc:
            return {"error": {"kind": exc.kind, "message": exc.message}}
        with self._lock:
            client_id = str(next(self._ids))
            self._clients[client_id] = client
        return {"id": client_id}

    def command(self, client_id: str, body: Json) -> Json | None:
        """What the library returned; None for a client that does not exist."""
        client = self._clients.get(client_id)
        if client is None:
            return None
        command = self._commands.get(body.get("command", ""))
        if command is None:
            return {"raised": f"UnsupportedCommand: {body.get('command')!r}"}
        try:
            return command(client, body)
        except Exception as exc:  # the protocol reports a raise; it must not crash the adapter
            return {"raised": f"{type(exc).__name__}: {exc}"}

    def delete(self, client_id: str) -> None:
        with self._lock:
            self._clients.pop(client_id, None)


def serve(info: Json, clients: Clients, description: str) -> None:
    """`--port` (0: a free one), the ready line on stdout, then serve until interrupted."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--port", type=int, default=0)
    port = parser.parse_args().port
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(info, clients))
    print(f"adapter listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


def _handler(info: Json, clients: Clients) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._answer(info)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path == "/clients":
                self._answer(clients.create(body))
                return
            answer = clients.command(self.path.removeprefix("/clients/"), body)
            if answer is None:
                self._answer({"error": f"no client {self.path}"}, status=404)
            else:
                self._answer(answer)

        def do_DELETE(self) -> None:
            clients.delete(self.path.removeprefix("/clients/"))
            self._answer({})

        def _answer(self, body: Json, status: int = 200) -> None:
            encoded = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(encoded)))
            self.end_headers()
            self.wfile.write(encoded)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the kit prints what matters

    return Handler
