//! TS007 `content-not-a-list`: a tool result's content written as a
//! string, number, bool, `None`, dict, set or tuple literal, or as an empty
//! list. A string becomes one text block (unsafe: code that reads the
//! content as a string breaks); a tuple becomes a list (safe: the same
//! blocks, in the same order); the rest is for a person.

use tree_sitter::Node;

use super::Rule;
use super::shape::{ShapeCtx, Verdict, constant_of};
use crate::contract::Literal;
use crate::diagnostics::{Code, Edit, Finding, Proposal};
use crate::syntax::tree::{FieldChild, unparenthesize};

pub const RULE: Rule = Rule {
    code: Code::Content,
    name: "content-not-a-list",
    description: "A tool result's content is not a non-empty list of content blocks.",
    message,
};

fn message(f: &Finding) -> String {
    match f.detail.as_deref() {
        Some("an empty list") => "content is an empty list: the agent gets no content".into(),
        words => format!("content is {}, not a list of content blocks", words.unwrap_or("not a list")),
    }
}

/// The finding of the content `value` of a shaped dict, if it breaks the rule.
pub(super) fn check(
    ctx: &ShapeCtx<'_, '_>,
    pairs: &[(String, Node<'_>, Node<'_>)],
    value: Node<'_>,
    moves_keys: bool,
) -> Option<Verdict> {
    let literal = Literal::of(value, ctx.piece_src);
    if !literal.breaks_content() || (moves_keys && literal == (Literal::List { empty: true })) {
        return None;
    }
    let pair = value.parent()?;
    let finding = ctx.finding(Code::Content, pair, Some("content"), literal.words().to_owned());
    let inner = unparenthesize(value);
    let q = pair.field("key").map_or('"', |k| ctx.quote_of(k));
    let (proposal, range) = match literal {
        Literal::Str => (
            Proposal::unsafe_for(
                vec![ctx.replace(inner, format!("[{{{q}text{q}: {}}}]", ctx.text(inner)))],
                "put the string in a text block",
                "code that reads the content as a string gets a list of blocks",
            ),
            ctx.range(inner),
        ),
        Literal::Tuple if ctx.text(inner).len() > 2 => {
            let r = ctx.range(inner);
            let edits = vec![
                Edit { range: r.start..r.start + 1, replacement: "[".into() },
                Edit { range: r.end - 1..r.end, replacement: "]".into() },
            ];
            (Proposal::safe(edits, "make the tuple a list"), r)
        }
        Literal::List { empty: true } => {
            let status = constant_of(pairs, "status", ctx.piece_src)
                .map_or_else(String::new, |s| format!(" for its status {}", super::quote_key(&s)));
            (Proposal::Manual(format!("write the blocks the agent should read{status}")), finding.entry.clone())
        }
        _ => (Proposal::Manual("write the content as a list of content blocks".into()), finding.entry.clone()),
    };
    Some((finding, proposal, range))
}
