//! Text augmentation, checked by CPython (`tests/reference/check_augment.py`):
//! every augmented fixture output compiles (Python 3.11 here enforces the
//! 3.8-3.11 f-string grammar), and the texts, read from the original and the
//! fixed source themselves (not from the fixer's own before/after strings),
//! evaluated with a distinct value for every free name, show the augmented
//! text is the original plus ` (k=v, ...)` with the values the fixed json
//! block holds. The checker's `--self-test` (a swapped value, a value of an
//! overridden duplicate, a deleted moved entry...) runs first. Needs
//! `python3`; SKIPPED loudly without it.

use std::process::Command;

use serde_json::json;
use toolshape::apply::{FixPolicy, fix_text};
use toolshape::contract::Rules;
use toolshape::diagnostics::Code;
use toolshape::fix::{AugmentText, TextAugment};
use toolshape::source::SourceText;

mod support;
use support::{manifest_dir, python_or_skip, run};

#[test]
fn augmented_texts_compile_and_extend_the_original() {
    let Some(python) = python_or_skip("augmented_texts_compile_and_extend_the_original") else {
        return;
    };
    let root = manifest_dir();
    let checker = root.join("tests/reference/check_augment.py");
    let out = run(Command::new(&python).arg(&checker).arg("--self-test"));
    assert!(
        out.status.success(),
        "check_augment.py --self-test: a wrong augmentation went unnoticed (or the self-test broke):\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut cases = Vec::new();
    let mut fixtures: Vec<_> =
        std::fs::read_dir(root.join("tests/fixtures/fix")).unwrap().map(|e| e.unwrap().path()).collect();
    fixtures.sort();
    for path in fixtures {
        let source = SourceText::read(&path).unwrap();
        // The moves only: the checker pairs each augmented dict with its
        // original, and a repair of the result's shape (TS006–TS009: a
        // status, a content tuple) changes constants it compares.
        let moves =
            Rules::new(Some(&[Code::ExtraKey, Code::Spread, Code::BuilderCall, Code::LaterWrite]), &[], Vec::new());
        let policy = FixPolicy::new(moves, true, 88, AugmentText::Safe);
        let fixed = fix_text(&source.text, &policy);
        for applied in &fixed.applied {
            if let TextAugment::Added { .. } = &applied.text {
                cases.push(json!({
                    "name": path.file_name().unwrap().to_string_lossy(),
                    "line": applied.line,
                    "original_source": source.text,
                    "fixed_source": fixed.text,
                }));
            }
        }
    }
    assert!(cases.len() >= 25, "only {} augmented texts among the fixtures; the test would be weak", cases.len());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cases.json");
    std::fs::write(&file, serde_json::to_string(&cases).unwrap()).unwrap();
    let out = run(Command::new(&python).arg(&checker).arg(&file));
    assert!(
        out.status.success(),
        "check_augment.py found problems:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["checked"], cases.len(), "every case must be checked: {report:#}");
    eprintln!("{} augmented texts checked by CPython", cases.len());
}
