//! Snapshot tests of the project pass: each folder under
//! `tests/fixtures/projects/` is a small project (a `pyproject.toml` marks its
//! root); its snapshot (in `snapshots/`) shows what `check` reports over the
//! whole project, and what it reports when given one file only, which must
//! be that file's share of the whole (the project is still indexed).

use std::path::Path;

mod support;
use support::{manifest_dir, toolshape};

fn python_files(dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "py"))
        .map(|e| e.path().strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/"))
        .collect();
    files.sort();
    files
}

#[test]
fn project_snapshots() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    let root = manifest_dir().join("tests/fixtures/projects");
    let mut projects: Vec<_> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    projects.sort();
    assert!(!projects.is_empty(), "no fixture projects in {}", root.display());
    for project in projects {
        let name = project.file_name().unwrap().to_string_lossy().into_owned();
        let whole = toolshape(&project, &["check", "--color", "never", "."]);
        assert_eq!(whole.code, 1, "{whole:?}");
        // Each file alone gives exactly its lines of the whole run.
        for file in python_files(&project) {
            let alone = toolshape(&project, &["check", "--color", "never", "-q", &file]);
            let mine: Vec<&str> = whole.stdout.lines().filter(|l| l.starts_with(&format!("./{file}:"))).collect();
            // Paths are printed as given: `.` gives `./` before each, the
            // reads' paths too.
            let theirs: Vec<String> =
                alone.stdout.lines().map(|l| format!("./{}", l.replace("(read at ", "(read at ./"))).collect();
            assert_eq!(theirs, mine, "{file} checked alone");
        }
        let json = toolshape(&project, &["check", "--format", "json", "."]);
        let builders: Vec<String> = json
            .json()
            .iter()
            .filter(|f| f["code"] == "TS003")
            .map(|f| {
                format!(
                    "{}:{} {} -> {} at {}:{}:{}",
                    f["path"].as_str().unwrap(),
                    f["line"],
                    f["key"].as_str().map_or_else(|| format!("{}", f["expression"]), str::to_owned),
                    f["builder"]["name"].as_str().unwrap(),
                    f["builder"]["path"].as_str().unwrap(),
                    f["builder"]["line"],
                    f["builder"]["column"],
                )
            })
            .collect();
        // What `fix` would do: builders are fixed in their own files, and
        // the calls they repair are not reported; given one file, the calls
        // of builders defined elsewhere are left, saying where the fix is.
        let fix = |args: &[&str]| {
            let out = toolshape(&project, &[&["fix", "--diff", "--color", "never"], args].concat());
            format!("{}{}", out.stdout, out.stderr)
        };
        let mut report = format!(
            "== check ==\n{}\n== builders ==\n{}\n\n== fix --diff ==\n{}\n== fix --diff --unsafe-fixes ==\n{}",
            whole.stdout,
            builders.join("\n"),
            fix(&["."]),
            fix(&["--unsafe-fixes", "."]),
        );
        for file in python_files(&project).iter().filter(|f| !f.contains("__init__") && !f.starts_with("strands/")) {
            report.push_str(&format!("\n== fix --diff {file} ==\n{}", fix(&[file])));
        }
        settings.bind(|| insta::assert_snapshot!(format!("project_{name}"), report));
    }
}
