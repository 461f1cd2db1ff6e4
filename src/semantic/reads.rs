//! Reads of tool-result keys in one tree (`docs/rules.md`, "Reads of moved
//! keys"): on a receiver — a call, or a name bound once to a call — each
//! place that looks a constant key up, stores or deletes it, tests for it,
//! or uses the whole result, and where the result is handed on to code
//! this does not follow ("Results handed on"). Which calls produce which
//! keys is the project's to say ([`crate::semantic::project`]); this module
//! only reads one tree and hands back, per call, the reads of its result.

use std::ops::Range;

use tree_sitter::Node;

use foldhash::{HashMap, HashMapExt};

use crate::semantic::scope::{BindingKind, Reference, Resolution, ScopeId, ScopeKind, SemanticModel};
use crate::syntax;
use crate::syntax::tree::{FieldChild, KindName};
use crate::syntax::tree::{constant_str, operand, unparenthesize};

/// How a read uses the result (the `form` of `check --format json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReadForm {
    /// `r["k"]`, a load.
    Subscript,
    /// `r["k"] = v`, `r["k"] += v`.
    Store,
    /// `del r["k"]`.
    Delete,
    /// `r.get("k")`, `r.get("k", d)`.
    Get,
    /// `r.pop("k")`, `r.pop("k", d)`.
    Pop,
    /// `r.setdefault("k", ...)`.
    Setdefault,
    /// `"k" in r`.
    In,
    /// `"k" not in r`.
    NotIn,
    /// A use that sees every key: `**r`, `r.keys()`, `r.values()`,
    /// `r.items()`, `dict(r)`, `json.dumps(r)`.
    Whole,
    /// `r["content"]` other than `r["content"][i]` (`i` a constant `>= 0`):
    /// it sees the json block a fix appends.
    Content,
    /// `r["content"][i]` (`i` a constant `>= 0`): a block the fix leaves in
    /// place, as long as it does not augment its text.
    Block,
    /// The producer itself used as a value (`submit(self.run)`): its
    /// results go where toolshape cannot follow (see [`value_uses`]).
    Escape,
}

impl ReadForm {
    pub fn as_str(self) -> &'static str {
        match self {
            ReadForm::Subscript => "subscript",
            ReadForm::Store => "store",
            ReadForm::Delete => "delete",
            ReadForm::Get => "get",
            ReadForm::Pop => "pop",
            ReadForm::Setdefault => "setdefault",
            ReadForm::In => "in",
            ReadForm::NotIn => "not-in",
            ReadForm::Whole => "whole",
            ReadForm::Content => "content",
            ReadForm::Block => "block",
            ReadForm::Escape => "escape",
        }
    }
}

/// One read of a receiver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    pub form: ReadForm,
    /// The key read (`None` for [`ReadForm::Whole`]).
    pub key: Option<String>,
    /// The subscript, call, comparison or `**r` element.
    pub range: Range<usize>,
    /// The receiver as written (parentheses around it included): a
    /// rewrite of the read goes right after it.
    pub receiver: Range<usize>,
    /// The quote character of the key's literal (`"` or `'`).
    pub quote: char,
    /// For [`ReadForm::Block`], the block's index.
    pub block: Option<usize>,
}

/// A call with the reads of its result: on the call itself, and on the name
/// it is the one binding of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallReads {
    pub call: Range<usize>,
    pub reads: Vec<Read>,
    /// Whether the reads are all the result is used for: the call is read
    /// right where it stands, or every use of its name (none in a nested
    /// scope) is a keyed read (`R["content"][i]` with `i` a constant `>= 0`
    /// among them). Only then does the result keep, up to each read, the
    /// shape its producer gave it.
    pub exclusive: bool,
}

/// The expressions of the tree `root` (of `src`, its model `model`) that
/// may stand for a function and are used as a value (`docs/rules.md`,
/// "Escapes" and "Calls toolshape cannot resolve"): a name read where it
/// means a module-level `def` or `from ... import` bound once (or a
/// function's own import bound once), or, when it is one of `names`, any
/// binding of the module, bindings of any scope one of which is an import,
/// or nothing; or an attribute whose attribute is one of `names`; where it is
/// not the callee of a call, not the object of an attribute and not a
/// target (parentheses seen through). Which of them stand for a producer
/// is the project's to say. `names_at`, when given, holds where every
/// whole word of `src` that is one of `names` starts: the uses are then
/// looked up there and at the names' references, not found by a walk of
/// every node of the tree (which costs a big module far more).
pub fn value_uses<'t>(
    root: Node<'t>,
    src: &str,
    model: &SemanticModel,
    names: &std::collections::BTreeSet<String>,
    names_at: Option<&[usize]>,
) -> Vec<Node<'t>> {
    let read: Vec<&Range<usize>> = model
        .references
        .iter()
        .filter(|r| match model.resolve(&r.name, r.scope) {
            Resolution::Bindings { scope: 0, .. } | Resolution::Builtin | Resolution::Unknown
                if names.contains(r.name.as_str()) =>
            {
                true
            }
            Resolution::Bindings { scope: 0, bindings } => match bindings.as_slice() {
                [only] => {
                    matches!(model.bindings[*only].kind, BindingKind::FunctionDefinition | BindingKind::FromImport)
                }
                _ => false,
            },
            // An import inside a function, bound there once, resolves as
            // one at module level (`docs/rules.md`, "Imports inside a
            // function").
            Resolution::Bindings { scope, bindings }
                if model.scopes[scope].kind == ScopeKind::Function
                    && matches!(bindings.as_slice(), [only] if model.bindings[*only].kind == BindingKind::FromImport) =>
            {
                true
            }
            // Bound by an import among other bindings (`except ImportError:
            // probe = None`), the import may be the one that ran.
            Resolution::Bindings { bindings, .. } => {
                names.contains(r.name.as_str())
                    && bindings
                        .iter()
                        .any(|&b| matches!(model.bindings[b].kind, BindingKind::Import | BindingKind::FromImport))
            }
            _ => false,
        })
        .map(|r| &r.at)
        .collect();
    let used = |node: Node<'_>| {
        let (outer, parent) = syntax::tree::parenthesized_in(node);
        match parent {
            Some(p) if p.kind_name() == "call" => p.field("function") != Some(outer),
            Some(p) if p.kind_name() == "attribute" => p.field("object") != Some(outer),
            Some(_) => !syntax::tree::is_target(outer),
            None => false,
        }
    };
    let mut out = Vec::new();
    let Some(names_at) = names_at else {
        let read_at: foldhash::HashSet<usize> = read.iter().map(|r| r.start).collect();
        syntax::for_each_node(root, |node| {
            let wanted = match node.kind_name() {
                "identifier" => read_at.contains(&node.start_byte()),
                "attribute" => node.field("attribute").is_some_and(|a| names.contains(&src[a.byte_range()])),
                _ => false,
            };
            if wanted && used(node) {
                out.push(node);
            }
        });
        return out;
    };
    // The identifier at `at`, if one stands exactly there.
    let identifier_at = |at: &Range<usize>| {
        root.descendant_for_byte_range(at.start, at.end)
            .filter(|n| n.kind_name() == "identifier" && n.byte_range() == *at)
    };
    let mut found: Vec<Node<'t>> = read.iter().filter_map(|at| identifier_at(at)).collect();
    found.extend(names_at.iter().filter_map(|&at| {
        let end = at + src.as_bytes()[at..].iter().take_while(|&&b| syntax::lexer::is_ident_byte(b)).count();
        let attribute = identifier_at(&(at..end))?.parent().filter(|p| p.kind_name() == "attribute")?;
        attribute.field("attribute").is_some_and(|a| a.start_byte() == at).then_some(attribute)
    }));
    // In the walk's order: by start, an outer node first.
    found.sort_by_key(|n| (n.start_byte(), std::cmp::Reverse(n.end_byte())));
    found.dedup();
    out.extend(found.into_iter().filter(|&n| used(n)));
    out
}

/// When `node` (parentheses seen through: `outer`) is a positional
/// argument of a call (not `*X`, not a keyword's value): `outer`, the
/// argument list and the call.
fn positional_argument_of(node: Node<'_>) -> Option<(Node<'_>, Node<'_>, Node<'_>)> {
    let (outer, parent) = syntax::tree::parenthesized_in(node);
    let args = parent.filter(|p| p.kind_name() == "argument_list")?;
    let call = args.parent().filter(|c| c.kind_name() == "call" && c.field("arguments") == Some(args))?;
    Some((outer, args, call))
}

/// Whether the use as a value `node` is called through a wrapper: it is
/// the one argument of a call `W(X)` that is itself called, `W(X)(...)`
/// (parentheses seen through), as a test unwraps a tool to call it
/// (`docs/rules.md`, "Escapes").
pub fn called_through_wrapper(node: Node<'_>) -> bool {
    let Some((outer, args, wrap)) = positional_argument_of(node) else { return false };
    let mut c = args.walk();
    let mut given = args.named_children(&mut c).filter(|n| n.kind_name() != "comment");
    if given.next() != Some(outer) || given.next().is_some() {
        return false;
    }
    let (wrap, parent) = syntax::tree::parenthesized_in(wrap);
    parent.is_some_and(|call| call.kind_name() == "call" && call.field("function") == Some(wrap))
}

/// The builtins that only look at their argument, never call it: a tool
/// handed to one of them stays exempt (`docs/rules.md`, "Escapes").
const LOOKING_BUILTINS: &[&str] = &[
    "callable",
    "isinstance",
    "issubclass",
    "hasattr",
    "id",
    "type",
    "repr",
    "str",
    "print",
    "dir",
    "vars",
    "hash",
    "bool",
];

/// Whether the use as a value `node` is handed to a call that keeps what it
/// gives: it is (parentheses seen through) a positional argument of a call
/// whose value is not dropped (the call, parentheses and an `await` seen
/// through, is not the whole expression of an expression statement), and
/// that call is not of a builtin that only looks at its argument
/// ([`LOOKING_BUILTINS`], the name bound nowhere in the module):
/// `asyncio.to_thread(probe, x)`, `pool.submit(probe, x)`, `partial(probe)`
/// run the function and give its results to whoever reads the value
/// (`docs/rules.md`, "Escapes").
pub fn handed_to_a_kept_call(node: Node<'_>, src: &str, model: &SemanticModel) -> bool {
    let Some((_, _, call)) = positional_argument_of(node) else { return false };
    let (_, mut parent) = syntax::tree::parenthesized_in(call);
    if let Some(awaited) = parent.filter(|a| a.kind_name() == "await") {
        parent = syntax::tree::parenthesized_in(awaited).1;
    }
    let dropped = parent.is_some_and(|statement| {
        let mut c = statement.walk();
        statement.kind_name() == "expression_statement"
            && statement.named_children(&mut c).filter(|n| n.kind_name() != "comment").count() == 1
    });
    if dropped {
        return false;
    }
    let looking = call.field("function").map(unparenthesize).is_some_and(|f| {
        let name = &src[f.byte_range()];
        f.kind_name() == "identifier"
            && LOOKING_BUILTINS.contains(&name)
            && matches!(model.resolve(name, model.scope_at(f.start_byte())), Resolution::Builtin)
    });
    !looking
}

/// Whether the use as a value `node` gives the function another name to be
/// called by: it is (parentheses seen through) the whole value of an
/// assignment (`fn = f`, `fn: T = f`, `a = fn = f`, `fn := f`), of a
/// `return` or a `yield` (not `yield from`), or of a pair of a dict display
/// (`{"f": f}`, not a comprehension's) (`docs/rules.md`, "Escapes").
pub fn gives_another_name(node: Node<'_>) -> bool {
    let (outer, parent) = syntax::tree::parenthesized_in(node);
    let Some(parent) = parent else { return false };
    match parent.kind_name() {
        "assignment" => parent.field("right") == Some(outer),
        "named_expression" => parent.field("value") == Some(outer),
        // Of a display, not of a comprehension.
        "pair" => {
            parent.field("value") == Some(outer) && parent.parent().is_some_and(|d| d.kind_name() == "dictionary")
        }
        "return_statement" => true,
        "yield" => {
            let mut c = parent.walk();
            !parent.children(&mut c).any(|t| t.kind_name() == "from")
        }
        _ => false,
    }
}

/// Every call of the tree `root` (of `src`, its model `model`) that
/// `wanted` accepts and whose result is read or handed on, with those
/// reads, in source order. A name `R` carries its call's reads when the
/// scope that owns it binds it exactly once, by a plain assignment
/// statement `R = call` with one target; only reads in that scope itself
/// count (a nested scope may run at any time). A result that may reach
/// code this does not follow (`docs/rules.md`, "Results handed on") has a
/// read of form `escape` at the call. The parse may leave out the bodies
/// of some module-level functions (an outline): `whole` says whether the
/// `def` starting at an offset is whole; `None` when a result is handed
/// to a function that may check it and whose body was left out: only the
/// whole file tells. `within`: the only parts of the tree (sorted, disjoint
/// ranges) where a call `wanted` accepts may stand, if known.
pub fn call_reads_in<'r>(
    root: Node<'r>,
    src: &str,
    model: &SemanticModel,
    whole: &dyn Fn(usize) -> bool,
    wanted: &dyn Fn(Node<'_>) -> bool,
    within: Option<&[Range<usize>]>,
) -> Option<Vec<CallReads>> {
    let mut out = Vec::new();
    // Each name's references: resolved only for the names a result is
    // bound to (a module's every reference costs more than its few reads).
    let mut named: HashMap<&str, Vec<&Reference>> = HashMap::new();
    for r in &model.references {
        named.entry(r.name.as_str()).or_default().push(r);
    }
    let tree = Tree { root, src, model, named, whole, cut: std::cell::Cell::new(false) };
    let visit = |node: Node<'r>, ancestors: &[Node<'r>]| {
        if node.kind_name() != "call" || !wanted(node) {
            return;
        }
        // `await C` (parentheses seen through) is what an async producer
        // returns: its reads are the call's.
        let (held, holder) = held_in(node, ancestors);
        // Dropped, or followed through `return` chains.
        if holder.is_some_and(|h| matches!(h.kind_name(), "expression_statement" | "return_statement")) {
            return;
        }
        let mut reads: Vec<Read> = Vec::new();
        let mut exclusive = true;
        let mut handed_on = true;
        // Nothing in an annotation is read: what it holds is handed on
        // (a call standing elsewhere in one is handed on below).
        let in_annotation = ancestors.iter().any(|a| a.kind_name() == "type");
        if may_be_read(ancestors, src) && !in_annotation {
            reads.extend(read_of(held, src));
            handed_on = reads.is_empty();
            if let Some(name) = bound_name(held) {
                let of_name = name_reads(&tree, name, 0);
                reads.extend(of_name.reads);
                exclusive = of_name.exclusive;
                handed_on = of_name.handed_on;
            }
        }
        // Handed to a function that checks it.
        if handed_on
            && !in_annotation
            && holder.is_some_and(|h| h.kind_name() == "argument_list")
            && let Some(checked) = checked_value(&tree, held, 0)
        {
            reads.extend(checked.reads);
            exclusive = checked.exclusive;
            handed_on = checked.handed_on;
        }
        if handed_on {
            exclusive = false;
            reads.push(escape_at(held));
        }
        reads.sort_by_key(|r| (r.range.start, r.range.end));
        out.push(CallReads { call: node.byte_range(), reads, exclusive });
    };
    match within {
        Some(ranges) => syntax::for_each_node_in_context_within(root, ranges, visit),
        None => syntax::for_each_node_in_context(root, visit),
    }
    (!tree.cut.get()).then_some(out)
}

/// One file's tree as [`call_reads_in`] follows results through it.
struct Tree<'a, 't> {
    root: Node<'t>,
    src: &'a str,
    model: &'a SemanticModel,
    /// Each name's references, in the model's order.
    named: HashMap<&'a str, Vec<&'a Reference>>,
    /// Whether the `def` starting at an offset is whole in the parse.
    whole: &'a dyn Fn(usize) -> bool,
    /// Set when a function that may check a result was left out of the
    /// parse.
    cut: std::cell::Cell<bool>,
}

impl<'a> Tree<'a, '_> {
    /// The references to `name` that resolve to the bindings `scope` owns,
    /// in the model's order.
    fn owned(&self, scope: ScopeId, name: &str) -> impl Iterator<Item = &'a Reference> + '_ {
        let model = self.model;
        self.named.get(name).into_iter().flatten().copied().filter(move |r| {
            matches!(model.resolve(&r.name, r.scope), Resolution::Bindings { scope: owner, .. } if owner == scope)
        })
    }
}

/// How deep results are followed from checking function to checking
/// function, and from name to name through them.
const CHECKS_FOLLOWED: usize = 8;

/// What a *checking function* does with the result handed to it at one
/// position (`docs/rules.md`, "Results handed to a checking function").
struct Checker {
    /// Its reads of the parameter.
    reads: Vec<Read>,
    /// Whether each of them leaves the receiver exclusive: a `block` read,
    /// or a keyed read of a key of the contract's own that no fix moves.
    exclusive: bool,
    /// Whether it returns the parameter (`return P`).
    passes_through: bool,
}

/// The keys of a tool result that no fix moves.
const CONTRACT_KEYS: [&str; 2] = ["status", "toolUseId"];

/// When the result `value` (a call, `await` of one, or a load of a name
/// bound to one) is handed to a checking function (`docs/rules.md`,
/// "Results handed to a checking function"): its reads there, and, when
/// the function passes the result through, the reads of the call's value
/// judged as a receiver call's are. `None`: not handed to one.
fn checked_value(tree: &Tree<'_, '_>, value: Node<'_>, depth: usize) -> Option<NameReads> {
    if depth > CHECKS_FOLLOWED {
        return None;
    }
    let (call, checker) = checking_call(tree, value)?;
    let mut out = NameReads { reads: checker.reads, exclusive: checker.exclusive, handed_on: false };
    if !checker.passes_through {
        return Some(out);
    }
    // The call gives the result back: judged as the receiver call was.
    let (_, holder) = syntax::tree::parenthesized_in(call);
    if holder.is_some_and(|h| h.kind_name() == "expression_statement") {
        return Some(out);
    }
    let then = if let Some(read) = read_of(call, tree.src) {
        Some(NameReads { reads: vec![read], exclusive: true, handed_on: false })
    } else if let Some(name) = bound_name(call) {
        Some(name_reads(tree, name, depth + 1))
    } else {
        checked_value(tree, call, depth + 1)
    };
    match then {
        Some(then) => {
            out.reads.extend(then.reads);
            out.exclusive &= then.exclusive;
            out.handed_on = then.handed_on;
        }
        None => out.handed_on = true,
    }
    Some(out)
}

/// When `value` (parentheses seen through) is a positional argument of a
/// call of a checking function for its position: the call, and what the
/// function does with it.
fn checking_call<'t>(tree: &Tree<'_, 't>, value: Node<'t>) -> Option<(Node<'t>, Checker)> {
    let (outer, args, call) = positional_argument_of(value)?;
    let (src, model) = (tree.src, tree.model);
    // The position among the positional arguments; no `*a` or `**k`.
    let mut position = None;
    let mut given = 0;
    let mut cursor = args.walk();
    for argument in args.named_children(&mut cursor) {
        match argument.kind_name() {
            "comment" | "keyword_argument" => {}
            "list_splat" | "dictionary_splat" => return None,
            _ => {
                if argument == outer {
                    position = Some(given);
                }
                given += 1;
            }
        }
    }
    let position = position?;
    // A name bound once in the module, by a top-level, undecorated, not
    // async `def`.
    let function = call.field("function").filter(|f| f.kind_name() == "identifier")?;
    let name = &src[function.byte_range()];
    let Resolution::Bindings { scope: 0, bindings } = model.resolve(name, model.scope_at(call.start_byte())) else {
        return None;
    };
    let [only] = bindings.as_slice() else { return None };
    let binding = &model.bindings[*only];
    if binding.kind != BindingKind::FunctionDefinition {
        return None;
    }
    let def =
        tree.root.descendant_for_byte_range(binding.at.start, binding.at.end)?.parent().filter(|d| {
            d.kind_name() == "function_definition" && d.parent().is_some_and(|m| m.kind_name() == "module")
        })?;
    if def.child(0).is_some_and(|c| c.kind_name() == "async") {
        return None;
    }
    if !(tree.whole)(def.start_byte()) {
        tree.cut.set(true);
        return None;
    }
    if yields(def, src) {
        return None;
    }
    let parameter = positional_parameter(def, position)?;
    let p = &src[parameter.byte_range()];
    let body = def.field("body")?;
    let Resolution::Bindings { scope, bindings } = model.resolve(p, model.scope_at(body.start_byte())) else {
        return None;
    };
    let [only] = bindings.as_slice() else { return None };
    if model.scopes[scope].kind != ScopeKind::Function || model.bindings[*only].at != parameter.byte_range() {
        return None;
    }
    // Code tree-sitter cannot read may hold uses the model does not see.
    if names_in_errors(def, src, p) {
        return None;
    }
    let mut checker = Checker { reads: Vec::new(), exclusive: true, passes_through: false };
    for r in tree.owned(scope, p) {
        if r.scope != scope || syntax::tree::in_annotation(tree.root, r.at.start) {
            return None;
        }
        let node =
            tree.root.descendant_for_byte_range(r.at.start, r.at.end).filter(|n| n.kind_name() == "identifier")?;
        if let Some(read) = read_of(node, src) {
            checker.exclusive &=
                read.form == ReadForm::Block || read.key.as_deref().is_some_and(|k| CONTRACT_KEYS.contains(&k));
            checker.reads.push(read);
        } else if in_assertion_message(node) {
        } else if returned_whole(node) {
            checker.passes_through = true;
        } else {
            return None;
        }
    }
    Some((call, checker))
}

/// The name of `def`'s parameter at `position` among its positional
/// parameters (plain, annotated, defaulted; the `/` marker not counted),
/// when none at or before it is a `*args`, a bare `*` or a `**kwargs`.
fn positional_parameter(def: Node<'_>, position: usize) -> Option<Node<'_>> {
    let parameters = def.field("parameters")?;
    let mut cursor = parameters.walk();
    let mut at = 0;
    for parameter in parameters.named_children(&mut cursor) {
        let name = match parameter.kind_name() {
            "comment" | "positional_separator" => continue,
            "identifier" => parameter,
            "typed_parameter" => {
                let mut c = parameter.walk();
                parameter.named_children(&mut c).next().filter(|n| n.kind_name() == "identifier")?
            }
            "default_parameter" | "typed_default_parameter" => {
                parameter.field("name").filter(|n| n.kind_name() == "identifier")?
            }
            _ => return None,
        };
        if at == position {
            return Some(name);
        }
        at += 1;
    }
    None
}

/// Whether the name `node` is (parentheses seen through) the whole value
/// of a `return` statement.
fn returned_whole(node: Node<'_>) -> bool {
    let (outer, parent) = syntax::tree::parenthesized_in(node);
    parent.is_some_and(|statement| {
        let mut c = statement.walk();
        statement.kind_name() == "return_statement"
            && statement.named_children(&mut c).filter(|n| n.kind_name() != "comment").eq(std::iter::once(outer))
    })
}

/// The `escape` read of a result `held` (a call, or `await` of one) hands on.
fn escape_at(held: Node<'_>) -> Read {
    let range = held.byte_range();
    Read { form: ReadForm::Escape, key: None, range: range.clone(), receiver: range, quote: '"', block: None }
}

/// What `call`'s result is, `await call` when it is awaited (parentheses
/// seen through), and the node that holds it: read from `ancestors` (its
/// parent last), as asking `Node::parent` walks down from the root.
fn held_in<'t>(call: Node<'t>, ancestors: &[Node<'t>]) -> (Node<'t>, Option<Node<'t>>) {
    let mut up = ancestors.iter().rev().copied().skip_while(|a| a.kind_name() == "parenthesized_expression");
    let holder = up.next();
    match holder {
        Some(a) if a.kind_name() == "await" => (a, up.find(|a| a.kind_name() != "parenthesized_expression")),
        _ => (call, holder),
    }
}

/// Whether a call under `ancestors` (its parent last) may be read, or
/// bound by `R = call`, as [`read_of`] and [`bound_name`] see it (through
/// parentheses and an `await`): where its value goes is one of the places
/// they look at. A quick look at the path the walk keeps, so that the calls
/// that stand elsewhere (most of them) cost no walk from the root.
fn may_be_read(ancestors: &[Node<'_>], src: &str) -> bool {
    let mut up = ancestors.iter().rev().skip_while(|a| a.kind_name() == "parenthesized_expression");
    let mut holder = up.next();
    if holder.is_some_and(|h| h.kind_name() == "await") {
        holder = up.find(|a| a.kind_name() != "parenthesized_expression");
    }
    match holder.map(|h| h.kind_name()) {
        Some("subscript" | "attribute" | "comparison_operator" | "dictionary_splat" | "assignment") => true,
        // `dict(C)`, `json.dumps(C)`: the call the arguments are of.
        Some("argument_list") => up.next().and_then(|call| call.field("function")).is_some_and(|f| {
            let callee = &src[f.byte_range()];
            callee == "dict" || callee.ends_with("dumps")
        }),
        _ => false,
    }
}

/// The keyed reads of the *possible* receivers of `root` (`docs/rules.md`,
/// "Possible reads"): results that no producer can be traced to but that
/// are plainly tool results the SDK hands on (`tool_result`, `toolResult`,
/// `X["toolResult"]`, a parameter annotated `ToolResult`, a hook event's
/// `result`, and a name bound to one of the last three: `tr =
/// block["toolResult"]`), in source order.
pub fn possible_reads<'t>(root: Node<'t>, src: &str, model: &SemanticModel) -> Vec<Read> {
    let marked = |name: &str| name.contains("tool_result") || name.contains("toolResult");
    let mut out = Vec::new();
    let mut keyed = |n: Node<'_>| {
        if let Some(read) = read_of(n, src).filter(|r| r.key.is_some()) {
            out.push(read);
        }
    };
    // Each binding is judged once, however many references reach it.
    let memo = || -> Vec<std::cell::OnceCell<bool>> { model.bindings.iter().map(|_| Default::default()).collect() };
    let (tool_result_parameter, event_parameter, alias_binding) = (memo(), memo(), memo());
    let annotated = |binding: usize, names: &[&str]| {
        let b = &model.bindings[binding];
        b.kind == BindingKind::Parameter
            && root
                .descendant_for_byte_range(b.at.start, b.at.end)
                .and_then(|n| n.parent())
                .filter(|p| matches!(p.kind_name(), "typed_parameter" | "typed_default_parameter"))
                .and_then(|p| p.field("type"))
                .is_some_and(|t| {
                    let t = src[t.byte_range()].trim();
                    names.iter().any(|n| t == *n || t.ends_with(&format!(".{n}")))
                })
    };
    // A parameter of the scope `r` is read in, annotated one of `names`.
    let parameter_of =
        |r: &Reference, names: &[&str], memo: &[std::cell::OnceCell<bool>]| match model.resolve(&r.name, r.scope) {
            Resolution::Bindings { scope, bindings } if scope == r.scope => {
                bindings.iter().any(|&b| *memo[b].get_or_init(|| annotated(b, names)))
            }
            _ => false,
        };
    // `event.result`, `event` (the name `r` at `node`) a hook's event.
    let event_result = |node: Node<'t>, r: &Reference| -> Option<Node<'t>> {
        node.parent().filter(|p| {
            p.kind_name() == "attribute"
                && p.field("object") == Some(node)
                && p.field("attribute").is_some_and(|a| &src[a.byte_range()] == "result")
                && parameter_of(r, &["AfterToolCallEvent", "AfterToolInvocationEvent"], &event_parameter)
        })
    };
    // `X["toolResult"]`, a load whose one index is that literal as written
    // (a marker the prefilter sees).
    let tool_result_index = |node: Node<'t>| {
        let mut cursor = node.walk();
        let keys: Vec<Node<'_>> = node.children_by_field_name("subscript", &mut cursor).collect();
        matches!(keys.as_slice(), [key] if matches!(&src[unparenthesize(*key).byte_range()], "\"toolResult\"" | "'toolResult'"))
            && subscript_form(node) == ReadForm::Subscript
    };
    // A possible receiver of a form other than a name, as an assignment's
    // value: `X["toolResult"]`, `X.tool_result`, `event.result`.
    let receiver_value = |value: Node<'t>| match value.kind_name() {
        "subscript" => tool_result_index(value),
        "attribute" => {
            value.field("attribute").is_some_and(|a| marked(&src[a.byte_range()]))
                || value.field("attribute").is_some_and(|a| &src[a.byte_range()] == "result")
                    && value.field("object").filter(|o| o.kind_name() == "identifier").is_some_and(|object| {
                        model
                            .references
                            .iter()
                            .find(|r| r.at == object.byte_range())
                            .is_some_and(|r| event_result(object, r) == Some(value))
                    })
        }
        _ => false,
    };
    // A name some binding of which (in the scope owning it) is `N = E`,
    // `E` such a receiver.
    let alias = |r: &Reference| match model.resolve(&r.name, r.scope) {
        Resolution::Bindings { bindings, .. } => bindings.iter().any(|&b| {
            *alias_binding[b]
                .get_or_init(|| super::plain_assigned_value(root, &model.bindings[b]).is_some_and(receiver_value))
        }),
        _ => false,
    };
    for r in &model.references {
        let Some(node) = root.descendant_for_byte_range(r.at.start, r.at.end).filter(|n| n.kind_name() == "identifier")
        else {
            continue;
        };
        if (marked(&r.name) && !bound_once_to_a_call(&r.name, r.scope, root, model))
            || parameter_of(r, &["ToolResult"], &tool_result_parameter)
            || alias(r)
        {
            keyed(node);
        }
        if let Some(attribute) = event_result(node, r) {
            keyed(attribute);
        }
    }
    syntax::for_each_node(root, |node| match node.kind_name() {
        "attribute" if node.field("attribute").is_some_and(|a| marked(&src[a.byte_range()])) => keyed(node),
        "subscript" if tool_result_index(node) => keyed(node),
        _ => {}
    });
    // Nothing in an annotation is read.
    out.retain(|r| !syntax::tree::in_annotation(root, r.range.start));
    out.sort_by_key(|r| (r.range.start, r.range.end));
    out.dedup();
    out
}

/// Whether the scope that owns `name` (used in `scope`) binds it exactly
/// once, by a plain assignment of a call (or of `await` of one) with one
/// target.
fn bound_once_to_a_call(name: &str, scope: ScopeId, root: Node<'_>, model: &SemanticModel) -> bool {
    let Resolution::Bindings { bindings, .. } = model.resolve(name, scope) else { return false };
    let [only] = bindings.as_slice() else { return false };
    super::plain_assigned_value(root, &model.bindings[*only])
        .map(|v| match v.kind_name() {
            // `R = await C`: what the call gives.
            "await" => operand(v).map_or(v, unparenthesize),
            _ => v,
        })
        .is_some_and(|v| v.kind_name() == "call")
}

/// The name `call` is assigned to by a plain one-target assignment
/// statement (`R = call`), if it is.
fn bound_name(call: Node<'_>) -> Option<Node<'_>> {
    let (value, parent) = syntax::tree::parenthesized_in(call);
    let assignment = parent.filter(|p| p.kind_name() == "assignment")?;
    if assignment.field("right") != Some(value) || assignment.field("type").is_some() {
        return None;
    }
    assignment.parent().filter(|p| p.kind_name() == "expression_statement")?;
    let target = assignment.field("left").filter(|t| t.kind_name() == "identifier")?;
    Some(target)
}

/// The reads of the name `target` (bound by `R = call`) in the scope that
/// owns it, when that is its only binding there, or when the name is bound
/// in sequence there ([`in_sequence`]: then only the uses that see this
/// binding's value count); whether they are all its uses
/// ([`CallReads::exclusive`]); and whether the result is handed on through
/// it (`docs/rules.md`, "Results handed on").
struct NameReads {
    reads: Vec<Read>,
    exclusive: bool,
    handed_on: bool,
}

fn name_reads(tree: &Tree<'_, '_>, target: Node<'_>, depth: usize) -> NameReads {
    let (root, src, model) = (tree.root, tree.src, tree.model);
    let not_followed = NameReads { reads: Vec::new(), exclusive: false, handed_on: true };
    let name = &src[target.byte_range()];
    let Resolution::Bindings { scope, bindings } = model.resolve(name, model.scope_at(target.start_byte())) else {
        return not_followed;
    };
    // The part of the file whose uses see this binding's value: all of it
    // for a name bound once, else from the end of this binding's statement
    // to the end of the next one's; and where the first statement ends.
    let (sees, first_end) = match bindings.as_slice() {
        [only] => {
            let only = &model.bindings[*only];
            if only.kind != BindingKind::Assignment || only.at != target.byte_range() {
                return not_followed;
            }
            (0..usize::MAX, 0)
        }
        _ => {
            let Some(ends) = in_sequence(root, model, scope, &bindings) else { return not_followed };
            let Some(k) = ends.iter().position(|(at, _)| *at == target.byte_range()) else { return not_followed };
            let until = ends.get(k + 1).map_or(usize::MAX, |(_, end)| *end);
            (ends[k].1..until, ends[0].1)
        }
    };
    let mut reads = Vec::new();
    // A name of a module or a class body can be read from elsewhere; code
    // tree-sitter cannot read (an annotation beyond its grammar,
    // `x: r["content"][0]`) may hold uses the model does not see.
    let range = &model.scopes[scope].range;
    let unread = root.descendant_for_byte_range(range.start, range.end).is_none_or(|n| names_in_errors(n, src, name));
    let mut handed_on = model.scopes[scope].kind != ScopeKind::Function || unread;
    let mut exclusive = !handed_on;
    for r in tree.owned(scope, name) {
        let node = root.descendant_for_byte_range(r.at.start, r.at.end).filter(|n| n.kind_name() == "identifier");
        // A use in a nested scope (or an annotation) may run at any time;
        // one before the first binding's statement ends sees none of them.
        let here = r.scope == scope && r.at.start >= first_end && !syntax::tree::in_annotation(root, r.at.start);
        if here && !sees.contains(&r.at.start) {
            continue;
        }
        let read = node.filter(|_| here).and_then(|n| read_of(n, src));
        // What a failing assertion says is no read, and hands nothing on.
        if read.is_none() && here && node.is_some_and(in_assertion_message) {
            continue;
        }
        match read {
            Some(read) => {
                exclusive &= read.key.is_some() || read.form == ReadForm::Block;
                reads.push(read);
            }
            // Handed to a function that checks it.
            None => match node.filter(|_| here).and_then(|n| checked_value(tree, n, depth + 1)) {
                Some(checked) => {
                    reads.extend(checked.reads);
                    exclusive &= checked.exclusive && !checked.handed_on;
                    handed_on |= checked.handed_on;
                }
                None => {
                    exclusive = false;
                    handed_on = true;
                }
            },
        }
    }
    NameReads { reads, exclusive, handed_on }
}

/// Whether the name `name` stands in the message of an `assert` statement
/// as the message itself, or as the whole expression of a replacement field
/// of the f-string (or implicit concatenation) that is the message
/// (parentheses seen through at each step; `docs/rules.md`, "Assertion
/// messages"): Python evaluates it only when the assertion fails.
fn in_assertion_message(name: Node<'_>) -> bool {
    let (mut at, mut parent) = syntax::tree::parenthesized_in(name);
    if let Some(field) = parent.filter(|p| p.kind_name() == "interpolation") {
        // The string (a field of a format spec stands in the spec, which is
        // no message).
        let Some(string) = field.parent() else { return false };
        at = string;
        if let Some(joined) = at.parent().filter(|p| p.kind_name() == "concatenated_string") {
            at = joined;
        }
        (at, parent) = syntax::tree::parenthesized_in(at);
    }
    // The message: the second expression of the statement.
    parent.filter(|s| s.kind_name() == "assert_statement").is_some_and(|statement| {
        let mut cursor = statement.walk();
        let message = statement.named_children(&mut cursor).filter(|e| e.kind_name() != "comment").nth(1);
        message.is_some_and(|m| m.id() == at.id())
    })
}

/// Whether a part of `node` that tree-sitter could not read (an `ERROR`
/// node) names `name`: a use the model does not see may stand there.
fn names_in_errors(node: Node<'_>, src: &str, name: &str) -> bool {
    // Without recursion: a deeply nested tree must not overflow the stack.
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if !n.has_error() {
            continue;
        }
        if n.is_error() && syntax::holds_word(&src[n.byte_range()], name) {
            return true;
        }
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
    }
    false
}

/// For a name bound more than once in the function scope `scope` (its
/// `bindings` there), when it is bound *in sequence* (`docs/rules.md`,
/// "Receivers"): every binding a plain one-target assignment statement
/// standing directly in the function's body, so that each runs once, in
/// order, or the function stops. Then each binding's target with the end of
/// its statement, in order.
fn in_sequence(
    root: Node<'_>,
    model: &SemanticModel,
    scope: ScopeId,
    bindings: &[usize],
) -> Option<Vec<(Range<usize>, usize)>> {
    if model.scopes[scope].kind != ScopeKind::Function {
        return None;
    }
    let mut ends = Vec::with_capacity(bindings.len());
    for &b in bindings {
        let binding = &model.bindings[b];
        // `R = V` (or `(R) = V`): the statement holds the value's
        // assignment.
        let mut assignment = super::plain_assigned_value(root, binding)?;
        while assignment.kind_name() != "assignment" {
            assignment = assignment.parent()?;
        }
        let statement = assignment.parent()?;
        // The function's own body: not a nested function's (which binds
        // the name through `nonlocal`, and may never run).
        let body = statement.parent().filter(|b| b.kind_name() == "block")?;
        let function = body.parent().filter(|f| f.kind_name() == "function_definition")?;
        if function.field("body") != Some(body) || model.scope_at(statement.start_byte()) != scope {
            return None;
        }
        ends.push((binding.at.clone(), statement.end_byte()));
    }
    ends.sort_by_key(|(_, end)| *end);
    Some(ends)
}

/// Whether the subscript `content` (`R["content"]`) is itself loaded at
/// an index `i`, an integer constant `>= 0`: a block the fixes leave where
/// it was.
fn block_index(content: Node<'_>, src: &str) -> Option<usize> {
    let (outer, parent) = syntax::tree::parenthesized_in(content);
    let block = parent.filter(|p| p.kind_name() == "subscript" && p.field("value") == Some(outer))?;
    let mut cursor = block.walk();
    let indexes: Vec<Node<'_>> = block.children_by_field_name("subscript", &mut cursor).collect();
    let [index] = indexes.as_slice() else { return None };
    let index = &src[unparenthesize(*index).byte_range()];
    let digits = !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit());
    (digits && subscript_form(block) == ReadForm::Subscript).then(|| index.parse().unwrap_or(usize::MAX))
}

/// The read that `receiver` (parentheses around it seen through) is the
/// object of, if any.
pub fn read_of(receiver: Node<'_>, src: &str) -> Option<Read> {
    let (e, parent) = syntax::tree::parenthesized_in(receiver);
    let parent = parent?;
    let receiver = e.byte_range();
    let keyed = |form, key: String, at: Node<'_>, literal: Node<'_>| {
        let quote = src[literal.byte_range()].chars().find(|c| matches!(c, '"' | '\'')).unwrap_or('"');
        Some(Read { form, key: Some(key), range: at.byte_range(), receiver: receiver.clone(), quote, block: None })
    };
    let whole = |at: Node<'_>| {
        Some(Read {
            form: ReadForm::Whole,
            key: None,
            range: at.byte_range(),
            receiver: receiver.clone(),
            quote: '"',
            block: None,
        })
    };
    match parent.kind_name() {
        "subscript" if parent.field("value") == Some(e) => {
            let mut cursor = parent.walk();
            let subscripts: Vec<Node<'_>> = parent.children_by_field_name("subscript", &mut cursor).collect();
            let [key] = subscripts.as_slice() else { return None };
            let literal = unparenthesize(*key);
            let key = constant_str(literal, src)?;
            if key == "content" {
                if subscript_form(parent) != ReadForm::Subscript {
                    return None;
                }
                let block = block_index(parent, src);
                let form = if block.is_some() { ReadForm::Block } else { ReadForm::Content };
                return Some(Read { form, key: None, range: parent.byte_range(), receiver, quote: '"', block });
            }
            keyed(subscript_form(parent), key, parent, literal)
        }
        "attribute" if parent.field("object") == Some(e) => {
            let attr = &src[parent.field("attribute")?.byte_range()];
            let call = parent.parent().filter(|c| c.kind_name() == "call")?;
            if call.field("function") != Some(parent) {
                return None;
            }
            let args = call.field("arguments").filter(|a| a.kind_name() == "argument_list")?;
            let mut cursor = args.walk();
            let positional: Vec<Node<'_>> =
                args.named_children(&mut cursor).filter(|a| a.kind_name() != "comment").collect();
            // The key is the first argument (when it is not a keyword);
            // the others do not matter.
            let first_key = || {
                let literal = unparenthesize(*positional.first()?);
                Some((constant_str(literal, src)?, literal))
            };
            let form = match attr {
                "get" => ReadForm::Get,
                "pop" => ReadForm::Pop,
                "setdefault" => ReadForm::Setdefault,
                "keys" | "values" | "items" => return whole(call),
                _ => return None,
            };
            let (key, literal) = first_key()?;
            keyed(form, key, call, literal)
        }
        "comparison_operator" => {
            // In a chain (`0 < "k" in r`), the pair whose right operand is
            // the receiver; the read's span is the whole comparison.
            let mut cursor = parent.walk();
            let operands: Vec<Node<'_>> =
                parent.named_children(&mut cursor).filter(|n| n.kind_name() != "comment").collect();
            let at = operands.iter().position(|o| *o == e)?;
            let operator = |i: usize| -> Vec<&str> {
                src[operands[i - 1].end_byte()..operands[i].start_byte()].split_whitespace().collect()
            };
            let form = match (at > 0).then(|| operator(at)).as_deref() {
                Some(["in"]) => ReadForm::In,
                Some(["not", "in"]) => ReadForm::NotIn,
                left => {
                    // `r == {...}` (a test's favourite) sees every key.
                    let right = (at + 1 < operands.len()).then(|| operator(at + 1));
                    let equality = |op: Option<&[&str]>| matches!(op, Some(["=="] | ["!="]));
                    return (equality(left) || equality(right.as_deref())).then(|| whole(parent)).flatten();
                }
            };
            let left = operands[at - 1];
            let literal = unparenthesize(left);
            keyed(form, constant_str(literal, src)?, parent, literal)
        }
        // `**r` in a dict display or in the arguments of a call (not of a
        // class header).
        "dictionary_splat" => {
            let holder = parent.parent()?;
            let in_call =
                holder.kind_name() == "argument_list" && holder.parent().is_some_and(|c| c.kind_name() == "call");
            if holder.kind_name() == "dictionary" || in_call { whole(parent) } else { None }
        }
        "argument_list" => {
            let call = parent.parent().filter(|c| c.kind_name() == "call")?;
            let mut cursor = parent.walk();
            let args: Vec<Node<'_>> =
                parent.named_children(&mut cursor).filter(|a| a.kind_name() != "comment").collect();
            if args.first() != Some(&e) {
                return None;
            }
            let function = call.field("function")?;
            let callee = &src[function.byte_range()];
            match callee {
                "dict" => whole(call),
                _ if is_json_dumps(function, src) => whole(call),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether the subscript `at` is stored into or deleted, or only loaded.
fn subscript_form(at: Node<'_>) -> ReadForm {
    let (node, parent) = syntax::tree::parenthesized_in(at);
    let Some(parent) = parent else { return ReadForm::Subscript };
    // A subscript inside an unpacking target is a target too.
    let (mut target, mut holder) = (node, parent);
    while matches!(holder.kind_name(), "pattern_list" | "tuple_pattern" | "list_pattern" | "expression_list") {
        let Some(up) = holder.parent() else { break };
        (target, holder) = (holder, up);
    }
    match holder.kind_name() {
        "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause"
            if holder.field("left") == Some(target) =>
        {
            ReadForm::Store
        }
        "as_pattern_target" => ReadForm::Store,
        "delete_statement" => ReadForm::Delete,
        _ => ReadForm::Subscript,
    }
}

/// Whether `function` is `json.dumps`.
fn is_json_dumps(function: Node<'_>, src: &str) -> bool {
    function.kind_name() == "attribute"
        && function.field("object").is_some_and(|o| o.kind_name() == "identifier" && &src[o.byte_range()] == "json")
        && function.field("attribute").is_some_and(|a| &src[a.byte_range()] == "dumps")
}

/// Whether `def` (of `src`) is a generator: a `yield` in its own scope.
pub(crate) fn yields(def: Node<'_>, src: &str) -> bool {
    // A `yield` needs the word in the function's text, which most lack:
    // their bodies are not walked.
    if !src[def.byte_range()].contains("yield") {
        return false;
    }
    let mut found = false;
    own_scope_nodes(def, |_| true, |node| found |= node.kind_name() == "yield");
    found
}

/// Calls `visit` on every node of `def`'s body outside nested scopes that
/// the walk reaches: it enters the nodes `descend` says may hold what is
/// looked for.
pub(crate) fn own_scope_nodes<'t>(def: Node<'t>, descend: impl Fn(Node<'t>) -> bool, mut visit: impl FnMut(Node<'t>)) {
    let Some(body) = def.field("body") else { return };
    let mut stack = vec![body];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind_name() {
                "function_definition" | "lambda" | "class_definition" => {}
                _ => {
                    visit(child);
                    if descend(child) {
                        stack.push(child);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generator_yields_in_its_own_scope_and_a_function_without_the_word_is_none() {
        let src = "def gen():\n    x = 1\n    yield x\n\n\
                   def plain():\n    return {'status': 'success'}\n\n\
                   def outer():\n    def inner():\n        yield 1\n    return inner\n\n\
                   def named(yielded):\n    return yielded\n\n\
                   async def agen():\n    v = yield\n";
        let tree = syntax::parse(src);
        let root = tree.root_node();
        let defs: Vec<(&str, bool)> = root
            .named_children(&mut root.walk())
            .map(|d| (d.field("name").map_or("", |n| &src[n.byte_range()]), yields(d, src)))
            .collect();
        assert_eq!(defs, [("gen", true), ("plain", false), ("outer", false), ("named", false), ("agen", true)]);
    }

    /// [`call_reads_in`] of a whole parse, every call followed.
    fn call_reads(root: Node<'_>, src: &str, model: &SemanticModel) -> Vec<CallReads> {
        call_reads_in(root, src, model, &|_| true, &|_| true, None).unwrap_or_default()
    }

    /// Asserts that [`value_uses`] finds the same nodes, in the same
    /// order, by a walk of the tree and from the places of the names.
    fn assert_same_uses(src: &str, names: &std::collections::BTreeSet<String>) {
        let tree = syntax::parse(src);
        let model = SemanticModel::build(tree.root_node(), src);
        let bytes = src.as_bytes();
        let names_at: Vec<usize> = (0..src.len())
            .filter(|&at| at == 0 || !syntax::lexer::is_ident_byte(bytes[at - 1]))
            .filter(|&at| {
                let end = at + bytes[at..].iter().take_while(|&&b| syntax::lexer::is_ident_byte(b)).count();
                names.contains(&src[at..end])
            })
            .collect();
        let walked = value_uses(tree.root_node(), src, &model, names, None);
        let looked_up = value_uses(tree.root_node(), src, &model, names, Some(&names_at));
        assert!(!walked.is_empty());
        assert_eq!(walked, looked_up);
    }

    /// The reads of every call to `f(...)` in `src`, as `form key text`.
    fn reads(src: &str) -> Vec<String> {
        let tree = syntax::parse(src);
        let model = SemanticModel::build(tree.root_node(), src);
        call_reads(tree.root_node(), src, &model)
            .into_iter()
            .filter(|c| src[c.call.clone()].starts_with("f("))
            .flat_map(|c| c.reads)
            .map(|r| format!("{} {} {}", r.form.as_str(), r.key.as_deref().unwrap_or("-"), &src[r.range]))
            .collect()
    }

    #[test]
    fn every_keyed_form_on_a_call_and_on_a_name() {
        let src = "\
def test():
    assert f()[\"locked\"] is True
    r = f()
    r.get('a')
    r.get(\"b\", 0)
    assert \"c\" in r
    assert 'd' not in (r)
    r.pop('e')
    r.setdefault('g', 1)
    r['h'] = 2
    r['i'] += 1
    del r['j']
    x = r[\"k\" \"l\"]
";
        assert_eq!(
            reads(src),
            [
                "subscript locked f()[\"locked\"]",
                "get a r.get('a')",
                "get b r.get(\"b\", 0)",
                "in c \"c\" in r",
                "not-in d 'd' not in (r)",
                "pop e r.pop('e')",
                "setdefault g r.setdefault('g', 1)",
                "store h r['h']",
                "store i r['i']",
                "delete j r['j']",
                "subscript kl r[\"k\" \"l\"]",
            ]
        );
    }

    #[test]
    fn uses_of_the_whole_result() {
        // A module-level name can be read from elsewhere: the result is
        // handed on too.
        let src = "import json\nr = f()\nprint(json.dumps(r), dict(r), {**r}, g(**r), list(r.items()), r.keys(), r.values())\n";
        assert_eq!(
            reads(src),
            [
                "escape - f()",
                "whole - json.dumps(r)",
                "whole - dict(r)",
                "whole - **r",
                "whole - **r",
                "whole - r.items()",
                "whole - r.keys()",
                "whole - r.values()"
            ]
        );
    }

    #[test]
    fn an_awaited_call_is_read_as_the_call() {
        let src = "async def t():\n    r = await f()\n    r['a']\n    (await f())['b']\n    'c' in (await (f()))\n    await f()['d']\n";
        // `await f()['d']` awaits the subscript: a read of the call itself.
        assert_eq!(
            reads(src),
            ["subscript a r['a']", "subscript b (await f())['b']", "in c 'c' in (await (f()))", "subscript d f()['d']"]
        );
    }

    /// The possible reads of `src`, as `form key text`.
    fn possible(src: &str) -> Vec<String> {
        let tree = syntax::parse(src);
        let model = SemanticModel::build(tree.root_node(), src);
        possible_reads(tree.root_node(), src, &model)
            .into_iter()
            .map(|r| format!("{} {} {}", r.form.as_str(), r.key.as_deref().unwrap_or("-"), &src[r.range]))
            .collect()
    }

    #[test]
    fn a_name_bound_to_a_possible_receiver_is_one() {
        let src = "\
def frames(msg):
    for c in msg['content']:
        tr = c['toolResult']
        out = tr.get('path')
        r = (c.last_tool_result)
        def inner():
            return r['size']
    return tr['text']

async def hook(event: AfterToolCallEvent, other):
    res = event.result
    other_res = other.result
    return res['a'], other_res['b']

tr = block['toolResult']
def reads_module_alias():
    return 'k' in tr

(paren) = block['toolResult']
paren['p']
";
        assert_eq!(
            possible(src),
            [
                "get path tr.get('path')",
                "subscript size r['size']",
                "subscript text tr['text']",
                "subscript a res['a']",
                "in k 'k' in tr",
                "subscript p paren['p']",
            ]
        );
    }

    #[test]
    fn only_a_plain_assignment_of_a_receiver_makes_an_alias() {
        // Annotated, chained, unpacked, walrus, augmented, a call, a name,
        // a non-literal index: no alias.
        let src = "\
def f(c, tool_result):
    a: dict = c['toolResult']
    b = d = c['toolResult']
    e, g = c['toolResult'], 1
    (h := c['toolResult'])
    i = c.get('toolResult')
    j = tool_result
    key = 'toolResult'
    k = c[key]
    return a['x'], b['x'], d['x'], e['x'], h['x'], i['x'], j['x'], k['x']
";
        let found = possible(src);
        assert!(found.iter().all(|r| !r.ends_with("['x']") || r.ends_with("tool_result['x']")), "{found:?}");
    }

    #[test]
    fn comparing_the_whole_result_sees_every_key() {
        let src = "r = f()\nassert r == {'a': 1}\nassert {} != r\nassert 0 < r == x\nassert r is None\nassert r < 3\n";
        assert_eq!(reads(src), ["escape - f()", "whole - r == {'a': 1}", "whole - {} != r", "whole - 0 < r == x"]);
    }

    #[test]
    fn names_bound_more_than_once_or_read_elsewhere_are_not_followed() {
        // Rebound, unpacked, chained, read in a nested scope, or a dynamic
        // key: no read is followed, and each result is handed on.
        let src = "\
r = f()
r = g()
r['a']
a, b = f(), 1
a['b']
c = d = f()
c['e']
def outer():
    s = f()
    def inner():
        return s['x']
    return s[name], s.get(key), s['y':], s['z', 1]
";
        assert_eq!(reads(src), ["escape - f()"; 4]);
    }

    #[test]
    fn an_assertion_message_is_no_read_and_hands_nothing_on() {
        let exclusive = |src: &str| {
            let tree = syntax::parse(src);
            let model = SemanticModel::build(tree.root_node(), src);
            let calls = call_reads(tree.root_node(), src, &model);
            calls.iter().filter(|c| src[c.call.clone()].starts_with("f(")).map(|c| c.exclusive).collect::<Vec<_>>()
        };
        for message in [
            "r",
            "(r)",
            "f\"got {r}\"",
            "f'{r!r}'",
            "f'{r=}'",
            "f'{(r)}'",
            "(f'{r}' 'tail')",
            "'head' f'{r:>9}'",
            "f'{r[\"a\"]}'",
        ] {
            let src = format!("def t():\n    r = f()\n    assert r['a'] == 1, {message}\n");
            let got = reads(&src);
            assert!(got.iter().all(|r| !r.starts_with("escape")), "{src}: {got:?}");
            assert!(got.contains(&"subscript a r['a']".to_owned()), "{src}: {got:?}");
            assert_eq!(exclusive(&src), [true], "{src}");
        }
        // Bound in sequence: only the result the message sees.
        let src = "def t():\n    r = f(1)\n    assert r['a'], r\n    r = f(2)\n    print(r)\n";
        assert_eq!(reads(src), ["subscript a r['a']", "escape - f(2)"]);
        // Anything else still hands the result on: a call or a tuple as the
        // message, a field of a format spec, the test itself, a nested
        // scope, the module.
        for src in [
            "def t():\n    r = f()\n    assert r['a'], str(r)\n",
            "def t():\n    r = f()\n    assert r['a'], (r, 1)\n",
            "def t(x):\n    r = f()\n    assert r['a'], f'{x:{r}}'\n",
            "def t():\n    r = f()\n    assert r, r['a']\n",
            "def t():\n    r = f()\n    r['a']\n    assert r\n",
            "def t():\n    r = f()\n    r['a']\n    def g():\n        assert 1, r\n",
            "r = f()\nassert r['a'], r\n",
        ] {
            let got = reads(src);
            assert!(got.iter().any(|r| r.starts_with("escape")), "{src}: {got:?}");
        }
    }

    #[test]
    fn a_name_bound_in_sequence_is_read_binding_by_binding() {
        // Each read sees the statement above it (one in the value of a
        // rebinding sees the one before); a use that is no read hands on
        // only the result it sees.
        let src = "\
def t():
    r = f(1)
    r['a']
    r = f(r['b'])
    print(r)
    r = g()
    r.copy()
    r = f(3)
    'c' in r
";
        assert_eq!(reads(src), ["subscript a r['a']", "subscript b r['b']", "escape - f(r['b'])", "in c 'c' in r"]);
        // A rebinding in an `if` or `with`, a use in a nested scope, or one
        // before the first binding ends: every result is handed on, as a
        // name bound twice always was.
        for src in [
            "def t(a):\n    r = f()\n    r['a']\n    if a:\n        r = f()\n    r['b']\n",
            "def t(a):\n    r = f()\n    r['a']\n    with a:\n        r = f()\n    r['b']\n",
            "def t():\n    r = f()\n    r['a']\n    r = f()\n    return lambda: r['b']\n",
            "def t():\n    r['z']\n    r = f()\n    r['a']\n    r = f()\n    r['b']\n",
            "def t():\n    r = f()\n    r['a']\n    r: dict = f()\n    r['b']\n",
            "def t():\n    r = f()\n    r = f()\n    r['a']\n    def g():\n        nonlocal r\n        r = None\n",
            "def t():\n    r = f()\n    r['a']\n    r = f()\n    def g() -> r.get('b'): pass\n",
        ] {
            let got = reads(src);
            assert_eq!(got.iter().filter(|r| r.starts_with("escape")).count(), 2, "{src}: {got:?}");
        }
    }

    #[test]
    fn nothing_in_an_annotation_is_read() {
        // A name loaded in one hands its result on; a call in one is handed
        // on; defaults are read where they are written.
        let src = "\
def t():
    r = f()
    def g(x: r.get('a'), y=r.get('b')) -> r['c']:
        pass
    s = f()
    z: s['d'] = 1
    def h(x: f()['e']):
        pass
";
        assert_eq!(reads(src), ["escape - f()", "get b r.get('b')", "escape - f()", "escape - f()"]);
        // Where tree-sitter cannot read an annotation, uses may hide: the
        // result is handed on.
        assert_eq!(reads("def t():\n    r = f()\n    z: r['content'][0] = 1\n"), ["escape - f()"]);
        assert_eq!(reads("def t():\n    r = f()\n    def g[T: r.get('a')](): pass\n"), ["escape - f()"]);
        let src = "def t(tool_result):\n    def g(x: tool_result.get('k')): pass\n    tool_result.get('j')\n";
        assert_eq!(possible(src), ["get j tool_result.get('j')"]);
    }

    #[test]
    fn a_result_is_handed_on_unless_dropped_returned_read_or_bound_to_a_name_only_read() {
        let src = "\
async def t(self, a):
    f()
    await f()
    self.r = f()
    check(f())
    x = [f()]
    y = f() if a else None
    for k in f():
        pass
    s = f()
    s['k']
    u = (await (f()))
    print(u['v'], u)
    w = f()
    w.copy()
    return f()
";
        assert_eq!(
            reads(src),
            [
                "escape - f()",
                "escape - f()",
                "escape - f()",
                "escape - f()",
                "escape - f()",
                "subscript k s['k']",
                "escape - await (f())",
                "subscript v u['v']",
                "escape - f()",
            ]
        );
    }

    /// Per call of `f`: its reads, and whether the receiver is exclusive.
    fn reads_and_exclusive(src: &str) -> Vec<(Vec<String>, bool)> {
        let tree = syntax::parse(src);
        let model = SemanticModel::build(tree.root_node(), src);
        call_reads(tree.root_node(), src, &model)
            .into_iter()
            .filter(|c| src[c.call.clone()].starts_with("f("))
            .map(|c| {
                let reads = c.reads.iter().map(|r| format!("{} {}", r.form.as_str(), &src[r.range.clone()])).collect();
                (reads, c.exclusive)
            })
            .collect()
    }

    #[test]
    fn a_result_handed_to_a_checking_function_is_read_there() {
        let src = "\
def ok(r, /, note=''):
    assert r['status'] == 'success', f'{r!r}'
    return (r)

def frames(result):
    return result['frames']

def block(x, r: dict = None):
    assert r['content'][0]['text']

def t1():
    r = ok(f())
    r['k']

def t2():
    ok(f())['k']

def t3():
    r = f()
    ok(r)
    r['k']

def t4():
    frames(f())

def t5():
    block(1, f())

def t6():
    ok(ok(f()))['k']

def t7():
    return ok(f())
";
        assert_eq!(
            reads_and_exclusive(src),
            [
                (vec!["subscript r['status']".into(), "subscript r['k']".into()], true),
                (vec!["subscript r['status']".into(), "subscript ok(f())['k']".into()], true),
                (vec!["subscript r['status']".into(), "subscript r['k']".into()], true),
                (vec!["subscript result['frames']".into()], false),
                (vec!["block r['content']".into()], true),
                (
                    vec![
                        "subscript r['status']".into(),
                        "subscript r['status']".into(),
                        "subscript ok(ok(f()))['k']".into()
                    ],
                    true
                ),
                (vec!["subscript r['status']".into(), "escape f()".into()], false),
            ]
        );
        // What makes a function no checking function: the result is
        // handed on there.
        for (def, call) in [
            ("@d\ndef c(r):\n    return r['status']", "c(f())"),
            ("async def c(r):\n    return r['status']", "c(f())"),
            ("if a:\n    def c(r):\n        return r['status']", "c(f())"),
            ("def c(r):\n    return r\ndef c(r):\n    return r", "c(f())"),
            ("from m import c", "c(f())"),
            ("def c(r):\n    return r['status']", "c(*[f()])"),
            ("def c(r):\n    return r['status']", "c(r=f())"),
            ("def c(r):\n    r = dict(r)\n    return r", "c(f())"),
            ("def c(r):\n    return [r['status'] for x in y]", "c(f())"),
            ("def c(r):\n    print(r)", "c(f())"),
            ("def c(r):\n    return r, 1", "c(f())"),
            ("def c(r):\n    yield r['status']", "c(f())"),
            ("def c(*a, r=None):\n    return r['status']", "c(f())"),
            ("def c(*, r):\n    return r['status']", "c(f())"),
            ("import m", "m.c(f())"),
            ("def c(r):\n    return r['status']", "(c)(f())"),
            ("def c(r):\n    return r['status']", "c(1, f())"),
        ] {
            let src = format!("{def}\ndef t():\n    x = {call}\n");
            let got = reads_and_exclusive(&src);
            assert_eq!(got, [(vec![format!("escape f()")], false)], "{src}");
        }
    }

    #[test]
    fn uses_as_a_value_are_found_and_calls_attributes_and_targets_are_not() {
        let src = "\
from m import f
def g(x=f):
    pool.submit(f, 1)
    handlers = [f, (self.f), obj.f]
    f()
    (f)(1)
    self.f()
    print(f.__name__, self.f.__doc__)
    self.f = 3
    del obj.f
    return K().f, n.f, agent.tool.f
def h(f=f):
    return f
";
        let tree = syntax::parse(src);
        let model = SemanticModel::build(tree.root_node(), src);
        let names: std::collections::BTreeSet<String> = ["f".to_owned()].into_iter().collect();
        let found: Vec<(usize, &str)> = value_uses(tree.root_node(), src, &model, &names, None)
            .into_iter()
            .map(|n| (n.start_position().row + 1, &src[n.byte_range()]))
            .collect();
        assert_same_uses(src, &names);
        // Which of them stand for a producer is the project's to say; in
        // `h`, the parameter `f` shadows it, but not in its default.
        assert_eq!(
            found,
            [
                (2, "f"),
                (3, "f"),
                (4, "f"),
                (4, "self.f"),
                (4, "obj.f"),
                (11, "K().f"),
                (11, "n.f"),
                (11, "agent.tool.f"),
                (12, "f")
            ]
        );
    }

    #[test]
    fn names_like_producers_are_uses_where_a_call_of_them_could_be_unresolved() {
        let src = "\
x = 1
def t(p):
    from q import f2
    y = 2
    g(f2, x, f3, y, p, z)
";
        let tree = syntax::parse(src);
        let model = SemanticModel::build(tree.root_node(), src);
        let names: std::collections::BTreeSet<String> =
            ["f2", "x", "f3", "y", "p"].into_iter().map(str::to_owned).collect();
        let found: Vec<&str> =
            value_uses(tree.root_node(), src, &model, &names, None).into_iter().map(|n| &src[n.byte_range()]).collect();
        assert_same_uses(src, &names);
        // A local variable or a parameter is no use of a producer; a name
        // not among `names` (`z`) is the project's to resolve.
        assert_eq!(found, ["f2", "x", "f3"]);
    }

    #[test]
    fn a_use_gives_another_name_as_an_assigned_returned_yielded_or_paired_value() {
        let src = "\
fn = f
fn: T = (f)
a = fn = f
(fn := f)
{'f': f}
{k: f for k in ks}
a, b = f, 1
x += f
[f]
g(f)
{f: 1}
y: f = 1
f = 1
def h():
    yield f
    yield from f
    return f
    return f, 1
";
        let tree = syntax::parse(src);
        let mut named = Vec::new();
        syntax::for_each_node(tree.root_node(), |n| {
            if n.kind_name() == "identifier" && &src[n.byte_range()] == "f" {
                named.push((n.start_position().row + 1, gives_another_name(n)));
            }
        });
        let lines: Vec<usize> = named.iter().filter(|(_, yes)| *yes).map(|(l, _)| *l).collect();
        assert_eq!(lines, [1, 2, 3, 4, 5, 15, 17]);
        assert_eq!(named.len(), 17);
    }

    #[test]
    fn a_use_is_handed_to_a_kept_call_as_a_positional_argument_of_a_call_not_dropped() {
        let src = "\
r = to_thread(f, 1)
x = await (run((f)))
fut = pool.submit(f, 2)
g = partial(f)
list(map(f, xs))
assert inspect.signature(f)
register(f)
await run(f)
(register(f))
register(f), 1
Agent(tools=f)
Thread(target=f)
g(*f)
[f]
ok = callable(f) and isinstance(f, object)
s = repr(f)
k = (hasattr)(f, 'x')
f(1)
def scoped():
    vars = dict
    return vars(f)
";
        let tree = syntax::parse(src);
        let model = SemanticModel::build(tree.root_node(), src);
        let mut handed = Vec::new();
        syntax::for_each_node(tree.root_node(), |n| {
            if n.kind_name() == "identifier" && &src[n.byte_range()] == "f" {
                handed.push((n.start_position().row + 1, handed_to_a_kept_call(n, src, &model)));
            }
        });
        let lines: Vec<usize> = handed.iter().filter(|(_, yes)| *yes).map(|(l, _)| *l).collect();
        // Kept values; then `register(f), 1` (a tuple is kept) and a
        // looking builtin the function rebinds.
        assert_eq!(lines, [1, 2, 3, 4, 5, 6, 10, 21]);
        assert_eq!(handed.len(), 20);
    }
}
