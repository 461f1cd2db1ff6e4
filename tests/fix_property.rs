//! Property test of `toolshape fix` on generated tool results in random
//! layouts (`tests/reference/gen_corpus.py`, several seeds):
//!
//! * the fixed sources parse with CPython, and their AST equals the AST of
//!   the original transformed by the contract's rule
//!   (`tests/reference/fix_semantics.py`): the moved values are the same
//!   expressions, in the same order, and nothing else changed;
//! * a second `fix` changes nothing;
//! * `check` finds nothing fixable left.
//!
//! Needs `python3`; without it the test says SKIPPED loudly.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

mod support;
use support::{describe, manifest_dir, python_or_skip, run, truncate};

const SEEDS: [u64; 3] = [7, 1_234, 99_991];
const DICTS_PER_SEED: &str = "1500";

fn toolshape(args: &[&str], dir: &Path) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolshape"));
    cmd.args(args).arg(dir);
    run(&mut cmd)
}

fn snapshot_tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().display().to_string(), std::fs::read(e.path()).unwrap()))
        .collect();
    files.sort();
    files
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from).into_iter().filter_map(Result::ok) {
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn fixes_match_the_reference_semantics() {
    let Some(python) = python_or_skip("fixes_match_the_reference_semantics") else {
        return;
    };
    let root = manifest_dir();
    let mut transformed_total = 0;
    for seed in SEEDS {
        let dir = tempfile::Builder::new().prefix("toolshape-prop-").tempdir().unwrap();
        let original = dir.path().join("original");
        let fixed = dir.path().join("fixed");
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
        copy_tree(&original, &fixed);

        // The whole-file parse: keys spelled only through escapes count too.
        let first =
            toolshape(&["fix", "--unsafe-fixes", "--augment-text=never", "--no-ignore", "--no-prefilter"], &fixed);
        assert!(
            matches!(first.status.code(), Some(0 | 1)),
            "fix failed (seed {seed}):\n{}",
            truncate(&String::from_utf8_lossy(&first.stderr), 4000)
        );

        let mut sem_cmd = Command::new(&python);
        sem_cmd.arg(root.join("tests/reference/fix_semantics.py")).arg(&original).arg(&fixed);
        let out = run(&mut sem_cmd);
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("fix_semantics.py printed no JSON ({e}):\n{}", String::from_utf8_lossy(&out.stderr))
        });
        assert!(
            out.status.success(),
            "seed {seed}: the fixed tree differs from the reference transformation:\n{report:#}\n\
             (reproduce: python3 tests/reference/gen_corpus.py /tmp/o --seed {seed} --dicts {DICTS_PER_SEED})"
        );
        let transformed = report["transformed_dicts"].as_u64().unwrap();
        assert!(transformed > 100, "seed {seed}: only {transformed} dicts were transformed; the test is too weak");
        assert_eq!(report["compared"], report["files"], "every file must be compared");
        transformed_total += transformed;

        let before = snapshot_tree(&fixed);
        let second =
            toolshape(&["fix", "--unsafe-fixes", "--augment-text=never", "--no-ignore", "--no-prefilter"], &fixed);
        assert!(matches!(second.status.code(), Some(0 | 1)));
        assert!(before == snapshot_tree(&fixed), "seed {seed}: a second fix changed files");

        let check = toolshape(&["check", "--format", "json", "--no-ignore", "--no-prefilter"], &fixed);
        let findings: Vec<Value> = serde_json::from_slice(&check.stdout).unwrap();
        let fixable: Vec<&Value> = findings.iter().filter(|f| !f["fixable"].is_null()).collect();
        assert!(fixable.is_empty(), "seed {seed}: fixable findings remain after fix --unsafe-fixes: {fixable:#?}");
    }
    eprintln!(
        "fix property: {transformed_total} tool results transformed over {} seeds, all equal to the reference",
        SEEDS.len()
    );
}
