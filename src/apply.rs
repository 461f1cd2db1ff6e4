//! Applying fixes: rounds of non-overlapping fixes until nothing applicable
//! is left (nested tool results are fixed in later rounds), a re-parse guard
//! that drops any fix adding a syntax error, and atomic, permission-keeping
//! writes that never clobber a file changed since it was read.

use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::contract::Rules;
use crate::diagnostics::Finding;
use crate::fix::{self, Applicability, AugmentText, Plan, PlanOptions, Remedy, Subject};
use crate::syntax::{self, LineIndex};

/// Rounds before giving up on nested fixes (each round fixes one level).
pub const MAX_ROUNDS: usize = 32;

/// Which fixes to apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixPolicy {
    pub unsafe_fixes: bool,
    pub line_length: usize,
    pub augment_text: AugmentText,
    /// What counts as a violation in this project.
    pub rules: Rules,
    /// The result builders the file defines ([`PlanOptions::builders`]).
    pub builders: Vec<crate::semantic::project::BuilderSpec>,
    /// Origins whose moved keys the project reads ([`PlanOptions::read_reasons`]).
    pub read_reasons: Vec<(Range<usize>, String)>,
    /// Origins (a display, a write statement) whose fixes the run's
    /// rewritten reads depend on: [`FixedText::missed`] counts those that
    /// did not apply.
    pub expected: Vec<Range<usize>>,
    /// Displays whose text stays ([`PlanOptions::keep_text`]).
    pub keep_text: Vec<Range<usize>>,
    /// Origins with the reads of their keys that are rewritten with them:
    /// each applied fix lists its own ([`AppliedFix::reads_rewritten`]).
    pub rewritten_reads: Vec<(Range<usize>, String)>,
    /// The file's TS005 findings ([`PlanOptions::not_results`]).
    pub not_results: Vec<Finding>,
}

impl FixPolicy {
    /// A policy with `rules` and these fix settings, knowing nothing of
    /// the project (no builders, no reads, no TS005 findings).
    pub const fn new(rules: Rules, unsafe_fixes: bool, line_length: usize, augment_text: AugmentText) -> Self {
        FixPolicy {
            unsafe_fixes,
            line_length,
            augment_text,
            rules,
            builders: Vec::new(),
            read_reasons: Vec::new(),
            expected: Vec::new(),
            keep_text: Vec::new(),
            rewritten_reads: Vec::new(),
            not_results: Vec::new(),
        }
    }
}

/// A fix that was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedFix {
    /// The 1-based line of the dict, in the text the fix was applied to
    /// (traced back to the original text for a run that writes nothing).
    pub line: usize,
    /// The 1-based line of the dict in the fixed text (where a link to the
    /// fixed file should point), or in the original text for a run that
    /// writes nothing.
    pub final_line: usize,
    /// Where the dict starts in the fixed text (or the original, as
    /// `final_line`).
    pub final_offset: usize,
    pub applicability: Applicability,
    pub moves: Vec<String>,
    pub text: fix::TextAugment,
    /// What a repair of the result's shape did ([`fix::Fix::repair`]).
    pub repair: Option<String>,
    /// The reads of its keys it leaves as they are (an unsafe fix applied
    /// with `--unsafe-fixes`): each may now fail.
    pub reads_left: Vec<String>,
    /// The reads of its keys rewritten with it.
    pub reads_rewritten: Vec<String>,
}

impl AppliedFix {
    /// One line for reviewers: what moved, and what happened to the text.
    pub fn note(&self) -> String {
        let unsafe_mark = if self.applicability == Applicability::Unsafe { " (unsafe)" } else { "" };
        match &self.repair {
            Some(repair) => format!("{}: {repair}{unsafe_mark}", self.line),
            None => {
                // A spread written over several lines is shown on one.
                let moves: Vec<String> = self.moves.iter().map(|m| crate::syntax::tree::one_line(m)).collect();
                format!("{}: moves {} -> json{unsafe_mark}; {}", self.line, moves.join(", "), self.text.note())
            }
        }
    }
}

/// A violating dict left as it is, with its findings (positions in the
/// fixed text, or in the original for a run that writes nothing) and why
/// it was left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftover {
    pub findings: Vec<Finding>,
    pub why: LeftBecause,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftBecause {
    /// An unsafe fix exists but was not asked for.
    Unsafe(Vec<String>),
    /// No mechanical fix: a person must repair it.
    Manual(String),
    /// The fix would have added a syntax error (a toolshape bug).
    BrokeSyntax,
    /// The file already has syntax errors, and the fix would change how
    /// tree-sitter recovers from them: left for a person, not a bug.
    BrokenFile,
    /// Nested deeper than [`MAX_ROUNDS`].
    RoundLimit,
    /// Its fix is in another file, outside the paths given (a call of a
    /// result builder defined there): the message says which.
    Elsewhere(String),
}

/// The outcome of fixing one source text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedText {
    pub text: String,
    pub applied: Vec<AppliedFix>,
    pub leftovers: Vec<Leftover>,
    /// How many of [`FixPolicy::expected`] were not fixed.
    pub missed: usize,
    /// The edits that made `text`, to trace its places back.
    pub rounds: Rounds,
}

impl FixedText {
    /// A text left as it is (`text`, which may be empty when no text is
    /// kept), with what is `left` in it and how many expected fixes it
    /// `missed`.
    pub fn unchanged(text: String, leftovers: Vec<Leftover>, missed: usize) -> Self {
        FixedText { text, applied: Vec::new(), leftovers, missed, rounds: Rounds::default() }
    }
}

/// The edits that made a fixed text from its source, round by round, each
/// round's in the text it was applied to: a place in the fixed text is
/// traced back to the source through them, for a run that writes nothing
/// (`fix --diff`), whose reader has the source in front of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rounds(Vec<Round>);

/// One round's edits: sorted starts in the text before it, and where each
/// stands in the text after it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Round {
    /// Each edit's range before the round and after it, and the text it
    /// replaced and the text it wrote (a moved value is copied into it).
    edits: Vec<(Range<usize>, Range<usize>, String, String)>,
}

impl Rounds {
    /// Adds the round of `edits` to `text`, applied after the others.
    pub fn push(&mut self, text: &str, edits: &[fix::Edit]) {
        self.0.push(Round::of(text, edits));
    }

    /// Adds the round of `edits` to `text`, applied before the others.
    pub fn push_first(&mut self, text: &str, edits: &[fix::Edit]) {
        self.0.insert(0, Round::of(text, edits));
    }

    /// The offset of the source that `offset` of the fixed text stands at:
    /// the same text, past the edits before it; inside an edit's new text,
    /// where the text from there to the end of its line stands in what the
    /// edit replaced (a moved value and what it holds), else the start of
    /// what it replaced.
    pub fn source_offset(&self, offset: usize) -> usize {
        self.0.iter().rev().fold(offset, |at, round| round.before(at, false))
    }

    /// [`Rounds::source_offset`] of the end of a span: an end where an
    /// edit's new text begins (or where an edit deleted text) stays before
    /// what that edit replaced, so a span never takes in deleted text.
    pub fn source_end(&self, offset: usize) -> usize {
        self.0.iter().rev().fold(offset, |at, round| round.before(at, true))
    }
}

impl Round {
    fn of(text: &str, edits: &[fix::Edit]) -> Self {
        let mut sorted: Vec<&fix::Edit> = edits.iter().collect();
        sorted.sort_by_key(|e| (e.range.start, e.range.end));
        let mut grown = 0isize;
        let edits = sorted
            .into_iter()
            .map(|e| {
                let start = e.range.start.saturating_add_signed(grown);
                grown += e.replacement.len() as isize - e.range.len() as isize;
                let replaced = text.get(e.range.clone()).unwrap_or_default().to_owned();
                (e.range.clone(), start..start + e.replacement.len(), replaced, e.replacement.clone())
            })
            .collect();
        Round { edits }
    }

    /// Where `at` (in the text after the round) stood before it; as a
    /// span's `end`, an edit whose new text begins at `at` comes after it.
    fn before(&self, at: usize, end: bool) -> usize {
        let k = self.edits.partition_point(|(_, after, ..)| after.start < at || (!end && after.start == at));
        let Some((before, after, _, written)) = k.checked_sub(1).map(|k| &self.edits[k]) else { return at };
        if at >= after.end {
            return (at - after.end) + before.end;
        }
        // Inside the new text: the longest run of it from there (to the end
        // of its line at most) that the replaced texts hold too (a moved
        // value is removed by one edit and written by another), the as
        // many-th time it stands in them as in the new texts before `at`.
        let inside = at - after.start;
        // Its start is the start of what it replaced.
        let Some(rest) = written.get(inside..).filter(|_| inside > 0) else { return before.start };
        let line = &rest[..rest.find(['\n', '\r']).unwrap_or(rest.len())];
        let ends: Vec<usize> = line.char_indices().map(|(i, c)| i + c.len_utf8()).collect();
        let held = |run: &str| self.edits.iter().any(|(.., replaced, _)| replaced.contains(run));
        let found = ends.partition_point(|&end| held(&line[..end]));
        let Some(&end) = found.checked_sub(1).map(|k| &ends[k]) else { return before.start };
        let snippet = &line[..end];
        if snippet.trim().len() < 3.min(line.trim().len()).max(1) {
            return before.start;
        }
        let k = k - 1;
        let nth = self.edits[..k].iter().map(|(.., w)| w.matches(snippet).count()).sum::<usize>()
            + written[..inside].matches(snippet).count();
        self.edits
            .iter()
            .flat_map(|(before, _, replaced, _)| replaced.match_indices(snippet).map(move |(i, _)| before.start + i))
            .nth(nth)
            .unwrap_or(before.start)
    }
}

/// Counts ERROR and MISSING nodes in a full parse of `src`.
pub fn syntax_error_count(src: &str) -> usize {
    error_count(&syntax::parse(src))
}

/// Counts ERROR and MISSING nodes in `tree`.
pub fn error_count(tree: &tree_sitter::Tree) -> usize {
    if !tree.root_node().has_error() {
        return 0;
    }
    let mut n = 0;
    syntax::for_each_node(tree.root_node(), |node| n += usize::from(node.is_error() || node.is_missing()));
    n
}

/// Picks the applicable fixes of `plans` (sorted by position) whose dicts do
/// not overlap, outer dicts first. Linear: chosen dicts are disjoint and
/// sorted, so a dict overlaps one of them exactly when it starts before the
/// last one ends.
///
/// Repairs of a result's shape (TS006–TS009: a status, a content tuple, a
/// block) go first: the moves of the dict around them are planned again
/// on the repaired text in the next round.
fn select(plans: &[Plan], policy: &FixPolicy, broken: &[Range<usize>]) -> Vec<usize> {
    let allowed = |plan: &Plan| match &plan.remedy {
        Remedy::Fix(fix) => {
            (fix.applicability == Applicability::Safe || policy.unsafe_fixes) && !broken.contains(&plan.range)
        }
        Remedy::Manual(_) => false,
    };
    let shape = |plan: &Plan| matches!(plan.subject, Subject::Shape(_));
    let mut chosen: Vec<usize> = Vec::new();
    let mut reach = 0;
    for (i, plan) in plans.iter().enumerate().filter(|(_, p)| shape(p) && allowed(p)) {
        if chosen.is_empty() || plan.range.start >= reach {
            chosen.push(i);
            reach = plan.range.end;
        }
    }
    let repaired: Vec<Range<usize>> = chosen.iter().map(|&i| plans[i].range.clone()).collect();
    let overlaps_a_repair = |r: &Range<usize>| {
        let at = repaired.partition_point(|s| s.end <= r.start);
        repaired.get(at).is_some_and(|s| s.start < r.end)
    };
    reach = 0;
    let mut others: Vec<usize> = Vec::new();
    for (i, plan) in plans.iter().enumerate().filter(|(_, p)| !shape(p) && allowed(p)) {
        if (others.is_empty() || plan.range.start >= reach) && !overlaps_a_repair(&plan.range) {
            others.push(i);
            reach = plan.range.end;
        }
    }
    chosen.extend(others);
    chosen.sort_unstable();
    chosen
}

/// The chosen fixes' edits.
fn chosen_edits(plans: &[Plan], chosen: &[usize]) -> Vec<fix::Edit> {
    chosen
        .iter()
        .flat_map(|&i| match &plans[i].remedy {
            Remedy::Fix(f) => f.edits.clone(),
            Remedy::Manual(_) => Vec::new(),
        })
        .collect()
}

fn apply_plans(text: &str, plans: &[Plan], chosen: &[usize]) -> String {
    fix::apply_edits(text, &chosen_edits(plans, chosen))
}

/// Applies the chosen fixes and parses the result incrementally from `tree`.
fn apply_and_reparse(
    text: &str,
    tree: &tree_sitter::Tree,
    plans: &[Plan],
    chosen: &[usize],
) -> (String, tree_sitter::Tree) {
    let edits = chosen_edits(plans, chosen);
    let new_text = fix::apply_edits(text, &edits);
    let changes: Vec<syntax::TextChange<'_>> = edits
        .iter()
        .map(|e| syntax::TextChange { old_range: (e.range.start, e.range.end), inserted: &e.replacement })
        .collect();
    let new_tree = syntax::reparse(text, tree, &new_text, &changes);
    (new_text, new_tree)
}

/// Where offsets land once edits are applied: moved by the edits that end
/// before them, or to the start of an edit that replaces them. The edits
/// are sorted once (stably, by start) and each offset is found by halving:
/// moving the positions of 100,000 fixes is not 100,000 sorts and scans of
/// their edits.
pub struct Shift {
    starts: Vec<usize>,
    /// The furthest end among the edits up to each one, in that order.
    furthest_end: Vec<usize>,
    /// How much the edits before each one grow the text (one more entry: all).
    grown_before: Vec<isize>,
}

impl Shift {
    pub fn of(edits: &[fix::Edit]) -> Self {
        let mut sorted: Vec<&fix::Edit> = edits.iter().collect();
        sorted.sort_by_key(|e| e.range.start);
        let starts = sorted.iter().map(|e| e.range.start).collect();
        let furthest_end = sorted
            .iter()
            .scan(0, |furthest, e| {
                *furthest = e.range.end.max(*furthest);
                Some(*furthest)
            })
            .collect();
        let mut grown_before = vec![0isize];
        for e in &sorted {
            let last = grown_before[grown_before.len() - 1];
            grown_before.push(last + e.replacement.len() as isize - e.range.len() as isize);
        }
        Shift { starts, furthest_end, grown_before }
    }

    /// Where `offset` lands: past the edits that start before it, or at the
    /// start of the first of them (in order) that reaches beyond it.
    pub fn at(&self, offset: usize) -> usize {
        let before = self.starts.partition_point(|&s| s < offset);
        let reaching = self.furthest_end.partition_point(|&e| e <= offset);
        if reaching < before {
            return self.starts[reaching].saturating_add_signed(self.grown_before[reaching]);
        }
        offset.saturating_add_signed(self.grown_before[before])
    }

    /// [`Shift::at`] of both ends of `range`.
    pub fn range(&self, range: &Range<usize>) -> Range<usize> {
        self.at(range.start)..self.at(range.end)
    }
}

/// Plans remedies for a parsed source: [`fix::plan_source`], or a stand-in
/// in tests of the guards.
pub type Planner = fn(&str, &[syntax::ParsedPiece], &PlanOptions) -> Vec<Plan>;

/// Fixes `src` as far as `policy` allows.
pub fn fix_text(src: &str, policy: &FixPolicy) -> FixedText {
    fix_text_with(src, policy, fix::plan_source)
}

/// [`fix_text`] with the planner given.
pub fn fix_text_with(src: &str, policy: &FixPolicy, planner: Planner) -> FixedText {
    fix_parsed(src, vec![syntax::ParsedPiece::new(0, syntax::parse(src))], policy, planner)
}

/// Whether `pieces` is one parse of all of `text`.
fn is_whole(text: &str, pieces: &[syntax::ParsedPiece]) -> bool {
    matches!(pieces, [p] if p.offset == 0 && p.tree.root_node().end_byte() == text.len())
}

/// Fixes `src`, starting from `pieces` already parsed (the candidate regions
/// a check parsed, or the whole file). Every round's result is parsed whole
/// (incrementally when the text before it was) and must not hold more
/// syntax errors than `src`; that parse plans the next round.
pub fn fix_parsed(src: &str, first: Vec<syntax::ParsedPiece>, policy: &FixPolicy, planner: Planner) -> FixedText {
    let mut options = PlanOptions::for_source(src, policy.line_length, policy.augment_text, policy.rules.clone())
        .with_builders(policy.builders.clone())
        .with_read_reasons(policy.read_reasons.clone());
    options.keep_text = policy.keep_text.clone();
    options.not_results = policy.not_results.clone();
    let mut text = src.to_owned();
    // Planning looks at what it was first given: the candidate regions
    // stay candidate regions (parsed anew each round), a whole tree stays
    // whole; the guard's parse of the whole text is kept apart, to parse
    // the next round's result incrementally.
    let candidates_only = !is_whole(src, &first);
    let mut whole: Option<tree_sitter::Tree> = (!candidates_only).then(|| first[0].tree.clone());
    let mut pieces = first;
    // Syntax errors in `src`, counted when first needed: a result without
    // any error needs no comparison.
    let mut baseline: Option<usize> = is_whole(src, &pieces).then(|| error_count(&pieces[0].tree));
    let baseline_errors = |baseline: &mut Option<usize>| *baseline.get_or_insert_with(|| syntax_error_count(src));
    let mut applied: Vec<AppliedFix> = Vec::new();
    let mut rounds = Rounds::default();
    // Where each applied fix's dict starts, in the current text.
    let mut applied_at: Vec<usize> = Vec::new();
    // Dict ranges (in the current text) whose fix broke the syntax.
    let mut broken: Vec<Range<usize>> = Vec::new();
    let mut round = 0;
    // The expected fixes not applied yet (ranges in the current text), and
    // the reads rewritten with each origin.
    let mut expected = policy.expected.clone();
    let mut rewritten_reads = policy.rewritten_reads.clone();
    loop {
        let plans = planner(&text, &pieces, &options);
        let mut chosen = select(&plans, policy, &broken);
        if chosen.is_empty() || round == MAX_ROUNDS {
            let limit_hit = !chosen.is_empty();
            let broken_file = baseline.is_some_and(|errors| errors > 0);
            let leftovers = leftovers(&text, &plans, &broken, limit_hit, broken_file);
            let index = LineIndex::new(&text);
            for (fix, &at) in applied.iter_mut().zip(&applied_at) {
                fix.final_line = index.line_of(at) + 1;
                fix.final_offset = at;
            }
            return FixedText { text, applied, leftovers, missed: expected.len(), rounds };
        }
        round += 1;
        let parse_result = |chosen: &[usize]| match &whole {
            Some(tree) => apply_and_reparse(&text, tree, &plans, chosen),
            None => {
                let candidate = apply_plans(&text, &plans, chosen);
                let tree = syntax::parse(&candidate);
                (candidate, tree)
            }
        };
        let (mut candidate, mut candidate_tree) = parse_result(&chosen);
        let errors = error_count(&candidate_tree);
        if errors > 0 && errors > baseline_errors(&mut baseline) {
            // Find the culprits one by one; keep the rest.
            let limit = baseline_errors(&mut baseline);
            let (good, bad): (Vec<usize>, Vec<usize>) =
                chosen.iter().partition(|&&i| syntax_error_count(&apply_plans(&text, &plans, &[i])) <= limit);
            broken.extend(bad.iter().map(|&i| plans[i].range.clone()));
            chosen = good;
            (candidate, candidate_tree) = parse_result(&chosen);
            if chosen.is_empty() || error_count(&candidate_tree) > limit {
                broken.extend(chosen.iter().map(|&i| plans[i].range.clone()));
                continue;
            }
        }
        let index = LineIndex::new(&text);
        let inside = |a: &Range<usize>, b: &Range<usize>| b.start <= a.start && a.end <= b.end;
        for &i in &chosen {
            let r = &plans[i].range;
            expected.retain(|e| !(inside(e, r) || inside(r, e)));
            if let Remedy::Fix(f) = &plans[i].remedy {
                applied_at.push(plans[i].range.start);
                applied.push(AppliedFix {
                    line: index.line_of(plans[i].range.start) + 1,
                    final_line: 0,
                    final_offset: 0,
                    applicability: f.applicability,
                    moves: f.moves.clone(),
                    text: f.text.clone(),
                    repair: f.repair.clone(),
                    reads_left: f.unsafe_reasons.iter().filter(|why| options.is_read_reason(why)).cloned().collect(),
                    reads_rewritten: rewritten_reads
                        .iter()
                        .filter(|(o, _)| inside(o, r) || inside(r, o))
                        .map(|(_, note)| note.clone())
                        .collect(),
                });
            }
        }
        // Ranges of broken dicts shift with the edits; keep only those
        // before the first edit (a rare path: the bug report is what
        // matters, not perfect tracking).
        let first_edit = chosen.iter().map(|&i| plans[i].range.start).min().unwrap_or(usize::MAX);
        broken.retain(|r| r.end <= first_edit);
        let edits = chosen_edits(&plans, &chosen);
        rounds.push(&text, &edits);
        let shift = Shift::of(&edits);
        for at in &mut applied_at {
            *at = shift.at(*at);
        }
        // The origins of read keys move with the text.
        for (range, _) in options.read_reasons.iter_mut().chain(&mut rewritten_reads) {
            *range = shift.range(range);
        }
        for f in &mut options.not_results {
            f.dict = shift.range(&f.dict);
        }
        for range in expected.iter_mut().chain(&mut options.keep_text) {
            *range = shift.range(range);
        }
        text = candidate;
        if candidates_only {
            pieces = syntax::parse_pieces(&text, syntax::ParseScope::Candidates);
        } else {
            // Tool results only lie in the lexer's candidates.
            let focus = match syntax::lexer::candidate_regions(text.as_bytes()) {
                syntax::lexer::Candidates::Regions(regions) => Some(regions),
                syntax::lexer::Candidates::FullParse(_) => None,
            };
            pieces = vec![syntax::ParsedPiece { focus, ..syntax::ParsedPiece::new(0, candidate_tree.clone()) }];
        }
        whole = Some(candidate_tree);
    }
}

fn leftovers(text: &str, plans: &[Plan], broken: &[Range<usize>], limit_hit: bool, broken_file: bool) -> Vec<Leftover> {
    let index = LineIndex::new(text);
    let mut left: Vec<Leftover> = plans
        .iter()
        .map(|plan| {
            let why = match &plan.remedy {
                _ if broken.contains(&plan.range) && broken_file => LeftBecause::BrokenFile,
                _ if broken.contains(&plan.range) => LeftBecause::BrokeSyntax,
                Remedy::Manual(reason) => LeftBecause::Manual(reason.clone()),
                Remedy::Fix(f) if f.applicability == Applicability::Unsafe && !limit_hit => {
                    LeftBecause::Unsafe(f.unsafe_reasons.clone())
                }
                Remedy::Fix(_) => LeftBecause::RoundLimit,
            };
            Leftover { findings: plan.findings(text, &index), why }
        })
        .collect();
    // By position: a repair of a result's shape may stand before the
    // entries of the dict around it.
    left.sort_by_key(|l| l.findings.first().map(|f| (f.entry.start, f.code)));
    left
}

/// Held (shared) by every write in progress; an interrupt takes it
/// exclusively, so that it waits for those writes and lets no new one start.
static WRITES: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// On SIGINT or SIGTERM: wait for the writes in progress to finish (no
/// temporary file is left, no file half-written), print `message` and exit
/// with `status`. Files not yet written stay as they were.
pub fn exit_on_interrupt(status: i32, message: &'static str) -> Result<(), String> {
    ctrlc::set_handler(move || {
        let _no_more_writes = WRITES.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        eprintln!("\n{message}");
        std::process::exit(status);
    })
    .map_err(|e| e.to_string())
}

/// Writes `new` over `path` atomically: a temporary file in the same folder,
/// the original's permissions, then a rename. Refuses when the file on disk
/// is no longer `original` or is read-only.
pub fn write_atomic(path: &Path, original: &[u8], new: &[u8]) -> Result<(), String> {
    // Write through symlinks to their target, never replacing the link.
    let target: PathBuf = if path.symlink_metadata().map(|m| m.file_type().is_symlink()).unwrap_or(false) {
        std::fs::canonicalize(path).map_err(|e| format!("cannot resolve symlink: {e}"))?
    } else {
        path.to_path_buf()
    };
    let meta = std::fs::metadata(&target).map_err(|e| e.to_string())?;
    if meta.permissions().readonly() {
        return Err("the file is read-only; not written".into());
    }
    let current = std::fs::read(&target).map_err(|e| e.to_string())?;
    if current != original {
        return Err("the file changed on disk since it was read; not overwritten".into());
    }
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.toolshape-{}-{n}.tmp", std::process::id()));
    let _writing = WRITES.read().unwrap_or_else(|poisoned| poisoned.into_inner());
    let result = (|| {
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        file.write_all(new)?;
        file.set_permissions(meta.permissions())?;
        file.sync_all()?;
        std::fs::rename(&tmp, &target)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("could not write: {e}; the original is intact")
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    const POLICY: FixPolicy = FixPolicy::new(Rules::moves_only(), false, 88, AugmentText::Never);

    /// Where `offset` lands, edit by edit in the order of their starts.
    fn shifted_one_by_one(offset: usize, edits: &[fix::Edit]) -> usize {
        let mut sorted: Vec<&fix::Edit> = edits.iter().collect();
        sorted.sort_by_key(|e| e.range.start);
        let mut grown: isize = 0;
        for edit in sorted {
            if edit.range.end <= offset && edit.range.start < offset {
                grown += edit.replacement.len() as isize - edit.range.len() as isize;
            } else if edit.range.start < offset {
                return edit.range.start.saturating_add_signed(grown);
            }
        }
        offset.saturating_add_signed(grown)
    }

    /// A fixed pseudo-random sequence from `seed`: each call gives a number
    /// below the one it is given.
    fn xorshift(mut seed: u64) -> impl FnMut(usize) -> usize {
        move |below: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % below as u64) as usize
        }
    }

    #[test]
    fn a_shift_lands_every_offset_where_the_edits_one_by_one_do() {
        // Edits of every kind (insertions, deletions, replacements, ties
        // at one start, overlaps), from a fixed pseudo-random sequence.
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..500 {
            let edits: Vec<fix::Edit> = (0..next(8))
                .map(|_| {
                    let start = next(60);
                    let end = start + next(4) * usize::from(next(3) > 0);
                    fix::Edit { range: start..end, replacement: "x".repeat(next(5)) }
                })
                .collect();
            let shift = Shift::of(&edits);
            for offset in 0..70 {
                assert_eq!(shift.at(offset), shifted_one_by_one(offset, &edits), "{offset} under {edits:?}");
            }
        }
    }

    #[test]
    fn rounds_trace_every_place_no_edit_touched_back_to_its_source() {
        // Rounds of disjoint edits (insertions, deletions, replacements),
        // each in the text the rounds before it made; an offset of the
        // source that no edit's range holds lands, round after
        // round, where the rounds trace it back from (an offset whose byte
        // an edit replaced is gone).
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        for _ in 0..300 {
            let mut len = 60;
            let mut rounds = Rounds::default();
            // Each source offset, while no edit has swallowed it.
            let mut places: Vec<(usize, Option<usize>)> = (0..=len).map(|p| (p, Some(p))).collect();
            for _ in 0..1 + next(3) {
                let mut edits: Vec<fix::Edit> = Vec::new();
                let mut at = next(10);
                while at <= len && edits.len() < 6 {
                    let end = (at + next(5) * usize::from(next(3) > 0)).min(len);
                    edits.push(fix::Edit { range: at..end, replacement: "y".repeat(next(6)) });
                    at = end + 1 + next(12);
                }
                let shift = Shift::of(&edits);
                for (_, place) in &mut places {
                    *place = place.filter(|&q| !edits.iter().any(|e| e.range.contains(&q)));
                    *place = place.map(|q| shift.at(q));
                }
                rounds.push(&"x".repeat(len), &edits);
                len = (len as isize
                    + edits.iter().map(|e| e.replacement.len() as isize - e.range.len() as isize).sum::<isize>())
                    as usize;
            }
            for (source, place) in places {
                if let Some(q) = place {
                    assert_eq!(rounds.source_offset(q), source, "{q} under {rounds:?}");
                }
            }
        }
    }

    #[test]
    fn a_note_is_one_line_for_a_spread_written_over_several() {
        // A note heads a `fix --diff` patch as a `# toolshape:` comment: a
        // line break in it would leave code in the patch's preamble.
        let src = "def f(m):\n    return {\n        **{\n            'a': m,\n        },\n        'status': 'success',\n        'content': [{'text': 'ok'}],\n    }\n";
        let fixed = fix_text(src, &FixPolicy::new(Rules::moves_only(), true, 88, AugmentText::Never));
        let [fix] = fixed.applied.as_slice() else { panic!("one fix: {:?}", fixed.applied) };
        assert!(fix.moves[0].contains('\n'), "the spread is written over several lines: {:?}", fix.moves);
        assert!(!fix.note().contains('\n'), "{}", fix.note());
        assert!(fix.note().contains("moves **{ 'a': m, } -> json"), "{}", fix.note());
    }

    #[test]
    fn a_span_ending_where_text_was_deleted_ends_before_it() {
        // `"frames": 1, ` is deleted right after the span `x`; the span
        // `z` starts where it stood. The end of `x` stays before the
        // deleted text, the start of `z` after it, and an end past the
        // deletion shifts back by it.
        let src = "{x, \"frames\": 1, z}";
        let deleted = src.find("\"frames\"").unwrap()..src.find('z').unwrap();
        let mut rounds = Rounds::default();
        rounds.push(src, &[fix::Edit { range: deleted.clone(), replacement: String::new() }]);
        let fixed = "{x, z}";
        let x_end = fixed.find('x').unwrap() + 1;
        assert_eq!(rounds.source_end(x_end + 2), deleted.start);
        assert_eq!(rounds.source_offset(x_end + 2), deleted.end);
        assert_eq!(rounds.source_end(x_end), src.find('x').unwrap() + 1);
        assert_eq!(rounds.source_end(fixed.len()), src.len());
        // A replacement: an end where its new text begins stays before it.
        let mut rounds = Rounds::default();
        rounds.push(src, &[fix::Edit { range: deleted.clone(), replacement: "'moved', ".into() }]);
        assert_eq!(rounds.source_end(deleted.start), deleted.start);
        assert_eq!(rounds.source_offset(deleted.start), deleted.start);
    }

    #[test]
    fn a_place_inside_a_moved_value_is_traced_to_where_the_value_stood() {
        // The value of "meta" moves into the json block, and the result it
        // holds (left: its spread's fix is unsafe) with it: its place in the
        // fixed text leads back to its place before.
        let src = "r = {\n    'status': 'success',\n    'content': [{'text': 'ok'}],\n    'meta': {'status': 'success', 'content': [], **m},\n}\n";
        let fixed = fix_text(src, &FixPolicy::new(Rules::moves_only(), false, 88, AugmentText::Never));
        let inner = |text: &str| text.find("{'status': 'success', 'content': [], **m}").expect("the inner result");
        assert_ne!(inner(&fixed.text), inner(src), "{}", fixed.text);
        assert_eq!(fixed.rounds.source_offset(inner(&fixed.text)), inner(src), "{}", fixed.text);
    }

    /// A result nested in another's json block is data the outer result
    /// carries, so its fix is unsafe: these tests of rounds apply unsafe
    /// fixes too.
    const NESTED: FixPolicy = FixPolicy::new(Rules::moves_only(), true, 88, AugmentText::Never);

    #[test]
    fn nested_results_are_fixed_in_rounds() {
        let src = "x = {\n    'status': 'success',\n    'content': [{'json': {'status': 'success', 'content': [], 'inner': 1}}],\n    'outer': 2,\n}\n";
        let fixed = fix_text(src, &NESTED);
        assert_eq!(fixed.applied.len(), 2, "{}", fixed.text);
        assert!(fixed.leftovers.is_empty());
        assert_eq!(fix_text(&fixed.text, &NESTED).text, fixed.text);
    }

    #[test]
    fn each_fix_knows_its_line_in_the_fixed_text() {
        let src = "a = {'status': 'success', 'content': [], 'x': 1, 'y': 2, 'z': 3}\n\
                   b = {\n    'status': 'success',\n    'content': [{'json': {'status': 'success', 'content': [], 'inner': 1}}],\n    'outer': 2,\n}\n";
        let fixed = fix_text(src, &FixPolicy { line_length: 30, ..NESTED });
        assert_eq!(fixed.applied.len(), 3, "{}", fixed.text);
        let lines: Vec<&str> = fixed.text.lines().collect();
        for fix in &fixed.applied {
            let line = lines[fix.final_line - 1];
            assert!(line.contains('{'), "line {} of the fixed text is not a dict start: {line:?}", fix.final_line);
        }
        assert_eq!(fixed.applied[0].final_line, 1);
        let b = lines.iter().position(|l| l.starts_with("b = {")).unwrap() + 1;
        assert_eq!(fixed.applied[1].final_line, b, "{}", fixed.text);
        assert!(fixed.applied[1].line < b, "the line b had before `a` was exploded onto several lines");
        let inner = lines.iter().position(|l| l.contains("'inner'")).unwrap();
        assert!(fixed.applied[2].final_line <= inner + 1 && fixed.applied[2].final_line > b);
    }

    #[test]
    fn unsafe_fixes_wait_for_permission() {
        let src = "x = {'status': 'success', 'content': [], **extra}\n";
        let kept = fix_text(src, &POLICY);
        assert_eq!(kept.text, src);
        assert!(matches!(&kept.leftovers[0].why, LeftBecause::Unsafe(r) if r[0].contains("stands after \"status\"")));
        let fixed = fix_text(src, &FixPolicy { unsafe_fixes: true, ..POLICY });
        assert_eq!(fixed.text, "x = {'status': 'success', 'content': [{'json': {**extra}}]}\n");
    }

    /// A planner whose every fix also deletes the dict's closing brace.
    pub(crate) fn breaking_planner(src: &str, pieces: &[syntax::ParsedPiece], options: &PlanOptions) -> Vec<Plan> {
        let mut plans = fix::plan_source(src, pieces, options);
        for plan in &mut plans {
            if let Remedy::Fix(f) = &mut plan.remedy {
                let close = plan.range.end - 1;
                f.edits.retain(|e| e.range.end <= close);
                f.edits.push(fix::Edit { range: close..close + 1, replacement: String::new() });
            }
        }
        plans
    }

    #[test]
    fn fixes_that_break_syntax_are_dropped_and_reported() {
        let src =
            "a = {'status': 1, 'content': [], 'x': 1}\nb = {\n    'status': 1,\n    'content': [],\n    'y': 2,\n}\n";
        let fixed = fix_text_with(src, &POLICY, breaking_planner);
        assert_eq!(fixed.text, src);
        assert!(fixed.applied.is_empty());
        assert_eq!(fixed.leftovers.len(), 2);
        assert!(fixed.leftovers.iter().all(|l| l.why == LeftBecause::BrokeSyntax));
    }

    #[test]
    fn atomic_write_keeps_permissions_and_refuses_stale_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.py");
        std::fs::write(&path, "old").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o754)).unwrap();
        }
        write_atomic(&path, b"old", b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o754);
        }
        let err = write_atomic(&path, b"old", b"newer").unwrap_err();
        assert!(err.contains("changed on disk"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temp file left");
    }
}
