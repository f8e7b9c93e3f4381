"""The fixture file, as the contract describes it (stub-interface.md, "Fixture file").

Fixture documents are YAML (and so JSON). Every invalid document is refused with one message that
names the source, the key path and what was expected; every valid one becomes frozen flags.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fireweave import EvaluationContext

from conftest import OpenFireweave, spawn_stub
from stub.fixtures import (
    DEFAULT_SET,
    FixtureError,
    FixtureSet,
    Flag,
    check_json_value,
    default_fixture_dir,
    load_fixture_file,
    load_fixture_paths,
    parse_fixture_document,
    parse_yaml,
)
from stub.validation import FixtureTooLarge

SOURCE = "x.yaml"
FLAG_KEYS = (
    "type, value, enabled, variant, payload, metadata, reason, matchAttribute, matchTargetingKey"
)
TYPE_NAMES = "boolean, string, number, integer, float, object, json"


def parse(text: str, source: str = SOURCE) -> FixtureSet:
    """YAML text to a fixture set, exactly as a fixture file is read."""
    return parse_fixture_document(parse_yaml(text, source), source)


def error_of(text: str) -> str:
    """The message of the FixtureError that parsing `text` raises."""
    with pytest.raises(FixtureError) as info:
        parse(text)
    return str(info.value)


def one_flag(text: str) -> Flag:
    """The single flag `f` of a document."""
    flags = parse(text).flags
    assert list(flags) == ["f"]
    return flags["f"]


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------
# Errors: each one names the source, the key path and what was expected.
# --------------------------------------------------------------------------------------------


class TestFixtureError:
    def test_is_a_value_error(self) -> None:
        assert issubclass(FixtureError, ValueError)


class TestDocumentShapeErrors:
    @pytest.mark.parametrize(
        ("text", "message"),
        [
            pytest.param("[1, 2]", "x.yaml: expected a mapping, got a list", id="list"),
            pytest.param("just text", 'x.yaml: expected a mapping, got "just text"', id="string"),
            pytest.param("42", "x.yaml: expected a mapping, got 42", id="number"),
            pytest.param("true", "x.yaml: expected a mapping, got true", id="boolean"),
            pytest.param(
                "flagz: {}",
                "x.yaml: flagz: unknown key (expected one of flags, vendor, management, keys)",
                id="unknown-top-level-key",
            ),
            pytest.param(
                "flags: {}\ndefaults: {}",
                "x.yaml: defaults: unknown key (expected one of flags, vendor, management, keys)",
                id="unknown-key-beside-flags",
            ),
            pytest.param("{1: {}}", "x.yaml: expected string keys, got 1", id="non-string-key"),
        ],
    )
    def test_top_level_must_be_a_mapping_of_the_known_sections(
        self, text: str, message: str
    ) -> None:
        assert error_of(text) == message

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            pytest.param(
                "flags: [a, b]", "x.yaml: flags: expected a mapping, got a list", id="list"
            ),
            pytest.param("flags: on", "x.yaml: flags: expected a mapping, got true", id="boolean"),
            pytest.param(
                "flags: {1: {type: boolean, value: true}}",
                "x.yaml: flags: expected string keys, got 1",
                id="integer-flag-key",
            ),
            pytest.param(
                "flags: {null: {type: boolean, value: true}}",
                "x.yaml: flags: expected string keys, got null",
                id="null-flag-key",
            ),
        ],
    )
    def test_flags_must_be_a_mapping_with_string_keys(self, text: str, message: str) -> None:
        assert error_of(text) == message


class TestAliasExpansion:
    def test_shared_aliases_are_fine(self) -> None:
        fixtures = parse("flags: {f: {type: object, value: {a: &x [1, 2], b: *x}}}")
        assert fixtures.flags["f"].value == {"a": [1, 2], "b": [1, 2]}

    def test_a_billion_laughs_is_refused_without_expanding_it(self) -> None:
        levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
        levels += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 9)]
        text = "flags:\n  f:\n    type: object\n    value:\n" + "".join(
            f"      {level}\n" for level in levels
        )
        with pytest.raises(FixtureTooLarge, match=r"its aliases expand it to about 422,221 bytes"):
            parse(text)


class TestEmptySections:
    @pytest.mark.parametrize("text", ["flags:", "flags: null", "vendor:", "flags:\n# a: {}\n"])
    def test_a_null_section_is_empty_so_commented_out_flags_are_fine(self, text: str) -> None:
        assert parse(text) == FixtureSet()


class TestFlagBodyErrors:
    @pytest.mark.parametrize(
        ("text", "message"),
        [
            pytest.param(
                "flags: {f: true}", "x.yaml: flags.f: expected a mapping, got true", id="bool"
            ),
            pytest.param(
                "flags: {f: [type, value]}",
                "x.yaml: flags.f: expected a mapping, got a list",
                id="list",
            ),
            pytest.param(
                "flags: {f: null}", "x.yaml: flags.f: expected a mapping, got null", id="null"
            ),
            pytest.param(
                "flags: {f: {type: boolean, value: true, 1: x}}",
                "x.yaml: flags.f: expected string keys, got 1",
                id="non-string-key",
            ),
        ],
    )
    def test_a_flag_body_must_be_a_mapping(self, text: str, message: str) -> None:
        assert error_of(text) == message

    @pytest.mark.parametrize("unknown", ["colour", "default", "Value", "flagMetadata"])
    def test_an_unknown_flag_key_is_named_with_the_keys_allowed(self, unknown: str) -> None:
        text = f"flags: {{f: {{type: boolean, value: true, {unknown}: 1}}}}"
        assert error_of(text) == (
            f"x.yaml: flags.f.{unknown}: unknown key (expected one of {FLAG_KEYS})"
        )

    def test_type_is_required(self) -> None:
        assert error_of("flags: {f: {value: true}}") == "x.yaml: flags.f.type: required"

    def test_value_is_required(self) -> None:
        assert error_of("flags: {f: {type: boolean}}") == "x.yaml: flags.f.value: required"

    def test_an_explicit_null_value_is_present_but_of_the_wrong_type(self) -> None:
        assert error_of("flags: {f: {type: boolean, value: null}}") == (
            "x.yaml: flags.f.value: expected boolean (type boolean), got null"
        )

    @pytest.mark.parametrize(
        ("declared", "shown"),
        [
            pytest.param("bool", '"bool"', id="bool"),
            pytest.param("Boolean", '"Boolean"', id="case-sensitive"),
            pytest.param("int", '"int"', id="int"),
            pytest.param("1", "1", id="number"),
            pytest.param("null", "null", id="null"),
            pytest.param("[string]", "a list", id="list"),
        ],
    )
    def test_an_unknown_type_lists_the_types_accepted(self, declared: str, shown: str) -> None:
        text = f"flags: {{f: {{type: {declared}, value: true}}}}"
        assert error_of(text) == f"x.yaml: flags.f.type: expected one of {TYPE_NAMES}, got {shown}"

    def test_the_contract_example_message(self) -> None:
        assert error_of("flags: {checkout-v2: {type: string, value: 5}}") == (
            "x.yaml: flags.checkout-v2.value: expected string (type string), got 5"
        )


class TestValueTypeErrors:
    @pytest.mark.parametrize(
        ("declared", "value", "problem"),
        [
            pytest.param("boolean", '"true"', 'expected boolean (type boolean), got "true"'),
            pytest.param("boolean", "1", "expected boolean (type boolean), got 1"),
            pytest.param("boolean", "[true]", "expected boolean (type boolean), got a list"),
            pytest.param("string", "5", "expected string (type string), got 5"),
            pytest.param("string", "true", "expected string (type string), got true"),
            pytest.param("string", "2024-01-01", "expected string (type string), got a date"),
            pytest.param("string", "{a: b}", "expected string (type string), got an object"),
            pytest.param("number", '"25"', 'expected number (type number), got "25"'),
            pytest.param("number", "true", "expected number (type number), got true"),
            pytest.param("number", "null", "expected number (type number), got null"),
            pytest.param("float", '"0.5"', 'expected number (type float), got "0.5"'),
            pytest.param("float", "false", "expected number (type float), got false"),
            pytest.param("integer", "2.5", "expected integer (type integer), got 2.5"),
            pytest.param("integer", "3.0", "expected integer (type integer), got 3.0"),
            pytest.param("integer", "true", "expected integer (type integer), got true"),
            pytest.param("integer", '"3"', 'expected integer (type integer), got "3"'),
            pytest.param("object", "dark", 'expected object or list (type object), got "dark"'),
            pytest.param("object", "3", "expected object or list (type object), got 3"),
            pytest.param("object", "null", "expected object or list (type object), got null"),
            pytest.param("json", "3", "expected object or list (type json), got 3"),
            pytest.param("json", "true", "expected object or list (type json), got true"),
        ],
    )
    def test_a_value_must_match_its_declared_type(
        self, declared: str, value: str, problem: str
    ) -> None:
        text = f"flags: {{f: {{type: {declared}, value: {value}}}}}"
        assert error_of(text) == f"x.yaml: flags.f.value: {problem}"

    def test_a_long_string_value_is_shortened_in_the_message(self) -> None:
        long = "a" * 60
        assert error_of(f"flags: {{f: {{type: number, value: {long}}}}}") == (
            f'x.yaml: flags.f.value: expected number (type number), got "{"a" * 37}..."'
        )

    @pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
    def test_a_number_value_that_json_cannot_carry_is_refused(self, value: str) -> None:
        # NaN and the infinities are YAML floats but not JSON numbers: served, they become null.
        with pytest.raises(FixtureError, match=r"^x\.yaml: flags\.f\.value: "):
            parse(f"flags: {{f: {{type: number, value: {value}}}}}")


class TestOptionalFieldErrors:
    @pytest.mark.parametrize(
        ("field_yaml", "message"),
        [
            pytest.param(
                'enabled: "yes please"',
                'x.yaml: flags.f.enabled: expected boolean, got "yes please"',
                id="enabled-string",
            ),
            pytest.param(
                'enabled: "true"',
                'x.yaml: flags.f.enabled: expected boolean, got "true"',
                id="enabled-quoted-true",
            ),
            pytest.param(
                "enabled: 1", "x.yaml: flags.f.enabled: expected boolean, got 1", id="enabled-1"
            ),
            pytest.param(
                "enabled: null",
                "x.yaml: flags.f.enabled: expected boolean, got null",
                id="enabled-null",
            ),
            pytest.param(
                "variant: 3", "x.yaml: flags.f.variant: expected string, got 3", id="variant-int"
            ),
            pytest.param(
                "variant: true",
                "x.yaml: flags.f.variant: expected string, got true",
                id="variant-bool",
            ),
            pytest.param(
                "variant: [a]",
                "x.yaml: flags.f.variant: expected string, got a list",
                id="variant-list",
            ),
            pytest.param(
                'reason: ""',
                'x.yaml: flags.f.reason: expected a non-empty string, got ""',
                id="reason-empty",
            ),
            pytest.param(
                "reason: 5",
                "x.yaml: flags.f.reason: expected a non-empty string, got 5",
                id="reason-int",
            ),
            pytest.param(
                "reason: {code: SPLIT}",
                "x.yaml: flags.f.reason: expected a non-empty string, got an object",
                id="reason-object",
            ),
            pytest.param(
                "metadata: 7",
                "x.yaml: flags.f.metadata: expected a mapping, got 7",
                id="metadata-not-mapping",
            ),
            pytest.param(
                "metadata: {version: 7, rev: 1}",
                "x.yaml: flags.f.metadata.rev: unknown key (expected one of version, id)",
                id="metadata-unknown-key",
            ),
            pytest.param(
                'metadata: {version: "7"}',
                'x.yaml: flags.f.metadata.version: expected integer, got "7"',
                id="version-string",
            ),
            pytest.param(
                "metadata: {version: 7.5}",
                "x.yaml: flags.f.metadata.version: expected integer, got 7.5",
                id="version-float",
            ),
            pytest.param(
                "metadata: {version: true}",
                "x.yaml: flags.f.metadata.version: expected integer, got true",
                id="version-bool",
            ),
            pytest.param(
                "metadata: {id: false}",
                "x.yaml: flags.f.metadata.id: expected integer, got false",
                id="id-bool",
            ),
            pytest.param(
                "metadata: {id: abc}",
                'x.yaml: flags.f.metadata.id: expected integer, got "abc"',
                id="id-string",
            ),
            pytest.param(
                "matchAttribute: [plan]",
                "x.yaml: flags.f.matchAttribute: expected a mapping, got a list",
                id="matchAttribute-list",
            ),
            pytest.param(
                "matchAttribute: plan=enterprise",
                'x.yaml: flags.f.matchAttribute: expected a mapping, got "plan=enterprise"',
                id="matchAttribute-string",
            ),
            pytest.param(
                "matchAttribute: {1: enterprise}",
                "x.yaml: flags.f.matchAttribute: expected string keys, got 1",
                id="matchAttribute-non-string-key",
            ),
            pytest.param(
                "matchAttribute: {since: 2024-01-01}",
                "x.yaml: flags.f.matchAttribute.since: expected a JSON value, got a date",
                id="matchAttribute-date",
            ),
            pytest.param(
                'matchTargetingKey: ""',
                'x.yaml: flags.f.matchTargetingKey: expected a non-empty string, got ""',
                id="matchTargetingKey-empty",
            ),
            pytest.param(
                "matchTargetingKey: 42",
                "x.yaml: flags.f.matchTargetingKey: expected a non-empty string, got 42",
                id="matchTargetingKey-int",
            ),
        ],
    )
    def test_an_optional_field_of_the_wrong_shape_is_refused(
        self, field_yaml: str, message: str
    ) -> None:
        assert error_of(f"flags: {{f: {{type: boolean, value: true, {field_yaml}}}}}") == message


class TestNonJsonValueErrors:
    @pytest.mark.parametrize(
        ("field_yaml", "message"),
        [
            pytest.param(
                "payload: 2024-01-01",
                "x.yaml: flags.f.payload: expected a JSON value, got a date",
                id="date",
            ),
            pytest.param(
                "payload: 2024-01-01 10:00:00",
                "x.yaml: flags.f.payload: expected a JSON value, got a datetime",
                id="datetime",
            ),
            pytest.param(
                "payload: !!set {a, b}",
                "x.yaml: flags.f.payload: expected a JSON value, got a set",
                id="set",
            ),
            pytest.param(
                "payload: !!binary aGVsbG8=",
                "x.yaml: flags.f.payload: expected a JSON value, got a bytes",
                id="binary",
            ),
            pytest.param(
                "payload: {rollout: {started: 2024-01-01}}",
                "x.yaml: flags.f.payload.rollout.started: expected a JSON value, got a date",
                id="nested-in-object",
            ),
            pytest.param(
                "payload: [ok, 2024-01-01]",
                "x.yaml: flags.f.payload.1: expected a JSON value, got a date",
                id="nested-in-list",
            ),
            pytest.param(
                "payload: {1: a}",
                "x.yaml: flags.f.payload: expected string keys, got 1",
                id="non-string-key",
            ),
            pytest.param(
                "payload: {a: {null: 1}}",
                "x.yaml: flags.f.payload.a: expected string keys, got null",
                id="nested-null-key",
            ),
        ],
    )
    def test_a_payload_must_be_plain_json(self, field_yaml: str, message: str) -> None:
        assert error_of(f"flags: {{f: {{type: boolean, value: true, {field_yaml}}}}}") == message

    @pytest.mark.parametrize(
        ("value", "message"),
        [
            pytest.param(
                "{when: 2024-01-01}",
                "x.yaml: flags.f.value.when: expected a JSON value, got a date",
                id="date",
            ),
            pytest.param(
                "[1, !!set {a}]",
                "x.yaml: flags.f.value.1: expected a JSON value, got a set",
                id="set-in-list",
            ),
            pytest.param(
                "{a: {2: b}}",
                "x.yaml: flags.f.value.a: expected string keys, got 2",
                id="non-string-key",
            ),
        ],
    )
    def test_an_object_value_must_be_plain_json(self, value: str, message: str) -> None:
        assert error_of(f"flags: {{f: {{type: object, value: {value}}}}}") == message

    def test_a_payload_that_json_cannot_carry_is_refused(self) -> None:
        with pytest.raises(FixtureError, match=r"^x\.yaml: flags\.f\.payload"):
            parse("flags: {f: {type: boolean, value: true, payload: {ratio: .inf}}}")

    @pytest.mark.parametrize(
        "text",
        [
            pytest.param(
                "flags: {f: {type: boolean, value: true, payload: &a [*a]}}", id="payload"
            ),
            pytest.param("flags: {f: {type: object, value: &a {self: *a}}}", id="value"),
        ],
    )
    def test_a_self_referencing_alias_is_refused_promptly(self, text: str) -> None:
        # Run apart: a loader that follows the cycle forever must not hang the test session.
        script = (
            "import sys\n"
            "from stub.fixtures import FixtureError, parse_fixture_document, parse_yaml\n"
            "try:\n"
            "    parse_fixture_document(parse_yaml(sys.argv[1], 'x.yaml'), 'x.yaml')\n"
            "except FixtureError as exc:\n"
            "    print(exc)\n"
            "else:\n"
            "    print('accepted')\n"
        )
        try:
            result = subprocess.run(
                [sys.executable, "-c", script, text], capture_output=True, text=True, timeout=5
            )
        except subprocess.TimeoutExpired:
            result = None
        if result is None:
            pytest.fail("loading a self-referencing YAML alias did not finish within 5 s")
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("x.yaml: flags.f."), result.stdout


class TestVendorErrors:
    @pytest.mark.parametrize(
        ("text", "message"),
        [
            pytest.param(
                "vendor: [1]", "x.yaml: vendor: expected a mapping, got a list", id="list"
            ),
            pytest.param(
                "vendor: {extra: {}}",
                "x.yaml: vendor.extra: unknown key (expected one of flags, definitions)",
                id="unknown-key",
            ),
            pytest.param(
                "vendor: {flags: [1]}",
                "x.yaml: vendor.flags: expected a mapping, got a list",
                id="flags-list",
            ),
            pytest.param(
                "vendor: {flags: ok}",
                'x.yaml: vendor.flags: expected a mapping, got "ok"',
                id="flags-string",
            ),
            pytest.param(
                "vendor: {definitions: 3}",
                "x.yaml: vendor.definitions: expected a mapping, got 3",
                id="definitions-number",
            ),
            pytest.param(
                "vendor: {flags: {featureFlags: {a: 2024-01-01}}}",
                "x.yaml: vendor.flags.featureFlags.a: expected a JSON value, got a date",
                id="flags-date",
            ),
            pytest.param(
                "vendor: {definitions: {flags: [{created: 2024-01-01}]}}",
                "x.yaml: vendor.definitions.flags.0.created: expected a JSON value, got a date",
                id="definitions-date",
            ),
            pytest.param(
                "vendor: {definitions: {1: x}}",
                "x.yaml: vendor.definitions: expected string keys, got 1",
                id="definitions-non-string-key",
            ),
        ],
    )
    def test_vendor_bodies_must_be_json_objects(self, text: str, message: str) -> None:
        assert error_of(text) == message


class TestYamlSyntaxErrors:
    @pytest.mark.parametrize(
        ("text", "message"),
        [
            pytest.param(
                "flags: [1, 2\n",
                "x.yaml: invalid YAML at line 2, column 1: expected ',' or ']', "
                "but got '<stream end>'",
                id="unclosed-list",
            ),
            pytest.param(
                "flags:\n  a: b\n c: d\n",
                "x.yaml: invalid YAML at line 3, column 2: expected <block end>, "
                "but found '<block mapping start>' (usually a line indented differently from "
                "the lines beside it)",
                id="bad-indent",
            ),
            pytest.param(
                "flags: {a: 1}}\n",
                "x.yaml: invalid YAML at line 1, column 14: expected <block end>, but found '}'",
                id="extra-brace",
            ),
            pytest.param(
                "\tflags: {}\n",
                "x.yaml: invalid YAML at line 1, column 1: "
                "found character '\\t' that cannot start any token (YAML indents with spaces, "
                "never tabs)",
                id="tab",
            ),
            pytest.param(
                "flags:\n  a:\n    type: string\n     value: x\n",
                "x.yaml: invalid YAML at line 4, column 11: mapping values are not allowed here "
                "(usually a key indented under a value, or ': ' in a value)",
                id="key-under-a-value",
            ),
            pytest.param(
                "x: *nope\n",
                "x.yaml: invalid YAML at line 1, column 4: found undefined alias 'nope'",
                id="undefined-alias",
            ),
            pytest.param(
                "a: !!python/object/apply:os.system [echo]\n",
                "x.yaml: invalid YAML at line 1, column 4: could not determine a constructor "
                "for the tag 'tag:yaml.org,2002:python/object/apply:os.system'",
                id="python-tag-not-constructed",
            ),
        ],
    )
    def test_invalid_yaml_names_the_source_line_and_column(self, text: str, message: str) -> None:
        with pytest.raises(FixtureError) as info:
            parse_yaml(text, SOURCE)
        assert str(info.value) == message

    @pytest.mark.parametrize("depth", [261, 2_000, 100_000])
    def test_nesting_too_deep_is_a_fixture_error(self, depth: int) -> None:
        with pytest.raises(FixtureError) as info:
            parse_yaml("[" * depth + "]" * depth, SOURCE)
        assert str(info.value) in (
            "x.yaml: nested more than 260 levels deep",
            "x.yaml: invalid YAML: nested too deeply",  # past what the parser itself recurses
        )

    def test_a_yaml_error_in_a_file_names_the_file(self, tmp_path: Path) -> None:
        path = write(tmp_path, "broken.yaml", "flags: [1, 2\n")
        with pytest.raises(FixtureError) as info:
            load_fixture_file(path)
        assert str(info.value) == (
            f"{path}: invalid YAML at line 2, column 1: expected ',' or ']', but got '<stream end>'"
        )


class TestFileErrors:
    def test_a_missing_file(self, tmp_path: Path) -> None:
        path = tmp_path / "absent.yaml"
        with pytest.raises(FixtureError) as info:
            load_fixture_file(path)
        assert str(info.value) == f"{path}: no such file"

    def test_a_missing_path_among_several(self, tmp_path: Path) -> None:
        good = write(tmp_path, "good.yaml", "flags: {}")
        missing = tmp_path / "absent.yaml"
        with pytest.raises(FixtureError) as info:
            load_fixture_paths([good, missing])
        assert str(info.value) == f"{missing}: no such file"

    def test_a_file_that_is_not_utf8(self, tmp_path: Path) -> None:
        path = tmp_path / "latin1.yaml"
        path.write_bytes("flags: {caf\u00e9: {type: boolean, value: true}}".encode("latin-1"))
        with pytest.raises(FixtureError) as info:
            load_fixture_file(path)
        assert str(info.value) == f"{path}: not UTF-8 text"

    def test_an_empty_directory(self, tmp_path: Path) -> None:
        with pytest.raises(FixtureError) as info:
            load_fixture_paths([tmp_path])
        assert str(info.value) == f"{tmp_path}: no *.yaml, *.yml or *.json files in this directory"

    def test_a_directory_with_no_fixture_files(self, tmp_path: Path) -> None:
        write(tmp_path, "notes.txt", "flags: {}")
        write(tmp_path, "flags.YAML.bak", "flags: {}")
        (tmp_path / "nested.yaml").mkdir()
        with pytest.raises(FixtureError) as info:
            load_fixture_paths([tmp_path])
        assert str(info.value) == f"{tmp_path}: no *.yaml, *.yml or *.json files in this directory"

    def test_a_validation_error_in_a_file_names_the_file_path(self, tmp_path: Path) -> None:
        path = write(tmp_path, "flags.yaml", "flags: {checkout-v2: {type: string, value: 5}}")
        with pytest.raises(FixtureError) as info:
            load_fixture_paths([path])
        assert str(info.value) == (
            f"{path}: flags.checkout-v2.value: expected string (type string), got 5"
        )

    def test_an_invalid_file_in_a_directory_fails_the_whole_load(self, tmp_path: Path) -> None:
        write(tmp_path, "a.yaml", "flags: {ok: {type: boolean, value: true}}")
        bad = write(tmp_path, "b.yaml", "flags: {bad: {type: boolean}}")
        with pytest.raises(FixtureError) as info:
            load_fixture_paths([tmp_path])
        assert str(info.value) == f"{bad}: flags.bad.value: required"


# --------------------------------------------------------------------------------------------
# Valid documents.
# --------------------------------------------------------------------------------------------

FULL_FLAG = """
flags:
  checkout-v2:
    type: string
    value: treatment-b
    enabled: false
    variant: treatment-b
    payload: {rolloutId: r1, weights: [1, 2.5], live: true, note: null}
    metadata: {version: 7, id: 3}
    reason: STATIC
    matchAttribute: {plan: enterprise, seats: 10}
    matchTargetingKey: user-1
vendor:
  flags: {featureFlags: {checkout-v2: treatment-b}}
  definitions: {flags: [{key: checkout-v2}]}
"""


class TestValidDocument:
    def test_every_field_is_parsed(self) -> None:
        fixtures = parse(FULL_FLAG)
        flag = fixtures.flags["checkout-v2"]
        assert flag == Flag(
            key="checkout-v2",
            type="string",
            value="treatment-b",
            enabled=False,
            variant="treatment-b",
            payload={"rolloutId": "r1", "weights": [1, 2.5], "live": True, "note": None},
            version=7,
            id=3,
            reason_override="STATIC",
            match_attribute={"plan": "enterprise", "seats": 10},
            match_targeting_key="user-1",
        )
        assert flag.reason == "STATIC"
        assert flag.is_conditional
        assert fixtures.vendor_flags == {"featureFlags": {"checkout-v2": "treatment-b"}}
        assert fixtures.vendor_definitions == {"flags": [{"key": "checkout-v2"}]}

    def test_json_is_valid_yaml(self) -> None:
        json_text = (
            '{"flags": {"checkout-v2": {"type": "string", "value": "treatment-b",'
            ' "enabled": false, "variant": "treatment-b",'
            ' "payload": {"rolloutId": "r1", "weights": [1, 2.5], "live": true, "note": null},'
            ' "metadata": {"version": 7, "id": 3}, "reason": "STATIC",'
            ' "matchAttribute": {"plan": "enterprise", "seats": 10},'
            ' "matchTargetingKey": "user-1"}},'
            ' "vendor": {"flags": {"featureFlags": {"checkout-v2": "treatment-b"}},'
            ' "definitions": {"flags": [{"key": "checkout-v2"}]}}}'
        )
        assert parse(json_text, "x.json") == parse(FULL_FLAG)

    def test_an_already_parsed_document_is_accepted(self) -> None:
        document = {"flags": {"f": {"type": "number", "value": 0.15}}}
        fixtures = parse_fixture_document(document, "body")
        assert fixtures.flags["f"] == Flag(key="f", type="number", value=0.15)

    def test_errors_in_an_already_parsed_document_name_its_source(self) -> None:
        with pytest.raises(FixtureError) as info:
            parse_fixture_document({"flags": {"f": {"type": "string", "value": 5}}}, "body")
        assert str(info.value) == "body: flags.f.value: expected string (type string), got 5"

    def test_flags_are_keyed_by_their_flag_key(self) -> None:
        fixtures = parse(
            "flags:\n"
            "  new-checkout: {type: boolean, value: true}\n"
            "  pricing.page: {type: string, value: annual}\n"
        )
        assert list(fixtures.flags) == ["new-checkout", "pricing.page"]
        assert all(key == flag.key for key, flag in fixtures.flags.items())

    @pytest.mark.parametrize(
        ("declared", "value", "flag_type", "parsed"),
        [
            pytest.param("boolean", "true", "boolean", True, id="boolean"),
            pytest.param("boolean", "false", "boolean", False, id="boolean-false"),
            pytest.param("string", "treatment-b", "string", "treatment-b", id="string"),
            pytest.param("string", '""', "string", "", id="empty-string"),
            pytest.param("number", "25", "number", 25, id="number-int"),
            pytest.param("number", "0.15", "number", 0.15, id="number-float"),
            pytest.param("integer", "25", "number", 25, id="integer-alias"),
            pytest.param("integer", "-3", "number", -3, id="integer-negative"),
            pytest.param("float", "0.15", "number", 0.15, id="float-alias"),
            pytest.param("float", "2", "number", 2, id="float-alias-accepts-int"),
            pytest.param("object", "{theme: dark}", "object", {"theme": "dark"}, id="object"),
            pytest.param("object", "{}", "object", {}, id="empty-object"),
            pytest.param("json", "{columns: 3}", "object", {"columns": 3}, id="json-alias"),
            pytest.param("json", "[1, two]", "object", [1, "two"], id="json-list"),
        ],
    )
    def test_types_and_their_aliases(
        self, declared: str, value: str, flag_type: str, parsed: object
    ) -> None:
        flag = one_flag(f"flags: {{f: {{type: {declared}, value: {value}}}}}")
        assert flag.type == flag_type
        assert flag.value == parsed
        assert type(flag.value) is type(parsed)

    def test_defaults(self) -> None:
        flag = one_flag("flags: {f: {type: boolean, value: true}}")
        assert flag.enabled is True
        assert flag.variant is None
        assert flag.payload is None
        assert flag.version is None
        assert flag.id is None
        assert flag.reason_override is None
        assert dict(flag.match_attribute) == {}
        assert flag.match_targeting_key is None
        assert not flag.is_conditional

    def test_null_optional_fields_are_absent(self) -> None:
        flag = one_flag(
            "flags: {f: {type: boolean, value: true, variant: null, payload: null, reason: null,"
            " matchTargetingKey: null, metadata: {version: null, id: null}}}"
        )
        assert flag == Flag(key="f", type="boolean", value=True)

    @pytest.mark.parametrize(
        "payload",
        [
            pytest.param("rollout-r1", id="string"),
            pytest.param(3, id="number"),
            pytest.param(False, id="boolean"),
            pytest.param([1, "a", None], id="list"),
            pytest.param({"a": {"b": [True]}}, id="object"),
        ],
    )
    def test_a_payload_may_be_any_json_value(self, payload: object) -> None:
        document = {"flags": {"f": {"type": "boolean", "value": True, "payload": payload}}}
        assert parse_fixture_document(document, "body").flags["f"].payload == payload

    def test_metadata_may_hold_only_a_version(self) -> None:
        flag = one_flag("flags: {f: {type: boolean, value: true, metadata: {version: 4}}}")
        assert (flag.version, flag.id) == (4, None)

    def test_vendor_bodies_are_optional(self) -> None:
        fixtures = parse("flags: {f: {type: boolean, value: true}}")
        assert fixtures.vendor_flags is None
        assert fixtures.vendor_definitions is None

    def test_a_vendor_body_may_come_alone(self) -> None:
        fixtures = parse("vendor: {flags: {featureFlags: {}}}")
        assert dict(fixtures.flags) == {}
        assert fixtures.vendor_flags == {"featureFlags": {}}
        assert fixtures.vendor_definitions is None


class TestDerivedReason:
    @pytest.mark.parametrize(
        ("extra", "reason"),
        [
            pytest.param("", "TARGETING_MATCH", id="enabled-no-variant"),
            pytest.param(", enabled: true", "TARGETING_MATCH", id="explicitly-enabled"),
            pytest.param(", variant: blue", "SPLIT", id="variant"),
            pytest.param(", enabled: false", "DISABLED", id="disabled"),
            pytest.param(", enabled: false, variant: blue", "DISABLED", id="disabled-beats-split"),
            pytest.param(", reason: STATIC", "STATIC", id="override"),
            pytest.param(", reason: CACHED, variant: blue", "CACHED", id="override-beats-split"),
            pytest.param(
                ", reason: STATIC, enabled: false", "STATIC", id="override-beats-disabled"
            ),
        ],
    )
    def test_reason_is_the_override_else_disabled_else_split_else_targeting_match(
        self, extra: str, reason: str
    ) -> None:
        assert one_flag(f"flags: {{f: {{type: string, value: blue{extra}}}}}").reason == reason


class TestEmptyDocument:
    @pytest.mark.parametrize(
        ("text", "what"),
        [
            pytest.param("", "empty", id="empty"),
            pytest.param("\n  \n", "empty", id="blank"),
            pytest.param("# all flags are commented out\n", "empty", id="comments"),
            pytest.param("---\n", "empty", id="document-marker"),
            pytest.param("{}", "no section", id="empty-mapping"),
        ],
    )
    def test_is_an_error_that_says_what_a_file_holds(self, text: str, what: str) -> None:
        with pytest.raises(FixtureError) as raised:
            parse(text)
        assert str(raised.value) == (
            f"x.yaml: {what}: a fixture document holds at least one of flags, vendor, "
            "management, keys (see docs/reference/fixtures.md)"
        )

    def test_a_section_with_nothing_in_it_is_an_empty_fixture_set(self) -> None:
        fixtures = parse("flags: {}")
        assert dict(fixtures.flags) == {}
        assert (fixtures.vendor_flags, fixtures.vendor_definitions) == (None, None)

    def test_an_empty_file_is_named(self, tmp_path: Path) -> None:
        empty = write(tmp_path, "empty.yaml", "")
        with pytest.raises(FixtureError, match=r"empty.yaml: empty: a fixture document holds"):
            load_fixture_file(empty)


class TestDuplicateKeys:
    @pytest.mark.parametrize(
        ("text", "line", "key"),
        [
            (
                "flags:\n  beta: {type: boolean, value: true}\n"
                "  beta: {type: boolean, value: false}\n",
                3,
                "beta",
            ),
            ("flags:\n  beta: {type: boolean, value: true, value: false}\n", 2, "value"),
            ("flags: {}\nflags: {}\n", 2, "flags"),
            ("vendor:\n  flags: {featureFlags: {a: true, a: false}}\n", 2, "a"),
            (
                "management:\n  orgs:\n    org_a: {keys: [{key: svc_org_a}]}\n"
                "    org_a: {keys: [{key: svc_org_b}]}\n",
                4,
                "org_a",
            ),
        ],
    )
    def test_a_key_given_twice_names_the_file_line_and_key(
        self, text: str, line: int, key: str
    ) -> None:
        with pytest.raises(FixtureError) as raised:
            parse(text)
        message = str(raised.value)
        assert message.startswith(f"x.yaml: invalid YAML at line {line}, column ")
        assert message.endswith(f": the key {key!r} appears twice")

    def test_json_fixture_files_are_held_to_the_same_rule(self, tmp_path: Path) -> None:
        path = write(
            tmp_path,
            "twice.json",
            '{"flags": {"a": {"type": "number", "value": 1},\n'
            ' "a": {"type": "number", "value": 2}}}',
        )
        with pytest.raises(
            FixtureError, match=r"twice.json: invalid JSON: the key 'a' appears twice"
        ):
            load_fixture_file(path)


class TestImmutability:
    def test_a_flag_attribute_cannot_be_assigned(self) -> None:
        flag: Any = one_flag("flags: {f: {type: boolean, value: true}}")
        with pytest.raises(AttributeError):
            flag.enabled = False
        with pytest.raises(AttributeError):
            flag.value = False

    def test_a_fixture_set_attribute_cannot_be_assigned(self) -> None:
        fixtures: Any = parse("flags: {}")
        with pytest.raises(AttributeError):
            fixtures.flags = {}

    def test_the_flags_mapping_cannot_be_mutated(self) -> None:
        fixtures = parse("flags: {f: {type: boolean, value: true}}")
        flags: Any = fixtures.flags
        with pytest.raises(TypeError):
            flags["g"] = fixtures.flags["f"]
        with pytest.raises(TypeError):
            del flags["f"]
        assert list(fixtures.flags) == ["f"]

    def test_match_conditions_and_vendor_bodies_cannot_be_mutated(self) -> None:
        fixtures = parse(
            "flags: {f: {type: boolean, value: true, matchAttribute: {plan: pro}}}\n"
            "vendor: {flags: {a: 1}, definitions: {b: 2}}\n"
        )
        for mapping in (
            fixtures.flags["f"].match_attribute,
            fixtures.vendor_flags,
            fixtures.vendor_definitions,
        ):
            writable: Any = mapping
            with pytest.raises(TypeError):
                writable["x"] = 1

    def test_match_conditions_are_a_copy_of_the_document(self) -> None:
        conditions = {"plan": "pro"}
        document = {
            "flags": {"f": {"type": "boolean", "value": True, "matchAttribute": conditions}}
        }
        flag = parse_fixture_document(document, "body").flags["f"]
        conditions["plan"] = "free"
        assert dict(flag.match_attribute) == {"plan": "pro"}


class TestCheckJsonValue:
    @pytest.mark.parametrize(
        "value",
        [None, True, 0, -1.5, "", "text", [], {}, {"a": [1, {"b": None}], "c": "d"}],
    )
    def test_returns_a_json_value_unchanged(self, value: object) -> None:
        assert check_json_value(value, "src") is value

    def test_names_the_source_alone_without_a_path(self) -> None:
        with pytest.raises(FixtureError) as info:
            check_json_value({1, 2}, "src")
        assert str(info.value) == "src: expected a JSON value, got a set"

    def test_extends_the_path_it_is_given(self) -> None:
        with pytest.raises(FixtureError) as info:
            check_json_value({"a": [0, (1, 2)]}, "src", "body")
        assert str(info.value) == "src: body.a.1: expected a JSON value, got a tuple"

    @staticmethod
    def nested(depth: int) -> list[object]:
        value: list[object] = []
        innermost = value
        for _ in range(depth - 1):
            child: list[object] = []
            innermost.append(child)
            innermost = child
        return value

    def test_accepts_nesting_as_deep_as_json_can_be_written_back(self) -> None:
        value = self.nested(254)
        assert check_json_value(value, "src") is value

    def test_refuses_deeper_nesting_without_hitting_the_recursion_limit(self) -> None:
        with pytest.raises(FixtureError) as info:
            check_json_value(self.nested(sys.getrecursionlimit() * 3), "src")
        assert str(info.value) == (
            "src: expected a JSON value that can be written back (Recursion limit reached)"
        )


# --------------------------------------------------------------------------------------------
# Several files and directories.
# --------------------------------------------------------------------------------------------


class TestSeveralFiles:
    def test_a_later_file_wins_per_key(self, tmp_path: Path) -> None:
        first = write(
            tmp_path,
            "first.yaml",
            "flags:\n"
            "  shared: {type: string, value: first, variant: first}\n"
            "  only-first: {type: boolean, value: true}\n",
        )
        second = write(
            tmp_path,
            "second.yaml",
            "flags:\n"
            "  shared: {type: number, value: 2}\n"
            "  only-second: {type: boolean, value: false}\n",
        )
        fixtures = load_fixture_paths([first, second])
        assert set(fixtures.flags) == {"shared", "only-first", "only-second"}
        # The whole flag is replaced, not merged field by field.
        assert fixtures.flags["shared"] == Flag(key="shared", type="number", value=2)

    def test_the_order_given_decides_not_the_names(self, tmp_path: Path) -> None:
        a = write(tmp_path, "a.yaml", "flags: {f: {type: string, value: from-a}}")
        b = write(tmp_path, "b.yaml", "flags: {f: {type: string, value: from-b}}")
        assert load_fixture_paths([b, a]).flags["f"].value == "from-a"
        assert load_fixture_paths([a, b]).flags["f"].value == "from-b"

    def test_no_paths_is_an_empty_set(self) -> None:
        assert load_fixture_paths([]) == FixtureSet()

    def test_a_single_file_loads_as_load_fixture_file_does(self, tmp_path: Path) -> None:
        path = write(tmp_path, "one.yaml", FULL_FLAG)
        assert load_fixture_paths([path]) == load_fixture_file(path) == parse(FULL_FLAG)

    def test_a_file_with_any_suffix_may_be_named_directly(self, tmp_path: Path) -> None:
        path = write(tmp_path, "flags.txt", "flags: {f: {type: boolean, value: true}}")
        assert list(load_fixture_paths([path]).flags) == ["f"]


class TestDirectory:
    def test_loads_yaml_yml_and_json_sorted_by_name(self, tmp_path: Path) -> None:
        write(
            tmp_path, "c.yml", "flags: {f: {type: string, value: c}, c: {type: number, value: 3}}"
        )
        write(
            tmp_path,
            "a.json",
            '{"flags": {"f": {"type": "string", "value": "a"},'
            ' "a": {"type": "number", "value": 1}}}',
        )
        write(
            tmp_path, "b.yaml", "flags: {f: {type: string, value: b}, b: {type: number, value: 2}}"
        )
        fixtures = load_fixture_paths([tmp_path])
        assert fixtures.flags["f"].value == "c"
        assert {key: fixtures.flags[key].value for key in "abc"} == {"a": 1, "b": 2, "c": 3}

    def test_sorted_by_name_means_by_file_name(self, tmp_path: Path) -> None:
        write(tmp_path, "b.json", '{"flags": {"f": {"type": "string", "value": "b"}}}')
        write(tmp_path, "a.yaml", "flags: {f: {type: string, value: a}}")
        assert load_fixture_paths([tmp_path]).flags["f"].value == "b"

    def test_ignores_other_files_and_subdirectories(self, tmp_path: Path) -> None:
        write(tmp_path, "flags.yaml", "flags: {f: {type: boolean, value: true}}")
        write(tmp_path, "README.md", "not: [valid")
        write(tmp_path, "notes.txt", "\x00 not yaml at all")
        write(tmp_path, "flags.yaml.bak", "flags: {g: {type: boolean}}")
        subdirectory = tmp_path / "more.yaml"
        subdirectory.mkdir()
        write(subdirectory, "inner.yaml", "flags: {inner: {type: boolean, value: true}}")
        assert list(load_fixture_paths([tmp_path]).flags) == ["f"]

    def test_a_file_after_a_directory_wins(self, tmp_path: Path) -> None:
        directory = tmp_path / "set"
        directory.mkdir()
        write(
            directory,
            "a.yaml",
            "flags: {f: {type: string, value: dir}, g: {type: string, value: dir}}",
        )
        override = write(tmp_path, "override.yaml", "flags: {f: {type: string, value: file}}")
        fixtures = load_fixture_paths([directory, override])
        assert fixtures.flags["f"].value == "file"
        assert fixtures.flags["g"].value == "dir"

    def test_an_empty_file_in_a_directory_is_named(self, tmp_path: Path) -> None:
        write(tmp_path, "a.yaml", "flags: {f: {type: boolean, value: true}}")
        write(tmp_path, "b.yaml", "")
        with pytest.raises(FixtureError, match=r"b.yaml: empty: "):
            load_fixture_paths([tmp_path])


class TestVendorOverlay:
    def test_a_later_vendor_body_replaces_an_earlier_one(self, tmp_path: Path) -> None:
        first = write(
            tmp_path, "1.yaml", "vendor: {flags: {from: first}, definitions: {from: first}}"
        )
        second = write(tmp_path, "2.yaml", "vendor: {flags: {from: second}}")
        fixtures = load_fixture_paths([first, second])
        assert fixtures.vendor_flags == {"from": "second"}
        assert fixtures.vendor_definitions == {"from": "first"}

    def test_a_later_file_without_vendor_bodies_keeps_the_earlier_ones(
        self, tmp_path: Path
    ) -> None:
        first = write(tmp_path, "1.yaml", "vendor: {flags: {from: first}}")
        second = write(tmp_path, "2.yaml", "flags: {f: {type: boolean, value: true}}")
        fixtures = load_fixture_paths([first, second])
        assert fixtures.vendor_flags == {"from": "first"}
        assert fixtures.vendor_definitions is None
        assert list(fixtures.flags) == ["f"]

    def test_overlaid_with_leaves_both_sets_unchanged(self) -> None:
        earlier = parse("flags: {f: {type: string, value: early}}\nvendor: {flags: {a: 1}}")
        later = parse(
            "flags: {f: {type: string, value: late}, g: {type: boolean, value: true}}\n"
            "vendor: {definitions: {b: 2}}"
        )
        combined = earlier.overlaid_with(later)
        assert combined.flags["f"].value == "late"
        assert list(combined.flags) == ["f", "g"]
        assert combined.vendor_flags == {"a": 1}
        assert combined.vendor_definitions == {"b": 2}
        assert list(earlier.flags) == ["f"]
        assert earlier.flags["f"].value == "early"
        assert earlier.vendor_definitions is None
        assert later.vendor_flags is None
        flags: Any = combined.flags
        with pytest.raises(TypeError):
            flags["h"] = combined.flags["g"]


# --------------------------------------------------------------------------------------------
# Flag.matches
# --------------------------------------------------------------------------------------------


def conditional(
    match_attribute: dict[str, Any] | None = None, match_targeting_key: str | None = None
) -> Flag:
    return Flag(
        key="f",
        type="boolean",
        value=True,
        match_attribute=match_attribute or {},
        match_targeting_key=match_targeting_key,
    )


class TestFlagMatches:
    def test_a_flag_without_conditions_matches_every_context(self) -> None:
        flag = one_flag("flags: {f: {type: boolean, value: true}}")
        assert flag.matches("", {})
        assert flag.matches("user-1", {"plan": "free"})

    def test_parsed_conditions_are_applied(self) -> None:
        flag = one_flag(
            "flags: {f: {type: boolean, value: true,"
            " matchAttribute: {plan: enterprise}, matchTargetingKey: user-1}}"
        )
        assert flag.is_conditional
        assert flag.matches("user-1", {"plan": "enterprise"})
        assert not flag.matches("user-2", {"plan": "enterprise"})
        assert not flag.matches("user-1", {"plan": "free"})

    def test_every_listed_attribute_must_equal(self) -> None:
        flag = conditional({"plan": "enterprise", "region": "eu"})
        assert flag.matches("u", {"plan": "enterprise", "region": "eu"})
        assert not flag.matches("u", {"plan": "enterprise", "region": "us"})
        assert not flag.matches("u", {"plan": "free", "region": "eu"})

    def test_extra_attributes_do_not_matter(self) -> None:
        flag = conditional({"plan": "enterprise"})
        assert flag.matches("u", {"plan": "enterprise", "region": "eu", "seats": 10})

    @pytest.mark.parametrize("wanted", ["enterprise", None, False, 0, ""])
    def test_a_missing_attribute_does_not_match(self, wanted: object) -> None:
        flag = conditional({"plan": wanted})
        assert not flag.matches("u", {})
        assert not flag.matches("u", {"other": wanted})

    @pytest.mark.parametrize(
        ("wanted", "given", "matched"),
        [
            pytest.param("enterprise", "enterprise", True, id="same-string"),
            pytest.param("enterprise", "Enterprise", False, id="case-sensitive"),
            pytest.param("1", 1, False, id="string-is-not-number"),
            pytest.param(1, 1, True, id="same-int"),
            pytest.param(1, 1.0, True, id="1-equals-1.0"),
            pytest.param(1.0, 1, True, id="1.0-equals-1"),
            pytest.param(True, True, True, id="true-equals-true"),
            pytest.param(False, False, True, id="false-equals-false"),
            pytest.param(True, 1, False, id="true-is-not-1"),
            pytest.param(1, True, False, id="1-is-not-true"),
            pytest.param(False, 0, False, id="false-is-not-0"),
            pytest.param(0, False, False, id="0-is-not-false"),
            pytest.param(1.0, True, False, id="1.0-is-not-true"),
            pytest.param(None, None, True, id="null-equals-null"),
            pytest.param(None, False, False, id="null-is-not-false"),
            pytest.param([1, "a"], [1.0, "a"], True, id="list-numbers"),
            pytest.param({"a": 1}, {"a": 1.0}, True, id="object-numbers"),
            pytest.param([1, 2], [2, 1], False, id="list-order"),
            pytest.param([True], [1], False, id="nested-true-is-not-1"),
            pytest.param({"beta": False}, {"beta": 0}, False, id="nested-false-is-not-0"),
        ],
    )
    def test_attributes_compare_by_json_equality(
        self, wanted: object, given: object, matched: bool
    ) -> None:
        assert conditional({"attr": wanted}).matches("u", {"attr": given}) is matched

    def test_match_targeting_key(self) -> None:
        flag = conditional(match_targeting_key="user-1")
        assert flag.is_conditional
        assert flag.matches("user-1", {})
        assert not flag.matches("user-2", {})
        assert not flag.matches("", {})
        assert not flag.matches("USER-1", {})

    def test_both_conditions_must_hold(self) -> None:
        flag = conditional({"plan": "pro"}, match_targeting_key="user-1")
        assert flag.matches("user-1", {"plan": "pro"})
        assert not flag.matches("user-1", {"plan": "free"})
        assert not flag.matches("user-2", {"plan": "pro"})


# --------------------------------------------------------------------------------------------
# The default fixture set.
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def default_set() -> FixtureSet:
    return load_fixture_paths([default_fixture_dir()])


class TestDefaultFixtureSet:
    def test_the_default_directory_holds_default_yaml(self) -> None:
        directory = default_fixture_dir()
        assert directory.is_dir()
        assert (directory / "default.yaml").is_file()

    def test_the_directory_and_the_file_load_the_same(self, default_set: FixtureSet) -> None:
        assert load_fixture_file(default_fixture_dir() / "default.yaml") == default_set

    def test_the_parsed_copy_a_stub_starts_from_is_the_yaml(self) -> None:
        """`stub/default_fixtures.json` is written by `python -m stub.fixtures` from the YAML;
        if this fails, the YAML was edited without running it."""
        source = default_fixture_dir() / "default.yaml"
        parsed = parse_yaml(source.read_text(encoding="utf-8"), str(source))
        assert json.loads(DEFAULT_SET.read_text(encoding="utf-8")) == parsed
        assert load_fixture_file(DEFAULT_SET) == load_fixture_file(source)

    def test_a_json_file_is_read_as_json_so_its_mistakes_name_the_line(
        self, tmp_path: Path
    ) -> None:
        lenient = tmp_path / "lenient.json"  # a trailing comma: YAML took it, JSON does not
        lenient.write_text('{"flags": {"f": {"type": "number", "value": 1}, }}\n')
        with pytest.raises(FixtureError, match=r"lenient.json: invalid JSON at line 1, col"):
            load_fixture_file(lenient)
        yaml_file = tmp_path / "lenient.yaml"  # the same text is fine YAML
        yaml_file.write_text(lenient.read_text())
        assert load_fixture_file(yaml_file).flags["f"].value == 1

    def test_is_not_empty_and_every_flag_has_a_version(self, default_set: FixtureSet) -> None:
        assert default_set.flags
        assert all(flag.version is not None for flag in default_set.flags.values())

    def test_covers_every_type(self, default_set: FixtureSet) -> None:
        types = {flag.type for flag in default_set.flags.values()}
        assert types == {"boolean", "string", "number", "object"}

    def test_has_a_boolean_on_and_a_boolean_off(self, default_set: FixtureSet) -> None:
        served = {
            flag.value
            for flag in default_set.flags.values()
            if flag.type == "boolean" and flag.enabled and not flag.is_conditional
        }
        assert served == {True, False}

    def test_has_a_disabled_flag(self, default_set: FixtureSet) -> None:
        disabled = [flag for flag in default_set.flags.values() if not flag.enabled]
        assert disabled
        assert all(flag.reason == "DISABLED" for flag in disabled)

    def test_has_a_string_with_a_variant(self, default_set: FixtureSet) -> None:
        assert any(
            flag.type == "string"
            and flag.enabled
            and flag.variant is not None
            and flag.payload is None
            and flag.reason == "SPLIT"
            for flag in default_set.flags.values()
        )

    def test_has_a_string_with_a_variant_and_a_payload(self, default_set: FixtureSet) -> None:
        assert any(
            flag.type == "string" and flag.variant is not None and flag.payload is not None
            for flag in default_set.flags.values()
        )

    def test_has_a_number_and_an_object(self, default_set: FixtureSet) -> None:
        numbers = [f.value for f in default_set.flags.values() if f.type == "number"]
        objects = [f.value for f in default_set.flags.values() if f.type == "object"]
        assert numbers
        assert all(isinstance(n, int | float) and not isinstance(n, bool) for n in numbers)
        assert objects
        assert all(isinstance(o, dict) for o in objects)

    def test_has_a_match_attribute_flag(self, default_set: FixtureSet) -> None:
        conditional_flags = [f for f in default_set.flags.values() if f.match_attribute]
        assert conditional_flags
        for flag in conditional_flags:
            wanted = dict(flag.match_attribute)
            assert flag.matches("anyone", wanted)
            assert not flag.matches("anyone", {})

    def test_has_unconditional_flags_that_match_everyone(self, default_set: FixtureSet) -> None:
        unconditional = [f for f in default_set.flags.values() if not f.is_conditional]
        assert len(unconditional) >= 2
        assert all(flag.matches("", {}) for flag in unconditional)


class TestJsonFilesAreReadAsJson:
    """RFC 8259 section 7: a character outside the Basic Multilingual Plane may be written as
    an escaped surrogate pair, as Python's `json.dumps` writes emoji; YAML would split it."""

    def test_an_escaped_surrogate_pair_is_served_to_the_published_client(
        self, tmp_path: Path, open_fireweave: OpenFireweave
    ) -> None:
        rocket = tmp_path / "rocket.json"
        rocket.write_text(json.dumps({"flags": {"rocket": {"type": "string", "value": "🚀"}}}))
        assert "\\ud83d\\ude80" in rocket.read_text()
        with spawn_stub("--fixtures", str(rocket), read_log=False) as stub:
            _, _, client = open_fireweave(stub.url, "project-api-key_rocket")
            context = EvaluationContext(targeting_key="u")
            assert client.control_points.get_string_value("rocket", "none", context) == "🚀"

    @pytest.mark.parametrize(
        ("text", "said"),
        [
            ('{"flags": {"a": 1,}}', "rocket.json: invalid JSON at line 1, column 19: "),
            ('{"flags": {}, "flags": {}}', "rocket.json: invalid JSON: the key 'flags' appears"),
            ('{"flags": {"a": {"type": "number", "value": NaN}}}', "NaN is not JSON"),
            ('{"flags": {"a": {"type": "string", "value": "\\ud800"}}}', "flags.a.value"),
        ],
    )
    def test_a_json_mistake_is_one_line_naming_the_file(
        self, tmp_path: Path, text: str, said: str
    ) -> None:
        (tmp_path / "rocket.json").write_text(text)
        with pytest.raises(FixtureError) as raised:
            load_fixture_file(tmp_path / "rocket.json")
        assert said in str(raised.value)
        assert "\n" not in str(raised.value)
