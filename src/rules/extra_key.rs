//! TS001 `extra-top-level-key`: a constant string key other than `status`,
//! `content` and `toolUseId` (and the project's `allowed-keys`) at the top
//! level of a tool result. The runtime drops it; the fix moves it into a
//! `{"json": {...}}` content block.

use super::Rule;
use crate::diagnostics::{Code, Finding};

pub const RULE: Rule = Rule {
    code: Code::ExtraKey,
    name: "extra-top-level-key",
    description: "A tool result has a top-level key other than status, content and toolUseId; the runtime drops it.",
    message,
};

fn message(f: &Finding) -> String {
    format!("extra top-level key {} in tool result — the runtime drops it", quote_key(f.key.as_deref().unwrap_or("")))
}

/// Renders a key the way Python's `repr` would, but with double quotes.
fn quote_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 2);
    out.push('"');
    for c in key.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_quoted_readably() {
        assert_eq!(quote_key("frames"), "\"frames\"");
        assert_eq!(quote_key("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
    }
}
