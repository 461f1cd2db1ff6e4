//! Snapshots of rewritten reads (`tests/fixtures/read_rewrites/`): each
//! read form and its rewrite, the lookup by position when later writes add
//! blocks, the reads left with their reasons, a read outside the paths
//! given, and the same with a configured `json-accessor`. That the
//! rewritten reads behave as before is shown by running a suite
//! (`tests/readers_suite.rs`); these show the text a reviewer reads.

use std::path::Path;

mod support;
use support::{copy_tree, manifest_dir, toolshape};

/// What `fix` prints with `args`, run in `dir`: the patch, the leftovers
/// and their reasons, and the summary.
fn fix(dir: &Path, args: &[&str]) -> String {
    let out = toolshape(dir, &[&["fix", "--diff", "--color", "never"], args].concat());
    format!("{}{}", out.stdout, out.stderr)
}

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings
}

#[test]
fn reads_rewritten_with_their_fixes() {
    let dir = manifest_dir().join("tests/fixtures/read_rewrites");
    let report = format!(
        "== fix --diff ==\n{}\n== fix --diff --unsafe-fixes ==\n{}\n== fix --diff kit/tools.py tests/test_outside.py ==\n{}\n== fix --diff --unsafe-fixes kit tests/test_reads.py ==\n{}\n== fix --diff --unsafe-fixes --no-rewrite-reads ==\n{}",
        fix(&dir, &["."]),
        fix(&dir, &["--unsafe-fixes", "."]),
        fix(&dir, &["kit/tools.py", "tests/test_outside.py"]),
        fix(&dir, &["--unsafe-fixes", "kit", "tests/test_reads.py"]),
        fix(&dir, &["--unsafe-fixes", "--no-rewrite-reads", "."]),
    );
    settings().bind(|| insta::assert_snapshot!("read_rewrites", report));
}

#[test]
fn reads_through_a_configured_accessor() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&manifest_dir().join("tests/fixtures/read_rewrites"), dir.path());
    std::fs::write(dir.path().join("toolshape.toml"), "json-accessor = \"tests.support:tool_json\"\n").unwrap();
    let report = fix(dir.path(), &["--unsafe-fixes", "."]);
    settings().bind(|| insta::assert_snapshot!("read_rewrites_accessor", report));
}
