//! Run by `share.rs`, in a `cargo test` of its own with share_a: each test binary records the
//! stub it was given, and the two must be one.

/// Writes the base URL of this binary's stub as `RS_TEST_SHARE_DIR/b`.
#[test]
fn records_the_runs_stub() {
    let Some(directory) = std::env::var_os("RS_TEST_SHARE_DIR") else { return };
    let stub = svc_stub::start();
    let written = std::path::Path::new(&directory).join("b.tmp");
    std::fs::write(&written, format!("{} {}", stub.base_url(), std::process::id())).unwrap();
    std::fs::rename(&written, std::path::Path::new(&directory).join("b")).unwrap();
}
