//! The shape of a tool result beyond its keys (TS006–TS009, see
//! `docs/rules.md`, "The rest of the contract"): one walk over a shaped
//! dict's status, content and blocks asks each rule about its part, and
//! each rule says what it finds and proposes.

use std::ops::Range;

use tree_sitter::Node;

use crate::contract::{Rules, ToolResultDict};
use crate::diagnostics::{Code, Edit, Finding, Proposal, Span};
use crate::semantic::FileContext;
use crate::syntax::tree::{constant_str, unparenthesize};

use super::{block, content, status, text_value};
use crate::syntax::tree::{FieldChild, KindName};

/// One shape finding with what its rule proposes; `range` is what the fix
/// rewrites (the finding's span when it is manual).
#[derive(Debug, Clone)]
pub struct ShapeFinding {
    pub finding: Finding,
    pub proposal: Proposal,
    pub range: Range<usize>,
}

/// A rule's finding about one part of a result, what it proposes and the
/// range its fix rewrites.
pub(super) type Verdict = (Finding, Proposal, Range<usize>);

/// What the rules of one shaped dict look at: its source piece and where
/// it stands in the file.
pub(super) struct ShapeCtx<'a, 's> {
    pub piece_src: &'s str,
    pub offset: usize,
    src: &'s str,
    pub rules: &'a Rules,
    pub file: &'a FileContext<'s>,
    dict: Node<'a>,
}

impl<'s> ShapeCtx<'_, 's> {
    pub fn text(&self, node: Node<'_>) -> &'s str {
        &self.piece_src[node.byte_range()]
    }

    /// `node`'s range in the file.
    pub fn range(&self, node: Node<'_>) -> Range<usize> {
        node.start_byte() + self.offset..node.end_byte() + self.offset
    }

    /// An edit replacing `node` with `replacement`.
    pub fn replace(&self, node: Node<'_>, replacement: impl Into<String>) -> Edit {
        Edit { range: self.range(node), replacement: replacement.into() }
    }

    /// The quote character a string literal node is written with.
    pub fn quote_of(&self, node: Node<'_>) -> char {
        self.text(node).chars().find(|c| matches!(c, '"' | '\'')).unwrap_or('"')
    }

    /// A finding of `code` at `at` (a node of the piece) in this dict.
    pub fn finding(&self, code: Code, at: Node<'_>, key: Option<&str>, detail: String) -> Finding {
        let entry = self.range(at);
        let dict = self.range(self.dict);
        // The file's line index is built on the first finding: most dicts
        // asked about have none (a check asks every result of a file).
        let index = self.file.line_index();
        let span = Span::new(index, self.src, &entry);
        let dict_span = Span::new(index, self.src, &dict);
        Finding { detail: Some(detail), ..Finding::at(code, key.map(str::to_owned), (entry, span), (dict, dict_span)) }
    }

    /// Whether a comment silences `code` at `at` or on the dict's line.
    fn silenced(&self, code: Code, at: Node<'_>) -> bool {
        self.rules.silences(self.piece_src, at.start_byte(), code)
            || self.rules.silences(self.piece_src, self.dict.start_byte(), code)
    }
}

/// The TS006–TS009 findings of the shaped dict `dict` (a node of the piece
/// `piece_src` starting at `offset` of `src`; `result` as the contract
/// reads it), in source order.
pub fn shape_findings<'s>(
    dict: Node<'_>,
    result: &ToolResultDict,
    (piece_src, offset): (&'s str, usize),
    src: &'s str,
    rules: &Rules,
    file: &FileContext<'s>,
) -> Vec<ShapeFinding> {
    let ctx = ShapeCtx { piece_src, offset, src, rules, file, dict };
    let mut found: Vec<(Code, Node<'_>, Option<Verdict>)> = Vec::new();
    let pairs = constant_pairs(dict, piece_src);
    // A fix that moves keys fills an empty content list (silenced or not:
    // a baseline of the keys must not bring up their empty list).
    let moves_keys = result.entries.iter().any(|e| e.breaks.is_some());
    for &(ref key, pair, value) in &pairs {
        match key.as_str() {
            "status" => found.push((Code::Status, pair, status::check(&ctx, value))),
            "content" => found.push((Code::Content, pair, content::check(&ctx, &pairs, value, moves_keys))),
            _ => {}
        }
    }
    for block in blocks(&pairs) {
        found.push((Code::Block, block, block::check(&ctx, block)));
        for (key, pair, value) in constant_pairs(block, piece_src) {
            if key == "text" {
                found.push((Code::TextValue, pair, text_value::check(&ctx, value)));
            }
        }
    }
    let mut out: Vec<ShapeFinding> = found
        .into_iter()
        .filter(|(code, at, f)| f.is_some() && rules.enabled(*code) && !ctx.silenced(*code, *at))
        .filter_map(|(_, _, f)| f)
        .map(|(finding, proposal, range)| ShapeFinding { finding, proposal, range })
        .collect();
    out.sort_by_key(|f| (f.finding.entry.start, f.finding.code));
    out
}

/// The pairs of a dict display with a constant string key: the key, the
/// pair and its value.
pub(super) fn constant_pairs<'t>(dict: Node<'t>, piece_src: &str) -> Vec<(String, Node<'t>, Node<'t>)> {
    let mut cursor = dict.walk();
    dict.named_children(&mut cursor)
        .filter(|c| c.kind_name() == "pair")
        .filter_map(|pair| {
            let key = constant_str(pair.field("key")?, piece_src)?;
            Some((key, pair, pair.field("value")?))
        })
        .collect()
}

/// The blocks of a shaped dict: the dict displays among the elements of
/// its content list (the last `"content"` entry's value, when that is a
/// list display).
fn blocks<'t>(pairs: &[(String, Node<'t>, Node<'t>)]) -> Vec<Node<'t>> {
    let Some((_, _, value)) = pairs.iter().rev().find(|(k, ..)| k == "content") else { return Vec::new() };
    let list = unparenthesize(*value);
    if list.kind_name() != "list" {
        return Vec::new();
    }
    let mut cursor = list.walk();
    list.named_children(&mut cursor).map(unparenthesize).filter(|e| e.kind_name() == "dictionary").collect()
}

/// The constant string value of the first pair keyed `key`.
pub(super) fn constant_of(pairs: &[(String, Node<'_>, Node<'_>)], key: &str, piece_src: &str) -> Option<String> {
    pairs.iter().find(|(k, ..)| k == key).and_then(|(_, _, v)| constant_str(*v, piece_src))
}

#[cfg(test)]
mod tests {
    use crate::check::check_source;
    use crate::contract::Rules;
    use crate::diagnostics::{Applicability, Code};
    use crate::syntax::ParseScope;

    /// (code, key, detail, fixable) of each finding of `src`.
    fn shape(src: &str) -> Vec<(Code, Option<String>, String, Option<Applicability>)> {
        let options = crate::check::CheckOptions::new(ParseScope::Candidates);
        check_source(src, &options, &Rules::default())
            .into_iter()
            .filter(|f| matches!(f.code, Code::Status | Code::Content | Code::Block | Code::TextValue))
            .map(|f| (f.code, f.key.clone(), f.message(), f.fixable))
            .collect()
    }

    #[test]
    fn each_part_of_a_result_is_judged() {
        let src = "r = {'status': 'ok', 'content': [{'type': 'text', 'text': 3}, {'json': 1, 'text': 'x'}, {}]}\n";
        let found = shape(src);
        let codes: Vec<Code> = found.iter().map(|f| f.0).collect();
        assert_eq!(codes, [Code::Status, Code::Block, Code::TextValue, Code::Block, Code::Block], "{found:?}");
        assert_eq!(found[0].2, "status \"ok\" is not one of \"success\", \"error\", \"degraded\"");
        assert_eq!(found[0].3, Some(Applicability::Unsafe));
        // The redundant "type" goes, safely; "text": 3 stays a number.
        assert_eq!(found[1].3, Some(Applicability::Safe));
        assert_eq!(found[2].2, "text block holds a number, not a string");
        assert_eq!(found[3].3, None);
    }

    #[test]
    fn what_is_unknown_is_not_judged() {
        let src = "r = {'status': s, 'content': [b, *more, {**x}, {k: 1}, {'text': str(n)}, {'text': len(x)}]}\n\
                   def f(len):\n    pass\n";
        assert!(shape(src).is_empty(), "{:?}", shape(src));
    }

    #[test]
    fn content_of_every_wrong_kind() {
        for (content, words) in [
            ("'x'", "a string"),
            ("-1", "a number"),
            ("None", "None"),
            ("{'text': 'x'}", "a dict"),
            ("({'text': 'x'},)", "a tuple"),
            ("()", "a tuple"),
            ("{1}", "a set"),
            ("True", "a bool"),
        ] {
            let found = shape(&format!("r = {{'status': 'error', 'content': {content}}}\n"));
            assert_eq!(found.len(), 1, "{content}: {found:?}");
            assert_eq!(found[0].2, format!("content is {words}, not a list of content blocks"), "{content}");
        }
        let empty = shape("r = {'status': 'error', 'content': []}\n");
        assert_eq!(empty[0].2, "content is an empty list: the agent gets no content");
        assert!(shape("r = {'status': 'error', 'content': [x for x in y]}\n").is_empty());
    }

    #[test]
    fn suppressions_silence_shape_findings() {
        let src = "r = {'status': 'ok', 'content': []}  # toolshape: ignore[TS006]\n";
        assert_eq!(shape(src).iter().map(|f| f.0).collect::<Vec<_>>(), [Code::Content]);
    }
}
