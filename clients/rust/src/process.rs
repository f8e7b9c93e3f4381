//! Starting a stub: `svc-stub --port 0`, ready when its ready line names its URL.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// The start of the first line a stub prints, once its port is bound; the rest is its URL.
pub const READY_PREFIX: &str = "svc-stub listening on ";

/// How long a stub may take to print its ready line.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// How to start a stub.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct StartOptions {
    /// More svc-stub options (`--fixtures flags.yaml`, `--strict-keys`).
    pub args: Vec<String>,
    /// The command; default `SVC_STUB_BIN`, else `svc-stub` from `PATH`.
    pub bin: Option<PathBuf>,
    /// The process whose end stops the stub (`svc-stub --stop-with`); default this one. Rust
    /// runs no destructor for a static, so this is how a stub stops with its test binary.
    pub stop_with: Option<u32>,
    /// Where its output goes (`stdout`, `stub.log`); default a new directory under the temporary one.
    pub log_dir: Option<PathBuf>,
    /// Starts it in a process group of its own, so that no signal meant for this one's (a
    /// Ctrl-C) reaches it: it stops when `stop_with` ends.
    pub detach: bool,
}

impl StartOptions {
    /// Options with more svc-stub arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Options with the command to run.
    pub fn bin(mut self, bin: impl Into<PathBuf>) -> Self {
        self.bin = Some(bin.into());
        self
    }
}

/// A stub this process started.
#[derive(Debug)]
pub struct StubProcess {
    url: String,
    log_path: PathBuf,
    child: Child,
    /// The directory made for its output, removed when it is stopped.
    made: Option<PathBuf>,
}

impl StubProcess {
    /// Starts `svc-stub --host 127.0.0.1 --port 0 --stop-with PID` and waits for its ready line.
    /// The errors are one line: no `svc-stub` to run, or it stopped before it was ready, with
    /// the last line it logged.
    pub fn start(options: StartOptions) -> Result<StubProcess> {
        let bin = options
            .bin
            .clone()
            .or_else(|| std::env::var_os(crate::BIN_VARIABLE).filter(|b| !b.is_empty()).map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("svc-stub"));
        let path = find(&bin).ok_or_else(|| {
            Error::Start(format!(
                "svc-stub: no '{}' to run; install it (pip install svc-stub) or set {} to its path",
                bin.display(),
                crate::BIN_VARIABLE
            ))
        })?;
        let made = options.log_dir.is_none().then(crate::share::own_directory);
        let log_dir = options.log_dir.or_else(|| made.clone()).unwrap_or_default();
        fs::create_dir_all(&log_dir).map_err(|error| start_error(&log_dir, &error))?;
        let stdout_path = log_dir.join("stdout");
        let log_path = log_dir.join("stub.log");
        let stdout = File::create(&stdout_path).map_err(|error| start_error(&stdout_path, &error))?;
        let log = File::create(&log_path).map_err(|error| start_error(&log_path, &error))?;
        let stop_with = options.stop_with.unwrap_or_else(std::process::id);

        let mut command = Command::new(&path);
        command
            .args(["--host", "127.0.0.1", "--port", "0", "--stop-with", &stop_with.to_string()])
            .args(&options.args)
            .stdin(Stdio::null())
            .stdout(stdout) // a file, not a pipe: nothing need read it once this process is gone
            .stderr(log);
        #[cfg(unix)]
        if options.detach {
            std::os::unix::process::CommandExt::process_group(&mut command, 0);
        }
        let child = command
            .spawn()
            .map_err(|error| Error::Start(format!("svc-stub: could not run '{}': {error}", path.display())))?;
        let mut process = StubProcess { url: String::new(), log_path, child, made };
        match process.ready_url(&stdout_path) {
            Ok(url) => {
                process.url = url;
                Ok(process)
            }
            Err(error) => {
                process.stop();
                Err(error)
            }
        }
    }

    /// The stub's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its log (its stderr).
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// Stops it now (it stops by itself once its `stop_with` process has ended).
    pub fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(directory) = &self.made {
            let _ = fs::remove_dir_all(directory);
        }
    }

    fn ready_url(&mut self, stdout_path: &Path) -> Result<String> {
        let started = Instant::now();
        loop {
            let printed = fs::read_to_string(stdout_path).unwrap_or_default();
            if let Some((line, _)) = printed.split_once('\n') {
                return match line.strip_prefix(READY_PREFIX) {
                    Some(url) => Ok(url.trim().to_owned()),
                    None => Err(Error::Start(format!("svc-stub did not start: it printed {line:?}"))),
                };
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                let printed = fs::read_to_string(stdout_path).unwrap_or_default();
                if let Some(url) = printed.lines().next().and_then(|line| line.strip_prefix(READY_PREFIX)) {
                    return Ok(url.trim().to_owned()); // ready, then gone: the check that follows says so
                }
                let how = status.code().map_or_else(|| "it was killed".to_owned(), |code| format!("exit code {code}"));
                let said = last_line(&self.log_path);
                let said = if said.is_empty() { "it printed nothing".to_owned() } else { said };
                return Err(Error::Start(format!("svc-stub did not start ({how}): {said}")));
            }
            if started.elapsed() > START_TIMEOUT {
                return Err(Error::Start(format!(
                    "svc-stub did not start within {}s: {}",
                    START_TIMEOUT.as_secs(),
                    last_line(&self.log_path)
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn start_error(path: &Path, error: &std::io::Error) -> Error {
    Error::Start(format!("svc-stub: {}: {error}", path.display()))
}

/// `bin` as a path if it names one, else the first of that name on `PATH`.
fn find(bin: &Path) -> Option<PathBuf> {
    if bin.components().count() > 1 || bin.is_absolute() {
        return bin.is_file().then(|| bin.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|directory| directory.join(bin)).find(|candidate| executable(candidate))
}

#[cfg(unix)]
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn executable(path: &Path) -> bool {
    path.is_file() || path.with_extension("exe").is_file()
}

/// The last thing the stub logged: why it gave up, as it said it.
fn last_line(log_path: &Path) -> String {
    let text = fs::read_to_string(log_path).unwrap_or_default();
    text.trim().lines().last().unwrap_or_default().trim().to_owned()
}
