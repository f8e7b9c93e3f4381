"""The conformance kit's reference adapter for the published Python client, `fireweave==0.1.0`:
the adapter protocol (stub/conformance/protocol.py) over the standard library's HTTP server.

    python adapters/fireweave_python.py [--port 0]
    # prints: adapter listening on http://127.0.0.1:PORT

It reports what the library returned, never what it should have: a case the client gets wrong
fails, and the ones this version is known to get wrong are declared below with the reason.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fireweave import (
    EvaluationContext,
    FireweaveClient,
    FireweaveConfig,
    FireweaveError,
    FireweaveRemoteAdapter,
    FireweaveRuntime,
    FlagType,
    RegisterTargetOptions,
)

Json = dict[str, Any]

INFO: Json = {
    "protocol": 1,
    "name": "fireweave 0.1.0 (Python)",
    "language": "python",
    "capabilities": [
        "evaluate",
        "register",
        "exposures",
        "signals",
        "shutdown",
        "configuration",
        "payloads",
    ],
    "expectedFailures": {
        "reads/missing-flag-is-flag-not-found": (
            "0.1.0 serves the default with reason DEFAULT, not FLAG_NOT_FOUND"
        ),
        "reads/type-mismatch-is-type-mismatch": (
            "0.1.0 gives reason ERROR (error kind TypeMismatch), not TYPE_MISMATCH"
        ),
        "reads/a-missing-targeting-key-is-targeting-key-missing": (
            "0.1.0 gives reason ERROR (error kind InvalidContext), not TARGETING_KEY_MISSING"
        ),
        "lifecycle/read-after-shutdown-is-provider-not-ready": (
            "0.1.0 gives reason ERROR (error kind AlreadyClosed), not PROVIDER_NOT_READY"
        ),
        **dict.fromkeys(
            (
                "reads/send-exposure-sends-it",
                "exposures/send-exposure-twice-is-one",
                "exposures/shutdown-flushes-exposures",
            ),
            "0.1.0's remote adapter marks itself closed before its final flush, so whatever "
            "is queued at shutdown is never sent",
        ),
    },
}

TYPES = {
    "boolean": FlagType.BOOLEAN,
    "string": FlagType.STRING,
    "integer": FlagType.INTEGER,
    "float": FlagType.FLOAT,
    "object": FlagType.OBJECT,
}


class Clients:
    """The clients the kit made, by id."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._clients: dict[str, tuple[FireweaveRemoteAdapter, FireweaveClient]] = {}
        self._lock = threading.Lock()

    def create(self, body: Json) -> Json:
        options = body.get("options", {})
        try:
            adapter = FireweaveRemoteAdapter(
                api_url=body.get("apiUrl"),
                api_key=body.get("apiKey"),
                request_timeout_ms=int(options.get("timeoutMs", 3000)),
            )
            config = FireweaveConfig(
                require_targeting_key=bool(options.get("requireTargetingKey", False))
            )
            runtime = FireweaveRuntime(adapter, config)
            runtime.initialize()
        except FireweaveError as exc:
            return {"error": {"kind": exc.kind.value, "message": exc.message}}
        with self._lock:
            client_id = str(next(self._ids))
            self._clients[client_id] = (adapter, FireweaveClient(runtime))
        return {"id": client_id}

    def command(self, client_id: str, body: Json) -> Json | None:
        """What the library returned; None for a client that does not exist."""
        if client_id not in self._clients:
            return None
        adapter, client = self._clients[client_id]
        try:
            return COMMANDS[body["command"]](adapter, client, body)
        except Exception as exc:  # the protocol reports a raise; it must not crash the adapter
            return {"raised": f"{type(exc).__name__}: {exc}"}

    def delete(self, client_id: str) -> None:
        with self._lock:
            self._clients.pop(client_id, None)


def evaluate(adapter: FireweaveRemoteAdapter, client: FireweaveClient, body: Json) -> Json:
    context = dict(body.get("context") or {})
    targeting_key = context.pop("targetingKey", None)
    decision = client.control_points.get_details(
        body["flagKey"],
        TYPES[body["type"]],
        body.get("default"),
        EvaluationContext(targeting_key=targeting_key, attributes=context),
        include_payload=bool(body.get("includePayload", False)),
        send_exposure=bool(body.get("sendExposure", False)),
    )
    kind = decision.error_kind
    metadata = dict(decision.flag_metadata or {})
    payload = metadata.get("fireweave.payload")  # 0.1.0 carries it JSON-encoded in metadata
    return {
        "value": decision.value,
        "variant": decision.variant,
        "reason": str(getattr(decision.reason, "value", decision.reason)),
        "errorKind": None if kind is None else str(getattr(kind, "value", kind)),
        "errorMessage": decision.error_message,
        "payload": None if payload is None else json.loads(str(payload)),
        "metadata": metadata,
    }


def register(adapter: FireweaveRemoteAdapter, client: FireweaveClient, body: Json) -> Json:
    options = RegisterTargetOptions(
        kind=body.get("kind"),
        properties=body.get("properties"),
        environment=body.get("environment"),
    )
    result = client.runtime.register_target(body["targetingKey"], options)
    error = result.error
    kind = getattr(error, "kind", None)
    return {"ok": result.ok, "errorKind": None if kind is None else str(kind.value)}


def record_exposure(adapter: FireweaveRemoteAdapter, client: FireweaveClient, body: Json) -> Json:
    result = client.exposures.record(
        body["targetingKey"], body["flagKey"], body.get("variant"), body.get("value")
    )
    return {"ok": result.ok}


def flush_exposures(adapter: FireweaveRemoteAdapter, client: FireweaveClient, body: Json) -> Json:
    """0.1.0 hands the batch to the adapter, which sends it on its own flush."""
    result = client.exposures.flush()
    adapter.flush()
    return {"ok": result.ok}


def signal(adapter: FireweaveRemoteAdapter, client: FireweaveClient, body: Json) -> Json:
    signals = client.signals
    kind = body["kind"]
    if kind == "health":
        result = signals.record_health(body["name"], body.get("status", "ok"))
    elif kind == "error":
        result = signals.record_error(body["name"], error_kind=body.get("errorKind", "Internal"))
    elif kind == "metric":
        result = signals.record_metric(body["name"], float(body.get("value", 0)))
    else:
        result = signals.record_outcome(body["name"], body.get("outcome", "success"))
    adapter.flush()
    return {"ok": result.ok}


def shutdown(adapter: FireweaveRemoteAdapter, client: FireweaveClient, body: Json) -> Json:
    client.shutdown()
    return {"ok": True}


COMMANDS = {
    "evaluate": evaluate,
    "register": register,
    "recordExposure": record_exposure,
    "flushExposures": flush_exposures,
    "signal": signal,
    "shutdown": shutdown,
}


def handler_for(clients: Clients) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._answer(INFO)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path == "/clients":
                self._answer(clients.create(body))
            else:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    port = parser.parse_args().port
    server = ThreadingHTTPServer(("127.0.0.1", port), handler_for(Clients()))
    print(f"adapter listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
