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
    let members: Vec<Node<'_>> = block.named_children(&mut cursor).filter(|c| c.kind() != "comment").collect();
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
        ([one], ["type"]) => redundant_type(ctx, block, &pairs, one).unwrap_or_else(|| {
            Proposal::Manual(format!("its \"type\" does not name its {} block: which to keep is for a person", one))
        }),
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
) -> Option<Proposal> {
    let typed: Vec<&(String, Node<'_>, Node<'_>)> = pairs.iter().filter(|(k, ..)| k == "type").collect();
    let [(_, pair, value)] = typed.as_slice() else { return None };
    if constant_str(*value, ctx.piece_src).as_deref() != Some(own) {
        return None;
    }
    let src = ctx.piece_src;
    let bytes = src.as_bytes();
    let (start, end) = (pair.start_byte(), pair.end_byte());
    let blank = |b: u8| b == b' ' || b == b'\t';
    // After the pair: blanks, then its comma, if any.
    let mut after = end;
    while after < block.end_byte() && blank(bytes[after]) {
        after += 1;
    }
    let removed = if bytes[after] == b',' {
        let mut to = after + 1;
        while to < block.end_byte() && blank(bytes[to]) {
            to += 1;
        }
        let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
        let alone = src[line_start..start].bytes().all(blank) && bytes[to] == b'\n';
        if alone { line_start..to + 1 } else { start..to }
    } else {
        // The last pair: the comma before it goes.
        let comma = src[..start].rfind(',')?;
        if comma < block.start_byte() || !src[comma + 1..start].bytes().all(|b| b.is_ascii_whitespace()) {
            return None;
        }
        comma..end
    };
    // A comment in what goes would go with it.
    let mut cursor = block.walk();
    if block
        .children(&mut cursor)
        .any(|c| c.kind() == "comment" && c.start_byte() < removed.end && removed.start < c.end_byte())
    {
        return None;
    }
    let range = removed.start + ctx.offset..removed.end + ctx.offset;
    Some(Proposal::safe(
        vec![Edit { range, replacement: String::new() }],
        format!("remove the redundant \"type\": {}", super::quote_key(own)),
    ))
}
