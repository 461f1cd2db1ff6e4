//! Execution test of the read rewrites: every read of a moved key that
//! `toolshape check` marks `rewritable` must yield, after `toolshape fix
//! --unsafe-fixes`, exactly what it yielded before (the same value, or the
//! same exception type), on every execution.
//!
//! `tests/reference/read_exec.py` generates runnable programs
//! (`gen_read_exec.py`: producers of every shape of docs/rules.md "Rewriting
//! reads" — displays with extra keys, result names with later writes,
//! builders, chains, dispatchers by a constant, `@tool` functions called
//! through a stub agent, results that are sometimes clean or fall off the
//! end — and consumers reading moved keys in every form, each read logging
//! its outcome), runs each program, asks `check --format json` (with a
//! configuration saying `unsafe-fixes = true`, so that `rewritable` is the one
//! of `fix --unsafe-fixes`) which reads are rewritable, fixes a copy with
//! `fix --unsafe-fixes`, checks that every changed file compiles and that a
//! second fix changes nothing, runs the copy, and compares the outcomes of
//! every read marked rewritable (and of every read the fix rewrote). A
//! negative control runs first: with `--sabotage` (every rewritten read
//! pointed at the first content block after the fix) the driver must fail.
//!
//! Needs `python3`; without it the test says SKIPPED loudly (a failure under
//! `TOOLSHAPE_NO_SKIP`).

use std::process::Command;
use std::time::{Duration, Instant};

mod support;
use support::{BIN, describe, manifest_dir, output_with_timeout, python_or_skip, truncate};

const SEED: u64 = 4_242;
/// How many programs (`TOOLSHAPE_READ_EXEC_PROGRAMS` overrides it).
const PROGRAMS: u64 = 60;
/// Fewer rewritable reads compared than this per program and the test is too
/// weak (about 150 a program are).
const MIN_REWRITABLE_PER_PROGRAM: u64 = 20;

#[test]
fn rewritten_reads_yield_what_they_yielded_before() {
    let Some(python) = python_or_skip("rewritten_reads_yield_what_they_yielded_before") else {
        return;
    };
    let started = Instant::now();
    let programs: u64 =
        std::env::var("TOOLSHAPE_READ_EXEC_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(PROGRAMS);
    let dir = tempfile::Builder::new().prefix("toolshape-read-exec-").tempdir().unwrap();
    let script = manifest_dir().join("tests/reference/read_exec.py");

    // Negative control first: rewritten reads pointed at the wrong block
    // after the fix (`--sabotage`) must be caught.
    let mut control = Command::new(&python);
    control
        .arg(&script)
        .args(["--toolshape", BIN, "--seed", "7", "--programs", "8", "--sabotage", "--max-shown", "1"])
        .arg("--out")
        .arg(dir.path().join("control"))
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let shown = describe(&control);
    let out = output_with_timeout(&mut control, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.code() == Some(1) && stdout.contains("MISMATCHES"),
        "`{shown}`: reads sabotaged after the fix went unnoticed (exit {:?}):\n{}\n{}",
        out.status.code(),
        truncate(&stdout, 6_000),
        truncate(&String::from_utf8_lossy(&out.stderr), 4_000)
    );
    let mut cmd = Command::new(&python);
    cmd.arg(&script)
        .args(["--toolshape", BIN])
        .args(["--seed", &SEED.to_string()])
        .args(["--programs", &programs.to_string()])
        .args(["--min-rewritable", &(programs * MIN_REWRITABLE_PER_PROGRAM).to_string()])
        .args(["--max-shown", "25"])
        .arg("--out")
        .arg(dir.path().join("run"))
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let shown = describe(&cmd);
    let out = output_with_timeout(&mut cmd, Duration::from_secs(300));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary = stdout.lines().rev().find(|l| l.starts_with("read execution:")).unwrap_or("(no summary line)");
    eprintln!("{summary}");
    eprintln!("read execution: {:.1?} in all", started.elapsed());
    assert!(
        out.status.success(),
        "`{shown}` failed (exit {:?}): a read marked rewritable yields something else after \
         `toolshape fix --unsafe-fixes` (or the fix broke a program)\n{summary}\n{}\n--- stderr ---\n{}\n\
         reproduce: python3 tests/reference/read_exec.py --toolshape {} --seed {SEED} \
         --programs {programs} --out /tmp/read-exec",
        out.status.code(),
        truncate(&stdout, 60_000),
        truncate(&stderr, 4_000),
        env!("CARGO_BIN_EXE_toolshape")
    );
}
