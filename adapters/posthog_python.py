"""The conformance kit's reference adapter for the analytics vendor's Python SDK (`posthog`, the
newest release), which calls the stub's legacy vendor routes (`/flags`, `/batch`): it declares
the vendor plane, so the kit runs its `vendor` cases.

    python adapters/posthog_python.py [--port 0]
    # prints: adapter listening on http://127.0.0.1:PORT
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from posthog import Posthog
from protocol_server import Clients, serve

Json = dict[str, Any]

INFO: Json = {
    "protocol": 1,
    "name": f"posthog {version('posthog')} (Python)",
    "language": "python",
    "plane": "vendor",
    "capabilities": ["evaluate", "signals", "shutdown"],
    "expectedFailures": {},
}


def create(body: Json) -> Posthog:
    timeout_s = float(body.get("options", {}).get("timeoutMs", 3000)) / 1000
    return Posthog(
        body.get("apiKey") or "",
        host=body["apiUrl"],
        sync_mode=True,  # every capture is sent before the call returns
        feature_flags_request_timeout_seconds=timeout_s,
        timeout=timeout_s,
        max_retries=0,
    )


def evaluate(client: Posthog, body: Json) -> Json:
    """A remote read of one flag (the SDK's answer is the flag's variant, or true/false)."""
    context = dict(body.get("context") or {})
    distinct_id = context.pop("targetingKey", None) or "anonymous"
    flags = client.evaluate_flags(
        distinct_id, person_properties=context, flag_keys=[body["flagKey"]]
    )
    value = flags.get_flag(body["flagKey"])
    if value is None:
        return {
            "value": body.get("default"),
            "variant": None,
            "reason": "DEFAULT",
            "errorKind": None,
        }
    return {
        "value": value,
        "variant": value if isinstance(value, str) else None,
        "reason": None,
        "errorKind": None,
    }


def signal(client: Posthog, body: Json) -> Json:
    """The vendor's analytics event, named as the signal (sent at once: sync mode)."""
    client.capture(distinct_id="conformance-kit", event=body["name"])
    return {"ok": True}


def shutdown(client: Posthog, body: Json) -> Json:
    client.shutdown()
    return {"ok": True}


COMMANDS = {"evaluate": evaluate, "signal": signal, "shutdown": shutdown}

if __name__ == "__main__":
    serve(INFO, Clients(create, COMMANDS), __doc__.splitlines()[0])
