//! What the code around a tool-result dict says about it: whether it is
//! what a Strands tool returns. Facts here come from a whole-file parse,
//! asked for only when a fix's safety depends on them (see
//! [`FileContext`]), so the fast path keeps parsing candidate regions only.
//!
//! A Strands tool is a function decorated `@tool`, `@strands.tool` or
//! `@strands.tools.tool`, with or without call arguments; anything else
//! (`@mcp.tool`, a plain function) is not, and what cannot be told is
//! treated as "not": unknown makes a fix unsafe, never wrong.

use std::cell::OnceCell;
use std::ops::Range;

use tree_sitter::{Node, Tree};

use crate::syntax;
use crate::syntax::tree::unparenthesize;

/// Decorator spellings that make a function a Strands tool.
pub const TOOL_DECORATORS: [&str; 3] = ["tool", "strands.tool", "strands.tools.tool"];

/// A whole-file view of one source, parsed on first use.
pub struct FileContext<'s> {
    src: &'s str,
    tree: OnceCell<Tree>,
}

impl<'s> FileContext<'s> {
    /// A context for `src`; `tree`, when given, is a parse of the whole of
    /// `src` that can be reused.
    pub fn new(src: &'s str, tree: Option<Tree>) -> Self {
        let cell = OnceCell::new();
        if let Some(tree) = tree {
            let _ = cell.set(tree);
        }
        FileContext { src, tree: cell }
    }

    fn tree(&self) -> &Tree {
        self.tree.get_or_init(|| syntax::parse(self.src))
    }

    /// Whether the dict display at `dict` (file bytes) is the value of a
    /// `return` statement of a function decorated as a Strands tool, so that
    /// the SDK fills the result's `toolUseId` in itself.
    pub fn returned_by_strands_tool(&self, dict: Range<usize>) -> bool {
        let root = self.tree().root_node();
        let Some(node) = root.descendant_for_byte_range(dict.start, dict.end) else { return false };
        if node.kind() != "dictionary" || node.byte_range() != dict {
            return false;
        }
        returned_by_strands_tool(node, self.src)
    }
}

/// [`FileContext::returned_by_strands_tool`] for a node of a whole-file tree.
pub fn returned_by_strands_tool(dict: Node<'_>, src: &str) -> bool {
    let mut up = dict;
    while let Some(parent) = up.parent() {
        if parent.kind() != "parenthesized_expression" || unparenthesize(parent) != dict {
            break;
        }
        up = parent;
    }
    let Some(statement) = up.parent().filter(|p| p.kind() == "return_statement") else { return false };
    // The function the `return` belongs to: the nearest enclosing def (a
    // class body or lambda in between would make the return not this
    // function's, but tree-sitter puts `return` only in function bodies).
    let mut scope = statement.parent();
    while let Some(node) = scope {
        if node.kind() == "function_definition" {
            return is_strands_tool(node, src);
        }
        if matches!(node.kind(), "class_definition" | "lambda" | "module") {
            return false;
        }
        scope = node.parent();
    }
    false
}

/// Whether the function definition `def` carries a Strands tool decorator.
pub fn is_strands_tool(def: Node<'_>, src: &str) -> bool {
    let Some(decorated) = def.parent().filter(|p| p.kind() == "decorated_definition") else { return false };
    let mut cursor = decorated.walk();
    decorated.children(&mut cursor).filter(|c| c.kind() == "decorator").any(|d| {
        let Some(mut expr) = d.named_child(0) else { return false };
        if expr.kind() == "call" {
            match expr.child_by_field_name("function") {
                Some(function) => expr = function,
                None => return false,
            }
        }
        let name: String = src[expr.byte_range()].split_whitespace().collect();
        matches!(expr.kind(), "identifier" | "attribute") && TOOL_DECORATORS.contains(&name.as_str())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn returned(src: &str) -> bool {
        let at = src.find("{'status'").expect("a result in the test source");
        let tree = syntax::parse(src);
        let node = tree.root_node().descendant_for_byte_range(at, at + 1).unwrap().parent().unwrap();
        let ctx = FileContext::new(src, None);
        ctx.returned_by_strands_tool(node.byte_range())
    }

    #[test]
    fn only_a_decorated_tool_s_return_counts() {
        for (src, want) in [
            ("@tool\ndef f(x):\n    return {'status': 1, 'content': []}\n", true),
            ("@strands.tool\ndef f(x):\n    return ({'status': 1, 'content': []})\n", true),
            ("@strands.tools.tool(name='x')\nasync def f(x):\n    return {'status': 1, 'content': []}\n", true),
            ("@tool()\n@other\ndef f(x):\n    if x:\n        return {'status': 1, 'content': []}\n", true),
            ("@mcp.tool\ndef f(x):\n    return {'status': 1, 'content': []}\n", false),
            ("def f(x):\n    return {'status': 1, 'content': []}\n", false),
            ("@tool\ndef f(x):\n    r = {'status': 1, 'content': []}\n    return r\n", false),
            ("@tool\ndef f(x):\n    def g():\n        return {'status': 1, 'content': []}\n", false),
            ("@tool\ndef f(x):\n    return [{'status': 1, 'content': []}]\n", false),
            ("@tool\ndef f(x):\n    return g(lambda: {'status': 1, 'content': []})\n", false),
            ("r = {'status': 1, 'content': []}\n", false),
        ] {
            assert_eq!(returned(src), want, "{src}");
        }
    }
}
