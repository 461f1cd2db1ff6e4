//! End-to-end tests of how toolshape fits a Python project: configuration
//! files (discovery, every key, `--config`, `--isolated`, strict errors),
//! suppression comments in every form, `--report-unused-ignores`,
//! `check --add-ignores` (the baseline round trip), stdin mode under a
//! project's settings, `--force-exclude`, `--quiet` / `--verbose`, and the
//! progress bar (on a terminal only).
//!
//! Each test builds its project in a temporary folder; expectations come
//! from what the test wrote (which key, which line), not from earlier output.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

mod support;
use support::{Run, command, finish, tempdir, toolshape, write};

/// A tool result with two extra keys and a spread, one entry per line.
const LEGACY: &str = "def tool(stats):\n    return {\n        \"status\": \"success\",\n        \"content\": [{\"text\": \"done\"}],\n        \"frames\": 512,\n        \"trace\": \"abc\",\n        **stats,\n    }\n";

/// The (line, code, key-or-spread) of each finding in text output.
fn findings(run: &Run) -> Vec<(usize, String)> {
    run.stdout
        .lines()
        .filter(|l| l.contains(": TS"))
        .map(|l| {
            let mut parts = l.split(':');
            let _path = parts.next();
            let line: usize = parts.next().unwrap().parse().unwrap();
            let code = l.split_whitespace().nth(1).unwrap().to_owned();
            (line, code)
        })
        .collect()
}

/// The 1-based line of the first line of `src` containing `needle`.
fn line_of(src: &str, needle: &str) -> usize {
    src.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle:?} not in source")) + 1
}

fn with_stdin(dir: &Path, args: &[&str], input: &str) -> Run {
    let mut child = command(dir, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolshape starts");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    finish(child.wait_with_output().unwrap())
}

#[test]
fn nearest_configuration_applies_select_ignore_and_allowed_keys() {
    let dir = tempdir();
    let root = dir.path();
    write(root, "pyproject.toml", "[project]\nname = \"demo\"\n\n[tool.toolshape]\nallowed-keys = [\"trace\"]\n");
    write(root, "app/tool.py", LEGACY);
    write(root, "legacy/toolshape.toml", "ignore = [\"TS002\"]\n");
    write(root, "legacy/tool.py", LEGACY);

    let run = toolshape(root, &["check", "app"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        findings(&run),
        [(line_of(LEGACY, "frames"), "TS001".into()), (line_of(LEGACY, "**stats"), "TS002".into())],
        "`trace` is allowed by pyproject.toml: {run:?}"
    );

    // legacy/ has its own file, which wins whole (no merging): `trace` is an
    // extra key again there, and spreads are not checked.
    let run = toolshape(root, &["check", "legacy/tool.py"]);
    assert_eq!(
        findings(&run),
        [(line_of(LEGACY, "frames"), "TS001".into()), (line_of(LEGACY, "trace"), "TS001".into())],
        "{run:?}"
    );

    // --isolated reads no file; --config uses one file for everything.
    let run = toolshape(root, &["check", "--isolated", "app"]);
    assert_eq!(findings(&run).len(), 3, "{run:?}");
    let run = toolshape(root, &["check", "--config", "legacy/toolshape.toml", "app"]);
    assert_eq!(findings(&run).iter().filter(|(_, c)| c == "TS002").count(), 0, "{run:?}");

    // The same settings reach stdin mode through the name it is given.
    let run = with_stdin(root, &["check", "--stdin-filename", "app/new.py", "-"], LEGACY);
    assert_eq!(findings(&run).len(), 2, "{run:?}");
    let run = with_stdin(root, &["check", "--stdin-filename", "legacy/new.py", "-"], LEGACY);
    assert_eq!(findings(&run).len(), 2, "{run:?}");
    assert!(findings(&run).iter().all(|(_, c)| c == "TS001"), "{run:?}");
}

#[test]
fn select_narrows_and_the_fix_leaves_tolerated_keys_in_place() {
    let dir = tempdir();
    let root = dir.path();
    write(root, "toolshape.toml", "select = [\"TS001\"]\nallowed-keys = [\"trace\"]\naugment-text = \"never\"\n");
    write(root, "tool.py", LEGACY);
    let run = toolshape(root, &["check"]);
    assert_eq!(findings(&run), [(line_of(LEGACY, "frames"), "TS001".into())], "{run:?}");

    let run = toolshape(root, &["fix"]);
    assert_eq!(run.code, 0, "{run:?}");
    let fixed = std::fs::read_to_string(root.join("tool.py")).unwrap();
    assert!(fixed.contains("{\"json\": {\"frames\": 512}}"), "{fixed}");
    assert!(
        fixed.contains("\"trace\": \"abc\",") && fixed.contains("**stats,"),
        "tolerated and unchecked entries stay:\n{fixed}"
    );
    assert!(fixed.contains("{\"text\": \"done\"}"), "augment-text = never keeps the text:\n{fixed}");
    assert_eq!(toolshape(root, &["check"]).code, 0);
}

#[test]
fn unsafe_fixes_and_line_length_come_from_configuration_and_flags_win() {
    // A spread after `content` has an unsafe fix only.
    let src = "r = {\"status\": \"success\", \"content\": [{\"text\": \"hi\"}], **extra}\n";
    let dir = tempdir();
    let root = dir.path();
    write(root, "toolshape.toml", "unsafe-fixes = true\nline-length = 40\n");
    write(root, "a.py", src);

    let run = toolshape(root, &["fix", "--diff", "--no-unsafe-fixes"]);
    assert_eq!(run.stdout, "", "--no-unsafe-fixes beats the configuration: {run:?}");

    let run = toolshape(root, &["fix", "--diff"]);
    assert_eq!(run.code, 1, "{run:?}");
    let added: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with('+') && !l.starts_with("+++")).collect();
    assert!(added.len() > 1, "a 40-column line length explodes the rewrite onto several lines: {run:?}");
    assert!(added.iter().all(|l| l.chars().count() <= 41), "{added:?}");

    // Without a toolshape line length, ruff's (then black's) applies.
    write(root, "toolshape.toml", "unsafe-fixes = true\n");
    write(root, "pyproject.toml", "[tool.black]\nline-length = 200\n");
    let run = toolshape(root, &["fix", "--diff"]);
    let added = run.stdout.lines().filter(|l| l.starts_with('+') && !l.starts_with("+++")).count();
    assert_eq!(added, 1, "{run:?}");
}

#[test]
fn configuration_errors_name_the_file_the_key_and_what_is_allowed() {
    let cases: [(&str, &str, &[&str]); 5] = [
        ("pyproject.toml", "[tool.toolshape]\nselct = [\"TS001\"]\n", &["unknown field `selct`", "`select`", "line 2"]),
        ("toolshape.toml", "select = [\"TS099\"]\n", &["TS099", "TS001, TS002, TS003, TS004, TS005"]),
        ("toolshape.toml", "augment-text = \"always\"\n", &["always", "`safe`", "`never`"]),
        ("toolshape.toml", "line-length = 0\n", &["line-length", "from 1 to 320"]),
        ("toolshape.toml", "unsafe-fixes = \"yes\"\n", &["unsafe-fixes", "bool"]),
    ];
    for (name, text, expected) in cases {
        let dir = tempdir();
        write(dir.path(), name, text);
        write(dir.path(), "pkg/a.py", LEGACY);
        for args in [&["check"][..], &["fix"], &["fix", "--diff"], &["check", "pkg/a.py"]] {
            let run = toolshape(dir.path(), args);
            assert_eq!(run.code, 2, "{args:?} with {name}: {text}\n{run:?}");
            assert_eq!(run.stdout, "", "nothing is checked under a broken configuration: {run:?}");
            assert!(run.stderr.contains(&format!("error: {}", dir.path().join(name).display())), "{run:?}");
            for needle in expected {
                assert!(run.stderr.contains(needle), "{needle:?} missing for {text:?}: {run:?}");
            }
        }
        assert_eq!(std::fs::read_to_string(dir.path().join("pkg/a.py")).unwrap(), LEGACY, "fix wrote nothing");
    }
    // --config must name a usable file; --isolated ignores the broken one.
    let dir = tempdir();
    write(dir.path(), "toolshape.toml", "nope = 1\n");
    write(dir.path(), "pyproject.toml", "[project]\nname = \"x\"\n");
    write(dir.path(), "a.py", LEGACY);
    let run = toolshape(dir.path(), &["check", "--config", "pyproject.toml"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("pyproject.toml: has no [tool.toolshape] table"), "{run:?}");
    let run = toolshape(dir.path(), &["check", "--config", "missing.toml"]);
    assert!(run.code == 2 && run.stderr.contains("missing.toml: cannot read"), "{run:?}");
    assert_eq!(toolshape(dir.path(), &["check", "--isolated"]).code, 1);
}

#[test]
fn exclude_extend_exclude_and_force_exclude() {
    let dir = tempdir();
    let root = dir.path();
    write(root, "pyproject.toml", "[tool.toolshape]\nextend-exclude = [\"generated\", \"src/legacy/*.py\"]\n");
    for file in ["src/app.py", "src/legacy/old.py", "src/legacy/deep/kept.py", "generated/x.py", "build/y.py"] {
        write(root, file, LEGACY);
    }
    let files = |run: &Run| {
        let mut names: Vec<String> = run
            .stdout
            .lines()
            .filter_map(|l| l.split(':').next())
            .filter(|p| p.ends_with(".py"))
            .map(|p| p.trim_start_matches("./").to_owned())
            .collect();
        names.dedup();
        names
    };
    let run = toolshape(root, &["check"]);
    assert_eq!(files(&run), ["src/app.py", "src/legacy/deep/kept.py"], "{run:?}");

    // `exclude` replaces the built-in list: build/ is walked again.
    write(root, "pyproject.toml", "[tool.toolshape]\nexclude = [\"generated\"]\n");
    let run = toolshape(root, &["check"]);
    assert_eq!(files(&run), ["build/y.py", "src/app.py", "src/legacy/deep/kept.py", "src/legacy/old.py"], "{run:?}");

    // A file named explicitly is checked unless --force-exclude (pre-commit).
    let run = toolshape(root, &["check", "generated/x.py"]);
    assert_eq!(files(&run), ["generated/x.py"], "{run:?}");
    let run = toolshape(root, &["check", "--force-exclude", "generated/x.py", "src/app.py"]);
    assert_eq!(files(&run), ["src/app.py"], "{run:?}");

    // Editors name stdin's source: an excluded name is left alone with
    // --force-exclude (even one that does not exist on disk yet).
    for name in ["generated/x.py", "generated/new.py"] {
        let run = with_stdin(root, &["check", "--force-exclude", "--stdin-filename", name, "-"], LEGACY);
        assert_eq!((run.code, findings(&run).len()), (0, 0), "{run:?}");
        let run = with_stdin(root, &["fix", "--force-exclude", "--stdin-filename", name, "-"], LEGACY);
        assert_eq!((run.code, run.stdout.as_str()), (0, LEGACY), "the source goes through unchanged: {run:?}");
    }
    let run = with_stdin(root, &["check", "--stdin-filename", "generated/new.py", "-"], LEGACY);
    assert_eq!(findings(&run).len(), 3, "without --force-exclude the name is checked: {run:?}");
    let run =
        with_stdin(root, &["fix", "--unsafe-fixes", "--force-exclude", "--stdin-filename", "src/new.py", "-"], LEGACY);
    assert!(run.stdout.contains("\"json\""), "a name that is not excluded is fixed: {run:?}");
}

#[test]
fn every_suppression_form_silences_its_codes_only() {
    let src = "\
a = {\"status\": 1, \"content\": [], \"x\": 1, **y}  # toolshape: ignore
b = {\"status\": 1, \"content\": [], \"x\": 1, **y}  # toolshape: ignore[TS002]
c = {\"status\": 1, \"content\": [], \"x\": 1, **y}  # noqa
d = {\"status\": 1, \"content\": [], \"x\": 1, **y}  # noqa: TS001
e = {
    \"status\": 1,
    \"content\": [],
    \"x\": 1,  # toolshape: ignore[TS001]
    \"z\": 2,
    **y,  # NOQA: TS002
}
f = {  # noqa: TS001, E501
    \"status\": 1,
    \"content\": [],
    \"x\": 1,
    **y,
}
";
    let dir = tempdir();
    write(dir.path(), "a.py", src);
    let run = toolshape(dir.path(), &["check"]);
    assert_eq!(
        findings(&run),
        [
            (2, "TS001".into()),
            (4, "TS002".into()),
            (line_of(src, "\"z\": 2"), "TS001".into()),
            (line_of(src, "f = {") + 4, "TS002".into()),
        ],
        "{run:?}"
    );
    // The fixer stays away from what is suppressed: fixing leaves each
    // suppressed entry where it was, and moves the rest.
    let run = toolshape(dir.path(), &["fix", "--unsafe-fixes"]);
    assert_eq!(run.code, 0, "{run:?}");
    let fixed = std::fs::read_to_string(dir.path().join("a.py")).unwrap();
    assert!(fixed.starts_with(src.lines().next().unwrap()), "a fully suppressed line is untouched:\n{fixed}");
    assert!(fixed.contains("\"x\": 1,  # toolshape: ignore[TS001]"), "{fixed}");
    assert_eq!(toolshape(dir.path(), &["check"]).code, 0);
}

#[test]
fn unused_suppressions_are_reported_on_request() {
    let src = "\
a = {\"status\": 1, \"content\": [], \"x\": 1}  # toolshape: ignore[TS001]
b = {\"status\": \"success\", \"content\": [{\"text\": \"t\"}]}  # toolshape: ignore
c = {\"status\": 1, \"content\": [], \"x\": 1}  # toolshape: ignore[TS001, TS002]
d = 1  # noqa
e = 1  # noqa: E501
f = \"# toolshape: ignore\"
g = {\"status\": \"success\", \"content\": [{\"text\": \"t\"}]}  # toolshape: ignore[TS002, TS002]
h = {\"status\": 1, \"content\": [], \"x\": 1}  # toolshape: ignore[TS001, TS001]
i = {\"status\": 1, \"content\": [], \"x\": 1}  # toolshape: ignore[TS001, TS002, TS001]
j = {\"status\": 1, \"content\": [], \"x\": 1}  # toolshape: ignore[TS001]  # noqa: TS001
k = {\"status\": 1, \"content\": [], \"x\": 1}  # toolshape: ignore[TS001, TS002, TS008]
m = {\"status\": 1, \"content\": [], \"x\": 1, **d}  # noqa: TS001, TS002, TS002, TS001
";
    let dir = tempdir();
    write(dir.path(), "a.py", src);
    let run = toolshape(dir.path(), &["check"]);
    assert_eq!(run.code, 0, "unused suppressions are not reported unless asked: {run:?}");
    let run = toolshape(dir.path(), &["check", "--report-unused-ignores"]);
    assert_eq!(run.code, 1, "{run:?}");
    let lines = [2, 3, 7, 8, 9, 11, 12];
    assert_eq!(findings(&run), lines.map(|l| (l, "TS100".to_owned())), "{run:?}");
    assert!(run.stdout.contains("code TS002 in `# toolshape: ignore[TS001, TS002]` silences nothing"), "{run:?}");
    // A code listed twice silences nothing more (ruff's RUF100: duplicated).
    assert!(run.stdout.contains("suppression `# toolshape: ignore[TS002, TS002]` silences nothing"), "{run:?}");
    assert!(
        run.stdout.contains("code TS001 is listed more than once in `# toolshape: ignore[TS001, TS001]`"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains(
            "code TS002 in `# toolshape: ignore[TS001, TS002, TS001]` silences nothing, and code TS001 is listed more than once"
        ),
        "{run:?}"
    );
    // Two directives naming a code (a file linted by two tools) are no
    // duplicate; several codes are named in the plural.
    assert!(
        run.stdout.contains("codes TS002, TS008 in `# toolshape: ignore[TS001, TS002, TS008]` silence nothing"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("codes TS001, TS002 are listed more than once in `# noqa: TS001, TS002, TS002, TS001`"),
        "{run:?}"
    );
    // A project can turn the report off by code.
    write(dir.path(), "toolshape.toml", "ignore = [\"TS100\"]\n");
    assert_eq!(toolshape(dir.path(), &["check", "--report-unused-ignores"]).code, 0);
}

#[test]
fn a_suppression_of_every_code_counts_as_used() {
    // TS002 in a builder, TS003 at its call, TS004 to TS009 in a file: each
    // silenced by its own comment, and one comment that silences nothing.
    let results = "def ok(text, **extra):\n    return {\"status\": \"success\", \"content\": [{\"text\": text}], **extra}  # toolshape: ignore[TS002]\n";
    let tools = "\
from strands import tool
from results import ok


def listing(devices):
    return ok(\"x\", devices=devices)  # toolshape: ignore[TS003]


def later():
    r = {\"status\": \"success\", \"content\": [{\"text\": \"t\"}]}
    r[\"k\"] = 1  # toolshape: ignore[TS004]
    return r


@tool
def half():
    return {\"status\": \"error\", \"error\": \"x\"}  # toolshape: ignore[TS005]


a = {\"status\": \"ok\", \"content\": [{\"text\": \"t\"}]}  # toolshape: ignore[TS006]
b = {\"status\": \"success\", \"content\": []}  # toolshape: ignore[TS007]
c = {\"status\": \"success\", \"content\": [{\"text\": \"t\", \"json\": 1}]}  # toolshape: ignore[TS008]
d = {\"status\": \"success\", \"content\": [{\"text\": 1}]}  # toolshape: ignore[TS009]
e = {\"status\": \"success\", \"content\": [{\"text\": \"t\"}]}  # toolshape: ignore[TS009]
";
    let dir = tempdir();
    let root = dir.path();
    write(root, "toolshape.toml", "");
    let bare = |text: &str| {
        text.lines().map(|l| l.split("  # toolshape").next().unwrap().to_owned() + "\n").collect::<String>()
    };
    // Without their comments, every code is found: each comment has work.
    write(root, "results.py", bare(results));
    write(root, "tools.py", bare(tools));
    let codes: std::collections::BTreeSet<String> =
        findings(&toolshape(root, &["check"])).into_iter().map(|(_, code)| code).collect();
    let expected = ["TS002", "TS003", "TS004", "TS005", "TS006", "TS007", "TS008", "TS009"];
    assert_eq!(codes, expected.iter().map(|c| c.to_string()).collect(), "every code is found bare");
    // `--add-ignores` writes the same comments, every code's included
    // (TS005 is decided project-wide), but the one that silences nothing.
    let added = toolshape(root, &["check", "--add-ignores"]);
    assert_eq!(added.last_line(), "Added 8 suppression comments in 2 files.", "{added:?}");
    let unused_comment = |text: &str| {
        text.replace(
            "\ne = {\"status\": \"success\", \"content\": [{\"text\": \"t\"}]}  # toolshape: ignore[TS009]",
            "\ne = {\"status\": \"success\", \"content\": [{\"text\": \"t\"}]}",
        )
    };
    assert_eq!(std::fs::read_to_string(root.join("results.py")).unwrap(), results);
    assert_eq!(std::fs::read_to_string(root.join("tools.py")).unwrap(), unused_comment(tools));
    assert_eq!(toolshape(root, &["check"]).code, 0, "the baseline silences every finding");
    write(root, "results.py", results);
    write(root, "tools.py", tools);
    assert_eq!(toolshape(root, &["check"]).code, 0, "every finding is silenced");
    let unused = [(24, "TS100".to_owned())];
    let run = toolshape(root, &["check", "--report-unused-ignores"]);
    assert_eq!(findings(&run), unused, "only the comment on a clean line silences nothing: {run:?}");
    let run = with_stdin(root, &["check", "--report-unused-ignores", "--stdin-filename", "tools.py", "-"], tools);
    assert_eq!(findings(&run), unused, "stdin agrees: {run:?}");
}

#[test]
fn a_suppression_the_prefilter_cannot_see_the_use_of_is_not_called_unused() {
    // "st\x61tus" is "status": only a whole parse sees the dict (the
    // prefilter's documented blind spot), and the comment silences it.
    let src = "r = {\"st\\x61tus\": \"success\", \"content\": [], \"x\": 1}  # noqa: TS001\n";
    let dir = tempdir();
    write(dir.path(), "toolshape.toml", "");
    write(dir.path(), "esc.py", src);
    let bare = src.split("  #").next().unwrap().to_owned() + "\n";
    write(dir.path(), "bare.py", &bare);
    let run = toolshape(dir.path(), &["check", "--no-prefilter", "bare.py"]);
    assert_eq!(findings(&run), [(1, "TS001".to_owned())], "without the comment, a whole parse finds it: {run:?}");
    let run = toolshape(dir.path(), &["check", "--report-unused-ignores", "esc.py"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = with_stdin(dir.path(), &["check", "--report-unused-ignores", "--stdin-filename", "esc.py", "-"], src);
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn add_ignores_baselines_a_project_and_new_violations_are_still_caught() {
    let other = "r = {'status': 'success', 'content': [], 'a': 1, 'b': 2}  # keep me\r\nclean = {'status': 'success', 'content': [{'text': 't'}]}\r\n";
    let dir = tempdir();
    let root = dir.path();
    write(root, "pkg/legacy.py", LEGACY);
    write(root, "pkg/other.py", other);
    write(root, "pkg/clean.py", "x = 1\n");
    // A Python 2 file gets no finding, so no comment either.
    let py2 = "print \"hello\"\nr = {'status': 'success', 'content': [], 'a': 1}\n";
    write(root, "pkg/py2.py", py2);
    let before = toolshape(root, &["check"]);
    assert_eq!(findings(&before).len(), 5, "{before:?}");

    let run = toolshape(root, &["check", "--add-ignores"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.last_line(), "Added 4 suppression comments in 2 files.", "{run:?}");
    let legacy = std::fs::read_to_string(root.join("pkg/legacy.py")).unwrap();
    let other_after = std::fs::read_to_string(root.join("pkg/other.py")).unwrap();
    assert_eq!(
        other_after,
        "r = {'status': 'success', 'content': [], 'a': 1, 'b': 2}  # keep me  # toolshape: ignore[TS001]\r\nclean = {'status': 'success', 'content': [{'text': 't'}]}\r\n",
        "CRLF and the existing comment are kept"
    );
    // Every line is the old line, plus a comment at most.
    for (old, new) in LEGACY.lines().zip(legacy.lines()) {
        assert!(new == old || new.starts_with(&format!("{old}  # toolshape: ignore[")), "{old:?} -> {new:?}");
    }
    assert_eq!(legacy.lines().count(), LEGACY.lines().count());
    assert_eq!(toolshape(root, &["check"]).code, 0, "the baseline silences every finding");
    assert_eq!(std::fs::read_to_string(root.join("pkg/py2.py")).unwrap(), py2);

    // Idempotent: a second run adds nothing and changes no byte.
    let again = toolshape(root, &["check", "--add-ignores"]);
    assert_eq!(again.last_line(), "Added 0 suppression comments in 0 files.", "{again:?}");
    assert_eq!(std::fs::read_to_string(root.join("pkg/legacy.py")).unwrap(), legacy);

    // A new violation in a baselined dict is still caught.
    let grown = legacy.replace("        \"trace\"", "        \"gpu\": 1,\n        \"trace\"");
    write(root, "pkg/legacy.py", &grown);
    let run = toolshape(root, &["check"]);
    assert_eq!(findings(&run), [(line_of(&grown, "\"gpu\""), "TS001".into())], "{run:?}");
    // Every suppression the baseline wrote is in use.
    assert_eq!(findings(&toolshape(root, &["check", "--report-unused-ignores"])).len(), 1);
}

/// The bytes `check -v` says a phase parsed (`TS005 1.2 ms (3.4 KB parsed)`).
fn parsed_in_phase(run: &Run, phase: &str) -> f64 {
    let phases = run.stderr.lines().find_map(|l| l.strip_prefix("toolshape: phases: ")).expect("the phases line");
    let (_, after) = phases.split_once(&format!("{phase} ")).unwrap_or_else(|| panic!("no phase {phase}: {phases}"));
    let (_, bytes) = after.split_once('(').expect("bytes parsed");
    let mut words = bytes.split_whitespace();
    let n: f64 = words.next().and_then(|n| n.parse().ok()).expect("a number");
    n * match words.next() {
        Some("B") => 1.0,
        Some("KB") => 1e3,
        Some("MB") => 1e6,
        unit => panic!("unit {unit:?} in {phases}"),
    }
}

#[test]
fn ts005_parses_no_helper_its_bytes_say_returns_nothing_it_follows() {
    // The tool returns calls of two handlers. `_handle_b` may return a
    // display with a status only; `_handle_a` (in another module) returns
    // a call of `_fmt`, which returns a call of a name no `def` binds: read
    // from the bytes, nothing `_handle_a` returns is followed, so its long
    // body is never parsed (the worklist once parsed it to find that out).
    let long_body: String = (0..400).map(|i| format!("    v{i} = x + {i}\n")).collect();
    let handlers = format!("def _fmt(x):\n    return str(x)\n\n\ndef _handle_a(x):\n{long_body}    return _fmt(x)\n");
    let tools = "from strands import tool\n\nfrom pkg.handlers import _handle_a\n\n\ndef _handle_b(x):\n    return {\"status\": \"error\", \"error\": str(x)}\n\n\n@tool\ndef t(action, x):\n    if action == \"a\":\n        return _handle_a(x)\n    return _handle_b(x)\n";
    let dir = project(&[("pkg/__init__.py", ""), ("pkg/handlers.py", &handlers), ("pkg/tools.py", tools)]);
    let run = toolshape(dir.path(), &["check", "-v", "."]);
    assert_eq!(findings(&run).iter().filter(|(_, c)| c == "TS005").count(), 1, "{run:?}");
    let parsed = parsed_in_phase(&run, "TS005");
    assert!(
        parsed < (handlers.len() / 2) as f64,
        "TS005 parsed {parsed} B ({} B of handlers): {run:?}",
        handlers.len()
    );
}

#[test]
fn ts005_follows_import_aliases_not_the_word_as_in_prose() {
    // `t` returns `client.get(...)`, and no `def` binds `get`; the word
    // `as` before `get` stands in a docstring, a `with` and an `except`,
    // which bind no function TS005 follows: `t`'s long body is not parsed.
    // `u` returns a call of `build`, an import alias of a helper that
    // returns a status alone: followed, it gives the finding.
    let long_body: String = (0..400).map(|i| format!("    v{i} = x + {i}\n")).collect();
    let helpers = "\"\"\"Results fetched with verbs such as get.\"\"\"\n\n\ndef _make(x):\n    with open(x) as get:\n        pass\n    try:\n        pass\n    except OSError as get:\n        pass\n    return {\"status\": \"error\", \"error\": str(x)}\n";
    let tools = format!(
        "from strands import tool\n\nfrom pkg.helpers import (\n    _make as build,\n)\n\n\n@tool\ndef t(client, x):\n{long_body}    return client.get(x)\n\n\n@tool\ndef u(x):\n    return build(x)\n"
    );
    let dir = project(&[("pkg/__init__.py", ""), ("pkg/helpers.py", helpers), ("pkg/tools.py", &tools)]);
    let run = toolshape(dir.path(), &["check", "-v", "."]);
    let found: Vec<(usize, String)> = findings(&run).into_iter().filter(|(_, c)| c == "TS005").collect();
    assert_eq!(found, [(line_of(helpers, "return {"), "TS005".to_owned())], "{run:?}");
    let parsed = parsed_in_phase(&run, "TS005");
    assert!(
        parsed < (long_body.len() / 2) as f64,
        "TS005 parsed {parsed} B ({} B of t's body): {run:?}",
        long_body.len()
    );
}

#[test]
fn results_plainly_within_the_contract_are_not_parsed() {
    // Forty tools that return plain results, and one that does not: the
    // check parses the one display it must judge, and finds its key.
    let mut src = String::from("from strands import tool\n");
    for i in 0..40 {
        src.push_str(&format!(
            "\n\n@tool\ndef t{i}(x):\n    if x:\n        return {{\"status\": \"error\", \"content\": [{{\"text\": f\"bad {{x}}\"}}]}}\n    return {{\"status\": \"success\", \"content\": [{{\"text\": str(x)}}]}}\n"
        ));
    }
    let bad = "    return {\"status\": \"success\", \"content\": [{\"text\": \"ok\"}], \"frames\": 512}\n";
    src.push_str(&format!("\n\n@tool\ndef last(x):\n{bad}"));
    let dir = project(&[("tools.py", &src)]);
    let run = toolshape(dir.path(), &["check", "-v", "."]);
    assert_eq!(findings(&run), [(line_of(&src, "\"frames\""), "TS001".to_owned())], "{run:?}");
    // One parse for the display, one for the questions its fix asks about
    // the file (not one per display).
    let work = run.stderr.lines().find(|l| l.contains(" tree-sitter parse")).expect("the work line");
    let parses: usize = work
        .split(" tree-sitter parse")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("a count of parses");
    assert!((1..=3).contains(&parses), "{parses} parses: {run:?}");
    // Parsed whole, the same file gives the same finding.
    let whole = toolshape(dir.path(), &["check", "--no-prefilter", "."]);
    assert_eq!(findings(&whole), findings(&run), "{whole:?}");
}

#[test]
fn quiet_and_verbose() {
    let dir = tempdir();
    write(dir.path(), "toolshape.toml", "line-length = 100\n");
    write(dir.path(), "a.py", LEGACY);
    let normal = toolshape(dir.path(), &["check"]);
    assert!(normal.last_line().starts_with("Found 3 violations"), "{normal:?}");
    let quiet = toolshape(dir.path(), &["check", "-q"]);
    assert_eq!(quiet.code, 1);
    assert_eq!(quiet.stdout.lines().count(), 3, "findings only: {quiet:?}");
    assert_eq!(quiet.stderr, "");

    let verbose = toolshape(dir.path(), &["check", "--verbose"]);
    assert_eq!(verbose.stdout, normal.stdout, "verbose talks on stderr only");
    assert!(verbose.stderr.contains("configuration ") && verbose.stderr.contains("toolshape.toml"), "{verbose:?}");
    assert!(verbose.stderr.contains("1 file to check") && verbose.stderr.contains("done in"), "{verbose:?}");
    // What the run read, lexed and parsed, and the phases of `check`.
    let work = verbose.stderr.lines().find(|l| l.contains(" read in ")).unwrap_or_default();
    let a_py = std::fs::metadata(dir.path().join("a.py")).expect("a.py").len();
    let (read, reads) = work.split_once(" B read in ").expect("bytes read and file reads");
    let reads: u64 = reads.split_whitespace().next().and_then(|n| n.parse().ok()).expect("a count");
    assert_eq!(read.trim_start_matches("toolshape: ").parse::<u64>().ok(), Some(reads * a_py), "{verbose:?}");
    assert!(work.contains("tree-sitter parse") && !work.contains("in 0 tree-sitter parses"), "{verbose:?}");
    assert!(verbose.stderr.contains("toolshape: phases: discovery "), "{verbose:?}");
    assert!(verbose.stderr.contains(", files "), "{verbose:?}");

    let quiet_fix = toolshape(dir.path(), &["fix", "--quiet", "--diff", "--unsafe-fixes"]);
    assert!(quiet_fix.stdout.contains("+++ b/a.py"), "{quiet_fix:?}");
    assert_eq!(quiet_fix.stderr, "", "no summary: {quiet_fix:?}");
    assert_eq!(toolshape(dir.path(), &["check", "-q", "-v"]).code, 2, "the two conflict");
}

#[test]
fn no_progress_bar_in_pipes_or_ci() {
    let dir = tempdir();
    for i in 0..20 {
        write(dir.path(), &format!("m{i}.py"), LEGACY);
    }
    // Even with no delay, a piped stderr never sees the bar.
    let run = finish(command(dir.path(), &["check"]).env("TOOLSHAPE_PROGRESS_DELAY_MS", "0").output().unwrap());
    assert_eq!(run.code, 1);
    assert!(!run.stderr.contains("files") && !run.stderr.contains('\r'), "{run:?}");
}

#[cfg(unix)]
#[test]
fn progress_bar_on_a_terminal_only_when_not_quiet_or_in_ci() {
    use expectrl::{Eof, Expect, Session};
    let dir = tempdir();
    for i in 0..20 {
        write(dir.path(), &format!("m{i}.py"), LEGACY);
    }
    let screen = |extra_env: &[(&str, &str)], args: &[&str]| {
        let mut cmd = std::process::Command::new(support::BIN);
        cmd.args(args).current_dir(dir.path()).env("TOOLSHAPE_PROGRESS_DELAY_MS", "0").env_remove("CI");
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        let mut session = Session::spawn(cmd).expect("a pty");
        session.set_expect_timeout(Some(std::time::Duration::from_secs(20)));
        let seen = session.expect(Eof).expect("the run ends");
        String::from_utf8_lossy(seen.as_bytes()).into_owned()
    };
    let shown = screen(&[], &["check"]);
    assert!(shown.contains("/20 files"), "a terminal shows the bar: {shown}");
    assert!(shown.contains("Found 60 violations"), "{shown}");
    let quiet = screen(&[], &["check", "--quiet"]);
    assert!(!quiet.contains("/20 files"), "{quiet}");
    let ci = screen(&[("CI", "true")], &["check"]);
    assert!(!ci.contains("/20 files"), "{ci}");
}

/// `--add-ignores` knows the codes that need the project (TS003) and the
/// semantic ones (TS004): after it the fixture project checks clean, and a
/// second run adds nothing.
#[test]
fn add_ignores_covers_builder_calls_and_later_writes() {
    let dir = tempdir();
    let from = support::manifest_dir().join("tests/fixtures/projects/builders");
    for entry in walkdir::WalkDir::new(&from).into_iter().filter_map(Result::ok).filter(|e| e.file_type().is_file()) {
        let rel = entry.path().strip_prefix(&from).unwrap().to_string_lossy().into_owned();
        write(dir.path(), &rel, std::fs::read(entry.path()).unwrap());
    }
    let before = toolshape(dir.path(), &["check", "--format", "json", "."]).json();
    let codes: std::collections::BTreeSet<String> =
        before.iter().map(|f| f["code"].as_str().unwrap().to_owned()).collect();
    assert!(codes.contains("TS003") && codes.contains("TS004"), "{codes:?}");
    let added = toolshape(dir.path(), &["check", "--add-ignores", "."]);
    assert_eq!(added.code, 0, "{added:?}");
    assert!(added.stdout.contains(&format!("Added {} suppression comments", before.len())), "{added:?}");
    let after = toolshape(dir.path(), &["check", "."]);
    assert_eq!(after.code, 0, "{after:?}");
    let again = toolshape(dir.path(), &["check", "--add-ignores", "."]);
    assert!(again.stdout.contains("Added 0 suppression comments"), "a second run adds nothing: {again:?}");
}

/// Builders are found from their own definitions first (only those are
/// parsed); a string that looks like code at the start of a line, or a
/// builder method in a decorated class, must not hide one.
#[test]
fn builders_behind_lookalike_lines_are_found() {
    let dir = tempdir();
    write(dir.path(), "pyproject.toml", "[project]\nname = \"p\"\n");
    let results = "DOC = \"\"\"\ndef fake(**x):\nclass Fake:\n\"\"\"\n\n\
                   def ok(text, **extra):\n    note = \"\"\"\ndef inner():\n@deco\n\"\"\"\n    \
                   return {\"status\": \"success\", \"content\": [{\"text\": text}], **extra}\n\n\n\
                   @decorated\nclass Tools:\n    def _ok(self, text, **extra):\n        \
                   return {\"status\": \"success\", \"content\": [], **extra}\n\n    \
                   def run(self):\n        return self._ok(\"ran\", frames=1)\n";
    write(dir.path(), "results.py", results);
    write(dir.path(), "tools.py", "from results import ok\n\n\ndef t():\n    return ok(\"x\", devices=2)\n");
    let run = toolshape(dir.path(), &["check", "--format", "json", "."]);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap_or_else(|_| panic!("{run:?}"));
    let calls: Vec<String> = json
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "TS003")
        .map(|f| format!("{}:{}:{}", f["path"].as_str().unwrap(), f["line"], f["key"].as_str().unwrap()))
        .collect();
    assert_eq!(calls, ["./results.py:20:frames", "./tools.py:5:devices"], "{run:?}");
}

/// The findings `check` marks `[~]` (its JSON `fixable: "unsafe"`) in the
/// project at `dir` against the ones `fix --diff` leaves with "unsafe fix not
/// applied": the same findings, by place, code and message, both ways (`fix
/// --diff` writes nothing, so its places are those of the files as they are).
fn assert_check_and_fix_agree_on_unsafe(dir: &Path) {
    let check = toolshape(dir, &["check", "--format", "json", "."]);
    let fix = toolshape(dir, &["fix", "--diff", "."]);
    let mut left: Vec<&str> = fix.stderr.lines().filter(|l| l.contains("(unsafe fix not applied")).collect();
    for f in check.json().iter().filter(|f| f["fixable"] == "unsafe") {
        let (path, code, message) =
            (f["path"].as_str().unwrap(), f["code"].as_str().unwrap(), f["message"].as_str().unwrap());
        let said = format!(" {code} [~] {message} (unsafe fix not applied");
        let place = format!("{path}:{}:{}:", f["line"], f["column"]);
        let at = left.iter().position(|l| l.starts_with(&place) && l.contains(&said));
        let at = at.unwrap_or_else(|| {
            panic!(
                "{}: check calls {place} {code} {message:?} unsafe, fix does not leave it there:\n{}",
                dir.display(),
                fix.stderr
            )
        });
        left.remove(at);
    }
    assert!(left.is_empty(), "{}: fix leaves unsafe fixes that check calls safe: {left:#?}", dir.display());
    // Whatever `fix --diff` leaves, it names by a place check names.
    let places: Vec<String> = check
        .json()
        .iter()
        .map(|f| {
            format!("{}:{}:{}: {}", f["path"].as_str().unwrap(), f["line"], f["column"], f["code"].as_str().unwrap())
        })
        .collect();
    for line in fix.stderr.lines().filter(|l| l.contains(": TS") && !l.starts_with("warning")) {
        // `PATH:LINE:COLUMN: TSnnn`, the code's five characters included.
        let place = line.find(": TS").map_or(line, |at| &line[..(at + 7).min(line.len())]);
        assert!(
            places.iter().any(|p| p == place),
            "{}: fix --diff leaves {line:?}, not a place check names",
            dir.display()
        );
    }
}

#[test]
fn check_and_fix_agree_on_which_fixes_are_unsafe() {
    let fixtures = support::manifest_dir().join("tests/fixtures");
    let mut dirs = vec![fixtures.join("readers")];
    let mut projects: Vec<_> =
        std::fs::read_dir(fixtures.join("projects")).unwrap().map(|e| e.unwrap().path()).collect();
    projects.sort();
    dirs.extend(projects);
    for dir in &dirs {
        assert_check_and_fix_agree_on_unsafe(dir);
    }
    // A file whose tool also returns a TS005 display: its own findings are
    // judged with their reads all the same (a whole-result read makes the
    // fix of "frames" unsafe).
    let dir = project(&[
        (
            "pkg/tools.py",
            "from strands import tool\n\n\n@tool\ndef half(x):\n    return {\"status\": \"error\", \"error\": str(x)}\n\n\ndef ok(n):\n    return {\"status\": \"success\", \"content\": [{\"text\": \"ok\"}], \"frames\": n}\n",
        ),
        (
            "test_tools.py",
            "from pkg.tools import ok\n\n\ndef test_frames():\n    r = ok(3)\n    assert sorted(r.keys()) == [\"content\", \"frames\", \"status\"]\n",
        ),
    ]);
    let check = toolshape(dir.path(), &["check", "--format", "json", "."]);
    let codes: Vec<(String, String)> = check
        .json()
        .iter()
        .map(|f| (f["code"].as_str().unwrap().to_owned(), f["fixable"].as_str().unwrap_or("none").to_owned()))
        .collect();
    let has = |code: &str, fixable: &str| codes.iter().any(|(c, x)| c == code && x == fixable);
    assert!(has("TS005", "unsafe") && has("TS001", "unsafe"), "{}", check.stdout);
    assert_check_and_fix_agree_on_unsafe(dir.path());
    // A result left inside a value the fix moves into the json block is
    // named where it stands in the file, not where the json block begins.
    let dir = project(&[(
        "t.py",
        "def f(x, m):\n    return {\n        \"status\": \"success\",\n        \"content\": [{\"text\": \"ok\"}],\n        \"meta\": {\n            \"status\": \"success\",\n            \"content\": [{\"text\": \"inner\"}],\n            **m,\n            \"extra\": 1,\n        },\n        \"other\": 2,\n    }\n",
    )]);
    assert_check_and_fix_agree_on_unsafe(dir.path());
}

/// A project (a `pyproject.toml`) holding `files` (path, text).
fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempdir();
    write(dir.path(), "pyproject.toml", "");
    for (path, text) in files {
        write(dir.path(), path, text);
    }
    dir
}

/// `fix --diff` from stdin prints a patch, not the fixed source: applied
/// with `patch`, it gives what `fix` from stdin prints; what is left is
/// named where `check` names it; exit 1 with a patch, 0 without.
#[test]
fn fix_diff_from_stdin_prints_a_patch() {
    if !support::tool_or_skip("fix_diff_from_stdin_prints_a_patch", "patch") {
        return;
    }
    let dir = tempdir();
    write(dir.path(), "pyproject.toml", "");
    let src = "def f(m):\n    return {\n        \"status\": \"success\",\n        \"content\": [{\"text\": \"ok\"}],\n        \"meta\": {\"status\": \"success\", \"content\": [], **m, \"x\": 1},\n        \"other\": 2,\n    }\n";
    let stdin = ["--stdin-filename", "t.py", "-"];
    let diff = with_stdin(dir.path(), &[&["fix", "--diff"][..], &stdin].concat(), src);
    let fixed = with_stdin(dir.path(), &[&["fix"][..], &stdin].concat(), src);
    assert_eq!(diff.code, 1, "{}", diff.stderr);
    assert!(diff.stdout.contains("--- a/t.py\n+++ b/t.py\n"), "{}", diff.stdout);
    let path = write(dir.path(), "t.py", src);
    let mut apply = std::process::Command::new("patch");
    apply.args(["-p1", "-s"]).current_dir(dir.path()).stdin(Stdio::piped());
    let mut child = apply.spawn().expect("patch starts");
    child.stdin.take().unwrap().write_all(diff.stdout.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success(), "patch failed:\n{}", diff.stdout);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), fixed.stdout);
    // What is left, at check's places in the source as given.
    write(dir.path(), "t.py", src);
    let check = with_stdin(dir.path(), &["check", "--stdin-filename", "t.py", "-"], src);
    let left: Vec<&str> = diff.stderr.lines().filter(|l| l.contains(": TS")).collect();
    assert!(!left.is_empty(), "{}", diff.stderr);
    for line in left {
        let place = &line[..line.find(": TS").unwrap() + 7];
        assert!(
            check.stdout.lines().any(|l| l.starts_with(place)),
            "{line:?} is not a place check names:\n{}",
            check.stdout
        );
    }
    let clean = with_stdin(dir.path(), &[&["fix", "--diff"][..], &stdin].concat(), "x = 1\n");
    assert_eq!((clean.code, clean.stdout.as_str()), (0, ""), "{}", clean.stderr);
}

/// The comments of a builder's moved `**kwargs` stay, above the block that
/// replaces it (the spread is not copied there), and a comment between
/// `**` and its operand hides neither the builder nor its calls.
#[test]
fn a_builders_kwargs_keep_their_comments() {
    let builder = "def ok(text, **kw):\n    return {\n        \"status\": \"success\",\n        \"content\": [{\"text\": text}],\n        # extra keywords\n        **kw,  # trailing\n    }\n\n\ndef commented(text, **kw):\n    return {\"status\": \"success\", \"content\": [{\"text\": text}], **  # inside\n            kw}\n";
    let calls = "from tools import ok, commented\n\n\ndef use(rows):\n    return ok(\"x\", rows=rows), commented(\"y\", **  # c\n        {\"frames\": 1})\n";
    let dir = project(&[("tools.py", builder), ("calls.py", calls)]);
    let check = toolshape(dir.path(), &["check", "--color", "never", "."]);
    let calls_found: Vec<&str> = check.stdout.lines().filter(|l| l.contains("TS003")).collect();
    assert_eq!(calls_found.len(), 2, "both calls pass keywords to a builder:\n{}", check.stdout);
    // A `**mapping` passed makes the builder's fix unsafe.
    let fixed = toolshape(dir.path(), &["fix", "--unsafe-fixes", "."]);
    assert_eq!(fixed.code, 0, "{}\n{}", fixed.stdout, fixed.stderr);
    let after = std::fs::read_to_string(dir.path().join("tools.py")).unwrap();
    let comments = |text: &str| {
        let mut c: Vec<String> = text.lines().filter_map(|l| l.find('#').map(|i| l[i..].to_owned())).collect();
        c.sort();
        c
    };
    assert_eq!(comments(&after), comments(builder), "{after}");
    assert_eq!(after.matches("*([{\"json\": kw}] if kw else [])").count(), 2, "{after}");
    let again = toolshape(dir.path(), &["check", "--color", "never", "."]);
    assert_eq!(again.code, 0, "{}", again.stdout);
}

#[test]
fn a_not_a_result_finding_keeps_its_reads_beside_findings_that_move_keys() {
    // `half`'s TS005 display is read by a test; the same file (and
    // another) hold findings whose fixes move keys, so the run's reads
    // pass looks at the file too. The TS005 finding's reads are the same
    // whether the file is checked alone or with the project.
    let tools = "from strands import tool\n\n\n@tool\ndef half(x):\n    return {\"status\": \"error\", \"error\": str(x)}\n\n\ndef ok(n):\n    return {\"status\": \"success\", \"content\": [{\"text\": \"ok\"}], \"frames\": n}\n";
    let test = "from pkg.tools import half\n\n\ndef test_half():\n    r = half(3)\n    assert r[\"error\"] == \"3\"\n";
    let other = "def more(n):\n    return {\"status\": \"success\", \"content\": [{\"text\": \"ok\"}], \"rows\": n}\n";
    let dir = project(&[("pkg/tools.py", tools), ("pkg/other.py", other), ("test_tools.py", test)]);
    let ts005_reads = |args: &[&str]| -> Vec<serde_json::Value> {
        let run = toolshape(dir.path(), args);
        // Paths as given: `.` spells them `./test_tools.py`.
        let mut found: Vec<serde_json::Value> =
            run.json().iter().filter(|f| f["code"] == "TS005").map(|f| f["reads"].clone()).collect();
        for read in found.iter_mut().filter_map(|r| r.as_array_mut()).flatten() {
            let path = read["path"].as_str().unwrap_or_default();
            read["path"] = path.strip_prefix("./").unwrap_or(path).into();
        }
        assert_eq!(found.len(), 1, "{}", run.stdout);
        found
    };
    let alone = ts005_reads(&["check", "--format", "json", "pkg/tools.py"]);
    let reads = alone[0].as_array().expect("a list of reads");
    assert!(
        reads.iter().any(|r| r["path"] == "test_tools.py" && r["line"] == 6),
        "the test's read of \"error\" is listed: {alone:?}"
    );
    assert_eq!(ts005_reads(&["check", "--format", "json", "."]), alone);
    assert_eq!(ts005_reads(&["check", "--format", "json", "pkg/tools.py", "pkg/other.py"]), alone);
}

#[test]
fn stdin_gets_the_not_a_result_findings_and_fixes_of_its_own_text() {
    // On disk `half` is no tool yet; the editor's buffer (stdin) makes it
    // one that returns a half-shaped display, which a test reads.
    let disk = "def half(x):\n    return {\"status\": \"error\", \"content\": [{\"text\": str(x)}]}\n";
    let buffer = "from strands import tool\n\n\n@tool\ndef half(x):\n    return {\"status\": \"error\", \"error\": str(x), \"code\": 3}\n";
    let test = "from pkg.tools import half\n\n\ndef test_half():\n    assert half(3)[\"code\"] == 3\n";
    let dir = project(&[("pkg/tools.py", disk), ("test_tools.py", test)]);
    let on_disk = toolshape(dir.path(), &["check", "--format", "json", "pkg/tools.py"]);
    assert!(on_disk.json().is_empty(), "{}", on_disk.stdout);
    let args = ["check", "--format", "json", "--stdin-filename", "pkg/tools.py", "-"];
    let piped = with_stdin(dir.path(), &args, buffer);
    let found = piped.json();
    assert_eq!(found.len(), 1, "{}", piped.stdout);
    assert_eq!((found[0]["code"].as_str(), found[0]["line"].as_u64()), (Some("TS005"), Some(6)));
    let reads = found[0]["reads"].as_array().expect("reads");
    assert!(reads.iter().any(|r| r["path"] == "test_tools.py" && r["key"] == "code"), "{reads:?}");
    // Without the `-`, stdin is read all the same, in the same project.
    let args = ["check", "--format", "json", "--stdin-filename", "pkg/tools.py"];
    assert_eq!(with_stdin(dir.path(), &args, buffer).json(), found);
    // Read by the test, the display is left for a person, from stdin too.
    let fix = ["fix", "--unsafe-fixes", "--stdin-filename", "pkg/tools.py", "-"];
    assert_eq!(with_stdin(dir.path(), &fix, buffer).stdout, buffer);
    let fix_no_dash = ["fix", "--unsafe-fixes", "--stdin-filename", "pkg/tools.py"];
    assert_eq!(with_stdin(dir.path(), &fix_no_dash, buffer).stdout, buffer);
    // The same text on disk gives the same finding.
    write(dir.path(), "pkg/tools.py", buffer);
    assert_eq!(toolshape(dir.path(), &["check", "--format", "json", "pkg/tools.py"]).json(), found);
    // Unread, stdin's fix rewrites the display as a file's fix does.
    write(dir.path(), "pkg/tools.py", disk);
    write(dir.path(), "test_tools.py", "def test_nothing():\n    pass\n");
    let fixed = with_stdin(dir.path(), &fix, buffer);
    assert!(fixed.stdout.contains("\"content\": [{\"text\": str(x)}, {\"json\": {\"code\": 3}}]"), "{fixed:?}");
    write(dir.path(), "pkg/tools.py", buffer);
    toolshape(dir.path(), &["fix", "--unsafe-fixes", "pkg/tools.py"]);
    assert_eq!(std::fs::read_to_string(dir.path().join("pkg/tools.py")).unwrap(), fixed.stdout);
}

#[test]
fn a_file_defining_a_builder_keeps_its_not_a_result_findings() {
    // The file is judged again for its builder: its TS005 finding stays,
    // as from stdin.
    let tools = "from strands import tool\n\n\ndef _ok(text, **extra):\n    payload = {\"status\": \"success\", \"content\": [{\"text\": text}]}\n    payload.update(extra)\n    return payload\n\n\n@tool\ndef half(x):\n    return {\"status\": \"error\", \"error\": str(x)}\n\n\ndef listing(devices):\n    return _ok(\"3 devices\", devices=devices)\n";
    let dir = project(&[("pkg/tools.py", tools)]);
    let codes = |run: Run| -> Vec<(String, u64)> {
        run.json()
            .iter()
            .map(|f| (f["code"].as_str().unwrap_or_default().to_owned(), f["line"].as_u64().unwrap_or(0)))
            .collect()
    };
    let on_disk = codes(toolshape(dir.path(), &["check", "--format", "json", "pkg/tools.py"]));
    let want: Vec<(String, u64)> =
        [("TS004", 6), ("TS005", 12), ("TS003", 16)].iter().map(|(c, l)| (c.to_string(), *l)).collect();
    assert_eq!(on_disk, want);
    let args = ["check", "--format", "json", "--stdin-filename", "pkg/tools.py", "-"];
    assert_eq!(codes(with_stdin(dir.path(), &args, tools)), want);
}

#[test]
fn a_not_a_result_display_read_through_a_marked_name_is_left_for_a_person() {
    // Called directly, a tool returns its own dict: a helper whose
    // parameter is named `tool_result` reads its "code" (a possible read),
    // so moving "code" would break the test. The fix is manual, the read
    // listed.
    let tools = "from strands import tool\n\n\n@tool\ndef train(cfg):\n    return {\"status\": \"error\", \"error\": \"boom\", \"code\": 3}\n";
    let test = "from pkg.tools import train\n\n\ndef check(tool_result):\n    assert tool_result[\"code\"] == 3\n\n\ndef test_train():\n    check(train(1))\n";
    let dir = project(&[("pkg/tools.py", tools), ("test_tools.py", test)]);
    let run = toolshape(dir.path(), &["check", "--format", "json", "pkg/tools.py"]);
    let found = run.json();
    assert_eq!(found.len(), 1, "{}", run.stdout);
    assert_eq!((found[0]["code"].as_str(), found[0]["fixable"].as_str()), (Some("TS005"), None), "{}", run.stdout);
    let reads = found[0]["reads"].as_array().expect("reads");
    assert!(reads.iter().any(|r| r["path"] == "test_tools.py" && r["line"] == 5 && r["possible"] == true), "{reads:?}");
    let fix = toolshape(dir.path(), &["fix", "--unsafe-fixes", "pkg/tools.py"]);
    assert_eq!(std::fs::read_to_string(dir.path().join("pkg/tools.py")).unwrap(), tools, "{fix:?}");
}

#[test]
fn a_findings_possible_reads_do_not_hang_on_the_other_keys_of_the_run() {
    // The hook spells "trace" by concatenation and quotes "elapsed": it is
    // searched for the reads of "elapsed" only, whether b.py (which moves
    // "elapsed") is checked too or not.
    let a = "def a(n):\n    return {\"status\": \"success\", \"content\": [{\"text\": \"ok\"}], \"trace\": n}\n";
    let b = "def b(n):\n    return {\"status\": \"success\", \"content\": [{\"text\": \"ok\"}], \"elapsed\": n}\n";
    let hooks = "def on_result(tool_result):\n    tool_result[\"elapsed\"]\n    return tool_result[\"tr\" \"ace\"]\n";
    let dir = project(&[("pkg/a.py", a), ("pkg/b.py", b), ("hooks.py", hooks)]);
    // Each read as `key@path`, with its line.
    let reads = |args: &[&str]| -> Vec<(String, u64)> {
        let mut out = Vec::new();
        for f in toolshape(dir.path(), args).json() {
            for r in f["reads"].as_array().into_iter().flatten() {
                let path = r["path"].as_str().unwrap_or_default();
                let key = f["key"].as_str().unwrap_or_default();
                out.push((
                    format!("{key}@{}", path.strip_prefix("./").unwrap_or(path)),
                    r["line"].as_u64().unwrap_or(0),
                ));
            }
        }
        out.sort();
        out
    };
    assert_eq!(reads(&["check", "--format", "json", "pkg/a.py"]), vec![]);
    assert_eq!(reads(&["check", "--format", "json", "."]), vec![("elapsed@hooks.py".to_owned(), 2)]);
    // Quoted, "trace" is searched for: its concatenated read counts then.
    write(dir.path(), "hooks.py", format!("# \"trace\" and \"elapsed\"\n{hooks}"));
    let both = vec![("elapsed@hooks.py".to_owned(), 3), ("trace@hooks.py".to_owned(), 4)];
    assert_eq!(reads(&["check", "--format", "json", "."]), both);
    assert_eq!(reads(&["check", "--format", "json", "pkg/a.py"]), vec![("trace@hooks.py".to_owned(), 4)]);
}

#[test]
fn stdin_under_a_name_not_on_disk_is_judged_in_its_folders_project() {
    // No project marker and no file of that name: stdin's project is the
    // folder the name stands in, whose test reads the result; and a call
    // of a builder in another module is resolved with stdin's imports.
    let dir = tempdir();
    write(
        dir.path(),
        "pkg/test_new.py",
        "from new import half\n\n\ndef test_new():\n    assert half(3)[\"code\"] == 3\n",
    );
    let buffer = "from strands import tool\n\n\n@tool\ndef half(x):\n    return {\"status\": \"error\", \"error\": str(x), \"code\": 3}\n";
    for isolated in [false, true] {
        let mut args = vec!["fix", "--unsafe-fixes", "--stdin-filename", "pkg/new.py", "-"];
        if isolated {
            args.insert(1, "--isolated");
        }
        let fixed = with_stdin(dir.path(), &args, buffer);
        assert_eq!(fixed.stdout, buffer, "the read in pkg/test_new.py leaves the display for a person: {fixed:?}");
    }
    let dir = project(&[(
        "pkg/helpers.py",
        "def _ok(text, **extra):\n    payload = {\"status\": \"success\", \"content\": [{\"text\": text}]}\n    payload.update(extra)\n    return payload\n",
    )]);
    let caller =
        "from pkg.helpers import _ok\n\n\ndef listing(devices):\n    return _ok(\"3 devices\", devices=devices)\n";
    let args = ["check", "--format", "json", "--stdin-filename", "pkg/new.py", "-"];
    let found = with_stdin(dir.path(), &args, caller).json();
    assert!(found.iter().any(|f| f["code"] == "TS003" && f["key"] == "devices" && f["line"] == 5), "{found:?}");
    // The same name on disk with other calls: the calls found are stdin's,
    // not those the project's index read from the file on disk.
    write(dir.path(), "pkg/new.py", caller);
    let edited = format!("{caller}\n\ndef probe(port):\n    return _ok(\"probed\", serial=port)\n");
    let found = with_stdin(dir.path(), &args, &edited).json();
    let calls: Vec<_> =
        found.iter().filter(|f| f["code"] == "TS003").map(|f| (f["key"].clone(), f["line"].clone())).collect();
    assert_eq!(calls, [("devices".into(), 5.into()), ("serial".into(), 9.into())], "{found:?}");
}

/// Checks `pkg/tools.py`, whose one result moves "rssi", beside
/// `pkg/hook.py` (`hook`): the fix is unsafe for a possible read there at
/// `line`.
fn assert_possible_read_in_hook(hook: &str, line: u64) {
    let tools = "def probe(x):\n    return {\"status\": \"success\", \"content\": [{\"text\": \"ok\"}], \"rssi\": 1}\n";
    let dir = project(&[("pkg/tools.py", tools), ("pkg/hook.py", hook)]);
    let found = toolshape(dir.path(), &["check", "--format", "json", "pkg/tools.py"]).json();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["fixable"], "unsafe", "a possible read keeps the fix unsafe: {found:?}");
    let reads = found[0]["reads"].as_array().expect("reads");
    assert!(
        reads.iter().any(|r| r["path"] == "pkg/hook.py" && r["line"] == line && r["possible"] == true),
        "{reads:?}"
    );
}

#[test]
fn a_possible_read_in_a_def_under_a_module_level_if_is_found() {
    let hook = "import sys\n\nif sys.version_info >= (3, 8):\n    def on(event: AfterToolCallEvent):\n        r = event.result\n        return r[\"rssi\"]\n";
    assert_possible_read_in_hook(hook, 6);
}

#[test]
fn a_possible_read_in_a_method_under_an_if_of_a_class_body_is_found() {
    // The annotation names the marker; the read's own statement does not.
    let hook = "import sys\n\n\nclass Watcher:\n    def plain(self):\n        return 1\n\n    if sys.platform:\n        def on(self, r: ToolResult):\n            return r[\"rssi\"]\n";
    assert_possible_read_in_hook(hook, 10);
}

/// A test that unwraps a tool to call it (`raw(probe)(1)["depth"]`) reads
/// the result where toolshape cannot follow: that use as a value is an
/// escape, so the fix that would break the test is not safe; so is a
/// wrapper with other arguments, a call that keeps what it is handed
/// (`docs/rules.md`, "Escapes"). In a list handed to an agent, or spread
/// from one, the tool stays exempt.
#[test]
fn a_tool_called_through_a_wrapper_escapes() {
    let tools = "from strands import tool\n\n\n@tool\ndef probe(x):\n    return {\"status\": \"success\", \"content\": [{\"text\": \"t\"}], \"depth\": 1}\n";
    let test = "from tools import probe\n\n\ndef raw(f):\n    return getattr(f, \"_tool_func\", None) or f\n\n\n\
                def test_a():\n    r = raw(probe)(1)\n    assert r[\"depth\"] == 1\n\n\n\
                def test_b():\n    Agent = list\n    Agent([probe])\n    raw(probe, 2)(1)\n    raw(*[probe])(1)\n    (raw)(  # why\n        (probe))(1)\n";
    let dir = project(&[("tools.py", tools), ("tests/test_probe.py", test)]);
    let run = toolshape(dir.path(), &["check", "--format", "json", "."]);
    let found = run.json();
    assert_eq!(found.len(), 1, "{}", run.stdout);
    assert_eq!(found[0]["fixable"], "unsafe", "{}", run.stdout);
    let reads: Vec<(u64, u64, &str)> = found[0]["reads"]
        .as_array()
        .expect("reads")
        .iter()
        .map(|r| (r["line"].as_u64().unwrap(), r["column"].as_u64().unwrap(), r["form"].as_str().unwrap()))
        .collect();
    assert_eq!(reads, [(9, 13, "escape"), (16, 9, "escape"), (19, 10, "escape")], "{}", run.stdout);
    let fix = toolshape(dir.path(), &["fix", "."]);
    assert_eq!(std::fs::read_to_string(dir.path().join("tools.py")).unwrap(), tools, "{fix:?}");
}

/// A builder's fix moves the keys of every call of it: with
/// `--unsafe-fixes`, the reads of those keys it leaves (here, through a
/// wrapper) are named in a warning, as a literal's are.
#[test]
fn an_applied_builder_fix_warns_of_the_reads_it_leaves() {
    let results = "def ok(text, **extra):\n    r = {\"status\": \"success\", \"content\": [{\"text\": text}]}\n    r.update(extra)\n    return r\n";
    let tools =
        "from strands import tool\nfrom results import ok\n\n\n@tool\ndef probe(x):\n    return ok(\"t\", depth=x)\n";
    let test = "from tools import probe\n\n\ndef raw(f):\n    return f\n\n\ndef test_a():\n    assert raw(probe)(1)[\"depth\"] == 1\n";
    let dir = project(&[("results.py", results), ("tools.py", tools), ("tests/test_probe.py", test)]);
    let check = toolshape(dir.path(), &["check", "."]);
    assert!(check.stdout.contains("TS003 [~]"), "{check:?}");
    let fix = toolshape(dir.path(), &["fix", "--unsafe-fixes", "."]);
    assert!(
        fix.stderr.contains("warning: ./results.py:3: the unsafe fix leaves reads of its keys as they are, which may now fail: ./tests/test_probe.py:9 uses `probe` as a value"),
        "{fix:?}"
    );
    assert!(fix.stdout.contains("1 read of moved keys left as they are"), "{fix:?}");
}

/// A file that names a producer only inside functions is scanned as an
/// outline keeping those functions; one that names it at module level too
/// (here an import below a `def`) is scanned whole, or a function the
/// outline would leave out (`wrap`, returning the producer's result under
/// the imported name) is no producer, and the reads of its result are lost.
#[test]
fn reads_through_a_name_bound_below_a_function_are_found() {
    let producers =
        "def make():\n    return {\"status\": \"success\", \"content\": [{\"text\": \"x\"}], \"frames\": 1}\n";
    let alias = "def unrelated():\n    return 1\n\n\nfrom pkg.producers import make as build\n\n\ndef wrap():\n    return build()\n";
    let reader = "from alias_user import wrap\n\n\ndef run():\n    r = wrap()\n    return r[\"frames\"]\n";
    let direct = "from pkg import producers\n\n\ndef first():\n    return producers.make()[\"frames\"]\n\n\ndef second():\n    return 2\n";
    let files =
        [("pkg/producers.py", producers), ("alias_user.py", alias), ("reader.py", reader), ("direct_user.py", direct)];
    let dir = project(&files);
    for paths in [&["."][..], &["pkg/producers.py"]] {
        let run = toolshape(dir.path(), &[&["check", "--format", "json"][..], paths].concat());
        let found = run.json();
        let ts001: Vec<&serde_json::Value> = found.iter().filter(|f| f["code"] == "TS001").collect();
        assert_eq!(ts001.len(), 1, "{}", run.stdout);
        let reads: Vec<(String, u64)> = ts001[0]["reads"]
            .as_array()
            .expect("a list of reads")
            .iter()
            .map(|r| {
                let path = r["path"].as_str().unwrap_or_default();
                (path.strip_prefix("./").unwrap_or(path).to_owned(), r["line"].as_u64().unwrap_or_default())
            })
            .collect();
        let expected = vec![
            ("direct_user.py".to_owned(), line_of(direct, "[\"frames\"]") as u64),
            ("reader.py".to_owned(), line_of(reader, "[\"frames\"]") as u64),
        ];
        assert_eq!(reads, expected, "{paths:?}: {}", run.stdout);
    }
}

/// The keys a project allows (`allowed-keys`) are its own: a builder in
/// another project of the same run is judged without them.
#[test]
fn allowed_keys_are_each_project_s_own() {
    let dir = tempdir();
    for project in ["a", "b"] {
        let extra = if project == "a" { "\n[tool.toolshape]\nallowed-keys = [\"trace\"]\n" } else { "" };
        write(dir.path(), &format!("{project}/pyproject.toml"), format!("[project]\nname = \"{project}\"\n{extra}"));
        write(
            dir.path(),
            &format!("{project}/common.py"),
            "def ok(text, **extra):\n    return {\"status\": \"success\", \"content\": [{\"text\": text}], **extra}\n",
        );
        write(
            dir.path(),
            &format!("{project}/tools.py"),
            "from common import ok\n\n\ndef t():\n    return ok(\"x\", trace=1, frames=2)\n",
        );
    }
    let run = toolshape(dir.path(), &["check", "--format", "json", "."]);
    assert_eq!(run.code, 1, "{run:?}");
    let found: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
    let of = |path: &str, code: &str| -> Vec<&serde_json::Value> {
        found.iter().filter(|f| f["path"] == path && f["code"] == code).collect()
    };
    let keys = |path: &str| -> Vec<&str> { of(path, "TS003").iter().map(|f| f["key"].as_str().unwrap()).collect() };
    // `a` allows `trace`: its call keeps it at the top level, so fixing the
    // builder (which would move it) is unsafe there.
    assert_eq!(keys("./a/tools.py"), ["frames"]);
    assert_eq!(of("./a/common.py", "TS002")[0]["fixable"], "unsafe", "{}", run.stdout);
    // `b` allows nothing more: `trace` is an extra key, and the builder's
    // fix is safe.
    assert_eq!(keys("./b/tools.py"), ["trace", "frames"]);
    assert_eq!(of("./b/common.py", "TS002")[0]["fixable"], "safe", "{}", run.stdout);
}
