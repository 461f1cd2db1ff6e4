//! Interactive review (`toolshape fix --interactive`): every fix is shown with
//! the findings it resolves, its safety verdict, what it moves and its diff,
//! and is applied or skipped one at a time, in the spirit of `git add -p`.
//!
//! [`FileReview`] is the pure engine for one file: plan the text as it
//! stands, offer the first undecided fix, apply or skip it, plan again — so
//! decisions compose, and a tool result nested in another is offered after
//! the outer one is decided, computed on the text as it then is.
//! [`review_files`] drives it over files with answers from a
//! [`DecisionSource`]: [`TerminalDecisions`] reads keys from the terminal,
//! tests script their own. A file is written (re-parse checked, atomically,
//! BOM kept) as soon as its last fix is decided, so a later Ctrl-C or crash
//! never loses a finished file and never leaves a half-written one; `q`
//! writes what was accepted in the file under review too.
//!
//! `a` applies this fix and every remaining one in the file, unsafe ones
//! included, as its key says. The keys that reach across files (`k`, `A`)
//! apply only *safe* fixes without asking: an unsafe fix they meet is still
//! shown and needs its own `y`; pressed on an unsafe fix, they set their rule
//! and ask about that fix again.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};

use console::{Key, Term};

use crate::apply::{self, Planner};
use crate::config::Overrides;
use crate::diagnostics::{Code, Finding};
use crate::discovery::FoundFile;
use crate::fix::{self, Applicability, Edit, Fix, PlanOptions, Remedy};
use crate::report::{self, Palette};
use crate::source::SourceText;
use crate::syntax::{self, LineIndex, ParseScope};
use crate::{check, contract, diff};

/// Lines of context around each fix's diff.
const DIFF_CONTEXT: usize = 3;

/// An answer to one offered fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    fn covers(self) -> &'static str {
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
    /// Said when the fix is asked about again, after a rule that does not
    /// cover it.
    pub note: Option<String>,
}

impl Offer {
    /// Whether the fix moves exactly the entries the findings name, in order.
    pub fn moves_match_findings(&self) -> bool {
        self.moves.len() == self.findings.len() && self.moves.iter().zip(&self.findings).all(|(m, f)| *m == label(f))
    }
}

/// How an entry is named in [`Fix::moves`]: a key in double quotes, a
/// spread as written.
fn label(finding: &Finding) -> String {
    match (finding.code, &finding.key, &finding.spread) {
        (Code::ExtraKey, Some(key), _) => format!("\"{key}\""),
        (_, _, spread) => spread.clone().unwrap_or_default(),
    }
}

/// Collapses a multi-line excerpt onto one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Something the reviewer should hear about besides the offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A rule settled a fix without asking.
    Settled { path: PathBuf, line: usize, number: usize, total: usize, applied: bool, rule: Rule },
    /// An accepted fix was dropped: it would have added a syntax error.
    Dropped { path: PathBuf, line: usize },
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
}

/// The review of one file's text: pure, no I/O.
pub struct FileReview {
    text: String,
    plan_options: PlanOptions,
    planner: Planner,
    baseline_errors: usize,
    /// Byte ranges, in `text`, of the tool results whose fix was decided.
    decided: Vec<Range<usize>>,
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
            plan_options: PlanOptions::for_source(original, policy.line_length, policy.augment_text, rules)
                .with_builders(policy.builders.clone())
                .with_read_reasons(policy.read_reasons.clone()),
            planner,
            baseline_errors: apply::syntax_error_count(original),
            decided: Vec::new(),
        }
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
        Some(PendingFix { dict: first.range, fix, findings, line, remaining })
    }

    /// The text as it would be with `pending` applied.
    pub fn preview(&self, pending: &PendingFix) -> String {
        fix::apply_edits(&self.text, &pending.fix.edits)
    }

    /// Whether the tool result of `pending` breaks the contract no more in `after`.
    fn clean_after(&self, pending: &PendingFix, after: &str) -> bool {
        let start = map_offset(pending.dict.start, &pending.fix.edits, Bound::Start);
        let pieces = syntax::parse_pieces(after, ParseScope::WholeFile);
        !contract::tool_results(after, &pieces, &self.plan_options.rules)
            .iter()
            .any(|d| d.range.start == start && d.is_violating())
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
fn map_range(range: &Range<usize>, edits: &[Edit]) -> Range<usize> {
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
    fixes: usize,
    manual: usize,
}

/// What the project says of one file's fixes: the result builders it
/// defines, and the origins whose moved keys are read (with the reads).
pub type FileWord = (Vec<crate::semantic::project::BuilderSpec>, Vec<(Range<usize>, String)>);

/// The project's word on the fixes of the files reviewed.
#[derive(Debug, Default)]
pub struct ReviewProject {
    pub files: std::collections::HashMap<PathBuf, FileWord>,
}

/// Reads `path` and counts its fixes; `None` when it has no violations.
fn queue_file(file: FoundFile, options: &ReviewOptions) -> Result<Option<QueuedFile>, String> {
    let FoundFile { path, settings } = file;
    let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
    let source = SourceText::decode(bytes.clone())?;
    let mut policy = settings.fix_policy(options.overrides);
    if let Some((builders, reasons)) = options.project.and_then(|p| p.files.get(&path)) {
        policy.builders = builders.clone();
        policy.read_reasons = reasons.clone();
    }
    if check::violating_pieces(&source.text, options.scope, &policy.rules).is_none() {
        return Ok(None);
    }
    let (fixes, manual) = FileReview::new(&source.text, &policy, options.planner).counts();
    Ok(Some(QueuedFile { path, bytes, source, policy, fixes, manual }))
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
    Apply,
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
    let mut session = Session { options: *options, decisions, rules: Rules::default(), decided: 0, later };
    for file in queue {
        session.later -= file.fixes;
        let file_report = match report.stop {
            Some(_) => FileReport {
                path: file.path,
                applied: 0,
                skipped: 0,
                failed: 0,
                undecided: file.fixes,
                manual: file.manual,
                outcome: FileOutcome::NotReached,
            },
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
        let mut review = FileReview::new(&file.source.text, &file.policy, self.options.planner);
        let (mut applied, mut skipped, mut failed, mut undecided) = (0, 0, 0, 0);
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
                    if apply_it { Verdict::Apply } else { Verdict::Skip }
                }
                None => self.ask(&file.path, &review, &pending, number, total, &mut file_rule),
            };
            match verdict {
                Verdict::Apply if review.apply(&pending) => applied += 1,
                Verdict::Apply => {
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
        let changed = review.text() != file.source.text;
        let outcome = if stop == Some(Stop::Aborted) {
            FileOutcome::Aborted
        } else if !changed {
            FileOutcome::Unchanged
        } else {
            match write_reviewed(&file, review.text()) {
                Ok(()) => {
                    self.decisions.tell(&Event::Written { path: file.path.clone(), applied });
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
        (FileReport { path: file.path, applied, skipped, failed, undecided, manual, outcome }, stop)
    }

    /// Puts `pending` to the reviewer until an answer decides it.
    fn ask(
        &mut self,
        path: &Path,
        review: &FileReview,
        pending: &PendingFix,
        number: usize,
        total: usize,
        file_rule: &mut Option<Rule>,
    ) -> Verdict {
        let after = review.preview(pending);
        let mut offer = Offer {
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
        };
        loop {
            let rule = match self.decisions.decide(&offer) {
                Decision::Apply => return Verdict::Apply,
                Decision::Skip => return Verdict::Skip,
                Decision::SkipRestOfFile => {
                    *file_rule = Some(Rule::SkipRestOfFile);
                    return Verdict::Skip;
                }
                Decision::Quit => return Verdict::Stop(Stop::Quit),
                Decision::Abort => return Verdict::Stop(Stop::Aborted),
                Decision::ApplyRestOfFile => {
                    *file_rule = Some(Rule::RestOfFile);
                    return Verdict::Apply;
                }
                Decision::ApplySameMoves => {
                    self.rules.same_moves.push(moved_set(&pending.fix));
                    Rule::SameMoves
                }
                Decision::ApplyAllSafe => {
                    self.rules.all_safe = true;
                    Rule::AllSafe
                }
            };
            if pending.fix.applicability == Applicability::Safe {
                return Verdict::Apply;
            }
            offer.note = Some(format!(
                "`{}` will apply {} without asking; this fix is unsafe, so it needs its own y (or n).",
                rule.key(),
                rule.covers()
            ));
        }
    }
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

/// The one-line legend of the keys, shown with every question.
pub const LEGEND: &str = "y apply, n skip, a rest of file, d skip file, k same keys, A all safe, q quit, ? help";

/// What each key does, for `?`.
pub fn help_text(offer: &Offer) -> String {
    let moves = offer.moves.iter().map(|m| one_line(m)).collect::<Vec<_>>().join(", ");
    [
        "y - apply this fix".to_owned(),
        "n - skip this fix".to_owned(),
        "a - apply this fix and every remaining fix in this file (unsafe ones too)".to_owned(),
        "d - skip this fix and every remaining fix in this file".to_owned(),
        format!("k - apply this fix and every remaining safe fix that moves the same keys ({moves})"),
        "A - apply this fix and every remaining safe fix, in every file".to_owned(),
        "q - quit; the fixes accepted so far are written".to_owned(),
        "Ctrl-C - abort; nothing not yet written is written".to_owned(),
        "? - print this help".to_owned(),
        "a, k and A apply safe fixes only: each unsafe fix is shown and needs its own y.".to_owned(),
        "A file is written as soon as its last fix is decided.".to_owned(),
    ]
    .join("\n")
}

/// Renders an offer: header, findings, verdict, moves, diff (no prompt).
pub fn render_offer(offer: &Offer, palette: Palette) -> String {
    let mut out = String::new();
    let verdict = match offer.applicability {
        Applicability::Safe => palette.green("safe fix"),
        Applicability::Unsafe => palette.red(&palette.bold("UNSAFE fix")),
    };
    out.push_str(&format!(
        "{} {} {}\n",
        palette.bold(&format!("[{}/{}]", offer.number, offer.total)),
        palette.bold(&format!("{}:{}", offer.path.display(), offer.line)),
        verdict
    ));
    let resolves: Vec<String> = offer.findings.iter().map(|f| format!("{} {}", f.code, one_line(&label(f)))).collect();
    out.push_str(&format!("  resolves: {}\n", resolves.join(", ")));
    match offer.applicability {
        Applicability::Safe if offer.text_augmented => out.push_str(
            "  safe: same status, content blocks (plus the json block; the text mentions what moved) \
             and toolUseId; side effects in the same order\n",
        ),
        Applicability::Safe => out.push_str(
            "  safe: same status, content blocks (plus the json block) and toolUseId; side effects in the same order\n",
        ),
        Applicability::Unsafe => {
            for reason in &offer.unsafe_reasons {
                out.push_str(&format!("  {} {reason}\n", palette.red("unsafe:")));
            }
        }
    }
    let moves = offer.moves.iter().map(|m| one_line(m)).collect::<Vec<_>>().join(", ");
    let receipt = match (offer.moves_match_findings(), offer.clean_after) {
        (true, true) => "exactly the flagged entries; none left after".to_owned(),
        (true, false) => palette.red("(!) the tool result still breaks the contract after this fix"),
        (false, _) => palette.red(&format!("(!) the findings flag: {}", resolves.join(", "))),
    };
    out.push_str(&format!("  moves: {moves} -> json ({receipt})\n"));
    out.push_str(&format!("  {}\n", offer.text_note));
    out.push_str(&offer.diff);
    if let Some(note) = &offer.note {
        out.push_str(&format!("{}\n", palette.bold(note)));
    }
    out
}

/// The line after a fix that a rule settled.
pub fn render_event(event: &Event, palette: Palette) -> String {
    match event {
        Event::Settled { path, line, number, total, applied, rule } => palette.dim(&format!(
            "[{number}/{total}] {}:{line} {} by `{}`",
            path.display(),
            if *applied { "applied" } else { "skipped" },
            rule.key()
        )),
        Event::Dropped { path, line } => palette.red(&format!(
            "{}:{line}: the fix would add a syntax error, so it was dropped (a toolshape bug: please report it)",
            path.display()
        )),
        Event::Written { path, applied } => {
            palette.green(&format!("Wrote {} ({} applied).", path.display(), report::plural(*applied, "fix")))
        }
        Event::Failed { path, message } => format!("error: {}: {message}", path.display()),
    }
}

/// The summary: one line per file with violations, then the totals.
pub fn summary_lines(report: &ReviewReport) -> Vec<String> {
    let mut lines = Vec::new();
    if report.files.is_empty() {
        lines.push("Nothing to review: no fixable violations.".to_owned());
        return lines;
    }
    lines.push("Summary:".to_owned());
    for file in &report.files {
        let mut counts = Vec::new();
        let accepted = match file.outcome {
            FileOutcome::Aborted => "accepted",
            _ => "applied",
        };
        for (n, what) in [(file.applied, accepted), (file.skipped, "skipped"), (file.failed, "failed")] {
            if n > 0 {
                counts.push(format!("{n} {what}"));
            }
        }
        if file.undecided > 0 {
            counts.push(format!("{} not reviewed", file.undecided));
        }
        if file.manual > 0 {
            counts.push(format!("{} left for manual repair", file.manual));
        }
        let outcome = match &file.outcome {
            FileOutcome::Written => "written".to_owned(),
            FileOutcome::Unchanged | FileOutcome::NotReached => "unchanged".to_owned(),
            FileOutcome::Aborted => "aborted, not written".to_owned(),
            FileOutcome::WriteFailed(why) => format!("not written: {why}"),
        };
        let counts = if counts.is_empty() { "nothing to do".to_owned() } else { counts.join(", ") };
        lines.push(format!("  {}: {counts} — {outcome}", file.path.display()));
    }
    let sum = |f: fn(&FileReport) -> usize| report.files.iter().map(f).sum::<usize>();
    let written = sum(FileReport::written);
    let files_written = report.files.iter().filter(|f| f.written() > 0).count();
    let mut totals =
        vec![format!("Applied {} in {}", report::plural(written, "fix"), report::plural(files_written, "file"))];
    for (n, what) in [
        (sum(|f| f.skipped), "skipped"),
        (sum(|f| f.failed), "failed"),
        (sum(|f| f.undecided), "not reviewed"),
        (sum(|f| f.manual), "left for manual repair"),
    ] {
        if n > 0 {
            totals.push(format!("{n} {what}"));
        }
    }
    let lead = match report.stop {
        Some(Stop::Quit) => "Quit. ",
        Some(Stop::Aborted) => "Aborted. ",
        None => "",
    };
    lines.push(format!("{lead}{}.", totals.join("; ")));
    lines
}

/// What a key does at the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyAction {
    Decide(Decision),
    Help,
}

/// The action of `key`, if it has one.
pub fn key_action(key: &Key) -> Option<KeyAction> {
    let decision = match key {
        Key::Char('y') => Decision::Apply,
        Key::Char('n') => Decision::Skip,
        Key::Char('a') => Decision::ApplyRestOfFile,
        Key::Char('d') => Decision::SkipRestOfFile,
        Key::Char('k') => Decision::ApplySameMoves,
        Key::Char('A') => Decision::ApplyAllSafe,
        Key::Char('q') => Decision::Quit,
        Key::CtrlC => Decision::Abort,
        Key::Char('?') => return Some(KeyAction::Help),
        _ => return None,
    };
    Some(KeyAction::Decide(decision))
}

/// Answers from the keyboard; offers and events go to the terminal.
pub struct TerminalDecisions {
    term: Term,
    palette: Palette,
    /// The offer on screen (path, number), so that asking about it again
    /// repeats only its note.
    on_screen: Option<(PathBuf, usize)>,
}

impl TerminalDecisions {
    pub fn new(palette: Palette) -> Self {
        TerminalDecisions { term: Term::stdout(), palette, on_screen: None }
    }

    fn say(&self, text: &str) {
        // A terminal that cannot be written to leaves nothing to tell.
        let _ = self.term.write_str(text);
    }
}

impl DecisionSource for TerminalDecisions {
    fn decide(&mut self, offer: &Offer) -> Decision {
        let shown = Some((offer.path.clone(), offer.number));
        if self.on_screen == shown {
            if let Some(note) = &offer.note {
                self.say(&format!("{}\n", self.palette.bold(note)));
            }
        } else {
            self.say(&format!("\n{}", render_offer(offer, self.palette)));
            self.on_screen = shown;
        }
        loop {
            self.say(&format!("{} [{LEGEND}] ", self.palette.bold("Apply this fix?")));
            // Raw keys: Ctrl-C arrives as a key, not as a signal.
            let Ok(key) = self.term.read_key_raw() else {
                self.say("\n");
                return Decision::Abort;
            };
            match key_action(&key) {
                Some(KeyAction::Decide(decision)) => {
                    let shown = match key {
                        Key::Char(c) => c.to_string(),
                        _ => "^C".to_owned(),
                    };
                    self.say(&format!("{shown}\n"));
                    return decision;
                }
                Some(KeyAction::Help) => self.say(&format!("?\n{}\n", help_text(offer))),
                None => self.say("\nThat key does nothing here; press ? for help.\n"),
            }
        }
    }

    fn tell(&mut self, event: &Event) {
        let line = render_event(event, self.palette);
        match event {
            Event::Failed { .. } => eprintln!("{line}"),
            _ => self.say(&format!("{line}\n")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fix::AugmentText;

    const NO_COLOUR: Palette = Palette { enabled: false };

    #[test]
    fn a_fix_whose_keys_are_read_stays_unsafe_after_earlier_fixes_move_it() {
        let src = "def a():\n    return {'status': 'success', 'content': [], 'n': 1}\n\n\ndef b():\n    return {'status': 'success', 'content': [], 'locked': True}\n";
        let second = src.rfind('{').unwrap()..src.len() - 1;
        let mut policy = policy(false, AugmentText::Never);
        policy.read_reasons = vec![(second, "tests/test_b.py:3 reads r[\"locked\"]".to_owned())];
        let mut review = FileReview::new(src, &policy, crate::fix::plan_source);
        let first = review.next_fix().unwrap();
        assert_eq!(first.fix.applicability, Applicability::Safe, "{first:?}");
        assert!(review.apply(&first));
        // The first fix grew the text before the second dict.
        let next = review.next_fix().unwrap();
        assert_eq!(next.fix.applicability, Applicability::Unsafe, "{next:?}");
        assert_eq!(next.fix.unsafe_reasons, ["tests/test_b.py:3 reads r[\"locked\"]"]);
    }

    /// What `toolshape fix` does without configuration, as a review should.
    fn policy(unsafe_fixes: bool, augment_text: AugmentText) -> apply::FixPolicy {
        apply::FixPolicy {
            unsafe_fixes,
            line_length: 88,
            augment_text,
            rules: contract::Rules::default(),
            builders: Vec::new(),
            read_reasons: Vec::new(),
            expected: Vec::new(),
            keep_text: Vec::new(),
            rewritten_reads: Vec::new(),
        }
    }

    fn options() -> ReviewOptions<'static> {
        ReviewOptions {
            project: None,
            overrides: Overrides { augment_text: Some(AugmentText::Never), unsafe_fixes: None },
            scope: ParseScope::Candidates,
            palette: NO_COLOUR,
            planner: fix::plan_source,
        }
    }

    /// Runs before an answer is given.
    type AnswerHook = Box<dyn FnMut(&Offer)>;

    /// Answers from a list, recording every offer and event.
    #[derive(Default)]
    struct Script {
        answers: Vec<Decision>,
        offers: Vec<Offer>,
        events: Vec<Event>,
        /// Runs before each answer (to change files behind the review's back).
        before_answer: Option<AnswerHook>,
    }

    impl Script {
        fn new(answers: &[Decision]) -> Self {
            Script { answers: answers.iter().rev().copied().collect(), ..Script::default() }
        }

        /// (file name, line) of each offer.
        fn asked(&self) -> Vec<(String, usize)> {
            self.offers.iter().map(|o| (file_name(&o.path), o.line)).collect()
        }
    }

    impl DecisionSource for Script {
        fn decide(&mut self, offer: &Offer) -> Decision {
            if let Some(hook) = &mut self.before_answer {
                hook(offer);
            }
            self.offers.push(offer.clone());
            self.answers.pop().unwrap_or_else(|| panic!("no answer left for offer {}", self.offers.len()))
        }

        fn tell(&mut self, event: &Event) {
            self.events.push(event.clone());
        }
    }

    fn file_name(path: &Path) -> String {
        path.file_name().unwrap().to_string_lossy().into_owned()
    }

    /// A temporary tree of files.
    struct Tree {
        dir: tempfile::TempDir,
    }

    impl Tree {
        fn new(files: &[(&str, &str)]) -> Self {
            let dir = tempfile::tempdir().unwrap();
            for (name, text) in files {
                std::fs::write(dir.path().join(name), text).unwrap();
            }
            Tree { dir }
        }

        fn paths(&self) -> Vec<PathBuf> {
            let mut paths: Vec<PathBuf> =
                std::fs::read_dir(self.dir.path()).unwrap().map(|e| e.unwrap().path()).collect();
            paths.sort();
            paths
        }

        /// The files to review, under the built-in settings.
        fn files(&self) -> Vec<FoundFile> {
            self.paths().into_iter().map(FoundFile::with_defaults).collect()
        }

        fn read(&self, name: &str) -> String {
            std::fs::read_to_string(self.dir.path().join(name)).unwrap()
        }

        fn review(&self, script: &mut Script) -> ReviewReport {
            review_files(self.files(), &options(), script)
        }
    }

    /// Three safe fixes, one per function.
    const THREE: &str = "\
def one():
    return {\"status\": \"success\", \"content\": [], \"a\": 1}


def two():
    return {\"status\": \"success\", \"content\": [], \"b\": 2}


def three():
    return {\"status\": \"success\", \"content\": [], \"c\": 3}
";

    fn three_with(fixed: [bool; 3]) -> String {
        let mut text = THREE.to_owned();
        for (fixed, key) in fixed.iter().zip(["\"a\": 1", "\"b\": 2", "\"c\": 3"]) {
            if *fixed {
                text = text.replace(
                    &format!("\"content\": [], {key}}}"),
                    &format!("\"content\": [{{\"json\": {{{key}}}}}]}}"),
                );
            }
        }
        text
    }

    /// An unsafe fix (a spread after "status"), then a safe one moving "a".
    const UNSAFE_THEN_SAFE: &str = "\
def one(extra):
    return {\"status\": \"success\", \"content\": [], **extra}


def two():
    return {\"status\": \"success\", \"content\": [], \"a\": 1}
";

    const UNSAFE_FIXED: &str = "return {\"status\": \"success\", \"content\": [{\"json\": {**extra}}]}";
    const SAFE_FIXED: &str = "return {\"status\": \"success\", \"content\": [{\"json\": {\"a\": 1}}]}";

    use Decision::*;

    #[test]
    fn the_expected_texts_are_what_fix_writes() {
        let policy = policy(true, AugmentText::Never);
        assert_eq!(apply::fix_text(THREE, &policy).text, three_with([true; 3]));
        let fixed = apply::fix_text(UNSAFE_THEN_SAFE, &policy).text;
        assert!(fixed.contains(UNSAFE_FIXED) && fixed.contains(SAFE_FIXED), "{fixed}");
    }

    #[test]
    fn accepting_the_first_and_third_fix_writes_exactly_those() {
        let tree = Tree::new(&[("a.py", THREE)]);
        let mut script = Script::new(&[Apply, Skip, Apply]);
        let report = tree.review(&mut script);
        assert_eq!(tree.read("a.py"), three_with([true, false, true]));
        assert_eq!(script.asked(), [("a.py".into(), 2), ("a.py".into(), 6), ("a.py".into(), 10)]);
        let progress: Vec<(usize, usize)> = script.offers.iter().map(|o| (o.number, o.total)).collect();
        assert_eq!(progress, [(1, 3), (2, 3), (3, 3)]);
        let file = &report.files[0];
        assert_eq!((file.applied, file.skipped, file.failed, file.undecided), (2, 1, 0, 0));
        assert_eq!(file.outcome, FileOutcome::Written);
        assert!(report.violations_left() && !report.has_failures());
    }

    #[test]
    fn each_offer_shows_findings_moves_and_a_diff_with_context() {
        let tree = Tree::new(&[("a.py", THREE)]);
        let mut script = Script::new(&[Skip, Apply, Skip]);
        tree.review(&mut script);
        let offer = &script.offers[1];
        assert_eq!(offer.findings.len(), 1);
        assert_eq!(offer.findings[0].key.as_deref(), Some("b"));
        assert_eq!(offer.moves, ["\"b\""]);
        assert!(offer.moves_match_findings() && offer.clean_after);
        assert_eq!(
            offer.diff,
            "@@ -3,7 +3,7 @@\n \n \n def two():\n-    return {\"status\": \"success\", \"content\": [], \"b\": 2}\n+    return {\"status\": \"success\", \"content\": [{\"json\": {\"b\": 2}}]}\n \n \n def three():\n"
        );
        let shown = render_offer(offer, NO_COLOUR);
        assert!(shown.starts_with(&format!("[2/3] {}:6 safe fix\n", offer.path.display())), "{shown}");
        assert!(shown.contains("  resolves: TS001 \"b\"\n"), "{shown}");
        assert!(shown.contains("  moves: \"b\" -> json (exactly the flagged entries; none left after)\n"), "{shown}");
        assert_eq!(tree.read("a.py"), three_with([false, true, false]));
    }

    #[test]
    fn a_applies_the_rest_of_the_file_and_d_skips_it() {
        let tree = Tree::new(&[("a.py", THREE), ("b.py", THREE), ("c.py", THREE)]);
        let mut script = Script::new(&[Skip, ApplyRestOfFile, SkipRestOfFile, Apply, Skip, Skip]);
        let report = tree.review(&mut script);
        assert_eq!(tree.read("a.py"), three_with([false, true, true]));
        assert_eq!(tree.read("b.py"), THREE);
        assert_eq!(tree.read("c.py"), three_with([true, false, false]));
        assert_eq!(script.offers.len(), 6, "{:?}", script.asked());
        let settled: Vec<(usize, bool, Rule)> = script
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Settled { number, applied, rule, .. } => Some((*number, *applied, *rule)),
                _ => None,
            })
            .collect();
        assert_eq!(
            settled,
            [(3, true, Rule::RestOfFile), (5, false, Rule::SkipRestOfFile), (6, false, Rule::SkipRestOfFile)]
        );
        let counts: Vec<(usize, usize)> = report.files.iter().map(|f| (f.applied, f.skipped)).collect();
        assert_eq!(counts, [(2, 1), (0, 3), (1, 2)]);
        assert_eq!(report.files[1].outcome, FileOutcome::Unchanged);
    }

    #[test]
    fn a_applies_every_remaining_fix_of_the_file_unsafe_ones_too() {
        let src =
            format!("{THREE}\n\ndef four(extra):\n    return {{\"status\": \"success\", \"content\": [], **extra}}\n");
        let tree = Tree::new(&[("a.py", &src), ("b.py", UNSAFE_THEN_SAFE)]);
        let mut script = Script::new(&[ApplyRestOfFile, Skip, Skip]);
        tree.review(&mut script);
        // One question for a.py; b.py is asked about again (a is per file).
        assert_eq!(script.asked()[0], ("a.py".into(), 2));
        assert!(script.asked()[1..].iter().all(|(path, _)| path == "b.py"), "{:?}", script.asked());
        let fixed = tree.read("a.py");
        assert!(fixed.starts_with(&three_with([true; 3])), "{fixed}");
        assert!(fixed.contains("\"content\": [{\"json\": {**extra}}]"), "the unsafe fix is applied too: {fixed}");
    }

    #[test]
    fn capital_a_applies_every_safe_fix_and_still_asks_about_unsafe_ones() {
        let tree = Tree::new(&[("a.py", THREE), ("b.py", UNSAFE_THEN_SAFE), ("c.py", UNSAFE_THEN_SAFE)]);
        let mut script = Script::new(&[ApplyAllSafe, Skip, Apply]);
        let report = tree.review(&mut script);
        assert_eq!(tree.read("a.py"), three_with([true; 3]));
        assert_eq!(
            tree.read("b.py"),
            UNSAFE_THEN_SAFE.replace("return {\"status\": \"success\", \"content\": [], \"a\": 1}", SAFE_FIXED)
        );
        let c = tree.read("c.py");
        assert!(c.contains(UNSAFE_FIXED) && c.contains(SAFE_FIXED), "{c}");
        assert_eq!(script.asked(), [("a.py".into(), 2), ("b.py".into(), 2), ("c.py".into(), 2)]);
        assert!(script.offers[1..].iter().all(|o| o.applicability == Applicability::Unsafe));
        assert_eq!(report.files[1].skipped, 1);
    }

    #[test]
    fn a_bulk_key_on_an_unsafe_fix_sets_its_rule_and_asks_again() {
        let tree = Tree::new(&[("a.py", UNSAFE_THEN_SAFE), ("b.py", THREE)]);
        let mut script = Script::new(&[ApplyAllSafe, Skip]);
        tree.review(&mut script);
        assert_eq!(script.offers.len(), 2);
        assert_eq!(script.offers[0].note, None);
        let note = script.offers[1].note.as_deref().unwrap();
        assert!(note.contains("`A` will apply every safe fix") && note.contains("needs its own y"), "{note}");
        assert_eq!(
            tree.read("a.py"),
            UNSAFE_THEN_SAFE.replace("return {\"status\": \"success\", \"content\": [], \"a\": 1}", SAFE_FIXED)
        );
        assert_eq!(tree.read("b.py"), three_with([true; 3]));
    }

    #[test]
    fn k_applies_the_fixes_moving_the_same_keys_everywhere() {
        let frames = |name: &str, order: &str| {
            format!("def {name}(f, e):\n    return {{\"status\": \"success\", \"content\": [], {order}}}\n")
        };
        let a = format!("{}\n\n{}", frames("one", "\"frames\": f, \"errors\": e"), frames("two", "\"frames\": f"));
        let b = format!("{}\n\n{}", frames("three", "\"errors\": e, \"frames\": f"), frames("four", "\"errors\": e"));
        let tree = Tree::new(&[("a.py", &a), ("b.py", &b)]);
        let mut script = Script::new(&[ApplySameMoves, Skip, Skip]);
        tree.review(&mut script);
        // Asked: the first (k), then the two moving other keys; the third
        // moves the same set in another order and is applied by `k`.
        assert_eq!(script.asked(), [("a.py".into(), 2), ("a.py".into(), 6), ("b.py".into(), 6)]);
        assert!(tree.read("a.py").contains("[{\"json\": {\"frames\": f, \"errors\": e}}]"));
        assert!(tree.read("a.py").contains("\"content\": [], \"frames\": f}"));
        assert!(tree.read("b.py").contains("[{\"json\": {\"errors\": e, \"frames\": f}}]"));
        assert!(tree.read("b.py").contains("\"content\": [], \"errors\": e}"));
    }

    #[test]
    fn q_writes_what_was_accepted_and_leaves_the_rest() {
        let tree = Tree::new(&[("a.py", THREE), ("b.py", THREE)]);
        let mut script = Script::new(&[Apply, Quit]);
        let report = tree.review(&mut script);
        assert_eq!(tree.read("a.py"), three_with([true, false, false]));
        assert_eq!(tree.read("b.py"), THREE);
        assert_eq!(report.stop, Some(Stop::Quit));
        assert_eq!((report.files[0].applied, report.files[0].undecided), (1, 2));
        assert_eq!(report.files[0].outcome, FileOutcome::Written);
        assert_eq!((report.files[1].undecided, &report.files[1].outcome), (3, &FileOutcome::NotReached));
        let summary = summary_lines(&report);
        assert!(summary.last().unwrap().starts_with("Quit. Applied 1 fix in 1 file; 5 not reviewed"), "{summary:?}");
    }

    #[test]
    fn abort_keeps_finished_files_and_writes_nothing_else() {
        let tree = Tree::new(&[("a.py", THREE), ("b.py", THREE), ("c.py", THREE)]);
        let mut script = Script::new(&[Apply, Skip, Apply, Apply, Abort]);
        let report = tree.review(&mut script);
        assert_eq!(tree.read("a.py"), three_with([true, false, true]));
        assert_eq!(tree.read("b.py"), THREE);
        assert_eq!(tree.read("c.py"), THREE);
        assert_eq!(report.stop, Some(Stop::Aborted));
        assert_eq!(report.files[1].outcome, FileOutcome::Aborted);
        assert_eq!((report.files[1].applied, report.files[1].undecided), (1, 2));
        let written: Vec<&Event> = script.events.iter().filter(|e| matches!(e, Event::Written { .. })).collect();
        assert_eq!(written.len(), 1);
        assert_eq!(std::fs::read_dir(tree.dir.path()).unwrap().count(), 3, "no temporary file left");
    }

    /// A tool result whose moved entry holds another, and whose content
    /// holds a third.
    const NESTED: &str = "\
x = {
    \"status\": \"success\",
    \"content\": [{\"json\": {\"status\": \"success\", \"content\": [], \"inner\": 1}}],
    \"outer\": {\"status\": \"success\", \"content\": [], \"deep\": 2},
}
";

    #[test]
    fn a_nested_fix_is_offered_after_the_outer_one_on_the_text_as_it_then_is() {
        let policy = policy(true, AugmentText::Never);
        let all_fixed = apply::fix_text(NESTED, &policy).text;

        let tree = Tree::new(&[("a.py", NESTED)]);
        let mut script = Script::new(&[Apply, Apply, Apply]);
        tree.review(&mut script);
        assert_eq!(tree.read("a.py"), all_fixed);
        assert_eq!(script.offers[0].moves, ["\"outer\""]);
        assert_eq!(script.offers[0].line, 1);
        // The inner ones are planned on the text the outer fix left.
        assert!(
            script.offers[1]
                .diff
                .contains("-        {\"json\": {\"status\": \"success\", \"content\": [], \"inner\": 1}},"),
            "{}",
            script.offers[1].diff
        );
        assert_eq!(script.offers[1].moves, ["\"inner\""]);
        assert_eq!(script.offers[2].moves, ["\"deep\""]);

        // Skipping the outer fix leaves both inner ones to decide, on the
        // original text; the skipped outer dict is not offered again.
        let tree = Tree::new(&[("a.py", NESTED)]);
        let mut script = Script::new(&[Skip, Skip, Apply]);
        let report = tree.review(&mut script);
        assert_eq!(script.asked(), [("a.py".into(), 1), ("a.py".into(), 3), ("a.py".into(), 4)]);
        assert_eq!(
            tree.read("a.py"),
            NESTED.replace("\"content\": [], \"deep\": 2}", "\"content\": [{\"json\": {\"deep\": 2}}]}")
        );
        assert_eq!((report.files[0].applied, report.files[0].skipped), (1, 2));
    }

    #[test]
    fn skipped_ranges_follow_the_edits_of_fixes_inside_them() {
        // Skip the outer dict, apply the inner one: the outer dict grows but
        // is still known as decided, so the review ends.
        let tree = Tree::new(&[("a.py", NESTED)]);
        let mut script = Script::new(&[Skip, Apply, Apply]);
        let report = tree.review(&mut script);
        assert_eq!(script.offers.len(), 3);
        assert_eq!(report.files[0].skipped, 1);
        assert!(
            tree.read("a.py")
                .contains("\"outer\": {\"status\": \"success\", \"content\": [{\"json\": {\"deep\": 2}}]},")
        );
    }

    #[test]
    fn the_text_block_is_augmented_as_augment_text_says() {
        let src = "def f(ms):\n    return {\"status\": \"success\", \"content\": [{\"text\": \"pong\"}], \"ms\": ms}\n";
        for augment_text in [AugmentText::Safe, AugmentText::Never] {
            let policy = policy(false, augment_text);
            let tree = Tree::new(&[("a.py", src)]);
            let mut script = Script::new(&[Apply]);
            let overrides = Overrides { augment_text: Some(augment_text), unsafe_fixes: None };
            let options = ReviewOptions { overrides, ..options() };
            review_files(tree.files(), &options, &mut script);
            assert_eq!(tree.read("a.py"), apply::fix_text(src, &policy).text);
            let augmented = augment_text == AugmentText::Safe;
            assert_eq!(script.offers[0].text_augmented, augmented);
            assert_eq!(
                script.offers[0].text_note,
                if augmented { "text augmented with ms" } else { "text not augmented: --augment-text=never" }
            );
            let shown = render_offer(&script.offers[0], NO_COLOUR);
            assert_eq!(shown.contains("the text mentions what moved"), augmented, "{shown}");
        }
    }

    /// A script that accepts everything.
    struct AcceptAll(usize);

    impl DecisionSource for AcceptAll {
        fn decide(&mut self, _offer: &Offer) -> Decision {
            self.0 += 1;
            Apply
        }
    }

    #[test]
    fn accepting_every_fix_one_by_one_equals_fixing_with_unsafe_fixes() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fix");
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&fixtures).unwrap().map(|e| e.unwrap().path()).collect();
        paths.retain(|p| p.extension().is_some_and(|e| e == "py"));
        paths.sort();
        assert!(paths.len() > 100);
        let dir = tempfile::tempdir().unwrap();
        let mut differ = Vec::new();
        for augment_text in [AugmentText::Safe, AugmentText::Never] {
            let policy = policy(true, augment_text);
            for path in &paths {
                let source = SourceText::read(path).unwrap();
                let copy = dir.path().join(path.file_name().unwrap());
                std::fs::copy(path, &copy).unwrap();
                let mut accept = AcceptAll(0);
                // Whole-file parsing: one fixture spells "status" only through an escape.
                let overrides = Overrides { augment_text: Some(augment_text), unsafe_fixes: None };
                let options = ReviewOptions { overrides, scope: ParseScope::WholeFile, ..options() };
                review_files(vec![FoundFile::with_defaults(copy.clone())], &options, &mut accept);
                let reviewed = SourceText::read(&copy).unwrap().text;
                let fixed = apply::fix_text(&source.text, &policy);
                if reviewed != fixed.text || accept.0 != fixed.applied.len() {
                    differ.push(format!("{} ({augment_text:?})", file_name(path)));
                }
            }
        }
        assert!(differ.is_empty(), "review and fix disagree on: {differ:#?}");
    }

    #[test]
    fn offsets_map_through_edits() {
        let edits = [
            Edit { range: 2..4, replacement: "xyz".into() },
            Edit { range: 6..6, replacement: "++".into() },
            Edit { range: 8..10, replacement: String::new() },
        ];
        // before, inside, at an insertion, after everything
        assert_eq!(map_range(&(0..2), &edits), 0..2);
        assert_eq!(map_range(&(1..5), &edits), 1..6);
        assert_eq!(map_range(&(3..6), &edits), 2..7, "a start inside an edit goes to its start");
        assert_eq!(map_range(&(6..8), &edits), 9..11, "an insertion at a start goes before it");
        assert_eq!(map_range(&(9..12), &edits), 11..13, "a start inside a deletion goes to where it was");
        assert_eq!(map_range(&(4..9), &edits), 5..11, "an end inside an edit goes to its end");
        let src = "0123456789ab";
        assert_eq!(fix::apply_edits(src, &edits), "01xyz45++67ab");
    }

    #[test]
    fn a_bom_and_crlf_are_kept() {
        let src = THREE.replace('\n', "\r\n");
        let tree = Tree::new(&[("a.py", &format!("\u{feff}{src}"))]);
        let mut script = Script::new(&[Apply, Skip, Skip]);
        tree.review(&mut script);
        let expected = three_with([true, false, false]).replace('\n', "\r\n");
        assert_eq!(tree.read("a.py"), format!("\u{feff}{expected}"));
        assert!(!script.offers[0].diff.contains('\u{feff}'));
    }

    #[test]
    fn a_fix_that_breaks_the_syntax_is_dropped_and_the_rest_still_written() {
        let tree = Tree::new(&[("a.py", THREE)]);
        let mut script = Script::new(&[Apply, Apply, Apply]);
        let options = ReviewOptions { planner: crate::apply::tests::breaking_planner, ..options() };
        let report = review_files(tree.files(), &options, &mut script);
        assert_eq!(tree.read("a.py"), THREE);
        assert_eq!(report.files[0].failed, 3);
        assert_eq!(report.files[0].outcome, FileOutcome::Unchanged);
        assert!(report.has_failures());
        let dropped = script.events.iter().filter(|e| matches!(e, Event::Dropped { .. })).count();
        assert_eq!(dropped, 3);
    }

    #[test]
    fn a_file_changed_during_the_review_is_not_overwritten() {
        let tree = Tree::new(&[("a.py", THREE)]);
        let path = tree.paths().remove(0);
        let mut script = Script::new(&[Apply, Apply, Apply]);
        let changed = path.clone();
        script.before_answer = Some(Box::new(move |offer| {
            if offer.number == 3 {
                std::fs::write(&changed, "# edited meanwhile\n").unwrap();
            }
        }));
        let report = tree.review(&mut script);
        assert_eq!(tree.read("a.py"), "# edited meanwhile\n");
        assert!(matches!(&report.files[0].outcome, FileOutcome::WriteFailed(why) if why.contains("changed on disk")));
        assert_eq!((report.files[0].applied, report.files[0].failed), (0, 3));
        assert!(script.events.iter().any(|e| matches!(e, Event::Failed { .. })));
    }

    #[test]
    fn unreadable_and_clean_files_are_reported_or_passed_over() {
        let tree = Tree::new(&[("a.py", "x = 1\n"), ("b.py", "\u{0}"), ("c.py", THREE)]);
        std::fs::write(tree.dir.path().join("b.py"), b"\xff\xfe").unwrap();
        let mut script = Script::new(&[SkipRestOfFile]);
        let report = tree.review(&mut script);
        assert_eq!(report.files.len(), 1);
        assert_eq!(report.unreadable.len(), 1);
        assert!(report.unreadable[0].1.contains("UTF-8"));
        assert!(report.has_failures());
    }

    #[test]
    fn manual_repairs_are_counted_not_offered() {
        let src = "x = {'status': 'success', 'content': lambda: 'text', 'n': 1}\n";
        let tree = Tree::new(&[("a.py", src)]);
        let mut script = Script::new(&[]);
        let report = tree.review(&mut script);
        assert_eq!(report.files[0].manual, 1);
        assert_eq!(report.files[0].outcome, FileOutcome::Unchanged);
        assert!(report.violations_left());
        assert!(
            summary_lines(&report)[1].ends_with(": 1 left for manual repair — unchanged"),
            "{:?}",
            summary_lines(&report)
        );
    }

    #[test]
    fn unsafe_offers_say_why() {
        let tree = Tree::new(&[("a.py", UNSAFE_THEN_SAFE)]);
        let mut script = Script::new(&[Skip, Skip]);
        tree.review(&mut script);
        let shown = render_offer(&script.offers[0], NO_COLOUR);
        assert!(shown.contains(" UNSAFE fix\n"), "{shown}");
        assert!(shown.contains("  resolves: TS002 **extra\n"), "{shown}");
        assert!(shown.contains("  unsafe: "), "{shown}");
        assert_eq!(script.offers[0].unsafe_reasons.len(), 1);
        assert!(shown.contains(&script.offers[0].unsafe_reasons[0]));
        let coloured = render_offer(&script.offers[0], Palette { enabled: true });
        assert!(coloured.contains("\x1b[31m\x1b[1mUNSAFE fix\x1b[0m\x1b[0m"), "{coloured:?}");
    }

    #[test]
    fn a_receipt_that_disagrees_with_the_findings_is_flagged() {
        let tree = Tree::new(&[("a.py", THREE)]);
        let mut script = Script::new(&[Skip, Skip, Skip]);
        tree.review(&mut script);
        let mut offer = script.offers[0].clone();
        offer.moves.push("\"extra\"".into());
        assert!(!offer.moves_match_findings());
        assert!(render_offer(&offer, NO_COLOUR).contains("(!) the findings flag: TS001 \"a\""));
    }

    #[test]
    fn keys_map_to_decisions() {
        let decide = |key| key_action(&key);
        assert_eq!(decide(Key::Char('y')), Some(KeyAction::Decide(Apply)));
        assert_eq!(decide(Key::Char('n')), Some(KeyAction::Decide(Skip)));
        assert_eq!(decide(Key::Char('a')), Some(KeyAction::Decide(ApplyRestOfFile)));
        assert_eq!(decide(Key::Char('d')), Some(KeyAction::Decide(SkipRestOfFile)));
        assert_eq!(decide(Key::Char('k')), Some(KeyAction::Decide(ApplySameMoves)));
        assert_eq!(decide(Key::Char('A')), Some(KeyAction::Decide(ApplyAllSafe)));
        assert_eq!(decide(Key::Char('q')), Some(KeyAction::Decide(Quit)));
        assert_eq!(decide(Key::CtrlC), Some(KeyAction::Decide(Abort)));
        assert_eq!(decide(Key::Char('?')), Some(KeyAction::Help));
        assert_eq!(decide(Key::Char('Y')), None);
        assert_eq!(decide(Key::Enter), None);
    }

    #[test]
    fn the_summary_names_each_file_and_the_totals() {
        let report = ReviewReport {
            files: vec![
                FileReport {
                    path: "a.py".into(),
                    applied: 2,
                    skipped: 1,
                    failed: 0,
                    undecided: 0,
                    manual: 1,
                    outcome: FileOutcome::Written,
                },
                FileReport {
                    path: "b.py".into(),
                    applied: 1,
                    skipped: 0,
                    failed: 0,
                    undecided: 2,
                    manual: 0,
                    outcome: FileOutcome::Aborted,
                },
                FileReport {
                    path: "c.py".into(),
                    applied: 0,
                    skipped: 0,
                    failed: 0,
                    undecided: 4,
                    manual: 0,
                    outcome: FileOutcome::NotReached,
                },
            ],
            unreadable: Vec::new(),
            stop: Some(Stop::Aborted),
        };
        assert_eq!(
            summary_lines(&report),
            [
                "Summary:",
                "  a.py: 2 applied, 1 skipped, 1 left for manual repair — written",
                "  b.py: 1 accepted, 2 not reviewed — aborted, not written",
                "  c.py: 4 not reviewed — unchanged",
                "Aborted. Applied 2 fixes in 1 file; 1 skipped; 6 not reviewed; 1 left for manual repair.",
            ]
        );
    }
}
