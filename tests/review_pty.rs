//! End-to-end tests of `toolshape fix --interactive` in a real
//! pseudo-terminal: the binary is started in a pty, the offers and diffs are
//! read off the screen, keys are typed, and the files are checked afterwards
//! byte for byte. Without a terminal the command must refuse.
//!
//! Inputs and the expected results of the decisions live in
//! `tests/fixtures/review/`; `--augment-text never` keeps the byte-exact
//! expectations about moving keys only. Every wait has a timeout, so a hung
//! review fails the test instead of stalling it.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use expectrl::process::unix::{Signal, WaitStatus};
use expectrl::session::OsSession;
use expectrl::{Any, ControlCode, Eof, Expect, Session};

mod support;

const BIN: &str = env!("CARGO_BIN_EXE_toolshape");

/// How long any one expected output may take to appear: generous, since
/// these run beside the heaviest tests on two cores (10 s timed out once
/// under that load); a hung session still fails.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The question that ends every offer.
const PROMPT: &str = "Apply this fix?";

/// The one-line legend after the question (`Tab remedy` stands after
/// `s suppress` where an offer has another remedy).
const LEGEND: &str = "a rest of file, d skip file, k same keys, A all safe, q quit, ? help]";

/// The legend's start, the same for every offer.
const LEGEND_START: &str = "[y apply, n skip, e edit, s suppress, ";

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/review").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A temporary folder holding `files` (name, contents).
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

/// Names of the files in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// Starts `toolshape fix --interactive ARGS` in a pty inside `dir`.
fn start(dir: &Path, args: &[&str]) -> OsSession {
    start_with(dir, args, None, 500)
}

/// [`start`] with `editor` as `$EDITOR` (none: neither `$VISUAL` nor
/// `$EDITOR` is set) in a window `rows` lines tall.
fn start_with(dir: &Path, args: &[&str], editor: Option<&Path>, rows: u16) -> OsSession {
    // The window gets its size inside the pty, before toolshape starts: set
    // from outside after the spawn, a toolshape started first (a loaded
    // machine) read the pty's default size, and an offer meant to page did
    // not (the test waited for its pager's prompt until it timed out).
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(format!("stty rows {rows} cols 120 && exec \"$0\" \"$@\"")).arg(BIN);
    cmd.args(["fix", "--interactive"]).args(args).current_dir(dir).env_remove("NO_COLOR").env("TERM", "xterm");
    cmd.env_remove("VISUAL").env_remove("EDITOR");
    if let Some(editor) = editor {
        cmd.env("EDITOR", editor);
    }
    let mut session = Session::spawn(cmd).expect("toolshape starts in a pty");
    session.set_expect_timeout(Some(TIMEOUT));
    // Tall enough that no offer pages, unless a test pages on purpose.
    session.get_process_mut().set_window_size(120, rows).expect("a window size");
    session
}

/// Text of what `expect` consumed, for failure messages.
fn screen(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace('\r', "")
}

/// Waits for `text`, returning what came before it (and the match).
fn see(session: &mut OsSession, text: &str) -> String {
    match session.expect(text) {
        Ok(found) => screen(found.before()) + text,
        Err(e) => panic!("waiting for {text:?}: {e}"),
    }
}

/// Waits for the offer whose header starts with `header`
/// (`[1/3] ./tools.py:9`) and its question with the legend, returns the
/// offer's text, and types `key`.
fn answer(session: &mut OsSession, header: &str, key: &str) -> String {
    let mut shown = see(session, header);
    shown += &see(session, PROMPT);
    shown += &see(session, LEGEND_START);
    shown += &see(session, LEGEND);
    session.send(key).unwrap();
    shown
}

/// Reads to the end of the output and returns it with the exit status.
fn finish(session: &mut OsSession) -> (String, i32) {
    let rest = match session.expect(Eof) {
        Ok(found) => screen(found.as_bytes()),
        Err(e) => panic!("waiting for the review to end: {e}"),
    };
    let status = match session.get_process().wait().unwrap() {
        WaitStatus::Exited(_, code) => code,
        other => panic!("toolshape did not exit normally: {other:?}\n{rest}"),
    };
    (rest, status)
}

#[test]
fn typed_decisions_compose_and_each_offer_shows_its_diff() {
    let original = fixture("tools.py");
    let dir = tree(&[("tools.py", &original), ("unsafe.py", &fixture("unsafe.py"))]);
    let mut session = start(dir.path(), &["--color", "never", "--augment-text", "never"]);

    let first = answer(&mut session, "[1/5] ./tools.py:9 safe fix", "y");
    assert!(first.contains("  resolves: TS001 \"count\""), "{first}");
    assert!(first.contains("  moves: \"count\" -> json (exactly the flagged entries; none left after)"), "{first}");
    assert!(first.contains("@@ -6,7 +6,10 @@"), "{first}");
    assert!(
        first.contains(
            "-    return {\"status\": \"success\", \"content\": [{\"text\": \"scanned\"}], \"count\": len(files)}"
        ),
        "{first}"
    );
    assert!(
        first.contains("+        \"content\": [{\"text\": \"scanned\"}, {\"json\": {\"count\": len(files)}}],"),
        "{first}"
    );

    // Line numbers follow the accepted fix (3 lines longer).
    let second = answer(&mut session, "[2/5] ./tools.py:18 safe fix", "n");
    assert!(second.contains("+                \"bytes\": size,  # for the dashboard"), "{second}");
    answer(&mut session, "[3/5] ./tools.py:28 safe fix", "y");
    see(&mut session, "Wrote ./tools.py (2 fixes applied).");
    assert_eq!(read(dir.path(), "tools.py"), fixture("tools.first_and_third.py"), "written as soon as decided");

    let unsafe_offer = answer(&mut session, "[4/5] ./unsafe.py:6 UNSAFE fix", "d");
    assert!(unsafe_offer.contains("  unsafe: the spread `**extra` stands after \"status\""), "{unsafe_offer}");
    see(&mut session, "[5/5] ./unsafe.py:11 skipped by `d`");
    let (rest, status) = finish(&mut session);
    assert!(rest.contains("  ./tools.py: 2 applied, 1 skipped — written"), "{rest}");
    assert!(rest.contains("  ./unsafe.py: 2 skipped — unchanged"), "{rest}");
    assert!(rest.contains("Applied 2 fixes in 1 file; 3 skipped."), "{rest}");
    assert_eq!(status, 1, "violations remain");
    assert_eq!(read(dir.path(), "tools.py"), fixture("tools.first_and_third.py"));
    assert_eq!(read(dir.path(), "unsafe.py"), fixture("unsafe.py"));
}

#[test]
fn ctrl_c_leaves_every_file_untouched_or_fully_reviewed() {
    let dir = tree(&[("a.py", &fixture("tools.py")), ("b.py", &fixture("tools.py")), ("c.py", &fixture("unsafe.py"))]);
    let mut session = start(dir.path(), &["--color", "never", "--augment-text", "never"]);
    answer(&mut session, "[1/8] ./a.py:9", "y");
    answer(&mut session, "[2/8] ./a.py:18", "n");
    answer(&mut session, "[3/8] ./a.py:28", "y");
    see(&mut session, "Wrote ./a.py");
    answer(&mut session, "[4/8] ./b.py:9", "y");
    answer(&mut session, "[5/8] ./b.py:18", "y");
    see(&mut session, "[6/8] ./b.py:32");
    see(&mut session, PROMPT);
    session.send(ControlCode::EndOfText).unwrap();
    let (rest, status) = finish(&mut session);
    assert_eq!(status, 130, "{rest}");
    assert!(rest.contains("Aborted"), "{rest}");
    assert_eq!(read(dir.path(), "a.py"), fixture("tools.first_and_third.py"), "fully reviewed before Ctrl-C");
    assert_eq!(read(dir.path(), "b.py"), fixture("tools.py"), "two accepted fixes, but not written");
    assert_eq!(read(dir.path(), "c.py"), fixture("unsafe.py"));
    assert_eq!(listing(dir.path()), ["a.py", "b.py", "c.py"], "no temporary file left");
}

#[test]
fn ctrl_c_at_the_first_question_writes_nothing() {
    let dir = tree(&[("a.py", &fixture("tools.py"))]);
    let mut session = start(dir.path(), &["--color", "never"]);
    see(&mut session, "[1/3] ./a.py:9");
    see(&mut session, PROMPT);
    session.send(ControlCode::EndOfText).unwrap();
    let (_, status) = finish(&mut session);
    assert_eq!(status, 130);
    assert_eq!(read(dir.path(), "a.py"), fixture("tools.py"));
}

#[test]
fn an_interrupt_signal_ends_the_review_like_ctrl_c() {
    let dir = tree(&[("a.py", &fixture("tools.py")), ("b.py", &fixture("tools.py"))]);
    let mut session = start(dir.path(), &["--color", "never", "--augment-text", "never"]);
    answer(&mut session, "[1/6] ./a.py:9", "y");
    answer(&mut session, "[2/6] ./a.py:18", "n");
    answer(&mut session, "[3/6] ./a.py:28", "y");
    see(&mut session, "Wrote ./a.py");
    answer(&mut session, "[4/6] ./b.py:9", "y");
    see(&mut session, "[5/6] ./b.py:18");
    see(&mut session, LEGEND);
    // As `kill -INT` would: a signal, not a key.
    session.get_process_mut().kill(Signal::SIGINT).unwrap();
    let (rest, status) = finish(&mut session);
    assert_eq!(status, 130, "{rest}");
    assert!(rest.contains("Aborted"), "{rest}");
    assert_eq!(read(dir.path(), "a.py"), fixture("tools.first_and_third.py"));
    assert_eq!(read(dir.path(), "b.py"), fixture("tools.py"));
    assert_eq!(listing(dir.path()), ["a.py", "b.py"]);
}

#[test]
fn q_writes_what_was_accepted_and_reports_the_rest() {
    let dir = tree(&[("a.py", &fixture("tools.py")), ("b.py", &fixture("unsafe.py"))]);
    let mut session = start(dir.path(), &["--color", "never", "--augment-text", "never"]);
    answer(&mut session, "[1/5] ./a.py:9", "y");
    answer(&mut session, "[2/5] ./a.py:18", "q");
    let (rest, status) = finish(&mut session);
    assert!(rest.contains("  ./a.py: 1 applied, 2 not reviewed — written"), "{rest}");
    assert!(rest.contains("  ./b.py: 2 not reviewed — unchanged"), "{rest}");
    assert!(rest.contains("Quit. Applied 1 fix in 1 file; 4 not reviewed."), "{rest}");
    assert_eq!(status, 1);
    let expected = fixture("tools.py").replace(
        "    return {\"status\": \"success\", \"content\": [{\"text\": \"scanned\"}], \"count\": len(files)}",
        "    return {\n        \"status\": \"success\",\n        \"content\": [{\"text\": \"scanned\"}, {\"json\": {\"count\": len(files)}}],\n    }",
    );
    assert_eq!(read(dir.path(), "a.py"), expected);
    assert_eq!(read(dir.path(), "b.py"), fixture("unsafe.py"));
}

#[test]
fn capital_a_applies_safe_fixes_and_still_asks_about_unsafe_ones() {
    let dir = tree(&[("a.py", &fixture("tools.py")), ("b.py", &fixture("unsafe.py"))]);
    let mut session = start(dir.path(), &["--color", "never", "--augment-text", "never"]);
    answer(&mut session, "[1/5] ./a.py:9", "A");
    see(&mut session, "[2/5] ./a.py:18 applied by `A`");
    see(&mut session, "[3/5] ./a.py:32 applied by `A`");
    answer(&mut session, "[4/5] ./b.py:6 UNSAFE fix", "y");
    see(&mut session, "[5/5] ./b.py:11 applied by `A`");
    let (rest, status) = finish(&mut session);
    assert!(rest.contains("Applied 5 fixes in 2 files."), "{rest}");
    assert_eq!(status, 0, "nothing left to fix");
    let fixed_unsafe = fixture("unsafe.py")
        .replace("[{\"text\": key}], **extra}", "[{\"text\": key}, {\"json\": {**extra}}]}")
        .replace("[{\"text\": key}], \"stored\": True}", "[{\"text\": key}, {\"json\": {\"stored\": True}}]}");
    assert_eq!(read(dir.path(), "b.py"), fixed_unsafe);
}

#[test]
fn help_is_one_key_away_and_diffs_are_coloured_on_a_terminal() {
    let dir = tree(&[("a.py", &fixture("unsafe.py"))]);
    let mut session = start(dir.path(), &[]);
    see(&mut session, "\x1b[31m\x1b[1mUNSAFE fix");
    see(
        &mut session,
        "\x1b[32m+    return {\"status\": \"success\", \"content\": [{\"text\": key}, {\"json\": {**extra}}]}",
    );
    see(&mut session, PROMPT);
    session.send("?").unwrap();
    see(&mut session, "k - apply this fix and every remaining safe fix that moves the same keys (**extra)");
    see(&mut session, "a, k and A apply safe fixes only: each unsafe fix is shown and needs its own y.");
    see(&mut session, PROMPT);
    session.send("k").unwrap();
    let again = see(&mut session, "`k` will apply every safe fix moving the same keys without asking");
    assert!(!again.contains("UNSAFE fix") && !again.contains("@@"), "only the note is repeated: {again}");
    see(&mut session, PROMPT);
    session.send("x").unwrap();
    see(&mut session, "press ? for help");
    session.send("n").unwrap();
    answer(&mut session, "a.py:11", "n");
    let (_, status) = finish(&mut session);
    assert_eq!(status, 1);
    assert_eq!(read(dir.path(), "a.py"), fixture("unsafe.py"));
}

/// Copies `examples/legacy_tools` into `dir`.
fn copy_examples(dir: &Path) {
    let from = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/legacy_tools");
    std::fs::create_dir_all(dir.join("legacy_tools")).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join("legacy_tools").join(entry.file_name())).unwrap();
    }
}

#[test]
fn yes_to_every_fix_writes_what_fix_with_unsafe_fixes_writes() {
    let reviewed = tempfile::tempdir().unwrap();
    let fixed = tempfile::tempdir().unwrap();
    copy_examples(reviewed.path());
    copy_examples(fixed.path());
    let plain = Command::new(BIN)
        .args(["fix", "--unsafe-fixes", "--augment-text", "never", "legacy_tools"])
        .current_dir(fixed.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(plain.status.code(), Some(1), "one tool result is left for manual repair: {plain:?}");

    let mut session = start(reviewed.path(), &["--color", "never", "--augment-text", "never", "legacy_tools"]);
    let mut offers = 0;
    loop {
        let found = session.expect(Any([PROMPT, "Summary:"])).unwrap_or_else(|e| panic!("after {offers} offers: {e}"));
        if found.get(0) == Some(b"Summary:".as_slice()) {
            break;
        }
        offers += 1;
        session.send("y").unwrap();
    }
    let (rest, status) = finish(&mut session);
    assert!(offers > 15, "{offers} offers");
    assert!(rest.contains(&format!("Applied {offers} fixes in 4 files")), "{rest}");
    assert_eq!(status, 1, "one tool result is left for manual repair\n{rest}");
    for name in listing(&fixed.path().join("legacy_tools")) {
        let path = Path::new("legacy_tools").join(&name);
        assert_eq!(read(reviewed.path(), path.to_str().unwrap()), read(fixed.path(), path.to_str().unwrap()), "{name}");
    }
    // The expectation that does not come from the binary: the independent
    // Python reference transformation of the original examples.
    let Some(python) = support::python_or_skip("yes_to_every_fix_writes_what_fix_with_unsafe_fixes_writes") else {
        return;
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(python)
        .arg(root.join("tests/reference/fix_semantics.py"))
        .arg(root.join("examples/legacy_tools"))
        .arg(reviewed.path().join("legacy_tools"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the reviewed files differ from the reference transformation:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn without_a_terminal_interactive_refuses_and_points_to_diff() {
    let dir = tree(&[("a.py", &fixture("tools.py"))]);
    let out = Command::new(BIN)
        .args(["fix", "--interactive", "."])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--interactive needs a terminal") && stderr.contains("--diff"), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(read(dir.path(), "a.py"), fixture("tools.py"));

    // A terminal on stdin is not enough when the output goes elsewhere.
    let mut cmd = Command::new("sh");
    cmd.args(["-c", &format!("{BIN} fix -i . > out.txt; echo status=$?")]).current_dir(dir.path());
    let mut session = Session::spawn(cmd).unwrap();
    session.set_expect_timeout(Some(TIMEOUT));
    see(&mut session, "--diff");
    see(&mut session, "status=2");

    let out = Command::new(BIN).args(["fix", "-i", "--diff", "."]).current_dir(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
}

/// An `$EDITOR` that edits the file it is given as the file `mode` in
/// `dir` says: `valid`, `violating` (a key the runtime drops), `broken` (a
/// syntax error) or `unchanged` (it saves nothing).
fn scripted_editor(dir: &Path) -> PathBuf {
    let script = dir.join("editor.sh");
    let mode = dir.join("mode");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncase \"$(cat '{}')\" in\n\
             valid) sed -i 's/{{\"json\": {{\"count\": len(files)}}}}/{{\"text\": f\"{{len(files)}} files\"}}/' \"$1\" ;;\n\
             violating) sed -i 's/\"status\": \"success\",/\"status\": \"success\", \"frames\": 3,/' \"$1\" ;;\n\
             broken) sed -i 's/\"status\": \"success\",/\"status\": \"success\" +,/' \"$1\" ;;\n\
             esac\n",
            mode.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

#[test]
fn e_opens_the_editor_and_applies_an_edit_only_when_it_parses_and_keeps_to_the_contract() {
    let dir = tree(&[("tools.py", &fixture("tools.py"))]);
    let editor = scripted_editor(dir.path());
    let mode = |m: &str| std::fs::write(dir.path().join("mode"), m).unwrap();
    let mut session =
        start_with(dir.path(), &["--color", "never", "--augment-text", "never", "tools.py"], Some(&editor), 500);
    see(&mut session, "[1/3] tools.py:9 safe fix");
    see(&mut session, LEGEND);
    // Saved nothing: nothing changes, the question comes again.
    mode("unchanged");
    session.send("e").unwrap();
    see(&mut session, "The editor closed without a change: nothing changed.");
    see(&mut session, LEGEND);
    // Still a violation: said, and the offer is shown again whole.
    mode("violating");
    session.send("e").unwrap();
    let refused = see(&mut session, "the edited text still breaks the contract (TS001 at line");
    assert!(refused.contains("[1/3] tools.py:9 safe fix"), "shown again whole: {refused}");
    see(&mut session, LEGEND);
    // A syntax error: said, nothing applied.
    mode("broken");
    session.send("e").unwrap();
    let refused = see(&mut session, "the edited text does not parse");
    assert!(refused.contains("[1/3] tools.py:9 safe fix"), "shown again whole: {refused}");
    see(&mut session, LEGEND);
    assert_eq!(read(dir.path(), "tools.py"), fixture("tools.py"));
    // A valid edit is the fix applied.
    mode("valid");
    session.send("e").unwrap();
    answer(&mut session, "[2/3] tools.py:", "n");
    answer(&mut session, "[3/3] tools.py:", "n");
    let (rest, _) = finish(&mut session);
    assert!(rest.contains("tools.py: 1 applied, 2 skipped — written"), "{rest}");
    let text = read(dir.path(), "tools.py");
    assert!(text.contains("\"content\": [{\"text\": \"scanned\"}, {\"text\": f\"{len(files)} files\"}],"), "{text}");
    assert!(!text.contains("\"count\""), "{text}");
}

#[test]
fn e_without_an_editor_says_how_to_set_one() {
    let dir = tree(&[("tools.py", &fixture("tools.py"))]);
    let mut session = start_with(dir.path(), &["--color", "never", "tools.py"], None, 500);
    see(&mut session, "[1/3] tools.py:9");
    see(&mut session, LEGEND);
    session.send("e").unwrap();
    see(&mut session, "no editor is configured: set $VISUAL or $EDITOR");
    see(&mut session, LEGEND);
    session.send("q").unwrap();
    let (_, status) = finish(&mut session);
    assert_eq!(status, 1);
    assert_eq!(read(dir.path(), "tools.py"), fixture("tools.py"));
}

#[test]
fn s_writes_a_suppression_comment_and_check_is_clean_there() {
    let dir = tree(&[("tools.py", &fixture("tools.py"))]);
    let mut session = start(dir.path(), &["--color", "never", "tools.py"]);
    answer(&mut session, "[1/3] tools.py:9", "s");
    see(&mut session, "tools.py:9: suppressed with `# toolshape: ignore[TS001]` instead of fixed");
    answer(&mut session, "[2/3] tools.py:", "n");
    answer(&mut session, "[3/3] tools.py:", "n");
    let (rest, _) = finish(&mut session);
    assert!(rest.contains("tools.py: 1 suppressed, 2 skipped — written"), "{rest}");
    let text = read(dir.path(), "tools.py");
    assert!(text.contains("\"count\": len(files)}  # toolshape: ignore[TS001]\n"), "{text}");
    let check =
        Command::new(BIN).args(["check", "--color", "never", "tools.py"]).current_dir(dir.path()).output().unwrap();
    let found = String::from_utf8_lossy(&check.stdout);
    assert!(!found.contains("tools.py:9:") && found.contains("tools.py:18:"), "{found}");
}

#[test]
fn tab_switches_the_remedy_and_the_one_shown_is_applied() {
    let src = "def f():\n    return {\"status\": \"success\", \"content\": [{\"json\": {\"a\": 1}}], \"b\": 2}\n";
    let dir = tree(&[("a.py", src)]);
    let mut session = start(dir.path(), &["--color", "never", "a.py"]);
    let first = see(&mut session, PROMPT);
    assert!(first.contains("remedy 1/2: merge into the existing json block (Tab: the next)"), "{first}");
    see(&mut session, "s suppress, Tab remedy, a rest of file");
    session.send("\t").unwrap();
    let second = see(&mut session, PROMPT);
    assert!(second.contains("remedy 2/2: append a new json block"), "{second}");
    assert!(
        second.contains(
            "+    return {\"status\": \"success\", \"content\": [{\"json\": {\"a\": 1}}, {\"json\": {\"b\": 2}}]}"
        ),
        "{second}"
    );
    session.send("y").unwrap();
    finish(&mut session);
    assert_eq!(
        read(dir.path(), "a.py"),
        "def f():\n    return {\"status\": \"success\", \"content\": [{\"json\": {\"a\": 1}}, {\"json\": {\"b\": 2}}]}\n"
    );
}

#[test]
fn accepting_a_fix_rewrites_its_reads_in_another_file_and_lists_those_that_stay() {
    let tools = "from strands import tool\n\n\n@tool\ndef scan(path):\n    return {\"status\": \"success\", \"content\": [{\"text\": \"ok\"}], \"count\": 3}\n\n\n@tool\ndef ping(host):\n    return {\"status\": \"success\", \"content\": [{\"text\": \"up\"}], \"ms\": 7}\n";
    let test = "from tools import ping, scan\n\n\ndef test_scan():\n    assert scan(\"x\")[\"count\"] == 3\n\n\ndef test_ping():\n    assert ping(\"h\") == {\"status\": \"success\", \"content\": [{\"text\": \"up\"}], \"ms\": 7}\n";
    let dir = tree(&[("pyproject.toml", "[project]\nname = \"t\"\n"), ("tools.py", tools), ("test_tools.py", test)]);
    std::fs::create_dir(dir.path().join("strands")).unwrap();
    std::fs::write(dir.path().join("strands/__init__.py"), "def tool(f):\n    return f\n").unwrap();
    let mut session = start(dir.path(), &["--color", "never", "--augment-text", "never", "tools.py", "test_tools.py"]);
    // The test's expected dict is a tool result too, unsafe to fix alone.
    let expected = answer(&mut session, "[1/3] test_tools.py:9 UNSAFE fix", "n");
    assert!(expected.contains("it is compared with `==`/`!=`"), "{expected}");
    let first = answer(&mut session, "[2/3] tools.py:6 safe fix", "y");
    assert!(first.contains("  rewrites: test_tools.py:5 reads scan(\"x\")[\"count\"]"), "{first}");
    let second = answer(&mut session, "[3/3] tools.py:11 UNSAFE fix", "n");
    assert!(second.contains("  read: test_tools.py:9 reads ping(\"h\") == {"), "a read that stays: {second}");
    see(&mut session, "Rewrote 1 read in test_tools.py, with the fixes that moved their keys.");
    finish(&mut session);
    let rewritten = read(dir.path(), "test_tools.py");
    assert!(rewritten.contains("assert scan(\"x\")[\"content\"][-1][\"json\"][\"count\"] == 3"), "{rewritten}");
    // The project's test still passes against the fixed tool.
    if let Some(python) = support::python_or_skip("accepting_a_fix_rewrites_its_reads_in_another_file") {
        let run = Command::new(python)
            .args(["-c", "import test_tools; test_tools.test_scan(); test_tools.test_ping()"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    }
}

#[test]
fn a_long_offer_pages() {
    let dir = tree(&[("tools.py", &fixture("tools.py"))]);
    let mut session = start_with(dir.path(), &["--color", "never", "--augment-text", "never", "tools.py"], None, 10);
    let first = see(&mut session, "more lines: Space for the next page, any other key for all --");
    assert!(first.contains("[1/3] tools.py:9 safe fix"), "{first}");
    assert!(!first.contains(PROMPT), "the question waits for the last page: {first}");
    // Space: the next page; any other key: the rest at once.
    session.send(" ").unwrap();
    let next = session.expect(Any(["more lines", PROMPT])).unwrap();
    if next.get(0) != Some(PROMPT.as_bytes()) {
        session.send("x").unwrap();
        see(&mut session, PROMPT);
    }
    session.send("q").unwrap();
    finish(&mut session);
}
