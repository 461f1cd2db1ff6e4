//! Scopes, bindings and references of one Python module, built from a
//! tree-sitter tree, as in ruff's `ruff_python_semantic`.
//!
//! A scope is the module, a function, a lambda, a class body or a
//! comprehension. A binding is a place that gives a name a value in a scope:
//! a parameter, an assignment target (plain, annotated, augmented,
//! unpacking), a walrus, a `for`/`with`/`except` target, an import, a `def`
//! or `class`, a `match` capture, a `del`. A reference is any other use of a
//! name. Resolution follows Python's rules (class bodies are skipped from
//! nested scopes, `global`/`nonlocal` redirect, a walrus in a comprehension
//! binds in the enclosing scope) and is flow-insensitive: a name resolves to
//! *every* binding of it in the scope that owns it. A name that may come
//! from a `from m import *` is [`Resolution::Unknown`], never guessed.

use foldhash::{HashMap, HashMapExt};
use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::Arc;

use crate::syntax::tree::{FieldChild, KindName, operand};
use tree_sitter::{Node, TreeCursor};

/// Index of a scope in [`SemanticModel::scopes`].
pub type ScopeId = usize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeKind {
    Module,
    Function,
    Lambda,
    Class,
    Comprehension,
}

#[derive(Debug, Clone)]
pub struct Scope {
    pub kind: ScopeKind,
    /// The node that opens the scope (the whole module for the module).
    pub range: Range<usize>,
    /// Where its own code starts: a function's, lambda's or class's body
    /// (its parameters, annotations and bases are evaluated in the
    /// enclosing scope).
    own_start: usize,
    /// Code inside the node that the enclosing scope evaluates: a
    /// comprehension's first iterable.
    outer: Option<Range<usize>>,
    pub parent: Option<ScopeId>,
    globals: BTreeSet<String>,
    nonlocals: BTreeSet<String>,
    /// A `from m import *` in this scope: any unbound name may come from it.
    star_import: bool,
}

/// How a binding gives its name a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindingKind {
    /// A parameter (`x`, `x=1`, `x: int`); `*args` and `**kwargs` too.
    Parameter,
    StarParameter,
    KeywordsParameter,
    /// `x = value` (also each name of a chained `x = y = value`).
    Assignment,
    /// `x: T` without a value: no value, but the name is local.
    Annotation,
    /// `x += value` and the like.
    AugmentedAssignment,
    /// A name inside an unpacking target (`a, *b = ...`).
    Unpacking,
    /// `(x := value)`.
    NamedExpression,
    ForTarget,
    WithTarget,
    ExceptTarget,
    Import,
    FromImport,
    FunctionDefinition,
    ClassDefinition,
    MatchCapture,
    Deletion,
}

#[derive(Debug, Clone)]
pub struct Binding {
    pub name: String,
    pub scope: ScopeId,
    pub kind: BindingKind,
    /// The name's node.
    pub at: Range<usize>,
    /// The value assigned, for assignments, augmented assignments and walrus.
    pub value: Option<Range<usize>>,
}

/// A use of a name that is not a binding.
#[derive(Debug, Clone)]
pub struct Reference {
    pub name: String,
    pub scope: ScopeId,
    pub at: Range<usize>,
}

/// What a name means at some place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// Every binding of the name in the scope that owns it.
    Bindings { scope: ScopeId, bindings: Vec<usize> },
    /// Unbound in the module: a builtin (or a `NameError`).
    Builtin,
    /// It may come from a star import.
    Unknown,
}

/// The scopes, bindings and references of one module.
#[derive(Debug, Clone)]
pub struct SemanticModel {
    pub scopes: Vec<Scope>,
    pub bindings: Vec<Binding>,
    pub references: Vec<Reference>,
    /// Binding indexes by owning scope and name.
    by_scope_and_name: HashMap<(ScopeId, String), Vec<usize>>,
    /// Reference indexes by name.
    references_by_name: HashMap<String, Vec<usize>>,
}

const COMPREHENSIONS: [&str; 4] =
    ["list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression"];

/// One piece of work of the walk: visit `node` in `scope`, as a use, or as
/// a binding target of `kind` (with the value bound, if one).
#[derive(Clone)]
enum Visit<'t> {
    Use(Node<'t>, ScopeId),
    Target(Node<'t>, ScopeId, BindingKind, Option<Range<usize>>),
}

impl SemanticModel {
    /// The model of `tree`, which [`crate::syntax::parse`] (empty
    /// `ranges`) or [`crate::syntax::parse_ranges`] gave for `src`: built
    /// once per run for the same text and ranges while the parse memo keeps
    /// the tree (several passes ask for the same module's model).
    pub fn of(tree: &tree_sitter::Tree, src: &str, ranges: &[Range<usize>]) -> Arc<SemanticModel> {
        crate::syntax::derived(src, ranges, SemanticModel::heap_bytes, || SemanticModel::build(tree.root_node(), src))
    }

    /// About how many bytes the model holds: each scope, binding and
    /// reference with its name and its place in the maps.
    fn heap_bytes(&self) -> usize {
        const PER_ITEM: usize = 192;
        (self.scopes.len() + self.bindings.len() + self.references.len()) * PER_ITEM
    }

    /// Builds the model of the module `root` (a tree of `src`). Iterative:
    /// nesting depth cannot overflow the stack.
    pub fn build(root: Node<'_>, src: &str) -> Self {
        let mut model = SemanticModel {
            scopes: Vec::new(),
            bindings: Vec::new(),
            references: Vec::new(),
            by_scope_and_name: HashMap::new(),
            references_by_name: HashMap::new(),
        };
        model.new_scope(ScopeKind::Module, root.byte_range(), None);
        // One cursor and one buffer serve every node: a walk allocates
        // nothing per node but the names it records.
        let mut cursor = root.walk();
        let mut stack = vec![Visit::Use(root, 0)];
        let mut next = Vec::new();
        while let Some(visit) = stack.pop() {
            match visit {
                Visit::Use(node, scope) => model.visit_use(node, scope, src, &mut cursor, &mut next),
                Visit::Target(node, scope, kind, value) => {
                    model.visit_target(node, scope, (kind, value), src, &mut cursor, &mut next)
                }
            }
            // Reversed, so that children are visited in document order.
            stack.extend(next.drain(..).rev());
        }
        model
    }

    fn new_scope(&mut self, kind: ScopeKind, range: Range<usize>, parent: Option<ScopeId>) -> ScopeId {
        self.scopes.push(Scope {
            kind,
            own_start: range.start,
            outer: None,
            range,
            parent,
            globals: BTreeSet::new(),
            nonlocals: BTreeSet::new(),
            star_import: false,
        });
        self.scopes.len() - 1
    }

    /// The scope's own code starts at `body`.
    fn own_from(&mut self, scope: ScopeId, body: Option<Node<'_>>) {
        if let Some(body) = body {
            self.scopes[scope].own_start = body.start_byte();
        }
    }

    fn bind(&mut self, node: Node<'_>, src: &str, scope: ScopeId, kind: BindingKind, value: Option<Range<usize>>) {
        let name = src[node.byte_range()].to_owned();
        let scope = self.owner(scope, &name);
        self.by_scope_and_name.entry((scope, name.clone())).or_default().push(self.bindings.len());
        self.bindings.push(Binding { name, scope, kind, at: node.byte_range(), value });
    }

    /// The scope a binding of `name` in `scope` belongs to: the module for
    /// a `global` name; for a `nonlocal` one, the nearest enclosing function
    /// that binds it (else the nearest enclosing function).
    fn owner(&self, scope: ScopeId, name: &str) -> ScopeId {
        let declared = &self.scopes[scope];
        if declared.globals.contains(name) {
            return 0;
        }
        if !declared.nonlocals.contains(name) {
            return scope;
        }
        let mut fallback = None;
        let mut current = declared.parent;
        while let Some(id) = current {
            let s = &self.scopes[id];
            if matches!(s.kind, ScopeKind::Function | ScopeKind::Lambda) {
                if self.bindings_in(id, name).next().is_some() {
                    return id;
                }
                fallback.get_or_insert(id);
            }
            current = s.parent;
        }
        fallback.unwrap_or(scope)
    }

    fn visit_use<'t>(
        &mut self,
        node: Node<'t>,
        scope: ScopeId,
        src: &str,
        cursor: &mut TreeCursor<'t>,
        next: &mut Vec<Visit<'t>>,
    ) {
        let field = |name: &str| node.field(name);
        match node.kind_name() {
            "identifier" => {
                let name = &src[node.byte_range()];
                let at = self.references.len();
                match self.references_by_name.get_mut(name) {
                    Some(refs) => refs.push(at),
                    None => {
                        self.references_by_name.insert(name.to_owned(), vec![at]);
                    }
                }
                self.references.push(Reference { name: name.to_owned(), scope, at: node.byte_range() });
            }
            "comment" | "string_start" | "string_content" | "string_end" | "escape_sequence" => {}
            // Only an f-string's replacement fields hold names, and each
            // opens with `{`: a string without one is passed by whole.
            "string" if !src.as_bytes()[node.byte_range()].contains(&b'{') => {}
            "attribute" => next.extend(field("object").map(|o| Visit::Use(o, scope))),
            "keyword_argument" => next.extend(field("value").map(|v| Visit::Use(v, scope))),
            "function_definition" => {
                let inner = self.new_scope(ScopeKind::Function, node.byte_range(), Some(scope));
                self.own_from(inner, field("body"));
                if let Some(name) = field("name") {
                    self.bind(name, src, scope, BindingKind::FunctionDefinition, None);
                }
                if let Some(params) = field("parameters") {
                    self.parameters(params, scope, inner, src, cursor, next);
                }
                next.extend(field("return_type").map(|t| Visit::Use(t, scope)));
                // `def f[T: bound]()`: the bounds are annotations, loads there.
                next.extend(field("type_parameters").map(|t| Visit::Use(t, scope)));
                next.extend(field("body").map(|b| Visit::Use(b, inner)));
            }
            "lambda" => {
                let inner = self.new_scope(ScopeKind::Lambda, node.byte_range(), Some(scope));
                self.own_from(inner, field("body"));
                if let Some(params) = field("parameters") {
                    self.parameters(params, scope, inner, src, cursor, next);
                }
                next.extend(field("body").map(|b| Visit::Use(b, inner)));
            }
            "class_definition" => {
                let inner = self.new_scope(ScopeKind::Class, node.byte_range(), Some(scope));
                self.own_from(inner, field("body"));
                if let Some(name) = field("name") {
                    self.bind(name, src, scope, BindingKind::ClassDefinition, None);
                }
                for_each_named_child(node, cursor, |child, field| match field {
                    Some("name") => {}
                    Some("body") => next.push(Visit::Use(child, inner)),
                    _ => next.push(Visit::Use(child, scope)),
                });
            }
            kind if COMPREHENSIONS.contains(&kind) => {
                let inner = self.new_scope(ScopeKind::Comprehension, node.byte_range(), Some(scope));
                let mut first = true;
                for child in node.named_children(cursor) {
                    if child.kind_name() == "for_in_clause" {
                        // The first iterable is evaluated in the enclosing scope.
                        if let Some(right) = child.field("right") {
                            if first {
                                self.scopes[inner].outer = Some(right.byte_range());
                            }
                            next.push(Visit::Use(right, if first { scope } else { inner }));
                        }
                        if let Some(left) = child.field("left") {
                            next.push(Visit::Target(left, inner, BindingKind::ForTarget, None));
                        }
                        first = false;
                    } else {
                        next.push(Visit::Use(child, inner));
                    }
                }
            }
            "named_expression" => {
                // A walrus in a comprehension binds in the enclosing scope.
                let mut owner = scope;
                while self.scopes[owner].kind == ScopeKind::Comprehension {
                    owner = self.scopes[owner].parent.expect("a comprehension has a parent scope");
                }
                let value = field("value");
                if let Some(name) = field("name") {
                    self.bind(name, src, owner, BindingKind::NamedExpression, value.map(|v| v.byte_range()));
                }
                next.extend(value.map(|v| Visit::Use(v, scope)));
            }
            "assignment" => {
                // `a = b = value`: every target gets the final value.
                let mut value = field("right");
                while let Some(v) = value.filter(|v| v.kind_name() == "assignment") {
                    value = v.field("right");
                }
                if let Some(left) = field("left") {
                    let kind = if field("right").is_some() { BindingKind::Assignment } else { BindingKind::Annotation };
                    next.push(Visit::Target(left, scope, kind, value.map(|v| v.byte_range())));
                }
                next.extend(field("type").map(|t| Visit::Use(t, scope)));
                next.extend(field("right").map(|r| Visit::Use(r, scope)));
            }
            "augmented_assignment" => {
                let right = field("right");
                if let Some(left) = field("left") {
                    if left.kind_name() == "identifier" {
                        // Read, then bound.
                        next.push(Visit::Use(left, scope));
                    }
                    next.push(Visit::Target(
                        left,
                        scope,
                        BindingKind::AugmentedAssignment,
                        right.map(|r| r.byte_range()),
                    ));
                }
                next.extend(right.map(|r| Visit::Use(r, scope)));
            }
            "for_statement" => {
                for_each_named_child(node, cursor, |child, field| match field {
                    Some("left") => next.push(Visit::Target(child, scope, BindingKind::ForTarget, None)),
                    _ => next.push(Visit::Use(child, scope)),
                });
            }
            "as_pattern" => {
                let kind = match node.parent().map(|p| p.kind_name()) {
                    Some("except_clause") | Some("except_group_clause") => BindingKind::ExceptTarget,
                    _ => BindingKind::WithTarget,
                };
                for child in node.named_children(cursor) {
                    if child.kind_name() == "as_pattern_target" {
                        next.push(Visit::Target(child, scope, kind, None));
                    } else {
                        next.push(Visit::Use(child, scope));
                    }
                }
            }
            "import_statement" => {
                for_each_named_child(node, cursor, |child, _| self.import_name(child, scope, BindingKind::Import, src));
            }
            "import_from_statement" => {
                for_each_named_child(node, cursor, |child, field| match field {
                    Some("name") => self.import_name(child, scope, BindingKind::FromImport, src),
                    _ if child.kind_name() == "wildcard_import" => self.scopes[scope].star_import = true,
                    _ => {}
                });
            }
            "future_import_statement" => {}
            "global_statement" | "nonlocal_statement" => {
                let global = node.kind_name() == "global_statement";
                for child in node.named_children(cursor).filter(|c| c.kind_name() == "identifier") {
                    let name = src[child.byte_range()].to_owned();
                    let declared = &mut self.scopes[scope];
                    if global {
                        declared.globals.insert(name)
                    } else {
                        declared.nonlocals.insert(name)
                    };
                }
            }
            "delete_statement" => {
                next.extend(node.named_children(cursor).map(|c| Visit::Target(c, scope, BindingKind::Deletion, None)));
            }
            "case_pattern" => next.push(Visit::Target(node, scope, BindingKind::MatchCapture, None)),
            _ => next.extend(node.named_children(cursor).map(|c| Visit::Use(c, scope))),
        }
    }

    /// Parameters bind in `inner`; their defaults and annotations are
    /// evaluated in `outer`.
    fn parameters<'t>(
        &mut self,
        params: Node<'t>,
        outer: ScopeId,
        inner: ScopeId,
        src: &str,
        cursor: &mut TreeCursor<'t>,
        next: &mut Vec<Visit<'t>>,
    ) {
        let mut c = params.walk();
        for param in params.named_children(cursor) {
            let (name, kind) = match param.kind_name() {
                "identifier" => (Some(param), BindingKind::Parameter),
                "typed_parameter" => {
                    let inner_name = param.named_children(&mut c).find(|n| n.kind_name() != "type");
                    next.extend(param.field("type").map(|t| Visit::Use(t, outer)));
                    match inner_name.map(|n| (n.kind_name(), n)) {
                        Some(("list_splat_pattern", n)) => (operand(n), BindingKind::StarParameter),
                        Some(("dictionary_splat_pattern", n)) => (operand(n), BindingKind::KeywordsParameter),
                        Some((_, n)) => (Some(n), BindingKind::Parameter),
                        None => (None, BindingKind::Parameter),
                    }
                }
                "default_parameter" | "typed_default_parameter" => {
                    next.extend(param.field("type").map(|t| Visit::Use(t, outer)));
                    next.extend(param.field("value").map(|v| Visit::Use(v, outer)));
                    (param.field("name"), BindingKind::Parameter)
                }
                "list_splat_pattern" => (operand(param), BindingKind::StarParameter),
                "dictionary_splat_pattern" => (operand(param), BindingKind::KeywordsParameter),
                _ => (None, BindingKind::Parameter),
            };
            if let Some(name) = name.filter(|n| n.kind_name() == "identifier") {
                self.bind(name, src, inner, kind, None);
            }
        }
    }

    fn import_name(&mut self, node: Node<'_>, scope: ScopeId, kind: BindingKind, src: &str) {
        let bound = match node.kind_name() {
            // `import a.b` binds `a`.
            "dotted_name" => node.named_child(0),
            "aliased_import" => node.field("alias"),
            _ => None,
        };
        if let Some(name) = bound.filter(|n| n.kind_name() == "identifier") {
            self.bind(name, src, scope, kind, None);
        }
    }

    /// A binding target: names in it are bound (as `kind`, to `value`);
    /// attributes and subscripts in it are uses.
    fn visit_target<'t>(
        &mut self,
        node: Node<'t>,
        scope: ScopeId,
        (kind, value): (BindingKind, Option<Range<usize>>),
        src: &str,
        cursor: &mut TreeCursor<'t>,
        next: &mut Vec<Visit<'t>>,
    ) {
        match node.kind_name() {
            "identifier" => {
                // A name inside an unpacking pattern gets no single value.
                let direct = value.is_some();
                self.bind(node, src, scope, kind, if direct { value } else { None });
            }
            "attribute" | "subscript" => next.push(Visit::Use(node, scope)),
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "tuple"
            | "list"
            | "expression_list"
            | "parenthesized_expression"
            | "list_splat_pattern"
            | "as_pattern_target"
            | "splat_pattern" => {
                let unpacking = !matches!(node.kind_name(), "parenthesized_expression" | "as_pattern_target")
                    && !crate::syntax::tree::is_parenthesized_target(node);
                let (kind, value) = match (unpacking, kind) {
                    (true, BindingKind::Assignment) => (BindingKind::Unpacking, None),
                    (true, _) => (kind, None),
                    (false, _) => (kind, value),
                };
                next.extend(node.named_children(cursor).map(|c| Visit::Target(c, scope, kind, value.clone())));
            }
            // Patterns of `case`: a lone name captures; a dotted name is a
            // value to compare with; a class pattern's class is a use.
            "case_pattern" | "union_pattern" | "dict_pattern" | "keyword_pattern" | "class_pattern" | "as_pattern" => {
                let mut first = true;
                for_each_named_child(node, cursor, |child, field| {
                    match (node.kind_name(), child.kind_name()) {
                        ("class_pattern", "dotted_name") if first => next.push(Visit::Use(child, scope)),
                        ("keyword_pattern", "identifier") if first => {}
                        ("dict_pattern", _) if field == Some("key") => next.push(Visit::Use(child, scope)),
                        _ => next.push(Visit::Target(child, scope, kind, None)),
                    }
                    first = false;
                });
            }
            "dotted_name" if kind == BindingKind::MatchCapture => {
                if node.named_child_count() == 1
                    && let Some(only) = node.named_child(0)
                {
                    self.bind(only, src, scope, kind, None);
                } else {
                    next.push(Visit::Use(node, scope));
                }
            }
            _ if kind == BindingKind::MatchCapture => next.push(Visit::Use(node, scope)),
            _ => next.push(Visit::Use(node, scope)),
        }
    }

    /// The innermost scope whose node contains `byte`.
    pub fn scope_at(&self, byte: usize) -> ScopeId {
        // Scopes are created in document order of their opening node, each
        // after its parent: the last one whose own code holds `byte` is the
        // innermost (a default value belongs to the scope around the def, a
        // comprehension's first iterable to the scope around it).
        self.scopes
            .iter()
            .rposition(|s| {
                s.own_start <= byte && byte < s.range.end && !s.outer.as_ref().is_some_and(|o| o.contains(&byte))
            })
            .unwrap_or(0)
    }

    /// What `name`, used in `scope`, refers to.
    pub fn resolve(&self, name: &str, scope: ScopeId) -> Resolution {
        let mut current = Some(scope);
        let mut first = true;
        while let Some(id) = current {
            let s = &self.scopes[id];
            current = s.parent;
            if s.globals.contains(name) {
                return self.in_module(name);
            }
            // Names of a class body are not visible from scopes inside it.
            if s.kind == ScopeKind::Class && !first {
                continue;
            }
            first = false;
            if s.nonlocals.contains(name) {
                continue;
            }
            let bindings: Vec<usize> = self.bindings_in(id, name).collect();
            if !bindings.is_empty() {
                return Resolution::Bindings { scope: id, bindings };
            }
            if s.star_import {
                return Resolution::Unknown;
            }
        }
        Resolution::Builtin
    }

    fn in_module(&self, name: &str) -> Resolution {
        let bindings: Vec<usize> = self.bindings_in(0, name).collect();
        match () {
            _ if !bindings.is_empty() => Resolution::Bindings { scope: 0, bindings },
            _ if self.scopes[0].star_import => Resolution::Unknown,
            _ => Resolution::Builtin,
        }
    }

    /// The bindings of `name` owned by `scope`.
    pub fn bindings_in(&self, scope: ScopeId, name: &str) -> impl Iterator<Item = usize> + '_ {
        self.by_scope_and_name.get(&(scope, name.to_owned())).into_iter().flatten().copied()
    }

    /// Every binding owned by `scope`.
    pub fn bindings_in_scope(&self, scope: ScopeId) -> impl Iterator<Item = usize> + '_ {
        self.bindings.iter().enumerate().filter(move |(_, b)| b.scope == scope).map(|(i, _)| i)
    }

    /// The references to `name` anywhere in the module, however they
    /// resolve.
    pub fn references_to_name<'m>(&'m self, name: &str) -> impl Iterator<Item = &'m Reference> + 'm {
        self.references_by_name.get(name).into_iter().flatten().map(|&i| &self.references[i])
    }

    /// The references anywhere in the module that resolve to `name` owned by
    /// `scope`.
    pub fn references_to<'m>(&'m self, scope: ScopeId, name: &'m str) -> impl Iterator<Item = &'m Reference> + 'm {
        self.references_to_name(name)
            .filter(move |r| matches!(self.resolve(name, r.scope), Resolution::Bindings { scope: s, .. } if s == scope))
    }
}

/// Calls `visit` with each named child of `node` and the name of the
/// field it stands in, in order (`cursor` is reset to `node`).
fn for_each_named_child<'t>(
    node: Node<'t>,
    cursor: &mut TreeCursor<'t>,
    mut visit: impl FnMut(Node<'t>, Option<&str>),
) {
    cursor.reset(node);
    if !cursor.goto_first_child() {
        return;
    }
    loop {
        let child = cursor.node();
        if child.is_named() {
            visit(child, cursor.field_name());
        }
        if !cursor.goto_next_sibling() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse;

    fn model(src: &str) -> SemanticModel {
        SemanticModel::build(parse(src).root_node(), src)
    }

    fn kinds(m: &SemanticModel, name: &str) -> Vec<(ScopeKind, BindingKind)> {
        m.bindings.iter().filter(|b| b.name == name).map(|b| (m.scopes[b.scope].kind, b.kind)).collect()
    }

    #[test]
    fn a_comprehensions_first_iterable_is_in_the_scope_around_it() {
        let src = "def f(st):\n    return [k for k in st.relay()['content'] if st]\n";
        let tree = parse(src);
        let m = SemanticModel::build(tree.root_node(), src);
        let first = src.find("st.relay").unwrap();
        let later = src.rfind("st]").unwrap();
        assert_eq!(m.scopes[m.scope_at(first)].kind, ScopeKind::Function);
        assert_eq!(m.scopes[m.scope_at(later)].kind, ScopeKind::Comprehension);
    }

    #[test]
    fn only_replacement_fields_of_strings_hold_references() {
        let m = model("y = f\"{a!r:>{w}}\" + \"plain {b}\" + 'no braces' + f'{c}' 'd'\n");
        let names: Vec<&str> = m.references.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "w", "c"]);
    }

    #[test]
    fn every_binding_form_is_seen() {
        use BindingKind::*;
        let src = "import a.b, c as d\nfrom m import n, o as p\n\
                   def f(q, r: int, s=1, *t, u: int = 2, **v):\n    w = x = 1\n    y: int\n    z += 1\n    \
                   e, (g, *h) = 1, (2, 3)\n    for i in []: pass\n    with k() as l: pass\n    \
                   try: pass\n    except E as ex: pass\n    del w\n    (wal := 2)\n    lam = lambda la: la\n\
                   class K:\n    attr = 1\n\
                   match 1:\n    case [cap, *rest] if cap: pass\n    case Point(x=px) | Q.R as qq: pass\n";
        let m = model(src);
        assert_eq!(kinds(&m, "a"), [(ScopeKind::Module, Import)]);
        assert_eq!(kinds(&m, "d"), [(ScopeKind::Module, Import)]);
        assert_eq!(kinds(&m, "p"), [(ScopeKind::Module, FromImport)]);
        assert_eq!(kinds(&m, "f"), [(ScopeKind::Module, FunctionDefinition)]);
        for (name, kind) in [("q", Parameter), ("r", Parameter), ("s", Parameter), ("u", Parameter)] {
            assert_eq!(kinds(&m, name), [(ScopeKind::Function, kind)], "{name}");
        }
        assert_eq!(kinds(&m, "t"), [(ScopeKind::Function, StarParameter)]);
        assert_eq!(kinds(&m, "v"), [(ScopeKind::Function, KeywordsParameter)]);
        assert_eq!(kinds(&m, "w"), [(ScopeKind::Function, Assignment), (ScopeKind::Function, Deletion)]);
        assert_eq!(kinds(&m, "x"), [(ScopeKind::Function, Assignment)]);
        assert_eq!(kinds(&m, "y"), [(ScopeKind::Function, Annotation)]);
        assert_eq!(kinds(&m, "z"), [(ScopeKind::Function, AugmentedAssignment)]);
        for name in ["e", "g", "h"] {
            assert_eq!(kinds(&m, name), [(ScopeKind::Function, Unpacking)], "{name}");
        }
        assert_eq!(kinds(&m, "i"), [(ScopeKind::Function, ForTarget)]);
        assert_eq!(kinds(&m, "l"), [(ScopeKind::Function, WithTarget)]);
        assert_eq!(kinds(&m, "ex"), [(ScopeKind::Function, ExceptTarget)]);
        assert_eq!(kinds(&m, "wal"), [(ScopeKind::Function, NamedExpression)]);
        assert_eq!(kinds(&m, "la"), [(ScopeKind::Lambda, Parameter)]);
        assert_eq!(kinds(&m, "attr"), [(ScopeKind::Class, Assignment)]);
        for name in ["cap", "rest", "px", "qq"] {
            assert_eq!(kinds(&m, name), [(ScopeKind::Module, MatchCapture)], "{name}");
        }
        assert!(kinds(&m, "Q").is_empty() && kinds(&m, "Point").is_empty() && kinds(&m, "E").is_empty());
        let w = m.bindings.iter().find(|b| b.name == "w").unwrap();
        assert_eq!(w.value.clone().map(|r| &src[r]), Some("1"), "a chained assignment binds the final value");
    }

    #[test]
    fn resolution_follows_python_scoping() {
        let src = "x = 1\nclass C:\n    x = 2\n    def m(self):\n        return x\n\
                   def f():\n    global g\n    g = 1\n    y = [x for x in range(3) if (n := x)]\n    return n\n\
                   def outer():\n    v = 1\n    def inner():\n        nonlocal v\n        v = 2\n    return len\n";
        let m = model(src);
        let at = |needle: &str, nth: usize| src.match_indices(needle).nth(nth).unwrap().0;
        let resolve = |name: &str, byte: usize| m.resolve(name, m.scope_at(byte));
        // `x` in the method skips the class body: the module's x.
        assert!(matches!(resolve("x", at("return x", 0)), Resolution::Bindings { scope: 0, .. }));
        // `global g` binds g in the module.
        assert!(m.bindings.iter().any(|b| b.name == "g" && b.scope == 0));
        assert!(matches!(resolve("g", at("g = 1", 0)), Resolution::Bindings { scope: 0, .. }));
        // The walrus in the comprehension binds n in f.
        let f_scope = m.scope_at(at("return n", 0));
        assert_eq!(m.scopes[f_scope].kind, ScopeKind::Function);
        assert!(matches!(resolve("n", at("return n", 0)), Resolution::Bindings { scope, .. } if scope == f_scope));
        // `nonlocal v`: the assignment in inner is outer's v.
        let outer_scope = m.scope_at(at("v = 1", 0));
        assert!(matches!(resolve("v", at("v = 2", 0)), Resolution::Bindings { scope, .. } if scope == outer_scope));
        assert_eq!(resolve("len", at("return len", 0)), Resolution::Builtin);
        let star = model("from m import *\ndef f():\n    return thing\n");
        assert_eq!(star.resolve("thing", 1), Resolution::Unknown);
    }

    #[test]
    fn references_reach_their_binding_from_nested_scopes() {
        let src = "def f():\n    blocks = []\n    blocks.append(1)\n    g = lambda: blocks\n    return blocks\n";
        let m = model(src);
        let scope = m.scope_at(src.find("blocks =").unwrap());
        assert_eq!(m.references_to(scope, "blocks").count(), 3);
    }
}
