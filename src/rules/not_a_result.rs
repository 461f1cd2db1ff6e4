//! TS005 `not-a-tool-result`: a Strands tool returns a dict display with
//! `"status"` but no `"content"` (or the other way round). The decorator
//! passes on only dicts with both; it serializes anything else into one
//! *success* text block, so an error is reported to the agent as a
//! success. Detection follows returns through names and helper calls
//! across the project ([`crate::semantic::project`]); see `docs/rules.md`.

use super::Rule;
use crate::diagnostics::{Code, Finding};

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
