//! TS100 `unused-suppression`: a toolshape suppression comment (or a
//! `# noqa: ...` naming TS codes) that silences nothing, or codes in it that
//! silence nothing. Reported only with `--report-unused-ignores`; real
//! comments only (a whole-file parse, made only when the text could hold one).

use foldhash::{HashSet, HashSetExt};

use super::Rule;
use crate::diagnostics::{Code, Finding, Origin, Span};
use crate::suppress::{Suppression, in_line_tail, line_suppression};
use crate::syntax::tree::KindName;
use crate::syntax::{self, LineIndex};

pub const RULE: Rule = Rule {
    code: Code::UnusedIgnore,
    name: "unused-suppression",
    description: "A toolshape suppression comment silences nothing (--report-unused-ignores).",
    message,
};

fn message(f: &Finding) -> String {
    f.detail.clone().unwrap_or_default()
}

/// What a comment claims for toolshape, if anything: `# toolshape: ignore`
/// (everything), `# toolshape: ignore[...]`, or `# noqa: ...` naming
/// toolshape codes (each code once); and the codes one of its directives
/// names more than once. A bare `# noqa` is left alone: it may be another
/// tool's. (`# toolshape: ignore[TS001]  # noqa: TS001` names TS001 in two
/// directives, as a file linted by two tools may: not a duplicate.)
fn claim(comment: &str) -> Option<(Suppression, Vec<Code>)> {
    let mut claimed = Suppression::Nothing;
    let mut twice: Vec<Code> = Vec::new();
    for part in comment.split('#').map(str::trim_start) {
        let lower = part.to_ascii_lowercase();
        let noqa_with_codes = lower.strip_prefix("noqa").is_some_and(|rest| rest.trim_start().starts_with(':'));
        if lower.starts_with("toolshape:") || noqa_with_codes {
            let directive = in_line_tail(&format!("#{part}"));
            if let Suppression::Codes(codes) = &directive {
                twice.extend(codes.iter().enumerate().filter(|(i, c)| codes[..*i].contains(c)).map(|(_, c)| *c));
            }
            claimed = claimed.union(directive);
        }
    }
    twice.sort_unstable_by_key(|c| c.as_str());
    twice.dedup();
    match claimed {
        Suppression::Nothing => None,
        Suppression::Codes(codes) if codes.is_empty() => None,
        Suppression::Codes(mut codes) => {
            codes.sort_unstable_by_key(|c| c.as_str());
            codes.dedup();
            Some((Suppression::Codes(codes), twice))
        }
        claimed => Some((claimed, twice)),
    }
}

/// `code X` or `codes X, Y`, and the verb after it in the singular or
/// plural.
fn codes_phrase(codes: &[&str], singular: &str, plural: &str) -> String {
    match codes {
        [one] => format!("code {one} {singular}"),
        _ => format!("codes {} {plural}", codes.join(", ")),
    }
}

/// Whether some `#` in `src` starts a line tail that could hold a
/// toolshape claim: `toolshape:`, or `noqa` with a `TS` code after it (any
/// case). Exact as a filter (a claim always passes), and cheap: most files
/// never get parsed for [`unused`].
fn may_claim(src: &[u8]) -> bool {
    let contains = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle));
    memchr::memchr_iter(b'#', src).any(|at| {
        let rest = &src[at..];
        let tail = &rest[..memchr::memchr2(b'\n', b'\r', rest).unwrap_or(rest.len())];
        contains(tail, b"toolshape:")
            || (contains(tail, b"noqa")
                && tail.windows(3).any(|w| w[..2].eq_ignore_ascii_case(b"ts") && w[2].is_ascii_digit()))
    })
}

/// Findings ([`Code::UnusedIgnore`]) for toolshape suppression comments in
/// `src` that silence nothing, or name codes that silence nothing.
/// `unsuppressed` gives the file's findings of every code with its
/// comments read as absent ([`crate::contract::Rules::ignoring_suppressions`]): a comment
/// silences the ones on its line that it covers, as each rule reads it
/// (on the line where the finding starts, else on its dict's, call's or
/// display's first line). Reads real comments only (a whole-file parse),
/// and only when the text could hold one.
pub fn unused_suppressions(src: &str, unsuppressed: impl FnOnce() -> Vec<Finding>) -> Vec<Finding> {
    if !may_claim(src.as_bytes()) {
        return Vec::new();
    }
    let tree = syntax::parse(src);
    let index = LineIndex::new(src);
    // (line, code) pairs some suppression on that line silences.
    let mut used: HashSet<(usize, Code)> = HashSet::new();
    for finding in unsuppressed() {
        let code = finding.code;
        if let Some(at) =
            [finding.entry.start, finding.dict.start].into_iter().find(|&at| line_suppression(src, at).covers(code))
        {
            used.insert((index.line_of(at), code));
        }
    }
    let mut findings = Vec::new();
    syntax::for_each_node(tree.root_node(), |node| {
        if node.kind_name() != "comment" {
            return;
        }
        let text = &src[node.byte_range()];
        let Some((claimed, twice)) = claim(text) else { return };
        let line = index.line_of(node.start_byte());
        let what = match claimed {
            Suppression::Everything if !Code::ALL.iter().any(|&c| used.contains(&(line, c))) => {
                format!("suppression `{}` silences nothing", text.trim())
            }
            Suppression::Codes(listed) => {
                // A code a directive names more than once: the others are
                // redundant (ruff's RUF100 says "duplicated").
                let idle: Vec<&str> =
                    listed.iter().filter(|&&c| !used.contains(&(line, c))).map(|c| c.as_str()).collect();
                let twice: Vec<&str> = twice.iter().map(|c| c.as_str()).filter(|c| !idle.contains(c)).collect();
                let comment = text.trim();
                let idle_phrase =
                    || codes_phrase(&idle, &format!("in `{comment}` silences"), &format!("in `{comment}` silence"));
                match (idle.len(), twice.len()) {
                    (0, 0) => return,
                    (n, _) if n == listed.len() => format!("suppression `{comment}` silences nothing"),
                    (0, _) => {
                        format!("{} more than once in `{comment}`", codes_phrase(&twice, "is listed", "are listed"))
                    }
                    (_, 0) => format!("{} nothing", idle_phrase()),
                    _ => format!(
                        "{} nothing, and {} more than once",
                        idle_phrase(),
                        codes_phrase(&twice, "is listed", "are listed")
                    ),
                }
            }
            _ => return,
        };
        let range = node.byte_range();
        let span = Span::new(&index, src, &range);
        findings.push(Finding {
            code: Code::UnusedIgnore,
            key: None,
            spread: None,
            detail: Some(what),
            entry: range.clone(),
            span,
            dict: range,
            dict_span: span,
            fixable: None,
            origin: Origin::Literal,
            expression: None,
            builder: None,
            reads: Vec::new(),
        });
    });
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckOptions, check_source};
    use crate::contract::Rules;
    use crate::syntax::ParseScope;

    fn unused_under(src: &str, rules: &Rules) -> Vec<(usize, String)> {
        let options = CheckOptions { scope: ParseScope::WholeFile, report_unused_ignores: true };
        check_source(src, &options, rules)
            .into_iter()
            .filter(|f| f.code == Code::UnusedIgnore)
            .map(|f| (f.span.start.line, f.message()))
            .collect()
    }

    fn unused_in(src: &str) -> Vec<(usize, String)> {
        unused_under(src, &Rules::moves_only())
    }

    #[test]
    fn unused_suppressions_are_found() {
        let src = "a = {'status': 1, 'content': [], 'x': 1}  # toolshape: ignore[TS001]\n\
                   b = {'status': 1, 'content': [], 'x': 1}  # toolshape: ignore[TS001, TS002]\n\
                   c = {'status': 1, 'content': []}  # toolshape: ignore\n\
                   d = 1  # noqa: TS002\n\
                   e = 1  # noqa\n\
                   f = 1  # noqa: E501\n\
                   g = '# toolshape: ignore'\n\
                   h = {\n    'status': 1,  # toolshape: ignore\n    'content': [],\n    **y,  # noqa: TS002\n}\n";
        assert_eq!(
            unused_in(src),
            vec![
                (2, "code TS002 in `# toolshape: ignore[TS001, TS002]` silences nothing".to_owned()),
                (3, "suppression `# toolshape: ignore` silences nothing".to_owned()),
                (4, "suppression `# noqa: TS002` silences nothing".to_owned()),
                (9, "suppression `# toolshape: ignore` silences nothing".to_owned()),
            ]
        );
    }

    #[test]
    fn the_prefilter_lets_every_claim_through() {
        for claim in ["# toolshape: ignore", "#TOOLSHAPE: ignore[ts001]", "# NoQa: Ts002", "# noqa: E501, TS001"] {
            assert!(may_claim(format!("x = 1  {claim}\n").as_bytes()), "{claim}");
        }
        for other in ["# noqa", "# noqa: E501", "x = 'toolshape'  # a note", "# TS001 is a code\n# noqa"] {
            assert!(!may_claim(format!("x = 1  {other}\n").as_bytes()), "{other}");
        }
    }

    #[test]
    fn a_dict_line_suppression_is_used_by_entries_below() {
        let src = "r = {  # toolshape: ignore[TS001]\n    'status': 1,\n    'content': [],\n    'x': 1,\n}\n";
        assert!(unused_in(src).is_empty());
        let disabled = Rules::new(None, &[Code::ExtraKey], Vec::new());
        assert_eq!(unused_under(src, &disabled).len(), 1, "a rule that is off uses no suppression");
    }
}
