//! The review's engine: decisions over a queue of offers, with no terminal
//! in sight. [`FileReview`] plans one file's text as it stands and applies
//! or skips its fixes; [`review_files`] drives it over files with answers
//! from a [`DecisionSource`], writing each file once its last fix is
//! decided. Pure but for reading and writing the files reviewed.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::apply::{self, Planner};
use crate::config::Overrides;
use crate::diagnostics::{Code, Finding};
use crate::discovery::FoundFile;
use crate::fix::{self, Applicability, Edit, Fix, PlanOptions, Remedy};
use crate::report::Palette;
use crate::source::SourceText;
pub(super) use crate::syntax::tree::one_line;
use crate::syntax::{self, LineIndex, ParseScope};
use crate::{check, contract, diff};

/// Lines of context around each fix's diff.
const DIFF_CONTEXT: usize = 3;

/// An answer to one offered fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// `y`: apply this fix.
    Apply,
    /// `n`: leave this tool result as it is.
    Skip,
    /// `a`: apply this fix and every remaining fix in this file.
    ApplyRestOfFile,
    /// `d`: skip this fix and every remaining fix in this file.
    SkipRestOfFile,
    /// `k`: apply this fix and every remaining safe fix moving the same set
    /// of keys.
    ApplySameMoves,
    /// `A`: apply this fix and every remaining safe fix in every file.
    ApplyAllSafe,
    /// `e`: apply this text instead of the offer's: the reviewer's edit of
    /// [`Offer::edit_region`] (the front end ran the editor).
    Edit(String),
    /// `s`: write a suppression comment for this tool result instead.
    Suppress,
    /// `Tab`: show the next remedy, where there is more than one.
    NextRemedy,
    /// `q`: stop; what was accepted is written.
    Quit,
    /// Ctrl-C: stop; nothing not yet written is written.
    Abort,
}

/// A standing answer that settles later fixes without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// `a`: the rest of this file's safe fixes are applied.
    RestOfFile,
    /// `d`: the rest of this file is skipped.
    SkipRestOfFile,
    /// `k`: safe fixes moving the same set of keys are applied.
    SameMoves,
    /// `A`: every safe fix is applied.
    AllSafe,
}

impl Rule {
    /// The key that set the rule.
    pub fn key(self) -> char {
        match self {
            Rule::RestOfFile => 'a',
            Rule::SkipRestOfFile => 'd',
            Rule::SameMoves => 'k',
            Rule::AllSafe => 'A',
        }
    }

    /// What the rule applies without asking.
    pub(super) fn covers(self) -> &'static str {
        match self {
            Rule::RestOfFile => "every remaining fix in this file",
            Rule::SkipRestOfFile => "no fix (it skips the rest of this file)",
            Rule::SameMoves => "every safe fix moving the same keys",
            Rule::AllSafe => "every safe fix",
        }
    }
}

/// One fix, as it is put to the reviewer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub path: PathBuf,
    /// The tool result's 1-based line in the file as it now stands (earlier
    /// accepted fixes included), as in the diff's hunk header.
    pub line: usize,
    /// This fix's place in the review, from 1.
    pub number: usize,
    /// Fixes in the whole review (decided, this one, and still to come).
    pub total: usize,
    /// The findings the fix resolves.
    pub findings: Vec<Finding>,
    pub applicability: Applicability,
    pub unsafe_reasons: Vec<String>,
    /// What moves into the json block, in order ([`Fix::moves`]).
    pub moves: Vec<String>,
    /// Whether the fix rewrites the text block to mention moved telemetry.
    pub text_augmented: bool,
    /// What the fix does to the text block ([`fix::TextAugment::note`]).
    pub text_note: String,
    /// Whether the tool result is free of violations once the fix is applied.
    pub clean_after: bool,
    /// The unified diff of this fix alone: hunks only, the path is in the header.
    pub diff: String,
    /// Said when the fix is asked about again: after a rule that does not
    /// cover it, an edit that was refused, a suppression that could not be
    /// placed.
    pub note: Option<String>,
    /// Which remedy is shown, where there is more than one: (1-based index,
    /// how many, what it does).
    pub remedy: Option<(usize, usize, String)>,
    /// The fixed result with the lines around it, as the diff shows it:
    /// what `e` opens in the editor.
    pub edit_region: String,
    /// The reads of the moved keys rewritten with the fix, in whatever
    /// file they stand: `path:line reads r["k"]`.
    pub rewrites: Vec<String>,
    /// The reads of the moved keys that the fix leaves as they are (each
    /// makes it unsafe): `path:line reads r["k"]`.
    pub reads: Vec<String>,
    /// What a repair of the result's shape does ([`Fix::repair`]), instead
    /// of moving keys.
    pub repair: Option<String>,
    /// Grows each time the offer changes (another remedy, an edit refused),
    /// so that a front end shows it again whole.
    pub revision: usize,
}

impl Offer {
    /// Whether the fix moves exactly the entries the findings name, in order.
    pub fn moves_match_findings(&self) -> bool {
        self.moves.len() == self.findings.len() && self.moves.iter().zip(&self.findings).all(|(m, f)| *m == label(f))
    }
}

/// How an entry is named in [`Fix::moves`]: a key in double quotes, a
/// spread as written.
pub(super) fn label(finding: &Finding) -> String {
    match (finding.code, &finding.key, &finding.spread) {
        (Code::ExtraKey, Some(key), _) => format!("\"{key}\""),
        (_, _, spread) => spread.clone().unwrap_or_default(),
    }
}

/// Something the reviewer should hear about besides the offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A rule settled a fix without asking.
    Settled { path: PathBuf, line: usize, number: usize, total: usize, applied: bool, rule: Rule },
    /// An accepted fix was dropped: it would have added a syntax error.
    Dropped { path: PathBuf, line: usize },
    /// Reads of moved keys were rewritten in a file, with the fixes.
    ReadsRewritten { path: PathBuf, reads: usize },
    /// An edited fix was applied, and the reads of its keys were not
    /// rewritten (they may now fail).
    ReadsLeft { path: PathBuf, line: usize, reads: Vec<String> },
    /// A suppression comment was written for a tool result.
    Suppressed { path: PathBuf, line: usize, codes: Vec<Code> },
    /// A file was written with its accepted fixes.
    Written { path: PathBuf, applied: usize },
    /// A file could not be read, or its accepted fixes could not be written.
    Failed { path: PathBuf, message: String },
}

/// Where the answers come from: the terminal, or a script in tests.
pub trait DecisionSource {
    /// The answer to `offer`.
    fn decide(&mut self, offer: &Offer) -> Decision;

    /// Hears about what happened besides the offers.
    fn tell(&mut self, _event: &Event) {}
}

/// A fix waiting for its decision.
#[derive(Debug, Clone)]
pub struct PendingFix {
    /// The tool result's byte range in the current text.
    pub dict: Range<usize>,
    pub fix: Fix,
    pub findings: Vec<Finding>,
    /// The tool result's 1-based line in the current text.
    pub line: usize,
    /// Undecided fixes in the file, this one included.
    pub remaining: usize,
    /// The remedies a reviewer may choose among (each with what it does),
    /// and which one `fix` is ([`fix::Plan::alternatives`]); empty when
    /// there is only one.
    pub remedies: Vec<(String, Fix)>,
    pub chosen: usize,
    /// Whether the reviewer edited it (its reads are then not rewritten).
    pub edited: bool,
}

impl PendingFix {
    /// This fix with its next remedy (the first after the last), if it
    /// has more than one.
    pub fn next_remedy(&self) -> Option<PendingFix> {
        if self.remedies.len() < 2 {
            return None;
        }
        let chosen = (self.chosen + 1) % self.remedies.len();
        Some(PendingFix { fix: self.remedies[chosen].1.clone(), chosen, ..self.clone() })
    }
}

/// The review of one file's text: pure, no I/O.
pub struct FileReview {
    text: String,
    plan_options: PlanOptions,
    planner: Planner,
    baseline_errors: usize,
    /// Byte ranges, in `text`, of the tool results whose fix was decided.
    decided: Vec<Range<usize>>,
    /// The reads rewritten with the fixes of its origins (origins in `text`).
    rewrites: Vec<ReviewRewrite>,
    /// The edits applied so far, a batch per accepted fix, in order.
    batches: Vec<Vec<Edit>>,
}

/// What planning the current text found.
struct Planned {
    plans: Vec<fix::Plan>,
}

impl FileReview {
    /// A review of `original`; the layout style is read from it once, as
    /// `toolshape fix` does.
    pub fn new(original: &str, policy: &apply::FixPolicy, planner: Planner) -> Self {
        let rules = policy.rules.clone();
        FileReview {
            text: original.to_owned(),
            plan_options: PlanOptions {
                not_results: policy.not_results.clone(),
                alternatives: true,
                ..PlanOptions::for_source(original, policy.line_length, policy.augment_text, rules)
                    .with_builders(policy.builders.clone())
                    .with_read_reasons(policy.read_reasons.clone())
            },
            planner,
            baseline_errors: apply::syntax_error_count(original),
            decided: Vec::new(),
            rewrites: Vec::new(),
            batches: Vec::new(),
        }
    }

    /// This review, with the reads rewritten with the fixes of its origins.
    pub fn with_rewrites(self, rewrites: Vec<ReviewRewrite>) -> Self {
        FileReview { rewrites, ..self }
    }

    /// The reads rewritten with `pending`'s fix, when it is accepted as
    /// offered: those of the origins it rewrites.
    pub fn rewrites_of(&self, pending: &PendingFix) -> Vec<ReviewRewrite> {
        let inside = |a: &Range<usize>, b: &Range<usize>| b.start <= a.start && a.end <= b.end;
        let r = &pending.dict;
        self.rewrites.iter().filter(|w| inside(&w.origin, r) || inside(r, &w.origin)).cloned().collect()
    }

    /// The edits applied so far, a batch per accepted fix, in order.
    pub fn batches(&self) -> &[Vec<Edit>] {
        &self.batches
    }

    /// The text with every fix accepted so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    fn plan(&self) -> Planned {
        let pieces = syntax::parse_pieces(&self.text, ParseScope::WholeFile);
        let plans = (self.planner)(&self.text, &pieces, &self.plan_options);
        Planned { plans }
    }

    fn is_open(&self, plan: &fix::Plan) -> bool {
        matches!(plan.remedy, Remedy::Fix(_)) && !self.decided.contains(&plan.range)
    }

    /// Undecided fixes and tool results left for manual repair.
    pub fn counts(&self) -> (usize, usize) {
        let planned = self.plan();
        let open = planned.plans.iter().filter(|p| self.is_open(p)).count();
        let manual = planned.plans.iter().filter(|p| matches!(p.remedy, Remedy::Manual(_))).count();
        (open, manual)
    }

    /// The first undecided fix by position (a repair of a result's shape
    /// first), or `None` when the file is done.
    pub fn next_fix(&self) -> Option<PendingFix> {
        let planned = self.plan();
        let mut open: Vec<fix::Plan> = planned.plans.into_iter().filter(|p| self.is_open(p)).collect();
        // As `fix` does, a repair of a result's shape goes before the move
        // of the keys of the dict around it.
        let at = open.iter().position(|p| matches!(p.subject, fix::Subject::Shape(_))).unwrap_or(0);
        let remaining = open.len();
        if open.is_empty() {
            return None;
        }
        let first = open.swap_remove(at);
        let index = LineIndex::new(&self.text);
        let findings = first.findings(&self.text, &index);
        let Remedy::Fix(fix) = first.remedy else { unreachable!("open plans are fixes") };
        let line = index.line_of(first.range.start) + 1;
        let remedies = first.alternatives;
        Some(PendingFix { dict: first.range, fix, findings, line, remaining, remedies, chosen: 0, edited: false })
    }

    /// The text as it would be with `pending` applied.
    pub fn preview(&self, pending: &PendingFix) -> String {
        fix::apply_edits(&self.text, &pending.fix.edits)
    }

    /// The lines of the current text that `pending`'s edits touch, with
    /// [`DIFF_CONTEXT`] lines around them (whole lines, newlines included).
    fn region(&self, pending: &PendingFix) -> Range<usize> {
        let index = LineIndex::new(&self.text);
        let start = pending.fix.edits.iter().map(|e| e.range.start).min().unwrap_or(pending.dict.start);
        let end = pending.fix.edits.iter().map(|e| e.range.end).max().unwrap_or(pending.dict.end);
        let first = index.line_of(start).saturating_sub(DIFF_CONTEXT);
        let last = index.line_of(end.saturating_sub(1).max(start)) + DIFF_CONTEXT;
        let line_start =
            |line: usize| self.text.match_indices('\n').nth(line.wrapping_sub(1)).map_or(0, |(i, _)| i + 1);
        let from = if first == 0 { 0 } else { line_start(first) };
        let to = self.text.match_indices('\n').nth(last).map_or(self.text.len(), |(i, _)| i + 1);
        from..to
    }

    /// What `e` opens in the editor: the region of `pending` as it reads
    /// with the fix applied.
    pub fn edit_region(&self, pending: &PendingFix) -> String {
        let region = self.region(pending);
        let grown: isize =
            pending.fix.edits.iter().map(|e| e.replacement.len() as isize - e.range.len() as isize).sum();
        let after = self.preview(pending);
        after[region.start..region.end.saturating_add_signed(grown)].to_owned()
    }

    /// `pending` with the reviewer's `edited` region instead of its own
    /// edits, if the result parses and the tool result no longer breaks
    /// the contract; else why not, for the reviewer.
    pub fn edited(&self, pending: &PendingFix, edited: &str) -> Result<PendingFix, String> {
        let region = self.region(pending);
        let mut replacement = edited.to_owned();
        // An editor that drops the last newline does not join two lines.
        if self.text[region.clone()].ends_with('\n') && !replacement.ends_with('\n') {
            replacement.push('\n');
        }
        let edit = Edit { range: region.clone(), replacement };
        let after = fix::apply_edits(&self.text, std::slice::from_ref(&edit));
        if apply::syntax_error_count(&after) > self.baseline_errors {
            return Err("the edited text does not parse: nothing was applied (edit again, skip or quit)".into());
        }
        let changed = region.start..region.start + edit.replacement.len();
        let mut options = self.plan_options.clone();
        for f in &mut options.not_results {
            f.dict = map_range(&f.dict, std::slice::from_ref(&edit));
        }
        let pieces = syntax::parse_pieces(&after, ParseScope::WholeFile);
        let left: Vec<String> = (self.planner)(&after, &pieces, &options)
            .into_iter()
            .filter(|p| p.range.start < changed.end && changed.start < p.range.end)
            .flat_map(|p| p.findings(&after, &LineIndex::new(&after)))
            .map(|f| format!("{} at line {}", f.code, f.span.start.line))
            .collect();
        if !left.is_empty() {
            return Err(format!(
                "the edited text still breaks the contract ({}): nothing was applied (edit again, skip or quit)",
                left.join(", ")
            ));
        }
        let fix = Fix { edits: vec![edit], ..pending.fix.clone() };
        Ok(PendingFix { fix, remedies: Vec::new(), chosen: 0, edited: true, ..pending.clone() })
    }

    /// `pending` as a suppression comment for its findings, placed as
    /// `check --add-ignores` places them; or why it cannot be.
    pub fn suppressed(&self, pending: &PendingFix) -> Result<PendingFix, String> {
        let added = crate::baseline::add_ignores(&self.text, &pending.findings);
        if let Some((_, why)) = added.skipped.first() {
            return Err(why.clone());
        }
        if added.added == 0 || added.text == self.text {
            return Err("no suppression comment could be placed for it".into());
        }
        let edit = Edit::between(&self.text, &added.text);
        let fix = Fix { edits: vec![edit], applicability: Applicability::Safe, ..pending.fix.clone() };
        Ok(PendingFix { fix, remedies: Vec::new(), chosen: 0, ..pending.clone() })
    }

    /// Whether the tool result of `pending` breaks the contract no more in `after`.
    fn clean_after(&self, pending: &PendingFix, after: &str) -> bool {
        let start = map_offset(pending.dict.start, &pending.fix.edits, Bound::Start);
        let pieces = syntax::parse_pieces(after, ParseScope::WholeFile);
        !contract::tool_results(after, &pieces, &self.plan_options.rules)
            .iter()
            .any(|d| d.range.start == start && d.is_violating())
    }

    /// The reads of the keys `fix` moves that stay as they are (the review
    /// rewrites none): its unsafe reasons that name a read.
    pub fn reads_left(&self, fix: &Fix) -> Vec<String> {
        fix.unsafe_reasons.iter().filter(|why| self.plan_options.is_read_reason(why)).cloned().collect()
    }

    /// The diff of `pending` alone, hunks only.
    pub fn diff(&self, path: &Path, after: &str, palette: Palette) -> String {
        let full = diff::unified(path, &self.text, after, DIFF_CONTEXT, palette);
        // The `---`/`+++` lines repeat the path the offer's header names.
        full.splitn(3, '\n').nth(2).unwrap_or_default().to_owned()
    }

    /// Applies `pending`. When the re-parse shows more syntax errors than the
    /// original had, the fix is dropped (the text stays as it is) and `false`
    /// is returned; either way the tool result counts as decided.
    pub fn apply(&mut self, pending: &PendingFix) -> bool {
        let after = self.preview(pending);
        if apply::syntax_error_count(&after) > self.baseline_errors {
            self.decided.push(pending.dict.clone());
            return false;
        }
        let edits = &pending.fix.edits;
        for range in &mut self.decided {
            *range = map_range(range, edits);
        }
        // The origins of read keys move with the text.
        for (range, _) in &mut self.plan_options.read_reasons {
            *range = map_range(range, edits);
        }
        for f in &mut self.plan_options.not_results {
            f.dict = map_range(&f.dict, edits);
        }
        for w in &mut self.rewrites {
            w.origin = map_range(&w.origin, edits);
        }
        self.batches.push(edits.clone());
        // Remembered too, so that a fix which left its dict violating is
        // never offered twice.
        self.decided.push(map_range(&pending.dict, edits));
        self.text = after;
        true
    }

    /// Leaves the tool result of `pending` as it is.
    pub fn skip(&mut self, pending: &PendingFix) {
        self.decided.push(pending.dict.clone());
    }
}

/// Which end of a range an offset is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    Start,
    End,
}

/// Where `range` lies once `edits` are applied.
pub(super) fn map_range(range: &Range<usize>, edits: &[Edit]) -> Range<usize> {
    map_offset(range.start, edits, Bound::Start)..map_offset(range.end, edits, Bound::End)
}

/// Where `offset` lies once the non-overlapping `edits` are applied. An
/// insertion exactly at a start goes before it, one exactly at an end goes
/// after it; an offset inside a replaced stretch goes to that stretch's edge.
fn map_offset(offset: usize, edits: &[Edit], bound: Bound) -> usize {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.range.start, e.range.end));
    // How much the edits before `offset` grew (or shrank) the text.
    let mut grown: isize = 0;
    for edit in sorted {
        let r = &edit.range;
        let before = match bound {
            Bound::Start => r.end <= offset,
            Bound::End => r.end < offset || (r.end == offset && r.start < offset),
        };
        if before {
            grown += edit.replacement.len() as isize - r.len() as isize;
        } else if r.start < offset {
            let edge = r.start.saturating_add_signed(grown);
            return match bound {
                Bound::Start => edge,
                Bound::End => edge + edit.replacement.len(),
            };
        } else {
            break;
        }
    }
    offset.saturating_add_signed(grown)
}

/// What a review needs besides the files and the answers.
#[derive(Debug, Clone, Copy)]
pub struct ReviewOptions<'p> {
    /// Fix settings from the command line, over each file's configuration.
    pub overrides: Overrides,
    /// What the project says of each file's fixes: the builders it defines
    /// and the reads of its moved keys, by path as found.
    pub project: Option<&'p ReviewProject>,
    /// How the quick check that picks the files to review parses them.
    pub scope: ParseScope,
    /// Colours of the diffs in the offers.
    pub palette: Palette,
    /// The fix planner ([`crate::fix::plan_source`] outside tests).
    pub planner: Planner,
}

/// How one file's review ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOutcome {
    /// The accepted fixes were written.
    Written,
    /// Nothing was accepted (or everything accepted was dropped).
    Unchanged,
    /// Ctrl-C came before the file's last decision: nothing was written.
    Aborted,
    /// The accepted fixes could not be written.
    WriteFailed(String),
    /// The review stopped before this file.
    NotReached,
}

/// The review of one file, for the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReport {
    pub path: PathBuf,
    /// Fixes accepted and kept (written unless the outcome says otherwise).
    pub applied: usize,
    pub skipped: usize,
    /// Accepted fixes that were dropped (they would add a syntax error) or
    /// could not be written.
    pub failed: usize,
    /// Fixes never decided: after `q` or Ctrl-C, or in a file not reached.
    pub undecided: usize,
    /// Tool results left for manual repair.
    pub manual: usize,
    /// Tool results given a suppression comment instead of a fix (`s`).
    pub suppressed: usize,
    pub outcome: FileOutcome,
}

impl FileReport {
    /// Fixes now on disk.
    pub fn written(&self) -> usize {
        if self.outcome == FileOutcome::Written { self.applied } else { 0 }
    }
}

/// How the review stopped early, if it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Quit,
    Aborted,
}

/// The whole review.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReviewReport {
    /// Files with violations, in review order.
    pub files: Vec<FileReport>,
    /// Files that could not be read (path, why).
    pub unreadable: Vec<(PathBuf, String)>,
    pub stop: Option<Stop>,
}

impl ReviewReport {
    /// Whether anything failed: a file unreadable or unwritten, a fix dropped.
    pub fn has_failures(&self) -> bool {
        !self.unreadable.is_empty() || self.files.iter().any(|f| f.failed > 0)
    }

    /// Whether violations remain: skipped, undecided, failed or manual ones.
    pub fn violations_left(&self) -> bool {
        self.files.iter().any(|f| {
            // Fixes accepted in an aborted file were never written.
            f.skipped + f.failed + f.undecided + f.manual > 0 || (f.outcome == FileOutcome::Aborted && f.applied > 0)
        })
    }
}

/// A file with violations, read and waiting for its review.
struct QueuedFile {
    path: PathBuf,
    bytes: Vec<u8>,
    source: SourceText,
    policy: apply::FixPolicy,
    rewrites: Vec<ReviewRewrite>,
    fixes: usize,
    manual: usize,
}

/// What the project says of one file's fixes.
#[derive(Debug, Default, Clone)]
pub struct FileWord {
    /// The result builders it defines.
    pub builders: Vec<crate::semantic::project::BuilderSpec>,
    /// The origins whose moved keys are read (with the reads).
    pub read_reasons: Vec<(Range<usize>, String)>,
    /// Its TS005 findings: displays its project's tools return that are
    /// not tool results.
    pub not_results: Vec<crate::diagnostics::Finding>,
    /// The reads, in any file reviewed or not, rewritten with the fix of
    /// an origin in it: when that fix is accepted as offered.
    pub rewrites: Vec<ReviewRewrite>,
}

/// A read rewritten with the fix of one origin, as the review applies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewRewrite {
    /// The origin (a display, a write statement) in its file's text as
    /// the project pass read it.
    pub origin: Range<usize>,
    /// The file the read stands in, and its read as that text stood.
    pub path: PathBuf,
    pub rewrite: crate::fix::reads::ReadRewrite,
    /// The project's accessor of that file, if it names one.
    pub accessor: Option<crate::fix::reads::JsonAccessor>,
    /// `path:line reads r["k"]`.
    pub note: String,
}

/// The project's word on the fixes of the files reviewed.
#[derive(Debug, Default)]
pub struct ReviewProject {
    pub files: foldhash::HashMap<PathBuf, FileWord>,
}

impl QueuedFile {
    /// The report of this file when none of its fixes was decided.
    fn untouched(self, outcome: FileOutcome) -> FileReport {
        FileReport {
            path: self.path,
            applied: 0,
            skipped: 0,
            failed: 0,
            undecided: self.fixes,
            manual: self.manual,
            suppressed: 0,
            outcome,
        }
    }
}

/// Reads `path` and counts its fixes; `None` when it has no violations.
fn queue_file(file: FoundFile, options: &ReviewOptions) -> Result<Option<QueuedFile>, String> {
    let FoundFile { path, settings } = file;
    let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
    let source = SourceText::decode(bytes.clone())?;
    let mut policy = settings.fix_policy(options.overrides);
    let mut rewrites = Vec::new();
    if let Some(word) = options.project.and_then(|p| p.files.get(&path)) {
        policy.builders = word.builders.clone();
        policy.read_reasons = word.read_reasons.clone();
        policy.not_results = word.not_results.clone();
        rewrites = word.rewrites.clone();
    }
    if policy.not_results.is_empty() && check::violating_pieces(&source.text, options.scope, &policy.rules).is_none() {
        return Ok(None);
    }
    let (fixes, manual) = FileReview::new(&source.text, &policy, options.planner).counts();
    Ok(Some(QueuedFile { path, bytes, source, policy, rewrites, fixes, manual }))
}

/// The standing answers given so far.
#[derive(Debug, Default)]
struct Rules {
    all_safe: bool,
    /// Sets of moved keys (`k`).
    same_moves: Vec<BTreeSet<String>>,
}

fn moved_set(fix: &Fix) -> BTreeSet<String> {
    fix.moves.iter().cloned().collect()
}

impl Rules {
    /// The standing answer for `fix`, if one covers it: applied or not, and
    /// by which rule. Only `a` applies unsafe fixes by rule (its file's).
    fn settle(&self, file_rule: Option<Rule>, fix: &Fix) -> Option<(bool, Rule)> {
        match file_rule {
            Some(Rule::SkipRestOfFile) => return Some((false, Rule::SkipRestOfFile)),
            Some(Rule::RestOfFile) => return Some((true, Rule::RestOfFile)),
            _ => {}
        }
        if fix.applicability == Applicability::Unsafe {
            return None;
        }
        if self.all_safe {
            Some((true, Rule::AllSafe))
        } else if self.same_moves.contains(&moved_set(fix)) {
            Some((true, Rule::SameMoves))
        } else {
            None
        }
    }
}

/// What becomes of one fix.
enum Verdict {
    /// Apply this fix: the one offered, another remedy of it, or the
    /// reviewer's edit of it.
    Apply(Box<PendingFix>),
    /// Write this suppression comment instead.
    Suppress(Box<PendingFix>),
    Skip,
    Stop(Stop),
}

/// The review's running state across files.
struct Session<'d, 'p> {
    options: ReviewOptions<'p>,
    decisions: &'d mut dyn DecisionSource,
    rules: Rules,
    /// Fixes decided so far.
    decided: usize,
    /// Fixes in the files after the current one.
    later: usize,
    /// The edits the review wrote into each file so far, a batch per
    /// write, in order: a read (or an origin) as the project pass saw it
    /// is found in the file as it now is through them.
    written: foldhash::HashMap<PathBuf, Vec<Vec<Edit>>>,
}

/// Reviews `files` (in the order given) with answers from `decisions`,
/// writing each file as soon as its last fix is decided.
pub fn review_files(
    files: Vec<FoundFile>,
    options: &ReviewOptions,
    decisions: &mut dyn DecisionSource,
) -> ReviewReport {
    let mut report = ReviewReport::default();
    let mut queue = Vec::new();
    check::par_map_ordered(
        files,
        |file| (file.path.clone(), queue_file(file, options)),
        |(path, queued)| match queued {
            Ok(Some(file)) => queue.push(file),
            Ok(None) => {}
            Err(message) => report.unreadable.push((path, message)),
        },
    );
    for (path, message) in &report.unreadable {
        decisions.tell(&Event::Failed { path: path.clone(), message: message.clone() });
    }
    let later = queue.iter().map(|f| f.fixes).sum();
    let mut session = Session {
        options: *options,
        decisions,
        rules: Rules::default(),
        decided: 0,
        later,
        written: Default::default(),
    };
    for file in queue {
        session.later -= file.fixes;
        let file_report = match report.stop {
            Some(_) => file.untouched(FileOutcome::NotReached),
            None => {
                let (file_report, stop) = session.review_file(file);
                report.stop = stop;
                file_report
            }
        };
        report.files.push(file_report);
    }
    report
}

impl Session<'_, '_> {
    fn review_file(&mut self, file: QueuedFile) -> (FileReport, Option<Stop>) {
        let mut file = file;
        match self.refresh(&mut file) {
            Ok(()) => {}
            Err(message) => {
                self.decisions.tell(&Event::Failed { path: file.path.clone(), message: message.clone() });
                return (file.untouched(FileOutcome::WriteFailed(message)), None);
            }
        }
        let mut review =
            FileReview::new(&file.source.text, &file.policy, self.options.planner).with_rewrites(file.rewrites.clone());
        // The reads rewritten with the fixes accepted so far.
        let mut scheduled: Vec<ReviewRewrite> = Vec::new();
        let (mut applied, mut skipped, mut failed, mut undecided, mut suppressed) = (0, 0, 0, 0, 0);
        let mut file_rule = None;
        let mut stop = None;
        // A guard against a fix that keeps its dict violating under a new
        // range: the review of a file ends after this many decisions.
        let limit = 2 * file.fixes + apply::MAX_ROUNDS;
        while let Some(pending) = review.next_fix() {
            if applied + skipped + failed >= limit {
                undecided = pending.remaining;
                break;
            }
            let number = self.decided + 1;
            let total = self.decided + pending.remaining + self.later;
            let verdict = match self.rules.settle(file_rule, &pending.fix) {
                Some((apply_it, rule)) => {
                    let path = file.path.clone();
                    let line = pending.line;
                    self.decisions.tell(&Event::Settled { path, line, number, total, applied: apply_it, rule });
                    if apply_it { Verdict::Apply(Box::new(pending.clone())) } else { Verdict::Skip }
                }
                None => self.ask(&file.path, &review, &pending, number, total, &mut file_rule),
            };
            match verdict {
                Verdict::Apply(chosen) => {
                    let rewrites = review.rewrites_of(&chosen);
                    if review.apply(&chosen) {
                        applied += 1;
                        if chosen.edited && !rewrites.is_empty() {
                            let reads = rewrites.into_iter().map(|w| w.note).collect();
                            let path = file.path.clone();
                            self.decisions.tell(&Event::ReadsLeft { path, line: pending.line, reads });
                        } else if chosen.chosen == 0 {
                            scheduled.extend(rewrites);
                        }
                    } else {
                        failed += 1;
                        self.decisions.tell(&Event::Dropped { path: file.path.clone(), line: pending.line });
                    }
                }
                Verdict::Suppress(comment) if review.apply(&comment) => {
                    suppressed += 1;
                    let codes = comment.findings.iter().map(|f| f.code).collect::<BTreeSet<_>>().into_iter().collect();
                    self.decisions.tell(&Event::Suppressed { path: file.path.clone(), line: pending.line, codes });
                }
                Verdict::Suppress(_) => {
                    failed += 1;
                    self.decisions.tell(&Event::Dropped { path: file.path.clone(), line: pending.line });
                }
                Verdict::Skip => {
                    review.skip(&pending);
                    skipped += 1;
                }
                Verdict::Stop(why) => {
                    undecided = pending.remaining;
                    stop = Some(why);
                    break;
                }
            }
            self.decided += 1;
        }
        let manual = review.counts().1;
        // The reads in this file rewritten with its own fixes go into the
        // same write; those in other files are written right after it.
        let (own, others): (Vec<ReviewRewrite>, Vec<ReviewRewrite>) =
            scheduled.into_iter().partition(|w| w.path == file.path);
        let mut text = review.text().to_owned();
        let mut batches: Vec<Vec<Edit>> = review.batches().to_vec();
        if stop != Some(Stop::Aborted) && !own.is_empty() {
            let (rewritten, edits) = rewrite_reads(&text, &own, &batches);
            text = rewritten;
            batches.push(edits);
        }
        let changed = text != file.source.text;
        let outcome = if stop == Some(Stop::Aborted) {
            FileOutcome::Aborted
        } else if !changed {
            FileOutcome::Unchanged
        } else {
            match write_reviewed(&file, &text) {
                Ok(()) => {
                    self.written.entry(file.path.clone()).or_default().extend(batches);
                    self.decisions.tell(&Event::Written { path: file.path.clone(), applied });
                    if !own.is_empty() {
                        self.decisions.tell(&Event::ReadsRewritten { path: file.path.clone(), reads: own.len() });
                    }
                    self.write_rewrites(others);
                    FileOutcome::Written
                }
                Err(message) => {
                    self.decisions.tell(&Event::Failed { path: file.path.clone(), message: message.clone() });
                    failed += applied;
                    applied = 0;
                    FileOutcome::WriteFailed(message)
                }
            }
        };
        (FileReport { path: file.path, applied, skipped, failed, undecided, manual, suppressed, outcome }, stop)
    }

    /// Makes `file` what it now is on disk, when the review has written
    /// reads into it since it was queued: its text read again, and the
    /// ranges its policy and rewrites name moved with those writes.
    fn refresh(&self, file: &mut QueuedFile) -> Result<(), String> {
        let Some(batches) = self.written.get(&file.path) else { return Ok(()) };
        let bytes = std::fs::read(&file.path).map_err(|e| e.to_string())?;
        let source = SourceText::decode(bytes.clone())?;
        let moved = |r: &Range<usize>| batches.iter().fold(r.clone(), |r, edits| map_range(&r, edits));
        for (range, _) in &mut file.policy.read_reasons {
            *range = moved(range);
        }
        for f in &mut file.policy.not_results {
            f.dict = moved(&f.dict);
        }
        for w in &mut file.rewrites {
            w.origin = moved(&w.origin);
        }
        file.bytes = bytes;
        file.source = source;
        Ok(())
    }

    /// Writes `rewrites` (reads in files other than the one just written)
    /// into their files, each file atomically, re-parse checked.
    fn write_rewrites(&mut self, rewrites: Vec<ReviewRewrite>) {
        let mut by_path: std::collections::BTreeMap<PathBuf, Vec<ReviewRewrite>> = Default::default();
        for w in rewrites {
            by_path.entry(w.path.clone()).or_default().push(w);
        }
        for (path, rewrites) in by_path {
            let written = self.written.get(&path).cloned().unwrap_or_default();
            let result = std::fs::read(&path).map_err(|e| e.to_string()).and_then(|bytes| {
                let source = SourceText::decode(bytes.clone())?;
                let (text, edits) = rewrite_reads(&source.text, &rewrites, &written);
                if apply::syntax_error_count(&text) > apply::syntax_error_count(&source.text) {
                    return Err("rewriting its reads would add a syntax error; not written".into());
                }
                apply::write_atomic(&path, &bytes, &source.encode(&text)?)?;
                Ok(edits)
            });
            match result {
                Ok(edits) => {
                    self.written.entry(path.clone()).or_default().push(edits);
                    self.decisions.tell(&Event::ReadsRewritten { path, reads: rewrites.len() });
                }
                Err(message) => self.decisions.tell(&Event::Failed {
                    path,
                    message: format!("the reads of the keys the fixes moved were not rewritten: {message}"),
                }),
            }
        }
    }

    /// Puts `pending` to the reviewer until an answer decides it: another
    /// remedy, an edit refused or a suppression that cannot be placed
    /// shows the offer again.
    fn ask(
        &mut self,
        path: &Path,
        review: &FileReview,
        pending: &PendingFix,
        number: usize,
        total: usize,
        file_rule: &mut Option<Rule>,
    ) -> Verdict {
        let mut pending = pending.clone();
        let mut offer = self.offer(path, review, &pending, number, total, 0);
        loop {
            let rule = match self.decisions.decide(&offer) {
                Decision::Apply => return Verdict::Apply(Box::new(pending)),
                Decision::Skip => return Verdict::Skip,
                Decision::SkipRestOfFile => {
                    *file_rule = Some(Rule::SkipRestOfFile);
                    return Verdict::Skip;
                }
                Decision::Quit => return Verdict::Stop(Stop::Quit),
                Decision::Abort => return Verdict::Stop(Stop::Aborted),
                Decision::ApplyRestOfFile => {
                    *file_rule = Some(Rule::RestOfFile);
                    return Verdict::Apply(Box::new(pending));
                }
                Decision::ApplySameMoves => {
                    self.rules.same_moves.push(moved_set(&pending.fix));
                    Rule::SameMoves
                }
                Decision::ApplyAllSafe => {
                    self.rules.all_safe = true;
                    Rule::AllSafe
                }
                Decision::NextRemedy => {
                    match pending.next_remedy() {
                        Some(mut next) => {
                            let rewrites = review.rewrites_of(&next);
                            if next.chosen != 0 && !rewrites.is_empty() {
                                // The reads are rewritten for the first
                                // remedy's shape: with another, they stay.
                                next.fix.applicability = Applicability::Unsafe;
                                for w in rewrites {
                                    next.fix.unsafe_reasons.push(format!("{} (rewritten only with remedy 1)", w.note));
                                }
                            }
                            pending = next;
                            offer = self.offer(path, review, &pending, number, total, offer.revision + 1);
                        }
                        None => offer.note = Some("This fix has no other remedy.".into()),
                    }
                    continue;
                }
                Decision::Edit(text) => {
                    match review.edited(&pending, &text) {
                        Ok(edited) => return Verdict::Apply(Box::new(edited)),
                        Err(why) => {
                            offer.note = Some(why);
                            offer.revision += 1;
                        }
                    }
                    continue;
                }
                Decision::Suppress => {
                    match review.suppressed(&pending) {
                        Ok(comment) => return Verdict::Suppress(Box::new(comment)),
                        Err(why) => offer.note = Some(format!("No suppression comment was written: {why}.")),
                    }
                    continue;
                }
            };
            if pending.fix.applicability == Applicability::Safe {
                return Verdict::Apply(Box::new(pending));
            }
            offer.note = Some(format!(
                "`{}` will apply {} without asking; this fix is unsafe, so it needs its own y (or n).",
                rule.key(),
                rule.covers()
            ));
        }
    }

    /// The offer of `pending`, as it stands in `review`.
    fn offer(
        &self,
        path: &Path,
        review: &FileReview,
        pending: &PendingFix,
        number: usize,
        total: usize,
        revision: usize,
    ) -> Offer {
        let after = review.preview(pending);
        let remedy = (pending.remedies.len() > 1)
            .then(|| (pending.chosen + 1, pending.remedies.len(), pending.remedies[pending.chosen].0.clone()));
        Offer {
            path: path.to_path_buf(),
            line: pending.line,
            number,
            total,
            findings: pending.findings.clone(),
            applicability: pending.fix.applicability,
            unsafe_reasons: pending.fix.unsafe_reasons.clone(),
            moves: pending.fix.moves.clone(),
            text_augmented: matches!(pending.fix.text, fix::TextAugment::Added { .. }),
            text_note: pending.fix.text.note(),
            clean_after: review.clean_after(pending, &after),
            diff: review.diff(path, &after, self.options.palette),
            note: None,
            remedy,
            edit_region: review.edit_region(pending),
            rewrites: review.rewrites_of(pending).into_iter().map(|w| w.note).collect(),
            reads: review.reads_left(&pending.fix),
            repair: pending.fix.repair.clone(),
            revision,
        }
    }
}

/// `text` with `rewrites` applied, and their edits: each read found
/// through `batches`, the edits the review made to the text the project
/// pass read. A read inside an edited stretch is left (it moved with a fix).
fn rewrite_reads(text: &str, rewrites: &[ReviewRewrite], batches: &[Vec<Edit>]) -> (String, Vec<Edit>) {
    let mut moved: Vec<crate::fix::reads::ReadRewrite> = rewrites
        .iter()
        .map(|w| {
            let receiver = batches.iter().fold(w.rewrite.receiver.clone(), |r, edits| map_range(&r, edits));
            crate::fix::reads::ReadRewrite { receiver, ..w.rewrite.clone() }
        })
        .filter(|r| r.receiver.end <= text.len() && r.receiver.start < r.receiver.end)
        .collect();
    moved.sort_by_key(|r| (r.receiver.start, r.receiver.end));
    moved.dedup();
    let accessor = rewrites.iter().find_map(|w| w.accessor.as_ref());
    let edits = crate::fix::reads::read_edits(text, &moved, accessor);
    (fix::apply_edits(text, &edits), edits)
}

/// Writes a reviewed file: re-parse checked against the original, atomic,
/// its BOM kept, never over a file changed since it was read.
fn write_reviewed(file: &QueuedFile, text: &str) -> Result<(), String> {
    if apply::syntax_error_count(text) > apply::syntax_error_count(&file.source.text) {
        return Err("the reviewed text has more syntax errors than the original; not written".into());
    }
    // An interrupt waits for this write (see `apply::exit_on_interrupt`).
    apply::write_atomic(&file.path, &file.bytes, &file.source.encode(text)?)
}
