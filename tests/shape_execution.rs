//! Execution test of the fixes that reshape a tool result: TS005 (a tool
//! returns a dict the SDK rewraps) and TS007 (content that is a string or a
//! tuple). The fixed code is run, not only read.
//!
//! For each seed, `tests/reference/gen_shape_exec.py gen` writes tools that
//! return status without content (with and without an evident message,
//! extra keys of every kind, `toolUseId`, on one line or several, with and
//! without trailing commas), content without status (a list, a string),
//! string and tuple contents, and some that the fix must leave (a spread,
//! a content that is not a list display, nothing to say). Then:
//!
//! * `toolshape fix` (safe fixes only) leaves every TS005 display alone;
//! * `toolshape fix --unsafe-fixes` rewrites a fresh copy, a second run
//!   changes nothing, and `check` finds no TS005 or TS007 finding with a fix;
//! * `gen_shape_exec.py run` imports the original and the fixed tools and
//!   calls each with several arguments: a reshaped result is a real tool
//!   result with the same status (or "success" where there was none) and
//!   every original value present; a tool left alone returns what it did.
//!
//! `gen_shape_exec.py --self-test` runs first: wrong reshapes (a lost
//! value, a changed status, an empty content, a block with two keys...)
//! must each be caught. Needs `python3`; without it the test says SKIPPED
//! loudly (a failure under `TOOLSHAPE_NO_SKIP`).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

mod support;
use support::{copy_tree, manifest_dir, python_or_skip, run, snapshot_tree, toolshape, truncate};

const SEEDS: [u64; 3] = [5, 1_201, 90_210];

/// The TS005 and TS007 findings `check` reports in `dir`.
fn shape_findings(dir: &Path) -> Vec<Value> {
    let out = toolshape(dir, &["check", "--format", "json", "."]);
    out.json().into_iter().filter(|f| f["code"] == "TS005" || f["code"] == "TS007").collect()
}

#[test]
fn reshaped_results_keep_their_status_and_every_value() {
    let Some(python) = python_or_skip("reshaped_results_keep_their_status_and_every_value") else { return };
    let script = manifest_dir().join("tests/reference/gen_shape_exec.py");
    let selftest = run(Command::new(&python).arg(&script).arg("--self-test"));
    assert!(selftest.status.success(), "self-test failed: {}", String::from_utf8_lossy(&selftest.stderr));
    let work = tempfile::tempdir().unwrap();
    let (mut reshaped, mut left) = (0, 0);
    for seed in SEEDS {
        let original = work.path().join(format!("orig-{seed}"));
        let generated = run(Command::new(&python).arg(&script).arg("gen").arg(seed.to_string()).arg(&original));
        assert!(generated.status.success(), "gen {seed}: {}", String::from_utf8_lossy(&generated.stderr));
        let before = shape_findings(&original);
        let ts005 = |found: &[Value]| found.iter().filter(|f| f["code"] == "TS005").count();
        assert!(ts005(&before) >= 20, "seed {seed}: too few TS005 findings to test: {}", ts005(&before));

        // Safe fixes never reshape a result the SDK rewraps.
        let safe = work.path().join(format!("safe-{seed}"));
        copy_tree(&original, &safe);
        toolshape(&safe, &["fix", "."]);
        assert_eq!(ts005(&shape_findings(&safe)), ts005(&before), "seed {seed}: a safe fix touched a TS005 display");

        let fixed = work.path().join(format!("fixed-{seed}"));
        copy_tree(&original, &fixed);
        let first = toolshape(&fixed, &["fix", "--unsafe-fixes", "."]);
        assert!(matches!(first.code, 0 | 1), "seed {seed}: fix failed: {first:?}");
        assert!(!first.stderr.to_lowercase().contains("bug"), "seed {seed}: {}", first.stderr);
        let once = snapshot_tree(&fixed);
        toolshape(&fixed, &["fix", "--unsafe-fixes", "."]);
        assert!(snapshot_tree(&fixed) == once, "seed {seed}: a second fix changed files");
        let still: Vec<Value> = shape_findings(&fixed).into_iter().filter(|f| !f["fixable"].is_null()).collect();
        assert!(still.is_empty(), "seed {seed}: fixable findings remain: {still:#?}");

        let out = run(Command::new(&python).arg(&script).arg("run").arg(&original).arg(&fixed));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "seed {seed}: execution failures:\n{}\n{}",
            truncate(&stdout, 20_000),
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap();
        reshaped += report["reshaped_calls"].as_u64().unwrap();
        left += report["left_calls"].as_u64().unwrap();
    }
    assert!(reshaped >= 300 && left >= 20, "too few calls checked: {reshaped} reshaped, {left} left");
    eprintln!("shape execution: {reshaped} calls of reshaped tools and {left} of tools left alone agree");
}
