//! Findings and fixes as data: the rule codes, where a finding points, and
//! a fix's [`Edit`]s with their [`Applicability`] (as in ruff's
//! `ruff_diagnostics`). What each rule says is in [`crate::rules`].

use std::fmt;
use std::ops::Range;

use serde::Serialize;

use crate::syntax::{LineIndex, Position};

/// A rule of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Code {
    /// TS001: a top-level key other than status, content and toolUseId.
    ExtraKey,
    /// TS002: a top-level `**` spread.
    Spread,
    /// TS003: an extra keyword passed through a result builder.
    BuilderCall,
    /// TS004: a key added to a result name after it is built.
    LaterWrite,
    /// TS005: a tool returns a dict with status or content but not both,
    /// which the SDK rewraps as one success text block.
    NotAResult,
    /// TS006: a constant status outside the contract's.
    Status,
    /// TS007: content that is not a non-empty list.
    Content,
    /// TS008: a content block without exactly one block type.
    Block,
    /// TS009: a text block whose value is evidently not a string.
    TextValue,
    /// TS100: a suppression comment that silences nothing (reported only
    /// with `--report-unused-ignores`).
    UnusedIgnore,
}

impl Code {
    /// Every rule, in code order.
    pub const ALL: [Code; 10] = [
        Code::ExtraKey,
        Code::Spread,
        Code::BuilderCall,
        Code::LaterWrite,
        Code::NotAResult,
        Code::Status,
        Code::Content,
        Code::Block,
        Code::TextValue,
        Code::UnusedIgnore,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::ExtraKey => "TS001",
            Code::Spread => "TS002",
            Code::BuilderCall => "TS003",
            Code::LaterWrite => "TS004",
            Code::NotAResult => "TS005",
            Code::Status => "TS006",
            Code::Content => "TS007",
            Code::Block => "TS008",
            Code::TextValue => "TS009",
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
    /// What is unused in the suppression comment, for [`Code::UnusedIgnore`];
    /// for a [`Code::BuilderCall`] through a dict parameter, that
    /// parameter's name.
    pub detail: Option<String>,
    /// The entry's byte range and span.
    pub entry: Range<usize>,
    pub span: Span,
    /// The dict's byte range and span.
    pub dict: Range<usize>,
    pub dict_span: Span,
    /// Whether `toolshape fix` can repair it (`None`: manual repair).
    pub fixable: Option<Applicability>,
    /// How the dropped key reaches the result.
    pub origin: Origin,
    /// The source text of a computed key or a mapping, for a dynamic
    /// [`Code::BuilderCall`] or [`Code::LaterWrite`].
    pub expression: Option<String>,
    /// The builder a [`Code::BuilderCall`] passes the keyword through.
    pub builder: Option<BuilderRef>,
    /// Where the project reads the key this finding's fix moves (or the
    /// whole result holding it), sorted by path and position.
    pub reads: Vec<ReadRef>,
}

impl Code {
    /// Whether this rule's fixes move keys into a json block (TS001–TS004):
    /// the keys whose reads the project pass looks for.
    pub fn moves_keys(self) -> bool {
        matches!(self, Code::ExtraKey | Code::Spread | Code::BuilderCall | Code::LaterWrite)
    }
}

impl Finding {
    /// A finding of `code` at `entry` in the dict `dict` (ranges with their
    /// spans): a literal one, not yet judged fixable, with no reads.
    pub fn at(
        code: Code,
        key: Option<String>,
        (entry, span): (Range<usize>, Span),
        (dict, dict_span): (Range<usize>, Span),
    ) -> Self {
        Finding {
            code,
            key,
            spread: None,
            detail: None,
            entry,
            span,
            dict,
            dict_span,
            fixable: None,
            origin: Origin::Literal,
            expression: None,
            builder: None,
            reads: Vec::new(),
        }
    }

    /// The key this finding's fix moves, if it moves one.
    pub fn moved_key(&self) -> Option<&String> {
        self.key.as_ref().filter(|_| self.code.moves_keys())
    }
}

/// A read of a moved key (`docs/rules.md`, "Reads of moved keys").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadRef {
    /// The reading file, as the finding paths are spelled.
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    /// `subscript`, `store`, `delete`, `get`, `pop`, `setdefault`, `in`,
    /// `not-in` or `whole`.
    pub form: &'static str,
    /// The key read (`None` for a use of the whole result).
    pub key: Option<String>,
    /// Whether `fix` rewrites it with the fix.
    pub rewritable: bool,
    /// A read on a result toolshape cannot trace to its producer, but which
    /// is plainly a tool result (`tool_result["k"]`): never rewritten.
    pub possible: bool,
}

/// How a dropped key reaches a tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// An entry of the result's own dict display.
    #[default]
    Literal,
    /// A keyword of a call of a result builder.
    BuilderCall,
    /// A write to a result name after it is built.
    LaterWrite,
}

/// Where a result builder is defined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BuilderRef {
    pub name: String,
    /// The builder's file, as the project walk spelled it.
    pub path: String,
    pub line: usize,
    pub column: usize,
}

/// Replace `range` of the source with `replacement`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub range: Range<usize>,
    pub replacement: String,
}

impl Edit {
    /// The one edit that turns `old` into `new`: what lies between their
    /// common start and common end (on character boundaries).
    pub fn between(old: &str, new: &str) -> Edit {
        let mut start = old.bytes().zip(new.bytes()).take_while(|(a, b)| a == b).count();
        while !old.is_char_boundary(start) || !new.is_char_boundary(start) {
            start -= 1;
        }
        let most = old.len().min(new.len()) - start;
        let mut tail = old.bytes().rev().zip(new.bytes().rev()).take(most).take_while(|(a, b)| a == b).count();
        while !old.is_char_boundary(old.len() - tail) || !new.is_char_boundary(new.len() - tail) {
            tail -= 1;
        }
        Edit { range: start..old.len() - tail, replacement: new[start..new.len() - tail].to_owned() }
    }
}

/// What a rule proposes for one of its findings: edits with their
/// applicability (and, when unsafe, why), or why a person must repair it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proposal {
    Edits { edits: Vec<Edit>, applicability: Applicability, unsafe_reasons: Vec<String>, title: String },
    Manual(String),
}

impl Proposal {
    /// A fix that is safe.
    pub fn safe(edits: Vec<Edit>, title: impl Into<String>) -> Self {
        Proposal::Edits { edits, applicability: Applicability::Safe, unsafe_reasons: Vec::new(), title: title.into() }
    }

    /// A fix that is unsafe, for `why`.
    pub fn unsafe_for(edits: Vec<Edit>, title: impl Into<String>, why: impl Into<String>) -> Self {
        Proposal::Edits {
            edits,
            applicability: Applicability::Unsafe,
            unsafe_reasons: vec![why.into()],
            title: title.into(),
        }
    }
}

/// Whether a fix may be applied without the user opting in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Applicability {
    Safe,
    Unsafe,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::Safe => "safe",
            Applicability::Unsafe => "unsafe",
        }
    }
}
