//! TS006 `status-outside-contract`: a constant status that is not one of
//! the contract's (`success`, `error`, `degraded`, or the project's
//! `statuses`). Where the meaning is evident (`"ok"`, `"failed"`, a
//! status in other letter case) the fix writes the contract's word; it is
//! unsafe, since whoever reads the status sees another value.

use tree_sitter::Node;

use super::Rule;
use super::shape::{ShapeCtx, Verdict};
use crate::contract::{Rules, or_list, status_outside};
use crate::diagnostics::{Code, Finding, Proposal};
use crate::syntax::tree::unparenthesize;

pub const RULE: Rule = Rule {
    code: Code::Status,
    name: "status-outside-contract",
    description: "A tool result's constant status is not one of success, error and degraded.",
    message,
};

fn message(f: &Finding) -> String {
    format!("status {}", f.detail.as_deref().unwrap_or_default())
}

/// The contract's status an author evidently meant by `status`, if one of
/// `rules`' statuses.
fn evident(status: &str, rules: &Rules) -> Option<String> {
    let lower = status.trim().to_ascii_lowercase();
    let meant = match lower.as_str() {
        "ok" | "succeeded" | "successful" => "success",
        "failed" | "failure" | "fail" => "error",
        other => other,
    };
    rules.statuses().contains(&meant).then(|| meant.to_owned())
}

/// The finding of the status `value` of a shaped dict, if outside.
pub(super) fn check(ctx: &ShapeCtx<'_, '_>, value: Node<'_>) -> Option<Verdict> {
    let status = status_outside(value, ctx.piece_src, ctx.rules)?;
    let pair = value.parent()?;
    let statuses = ctx.rules.statuses();
    let listed = statuses.iter().map(|s| super::quote_key(s)).collect::<Vec<_>>().join(", ");
    let judged = format!("{} is not one of {listed}", super::quote_key(&status));
    let finding = ctx.finding(Code::Status, pair, Some("status"), judged);
    let literal = unparenthesize(value);
    let proposal = match evident(&status, ctx.rules) {
        Some(meant) => {
            let q = ctx.quote_of(literal);
            Proposal::unsafe_for(
                vec![ctx.replace(literal, format!("{q}{meant}{q}"))],
                format!("write status {meant:?} for {status:?}"),
                format!("whoever reads the status gets {meant:?} instead of {status:?}"),
            )
        }
        None => Proposal::Manual(format!("which of {} {status:?} means is for a person to say", or_list(&statuses))),
    };
    let range = match &proposal {
        Proposal::Edits { .. } => ctx.range(literal),
        Proposal::Manual(_) => finding.entry.clone(),
    };
    Some((finding, proposal, range))
}
