// tests/provider.rs: run with `cargo test`
#[path = "examples/provider.rs"]
mod provider; // in your crate: use my_provider::provider;

use serde_json::{json, Value};
use svc_stub::{Fault, Route, Selector};

/// The organisation the tests work in: its key, and the project it already has.
fn acme() -> Value {
    json!({"orgs": {"org_acme": {
        "keys": [{"key": "svc_org_acme_tf"}],
        "projects": [{"name": "Shop", "slug": "shop"}],
    }}})
}

#[test]
fn the_provider_creates_a_project() {
    let stub = svc_stub::start();
    stub.seed_management(acme());

    let id = provider::create_project(stub.url(), "svc_org_acme_tf", "Checkout", "checkout").unwrap();
    assert!(id.starts_with("proj_"), "{id}");
    let created = stub.requests(Route::ProjectsCreate);
    assert_eq!(created.len(), 1);
    assert_eq!(created[0].status, Some(201));
    assert_eq!(created[0].json::<Value>()["slug"], "checkout"); // what it sent, parsed
}

#[test]
fn the_provider_reports_a_slug_taken() {
    let stub = svc_stub::start();
    stub.seed_management(acme());

    let error = provider::create_project(stub.url(), "svc_org_acme_tf", "Shop again", "shop").unwrap_err();
    assert!(error.starts_with("409 CONFLICT: "), "{error}");
}

#[test]
fn the_provider_surfaces_an_outage() {
    let stub = svc_stub::start();
    stub.seed_management(acme());
    let _outage = stub.arm(Fault::with_status(503).apply_to(Selector::Projects).times(1));

    assert!(provider::create_project(stub.url(), "svc_org_acme_tf", "Checkout", "checkout").is_err());
}
