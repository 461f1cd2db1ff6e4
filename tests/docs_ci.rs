//! The recipes of `docs/ci.md`, run.
//!
//! The page marks its blocks with `<!-- toolshape-test: NAME -->` on the line
//! before the fence. The workflow blocks are read with a small reader for the
//! YAML that GitHub workflows use (block mappings and sequences, `|` block
//! scalars, quoted and plain scalars, `[a, b]`; anything else is refused, so
//! a recipe cannot grow past what this test understands), cross-checked with
//! PyYAML when it is importable. Then a job is played the way a GitHub runner
//! plays it: each step's `if:` is evaluated, `run:` steps go to bash (with the
//! runner's flags for `shell: bash`) in a temporary git repository, with
//! `RUNNER_TEMP`, `GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`, `GITHUB_ENV` and the
//! freshly built binary first on `PATH`; the step named `Install toolshape`
//! (it needs the network) is skipped; `uses:` steps are not run, their `with:`
//! is resolved against the outputs of the steps before them so that the test
//! can check what the action would get.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

mod support;
use support::{BIN, manifest_dir, tempdir, write};

/// The placeholder the page uses for the repository's URL.
const PLACEHOLDER_URL: &str = "https://github.com/OWNER/toolshape";
/// The step every workflow installs toolshape with; the test skips it.
const INSTALL_STEP: &str = "Install toolshape";

// ----- the page -----------------------------------------------------------------

fn page() -> String {
    let path = manifest_dir().join("docs/ci.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The body of the ```yaml block right after `<!-- toolshape-test: NAME -->`.
fn marked_block(name: &str) -> String {
    marked_fence(name, "yaml")
}

/// The body of the ```LANG block right after `<!-- toolshape-test: NAME -->`.
fn marked_fence(name: &str, lang: &str) -> String {
    let page = page();
    let marker = format!("<!-- toolshape-test: {name} -->");
    let hits: Vec<usize> = page.lines().enumerate().filter(|(_, l)| l.trim() == marker).map(|(i, _)| i).collect();
    assert_eq!(hits.len(), 1, "docs/ci.md must hold `{marker}` exactly once (found {})", hits.len());
    let mut lines = page.lines().skip(hits[0] + 1).skip_while(|l| l.trim().is_empty());
    let fence = format!("```{lang}");
    assert_eq!(
        lines.next().map(str::trim_end),
        Some(fence.as_str()),
        "`{marker}` must stand right before a {fence} fence"
    );
    let mut body = String::new();
    for line in lines {
        if line.trim_end() == "```" {
            return body;
        }
        body.push_str(line);
        body.push('\n');
    }
    panic!("the block after `{marker}` is not closed");
}

// ----- a reader for the YAML the recipes use --------------------------------------

mod yaml {
    //! Block mappings and sequences, `|`/`|-` block scalars, single- and
    //! double-quoted scalars, plain scalars, `[a, b]` and comments. Every
    //! scalar is a string, an empty value is null. Anything else panics.

    use serde_json::{Map, Value};

    pub fn parse(src: &str) -> Value {
        assert!(!src.contains('\t'), "tabs are not YAML indentation");
        let mut p = Parser { lines: src.lines().map(str::to_owned).collect(), pos: 0 };
        let value = p.node(0);
        p.skip_blank();
        assert_eq!(p.pos, p.lines.len(), "line {}: unexpected content: {:?}", p.pos + 1, p.lines.get(p.pos));
        value
    }

    struct Parser {
        lines: Vec<String>,
        pos: usize,
    }

    fn indent_of(line: &str) -> usize {
        line.len() - line.trim_start_matches(' ').len()
    }

    fn is_item(content: &str) -> bool {
        content == "-" || content.starts_with("- ")
    }

    impl Parser {
        fn skip_blank(&mut self) {
            while self.pos < self.lines.len() {
                let t = self.lines[self.pos].trim();
                if !(t.is_empty() || t.starts_with('#')) {
                    break;
                }
                self.pos += 1;
            }
        }

        /// The next significant line: (indent, content).
        fn peek(&mut self) -> Option<(usize, String)> {
            self.skip_blank();
            let line = self.lines.get(self.pos)?;
            Some((indent_of(line), line.trim_start().to_owned()))
        }

        fn fail(&self, what: &str) -> ! {
            panic!("YAML line {}: {what}: {:?}", self.pos + 1, self.lines.get(self.pos))
        }

        fn node(&mut self, min_indent: usize) -> Value {
            match self.peek() {
                Some((indent, content)) if indent >= min_indent => {
                    if is_item(&content) {
                        self.sequence(indent)
                    } else {
                        self.mapping(indent)
                    }
                }
                _ => Value::Null,
            }
        }

        fn sequence(&mut self, indent: usize) -> Value {
            let mut items = Vec::new();
            while let Some((i, content)) = self.peek() {
                if i != indent || !is_item(&content) {
                    if i > indent {
                        self.fail("unexpected indentation");
                    }
                    break;
                }
                let rest = content[1..].trim_start();
                if rest.is_empty() || rest.starts_with('#') {
                    self.pos += 1;
                    items.push(self.node(indent + 1));
                } else if split_key(rest).is_some() {
                    // `- key: value` opens a mapping at the column of `key`.
                    let column = indent + content.len() - rest.len();
                    self.lines[self.pos] = format!("{}{rest}", " ".repeat(column));
                    items.push(self.mapping(column));
                } else {
                    let value = scalar(rest).unwrap_or_else(|e| self.fail(&e));
                    self.pos += 1;
                    items.push(value);
                }
            }
            Value::Array(items)
        }

        fn mapping(&mut self, indent: usize) -> Value {
            let mut map = Map::new();
            while let Some((i, content)) = self.peek() {
                if i > indent {
                    self.fail("unexpected indentation");
                }
                if i < indent || is_item(&content) {
                    break;
                }
                let Some((key, rest)) = split_key(&content) else { self.fail("expected `key: value`") };
                let rest = rest.trim();
                self.pos += 1;
                let value = match rest {
                    "|" | "|-" => self.block_scalar(indent, rest == "|-"),
                    _ if rest.is_empty() || rest.starts_with('#') => match self.peek() {
                        Some((ci, _)) if ci > indent => self.node(ci),
                        Some((ci, cc)) if ci == indent && is_item(&cc) => self.sequence(indent),
                        _ => Value::Null,
                    },
                    _ => scalar(rest).unwrap_or_else(|e| {
                        self.pos -= 1;
                        self.fail(&e)
                    }),
                };
                if map.insert(key.clone(), value).is_some() {
                    self.fail(&format!("duplicate key {key:?}"));
                }
            }
            Value::Object(map)
        }

        /// The lines after `key: |`, down to the first non-blank line that is
        /// not indented more than the key; clipped (`|`) or stripped (`|-`).
        fn block_scalar(&mut self, parent: usize, strip: bool) -> Value {
            let start = self.pos;
            while self.pos < self.lines.len() {
                let line = &self.lines[self.pos];
                if !line.trim().is_empty() && indent_of(line) <= parent {
                    break;
                }
                self.pos += 1;
            }
            let raw = &self.lines[start..self.pos];
            let Some(block_indent) = raw.iter().find(|l| !l.trim().is_empty()).map(|l| indent_of(l)) else {
                return Value::String(String::new());
            };
            let mut text = String::new();
            for line in raw {
                if line.trim().is_empty() {
                    text.push('\n');
                } else {
                    assert!(
                        indent_of(line) >= block_indent,
                        "block scalar line less indented than its first: {line:?}"
                    );
                    text.push_str(&line[block_indent..]);
                    text.push('\n');
                }
            }
            let body = text.trim_end_matches('\n');
            Value::String(if strip || body.is_empty() { body.to_owned() } else { format!("{body}\n") })
        }
    }

    /// `key: rest` or `key:` → (key, rest); None when the line is no mapping entry.
    pub fn split_key(content: &str) -> Option<(String, &str)> {
        let (key, after) = match content.chars().next()? {
            q @ ('"' | '\'') => {
                let end = content[1..].find(q)? + 1;
                (content[1..end].to_owned(), &content[end + 1..])
            }
            '[' | '{' | '&' | '*' | '!' | '|' | '>' | '#' => return None,
            _ => {
                let colon = content
                    .char_indices()
                    .find(|&(i, c)| c == ':' && content[i + 1..].chars().next().is_none_or(|n| n == ' '))?;
                let key = &content[..colon.0];
                if key.contains(" #") {
                    return None;
                }
                (key.trim_end().to_owned(), &content[colon.0..])
            }
        };
        let rest = after.strip_prefix(':')?;
        (rest.is_empty() || rest.starts_with(' ')).then_some((key, rest))
    }

    /// A scalar or `[a, b]` written after `key: ` or `- `.
    pub fn scalar(text: &str) -> Result<Value, String> {
        let text = text.trim();
        let (value, rest) = match text.chars().next() {
            None => return Ok(Value::Null),
            Some('"') => {
                let mut out = String::new();
                let mut chars = text[1..].char_indices();
                let end = loop {
                    match chars.next() {
                        None => return Err("unterminated double-quoted scalar".into()),
                        Some((i, '"')) => break i + 2,
                        Some((_, '\\')) => match chars.next().map(|(_, c)| c) {
                            Some('n') => out.push('\n'),
                            Some('t') => out.push('\t'),
                            Some(c @ ('"' | '\\' | '/')) => out.push(c),
                            other => return Err(format!("unsupported escape \\{other:?}")),
                        },
                        Some((_, c)) => out.push(c),
                    }
                };
                (Value::String(out), &text[end..])
            }
            Some('\'') => {
                let mut out = String::new();
                let mut i = 1;
                loop {
                    let Some(off) = text[i..].find('\'') else {
                        return Err("unterminated single-quoted scalar".into());
                    };
                    out.push_str(&text[i..i + off]);
                    i += off + 1;
                    if text[i..].starts_with('\'') {
                        out.push('\'');
                        i += 1;
                    } else {
                        break;
                    }
                }
                (Value::String(out), &text[i..])
            }
            Some('[') => {
                let end = text.find(']').ok_or("unterminated flow sequence")?;
                let inner = &text[1..end];
                if inner.contains(['[', '{', '"', '\'']) {
                    return Err("only plain scalars in a flow sequence".into());
                }
                let items = inner.split(',').map(str::trim).filter(|s| !s.is_empty());
                (Value::Array(items.map(|s| Value::String(s.to_owned())).collect()), &text[end + 1..])
            }
            Some('{' | '&' | '*' | '!' | '|' | '>' | '%' | '@' | '`') => {
                return Err(format!("unsupported YAML: {text:?}"));
            }
            Some(_) => {
                let plain = text.find(" #").map_or(text, |i| &text[..i]).trim_end();
                return Ok(Value::String(plain.to_owned()));
            }
        };
        let rest = rest.trim();
        if rest.is_empty() || rest.starts_with('#') { Ok(value) } else { Err(format!("text after a scalar: {rest:?}")) }
    }
}

/// PyYAML's reading of `src` with every scalar turned into a string (null
/// kept), as `yaml::parse` reads it; None when Python or PyYAML is missing.
fn pyyaml(src: &str) -> Option<Value> {
    const SCRIPT: &str = r#"
import json, sys
try:
    import yaml
except ImportError:
    sys.exit(3)
def norm(v):
    if isinstance(v, dict):
        # YAML 1.1 reads the key `on` as true; GitHub reads it as "on".
        return {("on" if k is True else str(k)): norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [norm(x) for x in v]
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)
print(json.dumps(norm(yaml.safe_load(sys.stdin.read()))))
"#;
    let python = support::find_python()?;
    let mut child = Command::new(python)
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    std::io::Write::write_all(&mut child.stdin.take().expect("piped"), src.as_bytes()).expect("python reads stdin");
    let out = child.wait_with_output().expect("python runs");
    match out.status.code() {
        Some(0) => Some(serde_json::from_slice(&out.stdout).expect("PyYAML's reading as JSON")),
        Some(3) => None,
        _ => panic!("PyYAML cannot read the block: {}\n{src}", String::from_utf8_lossy(&out.stderr)),
    }
}

// ----- playing a job the way a GitHub runner does -----------------------------------

#[derive(Debug)]
enum Outcome {
    /// A `run:` step: its exit status and output.
    Ran { code: i32, stdout: String, stderr: String },
    /// A `uses:` step: the action and its `with:`, expressions resolved.
    Action { uses: String, with: BTreeMap<String, String> },
    /// Not run: why.
    Skipped(String),
}

#[derive(Debug)]
struct StepRun {
    name: String,
    outcome: Outcome,
}

#[derive(Debug)]
struct JobRun {
    steps: Vec<StepRun>,
    outputs: HashMap<String, HashMap<String, String>>,
    step_summary: String,
    failed: bool,
    runner_temp: PathBuf,
    /// Keeps RUNNER_TEMP and HOME alive while the run is inspected.
    _scratch: tempfile::TempDir,
}

impl JobRun {
    fn step(&self, name: &str) -> &Outcome {
        let found = self.steps.iter().find(|s| s.name == name);
        &found.unwrap_or_else(|| panic!("no step {name:?} in {:#?}", self.steps)).outcome
    }

    /// The run step `name`, which must have run: (exit status, stdout, stderr).
    fn ran(&self, name: &str) -> (i32, &str, &str) {
        match self.step(name) {
            Outcome::Ran { code, stdout, stderr } => (*code, stdout, stderr),
            other => panic!("step {name:?} did not run: {other:?}\n{self:#?}"),
        }
    }

    /// The `uses:` step whose action starts with `action@`, if it was reached.
    fn action(&self, action: &str) -> Option<&BTreeMap<String, String>> {
        self.steps.iter().find_map(|s| match &s.outcome {
            Outcome::Action { uses, with } if uses.starts_with(&format!("{action}@")) => Some(with),
            _ => None,
        })
    }

    fn output(&self, step: &str, name: &str) -> &str {
        self.outputs.get(step).and_then(|o| o.get(name)).map_or("", String::as_str)
    }
}

/// What an expression may read: `runner.temp`, `github.workspace`,
/// `steps.ID.outputs.NAME`, `env.NAME`.
struct Context<'a> {
    runner_temp: &'a Path,
    workspace: &'a Path,
    outputs: &'a HashMap<String, HashMap<String, String>>,
    env: &'a BTreeMap<String, String>,
}

impl Context<'_> {
    fn value(&self, expr: &str) -> String {
        let expr = expr.trim();
        let parts: Vec<&str> = expr.split('.').collect();
        match parts.as_slice() {
            ["runner", "temp"] => self.runner_temp.display().to_string(),
            ["github", "workspace"] => self.workspace.display().to_string(),
            ["steps", id, "outputs", name] => {
                self.outputs.get(*id).and_then(|o| o.get(*name)).cloned().unwrap_or_default()
            }
            ["env", name] => self.env.get(*name).cloned().unwrap_or_default(),
            _ => panic!("the test does not know the expression `{expr}`: teach `Context::value`"),
        }
    }

    /// `text` with every `${{ expr }}` replaced by its value.
    fn interpolate(&self, text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${{") {
            let end = rest[start..].find("}}").unwrap_or_else(|| panic!("unclosed expression in {text:?}")) + start;
            out.push_str(&rest[..start]);
            out.push_str(&self.value(&rest[start + 3..end]));
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    }

    /// Whether a step with this `if:` runs, after earlier steps `failed` or not.
    fn condition(&self, cond: Option<&str>, failed: bool) -> bool {
        let Some(cond) = cond else { return !failed };
        let cond = cond.trim();
        let cond = cond.strip_prefix("${{").and_then(|c| c.strip_suffix("}}")).unwrap_or(cond).trim();
        match cond {
            "success()" => !failed,
            "failure()" => failed,
            "always()" | "!cancelled()" => true,
            _ => {
                let (lhs, equal, rhs) = if let Some((l, r)) = cond.split_once(" == ") {
                    (l, true, r)
                } else if let Some((l, r)) = cond.split_once(" != ") {
                    (l, false, r)
                } else {
                    panic!("the test does not know the condition `{cond}`: teach `Context::condition`")
                };
                let rhs = rhs.trim();
                let literal = rhs
                    .strip_prefix('\'')
                    .and_then(|r| r.strip_suffix('\''))
                    .unwrap_or_else(|| panic!("compare with a '...' literal: `{cond}`"));
                // No status function: GitHub adds success(). Strings compare without case.
                !failed && self.value(lhs).eq_ignore_ascii_case(literal) == equal
            }
        }
    }
}

fn text<'a>(step: &'a Value, key: &str) -> Option<&'a str> {
    step.get(key).map(|v| v.as_str().unwrap_or_else(|| panic!("`{key}` must be a string: {v}")))
}

fn string_map(value: Option<&Value>) -> BTreeMap<String, String> {
    let Some(value) = value else { return BTreeMap::new() };
    let map = value.as_object().unwrap_or_else(|| panic!("expected a mapping: {value}"));
    map.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned())).collect()
}

/// `name=value` lines of a GitHub file command (`GITHUB_OUTPUT`, `GITHUB_ENV`).
fn read_file_command(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            assert!(!l.contains("<<") || l.contains('='), "the test reads only name=value lines, not {l:?}");
            let (k, v) = l.split_once('=').unwrap_or_else(|| panic!("not name=value: {l:?}"));
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

/// The environment every step starts from: nothing inherited but PATH, with
/// the binary under test first on it.
fn base_env(workspace: &Path, runner_temp: &Path, home: &Path) -> BTreeMap<String, String> {
    let bin_dir = Path::new(BIN).parent().expect("the binary's folder");
    let path = std::env::var("PATH").unwrap_or_default();
    let mut env = BTreeMap::new();
    for (k, v) in [
        ("PATH", format!("{}:{path}", bin_dir.display())),
        ("HOME", home.display().to_string()),
        ("LANG", "C.UTF-8".to_owned()),
        ("CI", "true".to_owned()),
        ("GITHUB_ACTIONS", "true".to_owned()),
        ("GITHUB_WORKSPACE", workspace.display().to_string()),
        ("GITHUB_SERVER_URL", "https://github.com".to_owned()),
        ("GITHUB_REPOSITORY", "octo/agents".to_owned()),
        ("RUNNER_TEMP", runner_temp.display().to_string()),
        ("GIT_CONFIG_NOSYSTEM", "1".to_owned()),
    ] {
        env.insert(k.to_owned(), v);
    }
    env
}

/// Runs `cmd` and fails the test if it takes more than `limit`.
fn run_with_timeout(cmd: &mut Command, limit: Duration) -> (i32, String, String) {
    let shown = support::describe(cmd);
    let out = support::output_with_timeout(cmd.stdin(Stdio::null()), limit);
    let code = out.status.code().unwrap_or_else(|| panic!("`{shown}` was killed by a signal"));
    (code, String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Plays job `job` of the workflow `block` with `workspace` as the checkout.
fn run_job(block: &str, job: &str, workspace: &Path) -> JobRun {
    let workflow = yaml::parse(block);
    let job_value = workflow
        .get("jobs")
        .and_then(|j| j.get(job))
        .unwrap_or_else(|| panic!("the workflow has no job {job:?}: {workflow:#}"));
    let steps = job_value.get("steps").and_then(Value::as_array).expect("the job has steps");
    let default_shell = [job_value, &workflow]
        .iter()
        .find_map(|v| v.pointer("/defaults/run/shell").and_then(Value::as_str))
        .map(str::to_owned);

    let scratch = tempdir();
    let runner_temp = scratch.path().join("runner-temp");
    let home = scratch.path().join("home");
    let commands = scratch.path().join("file-commands");
    for dir in [&runner_temp, &home, &commands] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let mut env = base_env(workspace, &runner_temp, &home);
    for scope in [&workflow, job_value] {
        let ctx = Context { runner_temp: &runner_temp, workspace, outputs: &HashMap::new(), env: &env };
        let add: Vec<_> = string_map(scope.get("env")).into_iter().map(|(k, v)| (k, ctx.interpolate(&v))).collect();
        env.extend(add);
    }

    let mut run = JobRun {
        steps: Vec::new(),
        outputs: HashMap::new(),
        step_summary: String::new(),
        failed: false,
        runner_temp: runner_temp.clone(),
        _scratch: scratch,
    };
    for (index, step) in steps.iter().enumerate() {
        let keys: Vec<&String> = step.as_object().expect("a step is a mapping").keys().collect();
        for key in &keys {
            assert!(
                ["name", "id", "uses", "run", "with", "if", "env", "shell"].contains(&key.as_str()),
                "the test does not know the step key `{key}`: teach `run_job`"
            );
        }
        let uses = text(step, "uses");
        let script = text(step, "run");
        let name = text(step, "name")
            .or(uses)
            .map(str::to_owned)
            .unwrap_or_else(|| script.unwrap_or_default().lines().next().unwrap_or_default().to_owned());
        let ctx = Context { runner_temp: &runner_temp, workspace, outputs: &run.outputs, env: &env };
        let outcome = if !ctx.condition(text(step, "if"), run.failed) {
            Outcome::Skipped(format!("if: {:?}, a step failed before: {}", text(step, "if"), run.failed))
        } else if name == INSTALL_STEP {
            let script = script.expect("the install step runs a command");
            assert!(script.contains(PLACEHOLDER_URL), "the install step names {PLACEHOLDER_URL}: {script}");
            Outcome::Skipped("installs toolshape from the network; the test puts the built binary on PATH".into())
        } else if let Some(uses) = uses {
            assert!(script.is_none(), "a step has either `uses` or `run`");
            let with = string_map(step.get("with")).into_iter().map(|(k, v)| (k, ctx.interpolate(&v))).collect();
            Outcome::Action { uses: uses.to_owned(), with }
        } else {
            let script = script.unwrap_or_else(|| panic!("step {name:?} has neither `uses` nor `run`"));
            let path = runner_temp.join(format!("step-{index}.sh"));
            std::fs::write(&path, script).unwrap();
            let files = ["GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV"]
                .map(|var| (var, commands.join(format!("{var}-{index}"))));
            let mut step_env = env.clone();
            for (var, file) in &files {
                std::fs::write(file, "").unwrap();
                step_env.insert((*var).to_owned(), file.display().to_string());
            }
            step_env.extend(string_map(step.get("env")).into_iter().map(|(k, v)| (k, ctx.interpolate(&v))));
            let shell = text(step, "shell").map(str::to_owned).or_else(|| default_shell.clone());
            let mut cmd = Command::new("bash");
            match shell.as_deref() {
                // What GitHub runs for `shell: bash`, and without a shell on Linux.
                Some("bash") => cmd.args(["--noprofile", "--norc", "-eo", "pipefail"]),
                None => cmd.arg("-e"),
                Some(other) => panic!("the test runs only bash steps, not `shell: {other}`"),
            };
            cmd.arg(&path).current_dir(workspace).env_clear().envs(&step_env);
            let (code, stdout, stderr) = run_with_timeout(&mut cmd, Duration::from_secs(60));
            if let Some(id) = text(step, "id") {
                run.outputs.insert(id.to_owned(), read_file_command(&files[0].1).into_iter().collect());
            }
            run.step_summary.push_str(&std::fs::read_to_string(&files[1].1).unwrap());
            env.extend(read_file_command(&files[2].1));
            run.failed |= code != 0;
            Outcome::Ran { code, stdout, stderr }
        };
        run.steps.push(StepRun { name, outcome });
    }
    run
}

// ----- the projects the workflows run on -------------------------------------------

/// A tool result with an extra key that `fix` moves (safe).
const FIXABLE: &str = "\
def teleop():
    return {
        \"status\": \"success\",
        \"content\": [],
        \"frames\": 512,
    }
";
/// Content is a string: only a person can repair it; `fix` leaves it.
const MANUAL: &str = "def legacy():\n    return {\"status\": \"success\", \"content\": \"done\", \"note\": 1}\n";
/// Nothing to report.
const CLEAN: &str = "def fine():\n    return {\"status\": \"success\", \"content\": [{\"text\": \"fine\"}]}\n";

fn git(dir: &Path, args: &[&str]) -> String {
    let (code, stdout, stderr) = run_with_timeout(
        Command::new("git")
            .args(["-c", "init.defaultBranch=main", "-c", "user.name=test", "-c", "user.email=test@example.invalid"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE"),
        Duration::from_secs(30),
    );
    assert_eq!(code, 0, "git {args:?} failed: {stderr}");
    stdout
}

/// A committed git repository holding `files`, as `actions/checkout` leaves it.
fn checkout(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempdir();
    for (rel, contents) in files {
        write(dir.path(), rel, contents);
    }
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "initial"]);
    dir
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap()
}

const FIX_JOB: &str = "fix";
const FIX_STEP: &str = "Run toolshape fix";
const PR_ACTION: &str = "peter-evans/create-pull-request";
const GATE_JOB: &str = "check";

// ----- recipe 1: the bot pull request ----------------------------------------------

#[test]
fn the_fix_workflow_fixes_the_tree_and_hands_the_summary_to_the_pull_request() {
    let repo = checkout(&[
        ("agent/teleop.py", FIXABLE.as_bytes()),
        ("agent/legacy.py", MANUAL.as_bytes()),
        ("agent/fine.py", CLEAN.as_bytes()),
    ]);
    let run = run_job(&marked_block("fix-workflow"), FIX_JOB, repo.path());

    // A manual case is left (toolshape exits 1), and the step still succeeds.
    let (code, stdout, stderr) = run.ran(FIX_STEP);
    assert_eq!(code, 0, "a case left for a person must not fail the job: {run:#?}");
    assert!(stdout.contains("legacy.py") && stdout.contains("manual repair"), "toolshape ran: {stdout}{stderr}");
    assert!(!run.failed, "{run:#?}");

    // The files: the fixable one fixed, the others untouched.
    let fixed = read(repo.path(), "agent/teleop.py");
    assert_ne!(fixed, FIXABLE, "the tool result was fixed");
    assert!(fixed.contains("{\"json\": {\"frames\": 512}}"), "frames moved into a json block:\n{fixed}");
    let check = support::toolshape(repo.path(), &["check", "agent/teleop.py"]);
    assert_eq!(check.code, 0, "the fixed file passes: {check:?}");
    assert_eq!(read(repo.path(), "agent/legacy.py"), MANUAL);
    assert_eq!(read(repo.path(), "agent/fine.py"), CLEAN);
    // What the pull request would commit: the fix and nothing else (the
    // summary lives outside the checkout).
    assert_eq!(git(repo.path(), &["status", "--porcelain"]), " M agent/teleop.py\n");
    assert_eq!(run.output("fix", "changed"), "true");

    // The pull request step ran, with the summary toolshape wrote as its body.
    let with = run.action(PR_ACTION).unwrap_or_else(|| panic!("the pull request step was not reached: {run:#?}"));
    let body_path = PathBuf::from(with.get("body-path").expect("the pull request step sets body-path"));
    assert_eq!(body_path.to_str(), Some(run.output("fix", "summary")), "body-path is the path the fix step wrote");
    assert!(body_path.starts_with(&run.runner_temp), "the summary is written under RUNNER_TEMP: {body_path:?}");
    let body = std::fs::read_to_string(&body_path)
        .unwrap_or_else(|e| panic!("the body file {} was not written: {e}", body_path.display()));
    assert!(body.starts_with("## "), "a Markdown summary:\n{body}");
    assert!(body.contains("agent/teleop.py"), "the body names the fixed file:\n{body}");
    assert!(body.contains("agent/legacy.py"), "the body names the case left for a person:\n{body}");
    assert_eq!(run.step_summary, body, "the job summary page shows the same summary");
    // Links in the body lead to the fixed lines on the pull request's branch.
    let branch = with.get("branch").expect("the pull request step names its branch");
    let link = format!("(https://github.com/octo/agents/blob/{branch}/agent/teleop.py#L");
    let at = body.find(&link).unwrap_or_else(|| panic!("no absolute link {link:?} in the body:\n{body}"));
    let rest = &body[at + link.len()..];
    let line: usize = rest[..rest.find(')').expect("a closed link")].parse().expect("a line number");
    let fixed_line = fixed.lines().nth(line - 1).unwrap_or_default();
    assert!(fixed_line.ends_with("return {"), "the link's line {line} is the fixed dict's first line:\n{fixed}");
    for key in ["branch", "commit-message", "title"] {
        assert!(with.get(key).is_some_and(|v| !v.trim().is_empty()), "the pull request step sets `{key}`: {with:?}");
    }
    let uses = run.steps.iter().find_map(|s| match &s.outcome {
        Outcome::Action { uses, .. } if uses.starts_with(PR_ACTION) => Some(uses.as_str()),
        _ => None,
    });
    let version = uses.and_then(|u| u.split_once('@')).map(|(_, v)| v).unwrap_or_default();
    assert!(
        version.starts_with('v') && version[1..].parse::<u32>().is_ok(),
        "the action is pinned to a major version: {uses:?}"
    );
    // The install step was the only one left out.
    let skipped: Vec<&str> =
        run.steps.iter().filter(|s| matches!(s.outcome, Outcome::Skipped(_))).map(|s| s.name.as_str()).collect();
    assert_eq!(skipped, [INSTALL_STEP]);
}

#[test]
fn the_fix_workflow_opens_no_pull_request_when_nothing_changed() {
    // Only a case for manual repair: toolshape exits 1 and writes nothing.
    let repo = checkout(&[("agent/legacy.py", MANUAL.as_bytes()), ("agent/fine.py", CLEAN.as_bytes())]);
    let run = run_job(&marked_block("fix-workflow"), FIX_JOB, repo.path());
    assert_eq!(run.ran(FIX_STEP).0, 0, "{run:#?}");
    assert_eq!(run.output("fix", "changed"), "false");
    assert_eq!(git(repo.path(), &["status", "--porcelain"]), "");
    assert!(run.action(PR_ACTION).is_none(), "no pull request without a change: {run:#?}");
    assert!(run.step_summary.contains("agent/legacy.py"), "the run's page still lists the case: {run:#?}");
}

#[test]
fn the_fix_workflow_fails_on_an_error_and_opens_no_pull_request() {
    // A file that cannot be decoded makes toolshape exit 2, though the other
    // file was fixed: the job must fail before the pull request step.
    let repo = checkout(&[("agent/teleop.py", FIXABLE.as_bytes()), ("agent/broken.py", b"\xff\xfe not UTF-8\n")]);
    let run = run_job(&marked_block("fix-workflow"), FIX_JOB, repo.path());
    let (code, stdout, stderr) = run.ran(FIX_STEP);
    assert_eq!(code, 2, "toolshape's error status fails the step: {run:#?}");
    assert!(stderr.contains("agent/broken.py"), "the error names the file: {stderr}");
    assert!(stdout.contains("::error::"), "an annotation says why the job failed: {stdout}");
    assert!(run.failed);
    assert!(run.action(PR_ACTION).is_none(), "no pull request after an error: {run:#?}");
    assert!(
        matches!(run.step("Open or update the pull request"), Outcome::Skipped(why) if why.contains("failed before: true")),
        "{run:#?}"
    );
}

#[test]
fn the_workflows_honour_the_project_configuration() {
    // The page's configuration example excludes tests/fixtures: the bot
    // leaves a violation there alone, and the gate does not see it.
    let config = marked_fence("config", "toml");
    let repo = checkout(&[
        ("pyproject.toml", config.as_bytes()),
        ("agent/teleop.py", FIXABLE.as_bytes()),
        ("tests/fixtures/legacy_result.py", FIXABLE.as_bytes()),
    ]);
    let run = run_job(&marked_block("fix-workflow"), FIX_JOB, repo.path());
    assert_eq!(run.ran(FIX_STEP).0, 0, "{run:#?}");
    assert_eq!(git(repo.path(), &["status", "--porcelain"]), " M agent/teleop.py\n", "{run:#?}");
    assert!(!run.step_summary.contains("tests/fixtures"), "{}", run.step_summary);

    let run = run_job(&marked_block("gate-workflow"), GATE_JOB, repo.path());
    assert!(!run.failed, "the excluded fixture does not fail the gate: {run:#?}");
}

// ----- recipe 2: the gate ----------------------------------------------------------

#[test]
fn the_gate_fails_on_a_violation_with_annotations_and_uploads_sarif() {
    let repo = checkout(&[("agent/teleop.py", FIXABLE.as_bytes()), ("agent/fine.py", CLEAN.as_bytes())]);
    let run = run_job(&marked_block("gate-workflow"), GATE_JOB, repo.path());

    // The SARIF step succeeds with findings, and the upload gets its file.
    assert_eq!(run.ran("SARIF for code scanning").0, 0, "findings are what SARIF is for: {run:#?}");
    let with = run.action("github/codeql-action/upload-sarif").expect("the upload step was reached");
    let sarif_path = with.get("sarif_file").expect("the upload step sets sarif_file");
    assert_eq!(sarif_path, run.output("sarif", "sarif"));
    let sarif: Value = serde_json::from_str(&std::fs::read_to_string(sarif_path).expect("the SARIF file exists"))
        .expect("the SARIF file is JSON");
    assert_eq!(sarif["version"], "2.1.0");
    assert!(sarif.to_string().contains("agent/teleop.py"), "the SARIF log has the finding: {sarif}");

    // The gate fails, with an annotation on the violating line.
    let (code, stdout, _) = run.ran("Check tool results");
    assert_eq!(code, 1, "the gate fails on a violation: {run:#?}");
    assert!(stdout.lines().any(|l| l.starts_with("::error file=") && l.contains("agent/teleop.py")), "{stdout}");
    assert!(run.failed);
    assert_eq!(git(repo.path(), &["status", "--porcelain"]), "", "the gate writes nothing into the checkout");
}

#[test]
fn the_gate_passes_a_clean_tree() {
    let repo = checkout(&[("agent/fine.py", CLEAN.as_bytes())]);
    let run = run_job(&marked_block("gate-workflow"), GATE_JOB, repo.path());
    assert!(!run.failed, "{run:#?}");
    assert_eq!(run.ran("Check tool results"), (0, "", ""));
    assert!(run.action("github/codeql-action/upload-sarif").is_some(), "{run:#?}");
}

#[test]
fn the_gate_fails_on_an_error_before_uploading() {
    let repo = checkout(&[("agent/broken.py", b"\xff\xfe not UTF-8\n")]);
    let run = run_job(&marked_block("gate-workflow"), GATE_JOB, repo.path());
    assert_eq!(run.ran("SARIF for code scanning").0, 2, "{run:#?}");
    assert!(run.action("github/codeql-action/upload-sarif").is_none(), "{run:#?}");
}

// ----- recipe 3: pre-commit ----------------------------------------------------------

/// The hook ids of `.pre-commit-hooks.yaml`, read line by line (`- id: NAME`).
fn published_hook_ids(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            if l.starts_with('#') {
                return None;
            }
            let l = l.strip_prefix("- ").map_or(l, str::trim_start);
            let id = l.strip_prefix("id:")?.split(" #").next()?.trim();
            Some(id.trim_matches(|c| c == '"' || c == '\'').to_owned())
        })
        .collect()
}

#[test]
fn the_pre_commit_snippet_names_the_published_hooks() {
    let snippet = yaml::parse(&marked_block("pre-commit"));
    let repos = snippet["repos"].as_array().expect("`repos:` is a list");
    assert_eq!(repos.len(), 1, "{snippet:#}");
    let repo = &repos[0];
    assert_eq!(repo["repo"], PLACEHOLDER_URL, "the snippet uses the marked placeholder URL");
    assert!(repo["rev"].as_str().is_some_and(|r| !r.is_empty()), "the snippet pins a rev: {repo}");
    let mut ids: Vec<String> = repo["hooks"]
        .as_array()
        .expect("`hooks:` is a list")
        .iter()
        .map(|h| h["id"].as_str().expect("every hook has an id").to_owned())
        .collect();
    ids.sort();
    assert_eq!(ids, ["toolshape-check", "toolshape-fix"]);

    let hooks_file = manifest_dir().join(".pre-commit-hooks.yaml");
    let published = std::fs::read_to_string(&hooks_file)
        .unwrap_or_else(|e| panic!("{} must exist for the pre-commit recipe: {e}", hooks_file.display()));
    let mut published = published_hook_ids(&published);
    published.sort();
    assert_eq!(ids, published, "docs/ci.md's pre-commit snippet and .pre-commit-hooks.yaml name the same hooks");
}

// ----- the page itself, and the reader -----------------------------------------------

#[test]
fn the_recipes_read_the_same_with_pyyaml() {
    let mut compared = 0;
    for name in ["fix-workflow", "gate-workflow", "pre-commit"] {
        let block = marked_block(name);
        let mine = yaml::parse(&block);
        match pyyaml(&block) {
            Some(theirs) => {
                assert_eq!(mine, theirs, "the test's reader and PyYAML disagree on `{name}`");
                compared += 1;
            }
            None => break,
        }
    }
    if compared == 0 {
        support::skip(
            "the_recipes_read_the_same_with_pyyaml",
            "python3 with PyYAML not found; the recipes were read by the test's own reader only",
        );
    }
}

#[test]
fn the_fix_step_runs_toolshape_fix_with_a_summary() {
    let workflow = yaml::parse(&marked_block("fix-workflow"));
    let steps = workflow.pointer("/jobs/fix/steps").and_then(Value::as_array).expect("jobs.fix.steps");
    let fix = steps.iter().find(|s| s["name"] == FIX_STEP).expect("the fix step");
    assert_eq!(fix["id"], "fix");
    assert!(fix["run"].as_str().unwrap().contains("toolshape fix --summary-md"), "{fix}");
    let permissions = &workflow["permissions"];
    assert_eq!(permissions["contents"], "write", "to push the branch");
    assert_eq!(permissions["pull-requests"], "write", "to open the pull request");
    for trigger in ["schedule", "workflow_dispatch"] {
        assert!(workflow["on"].get(trigger).is_some(), "the workflow runs on {trigger}");
    }
}

#[test]
fn every_flag_on_the_page_is_a_toolshape_flag() {
    // Flags of the other programs the page runs: cargo install, git status, pre-commit run.
    const OTHERS: [&str; 5] = ["--locked", "--git", "--tag", "--porcelain", "--all-files"];
    let dir = tempdir();
    let help: String = ["check", "fix"]
        .iter()
        .map(|command| {
            let run = support::toolshape(dir.path(), &[command, "--help"]);
            assert_eq!(run.code, 0, "{run:?}");
            run.stdout
        })
        .collect();
    let page = page();
    let mut flags: Vec<&str> = page
        .match_indices("--")
        .filter(|&(i, _)| !page[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '-'))
        .map(|(i, _)| {
            let end =
                page[i + 2..].find(|c: char| !(c.is_ascii_lowercase() || c == '-')).map_or(page.len(), |e| e + i + 2);
            &page[i..end]
        })
        .filter(|flag| flag.len() > 2)
        .collect();
    flags.sort_unstable();
    flags.dedup();
    assert!(flags.contains(&"--summary-md"), "the flags were found: {flags:?}");
    for flag in flags {
        if OTHERS.contains(&flag) {
            continue;
        }
        let listed = help.lines().any(|l| l.split([' ', ',', '=', '<']).any(|word| word == flag));
        assert!(listed, "docs/ci.md uses `{flag}`, which neither `toolshape check --help` nor `fix --help` lists");
    }
}

#[test]
fn the_reader_reads_what_the_recipes_use_and_refuses_the_rest() {
    let src = "\
a: plain # comment
b: \"quoted: # not a comment\"
c: 'it''s'
d: [x, y]
e:
  - k: v
    l: |
      line 1
        indented

      line 3

  - scalar
f:
- same-indent item
g:
";
    let expected = serde_json::json!({
        "a": "plain",
        "b": "quoted: # not a comment",
        "c": "it's",
        "d": ["x", "y"],
        "e": [{"k": "v", "l": "line 1\n  indented\n\nline 3\n"}, "scalar"],
        "f": ["same-indent item"],
        "g": null,
    });
    assert_eq!(yaml::parse(src), expected);
    for bad in ["a: {x: 1}\n", "a: &anchor x\n", "a: b\n  c: d\n", "a: >\n  folded\n", "a: 1\na: 2\n"] {
        assert!(std::panic::catch_unwind(|| yaml::parse(bad)).is_err(), "{bad:?} must be refused");
    }
    assert_eq!(
        published_hook_ids("-   id: toolshape-check\n    name: x\n- id: \"toolshape-fix\"\n"),
        ["toolshape-check", "toolshape-fix"]
    );
}
