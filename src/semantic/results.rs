//! Tool results that live in names: *result names* (a name every binding of
//! which, in its scope, is a tool-result dict display) and the *writes* that
//! add top-level keys to them after they are built (TS004). The definitions
//! are `docs/rules.md`'s.

use std::ops::Range;

use tree_sitter::Node;

use super::scope::{BindingKind, ScopeId, ScopeKind, SemanticModel};
use crate::contract::{Rules, tool_result_dict};
use crate::syntax::tree::{FieldChild, KindName};
use crate::syntax::tree::{constant_str, operand, unparenthesize};

/// A name whose every binding in `scope` is a tool-result dict display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultName {
    pub scope: ScopeId,
    pub name: String,
    /// The displays bound to it, in source order.
    pub displays: Vec<Range<usize>>,
}

/// What a write adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    /// A constant string key.
    Key(String),
    /// A computed key: its expression's text.
    ComputedKey(String),
    /// A mapping's keys (`update(m)`, `|= m`, `**m`): the mapping's text
    /// as written (with `**` if spread) and the expression's text.
    Mapping { written: String, expression: String },
}

/// One write into a result name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    pub name: String,
    pub added: Added,
    /// The finding's span (see `docs/rules.md`).
    pub span: Range<usize>,
    /// The display of the binding the write belongs to.
    pub dict: Range<usize>,
}

/// Whether `node` (parentheses removed) is a tool-result dict display.
fn is_shaped(node: Node<'_>, src: &str) -> bool {
    let node = unparenthesize(node);
    node.kind_name() == "dictionary" && tool_result_dict(node, src, 0, &Rules::CONTRACT).is_some()
}

/// Whether the augmented assignment whose target is the name at `at` is `|=`.
fn is_or_assign(root: Node<'_>, at: &Range<usize>, src: &str) -> bool {
    root.descendant_for_byte_range(at.start, at.end)
        .and_then(|n| n.parent())
        .filter(|p| p.kind_name() == "augmented_assignment")
        .and_then(|p| p.field("operator"))
        .is_some_and(|op| &src[op.byte_range()] == "|=")
}

/// The result names of the module and of each function.
pub fn result_names(model: &SemanticModel, root: Node<'_>, src: &str) -> Vec<ResultName> {
    let mut names: Vec<(ScopeId, &str)> = model
        .bindings
        .iter()
        .filter(|b| matches!(model.scopes[b.scope].kind, ScopeKind::Module | ScopeKind::Function))
        .map(|b| (b.scope, b.name.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    let node_at = |r: &Range<usize>| root.descendant_for_byte_range(r.start, r.end);
    names
        .into_iter()
        .filter_map(|(scope, name)| {
            let mut displays = Vec::new();
            for b in model.bindings_in(scope, name).map(|i| &model.bindings[i]) {
                match b.kind {
                    BindingKind::AugmentedAssignment if is_or_assign(root, &b.at, src) => {}
                    BindingKind::Assignment => {
                        let value = b.value.as_ref().and_then(node_at)?;
                        if !is_shaped(value, src) {
                            return None;
                        }
                        displays.push(unparenthesize(value).byte_range());
                    }
                    _ => return None,
                }
            }
            displays.sort_by_key(|r| r.start);
            displays.dedup();
            (!displays.is_empty()).then(|| ResultName { scope, name: name.to_owned(), displays })
        })
        .collect()
}

/// How a key expression reads: a constant string, another constant, or
/// computed (as Python's `ast` sees it: `-1` and f-strings are computed).
enum KeyClass {
    Str(String),
    OtherConstant,
    Computed,
}

fn classify_key(node: Node<'_>, src: &str) -> KeyClass {
    let node = unparenthesize(node);
    if let Some(s) = constant_str(node, src) {
        return KeyClass::Str(s);
    }
    match node.kind_name() {
        "integer" | "float" | "true" | "false" | "none" | "ellipsis" => KeyClass::OtherConstant,
        // Bytes (a str constant was read above); an f-string has interpolations
        // or an `f` prefix, and is computed.
        "string" | "concatenated_string" => {
            let text = &src[node.byte_range()];
            let prefix_of = |t: &str| t[..t.find(['\'', '"']).unwrap_or(0)].to_ascii_lowercase();
            let parts: Vec<&str> = match node.kind_name() {
                "string" => vec![text],
                _ => {
                    let mut cursor = node.walk();
                    node.named_children(&mut cursor)
                        .filter(|c| c.kind_name() == "string")
                        .map(|c| &src[c.byte_range()])
                        .collect()
                }
            };
            if parts.iter().all(|p| prefix_of(p).contains('b')) { KeyClass::OtherConstant } else { KeyClass::Computed }
        }
        _ => KeyClass::Computed,
    }
}

/// The writes into every result name of the module.
pub fn writes(model: &SemanticModel, root: Node<'_>, src: &str) -> Vec<Write> {
    let mut out = Vec::new();
    for result in result_names(model, root, src) {
        for reference in model.references_to(result.scope, &result.name) {
            if reference.scope != result.scope {
                continue;
            }
            let Some(node) = root.descendant_for_byte_range(reference.at.start, reference.at.end) else { continue };
            let dict = result
                .displays
                .iter()
                .rev()
                .find(|d| d.start < reference.at.start)
                .unwrap_or(&result.displays[0])
                .clone();
            let mut push = |added: Added, span: Range<usize>| {
                out.push(Write { name: result.name.clone(), added, span, dict: dict.clone() })
            };
            writes_at(node, src, &mut push);
        }
    }
    out.sort_by_key(|w| w.span.start);
    out
}

/// The writes a use of a result name (`node`) makes, if it is one.
fn writes_at(node: Node<'_>, src: &str, push: &mut impl FnMut(Added, Range<usize>)) {
    let Some(parent) = node.parent() else { return };
    let text = |n: Node<'_>| src[n.byte_range()].to_owned();
    let key_write =
        |key: Node<'_>, span: Range<usize>, push: &mut dyn FnMut(Added, Range<usize>)| match classify_key(key, src) {
            KeyClass::Str(k) => push(Added::Key(k), span),
            KeyClass::OtherConstant => {}
            KeyClass::Computed => push(Added::ComputedKey(text(key)), span),
        };
    match parent.kind_name() {
        // N[K] = v, as a target of a plain assignment.
        "subscript" if parent.field("value") == Some(node) => {
            let Some(assignment) = parent.parent().filter(|a| a.kind_name() == "assignment") else { return };
            if assignment.field("left") != Some(parent) || assignment.field("type").is_some() {
                return;
            }
            let mut statement = assignment;
            while let Some(up) = statement.parent().filter(|u| u.kind_name() == "assignment") {
                statement = up;
            }
            let mut cursor = parent.walk();
            let keys: Vec<Node<'_>> = parent.children_by_field_name("subscript", &mut cursor).collect();
            match keys.as_slice() {
                [key] => key_write(*key, statement.byte_range(), push),
                _ => push(
                    Added::ComputedKey(src[keys[0].start_byte()..keys[keys.len() - 1].end_byte()].to_owned()),
                    statement.byte_range(),
                ),
            }
        }
        // N.update(...) / N.setdefault(K, ...)
        "attribute" if parent.field("object") == Some(node) => {
            let Some(call) = parent.parent().filter(|c| c.kind_name() == "call" && c.field("function") == Some(parent))
            else {
                return;
            };
            let Some(args) = call.field("arguments").filter(|a| a.kind_name() == "argument_list") else {
                return;
            };
            let mut cursor = args.walk();
            let args: Vec<Node<'_>> = args.named_children(&mut cursor).filter(|a| a.kind_name() != "comment").collect();
            match parent.field("attribute").map(|a| &src[a.byte_range()]) {
                Some("update") => {
                    for arg in args {
                        match arg.kind_name() {
                            "keyword_argument" => {
                                if let Some(name) = arg.field("name") {
                                    push(Added::Key(text(name)), arg.byte_range());
                                }
                            }
                            "dictionary_splat" => mapping(arg, src, push),
                            _ if unparenthesize(arg).kind_name() == "dictionary" => {
                                display_writes(unparenthesize(arg), src, push)
                            }
                            _ => push(Added::Mapping { written: text(arg), expression: text(arg) }, arg.byte_range()),
                        }
                    }
                }
                Some("setdefault") => {
                    if let Some(key) = args
                        .first()
                        .filter(|a| !matches!(a.kind_name(), "keyword_argument" | "list_splat" | "dictionary_splat"))
                    {
                        key_write(*key, call.byte_range(), push);
                    }
                }
                _ => {}
            }
        }
        // N |= E
        "augmented_assignment" if parent.field("left") == Some(node) => {
            let is_or = parent.field("operator").is_some_and(|op| &src[op.byte_range()] == "|=");
            let Some(right) = parent.field("right").filter(|_| is_or) else { return };
            if unparenthesize(right).kind_name() == "dictionary" {
                display_writes(unparenthesize(right), src, push);
            } else {
                push(Added::Mapping { written: text(right), expression: text(right) }, right.byte_range());
            }
        }
        _ => {}
    }
}

/// `**m` as a write: the mapping `m`.
fn mapping(splat: Node<'_>, src: &str, push: &mut impl FnMut(Added, Range<usize>)) {
    let expression = operand(splat).map(|e| src[e.byte_range()].to_owned()).unwrap_or_default();
    push(Added::Mapping { written: src[splat.byte_range()].to_owned(), expression }, splat.byte_range());
}

/// The writes of the entries of a dict display passed to `update` or `|=`.
pub(crate) fn display_writes(display: Node<'_>, src: &str, push: &mut impl FnMut(Added, Range<usize>)) {
    let mut cursor = display.walk();
    for entry in display.named_children(&mut cursor) {
        match entry.kind_name() {
            "pair" => {
                let Some(key) = entry.field("key") else { continue };
                match classify_key(key, src) {
                    KeyClass::Str(k) => push(Added::Key(k), entry.byte_range()),
                    KeyClass::OtherConstant => {}
                    KeyClass::Computed => {
                        push(Added::ComputedKey(src[key.byte_range()].to_owned()), entry.byte_range())
                    }
                }
            }
            "dictionary_splat" => mapping(entry, src, push),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse;

    fn found(src: &str) -> Vec<(String, String)> {
        let tree = parse(src);
        let model = SemanticModel::build(tree.root_node(), src);
        writes(&model, tree.root_node(), src)
            .into_iter()
            .map(|w| {
                let what = match w.added {
                    Added::Key(k) => k,
                    Added::ComputedKey(e) => format!("[{e}]"),
                    Added::Mapping { written, .. } => format!("<{written}>"),
                };
                (what, src[w.span].to_owned())
            })
            .collect()
    }

    #[test]
    fn every_write_form_is_found() {
        let src = "def shot(png, extra, name, kw):\n    r = {'status': 'success', 'content': []}\n    \
                   r['base64'] = png\n    r[name] = 1\n    r[1] = 2\n    r.update({'a': 1, **extra, name: 2})\n    \
                   r.update(b=2, **kw)\n    r.update(extra)\n    r.setdefault('c', 3)\n    r |= {'d': 4}\n    \
                   r |= extra\n    a = r['e'] = 5\n    r['f'] += 1\n    return r\n";
        assert_eq!(
            found(src),
            [
                ("base64".into(), "r['base64'] = png".into()),
                ("[name]".into(), "r[name] = 1".into()),
                ("a".into(), "'a': 1".into()),
                ("<**extra>".into(), "**extra".into()),
                ("[name]".into(), "name: 2".into()),
                ("b".into(), "b=2".into()),
                ("<**kw>".into(), "**kw".into()),
                ("<extra>".into(), "extra".into()),
                ("c".into(), "r.setdefault('c', 3)".into()),
                ("d".into(), "'d': 4".into()),
                ("<extra>".into(), "extra".into()),
                ("e".into(), "a = r['e'] = 5".into()),
            ]
        );
    }

    #[test]
    fn only_result_names_in_their_own_scope_count() {
        // Rebound to something else, a parameter, a write in a nested
        // function, a name bound by unpacking: none is a result name write.
        let src = "def f(p):\n    r = {'status': 1, 'content': []}\n    r = other()\n    r['x'] = 1\n    \
                   p['y'] = 1\n    q = {'status': 1, 'content': []}\n    def g():\n        q['z'] = 1\n    \
                   s, t = {'status': 1, 'content': []}, 2\n    s['w'] = 1\n\
                   m = {'status': 1, 'content': []}\nm['top'] = 1\n";
        assert_eq!(found(src), [("top".into(), "m['top'] = 1".into())]);
    }
}
