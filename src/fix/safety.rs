//! Safety facts about expressions: may evaluating them have side effects,
//! which names do they bind (walrus) or read, and is a value evidently not
//! JSON-serializable. Pure functions over tree-sitter nodes.

use std::collections::BTreeSet;

use tree_sitter::Node;

use crate::syntax::tree::node_text;
use crate::syntax::tree::{FieldChild, KindName};

/// Node kinds whose evaluation may have effects (the definition:
/// calls, `await`, `yield`, walrus).
const EFFECT_KINDS: [&str; 4] = ["call", "await", "yield", "named_expression"];

/// Visits `node` and its descendants, not descending into lambda bodies
/// (a lambda display evaluates only its parameters' defaults). Iterative: deep nesting
/// cannot overflow the stack.
fn for_each_evaluated<'t>(node: Node<'t>, mut visit: impl FnMut(Node<'t>)) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        visit(n);
        if n.kind_name() == "lambda" {
            // Only the parameters' default values are evaluated now.
            if let Some(params) = n.field("parameters") {
                let mut cursor = params.walk();
                stack.extend(params.named_children(&mut cursor).filter_map(|p| p.field("value")));
            }
            continue;
        }
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
    }
}

/// Whether an identifier node names a variable (not an attribute after a
/// dot, nor a keyword argument's name).
fn names_variable(n: Node<'_>) -> bool {
    let Some(parent) = n.parent() else { return true };
    let field = match parent.kind_name() {
        "attribute" => "attribute",
        "keyword_argument" => "name",
        _ => return true,
    };
    parent.field(field) != Some(n)
}

/// Facts about one evaluated piece of a dict display.
#[derive(Debug, Default, Clone)]
pub struct ExprFacts {
    /// Evaluating it may have side effects.
    pub effects: bool,
    /// Names bound by walrus expressions in it.
    pub binds: BTreeSet<String>,
    /// Names it reads.
    pub reads: BTreeSet<String>,
}

impl ExprFacts {
    pub fn of(node: Node<'_>, piece_src: &str) -> Self {
        let mut facts = ExprFacts::default();
        for_each_evaluated(node, |n| {
            let kind = n.kind_name();
            if EFFECT_KINDS.contains(&kind) {
                facts.effects = true;
            }
            if kind == "named_expression"
                && let Some(name) = n.field("name")
            {
                facts.binds.insert(node_text(name, piece_src).to_owned());
            } else if kind == "identifier" && names_variable(n) {
                facts.reads.insert(node_text(n, piece_src).to_owned());
            }
        });
        facts
    }

    /// A name one binds and the other reads, if any.
    pub fn binding_conflict(&self, other: &ExprFacts) -> Option<String> {
        self.binds.intersection(&other.reads).chain(other.binds.intersection(&self.reads)).next().cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse;

    fn expr(src: &str) -> (tree_sitter::Tree, String) {
        (parse(src), src.to_owned())
    }

    fn first_expr(tree: &tree_sitter::Tree) -> Node<'_> {
        tree.root_node().named_child(0).unwrap().named_child(0).unwrap()
    }

    #[test]
    fn effects_and_bindings() {
        let (tree, src) = expr("[f(x), (n := 2), lambda: g(), y.z]");
        let facts = ExprFacts::of(first_expr(&tree), &src);
        assert!(facts.effects);
        assert!(facts.binds.contains("n"));
        assert!(facts.reads.contains("x") && facts.reads.contains("y"));
        let (tree, src) = expr("(lambda: g(), a[0], b.c, h(k=1))");
        let facts = ExprFacts::of(first_expr(&tree), &src);
        assert!(facts.effects, "h() is a call");
        assert_eq!(facts.reads.iter().map(String::as_str).collect::<Vec<_>>(), ["a", "b", "h"]);
        let (tree, src) = expr("(lambda x=f(): g(x))");
        let facts = ExprFacts::of(first_expr(&tree), &src);
        assert!(facts.effects, "a default is evaluated when the lambda is made");
        assert_eq!(facts.reads.iter().map(String::as_str).collect::<Vec<_>>(), ["f"]);
    }
}
