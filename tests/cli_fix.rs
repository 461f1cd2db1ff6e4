//! End-to-end tests of `toolshape fix`: the binary rewrites files in
//! temporary folders, and its `--diff` output is fed to `git apply` and
//! `patch -p1`.
//!
//! The expected fixed files below were worked out by hand from the rule:
//! extra keys and spreads move, in order, into one `{"json": {...}}` block
//! appended to the content list (or merged into an existing json block), the
//! dict keeps its layout, quotes and line endings, and nothing else changes.

use std::path::Path;

mod support;
use std::process::{Command, Stdio};
use support::{tempdir, toolshape, write};

fn read(root: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(root.join(rel)).unwrap()
}

fn read_str(root: &Path, rel: &str) -> String {
    String::from_utf8(read(root, rel)).unwrap()
}

/// Every file below `root` (relative path, bytes), sorted, `.git` left out.
fn snapshot(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if entry.file_name() == ".git" {
                continue;
            }
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

// ----- hand-worked cases --------------------------------------------------------

/// One extra key in a one-line dict with an empty content list.
const ONE_LINE: &str = "x = {\"status\": \"success\", \"content\": [], \"frames\": 3}\n";
/// The key moves into a json block, the dict stays on one line.
const ONE_LINE_FIXED: &str = "x = {\"status\": \"success\", \"content\": [{\"json\": {\"frames\": 3}}]}\n";

/// A multi-line dict with two extra keys, and a single-quoted one-line dict.
const MULTI: &str = "\
def tool():
    return {
        \"status\": \"success\",
        \"content\": [{\"text\": \"done\"}],
        \"frames\": 12,
        \"errors\": 0,
    }


def other():
    return {'status': 'error', 'content': [{'text': 'x'}], 'code': 404}
";
/// Both keys' lines go; one json block holding both, in order, joins the
/// existing block (the list still fits on its line). The single-quoted dict
/// gets a single-quoted block.
const MULTI_FIXED: &str = "\
def tool():
    return {
        \"status\": \"success\",
        \"content\": [{\"text\": \"done\"}, {\"json\": {\"frames\": 12, \"errors\": 0}}],
    }


def other():
    return {'status': 'error', 'content': [{'text': 'x'}, {'json': {'code': 404}}]}
";

/// An existing json block receives the extra key instead of a second block.
const MERGE: &str = "x = {\"status\": \"success\", \"content\": [{\"json\": {\"a\": 1}}], \"b\": 2}\n";
const MERGE_FIXED: &str = "x = {\"status\": \"success\", \"content\": [{\"json\": {\"a\": 1, \"b\": 2}}]}\n";

/// A spread after "status" could override it: the fix is unsafe.
const UNSAFE: &str = "x = {\"status\": \"success\", \"content\": [], **extra}\n";
const UNSAFE_FIXED: &str = "x = {\"status\": \"success\", \"content\": [{\"json\": {**extra}}]}\n";

/// Content is a string, not a list of blocks: its key is for a person to
/// move, until the content is a list (TS007 makes it one, unsafely).
const MANUAL: &str = "x = {\"status\": \"success\", \"content\": \"text\", \"note\": 1}\n";

fn crlf(text: &str) -> String {
    text.replace('\n', "\r\n")
}

#[test]
fn fix_writes_the_expected_files() {
    let dir = tempdir();
    write(dir.path(), "one.py", ONE_LINE);
    write(dir.path(), "pkg/multi.py", MULTI);
    write(dir.path(), "merge.py", MERGE);
    let clean = "y = {\"status\": \"success\", \"content\": [{\"text\": \"t\"}]}\n";
    write(dir.path(), "clean.py", clean);
    let run = toolshape(dir.path(), &["fix", "--augment-text=never", "."]);
    assert_eq!(run.code, 0, "nothing left to fix: {run:?}");
    assert_eq!(run.stdout, "Fixed 4 tool results in 3 files.\n", "{run:?}");
    assert_eq!(run.stderr, "", "{run:?}");
    assert_eq!(read_str(dir.path(), "one.py"), ONE_LINE_FIXED);
    assert_eq!(read_str(dir.path(), "pkg/multi.py"), MULTI_FIXED);
    assert_eq!(read_str(dir.path(), "merge.py"), MERGE_FIXED);
    assert_eq!(read_str(dir.path(), "clean.py"), clean);
    // The fixed tree satisfies the contract.
    let check = toolshape(dir.path(), &["check", "."]);
    assert_eq!(check.code, 0, "{check:?}");
}

#[test]
fn a_second_fix_changes_nothing() {
    let dir = tempdir();
    write(dir.path(), "one.py", ONE_LINE);
    write(dir.path(), "multi.py", MULTI);
    write(dir.path(), "merge.py", MERGE);
    write(dir.path(), "unsafe.py", UNSAFE);
    // The example project too, all fixes included.
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/legacy_tools");
    for entry in std::fs::read_dir(&examples).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            let name = entry.file_name().to_string_lossy().into_owned();
            write(dir.path(), &format!("examples/{name}"), std::fs::read(entry.path()).unwrap());
        }
    }
    let first = toolshape(dir.path(), &["fix", "--unsafe-fixes", "."]);
    assert!(matches!(first.code, 0 | 1), "{first:?}");
    assert!(!first.last_line().starts_with("Fixed 0 "), "the first run fixes something: {first:?}");
    let after_first = snapshot(dir.path());
    for args in [&["fix", "--unsafe-fixes", "."][..], &["fix", "."]] {
        let second = toolshape(dir.path(), args);
        assert!(second.last_line().starts_with("Fixed 0 tool results in 0 files"), "{args:?}: {second:?}");
        assert_eq!(second.code, first.code, "the same leftovers remain: {second:?}");
        assert!(snapshot(dir.path()) == after_first, "{args:?}: a second fix changed files");
        let diff = toolshape(dir.path(), &["fix", "--diff", "--unsafe-fixes", "."]);
        assert_eq!((diff.code, diff.stdout.as_str()), (0, ""), "no diff after a fix: {diff:?}");
    }
}

// ----- --diff -------------------------------------------------------------------

#[test]
fn diff_writes_nothing_and_prints_the_patch_on_stdout() {
    let dir = tempdir();
    write(dir.path(), "one.py", ONE_LINE);
    write(dir.path(), "unsafe.py", UNSAFE);
    let before = snapshot(dir.path());
    let run = toolshape(dir.path(), &["fix", "--diff", "one.py", "unsafe.py"]);
    assert_eq!(run.code, 1, "a diff was printed: {run:?}");
    assert!(snapshot(dir.path()) == before, "--diff wrote something");
    assert_eq!(
        run.stdout,
        format!(
            "# toolshape: one.py:1: moves \"frames\" -> json; text not augmented: content has no {{\"text\": ...}} block\n\
             --- a/one.py\n+++ b/one.py\n@@ -1 +1 @@\n-{ONE_LINE}+{ONE_LINE_FIXED}"
        ),
        "only the safe fix, as a unified diff: {run:?}"
    );
    // The summary and the leftover (the unsafe fix) go to stderr.
    assert!(run.stderr.contains("1 tool result in 1 file"), "{run:?}");
    assert!(run.stderr.contains("unsafe.py:1:"), "{run:?}");

    // With --unsafe-fixes the diff covers both files.
    let both = toolshape(dir.path(), &["fix", "--diff", "--unsafe-fixes", "."]);
    assert_eq!(both.code, 1, "{both:?}");
    assert!(both.stdout.contains("--- a/one.py\n+++ b/one.py\n"), "{both:?}");
    assert!(both.stdout.contains("--- a/unsafe.py\n+++ b/unsafe.py\n"), "{both:?}");
    assert!(both.stdout.contains(&format!("+{UNSAFE_FIXED}")), "{both:?}");
    assert!(snapshot(dir.path()) == before, "--diff wrote something");

    // Nothing to fix: no diff, exit 0.
    let clean = tempdir();
    write(clean.path(), "a.py", ONE_LINE_FIXED);
    write(clean.path(), "b.py", UNSAFE);
    let none = toolshape(clean.path(), &["fix", "--diff", "."]);
    assert_eq!((none.code, none.stdout.as_str()), (0, ""), "{none:?}");

    // Errors win: exit 2, but the other file's diff is still printed.
    let err = toolshape(dir.path(), &["fix", "--diff", "one.py", "missing.py"]);
    assert_eq!(err.code, 2, "{err:?}");
    assert!(err.stdout.contains("\n--- a/one.py\n"), "{err:?}");
    assert!(err.stderr.contains("error: missing.py: "), "{err:?}");
    assert!(snapshot(dir.path()) == before, "--diff wrote something");
}

/// Files that exercise the diff format: one-line and multi-line fixes,
/// several hunks, CRLF, no newline at the end, a file in a subfolder, a file
/// with nothing to fix.
fn diff_corpus(root: &Path) -> Vec<&'static str> {
    let far_apart = format!("{ONE_LINE}{}{MERGE}", "pass\n".repeat(20));
    let files: Vec<(&str, String)> = vec![
        ("one.py", ONE_LINE.to_owned()),
        ("pkg/multi.py", MULTI.to_owned()),
        ("pkg/deeper/hunks.py", far_apart),
        ("crlf.py", crlf(MULTI)),
        ("no_newline.py", ONE_LINE.trim_end().to_owned()),
        ("clean.py", ONE_LINE_FIXED.to_owned()),
    ];
    for (rel, text) in &files {
        write(root, rel, text);
    }
    files.iter().map(|(rel, _)| *rel).collect()
}

fn tool_available(name: &str) -> bool {
    Command::new(name).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args([
            "-c",
            "user.name=toolshape tests",
            "-c",
            "user.email=tests@example.invalid",
            "-c",
            "core.autocrlf=false",
        ])
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("git runs")
}

fn git_ok(dir: &Path, args: &[&str]) {
    let out = git(dir, args);
    assert!(out.status.success(), "git {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
}

/// Applies `patch` in `dir` with `git apply` (`patch -p1` when `use_patch`).
fn apply(dir: &Path, patch: &[u8], use_patch: bool) -> Result<(), String> {
    use std::io::Write;
    let mut cmd = if use_patch {
        let mut c = Command::new("patch");
        c.args(["-p1", "--batch", "--no-backup-if-mismatch"]);
        c
    } else {
        let mut c = Command::new("git");
        c.args(["apply", "-v", "-"]);
        c
    };
    let mut child = cmd
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the patch tool starts");
    child.stdin.take().unwrap().write_all(patch).unwrap();
    let out = child.wait_with_output().unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
    }
}

/// For every file, and for the whole tree at once: the `--diff` patch applied
/// to a fresh checkout gives exactly what `fix` writes.
fn diff_round_trip(use_patch: bool, unsafe_fixes: bool) {
    let flags: &[&str] = if unsafe_fixes { &["--unsafe-fixes"] } else { &[] };
    // What fix writes, in a plain folder.
    let fixed_dir = tempdir();
    let files = diff_corpus(fixed_dir.path());
    write(fixed_dir.path(), "unsafe.py", UNSAFE);
    let mut args = vec!["fix"];
    args.extend_from_slice(flags);
    args.push(".");
    let fixed = toolshape(fixed_dir.path(), &args);
    assert!(matches!(fixed.code, 0 | 1), "{fixed:?}");
    let expected = snapshot(fixed_dir.path());

    // The same files, committed in a git repository.
    let repo = tempdir();
    git_ok(repo.path(), &["init", "-q"]);
    diff_corpus(repo.path());
    write(repo.path(), "unsafe.py", UNSAFE);
    git_ok(repo.path(), &["add", "-A"]);
    git_ok(repo.path(), &["commit", "-q", "-m", "legacy tools"]);
    let original = snapshot(repo.path());

    // File by file, as named from the repository root.
    for file in files.iter().copied().chain(["unsafe.py"]) {
        let mut args = vec!["fix", "--diff"];
        args.extend_from_slice(flags);
        args.push(file);
        let run = toolshape(repo.path(), &args);
        assert!(snapshot(repo.path()) == original, "--diff wrote something");
        let want = &expected.iter().find(|(p, _)| p == file).unwrap().1;
        if run.raw_stdout.is_empty() {
            assert_eq!(run.code, 0, "{file}: {run:?}");
            assert_eq!(want, &read(repo.path(), file), "{file}: no diff, yet fix changes it");
            continue;
        }
        assert_eq!(run.code, 1, "{file}: {run:?}");
        apply(repo.path(), &run.raw_stdout, use_patch).unwrap_or_else(|e| panic!("{file}: {e}\n{run:?}"));
        assert!(
            &read(repo.path(), file) == want,
            "{file}: the applied diff differs from what fix writes:\n{:?}\nvs\n{:?}",
            String::from_utf8_lossy(&read(repo.path(), file)),
            String::from_utf8_lossy(want)
        );
        git_ok(repo.path(), &["checkout", "-q", "--", "."]);
    }

    // The whole tree at once, named as `.` (paths come out as `./x`).
    assert!(snapshot(repo.path()) == original);
    let mut args = vec!["fix", "--diff"];
    args.extend_from_slice(flags);
    args.push(".");
    let run = toolshape(repo.path(), &args);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(!run.stdout.contains("a/./"), "headers drop the leading ./: {run:?}");
    apply(repo.path(), &run.raw_stdout, use_patch).unwrap_or_else(|e| panic!("{e}\n{run:?}"));
    assert!(snapshot(repo.path()) == expected, "the applied tree diff differs from what fix writes");
}

#[test]
fn diff_applies_with_git_apply_and_matches_fix() {
    if !tool_available("git") {
        support::skip("diff_applies_with_git_apply_and_matches_fix", "git is not installed");
        return;
    }
    diff_round_trip(false, false);
    diff_round_trip(false, true);
}

#[test]
fn diff_applies_with_patch_p1_and_matches_fix() {
    if !tool_available("git") || !tool_available("patch") {
        support::skip("diff_applies_with_patch_p1_and_matches_fix", "`patch` (or git) is not installed");
        return;
    }
    diff_round_trip(true, false);
    diff_round_trip(true, true);
}

#[test]
fn diff_of_a_bom_file_applies_with_git_apply() {
    if !tool_available("git") {
        support::skip("diff_of_a_bom_file_applies_with_git_apply", "git is not installed");
        return;
    }
    let repo = tempdir();
    git_ok(repo.path(), &["init", "-q"]);
    write(repo.path(), "bom.py", format!("\u{feff}{ONE_LINE}"));
    git_ok(repo.path(), &["add", "-A"]);
    git_ok(repo.path(), &["commit", "-q", "-m", "bom"]);
    let run = toolshape(repo.path(), &["fix", "--diff", "bom.py"]);
    assert_eq!(run.code, 1, "{run:?}");
    apply(repo.path(), &run.raw_stdout, false).unwrap_or_else(|e| panic!("{e}\n{run:?}"));
    assert_eq!(read_str(repo.path(), "bom.py"), format!("\u{feff}{ONE_LINE_FIXED}"));
}

// ----- unsafe fixes, manual repair, summaries ---------------------------------------

#[test]
fn unsafe_fixes_wait_for_unsafe_fixes_flag() {
    let dir = tempdir();
    write(dir.path(), "u.py", UNSAFE);
    let plain = toolshape(dir.path(), &["fix", "u.py"]);
    assert_eq!(plain.code, 1, "a violation remains: {plain:?}");
    assert_eq!(read_str(dir.path(), "u.py"), UNSAFE, "plain fix leaves it");
    let col = UNSAFE.find("**extra").unwrap() + 1;
    let leftover = plain.stdout.lines().next().unwrap();
    assert!(leftover.starts_with(&format!("u.py:1:{col}: TS002 ")), "{plain:?}");
    assert!(leftover.contains("unsafe"), "says why it was left: {plain:?}");
    assert!(leftover.contains("\"status\""), "the reason names the key the spread could override: {plain:?}");
    assert_eq!(plain.last_line(), "Fixed 0 tool results in 0 files; 1 unsafe fix not applied (use --unsafe-fixes).");

    let forced = toolshape(dir.path(), &["fix", "--unsafe-fixes", "u.py"]);
    assert_eq!(forced.code, 0, "{forced:?}");
    assert_eq!(forced.stdout, "Fixed 1 tool result in 1 file.\n", "{forced:?}");
    assert_eq!(read_str(dir.path(), "u.py"), UNSAFE_FIXED);
}

#[test]
fn manual_repair_is_reported_with_its_reason_and_exit_1() {
    let dir = tempdir();
    write(dir.path(), "m.py", MANUAL);
    {
        let run = toolshape(dir.path(), &["fix", "m.py"]);
        assert_eq!(run.code, 1, "{run:?}");
        assert_eq!(read_str(dir.path(), "m.py"), MANUAL, "left untouched");
        let col = MANUAL.find("\"note\"").unwrap() + 1;
        let line = run.stdout.lines().find(|l| l.contains(": TS001 ")).unwrap();
        assert!(line.starts_with(&format!("m.py:1:{col}: TS001 ")), "{run:?}");
        assert!(line.contains("manual repair"), "{run:?}");
        assert!(line.contains("content is a string"), "the reason says what is wrong: {run:?}");
        assert_eq!(
            run.last_line(),
            "Fixed 0 tool results in 0 files; 1 unsafe fix not applied (use --unsafe-fixes); 1 left for manual repair."
        );
    }
    // With unsafe fixes the string becomes a text block, and then the key
    // can move: nothing is left.
    let run = toolshape(dir.path(), &["fix", "--unsafe-fixes", "m.py"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(read_str(dir.path(), "m.py").contains("{\"json\": {\"note\": 1}}]"), "{run:?}");
}

#[test]
fn the_summary_counts_fixed_unsafe_and_manual() {
    let dir = tempdir();
    write(dir.path(), "a_one.py", ONE_LINE);
    write(dir.path(), "b_unsafe.py", UNSAFE);
    write(dir.path(), "c_manual.py", MANUAL);
    let run = toolshape(dir.path(), &["fix", "."]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.last_line(),
        "Fixed 1 tool result in 1 file; 2 unsafe fixes not applied (use --unsafe-fixes); 1 left for manual repair."
    );
    let leftovers: Vec<&str> = run.stdout.lines().filter(|l| l.contains(": TS0")).collect();
    assert_eq!(leftovers.len(), 3, "{run:?}");
    assert!(leftovers[0].starts_with("./b_unsafe.py:1:") && leftovers[1].starts_with("./c_manual.py:1:"), "{run:?}");
    assert!(leftovers[1].contains(" TS007 ") && leftovers[2].contains(" TS001 "), "{run:?}");
    assert_eq!(read_str(dir.path(), "a_one.py"), ONE_LINE_FIXED);
}

// ----- errors ----------------------------------------------------------------------

#[test]
fn errors_exit_2_and_the_other_files_are_still_fixed() {
    let dir = tempdir();
    write(dir.path(), "a.py", ONE_LINE);
    let mut bad = ONE_LINE.as_bytes().to_vec();
    bad.extend_from_slice(b"s = '\xff'\n");
    write(dir.path(), "bad.py", &bad);
    write(dir.path(), "z.py", MERGE);
    let run = toolshape(dir.path(), &["fix", "a.py", "missing.py", "bad.py", "z.py"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.lines().any(|l| l.starts_with("error: missing.py: ")), "{run:?}");
    assert!(run.stderr.lines().any(|l| l.starts_with("error: bad.py: ") && l.contains("UTF-8")), "{run:?}");
    assert_eq!(read(dir.path(), "bad.py"), bad, "an undecodable file is never written");
    assert_eq!(read_str(dir.path(), "a.py"), ONE_LINE_FIXED);
    assert_eq!(read_str(dir.path(), "z.py"), MERGE_FIXED);
    assert_eq!(run.last_line(), "Fixed 2 tool results in 2 files.", "{run:?}");
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[cfg(unix)]
#[test]
fn a_read_only_file_is_reported_and_left_untouched() {
    // Tests may run as root, where the read-only bit does not stop a write;
    // toolshape checks the bit itself, so the file must still be left alone.
    let dir = tempdir();
    let ro = write(dir.path(), "ro.py", ONE_LINE);
    set_mode(&ro, 0o444);
    write(dir.path(), "rw.py", ONE_LINE);
    let run = toolshape(dir.path(), &["fix", "ro.py", "rw.py"]);
    assert_eq!(run.code, 2, "{run:?}");
    let error = run.stderr.lines().find(|l| l.starts_with("error: ro.py: ")).unwrap_or_else(|| panic!("{run:?}"));
    assert!(error.contains("read-only"), "{run:?}");
    assert_eq!(read_str(dir.path(), "ro.py"), ONE_LINE);
    assert_eq!(mode(&ro), 0o444);
    assert_eq!(read_str(dir.path(), "rw.py"), ONE_LINE_FIXED, "the other file is fixed");
    // --diff writes nothing, so a read-only file is no problem there.
    let diff = toolshape(dir.path(), &["fix", "--diff", "ro.py"]);
    assert_eq!(diff.code, 1, "{diff:?}");
    assert!(diff.stdout.contains("\n--- a/ro.py\n"), "{diff:?}");
    set_mode(&ro, 0o644);
}

#[cfg(unix)]
#[test]
fn fix_keeps_file_permissions_and_leaves_no_temporary_files() {
    let dir = tempdir();
    let exe = write(dir.path(), "tool.py", format!("#!/usr/bin/env python3\n{ONE_LINE}"));
    set_mode(&exe, 0o755);
    let private = write(dir.path(), "private.py", ONE_LINE);
    set_mode(&private, 0o600);
    let run = toolshape(dir.path(), &["fix", "."]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(read_str(dir.path(), "tool.py"), format!("#!/usr/bin/env python3\n{ONE_LINE_FIXED}"));
    assert_eq!(read_str(dir.path(), "private.py"), ONE_LINE_FIXED);
    assert_eq!(mode(&exe), 0o755);
    assert_eq!(mode(&private), 0o600);
    let names: Vec<String> = snapshot(dir.path()).into_iter().map(|(p, _)| p).collect();
    assert_eq!(names, ["private.py", "tool.py"], "no temporary file is left behind");
}

#[test]
fn crlf_files_stay_crlf() {
    let dir = tempdir();
    write(dir.path(), "crlf.py", crlf(MULTI));
    write(dir.path(), "one.py", crlf(ONE_LINE));
    let run = toolshape(dir.path(), &["fix", "--augment-text=never", "."]);
    assert_eq!(run.code, 0, "{run:?}");
    let fixed = read_str(dir.path(), "crlf.py");
    assert_eq!(fixed, crlf(MULTI_FIXED));
    assert_eq!(fixed.matches('\n').count(), fixed.matches("\r\n").count(), "no bare LF");
    assert_eq!(read_str(dir.path(), "one.py"), crlf(ONE_LINE_FIXED));
}

#[test]
fn fix_augments_the_text_block_by_default() {
    let dir = tempdir();
    let src =
        "def stop(hz):\n    return {\"status\": \"success\", \"content\": [{\"text\": \"Stopped.\"}], \"hz\": hz}\n";
    write(dir.path(), "stop.py", src);
    let diff = toolshape(dir.path(), &["fix", "--diff", "stop.py"]);
    assert!(
        diff.stdout.starts_with("# toolshape: stop.py:2: moves \"hz\" -> json; text augmented with hz\n"),
        "the diff names what happened to the text: {diff:?}"
    );
    let run = toolshape(dir.path(), &["fix", "stop.py"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        read_str(dir.path(), "stop.py"),
        "def stop(hz):\n    return {\n        \"status\": \"success\",\n        \"content\": [{\"text\": f\"Stopped. (hz={hz})\"}, {\"json\": {\"hz\": hz}}],\n    }\n"
    );
    write(dir.path(), "stop.py", src);
    toolshape(dir.path(), &["fix", "--augment-text=never", "stop.py"]);
    assert!(!read_str(dir.path(), "stop.py").contains("(hz="), "--augment-text=never leaves the text alone");
}

#[test]
fn a_bom_file_keeps_its_bom() {
    let dir = tempdir();
    write(dir.path(), "bom.py", format!("\u{feff}{MULTI}"));
    let run = toolshape(dir.path(), &["fix", "--augment-text=never", "bom.py"]);
    assert_eq!(run.code, 0, "{run:?}");
    let bytes = read(dir.path(), "bom.py");
    assert!(bytes.starts_with(b"\xef\xbb\xbf"), "the BOM is kept");
    assert_eq!(String::from_utf8(bytes).unwrap(), format!("\u{feff}{MULTI_FIXED}"), "exactly one BOM");
}

#[test]
fn a_file_named_twice_is_fixed_once() {
    let dir = tempdir();
    for attempt in 0..20 {
        write(dir.path(), "a.py", ONE_LINE);
        let run = toolshape(dir.path(), &["fix", ".", "a.py"]);
        assert_eq!(read_str(dir.path(), "a.py"), ONE_LINE_FIXED, "attempt {attempt}: {run:?}");
        assert_eq!(run.code, 0, "attempt {attempt}: {run:?}");
        assert_eq!(run.stderr, "", "attempt {attempt}: {run:?}");
    }
}

/// Runs the binary with `input` on stdin.
fn with_stdin(dir: &Path, args: &[&str], input: &str) -> (i32, String, String) {
    use std::io::Write;
    let mut child = std::process::Command::new(support::BIN)
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn stdin_mode_checks_and_fixes_under_the_given_name() {
    let dir = tempdir();
    // The project's line length applies as it would to the named file.
    write(dir.path(), "pyproject.toml", "[tool.ruff]\nline-length = 50\n");
    let src = "x = {\"status\": \"success\", \"content\": [], \"n\": 1}\n";
    let (code, out, _) = with_stdin(dir.path(), &["check", "--stdin-filename", "pkg/a.py", "-"], src);
    assert_eq!(code, 1);
    assert!(out.starts_with("pkg/a.py:1:42: TS001"), "{out}");
    let (code, out, err) = with_stdin(dir.path(), &["fix", "--stdin-filename", "pkg/a.py", "-"], src);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out, "x = {\n    \"status\": \"success\",\n    \"content\": [{\"json\": {\"n\": 1}}],\n}\n",
        "exploded at 50 columns"
    );
    assert!(!dir.path().join("pkg/a.py").exists(), "stdin mode writes no file");
    let (code, out, err) = with_stdin(
        dir.path(),
        &["fix", "--stdin-filename", "b.py", "-"],
        "y = {\"status\": 1, \"content\": [], **e}\n",
    );
    assert_eq!(code, 1, "an unsafe fix is left: {err}");
    assert_eq!(out, "y = {\"status\": 1, \"content\": [], **e}\n");
    assert!(err.contains("b.py:1:") && err.contains("unsafe fix not applied"), "{err}");
}

#[test]
fn summary_md_lists_fixes_and_leftovers_with_links() {
    let dir = tempdir();
    write(dir.path(), "a.py", "def f(n):\n    return {\"status\": \"success\", \"content\": [], \"n\": n}\n");
    write(dir.path(), "b.py", "y = {\"status\": 1, \"content\": [], **e}\n");
    let run = toolshape(dir.path(), &["fix", "--summary-md", "summary.md", "a.py", "b.py"]);
    assert_eq!(run.code, 1, "{run:?}");
    let md = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(md.starts_with("## toolshape:"), "{md}");
    assert!(md.contains("Fixed 1 tool result in 1 file; 1 unsafe fix not applied"), "{md}");
    assert!(md.contains("| [`a.py:2`](a.py#L2) | `\"n\"` |"), "{md}");
    assert!(md.contains("### Left for a person"), "{md}");
    assert!(md.contains("- [`b.py:1`](b.py#L1) TS002 `**e` — unsafe fix not applied"), "{md}");
}

#[test]
fn summary_links_point_at_the_lines_of_the_fixed_files() {
    // The first fix explodes onto several lines (line length 40), so every
    // later dict of the file moves down: links must follow.
    let src = "a = {\"status\": \"success\", \"content\": [{\"text\": \"t\"}], \"first\": 1, \"second\": 2}\n\
               b = {\"status\": \"success\", \"content\": [], \"third\": 3}\n\
               c = {\"status\": 1, \"content\": [], **left}\n";
    let dir = tempdir();
    write(dir.path(), "pyproject.toml", "[tool.toolshape]\nline-length = 40\naugment-text = \"never\"\n");
    write(dir.path(), "my tools/a.py", src);
    let base = "https://github.com/o/r/blob/toolshape/fix";
    let run = toolshape(dir.path(), &["fix", "--summary-md", "s.md", "--summary-link-base", base, "my tools"]);
    assert_eq!(run.code, 1, "{run:?}");
    let fixed = std::fs::read_to_string(dir.path().join("my tools/a.py")).unwrap();
    let lines: Vec<&str> = fixed.lines().collect();
    assert!(lines.len() > 3, "the first fix is exploded: {fixed}");
    let md = std::fs::read_to_string(dir.path().join("s.md")).unwrap();
    let prefix = format!("({base}/my%20tools/a.py#L");
    let mut linked = Vec::new();
    for (at, _) in md.match_indices(&prefix) {
        let rest = &md[at + prefix.len()..];
        let line: usize = rest[..rest.find(')').unwrap()].parse().unwrap();
        linked.push(lines[line - 1].split(' ').next().unwrap().to_owned());
    }
    assert_eq!(linked, ["a", "b", "c"], "each link lands on its dict's first line:\n{md}\n{fixed}");
    let run = toolshape(dir.path(), &["fix", "--summary-link-base", base]);
    assert_eq!(run.code, 2, "the link base needs --summary-md: {run:?}");
}

/// From stdin, a fix whose keys the project reads is unsafe: those reads
/// stand in other files, which a fix of stdin cannot rewrite.
#[test]
fn stdin_mode_keeps_fixes_whose_keys_are_read_unsafe() {
    let dir = tempdir();
    write(dir.path(), "pyproject.toml", "[project]\nname = 'p'\n");
    let tool = "def probe():\n    return {\"status\": \"success\", \"content\": [{\"text\": \"x\"}], \"depth\": 3}\n";
    write(dir.path(), "pkg/tools.py", tool);
    write(
        dir.path(),
        "tests/test_tools.py",
        "from pkg.tools import probe\n\n\ndef test():\n    assert probe()[\"depth\"] == 3\n",
    );
    let (code, out, err) = with_stdin(dir.path(), &["fix", "--stdin-filename", "pkg/tools.py", "-"], tool);
    assert_eq!((code, out.as_str()), (1, tool), "{err}");
    assert!(
        err.contains(
            "tests/test_tools.py:5 reads probe()[\"depth\"] (reads in other files cannot be rewritten from stdin)"
        ),
        "{err}"
    );
    let (code, out, _) =
        with_stdin(dir.path(), &["check", "--format", "json", "--stdin-filename", "pkg/tools.py", "-"], tool);
    assert_eq!(code, 1);
    let findings: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(findings[0]["fixable"], "unsafe", "{out}");
    assert_eq!(findings[0]["reads"][0]["path"], "tests/test_tools.py", "{out}");
    // Given as a path instead, the same fix is safe: the read is rewritten.
    let run = support::toolshape(dir.path(), &["fix", "."]);
    assert!(run.stdout.contains("rewrote 1 read"), "{run:?}");
}
