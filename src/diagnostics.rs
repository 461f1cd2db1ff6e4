//! Findings: the rule codes, their messages, and where a finding points.

use std::fmt;
use std::ops::Range;

use serde::Serialize;

use crate::contract::{EntryKind, ToolResultDict};
use crate::fix::Applicability;
use crate::syntax::{LineIndex, Position};

/// A rule of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Code {
    /// TS001: a top-level key other than status, content and toolUseId.
    ExtraKey,
    /// TS002: a top-level `**` spread.
    Spread,
    /// TS100: a suppression comment that silences nothing (reported only
    /// with `--report-unused-ignores`).
    UnusedIgnore,
}

impl Code {
    /// Every rule, in code order.
    pub const ALL: [Code; 3] = [Code::ExtraKey, Code::Spread, Code::UnusedIgnore];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::ExtraKey => "TS001",
            Code::Spread => "TS002",
            Code::UnusedIgnore => "TS100",
        }
    }
}

impl std::str::FromStr for Code {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Code::ALL.into_iter().find(|c| c.as_str() == s).ok_or_else(|| {
            let known: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
            format!("unknown rule code `{s}`; the codes are {}", known.join(", "))
        })
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A start and end position, 1-based, end exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Span {
    pub start: Position,
    pub end: Position,
}

impl Span {
    pub fn new(index: &LineIndex, src: &str, range: &Range<usize>) -> Self {
        let (start, end) = index.span(src, range);
        Span { start, end }
    }
}

/// One contract violation in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub code: Code,
    /// The decoded key, for [`Code::ExtraKey`].
    pub key: Option<String>,
    /// The spread's source text (`**stats`), for [`Code::Spread`].
    pub spread: Option<String>,
    /// What is unused in the suppression comment, for [`Code::UnusedIgnore`].
    pub detail: Option<String>,
    /// The entry's byte range and span.
    pub entry: Range<usize>,
    pub span: Span,
    /// The dict's byte range and span.
    pub dict: Range<usize>,
    pub dict_span: Span,
    /// Whether `toolshape fix` can repair it (`None`: manual repair).
    pub fixable: Option<Applicability>,
}

impl Finding {
    /// The human-readable message (without code or position).
    pub fn message(&self) -> String {
        match (self.code, &self.key, &self.spread) {
            (Code::ExtraKey, Some(key), _) => {
                format!("extra top-level key {} in tool result — the runtime drops it", quote_key(key))
            }
            (Code::UnusedIgnore, ..) => self.detail.clone().unwrap_or_default(),
            (_, _, spread) => format!(
                "`{}` spread in tool result — it can inject top-level keys the runtime drops",
                spread.as_deref().map(one_line).unwrap_or_default()
            ),
        }
    }
}

/// Renders a key the way Python's `repr` would, but with double quotes.
fn quote_key(key: &str) -> String {
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

/// Collapses a multi-line source excerpt into one line for messages.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
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
            Finding {
                code: v.code,
                key,
                spread,
                detail: None,
                entry: entry.range.clone(),
                span: Span::new(index, src, &entry.range),
                dict: dict.range.clone(),
                dict_span,
                fixable: None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_quoted_readably() {
        assert_eq!(quote_key("frames"), "\"frames\"");
        assert_eq!(quote_key("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
    }

    #[test]
    fn spread_messages_fit_on_one_line() {
        assert_eq!(one_line("**{\n  'a': 1 }"), "**{ 'a': 1 }");
    }
}
