//! TS001 `extra-top-level-key`: a constant string key other than `status`,
//! `content` and `toolUseId` (and the project's `allowed-keys`) at the top
//! level of a tool result. The runtime drops it; the fix moves it into a
//! `{"json": {...}}` content block.

use super::{Rule, quote_key};
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_quoted_readably() {
        assert_eq!(quote_key("frames"), "\"frames\"");
        assert_eq!(quote_key("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
    }
}
