//! Text augmentation: mentioning moved telemetry in the result's text block,
//! because a person reading the transcript sees the text first. Done only
//! where it is provably safe: the text is a string literal, and each value
//! mentioned is cheap, side-effect free, not already shown, and can be
//! written into an f-string the same way on every Python from 3.8 on.
//!
//! The form is stable (part of the output contract): the original text stays
//! the prefix, followed by one space and `(key=value, key=value)`, where a
//! literal value is written as it reads and any other value is interpolated
//! as `{expression}`, formatted by `str()`.

use std::ops::Range;

use tree_sitter::Node;

use super::Edit;
use super::safety::ExprFacts;
use crate::syntax::literal::{self, LiteralKind};
use crate::syntax::tree::{FieldChild, KindName};
use crate::syntax::tree::{constant_str, node_text, unparenthesize};

/// A moved entry offered for mention.
pub struct Candidate<'t> {
    /// The decoded key.
    pub key: &'t str,
    pub value: Node<'t>,
    /// Why the value cannot be shown whatever it is: the json block may end
    /// up holding another value for the key.
    pub overridden: Option<&'static str>,
}

/// The edit that augments the text, and the keys it mentions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Augmentation {
    pub edit: Edit,
    pub mentioned: Vec<String>,
    /// Moved entries not mentioned, each with why.
    pub skipped: Vec<String>,
    /// The whole text expression before and after the edit.
    pub before: String,
    pub after: String,
}

/// One string token of the text literal.
struct Part<'s> {
    range: Range<usize>,
    token: literal::LiteralToken<'s>,
}

/// Value kinds that are cheap and side-effect free to evaluate twice.
const LITERAL_KINDS: [&str; 5] = ["integer", "float", "true", "false", "none"];

/// The value of `{"text": <value>}` if `element` is such a block.
pub fn text_block_value<'t>(element: Node<'t>, piece_src: &str) -> Option<Node<'t>> {
    if element.kind_name() != "dictionary" {
        return None;
    }
    let mut cursor = element.walk();
    let entries: Vec<Node<'t>> = element.named_children(&mut cursor).filter(|c| c.kind_name() != "comment").collect();
    let [pair] = entries.as_slice() else { return None };
    let key = pair.field("key").filter(|_| pair.kind_name() == "pair")?;
    (constant_str(key, piece_src).as_deref() == Some("text")).then(|| pair.field("value")).flatten()
}

/// Plans the augmentation of the text literal `text` (the value of the
/// first text block) with `candidates`. `walrus_names` are names bound by
/// walrus expressions anywhere in the dict (a mention must not read them).
/// Returns why not, when it does not augment.
pub fn plan(
    src: &str,
    offset: usize,
    text: Node<'_>,
    candidates: &[Candidate<'_>],
    walrus_names: &std::collections::BTreeSet<String>,
) -> Result<Augmentation, String> {
    let piece_src = &src[offset..];
    let text = unparenthesize(text);
    let nodes: Vec<Node<'_>> = match text.kind_name() {
        "string" => vec![text],
        "concatenated_string" => {
            let mut cursor = text.walk();
            text.named_children(&mut cursor).filter(|c| c.kind_name() == "string").collect()
        }
        _ => return Err(format!("the text is `{}`, not a string literal", short(node_text(text, piece_src)))),
    };
    let mut parts = Vec::new();
    for node in &nodes {
        let range = node.start_byte() + offset..node.end_byte() + offset;
        let token = literal::split_token(&src[range.clone()]).ok_or("the text literal could not be read")?;
        if token.kind == LiteralKind::Bytes {
            return Err("the text is a bytes literal".into());
        }
        parts.push(Part { range, token });
    }
    let last = parts.last().expect("a string has at least one part");
    // What the text already shows: literal characters and interpolations.
    let mut shown_text = String::new();
    let mut shown_exprs = Vec::new();
    for node in &nodes {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind_name() {
                "interpolation" => {
                    if let Some(e) = child.field("expression") {
                        shown_exprs.push(squash(node_text(e, piece_src)));
                    }
                }
                "string_content" => shown_text.push_str(node_text(child, piece_src)),
                _ => {}
            }
        }
    }
    if shown_text.trim_end_matches([' ', '\t']).ends_with(['\n', '\r']) || shown_text.ends_with("\\n") {
        return Err("the text ends with a line break".into());
    }
    let mut mentions = Vec::new();
    let mut skipped = Vec::new();
    for c in candidates {
        match mention(c, piece_src, &shown_text, &shown_exprs, walrus_names) {
            Ok(m) => mentions.push((c.key.to_owned(), m)),
            Err(why) => skipped.push(format!("\"{}\" {why}", c.key)),
        }
    }
    if mentions.is_empty() {
        return Err(if skipped.is_empty() {
            "nothing moved can be shown in text".into()
        } else {
            format!("no moved value can be shown: {}", skipped.join("; "))
        });
    }
    let needs_f = mentions.iter().any(|(_, m)| matches!(m, Mention::Interpolated(_)));
    let is_f = last.token.kind == LiteralKind::Formatted;
    let items: Vec<String> = mentions
        .iter()
        .map(|(key, m)| match m {
            Mention::Literal(text) => format!("{key}={text}"),
            Mention::Interpolated(expr) => format!("{key}={{{expr}}}"),
        })
        .collect();
    let separator = if shown_text.is_empty() && shown_exprs.is_empty() { "" } else { " " };
    let suffix = format!("{separator}({})", items.join(", "));
    let edit = if needs_f && !is_f {
        // The last part becomes an f-string: its braces must be escaped and
        // `u` (which cannot combine with `f`) dropped.
        let prefix: String = last.token.prefix.chars().filter(|c| !matches!(c, 'u' | 'U')).collect();
        let body = escape_braces(last.token.body, last.token.raw);
        let q = last.token.quote;
        Edit { range: last.range.clone(), replacement: format!("{prefix}f{q}{body}{suffix}{q}") }
    } else {
        let at = last.range.end - last.token.quote.len();
        Edit { range: at..at, replacement: suffix }
    };
    let whole = text.start_byte() + offset..text.end_byte() + offset;
    let before = src[whole.clone()].to_owned();
    let local = Edit {
        range: edit.range.start - whole.start..edit.range.end - whole.start,
        replacement: edit.replacement.clone(),
    };
    let after = super::apply_edits(&before, &[local]);
    Ok(Augmentation { edit, mentioned: mentions.into_iter().map(|(k, _)| k).collect(), skipped, before, after })
}

enum Mention {
    /// Written as it reads.
    Literal(String),
    /// Interpolated as `{expr}`.
    Interpolated(String),
}

/// How to mention one candidate, or why not.
fn mention(
    c: &Candidate<'_>,
    piece_src: &str,
    shown_text: &str,
    shown_exprs: &[String],
    walrus_names: &std::collections::BTreeSet<String>,
) -> Result<Mention, &'static str> {
    if let Some(why) = c.overridden {
        return Err(why);
    }
    if !c.key.chars().all(|ch| ch.is_alphanumeric() || matches!(ch, '_' | '-' | '.' | ' ')) {
        return Err("has a key that cannot be written plainly");
    }
    let value = unparenthesize(c.value);
    let text = node_text(value, piece_src);
    if text.contains(['\n', '\r']) {
        return Err("spans lines");
    }
    if LITERAL_KINDS.contains(&value.kind_name()) {
        if !text.bytes().all(|b| b.is_ascii_digit() || b == b'.') && !matches!(text, "True" | "False" | "None") {
            return Err("is a number written in a form `str()` would change");
        }
        return if shown_text.contains(text) {
            Err("is already in the text")
        } else {
            Ok(Mention::Literal(text.to_owned()))
        };
    }
    if value.kind_name() == "string" {
        let decoded = literal::str_constant(text).ok_or("is not a plain string")?;
        if decoded.chars().any(|ch| ch.is_control() || matches!(ch, '{' | '}' | '\\' | '\'' | '"')) {
            return Err("is a string that cannot be written plainly");
        }
        return if shown_text.contains(&decoded) {
            Err("is already in the text")
        } else {
            Ok(Mention::Literal(decoded))
        };
    }
    if value.kind_name() != "identifier" {
        return Err(match value.kind_name() {
            "list"
            | "dictionary"
            | "set"
            | "tuple"
            | "list_comprehension"
            | "dictionary_comprehension"
            | "set_comprehension"
            | "generator_expression" => "may be large",
            "call" => "is a call",
            // A property getter or `__getattr__` would run a second time.
            "attribute" => "is an attribute, whose lookup may run code a second time",
            // So would a `__getitem__`.
            "subscript" => "is a subscript, whose lookup may run code a second time",
            _ => "is not a name or a literal",
        });
    }
    let facts = ExprFacts::of(value, piece_src);
    if facts.reads.iter().any(|n| walrus_names.contains(n)) {
        return Err("reads a name a walrus binds in the same dict");
    }
    let expr = squash(text);
    if shown_exprs.contains(&expr) {
        return Err("is already interpolated in the text");
    }
    Ok(Mention::Interpolated(expr))
}

/// A plain literal body made ready to be an f-string body: braces doubled,
/// except those of `\N{...}` escapes (which an f-string reads the same way).
fn escape_braces(body: &str, raw: bool) -> String {
    let mut out = String::with_capacity(body.len() + 4);
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if !raw => {
                out.push(c);
                match chars.next() {
                    Some('N') if chars.peek() == Some(&'{') => {
                        out.push('N');
                        for inner in chars.by_ref() {
                            out.push(inner);
                            if inner == '}' {
                                break;
                            }
                        }
                    }
                    Some(next) => out.push(next),
                    None => {}
                }
            }
            '{' => out.push_str("{{"),
            '}' => out.push_str("}}"),
            _ => out.push(c),
        }
    }
    out
}

/// An expression with its insignificant spaces removed, for comparisons.
fn squash(text: &str) -> String {
    text.split_whitespace().collect()
}

fn short(text: &str) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > 40 { format!("{}…", one.chars().take(39).collect::<String>()) } else { one }
}

#[cfg(test)]
mod tests {
    use super::escape_braces;

    #[test]
    fn braces_are_doubled_but_named_escapes_kept() {
        assert_eq!(escape_braces(r"a {b} \N{DIGIT ZERO} \\{c}", false), r"a {{b}} \N{DIGIT ZERO} \\{{c}}");
        assert_eq!(escape_braces(r"\N{x}", true), r"\N{{x}}");
    }
}
