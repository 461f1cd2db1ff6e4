//! Unified diffs (made with `similar`) with `a/` and `b/` headers that
//! `git apply` and `patch -p1` accept, coloured only when asked.

use std::path::Path;

use similar::{ChangeTag, TextDiff};

use crate::report::Palette;

/// The path as it goes into a diff header: as given, minus a leading `./`;
/// an absolute path is made relative to the working directory when it lies
/// below it (patches apply from there), else loses its leading `/`.
fn header_path(path: &Path) -> String {
    let relative = if path.is_absolute() {
        std::env::current_dir().ok().and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
    } else {
        None
    };
    let shown = relative.as_deref().unwrap_or(path).display().to_string();
    let shown = shown.strip_prefix("./").unwrap_or(&shown);
    shown.trim_start_matches('/').to_owned()
}

/// A unified diff of `old` → `new` for `path`; empty when they are equal.
pub fn unified(path: &Path, old: &str, new: &str, context: usize, palette: Palette) -> String {
    if old == new {
        return String::new();
    }
    let diff = TextDiff::from_lines(old, new);
    let name = header_path(path);
    let mut out = String::new();
    out.push_str(&palette.bold(&format!("--- a/{name}")));
    out.push('\n');
    out.push_str(&palette.bold(&format!("+++ b/{name}")));
    out.push('\n');
    for hunk in diff.unified_diff().context_radius(context).iter_hunks() {
        out.push_str(&palette.cyan(&hunk.header().to_string()));
        out.push('\n');
        for change in hunk.iter_changes() {
            let (sign, paint): (&str, fn(Palette, &str) -> String) = match change.tag() {
                ChangeTag::Delete => ("-", Palette::red),
                ChangeTag::Insert => ("+", Palette::green),
                ChangeTag::Equal => (" ", |_, t| t.to_owned()),
            };
            let value = change.value();
            let (body, ending) = split_ending(value);
            out.push_str(&paint(palette, &format!("{sign}{body}")));
            out.push_str(if ending.is_empty() { "\n" } else { ending });
            if change.missing_newline() {
                out.push_str("\\ No newline at end of file\n");
            }
        }
    }
    out
}

/// Splits a line into its text and its line break.
fn split_ending(line: &str) -> (&str, &str) {
    let body = line.trim_end_matches(['\n', '\r']);
    (body, &line[body.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_has_git_headers_and_no_newline_marker() {
        let d = unified(Path::new("./pkg/a.py"), "a\nb", "a\nc", 3, Palette { enabled: false });
        assert_eq!(
            d,
            "--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
        assert!(unified(Path::new("a.py"), "x", "x", 3, Palette { enabled: false }).is_empty());
    }

    #[test]
    fn crlf_lines_keep_their_endings() {
        let d = unified(Path::new("a.py"), "a\r\nb\r\n", "a\r\nc\r\n", 3, Palette { enabled: false });
        assert!(d.contains("-b\r\n+c\r\n"), "{d:?}");
    }
}
