//! Small questions about tree-sitter nodes that every stage asks: a node's
//! text, the expression inside parentheses, the value of a constant string.

use tree_sitter::Node;

use super::literal;

/// The node text of `node` within `piece_src`.
pub fn node_text<'s>(node: Node<'_>, piece_src: &'s str) -> &'s str {
    &piece_src[node.byte_range()]
}

/// Skips parentheses (and comments inside them) around an expression.
pub fn unparenthesize(mut node: Node<'_>) -> Node<'_> {
    while node.kind() == "parenthesized_expression" {
        let mut cursor = node.walk();
        let Some(inner) = node.named_children(&mut cursor).find(|c| c.kind() != "comment") else {
            break;
        };
        node = inner;
    }
    node
}

/// The value of `node` if it is a constant `str` expression (a literal, an
/// implicit concatenation, possibly parenthesized).
pub fn constant_str(node: Node<'_>, piece_src: &str) -> Option<String> {
    let node = unparenthesize(node);
    match node.kind() {
        "string" => literal::str_constant(node_text(node, piece_src)),
        "concatenated_string" => {
            let mut cursor = node.walk();
            let parts: Vec<&str> = node
                .named_children(&mut cursor)
                .filter(|c| c.kind() == "string")
                .map(|c| node_text(c, piece_src))
                .collect();
            literal::concat_constant(parts)
        }
        _ => None,
    }
}
