//! Planning the rewrite of one violating tool-result dict: which entries move,
//! where the json block goes, how it is laid out, and whether it is safe.

use foldhash::{HashSet, HashSetExt};
use std::ops::Range;

use tree_sitter::Node;

use super::layout::{self, Style};
use super::safety::ExprFacts;
use super::{Applicability, AugmentText, Edit, Fix, PlanOptions, Remedy, TextAugment, apply_edits, augment};
use crate::contract::{Rules, ToolResultDict, tool_result_dict, tool_result_dict_in};
use crate::diagnostics::Code;
use crate::semantic::FileContext;
use crate::semantic::project::BuilderSpec;
use crate::suppress::line_suppression;
use crate::syntax::LineIndex;
use crate::syntax::tree::{FieldChild, KindName};
use crate::syntax::tree::{constant_str, operand, unparenthesize};
use crate::syntax::tree::{is_bytes, not_json_serializable};

/// Keys whose values a spread standing after them could have overridden.
const GUARDED_KEYS: [&str; 3] = ["status", "content", "toolUseId"];

/// Content kinds that are certainly not a list of blocks.
const NON_LIST_CONTENT: [(&str, &str); 13] = [
    ("string", "a string"),
    ("concatenated_string", "a string"),
    ("integer", "a number"),
    ("float", "a number"),
    ("true", "a boolean"),
    ("false", "a boolean"),
    ("none", "None"),
    ("dictionary", "a dict"),
    ("dictionary_comprehension", "a dict"),
    ("set", "a set"),
    ("set_comprehension", "a set"),
    ("lambda", "a lambda"),
    ("ellipsis", "an Ellipsis"),
];

/// Top-level keys the Strands SDK reads from a tool result, and what for.
const SDK_READS: [(&str, &str); 1] = [("cancelled", "a cancelled tool is not retried")];

/// Why a shaped dict is evidently not a Strands tool result, so that no fix
/// may touch it: it is serialized for someone else (`json.dumps({...})`,
/// `json.dump({...}, f)`), or it is a chat message (`role`,
/// `tool_call_id`). It is still reported; the reason says how to silence it.
/// `start` is where the dict's `{` stands in `src`; `keys` its constant keys.
pub(crate) fn evidently_not_a_result<'k>(
    src: &str,
    start: usize,
    mut keys: impl Iterator<Item = &'k str>,
) -> Option<String> {
    let silence = "if it is not one, silence it with `# toolshape: ignore` or exclude the file";
    if let Some(key) = keys.find(|k| matches!(*k, "role" | "tool_call_id")) {
        return Some(format!(
            "it may not be a Strands tool result: it carries the chat-message key \"{key}\"; {silence}"
        ));
    }
    // The dict is the first argument of `json.dumps(` or `json.dump(`
    // (white space and extra parentheses aside).
    let from = src[..start].char_indices().rev().nth(63).map_or(0, |(i, _)| i);
    let mut callee = &src[from..start];
    let mut called = false;
    while let Some(rest) = callee.trim_end().strip_suffix('(') {
        callee = rest.trim_end();
        called = true;
    }
    let json = ["json.dumps", "json.dump"].iter().any(|f| {
        callee
            .strip_suffix(f)
            .is_some_and(|rest| !rest.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.'))
    });
    if called && json {
        return Some(format!(
            "it may not be a Strands tool result: it is passed to json.dumps/json.dump, so something else parses it; {silence}"
        ));
    }
    None
}

/// Whether the mapping `value` (a spread's operand) may hold the key `key`:
/// anything but a dict display whose keys are all constants other than the
/// string `key` (a number, `None`, `...` or bytes is never that string) and
/// whose spreads are of such displays, recursively. Whether a fix of an
/// inner display runs first or not, the answer is the same.
fn may_hold_key(value: Node<'_>, piece_src: &str, key: &str) -> bool {
    let other_constant = |k: Node<'_>| {
        let k = unparenthesize(k);
        match k.kind_name() {
            "integer" | "float" | "true" | "false" | "none" | "ellipsis" => true,
            "string" | "concatenated_string" if is_bytes(k, piece_src) => true,
            _ => constant_str(k, piece_src).is_some_and(|k| k != key),
        }
    };
    // The displays to look into: a loop, not recursion, however deep the
    // spreads nest.
    let mut displays = vec![value];
    while let Some(value) = displays.pop() {
        let value = unparenthesize(value);
        if value.kind_name() != "dictionary" {
            return true;
        }
        let mut cursor = value.walk();
        for c in value.named_children(&mut cursor) {
            match c.kind_name() {
                "comment" => {}
                "pair" if c.field("key").is_some_and(other_constant) => {}
                "dictionary_splat" => match operand(c) {
                    Some(operand) => displays.push(operand),
                    None => return true,
                },
                _ => return true,
            }
        }
    }
    false
}

/// Whether the mapping `value` (a spread's operand) evidently may bring the
/// key `key`: a dict display with that constant key (or a spread inside it
/// of such an operand), or a conditional expression or an `or` / `and` one
/// of whose operands does (parentheses seen through, recursively).
fn may_bring_key(value: Node<'_>, piece_src: &str, key: &str) -> bool {
    // The operands to look into: a loop, not recursion, however deep they nest.
    let mut operands = vec![value];
    while let Some(value) = operands.pop() {
        let value = unparenthesize(value);
        let mut cursor = value.walk();
        match value.kind_name() {
            "dictionary" => {
                for c in value.named_children(&mut cursor) {
                    match c.kind_name() {
                        "pair" if c.field("key").and_then(|k| constant_str(k, piece_src)).is_some_and(|k| k == key) => {
                            return true;
                        }
                        "dictionary_splat" => operands.extend(operand(c)),
                        _ => {}
                    }
                }
            }
            "conditional_expression" => {
                // `body if test else orelse`: the test brings nothing.
                let parts: Vec<Node<'_>> =
                    value.named_children(&mut cursor).filter(|c| c.kind_name() != "comment").collect();
                operands.extend([parts.first(), parts.get(2)].into_iter().flatten().copied());
            }
            "boolean_operator" => operands.extend([value.field("left"), value.field("right")].into_iter().flatten()),
            _ => {}
        }
    }
    false
}

/// Content expressions that `[*content, ...]` may splat without parentheses
/// and still read clearly.
const PRIMARY_KINDS: [&str; 5] = ["identifier", "attribute", "call", "subscript", "list_comprehension"];

/// Shared access to the source while planning one dict.
struct Ctx<'s> {
    src: &'s str,
    /// The code around the dict, parsed whole on demand.
    file: &'s FileContext<'s>,
    /// What counts as a violation in this project.
    rules: &'s Rules,
    lines: layout::Lines<'s>,
    offset: usize,
    style: &'s Style,
    augment_text: AugmentText,
    with_edits: bool,
    /// The result builders of the file ([`PlanOptions::builders`]).
    builders: &'s [BuilderSpec],
    /// The project reads this dict's content blocks: its text stays.
    keep_text: bool,
    /// Append a new json block even where one could be merged into.
    append_json: bool,
}

impl<'s> Ctx<'s> {
    fn range(&self, n: Node<'_>) -> Range<usize> {
        n.start_byte() + self.offset..n.end_byte() + self.offset
    }

    fn text(&self, n: Node<'_>) -> &'s str {
        &self.src[self.range(n)]
    }

    fn piece_src(&self) -> &'s str {
        &self.src[self.offset..]
    }

    fn nl(&self) -> &'static str {
        self.style.newline
    }

    fn deeper(&self, indent: &str) -> String {
        format!("{indent}{}", self.style.indent_unit)
    }
}

/// A bracketed display (list or dict) that may receive new elements.
struct Collection<'t> {
    node: Node<'t>,
    range: Range<usize>,
    elements: Vec<Range<usize>>,
    /// The comma after the last element, if any.
    trailing_comma: Option<Range<usize>>,
    multiline: bool,
}

impl<'t> Collection<'t> {
    fn new(ctx: &Ctx<'_>, node: Node<'t>) -> Self {
        let mut elements = Vec::new();
        let mut trailing_comma = None;
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind_name() {
                "," => trailing_comma = Some(ctx.range(child)),
                "comment" | "[" | "]" | "{" | "}" => {}
                _ if child.is_named() => {
                    elements.push(ctx.range(child));
                    trailing_comma = None;
                }
                _ => {}
            }
        }
        let range = ctx.range(node);
        let multiline = layout::is_multiline(ctx.src, &range);
        Collection { node, range, elements, trailing_comma, multiline }
    }

    fn element_texts<'s>(&self, ctx: &Ctx<'s>) -> Vec<&'s str> {
        self.elements.iter().map(|r| &ctx.src[r.clone()]).collect()
    }
}

/// One entry of the dict being fixed.
struct DictEntry<'t> {
    range: Range<usize>,
    comma: Option<Range<usize>>,
    key: Option<String>,
    value: Node<'t>,
    moved: bool,
    label: String,
}

/// A moved entry, with the comments that travel with it.
struct MovedItem {
    entry: Range<usize>,
    /// Own-line comments directly above the entry (whole lines).
    above: Option<Range<usize>>,
    /// The blanks before, and the range of, a comment ending the entry's line.
    trailing: Option<(String, Range<usize>)>,
    /// Indentation of the line the entry starts on.
    base: String,
    /// Offsets at which a continuation line starts inside a string literal.
    string_lines: HashSet<usize>,
}

impl MovedItem {
    fn forces_multiline(&self, src: &str) -> bool {
        self.above.is_some() || self.trailing.is_some() || layout::is_multiline(src, &self.entry)
    }

    /// The entry's text re-indented for `indent`.
    fn body(&self, ctx: &Ctx<'_>, indent: &str) -> String {
        layout::reindent(ctx.src, &self.entry, &self.base, indent, |pos| self.string_lines.contains(&pos))
    }
}

/// Where the json block goes.
enum Target<'t> {
    /// Append a new block to the content list.
    Append(Collection<'t>),
    /// Merge into the dict literal of an existing `{"json": {...}}` block.
    Merge { list: Collection<'t>, block: Range<usize>, json: Collection<'t> },
    /// Content is not a list literal: `[*content, {"json": ...}]`.
    Splat { value: Node<'t> },
}

/// How much of the layout is exploded onto several lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    dict_exploded: bool,
    list_exploded: bool,
    json_multiline: bool,
}

/// Plans the remedy for `node`, a violating tool-result dict.
#[allow(clippy::too_many_arguments)]
pub fn plan_dict(
    src: &str,
    index: &LineIndex,
    file: &FileContext<'_>,
    offset: usize,
    root: Node<'_>,
    node: Node<'_>,
    dict: &ToolResultDict,
    options: &PlanOptions,
) -> Remedy {
    let ctx = Ctx {
        src,
        file,
        rules: &options.rules,
        lines: layout::Lines::new(src, index),
        offset,
        style: &options.style,
        augment_text: options.augment_text,
        with_edits: options.with_edits,
        builders: &options.builders,
        keep_text: options.keep_text.iter().any(|r| r.start <= dict.range.start && dict.range.end <= r.end),
        append_json: options.append_json,
    };
    match Planner::new(&ctx, root, node, dict) {
        Ok(planner) => planner.plan(),
        Err(reason) => Remedy::Manual(reason),
    }
}

struct Planner<'c, 's, 't> {
    ctx: &'c Ctx<'s>,
    dict_node: Node<'t>,
    dict_range: Range<usize>,
    entries: Vec<DictEntry<'t>>,
    content: usize,
    target: Target<'t>,
    items: Vec<MovedItem>,
    quote: char,
    /// Whether lines toolshape explodes end with a comma, as the dict's own
    /// last entry does (a single-line dict, exploded, gets them).
    trailing_commas: bool,
    /// The result builder whose own `**kwargs` this dict spreads, if any:
    /// its calls, not the spread itself, say whether moving it is safe.
    builder: Option<&'s BuilderSpec>,
}

impl<'c, 's, 't> Planner<'c, 's, 't> {
    fn new(ctx: &'c Ctx<'s>, root: Node<'t>, node: Node<'t>, dict: &ToolResultDict) -> Result<Self, String> {
        // Down from the root (climbing with `parent` costs O(depth) a step).
        let mut ancestor = root;
        while let Some(next) = ancestor.child_with_descendant(node).filter(|n| *n != node) {
            match next.kind_name() {
                "ERROR" => return Err("it sits in a region with syntax errors".into()),
                "interpolation" | "string" => return Err("it stands inside an f-string".into()),
                _ => ancestor = next,
            }
        }
        let entries = dict_entries(ctx, node, dict);
        let contents: Vec<usize> =
            entries.iter().enumerate().filter(|(_, e)| e.key.as_deref() == Some("content")).map(|(i, _)| i).collect();
        let &[content] = contents.as_slice() else {
            return Err(
                "it has more than one \"content\" key; which one the runtime keeps is for a person to decide".into()
            );
        };
        let keys = entries.iter().filter_map(|e| e.key.as_deref());
        if let Some(why) = evidently_not_a_result(ctx.src, ctx.range(node).start, keys) {
            return Err(why);
        }
        let target = Self::target(ctx, entries[content].value)?;
        let items = entries.iter().filter(|e| e.moved).map(|e| moved_item(ctx, node, e)).collect();
        let status =
            entries.iter().find(|e| e.key.as_deref() == Some("status")).expect("tool results have a status key");
        let quote = ctx.src[status.range.clone()].chars().find(|c| matches!(c, '"' | '\'')).unwrap_or('"');
        let dict_range = ctx.range(node);
        let trailing_commas =
            !layout::is_multiline(ctx.src, &dict_range) || Collection::new(ctx, node).trailing_comma.is_some();
        let builder = Self::builder(ctx, &dict_range, &entries);
        Ok(Planner {
            ctx,
            dict_node: node,
            dict_range,
            entries,
            content,
            target,
            items,
            quote,
            trailing_commas,
            builder,
        })
    }

    /// The builder of the file whose own scope holds the dict, if the dict
    /// moves that builder's `**kwargs`.
    fn builder(ctx: &Ctx<'s>, dict: &Range<usize>, entries: &[DictEntry<'_>]) -> Option<&'s BuilderSpec> {
        if ctx.builders.is_empty() {
            return None;
        }
        let node = ctx.file.tree().root_node().descendant_for_byte_range(dict.start, dict.end)?;
        let (class, name) = crate::semantic::enclosing_function(node, ctx.src)?;
        let spec = ctx.builders.iter().find(|b| b.name == name && b.class == class)?;
        entries.iter().any(|e| Self::spreads(ctx, e, spec)).then_some(spec)
    }

    /// Whether `entry` is a moved `**kwargs` of `spec`.
    fn spreads(ctx: &Ctx<'_>, entry: &DictEntry<'_>, spec: &BuilderSpec) -> bool {
        let value = unparenthesize(entry.value);
        entry.moved && entry.key.is_none() && value.kind_name() == "identifier" && ctx.text(value) == spec.kwargs
    }

    /// Whether the fix appends a json block that holds only the builder's
    /// `**kwargs`: it must then appear only when some keyword was passed.
    fn conditional_block(&self) -> Option<&'s BuilderSpec> {
        let spec = self.builder?;
        let only_kwargs = self.entries.iter().filter(|e| e.moved).all(|e| Self::spreads(self.ctx, e, spec));
        (only_kwargs && !matches!(self.target, Target::Merge { .. })).then_some(spec)
    }

    fn target(ctx: &Ctx<'_>, value: Node<'t>) -> Result<Target<'t>, String> {
        let inner = unparenthesize(value);
        if let Some((_, what)) = NON_LIST_CONTENT.iter().find(|(kind, _)| *kind == inner.kind_name()) {
            return Err(format!("its content is {what}, not a list of blocks"));
        }
        if inner.kind_name() != "list" {
            return Ok(Target::Splat { value });
        }
        let list = Collection::new(ctx, inner);
        let mut cursor = inner.walk();
        let merge = inner
            .named_children(&mut cursor)
            .filter_map(|element| json_block_dict(ctx, element).map(|json| (element, json)))
            .filter(|_| !ctx.append_json)
            .filter(|(_, json)| {
                // A json dict that is itself a tool result is not merged into:
                // its keys are a contract of their own.
                let json = unparenthesize(*json);
                json.kind_name() == "dictionary"
                    && tool_result_dict(json, ctx.piece_src(), ctx.offset, &Rules::CONTRACT).is_none()
            })
            .last();
        Ok(match merge {
            Some((block, json)) => {
                let json = Collection::new(ctx, unparenthesize(json));
                Target::Merge { list, block: ctx.range(block), json }
            }
            None => Target::Append(list),
        })
    }

    /// A status that is a constant outside the contract: the dict may be
    /// some other protocol's, and rewriting it may corrupt what its reader
    /// expects.
    fn check_status(&self, reasons: &mut Vec<String>) {
        let piece_src = self.ctx.piece_src();
        for entry in self.entries.iter().filter(|e| e.key.as_deref() == Some("status")) {
            if let Some(status) = crate::contract::status_outside(entry.value, piece_src, self.ctx.rules) {
                reasons.push(crate::contract::outside_reason(&status, self.ctx.rules));
            }
        }
    }

    /// A dict that is an operand of `==` / `!=` is an expected value (a
    /// test's `assert r == {...}`): fixed alone, the comparison changes.
    /// Read off the text around the dict (parentheses and white space
    /// seen through), as the candidate region parsed holds only the dict.
    fn check_compared(&self, reasons: &mut Vec<String>) {
        let src = self.ctx.src;
        let before =
            src[..self.dict_range.start].trim_end_matches(|c: char| c.is_whitespace() || c == '(' || c == '\\');
        let after = src[self.dict_range.end..].trim_start_matches(|c: char| c.is_whitespace() || c == ')' || c == '\\');
        let compared =
            before.ends_with("==") || before.ends_with("!=") || after.starts_with("==") || after.starts_with("!=");
        if compared {
            reasons.push(
                "it is compared with `==`/`!=` (a test's expected result?): fixed alone, the comparison changes unless what it is compared with changes the same way"
                    .into(),
            );
        }
    }

    fn plan(self) -> Remedy {
        let shapes = self.shapes();
        if shapes.is_empty() {
            return Remedy::Manual(
                "every layout of the fix would move a suppression comment away from code on its line that it silences"
                    .into(),
            );
        }
        let mut reasons = Vec::new();
        if let Err(manual) = self.check_order(&mut reasons) {
            return Remedy::Manual(manual);
        }
        self.check_status(&mut reasons);
        self.check_compared(&mut reasons);
        self.check_sdk_keys(&mut reasons);
        self.check_spreads(&mut reasons);
        self.check_values(&mut reasons);
        self.check_target(&mut reasons);
        // Only a fix safe so far needs the whole file to say where the
        // result goes.
        if reasons.is_empty()
            && let Some(why) = self.ctx.file.result_escapes(self.dict_range.clone())
        {
            reasons.push(why);
        }
        let text = self.augmentation();
        let augment_edits: Vec<Edit> = text.iter().map(|a| a.edit.clone()).collect();
        let edits = if self.ctx.with_edits { self.edits(&shapes, &augment_edits) } else { Vec::new() };
        let applicability = if reasons.is_empty() { Applicability::Safe } else { Applicability::Unsafe };
        let moves = self.entries.iter().filter(|e| e.moved).map(|e| e.label.clone()).collect();
        let text = match text {
            Ok(a) => TextAugment::Added { keys: a.mentioned, skipped: a.skipped, before: a.before, after: a.after },
            Err(why) => TextAugment::NotAdded(why),
        };
        Remedy::Fix(Fix { edits, applicability, unsafe_reasons: reasons, moves, text, repair: None })
    }

    /// Plans the mention of moved telemetry in the text block, or says why
    /// the text stays as it is.
    fn augmentation(&self) -> Result<augment::Augmentation, String> {
        if self.ctx.augment_text == AugmentText::Never {
            return Err("--augment-text=never".into());
        }
        if self.ctx.keep_text {
            return Err("the project reads its content blocks".into());
        }
        let list = match &self.target {
            Target::Append(list) | Target::Merge { list, .. } => list,
            Target::Splat { .. } => return Err("content is not a list literal".into()),
        };
        let piece_src = self.ctx.piece_src();
        let text = named_non_comment(list.node)
            .into_iter()
            .find_map(|e| augment::text_block_value(e, piece_src))
            .ok_or("content has no {\"text\": ...} block")?;
        // The json block keeps the moved entries in order, so the last one of
        // a key wins there, unless a spread moved after it overrides it.
        let moved: Vec<&DictEntry<'_>> = self.entries.iter().filter(|e| e.moved).collect();
        let candidates: Vec<augment::Candidate<'_>> = moved
            .iter()
            .enumerate()
            .filter_map(|(i, e)| {
                let key = e.key.as_deref()?;
                let later = &moved[i + 1..];
                if later.iter().any(|l| l.key.as_deref() == Some(key)) {
                    return None;
                }
                let overridden = later
                    .iter()
                    .any(|l| l.key.is_none())
                    .then_some("may be overridden in the json block by a spread moved after it");
                Some(augment::Candidate { key, value: e.value, overridden })
            })
            .collect();
        if candidates.is_empty() {
            return Err("only spreads move, and a spread is never mentioned".into());
        }
        let walrus = ExprFacts::of(self.dict_node, piece_src).binds;
        augment::plan(self.ctx.src, self.ctx.offset, text, &candidates, &walrus)
    }

    // ----- safety -------------------------------------------------------

    /// A spread standing after status, content or toolUseId could have
    /// overridden them; moved out, it no longer can. A spread before them
    /// is overridden by them, except for a `toolUseId` it may hold and no
    /// later key overrides: moved out, that one is lost, unless the SDK
    /// refills it (a Strands tool's result) or the spread cannot hold it.
    fn check_spreads(&self, reasons: &mut Vec<String>) {
        let mut tool_use_id_refilled = None;
        if let Some(spec) = self.builder {
            reasons.extend(spec.call_reasons.iter().cloned());
            // The json block holds the builder's own dict: changed anywhere
            // else (`kw.setdefault("status", ...)`, `kw["x"] = 1` after the
            // display), it would no longer hold just what the call passed.
            let model = self.ctx.file.model();
            let scope = model.scope_at(self.dict_range.start);
            let spreads: Vec<Range<usize>> =
                self.entries.iter().filter(|e| Self::spreads(self.ctx, e, spec)).map(|e| e.range.clone()).collect();
            let elsewhere = model
                .references_to(scope, &spec.kwargs)
                .find(|r| !spreads.iter().any(|s| s.start <= r.at.start && r.at.end <= s.end) || r.scope != scope);
            if let Some(r) = elsewhere {
                let line = self.ctx.src[..r.at.start].matches('\n').count() + 1;
                reasons.push(format!(
                    "`{}` is used at line {line} besides the spread, and the json block would hold that same dict",
                    spec.kwargs
                ));
            }
        }
        for (i, entry) in self.entries.iter().enumerate() {
            if !entry.moved || entry.key.is_some() {
                continue;
            }
            if self.builder.is_some_and(|spec| Self::spreads(self.ctx, entry, spec)) {
                // What the calls pass, checked across the project, is all
                // the builder's `**kwargs` can hold.
                continue;
            }
            if let Some(guard) =
                self.entries[..i].iter().find_map(|e| e.key.as_deref().filter(|k| GUARDED_KEYS.contains(k)))
            {
                reasons.push(format!(
                    "the spread `{}` stands after \"{guard}\" and could have overridden it",
                    super::excerpt(&entry.label)
                ));
                continue;
            }
            let overridden = self.entries[i + 1..].iter().any(|e| e.key.as_deref() == Some("toolUseId"));
            if overridden || !may_hold_key(entry.value, self.ctx.piece_src(), "toolUseId") {
                continue;
            }
            let refilled = *tool_use_id_refilled
                .get_or_insert_with(|| self.ctx.file.returned_by_strands_tool(self.dict_range.clone()));
            if !refilled {
                reasons.push(format!(
                    "the spread `{}` could hold \"toolUseId\", which the result would lose; only the result a @tool function returns directly gets it refilled by the SDK",
                    super::excerpt(&entry.label)
                ));
            }
        }
    }

    /// Keys the Strands SDK itself reads from a tool result: moved into the
    /// json block, it no longer sees them. A spread moves them too when its
    /// operand evidently may bring one (`**({} if c else {"cancelled": True})`).
    fn check_sdk_keys(&self, reasons: &mut Vec<String>) {
        for entry in self.entries.iter().filter(|e| e.moved) {
            for (key, what) in SDK_READS {
                let src = self.ctx.piece_src();
                if entry.key.as_deref() == Some(key) {
                    reasons.push(format!(
                        "the Strands SDK reads \"{key}\" from tool results ({what}): in the json block it would no longer see it"
                    ));
                } else if entry.key.is_none() && may_bring_key(entry.value, src, key) {
                    reasons.push(format!(
                        "the spread `{}` may bring \"{key}\", which the Strands SDK reads from tool results ({what}): in the json block it would no longer see it",
                        super::excerpt(&entry.label)
                    ));
                }
            }
        }
    }

    /// Values `json.dumps` cannot serialize were harmless while the runtime
    /// dropped them; in the json block they would make the formatter raise.
    /// A moved spread of a dict display merges its values into the block.
    fn check_values(&self, reasons: &mut Vec<String>) {
        let merged = |e: &&DictEntry<'_>| e.key.is_some() || unparenthesize(e.value).kind_name() == "dictionary";
        for entry in self.entries.iter().filter(|e| e.moved).filter(merged) {
            if let Some(what) = not_json_serializable(entry.value, self.ctx.piece_src()) {
                let holding = match entry.key {
                    Some(_) => format!("the value of {} is {what}", entry.label),
                    None => format!("the spread `{}` holds {what}", super::excerpt(&entry.label)),
                };
                reasons.push(format!(
                    "{holding}, which json.dumps cannot serialize: the runtime dropped it before, the json block would make the model provider's formatter raise"
                ));
            }
        }
    }

    fn check_target(&self, reasons: &mut Vec<String>) {
        match &self.target {
            Target::Splat { value } => {
                let inner = unparenthesize(*value);
                let text = super::excerpt(self.ctx.text(*value));
                let splat = splat_text(&text, *value);
                match inner.kind_name() {
                    "list_comprehension" => {}
                    "identifier" => {
                        if let Err(why) =
                            self.ctx.file.content_is_fresh_list(self.ctx.range(inner), self.dict_range.clone())
                        {
                            reasons.push(format!(
                                "content is `{text}`, not a list literal: `[{splat}, ...]` keeps the same blocks only if it is a list that nothing changes after the result is built, and {why}"
                            ));
                        }
                    }
                    _ => reasons.push(format!(
                        "content is `{text}`, not a list literal: `[{splat}, ...]` keeps the same blocks only if it is a list"
                    )),
                }
            }
            Target::Merge { json, .. } => {
                let piece_src = self.ctx.piece_src();
                let mut cursor = json.node.walk();
                let mut existing = Vec::new();
                let mut unknown = false;
                for child in json.node.named_children(&mut cursor) {
                    match child.kind_name() {
                        "pair" => match child.field("key").and_then(|k| constant_str(k, piece_src)) {
                            Some(key) => existing.push(key),
                            None => unknown = true,
                        },
                        "dictionary_splat" => unknown = true,
                        _ => {}
                    }
                }
                for entry in self.entries.iter().filter(|e| e.moved) {
                    match &entry.key {
                        Some(key) if existing.contains(key) => reasons.push(format!(
                            "{} already exists in the json block; merging would override it",
                            entry.label
                        )),
                        None if !json.elements.is_empty() => reasons.push(format!(
                            "the spread `{}` could override keys already in the json block",
                            super::excerpt(&entry.label)
                        )),
                        _ => {}
                    }
                }
                if unknown {
                    reasons.push("the json block's keys are not all known (a spread or a computed key), so a moved key could collide with one".into());
                }
            }
            Target::Append(_) => {}
        }
    }

    /// Compares the evaluation order before and after the move. Two
    /// side-effecting pieces that swap make the fix unsafe; a walrus whose
    /// name another swapped piece reads makes it a manual repair.
    fn check_order(&self, reasons: &mut Vec<String>) -> Result<(), String> {
        let piece_src = self.ctx.piece_src();
        struct Unit<'t> {
            node: Option<Node<'t>>,
            range: Range<usize>,
            facts: ExprFacts,
            moved: bool,
        }
        let mut units: Vec<Unit<'t>> = Vec::new();
        let mut original = Vec::new();
        let mut rewritten = Vec::new();
        let mut moved_ids = Vec::new();
        let mut insertion_point = 0;
        let entry_node = |e: &DictEntry<'t>| {
            let mut n = e.value;
            while let Some(p) = n.parent() {
                if p.id() == self.dict_node.id() {
                    break;
                }
                n = p;
            }
            n
        };
        for (i, entry) in self.entries.iter().enumerate() {
            if i == self.content {
                let (children, splice_after): (Vec<Node<'t>>, Option<usize>) = match &self.target {
                    Target::Splat { value } => (vec![*value], None),
                    Target::Append(list) => (named_non_comment(list.node), None),
                    Target::Merge { list, block, json } => {
                        let mut out = Vec::new();
                        let mut after = None;
                        for child in named_non_comment(list.node) {
                            if self.ctx.range(child) == *block {
                                out.extend(named_non_comment(json.node));
                                after = Some(out.len());
                            } else {
                                out.push(child);
                            }
                        }
                        (out, after)
                    }
                };
                for (j, child) in children.iter().enumerate() {
                    if splice_after == Some(j) {
                        insertion_point = rewritten.len();
                    }
                    let id = units.len();
                    units.push(Unit {
                        node: Some(*child),
                        range: self.ctx.range(*child),
                        facts: ExprFacts::of(*child, piece_src),
                        moved: false,
                    });
                    original.push(id);
                    rewritten.push(id);
                }
                if splice_after.is_none_or(|s| s == children.len()) {
                    insertion_point = rewritten.len();
                }
                continue;
            }
            let node = entry_node(entry);
            let id = units.len();
            units.push(Unit {
                node: Some(node),
                range: entry.range.clone(),
                facts: ExprFacts::of(node, piece_src),
                moved: entry.moved,
            });
            original.push(id);
            if entry.moved {
                moved_ids.push(id);
            } else {
                rewritten.push(id);
            }
        }
        // Moved entries were collected in order; splice them in.
        let tail = rewritten.split_off(insertion_point.min(rewritten.len()));
        rewritten.extend(moved_ids.iter().copied());
        rewritten.extend(tail);
        let position = |order: &[usize]| {
            let mut pos = vec![0; units.len()];
            for (p, &id) in order.iter().enumerate() {
                pos[id] = p;
            }
            pos
        };
        let (before, after) = (position(&original), position(&rewritten));
        let text = |u: &Unit<'_>| super::excerpt(&self.ctx.src[u.range.clone()]);
        for m in units.iter().enumerate().filter(|(_, u)| u.moved) {
            for o in units.iter().enumerate().filter(|(_, u)| !u.moved) {
                let swapped = (before[m.0] < before[o.0]) != (after[m.0] < after[o.0]);
                if !swapped || o.1.node.is_none() {
                    continue;
                }
                if let Some(name) = m.1.facts.binding_conflict(&o.1.facts) {
                    return Err(format!(
                        "`{}` and `{}` share the walrus-bound name `{name}`; moving one past the other would change what `{name}` holds when it is read",
                        text(m.1),
                        text(o.1)
                    ));
                }
                if m.1.facts.effects && o.1.facts.effects {
                    reasons.push(format!(
                        "moving `{}` past `{}` changes the order in which their side effects run",
                        text(m.1),
                        text(o.1)
                    ));
                }
            }
        }
        Ok(())
    }

    // ----- layout -------------------------------------------------------

    /// The layouts the fix may take, most compact first: those that keep
    /// the moved entries' comments on lines of their own when they need
    /// them, and that split no line carrying a suppression comment away
    /// from code before it on that line (it would no longer silence it).
    fn shapes(&self) -> Vec<Shape> {
        let src = self.ctx.src;
        let dict_single = !layout::is_multiline(src, &self.dict_range);
        let list_single = match &self.target {
            Target::Splat { .. } => true,
            Target::Append(list) | Target::Merge { list, .. } => !list.multiline,
        };
        let forced = self.items.iter().any(|i| i.forces_multiline(src));
        let mut shapes = vec![
            Shape { dict_exploded: false, list_exploded: false, json_multiline: false },
            Shape { dict_exploded: dict_single, list_exploded: false, json_multiline: false },
            Shape { dict_exploded: dict_single, list_exploded: list_single, json_multiline: false },
            Shape { dict_exploded: dict_single, list_exploded: list_single, json_multiline: true },
        ];
        if forced {
            shapes.retain(|s| s.json_multiline);
        }
        shapes.dedup();
        let silenced = self.silenced_positions();
        if !silenced.is_empty() {
            shapes.retain(|&shape| {
                let edits = self.edits_for(shape, &[]);
                !self.splits_a_suppressed_line(&edits, &silenced) && !self.carries_a_suppression_away(&edits, &silenced)
            });
        }
        shapes
    }

    /// Where code stands that a suppression comment later on its line
    /// silences, with the code silenced, on the lines this dict stands on:
    /// the start of each silenced entry of the tool results there (this
    /// dict, those inside it, and those sharing its first or last line),
    /// or of its dict, for a comment on the dict's line. Looked for only
    /// when some of those lines has a comment.
    fn silenced_positions(&self) -> Vec<(usize, Code)> {
        let (src, lines, offset) = (self.ctx.src, &self.ctx.lines, self.ctx.offset);
        let window = lines.line_start(self.dict_range.start)..lines.line_end(self.dict_range.end);
        let file = self.ctx.file;
        if !file.line_tails().may_suppress_in(window.clone()) {
            return Vec::new();
        }
        file.silenced_in(window.clone(), || {
            // The code of those lines: in the piece parsed, or in the whole
            // file when they reach beyond it.
            let mut root = self.dict_node;
            while let Some(parent) = root.parent() {
                root = parent;
            }
            let (root, piece_src, offset) = if offset <= window.start && window.end <= offset + root.end_byte() {
                (root, self.ctx.piece_src(), offset)
            } else {
                (file.whole_tree().root_node(), src, 0)
            };
            let around = root.descendant_for_byte_range(window.start - offset, window.end - offset).unwrap_or(root);
            let mut positions = Vec::new();
            crate::syntax::for_each_node(around, |node| {
                let Some(dict) = (node.kind_name() == "dictionary")
                    .then(|| tool_result_dict_in(node, piece_src, offset, self.ctx.rules, (file.line_tails(), offset)))
                    .flatten()
                else {
                    return;
                };
                for entry in dict.entries.iter().filter(|e| e.breaks.is_some() && e.violation().is_none()) {
                    let code = entry.breaks.expect("filtered");
                    let on_entry_line = file.line_tails().suppression(entry.range.start).covers(code);
                    let at = if on_entry_line { entry.range.start } else { dict.range.start };
                    if window.contains(&at) {
                        positions.push((at, code));
                    }
                }
            });
            positions
        })
    }

    /// Whether an edit parts silenced code from the comment later on its
    /// line that silences it: by breaking the line between them, or by
    /// taking the code (inside a moved entry) away and leaving the comment.
    fn splits_a_suppressed_line(&self, edits: &[Edit], silenced: &[(usize, Code)]) -> bool {
        let (src, lines) = (self.ctx.src, &self.ctx.lines);
        edits.iter().any(|e| {
            let same_line = |pos: usize| pos < e.range.end && lines.line_start(pos) == lines.line_start(e.range.end);
            let breaks_line = e.replacement.contains(['\n', '\r']);
            let takes_code = |pos: usize| {
                e.range.start <= pos && Code::ALL.iter().any(|&c| line_suppression(src, e.range.end).covers(c))
            };
            silenced.iter().any(|&(pos, _)| same_line(pos) && (breaks_line || takes_code(pos)))
        })
    }

    /// Whether the edits leave silenced code that they do not move on a line
    /// without the comment that silenced it: a moved entry may carry the
    /// comment of the line it shared with the code away with it.
    fn carries_a_suppression_away(&self, edits: &[Edit], silenced: &[(usize, Code)]) -> bool {
        let src = self.ctx.src;
        let mut after: Vec<&Edit> = edits.iter().collect();
        after.sort_by_key(|e| (e.range.start, e.range.end));
        silenced.iter().any(|&(pos, code)| {
            if after.iter().any(|e| e.range.start <= pos && pos < e.range.end) {
                // The code itself moves: the check above.
                return false;
            }
            // The rest of the code's line once edited.
            let mut tail = String::new();
            let mut at = pos;
            for e in after.iter().filter(|e| e.range.start >= pos) {
                for piece in [&src[at..e.range.start], e.replacement.as_str()] {
                    if let Some(end) = piece.find(['\n', '\r']) {
                        tail.push_str(&piece[..end]);
                        return !line_suppression(&tail, 0).covers(code);
                    }
                    tail.push_str(piece);
                }
                at = e.range.end;
            }
            let rest = &src[at..];
            tail.push_str(&rest[..rest.find(['\n', '\r']).unwrap_or(rest.len())]);
            !line_suppression(&tail, 0).covers(code)
        })
    }

    // ----- edits --------------------------------------------------------

    /// The fix's edits in the first of `shapes` whose new lines fit the
    /// line length.
    fn edits(&self, shapes: &[Shape], augment: &[Edit]) -> Vec<Edit> {
        let src = self.ctx.src;
        // The dict's lines, but no further than a few line lengths either
        // side: a line reaching past that is too long whatever the shape,
        // and many dicts on one huge line must not each copy all of it.
        let reach = 4 * self.ctx.style.line_length.min(1 << 16);
        let mut from =
            self.ctx.lines.line_start(self.dict_range.start).max(self.dict_range.start.saturating_sub(reach));
        while !src.is_char_boundary(from) {
            from += 1;
        }
        let mut to = self.ctx.lines.line_end(self.dict_range.end).min(self.dict_range.end + reach);
        while !src.is_char_boundary(to) {
            to -= 1;
        }
        let window = from..to;
        let old_lines: HashSet<&str> = src[window.clone()].lines().collect();
        let fits = |shape: Shape, augment: &[Edit]| {
            let shifted: Vec<Edit> = self
                .edits_for(shape, augment)
                .into_iter()
                .map(|e| Edit { range: e.range.start - window.start..e.range.end - window.start, ..e })
                .collect();
            let new_text = apply_edits(&src[window.clone()], &shifted);
            new_text
                .split(['\n', '\r'])
                .filter(|line| !old_lines.contains(line))
                .all(|line| layout::width(line) <= self.ctx.style.line_length)
        };
        // With the augmented text if some shape fits it; else as if the
        // text were unchanged (a long text line is never split).
        let chosen_shape = shapes
            .iter()
            .copied()
            .find(|&s| fits(s, augment))
            .or_else(|| shapes.iter().copied().find(|&s| fits(s, &[])))
            .unwrap_or(shapes[shapes.len() - 1]);
        let mut chosen = self.edits_for(chosen_shape, augment);
        chosen.sort_by_key(|e| e.range.start);
        chosen
    }

    fn edits_for(&self, shape: Shape, augment: &[Edit]) -> Vec<Edit> {
        let ctx = self.ctx;
        let content = &self.entries[self.content];
        if shape.dict_exploded {
            let base = ctx.lines.line_indent(self.dict_range.start).to_owned();
            let inner = ctx.deeper(&base);
            let content_edits = self.content_edits(shape, &inner, augment);
            let lines: Vec<String> = self
                .entries
                .iter()
                .enumerate()
                .filter(|(_, e)| !e.moved)
                .map(|(i, e)| {
                    if i == self.content {
                        format!("{inner}{},", text_with(ctx.src, &e.range, &content_edits))
                    } else {
                        format!("{inner}{},", &ctx.src[e.range.clone()])
                    }
                })
                .collect();
            let nl = ctx.nl();
            return vec![Edit {
                range: self.dict_range.clone(),
                replacement: format!("{{{nl}{}{nl}{base}}}", lines.join(nl)),
            }];
        }
        let base = ctx.lines.line_indent(content.range.start).to_owned();
        let mut edits = self.deletions();
        edits.extend(self.content_edits(shape, &base, augment));
        edits
    }

    /// Edits inside the content value that add the moved entries. `base` is
    /// the indentation of the line holding the content entry.
    fn content_edits(&self, shape: Shape, base: &str, augment: &[Edit]) -> Vec<Edit> {
        let ctx = self.ctx;
        let inner = ctx.deeper(base);
        // Elements copied into a rewritten list carry the text augmentation;
        // lists edited in place get it as edits of its own.
        let copy = |r: &Range<usize>| text_with(ctx.src, r, augment);
        let in_place = |mut edits: Vec<Edit>| {
            edits.extend(augment.iter().cloned());
            edits
        };
        match &self.target {
            Target::Splat { value } => {
                let splat = splat_text(ctx.text(*value), *value);
                let replacement = if shape.list_exploded {
                    let block = self.block(&inner, shape.json_multiline);
                    let last = if self.trailing_commas { "," } else { "" };
                    exploded(ctx, "[", "]", &format!("{inner}{splat},{}{inner}{block}{last}", ctx.nl()), base)
                } else {
                    format!("[{splat}, {}]", self.block(&inner, false))
                };
                vec![Edit { range: ctx.range(*value), replacement }]
            }
            Target::Append(list) if list.multiline => in_place(multiline_append(ctx, list, false, |indent, comma| {
                format!("{indent}{}{}", self.block(indent, shape.json_multiline), if comma { "," } else { "" })
            })),
            Target::Append(list) if !shape.list_exploded => in_place(vec![inline_append(list, &self.block("", false))]),
            Target::Append(list) => {
                let mut lines: Vec<String> = list.elements.iter().map(|r| format!("{inner}{},", copy(r))).collect();
                let last = if self.trailing_commas { "," } else { "" };
                lines.push(format!("{inner}{}{last}", self.block(&inner, shape.json_multiline)));
                vec![Edit {
                    range: list.range.clone(),
                    replacement: exploded(ctx, "[", "]", &lines.join(ctx.nl()), base),
                }]
            }
            Target::Merge { list, block, json } => {
                if list.multiline || !shape.list_exploded {
                    let indent = ctx.lines.line_indent(block.start).to_owned();
                    return in_place(self.merge_edits(json, &indent, shape.json_multiline));
                }
                let count = list.elements.len();
                let lines: Vec<String> = list
                    .elements
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let text = if r == block {
                            text_with(ctx.src, r, &self.merge_edits(json, &inner, shape.json_multiline))
                        } else {
                            copy(r)
                        };
                        let comma = if i + 1 < count || self.trailing_commas { "," } else { "" };
                        format!("{inner}{text}{comma}")
                    })
                    .collect();
                vec![Edit {
                    range: list.range.clone(),
                    replacement: exploded(ctx, "[", "]", &lines.join(ctx.nl()), base),
                }]
            }
        }
    }

    /// Edits adding the moved entries to an existing json dict; `indent` is
    /// that of the line the json block starts on.
    fn merge_edits(&self, json: &Collection<'_>, indent: &str, multiline: bool) -> Vec<Edit> {
        let ctx = self.ctx;
        if json.multiline {
            let ends_with_comment = self.items.last().is_some_and(|i| i.trailing.is_some());
            return multiline_append(ctx, json, ends_with_comment, |indent, comma| self.render_items(indent, comma));
        }
        if !multiline {
            return vec![inline_append(json, &self.compact_items())];
        }
        let inner = ctx.deeper(indent);
        let mut lines: Vec<String> = json.element_texts(ctx).iter().map(|t| format!("{inner}{t},")).collect();
        lines.push(self.render_items(&inner, self.trailing_commas));
        vec![Edit { range: json.range.clone(), replacement: exploded(ctx, "{", "}", &lines.join(ctx.nl()), indent) }]
    }

    /// The moved entries on one line, comma-separated.
    fn compact_items(&self) -> String {
        self.items.iter().map(|i| self.ctx.src[i.entry.clone()].to_owned()).collect::<Vec<_>>().join(", ")
    }

    /// The moved entries one per line at `indent`, with their comments; the
    /// last gets a comma when `comma_last`.
    fn render_items(&self, indent: &str, comma_last: bool) -> String {
        let ctx = self.ctx;
        let nl = ctx.nl();
        let mut out = String::new();
        for (n, item) in self.items.iter().enumerate() {
            if n > 0 {
                out.push_str(nl);
            }
            if let Some(above) = &item.above {
                for line in ctx.src[above.clone()].lines() {
                    out.push_str(indent);
                    out.push_str(line.trim_start());
                    out.push_str(nl);
                }
            }
            out.push_str(indent);
            out.push_str(&item.body(ctx, indent));
            if n + 1 < self.items.len() || comma_last {
                out.push(',');
            }
            if let Some((gap, comment)) = &item.trailing {
                out.push_str(gap);
                out.push_str(&ctx.src[comment.clone()]);
            }
        }
        out
    }

    /// The json block; `indent` is that of the line it starts on. For a
    /// builder's own `**kwargs` alone, a block that appears only when some
    /// keyword was passed: `*([{"json": kwargs}] if kwargs else [])`.
    fn block(&self, indent: &str, multiline: bool) -> String {
        let q = self.quote;
        if let Some(spec) = self.conditional_block() {
            let k = &spec.kwargs;
            // The moved `**kwargs` is not copied: its comments go on lines
            // of their own above the block (they force a multi-line block).
            let nl = self.ctx.nl();
            let comments: String = self.carried_comments().iter().map(|c| format!("{c}{nl}{indent}")).collect();
            return format!("{comments}*([{{{q}json{q}: {k}}}] if {k} else [])");
        }
        if !multiline {
            return format!("{{{q}json{q}: {{{}}}}}", self.compact_items());
        }
        let nl = self.ctx.nl();
        let body = self.render_items(&self.ctx.deeper(indent), self.trailing_commas);
        format!("{{{q}json{q}: {{{nl}{body}{nl}{indent}}}}}")
    }

    /// The comments the moved entries carry, in order: the lines above
    /// each, those inside it, and the one ending its line.
    fn carried_comments(&self) -> Vec<String> {
        let src = self.ctx.src;
        let mut inside: Vec<Range<usize>> = Vec::new();
        crate::syntax::for_each_node(self.dict_node, |n| {
            let r = self.ctx.range(n);
            if n.kind_name() == "comment" && self.items.iter().any(|i| i.entry.start <= r.start && r.end <= i.entry.end)
            {
                inside.push(r);
            }
        });
        let mut out = Vec::new();
        for item in &self.items {
            if let Some(above) = &item.above {
                out.extend(src[above.clone()].lines().map(|l| l.trim().to_owned()).filter(|l| !l.is_empty()));
            }
            out.extend(
                inside
                    .iter()
                    .filter(|r| item.entry.start <= r.start && r.end <= item.entry.end)
                    .map(|r| src[r.clone()].to_owned()),
            );
            out.extend(item.trailing.as_ref().map(|(_, c)| src[c.clone()].to_owned()));
        }
        out
    }

    /// Deletes the moved entries (with their commas and travelling comments)
    /// from a dict that is not being exploded.
    fn deletions(&self) -> Vec<Edit> {
        let src = self.ctx.src;
        let floor = self.dict_range.start + 1;
        let mut ranges: Vec<Range<usize>> = Vec::new();
        for (entry, item) in self.entries.iter().filter(|e| e.moved).zip(&self.items) {
            let end = entry.comma.as_ref().map_or(entry.range.end, |c| c.end);
            // Comments above travel with the entry, so they go with it.
            let start = item.above.as_ref().map_or(entry.range.start, |a| a.start);
            let range = if layout::ends_line(src, end) {
                let stop = self.ctx.lines.line_end(end);
                if layout::starts_line(src, entry.range.start) {
                    self.ctx.lines.line_start(start)..stop + layout::newline_len(src, stop)
                } else if src[floor..entry.range.start].trim().is_empty() && stop == layout::skip_blanks(src, end) {
                    // It hugs the opening brace: the next line's entry takes
                    // its place there.
                    let next = src[stop..].find(|c: char| !c.is_whitespace()).map_or(src.len(), |i| stop + i);
                    if src.as_bytes().get(next) == Some(&b'#') {
                        entry.range.start..stop
                    } else {
                        entry.range.start..next
                    }
                } else {
                    layout::skip_blanks_back(src, entry.range.start).max(floor)..stop
                }
            } else {
                start..layout::skip_blanks(src, end)
            };
            ranges.push(range);
        }
        // Keep the dict's trailing-comma habit when its last entry moves.
        if let Some(last) = self.entries.last().filter(|e| e.moved && e.comma.is_none())
            && let Some(remaining) = self.entries.iter().rev().find(|e| !e.moved)
            && let Some(comma) = &remaining.comma
        {
            let next_moved = self.entries.iter().find(|e| e.moved && e.range.start > comma.end).unwrap_or(last);
            let same_line = !layout::is_multiline(src, &(comma.end..next_moved.range.start));
            ranges.push(comma.start..if same_line { next_moved.range.start } else { comma.end });
        }
        let mut merged = merge_ranges(ranges);
        // A closing brace that hugged the last entry hugs the last kept one.
        let close = self.dict_range.end - 1;
        if !layout::starts_line(src, close)
            && let Some(remaining) = self.entries.iter().rev().find(|e| !e.moved)
        {
            let kept_comma =
                remaining.comma.as_ref().filter(|c| !merged.iter().any(|r| r.start <= c.start && c.end <= r.end));
            let from = kept_comma.map_or(remaining.range.end, |c| c.end);
            let kept_between = (from..close).filter(|&i| !merged.iter().any(|r| r.contains(&i)));
            if kept_between.clone().all(|i| src.as_bytes()[i].is_ascii_whitespace())
                && kept_between.clone().next().is_some()
            {
                merged.push(from..close);
                merged = merge_ranges(merged);
            }
        }
        merged
            .into_iter()
            .map(|mut r| {
                // A line left holding only blanks goes entirely.
                let line_start = self.ctx.lines.line_start(r.start);
                let line_end = self.ctx.lines.line_end(r.end);
                let blank = |s: &str| s.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\x0c'));
                if blank(&src[line_start..r.start])
                    && blank(&src[r.end..line_end])
                    && line_start > self.dict_range.start
                    && line_end < self.dict_range.end
                    && !src[r.clone()].ends_with(['\n', '\r'])
                {
                    r = line_start..line_end + layout::newline_len(src, line_end);
                }
                Edit { range: r, replacement: String::new() }
            })
            .collect()
    }
}

/// Sorts ranges and merges those that overlap or touch.
fn merge_ranges(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    ranges.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<usize>> = Vec::new();
    for r in ranges {
        match merged.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => merged.push(r),
        }
    }
    merged
}

/// The dict's entries, with their commas and whether they move.
fn dict_entries<'t>(ctx: &Ctx<'_>, node: Node<'t>, dict: &ToolResultDict) -> Vec<DictEntry<'t>> {
    let mut out: Vec<DictEntry<'t>> = Vec::new();
    let mut cursor = node.walk();
    let mut known = dict.entries.iter();
    for child in node.children(&mut cursor) {
        match child.kind_name() {
            "pair" | "dictionary_splat" => {
                let info = known.next().expect("the contract saw the same entries");
                let value = match child.kind_name() {
                    "pair" => child.field("value"),
                    _ => operand(child),
                }
                .expect("entries have values");
                let key = info.key_name().map(str::to_owned);
                let label = match &key {
                    Some(k) => format!("\"{k}\""),
                    None => ctx.text(child).to_owned(),
                };
                out.push(DictEntry {
                    range: ctx.range(child),
                    comma: None,
                    moved: info.violation().is_some(),
                    key,
                    value,
                    label,
                });
            }
            "," => {
                if let Some(last) = out.last_mut() {
                    last.comma.get_or_insert(ctx.range(child));
                }
            }
            _ => {}
        }
    }
    out
}

fn moved_item(ctx: &Ctx<'_>, dict_node: Node<'_>, entry: &DictEntry<'_>) -> MovedItem {
    let src = ctx.src;
    let end = entry.comma.as_ref().map_or(entry.range.end, |c| c.end);
    let starts = layout::starts_line(src, entry.range.start);
    let above = if starts {
        layout::comments_above(&ctx.lines, entry.range.start, ctx.range(dict_node).start + 1)
    } else {
        None
    };
    let trailing = layout::trailing_comment(src, end).map(|c| (src[end..c.start].to_owned(), c));
    let base = ctx.lines.line_indent(entry.range.start).to_owned();
    let mut string_lines = HashSet::new();
    if layout::is_multiline(src, &entry.range) {
        let entry_node = entry.value.parent().unwrap_or(entry.value);
        crate::syntax::for_each_node(entry_node, |n| {
            if n.kind_name() == "string" {
                let r = ctx.range(n);
                let mut pos = r.start;
                while pos < r.end {
                    let e = ctx.lines.line_end(pos);
                    pos = e + layout::newline_len(src, e);
                    if pos < r.end && pos > r.start {
                        string_lines.insert(pos);
                    }
                    if e >= r.end {
                        break;
                    }
                }
            }
        });
    }
    MovedItem { entry: entry.range.clone(), above, trailing, base, string_lines }
}

/// The dict literal of a `{"json": <dict>}` block, or of `{"json": x}` (the
/// caller checks which), if `element` is a one-entry json block.
fn json_block_dict<'t>(ctx: &Ctx<'_>, element: Node<'t>) -> Option<Node<'t>> {
    if element.kind_name() != "dictionary" {
        return None;
    }
    let entries = named_non_comment(element);
    let [pair] = entries.as_slice() else { return None };
    if pair.kind_name() != "pair" {
        return None;
    }
    let key = pair.field("key")?;
    (constant_str(key, ctx.piece_src()).as_deref() == Some("json")).then(|| pair.field("value")).flatten()
}

fn named_non_comment(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).filter(|c| c.kind_name() != "comment").collect()
}

/// Appends one-line `items` to a one-line collection.
fn inline_append(coll: &Collection<'_>, items: &str) -> Edit {
    match (coll.elements.last(), &coll.trailing_comma) {
        (Some(_), Some(comma)) => Edit { range: comma.end..comma.end, replacement: format!(" {items},") },
        (Some(last), None) => Edit { range: last.end..last.end, replacement: format!(", {items}") },
        (None, _) => Edit { range: coll.range.start + 1..coll.range.start + 1, replacement: items.to_owned() },
    }
}

/// Appends lines to a multi-line collection. `render(indent, comma)` gives
/// the new lines at the elements' indentation, the last with a trailing comma
/// when `comma` (the collection's habit).
/// `ends_with_comment`: the rendered lines end in a `#` comment, so a closing
/// bracket that hugged the last element must move to a line of its own.
fn multiline_append(
    ctx: &Ctx<'_>,
    coll: &Collection<'_>,
    ends_with_comment: bool,
    render: impl Fn(&str, bool) -> String,
) -> Vec<Edit> {
    let src = ctx.src;
    let close = coll.range.end - 1;
    let indent = match coll.elements.last() {
        Some(last) if layout::starts_line(src, last.start) => ctx.lines.line_indent(last.start).to_owned(),
        Some(last) => src[ctx.lines.line_start(last.start)..last.start]
            .chars()
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect(),
        None => ctx.deeper(ctx.lines.line_indent(close)),
    };
    let has_comma = coll.trailing_comma.is_some() || coll.elements.is_empty();
    let mut edits = Vec::new();
    if layout::starts_line(src, close) {
        match coll.elements.last() {
            // Right after the last element's line (and its comment), so that
            // comments standing before the closing bracket stay last.
            Some(last) => {
                if !has_comma {
                    edits.push(Edit { range: last.end..last.end, replacement: ",".into() });
                }
                let after = coll.trailing_comma.as_ref().map_or(last.end, |c| c.end);
                let at = ctx.lines.line_end(after);
                edits.push(Edit { range: at..at, replacement: format!("{}{}", ctx.nl(), render(&indent, has_comma)) });
            }
            None => {
                let at = ctx.lines.line_start(close);
                edits.push(Edit { range: at..at, replacement: format!("{}{}", render(&indent, has_comma), ctx.nl()) });
            }
        }
    } else {
        let (at, comma) = match (&coll.trailing_comma, coll.elements.last()) {
            (Some(c), _) => (c.end, ""),
            (None, Some(last)) => (last.end, ","),
            (None, None) => (coll.range.start + 1, ""),
        };
        let mut replacement = format!("{comma}{}{}", ctx.nl(), render(&indent, coll.trailing_comma.is_some()));
        if ends_with_comment {
            replacement.push_str(ctx.nl());
            replacement.push_str(ctx.lines.line_indent(close));
        }
        edits.push(Edit { range: at..at, replacement });
    }
    edits
}

/// `*content` for a list display, parenthesized unless `value` is a primary
/// (or already parenthesized) expression.
fn splat_text(text: &str, value: Node<'_>) -> String {
    if PRIMARY_KINDS.contains(&unparenthesize(value).kind_name()) || value.kind_name() == "parenthesized_expression" {
        format!("*{text}")
    } else {
        format!("*({text})")
    }
}

/// A collection laid out one element per line: `body` holds the element
/// lines (already indented one level deeper than `base`).
fn exploded(ctx: &Ctx<'_>, open: &str, close: &str, body: &str, base: &str) -> String {
    let nl = ctx.nl();
    format!("{open}{nl}{body}{nl}{base}{close}")
}

/// The text of `range` with those `edits` that fall inside it applied.
fn text_with(src: &str, range: &Range<usize>, edits: &[Edit]) -> String {
    let inside: Vec<Edit> = edits
        .iter()
        .filter(|e| e.range.start >= range.start && e.range.end <= range.end)
        .map(|e| Edit {
            range: e.range.start - range.start..e.range.end - range.start,
            replacement: e.replacement.clone(),
        })
        .collect();
    apply_edits(&src[range.clone()], &inside)
}
