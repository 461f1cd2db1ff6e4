//! A fix must never turn a green test suite red: the readers fixture
//! (`tests/fixtures/readers/`, a device-tool package whose pytest suite
//! reads every key a fix would move, in every form) is copied, its suite
//! runs green, `toolshape fix` runs (the safe fixes, with the reads of
//! their keys rewritten), the suite runs green again, then `fix
//! --unsafe-fixes`, and the suite is green once more; nothing fixable is
//! left, and a further fix changes nothing.
//!
//! Needs Python with pytest (installed by `.ci/run`); without it the test
//! says SKIPPED loudly (and fails under `TOOLSHAPE_NO_SKIP`).

use std::path::Path;
use std::process::Command;

mod support;
use support::{copy_tree, describe, manifest_dir, python_or_skip, run, skip, snapshot_tree, toolshape, truncate};

/// Runs the fixture's pytest suite in `dir`, failing the test if it is red;
/// returns how many tests passed.
fn suite_passes(python: &str, dir: &Path, when: &str) -> usize {
    let mut pytest = Command::new(python);
    pytest.current_dir(dir).env("PYTHONDONTWRITEBYTECODE", "1").args(["-m", "pytest", "-q", "-p", "no:cacheprovider"]);
    let out = run(&mut pytest);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let passed = stdout
        .split(|c: char| !c.is_ascii_alphanumeric())
        .collect::<Vec<_>>()
        .windows(2)
        .find(|w| w[1] == "passed")
        .and_then(|w| w[0].parse().ok())
        .unwrap_or(0);
    assert!(
        out.status.success() && passed >= 30 && !stdout.contains("failed"),
        "{when}: `{}` is not green:\n{}\n{}",
        describe(&pytest),
        truncate(&stdout, 6000),
        truncate(&String::from_utf8_lossy(&out.stderr), 2000)
    );
    passed
}

/// `line` without the accessors `["content"][i]["json"]` that rewritten
/// reads gain (`i` an integer); panics if there is none.
fn without_accessors(line: &str) -> String {
    let (mut out, mut rest, mut found) = (String::new(), line, false);
    while let Some(at) = rest.find("[\"content\"][") {
        let after = &rest[at + "[\"content\"][".len()..];
        let digits = after.trim_start_matches('-').chars().take_while(char::is_ascii_digit).count();
        let sign = usize::from(after.starts_with('-'));
        let tail = &after[sign + digits..];
        assert!(digits > 0 && tail.starts_with("][\"json\"]"), "not an accessor in {line:?}");
        out.push_str(&rest[..at]);
        rest = &tail["][\"json\"]".len()..];
        found = true;
    }
    assert!(found, "no accessor in {line:?}");
    out + rest
}

/// The lines of the files under `dir/tests` that differ from `before`.
fn changed_test_lines(before: &[(String, Vec<u8>)], dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (path, now) in snapshot_tree(dir) {
        let Some((_, was)) = before.iter().find(|(p, _)| *p == path) else { continue };
        if !path.starts_with("tests") || *was == now {
            continue;
        }
        let (was, now) = (String::from_utf8_lossy(was), String::from_utf8_lossy(&now));
        for (a, b) in was.lines().zip(now.lines()) {
            if a != b {
                out.push((a.to_owned(), b.to_owned()));
            }
        }
    }
    out
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
    let tests = suite_passes(&python, dir.path(), "before the fix");

    let check = toolshape(dir.path(), &["check", "--format", "json", "."]);
    let findings = check.json();
    assert_eq!(findings.len(), 23, "{check:?}");
    let read: Vec<_> = findings.iter().filter(|f| !f["reads"].as_array().unwrap().is_empty()).collect();
    assert!(read.len() >= 20, "only {} findings have reads: {check:?}", read.len());
    // A fix with a read that is not rewritten (a use of the whole result,
    // of its content list) is unsafe; the others keep their verdict.
    let left = |f: &serde_json::Value| {
        f["reads"].as_array().unwrap().iter().any(|r| r["rewritable"] == false && r["form"] != "block")
    };
    for f in read.iter().filter(|f| left(f)) {
        assert_eq!(f["fixable"], "unsafe", "a fix with a read left is not unsafe: {f}");
    }
    let safe = read.iter().filter(|f| !left(f) && f["fixable"] == "safe").count();
    assert!(safe >= 5, "only {safe} fixes whose reads are all rewritten are safe: {check:?}");

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

    // The safe fixes, with their reads rewritten.
    let original = snapshot_tree(dir.path());
    let fixed = toolshape(dir.path(), &["fix", "."]);
    assert!(fixed.stdout.contains("rewrote "), "no read was rewritten: {fixed:?}");
    assert!(fixed.stdout.contains(" reads json.dumps("), "no leftover names the read that keeps it: {fixed:?}");
    assert_eq!(suite_passes(&python, dir.path(), "after `toolshape fix`"), tests);
    let rewritten = changed_test_lines(&original, dir.path());
    assert!(rewritten.len() >= 20, "only {} lines of the tests were rewritten: {rewritten:?}", rewritten.len());
    for (was, now) in &rewritten {
        // Each read gains the accessor of its key's json block, nothing else.
        assert_eq!(&without_accessors(now), was, "{was:?} -> {now:?}");
    }

    // The unsafe ones too: the reads they move keys from are rewritten
    // with them, and the suite stays green.
    let all = toolshape(dir.path(), &["fix", "--unsafe-fixes", "."]);
    assert!(all.stdout.contains("rewrote "), "{all:?}");
    assert_eq!(suite_passes(&python, dir.path(), "after `toolshape fix --unsafe-fixes`"), tests);
    let clean = toolshape(dir.path(), &["check", "--format", "json", "."]);
    assert!(clean.json().is_empty(), "fixable findings are left: {clean:?}");

    let before = snapshot_tree(dir.path());
    let again = toolshape(dir.path(), &["fix", "--unsafe-fixes", "."]);
    assert_eq!(before, snapshot_tree(dir.path()), "a further fix changed files: {again:?}");
}
