//! End-to-end tests of `toolshape check`: the binary is run as a user would
//! run it, on small trees built in temporary folders (and on the annotated
//! fixtures under `tests/fixtures/cli/`).
//!
//! Expectations are derived from the contract (see the brief in each test),
//! not copied from the tool's output: positions are computed from the source
//! text the test itself wrote.

use std::path::{Path, PathBuf};

mod support;
use std::process::{Command, Stdio};
use std::time::Duration;
use support::{BIN, Run, tempdir, toolshape, toolshape_with_timeout, write};

use serde_json::Value;

/// One violating tool result on one line: the extra key `extra`.
const VIOLATION: &str = "r = {\"status\": \"success\", \"content\": [], \"extra\": 1}\n";
/// A compliant tool result.
const CLEAN: &str = "r = {\"status\": \"success\", \"content\": [{\"text\": \"hi\"}], \"toolUseId\": \"t\"}\n";

/// 1-based character column of the first `needle` in `line`.
fn char_col(line: &str, needle: &str) -> usize {
    let at = line.find(needle).unwrap_or_else(|| panic!("{needle:?} not in {line:?}"));
    line[..at].chars().count() + 1
}

/// 1-based character column just after the last `needle` in `line`
/// (an exclusive end position).
fn char_end_after_last(line: &str, needle: &str) -> usize {
    let at = line.rfind(needle).unwrap_or_else(|| panic!("{needle:?} not in {line:?}"));
    line[..at + needle.len()].chars().count() + 1
}

/// Lines split the way Python splits them (`\r\n`, `\r`, `\n`).
fn python_lines(text: &str) -> Vec<String> {
    text.replace("\r\n", "\n").replace('\r', "\n").split('\n').map(str::to_owned).collect()
}

fn field<'v>(f: &'v Value, name: &str) -> &'v Value {
    f.get(name).unwrap_or_else(|| panic!("field {name} missing in {f}"))
}

fn num(f: &Value, name: &str) -> usize {
    field(f, name).as_u64().unwrap_or_else(|| panic!("{name} is not a number in {f}")) as usize
}

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `# expect: CODE WHAT; CODE WHAT` annotations of a fixture, as
/// (line, code, what) triples, sorted.
fn expectations(src: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    for (i, line) in src.lines().enumerate() {
        // Comment lines explain the format; annotations follow code.
        if line.trim_start().starts_with('#') {
            continue;
        }
        let Some((_, spec)) = line.split_once("# expect: ") else { continue };
        for item in spec.split("; ") {
            let (code, what) = item.split_once(' ').unwrap_or_else(|| panic!("bad annotation {item:?}"));
            out.push((i + 1, code.to_owned(), what.to_owned()));
        }
    }
    out.sort();
    out
}

/// (line, code, key or spread) of each JSON finding, sorted.
fn reported(findings: &[Value]) -> Vec<(usize, String, String)> {
    let mut out: Vec<(usize, String, String)> = findings
        .iter()
        .map(|f| {
            let code = field(f, "code").as_str().unwrap().to_owned();
            let what = match code.as_str() {
                "TS001" => field(f, "key").as_str().expect("TS001 has a key"),
                "TS002" => field(f, "spread").as_str().expect("TS002 has a spread"),
                "TS006" | "TS007" | "TS009" => field(f, "key").as_str().expect("the entry's key"),
                "TS008" => "block",
                other => panic!("unknown code {other}"),
            };
            (num(f, "line"), code, what.to_owned())
        })
        .collect();
    out.sort();
    out
}

/// Checks that every JSON finding points where it says: the dict span starts
/// at `{` and ends just after `}`; a spread's span is exactly its text; a
/// key's span starts at the key (a quote, a string prefix or a parenthesis).
fn assert_positions_point_at_source(src: &str, findings: &[Value]) {
    let lines: Vec<Vec<char>> = python_lines(src).iter().map(|l| l.chars().collect()).collect();
    let at = |line: usize, col: usize| -> char {
        assert!(line >= 1 && col >= 1, "positions are 1-based");
        lines[line - 1][col - 1]
    };
    for f in findings {
        let dict = field(f, "dict");
        assert_eq!(at(num(dict, "line"), num(dict, "column")), '{', "dict start of {f}");
        assert_eq!(at(num(dict, "end_line"), num(dict, "end_column") - 1), '}', "dict end of {f}");
        let (line, col, end_line, end_col) =
            (num(f, "line"), num(f, "column"), num(f, "end_line"), num(f, "end_column"));
        assert!((line, col) < (end_line, end_col), "entry span is not empty: {f}");
        assert!((num(dict, "line"), num(dict, "column")) < (line, col), "entry inside its dict: {f}");
        match field(f, "code").as_str().unwrap() {
            "TS002" if line == end_line => {
                let text: String = lines[line - 1][col - 1..end_col - 1].iter().collect();
                assert_eq!(text, field(f, "spread").as_str().unwrap(), "spread span of {f}");
            }
            "TS002" => assert_eq!(at(line, col), '*', "{f}"),
            _ => {
                let c = at(line, col);
                assert!(matches!(c, '\'' | '"' | '(' | 'r' | 'R' | 'u' | 'U'), "key start {c:?} of {f}");
            }
        }
    }
}

// ----- exit codes -----------------------------------------------------------

#[test]
fn clean_tree_exits_0_with_the_all_checked_summary() {
    let dir = tempdir();
    write(dir.path(), "a.py", CLEAN);
    // Dicts that are not tool results at all.
    write(dir.path(), "pkg/b.py", "x = {\"status\": 1}\ny = {\"content\": [], \"other\": 2}\nz = {'a': 1}\n");
    let run = toolshape(dir.path(), &["check", "."]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.lines(), ["All checked: no violations in 2 files."], "{run:?}");
    assert_eq!(run.stderr, "", "{run:?}");
}

#[test]
fn violations_exit_1_with_one_text_line_each_and_a_summary() {
    let dir = tempdir();
    let a = "import os\n\n\ndef tool():\n    return {\"status\": \"success\", \"content\": [], \"frames\": 3}\n";
    // Unsafe: the spread stands after "status" and could override it.
    // Manual: content is a string, not a list of blocks.
    let b = "u = {\"status\": \"success\", \"content\": [], **extra}\nm = {\"status\": \"success\", \"content\": \"text\", \"note\": 1}\n";
    write(dir.path(), "a.py", a);
    write(dir.path(), "b.py", b);
    write(dir.path(), "c.py", CLEAN);
    let run = toolshape(dir.path(), &["check", "a.py", "b.py", "c.py"]);
    assert_eq!(run.code, 1, "{run:?}");
    let lines = run.lines();
    assert_eq!(lines.len(), 5, "{run:?}");
    let a5 = a.lines().nth(4).unwrap();
    let b1 = b.lines().next().unwrap();
    let b2 = b.lines().nth(1).unwrap();
    assert!(lines[0].starts_with(&format!("a.py:5:{}: TS001 [*] ", char_col(a5, "\"frames\""))), "{run:?}");
    assert!(lines[0].contains("\"frames\""), "message names the key: {run:?}");
    assert!(lines[1].starts_with(&format!("b.py:1:{}: TS002 [~] ", char_col(b1, "**extra"))), "{run:?}");
    assert!(lines[1].contains("**extra"), "message names the spread: {run:?}");
    // The string content is TS007 (unsafe: it becomes a text block); the
    // key beside it has no fix marker until then: it needs a person.
    assert!(lines[2].starts_with(&format!("b.py:2:{}: TS007 [~] ", char_col(b2, "\"content\""))), "{run:?}");
    let manual = format!("b.py:2:{}: TS001 ", char_col(b2, "\"note\""));
    assert!(lines[3].starts_with(&manual) && !lines[3][manual.len()..].starts_with('['), "{run:?}");
    assert!(lines[4].starts_with("Found 4 violations in 2 files."), "{run:?}");
    assert!(lines[4].contains("[*] 1 ") && lines[4].contains("[~] 2 "), "{run:?}");
    assert_eq!(run.stderr, "", "{run:?}");
}

#[test]
fn missing_path_exits_2_and_the_other_files_are_still_reported() {
    let dir = tempdir();
    write(dir.path(), "a.py", VIOLATION);
    write(dir.path(), "z.py", VIOLATION);
    let run = toolshape(dir.path(), &["check", "a.py", "missing.py", "z.py"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.lines().any(|l| l.starts_with("error: missing.py: ")), "{run:?}");
    let col = char_col(VIOLATION, "\"extra\"");
    assert!(run.stdout.contains(&format!("a.py:1:{col}: TS001")), "{run:?}");
    assert!(run.stdout.contains(&format!("z.py:1:{col}: TS001")), "{run:?}");
    assert!(run.stdout.contains("Found 2 violations in 2 files."), "{run:?}");
    // A missing path alone is an error too, not a clean run.
    let run = toolshape(dir.path(), &["check", "nope"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("error: nope: "), "{run:?}");
}

#[test]
fn non_utf8_file_is_reported_with_its_path_and_the_run_goes_on() {
    let dir = tempdir();
    // A violation before the bad byte: nothing of this file may be reported.
    let mut bad = VIOLATION.as_bytes().to_vec();
    bad.extend_from_slice(b"s = '\xff\xfe'\n");
    write(dir.path(), "pkg/bad.py", bad);
    write(dir.path(), "pkg/good.py", VIOLATION);
    write(dir.path(), "pkg/later.py", VIOLATION);
    for format in ["text", "json", "github"] {
        let run = toolshape(dir.path(), &["check", "--format", format, "pkg"]);
        assert_eq!(run.code, 2, "{run:?}");
        let errors: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("error: ")).collect();
        assert_eq!(errors.len(), 1, "{run:?}");
        assert!(errors[0].starts_with("error: pkg/bad.py: "), "{run:?}");
        assert!(errors[0].contains("UTF-8"), "the reason names the encoding: {run:?}");
        assert!(!run.stdout.contains("bad.py"), "{run:?}");
        assert!(run.stdout.contains("pkg/good.py") && run.stdout.contains("pkg/later.py"), "{run:?}");
        if format == "json" {
            assert_eq!(run.json().len(), 2, "{run:?}");
        }
    }
}

#[test]
fn usage_errors_exit_2_and_print_nothing_on_stdout() {
    let dir = tempdir();
    write(dir.path(), "a.py", VIOLATION);
    for args in [
        &["check", "--format", "xml", "a.py"][..],
        &["check", "--color", "sometimes", "a.py"],
        &["check", "--no-such-flag", "a.py"],
        &["check", "--exclude", "[unclosed", "a.py"],
        &["frobnicate"],
        &[],
    ] {
        let run = toolshape(dir.path(), args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert_eq!(run.stdout, "", "{args:?}: {run:?}");
        assert!(!run.stderr.is_empty(), "{args:?}: {run:?}");
    }
}

// ----- formats --------------------------------------------------------------

#[test]
fn json_has_every_field_with_1_based_character_positions() {
    let dir = tempdir();
    let src = concat!(
        "# héllo — ünïcode 😀 in a comment\n",
        "s = \"naïve café 😀\"; r = {\"status\": \"success\", \"content\": [], \"clé\": 1}\n",
        "r2 = {\n",
        "    \"status\": \"success\",\n",
        "    \"content\": [],\n",
        "    \"multi\": (1,\n",
        "              2),\n",
        "}\n",
        "u = {\"status\": \"success\", \"content\": [], **extra}\n",
        "m = {\"status\": \"success\", \"content\": \"text\", \"note\": 1}\n",
    );
    write(dir.path(), "uni.py", src);
    let run = toolshape(dir.path(), &["check", "--format", "json", "uni.py"]);
    assert_eq!(run.code, 1, "{run:?}");
    let findings = run.json();
    assert_eq!(findings.len(), 5, "{run:?}");
    let fields =
        ["path", "code", "message", "line", "column", "end_line", "end_column", "key", "spread", "dict", "fixable"];
    for f in &findings {
        for name in fields {
            field(f, name);
        }
        for name in ["line", "column", "end_line", "end_column"] {
            num(field(f, "dict"), name);
        }
        assert_eq!(field(f, "path"), "uni.py");
        assert!(!field(f, "message").as_str().unwrap().is_empty());
    }
    assert_positions_point_at_source(src, &findings);
    let lines = python_lines(src);

    // The key after non-ASCII text: columns count characters, not bytes.
    let f = &findings[0];
    let l2 = &lines[1];
    assert_eq!((field(f, "code"), field(f, "key")), (&Value::from("TS001"), &Value::from("clé")));
    assert!(field(f, "spread").is_null());
    assert_eq!((num(f, "line"), num(f, "column")), (2, char_col(l2, "\"clé\"")));
    assert_eq!((num(f, "end_line"), num(f, "end_column")), (2, char_col(l2, "\"clé\"") + "\"clé\": 1".chars().count()));
    let dict = field(f, "dict");
    assert_eq!((num(dict, "line"), num(dict, "column")), (2, char_col(l2, "{")));
    assert_eq!((num(dict, "end_line"), num(dict, "end_column")), (2, char_end_after_last(l2, "}")));
    assert_eq!(field(f, "fixable"), "safe");

    // An entry spanning two lines ends on the second one.
    let f = &findings[1];
    assert_eq!(field(f, "key"), "multi");
    assert_eq!((num(f, "line"), num(f, "column")), (6, 5));
    assert_eq!((num(f, "end_line"), num(f, "end_column")), (7, char_end_after_last(&lines[6], ")")));
    let dict = field(f, "dict");
    assert_eq!((num(dict, "line"), num(dict, "column"), num(dict, "end_line"), num(dict, "end_column")), (3, 6, 8, 2));
    assert_eq!(field(f, "fixable"), "safe");

    // A spread: no key, its text in `spread`; unsafe (it could override status).
    let f = &findings[2];
    assert_eq!(field(f, "code"), "TS002");
    assert!(field(f, "key").is_null());
    assert_eq!(field(f, "spread"), "**extra");
    assert_eq!((num(f, "line"), num(f, "column")), (9, char_col(&lines[8], "**extra")));
    assert_eq!(field(f, "fixable"), "unsafe");

    // Content written as a string (TS007): its entry, key "content".
    let f = &findings[3];
    assert_eq!(
        (field(f, "code"), field(f, "key"), num(f, "line")),
        (&Value::from("TS007"), &Value::from("content"), 10)
    );
    assert_eq!((num(f, "column"), field(f, "fixable")), (char_col(&lines[9], "\"content\""), &Value::from("unsafe")));

    // Manual repair: fixable is null.
    let f = &findings[4];
    assert_eq!((field(f, "key"), num(f, "line")), (&Value::from("note"), 10));
    assert!(field(f, "fixable").is_null(), "{f}");
}

#[test]
fn json_of_a_clean_run_is_an_empty_array() {
    let dir = tempdir();
    write(dir.path(), "a.py", CLEAN);
    let run = toolshape(dir.path(), &["check", "--format", "json", "a.py"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.json().is_empty(), "{run:?}");
}

#[test]
fn positions_follow_python_line_breaks_and_ignore_the_bom() {
    let dir = tempdir();
    // `\r\n` and a lone `\r` both end a line for Python.
    write(dir.path(), "breaks.py", format!("a = 1\r\nb = 2\r{VIOLATION}"));
    // The byte-order mark is not part of the first line.
    write(dir.path(), "bom.py", format!("\u{feff}{VIOLATION}"));
    let run = toolshape(dir.path(), &["check", "--format", "json", "breaks.py", "bom.py"]);
    assert_eq!(run.code, 1, "{run:?}");
    let findings = run.json();
    let col = char_col(VIOLATION, "\"extra\"");
    let got: Vec<(String, usize, usize, usize)> = findings
        .iter()
        .map(|f| {
            (
                field(f, "path").as_str().unwrap().to_owned(),
                num(f, "line"),
                num(f, "column"),
                num(field(f, "dict"), "column"),
            )
        })
        .collect();
    assert_eq!(got, [("bom.py".to_owned(), 1, col, 5), ("breaks.py".to_owned(), 3, col, 5)], "{run:?}");
}

#[test]
fn github_annotations_have_the_workflow_command_shape() {
    let dir = tempdir();
    let src = "x = 1\nr = {\"status\": \"success\", \"content\": [], \"frames\": 3}\n";
    write(dir.path(), "a.py", src);
    let line = src.lines().nth(1).unwrap();
    let run = toolshape(dir.path(), &["check", "--format", "github", "a.py"]);
    assert_eq!(run.code, 1, "{run:?}");
    let col = char_col(line, "\"frames\"");
    let end = col + "\"frames\": 3".len();
    let expected = format!("::error file=a.py,line=2,col={col},endLine=2,endColumn={end},title=TS001::");
    assert_eq!(run.lines().len(), 1, "no summary line in github format: {run:?}");
    assert!(run.lines()[0].starts_with(&expected), "{run:?}");
    assert!(run.lines()[0].contains("\"frames\""), "{run:?}");
}

#[cfg(unix)]
#[test]
fn github_escapes_commas_and_colons_in_the_file_property() {
    let dir = tempdir();
    write(dir.path(), "d,1/a:b.py", VIOLATION);
    let run = toolshape(dir.path(), &["check", "--format", "github", "d,1"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.starts_with("::error file=d%2C1/a%3Ab.py,line=1,"), "{run:?}");
}

// ----- paths ------------------------------------------------------------------

#[test]
fn paths_are_shown_as_the_user_gave_them() {
    let dir = tempdir();
    write(dir.path(), "x/a.py", VIOLATION);
    let abs = dir.path().join("x");
    let abs = abs.to_str().unwrap();
    let col = char_col(VIOLATION, "\"extra\"");
    for (arg, shown) in [
        ("./x".to_owned(), "./x/a.py".to_owned()),
        ("x/".to_owned(), "x/a.py".to_owned()),
        ("x".to_owned(), "x/a.py".to_owned()),
        ("./x/a.py".to_owned(), "./x/a.py".to_owned()),
        (abs.to_owned(), format!("{abs}/a.py")),
    ] {
        let run = toolshape(dir.path(), &["check", &arg]);
        assert_eq!(run.code, 1, "{arg}: {run:?}");
        assert_eq!(run.lines()[0].split(": TS").next().unwrap(), format!("{shown}:1:{col}"), "{arg}: {run:?}");
        let run = toolshape(dir.path(), &["check", "--format", "json", &arg]);
        assert_eq!(field(&run.json()[0], "path"), shown.as_str(), "{arg}: {run:?}");
    }
    // No path: the current folder.
    let run = toolshape(dir.path(), &["check"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.lines()[0].split(':').next().unwrap().ends_with("x/a.py"), "{run:?}");
}

#[test]
fn output_is_sorted_and_deterministic() {
    let dir = tempdir();
    // Enough files that parallel checking would show any ordering race.
    for i in 0..60 {
        let extra = "\n".repeat(i % 7);
        write(dir.path(), &format!("m{:02}/f{}.py", 59 - i, i % 5), format!("{extra}{VIOLATION}{VIOLATION}"));
    }
    write(dir.path(), "b.py", VIOLATION);
    write(dir.path(), "a.py", format!("{VIOLATION}{CLEAN}{VIOLATION}"));
    for format in ["text", "json", "github"] {
        let first = toolshape(dir.path(), &["check", "--format", format, "."]);
        assert_eq!(first.code, 1, "{first:?}");
        for _ in 0..3 {
            let again = toolshape(dir.path(), &["check", "--format", format, "."]);
            assert_eq!(again.raw_stdout, first.raw_stdout, "{format}: output differs between runs");
        }
    }
    let run = toolshape(dir.path(), &["check", "--format", "json", "."]);
    let keys: Vec<(String, usize, usize)> = run
        .json()
        .iter()
        .map(|f| (field(f, "path").as_str().unwrap().to_owned(), num(f, "line"), num(f, "column")))
        .collect();
    assert_eq!(keys.len(), 60 * 2 + 1 + 2);
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "sorted by path, then position");

    // Files named in reverse order still come out sorted.
    let run = toolshape(dir.path(), &["check", "m59/f0.py", "b.py", "a.py"]);
    let paths: Vec<&str> =
        run.lines().iter().filter(|l| l.contains(": TS0")).map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(paths, ["a.py", "a.py", "b.py", "m59/f0.py", "m59/f0.py"], "{run:?}");
}

// ----- colour -----------------------------------------------------------------

const ESC: &str = "\x1b[";

#[test]
fn color_always_paints_and_never_or_piped_does_not() {
    let dir = tempdir();
    write(dir.path(), "a.py", VIOLATION);
    let always = toolshape(dir.path(), &["check", "--color", "always", "a.py"]);
    assert_eq!(always.code, 1, "{always:?}");
    assert!(always.stdout.contains(ESC), "{always:?}");
    // Stripped of escapes, it is the plain report.
    let plain = toolshape(dir.path(), &["check", "--color", "never", "a.py"]);
    assert!(!plain.stdout.contains('\x1b'), "{plain:?}");
    assert_eq!(strip_ansi(&always.stdout), plain.stdout);
    // auto (the default) with stdout piped: no colour.
    let piped = toolshape(dir.path(), &["check", "a.py"]);
    assert!(!piped.stdout.contains('\x1b'), "{piped:?}");
    let piped = toolshape(dir.path(), &["check", "--color", "auto", "a.py"]);
    assert!(!piped.stdout.contains('\x1b'), "{piped:?}");
    // Machine formats never get colour from auto.
    let json = toolshape(dir.path(), &["check", "--format", "json", "a.py"]);
    assert!(!json.stdout.contains('\x1b'), "{json:?}");
}

fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Runs toolshape on a pseudo-terminal with util-linux `script`, so that
/// `--color auto` sees a terminal; `None` when `script` is not available.
fn on_terminal(dir: &Path, args: &str, no_color: Option<&str>) -> Option<String> {
    let probe = Command::new("script").arg("--version").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return None;
    }
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &format!("'{BIN}' {args}"), "/dev/null"])
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("FORCE_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .stdin(Stdio::null());
    if let Some(value) = no_color {
        cmd.env("NO_COLOR", value);
    }
    let out = cmd.output().expect("script runs");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn no_color_is_honoured_on_a_terminal() {
    let dir = tempdir();
    write(dir.path(), "a.py", VIOLATION);
    let Some(auto) = on_terminal(dir.path(), "check a.py", None) else {
        support::skip("no_color_is_honoured_on_a_terminal", "util-linux `script` is not installed");
        return;
    };
    // The control: on a terminal, auto paints. Without it the NO_COLOR
    // assertions below would prove nothing.
    assert!(auto.contains(ESC), "auto on a terminal should paint: {auto:?}");
    let no_color = on_terminal(dir.path(), "check a.py", Some("1")).unwrap();
    assert!(no_color.contains("a.py:1:"), "{no_color:?}");
    assert!(!no_color.contains('\x1b'), "NO_COLOR=1 with auto: {no_color:?}");
    let never = on_terminal(dir.path(), "check --color never a.py", None).unwrap();
    assert!(never.contains("a.py:1:") && !never.contains('\x1b'), "{never:?}");
    // An empty NO_COLOR does not count (no-color.org).
    let empty = on_terminal(dir.path(), "check a.py", Some("")).unwrap();
    assert!(empty.contains(ESC), "{empty:?}");
}

// ----- walking ------------------------------------------------------------------

/// The paths in a text report, without the summary.
fn reported_paths(run: &Run) -> Vec<String> {
    let mut paths: Vec<String> =
        run.lines().iter().filter(|l| l.contains(": TS0")).map(|l| l.split(':').next().unwrap().to_owned()).collect();
    paths.dedup();
    paths
}

#[test]
fn walking_skips_ignored_hidden_venv_and_build_folders() {
    let dir = tempdir();
    let root = dir.path();
    std::fs::create_dir(root.join(".git")).unwrap();
    for rel in [
        "t/ok.py",
        "t/stub.pyi",
        "t/.dotfile.py",
        "t/notes.txt",
        "t/script",
        "t/.hidden/h.py",
        "t/env/lib/v.py",
        "t/build/b.py",
        "t/dist/d.py",
        "t/lib/site-packages/s.py",
        "t/node_modules/n.py",
        "t/.tox/x.py",
        "t/.nox/x.py",
        "t/ignored_dir/i.py",
        "t/gen_skip.py",
        "t/sub/gen_kept.py",
        "t/sub/local_skip.py",
    ] {
        write(root, rel, VIOLATION);
    }
    // A virtual environment is any folder holding pyvenv.cfg, whatever its name.
    write(root, "t/env/pyvenv.cfg", "home = /usr/bin\n");
    write(root, ".gitignore", "ignored_dir/\ngen_*.py\n!gen_kept.py\n");
    write(root, "t/sub/.gitignore", "local_skip.py\n");

    let run = toolshape(root, &["check", "t"]);
    assert_eq!(run.code, 1, "{run:?}");
    // Only hidden *folders* are skipped: a hidden file is still a Python file.
    assert_eq!(reported_paths(&run), ["t/.dotfile.py", "t/ok.py", "t/stub.pyi", "t/sub/gen_kept.py"], "{run:?}");

    let all = toolshape(root, &["check", "--no-ignore", "t"]);
    assert_eq!(
        reported_paths(&all),
        [
            "t/.dotfile.py",
            "t/.hidden/h.py",
            "t/.nox/x.py",
            "t/.tox/x.py",
            "t/build/b.py",
            "t/dist/d.py",
            "t/env/lib/v.py",
            "t/gen_skip.py",
            "t/ignored_dir/i.py",
            "t/lib/site-packages/s.py",
            "t/node_modules/n.py",
            "t/ok.py",
            "t/stub.pyi",
            "t/sub/gen_kept.py",
            "t/sub/local_skip.py",
        ],
        "{all:?}"
    );

    // --exclude, repeatable, by name or by path.
    let some = toolshape(root, &["check", "--exclude", "stub.pyi", "--exclude", "t/sub", "t"]);
    assert_eq!(reported_paths(&some), ["t/.dotfile.py", "t/ok.py"], "{some:?}");
    let none = toolshape(root, &["check", "--exclude", "*.py*", "t"]);
    assert_eq!(none.code, 0, "{none:?}");
    assert_eq!(none.lines(), ["All checked: no violations in 0 files."], "{none:?}");
}

#[test]
fn explicit_files_are_checked_whatever_their_extension_or_folder() {
    let dir = tempdir();
    write(dir.path(), "bin/script", VIOLATION);
    write(dir.path(), "bin/notes.txt", VIOLATION);
    write(dir.path(), "build/gen.py", VIOLATION);
    // Walking the folder skips files without a Python extension ...
    let walked = toolshape(dir.path(), &["check", "bin"]);
    assert_eq!(walked.code, 0, "{walked:?}");
    assert_eq!(walked.lines(), ["All checked: no violations in 0 files."], "{walked:?}");
    // ... naming them checks them, as does naming a file in a skipped folder.
    let named = toolshape(dir.path(), &["check", "bin/script", "bin/notes.txt", "build/gen.py"]);
    assert_eq!(named.code, 1, "{named:?}");
    assert_eq!(reported_paths(&named), ["bin/notes.txt", "bin/script", "build/gen.py"], "{named:?}");
}

#[test]
fn a_directory_named_like_a_python_file_is_walked_not_read() {
    let dir = tempdir();
    write(dir.path(), "pkg.py/inner.py", VIOLATION);
    write(dir.path(), "pkg.py/deeper.py/x.py", VIOLATION);
    for arg in [".", "pkg.py"] {
        let run = toolshape(dir.path(), &["check", arg]);
        assert_eq!(run.code, 1, "{arg}: {run:?}");
        assert_eq!(run.stderr, "", "{arg}: {run:?}");
        let paths = reported_paths(&run);
        assert_eq!(paths.len(), 2, "{arg}: {run:?}");
        assert!(paths[0].ends_with("pkg.py/deeper.py/x.py") && paths[1].ends_with("pkg.py/inner.py"), "{run:?}");
    }
}

#[cfg(unix)]
#[test]
fn symlink_cycles_terminate() {
    let dir = tempdir();
    write(dir.path(), "t/a/x.py", VIOLATION);
    std::os::unix::fs::symlink("..", dir.path().join("t/a/up")).unwrap();
    std::os::unix::fs::symlink("../a", dir.path().join("t/a/self")).unwrap();
    let limit = Duration::from_secs(30);
    let plain = toolshape_with_timeout(dir.path(), &["check", "t"], limit);
    assert_eq!(plain.code, 1, "links are not followed by default: {plain:?}");
    assert_eq!(reported_paths(&plain), ["t/a/x.py"], "{plain:?}");
    let followed = toolshape_with_timeout(dir.path(), &["check", "--follow-links", "t"], limit);
    assert!(matches!(followed.code, 1 | 2), "{followed:?}");
    assert_eq!(followed.stdout.matches(": TS001").count(), 1, "the file is reported once: {followed:?}");
}

// ----- the prefilter --------------------------------------------------------------

#[test]
fn no_prefilter_finds_keys_spelled_only_through_escapes() {
    // The default run skips any file in which `status` and `content` are
    // not both written between quotes (a fast prefilter). A key spelled only
    // through escapes or split by implicit concatenation, with no plain
    // literal of it in the file, is that prefilter's one documented blind
    // spot: the default run misses it and `--no-prefilter` finds it; a
    // plain word in a comment does not open the file.
    let dir = tempdir();
    let src = "r = {\"st\\x61tus\": \"success\", \"con\" \"tent\": [], \"hidden\": 1}\n";
    assert!(!src.contains("status") && !src.contains("content"));
    write(dir.path(), "esc.py", src);
    let default = toolshape(dir.path(), &["check", "esc.py"]);
    assert_eq!(default.code, 0, "the blind spot (documented): {default:?}");
    let full = toolshape(dir.path(), &["check", "--no-prefilter", "--format", "json", "esc.py"]);
    assert_eq!(full.code, 1, "{full:?}");
    let findings = full.json();
    assert_eq!(reported(&findings), [(1, "TS001".to_owned(), "hidden".to_owned())], "{full:?}");
    assert_eq!(num(&findings[0], "column"), char_col(src, "\"hidden\""));
    write(dir.path(), "commented.py", format!("# status, content\n{src}"));
    let commented = toolshape(dir.path(), &["check", "commented.py"]);
    assert_eq!(commented.code, 0, "the plain words in a comment: {commented:?}");

    // Once the words appear quoted anywhere (here in a comment), the
    // default run decodes the escapes itself and finds the same thing.
    write(dir.path(), "esc2.py", format!("# \"status\", 'content'\n{src}"));
    let default = toolshape(dir.path(), &["check", "esc2.py"]);
    assert_eq!(default.code, 1, "{default:?}");
}

// ----- syntax errors ----------------------------------------------------------------

#[test]
fn syntax_errors_elsewhere_do_not_hide_valid_dicts_but_broken_dicts_are_never_reported() {
    let dir = tempdir();
    let src = concat!(
        "good = {\"status\": 1, \"content\": [], \"before\": 1}\n",
        "def broken(:\n",
        "    pass\n",
        "bad = {\"status\": 1, \"content\": [], \"inside_error\": 1, \"x\": }\n",
        "also_bad = {\"status\": 1, \"content\": [(], \"inside_error2\": 1}\n",
        "good2 = {\"status\": 1, \"content\": [], \"after\": 1}\n",
    );
    write(dir.path(), "syn.py", src);
    for extra in [&[][..], &["--no-prefilter"]] {
        let mut args = vec!["check", "--format", "json"];
        args.extend_from_slice(extra);
        args.push("syn.py");
        let run = toolshape(dir.path(), &args);
        let findings = run.json();
        let keys: Vec<&str> = findings.iter().map(|f| field(f, "key").as_str().unwrap()).collect();
        assert!(!keys.contains(&"inside_error") && !keys.contains(&"inside_error2"), "{extra:?}: {run:?}");
        assert_eq!(reported(&findings), [(1, "TS001".into(), "before".into()), (6, "TS001".into(), "after".into())]);
        assert_eq!(run.code, 1, "{run:?}");
    }
}

// ----- the contract's edge cases ------------------------------------------------------

fn check_annotated_fixture(name: &str) {
    let path = manifest().join("tests/fixtures/cli").join(name);
    let src = std::fs::read_to_string(&path).unwrap();
    let expected = expectations(&src);
    assert!(!expected.is_empty());
    let dir = path.parent().unwrap();
    let run = toolshape(dir, &["check", "--format", "json", name]);
    assert_eq!(run.code, 1, "{run:?}");
    let findings = run.json();
    assert_eq!(reported(&findings), expected, "{name}: findings differ from the annotations");
    assert_positions_point_at_source(&src, &findings);
    let whole = toolshape(dir, &["check", "--format", "json", "--no-prefilter", name]);
    assert_eq!(whole.stdout, run.stdout, "{name}: --no-prefilter must agree where the keys are spelled out");
}

#[test]
fn key_spellings_follow_python_constant_string_semantics() {
    // Quote styles, prefixes, escapes, concatenation, parentheses; f-string,
    // bytes and other non-string keys ignored; duplicates; toolUseId; spreads.
    check_annotated_fixture("rules.py");
}

#[test]
fn tool_results_are_found_wherever_a_dict_display_can_stand() {
    // Returns, assignments, call arguments, nested dicts, lists, lambdas,
    // comprehensions, default arguments, class bodies, async def, ...
    check_annotated_fixture("contexts.py");
}

#[test]
fn a_file_named_twice_is_reported_once() {
    let dir = tempdir();
    write(dir.path(), "a.py", VIOLATION);
    let run = toolshape(dir.path(), &["check", ".", "a.py"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout.matches(": TS001").count(), 1, "{run:?}");
    assert_eq!(run.lines().last().unwrap().split('.').next().unwrap(), "Found 1 violation in 1 file", "{run:?}");
}

#[test]
fn completions_and_version_are_printed() {
    let dir = tempdir();
    for shell in ["bash", "zsh", "fish"] {
        let run = toolshape(dir.path(), &["completions", shell]);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(run.stdout.contains("toolshape") && run.stdout.contains("unsafe-fixes"), "{shell}: {run:?}");
    }
    let bad = toolshape(dir.path(), &["completions", "cmd.exe"]);
    assert_eq!(bad.code, 2, "{bad:?}");
    let version = toolshape(dir.path(), &["--version"]);
    assert_eq!(version.code, 0);
    assert_eq!(version.stdout.trim(), format!("toolshape {}", env!("CARGO_PKG_VERSION")));
}
