//! The crate's words are the stub's: every fault mode, selector, route name, arming member,
//! long-poll parameter, control path and coverage report member it uses, checked against the
//! stub's own description of its control plane (`stub/openapi.json`); its names are the shared
//! vocabulary's (`clients/vocabulary.json`); and one version number for the stub and the crate.

use std::collections::BTreeSet;

use std::path::Path;

use serde_json::{json, Value};
use svc_stub::{Fault, FaultSource, Mode, Route, Selector, Step};

const OPENAPI: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../stub/openapi.json");
const VOCABULARY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../vocabulary.json");

fn read(path: &str) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn document() -> Value {
    read(OPENAPI)
}

fn enum_of(document: &Value, schema: &str) -> Vec<String> {
    let list = document["components"]["schemas"][schema]["enum"].as_array();
    let list = list.unwrap_or_else(|| panic!("the document has no {schema} enum"));
    list.iter().map(|word| word.as_str().unwrap().to_owned()).collect()
}

fn words<T: Copy>(all: &[T], as_str: fn(T) -> &'static str) -> Vec<String> {
    all.iter().map(|&word| as_str(word).to_owned()).collect()
}

#[test]
fn the_vocabulary_is_the_stubs() {
    let document = document();
    assert_eq!(words(Mode::ALL, Mode::as_str), enum_of(&document, "FaultMode"), "Mode::ALL");
    assert_eq!(words(Selector::ALL, Selector::as_str), enum_of(&document, "Selector"), "Selector::ALL");
    assert_eq!(words(Route::ALL, Route::as_str), enum_of(&document, "RouteName"), "Route::ALL");
    // the resources that read the journal are the stub's selectors
    let selectors = enum_of(&document, "Selector");
    for resource in [Route::Projects, Route::Environments, Route::ControlPoints] {
        assert!(selectors.contains(&resource.as_str().to_owned()), "{resource:?} is no selector");
    }
    // the read side's words: where a recorded fault came from, and what it was ("none": let through)
    let record = &document["components"]["schemas"]["FaultRecord"]["properties"];
    let sources: Vec<String> =
        record["source"]["enum"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().into()).collect();
    assert_eq!(words(FaultSource::ALL, FaultSource::as_str), sources, "FaultSource::ALL");
    let modes: Vec<String> =
        record["mode"]["enum"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().into()).collect();
    assert_eq!(modes[0], "none");
    assert_eq!(words(Mode::ALL, Mode::as_str), modes[1..], "FaultRecord.mode");
    // an armed fault's applyTo lists selectors
    for target in enum_of(&document, "FaultTarget") {
        assert!(target.parse::<Selector>().is_ok(), "{target} is no Selector");
    }
    // every word parses back
    for mode in Mode::ALL {
        assert_eq!(mode.as_str().parse::<Mode>(), Ok(*mode));
    }
}

/// The members a schema (or its object alternative) has.
fn properties(schema: &Value) -> BTreeSet<String> {
    let object = schema["properties"]
        .as_object()
        .or_else(|| schema["oneOf"].as_array()?.iter().find_map(|alternative| alternative["properties"].as_object()));
    object.unwrap_or_else(|| panic!("no properties in {schema}")).keys().cloned().collect()
}

fn members(value: &Value) -> BTreeSet<String> {
    value.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn a_fault_sets_every_member_of_the_arming_document() {
    let document = document();
    let schemas = &document["components"]["schemas"];
    let full = Fault::new(Mode::Status)
        .apply_to(Selector::Evaluate)
        .times(1)
        .delay(std::time::Duration::from_millis(5))
        .status(503)
        .body("x")
        .retry_after(1)
        .probability(0.5, 7);
    let sequence = Fault::sequence([Step::pass()]);
    let mut sent = members(&full.arming_document());
    sent.extend(members(&sequence.arming_document()));
    assert_eq!(sent, properties(&schemas["ArmingDocument"]), "Fault's members, and the ArmingDocument's");

    let step = Fault::sequence([Step::new(Mode::Status)
        .delay(std::time::Duration::from_millis(5))
        .status(503)
        .body("x")
        .retry_after(1)]);
    let step = &step.arming_document()["sequence"][0];
    assert_eq!(members(step), properties(&schemas["SequenceStep"]), "Step's members, and the SequenceStep's");
    let pass = &sequence.arming_document()["sequence"][0]["mode"];
    let modes = schemas["SequenceStep"]["oneOf"][0]["enum"].as_array().unwrap();
    assert!(modes.contains(pass), "a SequenceStep cannot be {pass}");
}

/// The source of one of the crate's files.
fn source_of(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The source of the crate's control client.
fn client_source() -> String {
    source_of("client.rs")
}

#[test]
fn the_checks_are_the_stubs() {
    let document = document();
    let parameters = document["paths"]["/_test/checks/{check}"]["get"]["parameters"].as_array().unwrap();
    let checks = parameters.iter().find(|p| p["name"] == "check").unwrap()["schema"]["enum"].as_array().unwrap();
    let source = source_of("stub.rs");
    for check in checks {
        let check = check.as_str().unwrap();
        assert!(source.contains(&format!("assert_check(\"{check}\"")), "no assertion makes the stub's {check} check");
    }
}

/// Each name of the shared vocabulary is the crate's, as Rust spells it; each control-plane word
/// of it is the stub's: `applyTo` a member of the arming document, `/_test/offline` a path.
#[test]
fn the_names_are_the_shared_vocabularys() {
    let vocabulary = read(VOCABULARY);
    let words = vocabulary["words"].as_object().expect("clients/vocabulary.json: no words");
    let sources: String = ["lib.rs", "client.rs", "stub.rs", "faults.rs", "journal.rs"].map(source_of).concat();
    for (idea, spellings) in words {
        let rust = spellings["rust"].as_str().unwrap_or_else(|| panic!("{idea}: no Rust spelling"));
        let declared = [format!("pub struct {rust} "), format!("pub fn {rust}("), format!("pub fn {rust}<")];
        assert!(declared.iter().any(|d| sources.contains(d.as_str())), "{idea}: the crate has no {rust}");
    }
    let document = document();
    let arming = properties(&document["components"]["schemas"]["ArmingDocument"]);
    let selector = words["routeSelector"]["controlPlane"].as_str().unwrap();
    assert_eq!(selector, "applyTo");
    assert!(arming.contains(selector), "{selector} is not a member of the ArmingDocument: {arming:?}");
    assert!(Fault::new(Mode::Reset).apply_to(Selector::Capture).arming_document()[selector] == json!(["capture"]));
    let offline = words["offlineUrl"]["controlPlane"].as_str().unwrap();
    assert!(document["paths"][offline]["get"].is_object(), "the stub's document has no GET {offline}");
}

/// Each parameter of an operation, `$ref`s resolved.
fn parameters_of(document: &Value, path: &str, method: &str) -> Vec<String> {
    let operation = &document["paths"][path][method];
    let parameters = operation["parameters"].as_array().unwrap_or_else(|| panic!("{method} {path}: no parameters"));
    parameters
        .iter()
        .map(|parameter| {
            let parameter = match parameter["$ref"].as_str() {
                Some(reference) => &document["components"]["parameters"][reference.rsplit('/').next().unwrap()],
                None => parameter,
            };
            parameter["name"].as_str().unwrap().to_owned()
        })
        .collect()
}

#[test]
fn the_long_poll_parameters_are_the_stubs() {
    let document = document();
    let sources = [client_source(), source_of("stub.rs")].concat();
    for (path, names) in [
        ("/_test/events", &["minEvents", "minSvcEvents", "minTargets", "waitMs"][..]),
        ("/_test/requests", &["route", "min", "waitMs", "bodies"][..]),
        ("/_test/checks/{check}", &["route", "flagKey", "targetingKey", "variant"][..]),
        ("/_test/coverage", &["scope", "profile"][..]),
    ] {
        let parameters = parameters_of(&document, path, "get");
        for name in names {
            assert!(sources.contains(&format!("\"{name}\"")), "the crate does not send {name:?}");
            assert!(
                parameters.contains(&(*name).to_owned()),
                "{name} is not a parameter of GET {path}: {parameters:?}"
            );
        }
    }
    assert!(parameters_of(&document, "/_test/fixtures", "post").contains(&"merge".to_owned()));
}

#[test]
fn every_control_path_is_the_stubs() {
    let document = document();
    let placeholder = |path: &str| {
        let mut out = String::new();
        let mut inside = false;
        for c in path.chars() {
            match c {
                '{' => inside = true,
                '}' if inside => {
                    inside = false;
                    out.push_str("{x}");
                }
                _ if !inside => out.push(c),
                _ => {}
            }
        }
        out
    };
    let mut served = BTreeSet::new();
    for (path, operations) in document["paths"].as_object().unwrap() {
        for method in operations.as_object().unwrap().keys() {
            served.insert(format!("{} {}", method.to_uppercase(), placeholder(path)));
        }
    }
    let source = client_source();
    let mut calls = Vec::new();
    for (constructor, method) in [("get", "GET"), ("post", "POST"), ("delete", "DELETE"), ("file", "POST")] {
        for (at, _) in source.match_indices(&format!("Call::{constructor}(")) {
            let argument = &source[at + constructor.len() + 7..];
            let argument = argument.trim_start_matches("&format!(");
            let path = argument.strip_prefix('"').and_then(|rest| rest.split('"').next());
            calls.push(format!(
                "{method} {}",
                placeholder(path.unwrap_or_else(|| panic!("Call::{constructor}({argument:.40}")))
            ));
        }
    }
    assert!(calls.len() >= 22, "found only {} calls in client.rs: {calls:?}", calls.len());
    for call in &calls {
        assert!(served.contains(call), "client.rs calls {call}, which the stub's document does not have");
    }
}

#[test]
fn the_headers_are_in_the_stubs_description() {
    let document = document();
    let description = document["info"]["description"].as_str().unwrap();
    for header in [
        svc_stub::HEADER_FAULT,
        svc_stub::HEADER_DELAY_MS,
        svc_stub::HEADER_STATUS,
        svc_stub::HEADER_RETRY_AFTER,
        svc_stub::HEADER_NAMESPACE,
    ] {
        assert!(description.contains(header), "{header} is not in the stub's description");
    }
}

#[test]
fn one_version_number() {
    let stub = document()["info"]["version"].as_str().unwrap().to_owned();
    let pyproject = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../pyproject.toml")).unwrap();
    let python = pyproject.lines().find_map(|line| line.strip_prefix("version = \"")?.strip_suffix('"')).unwrap();
    assert_eq!(svc_stub::VERSION, stub, "the crate's version, and the stub's OpenAPI document's");
    assert_eq!(python, stub, "pyproject.toml's version, and the stub's OpenAPI document's");
}

/// Each member of the stub's coverage report, and of its `flags`, is read into `Coverage`.
#[test]
fn the_coverage_reads_every_member_of_the_stubs_report() {
    let document = document();
    let report = &document["components"]["schemas"]["CoverageResponse"];
    let source = source_of("coverage.rs");
    for member in properties(report) {
        assert!(source.contains(&format!("value[\"{member}\"]")), "Coverage does not read the report's {member}");
    }
    for member in properties(&report["properties"]["flags"]) {
        assert!(
            source.contains(&format!("value[\"flags\"][\"{member}\"]")),
            "Coverage does not read the report's flags.{member}"
        );
    }
}
