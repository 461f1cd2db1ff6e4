//! Small questions about tree-sitter nodes that every stage asks: a node's
//! text, the expression inside parentheses, the value of a constant string.

use std::sync::LazyLock;

use tree_sitter::Node;

use super::literal;

/// A node's kind name, read from a table made once: tree-sitter's own
/// `Node::kind` measures and UTF-8-checks the C string on every call, and
/// the walkers ask it of every node.
pub trait KindName {
    /// The same name as `Node::kind`.
    fn kind_name(&self) -> &'static str;
}

impl KindName for Node<'_> {
    #[inline]
    fn kind_name(&self) -> &'static str {
        KIND_NAMES.get(usize::from(self.kind_id())).map_or("", String::as_str)
    }
}

/// Python's node kind names, by kind id.
static KIND_NAMES: LazyLock<Vec<String>> = LazyLock::new(|| {
    let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
    (0..language.node_kind_count())
        .map(|id| u16::try_from(id).ok().and_then(|id| language.node_kind_for_id(id)).unwrap_or_default().to_owned())
        .collect()
});

/// A node's child in a field, by a field id looked up once: tree-sitter's
/// own `Node::child_by_field_name` compares the name with the language's
/// field names (`strncmp`) on every call.
pub trait FieldChild<'t> {
    /// The same child as `Node::child_by_field_name`.
    fn field(&self, name: &str) -> Option<Node<'t>>;
}

impl<'t> FieldChild<'t> for Node<'t> {
    #[inline]
    fn field(&self, name: &str) -> Option<Node<'t>> {
        let at = FIELD_IDS.binary_search_by(|(n, _)| n.as_str().cmp(name)).ok()?;
        self.child_by_field_id(FIELD_IDS[at].1)
    }
}

/// Python's field names with their ids, sorted by name.
static FIELD_IDS: LazyLock<Vec<(String, u16)>> = LazyLock::new(|| {
    let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
    let mut ids: Vec<(String, u16)> = (1..=language.field_count())
        .filter_map(|id| {
            let id = u16::try_from(id).ok()?;
            Some((language.field_name_for_id(id)?.to_owned(), id))
        })
        .collect();
    ids.sort();
    ids
});

/// A source excerpt on one line: its runs of whitespace (line breaks
/// too) become one space each.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A source excerpt on one line, cut to 60 characters, for reasons.
pub fn excerpt(text: &str) -> String {
    let joined = one_line(text);
    if joined.chars().count() > 60 { format!("{}…", joined.chars().take(59).collect::<String>()) } else { joined }
}

/// The node text of `node` within `piece_src`.
pub fn node_text<'s>(node: Node<'_>, piece_src: &'s str) -> &'s str {
    &piece_src[node.byte_range()]
}

/// The ancestors of `node`, its parent first. Each step is a
/// `Node::parent`, which walks down from the root: a pass that asks this
/// of many nodes walks with [`super::for_each_node_in_context`] instead,
/// whose path down is the same nodes root first.
pub fn ancestors(node: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    std::iter::successors(node.parent(), |n| n.parent())
}

/// Skips parentheses (and comments inside them) around an expression.
pub fn unparenthesize(mut node: Node<'_>) -> Node<'_> {
    while node.kind_name() == "parenthesized_expression" {
        let Some(inner) = operand(node) else { break };
        node = inner;
    }
    node
}

/// The outermost parentheses around an expression (the expression itself
/// when none): where it stands for its parent.
pub fn parenthesized(node: Node<'_>) -> Node<'_> {
    parenthesized_in(node).0
}

/// [`parenthesized`], with what holds it (`None`: the root): each node's
/// parent is asked once, as `Node::parent` walks down from the root.
pub fn parenthesized_in(mut node: Node<'_>) -> (Node<'_>, Option<Node<'_>>) {
    let mut parent = node.parent();
    while let Some(up) = parent.filter(|p| p.kind_name() == "parenthesized_expression") {
        node = up;
        parent = node.parent();
    }
    (node, parent)
}

/// The operand of a spread (`**x`, `*x`, in a display, a call or a
/// parameter list), of an `await`, of a `return` or of parentheses: its
/// first named child that is not a comment (`**  # why` and a line break
/// may stand before it).
pub fn operand(node: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).find(|c| c.kind_name() != "comment")
}

/// Whether `node` is parentheses around one assignment target (`(n) = v`
/// binds `n` as `n = v` does): tree-sitter reads the target as a
/// parenthesized expression, or as a tuple pattern without a comma.
pub fn is_parenthesized_target(node: Node<'_>) -> bool {
    if !matches!(node.kind_name(), "parenthesized_expression" | "tuple_pattern") {
        return false;
    }
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
    let inner: Vec<&Node<'_>> = children.iter().filter(|c| c.is_named() && c.kind_name() != "comment").collect();
    inner.len() == 1 && !children.iter().any(|c| c.kind_name() == ",")
}

/// The value of `node` if it is a constant `str` expression (a literal, an
/// implicit concatenation, possibly parenthesized).
pub fn constant_str(node: Node<'_>, piece_src: &str) -> Option<String> {
    let node = unparenthesize(node);
    match node.kind_name() {
        "string" => literal::str_constant(node_text(node, piece_src)),
        "concatenated_string" => {
            let mut cursor = node.walk();
            let parts: Vec<&str> = node
                .named_children(&mut cursor)
                .filter(|c| c.kind_name() == "string")
                .map(|c| node_text(c, piece_src))
                .collect();
            literal::concat_constant(parts)
        }
        _ => None,
    }
}

/// Why `node`'s value evidently cannot go through `json.dumps`, if it
/// cannot: a set, bytes, a lambda or a generator, directly or inside a list,
/// tuple or dict display, or a dict display with a key it rejects; what
/// comes first in the source is named. Iterative: nesting depth cannot
/// overflow the stack.
pub fn not_json_serializable(node: Node<'_>, piece_src: &str) -> Option<&'static str> {
    // Values to judge, and dict keys (`true`) to judge as keys.
    let mut stack = vec![(node, false)];
    while let Some((node, key)) = stack.pop() {
        let node = unparenthesize(node);
        if key {
            if is_rejected_key(node, piece_src) {
                return Some("a dict with a key json.dumps rejects");
            }
            continue;
        }
        match node.kind_name() {
            "set" | "set_comprehension" => return Some("a set"),
            "lambda" => return Some("a lambda"),
            "generator_expression" => return Some("a generator"),
            "string" | "concatenated_string" if is_bytes(node, piece_src) => return Some("bytes"),
            "list" | "tuple" | "dictionary" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                // Reversed, so that the first element is looked at first
                // (a pair's key before its value).
                for child in children.into_iter().rev() {
                    match child.kind_name() {
                        "pair" => {
                            stack.extend(child.field("value").map(|v| (v, false)));
                            stack.extend(child.field("key").map(|k| (k, true)));
                        }
                        "comment" => {}
                        // A dict display spread into a dict is merged into
                        // it: its values are the dict's. Any other spread
                        // shows no values to judge.
                        "dictionary_splat" => stack.extend(
                            operand(child)
                                .map(unparenthesize)
                                .filter(|v| v.kind_name() == "dictionary")
                                .map(|v| (v, false)),
                        ),
                        _ => stack.push((child, false)),
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether the dict key `key` is a constant `json.dumps` rejects: it takes
/// str, int, float, bool and None keys only, not bytes, a complex number,
/// `...` or a tuple.
fn is_rejected_key(key: Node<'_>, piece_src: &str) -> bool {
    let key = unparenthesize(key);
    match key.kind_name() {
        "ellipsis" | "tuple" => true,
        "string" | "concatenated_string" => is_bytes(key, piece_src),
        "integer" | "float" => node_text(key, piece_src).ends_with(['j', 'J']),
        _ => false,
    }
}

/// Whether a string node (or concatenation) is a bytes literal.
pub fn is_bytes(node: Node<'_>, piece_src: &str) -> bool {
    let text = node_text(node, piece_src);
    let prefix = &text[..text.find(['\'', '"']).unwrap_or(0)];
    prefix.contains(['b', 'B'])
}

/// Whether a node of kind `kind` may hold statements: a block, a clause
/// (`else`, `except`, `case`...) or a compound statement. A statement (a
/// `return`, say) stands in blocks, which stand in these, never in an
/// expression or a simple statement, so a walk for statements descends
/// into these only (in a tree without errors).
pub fn holds_statements(kind: &str) -> bool {
    kind == "block"
        || kind.ends_with("_clause")
        || (kind.ends_with("_statement") && kind != "expression_statement" && kind != "return_statement")
}

/// Whether the byte `at` of the tree under `root` stands in an annotation
/// (`docs/rules.md`, "Annotations"): a parameter's, a return's or a
/// variable's, a `type X = ...` statement's value or a type parameter's
/// bound, which tree-sitter all writes as a `type` node. Python may
/// evaluate one where it is written, later, or never. One walk down from
/// the root (`Node::parent` walks down from the root at each step).
pub fn in_annotation(root: Node<'_>, at: usize) -> bool {
    let mut cursor = root.walk();
    while cursor.goto_first_child_for_byte(at).is_some() {
        let node = cursor.node();
        if node.start_byte() > at {
            return false;
        }
        if node.kind_name() == "type" {
            return true;
        }
    }
    false
}

/// Whether `node` is written to: an assignment's or `for`'s target (inside
/// an unpacking too), an augmented assignment's, or a `del`'s.
pub fn is_target(mut node: Node<'_>) -> bool {
    while let Some(parent) = node.parent() {
        match parent.kind_name() {
            "tuple" | "list" | "pattern_list" | "tuple_pattern" | "list_pattern" | "parenthesized_expression" => {}
            "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                return parent.field("left") == Some(node);
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

    #[test]
    fn kind_names_from_the_table_are_tree_sitters_own() {
        let src = "@tool\ndef f(x, *a, **k):\n    r = {'status': 'ok', **k}\n    r |= {f'{x!r:>3}': [y async for y in z]}\n    match r:\n        case {'a': 1}: pass\n    return lambda: (yield)\n";
        let tree = crate::syntax::parse(src);
        let mut seen = 0;
        crate::syntax::for_each_node(tree.root_node(), |n| {
            assert_eq!(n.kind_name(), n.kind(), "at {:?}", n.byte_range());
            seen += 1;
        });
        assert!(seen > 80, "{seen}");
    }

    #[test]
    fn field_children_from_the_table_are_tree_sitters_own() {
        let src = "import a.b as c\n@tool\ndef f(x: int = 1, *a, **k) -> dict:\n    r = {'status': 'ok', **k}\n    r[k] += g(x, y=2).h\n    for i in r if x else z: del r[i]\n    return [v for v in r] or not r\n";
        let tree = crate::syntax::parse(src);
        let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        let names: Vec<&str> =
            (1..=language.field_count()).filter_map(|id| language.field_name_for_id(u16::try_from(id).ok()?)).collect();
        assert!(names.len() > 20, "{names:?}");
        let mut found = 0;
        crate::syntax::for_each_node(tree.root_node(), |n| {
            for name in &names {
                assert_eq!(n.field(name), n.child_by_field_name(name), "{name} at {:?}", n.byte_range());
                found += usize::from(n.field(name).is_some());
            }
        });
        assert!(found > 30, "{found}");
        assert_eq!(tree.root_node().field("no such field"), None);
    }
    use super::*;
    use crate::syntax::parse;

    #[test]
    fn unserializable_values() {
        for (code, want) in [
            ("{1, 2}", Some("a set")),
            ("b'x'", Some("bytes")),
            ("[1, (x for x in y)]", Some("a generator")),
            ("{'a': lambda: 1}", Some("a lambda")),
            ("{**{'a': (x for x in y)}}", Some("a generator")),
            ("{**({'a': {1}})}", Some("a set")),
            ("{**f(lambda: 1)}", None),
            ("{'a': {b'k': 1}}", Some("a dict with a key json.dumps rejects")),
            ("{'a': lambda: 1, b'k': 1}", Some("a lambda")),
            ("{**{...: 1}}", Some("a dict with a key json.dumps rejects")),
            ("[{(1, 2): 0}, {1j: 0}]", Some("a dict with a key json.dumps rejects")),
            ("{1: 0, 2.5: 1, None: 2, True: 3, 'k': 4}", None),
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
