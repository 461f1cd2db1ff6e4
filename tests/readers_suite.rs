//! A fix must never turn a green test suite red: the readers fixture
//! (`tests/fixtures/readers/`, a device-tool package whose pytest suite
//! reads every key a fix would move, in every form) is copied, its suite
//! runs green, `toolshape fix` runs, and the suite runs green again; a
//! second fix changes nothing. Every fix there is left unsafe, each naming
//! the reads that keep it so (rewriting reads is not built yet, so
//! `--unsafe-fixes` is not run here).
//!
//! Needs Python with pytest (installed by `.ci/run`); without it the test
//! says SKIPPED loudly (and fails under `TOOLSHAPE_NO_SKIP`).

use std::path::Path;
use std::process::Command;

mod support;
use support::{copy_tree, describe, manifest_dir, python_or_skip, run, skip, snapshot_tree, toolshape, truncate};

/// Runs the fixture's pytest suite in `dir`, failing the test if it is red.
fn suite_passes(python: &str, dir: &Path, when: &str) {
    let mut pytest = Command::new(python);
    pytest.current_dir(dir).env("PYTHONDONTWRITEBYTECODE", "1").args(["-m", "pytest", "-q", "-p", "no:cacheprovider"]);
    let out = run(&mut pytest);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("30 passed"),
        "{when}: `{}` is not green:\n{}\n{}",
        describe(&pytest),
        truncate(&stdout, 6000),
        truncate(&String::from_utf8_lossy(&out.stderr), 2000)
    );
}

#[test]
fn fixing_the_readers_fixture_keeps_its_suite_green() {
    let Some(python) = python_or_skip("fixing_the_readers_fixture_keeps_its_suite_green") else { return };
    let has_pytest = Command::new(&python).args(["-c", "import pytest"]).output().is_ok_and(|o| o.status.success());
    if !has_pytest {
        skip("fixing_the_readers_fixture_keeps_its_suite_green", "pytest is not installed (pip install pytest)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&manifest_dir().join("tests/fixtures/readers"), dir.path());
    suite_passes(&python, dir.path(), "before the fix");

    let check = toolshape(dir.path(), &["check", "--format", "json", "."]);
    let findings = check.json();
    assert_eq!(findings.len(), 23, "{check:?}");
    let read: Vec<_> = findings.iter().filter(|f| !f["reads"].as_array().unwrap().is_empty()).collect();
    assert!(read.len() >= 20, "only {} findings have reads: {check:?}", read.len());
    for f in &read {
        assert_eq!(f["fixable"], "unsafe", "a fix whose keys are read is not unsafe: {f}");
    }

    // The text output names the first read and counts the others.
    let text = toolshape(dir.path(), &["check", "."]);
    for f in &read {
        let reads = f["reads"].as_array().unwrap();
        let at =
            format!("{}:{}:{}: {}", f["path"].as_str().unwrap(), f["line"], f["column"], f["code"].as_str().unwrap());
        let line =
            text.lines().into_iter().find(|l| l.starts_with(&at)).unwrap_or_else(|| panic!("no line {at}: {text:?}"));
        let first = format!("(read at {}:{}", reads[0]["path"].as_str().unwrap(), reads[0]["line"]);
        let more = if reads.len() > 1 { format!(", +{} more)", reads.len() - 1) } else { ")".to_owned() };
        assert!(line.ends_with(&format!("{first}{more}")), "{line}");
    }

    let fixed = toolshape(dir.path(), &["fix", "."]);
    assert!(fixed.stdout.contains(" reads "), "no leftover names the read that keeps it: {fixed:?}");
    suite_passes(&python, dir.path(), "after `toolshape fix`");

    let before = snapshot_tree(dir.path());
    let again = toolshape(dir.path(), &["fix", "."]);
    assert_eq!(before, snapshot_tree(dir.path()), "a second fix changed files: {again:?}");
}
