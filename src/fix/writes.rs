//! Planning the fix of later writes (TS004): a statement that adds keys to a
//! result name after its dict is built becomes the append of a json block
//! holding exactly what it wrote:
//!
//! ```python
//! payload["base64"] = encode(png)        # before
//! payload["content"].append({"json": {"base64": encode(png)}})
//! ```
//!
//! (`payload["content"] = [*payload["content"], {...}]` when the content is
//! not a list display, so that no list another name holds is changed). In a
//! result builder the write of its own `**kwargs` becomes
//! `if kwargs: payload["content"].append({"json": kwargs})`, so that a call
//! without extras returns exactly the old result. The fix is safe when the
//! function does nothing else with the result than build it, write it and
//! return it, the write runs at most once, and its keys are known and new.

use std::ops::Range;

use tree_sitter::Node;

use super::{Applicability, Edit, Fix, Plan, PlanOptions, Remedy, Subject, TextAugment};
use crate::diagnostics::Finding;
use crate::semantic::FileContext;
use crate::semantic::project::BuilderSpec;
use crate::semantic::scope::{BindingKind, Resolution, ScopeKind};
use crate::syntax::tree::{FieldChild, KindName};
use crate::syntax::tree::{constant_str, unparenthesize};
use crate::syntax::tree::{not_json_serializable, operand};

/// Keys a function may still set or read on a result whose later writes
/// move into json blocks: they stay at the top level.
const KEPT_KEYS: [&str; 2] = ["status", "toolUseId"];

/// Plans the fix of every write statement of the TS004 `findings` of `src`
/// (sorted by position; several findings of one statement make one plan).
pub fn plan_writes(src: &str, file: &FileContext<'_>, findings: Vec<Finding>, options: &PlanOptions) -> Vec<Plan> {
    let mut groups: Vec<(Range<usize>, Vec<Finding>)> = Vec::new();
    let root = file.tree().root_node();
    for finding in findings {
        let Some(node) = root.descendant_for_byte_range(finding.entry.start, finding.entry.end) else { continue };
        let statement = statement_of(node).byte_range();
        match groups.last_mut() {
            Some((range, group)) if *range == statement => group.push(finding),
            _ => groups.push((statement, vec![finding])),
        }
    }
    let all: Vec<&Finding> = groups.iter().flat_map(|(_, g)| g).collect();
    let planned: Vec<(Range<usize>, Remedy)> = groups
        .iter()
        .map(|(statement, group)| {
            let planner = WritePlanner { src, file, options, all: &all };
            match planner.plan(statement.clone(), group) {
                Ok((range, fix)) => (range, Remedy::Fix(fix)),
                Err(why) => (statement.clone(), Remedy::Manual(why)),
            }
        })
        .collect();
    groups
        .into_iter()
        .zip(planned)
        .map(|((_, group), (range, remedy))| Plan {
            range,
            subject: Subject::Writes(group),
            remedy,
            alternatives: Vec::new(),
        })
        .collect()
}

/// The statement `node` stands in: the nearest ancestor (or itself) whose
/// parent is a block or the module.
fn statement_of(node: Node<'_>) -> Node<'_> {
    let mut n = node;
    while let Some(p) = n.parent() {
        if matches!(p.kind_name(), "block" | "module") {
            return n;
        }
        n = p;
    }
    n
}

/// What a write statement adds, read from its syntax.
enum Written<'t> {
    /// `N[K] = v`: the key node and the value node.
    Item { key: Node<'t>, value: Node<'t> },
    /// `N.update(...)` / `N |= E`: the arguments (as `update` takes them).
    Update { args: Vec<Node<'t>>, list: Option<Node<'t>> },
    /// `for k, v in K.items(): N[k] = v` in a builder: the loop's mapping.
    Loop { mapping: Node<'t> },
}

struct WritePlanner<'a, 's> {
    src: &'s str,
    file: &'a FileContext<'s>,
    options: &'a PlanOptions,
    /// Every write finding of the file (for keys written twice).
    all: &'a [&'a Finding],
}

impl WritePlanner<'_, '_> {
    fn text(&self, n: Node<'_>) -> &str {
        &self.src[n.byte_range()]
    }

    fn line(&self, at: usize) -> usize {
        self.src[..at].matches('\n').count() + 1
    }

    /// The fix of one write statement: the range it replaces and the fix.
    fn plan(&self, statement: Range<usize>, group: &[Finding]) -> Result<(Range<usize>, Fix), String> {
        let src = self.src;
        let root = self.file.tree().root_node();
        let model = self.file.model();
        let stmt = root
            .descendant_for_byte_range(statement.start, statement.end)
            .map(statement_of)
            .ok_or("the write is not in the tree")?;
        let first = &group[0];
        let display = root
            .descendant_for_byte_range(first.dict.start, first.dict.end)
            .filter(|d| d.kind_name() == "dictionary")
            .ok_or("the result's dict is not in the tree")?;
        let scope = model.scope_at(first.dict.start);
        let name = self.result_name(display)?;
        let plain =
            model.bindings_in(scope, &name).filter(|&b| model.bindings[b].kind != BindingKind::AugmentedAssignment);
        if plain.count() != 1 {
            return Err(format!("`{name}` is bound more than once here: which result a write reaches is for a person"));
        }
        if statement.start < display.end_byte() {
            return Err("the write stands before the result is built".into());
        }
        let mut reasons = Vec::new();
        let builder = self.builder_of(stmt);
        let (written, replaced) = self.written(stmt, &name, builder)?;
        let quote = self.quote(display);
        let content_key = format!("{quote}content{quote}");
        let payload = match &written {
            Written::Item { key, value } => {
                self.check_value(*value, &mut reasons);
                format!("{{{}: {}}}", self.text(*key), dict_value(self.text(*value), *value))
            }
            Written::Update { args, list } => self.update_payload(args, *list, &mut reasons)?,
            Written::Loop { mapping } => self.text(*mapping).to_owned(),
        };
        let conditional = match (&written, builder) {
            (Written::Loop { .. }, Some(spec)) => Some(spec),
            (Written::Update { args, .. }, Some(spec)) => {
                let own = |a: &Node<'_>| {
                    let a = if a.kind_name() == "dictionary_splat" { operand(*a) } else { Some(*a) };
                    a.map(unparenthesize).is_some_and(|a| a.kind_name() == "identifier" && self.text(a) == spec.kwargs)
                };
                matches!(args.as_slice(), [a] if own(a)).then_some(spec)
            }
            _ => None,
        };
        let payload = match conditional {
            Some(spec) => {
                reasons.extend(spec.call_reasons.iter().cloned());
                spec.kwargs.clone()
            }
            None => {
                self.check_keys(group, display, &mut reasons);
                payload
            }
        };
        self.check_display(display, &mut reasons)?;
        if model.scopes[scope].kind == ScopeKind::Module {
            reasons.push(format!("`{name}` is a module-level name: other modules may read the keys the fix moves"));
        }
        if let Written::Loop { .. } = &written {
            self.check_loop_names(replaced.clone(), scope)?;
        }
        self.check_loops(replaced.clone(), scope, &mut reasons);
        self.check_uses(&name, scope, display, &mut reasons)?;
        // An `if K:` whose body the write starts already keeps a call
        // without extras from gaining a block: no second `if`.
        let guard = conditional.and_then(|spec| self.guard_of(&replaced, &spec.kwargs));
        if let Some(spec) = conditional {
            self.check_kwargs_after(spec, scope, replaced.clone(), guard.clone(), &mut reasons);
        }
        self.check_comments(replaced.clone(), &written, conditional.is_some())?;
        self.check_all_moved(&written, group)?;
        let target = format!("{name}[{content_key}]");
        // `.append` only when the display's one content value is a fresh
        // list: no second "content" key or spread may replace it.
        let fresh = display_content(display, src)
            .is_some_and(|c| matches!(c.kind_name(), "list" | "list_comprehension"))
            && single_content(display, src);
        let block = format!("{{{quote}json{quote}: {payload}}}");
        let append =
            if fresh { format!("{target}.append({block})") } else { format!("{target} = [*{target}, {block}]") };
        let replacement = match conditional {
            Some(spec) => {
                let rest = &src[replaced.end..crate::fix::layout::line_end(src, replaced.end)];
                if !crate::fix::layout::starts_line(src, replaced.start)
                    || !(rest.trim().is_empty() || rest.trim_start().starts_with('#'))
                {
                    return Err("the write shares its line with other code, so it cannot become an `if`".into());
                }
                if guard.is_some() {
                    append
                } else {
                    let indent = self.indent_of(replaced.start);
                    let nl = self.options.style.newline;
                    format!("if {}:{nl}{indent}{}{append}", spec.kwargs, self.options.style.indent_unit)
                }
            }
            None => append,
        };
        let edits =
            if self.options.with_edits { vec![Edit { range: replaced.clone(), replacement }] } else { Vec::new() };
        let applicability = if reasons.is_empty() { Applicability::Safe } else { Applicability::Unsafe };
        let moves = group.iter().map(label).collect();
        let text = TextAugment::NotAdded("a later write's keys are not mentioned in the text".into());
        Ok((replaced, Fix { edits, applicability, unsafe_reasons: reasons, moves, text, repair: None }))
    }

    /// The name the display is bound to (`N = {...}`).
    fn result_name(&self, display: Node<'_>) -> Result<String, String> {
        let (value, parent) = crate::syntax::tree::parenthesized_in(display);
        let assignment = parent
            .filter(|a| a.kind_name() == "assignment" && a.field("right") == Some(value))
            .ok_or("the result is not bound by a plain assignment")?;
        if assignment.parent().is_some_and(|p| p.kind_name() == "assignment") {
            return Err("the result is bound to several names at once".into());
        }
        let left = assignment.field("left").filter(|l| l.kind_name() == "identifier");
        Ok(self.text(left.ok_or("the result is not bound to one name")?).to_owned())
    }

    /// The builder whose own scope holds `node`, if the project knows one.
    fn builder_of(&self, node: Node<'_>) -> Option<&BuilderSpec> {
        if self.options.builders.is_empty() {
            return None;
        }
        let (class, name) = crate::semantic::enclosing_function(node, self.src)?;
        self.options.builders.iter().find(|b| b.name == name && b.class == class)
    }

    /// What the statement writes, and the range the fix replaces.
    fn written<'t>(
        &self,
        stmt: Node<'t>,
        name: &str,
        builder: Option<&BuilderSpec>,
    ) -> Result<(Written<'t>, Range<usize>), String> {
        let is_name = |n: Option<Node<'_>>| n.is_some_and(|n| n.kind_name() == "identifier" && self.text(n) == name);
        let inline = "the write stands inside a larger expression or statement; move it into its own statement";
        // The builder's loop `for k, v in K.items(): N[k] = v`.
        if let Some(spec) = builder
            && let Some(for_stmt) = stmt.parent().and_then(|b| b.parent()).filter(|f| f.kind_name() == "for_statement")
            && let Some(mapping) = loop_mapping(for_stmt, self.src).filter(|m| self.text(*m) == spec.kwargs)
        {
            let body = for_stmt.field("body");
            let single = body.is_some_and(|b| b.named_child_count() == 1);
            // `for k, v in K.items(): N[k] = v`, with those very names.
            let targets: Vec<&str> = for_stmt
                .field("left")
                .filter(|l| l.kind_name() == "pattern_list")
                .map(|l| {
                    let mut c = l.walk();
                    l.named_children(&mut c).map(|n| self.text(n)).collect()
                })
                .unwrap_or_default();
            let assignment = stmt.named_child(0).filter(|a| a.kind_name() == "assignment");
            let key = assignment.and_then(|a| a.field("left")).and_then(|l| l.field("subscript")).map(|k| self.text(k));
            let value = assignment.and_then(|a| a.field("right")).map(|v| self.text(v));
            if !matches!((targets.as_slice(), key, value), ([k, v], Some(key), Some(value)) if *k == key && *v == value)
            {
                return Err("the loop over the keywords writes something else than each key and its value".into());
            }
            if !single || for_stmt.field("alternative").is_some() {
                return Err("the loop over the keywords does more than write them into the result".into());
            }
            return Ok((Written::Loop { mapping }, for_stmt.byte_range()));
        }
        if stmt.kind_name() != "expression_statement" || stmt.named_child_count() != 1 {
            return Err(inline.into());
        }
        let expr = stmt.named_child(0).ok_or(inline)?;
        match expr.kind_name() {
            "assignment" => {
                let left = expr.field("left").filter(|l| l.kind_name() == "subscript");
                let right = expr.field("right");
                let (Some(left), Some(value)) = (left, right) else { return Err(inline.into()) };
                if value.kind_name() == "assignment" || expr.field("type").is_some() {
                    return Err("the write is one target of a chained assignment".into());
                }
                if !is_name(left.field("value")) {
                    return Err(inline.into());
                }
                let mut c = left.walk();
                let keys: Vec<Node<'_>> = left.children_by_field_name("subscript", &mut c).collect();
                let [key] = keys.as_slice() else { return Err("the write's subscript is a slice or a tuple".into()) };
                Ok((Written::Item { key: *key, value }, stmt.byte_range()))
            }
            "call" => {
                let function = expr.field("function").filter(|f| f.kind_name() == "attribute");
                let function = function.ok_or(inline)?;
                if !is_name(function.field("object")) {
                    return Err(inline.into());
                }
                let method = function.field("attribute").map(|a| self.text(a));
                if method == Some("setdefault") {
                    return Err("`setdefault` returns the value it keeps; rewrite it as a plain write first".into());
                }
                if method != Some("update") {
                    return Err(inline.into());
                }
                let list = expr.field("arguments").filter(|a| a.kind_name() == "argument_list");
                let list = list.ok_or(inline)?;
                let mut c = list.walk();
                let args = list.named_children(&mut c).filter(|a| a.kind_name() != "comment").collect();
                Ok((Written::Update { args, list: Some(list) }, stmt.byte_range()))
            }
            "augmented_assignment" => {
                if !is_name(expr.field("left")) {
                    return Err(inline.into());
                }
                let right = expr.field("right").ok_or(inline)?;
                Ok((Written::Update { args: vec![right], list: None }, stmt.byte_range()))
            }
            _ => Err(inline.into()),
        }
    }

    /// The json payload of `update(args)` / `|= arg`.
    fn update_payload(
        &self,
        args: &[Node<'_>],
        list: Option<Node<'_>>,
        reasons: &mut Vec<String>,
    ) -> Result<String, String> {
        let display = |a: &Node<'_>| unparenthesize(*a).kind_name() == "dictionary";
        for a in args {
            match a.kind_name() {
                "keyword_argument" => {
                    if let Some(v) = a.field("value") {
                        self.check_value(v, reasons);
                    }
                }
                _ if display(a) => {
                    let d = unparenthesize(*a);
                    let mut c = d.walk();
                    for pair in d.named_children(&mut c).filter(|p| p.kind_name() == "pair") {
                        if let Some(v) = pair.field("value") {
                            self.check_value(v, reasons);
                        }
                    }
                }
                "list_splat" | "parenthesized_list_splat" => {
                    return Err("`update(*args)` adds keys toolshape cannot list".into());
                }
                _ => {}
            }
        }
        Ok(match args {
            [a] if display(a) => self.text(unparenthesize(*a)).to_owned(),
            _ if !args.is_empty() && args.iter().all(|a| a.kind_name() == "keyword_argument") => {
                let pairs: Vec<String> = args
                    .iter()
                    .filter_map(|a| {
                        let k = a.field("name")?;
                        let v = a.field("value")?;
                        Some(format!("{}: {}", crate::rules::quote_key(self.text(k)), dict_value(self.text(v), v)))
                    })
                    .collect();
                format!("{{{}}}", pairs.join(", "))
            }
            _ => match list {
                Some(list) => format!("dict{}", self.text(list)),
                None => format!("dict({})", self.text(args[0])),
            },
        })
    }

    /// A value `json.dumps` cannot serialize was harmless while dropped.
    fn check_value(&self, value: Node<'_>, reasons: &mut Vec<String>) {
        if let Some(what) = not_json_serializable(value, self.src) {
            reasons.push(format!(
                "the value `{}` is {what}, which json.dumps cannot serialize: the runtime dropped it before, the json block would make the model provider's formatter raise",
                super::excerpt(self.text(value))
            ));
        }
    }

    /// Dynamic keys, mappings, and keys written twice.
    fn check_keys(&self, group: &[Finding], display: Node<'_>, reasons: &mut Vec<String>) {
        let display_keys: Vec<String> = {
            let mut c = display.walk();
            display
                .named_children(&mut c)
                .filter(|p| p.kind_name() == "pair")
                .filter_map(|p| p.field("key").and_then(|k| constant_str(k, self.src)))
                .collect()
        };
        for f in group {
            match (&f.key, &f.spread, &f.expression) {
                (Some(key), ..) => {
                    if display_keys.contains(key) {
                        reasons.push(format!(
                            "key {key:?} is also in the result's dict: it would stand in two json blocks"
                        ));
                    } else if let Some(other) =
                        self.all.iter().find(|o| o.key.as_ref() == Some(key) && o.entry != f.entry && o.dict == f.dict)
                    {
                        reasons.push(format!(
                            "key {key:?} is also written at line {}: each write would add its own json block",
                            other.span.start.line
                        ));
                    }
                    if key == "cancelled" {
                        reasons.push("the Strands SDK reads \"cancelled\" from tool results: in a json block it would no longer see it".into());
                    }
                }
                (None, Some(mapping), _) => reasons.push(format!(
                    "`{}` could hold \"status\", \"content\" or \"toolUseId\", or nothing (an empty json block)",
                    super::excerpt(mapping)
                )),
                (None, None, expression) => reasons.push(format!(
                    "the key `{}` is computed: it could be \"status\", \"content\" or \"toolUseId\"",
                    super::excerpt(expression.as_deref().unwrap_or_default())
                )),
            }
        }
    }

    /// The display's own signs that it may not be a tool result.
    fn check_display(&self, display: Node<'_>, reasons: &mut Vec<String>) -> Result<(), String> {
        let mut c = display.walk();
        for pair in display.named_children(&mut c).filter(|p| p.kind_name() == "pair") {
            let Some(key) = pair.field("key").and_then(|k| constant_str(k, self.src)) else { continue };
            let value = pair.field("value");
            match key.as_str() {
                "role" | "tool_call_id" => {
                    return Err(format!(
                        "it may not be a Strands tool result: it carries the chat-message key \"{key}\"; if it is not one, silence it with `# toolshape: ignore` or exclude the file"
                    ));
                }
                "status" => {
                    if let Some(status) =
                        value.and_then(|v| crate::contract::status_outside(v, self.src, &self.options.rules))
                    {
                        reasons.push(crate::contract::outside_reason(&status, &self.options.rules));
                    }
                }
                "content" => {
                    if let Some(v) = value.map(unparenthesize)
                        && !matches!(
                            v.kind_name(),
                            "list"
                                | "list_comprehension"
                                | "identifier"
                                | "attribute"
                                | "call"
                                | "subscript"
                                | "binary_operator"
                        )
                    {
                        return Err("its content is not a list of blocks".into());
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// A write in a loop of the function runs once a pass.
    fn check_loops(&self, replaced: Range<usize>, scope: usize, reasons: &mut Vec<String>) {
        let root = self.file.tree().root_node();
        let scope_range = self.file.model().scopes[scope].range.clone();
        let Some(node) = root.descendant_for_byte_range(replaced.start, replaced.end) else { return };
        let mut up = node.parent();
        while let Some(n) = up.filter(|n| n.start_byte() >= scope_range.start && n.byte_range() != scope_range) {
            if matches!(n.kind_name(), "for_statement" | "while_statement") {
                reasons.push(format!(
                    "the write is in the loop at line {}: each pass would add its own json block",
                    self.line(n.start_byte())
                ));
                return;
            }
            up = n.parent();
        }
    }

    /// Every use of the result name but its binding, its writes (of moved
    /// keys, or of status and toolUseId) and `return N` would see the keys
    /// moved.
    fn check_uses(&self, name: &str, scope: usize, display: Node<'_>, reasons: &mut Vec<String>) -> Result<(), String> {
        let model = self.file.model();
        let root = self.file.tree().root_node();
        for reference in model.references_to(scope, name) {
            let at = self.line(reference.at.start);
            // Two uses on one line are one reason.
            let mut give = |reason: String| {
                if !reasons.contains(&reason) {
                    reasons.push(reason);
                }
            };
            if reference.scope != scope {
                give(format!("`{name}` is used in a nested function at line {at}, which would see the keys moved"));
                continue;
            }
            if reference.at.start < display.end_byte() {
                continue;
            }
            let Some(node) = root.descendant_for_byte_range(reference.at.start, reference.at.end) else { continue };
            if self.is_write_receiver(node) {
                continue;
            }
            if self.reassigns_content(node) {
                return Err(format!(
                    "`{name}[\"content\"]` is assigned at line {at}, after the write, which would drop the json block"
                ));
            }
            if self.harmless(node, display) {
                continue;
            }
            let start = self.src[..node.start_byte()].rfind('\n').map_or(0, |i| i + 1);
            let end = self.src[node.start_byte()..].find('\n').map_or(self.src.len(), |i| node.start_byte() + i);
            let shown = super::excerpt(&self.src[start..end]);
            give(format!("the function uses the result at line {at} (`{shown}`), which would see the keys moved"));
        }
        Ok(())
    }

    /// Whether `node` is `N` in `N["content"] = ...`.
    fn reassigns_content(&self, node: Node<'_>) -> bool {
        let Some(subscript) = node.parent().filter(|p| p.kind_name() == "subscript") else { return false };
        let target = subscript.parent().is_some_and(|a| {
            matches!(a.kind_name(), "assignment" | "augmented_assignment") && a.field("left") == Some(subscript)
        });
        let mut c = subscript.walk();
        let keys: Vec<Node<'_>> = subscript.children_by_field_name("subscript", &mut c).collect();
        target && matches!(keys.as_slice(), [k] if constant_str(*k, self.src).as_deref() == Some("content"))
    }

    /// Whether the reference `node` is the receiver of one of the writes:
    /// `N` in `N[K] = v`, `N.update(...)` or `N |= E`, the expression of an
    /// expression statement that holds a write finding.
    fn is_write_receiver(&self, node: Node<'_>) -> bool {
        let Some(parent) = node.parent() else { return false };
        let field = |p: Node<'_>, f: &str, n: Node<'_>| p.field(f) == Some(n);
        let write = match parent.kind_name() {
            "subscript" if field(parent, "value", node) => {
                parent.parent().filter(|a| a.kind_name() == "assignment" && field(*a, "left", parent))
            }
            "attribute" if field(parent, "object", node) => parent
                .parent()
                .filter(|c| c.kind_name() == "call" && field(*c, "function", parent))
                .filter(|_| parent.field("attribute").is_some_and(|a| self.text(a) == "update")),
            "augmented_assignment" if field(parent, "left", node) => Some(parent),
            _ => None,
        };
        let Some(statement) = write.and_then(|w| w.parent()).filter(|s| s.kind_name() == "expression_statement") else {
            return false;
        };
        let range = statement.byte_range();
        self.all.iter().any(|w| range.start <= w.entry.start && w.entry.end <= range.end)
    }

    /// `return N`, or `N[K]` read or written for a constant key `K` that
    /// stays at the top level (status, toolUseId, a non-string constant) or
    /// that no write of this result moves.
    fn harmless(&self, node: Node<'_>, display: Node<'_>) -> bool {
        let Some(parent) = node.parent() else { return false };
        match parent.kind_name() {
            "return_statement" => true,
            "subscript" if parent.field("value") == Some(node) => {
                let mut c = parent.walk();
                let keys: Vec<Node<'_>> = parent.children_by_field_name("subscript", &mut c).collect();
                let [key] = keys.as_slice() else { return false };
                let key = unparenthesize(*key);
                match constant_str(key, self.src) {
                    Some(k) if KEPT_KEYS.contains(&k.as_str()) => true,
                    Some(k) if k == "content" => false,
                    Some(k) => !self.all.iter().any(|w| {
                        w.dict == display.byte_range() && (w.key.as_deref() == Some(k.as_str()) || w.key.is_none())
                    }),
                    None => matches!(key.kind_name(), "integer" | "float" | "true" | "false" | "none"),
                }
            }
            _ => false,
        }
    }

    /// The test of the `if K:` or `elif K:` (`K` the builder's `**kwargs` alone,
    /// parentheses seen through) whose body's first statement is the write
    /// at `replaced`, if there is one.
    fn guard_of(&self, replaced: &Range<usize>, kwargs: &str) -> Option<Range<usize>> {
        let root = self.file.tree().root_node();
        let stmt = statement_of(root.descendant_for_byte_range(replaced.start, replaced.end)?);
        let block = stmt.parent().filter(|b| b.kind_name() == "block" && stmt.byte_range() == *replaced)?;
        let mut c = block.walk();
        if block.named_children(&mut c).find(|n| n.kind_name() != "comment") != Some(stmt) {
            return None;
        }
        let test = block
            .parent()
            .filter(|i| {
                matches!(i.kind_name(), "if_statement" | "elif_clause") && i.field("consequence") == Some(block)
            })
            .and_then(|i| i.field("condition"))
            .map(unparenthesize)?;
        (test.kind_name() == "identifier" && self.text(test) == kwargs).then(|| test.byte_range())
    }

    /// The builder's `**kwargs`, now held by the json block, must not be
    /// used anywhere else in the builder (but in the test of the `if`
    /// that `guard` is, which only asks whether it is empty, before the
    /// write).
    fn check_kwargs_after(
        &self,
        spec: &BuilderSpec,
        scope: usize,
        replaced: Range<usize>,
        guard: Option<Range<usize>>,
        reasons: &mut Vec<String>,
    ) {
        let model = self.file.model();
        if !matches!(model.resolve(&spec.kwargs, scope), Resolution::Bindings { scope: s, .. } if s == scope)
            || model.scopes[scope].kind != ScopeKind::Function
        {
            reasons.push(format!("`{}` is not the function's own keyword parameter here", spec.kwargs));
            return;
        }
        // Changed before the write, it would hold keys no call passed (a
        // call without extras would gain a block); after it, the json block
        // would change with it.
        for r in model.references_to(scope, &spec.kwargs) {
            if !(replaced.start <= r.at.start && r.at.end <= replaced.end) && guard.as_ref() != Some(&r.at) {
                reasons.push(format!(
                    "`{}` is used at line {} besides the write, and the json block now holds that same dict",
                    spec.kwargs,
                    self.line(r.at.start)
                ));
                return;
            }
        }
    }

    /// The loop the builder form replaces binds its two names; used outside
    /// it, they would be unbound (or hold another value) after the fix.
    fn check_loop_names(&self, replaced: Range<usize>, scope: usize) -> Result<(), String> {
        let root = self.file.tree().root_node();
        let model = self.file.model();
        let Some(for_stmt) = root.descendant_for_byte_range(replaced.start, replaced.end) else { return Ok(()) };
        let Some(left) = for_stmt.field("left") else { return Ok(()) };
        let mut c = left.walk();
        for target in left.named_children(&mut c) {
            let name = self.text(target);
            let outside = model
                .references_to(scope, name)
                .find(|r| !(replaced.start <= r.at.start && r.at.end <= replaced.end) || r.scope != scope);
            if let Some(r) = outside {
                return Err(format!(
                    "`{name}`, bound by the loop the fix replaces, is used at line {}",
                    self.line(r.at.start)
                ));
            }
        }
        Ok(())
    }

    /// A comment inside the statement outside the parts copied would be lost.
    fn check_comments(&self, replaced: Range<usize>, written: &Written<'_>, conditional: bool) -> Result<(), String> {
        let root = self.file.tree().root_node();
        let Some(stmt) = root.descendant_for_byte_range(replaced.start, replaced.end) else { return Ok(()) };
        // The parts the payload copies (see `update_payload`); the builder
        // forms copy nothing.
        let kept: Vec<Range<usize>> = match written {
            _ if conditional => Vec::new(),
            Written::Item { key, value } => vec![key.byte_range(), value.byte_range()],
            Written::Update { args, list } => match (args.as_slice(), list) {
                ([a], _) if unparenthesize(*a).kind_name() == "dictionary" => vec![unparenthesize(*a).byte_range()],
                _ if args.iter().all(|a| a.kind_name() == "keyword_argument") => {
                    args.iter().filter_map(|a| a.field("value")).map(|v| v.byte_range()).collect()
                }
                (_, Some(l)) => vec![l.byte_range()],
                (_, None) => args.iter().map(|a| a.byte_range()).collect(),
            },
            Written::Loop { .. } => Vec::new(),
        };
        let mut lost = false;
        crate::syntax::for_each_node(stmt, |n| {
            if n.kind_name() == "comment" && !kept.iter().any(|k| k.start <= n.start_byte() && n.end_byte() <= k.end) {
                lost = true;
            }
        });
        if lost {
            return Err("a comment inside the write would be lost; move it above the statement".into());
        }
        Ok(())
    }

    /// Every entry the statement writes must be one that moves: a key that
    /// stays (status, toolUseId, a non-string constant) or a silenced entry
    /// would move with the statement.
    fn check_all_moved(&self, written: &Written<'_>, group: &[Finding]) -> Result<(), String> {
        let entries = match written {
            Written::Item { .. } => 1,
            Written::Loop { .. } => return Ok(()),
            Written::Update { args, .. } => args
                .iter()
                .map(|a| {
                    let d = unparenthesize(*a);
                    if d.kind_name() == "dictionary" {
                        let mut c = d.walk();
                        d.named_children(&mut c)
                            .filter(|e| matches!(e.kind_name(), "pair" | "dictionary_splat"))
                            .count()
                    } else {
                        1
                    }
                })
                .sum(),
        };
        if entries != group.len() {
            return Err(
                "the statement also writes entries that do not move (an allowed key, a non-string key or a suppressed entry): split it so that the moved keys stand alone"
                    .into(),
            );
        }
        Ok(())
    }

    /// The quote the result's status key is written with.
    fn quote(&self, display: Node<'_>) -> char {
        self.text(display).chars().find(|c| matches!(c, '"' | '\'')).unwrap_or('"')
    }

    fn indent_of(&self, at: usize) -> &str {
        let start = self.src[..at].rfind(['\n', '\r']).map_or(0, |i| i + 1);
        let line = &self.src[start..at];
        &line[..line.len() - line.trim_start().len()]
    }
}

/// The label a moved write gets in notes: the key, or the mapping.
fn label(f: &Finding) -> String {
    match (&f.key, &f.spread, &f.expression) {
        (Some(k), ..) => crate::rules::quote_key(k),
        (None, Some(m), _) => m.clone(),
        (None, None, e) => format!("[{}]", e.as_deref().unwrap_or_default()),
    }
}

/// `text`, the source of the value `node`, as a dict display's value:
/// parenthesized when it would not parse there (`a, b`, `yield v`,
/// `x := 1`, `*a`).
fn dict_value(text: &str, node: Node<'_>) -> String {
    match node.kind_name() {
        "expression_list" | "yield" | "named_expression" | "list_splat" | "pattern_list" => format!("({text})"),
        _ => text.to_owned(),
    }
}

/// Whether the display has one "content" key and no spread.
fn single_content(display: Node<'_>, src: &str) -> bool {
    let mut c = display.walk();
    let mut contents = 0;
    for entry in display.named_children(&mut c) {
        match entry.kind_name() {
            "dictionary_splat" => return false,
            "pair" => {
                let key = entry.field("key").and_then(|k| constant_str(k, src));
                contents += usize::from(key.as_deref() == Some("content"));
            }
            _ => {}
        }
    }
    contents == 1
}

/// The content value of a dict display (parentheses removed).
fn display_content<'t>(display: Node<'t>, src: &str) -> Option<Node<'t>> {
    let mut c = display.walk();
    let found = display
        .named_children(&mut c)
        .filter(|p| p.kind_name() == "pair")
        .find(|p| p.field("key").and_then(|k| constant_str(k, src)).as_deref() == Some("content"))?;
    found.field("value").map(unparenthesize)
}

/// `K` of `for k, v in K.items():` whose body writes `N[k] = v`.
fn loop_mapping<'t>(for_stmt: Node<'t>, src: &str) -> Option<Node<'t>> {
    let right = for_stmt.field("right").filter(|r| r.kind_name() == "call")?;
    let function = right.field("function").filter(|f| f.kind_name() == "attribute")?;
    let items = function.field("attribute").is_some_and(|a| &src[a.byte_range()] == "items");
    let object = function.field("object").filter(|o| o.kind_name() == "identifier")?;
    items.then_some(object)
}
