//! What the code around a tool-result dict says about it: whether it is
//! what a Strands tool returns. Facts here come from a parse of the
//! functions around the candidate displays with the module's own
//! statements (the whole file where that does not serve), made only when a
//! fix's safety depends on them (see [`FileContext`]), so the fast path
//! keeps parsing candidate regions only.
//!
//! A Strands tool is a function decorated `@tool`, `@strands.tool` or
//! `@strands.tools.tool`, with or without call arguments; anything else
//! (`@mcp.tool`, a plain function) is not, and what cannot be told is
//! treated as "not": unknown makes a fix unsafe, never wrong.

pub mod project;
pub mod reads;
pub mod results;
pub mod scope;

use std::cell::OnceCell;
use std::ops::Range;
use std::sync::Arc;

use tree_sitter::{Node, Tree};

use crate::syntax;
use crate::syntax::tree::unparenthesize;
use crate::syntax::tree::{FieldChild, KindName};
use scope::{BindingKind, Resolution, ScopeKind, SemanticModel};

/// Decorator spellings that make a function a Strands tool.
pub const TOOL_DECORATORS: [&str; 3] = ["tool", "strands.tool", "strands.tools.tool"];

/// The tree a [`FileContext`] answers from, with its scopes and bindings.
struct View {
    tree: Tree,
    model: OnceCell<Arc<SemanticModel>>,
    /// The function bodies an outline left out (empty: the whole file).
    blanked: Vec<Range<usize>>,
    /// The outline's text, when the view is one ([`syntax::outline`]).
    outline: Option<String>,
    /// The ranges of its text that [`syntax::parse_ranges`] parsed for the
    /// tree (empty: the whole text, by [`syntax::parse`]): its model is the
    /// one every pass shares ([`SemanticModel::of`]).
    parsed: Vec<Range<usize>>,
}

impl View {
    /// The view of the whole file: `tree` is [`syntax::parse`]'s.
    fn whole(tree: Tree) -> View {
        View { tree, model: OnceCell::new(), blanked: Vec::new(), outline: None, parsed: Vec::new() }
    }

    fn model(&self, src: &str) -> &SemanticModel {
        self.model.get_or_init(|| SemanticModel::of(&self.tree, self.outline.as_deref().unwrap_or(src), &self.parsed))
    }
}

/// Places of a file whose code a comment silences, with the code.
pub type Silenced = Vec<(usize, crate::diagnostics::Code)>;

/// A view of one source for the questions asked about the code around its
/// tool-result dicts, parsed on first use. Given the places the questions
/// are about (`focus`: the candidate displays a check parsed), the view is
/// an outline ([`syntax::outline`]) that keeps whole the module's own
/// statements, its classes' bodies and the functions holding those places,
/// and leaves out the bodies of the other functions: what a function-level
/// question needs (its own scope, and the module's names it resolves
/// through) for what those bytes cost. A place outside every top-level
/// function, one in a function declaring a `global` name that a body left
/// out names too, an outline that would leave out less than a quarter of
/// the file (its whole tree may serve a later pass too), or one that does
/// not parse cleanly makes the view the whole file; the few questions that
/// need the whole file in any case ([`FileContext::binds_anywhere`], the
/// uses of a module-level name) parse it whole then.
pub struct FileContext<'s> {
    src: &'s str,
    /// The offsets the questions are about (empty: parse whole).
    focus: Vec<usize>,
    /// The starts of the candidate displays that stand right inside another
    /// `{...}` ([`syntax::ParsedPiece::in_display`]), sorted.
    in_display: Vec<usize>,
    view: OnceCell<View>,
    whole: OnceCell<View>,
    /// The offsets of the carriage returns of `src` not followed by a line
    /// feed (line breaks to Python only), found once.
    lone_crs: OnceCell<Vec<usize>>,
    /// Where the lines of `src` start, found once for every rule and plan
    /// that asks.
    lines: OnceCell<crate::syntax::LineIndex>,
    /// Where the file's line tails stop, for suppression questions.
    tails: crate::suppress::LineTails<'s>,
    /// The last window asked of [`FileContext::silenced_in`], and its answer.
    silenced: std::cell::RefCell<Option<(Range<usize>, Silenced)>>,
}

impl<'s> FileContext<'s> {
    /// A context for `src`; `tree`, when given, is the tree [`syntax::parse`]
    /// gives for `src`, reused.
    pub fn new(src: &'s str, tree: Option<Tree>) -> Self {
        let view = OnceCell::new();
        if let Some(tree) = tree {
            let _ = view.set(View::whole(tree));
        }
        FileContext {
            src,
            focus: Vec::new(),
            in_display: Vec::new(),
            view,
            whole: OnceCell::new(),
            lone_crs: OnceCell::new(),
            lines: OnceCell::new(),
            tails: crate::suppress::LineTails::new(src),
            silenced: std::cell::RefCell::new(None),
        }
    }

    /// A context that reuses the tree of `pieces` when one is the whole file,
    /// and else is about the places `pieces` parsed.
    pub fn for_pieces(src: &'s str, pieces: &[syntax::ParsedPiece]) -> Self {
        FileContext::for_pieces_and(src, pieces, &[])
    }

    /// [`FileContext::for_pieces`], about the displays at `unparsed` too
    /// (candidates a check left unparsed, [`syntax::plain`]).
    pub fn for_pieces_and(src: &'s str, pieces: &[syntax::ParsedPiece], unparsed: &[usize]) -> Self {
        match pieces {
            [p] if p.offset == 0 && p.tree.root_node().end_byte() == src.len() => {
                FileContext::new(src, Some(p.tree.clone()))
            }
            _ => FileContext {
                focus: {
                    let mut focus: Vec<usize> =
                        pieces.iter().map(|p| p.offset).chain(unparsed.iter().copied()).collect();
                    focus.sort_unstable();
                    focus
                },
                in_display: pieces.iter().filter(|p| p.in_display).map(|p| p.offset).collect(),
                ..FileContext::new(src, None)
            },
        }
    }

    /// The 1-based line of the byte offset `at`, for reasons.
    fn line_of(&self, at: usize) -> usize {
        self.src[..at].matches('\n').count() + 1
    }

    /// The line starts of the file.
    pub fn line_index(&self) -> &crate::syntax::LineIndex {
        self.lines.get_or_init(|| crate::syntax::LineIndex::new(self.src))
    }

    /// The stops of the file's line tails (line breaks and `#`s), which the
    /// questions about one file share.
    pub fn line_tails(&self) -> &crate::suppress::LineTails<'s> {
        &self.tails
    }

    /// The silenced codes of `window` (lines of the file) as `compute`
    /// finds them, kept for the next ask about the same window: the dicts
    /// of one line ask alike.
    pub fn silenced_in(&self, window: Range<usize>, compute: impl FnOnce() -> Silenced) -> Silenced {
        if let Some((asked, answer)) = &*self.silenced.borrow()
            && *asked == window
        {
            return answer.clone();
        }
        let answer = compute();
        *self.silenced.borrow_mut() = Some((window, answer.clone()));
        answer
    }

    /// Whether `range` of the file holds a carriage return not followed by
    /// a line feed (one search of the file, however many ranges ask).
    fn has_lone_cr_in(&self, range: Range<usize>) -> bool {
        let bytes = self.src.as_bytes();
        let crs = self.lone_crs.get_or_init(|| {
            memchr::memchr_iter(b'\r', bytes).filter(|&at| bytes.get(at + 1) != Some(&b'\n')).collect()
        });
        let first = crs.partition_point(|&at| at < range.start);
        crs.get(first).is_some_and(|&at| at < range.end)
    }

    /// Whether the whole file has been parsed already.
    pub fn is_parsed(&self) -> bool {
        self.view.get().is_some_and(|v| v.outline.is_none()) || self.whole.get().is_some()
    }

    fn view(&self) -> &View {
        self.view.get_or_init(|| outline_view(self.src, &self.focus).unwrap_or_else(|| self.parse_whole()))
    }

    fn parse_whole(&self) -> View {
        View::whole(syntax::parse(self.src))
    }

    /// The whole file's view: the view itself unless it is an outline.
    fn whole_view(&self) -> &View {
        let view = self.view();
        if view.outline.is_none() {
            return view;
        }
        self.whole.get_or_init(|| self.parse_whole())
    }

    /// The tree of the view: the whole file, or an outline holding every
    /// place the context is about, with the file's offsets.
    pub fn tree(&self) -> &Tree {
        &self.view().tree
    }

    /// The view's scopes and bindings, built on first use.
    pub fn model(&self) -> &SemanticModel {
        self.view().model(self.src)
    }

    /// The whole file's tree (the view's, unless the view is an outline).
    pub fn whole_tree(&self) -> &Tree {
        &self.whole_view().tree
    }

    /// The whole file's scopes and bindings.
    pub fn whole_model(&self) -> &SemanticModel {
        self.whole_view().model(self.src)
    }

    /// Whether anything in the file binds `name`, in any scope.
    pub fn binds_anywhere(&self, name: &str) -> bool {
        let view = self.view();
        let left_out = view.blanked.iter().any(|body| syntax::holds_word(&self.src[body.clone()], name));
        let view = if left_out { self.whole_view() } else { view };
        view.model(self.src).bindings.iter().any(|b| b.name == name)
    }

    /// Whether the content name at `name` (file bytes), in the tool-result
    /// dict at `dict`, is provably a fresh list that nothing changes or sees
    /// after the dict is built, so that `[*name, {"json": ...}]` holds the
    /// same blocks: every binding of it in the function building the result
    /// is a list display, a list comprehension or `list(...)`, or adds a list
    /// display with `+=`; before the dict it is only grown with `append`,
    /// `extend`, `insert` or `+=`, measured with `len()`, iterated or tested;
    /// after the dict, in a nested scope, or around a loop it is not used.
    /// `Err` says why not.
    pub fn content_is_fresh_list(&self, name: Range<usize>, dict: Range<usize>) -> Result<(), String> {
        let src = self.src;
        let model = self.model();
        let text = &src[name.clone()];
        let line = |at: usize| self.line_of(at);
        let here = model.scope_at(name.start);
        let (scope, bindings) = match model.resolve(text, here) {
            Resolution::Bindings { scope, bindings } => (scope, bindings),
            Resolution::Builtin => return Err(format!("`{text}` is not bound in this module")),
            Resolution::Unknown => return Err(format!("`{text}` may come from a star import")),
        };
        if scope != model.scope_at(dict.start) || model.scopes[scope].kind == ScopeKind::Module {
            return Err(format!("`{text}` is not a local of the function that builds the result"));
        }
        let root = self.tree().root_node();
        let node_at = |r: &Range<usize>| root.descendant_for_byte_range(r.start, r.end);
        for &b in &bindings {
            let binding = &model.bindings[b];
            // `alias = name = [...]` binds the same list to another name.
            let chained = node_at(&binding.at).and_then(|n| n.parent()).is_some_and(|a| {
                a.kind_name() == "assignment"
                    && (a.parent().is_some_and(|p| p.kind_name() == "assignment")
                        || a.field("right").is_some_and(|r| r.kind_name() == "assignment"))
            });
            if chained {
                return Err(format!("`{text}` is bound at line {} together with another name", line(binding.at.start)));
            }
            let fresh = binding.value.as_ref().and_then(node_at).is_some_and(|v| match binding.kind {
                BindingKind::Assignment => self.is_fresh_list(v, here),
                BindingKind::AugmentedAssignment => {
                    let plus = v.prev_sibling().is_some_and(|op| &src[op.byte_range()] == "+=");
                    plus && matches!(unparenthesize(v).kind_name(), "list" | "list_comprehension")
                }
                _ => false,
            });
            if !fresh {
                return Err(format!(
                    "`{text}` is also bound at line {} to something that may not be a fresh list",
                    line(binding.at.start)
                ));
            }
        }
        // No loop between the dict and the function: a use earlier in the
        // loop body runs after the previous result was built.
        let dict_node = node_at(&dict).ok_or("the dict is not in the tree")?;
        let mut statement = dict_node;
        while let Some(p) = statement.parent().filter(|p| !matches!(p.kind_name(), "block" | "module")) {
            statement = p;
        }
        let statement = statement.byte_range();
        let mut up = dict_node.parent();
        while let Some(n) = up.filter(|n| {
            n.start_byte() >= model.scopes[scope].range.start && n.byte_range() != model.scopes[scope].range
        }) {
            if matches!(n.kind_name(), "for_statement" | "while_statement") {
                return Err(format!("the result is built in a loop, where `{text}` may change after it"));
            }
            up = n.parent();
        }
        for reference in model.references_to(scope, text) {
            if reference.at == name {
                continue;
            }
            let at = line(reference.at.start);
            if reference.scope != scope {
                return Err(format!("`{text}` is used in a nested scope at line {at}"));
            }
            if reference.at.start >= dict.end {
                return Err(format!(
                    "`{text}` is used at line {at}, after the result is built: the result would no longer share that list"
                ));
            }
            let node = node_at(&reference.at).ok_or("a reference is not in the tree")?;
            // Inside the dict, the entries moved after the content list
            // run after `[*name, ...]` copied it: only reads may stand there.
            // So in the rest of the dict's statement, which may run after
            // the dict (`t[name.append(x)] = {...}`, `a if {...} else b`).
            let inside = reference.at.start >= statement.start;
            if inside && !is_len_argument(node, src, model, scope) {
                return Err(format!("`{text}` is used inside the result at line {at} in a way that may change it"));
            }
            if !harmless_use(node, src, model, scope) {
                return Err(format!("`{text}` is passed on or changed at line {at} in a way toolshape cannot follow"));
            }
        }
        Ok(())
    }

    /// Where the dict display at `dict` (file bytes) goes, if it is handed
    /// to code whose reads of the moved keys are unknown: the argument of a
    /// call (`Wrap({...})`), or a display bound by an assignment to a name
    /// that is used other than by being returned or changed in place
    /// (`r["k"] = v`, `r.update(...)`, `r |= ...`: the later-write pass
    /// follows those; a read by key there would see the keys moved). A
    /// test's `expected = {...}` then `assert events == [Event(expected)]`
    /// is the case in point: fixed alone, the comparison fails. Parentheses and the branches of a
    /// conditional expression are seen through; a display returned,
    /// yielded or nested in another is left to the other checks. (A
    /// module-level name is judged by its uses in its module; imports of it
    /// elsewhere are not followed.)
    pub fn result_escapes(&self, dict: Range<usize>) -> Option<String> {
        // A display right inside another `{...}` is a pair's value or a set's
        // element (through a conditional, an operator, a lambda at most):
        // never bound by an assignment or an argument by itself, so no view
        // is parsed to say so.
        if self.in_display.binary_search(&dict.start).is_ok() {
            return None;
        }
        match self.escapes_in(self.view(), dict.clone()) {
            Ok(why) => why,
            // The uses of a module-level name: in any function.
            Err(NeedsWholeFile) => self.escapes_in(self.whole_view(), dict).unwrap_or(None),
        }
    }

    /// [`FileContext::result_escapes`] as `view` tells it: `Err` when the
    /// view is an outline and the answer needs the whole file.
    fn escapes_in(&self, view: &View, dict: Range<usize>) -> Result<Option<String>, NeedsWholeFile> {
        let src = self.src;
        let line = |at: usize| self.line_of(at);
        let root = view.tree.root_node();
        let Some(node) = root.descendant_for_byte_range(dict.start, dict.end) else { return Ok(None) };
        if node.kind_name() != "dictionary" || node.byte_range() != dict {
            return Ok(None);
        }
        let Some((value, parent)) = outer_value(node) else { return Ok(None) };
        // Where tree-sitter reads the statement otherwise than Python does
        // (a lone carriage return is a line break to Python only), the
        // whole-file tree cannot say where the result goes.
        let statement = parent.parent().unwrap_or(parent);
        let lone_cr = self.has_lone_cr_in(statement.byte_range());
        if lone_cr || parent.has_error() || std::iter::successors(parent.parent(), |n| n.parent()).any(|n| n.is_error())
        {
            return Ok(None);
        }
        match parent.kind_name() {
            "assignment" if parent.field("right") == Some(value) => {}
            "argument_list" => {
                return Ok(Some(format!(
                    "the result is {} at line {}: what reads it there is unknown",
                    use_phrase(value, parent, src),
                    line(parent.start_byte())
                )));
            }
            // Returned, yielded, nested in another result...: judged by the
            // other checks.
            _ => return Ok(None),
        }
        // `name = {...}`: every use of the name must be one the passes follow.
        // A write into another value (`r["inner"] = {...}`) is that value's.
        let Some(target) = parent.field("left").filter(|t| t.kind_name() == "identifier") else {
            return Ok(None);
        };
        // `a = b = {...}`: the inner assignment is the outer's value.
        let chained = parent.parent().is_some_and(|s| s.kind_name() == "assignment");
        let name = &src[target.byte_range()];
        if chained {
            return Ok(Some(format!(
                "the result is bound to `{name}` at line {} together with another target: what reads it is unknown",
                line(target.start_byte())
            )));
        }
        let model = view.model(src);
        let scope = model.scope_at(target.start_byte());
        let owner = match model.resolve(name, scope) {
            Resolution::Bindings { scope, .. } => scope,
            _ => return Ok(None),
        };
        if view.outline.is_some() && matches!(model.scopes[owner].kind, ScopeKind::Module | ScopeKind::Class) {
            return Err(NeedsWholeFile);
        }
        for reference in model.references_to(owner, name) {
            let Some(used) = root.descendant_for_byte_range(reference.at.start, reference.at.end) else { continue };
            if !followed_use(used, src) {
                let (value, parent) = outer_value(used).unwrap_or((used, used));
                return Ok(Some(format!(
                    "`{name}` is {} at line {}: what reads the result there is unknown",
                    use_phrase(value, parent, src),
                    line(reference.at.start)
                )));
            }
        }
        Ok(None)
    }

    /// A list display, a list comprehension, or a call of the builtin `list`.
    fn is_fresh_list(&self, value: Node<'_>, scope: usize) -> bool {
        let value = unparenthesize(value);
        match value.kind_name() {
            "list" | "list_comprehension" => true,
            "call" => value.field("function").is_some_and(|f| {
                f.kind_name() == "identifier"
                    && &self.src[f.byte_range()] == "list"
                    && self.model().resolve("list", scope) == Resolution::Builtin
            }),
            _ => false,
        }
    }

    /// Whether the dict display at `dict` (file bytes) is the value of a
    /// `return` statement of a function decorated as a Strands tool, so that
    /// the SDK fills the result's `toolUseId` in itself.
    pub fn returned_by_strands_tool(&self, dict: Range<usize>) -> bool {
        let root = self.tree().root_node();
        let Some(node) = root.descendant_for_byte_range(dict.start, dict.end) else { return false };
        if node.kind_name() != "dictionary" || node.byte_range() != dict {
            return false;
        }
        returned_by_strands_tool(node, self.src)
    }
}

/// An outline cannot answer: the question needs the whole file.
struct NeedsWholeFile;

/// The outline view of `src` for questions about the places `focus`
/// (offsets): `None` when it would not serve them (see [`FileContext`]).
fn outline_view(src: &str, focus: &[usize]) -> Option<View> {
    if focus.is_empty() || syntax::keeps_whole(src) {
        return None;
    }
    let layout = syntax::layout(src)?;
    let definitions = syntax::outline::definitions_in(src, &layout.lines);
    let functions = syntax::outline::functions(&definitions);
    // A function that binds module-level names (`global`) is never left
    // out.
    let binds_globals =
        |f: &syntax::outline::Function<'_>| syntax::outline::declares_global(src, &layout.lines, &f.def.range);
    let mut kept: Vec<bool> = functions.iter().map(binds_globals).collect();
    // The names a function holding a focus declares `global`: the
    // questions about it may ask for their uses anywhere in the module.
    let mut declared: Vec<&str> = Vec::new();
    let mut focused = vec![false; functions.len()];
    // The functions are disjoint and in order: the one holding a focus is
    // found by halving (a scan per focus was quadratic on a file of
    // 100,000 tool results).
    for &at in focus {
        let i = functions.partition_point(|f| f.def.body.start <= at).checked_sub(1)?;
        if !functions[i].def.body.contains(&at) {
            return None;
        }
        if kept[i] && !focused[i] {
            declared.extend(syntax::outline::global_names(src, &layout.lines, &functions[i].def.range)?);
        }
        focused[i] = true;
        kept[i] = true;
    }
    let blanked: Vec<&syntax::outline::Definition> =
        functions.iter().zip(&kept).filter(|(_, kept)| !**kept).map(|(f, _)| f.def).collect();
    // Where a body left out names one of them, only the whole file holds
    // all their uses.
    let named = |d: &&syntax::outline::Definition| declared.iter().any(|n| syntax::holds_word(&src[d.body.clone()], n));
    if blanked.is_empty() || blanked.iter().any(named) {
        return None;
    }
    // An outline that keeps most of the file saves little, and the whole
    // file's tree is one the later passes may ask for again.
    let left_out: usize = blanked.iter().map(|d| d.body.len()).sum();
    if left_out < src.len() / 4 {
        return None;
    }
    let outline = syntax::outline::Outline::new(src, blanked.iter().copied())?;
    let tree = outline.parse();
    if tree.root_node().has_error() {
        return None;
    }
    let blanked = blanked.iter().map(|d| d.body.clone()).collect();
    Some(View { tree, model: OnceCell::new(), blanked, outline: Some(outline.text), parsed: outline.ranges })
}

/// The outermost expression `node`'s value is, seen through parentheses
/// and the branches of conditional expressions, with its parent.
fn outer_value(mut node: Node<'_>) -> Option<(Node<'_>, Node<'_>)> {
    loop {
        let parent = node.parent()?;
        let through = match parent.kind_name() {
            "parenthesized_expression" => true,
            // `a if c else b`: the condition is the second named child.
            "conditional_expression" => parent.named_child(1) != Some(node),
            _ => false,
        };
        if !through {
            return Some((node, parent));
        }
        node = parent;
    }
}

/// A use of a name bound to a result that the fix and the later-write
/// pass follow: returned, or changed in place (a subscript assigned or
/// deleted, a call of its `update` or `setdefault`, an augmented
/// assignment). A read by key in the function that builds the result
/// (`"k" in r`, `r.get("k")`, `r["k"]`) is not one: the result it reads
/// is the old shape, and a moved key would no longer be there.
fn followed_use(name: Node<'_>, src: &str) -> bool {
    let Some((value, parent)) = outer_value(name) else { return false };
    match parent.kind_name() {
        "return_statement" => true,
        "subscript" => parent.field("value") == Some(value) && crate::syntax::tree::is_target(parent),
        "attribute" => {
            let method = parent.field("attribute").map(|a| &src[a.byte_range()]);
            let called =
                parent.parent().is_some_and(|c| c.kind_name() == "call" && c.field("function") == Some(parent));
            parent.field("object") == Some(value) && called && matches!(method, Some("update" | "setdefault"))
        }
        "augmented_assignment" => parent.field("left") == Some(value),
        _ => false,
    }
}

/// How `value` is used by `parent`, in words.
fn use_phrase(value: Node<'_>, parent: Node<'_>, src: &str) -> String {
    match parent.kind_name() {
        "argument_list" => match parent.parent().and_then(|c| c.field("function")) {
            Some(f) => format!("passed to `{}(...)`", crate::syntax::tree::excerpt(&src[f.byte_range()])),
            None => "passed to a call".into(),
        },
        "keyword_argument" => "passed to a call".into(),
        "comparison_operator" => "used in a comparison".into(),
        "list" | "tuple" | "set" | "pair" | "dictionary" | "expression_list" => "put in another value".into(),
        "yield" => "yielded".into(),
        "lambda" => "returned by a lambda".into(),
        "assignment" if parent.field("right") == Some(value) => "assigned to another name".into(),
        _ => format!("used in `{}`", crate::syntax::tree::excerpt(&src[parent.byte_range()])),
    }
}

/// A use of a list name that neither lets the list escape nor changes it
/// into something else: the receiver of `.append`, `.extend` or `.insert`
/// called at once, the target of `+=` (its value is a binding, checked
/// apart), the argument of `len`, a `for` loop's iterable, or a condition.
fn harmless_use(node: Node<'_>, src: &str, model: &SemanticModel, scope: usize) -> bool {
    let (expr, parent) = crate::syntax::tree::parenthesized_in(node);
    let Some(parent) = parent else { return false };
    let field_of = |p: Node<'_>, f: &str| p.field(f) == Some(expr);
    match parent.kind_name() {
        "attribute" if field_of(parent, "object") => {
            let method = parent.field("attribute").map(|a| &src[a.byte_range()]);
            let called =
                parent.parent().is_some_and(|c| c.kind_name() == "call" && c.field("function") == Some(parent));
            called && matches!(method, Some("append" | "extend" | "insert"))
        }
        "augmented_assignment" => field_of(parent, "left"),
        "argument_list" => is_len_argument(node, src, model, scope),
        "for_statement" => field_of(parent, "right"),
        "if_statement" | "elif_clause" | "while_statement" => field_of(parent, "condition"),
        "not_operator" => {
            parent.parent().is_some_and(|g| matches!(g.kind_name(), "if_statement" | "elif_clause" | "while_statement"))
        }
        _ => false,
    }
}

/// Whether `node` is the one argument of a call of the builtin `len`.
fn is_len_argument(node: Node<'_>, src: &str, model: &SemanticModel, scope: usize) -> bool {
    if model.resolve("len", scope) != Resolution::Builtin {
        return false;
    }
    crate::syntax::tree::parenthesized_in(node).1.is_some_and(|args| {
        args.kind_name() == "argument_list"
            && args.named_child_count() == 1
            && args.parent().and_then(|call| call.field("function")).is_some_and(|f| &src[f.byte_range()] == "len")
    })
}

/// The value (parentheses removed) that `binding` (an assignment binding
/// of the tree of `root`) is bound to, when its statement is a plain
/// assignment with that one name as its only target: `N = value` (or
/// `(N) = value`), not `N: T = value`, `a = N = value` or `N += value`.
pub fn plain_assigned_value<'t>(root: Node<'t>, binding: &scope::Binding) -> Option<Node<'t>> {
    if binding.kind != scope::BindingKind::Assignment {
        return None;
    }
    let mut target = root.descendant_for_byte_range(binding.at.start, binding.at.end)?;
    // `(N) = value` is `N = value` (Python drops the parentheses).
    while let Some(p) = target.parent().filter(|&p| crate::syntax::tree::is_parenthesized_target(p)) {
        target = p;
    }
    let assignment = target.parent().filter(|a| a.kind_name() == "assignment")?;
    let plain = assignment.field("left") == Some(target)
        && assignment.field("type").is_none()
        && assignment.parent().is_some_and(|s| s.kind_name() == "expression_statement");
    plain.then(|| assignment.field("right")).flatten().map(crate::syntax::tree::unparenthesize)
}

/// [`FileContext::returned_by_strands_tool`] for a node of a whole-file tree.
pub fn returned_by_strands_tool(dict: Node<'_>, src: &str) -> bool {
    let mut up = dict;
    while let Some(parent) = up.parent() {
        if parent.kind_name() != "parenthesized_expression" || unparenthesize(parent) != dict {
            break;
        }
        up = parent;
    }
    let Some(statement) = up.parent().filter(|p| p.kind_name() == "return_statement") else { return false };
    // The function the `return` belongs to: the nearest enclosing def (a
    // class body or lambda in between would make the return not this
    // function's, but tree-sitter puts `return` only in function bodies).
    let mut scope = statement.parent();
    while let Some(node) = scope {
        if node.kind_name() == "function_definition" {
            return is_strands_tool(node, src);
        }
        if matches!(node.kind_name(), "class_definition" | "lambda" | "module") {
            return false;
        }
        scope = node.parent();
    }
    false
}

/// Whether the function definition `def` carries a Strands tool decorator.
pub fn is_strands_tool(def: Node<'_>, src: &str) -> bool {
    decorated_as(def, src, &TOOL_DECORATORS)
}

/// Whether the function `def` has a decorator that is one of `decorators`
/// (dotted names, as written), or a call of one.
pub fn decorated_as(def: Node<'_>, src: &str, decorators: &[&str]) -> bool {
    decorators_of(def).any(|d| decorator_is(d, src, decorators, true))
}

/// The decorators that leave a function as its callers call it, as written
/// and not called (`docs/rules.md`, "Decorators").
pub const TRANSPARENT_DECORATORS: [&str; 7] = [
    "staticmethod",
    "classmethod",
    "abstractmethod",
    "override",
    "abc.abstractmethod",
    "typing.override",
    "typing_extensions.override",
];

/// The decorators of `def` (the expressions after `@`) that hand it to
/// code toolshape does not follow: every one but the tool decorators
/// (called or not) and [`TRANSPARENT_DECORATORS`] (`docs/rules.md`,
/// "Decorators").
pub fn opaque_decorators<'t>(def: Node<'t>, src: &str) -> Vec<Node<'t>> {
    decorators_of(def)
        .filter(|&d| {
            !decorator_is(d, src, &TOOL_DECORATORS, true) && !decorator_is(d, src, &TRANSPARENT_DECORATORS, false)
        })
        .collect()
}

/// The decorator expressions of the function definition `def`, in order.
fn decorators_of(def: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    let decorated = def.parent().filter(|p| p.kind_name() == "decorated_definition");
    decorated.into_iter().flat_map(|decorated| {
        let mut cursor = decorated.walk();
        let decorators: Vec<Node<'_>> = decorated
            .children(&mut cursor)
            .filter(|c| c.kind_name() == "decorator")
            .filter_map(|d| d.named_children(&mut d.walk()).find(|e| e.kind_name() != "comment"))
            .collect();
        decorators
    })
}

/// Whether the decorator expression `expr` (parentheses seen through) is
/// one of the dotted names `names` as written, or, when `called`, a call
/// of one.
fn decorator_is(expr: Node<'_>, src: &str, names: &[&str], called: bool) -> bool {
    let mut expr = unparenthesize(expr);
    if called && expr.kind_name() == "call" {
        match expr.field("function") {
            Some(function) => expr = unparenthesize(function),
            None => return false,
        }
    }
    let name: String = src[expr.byte_range()].split_whitespace().collect();
    matches!(expr.kind_name(), "identifier" | "attribute") && names.contains(&name.as_str())
}

/// The innermost function holding `node` (in its own scope), with the
/// module-level class it is a method of: `None` unless it is a module-level
/// function or a method of a module-level class.
pub fn enclosing_function(node: Node<'_>, src: &str) -> Option<(Option<String>, String)> {
    enclosing_function_of(syntax::tree::ancestors(node), src)
}

/// [`enclosing_function`] of the node whose ancestors, its parent first,
/// `up` gives (a walk that keeps them spares `Node::parent`, which walks
/// down from the root each time).
pub fn enclosing_function_of<'t>(
    mut up: impl Iterator<Item = Node<'t>>,
    src: &str,
) -> Option<(Option<String>, String)> {
    let def = enclosing_def(up.by_ref())?;
    let name = src[def.field("name")?.byte_range()].to_owned();
    let mut holder = up.next()?;
    if holder.kind_name() == "decorated_definition" {
        holder = up.next()?;
    }
    if holder.kind_name() == "module" {
        return Some((None, name));
    }
    let class = up.next().filter(|c| holder.kind_name() == "block" && c.kind_name() == "class_definition")?;
    let mut top = up.next()?;
    if top.kind_name() == "decorated_definition" {
        top = up.next()?;
    }
    let class_name = src[class.field("name")?.byte_range()].to_owned();
    (top.kind_name() == "module").then_some((Some(class_name), name))
}

/// The function whose own scope holds the node whose ancestors, its
/// parent first, `up` gives: none in a lambda or a class body.
pub fn enclosing_def<'t>(up: impl Iterator<Item = Node<'t>>) -> Option<Node<'t>> {
    for x in up {
        match x.kind_name() {
            "function_definition" => return Some(x),
            "lambda" | "class_definition" => return None,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The opaque decorators of each `def` of `src`, as written.
    fn opaque(src: &str) -> Vec<Vec<String>> {
        let tree = syntax::parse(src);
        let mut out = Vec::new();
        syntax::for_each_node(tree.root_node(), |n| {
            if n.kind_name() == "function_definition" {
                out.push(opaque_decorators(n, src).iter().map(|d| src[d.byte_range()].to_owned()).collect());
            }
        });
        out
    }

    #[test]
    fn decorators_hand_the_function_on_unless_tool_or_transparent() {
        let src = "@tool\n@strands.tool(name='x')\n@strands . tools.tool\ndef a(): pass\n\
                   @staticmethod\n@classmethod\n@abstractmethod\n@override\n@abc.abstractmethod\n\
                   @typing.override\n@typing_extensions.override\n@(staticmethod)\ndef b(): pass\n\
                   @pytest.fixture\n@property\n@log_calls\n@functools.lru_cache(maxsize=2)\ndef c(): pass\n\
                   @staticmethod()\n@override(1)\n@abc.override\n@tools.tool\n@Tool\ndef d(): pass\n\
                   def e(): pass\n";
        let none: Vec<String> = Vec::new();
        assert_eq!(
            opaque(src),
            [
                none.clone(),
                none.clone(),
                vec![
                    "pytest.fixture".into(),
                    "property".into(),
                    "log_calls".into(),
                    "functools.lru_cache(maxsize=2)".into()
                ],
                vec![
                    "staticmethod()".into(),
                    "override(1)".into(),
                    "abc.override".into(),
                    "tools.tool".into(),
                    "Tool".into()
                ],
                none,
            ]
        );
    }

    fn returned(src: &str) -> bool {
        let at = src.find("{'status'").expect("a result in the test source");
        let tree = syntax::parse(src);
        let node = tree.root_node().descendant_for_byte_range(at, at + 1).unwrap().parent().unwrap();
        let ctx = FileContext::new(src, None);
        ctx.returned_by_strands_tool(node.byte_range())
    }

    /// A context about the candidate displays of `src`, as a check makes it.
    fn focused(src: &str) -> (Vec<syntax::ParsedPiece>, Range<usize>) {
        let pieces = syntax::parse_pieces(src, syntax::ParseScope::Candidates);
        let at = src.find("{'status'").expect("a result in the test source");
        let end = at + src[at..].find('}').expect("a closed display") + 1;
        (pieces, at..end)
    }

    #[test]
    fn an_outline_answers_as_the_whole_file_does() {
        let other = "def other(x):\n    y = [str(x)]\n    return y\n";
        for (src, outlined) in [
            // The result's own function is kept, the other one left out.
            (
                format!(
                    "{other}def f(log):\n    r = {{'status': 'success', 'content': []}}\n    log(r)\n    return r\n"
                ),
                true,
            ),
            (format!("{other}def f():\n    r = {{'status': 'success', 'content': []}}\n    return r\n"), true),
            // A module-level result is judged by its uses in every function.
            (format!("R = {{'status': 'success', 'content': []}}\n{other}def g():\n    print(R)\n"), false),
            // A function that declares a global and builds the result, and
            // another that uses the global.
            (
                format!(
                    "{other}def f():\n    global R\n    R = {{'status': 'success', 'content': []}}\ndef g():\n    print(R)\n"
                ),
                false,
            ),
            // No function left out names the global.
            (
                format!(
                    "{other}def f():\n    global R, S\n    R = {{'status': 'success', 'content': []}}\n    return R\n"
                ),
                true,
            ),
        ] {
            let (pieces, dict) = focused(&src);
            let part = FileContext::for_pieces(&src, &pieces);
            let whole = FileContext::new(&src, None);
            assert_eq!(part.result_escapes(dict.clone()), whole.result_escapes(dict), "{src}");
            assert_eq!(part.view().outline.is_some(), outlined, "{src}");
            // `str` is bound nowhere; `y` only in the function left out.
            for name in ["str", "y", "r", "other"] {
                assert_eq!(part.binds_anywhere(name), whole.binds_anywhere(name), "{name} in {src}");
            }
        }
    }

    #[test]
    fn an_outline_that_would_keep_most_of_the_file_is_not_made() {
        let result = "    r = {'status': 'success', 'content': []}\n    return r\n";
        let small = format!("def other():\n    return 1\n\ndef f():\n{}", result.repeat(3));
        let large = format!("def other():\n{}\ndef f():\n{result}", "    x = 1\n".repeat(8));
        for (src, outlined) in [(small, false), (large, true)] {
            let (pieces, _) = focused(&src);
            assert_eq!(FileContext::for_pieces(&src, &pieces).view().outline.is_some(), outlined, "{src}");
        }
    }

    #[test]
    fn a_function_binding_globals_is_never_left_out() {
        let src =
            "def setup():\n    global R\n    R = 1\n\ndef f():\n    return {'status': 'success', 'content': []}\n";
        let (pieces, _) = focused(src);
        let part = FileContext::for_pieces(src, &pieces);
        let view = part.view();
        assert!(view.outline.is_none() || view.blanked.is_empty(), "{:?}", view.blanked);
        // `global` in a string is no statement: that function is left out.
        let src = "def doc():\n    return 'global R'\n\ndef f():\n    return {'status': 'success', 'content': []}\n";
        let (pieces, _) = focused(src);
        assert_eq!(FileContext::for_pieces(src, &pieces).view().blanked.len(), 1);
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
