//! The tool-result contract: what a tool-result-shaped dict is, and which of
//! its entries violate the contract.
//!
//! A dict display is *tool-result-shaped* when it has constant string keys
//! `"status"` and `"content"` (Python's semantics for "constant string": any
//! quotes and prefixes, escapes decoded, implicit concatenation, parentheses).
//! Its only allowed constant keys are `"status"`, `"content"` and
//! `"toolUseId"`; any other constant string key is [`Code::ExtraKey`] and any
//! top-level `**spread` is [`Code::Spread`]. Non-constant keys are ignored.

use std::ops::Range;

use tree_sitter::Node;

use crate::diagnostics::Code;
use crate::suppress::{self, Suppression};
use crate::syntax::{ParsedPiece, literal};

/// The keys an author may set; the runtime may add `toolUseId`.
pub const ALLOWED_KEYS: [&str; 3] = ["status", "content", "toolUseId"];

/// One entry of a dict display, with absolute byte ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The whole entry: `key: value` or `**value`.
    pub range: Range<usize>,
    pub kind: EntryKind,
    /// The value expression.
    pub value: Range<usize>,
    /// Findings silenced by a comment on the entry's or the dict's line.
    pub suppressed: Suppression,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// A constant string key, decoded.
    Key { name: String, key: Range<usize> },
    /// A key that is not a constant string (a name, a number, an f-string...).
    OtherKey { key: Range<usize> },
    /// A `**expr` spread.
    Spread,
}

/// A dict display with constant string keys `"status"` and `"content"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResultDict {
    /// From `{` to `}` inclusive, absolute.
    pub range: Range<usize>,
    pub entries: Vec<Entry>,
}

/// One contract violation: an entry of a tool-result dict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Violation {
    pub code: Code,
    /// Index into [`ToolResultDict::entries`].
    pub entry: usize,
}

impl Entry {
    pub fn key_name(&self) -> Option<&str> {
        match &self.kind {
            EntryKind::Key { name, .. } => Some(name),
            _ => None,
        }
    }

    /// The contract's verdict on this entry, if it is a violation.
    pub fn violation(&self) -> Option<Code> {
        let code = match &self.kind {
            EntryKind::Key { name, .. } if !ALLOWED_KEYS.contains(&name.as_str()) => Code::ExtraKey,
            EntryKind::Spread => Code::Spread,
            _ => return None,
        };
        (!self.suppressed.covers(code)).then_some(code)
    }
}

impl ToolResultDict {
    pub fn violations(&self) -> impl Iterator<Item = Violation> + '_ {
        self.entries.iter().enumerate().filter_map(|(entry, e)| e.violation().map(|code| Violation { code, entry }))
    }

    pub fn is_violating(&self) -> bool {
        self.violations().next().is_some()
    }

    /// The first entry with constant key `name`.
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key_name() == Some(name))
    }
}

/// The node text of `node` within `piece_src`.
pub fn node_text<'s>(node: Node<'_>, piece_src: &'s str) -> &'s str {
    &piece_src[node.byte_range()]
}

/// Skips parentheses (and comments inside them) around an expression.
pub fn unparenthesize(mut node: Node<'_>) -> Node<'_> {
    while node.kind() == "parenthesized_expression" {
        let mut cursor = node.walk();
        let Some(inner) = node.named_children(&mut cursor).find(|c| c.kind() != "comment") else {
            break;
        };
        node = inner;
    }
    node
}

/// The value of `node` if it is a constant `str` expression (a literal, an
/// implicit concatenation, possibly parenthesized).
pub fn constant_str(node: Node<'_>, piece_src: &str) -> Option<String> {
    let node = unparenthesize(node);
    match node.kind() {
        "string" => literal::str_constant(node_text(node, piece_src)),
        "concatenated_string" => {
            let mut cursor = node.walk();
            let parts: Vec<&str> = node
                .named_children(&mut cursor)
                .filter(|c| c.kind() == "string")
                .map(|c| node_text(c, piece_src))
                .collect();
            literal::concat_constant(parts)
        }
        _ => None,
    }
}

/// Reads a `dictionary` node as a tool result, if it is one. Dicts whose own
/// syntax is broken (an ERROR or MISSING node inside) are never tool results.
pub fn tool_result_dict(node: Node<'_>, piece_src: &str, offset: usize) -> Option<ToolResultDict> {
    if node.kind() != "dictionary" || node.has_error() {
        return None;
    }
    let shift = |r: Range<usize>| r.start + offset..r.end + offset;
    let mut entries = Vec::new();
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let kind = match child.kind() {
            "pair" => {
                let key = child.child_by_field_name("key")?;
                match constant_str(key, piece_src) {
                    Some(name) => EntryKind::Key { name, key: shift(key.byte_range()) },
                    None => EntryKind::OtherKey { key: shift(key.byte_range()) },
                }
            }
            "dictionary_splat" => EntryKind::Spread,
            _ => continue,
        };
        let value = match kind {
            EntryKind::Spread => child.named_child(0)?,
            _ => child.child_by_field_name("value")?,
        };
        let suppressed = line_suppression(piece_src, child.start_byte());
        entries.push(Entry { range: shift(child.byte_range()), kind, value: shift(value.byte_range()), suppressed });
    }
    if entries
        .iter()
        .any(|e| matches!(e.kind, EntryKind::Spread) || e.key_name().is_some_and(|k| !ALLOWED_KEYS.contains(&k)))
    {
        let on_dict_line = line_suppression(piece_src, node.start_byte());
        if on_dict_line != Suppression::Nothing {
            for entry in &mut entries {
                entry.suppressed = std::mem::take(&mut entry.suppressed).union(on_dict_line.clone());
            }
        }
    }
    let has = |k: &str| entries.iter().any(|e| e.key_name() == Some(k));
    (has("status") && has("content")).then(|| ToolResultDict { range: shift(node.byte_range()), entries })
}

/// Whether the top-level statement holding `node` has a syntax error (a
/// `def` with a broken signature, say): no finding and no edit comes from a
/// statement tree-sitter had to repair. O(depth), unlike climbing parents.
pub fn in_broken_statement(root: Node<'_>, node: Node<'_>) -> bool {
    root.has_error() && root.child_with_descendant(node).is_some_and(|top| top.has_error())
}

/// The suppression comment in the rest of the line from `pos`.
fn line_suppression(piece_src: &str, pos: usize) -> Suppression {
    let rest = &piece_src[pos..];
    let end = memchr::memchr2(b'\n', b'\r', rest.as_bytes()).unwrap_or(rest.len());
    let tail = &rest[..end];
    if memchr::memchr(b'#', tail.as_bytes()).is_none() { Suppression::Nothing } else { suppress::in_line_tail(tail) }
}

/// Every tool-result dict in the parsed pieces of `src`, in source order.
pub fn tool_results(src: &str, pieces: &[ParsedPiece]) -> Vec<ToolResultDict> {
    let mut found = Vec::new();
    for piece in pieces {
        let piece_src = &src[piece.offset..];
        let root = piece.tree.root_node();
        piece.for_each_node(|node| {
            if node.kind() == "dictionary" && !in_broken_statement(root, node) {
                found.extend(tool_result_dict(node, piece_src, piece.offset));
            }
        });
    }
    found.sort_by_key(|d| d.range.start);
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::{ParseScope, parse_pieces};

    fn scan(src: &str) -> Vec<(Code, Option<String>)> {
        let pieces = parse_pieces(src, ParseScope::WholeFile);
        tool_results(src, &pieces)
            .iter()
            .flat_map(|d| {
                d.violations().map(|v| (v.code, d.entries[v.entry].key_name().map(str::to_owned))).collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn extra_keys_and_spreads() {
        let src = "r = {'status': 'success', 'content': [], 'frames': 1, **extra, 'toolUseId': 'x', 3: 4, f'k': 5, b'k': 6}\n";
        assert_eq!(scan(src), vec![(Code::ExtraKey, Some("frames".into())), (Code::Spread, None)]);
    }

    #[test]
    fn shape_needs_constant_status_and_content() {
        assert!(scan("{'status': 1, f'content': [], 'x': 1}").is_empty());
        assert!(scan("{'status': 1, b'content': [], 'x': 1}").is_empty());
        assert!(scan("{'status': 1, content: [], 'x': 1}").is_empty());
        assert_eq!(scan("{('sta' 'tus'): 1, 'con\\x74ent': [], ('x'): 1}").len(), 1);
    }

    #[test]
    fn duplicates_report_each_entry() {
        assert_eq!(scan("{'status': 1, 'content': [], 'a': 1, 'a': 2, 'status': 3}").len(), 2);
    }

    #[test]
    fn broken_dicts_are_never_reported() {
        assert!(scan("x = {'status': 1, 'content': [], 'a': 1, 'b': }\n").is_empty());
    }

    #[test]
    fn suppression_comments_silence_findings() {
        let src = "a = {'status': 1, 'content': [], 'x': 1, **y}  # toolshape: ignore[TS001]\nb = {\n    'status': 1,\n    'content': [],\n    'x': 1,  # noqa: TS001\n    'z': 2,\n}\nc = {'status': 1, 'content': [], 'x': 1}  # noqa\n";
        assert_eq!(scan(src), vec![(Code::Spread, None), (Code::ExtraKey, Some("z".into()))]);
    }

    #[test]
    fn dicts_in_broken_statements_are_never_reported() {
        let src = "def broken(:\n    return {'status': 1, 'content': [], 'a': 1}\n\n\ndef good():\n    return {'status': 1, 'content': [], 'b': 1}\n";
        assert_eq!(scan(src), vec![(Code::ExtraKey, Some("b".into()))]);
    }
}
