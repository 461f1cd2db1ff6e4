//! TS004 `key-added-after-construction`: a name bound to a tool-result dict
//! display gets a new top-level key later in the same scope (`r["k"] = v`,
//! `r.update(...)`, `r.setdefault(...)`, `r |= ...`); the runtime drops it.
//! Detection is [`crate::semantic::results`]'s; see `docs/rules.md`.

use tree_sitter::Tree;

use super::Rule;
use crate::contract::Rules;
use crate::diagnostics::{Code, Finding, Origin, Span};
use crate::semantic::results::{self, Added};
use crate::semantic::scope::SemanticModel;
use crate::syntax::{self, LineIndex, ParsedPiece};

pub const RULE: Rule = Rule {
    code: Code::LaterWrite,
    name: "key-added-after-construction",
    description: "A key is added to a tool result after its dict is built; the runtime drops it.",
    message,
};

fn message(f: &Finding) -> String {
    match (&f.key, &f.spread, &f.expression) {
        (Some(key), ..) => {
            format!("key {} is added to a tool result after it is built — the runtime drops it", super::quote_key(key))
        }
        (None, Some(mapping), _) => format!(
            "`{}` adds keys to a tool result after it is built — the runtime drops them",
            super::one_line(mapping)
        ),
        (None, None, expression) => format!(
            "key `{}` is added to a tool result after it is built — the runtime drops it",
            expression.as_deref().map(super::one_line).unwrap_or_default()
        ),
    }
}

/// Whether `pieces` of `src` may hold a tool-result display bound to a
/// name that is written later: a whole-file piece, or a candidate region a
/// plain assignment binds to a name that occurs after it followed by `[`,
/// `.` or `|=` (read lexically: a superset, never a miss).
pub fn may_bind_result(src: &str, pieces: &[ParsedPiece]) -> bool {
    pieces.iter().any(|p| {
        p.offset == 0 && p.tree.root_node().end_byte() == src.len()
            || syntax::assigned_names(src, p.offset).iter().any(|name| syntax::may_be_written(src, p.offset, name))
    })
}

/// The TS004 findings of `src` (parsed whole as `tree`), under `rules`,
/// suppressions applied.
pub fn findings(src: &str, tree: &Tree, model: &SemanticModel, rules: &Rules, index: &LineIndex) -> Vec<Finding> {
    if !rules.enabled(Code::LaterWrite) {
        return Vec::new();
    }
    let root = tree.root_node();
    results::writes(model, root, src)
        .into_iter()
        .filter(|w| !matches!(&w.added, Added::Key(k) if rules.allows_key(k)))
        .filter(|w| {
            let silenced = |at: usize| rules.silences(src, at, Code::LaterWrite);
            !silenced(w.span.start) && !silenced(w.dict.start)
        })
        .map(|w| {
            let (key, spread, expression) = match w.added {
                Added::Key(k) => (Some(k), None, None),
                Added::ComputedKey(e) => (None, None, Some(e)),
                Added::Mapping { written, expression } => (None, Some(written), Some(expression)),
            };
            Finding {
                code: Code::LaterWrite,
                key,
                spread,
                detail: None,
                span: Span::new(index, src, &w.span),
                entry: w.span,
                dict_span: Span::new(index, src, &w.dict),
                dict: w.dict,
                fixable: None,
                origin: Origin::LaterWrite,
                expression,
                builder: None,
                reads: Vec::new(),
            }
        })
        .collect()
}
