//! The `fix` command's work on one file: read, check quickly, fix, verify,
//! write (or not, for `--diff`), and the tallies and lines it reports.

use std::path::Path;

use crate::apply::{self, FixedText, LeftBecause, Leftover, Planner};
use crate::config::{Overrides, Settings};
use crate::diagnostics::Finding;
use crate::project::Projects;
use crate::report::{self, Palette};
use crate::semantic::project::Facts;
use crate::source::{self, SourceText};
use crate::syntax::ParseScope;
use crate::{check, diff};

/// What `fix` was asked to do.
#[derive(Debug, Clone, Copy)]
pub struct FixOptions {
    /// Fix settings from the command line, over each file's configuration.
    pub overrides: Overrides,
    /// Write fixed files (false for `--diff`).
    pub write: bool,
    pub scope: ParseScope,
    /// The fix planner ([`crate::fix::plan_source`] outside tests).
    pub planner: Planner,
    /// Rewrite the reads of moved keys with their fixes (off with
    /// `--no-rewrite-reads`: fixes whose keys are read stay unsafe).
    pub rewrite_reads: bool,
}

/// The outcome for one file.
#[derive(Debug)]
pub struct FileFix {
    /// Whether the file starts with a byte-order mark (kept on write, and
    /// shown in diffs so that patches apply).
    pub bom: bool,
    /// The file's declared single-byte encoding, if not UTF-8: patches are
    /// written in it so that they apply to the file's bytes.
    pub encoding: Option<&'static encoding_rs::Encoding>,
    pub original: String,
    pub fixed: FixedText,
    /// Why the fixed text could not be written, if it could not.
    pub write_error: Option<String>,
    /// How many reads of moved keys were rewritten in it.
    pub reads_rewritten: usize,
    /// What the user should know besides (a file left as it is for its
    /// Python 2 syntax).
    pub notes: Vec<String>,
}

impl FileFix {
    /// Traces the places of what is left and of the fixes applied, found in
    /// the fixed text, back to the original text: for a run that writes
    /// nothing (`--diff`), whose reader has the original in front of them.
    pub fn trace_lines_to_original(&mut self) {
        if self.fixed.text.is_empty() || self.fixed.text == self.original {
            return;
        }
        let (rounds, original) = (&self.fixed.rounds, &self.original);
        let index = crate::syntax::LineIndex::new(original);
        let traced = |range: &std::ops::Range<usize>| {
            let start = rounds.source_offset(range.start);
            start..rounds.source_end(range.end).max(start)
        };
        for f in self.fixed.leftovers.iter_mut().flat_map(|l| &mut l.findings) {
            f.span = crate::diagnostics::Span::new(&index, original, &traced(&f.entry));
            f.dict_span = crate::diagnostics::Span::new(&index, original, &traced(&f.dict));
        }
        for fix in &mut self.fixed.applied {
            fix.final_offset = rounds.source_offset(fix.final_offset);
            fix.final_line = index.line_of(fix.final_offset) + 1;
            fix.line = fix.final_line;
        }
    }

    /// Writes the fixed text of a file fixed without writing (the run
    /// writes only once every file's fixes are known to have applied),
    /// if the file still holds the text it was fixed from.
    pub fn write(&mut self, path: &Path) {
        if self.fixed.text.is_empty() || self.fixed.text == self.original {
            return;
        }
        let written = source::with_bytes(path, |bytes| {
            let source = SourceText::decode(bytes.to_vec())?;
            if source.text != self.original {
                return Err("the file changed on disk since it was read; not overwritten".to_owned());
            }
            source.encode(&self.fixed.text).and_then(|new| apply::write_atomic(path, bytes, &new))
        });
        if let Err(e) = written.and_then(|r| r) {
            self.write_error = Some(e);
            self.fixed.applied.clear();
            self.reads_rewritten = 0;
        }
    }

    /// The unified diff of this file's fix (empty when nothing changed),
    /// preceded by one `# toolshape:` note per applied fix (patch tools
    /// skip such lines between file diffs).
    pub fn diff(&self, path: &Path, palette: Palette) -> String {
        let bom = if self.bom { "\u{feff}" } else { "" };
        let body =
            diff::unified(path, &format!("{bom}{}", self.original), &format!("{bom}{}", self.fixed.text), 3, palette);
        if body.is_empty() {
            return body;
        }
        let mut out = String::new();
        for fix in &self.fixed.applied {
            out.push_str(&palette.dim(&format!("# toolshape: {}:{}", path.display(), fix.note())));
            out.push('\n');
        }
        out.push_str(&body);
        out
    }

    /// [`FileFix::diff`] as the bytes a patch tool expects: in the file's
    /// own encoding.
    pub fn patch(&self, path: &Path, palette: Palette) -> Vec<u8> {
        let diff = self.diff(path, palette);
        match self.encoding {
            Some(encoding) => encoding.encode(&diff).0.into_owned(),
            None => diff.into_bytes(),
        }
    }

    /// Problems to report as errors: failed writes and fixes that would have
    /// broken the syntax (toolshape bugs).
    /// A file the fix leaves as it is (no text is kept), with what is
    /// `left` in it and how many expected fixes it `missed`.
    fn unchanged(left: Vec<Leftover>, missed: usize) -> Self {
        let fixed = FixedText::unchanged(String::new(), left, missed);
        FileFix {
            bom: false,
            encoding: None,
            original: String::new(),
            fixed,
            write_error: None,
            reads_rewritten: 0,
            notes: Vec::new(),
        }
    }

    pub fn problems(&self) -> Vec<String> {
        let mut out: Vec<String> = self.write_error.iter().cloned().collect();
        for left in &self.fixed.leftovers {
            if left.why == LeftBecause::BrokeSyntax {
                let line = left.findings.first().map_or(0, |f| f.dict_span.start.line);
                out.push(format!(
                    "the fix for the tool result at line {line} would add a syntax error, so it was dropped (a toolshape bug: please report it)"
                ));
            }
        }
        out
    }
}

/// What a first look at a file found, before it is fixed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// Not looked at: the fixer reads it.
    Unseen,
    /// No violation of its own: only calls of result builders may be left.
    Clean,
    /// Python 2 syntax at this line: left as it is.
    Legacy(usize),
    /// A violation, in these bytes (a write must find them unchanged),
    /// already fixed as if the file defined no result builder and nothing
    /// read its keys; with its findings (for the project's reads).
    Fixed(Vec<u8>, FixedText, Vec<Finding>),
}

impl Seen {
    /// The findings the first look judged (none for a clean file).
    pub fn findings(&self) -> &[Finding] {
        match self {
            Seen::Fixed(_, _, findings) => findings,
            _ => &[],
        }
    }
}

/// The first look `fix` takes at a file (`bytes`, decoded as `text`):
/// whether it holds a violation, and the facts a result builder needs
/// (one parse serves both). A violating file is fixed right away, while
/// the other files are still being read: only a file that turns out to
/// define a result builder is fixed again, once the project is known.
pub fn first_look(bytes: &[u8], text: &str, options: &FixOptions, settings: &Settings) -> (Seen, Option<Facts>) {
    let policy = settings.fix_policy(options.overrides);
    let (pieces, facts) = check::violating_pieces_and_facts(text, options.scope, &policy.rules);
    let seen = match pieces {
        None => Seen::Clean,
        Some(_) if let Some(line) = check::legacy_line(text) => Seen::Legacy(line),
        Some(pieces) => {
            let findings = check::findings_in(text, &pieces, &policy.rules);
            Seen::Fixed(bytes.to_vec(), apply::fix_parsed(text, pieces, &policy, options.planner), findings)
        }
    };
    (seen, facts)
}

/// What the project asks of one file's fix: why fixes are unsafe for the
/// reads of their keys, the reads to rewrite in it, and the fixes those
/// rewrites (in any file) depend on.
#[derive(Debug, Clone, Default)]
pub struct FileReads {
    pub reasons: Vec<(std::ops::Range<usize>, String)>,
    pub rewrites: Vec<crate::fix::reads::ReadRewrite>,
    pub expected: Vec<std::ops::Range<usize>>,
    pub keep_text: Vec<std::ops::Range<usize>>,
    /// Each origin in the file with a read of its keys rewritten with it.
    pub rewritten: Vec<(std::ops::Range<usize>, String)>,
    /// The file's TS005 findings: displays its project's tools return that
    /// are not tool results.
    pub not_results: Vec<Finding>,
}

impl FileReads {
    /// What `projects` asks of the checked file `j`.
    pub fn of(projects: &Projects, j: usize) -> Self {
        FileReads {
            reasons: projects.read_reasons(j),
            rewrites: projects.read_rewrites(j).to_vec(),
            expected: projects.expected_fixes(j).to_vec(),
            keep_text: projects.keep_text(j).to_vec(),
            rewritten: projects.rewritten_reads(j).to_vec(),
            not_results: projects.not_results(j).to_vec(),
        }
    }
}

/// Fixes one file as `options` say, starting from what a first look saw.
pub fn fix_file(
    path: &Path,
    options: &FixOptions,
    settings: &Settings,
    projects: &Projects,
    seen: Seen,
    reads: FileReads,
) -> Result<FileFix, String> {
    let mut policy = settings.fix_policy(options.overrides);
    policy.builders = projects.builder_specs(path);
    policy.read_reasons = reads.reasons;
    policy.expected = reads.expected;
    policy.keep_text = reads.keep_text;
    policy.rewritten_reads = reads.rewritten;
    policy.not_results = reads.not_results;
    if let Seen::Legacy(line) = seen {
        // Not Python 3: nothing in it is touched, read rewrites included.
        let mut file = FileFix::unchanged(Vec::new(), policy.expected.len());
        file.notes.push(check::legacy_note(line));
        return Ok(file);
    }
    // Reads are rewritten first; the fixes are planned on the result.
    let mut seen = seen;
    let rewritten = if reads.rewrites.is_empty() {
        None
    } else {
        let bytes = match std::mem::replace(&mut seen, Seen::Unseen) {
            Seen::Fixed(bytes, ..) => bytes,
            _ => source::with_bytes(path, |b| b.to_vec())?,
        };
        let source = SourceText::decode(bytes.clone())?;
        let accessor = settings.json_accessor();
        let edits = crate::fix::reads::read_edits(&source.text, &reads.rewrites, accessor.as_ref());
        let text = crate::fix::apply_edits(&source.text, &edits);
        let shift = apply::Shift::of(&edits);
        for (range, _) in policy.read_reasons.iter_mut().chain(&mut policy.rewritten_reads) {
            *range = shift.range(range);
        }
        for range in policy.expected.iter_mut().chain(&mut policy.keep_text) {
            *range = shift.range(range);
        }
        for f in &mut policy.not_results {
            f.dict = shift.range(&f.dict);
        }
        Some((bytes, text, reads.rewrites.len(), edits))
    };
    // Calls of result builders are repaired in their builders' files; those
    // that this run does not repair are left, with why.
    let builder_calls = |text: &str| -> Vec<Leftover> { projects.builder_call_leftovers(path, text, &policy) };
    // The fast check (on a reused buffer) decides whether the file needs
    // the full fixer at all; a file without violations carries no text. A
    // violating file's bytes are kept: a write must find them unchanged.
    let pieces_of = |text: &str| {
        check::violating_pieces(text, options.scope, &policy.rules).or_else(|| {
            // Displays the tools return that are not tool results (TS005)
            // are looked for in the whole file.
            (!policy.not_results.is_empty())
                .then(|| vec![crate::syntax::ParsedPiece::new(0, crate::syntax::parse(text))])
        })
    };
    let look = |bytes: &[u8]| {
        let text = source::text_of(bytes)?;
        let pieces = pieces_of(&text);
        Ok::<_, String>(match pieces {
            Some(pieces) => Ok((bytes.to_vec(), pieces)),
            None => Err(builder_calls(&text)),
        })
    };
    if let Some((bytes, text, rewritten, edits)) = rewritten {
        // The re-parse guard: rewritten reads that add a syntax error (a
        // toolshape bug) are dropped, and the run starts again without
        // rewriting reads (a missed expectation says so).
        let original = SourceText::decode(bytes.clone())?.text;
        if apply::syntax_error_count(&text) > apply::syntax_error_count(&original) {
            let fixed = FixedText::unchanged(original, Vec::new(), 1);
            return finish(path, options, bytes, fixed, builder_calls);
        }
        let mut fixed = match pieces_of(&text) {
            Some(pieces) => apply::fix_parsed(&text, pieces, &policy, options.planner),
            None => FixedText::unchanged(text, Vec::new(), policy.expected.len()),
        };
        // The reads were rewritten before the fixes.
        fixed.rounds.push_first(&original, &edits);
        let mut file = finish(path, options, bytes, fixed, builder_calls)?;
        file.reads_rewritten = rewritten;
        return Ok(file);
    }
    let found = match seen {
        Seen::Unseen => source::with_bytes(path, look)??,
        // A file that defines builders, or whose keys are read: fixed
        // again, knowing them.
        Seen::Fixed(bytes, ..)
            if !policy.builders.is_empty()
                || !policy.read_reasons.is_empty()
                || !policy.keep_text.is_empty()
                || !policy.not_results.is_empty() =>
        {
            look(&bytes)?
        }
        Seen::Fixed(bytes, fixed, _) => return finish(path, options, bytes, fixed, builder_calls),
        Seen::Clean if !policy.not_results.is_empty() => source::with_bytes(path, look)??,
        // Only calls of builders can be left in a file without violations.
        Seen::Clean | Seen::Legacy(_) if !projects.any_builders() => Err(Vec::new()),
        Seen::Clean | Seen::Legacy(_) => Err(source::with_text(path, builder_calls)?),
    };
    let (bytes, pieces) = match found {
        Ok(found) => found,
        Err(leftovers) => return Ok(FileFix::unchanged(leftovers, policy.expected.len())),
    };
    let source = SourceText::decode(bytes.clone())?;
    let fixed = apply::fix_parsed(&source.text, pieces, &policy, options.planner);
    finish(path, options, bytes, fixed, builder_calls)
}

/// Ends the fix of the file `path` (read as `bytes`) with its `fixed`
/// text: the calls of builders left in it, and the write.
fn finish(
    path: &Path,
    options: &FixOptions,
    bytes: Vec<u8>,
    mut fixed: FixedText,
    builder_calls: impl Fn(&str) -> Vec<Leftover>,
) -> Result<FileFix, String> {
    let source = SourceText::decode(bytes.clone())?;
    fixed.leftovers.extend(builder_calls(&fixed.text));
    let write_error = if options.write && fixed.text != source.text {
        source.encode(&fixed.text).and_then(|new| apply::write_atomic(path, &bytes, &new)).err()
    } else {
        None
    };
    let mut result = FileFix {
        bom: source.bom,
        encoding: source.encoding,
        original: source.text,
        fixed,
        write_error,
        reads_rewritten: 0,
        notes: Vec::new(),
    };
    if result.write_error.is_some() {
        // Nothing was written: report the file as it still is.
        result.fixed.applied.clear();
    }
    Ok(result)
}

/// Counts across files for the summary line.
#[derive(Debug, Default, Clone, Copy)]
pub struct FixTally {
    pub fixed: usize,
    pub files_fixed: usize,
    pub unsafe_left: usize,
    pub manual: usize,
    pub other_left: usize,
    /// Calls whose builders' files are outside the paths given.
    pub elsewhere: usize,
    /// Reads of moved keys rewritten with their fixes.
    pub reads: usize,
    pub files_read: usize,
    /// Reads of moved keys that applied unsafe fixes leave as they are.
    pub reads_left: usize,
}

impl FixTally {
    pub fn add(&mut self, file: &FileFix) {
        self.fixed += file.fixed.applied.len();
        self.files_fixed += usize::from(!file.fixed.applied.is_empty());
        self.reads += file.reads_rewritten;
        self.reads_left += file.fixed.applied.iter().map(|f| f.reads_left.len()).sum::<usize>();
        self.files_read += usize::from(file.reads_rewritten > 0);
        for left in &file.fixed.leftovers {
            match left.why {
                LeftBecause::Unsafe(_) => self.unsafe_left += 1,
                LeftBecause::Manual(_) | LeftBecause::BrokenFile => self.manual += 1,
                LeftBecause::Elsewhere(_) => self.elsewhere += 1,
                _ => self.other_left += 1,
            }
        }
    }

    /// Tool results still violating after the run.
    pub fn leftovers(&self) -> usize {
        self.unsafe_left + self.manual + self.other_left + self.elsewhere
    }

    pub fn summary(&self, dry_run: bool) -> String {
        let verb = if dry_run { "Would fix" } else { "Fixed" };
        let mut parts = vec![format!(
            "{verb} {} in {}",
            report::plural(self.fixed, "tool result"),
            report::plural(self.files_fixed, "file")
        )];
        if self.reads > 0 {
            let verb = if dry_run { "would rewrite" } else { "rewrote" };
            parts.push(format!(
                "{verb} {} of their moved keys in {}",
                report::plural(self.reads, "read"),
                report::plural(self.files_read, "file")
            ));
        }
        if self.reads_left > 0 {
            parts.push(format!(
                "{} of moved keys left as they are, which may now fail (see the warnings)",
                report::plural(self.reads_left, "read")
            ));
        }
        if self.unsafe_left > 0 {
            parts.push(format!("{} not applied (use --unsafe-fixes)", report::plural(self.unsafe_left, "unsafe fix")));
        }
        if self.manual > 0 {
            parts.push(format!("{} left for manual repair", self.manual));
        }
        if self.elsewhere > 0 {
            parts.push(format!(
                "{} left for their builders' files (include them in the paths)",
                report::plural(self.elsewhere, "call")
            ));
        }
        if self.other_left > 0 {
            parts.push(format!("{} not fixed (see errors)", self.other_left));
        }
        format!("{}.", parts.join("; "))
    }
}

/// A file's fixes applied and left, for the Markdown summary.
pub struct FileReport {
    pub path: std::path::PathBuf,
    pub applied: Vec<apply::AppliedFix>,
    pub leftovers: Vec<Leftover>,
    /// How many reads of moved keys were rewritten in it.
    pub reads_rewritten: usize,
}

impl FileReport {
    /// What the summary lists of `file`, fixed at `path`.
    pub fn of(path: &Path, file: &FileFix) -> Self {
        FileReport {
            path: path.to_path_buf(),
            applied: file.fixed.applied.clone(),
            leftovers: file.fixed.leftovers.clone(),
            reads_rewritten: file.reads_rewritten,
        }
    }

    /// Whether the summary has anything to say of it.
    pub fn is_empty(&self) -> bool {
        self.applied.is_empty() && self.leftovers.is_empty() && self.reads_rewritten == 0
    }
}

/// Escapes text for a Markdown table cell or list item.
fn md(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// A Markdown summary of a `fix` run, made for a pull-request body: what was
/// fixed where, and what is left and why, with links to the lines of the
/// fixed files. Links are relative unless `link_base` (such as
/// `https://github.com/OWNER/REPO/blob/BRANCH`) is given: a pull request's
/// body resolves relative links against the pull request, not the tree.
pub fn summary_markdown(files: &[FileReport], summary: &str, link_base: Option<&str>) -> String {
    let mut out = String::from("## toolshape: tool-result telemetry moved into json blocks\n\n");
    out.push_str(&format!("{}\n", md(summary)));
    let link = |path: &Path, line: usize| {
        let shown = path.display().to_string();
        let shown = shown.strip_prefix("./").unwrap_or(&shown).to_owned();
        let target = match link_base {
            Some(base) => format!("{}/{}", base.trim_end_matches('/'), report::path_uri(path)),
            None => report::path_uri(path),
        };
        format!("[`{shown}:{line}`]({target}#L{line})")
    };
    if files.iter().any(|f| !f.applied.is_empty()) {
        out.push_str("\n### Fixed\n\n| where | moved into json | text block |\n|---|---|---|\n");
        for FileReport { path, applied, .. } in files {
            for fix in applied {
                let unsafe_mark = if fix.applicability == crate::fix::Applicability::Unsafe { " (unsafe)" } else { "" };
                out.push_str(&format!(
                    "| {} | {}{unsafe_mark} | {} |\n",
                    link(path, fix.final_line),
                    md(&fix.moves.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")),
                    md(&fix.text.note()),
                ));
            }
        }
    }
    let rewritten: Vec<&FileReport> = files.iter().filter(|f| f.reads_rewritten > 0).collect();
    let reads_left: Vec<(&Path, &apply::AppliedFix)> = files
        .iter()
        .flat_map(|f| f.applied.iter().filter(|a| !a.reads_left.is_empty()).map(|a| (f.path.as_path(), a)))
        .collect();
    let reads_with: Vec<(&Path, &apply::AppliedFix)> = files
        .iter()
        .flat_map(|f| f.applied.iter().filter(|a| !a.reads_rewritten.is_empty()).map(|a| (f.path.as_path(), a)))
        .collect();
    if !rewritten.is_empty() || !reads_left.is_empty() {
        out.push_str("\n### Reads of moved keys\n\n");
        for (path, fix) in reads_with {
            out.push_str(&format!(
                "- {} rewrites the reads of its keys: {}\n",
                link(path, fix.final_line),
                md(&fix.reads_rewritten.join("; "))
            ));
        }
        for f in rewritten {
            let reads = report::plural(f.reads_rewritten, "read");
            out.push_str(&format!("- {}: {reads} rewritten to look in the json block\n", link(&f.path, 1)));
        }
        for (path, fix) in reads_left {
            out.push_str(&format!(
                "- {} (unsafe) leaves reads as they are, which may now fail: {}\n",
                link(path, fix.final_line),
                md(&fix.reads_left.join("; "))
            ));
        }
    }
    if files.iter().any(|f| !f.leftovers.is_empty()) {
        out.push_str("\n### Left for a person\n\n");
        for FileReport { path, leftovers, .. } in files {
            for left in leftovers {
                let why = left_reason(&left.why);
                for f in &left.findings {
                    let what =
                        f.key.as_deref().map_or_else(|| f.spread.clone().unwrap_or_default(), |k| format!("\"{k}\""));
                    out.push_str(&format!(
                        "- {} {} `{}` — {}\n",
                        link(path, f.span.start.line),
                        f.code,
                        md(&what),
                        md(&why)
                    ));
                }
            }
        }
    }
    out
}

/// How many reasons a leftover finding's line shows: a builder called
/// from hundreds of places gathers hundreds of them, and each of its
/// findings would repeat them all. (The reads an applied fix leaves are
/// listed whole, once per fix: each is work for the reader.)
const LISTED: usize = 5;

/// `items` joined with `; `: the first [`LISTED`] of them, and how many
/// more there are.
fn listed(items: &[String]) -> String {
    match items.len().checked_sub(LISTED) {
        Some(more) if more > 0 => format!("{}; and {more} more", items[..LISTED].join("; ")),
        _ => items.join("; "),
    }
}

/// Why a violating dict was left as it is, in words.
pub fn left_reason(why: &LeftBecause) -> String {
    match why {
        LeftBecause::Unsafe(reasons) => format!("unsafe fix not applied: {}", listed(reasons)),
        LeftBecause::Manual(reason) => format!("manual repair: {reason}"),
        LeftBecause::BrokeSyntax => "not fixed: the fix would add a syntax error".to_owned(),
        LeftBecause::BrokenFile => {
            "manual repair: the file has syntax errors, and this fix would change how they are read".to_owned()
        }
        LeftBecause::RoundLimit => format!("not fixed: nested more than {} levels deep", apply::MAX_ROUNDS),
        LeftBecause::Elsewhere(reason) => format!("not fixed here: {reason}"),
    }
}

/// One line per finding left unfixed, saying why.
/// One warning per applied fix that leaves reads of its keys as they are.
pub fn reads_left_lines(path: &Path, applied: &[apply::AppliedFix]) -> Vec<String> {
    applied
        .iter()
        .filter(|f| !f.reads_left.is_empty())
        .map(|f| {
            format!(
                "warning: {}:{}: the unsafe fix leaves reads of its keys as they are, which may now fail: {}",
                path.display(),
                f.final_line,
                f.reads_left.join("; ")
            )
        })
        .collect()
}

pub fn leftover_lines(path: &Path, leftovers: &[Leftover], palette: Palette) -> Vec<String> {
    let mut lines = Vec::new();
    for left in leftovers {
        let why = left_reason(&left.why);
        for f in &left.findings {
            lines.push(format!("{} ({why})", report::text_finding(path, f, palette)));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fix::AugmentText;

    #[test]
    fn summary_names_what_was_left() {
        let tally = FixTally {
            fixed: 12,
            files_fixed: 5,
            unsafe_left: 2,
            manual: 1,
            other_left: 0,
            elsewhere: 0,
            reads: 0,
            files_read: 0,
            reads_left: 0,
        };
        assert_eq!(
            tally.summary(false),
            "Fixed 12 tool results in 5 files; 2 unsafe fixes not applied (use --unsafe-fixes); 1 left for manual repair."
        );
        assert_eq!(
            FixTally { fixed: 1, files_fixed: 1, ..Default::default() }.summary(true),
            "Would fix 1 tool result in 1 file."
        );
    }

    /// A line names at most five reasons (a builder called from hundreds
    /// of places gathers hundreds), and says how many it leaves out.
    #[test]
    fn a_long_list_of_reasons_is_cut_short() {
        let reasons: Vec<String> = (1..=7).map(|i| format!("reason {i}")).collect();
        assert_eq!(
            left_reason(&LeftBecause::Unsafe(reasons[..5].to_vec())),
            "unsafe fix not applied: reason 1; reason 2; reason 3; reason 4; reason 5"
        );
        assert_eq!(
            left_reason(&LeftBecause::Unsafe(reasons)),
            "unsafe fix not applied: reason 1; reason 2; reason 3; reason 4; reason 5; and 2 more"
        );
    }

    /// Options for `fix --unsafe-fixes` with a planner whose every fix
    /// breaks the syntax.
    fn breaking(augment_text: AugmentText, write: bool) -> FixOptions {
        FixOptions {
            overrides: Overrides { unsafe_fixes: Some(true), augment_text: Some(augment_text) },
            write,
            scope: ParseScope::Candidates,
            planner: crate::apply::tests::breaking_planner,
            rewrite_reads: true,
        }
    }

    #[test]
    fn nothing_is_written_when_the_reparse_guard_fails() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tool.py");
        let src = "def f(n):\n    return {'status': 'success', 'content': [{'text': 't'}], 'n': n}\n";
        std::fs::write(&path, src).unwrap();
        let options = breaking(AugmentText::Safe, true);
        let file =
            fix_file(&path, &options, &Settings::default(), &Projects::default(), Seen::Unseen, FileReads::default())
                .unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), src);
        let problems = file.problems();
        assert_eq!(problems.len(), 1);
        assert!(problems[0].contains("would add a syntax error"), "{problems:?}");

        let options = FixOptions { planner: crate::fix::plan_source, ..options };
        fix_file(&path, &options, &Settings::default(), &Projects::default(), Seen::Unseen, FileReads::default())
            .unwrap();
        assert!(std::fs::read_to_string(&path).unwrap().contains("{'json': {'n': n}}]"));
    }

    /// A fix that a rewritten read depends on and that does not apply, or
    /// a rewrite that breaks the syntax, is counted as missed (the run then
    /// starts again without rewriting reads) and nothing is written.
    #[test]
    fn rewrites_whose_fixes_do_not_apply_are_missed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tool.py");
        let src = "def f(n):\n    return {'status': 'ok', 'content': [], 'n': n}\n\nx = f(1)['n']\n";
        std::fs::write(&path, src).unwrap();
        let at = src.find("f(1)").unwrap();
        let dict = src.find('{').unwrap()..src.find('}').unwrap() + 1;
        let reads = FileReads {
            rewrites: vec![crate::fix::reads::ReadRewrite { receiver: at..at + 4, index: -1, quote: '"' }],
            expected: vec![dict],
            ..FileReads::default()
        };
        let options = breaking(AugmentText::Never, false);
        let run = |options: &FixOptions, reads: FileReads| {
            fix_file(&path, options, &Settings::default(), &Projects::default(), Seen::Unseen, reads).unwrap()
        };
        assert_eq!(run(&options, reads.clone()).fixed.missed, 1, "the fix broke the syntax and was dropped");
        let options = FixOptions { planner: crate::fix::plan_source, ..options };
        let file = run(&options, reads.clone());
        assert_eq!(file.fixed.missed, 0);
        assert!(file.fixed.text.ends_with("x = f(1)[\"content\"][-1][\"json\"]['n']\n"), "{}", file.fixed.text);
        // A rewrite that would add a syntax error: inside `def`.
        let broken = FileReads {
            rewrites: vec![crate::fix::reads::ReadRewrite { receiver: 0..3, index: -1, quote: '"' }],
            ..reads
        };
        let file = run(&options, broken);
        assert_eq!((file.fixed.missed, file.fixed.text.as_str()), (1, src));
    }
}
