//! Checking: from source text to findings (pure), and from a list of files to
//! per-file outcomes, in parallel, delivered in file order as they complete.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc;

use rayon::prelude::*;

use crate::contract::Rules;
use crate::diagnostics::{Code, Finding};
use crate::discovery::FoundFile;
use crate::project::{ProjectPlan, Projects, ReadOptions};
use crate::semantic::FileContext;
use crate::semantic::project::{BuilderSpec, Facts, Known, SharedText, round_zero_facts_in};
use crate::source;
use crate::syntax::{self, ParseScope};
use crate::{contract, fix, rules};

/// How to check, the same for every file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckOptions {
    pub scope: ParseScope,
    /// Also report suppression comments that silence nothing ([`Code::UnusedIgnore`]).
    pub report_unused_ignores: bool,
}

impl CheckOptions {
    pub fn new(scope: ParseScope) -> Self {
        CheckOptions { scope, report_unused_ignores: false }
    }
}

/// Checks one source text; findings come sorted by position, each saying
/// whether `toolshape fix` can repair it.
pub fn check_source(src: &str, options: &CheckOptions, rules: &Rules) -> Vec<Finding> {
    let mut findings = check_with_facts(src, options, rules, false, Vec::new(), Vec::new()).0;
    add_unused_ignores(&mut findings, src, options, rules, |off, whole| {
        check_with_facts(src, whole, off, false, Vec::new(), Vec::new()).0
    });
    findings
}

/// Adds TS100's findings (with `--report-unused-ignores`) to the final
/// `findings` of `src`: the suppression comments that silence none of the
/// findings `unsuppressed` gives under the rules and options it is handed
/// (`rules` with every comment read as absent, the file parsed whole).
fn add_unused_ignores(
    findings: &mut Vec<Finding>,
    src: &str,
    options: &CheckOptions,
    rules: &Rules,
    unsuppressed: impl FnOnce(&Rules, &CheckOptions) -> Vec<Finding>,
) {
    if !(options.report_unused_ignores && rules.enabled(Code::UnusedIgnore)) {
        return;
    }
    // The file parsed whole: a comment that silences what the prefilter's
    // blind spot hides (a key spelled with escapes) is still in use.
    let whole = CheckOptions { scope: ParseScope::WholeFile, ..*options };
    let unused = rules::unused_suppressions(src, || unsuppressed(&rules.ignoring_suppressions(), &whole));
    if !unused.is_empty() {
        findings.extend(unused);
        findings.sort_by_key(|f| (f.entry.start, f.code));
    }
}

/// [`add_unused_ignores`] for a file of `projects` (`path`, the checked
/// file `j` when it is one), whose findings of every code are final: its
/// own, its calls of builders (TS003) and its TS005 findings count.
fn add_project_unused_ignores(
    findings: &mut Vec<Finding>,
    (path, text): (&Path, &str),
    projects: &Projects,
    j: Option<usize>,
    options: &CheckOptions,
    rules: &Rules,
) {
    add_unused_ignores(findings, text, options, rules, |off, whole| {
        let mut all = check_with_facts(text, whole, off, false, projects.builder_specs(path), Vec::new()).0;
        all.extend(projects.builder_call_findings(path, text, off));
        all.extend(j.map_or(&[][..], |j| projects.silenced_not_results(j)).iter().cloned());
        all
    });
}

/// [`check_source`], and with `facts` the facts a result builder needs
/// (one whole-file parse serves both, when either needs it); `builders`
/// are the result builders the file defines and `read_reasons` the
/// origins whose moved keys the project reads.
pub fn check_with_facts(
    src: &str,
    options: &CheckOptions,
    rules: &Rules,
    facts: bool,
    builders: Vec<BuilderSpec>,
    read_reasons: Vec<(std::ops::Range<usize>, String)>,
) -> (Vec<Finding>, Option<Facts>) {
    let (pieces, plain) = candidate_pieces(src, options.scope, rules);
    // The questions about the file see it as they would with every display
    // parsed: its view keeps what it would keep (a later pass may reuse it).
    let file = FileContext::for_pieces_and(src, &pieces, &plain);
    let mut findings = Vec::new();
    if !pieces.is_empty() {
        findings = planned_findings(src, &pieces, rules, &file, builders, read_reasons);
    }
    let facts = if facts && !pieces.is_empty() { round_zero_facts_in(&file, src, &pieces) } else { None };
    (findings, facts)
}

/// The candidate displays of `src` parsed as `scope` says, but for the
/// results plainly within the contract of `rules`, which yield nothing
/// ([`syntax::plain`]): those are left unparsed, and their offsets given.
fn candidate_pieces(src: &str, scope: ParseScope, rules: &Rules) -> (Vec<syntax::ParsedPiece>, Vec<usize>) {
    let (statuses, block_types) = (rules.statuses(), rules.block_types());
    let contract =
        syntax::plain::Contract { statuses: &statuses, block_types: &block_types, not_strings: &rules::NOT_STRINGS };
    syntax::parse_pieces_but(src, scope, |at, display| {
        syntax::plain::unbound_and_within_contract(src, at, display, contract)
    })
}

/// The findings of the parsed `pieces` that a fix can repair (TS001,
/// TS002, TS004), each with its fix's verdict, sorted by position.
/// `builders` are the result builders the file defines.
fn planned_findings(
    src: &str,
    pieces: &[syntax::ParsedPiece],
    rules: &Rules,
    file: &FileContext<'_>,
    builders: Vec<BuilderSpec>,
    read_reasons: Vec<(std::ops::Range<usize>, String)>,
) -> Vec<Finding> {
    if !is_violating(src, pieces, rules, file) {
        return Vec::new();
    }
    let index = file.line_index();
    // Only each fix's verdict is reported: no layout, no edits.
    let options =
        fix::PlanOptions::verdicts_only(rules.clone()).with_builders(builders).with_read_reasons(read_reasons);
    let mut findings: Vec<Finding> =
        fix::plan_source_in(src, pieces, &options, file).iter().flat_map(|plan| plan.findings(src, index)).collect();
    findings.sort_by_key(|f| (f.entry.start, f.code));
    findings
}

/// Whether the parsed `pieces` of `src` hold a violation a fix may repair
/// (a shaped dict breaking the contract, or a later write into one).
fn is_violating(src: &str, pieces: &[syntax::ParsedPiece], rules: &Rules, file: &FileContext<'_>) -> bool {
    let mut violating = false;
    contract::for_each_tool_result(src, pieces, rules, |node, piece, dict| {
        violating = violating
            || dict.is_violating()
            || !rules::shape_findings(node, &dict, (&src[piece.offset..], piece.offset), src, rules, file).is_empty();
    });
    violating || !rules::later_writes(src, pieces, rules, file).is_empty()
}

/// The findings of the parsed `pieces` of `src` that a fix can repair,
/// judged as if the file defined no builder and nothing read its keys.
pub fn findings_in(src: &str, pieces: &[syntax::ParsedPiece], rules: &Rules) -> Vec<Finding> {
    planned_findings(src, pieces, rules, &FileContext::for_pieces(src, pieces), Vec::new(), Vec::new())
}

/// The parsed pieces of `src` if it holds any contract violation (no
/// findings are built), so that fixing can start from them.
pub fn violating_pieces(src: &str, scope: ParseScope, rules: &Rules) -> Option<Vec<syntax::ParsedPiece>> {
    let (pieces, plain) = candidate_pieces(src, scope, rules);
    is_violating(src, &pieces, rules, &FileContext::for_pieces_and(src, &pieces, &plain)).then_some(pieces)
}

/// [`violating_pieces`], and the facts a result builder needs (one parse
/// serves both).
pub fn violating_pieces_and_facts(
    src: &str,
    scope: ParseScope,
    rules: &Rules,
) -> (Option<Vec<syntax::ParsedPiece>>, Option<Facts>) {
    let (pieces, plain) = candidate_pieces(src, scope, rules);
    if pieces.is_empty() {
        return (None, None);
    }
    let file = FileContext::for_pieces_and(src, &pieces, &plain);
    let facts = round_zero_facts_in(&file, src, &pieces);
    (is_violating(src, &pieces, rules, &file).then_some(pieces), facts)
}

/// What checking one file gave.
#[derive(Debug)]
pub struct FileOutcome {
    pub path: PathBuf,
    pub result: Result<Vec<Finding>, String>,
    /// What the user should know that is neither a finding nor an error
    /// (a file left as it is for its Python 2 syntax).
    pub notes: Vec<String>,
}

/// The 1-based line of the first Python 2 construct in `text`, if any
/// (`docs/rules.md`, "Legacy Python 2 files"): such a file gets no finding
/// and no fix. A byte search first; a parse only when it may hold one.
pub fn legacy_line(text: &str) -> Option<usize> {
    if !syntax::legacy::may_hold(text.as_bytes()) {
        return None;
    }
    let tree = syntax::parse(text);
    syntax::legacy::first_legacy_node(tree.root_node(), text).map(|n| n.start_position().row + 1)
}

/// The note for a file left as it is for its Python 2 syntax at `line`.
pub fn legacy_note(line: usize) -> String {
    format!("legacy Python 2 syntax at line {line}: left as it is")
}

/// Drops the findings of a legacy Python 2 file (`text`), with a note.
fn without_legacy(findings: &mut Vec<Finding>, text: &str, notes: &mut Vec<String>) {
    if !findings.is_empty() {
        drop_if_legacy(findings, legacy_line(text), notes);
    }
}

/// Drops `findings`, with a note, when the file is legacy Python 2 from
/// `line` on ([`legacy_line`]).
fn drop_if_legacy(findings: &mut Vec<Finding>, line: Option<usize>, notes: &mut Vec<String>) {
    if let Some(line) = line {
        findings.clear();
        notes.push(legacy_note(line));
    }
}

/// Checked files a batch of projects holds at least (see
/// [`ProjectPlan::batches`]): about as many small tool modules as the parse
/// memo's budget keeps the trees of, so that its passes share them.
const BATCH_FILES: usize = 500;

/// Checks `files` in parallel, each under its own settings, in the phases
/// of the project pass (see [`check_batch`]), their projects in batches of
/// [`BATCH_FILES`] files or more, one after the other, and the projects of
/// a batch in as many lanes as there are threads, side by side: every
/// file's outcome reaches `sink` in file order as soon as it and all before
/// it are done (a batch of several projects, once all its lanes are).
pub fn check_files(
    files: Vec<FoundFile>,
    options: &CheckOptions,
    plan: ProjectPlan,
    walk: impl Fn(ProjectPlan) -> ProjectPlan + Sync,
    sink: impl FnMut(FileOutcome),
) {
    check_in_batches(files, options, plan, walk, (BATCH_FILES, rayon::current_num_threads()), sink)
}

/// [`check_files`] in batches of `batch_files` files or more, the projects
/// of each batch in at most `lanes` lanes checked side by side
/// ([`ProjectPlan::lanes`]).
fn check_in_batches(
    files: Vec<FoundFile>,
    options: &CheckOptions,
    plan: ProjectPlan,
    walk: impl Fn(ProjectPlan) -> ProjectPlan + Sync,
    (batch_files, lanes): (usize, usize),
    mut sink: impl FnMut(FileOutcome),
) {
    let mut batches = plan.batches(batch_files);
    if batches.len() == 1 {
        let (plan, _) = batches.pop().expect("one batch");
        return check_batch_in_lanes(files, options, plan.lanes(lanes), &walk, sink);
    }
    let mut files: Vec<Option<FoundFile>> = files.into_iter().map(Some).collect();
    let mut done: Vec<Option<FileOutcome>> = (0..files.len()).map(|_| None).collect();
    let mut next = 0;
    for (plan, members) in batches {
        let batch: Vec<FoundFile> = members.iter().map(|&j| files[j].take().expect("a file is in one batch")).collect();
        let mut arrived = members.iter();
        check_batch_in_lanes(batch, options, plan.lanes(lanes), &walk, |outcome| {
            let j = *arrived.next().expect("one outcome per file of the batch");
            done[j] = Some(outcome);
            while let Some(outcome) = done.get_mut(next).and_then(Option::take) {
                sink(outcome);
                next += 1;
            }
        });
        // The next batch asks for other files' trees.
        syntax::forget_parses();
    }
}

/// Checks the files of one batch, its projects in `lanes`: one lane is
/// [`check_batch`] itself, its outcomes streamed; several are checked side
/// by side ([`check_lanes`]), their outcomes handed over in file order
/// once all are done.
fn check_batch_in_lanes(
    files: Vec<FoundFile>,
    options: &CheckOptions,
    mut lanes: Vec<(ProjectPlan, Vec<usize>)>,
    walk: &(impl Fn(ProjectPlan) -> ProjectPlan + Sync),
    mut sink: impl FnMut(FileOutcome),
) {
    if lanes.len() == 1 {
        let (plan, _) = lanes.pop().expect("one lane");
        return check_batch(files, options, plan, walk, sink);
    }
    for outcome in check_lanes(files, lanes, options, walk) {
        sink(outcome);
    }
}

/// Checks `files` as [`check_batch`] does, their projects split in `lanes`
/// ([`ProjectPlan::lanes`]: each with the indexes of its files in `files`)
/// checked side by side; returns the outcomes in the order of `files`,
/// once every lane is done.
///
/// Each lane is a job of the rayon pool, its passes' parallel work nested
/// in it (a lane on a thread of its own hands each of its many small
/// parallel steps to the pool and waits: a dense check took 14% longer so).
/// No lane may then wait on the pool from outside it: see
/// [`par_map_ordered`].
fn check_lanes(
    files: Vec<FoundFile>,
    lanes: Vec<(ProjectPlan, Vec<usize>)>,
    options: &CheckOptions,
    walk: &(impl Fn(ProjectPlan) -> ProjectPlan + Sync),
) -> Vec<FileOutcome> {
    let mut files: Vec<Option<FoundFile>> = files.into_iter().map(Some).collect();
    let work: Vec<(ProjectPlan, Vec<usize>, Vec<FoundFile>)> = lanes
        .into_iter()
        .map(|(plan, of_lane)| {
            let lane = of_lane.iter().map(|&j| files[j].take().expect("a file is in one lane")).collect();
            (plan, of_lane, lane)
        })
        .collect();
    let mut outcomes: Vec<(usize, FileOutcome)> = work
        .into_par_iter()
        .map(|(plan, of_lane, lane)| {
            let mut got = Vec::with_capacity(of_lane.len());
            check_batch(lane, options, plan, walk, |outcome| got.push(outcome));
            of_lane.into_iter().zip(got).collect::<Vec<_>>()
        })
        .flatten()
        .collect();
    outcomes.sort_by_key(|(j, _)| *j);
    outcomes.into_iter().map(|(_, outcome)| outcome).collect()
}

/// A file's findings from the first phase, and whether it is legacy
/// Python 2 ([`legacy_line`]; asked only when it has findings).
type Early = (Vec<Finding>, Option<Option<usize>>);

/// A checked file to judge once TS005 is known: its index, its first
/// phase's outcome and its TS005 findings (when they did not wait for the
/// reads pass).
type ToJudge = (usize, ((FoundFile, Result<Early, String>), Vec<Finding>));

/// Checks the files of one batch of projects, in the phases of the
/// project pass: each file is read once, for its own findings, the facts a
/// result builder needs and the modules it imports; then the projects'
/// builders are resolved; then the calls of builders (TS003) are added in
/// the files that may hold one, and every file's outcome reaches `sink` in
/// file order as soon as it and all before it are done. Only when some
/// builder exists is a file read again (for its calls).
fn check_batch(
    files: Vec<FoundFile>,
    options: &CheckOptions,
    plan: ProjectPlan,
    walk: &(impl Fn(ProjectPlan) -> ProjectPlan + Sync),
    mut sink: impl FnMut(FileOutcome),
) {
    let mut started = std::time::Instant::now();
    let mut phase =
        |name| crate::stats::phase(name, std::mem::replace(&mut started, std::time::Instant::now()).elapsed());
    let (mut projects, early) = first_phase(&files, plan, walk, |file, _, text| {
        let (findings, facts) = check_with_facts(text, options, &file.settings.rules(), true, Vec::new(), Vec::new());
        // Whether a file with findings is legacy Python 2 (its findings
        // then go) is asked here, with its text in hand and both cores
        // at work, not when it is judged.
        let legacy = (!findings.is_empty()).then(|| legacy_line(text));
        ((findings, legacy), facts)
    });
    phase("files");
    // Reads of moved keys need every file's findings first; without any
    // key to move (or builder call to find), outcomes stream.
    let moves_keys = early.iter().flatten().flat_map(|(f, _)| f).any(|f| f.moved_key().is_some());
    // Tools that return what is not a tool result (TS005), project-wide:
    // the reads of the keys their fixes move are searched with the others,
    // in one reads pass, and they join their files once it is done.
    let not_results = if moves_keys {
        let found: Vec<Option<&[Finding]>> = early.iter().map(|r| r.as_ref().ok().map(|(f, _)| f.as_slice())).collect();
        let found = projects.find_not_results_and_possible_reads(options.scope, |j| files[j].settings.rules(), &found);
        phase("TS005, possible reads");
        found
    } else {
        let found = projects.find_not_results(options.scope, |j| files[j].settings.rules());
        phase("TS005");
        found
    };
    let reads = moves_keys || projects.any_builders() || not_results.moves_keys();
    let (not_results, deferred) = if not_results.moves_keys() {
        (vec![Vec::new(); files.len()], Some(not_results))
    } else {
        (projects.finish_not_results(not_results, Vec::new()), None)
    };
    let items: Vec<_> = files.into_iter().zip(early).zip(not_results).enumerate().collect();
    let judge = |(j, ((file, result), not_results)): ToJudge| {
        let mut notes = Vec::new();
        let result = result.map(|(mut findings, legacy)| {
            // (A file defining builders is judged again from its text:
            // TS005's findings join after.)
            if projects.any_builders() {
                let rules = file.settings.rules();
                let _ = source::with_text(&file.path, |text| {
                    add_project_findings(&mut findings, &projects, &file.path, text, options, &rules)
                });
            }
            if !not_results.is_empty() {
                findings.extend(not_results);
                findings.sort_by_key(|f| (f.entry.start, f.code));
            }
            if !findings.is_empty() {
                match legacy {
                    Some(line) => drop_if_legacy(&mut findings, line, &mut notes),
                    None => {
                        let _ = source::with_text(&file.path, |text| without_legacy(&mut findings, text, &mut notes));
                    }
                }
            }
            // With reads to attach, the findings are final once judged.
            if !reads {
                finish_file(&mut findings, &mut notes, &projects, (j, &file), options, false);
            }
            findings
        });
        let path = file.path.clone();
        (file, FileOutcome { path, result, notes })
    };
    // Without reads to attach, outcomes stream in file order; with them,
    // they wait for the reads pass.
    let mut held: Vec<(FoundFile, FileOutcome)> = if reads {
        items.into_par_iter().with_min_len(CHUNK).map(judge).collect()
    } else {
        par_map_ordered(items, judge, |(_, outcome)| sink(outcome));
        Vec::new()
    };
    phase("builder calls");
    if !reads {
        return;
    }
    let mut findings: Vec<Vec<Finding>> =
        held.iter_mut().map(|(_, o)| o.result.as_mut().map(std::mem::take).unwrap_or_default()).collect();
    // Fixes are judged as `fix` would apply them, without `--unsafe-fixes`
    // unless a configuration says so.
    let read_options = ReadOptions {
        unsafe_fixes: held.iter().map(|(f, _)| f.settings.fix_policy(Default::default()).unsafe_fixes).collect(),
        rewrite: Ok(()),
    };
    // TS005's findings, when they waited for this pass.
    let not_results = match deferred {
        Some(found) => {
            let sites = projects.attach_reads_with(&mut findings, &read_options, found.moved());
            projects.finish_not_results(found, sites)
        }
        None => {
            projects.attach_reads(&mut findings, &read_options);
            Vec::new()
        }
    };
    phase("reads");
    // Reads make fixes unsafe: the files they touch are judged again.
    let projects = &projects;
    let judged: Vec<(Vec<Finding>, Vec<String>)> = held
        .par_iter()
        .zip(findings)
        .enumerate()
        .map(|(j, ((file, outcome), found))| {
            let mut found = judge_with_reads(found, projects, j, file, options);
            let mut notes = outcome.notes.clone();
            let joining = not_results.get(j).filter(|n| !n.is_empty() && outcome.result.is_ok());
            if let Some(joining) = joining {
                found.extend(joining.iter().cloned());
                found.sort_by_key(|f| (f.entry.start, f.code));
            }
            finish_file(&mut found, &mut notes, projects, (j, file), options, joining.is_some());
            (found, notes)
        })
        .collect();
    phase("judged with reads");
    for ((_, mut outcome), (found, notes)) in held.into_iter().zip(judged) {
        if let Ok(f) = &mut outcome.result {
            *f = found;
            outcome.notes = notes;
        }
        sink(outcome);
    }
}

/// The last step of checked file `j` (`file`), once its other findings
/// are final: TS100's findings, which ask what every other code found;
/// then a Python 2 file gets none (`notes` says so), looked at again when
/// findings `joined` since the first look. A file left as it is already
/// (a note) stays so.
fn finish_file(
    findings: &mut Vec<Finding>,
    notes: &mut Vec<String>,
    projects: &Projects,
    (j, file): (usize, &FoundFile),
    options: &CheckOptions,
    joined: bool,
) {
    if !notes.is_empty() || !(options.report_unused_ignores || joined) {
        return;
    }
    let rules = file.settings.rules();
    let _ = source::with_text(&file.path, |text| {
        add_project_unused_ignores(findings, (&file.path, text), projects, Some(j), options, &rules);
        without_legacy(findings, text, notes);
    });
}

/// The project's reads of the keys that the fixes of `files` move, as
/// `fix` needs them before it writes: each file's findings as its first
/// look judged them (`early`), with its calls of builders (read again,
/// only when the project has builders).
pub fn attach_fix_reads(
    files: &[FoundFile],
    early: &[Result<crate::fixer::Seen, String>],
    projects: &mut Projects,
    options: &crate::fixer::FixOptions,
) {
    let own =
        |seen: &Result<crate::fixer::Seen, String>| seen.as_ref().map(|s| s.findings().to_vec()).unwrap_or_default();
    if !projects.any_builders() && early.iter().all(|s| own(s).iter().all(|f| f.moved_key().is_none())) {
        return;
    }
    let read_options = ReadOptions {
        unsafe_fixes: files.iter().map(|f| f.settings.fix_policy(options.overrides).unsafe_fixes).collect(),
        rewrite: if options.rewrite_reads {
            Ok(())
        } else {
            Err("reads are not rewritten in this run (--no-rewrite-reads, or the review)")
        },
    };
    let mut findings: Vec<Vec<Finding>> = files
        .par_iter()
        .zip(early)
        .map(|(file, seen)| {
            let mut found = own(seen);
            if projects.any_builders() {
                let rules = file.settings.rules();
                if let Ok(calls) =
                    source::with_text(&file.path, |text| projects.builder_call_findings(&file.path, text, &rules))
                {
                    found.extend(calls);
                }
            }
            found
        })
        .collect();
    projects.attach_reads(&mut findings, &read_options);
}

/// The findings of the checked file `j` (`file`) judged again once the
/// project's reads are known: fixes whose moved keys are read, in the
/// file or through a builder it defines or calls, become unsafe. The
/// reads attached to `found` stay with their findings.
fn judge_with_reads(
    found: Vec<Finding>,
    projects: &Projects,
    j: usize,
    file: &FoundFile,
    options: &CheckOptions,
) -> Vec<Finding> {
    apart_from_not_results(found, |own| (judge_own_with_reads(own, projects, j, file, options), ())).0
}

/// `judge` run on the findings of `found` but TS005's, which come from the
/// project pass already judged with their reads; those are put back in
/// order after.
fn apart_from_not_results<T>(
    found: Vec<Finding>,
    judge: impl FnOnce(Vec<Finding>) -> (Vec<Finding>, T),
) -> (Vec<Finding>, T) {
    let (not_results, own): (Vec<Finding>, Vec<Finding>) = found.into_iter().partition(|f| f.code == Code::NotAResult);
    let (mut judged, more) = judge(own);
    if !not_results.is_empty() {
        judged.extend(not_results);
        judged.sort_by_key(|f| (f.entry.start, f.code));
    }
    (judged, more)
}

/// [`judge_with_reads`] of the findings a check of the file's own text
/// gives (every code but TS005).
fn judge_own_with_reads(
    found: Vec<Finding>,
    projects: &Projects,
    j: usize,
    file: &FoundFile,
    options: &CheckOptions,
) -> Vec<Finding> {
    let reasons = projects.read_reasons(j);
    let builders = projects.builder_specs(&file.path);
    let calls = found.iter().any(|f| f.code == Code::BuilderCall);
    if reasons.is_empty() && builders.is_empty() && !calls {
        return found;
    }
    let rules = file.settings.rules();
    let mut found = Some(found);
    let again = source::with_text(&file.path, |text| {
        let found = found.take().unwrap_or_default();
        judged_again(found, (&file.path, text), projects, options, &rules, (builders, reasons))
    });
    again.unwrap_or_else(|_| found.unwrap_or_default())
}

/// The findings of `text` (the checked file `path`) judged again with
/// `builders` (the result builders it defines) and `reasons` (its origins
/// whose moved keys the project reads), with its calls of builders; each
/// keeps the reads it had in `found`. `found` stays as it was when the
/// count differs (the file changed under the run).
fn judged_again(
    found: Vec<Finding>,
    (path, text): (&Path, &str),
    projects: &Projects,
    options: &CheckOptions,
    rules: &Rules,
    (builders, reasons): (Vec<BuilderSpec>, Vec<(std::ops::Range<usize>, String)>),
) -> Vec<Finding> {
    let mut again = check_with_facts(text, options, rules, false, builders, reasons).0;
    again.extend(projects.builder_call_findings(path, text, rules));
    again.sort_by_key(|f| (f.entry.start, f.code));
    if again.len() != found.len() {
        return found;
    }
    for (new, old) in again.iter_mut().zip(found) {
        if (new.code, &new.entry) == (old.code, &old.entry) {
            new.reads = old.reads;
        }
    }
    again
}

/// The reads of the keys that the fixes of stdin's source (`text`, under
/// the name `name`: the one checked file of `projects`) move, attached to
/// its `findings`, which are judged again: reads elsewhere cannot be
/// rewritten from stdin, so a fix whose keys are read is unsafe. Returns
/// the findings and the read reasons (for `fix`).
pub fn stdin_reads(
    findings: Vec<Finding>,
    projects: &mut Projects,
    (name, text): (&Path, &str),
    options: &CheckOptions,
    (rules, unsafe_fixes): (&Rules, bool),
) -> (Vec<Finding>, Vec<(std::ops::Range<usize>, String)>) {
    apart_from_not_results(findings, |own| stdin_own_reads(own, projects, (name, text), options, (rules, unsafe_fixes)))
}

/// Adds TS100's findings to the final `findings` of stdin's source
/// (`text`, under the name `name`: the one checked file of `projects`).
pub fn stdin_unused_ignores(
    findings: &mut Vec<Finding>,
    (name, text): (&Path, &str),
    projects: &Projects,
    options: &CheckOptions,
    rules: &Rules,
) {
    add_project_unused_ignores(findings, (name, text), projects, Some(0), options, rules);
}

/// The TS005 findings of stdin's source, the one checked file of
/// `projects` (indexed with its text in place of the file's).
pub fn stdin_not_results(projects: &mut Projects, scope: ParseScope, rules: &Rules) -> Vec<Finding> {
    projects.not_a_result_findings(scope, |_| rules.clone()).into_iter().next().unwrap_or_default()
}

/// [`stdin_reads`] of the findings a check of stdin's own text gives
/// (every code but TS005).
fn stdin_own_reads(
    mut findings: Vec<Finding>,
    projects: &mut Projects,
    (name, text): (&Path, &str),
    options: &CheckOptions,
    (rules, unsafe_fixes): (&Rules, bool),
) -> (Vec<Finding>, Vec<(std::ops::Range<usize>, String)>) {
    if findings.iter().all(|f| f.moved_key().is_none()) {
        return (findings, Vec::new());
    }
    let read_options = ReadOptions {
        unsafe_fixes: vec![unsafe_fixes],
        rewrite: Err("reads in other files cannot be rewritten from stdin"),
    };
    let mut all = vec![std::mem::take(&mut findings)];
    projects.attach_reads(&mut all, &read_options);
    let mut found = all.pop().unwrap_or_default();
    found.sort_by_key(|f| (f.entry.start, f.code));
    let reasons = projects.read_reasons(0);
    if reasons.is_empty() {
        return (found, reasons);
    }
    let builders = projects.builder_specs(name);
    (judged_again(found, (name, text), projects, options, rules, (builders, reasons.clone())), reasons)
}

/// The first phase of a run over `files`, in parallel: `learn` reads each
/// file once (its bytes and text) for what the run needs of it and the
/// facts a result builder needs, while the projects' roots are walked
/// beside it (`walk`); then the projects are indexed with those facts and
/// the modules each file imports. Returns the index and, per file, what
/// `learn` gave or why the file could not be read.
pub fn first_phase<T: Send>(
    files: &[FoundFile],
    plan: ProjectPlan,
    walk: impl FnOnce(ProjectPlan) -> ProjectPlan + Send,
    learn: impl Fn(&FoundFile, &[u8], &str) -> (T, Option<Facts>) + Sync,
) -> (Projects, Vec<Result<T, String>>) {
    // Imports decide which files outside the paths are read, if any are.
    let imports = plan.has_outside_files();
    let seeded = if files.len() <= source::TextCache::SEEDED_FILES { source::TextCache::SEEDED } else { 0 };
    let room = std::sync::atomic::AtomicUsize::new(seeded);
    let read_all = || -> Vec<Result<(T, Known), String>> {
        files
            .par_iter()
            .with_min_len(CHUNK)
            .map(|file| {
                source::with_bytes(&file.path, |bytes| {
                    let text = source::text_of(bytes)?;
                    // A text kept for the project passes is kept first, so
                    // that the trees and layouts made from it hold it, not
                    // a copy.
                    let kept = room
                        .fetch_update(Relaxed, Relaxed, |room| room.checked_sub(text.len()))
                        .is_ok()
                        .then(|| SharedText::from(&*text));
                    if let Some(kept) = &kept {
                        syntax::share_text(kept);
                    }
                    let text = kept.as_deref().unwrap_or(&text);
                    let imports = if imports { syntax::imported_modules(text) } else { Vec::new() };
                    let (learned, facts) = learn(file, bytes, text);
                    let decorators = syntax::decorator_names(text);
                    Ok((learned, Known { facts, imports, decorators, text: kept }))
                })?
            })
            .collect()
    };
    // The walk runs beside the reads: on a thread of its own, or, on a
    // thread of the rayon pool (a lane of `check_lanes`), as a job of the
    // pool. A worker waiting for a thread of its own would hold one of the
    // threads that thread's parallel walk needs (two lanes waiting so, on
    // two workers, would wait for ever).
    let (plan, early) = if rayon::current_thread_index().is_some() {
        rayon::join(|| walk(plan), read_all)
    } else {
        std::thread::scope(|s| {
            let plan = s.spawn(move || walk(plan));
            let early = read_all();
            (plan.join().expect("finding the projects does not panic"), early)
        })
    };
    let mut known = Vec::with_capacity(files.len());
    let mut learned = Vec::with_capacity(files.len());
    for result in early {
        match result {
            Ok((t, k)) => {
                known.push(Some(k));
                learned.push(Ok(t));
            }
            Err(e) => {
                known.push(None);
                learned.push(Err(e));
            }
        }
    }
    let rules = files.iter().map(|f| f.settings.rules()).collect();
    (plan.index(known, rules), learned)
}

/// Adds the findings of `text` (the file `path`) that need its project:
/// calls of result builders (TS003); and, in a file that defines builders,
/// its own findings judged again with what the calls of its builders allow.
pub fn add_project_findings(
    findings: &mut Vec<Finding>,
    projects: &Projects,
    path: &Path,
    text: &str,
    options: &CheckOptions,
    rules: &Rules,
) {
    let builders = projects.builder_specs(path);
    if !builders.is_empty() {
        *findings = check_with_facts(text, options, rules, false, builders, Vec::new()).0;
    }
    let calls = projects.builder_call_findings(path, text, rules);
    if !calls.is_empty() {
        findings.extend(calls);
        findings.sort_by_key(|f| (f.entry.start, f.code));
    }
}

/// Items handed to a worker at a time: large enough that threads rarely
/// wait on each other, small enough to balance the load and keep output
/// streaming.
const CHUNK: usize = 8;

/// Runs `work` on every item in parallel and hands each result to `sink` in
/// the order of `items`, as soon as it and all before it are done, so output
/// streams without being reordered by thread timing. Called on a thread of
/// the rayon pool (a lane of [`check_lanes`]), it hands them over once all
/// are done: a worker waiting on a channel for the pool's work would hold
/// one of the threads that work needs (two lanes waiting so, on two
/// workers, would wait for ever).
pub fn par_map_ordered<I: Send + Sync, T: Send>(items: Vec<I>, work: impl Fn(I) -> T + Sync, mut sink: impl FnMut(T)) {
    if rayon::current_thread_index().is_some() {
        let results: Vec<T> = items.into_par_iter().with_min_len(CHUNK).map(&work).collect();
        results.into_iter().for_each(sink);
        return;
    }
    let (tx, rx) = mpsc::channel::<(usize, Vec<T>)>();
    let mut chunks: Vec<Vec<I>> = Vec::new();
    let mut items = items.into_iter().peekable();
    while items.peek().is_some() {
        chunks.push(items.by_ref().take(CHUNK).collect());
    }
    std::thread::scope(|s| {
        let work = &work;
        s.spawn(move || {
            chunks.into_par_iter().enumerate().for_each_with(tx, |tx, (i, chunk)| {
                // The receiver lives until every sender is gone.
                let _ = tx.send((i, chunk.into_iter().map(work).collect()));
            });
        });
        let mut pending = BTreeMap::new();
        let mut next = 0;
        for (i, results) in rx {
            pending.insert(i, results);
            while let Some(results) = pending.remove(&next) {
                results.into_iter().for_each(&mut sink);
                next += 1;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Copies the folder `from` into `to`.
    fn copy_folder(from: &Path, to: &Path) {
        for entry in walkdir::WalkDir::new(from) {
            let entry = entry.unwrap();
            let target = to.join(entry.path().strip_prefix(from).unwrap());
            if entry.file_type().is_dir() {
                std::fs::create_dir_all(&target).unwrap();
            } else {
                std::fs::copy(entry.path(), &target).unwrap();
            }
        }
    }

    #[test]
    fn projects_checked_in_batches_give_what_they_give_at_once_in_file_order() {
        // Two fixture projects, one nested in the other's folder so that
        // their files interleave in file order, and the outer one's files
        // around it.
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/projects");
        let dir = tempfile::tempdir().unwrap();
        let outer = dir.path();
        copy_folder(&fixtures.join("builders"), outer);
        copy_folder(&fixtures.join("builder_fix"), &outer.join("q_nested"));
        std::fs::write(outer.join("z_last.py"), "def t():\n    return {'status': 'success', 'content': [], 'n': 1}\n")
            .unwrap();
        let mut paths: Vec<PathBuf> = walkdir::WalkDir::new(outer)
            .into_iter()
            .map(|e| e.unwrap().into_path())
            .filter(|p| p.extension().is_some_and(|e| e == "py"))
            .collect();
        paths.sort();
        let options = CheckOptions::new(ParseScope::Candidates);
        let outcomes = |batch_files: usize, lanes: usize| {
            let files = paths.iter().cloned().map(FoundFile::with_defaults).collect();
            let plan = ProjectPlan::new(
                &[outer.to_path_buf()],
                &paths,
                &crate::project::ProjectOptions { root: None, isolated: false, marked: None },
            );
            let walk = |plan: ProjectPlan| {
                plan.walk(&crate::discovery::WalkOptions::default(), &crate::config::Resolver::isolated())
            };
            let mut seen = Vec::new();
            check_in_batches(files, &options, plan, walk, (batch_files, lanes), |o| seen.push(format!("{o:?}")));
            seen
        };
        let at_once = outcomes(usize::MAX, 1);
        let batched = outcomes(1, 1);
        // Side by side, in lanes: the same outcomes, in file order too.
        assert_eq!(outcomes(usize::MAX, 2), at_once);
        assert_eq!(at_once.len(), paths.len());
        for (outcome, path) in batched.iter().zip(&paths) {
            assert!(outcome.contains(&format!("{path:?}")), "{outcome} is not {}'s outcome", path.display());
        }
        assert!(at_once.iter().filter(|o| o.contains("BuilderCall")).count() >= 2, "builder calls in both projects");
        assert_eq!(batched, at_once);
    }

    #[test]
    fn lanes_of_projects_without_reads_end() {
        // Two projects whose outcomes stream (nothing to read), side by
        // side: each lane waits on the rayon pool's work, so no lane may
        // hold one of the pool's threads while it waits.
        let dir = tempfile::tempdir().unwrap();
        let mut paths = Vec::new();
        for project in ["a", "b", "c"] {
            let root = dir.path().join(project);
            std::fs::create_dir_all(&root).unwrap();
            std::fs::write(root.join("pyproject.toml"), "").unwrap();
            for i in 0..40 {
                let path = root.join(format!("m{i:02}.py"));
                std::fs::write(&path, format!("x = {i}\n")).unwrap();
                paths.push(path);
            }
        }
        paths.sort();
        assert_eq!(checked_in_two_lanes(vec![dir.path().to_path_buf()], paths.clone()), Ok(paths));
    }

    /// The paths of the outcomes of checking `files` (given as `paths`) in
    /// two lanes, on a thread of its own: an error if that takes a minute
    /// (the lanes wait for ever).
    fn checked_in_two_lanes(paths: Vec<PathBuf>, files: Vec<PathBuf>) -> Result<Vec<PathBuf>, mpsc::RecvTimeoutError> {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let found = files.iter().cloned().map(FoundFile::with_defaults).collect();
            let options = crate::project::ProjectOptions { root: None, isolated: false, marked: None };
            let plan = ProjectPlan::new(&paths, &files, &options);
            let walk = |plan: ProjectPlan| {
                plan.walk(&crate::discovery::WalkOptions::default(), &crate::config::Resolver::isolated())
            };
            let mut seen = Vec::new();
            let options = CheckOptions::new(ParseScope::Candidates);
            check_in_batches(found, &options, plan, walk, (usize::MAX, 2), |o| seen.push(o.path));
            let _ = tx.send(seen);
        });
        rx.recv_timeout(std::time::Duration::from_secs(60))
    }

    #[test]
    fn lanes_that_walk_their_projects_end() {
        // One file of each of two projects given: each lane walks its
        // project's root (above the file) beside reading its one file.
        let dir = tempfile::tempdir().unwrap();
        let mut given = Vec::new();
        for project in ["a", "b"] {
            let root = dir.path().join(project);
            for folder in ["sub", "d1", "d2", "d3"] {
                std::fs::create_dir_all(root.join(folder)).unwrap();
                for i in 0..30 {
                    std::fs::write(root.join(folder).join(format!("m{i:02}.py")), format!("x = {i}\n")).unwrap();
                }
            }
            std::fs::write(root.join("pyproject.toml"), "").unwrap();
            given.push(root.join("sub").join("m00.py"));
        }
        assert_eq!(checked_in_two_lanes(given.clone(), given.clone()), Ok(given));
    }

    #[test]
    fn candidate_and_whole_file_scopes_agree() {
        let src = "def f(x):\n    return {'status': 'ok', 'content': [], 'frames': x, **extra}\n\nlam = lambda: {\"status\": 1, \"content\": [{'status': 1, 'content': [], 'n': 2}]}\n";
        let check = |scope| check_source(src, &CheckOptions::new(scope), &Rules::moves_only());
        let fast = check(ParseScope::Candidates);
        assert_eq!(fast.len(), 3);
        assert_eq!(fast, check(ParseScope::WholeFile));
    }
}
