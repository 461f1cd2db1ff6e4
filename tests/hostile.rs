//! Hostile input (issue 6): files and paths that try to break toolshape.
//!
//! Every case runs the binary end to end in a temporary folder. Each must
//! end with a clear message naming the path, the run going on over the other
//! files, and nothing written that was not verified. Fixtures are generated
//! at test time; nothing big is committed.
//!
//! Slow cases are `#[ignore = "slow: ..."]`: run them with
//! `cargo test --release --test hostile -- --ignored`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod support;
use support::{Run, command, finish, tempdir, write};

/// A one-line tool result with one extra key, and its safe fix.
const TR: &str = "x = {\"status\": \"success\", \"content\": [], \"n\": 1}";
const TR_FIXED: &str = "x = {\"status\": \"success\", \"content\": [{\"json\": {\"n\": 1}}]}";

const LIMIT: Duration = Duration::from_secs(60);

fn ts(dir: &Path, args: &[&str]) -> Run {
    toolshape_with_timeout(dir, args, LIMIT)
}

/// Like `support::toolshape_with_timeout`, but reads stdout and stderr while
/// waiting: that helper only polls, so a run printing more than a pipe
/// buffer (64 KiB) blocks on its write and never finishes.
fn toolshape_with_timeout(dir: &Path, args: &[&str], limit: Duration) -> Run {
    let child = command(dir, args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("toolshape starts");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => finish(out.expect("output is readable")),
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            panic!("toolshape {args:?} did not finish within {limit:?}");
        }
    }
}

fn read(path: impl AsRef<Path>) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// Whether Python's parser accepts `path`; None without python3, after a
/// skip (once per run; a failure under `TOOLSHAPE_NO_SKIP`).
fn python_parses(path: &Path) -> Option<bool> {
    static SKIP: std::sync::Once = std::sync::Once::new();
    let Some(py) = support::find_python() else {
        SKIP.call_once(|| support::skip("hostile: the Python parse checks", "python3 (>= 3.10) not found"));
        return None;
    };
    let out = Command::new(py)
        .args(["-c", "import ast,sys; ast.parse(open(sys.argv[1],'rb').read())"])
        .arg(path)
        .output()
        .ok()?;
    Some(out.status.success())
}

/// Checks, fixes, fixes again and checks again `rel` holding `src`; returns
/// the fixed bytes. Asserts: one finding before, exit 0 after, a second fix
/// changes nothing, and the fixed file parses with Python when the original
/// does.
fn fix_cycle(src: &[u8], findings: usize) -> Vec<u8> {
    let dir = tempdir();
    let path = write(dir.path(), "t.py", src);
    let parsed_before = python_parses(&path);
    let check = ts(dir.path(), &["check", "--format", "json", "t.py"]);
    assert_eq!(check.code, if findings == 0 { 0 } else { 1 }, "{check:?}");
    assert_eq!(check.json().len(), findings, "{check:?}");
    let fix = ts(dir.path(), &["fix", "t.py"]);
    assert_eq!(fix.code, 0, "{fix:?}");
    assert_eq!(fix.stderr, "", "{fix:?}");
    let fixed = read(&path);
    if findings == 0 {
        assert_eq!(fixed, src, "a file without violations is not touched");
    }
    let again = ts(dir.path(), &["fix", "t.py"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(read(&path), fixed, "the second fix changed the file");
    let recheck = ts(dir.path(), &["check", "t.py"]);
    assert_eq!(recheck.code, 0, "{recheck:?}");
    if parsed_before == Some(true) {
        assert_eq!(
            python_parses(&path),
            Some(true),
            "the fixed file no longer parses:\n{}",
            String::from_utf8_lossy(&fixed)
        );
    }
    assert!(no_temp_files(dir.path()));
    fixed
}

/// Whether no `.toolshape-*.tmp` file is left below `root`.
fn no_temp_files(root: &Path) -> bool {
    let left = temp_files(root);
    assert!(left.is_empty(), "temporary files left behind: {left:?}");
    true
}

fn temp_files(root: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| {
            let n = e.file_name().to_string_lossy();
            n.contains(".toolshape-") && n.ends_with(".tmp")
        })
        .map(|e| e.into_path())
        .collect()
}

/// Files and their bytes, by path relative to a folder, sorted.
type Snapshot = Vec<(String, Vec<u8>)>;

/// Every regular file below `root` (relative path, bytes), sorted.
fn snapshot(root: &Path) -> Snapshot {
    let mut out: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned(), read(e.path())))
        .collect();
    out.sort();
    out
}

fn copy_tree(from: &Path, to: &Path) {
    for (rel, bytes) in snapshot(from) {
        write(to, &rel, bytes);
    }
}

// ----- encodings ------------------------------------------------------------------

#[test]
fn non_utf8_without_cookie_is_reported_and_skipped() {
    let dir = tempdir();
    let bad = b"x = {\"status\": \"success\", \"content\": [], \"n\": \"\xe9\"}\n".to_vec();
    write(dir.path(), "bad.py", &bad);
    write(dir.path(), "good.py", format!("{TR}\n"));
    let check = ts(dir.path(), &["check", "."]);
    assert_eq!(check.code, 2, "{check:?}");
    assert!(check.stderr.contains("bad.py") && check.stderr.contains("UTF-8"), "{check:?}");
    assert!(check.stdout.contains("good.py:1:"), "the other file is still checked: {check:?}");
    let fix = ts(dir.path(), &["fix", "."]);
    assert_eq!(fix.code, 2, "{fix:?}");
    assert!(fix.stderr.contains("bad.py"), "{fix:?}");
    assert_eq!(read(dir.path().join("bad.py")), bad, "the undecodable file is not touched");
    assert_eq!(read(dir.path().join("good.py")), format!("{TR_FIXED}\n").as_bytes());
}

/// A file in `encoding` (ASCII-compatible, declared by a PEP 263 cookie):
/// check finds the violation, fix edits only the dict and keeps every other
/// byte in that encoding.
fn cookie_case(cookie: &str, text_bytes: &[u8]) {
    let dir = tempdir();
    let mut src = format!("# -*- coding: {cookie} -*-\n# ").into_bytes();
    src.extend_from_slice(text_bytes);
    src.extend_from_slice(b"\ns = \"");
    src.extend_from_slice(text_bytes);
    src.extend_from_slice(b"\"\n");
    let head = src.clone();
    src.extend_from_slice(b"x = {\"status\": \"success\", \"content\": [], \"n\": \"");
    src.extend_from_slice(text_bytes);
    src.extend_from_slice(b"\"}\n# end ");
    src.extend_from_slice(text_bytes);
    src.push(b'\n');
    let path = write(dir.path(), "enc.py", &src);
    let check = ts(dir.path(), &["check", "--format", "json", "enc.py"]);
    assert_eq!(check.code, 1, "{check:?}");
    let findings = check.json();
    assert_eq!(findings.len(), 1, "{check:?}");
    assert_eq!(findings[0]["line"], 4, "{check:?}");
    let fix = ts(dir.path(), &["fix", "--augment-text=never", "enc.py"]);
    assert_eq!(fix.code, 0, "{fix:?}");
    let mut expected = head;
    expected.extend_from_slice(b"x = {\"status\": \"success\", \"content\": [{\"json\": {\"n\": \"");
    expected.extend_from_slice(text_bytes);
    expected.extend_from_slice(b"\"}}]}\n# end ");
    expected.extend_from_slice(text_bytes);
    expected.push(b'\n');
    assert_eq!(String::from_utf8_lossy(&read(&path)), String::from_utf8_lossy(&expected));
    assert_eq!(read(&path), expected);
    assert_ne!(python_parses(&path), Some(false), "the fixed file does not parse with Python");
    let again = ts(dir.path(), &["fix", "enc.py"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(read(&path), expected);
}

#[test]
fn coding_cookie_latin1_is_checked_and_fixed_as_bytes() {
    cookie_case("latin-1", b"caf\xe9 \xfc\xdf");
}

#[test]
fn coding_cookie_cp1252_is_checked_and_fixed_as_bytes() {
    cookie_case("cp1252", b"\x93quoted\x94 \x80 \x85");
}

#[test]
fn coding_cookie_koi8_r_is_checked_and_fixed_as_bytes() {
    cookie_case("koi8-r", b"\xf0\xd2\xc9\xd7\xc5\xd4");
}

// ----- odd but valid text -----------------------------------------------------------

#[test]
fn utf8_bom_is_kept() {
    let fixed = fix_cycle(format!("\u{feff}import os\n{TR}\n").as_bytes(), 1);
    assert_eq!(fixed, format!("\u{feff}import os\n{TR_FIXED}\n").as_bytes());
}

/// A multi-line dict that the fix rewrites over several lines.
const MULTI: &str = "def f(a):\n    return {\n        \"status\": \"success\",\n        \"content\": [{\"text\": \"t\"}],\n        \"frames\": a,\n    }\n";

#[test]
fn crlf_line_endings_are_kept() {
    let fixed = fix_cycle(format!("import os\r\n{TR}\r\ny = 2\r\n").as_bytes(), 1);
    assert_eq!(fixed, format!("import os\r\n{TR_FIXED}\r\ny = 2\r\n").as_bytes());
    let fixed = fix_cycle(MULTI.replace('\n', "\r\n").as_bytes(), 1);
    let text = String::from_utf8(fixed).unwrap();
    assert_eq!(text.matches('\n').count(), text.matches("\r\n").count(), "a bare LF crept in:\n{text:?}");
    assert!(text.contains("\"json\": {\"frames\": a}"), "{text:?}");
    assert!(!text.contains("\"frames\": a,\r\n    }"), "{text:?}");
}

#[test]
fn cr_only_line_endings_are_kept() {
    let fixed = fix_cycle(format!("import os\r{TR}\ry = 2\r").as_bytes(), 1);
    assert_eq!(fixed, format!("import os\r{TR_FIXED}\ry = 2\r").as_bytes());
    let fixed = fix_cycle(MULTI.replace('\n', "\r").as_bytes(), 1);
    let text = String::from_utf8(fixed).unwrap();
    assert!(!text.contains('\n'), "a LF crept into a CR-only file:\n{text:?}");
    assert!(text.contains("\"json\": {\"frames\": a}"), "{text:?}");
}

#[test]
fn mixed_line_endings_do_not_corrupt() {
    let src = format!("import os\r\nz = 1\r{TR}\ny = 2\r\n");
    let fixed = fix_cycle(src.as_bytes(), 1);
    assert_eq!(fixed, format!("import os\r\nz = 1\r{TR_FIXED}\ny = 2\r\n").as_bytes());
    let src = "def f(a):\r\n    return {\r        \"status\": \"success\",\n        \"content\": [{\"text\": \"t\"}],\r\n        \"frames\": a,\r    }\n";
    let fixed = String::from_utf8(fix_cycle(src.as_bytes(), 1)).unwrap();
    assert!(fixed.starts_with("def f(a):\r\n    return {"), "{fixed:?}");
    assert!(fixed.contains("\"json\": {\"frames\": a}"), "{fixed:?}");
}

#[test]
fn tabs_are_kept() {
    let src = MULTI.replace("        ", "\t\t").replace("    ", "\t");
    let fixed = String::from_utf8(fix_cycle(src.as_bytes(), 1)).unwrap();
    for line in fixed.lines() {
        assert!(!line.starts_with(' '), "space indentation in a tab-indented file:\n{fixed}");
    }
    assert!(fixed.contains("\"json\": {\"frames\": a}"), "{fixed:?}");
}

#[test]
fn form_feeds_are_kept() {
    let src = format!("import os\n\x0c\ndef f():\n    \x0c\n    return 1\n\x0c{TR}\n\x0c# end\n");
    let fixed = fix_cycle(src.as_bytes(), 1);
    assert_eq!(fixed, src.replace(TR, TR_FIXED).as_bytes());
}

#[test]
fn nul_bytes_are_reported_and_the_file_left_alone() {
    // Python refuses source with NUL bytes; toolshape reports such a file,
    // naming it, and never edits it. The other file is still fixed.
    for src in [
        format!("# a\0b\n{TR}\ns = \"\0\"\n"),
        "x = {\"status\": \"success\", \"content\": [], \"n\": \"\0\"}\n".into(),
    ] {
        let dir = tempdir();
        let path = write(dir.path(), "t.py", &src);
        write(dir.path(), "u.py", format!("{TR}\n"));
        let fix = ts(dir.path(), &["fix", "t.py", "u.py"]);
        assert_eq!(fix.code, 2, "{fix:?}");
        assert!(fix.stderr.contains("t.py") && fix.stderr.contains("NUL byte"), "{fix:?}");
        assert_eq!(read(&path), src.as_bytes());
        assert_eq!(read(dir.path().join("u.py")), format!("{TR_FIXED}\n").as_bytes());
    }
}

#[test]
fn no_final_newline() {
    let fixed = fix_cycle(format!("import os\n{TR}").as_bytes(), 1);
    assert_eq!(fixed, format!("import os\n{TR_FIXED}").as_bytes());
    let fixed = fix_cycle(MULTI.trim_end().as_bytes(), 1);
    assert!(!fixed.ends_with(b"\n"), "{:?}", String::from_utf8_lossy(&fixed));
}

#[test]
fn empty_file_and_comment_only_file() {
    fix_cycle(b"", 0);
    fix_cycle(b"# status content\n# {\"status\": \"success\", \"content\": [], \"n\": 1}\n#", 0);
    fix_cycle(b"\n\n\n", 0);
}

// ----- syntax errors ----------------------------------------------------------------

fn ts_parse(src: &str) -> tree_sitter::Tree {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&tree_sitter_python::LANGUAGE.into()).unwrap();
    parser.parse(src, None).unwrap()
}

/// Byte ranges of ERROR nodes, and positions of MISSING nodes.
fn error_ranges(src: &str) -> (Vec<std::ops::Range<usize>>, usize) {
    let tree = ts_parse(src);
    let mut errors = Vec::new();
    let mut count = 0;
    let mut cursor = tree.walk();
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            count += 1;
            errors.push(node.start_byte()..node.end_byte());
        }
        if cursor.goto_first_child() || cursor.goto_next_sibling() {
            continue;
        }
        loop {
            if !cursor.goto_parent() {
                return (errors, count);
            }
            if cursor.goto_next_sibling() {
                break;
            }
        }
    }
}

/// Byte offset of a 1-based line and column in characters.
fn offset_of(src: &str, line: u64, column: u64) -> usize {
    let start: usize = src.split_inclusive('\n').take(line as usize - 1).map(str::len).sum();
    start + src[start..].chars().take(column as usize - 1).map(char::len_utf8).sum::<usize>()
}

/// `src` holds `good` (a violating dict outside any error) once; check
/// reports nothing inside an error node, fix rewrites exactly `good` and adds
/// no error.
fn syntax_error_case(src: &str) {
    let good = "{\"status\": \"success\", \"content\": [], \"good\": 1}";
    let good_fixed = "{\"status\": \"success\", \"content\": [{\"json\": {\"good\": 1}}]}";
    assert_eq!(src.matches(good).count(), 1);
    let (errors, count) = error_ranges(src);
    assert!(count > 0, "the case has no syntax error:\n{src}");
    let dir = tempdir();
    let path = write(dir.path(), "broken.py", src);
    let check = ts(dir.path(), &["check", "--format", "json", "broken.py"]);
    assert_eq!(check.code, 1, "{check:?}");
    let findings = check.json();
    assert!(findings.iter().any(|f| f["key"] == "good"), "the dict outside the error is still found: {check:?}");
    for f in &findings {
        let d = &f["dict"];
        let start = offset_of(src, d["line"].as_u64().unwrap(), d["column"].as_u64().unwrap());
        let end = offset_of(src, d["end_line"].as_u64().unwrap(), d["end_column"].as_u64().unwrap());
        for e in &errors {
            let inside = start >= e.start && end <= e.end && e.start < e.end;
            let covers = e.start >= start && e.end <= end;
            assert!(!inside && !covers, "finding {f} in/over an error node at {e:?}:\n{src}");
        }
    }
    let fix = ts(dir.path(), &["fix", "--augment-text=never", "broken.py"]);
    assert!(fix.code == 0 || fix.code == 1, "{fix:?}");
    let fixed = String::from_utf8(read(&path)).unwrap();
    assert!(fixed.contains(good_fixed), "the dict outside the errors is fixed:\n{fixed}");
    assert!(error_ranges(&fixed).1 <= count, "the fix added a syntax error:\n{fixed}");
    // No edit inside (or across the edge of) an ERROR node, none at a
    // MISSING node's place.
    let diff = similar::TextDiff::from_chars(src, fixed.as_str());
    for op in diff.ops() {
        let (tag, old, _) = op.as_tag_tuple();
        if tag == similar::DiffTag::Equal {
            continue;
        }
        for e in &errors {
            let touches = if old.is_empty() {
                e.start < old.start && old.start < e.end
            } else if e.is_empty() {
                old.start < e.start && e.start < old.end
            } else {
                old.start < e.end && e.start < old.end
            };
            assert!(!touches, "edit {op:?} touches the error node {e:?} ({:?}):\n{src}\n---\n{fixed}", &src[e.clone()]);
        }
    }
    let again = ts(dir.path(), &["fix", "--augment-text=never", "broken.py"]);
    assert_eq!(read(&path), fixed.as_bytes(), "{again:?}");
}

const GOOD_FN: &str = "def good():\n    return {\"status\": \"success\", \"content\": [], \"good\": 1}\n";

#[test]
fn syntax_error_before_the_fix() {
    syntax_error_case(&format!(
        "def broken(:\n    return {{\"status\": \"success\", \"content\": [], \"bad\": 1}}\n\n\n{GOOD_FN}"
    ));
}

#[test]
fn syntax_error_after_the_fix() {
    syntax_error_case(&format!("{GOOD_FN}\n\nx = {{\"status\": \"success\", \"content\": [], \"bad\": 1\n"));
}

#[test]
fn syntax_error_inside_a_tool_result() {
    syntax_error_case(&format!(
        "x = {{\"status\": \"success\", \"content\": [] \"bad\": 1}}\n{GOOD_FN}y = {{\"status\": \"success\", \"content\": [], \"bad2\": ) }}\n"
    ));
}

#[test]
fn stray_garbage_lines() {
    syntax_error_case(&format!(
        ")))\n{GOOD_FN}\n@@@ $ ?\nz = {{\"status\": \"success\", \"content\": [], \"bad\": 1, ]]}}\nclass :\n"
    ));
}

#[test]
fn unterminated_string_and_bracket() {
    syntax_error_case(&format!(
        "{GOOD_FN}\ns = \"unterminated\nw = [{{\"status\": \"success\", \"content\": [], \"bad\": 1}}\n"
    ));
}

// ----- size -------------------------------------------------------------------------

fn timed(dir: &Path, args: &[&str], limit: Duration) -> (Run, Duration) {
    let start = Instant::now();
    let run = toolshape_with_timeout(dir, args, limit);
    let took = start.elapsed();
    eprintln!("timing: toolshape {} took {:.2?}", args.join(" "), took);
    (run, took)
}

/// The number in "Found N violations".
fn found(run: &Run) -> usize {
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("Found "))
        .unwrap_or_else(|| panic!("no summary: {}", support::truncate(&run.stdout, 2000)));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// `n` tool results, one per function, padded to about `pad` bytes each.
fn many_results(n: usize, pad: usize) -> String {
    results(n, pad, false)
}

/// [`many_results`], or its expected fix.
fn results(n: usize, pad: usize, fixed: bool) -> String {
    let mut s = String::with_capacity(n * (pad + 100));
    let filler = "#".repeat(pad.saturating_sub(2));
    for i in 0..n {
        if fixed {
            s.push_str(&format!("def f{i}(x):\n    {filler}\n    return {{\"status\": \"success\", \"content\": [{{\"json\": {{\"n{i}\": x}}}}]}}\n\n"));
        } else {
            s.push_str(&format!(
                "def f{i}(x):\n    {filler}\n    return {{\"status\": \"success\", \"content\": [], \"n{i}\": x}}\n\n"
            ));
        }
    }
    s
}

fn big_file_case(n: usize, pad: usize, min_bytes: usize) {
    let dir = tempdir();
    let src = many_results(n, pad);
    assert!(src.len() >= min_bytes, "{} bytes", src.len());
    eprintln!("size: {} tool results, {:.1} MB", n, src.len() as f64 / 1e6);
    let path = write(dir.path(), "big.py", &src);
    // A guard against a hang or a quadratic blow-up, not a timing test (speed
    // is measured in `benches/`): a 52 MB file takes a minute or more on a
    // slow CI machine, and a quadratic pass takes hours.
    let limit = Duration::from_secs(240);
    let (check, _) = timed(dir.path(), &["check", "big.py"], limit);
    assert_eq!(check.code, 1, "{}", support::truncate(&check.stderr, 2000));
    assert_eq!(found(&check), n);
    let (fix, _) = timed(dir.path(), &["fix", "--augment-text=never", "big.py"], limit);
    assert_eq!(fix.code, 0, "{}", support::truncate(&format!("{fix:?}"), 4000));
    let fixed = read(&path);
    assert!(fixed == results(n, pad, true).as_bytes(), "the fixed file is not the expected one");
    let (recheck, _) = timed(dir.path(), &["check", "big.py"], limit);
    assert_eq!(recheck.code, 0, "{}", support::truncate(&recheck.stdout, 2000));
}

#[test]
#[ignore = "slow: run with --ignored --release"]
fn fifty_megabyte_file() {
    big_file_case(100_000, 440, 50_000_000);
}

#[test]
fn ten_thousand_tool_results_in_one_file() {
    big_file_case(10_000, 0, 0);
}

#[test]
fn one_megabyte_line() {
    let long = "a".repeat(1 << 20);
    let src =
        format!("y = [{}]\nx = {{\"status\": \"success\", \"content\": [], \"n\": \"{long}\"}}\n", "1, ".repeat(1000));
    let fixed = String::from_utf8(fix_cycle(src.as_bytes(), 1)).unwrap();
    assert!(fixed.contains(&format!("\"n\": \"{long}\"")));
    assert!(!fixed.contains("\"content\": [], \"n\""));
}

/// A megabyte line of 25,000 small tool results: check and fix stay linear
/// in the findings on one line (this was quadratic). The line is far over
/// the line length, so every dict is exploded onto lines of its own.
#[test]
#[ignore = "slow: run with --ignored --release"]
fn megabyte_line_of_tool_results() {
    let line: String =
        (0..25_000).map(|i| format!("{{\"status\": \"success\", \"content\": [], \"k{i}\": {i}}}, ")).collect();
    assert!(line.len() > 1 << 20);
    let src = format!("x = [{line}]\n");
    let start = Instant::now();
    let fixed = String::from_utf8(fix_cycle(src.as_bytes(), 25_000)).unwrap();
    eprintln!("timing: check, fix, fix, check of a 1.2 MB line: {:.2?}", start.elapsed());
    assert_eq!(fixed.matches("{\"json\": {").count(), 25_000, "every dict gets its json block");
}

#[test]
#[ignore = "slow: run with --ignored --release"]
fn long_line_of_tool_results_with_a_suppression_comment() {
    // A comment on the line makes every dict's suppression look read it,
    // and the fix planner look for silenced code beside each dict: once
    // per line, not once per dict (10,000 dicts: quadratic work would take
    // minutes).
    let line: String =
        (0..10_000).map(|i| format!("{{\"status\": \"success\", \"content\": [], \"k{i}\": {i}}}, ")).collect();
    let src = format!("x = [{line}]  # noqa: TS009 # a note\n");
    let start = Instant::now();
    let fixed = String::from_utf8(fix_cycle(src.as_bytes(), 10_000)).unwrap();
    eprintln!("timing: check, fix, fix, check of a 0.5 MB line with a comment: {:.2?}", start.elapsed());
    assert_eq!(fixed.matches("{\"json\": {").count(), 10_000, "every dict gets its json block");
    assert!(fixed.contains("# noqa: TS009 # a note"), "the comment stays");
}

const DEEP: usize = 10_000;

#[test]
fn ten_thousand_nested_brackets() {
    let src = format!("x = {}{}\n", "[".repeat(DEEP), "]".repeat(DEEP));
    let dir = tempdir();
    write(dir.path(), "deep.py", &src);
    for args in [&["check", "deep.py"][..], &["check", "--no-prefilter", "deep.py"], &["fix", "deep.py"]] {
        let run = ts(dir.path(), args);
        assert_eq!(run.code, 0, "{run:?}");
    }
    // With the key bytes present, so the file is tokenized and parsed.
    let src = format!("# status content\nx = {}{}\n", "[({".repeat(DEEP / 3), "})]".repeat(DEEP / 3));
    write(dir.path(), "deep2.py", &src);
    let run = ts(dir.path(), &["check", "deep2.py"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = ts(dir.path(), &["fix", "deep2.py"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(read(dir.path().join("deep2.py")), src.as_bytes());
}

#[test]
fn tool_result_nested_in_ten_thousand_brackets() {
    let src = format!("x = {}{TR_DICT}{}\n", "[".repeat(DEEP), "]".repeat(DEEP));
    let dir = tempdir();
    let path = write(dir.path(), "deep.py", &src);
    let check = ts(dir.path(), &["check", "--format", "json", "deep.py"]);
    assert_eq!(check.code, 1, "{}", support::truncate(&format!("{check:?}"), 3000));
    assert_eq!(check.json().len(), 1);
    let fix = ts(dir.path(), &["fix", "--augment-text=never", "deep.py"]);
    assert_eq!(fix.code, 0, "{}", support::truncate(&format!("{fix:?}"), 3000));
    // The line is far longer than 88 characters: the dict is exploded.
    let exploded = "{\n    \"status\": \"success\",\n    \"content\": [\n        {\"json\": {\n            \"n\": 1,\n        }},\n    ],\n}";
    let expected = format!("x = {}{exploded}{}\n", "[".repeat(DEEP), "]".repeat(DEEP));
    assert!(read(&path) == expected.as_bytes(), "the fixed file is not the expected one");
    let again = ts(dir.path(), &["fix", "deep.py"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(read(&path) == expected.as_bytes());
}

const TR_DICT: &str = "{\"status\": \"success\", \"content\": [], \"n\": 1}";

#[test]
fn moved_value_ten_thousand_levels_deep() {
    let value = format!("{}1{}", "[".repeat(DEEP), "]".repeat(DEEP));
    let src = format!("x = {{\"status\": \"success\", \"content\": [], \"n\": {value}}}\n");
    let dir = tempdir();
    let path = write(dir.path(), "deep.py", &src);
    let check = ts(dir.path(), &["check", "--format", "json", "deep.py"]);
    assert_eq!(check.code, 1, "{}", support::truncate(&format!("{check:?}"), 3000));
    assert_eq!(check.json().len(), 1);
    let fix = ts(dir.path(), &["fix", "--augment-text=never", "deep.py"]);
    assert_eq!(fix.code, 0, "{}", support::truncate(&format!("{fix:?}"), 3000));
    let fixed = String::from_utf8(read(&path)).unwrap();
    assert_eq!(fixed.matches(&value).count(), 1, "the deep value is moved intact");
    assert!(fixed.contains("\"json\""));
    let recheck = ts(dir.path(), &["check", "deep.py"]);
    assert_eq!(recheck.code, 0, "{recheck:?}");
    let again = ts(dir.path(), &["fix", "deep.py"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(read(&path) == fixed.as_bytes());
}

// ----- paths ------------------------------------------------------------------------

#[test]
fn a_directory_named_x_py_is_walked() {
    let dir = tempdir();
    write(dir.path(), "x.py/inner.py", format!("{TR}\n"));
    for target in [".", "x.py"] {
        let run = ts(dir.path(), &["check", target]);
        assert_eq!(run.code, 1, "{run:?}");
        assert!(run.stdout.contains("inner.py:1:"), "{run:?}");
        assert_eq!(run.stderr, "", "{run:?}");
    }
    let fix = ts(dir.path(), &["fix", "x.py"]);
    assert_eq!(fix.code, 0, "{fix:?}");
    assert_eq!(read(dir.path().join("x.py/inner.py")), format!("{TR_FIXED}\n").as_bytes());
}

#[test]
fn a_missing_path_is_reported_and_the_rest_checked() {
    let dir = tempdir();
    write(dir.path(), "good.py", format!("{TR}\n"));
    let check = ts(dir.path(), &["check", "nope.py", "good.py"]);
    assert_eq!(check.code, 2, "{check:?}");
    assert!(check.stderr.contains("nope.py"), "{check:?}");
    assert!(check.stdout.contains("good.py:1:"), "{check:?}");
    let fix = ts(dir.path(), &["fix", "nope/", "good.py"]);
    assert_eq!(fix.code, 2, "{fix:?}");
    assert!(fix.stderr.contains("nope"), "{fix:?}");
    assert_eq!(read(dir.path().join("good.py")), format!("{TR_FIXED}\n").as_bytes());
}

#[test]
fn odd_file_names() {
    let dir = tempdir();
    let names = ["with space.py", "dir with space/ünïcødé 名前.py", "new\nline.py", "tab\tname.py", "-dash.py"];
    for n in names {
        write(dir.path(), n, format!("{TR}\n"));
    }
    let check = ts(dir.path(), &["check", "."]);
    assert_eq!(check.code, 1, "{check:?}");
    assert_eq!(found(&check), names.len(), "{check:?}");
    assert!(check.stdout.contains("ünïcødé 名前.py"), "{check:?}");
    let json = ts(dir.path(), &["check", "--format", "json", "."]);
    let paths: Vec<String> = json.json().iter().map(|f| f["path"].as_str().unwrap().to_owned()).collect();
    assert!(paths.iter().any(|p| p.ends_with("new\nline.py")), "{paths:?}");
    let fix = ts(dir.path(), &["fix", "."]);
    assert_eq!(fix.code, 0, "{fix:?}");
    for n in names {
        assert_eq!(read(dir.path().join(n)), format!("{TR_FIXED}\n").as_bytes(), "{n:?}");
    }
    // Named explicitly, after `--`.
    write(dir.path(), "-dash.py", format!("{TR}\n"));
    let run = ts(dir.path(), &["check", "--", "-dash.py", "new\nline.py"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(found(&run), 1, "{run:?}");
}

#[cfg(unix)]
#[test]
fn symlink_cycle_never_loops() {
    let dir = tempdir();
    write(dir.path(), "a/t.py", format!("{TR}\n"));
    std::os::unix::fs::symlink("..", dir.path().join("a/up")).unwrap();
    std::os::unix::fs::symlink("b2", dir.path().join("b1")).unwrap();
    std::os::unix::fs::symlink("b1", dir.path().join("b2")).unwrap();
    std::os::unix::fs::symlink("self.py", dir.path().join("self.py")).unwrap();
    for args in [&["check", "."][..], &["check", "--follow-links", "."], &["fix", "--follow-links", "--diff", "."]] {
        let run = toolshape_with_timeout(dir.path(), args, Duration::from_secs(20));
        // With --follow-links the looping links are reported (exit 2).
        let follow = args.contains(&"--follow-links");
        assert_eq!(run.code, if follow { 2 } else { 1 }, "{args:?}: {run:?}");
        if follow {
            assert!(run.stderr.contains("self.py") && run.stderr.contains("b1"), "{args:?}: {run:?}");
        }
        assert_eq!(found_or_diff(&run), 1, "{args:?}: one file, found once: {run:?}");
    }
    let run = toolshape_with_timeout(dir.path(), &["check", "b1", "self.py"], Duration::from_secs(20));
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("b1") && run.stderr.contains("self.py"), "{run:?}");
}

fn found_or_diff(run: &Run) -> usize {
    if run.stdout.starts_with("Found") || run.stdout.contains("\nFound ") {
        found(run)
    } else {
        run.stdout.matches("\n+++ ").count() + usize::from(run.stdout.starts_with("+++ "))
    }
}

#[cfg(unix)]
#[test]
fn symlink_out_of_the_tree_is_not_followed() {
    let dir = tempdir();
    let outside = write(dir.path(), "outside/ext.py", format!("{TR}\n"));
    write(dir.path(), "tree/own.py", format!("{TR}\n"));
    std::os::unix::fs::symlink("../outside/ext.py", dir.path().join("tree/link.py")).unwrap();
    std::os::unix::fs::symlink("../outside", dir.path().join("tree/linkdir")).unwrap();
    let check = ts(dir.path(), &["check", "tree"]);
    assert_eq!(check.code, 1, "{check:?}");
    assert_eq!(found(&check), 1, "only tree/own.py: {check:?}");
    let fix = ts(dir.path(), &["fix", "tree"]);
    assert_eq!(fix.code, 0, "{fix:?}");
    assert_eq!(read(&outside), format!("{TR}\n").as_bytes(), "the file outside the tree is not touched");
    assert!(std::fs::symlink_metadata(dir.path().join("tree/link.py")).unwrap().file_type().is_symlink());
}

#[cfg(unix)]
#[test]
fn fifo_and_device_are_skipped_without_blocking() {
    let dir = tempdir();
    write(dir.path(), "good.py", format!("{TR}\n"));
    let fifo = dir.path().join("pipe.py");
    let ok = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(ok.success());
    let limit = Duration::from_secs(20);
    // Walked: skipped without blocking.
    let run = toolshape_with_timeout(dir.path(), &["check", "."], limit);
    assert!(run.code == 1 || run.code == 2, "{run:?}");
    assert!(run.stdout.contains("good.py:1:"), "{run:?}");
    // Named explicitly: reported, with the path.
    for (name, args) in [
        ("pipe.py", vec!["check", "pipe.py", "good.py"]),
        ("/dev/null", vec!["check", "/dev/null", "good.py"]),
        ("/dev/zero", vec!["check", "/dev/zero", "good.py"]),
        ("/dev/null", vec!["fix", "/dev/null", "pipe.py", "good.py"]),
    ] {
        let run = toolshape_with_timeout(dir.path(), &args, limit);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(run.stderr.contains(name), "{args:?}: {run:?}");
        if args[0] == "check" {
            assert!(run.stdout.contains("good.py:1:"), "{args:?}: {run:?}");
        }
    }
    assert_eq!(read(dir.path().join("good.py")), format!("{TR_FIXED}\n").as_bytes());
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo_like());
}

trait FifoLike {
    fn is_fifo_like(&self) -> bool;
}
impl FifoLike for std::fs::FileType {
    fn is_fifo_like(&self) -> bool {
        use std::os::unix::fs::FileTypeExt;
        self.is_fifo()
    }
}

// ----- writes -----------------------------------------------------------------------

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[cfg(unix)]
fn set_mode(path: &Path, m: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(m)).unwrap();
}

#[cfg(unix)]
#[test]
fn read_only_file_is_reported_not_chmodded() {
    let dir = tempdir();
    let ro = write(dir.path(), "ro.py", format!("{TR}\n"));
    write(dir.path(), "rw.py", format!("{TR}\n"));
    set_mode(&ro, 0o444);
    let fix = ts(dir.path(), &["fix", "."]);
    assert_eq!(fix.code, 2, "{fix:?}");
    assert!(fix.stderr.contains("ro.py") && fix.stderr.contains("read-only"), "{fix:?}");
    assert_eq!(read(&ro), format!("{TR}\n").as_bytes());
    assert_eq!(mode(&ro), 0o444);
    assert_eq!(read(dir.path().join("rw.py")), format!("{TR_FIXED}\n").as_bytes());
    assert!(no_temp_files(dir.path()));
}

/// Whether this process is root (permission bits on folders do not stop it).
#[cfg(unix)]
fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0").unwrap_or(false)
}

#[cfg(unix)]
#[test]
fn unwritable_folder_is_reported() {
    let dir = tempdir();
    let locked = dir.path().join("locked");
    let file = write(dir.path(), "locked/t.py", format!("{TR}\n"));
    write(dir.path(), "open/t.py", format!("{TR}\n"));
    set_mode(&locked, 0o555);
    // Root ignores the folder's bits: run the binary as `nobody` then.
    let mut cmd = if is_root() {
        set_mode(dir.path(), 0o777);
        for f in ["locked/t.py", "open/t.py"] {
            Command::new("chown").args(["65534:65534"]).arg(dir.path().join(f)).status().unwrap();
        }
        Command::new("chown").args(["65534:65534"]).arg(dir.path().join("open")).status().unwrap();
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(support::BIN);
        c
    } else {
        Command::new(support::BIN)
    };
    cmd.args(["fix", "."]).current_dir(dir.path()).stdin(Stdio::null());
    let run = finish(cmd.output().unwrap());
    set_mode(&locked, 0o755);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("locked/t.py") || run.stderr.contains("locked"), "{run:?}");
    assert_eq!(read(&file), format!("{TR}\n").as_bytes(), "the file in the locked folder is intact");
    assert_eq!(read(dir.path().join("open/t.py")), format!("{TR_FIXED}\n").as_bytes(), "{run:?}");
    assert!(no_temp_files(dir.path()));
}

/// A tree of `files` files with `per_file` violating tool results each.
fn generate_tree(root: &Path, files: usize, per_file: usize) {
    for i in 0..files {
        let body = many_results(per_file, 40).replace("def f", &format!("def g{i}_"));
        write(root, &format!("pkg{}/m{i}.py", i % 10), body);
    }
}

#[cfg(unix)]
#[test]
fn two_fixes_at_once() {
    let dir = tempdir();
    let tree = dir.path().join("tree");
    let reference = dir.path().join("ref");
    generate_tree(&tree, 200, 50);
    copy_tree(&tree, &reference);
    let original = snapshot(&tree);
    let r = ts(&reference, &["fix", "."]);
    assert_eq!(r.code, 0, "{r:?}");
    let fixed = snapshot(&reference);
    let a = command(&tree, &["fix", "."]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let b = command(&tree, &["fix", "."]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let a = finish(a.wait_with_output().unwrap());
    let b = finish(b.wait_with_output().unwrap());
    for run in [&a, &b] {
        assert!(run.code == 0 || run.code == 2, "{run:?}");
        if run.code == 2 {
            assert!(run.stderr.contains("changed on disk"), "only lost races are errors: {run:?}");
        }
    }
    let now = snapshot(&tree);
    assert_eq!(now.len(), original.len());
    for ((rel, bytes), ((_, orig), (_, want))) in now.iter().zip(original.iter().zip(fixed.iter())) {
        assert!(bytes == orig || bytes == want, "{rel} is neither original nor fixed");
    }
    assert!(no_temp_files(&tree));
    // Whatever was left, a third run finishes the job.
    let c = ts(&tree, &["fix", "."]);
    assert_eq!(c.code, 0, "{c:?}");
    assert_eq!(snapshot(&tree), fixed);
}

/// Sends `signal` to a batch fix of a large tree once it has written its
/// first file (or after `limit`, or not at all if it ended first); every
/// file must end original or fully fixed, with no temporary file left.
#[cfg(unix)]
fn interrupted_fix(signal: &str, limit: Duration) {
    let dir = tempdir();
    let tree = dir.path().join("tree");
    generate_tree(&tree, 2_000, 60);
    let original = snapshot(&tree);
    let (reference_original, fixed) = batch_fix_reference();
    assert!(original == *reference_original, "the generated tree is the one the reference fixed");
    let written_at = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let files: Vec<_> = original.iter().map(|(rel, _)| tree.join(rel)).map(|p| (written_at(&p), p)).collect();
    let mut child = command(&tree, &["fix", "."]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let started = Instant::now();
    let mut polls = 0;
    while started.elapsed() < limit
        && child.try_wait().unwrap().is_none()
        && files.iter().all(|(at, path)| written_at(path) == *at)
    {
        polls += 1;
        std::thread::sleep(Duration::from_millis(2));
    }
    eprintln!("SIG{signal} after {:.2?} ({polls} looks at the tree)", started.elapsed());
    let sent = Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    eprintln!(
        "after SIG{signal}: {:?}, stderr: {}",
        out.status,
        support::truncate(&String::from_utf8_lossy(&out.stderr), 500)
    );
    let now = snapshot(&tree);
    let (mut orig_n, mut fixed_n) = (0, 0);
    assert_eq!(now.len(), original.len(), "files appeared or vanished");
    for ((rel, bytes), ((_, orig), (_, want))) in now.iter().zip(original.iter().zip(fixed.iter())) {
        assert!(bytes == orig || bytes == want, "{rel} is neither original nor fixed");
        if bytes == orig {
            orig_n += 1;
        } else {
            fixed_n += 1;
        }
    }
    eprintln!("after SIG{signal}: {fixed_n} files fixed, {orig_n} original");
    assert!(no_temp_files(&tree));
}

/// The tree [`interrupted_fix`] interrupts, before and after an
/// uninterrupted `fix`: made once for both signals (the fix takes most of
/// each test's time).
#[cfg(unix)]
fn batch_fix_reference() -> &'static (Snapshot, Snapshot) {
    static REFERENCE: std::sync::OnceLock<(Snapshot, Snapshot)> = std::sync::OnceLock::new();
    REFERENCE.get_or_init(|| {
        let dir = tempdir();
        let reference = dir.path().join("ref");
        generate_tree(&reference, 2_000, 60);
        let original = snapshot(&reference);
        let r = toolshape_with_timeout(&reference, &["fix", "."], Duration::from_secs(300));
        assert_eq!(r.code, 0, "{r:?}");
        (original, snapshot(&reference))
    })
}

#[cfg(unix)]
#[test]
#[ignore = "slow: run with --ignored --release"]
fn sigterm_during_batch_fix() {
    interrupted_fix("TERM", Duration::from_secs(120));
}

#[cfg(unix)]
#[test]
#[ignore = "slow: run with --ignored --release"]
fn sigint_during_batch_fix() {
    interrupted_fix("INT", Duration::from_secs(120));
}

/// A file changed on disk while `fix` works on it is never overwritten. The
/// moment cannot be chosen from outside, so the change lands at some point
/// of a slow fix; whichever point, the change must survive (unless it lands
/// in the instant between toolshape's last comparison and its rename).
#[test]
fn file_changed_during_fix_is_not_overwritten() {
    let dir = tempdir();
    let src = many_results(20_000, 0);
    let path = write(dir.path(), "big.py", &src);
    let child = command(dir.path(), &["fix", "big.py"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(150));
    let theirs = format!("# edited by someone else\n{src}");
    std::fs::write(&path, &theirs).unwrap();
    let run = finish(child.wait_with_output().unwrap());
    eprintln!("fix exit {}: {}", run.code, support::truncate(&run.stderr, 300));
    let now = read(&path);
    // Either the fix saw the file before the edit (and must not write over
    // it), or the edit landed before the fix read the file (the project pass
    // reads first): then the fixed file is the edited one, fixed.
    let edit_kept = now == theirs.as_bytes() || (now.starts_with(b"# edited by someone else\n") && run.code != 2);
    assert!(edit_kept, "the edit made during the fix was lost (exit {}; {})", run.code, run.stderr);
    if run.code == 2 {
        assert!(run.stderr.contains("big.py") && run.stderr.contains("changed on disk"), "{run:?}");
    }
    assert!(no_temp_files(dir.path()));
}
