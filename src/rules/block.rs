//! TS008 `block-shape`: a content block that does not carry exactly one
//! block type (`text`, `json`, `image`, `document`, `video`, or the
//! project's `block-types`) and nothing else. A redundant `"type"` naming
//! the block's own key (`{"type": "text", "text": ...}`, the MCP/OpenAI
//! style) is removed, safely; the rest is for a person.

use tree_sitter::Node;

use super::Rule;
use super::shape::{ShapeCtx, Verdict, constant_pairs};
use crate::contract::or_list;
use crate::diagnostics::{Code, Edit, Finding, Proposal};
use crate::syntax::tree::KindName;
use crate::syntax::tree::constant_str;

pub const RULE: Rule = Rule {
    code: Code::Block,
    name: "block-shape",
    description: "A content block does not carry exactly one of text, json, image, document and video.",
    message,
};

fn message(f: &Finding) -> String {
    format!("content block {}", f.detail.as_deref().unwrap_or("has the wrong shape"))
}

/// The finding of the content block `block`, if it has the wrong shape.
pub(super) fn check(ctx: &ShapeCtx<'_, '_>, block: Node<'_>) -> Option<Verdict> {
    let mut cursor = block.walk();
    let members: Vec<Node<'_>> = block.named_children(&mut cursor).filter(|c| c.kind_name() != "comment").collect();
    let pairs = constant_pairs(block, ctx.piece_src);
    // A spread or a computed key could be anything: not judged.
    if pairs.len() != members.len() {
        return None;
    }
    let mut names: Vec<&str> = Vec::new();
    for (key, ..) in &pairs {
        if !names.contains(&key.as_str()) {
            names.push(key);
        }
    }
    let types = ctx.rules.block_types();
    let carried: Vec<&str> = names.iter().copied().filter(|n| types.contains(n)).collect();
    let others: Vec<&str> = names.iter().copied().filter(|n| !types.contains(n)).collect();
    let quoted = |words: &[&str]| words.iter().map(|w| super::quote_key(w)).collect::<Vec<_>>().join(", ");
    let detail = match (carried.as_slice(), others.as_slice()) {
        ([_], []) => return None,
        ([], _) => format!("has no {} key", or_list(&types.iter().map(|t| super::quote_key(t)).collect::<Vec<_>>())),
        ([_, _, ..], _) => format!("has more than one block type: {}", quoted(&carried)),
        ([one], _) => format!("has other keys than its {}: {}", super::quote_key(one), quoted(&others)),
    };
    let finding = ctx.finding(Code::Block, block, None, detail);
    let range = finding.entry.clone();
    let proposal = match (carried.as_slice(), others.as_slice()) {
        ([one], ["type"]) => redundant_type(ctx, block, &pairs, one).unwrap_or_else(Proposal::Manual),
        _ => Proposal::Manual(format!(
            "a block carries exactly one of {}: which to keep is for a person",
            or_list(&types)
        )),
    };
    Some((finding, proposal, range))
}

/// The removal of a `"type"` pair whose value names the block's own type
/// `own`, with its comma (and its line, when it stands alone on it).
fn redundant_type(
    ctx: &ShapeCtx<'_, '_>,
    block: Node<'_>,
    pairs: &[(String, Node<'_>, Node<'_>)],
    own: &str,
) -> Result<Proposal, String> {
    let typed: Vec<&(String, Node<'_>, Node<'_>)> = pairs.iter().filter(|(k, ..)| k == "type").collect();
    let mismatch =
        || format!("its \"type\" does not name its {} block: which to keep is for a person", super::quote_key(own));
    let [(_, pair, value)] = typed.as_slice() else { return Err(mismatch()) };
    if constant_str(*value, ctx.piece_src).as_deref() != Some(own) {
        return Err(mismatch());
    }
    let layout =
        || "the entries around its \"type\" are written so that removing it would change their layout".to_owned();
    let src = ctx.piece_src;
    // From the pair to the next entry (or from the entry before it, for
    // the last one): what stands between is a comma and blanks only, so
    // the layout of the other entries is kept.
    let mut cursor = block.walk();
    let members: Vec<Node<'_>> = block.named_children(&mut cursor).filter(|c| c.kind_name() != "comment").collect();
    let at = members.iter().position(|m| m == pair).ok_or_else(layout)?;
    let removed = match (members.get(at + 1), at.checked_sub(1).map(|i| members[i])) {
        (Some(next), _) => pair.start_byte()..next.start_byte(),
        (None, Some(before)) => before.end_byte()..pair.end_byte(),
        (None, None) => return Err(layout()),
    };
    // A comment in what goes would go with it.
    let mut cursor = block.walk();
    if block
        .children(&mut cursor)
        .any(|c| c.kind_name() == "comment" && c.start_byte() < removed.end && removed.start < c.end_byte())
    {
        return Err("a comment stands beside its \"type\", and would go with it".into());
    }
    let (gap, removed) = match members.get(at + 1) {
        Some(_) => (pair.end_byte()..removed.end, removed),
        None => {
            let comma = src[removed.clone()].find(',').ok_or_else(layout)? + removed.start;
            (removed.start..pair.start_byte(), comma..pair.end_byte())
        }
    };
    if !src[gap].chars().all(|c| c.is_whitespace() || c == ',') {
        return Err(layout());
    }
    let range = removed.start + ctx.offset..removed.end + ctx.offset;
    Ok(Proposal::safe(
        vec![Edit { range, replacement: String::new() }],
        format!("remove the redundant \"type\": {}", super::quote_key(own)),
    ))
}
