//! Helpers shared by the integration tests that drive Python or the binary.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

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

/// Returns the interpreter, or None after a loud warning (the caller returns).
pub fn python_or_skip(test: &str) -> Option<String> {
    match find_python() {
        Some(p) => Some(p),
        None => {
            let msg = format!(
                "SKIPPED: python3 (>= 3.10) not found, test `{test}` did not run \
                 (set TOOLSHAPE_PYTHON to an interpreter to run it)"
            );
            if std::env::var_os("TOOLSHAPE_REQUIRE_PYTHON").is_some() {
                panic!("{msg}; TOOLSHAPE_REQUIRE_PYTHON is set");
            }
            eprintln!();
            eprintln!("{}", "!".repeat(msg.len().min(100)));
            eprintln!("{msg}");
            eprintln!("{}", "!".repeat(msg.len().min(100)));
            eprintln!();
            None
        }
    }
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
