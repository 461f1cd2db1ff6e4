//! Every crate `Cargo.toml` declares is used by the code: a dependency in
//! `src/`, a dev-dependency in `tests/` or `benches/` (or `src/`'s unit
//! tests). A crate that nothing names is dead weight for every user who
//! builds toolshape, and a name the user asked for that no code uses is a
//! promise not kept.

use std::path::Path;

mod support;
use support::manifest_dir;

/// The text of every `.rs` file under `dir`.
fn rust_sources(dir: &Path) -> String {
    let mut out = String::new();
    for entry in walkdir::WalkDir::new(dir).into_iter().filter_map(Result::ok) {
        // The fuzz crate has its own manifest and dependencies.
        if entry.path().components().any(|c| c.as_os_str() == "fuzz") {
            continue;
        }
        if entry.path().extension().is_some_and(|e| e == "rs") {
            out.push_str(&std::fs::read_to_string(entry.path()).unwrap());
            out.push('\n');
        }
    }
    out
}

/// Whether `code` names the crate `name` (as Rust spells it) in a path.
fn names(code: &str, name: &str) -> bool {
    let ident = name.replace('-', "_");
    code.match_indices(&ident).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = &code[at + ident.len()..];
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_') && (after.starts_with("::") || after.starts_with(';'))
    })
}

fn declared(table: &str) -> Vec<String> {
    let manifest: toml::Table = std::fs::read_to_string(manifest_dir().join("Cargo.toml")).unwrap().parse().unwrap();
    manifest.get(table).and_then(|t| t.as_table()).map(|t| t.keys().cloned().collect()).unwrap_or_default()
}

#[test]
fn every_declared_crate_is_used() {
    let src = rust_sources(&manifest_dir().join("src"));
    let tests = rust_sources(&manifest_dir().join("tests")) + &rust_sources(&manifest_dir().join("benches"));
    let deps = declared("dependencies");
    assert!(deps.len() >= 10, "Cargo.toml's [dependencies] not read: {deps:?}");
    let unused: Vec<&String> = deps.iter().filter(|d| !names(&src, d)).collect();
    assert!(unused.is_empty(), "[dependencies] that src/ never names: {unused:?}");
    let dev = declared("dev-dependencies");
    let unused: Vec<&String> = dev.iter().filter(|d| !names(&tests, d) && !names(&src, d)).collect();
    assert!(unused.is_empty(), "[dev-dependencies] that no test names: {unused:?}");
}

#[test]
fn the_check_sees_a_crate_that_is_not_named() {
    let code = "use memchr::memchr;\nlet x = my_memchr2::find();\nlet y = ignore_this;\n";
    assert!(names(code, "memchr"));
    assert!(!names(code, "memchr2"));
    assert!(!names(code, "ignore"));
    assert!(names("extern crate tree_sitter_python;", "tree-sitter-python"));
}
