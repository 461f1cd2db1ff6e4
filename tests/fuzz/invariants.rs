//! The invariants every fuzz input must keep, shared by the fuzz targets
//! (`tests/fuzz/fuzz_targets/*.rs`) and the regression test
//! (`tests/fuzz_regressions.rs`), which include this file with `#[path]`.

use toolshape::apply::{FixPolicy, LeftBecause, fix_text, syntax_error_count};
use toolshape::baseline::add_ignores;
use toolshape::check::{CheckOptions, check_source};
use toolshape::contract::Rules;
use toolshape::fix::AugmentText;
use toolshape::syntax::ParseScope;
use toolshape::syntax::tree::{constant_str, unparenthesize};

/// The policy the fuzzers fix with: everything, text augmented where safe.
pub const POLICY: FixPolicy = FixPolicy::new(Rules::CONTRACT, true, 88, AugmentText::Safe);

/// The rules that move keys (TS001–TS004): invariant 5 compares what moved
/// into json blocks, and a repair of a result's shape (TS006–TS009: a
/// string content becoming a text block) changes the content too.
fn moves_only() -> Rules {
    use toolshape::diagnostics::Code;
    Rules::new(Some(&[Code::ExtraKey, Code::Spread, Code::BuilderCall, Code::LaterWrite]), &[], Vec::new())
}

/// The findings of `text` that move keys.
fn move_findings(text: &str) -> Vec<toolshape::diagnostics::Finding> {
    check_source(text, &CheckOptions::new(ParseScope::WholeFile), &moves_only())
}

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

    // 5. What moved is in a json block: every entry that left the top level
    //    of a tool result reappears in some `"json": {...}` dict, none lost
    //    and none invented (a fixer that deleted the entries fails here).
    if !round_limit {
        let moved = fix_text(text, &FixPolicy { rules: moves_only(), ..POLICY });
        if !moved.leftovers.iter().any(|l| l.why == LeftBecause::RoundLimit) {
            moved_entries_reappear(text, &move_findings(text), &moved.text)?;
        }
    }

    // 6. A baseline (`check --add-ignores`) adds no syntax error, silences
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

/// Every entry that left the top level of a tool result between `text`
/// (with its `findings`) and `fixed` reappears in some `"json": {...}`
/// dict of `fixed`, none lost and none invented.
pub fn moved_entries_reappear(
    text: &str,
    findings_before: &[toolshape::diagnostics::Finding],
    fixed: &str,
) -> Result<(), String> {
    let gone = multiset_minus(finding_labels(text, findings_before), finding_labels(fixed, &move_findings(fixed)));
    let added = multiset_minus(json_entry_labels(fixed), json_entry_labels(text));
    if gone != added {
        return Err(format!(
            "the entries that left the top level ({gone:?}) are not the entries the json blocks gained ({added:?})\nfixed text:\n{fixed}"
        ));
    }
    Ok(())
}

/// A moved entry as both sides can name it: the decoded key (or the
/// spread's text), and the value's text with white space removed unless the
/// value holds a dict or list display (a nested tool result in it, or
/// around it, is fixed too and changes that text).
/// The label of an entry with a computed key (`N[name] = v`).
fn computed_label(key: &str, value_text: &str) -> String {
    let key: String = key.split_whitespace().collect();
    entry_label(Some(format!("[{key}]")), value_text)
}

fn entry_label(key: Option<String>, value_text: &str) -> String {
    let value: String = value_text.split_whitespace().collect();
    let value = if value.contains(['{', '[']) { "<display>".to_owned() } else { value };
    match key {
        Some(key) => format!("{key:?}: {value}"),
        None => format!("**{}", value.trim_start_matches("**")),
    }
}

fn finding_labels(text: &str, findings: &[toolshape::diagnostics::Finding]) -> Vec<String> {
    let tree = toolshape::syntax::parse(text);
    let mut labels = Vec::new();
    for f in findings.iter().filter(|f| f.key.is_some() || f.spread.is_some() || f.expression.is_some()) {
        let Some(mut node) = tree.root_node().descendant_for_byte_range(f.entry.start, f.entry.end) else { continue };
        // A later write `N[K] = v` spans its statement.
        if node.kind() == "expression_statement" {
            node = node.named_child(0).unwrap_or(node);
        }
        let value = match node.kind() {
            "pair" | "keyword_argument" => node.child_by_field_name("value").map(|v| &text[v.byte_range()]),
            "assignment" => node.child_by_field_name("right").map(|v| &text[v.byte_range()]),
            _ => None,
        };
        let label = match (&f.key, &f.spread, &f.expression, value) {
            (Some(_), _, _, Some(value)) => entry_label(f.key.clone(), value),
            (None, None, Some(key), Some(value)) => computed_label(key, value),
            // A mapping written later (`N.update(m)`, `N |= m`) is its
            // expression; a spread is its text.
            (None, None, Some(expression), None) => entry_label(None, expression),
            _ => entry_label(f.key.clone(), &text[f.entry.clone()]),
        };
        labels.push(label);
    }
    labels.sort();
    labels
}

/// The entries of every `"json": {...}` dict in `text` that is not itself
/// a tool result.
fn json_entry_labels(text: &str) -> Vec<String> {
    let tree = toolshape::syntax::parse(text);
    let mut labels = Vec::new();
    toolshape::syntax::for_each_node(tree.root_node(), |node| {
        if node.kind() != "pair" {
            return;
        }
        let (Some(key), Some(value)) = (node.child_by_field_name("key"), node.child_by_field_name("value")) else {
            return;
        };
        let value = unparenthesize(value);
        if constant_str(key, text).as_deref() != Some("json") {
            return;
        }
        // A mapping moved whole: `{"json": extra}`, `{"json": dict(m)}`.
        if value.kind() == "identifier" {
            labels.push(entry_label(None, &text[value.byte_range()]));
            return;
        }
        if value.kind() == "call"
            && value.child_by_field_name("function").is_some_and(|f| &text[f.byte_range()] == "dict")
        {
            let args = value.child_by_field_name("arguments").map_or("", |a| &text[a.byte_range()]);
            labels.push(entry_label(None, args.trim_start_matches('(').trim_end_matches(')')));
            return;
        }
        if value.kind() != "dictionary" {
            return;
        }
        // A json payload that is itself a tool result holds its own keys,
        // not moved ones.
        if toolshape::contract::tool_result_dict(value, text, 0, &Rules::CONTRACT).is_some() {
            return;
        }
        let mut cursor = value.walk();
        for entry in value.named_children(&mut cursor) {
            match entry.kind() {
                "pair" => {
                    let (Some(k), Some(v)) = (entry.child_by_field_name("key"), entry.child_by_field_name("value"))
                    else {
                        continue;
                    };
                    let v = &text[v.byte_range()];
                    labels.push(match constant_str(k, text) {
                        Some(key) => entry_label(Some(key), v),
                        None => computed_label(&text[k.byte_range()], v),
                    });
                }
                "dictionary_splat" => labels.push(entry_label(None, &text[entry.byte_range()])),
                _ => {}
            }
        }
    });
    labels.sort();
    labels
}

/// `a` less `b`, both sorted multisets.
fn multiset_minus(a: Vec<String>, mut b: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    for item in a {
        match b.iter().position(|x| *x == item) {
            Some(i) => {
                b.remove(i);
            }
            None => out.push(item),
        }
    }
    out
}
