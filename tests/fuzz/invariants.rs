//! The invariants every fuzz input must keep, shared by the fuzz targets
//! (`tests/fuzz/fuzz_targets/*.rs`) and the regression test
//! (`tests/fuzz_regressions.rs`), which include this file with `#[path]`.

use toolshape::apply::{FixPolicy, LeftBecause, fix_text, syntax_error_count};
use toolshape::baseline::add_ignores;
use toolshape::check::{CheckOptions, check_source};
use toolshape::contract::Rules;
use toolshape::fix::AugmentText;
use toolshape::syntax::ParseScope;

/// The policy the fuzzers fix with: everything, text augmented where safe.
pub const POLICY: FixPolicy =
    FixPolicy { unsafe_fixes: true, line_length: 88, augment_text: AugmentText::Safe, rules: Rules::CONTRACT };

/// The findings of `text`, as `check` reports them without configuration.
fn findings(text: &str, scope: ParseScope) -> Vec<toolshape::diagnostics::Finding> {
    check_source(text, &CheckOptions::new(scope), &Rules::CONTRACT)
}

/// Checks every invariant on `text`; `Err` names the first one broken.
pub fn check_text(text: &str) -> Result<(), String> {
    // 1. Both scopes agree when the prefilter cannot skip the text and the
    //    text parses cleanly (with syntax errors, tree-sitter's recovery in
    //    a candidate region and in the whole file legitimately differ).
    let whole = findings(text, ParseScope::WholeFile);
    let candidates = findings(text, ParseScope::Candidates);
    let has = |w: &str| text.as_bytes().windows(w.len()).any(|x| x == w.as_bytes());
    if has("status") && has("content") && whole != candidates && syntax_error_count(text) == 0 {
        return Err(format!(
            "scopes disagree: WholeFile found {} findings, Candidates found {}\nWholeFile: {whole:#?}\nCandidates: {candidates:#?}",
            whole.len(),
            candidates.len()
        ));
    }

    // 2. Fixing adds no syntax error.
    let fixed = fix_text(text, &POLICY);
    let (before, after) = (syntax_error_count(text), syntax_error_count(&fixed.text));
    if after > before {
        return Err(format!("fix added syntax errors: {before} -> {after}\nfixed text:\n{}", fixed.text));
    }

    // A fix that would have broken the syntax is reported as a toolshape bug.
    if fixed.leftovers.iter().any(|l| l.why == LeftBecause::BrokeSyntax) {
        return Err(format!(
            "a planned fix would have added a syntax error (BrokeSyntax leftover)\n{:#?}",
            fixed.leftovers
        ));
    }
    let round_limit = fixed.leftovers.iter().any(|l| l.why == LeftBecause::RoundLimit);

    // 3. Fixing is idempotent.
    let again = fix_text(&fixed.text, &POLICY);
    if again.text != fixed.text && !round_limit {
        return Err(format!("fix is not idempotent\nfirst:\n{}\nsecond:\n{}", fixed.text, again.text));
    }

    // 4. Nothing fixable is left (unsafe fixes were applied too). Nesting
    //    deeper than MAX_ROUNDS legitimately leaves fixable dicts behind, and
    //    so does a fix refused in a file that already had syntax errors (it
    //    would change how they are recovered: left for a person).
    if !round_limit {
        let refused: Vec<_> = fixed
            .leftovers
            .iter()
            .filter(|l| l.why == LeftBecause::BrokenFile)
            .flat_map(|l| l.findings.iter().map(|f| f.dict.clone()))
            .collect();
        let left: Vec<_> = findings(&fixed.text, ParseScope::WholeFile)
            .into_iter()
            .filter(|f| f.fixable.is_some() && !refused.contains(&f.dict))
            .collect();
        if !left.is_empty() {
            return Err(format!("fixable findings left after fix: {left:#?}\nfixed text:\n{}", fixed.text));
        }
    }

    // 5. A baseline (`check --add-ignores`) adds no syntax error, silences
    //    every finding it did not report as skipped, and a second one adds
    //    nothing.
    let baseline = add_ignores(text, &whole);
    let (before, after) = (syntax_error_count(text), syntax_error_count(&baseline.text));
    if after > before {
        return Err(format!("add-ignores added syntax errors: {before} -> {after}\ntext:\n{}", baseline.text));
    }
    let still = findings(&baseline.text, ParseScope::WholeFile);
    if still.len() > baseline.skipped.len() {
        return Err(format!(
            "add-ignores left {} findings but skipped only {}: {still:#?}\ntext:\n{}",
            still.len(),
            baseline.skipped.len(),
            baseline.text
        ));
    }
    if baseline.skipped.is_empty() && add_ignores(&baseline.text, &still).text != baseline.text {
        return Err(format!("add-ignores is not idempotent\ntext:\n{}", baseline.text));
    }
    Ok(())
}
