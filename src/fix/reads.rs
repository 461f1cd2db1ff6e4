//! The edits that rewrite reads of moved keys (`docs/rules.md`, "Reads of
//! moved keys"): each read looks its key up in the json block its fix puts
//! it in. Without a configured accessor, the receiver gains the
//! self-contained lookup `["content"][-1]["json"]`; with `json-accessor =
//! "MODULE:NAME"` the receiver is wrapped, `NAME(r)`, and the file imports
//! `NAME` from `MODULE` once, after its own imports. Pure: text in, edits
//! out; which reads to rewrite is the project's to say.

use std::ops::Range;

use tree_sitter::Node;

use crate::diagnostics::Edit;
use crate::semantic::scope::{BindingKind, Resolution, SemanticModel};
use crate::syntax;
use crate::syntax::tree::{FieldChild, KindName};

/// A read to rewrite: its receiver as written, and the index of the
/// content block whose json holds the key (`-1`: the last block).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRewrite {
    pub receiver: Range<usize>,
    pub index: i64,
    /// The quote character of the read's key, for the keys it gains.
    pub quote: char,
}

impl ReadRewrite {
    /// The self-contained lookup inserted after the receiver.
    pub fn lookup(&self) -> String {
        let q = self.quote;
        format!("[{q}content{q}][{}][{q}json{q}]", self.index)
    }
}

/// A project's own accessor of the json payload (`json-accessor =
/// "MODULE:NAME"`): `NAME(result)` must return `result["content"][-1]["json"]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonAccessor {
    pub module: String,
    pub name: String,
}

impl std::str::FromStr for JsonAccessor {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let identifier = |t: &str| {
            let mut chars = t.chars();
            chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
                && chars.all(|c| c.is_alphanumeric() || c == '_')
        };
        match s.split_once(':') {
            Some((module, name)) if module.split('.').all(identifier) && identifier(name) => {
                Ok(JsonAccessor { module: module.to_owned(), name: name.to_owned() })
            }
            _ => Err(format!("json-accessor must be \"module.path:function\", not {s:?}")),
        }
    }
}

/// The edits of `rewrites` in `src`. A read at a block other than the last,
/// or where `NAME` means something else, keeps the self-contained lookup.
pub fn read_edits(src: &str, rewrites: &[ReadRewrite], accessor: Option<&JsonAccessor>) -> Vec<Edit> {
    let lookup = |r: &ReadRewrite| Edit { range: r.receiver.end..r.receiver.end, replacement: r.lookup() };
    let Some(accessor) = accessor.filter(|_| rewrites.iter().any(|r| r.index == -1)) else {
        return rewrites.iter().map(lookup).collect();
    };
    let tree = syntax::parse(src);
    let root = tree.root_node();
    let model = SemanticModel::of(&tree, src, &[]);
    let imported = imports_accessor(root, src, &model, accessor);
    let mut edits = Vec::new();
    let mut wrapped = false;
    for r in rewrites {
        // `NAME` must mean the accessor where the read stands: imported
        // already, or unbound (the import added below binds it).
        let means_it = match model.resolve(&accessor.name, model.scope_at(r.receiver.start)) {
            Resolution::Builtin => !imported,
            Resolution::Bindings { scope: 0, .. } => imported,
            _ => false,
        };
        if r.index != -1 || !means_it {
            edits.push(lookup(r));
            continue;
        }
        wrapped = true;
        edits.push(Edit { range: r.receiver.start..r.receiver.start, replacement: format!("{}(", accessor.name) });
        edits.push(Edit { range: r.receiver.end..r.receiver.end, replacement: ")".into() });
    }
    if wrapped && !imported {
        edits.push(import_edit(root, src, accessor));
    }
    edits
}

/// Whether every binding of the accessor's name in the module is
/// `from MODULE import NAME` (and there is one).
fn imports_accessor(root: Node<'_>, src: &str, model: &SemanticModel, accessor: &JsonAccessor) -> bool {
    let bindings: Vec<_> = model.bindings.iter().filter(|b| b.scope == 0 && b.name == accessor.name).collect();
    !bindings.is_empty()
        && bindings.iter().all(|b| {
            let Some(name) = root.descendant_for_byte_range(b.at.start, b.at.end) else { return false };
            let statement =
                std::iter::successors(Some(name), |n| n.parent()).find(|n| n.kind_name() == "import_from_statement");
            let aliased = name.parent().is_some_and(|p| p.kind_name() == "aliased_import");
            b.kind == BindingKind::FromImport
                && !aliased
                && statement
                    .and_then(|s| s.field("module_name"))
                    .is_some_and(|m| src[m.byte_range()].split_whitespace().collect::<String>() == accessor.module)
        })
}

/// The import of the accessor: on the line after the file's last import
/// among its leading statements (its docstring, comments and imports), or
/// after its docstring, or after its leading comments (a shebang, an
/// encoding line, a licence header).
fn import_edit(root: Node<'_>, src: &str, accessor: &JsonAccessor) -> Edit {
    let newline = if src.contains("\r\n") { "\r\n" } else { "\n" };
    let line = format!("from {} import {}{newline}", accessor.module, accessor.name);
    let mut cursor = root.walk();
    let mut after: Option<usize> = None;
    for (i, statement) in root.named_children(&mut cursor).enumerate() {
        match statement.kind_name() {
            "import_statement" | "import_from_statement" | "future_import_statement" => {
                after = Some(statement.end_byte())
            }
            "comment" => {}
            "expression_statement" if i == 0 && statement.named_child(0).is_some_and(|s| s.kind_name() == "string") => {
                after = Some(statement.end_byte());
            }
            _ => break,
        }
    }
    let at = match after {
        Some(end) => {
            let line_end = crate::fix::layout::line_end(src, end);
            line_end + crate::fix::layout::newline_len(src, line_end)
        }
        None => {
            // After the leading comment lines.
            let mut at = 0;
            while src[at..].starts_with('#') {
                let end = crate::fix::layout::line_end(src, at);
                at = end + crate::fix::layout::newline_len(src, end);
            }
            at
        }
    };
    // A last line without a newline gets one first.
    let replacement =
        if at == src.len() && !src.is_empty() && !src.ends_with('\n') { format!("{newline}{line}") } else { line };
    Edit { range: at..at, replacement }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `src` with the reads at `reads` rewritten: each the receiver
    /// starting where `needle` first stands, `len` bytes long.
    fn rewrite(src: &str, reads: &[(&str, usize, i64)], accessor: Option<&str>) -> String {
        let rewrites: Vec<ReadRewrite> = reads
            .iter()
            .map(|(needle, len, index)| {
                let at = src.find(needle).unwrap();
                ReadRewrite { receiver: at..at + len, index: *index, quote: '"' }
            })
            .collect();
        let accessor: Option<JsonAccessor> = accessor.map(|a| a.parse().unwrap());
        crate::fix::apply_edits(src, &read_edits(src, &rewrites, accessor.as_ref()))
    }

    #[test]
    fn the_self_contained_lookup_follows_the_receiver() {
        let src = "r = f()\nassert r['k'] == 1\n";
        let out = rewrite(src, &[("r['k']", 1, -1)], None);
        assert_eq!(out, "r = f()\nassert r[\"content\"][-1][\"json\"]['k'] == 1\n");
    }

    #[test]
    fn an_accessor_wraps_the_receiver_and_is_imported_once_after_the_imports() {
        let src = "\"\"\"Doc.\"\"\"\nimport os\nfrom x import f\n\n\ndef test():\n    assert f()['a'] and g()['b']\n";
        let out = rewrite(src, &[("f()[", 3, -1), ("g()", 3, -1)], Some("tests.support:tool_json"));
        assert_eq!(
            out,
            "\"\"\"Doc.\"\"\"\nimport os\nfrom x import f\nfrom tests.support import tool_json\n\n\ndef test():\n    assert tool_json(f())['a'] and tool_json(g())['b']\n"
        );
        // Run again on its own output with the import there: no second one.
        let again = rewrite(&out, &[("f())", 3, -1)], Some("tests.support:tool_json"));
        assert_eq!(again.matches("import tool_json").count(), 1, "{again}");
    }

    #[test]
    fn the_lookup_stays_where_the_accessor_cannot_serve() {
        // A block other than the last.
        let out = rewrite("x = r['a']\n", &[("r[", 1, 1)], Some("m:tool_json"));
        assert_eq!(out, "x = r[\"content\"][1][\"json\"]['a']\n");
        // A name that means something else there.
        let out = rewrite("tool_json = 1\nx = r['a']\n", &[("r[", 1, -1)], Some("m:tool_json"));
        assert_eq!(out, "tool_json = 1\nx = r[\"content\"][-1][\"json\"]['a']\n");
    }

    #[test]
    fn a_file_without_imports_gets_it_after_its_leading_comments() {
        let out = rewrite("#!/usr/bin/env python\n# coding: utf-8\nx = r['a']", &[("r[", 1, -1)], Some("a.b:get"));
        assert_eq!(out, "#!/usr/bin/env python\n# coding: utf-8\nfrom a.b import get\nx = get(r)['a']");
    }

    #[test]
    fn accessors_are_validated() {
        assert!("a.b:c".parse::<JsonAccessor>().is_ok());
        for bad in ["a.b", "a.:c", ":c", "a:b:c", "a-b:c", "a:1c"] {
            assert!(bad.parse::<JsonAccessor>().is_err(), "{bad}");
        }
    }
}
