//! TS003 `builder-call-extra-keyword`: a keyword passed to a result builder
//! (a function whose `**kwargs` flow into the top level of the tool result it
//! returns) becomes a top-level key the runtime drops. Detection is the
//! project pass's ([`crate::semantic::project`]); see `docs/rules.md`.

use super::Rule;
use crate::diagnostics::{Code, Finding};

pub const RULE: Rule = Rule {
    code: Code::BuilderCall,
    name: "builder-call-extra-keyword",
    description: "A keyword passed to a result builder becomes a top-level key of the tool result it builds; the runtime drops it.",
    message,
};

fn message(f: &Finding) -> String {
    let builder = f.builder.as_ref().map_or("?", |b| b.name.as_str());
    match (&f.key, &f.spread, &f.expression) {
        (Some(key), ..) if f.detail.is_some() => format!(
            "key {} passed to `{builder}()` as `{}` becomes a top-level key of the tool result it builds — the runtime drops it",
            super::quote_key(key),
            f.detail.as_deref().unwrap_or_default()
        ),
        (Some(key), ..) => format!(
            "extra keyword {} becomes a top-level key of the tool result built by `{builder}()` — the runtime drops it",
            super::quote_key(key)
        ),
        (None, None, Some(expression)) => format!(
            "key `{}` passed to `{builder}()` becomes a top-level key of the tool result it builds — the runtime drops it",
            super::one_line(expression)
        ),
        (None, spread, _) => format!(
            "`{}` passed to `{builder}()` can inject top-level keys of the tool result it builds — the runtime drops them",
            spread.as_deref().map(super::one_line).unwrap_or_default()
        ),
    }
}
