//! Baseline suppressions for `toolshape check --add-ignores`: a
//! `# toolshape: ignore[...]` comment for every current finding, so that a
//! large codebase can gate only *new* violations in CI from day one. This
//! module owns where such a comment may go and how it is written
//! ([`add_ignores`]: text in, text out; [`add_ignores_to_file`] writes a file
//! back); reading suppressions stays with [`crate::suppress`].
//!
//! * Each finding is suppressed on the physical line where its entry starts,
//!   so a violation added later elsewhere in the same dict is still reported.
//!   One comment per line, its codes sorted and deduplicated, appended as
//!   `  # toolshape: ignore[TS001, TS002]` just before the line break. Every
//!   other byte is kept: the line break (`\n`, `\r\n`, `\r`), tabs, and
//!   trailing whitespace (nothing is stripped; the two spaces come after it).
//! * A line that already ends with a comment: a `toolshape: ignore[...]` list
//!   in it is extended in place (its codes kept as written, the list sorted
//!   and `, `-separated); a comment that already covers the codes
//!   (`# toolshape: ignore`, `# noqa`) is left alone; otherwise a second
//!   comment is appended after it, as ruff's `--add-noqa` does.
//! * Never inside strings: where the entry's line ends is read from the
//!   file's parse (the same tree-sitter tree every stage reads, not a
//!   scanner of its own): a line break inside a string or an f-string field,
//!   a backslash continuation, or a syntax error on the line make it
//!   unusable. Such a line falls back to the dict's first line (which
//!   silences that code for the whole dict); if that fails too, the finding
//!   is skipped with the reason.
//! * Every edit is verified on a re-parse: the comment it writes must be a
//!   `comment` node, must silence its findings when read as the contract reads
//!   suppressions, and the file must have no more syntax errors than before.
//!   An edit that fails is dropped and its findings are skipped.
//! * A finding that points at a comment rather than a dict entry (an unused
//!   suppression) is skipped: another comment cannot silence it.
//!
//! A second run changes nothing: the suppressed findings are gone.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::Path;

use crate::apply::{self, error_count};
use crate::check::{self, CheckOptions};
use crate::contract::Rules;
use crate::diagnostics::{Code, Finding};
use crate::project::Projects;
use crate::source::{self, SourceText};
use crate::suppress;
use crate::syntax::tree::KindName;
use crate::syntax::{self, LineIndex};
use tree_sitter::Tree;

/// What [`add_ignores`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedIgnores {
    /// The source with the suppression comments.
    pub text: String,
    /// Comments written or extended.
    pub added: usize,
    /// Findings left unsuppressed, as indices into the findings given, each
    /// with the reason, sorted by index.
    pub skipped: Vec<(usize, String)>,
}

/// Writes a suppression comment for every finding of `src` (as
/// [`crate::check::check_source`] gives them). See the module docs for where
/// the comments go.
pub fn add_ignores(src: &str, findings: &[Finding]) -> AddedIgnores {
    if findings.is_empty() {
        return AddedIgnores { text: src.to_owned(), added: 0, skipped: Vec::new() };
    }
    let mut skipped = Vec::new();
    let tree = syntax::parse(src);
    let groups = group_by_line(src, &tree, findings, &mut skipped);
    let mut edits: Vec<Edit> = groups.into_values().filter_map(|group| plan_edit(src, group)).collect();
    let mut text = src.to_owned();
    if !edits.is_empty() {
        let index = LineIndex::new(src);
        let old_errors = error_count(&tree);
        loop {
            let applied = Applied::new(src, &edits);
            let bad = applied.unsafe_edits(src, &edits, old_errors);
            if bad.is_empty() {
                text = applied.text;
                break;
            }
            // Last first, so the indices stay valid.
            for &k in bad.iter().rev() {
                let edit = edits.remove(k);
                let line = index.line_of(edit.range.start) + 1;
                let why = format!("could not place a suppression comment safely on line {line}; add it by hand");
                skipped.extend(edit.uses.iter().map(|u| (u.finding, why.clone())));
            }
            if edits.is_empty() {
                break;
            }
        }
    }
    skipped.sort_by_key(|&(i, _)| i);
    AddedIgnores { text, added: edits.len(), skipped }
}

/// What `check --add-ignores` did to one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileIgnores {
    /// Comments written or extended (none: the file was not written).
    pub added: usize,
    /// The findings left unsuppressed: each one's 1-based line, and why.
    pub skipped: Vec<(usize, String)>,
}

/// [`add_ignores`] for the findings of the file at `path` (with
/// `not_results`, its TS005 findings, which the whole project decides),
/// written back in place: atomically, in the file's own encoding (BOM
/// kept), never over a file that changed since it was read. A file
/// without findings (a Python 2 file has none) is only read.
pub fn add_ignores_to_file(
    path: &Path,
    options: &CheckOptions,
    rules: &Rules,
    projects: &Projects,
    not_results: Vec<Finding>,
) -> Result<FileIgnores, String> {
    let found = source::with_bytes(path, |bytes| {
        let text = source::text_of(bytes)?;
        let mut findings = check::check_source(&text, options, rules);
        check::add_project_findings(&mut findings, projects, path, &text, options, rules);
        if !not_results.is_empty() {
            findings.extend(not_results);
            findings.sort_by_key(|f| (f.entry.start, f.code));
        }
        // A Python 2 file gets no finding from `check` (it is left as it
        // is): nothing to baseline.
        if !findings.is_empty() && check::legacy_line(&text).is_some() {
            findings.clear();
        }
        Ok::<_, String>((!findings.is_empty()).then(|| (bytes.to_vec(), findings)))
    })??;
    let Some((bytes, findings)) = found else {
        return Ok(FileIgnores::default());
    };
    let source = SourceText::decode(bytes.clone())?;
    let result = add_ignores(&source.text, &findings);
    if result.added > 0 {
        apply::write_atomic(path, &bytes, &source.encode(&result.text)?)?;
    }
    let skipped = result.skipped.into_iter().map(|(i, why)| (findings[i].span.start.line, why)).collect();
    Ok(FileIgnores { added: result.added, skipped })
}

/// One finding to suppress on a line: the code position its suppression is
/// read from (the entry's start or, as a fallback, the dict's `{`).
#[derive(Debug, Clone, Copy)]
struct Use {
    finding: usize,
    start: usize,
    code: Code,
}

/// The findings to suppress on one line, and how that line ends.
#[derive(Debug)]
struct Group {
    /// The line's end: its line break, or the end of the text.
    end: usize,
    /// The line's trailing comment.
    comment: Option<Range<usize>>,
    uses: Vec<Use>,
}

/// Groups the findings by the line their suppression goes on, keyed by
/// 0-based line; findings that fit no line go to `skipped`.
fn group_by_line(
    src: &str,
    tree: &Tree,
    findings: &[Finding],
    skipped: &mut Vec<(usize, String)>,
) -> BTreeMap<usize, Group> {
    let index = LineIndex::new(src);
    let valid = |pos: usize| pos < src.len() && src.is_char_boundary(pos);
    // One scan per line, from the last start on it: every code position of a
    // line gives the same answer, and the last one the shortest walk.
    let mut last_start: BTreeMap<usize, usize> = BTreeMap::new();
    for f in findings.iter().filter(|f| valid(f.entry.start)) {
        let start = last_start.entry(index.line_of(f.entry.start)).or_insert(f.entry.start);
        *start = (*start).max(f.entry.start);
    }
    let mut scans: BTreeMap<usize, LineEnd> =
        last_start.into_iter().map(|(line, start)| (line, scan_line(tree, src, start))).collect();
    let mut groups: BTreeMap<usize, Group> = BTreeMap::new();
    for (i, f) in findings.iter().enumerate() {
        if !valid(f.entry.start) {
            skipped.push((i, "its position lies outside the source".to_owned()));
            continue;
        }
        if src.as_bytes()[f.entry.start] == b'#' {
            // A finding about a comment itself (an unused suppression, say):
            // another comment would not silence it, only removing it would.
            skipped.push((i, "it points at a comment, not at a dict entry; nothing to suppress".to_owned()));
            continue;
        }
        let line = index.line_of(f.entry.start);
        let (line, start, end, comment) = match scans[&line].clone() {
            LineEnd::Code { end, comment } => (line, f.entry.start, end, comment),
            LineEnd::Blocked(why) => {
                let dict_line = index.line_of(f.dict.start);
                if dict_line == line || !valid(f.dict.start) {
                    let why = why.describe();
                    skipped.push((i, format!("line {} {why}; {NO_COMMENT}", line + 1)));
                    continue;
                }
                let dict_scan = scans.entry(dict_line).or_insert_with(|| scan_line(tree, src, f.dict.start));
                match dict_scan.clone() {
                    LineEnd::Code { end, comment } => (dict_line, f.dict.start, end, comment),
                    LineEnd::Blocked(dict_why) => {
                        let (why, dict_why) = (why.describe(), dict_why.describe());
                        let reason = format!(
                            "line {} {why}, and the dict's line {} {dict_why}; {NO_COMMENT}",
                            line + 1,
                            dict_line + 1
                        );
                        skipped.push((i, reason));
                        continue;
                    }
                }
            }
        };
        let group = groups.entry(line).or_insert_with(|| Group { end, comment, uses: Vec::new() });
        group.uses.push(Use { finding: i, start, code: f.code });
    }
    groups
}

/// A text edit that suppresses one line's findings.
#[derive(Debug)]
struct Edit {
    /// The replaced bytes of the source (empty for an appended comment).
    range: Range<usize>,
    text: String,
    /// The `#` of the line's existing comment (extended, or appended to: the
    /// comment then runs on), or `None` when the line had no comment (the
    /// appended one starts at its third byte).
    existing_hash: Option<usize>,
    uses: Vec<Use>,
}

/// The comment appended after a line's code (or its existing comment).
const APPENDED_PREFIX: &str = "  # toolshape: ignore[";

/// The edit for a group, if its line's comment does not already cover it.
fn plan_edit(src: &str, group: Group) -> Option<Edit> {
    let existing = group.comment.as_ref().map(|c| &src[c.clone()]);
    let covered = existing.map(suppress::in_line_tail).unwrap_or_default();
    let needed: BTreeSet<Code> = group.uses.iter().map(|u| u.code).filter(|&c| !covered.covers(c)).collect();
    if needed.is_empty() {
        return None;
    }
    if let (Some(comment), Some(list)) = (&group.comment, existing.and_then(ignore_list)) {
        let range = comment.start + list.start..comment.start + list.end;
        let text = merged_list(&src[range.clone()], &needed);
        return Some(Edit { range, text, existing_hash: Some(comment.start), uses: group.uses });
    }
    let codes: Vec<&str> = needed.iter().map(|c| c.as_str()).collect();
    let text = format!("{APPENDED_PREFIX}{}]", codes.join(", "));
    let existing_hash = group.comment.map(|c| c.start);
    Some(Edit { range: group.end..group.end, text, existing_hash, uses: group.uses })
}

/// The byte range (inside the brackets) of the first
/// `# toolshape: ignore[...]` list in `comment`, read as
/// [`suppress::in_line_tail`] reads it.
fn ignore_list(comment: &str) -> Option<Range<usize>> {
    let lower = comment.to_ascii_lowercase();
    lower.match_indices('#').find_map(|(at, _)| {
        let rest = lower[at + 1..].trim_start().strip_prefix("toolshape:")?;
        let list = rest.trim_start().strip_prefix("ignore")?.trim_start().strip_prefix('[')?;
        let close = list.find(']')?;
        let open = lower.len() - list.len();
        Some(open..open + close)
    })
}

/// An existing list's codes (as written) and `codes`, sorted, deduplicated
/// and `, `-separated.
fn merged_list(list: &str, codes: &BTreeSet<Code>) -> String {
    let mut all: Vec<&str> = list.split([',', ' ', '\t']).filter(|c| !c.is_empty()).collect();
    all.extend(codes.iter().map(|c| c.as_str()));
    all.sort_by_key(|c| c.to_ascii_uppercase());
    all.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
    all.join(", ")
}

/// The source with edits applied, and where each edit landed.
struct Applied {
    text: String,
    /// Each edit's start in the new text.
    new_starts: Vec<usize>,
}

impl Applied {
    /// Applies `edits` (sorted, disjoint) to `src`.
    fn new(src: &str, edits: &[Edit]) -> Self {
        let mut text = String::with_capacity(src.len() + edits.iter().map(|e| e.text.len()).sum::<usize>());
        let mut new_starts = Vec::with_capacity(edits.len());
        let mut at = 0;
        for edit in edits {
            text.push_str(&src[at..edit.range.start]);
            new_starts.push(text.len());
            text.push_str(&edit.text);
            at = edit.range.end;
        }
        text.push_str(&src[at..]);
        Applied { text, new_starts }
    }

    /// Where source offset `pos` (outside every edit's range) is in the new text.
    fn map(&self, edits: &[Edit], pos: usize) -> usize {
        match edits.partition_point(|e| e.range.end <= pos) {
            0 => pos,
            k => self.new_starts[k - 1] + edits[k - 1].text.len() + (pos - edits[k - 1].range.end),
        }
    }

    /// The indices of the edits that fail verification on a re-parse of the
    /// new text: a comment that is not a `comment` node, does not silence its
    /// findings, or more syntax errors than the source had (`old_errors`).
    fn unsafe_edits(&self, src: &str, edits: &[Edit], old_errors: usize) -> Vec<usize> {
        let tree = syntax::parse(&self.text);
        let root = tree.root_node();
        let line_end = |pos: usize| {
            memchr::memchr2(b'\n', b'\r', &self.text.as_bytes()[pos..]).map_or(self.text.len(), |i| pos + i)
        };
        let bad: Vec<usize> = (0..edits.len())
            .filter(|&k| {
                let edit = &edits[k];
                let start = self.new_starts[k];
                let hash = match edit.existing_hash {
                    Some(hash) => self.map(edits, hash),
                    None => start + 2,
                };
                let in_comment = root
                    .descendant_for_byte_range(hash, start + edit.text.len())
                    .is_some_and(|n| n.kind_name() == "comment" && n.start_byte() == hash);
                let silences = edit.uses.iter().all(|u| {
                    let from = self.map(edits, u.start);
                    suppress::in_line_tail(&self.text[from..line_end(from)]).covers(u.code)
                });
                !(in_comment && silences)
            })
            .collect();
        if !bad.is_empty() || error_count(&tree) <= old_errors {
            return bad;
        }
        // New syntax errors: blame the edits on the errors' lines, or all.
        let mut errors = Vec::new();
        syntax::for_each_node(root, |n| {
            if n.is_error() || n.is_missing() {
                errors.push(n.byte_range());
            }
        });
        let blamed: Vec<usize> = (0..edits.len())
            .filter(|&k| {
                let line_start = self.map(edits, line_start_of(src, edits[k].range.start));
                let end = line_end(self.new_starts[k]);
                errors.iter().any(|e| e.start <= end && e.end >= line_start)
            })
            .collect();
        if blamed.is_empty() { (0..edits.len()).collect() } else { blamed }
    }
}

/// The start of the line holding `pos`.
fn line_start_of(src: &str, pos: usize) -> usize {
    memchr::memrchr2(b'\n', b'\r', &src.as_bytes()[..pos]).map_or(0, |i| i + 1)
}

/// Why a suppression comment cannot go at the end of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Blocked {
    /// The line break is inside a string (a triple-quoted one, an escaped
    /// line break, an f-string field spanning lines).
    InString,
    /// The line ends with a `\` continuation.
    Continuation,
    /// The line holds a syntax error: where its code ends cannot be told.
    SyntaxError,
}

impl Blocked {
    fn describe(self) -> &'static str {
        match self {
            Blocked::InString => "ends inside a string",
            Blocked::Continuation => "ends with a backslash continuation",
            Blocked::SyntaxError => "holds a syntax error",
        }
    }
}

/// What to do with a finding no comment can be read for: the lines a
/// suppression of it is read from cannot end in a comment.
const NO_COMMENT: &str =
    "no comment can end it there: reflow the code, or turn the code off with `ignore` in the nearest configuration";

/// How a line ends, seen from a code position on it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LineEnd {
    /// In code, at `end` (the line break or the end of the text), with the
    /// line's trailing comment if it has one.
    Code {
        end: usize,
        comment: Option<Range<usize>>,
    },
    Blocked(Blocked),
}

/// How the physical line holding `start` (a code position) ends, read from
/// `tree`, the parse of all of `src`.
fn scan_line(tree: &Tree, src: &str, start: usize) -> LineEnd {
    let bytes = src.as_bytes();
    let end = memchr::memchr2(b'\n', b'\r', &bytes[start..]).map_or(src.len(), |i| start + i);
    let root = tree.root_node();
    let line_start = line_start_of(src, start);
    if root.has_error() {
        let mut broken = false;
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            if n.end_byte() < line_start || n.start_byte() > end || !(n.has_error() || n.is_missing()) {
                continue;
            }
            if n.is_error() || n.is_missing() {
                broken = true;
                break;
            }
            let mut c = n.walk();
            stack.extend(n.children(&mut c));
        }
        if broken {
            return LineEnd::Blocked(Blocked::SyntaxError);
        }
    }
    // A string, or an f-string field, that runs past the line break.
    if end < src.len() {
        let mut n = root.descendant_for_byte_range(end, end + 1);
        while let Some(x) = n {
            if x.kind_name() == "string" && x.start_byte() < end && end < x.end_byte() {
                return LineEnd::Blocked(Blocked::InString);
            }
            n = x.parent();
        }
    }
    // The line's trailing comment: a comment node that ends the line.
    let last = bytes[start..end].iter().rposition(|b| !matches!(b, b' ' | b'\t' | b'\x0c')).map(|i| start + i);
    let Some(last) = last else { return LineEnd::Code { end, comment: None } };
    let comment = root
        .descendant_for_byte_range(last, last + 1)
        .filter(|n| n.kind_name() == "comment" && n.start_byte() >= start && n.start_byte() < end)
        .map(|n| n.start_byte()..end);
    if comment.is_none() && bytes[last] == b'\\' && last + 1 == end && end < src.len() {
        return LineEnd::Blocked(Blocked::Continuation);
    }
    LineEnd::Code { end, comment }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckOptions, check_source};
    use crate::contract::Rules;
    use crate::syntax::ParseScope;

    fn findings(src: &str) -> Vec<Finding> {
        check_source(src, &CheckOptions::new(ParseScope::WholeFile), &Rules::moves_only())
    }

    /// Adds ignores for every finding of `src` and checks that nothing but
    /// the skipped findings is left.
    fn baseline(src: &str) -> AddedIgnores {
        let before = findings(src);
        let added = add_ignores(src, &before);
        let left: Vec<(usize, Code)> = findings(&added.text).iter().map(|f| (f.span.start.line, f.code)).collect();
        let expected: Vec<(usize, Code)> =
            added.skipped.iter().map(|&(i, _)| (before[i].span.start.line, before[i].code)).collect();
        assert_eq!(left, expected, "{}", added.text);
        added
    }

    #[test]
    fn one_line_dict_gets_one_comment_with_both_codes() {
        let src = "r = {\"status\": \"ok\", \"content\": [], \"frames\": 1, **extra, \"errors\": 2}\n";
        assert_eq!(findings(src).len(), 3);
        let added = baseline(src);
        assert_eq!(
            added.text,
            "r = {\"status\": \"ok\", \"content\": [], \"frames\": 1, **extra, \"errors\": 2}  # toolshape: ignore[TS001, TS002]\n"
        );
        assert_eq!((added.added, added.skipped), (1, vec![]));
    }

    #[test]
    fn multi_line_dict_gets_one_comment_per_entry_line() {
        let src = "def f(x):\n    return {\n        \"status\": \"ok\",\n        \"content\": [],\n        \"frames\": x, \"n\": 1,\n        **extra,\n        \"errors\": [],\n    }\n";
        let added = baseline(src);
        let want = "def f(x):\n    return {\n        \"status\": \"ok\",\n        \"content\": [],\n        \"frames\": x, \"n\": 1,  # toolshape: ignore[TS001]\n        **extra,  # toolshape: ignore[TS002]\n        \"errors\": [],  # toolshape: ignore[TS001]\n    }\n";
        assert_eq!(added.text, want);
        assert_eq!(added.added, 3);
    }

    #[test]
    fn crlf_tabs_and_trailing_whitespace_are_kept() {
        let src = "r = {\r\n\t\"status\": \"ok\",\r\n\t\"content\": [],\r\n\t\"x\": 1, \t\r\n\t**y,\r\n}\r\n";
        let added = baseline(src);
        let want = "r = {\r\n\t\"status\": \"ok\",\r\n\t\"content\": [],\r\n\t\"x\": 1, \t  # toolshape: ignore[TS001]\r\n\t**y,  # toolshape: ignore[TS002]\r\n}\r\n";
        assert_eq!(added.text, want);
    }

    #[test]
    fn a_comment_before_a_lone_cr_is_refused() {
        // Python ends the line at a lone `\r`; tree-sitter would run the comment
        // on over the next line, so the re-parse check drops the edit.
        let src = "r = {\"status\": \"ok\", \"content\": [], \"x\": 1,\r}\n";
        assert_eq!(findings(src).len(), 1);
        let added = baseline(src);
        assert_eq!((added.text.as_str(), added.added), (src, 0));
        assert!(added.skipped[0].1.starts_with("could not place a suppression comment safely on line 1"));
    }

    #[test]
    fn a_plain_comment_gets_a_second_comment() {
        let src = "r = {\n    \"status\": \"ok\",\n    \"content\": [],\n    \"x\": 1,  # per-frame # noqa: E501\n}\n";
        let added = baseline(src);
        assert_eq!(
            added.text,
            "r = {\n    \"status\": \"ok\",\n    \"content\": [],\n    \"x\": 1,  # per-frame # noqa: E501  # toolshape: ignore[TS001]\n}\n"
        );
    }

    #[test]
    fn an_existing_list_is_extended() {
        let src = "r = {\"status\": \"ok\", \"content\": [], \"x\": 1, **y}  # keep  # toolshape: ignore[TS002] why\n";
        assert_eq!(findings(src).len(), 1);
        let added = baseline(src);
        assert_eq!(
            added.text,
            "r = {\"status\": \"ok\", \"content\": [], \"x\": 1, **y}  # keep  # toolshape: ignore[TS001, TS002] why\n"
        );
        assert_eq!(added.added, 1);
        assert_eq!(merged_list("ts003,TS002 ", &BTreeSet::from([Code::ExtraKey])), "TS001, TS002, ts003");
    }

    #[test]
    fn a_comment_that_already_covers_the_codes_is_left_alone() {
        // Findings from before a blanket comment was added at the line's end.
        let plain = "r = {\"status\": \"ok\", \"content\": [], \"x\": 1, **y}\n";
        let stale = findings(plain);
        for comment in ["  # noqa", "  # toolshape: ignore", "  # toolshape: ignore[TS002, TS001]"] {
            let src = plain.replacen('\n', &format!("{comment}\n"), 1);
            let added = add_ignores(&src, &stale);
            assert_eq!((added.text.as_str(), added.added, added.skipped.len()), (src.as_str(), 0, 0));
        }
    }

    #[test]
    fn findings_that_point_at_no_entry_are_skipped() {
        let src = "r = {\"status\": \"ok\", \"content\": [], \"x\": 1}  # toolshape: ignore[TS002]\n";
        let real = findings(src).remove(0);
        let at_comment = Finding { entry: src.find('#').unwrap()..src.len() - 1, ..real.clone() };
        let outside = Finding { entry: src.len()..src.len(), ..real.clone() };
        let added = add_ignores(src, &[at_comment, outside, real]);
        assert_eq!(added.added, 1);
        let reasons: Vec<(usize, &str)> = added.skipped.iter().map(|(i, why)| (*i, &why[..12])).collect();
        assert_eq!(reasons, [(0, "it points at"), (1, "its position")]);
        assert!(added.text.ends_with("# toolshape: ignore[TS001, TS002]\n"), "{}", added.text);
    }

    #[test]
    fn a_line_ending_in_a_triple_quoted_string_falls_back_to_the_dict_line() {
        let src = "r = {\n    \"status\": \"ok\",\n    \"content\": [],\n    \"doc\": \"\"\"first\nsecond\"\"\", \"n\": 1,\n    \"m\": 2,\n}\n";
        let added = baseline(src);
        // `"n"` starts on the string's last line, which ends in code.
        let want = "r = {  # toolshape: ignore[TS001]\n    \"status\": \"ok\",\n    \"content\": [],\n    \"doc\": \"\"\"first\nsecond\"\"\", \"n\": 1,  # toolshape: ignore[TS001]\n    \"m\": 2,  # toolshape: ignore[TS001]\n}\n";
        assert_eq!(added.text, want);
        assert!(added.skipped.is_empty());
    }

    #[test]
    fn a_backslash_continuation_falls_back_to_the_dict_line() {
        let src = "r = {\n    \"status\": \"ok\",\n    \"content\": [],\n    \"x\": 1 + \\\n        2,\n}\n";
        let added = baseline(src);
        assert_eq!(
            added.text,
            "r = {  # toolshape: ignore[TS001]\n    \"status\": \"ok\",\n    \"content\": [],\n    \"x\": 1 + \\\n        2,\n}\n"
        );
    }

    #[test]
    fn findings_with_no_safe_line_are_skipped() {
        let cases = [
            ("r = {\"status\": \"ok\", \"content\": [], \"doc\": '''a\nb'''}\n", "line 1 ends inside a string;"),
            ("r = {\"status\": \"ok\", \"content\": [], \"x\": 1 + \\\n    2}\n", "backslash continuation"),
            (
                "r = [\"\"\"a\n\"\"\", {'k': \"\"\"\n\"\"\", \"status\": 1, \"content\": [], \"x\": '''\n'''}]\n",
                "line 3 ends inside a string, and the dict's line 2 ends inside a string;",
            ),
        ];
        for (src, reason) in cases {
            let added = baseline(src);
            assert_eq!((added.text.as_str(), added.added), (src, 0));
            assert_eq!(added.skipped.len(), findings(src).len(), "{src}");
            let last = &added.skipped.last().unwrap().1;
            assert!(last.contains(reason) && last.ends_with(NO_COMMENT), "{last}");
        }
    }

    #[test]
    fn a_hash_in_a_string_is_not_a_comment() {
        let src = "r = {\"status\": \"ok\", \"content\": [], \"x\": \"a # toolshape: ignore[TS002]\"}\n";
        assert_eq!(findings(src).len(), 1);
        let added = baseline(src);
        assert_eq!(
            added.text,
            "r = {\"status\": \"ok\", \"content\": [], \"x\": \"a # toolshape: ignore[TS002]\"}  # toolshape: ignore[TS001]\n"
        );
    }

    /// The trailing comment of `line`, read from its start.
    fn comment(line: &str) -> Result<Option<&str>, Blocked> {
        match scan_line(&syntax::parse(line), line, 0) {
            LineEnd::Code { end, comment } => {
                assert_eq!(end, line.find(['\n', '\r']).unwrap_or(line.len()), "{line}");
                Ok(comment.map(|c| &line[c]))
            }
            LineEnd::Blocked(why) => Err(why),
        }
    }

    #[test]
    fn the_scanner_steps_over_every_string_form() {
        let code = [
            "x = rb'\\'#', Rb\"#\", u'#', BR'\\\\' # c\n",
            "x = F\"{a['#']}#\", f'{x!r:>{w}}#', t\"{y}#\" # c\r\n",
            "x = '''#''', \"\"\"a\"b'#\"\"\", fr'\\{a}#', f\"{'{'}#\\N{BULLET}\" # c",
            "x = f\"{'a' if b else \"#\"}\", f'{ {\"k\": 1}[\"k\"]:#>3}' # c\r",
        ];
        for line in code {
            assert_eq!(comment(line), Ok(Some("# c")), "{line}");
        }
        assert_eq!(comment("x = {'a': 1}\n# next"), Ok(None));
        assert_eq!(comment("x = '''#\n'''"), Err(Blocked::InString));
        assert_eq!(comment("x = 'a\\\nb'"), Err(Blocked::InString));
        assert_eq!(comment("x = f\"{a +\nb}\""), Err(Blocked::InString));
        assert_eq!(comment("x = 1 + \\\r\n2"), Err(Blocked::Continuation));
        assert_eq!(comment("x = f'{a # b\n}'"), Err(Blocked::InString));
        assert_eq!(comment("x = 'abc"), Err(Blocked::SyntaxError));
        assert_eq!(comment("x = 1  # a \\\ny = 2"), Ok(Some("# a \\")));
    }

    #[test]
    fn a_comment_lookalike_inside_an_f_string_is_not_a_comment() {
        // The dict sits in an f-string field, and the f-string's tail looks
        // like a suppression comment: the tree knows it is a string.
        let src = "x = f\"{ {'status': 1, 'content': [], 'x': 1} } # toolshape: ignore[TS002]\"\n";
        let before = findings(src);
        assert_eq!(before.len(), 1);
        let tree = syntax::parse(src);
        assert!(matches!(scan_line(&tree, src, before[0].entry.start), LineEnd::Code { comment: None, .. }));
        let added = baseline(src);
        assert_eq!(added.added, 1);
        assert!(added.text.ends_with("ignore[TS002]\"  # toolshape: ignore[TS001]\n"), "{}", added.text);
        assert!(findings(&added.text).is_empty());
    }

    #[test]
    fn a_second_run_changes_nothing() {
        let src = "a = {'status': 1, 'content': [], 'x': 1, **y}  # note\r\nb = {\r\n    'status': 1,\r\n    'content': [],\r\n    'doc': '''a\r\nb''',\r\n    **z,  # toolshape: ignore[TS001]\r\n}\r\nc = {'status': 1, 'content': [], 'q': '''a\nb'''}\n";
        let first = baseline(src);
        assert_eq!(first.added, 3);
        assert_eq!(first.skipped.len(), 1);
        let again = findings(&first.text);
        assert_eq!(again.len(), 1);
        let second = add_ignores(&first.text, &again);
        assert_eq!(second.text, first.text);
        assert_eq!(second.added, 0);
        // Every comment written silences something: none is reported unused.
        let clean = "d = {'status': 1, 'content': [], 'x': 1, **y}  # noqa: E501\ne = {\n  'status': 1,\n  'content': [],\n  'doc': '''\n''',\n  **z,  # toolshape: ignore[TS002]\n  'w': 2,  # w\n}\n";
        let once = add_ignores(clean, &findings(clean)).text;
        assert_eq!(once.matches("toolshape: ignore[").count(), 4, "{once}");
        let unused = CheckOptions { scope: ParseScope::WholeFile, report_unused_ignores: true };
        assert_eq!(check_source(&once, &unused, &Rules::moves_only()), vec![]);
        assert_eq!(
            add_ignores(&once, &findings(&once)),
            AddedIgnores { text: once.clone(), added: 0, skipped: vec![] }
        );
    }

    #[test]
    fn files_are_written_in_place_with_their_bom_and_encoding() {
        let dir = tempfile::tempdir().unwrap();
        let options = CheckOptions::new(ParseScope::Candidates);
        let utf8 = dir.path().join("a.py");
        std::fs::write(&utf8, "\u{feff}r = {'status': 1, 'content': [], 'x': 1}\r\n").unwrap();
        let latin1 = dir.path().join("b.py");
        let cookie = b"# -*- coding: latin-1 -*-\nr = {'status': 1, 'content': [], 'caf\xe9': 1, 'doc': '''\n'''}\n";
        std::fs::write(&latin1, cookie).unwrap();
        let clean = dir.path().join("c.py");
        std::fs::write(&clean, "r = {'status': 1, 'content': []}\n").unwrap();

        let done =
            add_ignores_to_file(&utf8, &options, &Rules::moves_only(), &Projects::default(), Vec::new()).unwrap();
        assert_eq!(done, FileIgnores { added: 1, skipped: vec![] });
        let written = std::fs::read(&utf8).unwrap();
        assert_eq!(
            written,
            "\u{feff}r = {'status': 1, 'content': [], 'x': 1}  # toolshape: ignore[TS001]\r\n".as_bytes()
        );

        let done =
            add_ignores_to_file(&latin1, &options, &Rules::moves_only(), &Projects::default(), Vec::new()).unwrap();
        assert_eq!(done.added, 0);
        assert_eq!(done.skipped.len(), 2);
        assert!(done.skipped.iter().all(|(line, why)| *line == 2 && why.contains("ends inside a string")));
        assert_eq!(std::fs::read(&latin1).unwrap(), cookie);

        assert_eq!(
            add_ignores_to_file(&clean, &options, &Rules::moves_only(), &Projects::default(), Vec::new()).unwrap(),
            FileIgnores::default()
        );
        assert!(
            add_ignores_to_file(
                &dir.path().join("missing.py"),
                &options,
                &Rules::moves_only(),
                &Projects::default(),
                Vec::new()
            )
            .is_err()
        );
    }

    #[test]
    fn a_new_violation_after_the_baseline_is_still_reported() {
        let src = "r = {\n    \"status\": \"ok\",\n    \"content\": [],\n    \"frames\": 1,\n}\n";
        let text = baseline(src).text;
        assert!(findings(&text).is_empty());
        let grown = text.replace("}\n", "    \"late\": 2,\n    **more,\n}\n");
        let left: Vec<(Code, Option<String>)> = findings(&grown).into_iter().map(|f| (f.code, f.key)).collect();
        assert_eq!(left, vec![(Code::ExtraKey, Some("late".to_owned())), (Code::Spread, None)]);
    }
}
