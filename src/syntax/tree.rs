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

/// Why `node`'s value evidently cannot go through `json.dumps`, if it
/// cannot: a set, bytes, a lambda or a generator, directly or inside a list,
/// tuple or dict display. Iterative: nesting depth cannot overflow the stack.
pub fn not_json_serializable(node: Node<'_>, piece_src: &str) -> Option<&'static str> {
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        let node = unparenthesize(node);
        match node.kind() {
            "set" | "set_comprehension" => return Some("a set"),
            "lambda" => return Some("a lambda"),
            "generator_expression" => return Some("a generator"),
            "string" | "concatenated_string" if is_bytes(node, piece_src) => return Some("bytes"),
            "list" | "tuple" | "dictionary" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                // Reversed, so that the first element is looked at first.
                for child in children.into_iter().rev() {
                    match child.kind() {
                        "pair" => stack.extend(child.child_by_field_name("value")),
                        "comment" => {}
                        _ => stack.push(child),
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether a string node (or concatenation) is a bytes literal.
pub fn is_bytes(node: Node<'_>, piece_src: &str) -> bool {
    let text = node_text(node, piece_src);
    let prefix = &text[..text.find(['\'', '"']).unwrap_or(0)];
    prefix.contains(['b', 'B'])
}

/// Whether `node` is written to: an assignment's or `for`'s target (inside
/// an unpacking too), an augmented assignment's, or a `del`'s.
pub fn is_target(mut node: Node<'_>) -> bool {
    while let Some(parent) = node.parent() {
        match parent.kind() {
            "tuple" | "list" | "pattern_list" | "tuple_pattern" | "list_pattern" | "parenthesized_expression" => {}
            "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                return parent.child_by_field_name("left") == Some(node);
            }
            "delete_statement" => return true,
            _ => return false,
        }
        node = parent;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse;

    #[test]
    fn unserializable_values() {
        for (code, want) in [
            ("{1, 2}", Some("a set")),
            ("b'x'", Some("bytes")),
            ("[1, (x for x in y)]", Some("a generator")),
            ("{'a': lambda: 1}", Some("a lambda")),
            ("[1, 'x', {'a': (1, 2)}]", None),
            ("frozenset()", None),
        ] {
            let (tree, src) = (parse(code), code);
            assert_eq!(
                not_json_serializable(tree.root_node().named_child(0).unwrap().named_child(0).unwrap(), src),
                want,
                "{code}"
            );
        }
    }
}
