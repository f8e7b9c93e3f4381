"""The adapter protocol, version 1: how the kit drives a client library through the small HTTP
service its team writes (an "adapter"). Everything is JSON; what the library did, errors
included, is data in a 200 answer. A non-2xx answer means the adapter itself failed.

    GET  /               {"protocol": 1, "name", "language", "plane": "runtime" | "vendor",
                          "capabilities": [...], "expectedFailures": {"area/case": "why"}}
    POST /clients        {"apiUrl", "apiKey", "options": {"timeoutMs", "requireTargetingKey"}}
                         -> {"id"} or {"error": {"kind", "message"}}
    POST /clients/{id}   {"command": "evaluate" | "register" | "recordExposure" |
                          "flushExposures" | "signal" | "shutdown", ...arguments}
                         -> what the library returned: evaluate {"value", "variant",
                            "reason", "errorKind", "errorMessage", "payload", "metadata"};
                            register {"ok",
                            "errorKind"}; the others {"ok"}; any command {"raised": "..."}
                            when the library raised instead of returning
    DELETE /clients/{id}

docs/guides/client-libraries.md is the full description.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, NamedTuple

PROTOCOL_VERSION = 1
CAPABILITIES = frozenset(
    {
        "evaluate", "register", "exposures", "signals", "shutdown", "configuration", "payloads",
        "browser",
    }
)  # fmt: skip
"""What an adapter can declare; a case that needs one it lacks is skipped. `browser`: the client
is a browser client, given a browser key (`svc_public_...`) instead of a server key."""

Json = dict[str, Any]

ERROR_CODES = {
    "NotReady": "PROVIDER_NOT_READY",
    "FlagNotFound": "FLAG_NOT_FOUND",
    "TypeMismatch": "TYPE_MISMATCH",
    "InvalidContext": "INVALID_CONTEXT",
    "Authentication": "GENERAL",
    "Authorization": "GENERAL",
    "RateLimited": "GENERAL",
    "Timeout": "GENERAL",
    "Network": "GENERAL",
    "BackendUnavailable": "GENERAL",
    "MalformedResponse": "PARSE_ERROR",
    "UnsupportedCapability": "GENERAL",
    "Configuration": "PROVIDER_FATAL",
    "AlreadyClosed": "PROVIDER_NOT_READY",
    "Internal": "GENERAL",
}
"""Error kind -> the OpenFeature code the fixtures expect (the contract page's table)."""


class AdapterError(Exception):
    """The adapter (not the library) failed: unreachable, a non-2xx answer, not JSON."""


class AdapterInfo(NamedTuple):
    name: str
    language: str
    plane: str
    """`runtime` (the service's /v1 routes, the default) or `vendor` (the legacy routes)."""
    capabilities: frozenset[str]
    expected_failures: dict[str, str]


class Adapter:
    """A client of one adapter service."""

    def __init__(self, url: str, timeout_s: float = 10) -> None:
        self.url = url.rstrip("/")
        self._timeout_s = timeout_s

    def info(self) -> AdapterInfo:
        body = self._call("GET", "/")
        if body.get("protocol") != PROTOCOL_VERSION:
            raise AdapterError(
                f"{self.url}: speaks adapter protocol {body.get('protocol')!r}; "
                f"this kit speaks {PROTOCOL_VERSION}"
            )
        unknown = sorted(set(body.get("capabilities", [])) - CAPABILITIES)
        if unknown:
            raise AdapterError(f"{self.url}: unknown capability {unknown[0]!r}")
        plane = body.get("plane", "runtime")
        if plane not in ("runtime", "vendor"):
            raise AdapterError(f"{self.url}: plane {plane!r} is neither runtime nor vendor")
        return AdapterInfo(
            str(body.get("name", "adapter")),
            str(body.get("language", "unknown")),
            plane,
            frozenset(body.get("capabilities", [])),
            dict(body.get("expectedFailures", {})),
        )

    def create_client(self, api_url: str, api_key: str | None, options: Json) -> Json:
        """`{"id"}` for a client made, `{"error": {"kind", "message"}}` for one refused."""
        return self._call(
            "POST", "/clients", {"apiUrl": api_url, "apiKey": api_key, "options": options}
        )

    def command(self, client_id: str, command: str, arguments: Json) -> Json:
        return self._call(
            "POST", f"/clients/{_quoted(client_id)}", {"command": command, **arguments}
        )

    def delete_client(self, client_id: str) -> None:
        self._call("DELETE", f"/clients/{_quoted(client_id)}")

    def _call(self, method: str, path: str, body: Json | None = None) -> Json:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=self._timeout_s) as answer:
                parsed = json.load(answer)
        except urllib.error.HTTPError as exc:
            with exc:
                kind = exc.headers.get_content_type()
                said = exc.read(4096)
            raise AdapterError(
                f"{method} {path}: the adapter answered {exc.code} ({kind})"
                + (_STUB_NOT_ADAPTER if _is_svc_stub(said) else "")
            ) from None
        except TimeoutError:
            raise AdapterError(
                f"{method} {path}: no answer within {self._timeout_s:g} s (--adapter-timeout)"
            ) from None
        except ValueError:
            raise AdapterError(f"{method} {path}: the adapter's answer is not JSON") from None
        except OSError as exc:
            reason = getattr(exc, "reason", None) or exc
            raise AdapterError(
                f"{method} {path}: {self.url}: {reason}: is the adapter running there? Start "
                "it first (it prints 'adapter listening on URL') and pass that URL to --adapter"
            ) from None
        if not isinstance(parsed, dict):
            raise AdapterError(f"{method} {path}: the adapter answered {type(parsed).__name__}")
        return parsed


_STUB_NOT_ADAPTER = (
    ": that is a svc-stub, not an adapter; --adapter takes the URL of your library's adapter "
    "(docs/guides/client-libraries.md), --stub the URL of a stub"
)


def _is_svc_stub(answer: bytes) -> bool:
    """svc-stub's runtime error envelope (`{"ok": false, "error": CODE, ...}`)."""
    try:
        document = json.loads(answer)
    except ValueError:
        return False
    return isinstance(document, dict) and document.get("ok") is False and "error" in document


def _quoted(client_id: str) -> str:
    return urllib.parse.quote(client_id, safe="")
