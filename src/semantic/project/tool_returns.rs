//! TS005's project pass (`docs/rules.md`, "TS005 not a tool result"): the
//! dict displays a project's Strands tools return — directly, through a
//! name, or through calls of project functions resolved as builder calls
//! are — that carry `"status"` or `"content"` but not both. The SDK
//! rewraps those as one success text block.
//!
//! Only files whose bytes name a tool decorator are parsed for tools; the
//! functions their returns call are parsed on demand, with the modules an
//! import chain passes through (for their module-level names).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;
use std::path::Path;

use rayon::prelude::*;
use tree_sitter::{Node, Tree};

use super::reads::{definitions, return_statements_at};
use super::{Bound, BuilderKey, Callee, Project, callee_of, module_bindings};
use crate::semantic::scope::{Resolution, SemanticModel};
use crate::syntax;
use crate::syntax::tree::{constant_str, unparenthesize};

/// A display a tool returns that is not a tool result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HalfShaped {
    pub module: usize,
    /// The display, `{` to `}`.
    pub range: Range<usize>,
    /// `"content"` or `"status"`: the key it lacks.
    pub missing: &'static str,
    /// Its status, when a constant string.
    pub status: Option<String>,
    /// The first tool (by path, then position) that returns it.
    pub tool: String,
}

/// One module, parsed whole, with its model.
struct Parsed {
    text: String,
    tree: Tree,
    model: SemanticModel,
}

impl Parsed {
    fn of(text: String) -> Option<Parsed> {
        let tree = syntax::parse(&text);
        // A file with Python 2 syntax holds no tool and returns nothing.
        if syntax::legacy::may_hold(text.as_bytes())
            && syntax::legacy::first_legacy_node(tree.root_node(), &text).is_some()
        {
            return None;
        }
        let model = SemanticModel::build(tree.root_node(), &text);
        Some(Parsed { text, tree, model })
    }
}

/// What a function returns, as far as TS005 looks: its returned displays
/// (ranges) and the project functions it returns calls of.
#[derive(Debug, Default, Clone)]
struct Returns {
    displays: Vec<Range<usize>>,
    calls: Vec<Callee>,
}

impl Project {
    /// The half-shaped displays the project's tools return; a tool is a
    /// function decorated by one of `decorators`. `read` reads a module.
    pub fn half_shaped(
        &mut self,
        decorators: &[&str],
        read: impl Fn(&Path) -> Option<String> + Sync,
    ) -> Vec<HalfShaped> {
        // Only a file with a decorator line naming a tool decorator is parsed.
        let candidates: Vec<(usize, Parsed)> = (0..self.modules.len())
            .into_par_iter()
            .filter_map(|m| {
                let text = read(&self.modules[m].path)?;
                has_tool_decorator(&text, decorators).then(|| Parsed::of(text)).flatten().map(|p| (m, p))
            })
            .collect();
        let mut parsed: HashMap<usize, Option<Parsed>> = HashMap::new();
        // Each tool: where it stands, its name, what it returns.
        let mut tools: Vec<(usize, usize, String, Returns)> = Vec::new();
        for (m, p) in candidates {
            let root = p.tree.root_node();
            syntax::for_each_node(root, |node| {
                if node.kind() == "function_definition" && crate::semantic::decorated_as(node, &p.text, decorators) {
                    let name = node.child_by_field_name("name").map_or("", |n| &p.text[n.byte_range()]);
                    tools.push((m, node.start_byte(), name.to_owned(), returns_of(node, &p)));
                }
            });
            parsed.insert(m, Some(p));
        }
        if tools.is_empty() {
            return Vec::new();
        }
        tools.sort_by(|a, b| (&self.modules[a.0].path, a.1).cmp(&(&self.modules[b.0].path, b.1)));
        let mut whole: HashSet<usize> = HashSet::new();
        let mut functions: HashMap<BuilderKey, Option<Returns>> = HashMap::new();
        let mut found: BTreeMap<(usize, usize), HalfShaped> = BTreeMap::new();
        for (m, _, tool, returns) in &tools {
            let mut seen: HashSet<BuilderKey> = HashSet::new();
            let mut work: Vec<(usize, Returns)> = vec![(*m, returns.clone())];
            while let Some((m, returns)) = work.pop() {
                for display in &returns.displays {
                    if found.contains_key(&(m, display.start)) {
                        continue;
                    }
                    let Some(Some(p)) = parsed.get(&m) else { continue };
                    if let Some(half) = half_shaped(m, display, p, tool) {
                        found.insert((m, display.start), half);
                    }
                }
                for callee in &returns.calls {
                    let Some(key) = self.resolve_loading(m, callee, &mut parsed, &mut whole, &read) else { continue };
                    if !seen.insert(key.clone()) {
                        continue;
                    }
                    let returns = match functions.get(&key) {
                        Some(r) => r.clone(),
                        None => {
                            let r = self.load(key.0, &mut parsed, &mut whole, &read).and_then(|p| {
                                let root = p.tree.root_node();
                                let (_, def) = definitions(root, &p.text).into_iter().find(|(class, def)| {
                                    *class == key.1
                                        && def
                                            .child_by_field_name("name")
                                            .is_some_and(|n| p.text[n.byte_range()] == key.2)
                                })?;
                                Some(returns_of(def, p))
                            });
                            functions.insert(key.clone(), r.clone());
                            r
                        }
                    };
                    if let Some(returns) = returns {
                        work.push((key.0, returns));
                    }
                }
            }
        }
        found.into_values().collect()
    }

    /// Module `m`, parsed (once); its module-level names are learned from
    /// that whole parse.
    fn load<'p>(
        &mut self,
        m: usize,
        parsed: &'p mut HashMap<usize, Option<Parsed>>,
        whole: &mut HashSet<usize>,
        read: &impl Fn(&Path) -> Option<String>,
    ) -> Option<&'p Parsed> {
        let path = &self.modules[m].path;
        let p = parsed.entry(m).or_insert_with(|| read(path).and_then(Parsed::of)).as_ref()?;
        if whole.insert(m) {
            let facts = module_bindings(p.tree.root_node(), &p.text, &p.model);
            match &mut self.modules[m].facts {
                Some(known) => known.merge_bindings(facts, true),
                none => *none = Some(facts),
            }
        }
        Some(p)
    }

    /// The project function `callee` (called in module `m`) is, learning
    /// the module-level names of each module its import chain passes.
    fn resolve_loading(
        &mut self,
        m: usize,
        callee: &Callee,
        parsed: &mut HashMap<usize, Option<Parsed>>,
        whole: &mut HashSet<usize>,
        read: &impl Fn(&Path) -> Option<String>,
    ) -> Option<BuilderKey> {
        let (first, then) = match callee {
            Callee::Name(name) => (name.as_str(), None),
            Callee::Attribute(base, name) => (base.as_str(), Some(name.as_str())),
            Callee::Method { .. } | Callee::Instance { .. } => return self.resolve_function(m, callee),
        };
        let end = self.follow_loading(m, first, parsed, whole, read);
        if let (Some(name), Some(module)) = (then, end) {
            self.follow_loading(module, name, parsed, whole, read);
        }
        self.resolve_function(m, callee)
    }

    /// Follows the module-level name `name` of module `m` through `from`
    /// imports, loading each module on the way; returns the module an
    /// `import` of it names, if it names one.
    fn follow_loading(
        &mut self,
        mut m: usize,
        name: &str,
        parsed: &mut HashMap<usize, Option<Parsed>>,
        whole: &mut HashSet<usize>,
        read: &impl Fn(&Path) -> Option<String>,
    ) -> Option<usize> {
        let mut name = name.to_owned();
        for _ in 0..32 {
            self.load(m, parsed, whole, read)?;
            let bound = self.modules[m].facts.as_ref()?.bindings.get(&name)?.clone();
            match bound {
                Bound::From { level, module, name: imported } => {
                    // As `export` reads it: a name the module binds, or
                    // else a submodule (`from pkg import mod`).
                    if let Some(source) = self.resolve_module(m, level, &module) {
                        self.load(source, parsed, whole, read);
                        if self.modules[source].facts.as_ref().is_some_and(|f| f.bindings.contains_key(&imported)) {
                            m = source;
                            name = imported;
                            continue;
                        }
                    }
                    let submodule = self.resolve_module(m, level, &super::join(&module, &imported))?;
                    self.load(submodule, parsed, whole, read);
                    return Some(submodule);
                }
                Bound::Import { module } => {
                    let target = self.resolve_module(m, 0, &module)?;
                    self.load(target, parsed, whole, read);
                    return Some(target);
                }
                _ => return None,
            }
        }
        None
    }
}

/// Whether `text` has a line that is, after its indentation, `@` and one
/// of `decorators` (white space aside), called or not: a byte look that a
/// tool's file always passes (a decorator split over lines aside).
fn has_tool_decorator(text: &str, decorators: &[&str]) -> bool {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'@', bytes).any(|at| {
        let line_start = bytes[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if !bytes[line_start..at].iter().all(|b| matches!(b, b' ' | b'\t' | b'\x0c')) {
            return false;
        }
        let rest = &text[at + 1..];
        let end = rest.find(['(', '\n', '\r', '#']).unwrap_or(rest.len());
        let name: String = rest[..end].split_whitespace().collect();
        decorators.contains(&name.as_str())
    })
}

/// What the function `def` (of the parsed module `p`) returns (cases 1–3).
fn returns_of(def: Node<'_>, p: &Parsed) -> Returns {
    let mut out = Returns::default();
    // The function's own scope: the one its `def` opens.
    let Some(scope) = p
        .model
        .scopes
        .iter()
        .rposition(|s| s.kind == crate::semantic::scope::ScopeKind::Function && s.range.start == def.start_byte())
    else {
        return out;
    };
    for (_, value) in return_statements_at(def) {
        let Some(mut value) = value.map(unparenthesize) else { continue };
        // `return await helper()`: an async tool awaiting its helper.
        if value.kind() == "await" {
            match value.named_child(0) {
                Some(awaited) => value = unparenthesize(awaited),
                None => continue,
            }
        }
        match value.kind() {
            "dictionary" => out.displays.push(value.byte_range()),
            "identifier" => out.displays.extend(named_displays(value, scope, p)),
            "call" => out.calls.extend(callee_of(value, &p.text, &p.model)),
            _ => {}
        }
    }
    out
}

/// The displays a returned name `name` (in the function of scope `scope`)
/// stands for (case 2): every binding of it there is a plain `N = {...}`,
/// and every other use only returns it, reads a subscript of it or calls
/// its `get`.
fn named_displays(name: Node<'_>, scope: usize, p: &Parsed) -> Vec<Range<usize>> {
    let (text, model, root) = (&p.text, &p.model, p.tree.root_node());
    let n = &text[name.byte_range()];
    let Resolution::Bindings { scope: owner, bindings } = model.resolve(n, model.scope_at(name.start_byte())) else {
        return Vec::new();
    };
    if owner != scope {
        return Vec::new();
    }
    let mut displays = Vec::new();
    for b in bindings.iter().map(|&b| &model.bindings[b]) {
        let display =
            crate::semantic::plain_assigned_value(root, b).filter(|v| v.kind() == "dictionary").map(|v| v.byte_range());
        match display {
            Some(d) => displays.push(d),
            None => return Vec::new(),
        }
    }
    for r in model.references_to(owner, n) {
        let Some(node) = root.descendant_for_byte_range(r.at.start, r.at.end) else { return Vec::new() };
        if !only_returned_or_read(node, text) {
            return Vec::new();
        }
    }
    displays
}

/// Whether the use `node` of a name is the value of a `return`, the object
/// of a load subscript, or the object of a call of its `get`.
fn only_returned_or_read(mut node: Node<'_>, text: &str) -> bool {
    // `(N)["k"]`, `return (N)`: parentheses seen through.
    while let Some(up) = node.parent().filter(|p| p.kind() == "parenthesized_expression") {
        node = up;
    }
    let Some(parent) = node.parent() else { return false };
    match parent.kind() {
        "return_statement" => true,
        "subscript" if parent.child_by_field_name("value") == Some(node) => !is_target(parent),
        "attribute" if parent.child_by_field_name("object") == Some(node) => {
            parent.child_by_field_name("attribute").is_some_and(|a| &text[a.byte_range()] == "get")
                && parent
                    .parent()
                    .is_some_and(|c| c.kind() == "call" && c.child_by_field_name("function") == Some(parent))
        }
        _ => false,
    }
}

/// Whether `node` is written to: an assignment's or `for`'s target (inside
/// an unpacking too), an augmented assignment's, or a `del`'s.
fn is_target(mut node: Node<'_>) -> bool {
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

/// The display at `range` of module `m`, if half-shaped: no spread, and
/// exactly one of `"status"` and `"content"` among its constant keys.
fn half_shaped(m: usize, range: &Range<usize>, p: &Parsed, tool: &str) -> Option<HalfShaped> {
    let dict = p.tree.root_node().descendant_for_byte_range(range.start, range.end)?;
    if dict.kind() != "dictionary" || dict.has_error() {
        return None;
    }
    let mut cursor = dict.walk();
    let (mut status, mut content, mut value) = (false, false, None);
    for entry in dict.named_children(&mut cursor) {
        match entry.kind() {
            "dictionary_splat" => return None,
            "pair" => {
                let key = entry.child_by_field_name("key").and_then(|k| constant_str(k, &p.text));
                match key.as_deref() {
                    Some("status") => {
                        status = true;
                        value = value.or_else(|| entry.child_by_field_name("value"));
                    }
                    Some("content") => content = true,
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let missing = match (status, content) {
        (true, false) => "content",
        (false, true) => "status",
        _ => return None,
    };
    Some(HalfShaped {
        module: m,
        range: range.clone(),
        missing,
        status: value.and_then(|v| constant_str(v, &p.text)),
        tool: tool.to_owned(),
    })
}
