//! TS002 `top-level-spread`: a `**mapping` at the top level of a tool
//! result can inject keys the runtime drops; the fix moves it into a
//! `{"json": {...}}` content block.

use super::{Rule, one_line};
use crate::diagnostics::{Code, Finding};

pub const RULE: Rule = Rule {
    code: Code::Spread,
    name: "top-level-spread",
    description: "A tool result has a top-level ** spread, which can inject keys the runtime drops.",
    message,
};

fn message(f: &Finding) -> String {
    format!(
        "`{}` spread in tool result — it can inject top-level keys the runtime drops",
        f.spread.as_deref().map(one_line).unwrap_or_default()
    )
}
