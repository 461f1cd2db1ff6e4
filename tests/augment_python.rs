//! Text augmentation, checked by CPython: every augmented fixture output
//! compiles (Python 3.11 here enforces the 3.8-3.11 f-string grammar), and
//! evaluating the text before and after with sample bindings shows the
//! original text is a proper prefix of the augmented one
//! (`tests/reference/check_augment.py`). Needs `python3`; SKIPPED loudly
//! without it.

use std::process::Command;

use serde_json::json;
use toolshape::apply::{FixPolicy, fix_text};
use toolshape::contract::Rules;
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
    let mut cases = Vec::new();
    let mut fixtures: Vec<_> =
        std::fs::read_dir(root.join("tests/fixtures/fix")).unwrap().map(|e| e.unwrap().path()).collect();
    fixtures.sort();
    for path in fixtures {
        let source = SourceText::read(&path).unwrap();
        let policy =
            FixPolicy { unsafe_fixes: true, line_length: 88, augment_text: AugmentText::Safe, rules: Rules::CONTRACT };
        let fixed = fix_text(&source.text, &policy);
        for applied in &fixed.applied {
            if let TextAugment::Added { before, after, .. } = &applied.text {
                cases.push(json!({
                    "name": format!("{}:{}", path.file_name().unwrap().to_string_lossy(), applied.line),
                    "original_source": source.text,
                    "fixed_source": fixed.text,
                    "before": before,
                    "after": after,
                }));
            }
        }
    }
    assert!(cases.len() >= 30, "only {} augmented texts among the fixtures; the test would be weak", cases.len());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cases.json");
    std::fs::write(&file, serde_json::to_string(&cases).unwrap()).unwrap();
    let out = run(Command::new(&python).arg(root.join("tests/reference/check_augment.py")).arg(&file));
    assert!(
        out.status.success(),
        "check_augment.py found problems:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{} augmented texts checked by CPython", cases.len());
}
