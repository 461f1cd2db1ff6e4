//! A fix must never turn a green test suite red: the readers fixture
//! (`tests/fixtures/readers/`, a device-tool package whose pytest suite
//! reads every key a fix would move, in every form) is copied, its suite
//! runs green, `toolshape fix` runs (the safe fixes, with the reads of
//! their keys rewritten), the suite runs green again, then `fix
//! --unsafe-fixes`, and the suite is green once more; nothing fixable is
//! left, and a further fix changes nothing.
//!
//! Needs Python with pytest (installed by `.ci/run`); without it the test
//! says SKIPPED loudly (and fails under `TOOLSHAPE_NO_SKIP`).

use std::path::Path;
use std::process::Command;

mod support;
use support::{copy_tree, describe, manifest_dir, python_or_skip, run, skip, snapshot_tree, toolshape, truncate};

/// Runs the fixture's pytest suite in `dir`, failing the test if it is red;
/// returns how many tests passed.
fn suite_passes(python: &str, dir: &Path, when: &str) -> usize {
    suite_of_at_least(python, dir, when, 30)
}

/// [`suite_passes`] for a suite of at least `least` tests.
fn suite_of_at_least(python: &str, dir: &Path, when: &str, least: usize) -> usize {
    let mut pytest = Command::new(python);
    pytest.current_dir(dir).env("PYTHONDONTWRITEBYTECODE", "1").args(["-m", "pytest", "-q", "-p", "no:cacheprovider"]);
    let out = run(&mut pytest);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let passed = stdout
        .split(|c: char| !c.is_ascii_alphanumeric())
        .collect::<Vec<_>>()
        .windows(2)
        .find(|w| w[1] == "passed")
        .and_then(|w| w[0].parse().ok())
        .unwrap_or(0);
    assert!(
        out.status.success() && passed >= least && !stdout.contains("failed"),
        "{when}: `{}` is not green:\n{}\n{}",
        describe(&pytest),
        truncate(&stdout, 6000),
        truncate(&String::from_utf8_lossy(&out.stderr), 2000)
    );
    passed
}

/// Runs `fix` in `dir`, after which the suite passes at least `passed`
/// tests; then `fix --unsafe-fixes`, after which it fails exactly
/// `failed`: the reads that kept those fixes unsafe were real. Gives the
/// tree as `fix` left it.
fn fixes_keep_it_green_and_unsafe_ones_break_it(
    python: &str,
    dir: &Path,
    passed: usize,
    failed: usize,
) -> Vec<(String, Vec<u8>)> {
    toolshape(dir, &["fix", "."]);
    suite_of_at_least(python, dir, "after `fix`", passed);
    let fixed = snapshot_tree(dir);
    toolshape(dir, &["fix", "--unsafe-fixes", "."]);
    suite_fails(python, dir, failed);
    fixed
}

/// Runs the suite in `dir`, which must fail exactly `failed` tests: the
/// unsafe fixes broke reads that were real.
fn suite_fails(python: &str, dir: &Path, failed: usize) {
    let mut pytest = Command::new(python);
    pytest.current_dir(dir).env("PYTHONDONTWRITEBYTECODE", "1").args(["-m", "pytest", "-q", "-p", "no:cacheprovider"]);
    let out = run(&mut pytest);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success() && stdout.contains(&format!("{failed} failed")),
        "the unsafe fixes broke no read:\n{stdout}"
    );
}

/// `line` without the accessors `["content"][i]["json"]` that rewritten
/// reads gain (`i` an integer); panics if there is none.
fn without_accessors(line: &str) -> String {
    let (mut out, mut rest, mut found) = (String::new(), line, false);
    while let Some(at) = rest.find("[\"content\"][") {
        let after = &rest[at + "[\"content\"][".len()..];
        let digits = after.trim_start_matches('-').chars().take_while(char::is_ascii_digit).count();
        let sign = usize::from(after.starts_with('-'));
        let tail = &after[sign + digits..];
        assert!(digits > 0 && tail.starts_with("][\"json\"]"), "not an accessor in {line:?}");
        out.push_str(&rest[..at]);
        rest = &tail["][\"json\"]".len()..];
        found = true;
    }
    assert!(found, "no accessor in {line:?}");
    out + rest
}

/// The lines of the files under `dir/tests` that differ from `before`.
fn changed_test_lines(before: &[(String, Vec<u8>)], dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (path, now) in snapshot_tree(dir) {
        let Some((_, was)) = before.iter().find(|(p, _)| *p == path) else { continue };
        if !path.starts_with("tests") || *was == now {
            continue;
        }
        let (was, now) = (String::from_utf8_lossy(was), String::from_utf8_lossy(&now));
        for (a, b) in was.lines().zip(now.lines()) {
            if a != b {
                out.push((a.to_owned(), b.to_owned()));
            }
        }
    }
    out
}

/// Python with pytest, or `None` (the test then says SKIPPED).
fn pytest_or_skip(test: &str) -> Option<String> {
    let python = python_or_skip(test)?;
    let has_pytest = Command::new(&python).args(["-c", "import pytest"]).output().is_ok_and(|o| o.status.success());
    if !has_pytest {
        skip(test, "pytest is not installed (pip install pytest)");
        return None;
    }
    Some(python)
}

#[test]
fn fixing_the_readers_fixture_keeps_its_suite_green() {
    let Some(python) = pytest_or_skip("fixing_the_readers_fixture_keeps_its_suite_green") else { return };
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&manifest_dir().join("tests/fixtures/readers"), dir.path());
    fix_in_steps(&python, dir.path(), None);
}

/// A front end that reads the tool results of a message by a name bound to
/// `block["toolResult"]` (a possible read): a test's message holds a tool
/// result with a key the front end reads, so its fix is unsafe, and `fix`
/// leaves it (fixed, the test went red: the case of a real package).
#[test]
fn a_front_end_reading_message_tool_results_keeps_its_suite_green() {
    let Some(python) = pytest_or_skip("a_front_end_reading_message_tool_results_keeps_its_suite_green") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&manifest_dir().join("tests/fixtures/projects/front_end"), dir.path());
    suite_of_at_least(&python, dir.path(), "before the fix", 1);
    let check = toolshape(dir.path(), &["check", "--format", "json", "."]);
    let findings = check.json();
    assert_eq!(findings.len(), 1, "{check:?}");
    assert_eq!(findings[0]["fixable"], "unsafe", "{check:?}");
    let reads = findings[0]["reads"].as_array().unwrap();
    assert_eq!(reads.len(), 1, "{check:?}");
    assert_eq!((reads[0]["path"].as_str(), reads[0]["possible"].as_bool()), (Some("./chat/frames.py"), Some(true)));
    let before = snapshot_tree(dir.path());
    let fix = toolshape(dir.path(), &["fix", "."]);
    assert_eq!(snapshot_tree(dir.path()), before, "the unsafe fix was applied: {fix:?}");
    suite_of_at_least(&python, dir.path(), "after `fix`", 1);
}

/// Tests that reach a producer through a call toolshape cannot resolve (an
/// import inside the test that may bind the name otherwise, a dotted path,
/// a module alias, an inherited method, an alias of an optional import):
/// each such call or use is an `escape` read, so `fix` leaves the fixes
/// and the suite stays green; applied anyway (`--unsafe-fixes`), they turn
/// it red, so the reads were real (`docs/rules.md`, "Calls toolshape cannot
/// resolve").
#[test]
fn calls_toolshape_cannot_resolve_keep_their_fixes_unsafe() {
    let Some(python) = pytest_or_skip("calls_toolshape_cannot_resolve_keep_their_fixes_unsafe") else { return };
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&manifest_dir().join("tests/fixtures/projects/unresolved_calls"), dir.path());
    suite_of_at_least(&python, dir.path(), "before the fix", 11);
    let tests = std::fs::read_to_string(dir.path().join("tests/test_probes.py")).unwrap();
    let line = |needle: &str| tests.lines().position(|l| l.contains(needle)).map(|i| i + 1).unwrap();
    let check = toolshape(dir.path(), &["check", "--format", "json", "."]);
    let findings = check.json();
    let escapes = |key: &str| -> Vec<u64> {
        let f = findings.iter().find(|f| f["key"] == key).unwrap_or_else(|| panic!("{check:?}"));
        assert_eq!(f["fixable"], "unsafe", "{check:?}");
        f["reads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                assert_eq!((r["form"].as_str(), r["path"].as_str()), (Some("escape"), Some("./tests/test_probes.py")));
                r["line"].as_u64().unwrap()
            })
            .collect()
    };
    let frames: Vec<u64> = [
        "assert probe()",
        "assert probes.probe()",
        "meters.probes.probe()[",
        "probes_alias.probe()[",
        "return probe()",
        "take = probe",
        "unwrap(probes_alias.probe)",
        "fallback = probe",
    ]
    .iter()
    .map(|n| line(n) as u64)
    .collect();
    assert_eq!(escapes("frames"), frames, "{check:?}");
    assert_eq!(escapes("depth"), [line("self.measure()") as u64], "{check:?}");
    let before = snapshot_tree(dir.path());
    let fixed = fixes_keep_it_green_and_unsafe_ones_break_it(&python, dir.path(), 11, 9);
    assert_eq!(fixed, before, "an unsafe fix was applied");
}

/// A decorator hands the function to code toolshape does not follow, and
/// so does a name a tool is called by (a fixture returning it, an alias): a
/// pytest fixture returning a tool's result gives it to every test that
/// names the fixture. The fixes of decorated producers stay unsafe (the
/// static method's is safe and keeps the suite green), and applying them
/// anyway turns the suite red, so the reads were real (`docs/rules.md`,
/// "Decorators" and "Escapes").
#[test]
fn decorated_producers_keep_their_fixes_unsafe() {
    let Some(python) = pytest_or_skip("decorated_producers_keep_their_fixes_unsafe") else { return };
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&manifest_dir().join("tests/fixtures/projects/decorators"), dir.path());
    // (Not in the fixture project: its snapshot checks each file alone,
    // where a read in another file keeps a fix unsafe.)
    std::fs::write(
        dir.path().join("tests/test_static.py"),
        "from gauges.tools import Gauge\n\n\ndef test_a_static_method():\n    assert Gauge().zero()[\"offset\"] == 0\n",
    )
    .unwrap();
    suite_of_at_least(&python, dir.path(), "before the fix", 9);
    let check = toolshape(dir.path(), &["check", "--format", "json", "."]);
    let findings = check.json();
    // Each key's fixability and the decorators its escapes stand at.
    let decorated = |key: &str| -> (String, Vec<String>) {
        let f = findings.iter().find(|f| f["key"] == key).unwrap_or_else(|| panic!("{key}: {check:?}"));
        let tools = std::fs::read_to_string(dir.path().join(f["path"].as_str().unwrap())).unwrap();
        let escapes = f["reads"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["form"] == "escape" && r["line"] == r["end_line"])
            .map(|r| {
                let path = dir.path().join(r["path"].as_str().unwrap());
                let text = if path.ends_with("gauges/tools.py") {
                    tools.clone()
                } else {
                    std::fs::read_to_string(path).unwrap()
                };
                let line = text.lines().nth(r["line"].as_u64().unwrap() as usize - 1).unwrap();
                let (from, to) =
                    (r["column"].as_u64().unwrap() as usize - 1, r["end_column"].as_u64().unwrap() as usize - 1);
                line[from..to].to_owned()
            })
            .collect();
        (f["fixable"].as_str().unwrap().to_owned(), escapes)
    };
    let unsafe_at = |at: &[&str]| ("unsafe".to_owned(), at.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(decorated("echo"), unsafe_at(&["pytest.fixture"]), "{check:?}");
    assert_eq!(decorated("frames"), unsafe_at(&["log_calls"]), "{check:?}");
    assert_eq!(decorated("scale"), unsafe_at(&["functools.lru_cache(maxsize=4)"]), "{check:?}");
    assert_eq!(decorated("level"), unsafe_at(&["property", "Gauge().reading"]), "{check:?}");
    assert_eq!(decorated("offset"), ("safe".to_owned(), Vec::new()), "{check:?}");
    // A tool called by another name (`docs/rules.md`, "Escapes").
    assert_eq!(decorated("rtt"), unsafe_at(&["ping", "ping"]), "{check:?}");
    fixes_keep_it_green_and_unsafe_ones_break_it(&python, dir.path(), 9, 4);
}

/// A temporary project: a `strands` stub whose `tool` decorator returns
/// the function, the package `sonar` with `tools_py` as `sonar/tools.py`,
/// and `tests` (path, text) run by pytest.
fn sonar_project(tools_py: &str, tests: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        ("pyproject.toml", "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\".\"]\n"),
        ("strands/__init__.py", "def tool(f):\n    return f\n"),
        ("sonar/__init__.py", ""),
        ("sonar/tools.py", tools_py),
    ];
    for (path, text) in files.iter().chain(tests) {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// A tool handed to a call that keeps what it gives (`asyncio.to_thread`,
/// `pool.submit`, `functools.partial`, `map`) runs there, and its result
/// is read where toolshape cannot follow: each such use is an `escape`, so
/// `fix` leaves the fix and the suite stays green; applied anyway
/// (`--unsafe-fixes`), it turns the four tests red, so the reads were real.
/// Handed to a call whose value is dropped, kept in a list, passed by
/// keyword or looked at by `callable` / `isinstance` / `repr`, it stays
/// exempt (`docs/rules.md`, "Escapes").
#[test]
fn tools_handed_to_calls_that_run_them_later_keep_their_fixes_unsafe() {
    let Some(python) = pytest_or_skip("tools_handed_to_calls_that_run_them_later_keep_their_fixes_unsafe") else {
        return;
    };
    let dir = sonar_project(
        "from strands import tool\n\n\n@tool\ndef sound(depth: int) -> dict:\n    \"\"\"Sound the depth.\"\"\"\n    return {\"status\": \"success\", \"content\": [{\"text\": \"sounded\"}], \"depth\": depth}\n",
        &[(
            "tests/test_later.py",
            r#"import asyncio
import functools
import threading
from concurrent.futures import ThreadPoolExecutor

from sonar.tools import sound

REGISTERED = []


def register_tool(t):
    REGISTERED.append(t)
    return t


class Agent:
    def __init__(self, tools):
        self.tools = tools


def test_in_a_thread():
    r = asyncio.run(asyncio.to_thread(sound, 3))
    assert r["depth"] == 3


def test_in_a_pool():
    with ThreadPoolExecutor() as pool:
        future = pool.submit(sound, 4)
    assert future.result()["depth"] == 4


def test_partial():
    deep = functools.partial(sound, 5)
    assert deep()["depth"] == 5


def test_map():
    assert [r["depth"] for r in map(sound, [1, 2])] == [1, 2]


def test_exempt_uses():
    register_tool(sound)
    assert callable(sound) and isinstance(sound, object) and repr(sound)
    agent = Agent(tools=[sound])
    thread = threading.Thread(target=sound, args=(1,))
    thread.start()
    thread.join()
    assert agent.tools == [sound] and REGISTERED == [sound]
"#,
        )],
    );
    suite_of_at_least(&python, dir.path(), "before the fix", 5);
    let tests = std::fs::read_to_string(dir.path().join("tests/test_later.py")).unwrap();
    let check = toolshape(dir.path(), &["check", "--format", "json", "."]);
    let findings = check.json();
    assert_eq!(findings.len(), 1, "{check:?}");
    assert_eq!((findings[0]["key"].as_str(), findings[0]["fixable"].as_str()), (Some("depth"), Some("unsafe")));
    // Each escape's line and text: the tool where the call keeps it.
    let escapes: Vec<(String, String)> = findings[0]["reads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(
                (r["form"].as_str(), r["path"].as_str()),
                (Some("escape"), Some("./tests/test_later.py")),
                "{r}"
            );
            let line = tests.lines().nth(r["line"].as_u64().unwrap() as usize - 1).unwrap();
            let (from, to) =
                (r["column"].as_u64().unwrap() as usize - 1, r["end_column"].as_u64().unwrap() as usize - 1);
            (line.trim().to_owned(), line[from..to].to_owned())
        })
        .collect();
    let want: Vec<(String, String)> = [
        "r = asyncio.run(asyncio.to_thread(sound, 3))",
        "future = pool.submit(sound, 4)",
        "deep = functools.partial(sound, 5)",
        "assert [r[\"depth\"] for r in map(sound, [1, 2])] == [1, 2]",
    ]
    .iter()
    .map(|l| (l.to_string(), "sound".to_owned()))
    .collect();
    assert_eq!(escapes, want, "{check:?}");
    let before = snapshot_tree(dir.path());
    let fixed = fixes_keep_it_green_and_unsafe_ones_break_it(&python, dir.path(), 5, 4);
    assert_eq!(fixed, before, "an unsafe fix was applied");
}

/// A test's own helper that checks a result (`def ok(r): assert
/// r["status"] == "success"; return r`) is followed into: a helper that
/// reads no moved key keeps the fix safe, and the reads after it are
/// rewritten; one that reads a moved key keeps its fix unsafe, and
/// `--unsafe-fixes` breaks exactly the test that uses it.
#[test]
fn results_checked_by_a_tests_own_helpers_are_read_there() {
    let Some(python) = pytest_or_skip("results_checked_by_a_tests_own_helpers_are_read_there") else {
        return;
    };
    let dir = sonar_project(
        r#"from strands import tool


@tool
def sound(depth: int) -> dict:
    """Sound the depth."""
    return {"status": "success", "content": [{"text": "sounded"}], "depth": depth}


@tool
def ping(host: str) -> dict:
    """Ping a host."""
    return {"status": "success", "content": [{"text": "pong"}], "rtt_ms": 12}
"#,
        &[(
            "tests/test_checked.py",
            r#"from sonar.tools import ping, sound


def ok(result, /, label=""):
    assert result["status"] == "success", f"{label}: {result!r}"
    assert result["content"][0]["text"], result
    return (result)


def fast(r):
    return r["rtt_ms"] < 100


def test_passed_through():
    r = ok(sound(3))
    assert r["depth"] == 3


def test_read_on_the_call():
    assert ok(ok(sound(4), label="twice"))["depth"] == 4


def test_checked_then_read():
    r = sound(5)
    ok(r)
    assert r.get("depth") == 5


def test_a_helper_reading_a_moved_key():
    assert fast(ping("example.org"))
"#,
        )],
    );
    suite_of_at_least(&python, dir.path(), "before the fix", 4);
    let check = toolshape(dir.path(), &["check", "--format", "json", "."]);
    let findings = check.json();
    let verdicts: Vec<(&str, &str, usize)> = findings
        .iter()
        .map(|f| (f["key"].as_str().unwrap(), f["fixable"].as_str().unwrap(), f["reads"].as_array().unwrap().len()))
        .collect();
    // `depth`: three reads after `ok` and one block read in it; `rtt_ms`:
    // the read in `fast`.
    assert_eq!(verdicts, [("depth", "safe", 4), ("rtt_ms", "unsafe", 1)], "{check:?}");
    let fast_read = &findings[1]["reads"][0];
    assert_eq!((fast_read["line"].as_u64(), fast_read["rewritable"].as_bool()), (Some(11), Some(false)), "{check:?}");
    fixes_keep_it_green_and_unsafe_ones_break_it(&python, dir.path(), 4, 1);
}

/// With `json-accessor` configured, reads go through the project's own
/// accessor, imported once in each file that needs it.
#[test]
fn a_configured_accessor_keeps_the_suite_green_too() {
    let Some(python) = pytest_or_skip("a_configured_accessor_keeps_the_suite_green_too") else { return };
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&manifest_dir().join("tests/fixtures/readers"), dir.path());
    let pyproject = dir.path().join("pyproject.toml");
    let config = std::fs::read_to_string(&pyproject).unwrap();
    std::fs::write(&pyproject, format!("{config}\n[tool.toolshape]\njson-accessor = \"tests.support:tool_json\"\n"))
        .unwrap();
    std::fs::write(dir.path().join("tests/__init__.py"), "").unwrap();
    std::fs::write(
        dir.path().join("tests/support.py"),
        "def tool_json(result):\n    \"\"\"The json payload of a fixed tool result.\"\"\"\n    return result[\"content\"][-1][\"json\"]\n",
    )
    .unwrap();
    fix_in_steps(&python, dir.path(), Some("tool_json"));
    // The same fix without the accessor, for comparison.
    let plain = tempfile::tempdir().unwrap();
    copy_tree(&manifest_dir().join("tests/fixtures/readers"), plain.path());
    toolshape(plain.path(), &["fix", "."]);
    toolshape(plain.path(), &["fix", "--unsafe-fixes", "."]);
    let plain = snapshot_tree(plain.path());
    let mut wrapped = 0;
    for (path, text) in snapshot_tree(dir.path()) {
        let text = String::from_utf8_lossy(&text).into_owned();
        let Some((_, theirs)) = plain.iter().find(|(p, _)| *p == path) else { continue };
        if !path.starts_with("tests/test_") {
            continue;
        }
        let import = "from tests.support import tool_json\n";
        if text.contains("tool_json(") {
            wrapped += 1;
            assert_eq!(text.matches(import).count(), 1, "{path}:\n{text}");
        }
        // Each `tool_json(r)` stands where the plain fix wrote
        // `r["content"][-1]["json"]`; nothing else differs.
        assert_eq!(unwrapped(&text.replacen(import, "", 1), "tool_json"), String::from_utf8_lossy(theirs), "{path}");
    }
    assert!(wrapped >= 4, "only {wrapped} test files use the accessor");
}

/// `text` with each `name(X)` written as `X["content"][-1]["json"]`.
fn unwrapped(text: &str, name: &str) -> String {
    let call = format!("{name}(");
    let mut out = text.to_owned();
    while let Some(at) = out.find(&call) {
        let open = at + call.len();
        let mut depth = 1;
        let close = out[open..]
            .char_indices()
            .find(|&(_, c)| {
                depth += match c {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
                depth == 0
            })
            .map(|(i, _)| open + i)
            .expect("unbalanced call");
        out = format!("{}{}[\"content\"][-1][\"json\"]{}", &out[..at], &out[open..close], &out[close + 1..]);
    }
    out
}

/// The issue's sequence on the fixture copied to `dir`: green, `fix`,
/// green, `fix --unsafe-fixes`, green, nothing left, idempotent. Rewritten
/// reads go through `accessor` where it serves.
fn fix_in_steps(python: &str, dir: &Path, accessor: Option<&str>) {
    let tests = suite_passes(python, dir, "before the fix");

    let check = toolshape(dir, &["check", "--format", "json", "."]);
    let findings = check.json();
    assert_eq!(findings.len(), 24, "{check:?}");
    let read: Vec<_> = findings.iter().filter(|f| !f["reads"].as_array().unwrap().is_empty()).collect();
    assert!(read.len() >= 20, "only {} findings have reads: {check:?}", read.len());
    // A fix with a read that is not rewritten (a use of the whole result,
    // of its content list) is unsafe; the others keep their verdict.
    let left = |f: &serde_json::Value| {
        f["reads"].as_array().unwrap().iter().any(|r| r["rewritable"] == false && r["form"] != "block")
    };
    for f in read.iter().filter(|f| left(f)) {
        assert_eq!(f["fixable"], "unsafe", "a fix with a read left is not unsafe: {f}");
    }
    let safe = read.iter().filter(|f| !left(f) && f["fixable"] == "safe").count();
    assert!(safe >= 5, "only {safe} fixes whose reads are all rewritten are safe: {check:?}");

    // The text output names the first read and counts the others.
    let text = toolshape(dir, &["check", "."]);
    for f in &read {
        let reads = f["reads"].as_array().unwrap();
        let at =
            format!("{}:{}:{}: {}", f["path"].as_str().unwrap(), f["line"], f["column"], f["code"].as_str().unwrap());
        let line =
            text.lines().into_iter().find(|l| l.starts_with(&at)).unwrap_or_else(|| panic!("no line {at}: {text:?}"));
        let first = format!("(read at {}:{}", reads[0]["path"].as_str().unwrap(), reads[0]["line"]);
        let more = if reads.len() > 1 { format!(", +{} more)", reads.len() - 1) } else { ")".to_owned() };
        assert!(line.ends_with(&format!("{first}{more}")), "{line}");
    }

    // The safe fixes, with their reads rewritten.
    let original = snapshot_tree(dir);
    let notes = tempfile::tempdir().unwrap();
    let summary = notes.path().join("summary.md");
    let fixed = toolshape(dir, &["fix", "--summary-md", summary.to_str().unwrap(), "."]);
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(summary.contains("### Reads of moved keys"), "{summary}");
    assert!(summary.contains("reads rewritten to look in the json block"), "{summary}");
    assert!(summary.contains("rewrites the reads of its keys: ./tests/test_adb.py:"), "{summary}");
    assert!(fixed.stdout.contains("rewrote "), "no read was rewritten: {fixed:?}");
    assert!(fixed.stdout.contains(" reads json.dumps("), "no leftover names the read that keeps it: {fixed:?}");
    assert_eq!(suite_passes(python, dir, "after `toolshape fix`"), tests);
    let rewritten = changed_test_lines(&original, dir);
    assert!(rewritten.len() >= 20, "only {} lines of the tests were rewritten: {rewritten:?}", rewritten.len());
    for (was, now) in &rewritten {
        // Each read gains the lookup of its key's json block, nothing else
        // (with an accessor, see `unwrapped`).
        if accessor.is_none() {
            assert_eq!(&without_accessors(now), was, "{was:?} -> {now:?}");
        }
    }

    // The unsafe ones too: the reads they move keys from are rewritten
    // with them, and the suite stays green.
    let all = toolshape(dir, &["fix", "--unsafe-fixes", "."]);
    assert!(all.stdout.contains("rewrote "), "{all:?}");
    // Its reads are all rewritten, or survive the fix (whole-result reads
    // written for that); each such fix says which reads it leaves.
    assert!(all.stderr.contains("leaves reads of its keys as they are"), "{all:?}");
    assert_eq!(suite_passes(python, dir, "after `toolshape fix --unsafe-fixes`"), tests);
    let clean = toolshape(dir, &["check", "--format", "json", "."]);
    assert!(clean.json().is_empty(), "fixable findings are left: {clean:?}");

    let before = snapshot_tree(dir);
    let again = toolshape(dir, &["fix", "--unsafe-fixes", "."]);
    assert_eq!(before, snapshot_tree(dir), "a further fix changed files: {again:?}");
}
