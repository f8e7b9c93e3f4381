"""The conformance kit's reference adapter for the published Python client, `fireweave==0.1.0`:
the adapter protocol (stub/conformance/protocol.py) over the standard library's HTTP server.

    python adapters/fireweave_python.py [--port 0]
    # prints: adapter listening on http://127.0.0.1:PORT

It reports what the library returned, never what it should have: a case the client gets wrong
fails, and the ones this version is known to get wrong are declared below with the reason.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

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
from protocol_server import Clients, Refused, serve

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
            "0.1.0 serves the default with reason DEFAULT and no error, not FLAG_NOT_FOUND"
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


class Fireweave(NamedTuple):
    """A client made for the kit, and the remote adapter under it (0.1.0 sends on its flush)."""

    adapter: FireweaveRemoteAdapter
    client: FireweaveClient


def create(body: Json) -> Fireweave:
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
        raise Refused(exc.kind.value, exc.message) from None
    return Fireweave(adapter, FireweaveClient(runtime))


def evaluate(made: Fireweave, body: Json) -> Json:
    context = dict(body.get("context") or {})
    targeting_key = context.pop("targetingKey", None)
    decision = made.client.control_points.get_details(
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
        "errorCode": decision.error_code,
        "errorMessage": decision.error_message,
        "payload": None if payload is None else json.loads(str(payload)),
        "metadata": metadata,
    }


def register(made: Fireweave, body: Json) -> Json:
    options = RegisterTargetOptions(
        kind=body.get("kind"),
        properties=body.get("properties"),
        environment=body.get("environment"),
    )
    result = made.client.runtime.register_target(body["targetingKey"], options)
    error = result.error
    kind = getattr(error, "kind", None)
    return {"ok": result.ok, "errorKind": None if kind is None else str(kind.value)}


def record_exposure(made: Fireweave, body: Json) -> Json:
    result = made.client.exposures.record(
        body["targetingKey"], body["flagKey"], body.get("variant"), body.get("value")
    )
    return {"ok": result.ok}


def flush_exposures(made: Fireweave, body: Json) -> Json:
    """0.1.0 hands the batch to the adapter, which sends it on its own flush."""
    result = made.client.exposures.flush()
    made.adapter.flush()
    return {"ok": result.ok}


def signal(made: Fireweave, body: Json) -> Json:
    signals = made.client.signals
    kind = body["kind"]
    if kind == "health":
        result = signals.record_health(body["name"], body.get("status", "ok"))
    elif kind == "error":
        result = signals.record_error(body["name"], error_kind=body.get("errorKind", "Internal"))
    elif kind == "metric":
        result = signals.record_metric(body["name"], float(body.get("value", 0)))
    else:
        result = signals.record_outcome(body["name"], body.get("outcome", "success"))
    made.adapter.flush()
    return {"ok": result.ok}


def shutdown(made: Fireweave, body: Json) -> Json:
    made.client.shutdown()
    return {"ok": True}


COMMANDS = {
    "evaluate": evaluate,
    "register": register,
    "recordExposure": record_exposure,
    "flushExposures": flush_exposures,
    "signal": signal,
    "shutdown": shutdown,
}


if __name__ == "__main__":
    serve(INFO, Clients(create, COMMANDS), __doc__.splitlines()[0])
