//! One stub for every test binary of one `cargo test`: cargo runs each binary (each file of
//! `tests/`, the unit tests, the doc tests) as a process of its own, one after another, so the
//! first that needs a stub starts it, detached, and the others find it. It stops itself once the
//! `cargo` process has ended (`svc-stub --stop-with`). A lock file in a directory named after
//! that process decides who starts it; the directory says where it listens.

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::client::Client;
use crate::error::{Error, Result};
use crate::process::{StartOptions, StubProcess};

/// The runners whose test processes share a stub: `cargo test`, and `cargo nextest` (which runs
/// every test as a process of its own).
const RUNNERS: &[&str] = &["cargo", "cargo-nextest"];

/// How long a process waits for another to start the run's stub.
const LOCK_TIMEOUT: Duration = Duration::from_secs(60);

/// The `cargo` (or `cargo-nextest`) process that runs this test binary, if one does: a
/// binary run by hand or by an IDE keeps a stub of its own.
pub(crate) fn runner_pid() -> Option<u32> {
    if !cfg!(unix) {
        return None;
    }
    let parent = parent_pid()?;
    let name = fs::read_to_string(format!("/proc/{parent}/comm")).ok().or_else(|| {
        // not Linux: ask ps
        let output = Command::new("ps").args(["-o", "comm=", "-p", &parent.to_string()]).output().ok()?;
        Some(String::from_utf8_lossy(&output.stdout).into_owned())
    })?;
    let name = name.trim();
    let name = name.rsplit('/').next().unwrap_or(name);
    RUNNERS.contains(&name).then_some(parent)
}

#[cfg(unix)]
fn parent_pid() -> Option<u32> {
    Some(std::os::unix::process::parent_id())
}

#[cfg(not(unix))]
fn parent_pid() -> Option<u32> {
    None
}

/// The stub of the run whose runner is `owner`: started by whichever process asks first.
pub(crate) fn shared_stub(owner: u32) -> Result<String> {
    remove_ended(owner);
    let directory = base_directory().join(format!("cargo-{owner}"));
    fs::create_dir_all(&directory).map_err(|error| io_error(&directory, &error))?;
    let _lock = Lock::take(&directory.join("lock"))?;
    let where_ = directory.join("url");
    if let Ok(url) = fs::read_to_string(&where_) {
        if Client::new(&url).and_then(|client| client.health()).is_ok() {
            return Ok(url);
        }
    }
    let options =
        StartOptions { stop_with: Some(owner), log_dir: Some(directory), detach: true, ..StartOptions::default() };
    let process = StubProcess::start(options)?;
    let url = process.url().to_owned();
    fs::write(&where_, &url).map_err(|error| io_error(&where_, &error))?;
    Ok(url)
}

/// A new directory for a stub this process starts for itself.
pub(crate) fn own_directory() -> PathBuf {
    static STARTED: AtomicU32 = AtomicU32::new(0);
    remove_ended(0);
    let n = STARTED.fetch_add(1, Ordering::Relaxed);
    base_directory().join(format!("own-{}-{n}", std::process::id()))
}

/// Where this user's runs keep their stubs' directories.
fn base_directory() -> PathBuf {
    let user = std::env::var("USER").or_else(|_| std::env::var("USERNAME")).unwrap_or_default();
    let user: String = user.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')).collect();
    std::env::temp_dir().join(if user.is_empty() {
        "svc-stub-rust".to_owned()
    } else {
        format!("svc-stub-rust-{user}")
    })
}

/// Removes the directories of runs that have ended (their stubs stopped with them): nothing else
/// would, as a run's stub outlives every process of it that could.
fn remove_ended(owner: u32) {
    let Ok(entries) = fs::read_dir(base_directory()) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = name.strip_prefix("cargo-").or_else(|| name.strip_prefix("own-"));
        let pid = pid.and_then(|tail| tail.split('-').next()).and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid {
            if pid != owner && pid != std::process::id() && !alive(pid) {
                let _ = fs::remove_dir_all(entry.path());
            }
        }
    }
}

/// Whether process `pid` is running.
pub(crate) fn alive(pid: u32) -> bool {
    if Path::new("/proc/self").exists() {
        return Path::new(&format!("/proc/{pid}")).exists();
    }
    Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .map_or(true, |status| status.success())
}

/// A lock file created exclusively, holding its holder's PID; removed when dropped. A holder
/// that died holding it (killed mid-start) leaves it stale: the next one takes it over.
struct Lock {
    path: PathBuf,
}

impl Lock {
    fn take(path: &Path) -> Result<Lock> {
        let started = Instant::now();
        loop {
            match OpenOptions::new().write(true).create_new(true).open(path) {
                Ok(mut file) => {
                    let _ = write!(file, "{}", std::process::id());
                    return Ok(Lock { path: path.to_path_buf() });
                }
                Err(error) if error.kind() == ErrorKind::AlreadyExists => {
                    let holder = fs::read_to_string(path).ok().and_then(|pid| pid.trim().parse::<u32>().ok());
                    let unwritten_for = || fs::metadata(path).ok()?.modified().ok()?.elapsed().ok();
                    // a holder that died, or one that died between creating the file and writing its PID
                    let stale = match holder {
                        Some(pid) => !alive(pid),
                        None => unwritten_for().is_some_and(|age| age > Duration::from_secs(10)),
                    };
                    if stale {
                        let _ = fs::remove_file(path);
                        continue;
                    }
                    if started.elapsed() > LOCK_TIMEOUT {
                        return Err(Error::Start(format!(
                            "svc-stub: another test binary of this run held {} for {}s; remove it if no test runs",
                            path.display(),
                            LOCK_TIMEOUT.as_secs()
                        )));
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(error) => return Err(io_error(path, &error)),
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

fn io_error(path: &Path, error: &std::io::Error) -> Error {
    Error::Start(format!("svc-stub: {}: {error}", path.display()))
}
