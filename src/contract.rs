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
use crate::suppress::{LineTails, Suppression, line_suppression};
use crate::syntax::ParsedPiece;
use crate::syntax::tree::{FieldChild, KindName};
use crate::syntax::tree::{constant_str, operand};

/// The keys an author may set; the runtime may add `toolUseId`.
pub const ALLOWED_KEYS: [&str; 3] = ["status", "content", "toolUseId"];

/// The statuses of the contract.
pub const STATUSES: [&str; 3] = ["success", "error", "degraded"];

/// The content block types the SDK accepts: each block carries exactly one.
pub const BLOCK_TYPES: [&str; 5] = ["text", "json", "image", "document", "video"];

/// A project's reading of the contract: the rules it checks and the extra
/// top-level keys it tolerates (`select`, `ignore` and `allowed-keys` in its
/// configuration). The default is the contract itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    /// Indexed by `Code as usize`.
    enabled: [bool; Code::ALL.len()],
    allowed_keys: Vec<String>,
    /// The project's `statuses`, `block-types` and `tool-decorators`
    /// (empty: the contract's own, [`STATUSES`], [`BLOCK_TYPES`] and
    /// [`crate::semantic::TOOL_DECORATORS`]).
    statuses: Vec<String>,
    block_types: Vec<String>,
    tool_decorators: Vec<String>,
    /// Whether suppression comments silence findings: off only to learn
    /// which findings the comments silence ([`Rules::ignoring_suppressions`]).
    honour_suppressions: bool,
}

impl Default for Rules {
    fn default() -> Self {
        Rules::CONTRACT
    }
}

impl Rules {
    /// Every rule, no tolerated extra key: the contract as written.
    pub const CONTRACT: Rules = Rules {
        enabled: [true; Code::ALL.len()],
        allowed_keys: Vec::new(),
        statuses: Vec::new(),
        block_types: Vec::new(),
        tool_decorators: Vec::new(),
        honour_suppressions: true,
    };

    /// The rules about keys the runtime drops (TS001–TS004) and unused
    /// suppressions: for tests of mechanisms that write filler statuses
    /// and contents.
    #[cfg(test)]
    pub const fn moves_only() -> Rules {
        let mut enabled = [false; Code::ALL.len()];
        let mut i = 0;
        while i < enabled.len() {
            enabled[i] = matches!(
                Code::ALL[i],
                Code::ExtraKey | Code::Spread | Code::BuilderCall | Code::LaterWrite | Code::UnusedIgnore
            );
            i += 1;
        }
        Rules {
            enabled,
            allowed_keys: Vec::new(),
            statuses: Vec::new(),
            block_types: Vec::new(),
            tool_decorators: Vec::new(),
            honour_suppressions: true,
        }
    }

    /// The rules `select` turns on (all when `None`) minus those in
    /// `ignore`, tolerating `allowed_keys` besides the contract's keys.
    pub fn new(select: Option<&[Code]>, ignore: &[Code], allowed_keys: Vec<String>) -> Self {
        let selected = select.unwrap_or(&Code::ALL);
        let enabled = Code::ALL.map(|c| selected.contains(&c) && !ignore.contains(&c));
        Rules { enabled, allowed_keys, ..Rules::CONTRACT }
    }

    /// These rules with the project's own statuses, block types and tool
    /// decorators (an empty list keeps the contract's).
    pub fn with_vocabulary(
        self,
        statuses: Vec<String>,
        block_types: Vec<String>,
        tool_decorators: Vec<String>,
    ) -> Self {
        Rules { statuses, block_types, tool_decorators, ..self }
    }

    /// The statuses a tool result may carry.
    pub fn statuses(&self) -> Vec<&str> {
        pick(&self.statuses, &STATUSES)
    }

    /// The block types a content block may carry.
    pub fn block_types(&self) -> Vec<&str> {
        pick(&self.block_types, &BLOCK_TYPES)
    }

    /// The decorators (dotted names as written) that make a function a
    /// Strands tool.
    pub fn tool_decorators(&self) -> Vec<&str> {
        pick(&self.tool_decorators, &crate::semantic::TOOL_DECORATORS)
    }

    /// These rules with every suppression comment read as absent: their
    /// findings are the ones the comments silence, and the others.
    pub fn ignoring_suppressions(&self) -> Rules {
        Rules { honour_suppressions: false, ..self.clone() }
    }

    /// What the comment on the line of `at` (a place outside any string)
    /// in the text of `tails` silences under these rules: the one place
    /// every rule asks.
    pub fn suppression_at(&self, tails: &LineTails<'_>, at: usize) -> Suppression {
        if self.honour_suppressions { tails.suppression(at) } else { Suppression::Nothing }
    }

    /// Whether the comment on the line of `at` in `src` silences `code`.
    pub fn silences(&self, src: &str, at: usize, code: Code) -> bool {
        self.honour_suppressions && line_suppression(src, at).covers(code)
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

/// The configured list, or the contract's when none is.
fn pick<'a>(configured: &'a [String], default: &[&'static str]) -> Vec<&'a str> {
    if configured.is_empty() { default.to_vec() } else { configured.iter().map(String::as_str).collect() }
}

/// What a value written in a tool result evidently is, by its syntax
/// alone (parentheses seen through): the literals the contract's shape
/// rules judge. Anything else (a name, a call, a comprehension) is
/// [`Literal::Other`]: unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Literal {
    /// A string literal of any prefix (`f` included), or a concatenation.
    Str,
    /// A bytes literal.
    Bytes,
    /// An integer, float or imaginary literal, or `-`/`+` of one.
    Number,
    Bool,
    None,
    /// A dict display.
    Dict,
    /// A set display.
    Set,
    /// A tuple display, `()` included.
    Tuple,
    /// A list display, and whether it has no element.
    List {
        empty: bool,
    },
    Other,
}

impl Literal {
    /// Reads `node` (of `piece_src`).
    pub fn of(node: Node<'_>, piece_src: &str) -> Literal {
        let node = crate::syntax::tree::unparenthesize(node);
        match node.kind_name() {
            "string" | "concatenated_string" if crate::syntax::tree::is_bytes(node, piece_src) => Literal::Bytes,
            "string" | "concatenated_string" => Literal::Str,
            "integer" | "float" => Literal::Number,
            "unary_operator" => {
                let number = node
                    .field("argument")
                    .is_some_and(|a| matches!(crate::syntax::tree::unparenthesize(a).kind_name(), "integer" | "float"));
                let sign = node.field("operator").is_some_and(|o| matches!(o.kind_name(), "-" | "+"));
                if number && sign { Literal::Number } else { Literal::Other }
            }
            "true" | "false" => Literal::Bool,
            "none" => Literal::None,
            "dictionary" => Literal::Dict,
            "set" => Literal::Set,
            "tuple" => Literal::Tuple,
            "list" => {
                let mut cursor = node.walk();
                let empty = !node.named_children(&mut cursor).any(|c| c.kind_name() != "comment");
                Literal::List { empty }
            }
            _ => Literal::Other,
        }
    }

    /// The literal in words, for messages: `a string`, `None`...
    pub fn words(self) -> &'static str {
        match self {
            Literal::Str => "a string",
            Literal::Bytes => "a bytes string",
            Literal::Number => "a number",
            Literal::Bool => "a bool",
            Literal::None => "None",
            Literal::Dict => "a dict",
            Literal::Set => "a set",
            Literal::Tuple => "a tuple",
            Literal::List { empty: true } => "an empty list",
            Literal::List { empty: false } => "a list",
            Literal::Other => "an expression",
        }
    }

    /// Whether content written so is not a non-empty list (TS007): every
    /// literal but a non-empty list display.
    pub fn breaks_content(self) -> bool {
        !matches!(self, Literal::List { empty: false } | Literal::Other)
    }
}

/// A constant status outside `rules`' statuses (TS006), decoded: one of
/// the signs that a shaped dict may not be a Strands tool result.
pub fn status_outside(value: Node<'_>, piece_src: &str, rules: &Rules) -> Option<String> {
    constant_str(value, piece_src).filter(|s| !rules.statuses().contains(&s.as_str()))
}

/// Why a fix of a shaped dict with the status `status` (outside `rules`'
/// statuses) is unsafe.
pub fn outside_reason(status: &str, rules: &Rules) -> String {
    format!("its status {status:?} is not {}, so it may not be a Strands tool result", or_list(&rules.statuses()))
}

/// `a, b or c`.
pub fn or_list<S: AsRef<str>>(words: &[S]) -> String {
    let words: Vec<&str> = words.iter().map(AsRef::as_ref).collect();
    match words.as_slice() {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
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
    tool_result_dict_in(node, piece_src, offset, rules, (&LineTails::new(piece_src), 0))
}

/// [`tool_result_dict`], reading suppressions through `tails`, which one
/// walk over many dicts shares: a place of the piece is `tails_shift` bytes on
/// in the text of `tails`.
pub(crate) fn tool_result_dict_in(
    node: Node<'_>,
    piece_src: &str,
    offset: usize,
    rules: &Rules,
    (tails, tails_shift): (&LineTails<'_>, usize),
) -> Option<ToolResultDict> {
    if node.kind_name() != "dictionary" || node.has_error() {
        return None;
    }
    let shift = |r: Range<usize>| r.start + offset..r.end + offset;
    let mut entries = Vec::new();
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let kind = match child.kind_name() {
            "pair" => {
                let key = child.field("key")?;
                match constant_str(key, piece_src) {
                    Some(name) => EntryKind::Key { name, key: shift(key.byte_range()) },
                    None => EntryKind::OtherKey { key: shift(key.byte_range()) },
                }
            }
            "dictionary_splat" => EntryKind::Spread,
            _ => continue,
        };
        let value = match kind {
            EntryKind::Spread => operand(child)?,
            _ => child.field("value")?,
        };
        let suppressed = rules.suppression_at(tails, tails_shift + child.start_byte());
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
        let on_dict_line = rules.suppression_at(tails, tails_shift + node.start_byte());
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

/// Calls `visit` with every tool-result dict in the parsed pieces of
/// `src` (outside broken statements): its node, its piece and the dict as
/// the contract reads it, piece by piece in tree order.
pub fn for_each_tool_result<'p>(
    src: &str,
    pieces: &'p [ParsedPiece],
    rules: &Rules,
    mut visit: impl FnMut(Node<'p>, &'p ParsedPiece, ToolResultDict),
) {
    // One for the file: its pieces may share a line.
    let tails = LineTails::new(src);
    for piece in pieces {
        let piece_src = &src[piece.offset..];
        let root = piece.tree.root_node();
        piece.for_each_node(|node| {
            if node.kind_name() == "dictionary"
                && !in_broken_statement(root, node)
                && let Some(dict) = tool_result_dict_in(node, piece_src, piece.offset, rules, (&tails, piece.offset))
            {
                visit(node, piece, dict);
            }
        });
    }
}

/// Every tool-result dict in the parsed pieces of `src`, in source order.
pub fn tool_results(src: &str, pieces: &[ParsedPiece], rules: &Rules) -> Vec<ToolResultDict> {
    let mut found = Vec::new();
    for_each_tool_result(src, pieces, rules, |_, _, dict| found.push(dict));
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
