//! TS005 `not-a-tool-result`: a Strands tool returns a dict display with
//! `"status"` but no `"content"` (or the other way round). The decorator
//! passes on only dicts with both; it serializes anything else into one
//! *success* text block, so an error is reported to the agent as a
//! success. Detection follows returns through names and helper calls
//! across the project ([`crate::semantic::project`]); see `docs/rules.md`.

use tree_sitter::Node;

use super::Rule;
use crate::contract::Literal;
use crate::diagnostics::{Applicability, Code, Edit, Finding, Proposal};
use crate::syntax::tree::{FieldChild, KindName};
use crate::syntax::tree::{constant_str, is_bytes, node_text, not_json_serializable, unparenthesize};

pub const RULE: Rule = Rule {
    code: Code::NotAResult,
    name: "not-a-tool-result",
    description: "A tool returns a dict with status but no content (or content but no status), which the SDK rewraps as a success text block.",
    message,
};

/// `detail` holds the whole message, which names the tool that returns
/// the dict and says what the agent sees.
fn message(f: &Finding) -> String {
    f.detail.clone().unwrap_or_default()
}

/// The message of a half-shaped display returned by the tool `tool`:
/// `missing` is the key it lacks, `status` its constant status, if any.
pub fn message_for(tool: &str, missing: &str, status: Option<&str>) -> String {
    match (missing, status) {
        ("status", _) => format!(
            "tool `{tool}` returns a dict without \"status\": the SDK sends it to the agent as one success text block, not as its content blocks"
        ),
        (_, Some(status)) => format!(
            "tool `{tool}` returns a dict without \"content\": the SDK sends it to the agent as a *success* text block, and status {} is lost",
            super::quote_key(status)
        ),
        _ => format!(
            "tool `{tool}` returns a dict without \"content\": the SDK sends it to the agent as a *success* text block, and its status is lost"
        ),
    }
}

/// The keys whose value is evidently the message of a result, in the order
/// they are looked for.
pub const MESSAGE_KEYS: [&str; 4] = ["error", "message", "msg", "detail"];

/// The remedies for a half-shaped display `dict` (a node of `piece_src`,
/// which starts at `offset` of the file) that lacks `missing`: first the
/// one `fix` applies, then the others a reviewer may choose. Each turns
/// the dict into a real tool result that keeps its status (a dict without
/// one gets `"success"`, which is what the agent was told), with a text
/// block for the message and a json block for every other key; the
/// remedies differ in which key becomes the text. Always unsafe: what the
/// agent receives changes. Manual where the rewrite is not mechanical.
pub fn remedies(dict: Node<'_>, piece_src: &str, offset: usize, missing: &str) -> Vec<Proposal> {
    match entries_of(dict, piece_src) {
        Err(why) => vec![Proposal::Manual(why)],
        Ok(entries) => {
            let render = Render { dict, piece_src, offset, entries: &entries };
            let out = match missing {
                "content" => render.without_content(),
                _ => render.without_status(),
            };
            if out.is_empty() {
                vec![Proposal::Manual(
                    "nothing in the dict says what happened: write the text the agent should read".into(),
                )]
            } else {
                out
            }
        }
    }
}

/// One pair of the dict: its key, the pair's text and its value node.
struct Pair<'t, 's> {
    key: String,
    text: &'s str,
    /// Where the pair starts in the piece.
    start: usize,
    value: Node<'t>,
}

/// The pairs of `dict`, or why the dict is left for a person.
fn entries_of<'t, 's>(dict: Node<'t>, piece_src: &'s str) -> Result<Vec<Pair<'t, 's>>, String> {
    let mut out = Vec::new();
    let mut cursor = dict.walk();
    for child in dict.named_children(&mut cursor) {
        match child.kind_name() {
            "pair" => {
                let (Some(key), Some(value)) = (child.field("key"), child.field("value")) else {
                    return Err("the dict is not complete".into());
                };
                let Some(name) = constant_str(key, piece_src) else {
                    return Err(format!("its key `{}` is not a constant string", node_text(key, piece_src)));
                };
                if out.iter().any(|p: &Pair<'_, '_>| p.key == name) {
                    return Err(format!("its key {} is written twice", super::quote_key(&name)));
                }
                out.push(Pair { key: name, text: node_text(child, piece_src), start: child.start_byte(), value });
            }
            "comment" => return Err("it holds comments, which a rewrite would have to place".into()),
            _ => return Err("it holds a `**` spread, which may carry the missing key".into()),
        }
    }
    Ok(out)
}

/// How a remedy writes the new dict.
struct Render<'a, 't, 's> {
    dict: Node<'t>,
    piece_src: &'s str,
    offset: usize,
    entries: &'a [Pair<'t, 's>],
}

/// Why every remedy is unsafe.
const CHANGES: &str = "what the agent receives changes: today one success text block holding the whole dict";

impl Render<'_, '_, '_> {
    /// The quote character of the dict's first key.
    fn quote(&self) -> char {
        self.entries.first().and_then(|p| p.text.chars().find(|c| matches!(c, '"' | '\''))).unwrap_or('"')
    }

    /// Remedies for a dict with a status and no content: each evident
    /// message key in turn as the text, then none.
    fn without_content(&self) -> Vec<Proposal> {
        let mut out = Vec::new();
        for (i, p) in self.entries.iter().enumerate() {
            if MESSAGE_KEYS.contains(&p.key.as_str()) {
                out.push(self.proposal(Some(i), None));
            }
        }
        if self.entries.iter().any(|p| p.key != "status" && p.key != "toolUseId") {
            out.push(self.proposal(None, None));
        }
        out
    }

    /// The remedy for a dict with content and no status: `"success"` is
    /// added; a string content becomes a text block.
    fn without_status(&self) -> Vec<Proposal> {
        let Some(at) = self.entries.iter().position(|p| p.key == "content") else { return Vec::new() };
        let value = unparenthesize(self.entries[at].value);
        match Literal::of(value, self.piece_src) {
            Literal::Str => vec![self.proposal(Some(at), Some(at))],
            Literal::List { empty: false } => vec![self.proposal(None, Some(at))],
            Literal::List { empty: true } => {
                vec![Proposal::Manual("its content is an empty list: write the blocks the agent should read".into())]
            }
            literal if literal.breaks_content() => {
                vec![Proposal::Manual(format!("its content is {}: write it as a list of blocks", literal.words()))]
            }
            _ if value.kind_name() == "list_comprehension" => vec![self.proposal(None, Some(at))],
            _ => vec![Proposal::Manual(
                "its content is not a list display: toolshape cannot tell which blocks it holds".into(),
            )],
        }
    }

    /// The rewrite with entry `text` (if any) as the text block and the
    /// other keys but status and toolUseId in a json block; `content` is
    /// the entry holding the content already (a list display, or a string
    /// that is the text).
    fn proposal(&self, text: Option<usize>, content: Option<usize>) -> Proposal {
        let q = self.quote();
        let kept = |p: &Pair<'_, '_>| p.key == "status" || p.key == "toolUseId";
        let adds_status = content.is_some() && !self.entries.iter().any(|p| p.key == "status");
        let moved: Vec<&Pair<'_, '_>> = self
            .entries
            .iter()
            .enumerate()
            .filter(|&(i, p)| !kept(p) && Some(i) != text && Some(i) != content)
            .map(|(_, p)| p)
            .collect();
        // The blocks, each as one piece of text (a json block also as its
        // pairs, for a layout that explodes it).
        let mut blocks: Vec<String> = Vec::new();
        if let Some(c) = content.filter(|&c| Some(c) != text) {
            let list = unparenthesize(self.entries[c].value);
            let mut cursor = list.walk();
            match list.kind_name() {
                "list" => {
                    blocks.extend(list.named_children(&mut cursor).map(|e| node_text(e, self.piece_src).to_owned()))
                }
                _ => blocks.push(format!("*{}", node_text(list, self.piece_src))),
            }
        }
        if let Some(t) = text {
            let value = self.entries[t].value;
            let written = node_text(value, self.piece_src);
            let shown =
                if evidently_str(value, self.piece_src) { written.to_owned() } else { format!("str({written})") };
            blocks.push(format!("{{{q}text{q}: {shown}}}"));
        }
        let mut reasons = vec![CHANGES.to_owned()];
        if let Some(what) = moved.iter().find_map(|p| not_json_serializable(p.value, self.piece_src)) {
            reasons.push(format!("a value moved into the json block is {what}, which JSON cannot hold"));
        }
        // A content list that gains no block is kept as written.
        let verbatim = content.filter(|_| moved.is_empty() && text.is_none()).map(|c| self.entries[c].text);
        let first_moved = self.entries.iter().position(|p| !kept(p)).unwrap_or(self.entries.len());
        let line = Line::of(self.dict, self.piece_src);
        let render = |layout: Option<&Layout>| {
            let content_pair = match (verbatim, layout) {
                (Some(written), _) => written.to_owned(),
                (None, None) => {
                    let mut all = blocks.clone();
                    if !moved.is_empty() {
                        let inner: Vec<&str> = moved.iter().map(|p| p.text).collect();
                        all.push(format!("{{{q}json{q}: {{{}}}}}", inner.join(", ")));
                    }
                    format!("{q}content{q}: [{}]", all.join(", "))
                }
                (None, Some(l)) => {
                    let at = format!("{}{}", l.inner, l.unit);
                    let mut s = format!("{q}content{q}: [");
                    for b in &blocks {
                        s.push_str(&format!("\n{at}{b},"));
                    }
                    if !moved.is_empty() {
                        let inner: Vec<&str> = moved.iter().map(|p| p.text).collect();
                        let one = format!("{{{q}json{q}: {{{}}}}}", inner.join(", "));
                        let fits = at.len() + one.len() < line.limit && !one.contains('\n');
                        if fits {
                            s.push_str(&format!("\n{at}{one},"));
                        } else {
                            // Hugged: `{"json": {` and `}}` on lines of their
                            // own, a pair on each line between.
                            let deeper = format!("{at}{}", l.unit);
                            s.push_str(&format!("\n{at}{{{q}json{q}: {{"));
                            for p in &moved {
                                s.push_str(&format!("\n{deeper}{},", self.reindented(p, &deeper)));
                            }
                            if l.comma.is_empty() {
                                s.pop();
                            }
                            s.push_str(&format!("\n{at}}}}},"));
                        }
                    }
                    if l.comma.is_empty() {
                        s.pop();
                    }
                    s.push_str(&format!("\n{}]", l.inner));
                    s
                }
            };
            let mut pairs: Vec<String> = Vec::new();
            if adds_status {
                pairs.push(format!("{q}status{q}: {q}success{q}"));
            }
            for (i, p) in self.entries.iter().enumerate() {
                if i == first_moved {
                    pairs.push(content_pair.clone());
                }
                if kept(p) {
                    pairs.push(p.text.to_owned());
                }
            }
            match layout {
                None => format!("{{{}}}", pairs.join(", ")),
                Some(l) => {
                    let mut s = String::from("{");
                    for (i, p) in pairs.iter().enumerate() {
                        let comma = if i + 1 < pairs.len() { "," } else { l.comma };
                        s.push_str(&format!("\n{}{p}{comma}", l.inner));
                    }
                    s.push_str(&format!("\n{}}}", l.outer));
                    s
                }
            }
        };
        let layout = Layout::of(self.dict_text());
        let replacement = match &layout {
            Some(l) => render(Some(l)),
            None => {
                // One line while it fits; exploded (with trailing commas,
                // as a formatter would) when it does not.
                let one = render(None);
                if line.column + one.len() + line.rest <= line.limit {
                    one
                } else {
                    let unit = "    ".to_owned();
                    let l = Layout {
                        inner: format!("{}{unit}", line.indent),
                        outer: line.indent.clone(),
                        unit,
                        comma: ",",
                    };
                    render(Some(&l))
                }
            }
        };
        let mut title = String::from("make it a tool result");
        if adds_status {
            title.push_str(" with status \"success\"");
        }
        match text {
            Some(t) if Some(t) == content => title.push_str(": the string content becomes a text block"),
            Some(t) => title.push_str(&format!(": {} becomes the text", super::quote_key(&self.entries[t].key))),
            None => {}
        }
        if !moved.is_empty() {
            let keys: Vec<String> = moved.iter().map(|p| super::quote_key(&p.key)).collect();
            let sep = if text.is_some() { "," } else { ":" };
            title.push_str(&format!("{sep} {} into a json block", keys.join(", ")));
        }
        let range = self.dict.start_byte() + self.offset..self.dict.end_byte() + self.offset;
        Proposal::Edits {
            edits: vec![Edit { range, replacement }],
            applicability: Applicability::Unsafe,
            unsafe_reasons: reasons,
            title,
        }
    }

    /// The pair `p` as written, its continuation lines moved by as much as
    /// its first line moves to stand at `indent` — unless a string literal
    /// spans lines in it (moving those would change the string).
    fn reindented(&self, p: &Pair<'_, '_>, indent: &str) -> String {
        if !p.text.contains('\n') || spans_lines_in_a_string(p.value) {
            return p.text.to_owned();
        }
        let line_start = self.piece_src[..p.start].rfind('\n').map_or(0, |i| i + 1);
        let old = self.piece_src[line_start..p.start].chars().take_while(|c| *c == ' ' || *c == '\t').count();
        let Some(grow) = indent.len().checked_sub(old) else { return p.text.to_owned() };
        let pad = " ".repeat(grow);
        let mut lines = p.text.split('\n');
        let mut out = lines.next().unwrap_or_default().to_owned();
        for l in lines {
            out.push('\n');
            if !l.trim().is_empty() {
                out.push_str(&pad);
            }
            out.push_str(l);
        }
        out
    }

    fn dict_text(&self) -> &str {
        node_text(self.dict, self.piece_src)
    }
}

/// Whether a string literal inside `node` spans lines.
fn spans_lines_in_a_string(node: Node<'_>) -> bool {
    let mut found = false;
    crate::syntax::for_each_node(node, |n| {
        found = found || (n.kind_name() == "string" && n.start_position().row != n.end_position().row);
    });
    found
}

/// Where the dict stands on its line, for the line length.
struct Line {
    /// The indent of the line the dict starts on.
    indent: String,
    /// The dict's column, in bytes.
    column: usize,
    /// How many bytes of code follow the dict on its last line.
    rest: usize,
    /// The longest line a rewrite writes.
    limit: usize,
}

impl Line {
    fn of(dict: Node<'_>, piece_src: &str) -> Line {
        let start = piece_src[..dict.start_byte()].rfind('\n').map_or(0, |i| i + 1);
        let prefix = &piece_src[start..dict.start_byte()];
        let indent: String = prefix.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
        let after = &piece_src[dict.end_byte()..];
        let after = &after[..after.find('\n').unwrap_or(after.len())];
        // A trailing comment does not count: splitting the code would not
        // make it fit (as formatters measure).
        let code = match crate::suppress::comment_of(after) {
            Some(Some(comment)) => &after[..after.len() - comment.len()],
            _ => after,
        };
        let rest = code.trim_end().len();
        Line { indent, column: prefix.len(), rest, limit: LINE_LENGTH }
    }
}

/// The line length a rewrite keeps to (ruff's and black's default).
const LINE_LENGTH: usize = 88;

/// How a dict written over several lines lays out its pairs.
struct Layout {
    /// The indent of its pairs.
    inner: String,
    /// The indent of its closing brace.
    outer: String,
    /// One level of indent.
    unit: String,
    /// `","` when the dict ends its last pair with a comma.
    comma: &'static str,
}

impl Layout {
    /// The layout of a dict's `text`; `None` when written on one line.
    fn of(text: &str) -> Option<Layout> {
        if !text.contains('\n') {
            return None;
        }
        let lines: Vec<&str> = text.lines().collect();
        let indent = |l: &str| l[..l.len() - l.trim_start().len()].to_owned();
        let inner = lines.iter().skip(1).find(|l| !l.trim().is_empty()).map(|l| indent(l)).unwrap_or_default();
        let outer = lines.last().map(|l| indent(l)).unwrap_or_default();
        let unit = inner.strip_prefix(outer.as_str()).filter(|u| !u.is_empty()).unwrap_or("    ").to_owned();
        let body = text[..text.len() - 1].trim_end();
        let comma = if body.ends_with(',') { "," } else { "" };
        Some(Layout { inner, outer, unit, comma })
    }
}

/// Whether `value` is evidently a `str`: a string literal (not bytes), an
/// f-string, or a call of `str`, `repr` or a string's `format`/`join`.
fn evidently_str(value: Node<'_>, piece_src: &str) -> bool {
    let value = unparenthesize(value);
    match value.kind_name() {
        "string" | "concatenated_string" => !is_bytes(value, piece_src),
        "call" => value.field("function").is_some_and(|f| match f.kind_name() {
            "identifier" => matches!(node_text(f, piece_src), "str" | "repr"),
            "attribute" => {
                let object = f.field("object").map(unparenthesize);
                let name = f.field("attribute").map(|a| node_text(a, piece_src));
                object.is_some_and(|o| matches!(o.kind_name(), "string" | "concatenated_string"))
                    && matches!(name, Some("format" | "join"))
            }
            _ => false,
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each remedy of the first dict display in `src` that lacks
    /// `missing`: the fixed source, or the manual reason.
    fn remedies_of(src: &str, missing: &str) -> Vec<Result<(String, String), String>> {
        let tree = crate::syntax::parse(src);
        let mut dict = None;
        crate::syntax::for_each_node(tree.root_node(), |n| {
            if n.kind_name() == "dictionary" && dict.is_none() {
                dict = Some(n);
            }
        });
        remedies(dict.expect("a dict"), src, 0, missing)
            .into_iter()
            .map(|p| match p {
                Proposal::Edits { edits, applicability, title, .. } => {
                    assert_eq!(applicability, Applicability::Unsafe);
                    let fixed = crate::fix::apply_edits(src, &edits);
                    assert_eq!(crate::apply::syntax_error_count(&fixed), 0, "{fixed}");
                    Ok((fixed, title))
                }
                Proposal::Manual(why) => Err(why),
            })
            .collect()
    }

    #[test]
    fn each_message_key_in_turn_then_none() {
        let src = "r = {'status': 'error', 'error': e, 'msg': 'x', 'n': 3}\n";
        let fixed: Vec<String> = remedies_of(src, "content").into_iter().map(|r| r.unwrap().0).collect();
        assert_eq!(
            fixed,
            [
                "r = {'status': 'error', 'content': [{'text': str(e)}, {'json': {'msg': 'x', 'n': 3}}]}\n",
                "r = {'status': 'error', 'content': [{'text': 'x'}, {'json': {'error': e, 'n': 3}}]}\n",
                "r = {'status': 'error', 'content': [{'json': {'error': e, 'msg': 'x', 'n': 3}}]}\n",
            ]
        );
    }

    #[test]
    fn a_line_too_long_is_exploded_and_a_json_block_too_long_is_hugged() {
        let src = "def f():\n    return {'status': 'error', 'error': 'a long message for the agent', 'elapsed_ms': elapsed}\n";
        let (fixed, _) = remedies_of(src, "content").remove(0).unwrap();
        assert_eq!(
            fixed,
            "def f():\n    return {\n        'status': 'error',\n        'content': [\n            {'text': 'a long message for the agent'},\n            {'json': {'elapsed_ms': elapsed}},\n        ],\n    }\n"
        );
        // A value over several lines moves with its pair; a string over
        // several lines is never re-indented (its text would change).
        let src = "x = {\n    'status': 'success',\n    'rows': [\n        1,\n    ],\n    'doc': '''a\n  b''',\n}\n";
        let (fixed, _) = remedies_of(src, "content").remove(0).unwrap();
        assert_eq!(
            fixed,
            "x = {\n    'status': 'success',\n    'content': [\n        {'json': {\n            'rows': [\n                1,\n            ],\n            'doc': '''a\n  b''',\n        }},\n    ],\n}\n"
        );
    }

    #[test]
    fn a_dict_over_lines_keeps_its_layout_and_comma_habit() {
        let src = "def f():\n    return {\n        \"error\": f\"bad {x}\",\n        \"status\": \"error\",\n    }\n";
        let (fixed, title) = remedies_of(src, "content").remove(0).unwrap();
        assert_eq!(
            fixed,
            "def f():\n    return {\n        \"content\": [\n            {\"text\": f\"bad {x}\"},\n        ],\n        \"status\": \"error\",\n    }\n"
        );
        assert_eq!(title, "make it a tool result: \"error\" becomes the text");
    }

    #[test]
    fn content_without_status_gets_success() {
        let cases = [
            ("r = {'content': 'done'}\n", "r = {'status': 'success', 'content': [{'text': 'done'}]}\n"),
            ("r = {'content': [b], 'n': 1}\n", "r = {'status': 'success', 'content': [b, {'json': {'n': 1}}]}\n"),
            ("r = {'content': [x for x in y]}\n", "r = {'status': 'success', 'content': [x for x in y]}\n"),
        ];
        for (src, want) in cases {
            assert_eq!(remedies_of(src, "status").remove(0).unwrap().0, want, "{src}");
        }
    }

    #[test]
    fn what_is_not_mechanical_is_left() {
        for (src, missing, why) in [
            ("r = {'status': 'error', **extra}\n", "content", "spread"),
            ("r = {'status': 'error', k: v}\n", "content", "not a constant string"),
            ("r = {'status': 'error'}\n", "content", "nothing in the dict"),
            ("r = {'status': 'error',  # why\n 'error': e}\n", "content", "comments"),
            ("r = {'content': blocks}\n", "status", "not a list display"),
            ("r = {'content': []}\n", "status", "empty list"),
            ("r = {'content': 3}\n", "status", "a number"),
        ] {
            let got = remedies_of(src, missing);
            assert!(matches!(&got[..], [Err(w)] if w.contains(why)), "{src}: {got:?}");
        }
    }

    #[test]
    fn texts_that_are_evidently_strings_are_not_wrapped() {
        for (value, text) in [
            ("'x'", "'x'"),
            ("f'{n}'", "f'{n}'"),
            ("'a' 'b'", "'a' 'b'"),
            ("', '.join(xs)", "', '.join(xs)"),
            ("str(e)", "str(e)"),
            ("b'x'", "str(b'x')"),
            ("e", "str(e)"),
        ] {
            let src = format!("r = {{'status': 'error', 'error': {value}}}\n");
            let (fixed, _) = remedies_of(&src, "content").remove(0).unwrap();
            assert_eq!(fixed, format!("r = {{'status': 'error', 'content': [{{'text': {text}}}]}}\n"), "{value}");
        }
    }
}
