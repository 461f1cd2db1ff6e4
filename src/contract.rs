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
use crate::suppress::{Suppression, line_suppression};
use crate::syntax::ParsedPiece;
use crate::syntax::tree::constant_str;

/// The keys an author may set; the runtime may add `toolUseId`.
pub const ALLOWED_KEYS: [&str; 3] = ["status", "content", "toolUseId"];

/// The statuses of the contract.
pub const STATUSES: [&str; 3] = ["success", "error", "degraded"];

/// A project's reading of the contract: the rules it checks and the extra
/// top-level keys it tolerates (`select`, `ignore` and `allowed-keys` in its
/// configuration). The default is the contract itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    /// Indexed by `Code as usize`.
    enabled: [bool; Code::ALL.len()],
    allowed_keys: Vec<String>,
}

impl Default for Rules {
    fn default() -> Self {
        Rules::CONTRACT
    }
}

impl Rules {
    /// Every rule, no tolerated extra key: the contract as written.
    pub const CONTRACT: Rules = Rules { enabled: [true; Code::ALL.len()], allowed_keys: Vec::new() };

    /// The rules `select` turns on (all when `None`) minus those in
    /// `ignore`, tolerating `allowed_keys` besides the contract's keys.
    pub fn new(select: Option<&[Code]>, ignore: &[Code], allowed_keys: Vec<String>) -> Self {
        let selected = select.unwrap_or(&Code::ALL);
        let enabled = Code::ALL.map(|c| selected.contains(&c) && !ignore.contains(&c));
        Rules { enabled, allowed_keys }
    }

    pub fn enabled(&self, code: Code) -> bool {
        self.enabled[code as usize]
    }

    /// The keys the project tolerates besides the contract's own.
    pub fn extra_allowed_keys(&self) -> &[String] {
        &self.allowed_keys
    }

    /// Whether a top-level key named `name` is fine in a tool result.
    pub fn allows_key(&self, name: &str) -> bool {
        ALLOWED_KEYS.contains(&name) || self.allowed_keys.iter().any(|k| k == name)
    }

    /// The rule a top-level entry of this kind breaks, if one that is on.
    fn verdict(&self, kind: &EntryKind) -> Option<Code> {
        let code = match kind {
            EntryKind::Key { name, .. } if !self.allows_key(name) => Code::ExtraKey,
            EntryKind::Spread => Code::Spread,
            _ => return None,
        };
        self.enabled(code).then_some(code)
    }
}

/// One entry of a dict display, with absolute byte ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The whole entry: `key: value` or `**value`.
    pub range: Range<usize>,
    pub kind: EntryKind,
    /// The value expression.
    pub value: Range<usize>,
    /// The rule this entry breaks (under the project's [`Rules`]), whether
    /// or not a comment silences it.
    pub breaks: Option<Code>,
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

    /// The contract's verdict on this entry, if it is a violation no
    /// comment silences.
    pub fn violation(&self) -> Option<Code> {
        self.breaks.filter(|&code| !self.suppressed.covers(code))
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

/// Reads a `dictionary` node as a tool result, if it is one. Dicts whose own
/// syntax is broken (an ERROR or MISSING node inside) are never tool results.
pub fn tool_result_dict(node: Node<'_>, piece_src: &str, offset: usize, rules: &Rules) -> Option<ToolResultDict> {
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
        let breaks = rules.verdict(&kind);
        entries.push(Entry {
            range: shift(child.byte_range()),
            kind,
            value: shift(value.byte_range()),
            breaks,
            suppressed,
        });
    }
    if entries.iter().any(|e| e.breaks.is_some()) {
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

/// Every tool-result dict in the parsed pieces of `src`, in source order.
pub fn tool_results(src: &str, pieces: &[ParsedPiece], rules: &Rules) -> Vec<ToolResultDict> {
    let mut found = Vec::new();
    for piece in pieces {
        let piece_src = &src[piece.offset..];
        let root = piece.tree.root_node();
        piece.for_each_node(|node| {
            if node.kind() == "dictionary" && !in_broken_statement(root, node) {
                found.extend(tool_result_dict(node, piece_src, piece.offset, rules));
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
        scan_with(src, &Rules::default())
    }

    fn scan_with(src: &str, rules: &Rules) -> Vec<(Code, Option<String>)> {
        let pieces = parse_pieces(src, ParseScope::WholeFile);
        tool_results(src, &pieces, rules)
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

    #[test]
    fn project_rules_select_ignore_and_allow() {
        let src = "r = {'status': 1, 'content': [], 'frames': 1, 'trace': 2, **extra}\n";
        let spreads_only = Rules::new(Some(&[Code::Spread]), &[], Vec::new());
        assert_eq!(scan_with(src, &spreads_only), vec![(Code::Spread, None)]);
        let no_spreads = Rules::new(None, &[Code::Spread], vec!["trace".into()]);
        assert_eq!(scan_with(src, &no_spreads), vec![(Code::ExtraKey, Some("frames".into()))]);
    }
}
