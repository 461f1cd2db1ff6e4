//! Tests of the review: the engine scripted, the front end's rendering and keys.

use std::path::{Path, PathBuf};

use super::*;
use crate::apply;
use crate::check;
use crate::config::Overrides;
use crate::diagnostics::Code;
use console::Key;

use crate::contract;
use crate::discovery::FoundFile;
use crate::fix::{self, Applicability, AugmentText, Edit};
use crate::report::Palette;
use crate::source::SourceText;
use crate::syntax::ParseScope;

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
    apply::FixPolicy::new(contract::Rules::default(), unsafe_fixes, 88, augment_text)
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
        Script { answers: answers.iter().rev().cloned().collect(), ..Script::default() }
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
        let mut paths: Vec<PathBuf> = std::fs::read_dir(self.dir.path()).unwrap().map(|e| e.unwrap().path()).collect();
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
            text = text
                .replace(&format!("\"content\": [], {key}}}"), &format!("\"content\": [{{\"json\": {{{key}}}}}]}}"));
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
        tree.read("a.py").contains("\"outer\": {\"status\": \"success\", \"content\": [{\"json\": {\"deep\": 2}}]},")
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
                suppressed: 0,
                outcome: FileOutcome::Written,
            },
            FileReport {
                path: "b.py".into(),
                applied: 1,
                skipped: 0,
                failed: 0,
                undecided: 2,
                manual: 0,
                suppressed: 0,
                outcome: FileOutcome::Aborted,
            },
            FileReport {
                path: "c.py".into(),
                applied: 0,
                skipped: 0,
                failed: 0,
                undecided: 4,
                manual: 0,
                suppressed: 0,
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

#[test]
fn an_edit_is_applied_when_it_parses_and_keeps_to_the_contract() {
    let tree = Tree::new(&[("a.py", THREE)]);
    let mut script = Script::new(&[Skip, Skip]);
    // The first offer's region: the fixed dict with the lines around it
    // (three after it; the file starts one line before it).
    let mut probe = Script::new(&[Skip, Skip, Skip]);
    Tree::new(&[("a.py", THREE)]).review(&mut probe);
    let region = probe.offers[0].edit_region.clone();
    assert_eq!(
        region,
        "def one():\n    return {\"status\": \"success\", \"content\": [{\"json\": {\"a\": 1}}]}\n\n\ndef two():\n"
    );
    let edited = region.replace("{\"json\": {\"a\": 1}}", "{\"text\": \"a is 1\"}");
    // The answers are a stack: the edit answers the first offer.
    script.answers.push(Edit(edited));
    let report = tree.review(&mut script);
    assert_eq!(report.files[0].applied, 1);
    assert!(tree.read("a.py").starts_with("def one():\n    return {\"status\": \"success\", \"content\": [{\"text\": \"a is 1\"}]}\n\n\ndef two():\n    return {\"status\": \"success\", \"content\": [], \"b\": 2}"));
}

#[test]
fn an_edit_that_still_breaks_the_contract_or_the_syntax_is_refused() {
    let tree = Tree::new(&[("a.py", THREE)]);
    let mut probe = Script::new(&[Skip, Skip, Skip]);
    Tree::new(&[("a.py", THREE)]).review(&mut probe);
    let region = probe.offers[0].edit_region.clone();
    let violating = region.replace("]}", "], \"frames\": 3}");
    let broken = region.replace("]}", "]");
    let mut script = Script::new(&[Edit(violating), Edit(broken), Skip, Skip, Skip]);
    let report = tree.review(&mut script);
    assert_eq!(tree.read("a.py"), THREE, "nothing was applied");
    assert_eq!(report.files[0].applied, 0);
    let notes: Vec<Option<String>> = script.offers.iter().take(3).map(|o| o.note.clone()).collect();
    assert_eq!(notes[0], None);
    assert!(
        notes[1].as_deref().is_some_and(|n| n.contains("still breaks the contract (TS001 at line 2)")),
        "{notes:?}"
    );
    assert!(notes[2].as_deref().is_some_and(|n| n.contains("does not parse")), "{notes:?}");
    assert!(script.offers[1].revision < script.offers[2].revision, "a refused edit shows the offer again");
}

#[test]
fn s_writes_a_suppression_comment_and_check_is_then_clean_there() {
    let tree = Tree::new(&[("a.py", THREE)]);
    let mut script = Script::new(&[Suppress, Skip, Skip]);
    let report = tree.review(&mut script);
    let text = tree.read("a.py");
    assert!(
        text.starts_with(
            "def one():\n    return {\"status\": \"success\", \"content\": [], \"a\": 1}  # toolshape: ignore[TS001]\n"
        ),
        "{text}"
    );
    assert_eq!((report.files[0].suppressed, report.files[0].applied), (1, 0));
    assert!(script.events.iter().any(|e| matches!(e, Event::Suppressed { line: 2, .. })), "{:?}", script.events);
    let found =
        check::check_source(&text, &check::CheckOptions::new(ParseScope::Candidates), &contract::Rules::default());
    assert_eq!(found.iter().map(|f| f.span.start.line).collect::<Vec<_>>(), [6, 10], "{found:?}");
}

#[test]
fn tab_shows_the_other_remedy_and_the_one_shown_is_applied() {
    let src = "def f():\n    return {\"status\": \"success\", \"content\": [{\"json\": {\"a\": 1}}], \"b\": 2}\n";
    let tree = Tree::new(&[("a.py", src)]);
    let mut script = Script::new(&[NextRemedy, NextRemedy, NextRemedy, Apply]);
    tree.review(&mut script);
    let remedies: Vec<Option<(usize, usize, String)>> = script.offers.iter().map(|o| o.remedy.clone()).collect();
    assert_eq!(
        remedies,
        [
            Some((1, 2, "merge into the existing json block".into())),
            Some((2, 2, "append a new json block".into())),
            Some((1, 2, "merge into the existing json block".into())),
            Some((2, 2, "append a new json block".into())),
        ]
    );
    assert_eq!(
        tree.read("a.py"),
        "def f():\n    return {\"status\": \"success\", \"content\": [{\"json\": {\"a\": 1}}, {\"json\": {\"b\": 2}}]}\n"
    );
    // A fix with one remedy says so.
    let tree = Tree::new(&[("a.py", THREE)]);
    let mut script = Script::new(&[NextRemedy, Skip, Skip, Skip]);
    tree.review(&mut script);
    assert_eq!(script.offers[0].remedy, None);
    assert_eq!(script.offers[1].note.as_deref(), Some("This fix has no other remedy."));
}

#[test]
fn a_result_the_sdk_rewraps_offers_each_key_as_the_text() {
    let src = "from strands import tool\n\n\n@tool\ndef t():\n    return {\"status\": \"error\", \"error\": \"bad\", \"detail\": \"x\"}\n";
    let tree = Tree::new(&[("a.py", src)]);
    let path = tree.paths()[0].clone();
    let found =
        check::check_source(src, &check::CheckOptions::new(ParseScope::Candidates), &contract::Rules::default());
    assert!(found.is_empty(), "TS005 comes from the project pass, not the file's own check");
    let dict = src.find("{\"status\"").unwrap()..src.len() - 1;
    let index = crate::syntax::LineIndex::new(src);
    let span = crate::diagnostics::Span::new(&index, src, &dict);
    let ts005 =
        crate::diagnostics::Finding::at(Code::NotAResult, Some("content".into()), (dict.clone(), span), (dict, span));
    let mut project = ReviewProject::default();
    project.files.insert(path, FileWord { not_results: vec![ts005], ..FileWord::default() });
    let options = ReviewOptions { project: Some(&project), ..options() };
    let mut script = Script::new(&[NextRemedy, NextRemedy, Apply]);
    review_files(tree.files(), &options, &mut script);
    let titles: Vec<String> = script.offers.iter().map(|o| o.remedy.clone().unwrap().2).collect();
    assert_eq!(
        titles,
        [
            "make it a tool result: \"error\" becomes the text, \"detail\" into a json block",
            "make it a tool result: \"detail\" becomes the text, \"error\" into a json block",
            "make it a tool result: \"error\", \"detail\" into a json block",
        ]
    );
    assert_eq!(script.offers[0].applicability, Applicability::Unsafe);
    assert!(tree.read("a.py").ends_with(
        "return {\"status\": \"error\", \"content\": [{\"json\": {\"error\": \"bad\", \"detail\": \"x\"}}]}\n"
    ));
}
