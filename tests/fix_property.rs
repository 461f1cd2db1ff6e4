//! Property test of `toolshape fix` on generated tool results in random
//! layouts (`tests/reference/gen_corpus.py`, several seeds) and on the fix
//! fixtures, in both modes:
//!
//! * `fix --unsafe-fixes --augment-text=never` and plain `fix` (safe fixes
//!   only, text augmentation on), each on a fresh copy of the tree;
//! * the fixed sources parse with CPython, and walking the original and the
//!   fixed AST together, every dict is unchanged or changed exactly by the
//!   contract's transformation; a dict is changed if and only if the
//!   reference classes it fixable in that mode (SAFE, or UNSAFE too with
//!   `--unsafe-fixes`); an augmented text extends the original with the
//!   json block's values (`tests/reference/fix_semantics.py`, which
//!   classifies independently of toolshape, from the README);
//! * the comments are the same multiset, and every line outside the
//!   changed dicts is byte-identical (CRLF included);
//! * a second `fix` changes nothing, and `check` finds nothing left that the
//!   mode could have fixed.
//!
//! fix_semantics.py's `--self-test` runs first: hand-made wrong fixes (a
//! dropped or duplicated comment, a collapsed line, a deleted or swapped
//! entry, a swapped augmentation value...) must each be caught.
//!
//! Needs `python3`; without it the test says SKIPPED loudly.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

mod support;
use support::{copy_tree, describe, fixable_in_mode, manifest_dir, python_or_skip, run, snapshot_tree, truncate};

// 8 and 4_321 found a spread's lambda moved as safe, a leading spread with
// number keys called unsafe, and a suppression carried away by a moved entry;
// 31 a leading spread whose display holds a spread of constant keys.
const SEEDS: [u64; 6] = [7, 1_234, 99_991, 8, 4_321, 31];
const DICTS_PER_SEED: &str = "1500";

/// The two ways the fixer runs; the last is fix_semantics.py's `--mode`.
const MODES: [(&str, &[&str], &str); 2] =
    [("unsafe", &["fix", "--unsafe-fixes", "--augment-text=never"], "unsafe"), ("default", &["fix"], "default")];

fn toolshape(args: &[&str], dir: &Path) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolshape"));
    // The whole-file parse: keys spelled only through escapes count too.
    let moves_only = support::manifest_dir().join("tests/fixtures/config/moves_only.toml");
    cmd.args(args).args(["--no-ignore", "--no-prefilter", "--config"]).arg(moves_only).arg(dir);
    run(&mut cmd)
}

fn list(report: &Value, key: &str) -> Vec<String> {
    report[key]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap_or("?").to_string()).collect())
        .unwrap_or_default()
}

fn count(report: &Value, key: &str) -> u64 {
    report[key].as_u64().unwrap_or_else(|| panic!("fix_semantics.py report has no number `{key}`: {report:#}"))
}

#[derive(Default)]
struct Totals {
    transformed: u64,
    comments: u64,
    lines: u64,
    augmented: u64,
    suppressed_entries: u64,
    /// Dicts left for manual repair to keep a suppression comment with
    /// the code it silences.
    pinned: u64,
}

/// Fixes a fresh copy of `original` in `mode`, checks it, and returns the
/// problems found (empty when all is well).
#[allow(clippy::too_many_arguments)]
fn check_mode(
    python: &str,
    root: &Path,
    label: &str,
    original: &Path,
    work: &Path,
    mode: &(&str, &[&str], &str),
    min_transformed: u64,
    totals: &mut Totals,
) -> Vec<String> {
    let (name, fix_args, sem_mode) = *mode;
    let started = Instant::now();
    let fixed = work.join(format!("fixed-{name}"));
    copy_tree(original, &fixed);
    let mut problems = Vec::new();
    let first = toolshape(fix_args, &fixed);
    if !matches!(first.status.code(), Some(0 | 1)) {
        return vec![format!(
            "{label} [{name}]: fix failed:\n{}",
            truncate(&String::from_utf8_lossy(&first.stderr), 4000)
        )];
    }

    // Dicts toolshape left for manual repair because every layout would
    // part silenced code from its suppression comment: `rel:line` of each
    // finding in the fixed tree. The reference accepts such a dict only if
    // its own reading finds a silenced entry in it, or a finding (of any
    // dict, or a later write) silenced by a comment on a line a moved entry
    // spans.
    // (`fix` lists what it leaves on stdout.)
    let stdout = String::from_utf8_lossy(&first.stdout).into_owned();
    let prefix = format!("{}/", fixed.display());
    let mut pinned = Vec::new();
    let mut record: Option<String> = None;
    for line in stdout.lines().chain(std::iter::once("")) {
        if line.starts_with(&prefix) || line.is_empty() {
            if let Some(done) = record.take()
                && done.contains("every layout of the fix would move a suppression comment away")
            {
                let rest = &done[prefix.len()..];
                let mut parts = rest.splitn(3, ':');
                let (path, line_no) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
                pinned.push(format!("{path}:{line_no}"));
            }
            record = (!line.is_empty()).then(|| line.to_owned());
        } else if let Some(r) = record.as_mut() {
            r.push('\n');
            r.push_str(line);
        }
    }
    let pinned_file = work.join(format!("pinned-{name}.txt"));
    std::fs::write(&pinned_file, pinned.join("\n")).unwrap();
    totals.pinned += pinned.len() as u64;

    let mut sem_cmd = Command::new(python);
    sem_cmd
        .arg(root.join("tests/reference/fix_semantics.py"))
        .arg(original)
        .arg(&fixed)
        .args(["--mode", sem_mode])
        .arg("--pinned-by-suppression")
        .arg(&pinned_file);
    let out = run(&mut sem_cmd);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("`{}` printed no JSON ({e}):\n{}", describe(&sem_cmd), String::from_utf8_lossy(&out.stderr))
    });
    for (key, what) in [
        ("mismatches", "differs from the reference"),
        ("new_rule_mismatches", "differs from the reference on the \"could hold toolUseId\" rule"),
        ("syntax_errors", "does not parse"),
    ] {
        let found = list(&report, key);
        if !found.is_empty() {
            let shown: Vec<&str> = found.iter().take(40).map(String::as_str).collect();
            problems.push(format!(
                "{label} [{name}]: {} case(s) where the fixed tree {what}:\n  {}{}",
                found.len(),
                shown.join("\n  "),
                if found.len() > shown.len() { "\n  ..." } else { "" }
            ));
        }
    }
    if !out.status.success() && problems.is_empty() {
        problems.push(format!("{label} [{name}]: fix_semantics.py failed:\n{report:#}"));
    }
    let transformed = count(&report, "transformed_dicts");
    if transformed < min_transformed {
        problems.push(format!("{label} [{name}]: only {transformed} dicts were transformed; the test is too weak"));
    }
    if count(&report, "compared") + count(&report, "skipped_unparsable") != count(&report, "files") {
        problems.push(format!("{label} [{name}]: not every file was compared: {report:#}"));
    }
    if sem_mode == "default" && count(&report, "augmented_texts") == 0 {
        problems.push(format!("{label} [{name}]: no augmented text was checked; the test is too weak"));
    }
    totals.transformed += transformed;
    totals.comments += count(&report, "comments_compared");
    totals.lines += count(&report, "lines_compared");
    totals.augmented += count(&report, "augmented_texts");
    totals.suppressed_entries += count(&report, "suppressed_entries");

    let before = snapshot_tree(&fixed);
    let second = toolshape(fix_args, &fixed);
    if !matches!(second.status.code(), Some(0 | 1)) || before != snapshot_tree(&fixed) {
        problems.push(format!("{label} [{name}]: a second fix changed files (or failed)"));
    }

    let check = toolshape(&["check", "--format", "json"], &fixed);
    let findings: Vec<Value> = serde_json::from_slice(&check.stdout).unwrap();
    let left = fixable_in_mode(&findings, sem_mode == "unsafe");
    if !left.is_empty() {
        problems.push(format!(
            "{label} [{name}]: {} finding(s) this mode fixes remain after the fix: {}",
            left.len(),
            truncate(&format!("{left:#?}"), 3000)
        ));
    }
    eprintln!(
        "fix property: {label} [{name}]: {transformed} dicts transformed, {} comments and {} lines compared, \
         {} augmented texts checked ({:.1?})",
        count(&report, "comments_compared"),
        count(&report, "lines_compared"),
        count(&report, "augmented_texts"),
        started.elapsed()
    );
    problems
}

#[test]
fn fixes_match_the_reference_semantics() {
    let Some(python) = python_or_skip("fixes_match_the_reference_semantics") else {
        return;
    };
    let root = manifest_dir();

    // Negative controls first: the checks must catch hand-made wrong fixes.
    let mut self_test = Command::new(&python);
    self_test.arg(root.join("tests/reference/fix_semantics.py")).arg("--self-test");
    let out = run(&mut self_test);
    assert!(
        out.status.success(),
        "`{}`: a wrong fix went unnoticed (or the self-test broke):\n{}\n{}",
        describe(&self_test),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    let mut problems = Vec::new();
    let mut totals = [Totals::default(), Totals::default()];
    for seed in SEEDS {
        let dir = tempfile::Builder::new().prefix("toolshape-prop-").tempdir().unwrap();
        let original = dir.path().join("original");
        let mut gen_cmd = Command::new(&python);
        gen_cmd.arg(root.join("tests/reference/gen_corpus.py")).arg(&original).args([
            "--seed",
            &seed.to_string(),
            "--dicts",
            DICTS_PER_SEED,
        ]);
        let out = run(&mut gen_cmd);
        assert!(out.status.success(), "`{}` failed:\n{}", describe(&gen_cmd), String::from_utf8_lossy(&out.stderr));
        std::fs::remove_file(original.join("manifest.json")).unwrap();
        let label = format!(
            "seed {seed} (reproduce: python3 tests/reference/gen_corpus.py /tmp/o --seed {seed} --dicts {DICTS_PER_SEED})"
        );
        for (mode, total) in MODES.iter().zip(totals.iter_mut()) {
            let min = if mode.2 == "unsafe" { 100 } else { 50 };
            problems.extend(check_mode(&python, &root, &label, &original, dir.path(), mode, min, total));
        }
    }

    // The hand-written fixtures: suppressions, side effects, merges...
    let dir = tempfile::Builder::new().prefix("toolshape-prop-fixtures-").tempdir().unwrap();
    let original = dir.path().join("original");
    copy_tree(&root.join("tests/fixtures/fix"), &original);
    for (mode, total) in MODES.iter().zip(totals.iter_mut()) {
        problems.extend(check_mode(&python, &root, "tests/fixtures/fix", &original, dir.path(), mode, 50, total));
    }

    for ((name, ..), t) in MODES.iter().zip(&totals) {
        eprintln!(
            "fix property [{name}]: {} tool results transformed over {} seeds and the fixtures, {} comments and {} \
             lines outside the fixed dicts compared, {} augmented texts checked, {} entries silenced by suppression comments, {} dicts left \
             to keep a suppression comment with what it silences",
            t.transformed,
            SEEDS.len(),
            t.comments,
            t.lines,
            t.augmented,
            t.suppressed_entries,
            t.pinned
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
