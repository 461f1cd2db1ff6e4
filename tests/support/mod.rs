//! Helpers shared by the integration tests that drive Python or the binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_toolshape");

pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A Python interpreter able to parse the corpus (match statements: 3.10+).
pub fn find_python() -> Option<String> {
    let mut candidates = Vec::new();
    if let Ok(p) = std::env::var("TOOLSHAPE_PYTHON")
        && !p.is_empty()
    {
        candidates.push(p);
    }
    candidates.push("python3".to_string());
    candidates.push("python".to_string());
    for cand in candidates {
        let ok = Command::new(&cand)
            .args(["-c", "import sys; sys.exit(0 if sys.version_info >= (3, 10) else 3)"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if ok {
            return Some(cand);
        }
    }
    None
}

/// The switch that turns every skip into a failure (`.ci/run` sets it):
/// `TOOLSHAPE_NO_SKIP`, or the older `TOOLSHAPE_REQUIRE_PYTHON`.
pub fn skips_forbidden() -> bool {
    ["TOOLSHAPE_NO_SKIP", "TOOLSHAPE_REQUIRE_PYTHON"].iter().any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
}

/// Skips the rest of a test because `why` (something the test needs is
/// missing): a failure when [`skips_forbidden`], otherwise a loud banner
/// written straight to the process's stderr — not through `eprintln!`,
/// which the test harness captures and hides for a passing test — counted
/// per test binary, and recorded in `CARGO_TARGET_TMPDIR/skipped.log` so
/// that a run can be audited afterwards.
pub fn skip(test: &str, why: &str) {
    use std::io::Write;
    use std::sync::atomic::{AtomicUsize, Ordering};
    static SKIPPED: AtomicUsize = AtomicUsize::new(0);
    let msg = format!("SKIPPED: test `{test}` did not run: {why}");
    if skips_forbidden() {
        panic!("{msg} (TOOLSHAPE_NO_SKIP is set: a skip is a failure)");
    }
    let n = SKIPPED.fetch_add(1, Ordering::SeqCst) + 1;
    let bar = "!".repeat(msg.len().clamp(20, 100));
    let banner =
        format!("\n{bar}\n{msg}\n(skip #{n} in this test binary; set TOOLSHAPE_NO_SKIP=1 to make it fail)\n{bar}\n");
    let _ = std::io::stderr().lock().write_all(banner.as_bytes());
    let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("skipped.log");
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(log) {
        let _ = writeln!(f, "{msg}");
    }
}

/// Returns the interpreter, or None after [`skip`] (the caller returns).
pub fn python_or_skip(test: &str) -> Option<String> {
    let found = find_python();
    if found.is_none() {
        skip(test, "python3 (>= 3.10) not found (set TOOLSHAPE_PYTHON to an interpreter to run it)");
    }
    found
}

/// Whether `program` can be run (`program --version` starts); otherwise
/// [`skip`]s `test`.
pub fn tool_or_skip(test: &str, program: &str) -> bool {
    let ok = Command::new(program).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok();
    if !ok {
        skip(test, &format!("`{program}` is not installed"));
    }
    ok
}

pub fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

pub fn run(cmd: &mut Command) -> Output {
    let shown = describe(cmd);
    cmd.output().unwrap_or_else(|e| panic!("cannot run `{shown}`: {e}"))
}

pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... [{} more bytes]", &s[..end], s.len() - end)
}

// ----- running the binary in a temporary folder -------------------------------

/// What one run of the binary gave.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub raw_stdout: Vec<u8>,
}

impl Run {
    pub fn last_line(&self) -> &str {
        self.stdout.lines().last().unwrap_or("")
    }

    pub fn lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }

    pub fn json(&self) -> Vec<Value> {
        let value: Value =
            serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout));
        value.as_array().unwrap_or_else(|| panic!("not a JSON array: {value}")).clone()
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {}\n--- stdout ---\n{}--- stderr ---\n{}", self.code, self.stdout, self.stderr)
    }
}

/// A command running toolshape in `dir`, with colour-related variables
/// cleared so the environment of the test run cannot leak in.
pub fn command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("FORCE_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .stdin(Stdio::null());
    cmd
}

pub fn finish(out: std::process::Output) -> Run {
    Run {
        code: out.status.code().expect("toolshape exited normally, not by a signal"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        raw_stdout: out.stdout,
    }
}

pub fn toolshape(dir: &Path, args: &[&str]) -> Run {
    finish(command(dir, args).output().expect("toolshape runs"))
}

/// Runs the binary, failing the test if it takes longer than `limit`. The
/// output is read while waiting, so a chatty run cannot block on a full pipe.
pub fn toolshape_with_timeout(dir: &Path, args: &[&str], limit: Duration) -> Run {
    finish(output_with_timeout(&mut command(dir, args), limit))
}

/// Runs `cmd` with its output captured, failing the test if it takes longer
/// than `limit`; the pipes are drained while waiting.
pub fn output_with_timeout(cmd: &mut Command, limit: Duration) -> Output {
    let shown = describe(cmd);
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run `{shown}`: {e}"));
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait works") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`{shown}` did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output { status, stdout: stdout.join().expect("reader"), stderr: stderr.join().expect("reader") }
}

pub fn write(root: &Path, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, contents).unwrap();
    path
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

/// Every file under `dir` with its bytes, by path relative to `dir`, sorted.
pub fn snapshot_tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().strip_prefix(dir).unwrap().display().to_string(), std::fs::read(e.path()).unwrap()))
        .collect();
    files.sort();
    files
}

/// Copies the tree at `from` to `to` (which may exist).
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from).into_iter().filter_map(Result::ok) {
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The findings of `check --format json` that a fix in this mode applies:
/// every fixable one with `--unsafe-fixes`, else the safe ones.
pub fn fixable_in_mode(findings: &[Value], unsafe_fixes: bool) -> Vec<&Value> {
    findings.iter().filter(|f| if unsafe_fixes { !f["fixable"].is_null() } else { f["fixable"] == "safe" }).collect()
}
