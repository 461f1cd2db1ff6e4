//! The rules: one module per rule, each owning its code's name, its
//! description and its message, and [`REGISTRY`], the one list that check,
//! configuration, reports, SARIF, `--statistics` and the review read.
//!
//! What a tool result is and which of its entries break TS001/TS002 is the
//! contract's reading ([`crate::contract`]); turning that reading into
//! findings is here ([`findings_for`]), and so is the detection of rules
//! that are not about one dict (TS100, unused suppressions).

mod block;
mod builder_call;
mod content;
mod extra_key;
mod later_write;
mod not_a_result;
mod shape;
mod spread;
mod status;
mod text_value;
mod unused_ignore;

pub use not_a_result::{message_for as not_a_result_message, remedies as not_a_result_remedies};
pub use shape::{ShapeFinding, shape_findings};
pub use text_value::NOT_STRINGS;
pub use unused_ignore::unused_suppressions;

use crate::contract::{EntryKind, Rules, ToolResultDict};
use crate::diagnostics::{Code, Finding, Span};
use crate::semantic::FileContext;
use crate::syntax::tree::one_line;
use crate::syntax::{LineIndex, ParsedPiece};

/// What a rule is, for people: its kebab-case name, a one-sentence
/// description (SARIF's `fullDescription`, the README's table), and how a
/// finding of it reads.
pub struct Rule {
    pub code: Code,
    pub name: &'static str,
    pub description: &'static str,
    message: fn(&Finding) -> String,
}

/// Every rule, in code order.
pub const REGISTRY: [&Rule; 10] = [
    &extra_key::RULE,
    &spread::RULE,
    &builder_call::RULE,
    &later_write::RULE,
    &not_a_result::RULE,
    &status::RULE,
    &content::RULE,
    &block::RULE,
    &text_value::RULE,
    &unused_ignore::RULE,
];

/// The rule of `code`.
pub fn rule(code: Code) -> &'static Rule {
    REGISTRY.iter().find(|r| r.code == code).expect("every code has a rule in the registry")
}

impl Finding {
    /// The human-readable message (without code or position).
    pub fn message(&self) -> String {
        (rule(self.code).message)(self)
    }
}

/// The findings of one tool-result dict, in entry order.
pub fn findings_for(dict: &ToolResultDict, src: &str, index: &LineIndex) -> Vec<Finding> {
    let dict_span = Span::new(index, src, &dict.range);
    dict.violations()
        .map(|v| {
            let entry = &dict.entries[v.entry];
            let (key, spread) = match &entry.kind {
                EntryKind::Key { name, .. } => (Some(name.clone()), None),
                _ => (None, Some(src[entry.range.clone()].to_owned())),
            };
            let span = Span::new(index, src, &entry.range);
            Finding { spread, ..Finding::at(v.code, key, (entry.range.clone(), span), (dict.range.clone(), dict_span)) }
        })
        .collect()
}

/// The later writes into result names of `src` (TS004 findings), sorted by
/// position. `pieces` are what the check parsed: the file is parsed whole
/// only if a tool-result display may be bound to a name.
pub fn later_writes(src: &str, pieces: &[ParsedPiece], rules: &Rules, file: &FileContext<'_>) -> Vec<Finding> {
    if !rules.enabled(Code::LaterWrite) || !later_write::may_bind_result(src, pieces) {
        return Vec::new();
    }
    let mut findings = later_write::findings(src, file.tree(), file.model(), rules, file.line_index());
    findings.sort_by_key(|f| (f.entry.start, f.code));
    findings
}

/// Renders a key the way Python's `repr` would, but with double quotes.
pub(crate) fn quote_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 2);
    out.push('"');
    for c in key.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_has_every_code_once_in_order() {
        let codes: Vec<Code> = REGISTRY.iter().map(|r| r.code).collect();
        assert_eq!(codes, Code::ALL);
        for r in REGISTRY {
            assert!(r.name.chars().all(|c| c.is_ascii_lowercase() || c == '-'), "{}", r.name);
            assert!(r.description.ends_with('.'), "{}", r.description);
        }
    }

    #[test]
    fn spread_messages_fit_on_one_line() {
        assert_eq!(one_line("**{\n  'a': 1 }"), "**{ 'a': 1 }");
    }
}
