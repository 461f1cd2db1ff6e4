//! Every input the fuzzers (`tests/fuzz/`, see its targets) ever broke,
//! kept in `tests/fixtures/fuzz_regressions/` and run through the same
//! invariants (`tests/fuzz/invariants.rs`):
//!
//! * `check` agrees between the candidate and whole-file scopes (when the
//!   text holds `status` and `content` and parses without error);
//! * `fix` (unsafe fixes, text augmented where safe, line length 88) never
//!   panics, adds no syntax error, is idempotent and leaves nothing fixable.
//!
//! `NAME.py` is source text; `NAME.bin` is raw bytes decoded like a file
//! (inputs that are not text are skipped, as the fuzzer skips them). A file
//! whose stem ends in `.known` (`NAME.known.py`) is a failure reported but
//! not yet fixed: the test prints it and passes, and fails once it is fixed
//! so that the `.known` can be dropped.

use std::path::PathBuf;

#[path = "fuzz/invariants.rs"]
mod invariants;

fn regressions() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz_regressions");
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{} cannot be read ({e}): the fuzz regressions would not run", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("py" | "bin")))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no .py or .bin input: the test would check nothing", dir.display());
    files
}

fn outcome(path: &PathBuf) -> Result<(), String> {
    let bytes = std::fs::read(path).unwrap();
    let Ok(text) = toolshape::source::text_of(&bytes) else { return Ok(()) };
    let text: &str = &text;
    std::panic::catch_unwind(|| invariants::check_text(text)).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(format!("panicked: {message}"))
    })
}

#[test]
fn fuzz_regressions_keep_every_invariant() {
    let files = regressions();
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let known = path.file_stem().unwrap().to_string_lossy().ends_with(".known");
        match (outcome(path), known) {
            (Ok(()), false) => {}
            (Err(why), true) => eprintln!("KNOWN FAILURE (not fixed yet) {name}: {}", why.lines().next().unwrap_or("")),
            (Ok(()), true) => failures.push(format!("{name}: passes now; drop `.known` from its name")),
            (Err(why), false) => failures.push(format!("{name}: {why}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fuzz regressions fail:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

/// The checker of the moved-entries invariant fails on hand-made wrong
/// fixes: an entry deleted, one invented, a value changed; and passes the
/// right one.
#[test]
fn the_moved_entries_invariant_catches_a_wrong_fix() {
    use toolshape::check::{CheckOptions, check_source};
    use toolshape::contract::Rules;
    let original = "r = {'status': 'success', 'content': [{'text': 't'}], 'frames': 5, **extra}\n";
    let findings =
        check_source(original, &CheckOptions::new(toolshape::syntax::ParseScope::WholeFile), &Rules::CONTRACT);
    assert_eq!(findings.len(), 2);
    let right = "r = {'status': 'success', 'content': [{'text': 't'}, {'json': {'frames': 5, **extra}}]}\n";
    assert_eq!(invariants::moved_entries_reappear(original, &findings, right), Ok(()));
    for wrong in [
        "r = {'status': 'success', 'content': [{'text': 't'}]}\n",
        "r = {'status': 'success', 'content': [{'text': 't'}, {'json': {'frames': 5}}]}\n",
        "r = {'status': 'success', 'content': [{'text': 't'}, {'json': {'frames': 6, **extra}}]}\n",
        "r = {'status': 'success', 'content': [{'text': 't'}, {'json': {'frames': 5, 'n': 1, **extra}}]}\n",
    ] {
        assert!(invariants::moved_entries_reappear(original, &findings, wrong).is_err(), "not caught: {wrong}");
    }
}

/// The fixer's snapshot fixtures (`tests/fixtures/fix/`) keep the same
/// invariants: a second, hand-written corpus for them.
#[test]
fn fix_fixtures_keep_every_invariant() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fix");
    let mut failures = Vec::new();
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if let Err(why) = outcome(&path) {
            failures.push(format!("{}: {why}", path.display()));
        }
        checked += 1;
    }
    assert!(checked > 100, "only {checked} fixtures");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
