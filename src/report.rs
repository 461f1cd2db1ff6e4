//! Reports: findings rendered as text, JSON or GitHub annotations, and the
//! summary line. Rendering is pure (strings out); the CLI decides where they go.

use std::path::Path;

use serde::Serialize;

use crate::diagnostics::Applicability;
use crate::diagnostics::{BuilderRef, Code, Finding, Origin, ReadRef, Span};
use crate::rules::{self, REGISTRY};

/// An output format for findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line per finding, then a summary.
    Text,
    /// One JSON array of findings.
    Json,
    /// GitHub Actions workflow commands (annotations).
    Github,
    /// One SARIF 2.1.0 log (GitHub code scanning).
    Sarif,
    /// JUnit XML: a test suite per file, a failed test case per finding.
    Junit,
}

/// ANSI styling, on or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Palette {
    pub enabled: bool,
}

impl Palette {
    fn paint(self, code: &str, text: &str) -> String {
        if self.enabled { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_owned() }
    }
    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }
    pub fn red(self, text: &str) -> String {
        self.paint("31", text)
    }
    pub fn green(self, text: &str) -> String {
        self.paint("32", text)
    }
    pub fn cyan(self, text: &str) -> String {
        self.paint("36", text)
    }
    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }
}

#[derive(Serialize)]
struct JsonSpan {
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
}

impl From<Span> for JsonSpan {
    fn from(s: Span) -> Self {
        JsonSpan { line: s.start.line, column: s.start.column, end_line: s.end.line, end_column: s.end.column }
    }
}

/// The stable JSON shape of a finding. Fields may be added, never renamed.
#[derive(Serialize)]
struct JsonFinding<'a> {
    path: String,
    code: &'a str,
    message: String,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    key: Option<&'a str>,
    spread: Option<&'a str>,
    dict: JsonSpan,
    /// `"safe"`, `"unsafe"`, or null when only a person can fix it.
    fixable: Option<&'static str>,
    /// How a moved key reaches the result; null for the rules that move
    /// no key (TS005–TS009, TS100).
    origin: Option<Origin>,
    expression: Option<&'a str>,
    builder: Option<&'a BuilderRef>,
    reads: &'a [ReadRef],
}

/// Renders one finding as a JSON object on one line.
pub fn json_finding(path: &Path, f: &Finding) -> String {
    let record = JsonFinding {
        path: path.display().to_string(),
        code: f.code.as_str(),
        message: f.message(),
        line: f.span.start.line,
        column: f.span.start.column,
        end_line: f.span.end.line,
        end_column: f.span.end.column,
        key: f.key.as_deref(),
        spread: f.spread.as_deref(),
        dict: f.dict_span.into(),
        fixable: f.fixable.map(Applicability::as_str),
        origin: f.code.moves_keys().then_some(f.origin),
        expression: f.expression.as_deref(),
        builder: f.builder.as_ref(),
        reads: &f.reads,
    };
    serde_json::to_string(&record).expect("findings always serialize")
}

/// The text marker of a finding's fix: `[*]` safe, `[~]` unsafe.
fn fix_marker(f: &Finding) -> &'static str {
    match f.fixable {
        Some(Applicability::Safe) => " [*]",
        Some(Applicability::Unsafe) => " [~]",
        None => "",
    }
}

/// Renders one finding as a text line, ruff's concise style; where the
/// project reads the key it moves is said at the end
/// (`(read at tests/test_adb.py:26, +3 more)`).
pub fn text_finding(path: &Path, f: &Finding, palette: Palette) -> String {
    format!(
        "{}{}{}{}{} {}{} {}{}",
        palette.bold(&path.display().to_string()),
        palette.cyan(":"),
        f.span.start.line,
        palette.cyan(":"),
        format_args!("{}:", f.span.start.column),
        palette.red(&palette.bold(f.code.as_str())),
        fix_marker(f),
        f.message(),
        read_note(f)
    )
}

/// ` (read at PATH:LINE, +N more)`, or nothing when no read is known.
fn read_note(f: &Finding) -> String {
    match f.reads.as_slice() {
        [] => String::new(),
        [first] => format!(" (read at {}:{})", first.path, first.line),
        [first, rest @ ..] => format!(" (read at {}:{}, +{} more)", first.path, first.line, rest.len()),
    }
}

/// Escapes a GitHub workflow-command property value.
fn github_property(value: &str) -> String {
    github_data(value).replace(':', "%3A").replace(',', "%2C")
}

/// Escapes GitHub workflow-command message data.
fn github_data(value: &str) -> String {
    value.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Renders one finding as a GitHub Actions error annotation.
pub fn github_finding(path: &Path, f: &Finding) -> String {
    format!(
        "::error file={},line={},col={},endLine={},endColumn={},title={}::{}",
        github_property(&path.display().to_string()),
        f.span.start.line,
        f.span.start.column,
        f.span.end.line,
        f.span.end.column,
        f.code,
        github_data(&format!("{} {}", f.code, f.message()))
    )
}

/// A relative path as a URI reference (SARIF artifacts, Markdown links):
/// `/` separators, `./` dropped, reserved characters percent-encoded.
pub fn path_uri(path: &Path) -> String {
    let shown = path.display().to_string().replace('\\', "/");
    let shown = shown.strip_prefix("./").unwrap_or(&shown);
    let mut out = String::with_capacity(shown.len());
    for byte in shown.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Renders all findings as one SARIF 2.1.0 log.
pub fn sarif(findings: &[(std::path::PathBuf, Finding)]) -> String {
    let rules: Vec<serde_json::Value> = REGISTRY
        .iter()
        .map(|rule| {
            serde_json::json!({
                "id": rule.code.as_str(),
                "name": rule.name,
                "shortDescription": {"text": rule.name.replace('-', " ")},
                "fullDescription": {"text": rule.description},
                "defaultConfiguration": {"level": "error"},
            })
        })
        .collect();
    let results: Vec<serde_json::Value> = findings
        .iter()
        .map(|(path, f)| {
            let rule_index = REGISTRY.iter().position(|r| r.code == f.code).expect("every code is a rule");
            // Where the project reads the key this finding's fix moves.
            let related: Vec<serde_json::Value> = f
                .reads
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let what = match &r.key {
                        Some(key) => format!("reads \"{key}\" ({})", r.form),
                        None => "uses the whole result".to_owned(),
                    };
                    serde_json::json!({
                        "id": i,
                        "message": {"text": what},
                        "physicalLocation": {
                            "artifactLocation": {"uri": path_uri(Path::new(&r.path))},
                            "region": {
                                "startLine": r.line,
                                "startColumn": r.column,
                                "endLine": r.end_line,
                                "endColumn": r.end_column,
                            },
                        },
                    })
                })
                .collect();
            let mut result = serde_json::json!({
                "ruleId": f.code.as_str(),
                "ruleIndex": rule_index,
                "level": "error",
                "message": {"text": f.message()},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": path_uri(path)},
                        "region": {
                            "startLine": f.span.start.line,
                            "startColumn": f.span.start.column,
                            "endLine": f.span.end.line,
                            "endColumn": f.span.end.column,
                        },
                    },
                }],
                "properties": {"fixable": f.fixable.map(Applicability::as_str)},
            });
            if !related.is_empty() {
                result["relatedLocations"] = serde_json::Value::Array(related);
            }
            result
        })
        .collect();
    let log = serde_json::json!({
        "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "toolshape",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://strandsagents.com",
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&log).expect("SARIF serializes")
}

/// Escapes text for XML attributes and content.
fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push_str(&format!("&#{};", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Renders all findings as JUnit XML: one test suite per file with
/// findings, one failed test case per finding.
pub fn junit(findings: &[(std::path::PathBuf, Finding)], files_checked: usize) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"toolshape\" tests=\"{n}\" failures=\"{n}\" errors=\"0\">\n",
        n = findings.len()
    ));
    let mut start = 0;
    while start < findings.len() {
        let path = &findings[start].0;
        let end = start + findings[start..].iter().take_while(|(p, _)| p == path).count();
        let name = xml_escape(&path.display().to_string());
        out.push_str(&format!(
            "  <testsuite name=\"{name}\" tests=\"{n}\" failures=\"{n}\" errors=\"0\">\n",
            n = end - start
        ));
        for (_, f) in &findings[start..end] {
            let (line, column) = (f.span.start.line, f.span.start.column);
            out.push_str(&format!(
                "    <testcase name=\"{code} {name}:{line}:{column}\" classname=\"{name}\">\n      <failure type=\"{code}\" message=\"{msg}\">{name}:{line}:{column}: {code} {msg}</failure>\n    </testcase>\n",
                code = f.code,
                msg = xml_escape(&f.message()),
            ));
        }
        out.push_str("  </testsuite>\n");
        start = end;
    }
    if findings.is_empty() {
        out.push_str(&format!(
            "  <testsuite name=\"toolshape\" tests=\"{files_checked}\" failures=\"0\" errors=\"0\"/>\n"
        ));
    }
    out.push_str("</testsuites>");
    out
}

/// A rule's short name.
/// `n` and `word`, in the plural unless `n` is 1 (`fix` → `fixes`).
pub fn plural(n: usize, word: &str) -> String {
    match n {
        1 => format!("1 {word}"),
        _ if word.ends_with('x') || word.ends_with('s') => format!("{n} {word}es"),
        _ => format!("{n} {word}s"),
    }
}

/// Counts for the last line of a `check` report.
#[derive(Debug, Default, Clone)]
pub struct CheckTally {
    pub violations: usize,
    pub files_with_violations: usize,
    pub files_checked: usize,
    pub safe_fixable: usize,
    pub unsafe_fixable: usize,
    /// Per rule: (findings, with a safe fix, with an unsafe fix).
    pub by_code: std::collections::BTreeMap<Code, (usize, usize, usize)>,
}

impl CheckTally {
    pub fn add(&mut self, findings: &[Finding]) {
        self.files_checked += 1;
        self.files_with_violations += usize::from(!findings.is_empty());
        self.violations += findings.len();
        self.safe_fixable += findings.iter().filter(|f| f.fixable == Some(Applicability::Safe)).count();
        self.unsafe_fixable += findings.iter().filter(|f| f.fixable == Some(Applicability::Unsafe)).count();
        for f in findings {
            let entry = self.by_code.entry(f.code).or_default();
            entry.0 += 1;
            entry.1 += usize::from(f.fixable == Some(Applicability::Safe));
            entry.2 += usize::from(f.fixable == Some(Applicability::Unsafe));
        }
    }

    /// `--statistics` as text: one line per rule, most frequent first.
    pub fn statistics_lines(&self) -> Vec<String> {
        let mut rows: Vec<_> = self.by_code.iter().collect();
        rows.sort_by_key(|(code, (n, _, _))| (std::cmp::Reverse(*n), **code));
        rows.into_iter()
            .map(|(code, (n, safe, unsafe_))| {
                format!(
                    "{n:>6}  {code}  {} ({safe} with a safe fix, {unsafe_} with an unsafe fix)",
                    rules::rule(*code).name
                )
            })
            .collect()
    }

    /// `--statistics` as JSON: one object per rule, most frequent first.
    pub fn statistics_json(&self) -> String {
        let mut rows: Vec<_> = self.by_code.iter().collect();
        rows.sort_by_key(|(code, (n, _, _))| (std::cmp::Reverse(*n), **code));
        let rows: Vec<serde_json::Value> = rows
            .into_iter()
            .map(|(code, (n, safe, unsafe_))| {
                serde_json::json!({"code": code.as_str(), "name": rules::rule(*code).name, "count": n, "fixable_safe": safe, "fixable_unsafe": unsafe_})
            })
            .collect();
        serde_json::to_string_pretty(&rows).expect("statistics serialize")
    }

    /// The last line of a text report.
    pub fn summary(&self) -> String {
        if self.violations == 0 {
            return format!("All checked: no violations in {}.", plural(self.files_checked, "file"));
        }
        let mut line = format!(
            "Found {} in {}.",
            plural(self.violations, "violation"),
            plural(self.files_with_violations, "file")
        );
        if self.safe_fixable > 0 {
            line.push_str(&format!(" [*] {} fixable with `toolshape fix`.", self.safe_fixable));
        }
        if self.unsafe_fixable > 0 {
            line.push_str(&format!(" [~] {} fixable with `toolshape fix --unsafe-fixes`.", self.unsafe_fixable));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals() {
        assert_eq!(plural(1, "unsafe fix"), "1 unsafe fix");
        assert_eq!(plural(2, "unsafe fix"), "2 unsafe fixes");
        assert_eq!(plural(0, "file"), "0 files");
        assert_eq!(plural(3, "tool result"), "3 tool results");
    }
    use crate::check::{CheckOptions, check_source};
    use crate::contract::Rules;
    use crate::syntax::ParseScope;

    fn finding() -> Finding {
        check_source(
            "x = {'status': 1, 'content': [], 'fr,ames': 2}\n",
            &CheckOptions::new(ParseScope::Candidates),
            &Rules::moves_only(),
        )
        .remove(0)
    }

    #[test]
    fn text_line_is_concise() {
        let line = text_finding(Path::new("a b.py"), &finding(), Palette { enabled: false });
        assert_eq!(
            line,
            "a b.py:1:34: TS001 [*] extra top-level key \"fr,ames\" in tool result — the runtime drops it"
        );
    }

    #[test]
    fn github_escapes_properties_and_data() {
        let line = github_finding(Path::new("dir,1/a:b.py"), &finding());
        assert!(
            line.starts_with(
                "::error file=dir%2C1/a%3Ab.py,line=1,col=34,endLine=1,endColumn=46,title=TS001::TS001 extra"
            ),
            "{line}"
        );
    }

    #[test]
    fn json_has_stable_fields() {
        let value: serde_json::Value = serde_json::from_str(&json_finding(Path::new("a.py"), &finding())).unwrap();
        let keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
        for k in ["path", "code", "message", "line", "column", "end_line", "end_column", "key", "spread", "dict"] {
            assert!(keys.contains(&k), "{k}");
        }
        assert_eq!(value["dict"]["column"], 5);
        assert_eq!(value["key"], "fr,ames");
        assert!(value["spread"].is_null());
    }

    #[test]
    fn statistics_count_per_rule() {
        let mut tally = CheckTally::default();
        tally.add(&check_source(
            "x = {'status': 1, 'content': [], 'a': 1, 'b': 2, **c}\n",
            &CheckOptions::new(ParseScope::Candidates),
            &Rules::moves_only(),
        ));
        assert_eq!(
            tally.statistics_lines(),
            [
                "     2  TS001  extra-top-level-key (0 with a safe fix, 2 with an unsafe fix)",
                "     1  TS002  top-level-spread (0 with a safe fix, 1 with an unsafe fix)"
            ]
        );
        let json: serde_json::Value = serde_json::from_str(&tally.statistics_json()).unwrap();
        assert_eq!(json[0]["code"], "TS001");
        assert_eq!(json[0]["count"], 2);
    }

    #[test]
    fn summaries_read_naturally() {
        let tally = |violations, files_with_violations, safe_fixable, unsafe_fixable| {
            CheckTally {
                violations,
                files_with_violations,
                files_checked: 41,
                safe_fixable,
                unsafe_fixable,
                ..Default::default()
            }
            .summary()
        };
        assert_eq!(tally(0, 0, 0, 0), "All checked: no violations in 41 files.");
        assert_eq!(tally(7, 3, 0, 0), "Found 7 violations in 3 files.");
        assert_eq!(tally(1, 1, 1, 0), "Found 1 violation in 1 file. [*] 1 fixable with `toolshape fix`.");
        assert_eq!(
            tally(3, 1, 1, 2),
            "Found 3 violations in 1 file. [*] 1 fixable with `toolshape fix`. [~] 2 fixable with `toolshape fix --unsafe-fixes`."
        );
    }
}
