//! The test binaries of one `cargo test` share one stub, started by the first to need it, and
//! it ends with the run: share_a and share_b, run by a `cargo test` of their own, each record
//! the stub they were given.

use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn the_test_binaries_of_one_cargo_test_share_one_stub() {
    if !cfg!(target_os = "linux") {
        return; // the runner is found through /proc (elsewhere `ps`, not checked here)
    }
    let shared = std::env::temp_dir().join(format!("svc-stub-rs-share-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&shared);
    std::fs::create_dir_all(&shared).unwrap();
    let manifest = env!("CARGO_MANIFEST_DIR");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    // a target directory of its own: this run's cargo holds the lock of its own
    let output = Command::new(cargo)
        .args(["test", "--locked", "--test", "share_a", "--test", "share_b"])
        .current_dir(manifest)
        .env("CARGO_TARGET_DIR", format!("{manifest}/target/share-run"))
        .env("SVC_STUB_RS_SHARE_DIR", &shared)
        .env_remove("SVC_STUB_URL")
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "cargo test --test share_a --test share_b:\n{said}");

    let recorded: Vec<(String, String)> = ["a", "b"]
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(shared.join(name))
                .unwrap_or_else(|e| panic!("share_{name} did not say which stub it had ({e}):\n{said}"));
            let (url, pid) = text.split_once(' ').unwrap();
            (url.to_owned(), pid.to_owned())
        })
        .collect();
    let _ = std::fs::remove_dir_all(&shared);
    let ((url_a, pid_a), (url_b, pid_b)) = (&recorded[0], &recorded[1]);
    assert_ne!(pid_a, pid_b, "the two binaries ran as one process");
    assert_eq!(url_a, url_b, "share_a had the stub at {url_a}, share_b the one at {url_b}: want one for the run");
    assert_ne!(&svc_stub::run_url().unwrap(), url_a, "the child run had this run's stub, not one of its own");

    let client = svc_stub::Client::new(url_a).unwrap();
    let deadline = Instant::now() + Duration::from_secs(3);
    while client.health().is_ok() {
        assert!(Instant::now() < deadline, "the run's stub at {url_a} still answers 3s after its cargo test ended");
        std::thread::sleep(Duration::from_millis(100));
    }
}
