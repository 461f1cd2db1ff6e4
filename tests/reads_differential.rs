//! Differential test of the read finder (`docs/rules.md`, "Reads of moved
//! keys"): the `reads` of every finding of `toolshape check --format json`
//! against `tests/reference/scan.py --reads` (stdlib `ast`, written
//! independently of the Rust code), on the readers fixture project and on
//! generated producer/consumer programs (`gen_programs.py --with-readers`,
//! whose `--verify` holds scan.py to the generator's manifest and keeps
//! its output for this comparison). The reference's own self-test
//! (`reads_selftest.py`) runs first.
//!
//! Needs Python >= 3.10; without it the test says SKIPPED loudly (and fails
//! under `TOOLSHAPE_NO_SKIP`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

mod support;
use support::{describe, manifest_dir, python_or_skip, run, truncate};

/// Seed and size of the generated programs.
const SEED: u64 = 20_261_201;
const PROGRAMS: u64 = 400;

/// One read: (path, line, column, end line, end column, form, key, possible).
type Read = (String, u64, u64, u64, u64, String, Option<String>, bool);
/// A finding: (path, line, column, code, key).
type FindingId = (String, u64, u64, String, Option<String>);

fn norm(path: &str) -> String {
    path.trim_start_matches("./").replace('\\', "/")
}

/// The findings of a JSON array (toolshape's or scan.py's) with their reads.
fn reads_of(what: &str, json: &[u8]) -> BTreeMap<FindingId, Vec<Read>> {
    let items: Value = serde_json::from_slice(json).unwrap_or_else(|e| panic!("{what}: not JSON ({e})"));
    let items = items.as_array().unwrap_or_else(|| panic!("{what}: not a JSON array"));
    let num = |v: &Value| v.as_u64().unwrap_or_else(|| panic!("{what}: not a number: {v}"));
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let mut out = BTreeMap::new();
    for f in items {
        let id = (
            norm(f["path"].as_str().unwrap()),
            num(&f["line"]),
            num(&f["column"]),
            text(&f["code"]).unwrap(),
            text(&f["key"]),
        );
        let mut reads: Vec<Read> = f["reads"]
            .as_array()
            .unwrap_or_else(|| panic!("{what}: a finding without `reads`: {f}"))
            .iter()
            .map(|r| {
                assert!(r["rewritable"].is_boolean(), "{what}: {r}");
                (
                    norm(r["path"].as_str().unwrap()),
                    num(&r["line"]),
                    num(&r["column"]),
                    num(&r["end_line"]),
                    num(&r["end_column"]),
                    text(&r["form"]).unwrap(),
                    text(&r["key"]),
                    r["possible"].as_bool().unwrap_or_else(|| panic!("{what}: `possible` not a boolean: {r}")),
                )
            })
            .collect();
        let sorted = {
            let mut s = reads.clone();
            s.sort();
            s
        };
        assert_eq!(reads, sorted, "{what}: the reads of {id:?} are not sorted");
        reads.sort();
        assert!(out.insert(id.clone(), reads).is_none(), "{what}: {id:?} twice");
    }
    out
}

/// The standard output of a scan that exits 0 (clean) or 1 (findings).
fn findings_json(cmd: &mut Command) -> Vec<u8> {
    let out = run(cmd);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "`{}` failed:\n{}",
        describe(cmd),
        truncate(&String::from_utf8_lossy(&out.stderr), 3000)
    );
    out.stdout
}

/// `toolshape check --format json --no-ignore target`, run in `cwd`.
fn toolshape_json(cwd: &Path, target: &str) -> Vec<u8> {
    let mut ours = Command::new(env!("CARGO_BIN_EXE_toolshape"));
    ours.current_dir(cwd).args(["check", "--format", "json", "--no-ignore", target]);
    findings_json(&mut ours)
}

/// Compares toolshape's reads with the reference's on `dir`; returns the
/// number of (finding, read) links and the forms seen.
fn compare(python: &str, dir: &Path) -> (usize, BTreeSet<String>) {
    let mut reference = Command::new(python);
    reference
        .current_dir(dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .arg(manifest_dir().join("tests/reference/scan.py"))
        .args(["--reads", "."]);
    compare_outputs(&dir.display().to_string(), &toolshape_json(dir, "."), &findings_json(&mut reference))
}

/// Compares the reads of toolshape's findings (`ours`) with scan.py's
/// (`theirs`), both JSON arrays; returns what [`compare`] does.
fn compare_outputs(label: &str, ours: &[u8], theirs: &[u8]) -> (usize, BTreeSet<String>) {
    let ours = reads_of("toolshape", ours);
    let theirs = reads_of("scan.py --reads", theirs);
    let mut report = Vec::new();
    for id in ours.keys().chain(theirs.keys()).collect::<BTreeSet<_>>() {
        if ours.get(id) != theirs.get(id) {
            report.push(format!("{id:?}\n  toolshape: {:?}\n  reference: {:?}", ours.get(id), theirs.get(id)));
        }
    }
    assert!(
        report.is_empty(),
        "{label}: {} findings whose reads differ; the first:\n{}",
        report.len(),
        report.iter().take(10).cloned().collect::<Vec<_>>().join("\n")
    );
    let links = ours.values().map(Vec::len).sum();
    let forms = ours.values().flatten().map(|r| r.5.clone()).collect();
    (links, forms)
}

const FORMS: [&str; 12] =
    ["subscript", "store", "delete", "get", "pop", "setdefault", "in", "not-in", "whole", "content", "block", "escape"];

/// The forms of `FORMS` but those in `without`.
fn forms_but(without: &[&str]) -> std::collections::BTreeSet<String> {
    FORMS.iter().filter(|f| !without.contains(f)).map(|f| f.to_string()).collect()
}

#[test]
fn reads_match_the_reference_on_the_readers_fixture() {
    let Some(python) = python_or_skip("reads_match_the_reference_on_the_readers_fixture") else { return };
    let (links, forms) = compare(&python, &manifest_dir().join("tests/fixtures/readers"));
    // The fixture reads every moved key, in every keyed form, and its
    // content by block only (its README says why); no producer of it is
    // used as a value.
    assert!(links >= 70, "only {links} reads found in the readers fixture");
    assert_eq!(forms, forms_but(&["content", "escape"]), "forms found in the readers fixture");
}

#[test]
fn reads_match_the_reference_on_generated_programs() {
    let Some(python) = python_or_skip("reads_match_the_reference_on_generated_programs") else { return };
    let root = manifest_dir();
    let mut selftest = Command::new(&python);
    selftest.env("PYTHONDONTWRITEBYTECODE", "1").arg(root.join("tests/reference/reads_selftest.py"));
    let out = run(&mut selftest);
    assert!(
        out.status.success(),
        "`{}`: the reference's read finder fails its own self-test:\n{}\n{}",
        describe(&selftest),
        truncate(&String::from_utf8_lossy(&out.stdout), 3000),
        truncate(&String::from_utf8_lossy(&out.stderr), 3000)
    );
    // The generator's --verify runs scan.py --reads over the corpus (and
    // holds it to the manifest): its output, kept, is the reference here.
    // Both tools are given the corpus as `programs`, from its parent.
    let dir = tempfile::Builder::new().prefix("toolshape-readers-").tempdir().unwrap();
    let mut generate = Command::new(&python);
    generate
        .current_dir(dir.path())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .arg(root.join("tests/reference/gen_programs.py"))
        .arg("programs")
        .args(["--seed", &SEED.to_string(), "--programs", &PROGRAMS.to_string()])
        .args(["--with-readers", "--verify", "--scan-output", "scan.json"]);
    let out = run(&mut generate);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.contains("verify: OK"),
        "`{}` (the manifest against scan.py --reads) failed:\n{}",
        describe(&generate),
        truncate(&stderr, 4000)
    );
    let theirs = std::fs::read(dir.path().join("scan.json")).expect("read scan.json, kept by the generator");
    let ours = toolshape_json(dir.path(), "programs");
    let (links, forms) = compare_outputs("generated programs", &ours, &theirs);
    assert!(links as u64 >= 4 * PROGRAMS, "only {links} reads in {PROGRAMS} generated programs");
    assert_eq!(forms, forms_but(&[]), "forms found in the generated programs");
}
