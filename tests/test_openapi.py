"""The stub's own OpenAPI document, `stub/openapi.json`: served verbatim, valid OpenAPI 3.1,
and describing exactly the routes the app serves, every route name, fault mode, selector and
group, each plane's error envelope, a JSON body for every answer but a 304, and what the key
checks of the runtime and vendor routes answer (refusals, the warning header, rate limits)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest
from aiohttp import hdrs, web
from aiohttp.test_utils import TestClient

import stub
from stub import StubConfig, create_app
from stub.app import CLIENT_PLANES
from stub.faults.arming import GROUPS, SELECTORS, Source
from stub.faults.modes import MODE_PARAMETERS, FaultMode, FaultParameter
from stub.http.pipeline import WARNING_HEADER
from stub.keys import ClientPlane, Family, misuse
from stub.routes import management

DOCUMENT_PATH = Path(stub.__file__).resolve().parent / "openapi.json"
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
CATCH_ALL = "/{path}"
"""The fallback route that answers unknown paths and methods (JSON 404/405): not an API."""
BAD_PREFIX = "/ns/{name}{rest}"
"""What answers a bad namespace prefix (JSON 400): described with namespaces, not an API."""

MODES = {mode.value for mode in FaultMode}
SELECTOR_NAMES = {*SELECTORS, *GROUPS}
"""What `applyTo` takes: every selector, and the groups (`all`, `runtime`, ...)."""
ROUTE_NAMES = {
    route.kwargs["name"]
    for plane in CLIENT_PLANES
    for route in plane.routes
    if isinstance(route, web.RouteDef)
}
"""What `/_test/requests` calls the client routes: `evaluate`, `projects.create`, ..."""
MANAGEMENT_PATHS = {
    spelling
    for route in management.routes
    if isinstance(route, web.RouteDef)
    for spelling in (route.path, route.path + "/")
}

Json = dict[str, Any]


def load_document() -> Json:
    document: Json = json.loads(DOCUMENT_PATH.read_text(encoding="utf-8"))
    return document


@pytest.fixture(scope="module")
def document() -> Json:
    return load_document()


def resolve(document: Json, node: Any) -> Any:
    """Follow local `$ref`s (`#/components/...`) until a node without one."""
    seen: set[str] = set()
    while isinstance(node, dict) and "$ref" in node:
        target = node["$ref"]
        assert isinstance(target, str), f"$ref is not a string: {target!r}"
        assert target.startswith("#/"), f"only local references are used: {target}"
        assert target not in seen, f"reference cycle through {target}"
        seen.add(target)
        node = document
        for part in target[2:].split("/"):
            key = part.replace("~1", "/").replace("~0", "~")
            assert isinstance(node, dict), f"{target}: {key} is inside a non-object"
            assert key in node, f"{target} does not resolve ({key} is missing)"
            node = node[key]
    return node


def operations(document: Json) -> Iterator[tuple[str, str, Json]]:
    """(path, method, operation) for every operation, path items resolved."""
    for path, item in document["paths"].items():
        resolved = resolve(document, item)
        for method in HTTP_METHODS:
            if method in resolved:
                yield path, method, resolved[method]


def walk(node: Any) -> Iterator[Any]:
    """Every node of a JSON tree, depth first."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, dict):
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)


def enum_values(document: Json) -> set[Any]:
    values: set[Any] = set()
    for node in walk(document):
        if isinstance(node, dict) and isinstance(node.get("enum"), list):
            values.update(value for value in node["enum"] if not isinstance(value, dict | list))
    return values


PAGES = frozenset({"/_test/ui", "/_test/ui/{asset}", "/_test/ui/snapshot"})
"""The inspector's page, its files and its snapshot: HTML, JavaScript and CSS, not JSON."""


def served_operations() -> set[tuple[str, str]]:
    """(path template, METHOD) for every route the app registers, less the catch-all and the
    HEAD routes aiohttp adds for GET; `{name:regex}` placeholders become `{name}`."""
    served: set[tuple[str, str]] = set()
    for route in create_app(StubConfig()).router.routes():
        assert route.resource is not None
        path = re.sub(r"\{(\w+):[^}]*\}", r"{\1}", route.resource.canonical)
        if route.method == hdrs.METH_HEAD:
            continue
        if route.method == hdrs.METH_ANY and path in (CATCH_ALL, BAD_PREFIX):
            continue
        served.add((path, route.method))
    return served


def documented_operations(document: Json) -> set[tuple[str, str]]:
    return {(path, method.upper()) for path, method, _ in operations(document)}


def plane_operations(document: Json, plane: str) -> list[tuple[str, str, Json]]:
    """The operations tagged with this plane (`runtime`, `vendor`, ...)."""
    return [
        (path, method, op) for path, method, op in operations(document) if op["tags"] == [plane]
    ]


class TestServedDocument:
    async def test_get_openapi_json_serves_exactly_the_file(
        self, client: TestClient[Any, Any]
    ) -> None:
        response = await client.get("/_test/openapi.json")

        assert response.status == 200
        assert response.content_type == "application/json"
        assert await response.read() == DOCUMENT_PATH.read_bytes()
        assert await response.json() == load_document()


class TestValidOpenApi31:
    def test_openapi_spec_validator_accepts_it(self, document: Json) -> None:
        validator = pytest.importorskip(
            "openapi_spec_validator",
            reason="openapi-spec-validator is not installed: the structural checks stand in",
        )
        validator.validate(document)

    def test_it_declares_openapi_3_1_with_an_info_and_paths(self, document: Json) -> None:
        assert re.fullmatch(r"3\.1\.\d+", document["openapi"])
        assert isinstance(document["info"]["title"], str)
        assert isinstance(document["info"]["version"], str)
        assert document["paths"]
        assert all(path.startswith("/") for path in document["paths"])

    def test_every_reference_resolves(self, document: Json) -> None:
        references = {
            node["$ref"] for node in walk(document) if isinstance(node, dict) and "$ref" in node
        }
        assert references
        for reference in sorted(references):
            resolve(document, {"$ref": reference})

    def test_operation_ids_are_unique(self, document: Json) -> None:
        ids = [op["operationId"] for _, _, op in operations(document) if "operationId" in op]
        duplicates = sorted({operation_id for operation_id in ids if ids.count(operation_id) > 1})
        assert not duplicates, f"operationIds used more than once: {duplicates}"

    def test_every_operation_has_responses_keyed_by_status(self, document: Json) -> None:
        bad = [
            f"{method.upper()} {path}: {status!r}"
            for path, method, op in operations(document)
            for status in op.get("responses") or {"<none>": None}
            if not re.fullmatch(r"[1-5](\d\d|XX)|default", status)
        ]
        assert not bad, f"responses missing or not keyed by a status: {bad}"
        for _, _, op in operations(document):
            for response in op["responses"].values():
                assert isinstance(resolve(document, response)["description"], str)

    def test_every_path_placeholder_is_a_required_path_parameter(self, document: Json) -> None:
        for path, method, op in operations(document):
            item = resolve(document, document["paths"][path])
            declared = [
                resolve(document, parameter)
                for parameter in [*item.get("parameters", []), *op.get("parameters", [])]
            ]
            in_path = {p["name"] for p in declared if p["in"] == "path" and p.get("required")}
            placeholders = set(re.findall(r"\{([^}]+)\}", path))
            assert placeholders == in_path, f"{method.upper()} {path}: path parameters {in_path}"

    def test_every_parameter_has_a_name_a_location_and_a_schema(self, document: Json) -> None:
        for path, method, op in operations(document):
            for parameter in (resolve(document, p) for p in op.get("parameters", [])):
                where = f"{method.upper()} {path}: {parameter.get('name')}"
                assert isinstance(parameter["name"], str), where
                assert parameter["in"] in ("query", "header", "path", "cookie"), where
                assert "schema" in parameter or "content" in parameter, where

    def test_every_security_requirement_names_a_defined_scheme(self, document: Json) -> None:
        schemes = set(document["components"]["securitySchemes"])
        for path, method, op in operations(document):
            for requirement in op.get("security", []):
                unknown = set(requirement) - schemes
                assert not unknown, f"{method.upper()} {path}: unknown schemes {unknown}"

    def test_the_shared_shapes_are_components(self, document: Json) -> None:
        schemas = document["components"]["schemas"]
        wanted = {
            "Decision",
            "EvaluateRequest",
            "EvaluateResponse",
            "CaptureRequest",
            "RegisterRequest",
            "ArmingDocument",
            "ArmedFault",
            "RecordedRequest",
            "Error",
            "FlagsResponse",
            "DefinitionsDocument",
            "FixtureDocument",
            "ManagementError",
            "Session",
            "Project",
            "ProjectListItem",
            "EnvironmentRow",
            "EnvironmentListRow",
            "RefRule",
            "ControlPointRow",
            "GraphEdge",
            "ManagementSeed",
            "ManagementSnapshot",
            "KeysSection",
            "AcceptedKey",
            "RateLimitsBody",
            "RateLimits",
        }
        assert wanted <= set(schemas), f"missing: {sorted(wanted - set(schemas))}"


class TestRouteCoverage:
    def test_documented_operations_are_exactly_the_served_routes(self, document: Json) -> None:
        documented = documented_operations(document)
        served = served_operations()

        undocumented = sorted(served - documented)
        not_served = sorted(documented - served)
        assert (undocumented, not_served) == ([], []), (
            f"served but missing from the document: {undocumented}; "
            f"in the document but not served: {not_served}"
        )

    def test_every_runtime_and_vendor_route_is_listed_with_its_trailing_slash(
        self, document: Json
    ) -> None:
        documented = documented_operations(document)
        for path, method in documented:
            if path.startswith(("/v1/flags", "/v1/capture", "/v1/targets", "/flags", "/api/",
                                "/batch")):  # fmt: skip
                twin = path[:-1] if path.endswith("/") else path + "/"
                assert (twin, method) in documented, f"{method} {twin} is missing"

    def test_no_management_route_is_listed_with_a_trailing_slash(self, document: Json) -> None:
        management = [
            path
            for path, _ in documented_operations(document)
            if path.startswith(("/v1/projects", "/v1/whoami"))
        ]
        assert management
        assert [path for path in management if path.endswith("/")] == []


class TestFaultVocabulary:
    def test_every_fault_mode_appears_in_the_enums(self, document: Json) -> None:
        missing = sorted(MODES - enum_values(document))
        assert not missing, f"fault modes missing from every enum: {missing}"

    def test_the_arming_modes_are_exactly_none_and_every_fault_mode(self, document: Json) -> None:
        schemas = document["components"]["schemas"]
        assert set(schemas["FaultMode"]["enum"]) == MODES
        assert set(schemas["ArmingDocument"]["properties"]["mode"]["enum"]) == {"none", *MODES}

    def test_the_per_request_fault_header_and_query_take_every_mode_and_none(
        self, document: Json
    ) -> None:
        parameters = {
            (p["in"], p["name"]): resolve(document, p["schema"])
            for p in document["components"]["parameters"].values()
        }
        for where in (("header", "X-Svc-Test-Fault"), ("query", "fault")):
            assert set(parameters[where]["enum"]) == {"none", *MODES}, where

    def test_every_selector_and_group_appears_in_the_enums(self, document: Json) -> None:
        missing = sorted(SELECTOR_NAMES - enum_values(document))
        assert not missing, f"selectors missing from every enum: {missing}"

    def test_the_selector_enum_is_exactly_every_group_and_every_selector(
        self, document: Json
    ) -> None:
        assert set(document["components"]["schemas"]["Selector"]["enum"]) == SELECTOR_NAMES

    def test_an_armed_fault_lists_selectors_with_the_groups_expanded(self, document: Json) -> None:
        schemas = document["components"]["schemas"]
        applied = resolve(document, schemas["ArmedFault"]["properties"]["applyTo"]["items"])
        assert set(applied["enum"]) == set(SELECTORS)

    def test_the_route_name_enum_is_exactly_the_client_routes_names(self, document: Json) -> None:
        assert set(document["components"]["schemas"]["RouteName"]["enum"]) == ROUTE_NAMES

    def test_the_fault_sources_are_exactly_where_a_recorded_fault_comes_from(
        self, document: Json
    ) -> None:
        source = document["components"]["schemas"]["FaultRecord"]["properties"]["source"]
        assert set(source["enum"]) == set(get_args(Source))


def validator(document: Json, schema: str) -> Any:
    """A JSON Schema 2020-12 validator (OpenAPI 3.1's dialect) of one component schema, its
    `$ref`s resolved in the document."""
    jsonschema = pytest.importorskip(
        "jsonschema", reason="jsonschema is not installed (openapi-spec-validator brings it)"
    )
    root = {"$ref": f"#/components/schemas/{schema}", "components": document["components"]}
    return jsonschema.Draft202012Validator(root)


EVERY_PARAMETER = {"delayMs": 5, "status": 503, "body": {"down": True}, "retryAfter": 7}


class TestFaultParameters:
    """`FaultParameters`: an armed fault's record carries the parameters its mode uses, no other;
    checked against what the stub answers, so the document is as strict as the stub."""

    async def records(self, client: TestClient[Any, Any], mode: str) -> list[Json]:
        """The records the stub answers for `mode` armed alone, with every parameter, and with
        a status that carries no Retry-After: POST's and GET's."""
        armings: list[Json] = [
            {"mode": mode, **({"status": 503} if mode == "status" else {})},
            {"mode": mode, **EVERY_PARAMETER},
            {"mode": mode, **EVERY_PARAMETER, "status": 502},
        ]
        records = []
        for arming in armings:
            answer = await client.post("/_test/fault", json={**arming, "applyTo": "batch"})
            assert answer.status == 200, await answer.text()
            records.append((await answer.json())["fault"])
        listed = await (await client.get("/_test/fault")).json()
        assert listed["armed"] == records
        return records

    def test_the_parameters_are_the_stubs(self, document: Json) -> None:
        schemas = document["components"]["schemas"]
        assert set(schemas["FaultStep"]["properties"]) == {"mode", *FaultParameter}
        assert set(FaultParameter) <= set(schemas["ArmedFault"]["properties"])
        assert set(MODE_PARAMETERS) == set(FaultMode)

    @pytest.mark.parametrize("mode", [mode.value for mode in FaultMode])
    async def test_the_records_the_stub_answers_are_valid(
        self, document: Json, client: TestClient[Any, Any], mode: str
    ) -> None:
        records = await self.records(client, mode)
        sequence = await client.post(
            "/_test/fault", json={"sequence": [mode, "none"], **EVERY_PARAMETER}
        )

        armed, answered = validator(document, "ArmedFault"), await sequence.json()
        for record in [*records, answered["fault"]]:
            errors = [error.message for error in armed.iter_errors(record)]
            assert errors == [], record
        validator(document, "ArmFaultResponse").validate(answered)
        validator(document, "ArmedFaultsResponse").validate(
            await (await client.get("/_test/fault")).json()
        )

    @pytest.mark.parametrize("mode", [mode.value for mode in FaultMode])
    async def test_a_record_with_a_parameter_more_or_less_is_invalid(
        self, document: Json, client: TestClient[Any, Any], mode: str
    ) -> None:
        armed = validator(document, "ArmedFault")
        for record in await self.records(client, mode):
            step = {k: v for k, v in record.items() if k == "mode" or k in EVERY_PARAMETER}
            in_sequence = {k: v for k, v in record.items() if k not in step}
            assert armed.is_valid({**in_sequence, "sequence": [step]}), step
            for name in (parameter.value for parameter in FaultParameter):
                changed = dict(step)
                if name in changed:
                    del changed[name]
                else:
                    changed[name] = EVERY_PARAMETER[name]
                assert not armed.is_valid({**in_sequence, **changed}), changed
                assert not armed.is_valid({**in_sequence, "sequence": [changed]}), changed

    def test_the_examples_are_valid(self, document: Json) -> None:
        armed = validator(document, "ArmedFault")
        examples = document["components"]["schemas"]["ArmedFault"]["examples"]
        assert {example.get("mode") for example in examples} >= {"500", "delay", None}
        for example in examples:
            armed.validate(example)


class TestResponseBodies:
    def test_every_response_declares_json_except_304_which_has_no_body(
        self, document: Json
    ) -> None:
        offenders = []
        for path, method, op in operations(document):
            for status, response in op["responses"].items():
                content = resolve(document, response).get("content", {})
                where = f"{method.upper()} {path} {status}"
                if status == "304":
                    if content:
                        offenders.append(f"{where}: declares a body")
                elif path in PAGES and status == "200":
                    if not all(kind.startswith("text/") for kind in content):
                        offenders.append(f"{where}: the inspector's files are text")
                elif "application/json" not in content:
                    offenders.append(f"{where}: no application/json content")
                elif "schema" not in content["application/json"]:
                    offenders.append(f"{where}: application/json without a schema")
        assert not offenders, "\n".join(offenders)

    def test_every_error_is_in_the_envelope_of_its_plane(self, document: Json) -> None:
        offenders = []
        for path, method, op in operations(document):
            envelope = "ManagementError" if path in MANAGEMENT_PATHS else "Error"
            for status, response in op["responses"].items():
                if status != "default" and status[0] not in "45":
                    continue
                schema = resolve(document, response)["content"]["application/json"]["schema"]
                if schema != {"$ref": f"#/components/schemas/{envelope}"}:
                    offenders.append(f"{method.upper()} {path} {status}: not {envelope}")
        assert not offenders, "\n".join(offenders)


class TestKeys:
    """What the key checks of the runtime and vendor routes answer, as `admit()` decides."""

    @pytest.mark.parametrize("plane", get_args(ClientPlane))
    def test_every_refusal_of_a_key_is_documented_on_its_plane(
        self, document: Json, plane: ClientPlane
    ) -> None:
        refusals = {str(m.status) for family in Family if (m := misuse(family, plane)) is not None}
        expected = {"401", "429", *refusals}
        checked = plane_operations(document, plane)
        assert checked, f"no operation is tagged {plane}"
        for path, method, op in checked:
            where = f"{method.upper()} {path}"
            missing = sorted(expected - set(op["responses"]))
            assert not missing, f"{where}: the key checks' {missing} are not documented"
            assert ("403" in op["responses"]) == ("403" in refusals), f"{where}: 403"

    def test_the_error_codes_include_the_key_refusals(self, document: Json) -> None:
        codes = enum_values(document["components"]["schemas"]["Error"])
        assert {"UNAUTHORIZED", "FORBIDDEN", "RATE_LIMITED"} <= codes

    @pytest.mark.parametrize("plane", get_args(ClientPlane))
    def test_answers_after_the_key_check_declare_the_warning_and_429_its_retry_after(
        self, document: Json, plane: ClientPlane
    ) -> None:
        for path, method, op in plane_operations(document, plane):
            for status in ("200", "304", "429"):
                if status not in op["responses"]:
                    continue
                headers = resolve(document, op["responses"][status]).get("headers", {})
                where = f"{method.upper()} {path} {status}"
                assert WARNING_HEADER in headers, f"{where}: no {WARNING_HEADER}"
                if status == "429":
                    assert "Retry-After" in headers, f"{where}: no Retry-After"

    async def test_a_recorded_request_has_exactly_the_documented_fields_warning_included(
        self, document: Json, client: TestClient[Any, Any]
    ) -> None:
        served = await client.post(
            "/v1/capture", headers={"Authorization": "Bearer svc_org_acme"}, json={"events": []}
        )
        answer = await client.get("/_test/requests")

        (entry,) = (await answer.json())["requests"]
        schema = document["components"]["schemas"]["RecordedRequest"]
        assert set(entry) == set(schema["properties"]) == set(schema["required"])
        assert entry["warning"] == served.headers[WARNING_HEADER]

    async def test_a_rate_limited_request_is_recorded_with_a_documented_fault_source(
        self, document: Json, client: TestClient[Any, Any]
    ) -> None:
        await client.post("/_test/rate-limit", json={"perSecond": 1})
        for _ in range(2):
            limited = await client.post("/v1/capture", headers={"x-api-key": "k"}, json={})
        answer = await client.get("/_test/requests")

        assert limited.status == 429
        fault = (await answer.json())["requests"][-1]["fault"]
        record = document["components"]["schemas"]["FaultRecord"]
        assert fault["source"] in record["properties"]["source"]["enum"]
        assert record["then"]["properties"]["mode"]["const"] == fault["mode"]

    async def test_the_documented_keys_and_rate_limit_examples_are_accepted(
        self, document: Json, client: TestClient[Any, Any]
    ) -> None:
        schemas = document["components"]["schemas"]
        for body in schemas["RateLimitsBody"]["examples"]:
            response = await client.post("/_test/rate-limit", json=body)
            assert response.status == 200, await response.text()
            assert set(await response.json()) == set(schemas["RateLimits"]["required"])
        every_member_null = dict.fromkeys(schemas["KeysSection"]["properties"])
        fixtures = [
            *schemas["FixtureDocument"]["examples"],
            *({"keys": section} for section in schemas["KeysSection"]["examples"]),
            {"keys": every_member_null},
        ]
        for fixture in fixtures:
            response = await client.post("/_test/fixtures", json=fixture)
            assert response.status == 200, (fixture, await response.text())


class TestNamespaces:
    REGISTRY = frozenset(
        {
            "/health",
            "/_test/openapi.json",
            "/_test/offline",
            "/_test/namespaces",
            "/_test/namespaces/{name}",
            "/_test/ui/{asset}",
        }
    )
    """Routes that act on no namespace."""

    def test_every_other_operation_takes_the_namespace_header(self, document: Json) -> None:
        header = {"$ref": "#/components/parameters/NamespaceHeader"}
        missing = [
            (path, method)
            for path, method, operation in operations(document)
            if path not in self.REGISTRY and header not in operation.get("parameters", [])
        ]
        assert missing == []
        for path in self.REGISTRY:
            for method, operation in document["paths"][path].items():
                assert header not in operation.get("parameters", []), (path, method)

    def test_the_prefix_is_a_server_with_the_namespace_as_its_variable(
        self, document: Json
    ) -> None:
        prefixed = [s for s in document["servers"] if "{namespace}" in s["url"]]
        assert [s["url"] for s in prefixed] == ["http://127.0.0.1:3901/ns/{namespace}"]
        assert prefixed[0]["variables"]["namespace"]["default"] == "default"


class TestTheSharedVocabulary:
    """clients/vocabulary.json: one name per idea across the helpers; Python's spellings here
    (each helper's own suite checks its own), and the control plane's in this document."""

    WORDS = json.loads(
        (Path(__file__).resolve().parents[1] / "clients" / "vocabulary.json").read_text()
    )["words"]

    def test_every_idea_is_spelled_in_every_language(self) -> None:
        languages = {"python", "javascript", "go", "java", "rust"}
        for name, word in self.WORDS.items():
            assert languages <= set(word), name

    def test_pythons_spellings_are_the_python_clients_and_the_plugins(self) -> None:
        from stub.client import RecordedRequest, StubClient
        from stub.client.models import ArmOptions
        from stub.testing import pytest_plugin

        python = {name: word["python"] for name, word in self.WORDS.items()}
        assert callable(getattr(pytest_plugin, python["perTestObject"]))  # the fixture
        assert python["routeSelector"] in ArmOptions.__annotations__
        assert isinstance(getattr(RecordedRequest, python["bodyAsText"]), property)
        assert callable(getattr(RecordedRequest, python["bodyAsJson"]))
        assert callable(getattr(StubClient, python["offlineUrl"]))

    def test_the_control_planes_words_are_this_documents(self, document: Json) -> None:
        arming = document["components"]["schemas"]["ArmingDocument"]
        members = set(arming.get("properties", {}))
        for variant in arming.get("oneOf", []) + arming.get("anyOf", []):
            members |= set(variant.get("properties", {}))
        assert self.WORDS["routeSelector"]["controlPlane"] in members
        assert self.WORDS["offlineUrl"]["controlPlane"] in document["paths"]
