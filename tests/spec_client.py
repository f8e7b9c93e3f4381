"""A runtime client written from the service spec alone (plain HTTP, no published library), and
the violations of the spec's client rules that can be planted in it one at a time: the kit's
own suite drives it through the conformance kit to prove the kit catches each one.

Where the spec is silent, it does what the published clients were measured to do
(`../shared/contract/runtime-wire.md`), so that unplanted it passes every case.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

Json = dict[str, Any]

LOOPBACK = ("localhost", "127.0.0.1", "::1")
NOT_RETRYABLE = ("Authentication", "Authorization", "MalformedResponse")
MAX_RETRY_AFTER_S = 30


class Plant(NamedTuple):
    """One violation of the spec: what the client then does wrong, and the kit's case that
    must fail because of it."""

    rule: str
    caught_by: str


PLANTS: dict[str, Plant] = {
    # reads
    "missing-flag-reason-default": Plant(
        "a missing flag reads with reason DEFAULT (kind FlagNotFound)",
        "reads/missing-flag-is-flag-not-found",
    ),
    "missing-flag-reason-targeting-match": Plant(
        "a missing flag reads with reason TARGETING_MATCH (kind FlagNotFound)",
        "reads/missing-flag-is-flag-not-found",
    ),
    "missing-flag-raises": Plant(
        "a missing flag raises instead of returning the default",
        "reads/missing-flag-serves-the-default",
    ),
    "type-mismatch-reason-default": Plant(
        "a type mismatch reads with reason DEFAULT (kind TypeMismatch)",
        "reads/type-mismatch-is-type-mismatch",
    ),
    "type-mismatch-serves-the-stored-value": Plant(
        "a value of another type than the one read is returned as it is",
        "reads/type-mismatch-serves-the-default",
    ),
    "zero-value-on-failure": Plant(
        "a failed read returns the type's zero value, not the caller's default",
        "faults/evaluate-500",
    ),
    "no-error-kind-on-failure": Plant(
        "a failed read returns the default with no error kind", "faults/evaluate-500"
    ),
    "unmatched-serves-null": Plant(
        "a decision that did not match serves its null value instead of the default",
        "reads/unmet-match-condition-serves-the-default",
    ),
    "payload-always": Plant(
        "the payload comes with every read, asked for or not", "reads/no-payload-unless-asked"
    ),
    "payload-as-string": Plant(
        "the payload is returned JSON-encoded, not as a JSON value",
        "reads/include-payload-gives-the-payload",
    ),
    "variant-dropped": Plant("the decision's variant is dropped", "reads/string-reads-its-variant"),
    "float-truncated": Plant("a number read as a float is truncated", "reads/float-reads"),
    "targeting-key-not-sent": Plant(
        "evaluate is sent without the targeting key", "reads/boolean-reads-true"
    ),
    "attributes-not-sent": Plant(
        "evaluate is sent without the context's attributes",
        "reads/unmet-match-condition-serves-the-default",
    ),
    "required-targeting-key-still-sent": Plant(
        "with requireTargetingKey on, a read without one still goes to the service",
        "reads/a-missing-targeting-key-sends-nothing",
    ),
    "targeting-key-missing-reason-default": Plant(
        "a missing required targeting key reads with reason DEFAULT (kind InvalidContext)",
        "reads/a-missing-targeting-key-is-targeting-key-missing",
    ),
    # faults
    "retries-evaluate-after-a-500": Plant("evaluate is retried after a 500", "faults/evaluate-500"),
    "retries-evaluate-after-a-429": Plant(
        "evaluate is retried after a 429", "faults/evaluate-429-is-not-retried"
    ),
    "retries-evaluate-after-a-timeout": Plant(
        "evaluate is retried after a timeout", "faults/evaluate-slower-than-the-timeout"
    ),
    "ignores-the-timeout-option": Plant(
        "the client's timeout option is ignored (it waits 3 s)",
        "faults/evaluate-slower-than-the-timeout",
    ),
    "raises-on-a-network-error": Plant(
        "a read raises when nothing listens", "faults/service-offline"
    ),
    "raises-on-a-malformed-answer": Plant(
        "a read raises on an answer that is not JSON", "faults/evaluate-invalid-json"
    ),
    "raises-on-a-truncated-answer": Plant(
        "a read raises on an answer cut short", "faults/evaluate-truncated"
    ),
    "raises-on-a-connection-reset": Plant(
        "a read raises on a connection reset", "faults/evaluate-connection-reset"
    ),
    # registration
    "register-raises": Plant(
        "register raises on a failure instead of ok=false", "registration/gives-up-after-one-retry"
    ),
    "register-never-retried": Plant(
        "register is never retried", "registration/retried-once-after-a-500"
    ),
    "register-tried-three-times": Plant(
        "register is retried twice", "registration/gives-up-after-one-retry"
    ),
    "register-retried-after-a-401": Plant(
        "register is retried after a 401", "registration/not-retried-after-a-401"
    ),
    "register-retried-after-a-403": Plant(
        "register is retried after a 403", "registration/not-retried-after-a-403"
    ),
    "register-retried-after-a-malformed-answer": Plant(
        "register is retried after an answer that is not JSON",
        "registration/not-retried-after-a-malformed-answer",
    ),
    "register-not-retried-after-a-429": Plant(
        "a 429 on register is taken as final", "registration/retried-once-after-a-429"
    ),
    "register-not-retried-after-a-timeout": Plant(
        "a timeout on register is taken as final", "registration/retried-once-after-a-timeout"
    ),
    "register-drops-properties": Plant(
        "register sends no properties", "registration/register-records-the-target"
    ),
    "register-drops-the-environment": Plant(
        "register sends no environment", "registration/register-records-the-target"
    ),
    "register-ok-on-failure": Plant(
        "register reports ok=true after failing", "registration/gives-up-after-one-retry"
    ),
    # exposures and signals
    "exposures-not-deduplicated": Plant(
        "the same exposure recorded twice is sent twice", "exposures/duplicates-collapse"
    ),
    "dedup-ignores-variant-and-value": Plant(
        "exposures differing only in variant or value are collapsed",
        "exposures/differing-exposures-are-all-sent",
    ),
    "exposes-on-a-plain-read": Plant(
        "a read without sendExposure sends an exposure", "reads/a-plain-read-sends-no-exposure"
    ),
    "send-exposure-ignored": Plant("sendExposure sends nothing", "reads/send-exposure-sends-it"),
    "exposure-drops-the-value": Plant(
        "an exposure is sent without its value", "exposures/shutdown-flushes-exposures"
    ),
    "signals-not-sent": Plant(
        "a signal never reaches capture", "exposures/a-signal-reaches-capture"
    ),
    # shutdown
    "no-flush-at-shutdown": Plant(
        "shutdown drops queued exposures", "exposures/shutdown-flushes-exposures"
    ),
    "reads-after-shutdown-reach-the-wire": Plant(
        "a read after shutdown still calls evaluate", "lifecycle/read-after-shutdown"
    ),
    "read-after-shutdown-is-not-ready": Plant(
        "a read after shutdown has kind NotReady, not AlreadyClosed",
        "lifecycle/read-after-shutdown",
    ),
    "read-after-shutdown-reason-default": Plant(
        "a read after shutdown has reason DEFAULT (kind AlreadyClosed)",
        "lifecycle/read-after-shutdown-is-provider-not-ready",
    ),
    "second-shutdown-raises": Plant("shutting down twice raises", "lifecycle/shutdown-twice"),
    "shutdown-raises-when-the-flush-fails": Plant(
        "shutdown raises when its final flush fails", "lifecycle/shutdown-when-the-flush-fails"
    ),
    # configuration
    "accepts-no-key": Plant(
        "a remote client is made without an API key", "configuration/remote-without-a-key"
    ),
    "allows-plain-http-off-loopback": Plant(
        "plain http is allowed off loopback", "configuration/plain-http-off-loopback"
    ),
    # secrets
    "key-in-error-messages": Plant(
        "an error message holds the API key", "faults/secrets-absent-from-messages"
    ),
    "host-in-error-messages": Plant("an error message holds the host", "faults/evaluate-500"),
    "host-in-configuration-errors": Plant(
        "a configuration error names the host it refused", "configuration/plain-http-off-loopback"
    ),
    "key-in-events": Plant(
        "the API key travels in an exposure's properties", "exposures/duplicates-collapse"
    ),
    "key-in-the-url": Plant(
        "the API key travels in the query string as well", "reads/boolean-reads-true"
    ),
    "sends-an-organisation-key": Plant(
        "an organisation key is sent to the runtime plane", "reads/boolean-reads-true"
    ),
    # namespaces: the base path
    "drops-the-base-path": Plant(
        "the API URL's path is dropped when joining routes (as new URL('/v1/...', base) does)",
        "reads/boolean-reads-true",
    ),
}

STRICT_PLANTS: dict[str, Plant] = {
    "ignores-retry-after": Plant(
        "register is retried at once, whatever Retry-After asks",
        "registration/waits-for-retry-after-on-a-429",
    ),
}
"""Violations of what the spec leaves open (timing): a warning, a failure under --strict."""


class Failure(Exception):
    """A failed call: its error kind, a message fit to show a user, what happened on the wire
    (`cause`, for the plants that raise on it) and the Retry-After the answer asked for."""

    def __init__(self, kind: str, message: str, cause: str = "", retry_after_s: float = 0) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.cause = cause
        self.retry_after_s = retry_after_s


class Refused(Exception):
    """The client could not be made (kind Configuration)."""


_TYPES: dict[str, tuple[type, ...]] = {
    "boolean": (bool,),
    "string": (str,),
    "integer": (int,),
    "float": (int, float),
    "object": (dict,),
}


class SpecClient:
    """A remote client of the runtime plane, as the spec describes one."""

    def __init__(self, api_url: str | None, api_key: str | None, options: Json, plant: str):
        self.plant = plant
        if not api_key and not self.planted("accepts-no-key"):
            raise Refused("remote mode needs an API key")
        url = urllib.parse.urlsplit(api_url or "")
        loopback = url.hostname in LOOPBACK
        if url.scheme != "https" and not loopback:
            if self.planted("host-in-configuration-errors"):
                raise Refused(f"plain http is not allowed for {url.hostname}")
            if not self.planted("allows-plain-http-off-loopback"):
                raise Refused("plain http is allowed only on loopback")
        self.api_url = (api_url or "").rstrip("/")
        if self.planted("drops-the-base-path"):
            self.api_url = f"{url.scheme}://{url.netloc}"
        self.api_key = api_key or ""
        timeout_ms = 3000 if self.planted("ignores-the-timeout-option") else None
        self.timeout_s = (timeout_ms or int(options.get("timeoutMs", 3000))) / 1000
        self.require_targeting_key = bool(options.get("requireTargetingKey", False))
        self.queued: list[Json] = []
        self.seen: set[str] = set()
        self.closed = False
        self.lock = threading.Lock()

    def planted(self, name: str) -> bool:
        return self.plant == name

    # -- reads ----------------------------------------------------------------------------

    def evaluate(self, body: Json) -> Json:
        default = body.get("default")
        context = dict(body.get("context") or {})
        targeting_key = context.pop("targetingKey", None)
        if self.closed:
            if self.planted("reads-after-shutdown-reach-the-wire"):
                self._post("/v1/flags/evaluate", {"targetingKey": targeting_key})
            return self._closed_read(default)
        missing = self.require_targeting_key and not targeting_key
        if missing and not self.planted("required-targeting-key-still-sent"):
            reason = "DEFAULT" if self.planted("targeting-key-missing-reason-default") else None
            return _failed(default, "InvalidContext", "targeting key required", reason)
        try:
            decision = self._decision(body["flagKey"], targeting_key, context)
        except Failure as failure:
            return self._failed_read(default, failure)
        return self._read(body, decision)

    def _closed_read(self, default: Any) -> Json:
        if self.planted("read-after-shutdown-is-not-ready"):
            return _failed(default, "NotReady", "not ready", "PROVIDER_NOT_READY")
        reason = "DEFAULT" if self.planted("read-after-shutdown-reason-default") else None
        return _failed(default, "AlreadyClosed", "the client is closed", reason)

    def _decision(self, flag_key: str, targeting_key: str | None, attributes: Json) -> Json:
        request: Json = {"flagKeys": [flag_key]}
        if targeting_key and not self.planted("targeting-key-not-sent"):
            request["targetingKey"] = targeting_key
        if attributes and not self.planted("attributes-not-sent"):
            request["attributes"] = attributes
        attempts = 2 if self._retries_evaluate() else 1
        for attempt in range(attempts):
            try:
                answer = self._post("/v1/flags/evaluate", request)
                break
            except Failure:
                if attempt == attempts - 1:
                    raise
        decisions = answer.get("decisions")
        if not isinstance(decisions, list):
            raise Failure("MalformedResponse", "the answer has no decisions")
        for decision in decisions:
            if isinstance(decision, dict) and decision.get("flagKey") == flag_key:
                return decision
        return {"flagKey": flag_key, "found": False, "reason": "ERROR"}

    def _retries_evaluate(self) -> bool:
        return self.plant in (
            "retries-evaluate-after-a-500",
            "retries-evaluate-after-a-429",
            "retries-evaluate-after-a-timeout",
        )

    def _read(self, body: Json, decision: Json) -> Json:
        default, kind = body.get("default"), body["type"]
        if decision.get("found") is not True:
            return self._not_found(default, decision)
        value: Any = decision.get("value")
        wanted = _TYPES[kind]
        is_number = kind in ("integer", "float")
        mismatched = (isinstance(value, bool) and is_number) or not isinstance(value, wanted)
        if mismatched and not self.planted("type-mismatch-serves-the-stored-value"):
            reason = "DEFAULT" if self.planted("type-mismatch-reason-default") else None
            return _failed(default, "TypeMismatch", f"the value is not a {kind}", reason)
        if self.planted("float-truncated") and kind == "float":
            value = int(value)
        variant = None if self.planted("variant-dropped") else decision.get("variant")
        payload = None
        if body.get("includePayload") or self.planted("payload-always"):
            payload = decision.get("payload")
            if self.planted("payload-as-string"):
                payload = json.dumps(payload)
        exposed = body.get("sendExposure") and not self.planted("send-exposure-ignored")
        if exposed or self.planted("exposes-on-a-plain-read"):
            context = body.get("context") or {}
            self._queue(context.get("targetingKey"), body["flagKey"], variant, value)
            if self.planted("exposes-on-a-plain-read"):
                self.flush({})
        return {
            "value": value,
            "variant": variant,
            "reason": decision.get("reason"),
            "errorKind": None,
            "payload": payload,
            "metadata": decision.get("flagMetadata") or {},
        }

    def _not_found(self, default: Any, decision: Json) -> Json:
        """Known but not matched (reason DEFAULT on the wire): the caller's default, no error;
        unknown: the default with FLAG_NOT_FOUND."""
        if decision.get("reason") == "DEFAULT":
            served = None if self.planted("unmatched-serves-null") else default
            return {"value": served, "reason": "DEFAULT", "errorKind": None}
        if self.planted("missing-flag-raises"):
            return {"raised": "KeyError: no such control point"}
        reason = {
            "missing-flag-reason-default": "DEFAULT",
            "missing-flag-reason-targeting-match": "TARGETING_MATCH",
        }.get(self.plant, "FLAG_NOT_FOUND")
        return _failed(default, "FlagNotFound", "control point not found", reason)

    def _failed_read(self, default: Any, failure: Failure) -> Json:
        if self.planted(f"raises-on-a-{failure.cause}"):
            return {"raised": f"{failure.kind}Error: {failure.message}"}
        if self.planted("zero-value-on-failure"):
            return {"value": type(default)(), "reason": "ERROR", "errorKind": failure.kind}
        if self.planted("no-error-kind-on-failure"):
            return {"value": default, "reason": "DEFAULT", "errorKind": None}
        return _failed(default, failure.kind, failure.message)

    # -- registration ---------------------------------------------------------------------

    def register(self, body: Json) -> Json:
        request = {"targetingKey": body["targetingKey"]}
        for name in ("kind", "properties", "environment"):
            dropped = {"properties": "register-drops-properties",
                       "environment": "register-drops-the-environment"}.get(name)  # fmt: skip
            if body.get(name) is not None and not (dropped and self.planted(dropped)):
                request[name] = body[name]
        attempts = 3 if self.planted("register-tried-three-times") else 2
        if self.planted("register-never-retried"):
            attempts = 1
        for attempt in range(attempts):
            try:
                self._post("/v1/targets/register", request)
                return {"ok": True, "errorKind": None}
            except Failure as failure:
                last = failure
                if attempt == attempts - 1 or not self._retryable(failure):
                    break
                time.sleep(self._retry_after(failure))
        if self.planted("register-raises"):
            return {"raised": f"{last.kind}Error: {last.message}"}
        ok = self.planted("register-ok-on-failure")
        return {"ok": ok, "errorKind": None if ok else last.kind}

    def _retryable(self, failure: Failure) -> bool:
        planted_retry = {
            "Authentication": "register-retried-after-a-401",
            "MalformedResponse": "register-retried-after-a-malformed-answer",
        }
        if failure.kind in NOT_RETRYABLE:
            if failure.kind == "Authorization":
                return self.planted("register-retried-after-a-403")
            return self.planted(planted_retry[failure.kind])
        if failure.kind == "RateLimited":
            return not self.planted("register-not-retried-after-a-429")
        if failure.kind == "Timeout":
            return not self.planted("register-not-retried-after-a-timeout")
        return True

    def _retry_after(self, failure: Failure) -> float:
        """RFC 9110: Retry-After says how long to wait; the spec is silent, so it is honoured."""
        if self.planted("ignores-retry-after"):
            return 0
        return min(failure.retry_after_s, MAX_RETRY_AFTER_S)

    # -- exposures, signals, shutdown -----------------------------------------------------

    def record(self, body: Json) -> Json:
        self._queue(body["targetingKey"], body["flagKey"], body.get("variant"), body.get("value"))
        return {"ok": True}

    def _queue(self, targeting_key: Any, flag_key: str, variant: Any, value: Any) -> None:
        identity = [targeting_key, flag_key, variant, value]
        if self.planted("dedup-ignores-variant-and-value"):
            identity = [targeting_key, flag_key]
        seen = json.dumps(identity, sort_keys=True)
        with self.lock:
            if seen in self.seen and not self.planted("exposures-not-deduplicated"):
                return
            self.seen.add(seen)
            event: Json = {"type": "exposure", "targetingKey": targeting_key, "flagKey": flag_key,
                           "variant": variant, "value": value}  # fmt: skip
            if self.planted("exposure-drops-the-value"):
                del event["value"]
            if self.planted("key-in-events"):
                event["properties"] = {"apiKey": self.api_key}
            self.queued.append(event)

    def flush(self, body: Json) -> Json:
        with self.lock:
            batch, self.queued = self.queued, []
        if batch:
            try:
                self._post("/v1/capture", {"events": batch})
            except Failure:
                with self.lock:
                    self.queued = batch + self.queued  # sent again on the next flush
                raise
        return {"ok": True}

    def signal(self, body: Json) -> Json:
        properties = {key: value for key, value in body.items() if key not in ("command", "name")}
        event = {"type": "signal", "targetingKey": "spec-client", "name": body["name"],
                 "flagKey": None, "variant": None, "properties": properties}  # fmt: skip
        if not self.planted("signals-not-sent"):
            self._post("/v1/capture", {"events": [event]})
        return {"ok": True}

    def shutdown(self, body: Json) -> Json:
        if self.closed:
            if self.planted("second-shutdown-raises"):
                return {"raised": "RuntimeError: already closed"}
            return {"ok": True}
        if not self.planted("no-flush-at-shutdown"):
            try:
                self.flush({})
            except Failure as failure:
                if self.planted("shutdown-raises-when-the-flush-fails"):
                    return {"raised": f"{failure.kind}Error: {failure.message}"}
        self.closed = True
        return {"ok": True}

    # -- the wire -------------------------------------------------------------------------

    def _post(self, path: str, body: Json) -> Json:
        key = "svc_org_spec-client" if self.planted("sends-an-organisation-key") else self.api_key
        url = self.api_url + path
        if self.planted("key-in-the-url"):
            url += "?" + urllib.parse.urlencode({"api_key": self.api_key})
        request = urllib.request.Request(
            url,
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as answer:
                raw = answer.read()
        except urllib.error.HTTPError as error:
            with error:
                raise self._http_failure(error) from None
        except (TimeoutError, http.client.IncompleteRead, OSError) as error:
            raise self._network_failure(error) from None
        try:
            parsed = json.loads(raw)
        except ValueError:
            raise Failure(
                "MalformedResponse", "the answer is not JSON", "malformed-answer"
            ) from None
        if not isinstance(parsed, dict):
            raise Failure(
                "MalformedResponse", "the answer is not a JSON object", "malformed-answer"
            )
        return parsed

    def _http_failure(self, error: urllib.error.HTTPError) -> Failure:
        kind = {401: "Authentication", 403: "Authorization", 429: "RateLimited"}.get(
            error.code, "BackendUnavailable"
        )
        cause = ""
        try:
            json.loads(error.read() or b"{}")
        except ValueError:
            kind, cause = "MalformedResponse", "malformed-answer"
        retry_after = error.headers.get("Retry-After", "")
        wait_s = int(retry_after) if retry_after.isdigit() else 0
        return Failure(kind, self._message(f"HTTP {error.code}"), cause, wait_s)

    def _network_failure(self, error: BaseException) -> Failure:
        if isinstance(error, http.client.IncompleteRead):
            said = self._message("the answer was cut short")
            return Failure("Internal", said, "truncated-answer")
        reason = getattr(error, "reason", error)
        if isinstance(reason, TimeoutError):
            return Failure("Timeout", self._message("no answer in time"), "timeout")
        if isinstance(reason, ConnectionResetError):  # RemoteDisconnected is one too
            return Failure("Network", self._message("the connection was reset"), "connection-reset")
        return Failure("Network", self._message("the service cannot be reached"), "network-error")

    def _message(self, said: str) -> str:
        if self.planted("key-in-error-messages"):
            return f"{said} (key {self.api_key})"
        if self.planted("host-in-error-messages"):
            return f"{said} from {urllib.parse.urlsplit(self.api_url).hostname}"
        return said


def _failed(default: Any, kind: str, message: str, reason: str | None = None) -> Json:
    return {"value": default, "variant": None, "reason": reason or _REASONS.get(kind, "ERROR"),
            "errorKind": kind, "errorMessage": message, "payload": None}  # fmt: skip


_REASONS = {
    "FlagNotFound": "FLAG_NOT_FOUND",
    "TypeMismatch": "TYPE_MISMATCH",
    "InvalidContext": "TARGETING_KEY_MISSING",
    "AlreadyClosed": "PROVIDER_NOT_READY",
    "NotReady": "PROVIDER_NOT_READY",
}
"""The spec's reason for each failure that has one; any other failure reads as ERROR."""


INFO = {
    "protocol": 1,
    "language": "python",
    "capabilities": [
        "evaluate", "register", "exposures", "signals", "shutdown", "configuration", "payloads",
    ],
}  # fmt: skip


class SpecAdapter:
    """The kit's adapter protocol around `SpecClient`, one plant per URL: the adapter at
    `{url}/plant/{name}` makes clients with that violation, `{url}/plant/none` clean ones."""

    def __init__(self) -> None:
        self._clients: dict[str, SpecClient] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> SpecAdapter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def url(self, plant: str = "none") -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/plant/{plant}"

    def _answer(self, method: str, path: str, body: Json) -> Json:
        _, _, plant, *rest = path.split("/")
        if method == "GET":
            return {**INFO, "name": f"spec client (plant: {plant})"}
        if method == "DELETE":
            with self._lock:
                self._clients.pop(rest[-1], None)
            return {}
        if rest == ["clients"]:
            return self._create(plant, body)
        client = self._clients[rest[-1]]
        commands = {
            "evaluate": client.evaluate, "register": client.register,
            "recordExposure": client.record, "flushExposures": client.flush,
            "signal": client.signal, "shutdown": client.shutdown,
        }  # fmt: skip
        try:
            return commands[body["command"]](body)
        except Failure as failure:
            return {"raised": f"{failure.kind}Error: {failure.message}"}

    def _create(self, plant: str, body: Json) -> Json:
        try:
            client = SpecClient(body.get("apiUrl"), body.get("apiKey"), body["options"], plant)
        except Refused as refused:
            return {"error": {"kind": "Configuration", "message": str(refused)}}
        with self._lock:
            client_id = str(len(self._clients) + 1) + "-" + str(id(client))
            self._clients[client_id] = client
        return {"id": client_id}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        answer = self._answer

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._reply(answer("GET", self.path, {}))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                self._reply(answer("POST", self.path, json.loads(self.rfile.read(length))))

            def do_DELETE(self) -> None:
                self._reply(answer("DELETE", self.path, {}))

            def _reply(self, body: Json) -> None:
                encoded = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(encoded)))
                self.end_headers()
                self.wfile.write(encoded)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
