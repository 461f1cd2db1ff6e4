//! TS009 `text-not-a-string`: a text block whose value is evidently not a
//! string — a number, bool, list, dict or set literal, or a call of `len`,
//! `int`, `float`, `sum`, `round`, `dict` or `list` that the file does not
//! rebind. A dict or list becomes a json block; anything else is wrapped
//! in `str(...)`. Both are unsafe: what the block holds changes type.

use tree_sitter::Node;

use super::Rule;
use super::shape::{ShapeCtx, Verdict};
use crate::contract::Literal;
use crate::diagnostics::{Code, Finding, Proposal};
use crate::syntax::tree::unparenthesize;
use crate::syntax::tree::{FieldChild, KindName};

pub const RULE: Rule = Rule {
    code: Code::TextValue,
    name: "text-not-a-string",
    description: "A text content block holds a value that is evidently not a string.",
    message,
};

/// Builtins whose result is evidently not a string.
/// The builtins whose call gives no string, judged in a text block.
pub const NOT_STRINGS: [&str; 7] = ["len", "int", "float", "sum", "round", "dict", "list"];

fn message(f: &Finding) -> String {
    format!("text block holds {}, not a string", f.detail.as_deref().unwrap_or("a value"))
}

/// The finding of the text `value` of a block, if evidently not a string.
pub(super) fn check(ctx: &ShapeCtx<'_, '_>, value: Node<'_>) -> Option<Verdict> {
    let inner = unparenthesize(value);
    let literal = Literal::of(value, ctx.piece_src);
    let (words, structured) = match literal {
        Literal::Number | Literal::Bool | Literal::Set => (literal.words().to_owned(), false),
        Literal::List { .. } => ("a list".to_owned(), true),
        Literal::Dict => (literal.words().to_owned(), true),
        _ => {
            let name = builtin_call(ctx, inner)?;
            (format!("the result of `{name}()`"), matches!(name, "dict" | "list"))
        }
    };
    let pair = value.parent()?;
    let finding = ctx.finding(Code::TextValue, pair, Some("text"), words);
    let key = pair.field("key")?;
    let proposal = if structured {
        let q = ctx.quote_of(key);
        Proposal::unsafe_for(
            vec![ctx.replace(key, format!("{q}json{q}"))],
            "make it a json block",
            "the agent reads the value as JSON, and code that reads the block's text finds none",
        )
    } else {
        Proposal::unsafe_for(
            vec![ctx.replace(inner, format!("str({})", ctx.text(inner)))],
            "write the text as str(...)",
            "code that reads the block's text gets a string instead of the value",
        )
    };
    let range = if structured { ctx.range(key) } else { ctx.range(inner) };
    Some((finding, proposal, range))
}

/// The builtin `node` calls, when it is a call of a bare name among
/// [`NOT_STRINGS`] that nothing in the file binds.
fn builtin_call<'s>(ctx: &ShapeCtx<'_, 's>, node: Node<'_>) -> Option<&'s str> {
    if node.kind_name() != "call" {
        return None;
    }
    let callee = node.field("function").map(unparenthesize).filter(|f| f.kind_name() == "identifier")?;
    let name = ctx.text(callee);
    let rebound = || ctx.file.binds_anywhere(name);
    (NOT_STRINGS.contains(&name) && !rebound()).then_some(name)
}
