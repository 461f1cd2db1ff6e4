//! Layout facts about source text that rewrites must respect: line breaks,
//! indentation, widths, and where comments sit around an entry.

use std::ops::Range;

/// How the file writes things that a rewrite has to write too.
#[derive(Debug, Clone)]
pub struct Style {
    /// The file's line break (`\n`, `\r\n` or `\r`).
    pub newline: &'static str,
    /// One level of indentation (`"    "`, `"\t"`...).
    pub indent_unit: String,
    /// Maximum line width before a collection is exploded.
    pub line_length: usize,
}

/// Width used for a tab when measuring lines (ruff's default indent width).
const TAB_WIDTH: usize = 4;

impl Style {
    /// Reads the newline and indentation habits of `src`.
    pub fn detect(src: &str, line_length: usize) -> Self {
        let newline = match memchr::memchr2(b'\n', b'\r', src.as_bytes()) {
            Some(i) if src.as_bytes()[i] == b'\r' && src.as_bytes().get(i + 1) == Some(&b'\n') => "\r\n",
            Some(i) if src.as_bytes()[i] == b'\r' => "\r",
            _ => "\n",
        };
        Style { newline, indent_unit: detect_indent_unit(src), line_length }
    }
}

/// One level of the file's indentation: what the first block's body adds
/// to its header's indentation, read from the lexer's logical lines (so a
/// docstring line ending in `:` before an indented one is no block); four
/// spaces if there is none. Where the lexer cannot vouch for the file,
/// [`indent_unit_by_lines`] guesses from its raw lines.
fn detect_indent_unit(src: &str) -> String {
    let Some(layout) = crate::syntax::lexer::layout(src.as_bytes()) else {
        return indent_unit_by_lines(src);
    };
    let indentation = |l: &crate::syntax::lexer::LogicalLine| &src[l.start - l.indent..l.start];
    // In valid Python a logical line is indented deeper than the one
    // before it only as the first statement of a block.
    for pair in layout.lines.windows(2) {
        let (header, body) = (indentation(&pair[0]), indentation(&pair[1]));
        let Some(added) = body.strip_prefix(header).filter(|a| !a.is_empty()) else { continue };
        if added.starts_with('\t') {
            return "\t".to_owned();
        }
        if added.len() <= 8 && added.bytes().all(|b| b == b' ') {
            return added.to_owned();
        }
    }
    "    ".to_owned()
}

/// The indentation of the first indented line that follows a line ending in
/// `:` (a block opener); four spaces if there is none.
fn indent_unit_by_lines(src: &str) -> String {
    let mut previous_opens_block = false;
    for line in src.lines() {
        let trimmed = line.trim_start_matches([' ', '\t']);
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = &line[..line.len() - trimmed.len()];
        if previous_opens_block && !indent.is_empty() {
            if indent.starts_with('\t') {
                return "\t".to_owned();
            }
            if indent.len() <= 8 && indent.bytes().all(|b| b == b' ') {
                return indent.to_owned();
            }
        }
        previous_opens_block = trimmed.trim_end().ends_with(':');
    }
    "    ".to_owned()
}

/// A source with its line index: line starts and ends in O(log n), so that
/// many dicts on one long line cost nothing quadratic.
pub struct Lines<'s> {
    pub src: &'s str,
    index: &'s crate::syntax::LineIndex,
}

impl<'s> Lines<'s> {
    pub fn new(src: &'s str, index: &'s crate::syntax::LineIndex) -> Self {
        Lines { src, index }
    }

    /// Byte offset where the line holding `pos` starts.
    pub fn line_start(&self, pos: usize) -> usize {
        self.index.line_start(self.index.line_of(pos))
    }

    /// Byte offset of the line break ending the line holding `pos`.
    pub fn line_end(&self, pos: usize) -> usize {
        let line = self.index.line_of(pos);
        match self.index.line_start_checked(line + 1) {
            Some(next) if self.src.as_bytes()[..next].ends_with(b"\r\n") => next - 2,
            Some(next) => next - 1,
            None => self.src.len(),
        }
    }

    /// The leading whitespace of the line holding `pos`.
    pub fn line_indent(&self, pos: usize) -> &'s str {
        let rest = &self.src[self.line_start(pos)..];
        &rest[..rest.len() - rest.trim_start_matches([' ', '\t', '\x0c']).len()]
    }
}

/// Byte offset of the line break ending the line holding `pos` (or the end).
pub fn line_end(src: &str, pos: usize) -> usize {
    memchr::memchr2(b'\n', b'\r', &src.as_bytes()[pos..]).map_or(src.len(), |i| pos + i)
}

/// Length of the line break at `pos` (0 at the end of the text).
pub fn newline_len(src: &str, pos: usize) -> usize {
    match src.as_bytes().get(pos) {
        Some(b'\r') if src.as_bytes().get(pos + 1) == Some(&b'\n') => 2,
        Some(b'\r' | b'\n') => 1,
        _ => 0,
    }
}

/// Whether only whitespace stands between the line start and `pos`
/// (looking back over blanks only: cheap on long lines).
pub fn starts_line(src: &str, pos: usize) -> bool {
    let before = skip_blanks_back(src, pos);
    before == 0 || matches!(src.as_bytes()[before - 1], b'\n' | b'\r')
}

/// Skips spaces and tabs forward from `pos`.
pub fn skip_blanks(src: &str, mut pos: usize) -> usize {
    while matches!(src.as_bytes().get(pos), Some(b' ' | b'\t' | b'\x0c')) {
        pos += 1;
    }
    pos
}

/// Skips spaces and tabs backward from `pos`.
pub fn skip_blanks_back(src: &str, mut pos: usize) -> usize {
    while pos > 0 && matches!(src.as_bytes()[pos - 1], b' ' | b'\t' | b'\x0c') {
        pos -= 1;
    }
    pos
}

/// The `# ...` comment that ends the line after `pos`, if only blanks stand
/// between `pos` and it.
pub fn trailing_comment(src: &str, pos: usize) -> Option<Range<usize>> {
    let at = skip_blanks(src, pos);
    (src.as_bytes().get(at) == Some(&b'#')).then(|| at..line_end(src, at))
}

/// Whether only blanks (and perhaps a comment) follow `pos` on its line.
pub fn ends_line(src: &str, pos: usize) -> bool {
    let at = skip_blanks(src, pos);
    matches!(src.as_bytes().get(at), None | Some(b'\n' | b'\r' | b'#'))
}

/// The own-line comments directly above the line holding `pos` (no blank
/// line between), as the range from the first comment line's start to the
/// start of `pos`'s line. Stops at `floor`.
pub fn comments_above(lines: &Lines<'_>, pos: usize, floor: usize) -> Option<Range<usize>> {
    let src = lines.src;
    let own_line = lines.line_start(pos);
    let mut first = own_line;
    while first > floor {
        let prev_end = first - newline_len_before(src, first);
        let prev_start = lines.line_start(prev_end);
        if prev_start < floor {
            break;
        }
        if !src[prev_start..prev_end].trim_start().starts_with('#') {
            break;
        }
        first = prev_start;
    }
    (first < own_line).then_some(first..own_line)
}

fn newline_len_before(src: &str, pos: usize) -> usize {
    let b = src.as_bytes();
    match (pos.checked_sub(2).map(|i| &b[i..pos]), pos.checked_sub(1).map(|i| b[i])) {
        (Some(b"\r\n"), _) => 2,
        (_, Some(b'\n' | b'\r')) => 1,
        _ => 0,
    }
}

/// Display width of a line, as terminals and ruff count it: wide
/// characters count two, a tab four.
pub fn width(line: &str) -> usize {
    line.chars()
        .map(|c| if c == '\t' { TAB_WIDTH } else { unicode_width::UnicodeWidthChar::width(c).unwrap_or(0) })
        .sum()
}

/// Whether `range` of `src` spans more than one line.
pub fn is_multiline(src: &str, range: &Range<usize>) -> bool {
    memchr::memchr2(b'\n', b'\r', &src.as_bytes()[range.clone()]).is_some()
}

/// Re-indents the continuation lines of `text` (which starts at `start` in
/// `src`) from `old_base` to `new_base`. Lines that begin inside a string
/// literal (`in_string` says which offsets do) are kept byte for byte.
pub fn reindent(
    src: &str,
    range: &Range<usize>,
    old_base: &str,
    new_base: &str,
    in_string: impl Fn(usize) -> bool,
) -> String {
    let text = &src[range.clone()];
    let mut out = String::with_capacity(text.len());
    let mut pos = range.start;
    let mut first = true;
    while pos < range.end {
        // Only up to the range's end: the entry may sit on a very long line.
        let end = memchr::memchr2(b'\n', b'\r', &src.as_bytes()[pos..range.end]).map_or(range.end, |i| pos + i);
        let nl_end = (end + newline_len(src, end)).min(range.end);
        let line = &src[pos..end];
        if first || in_string(pos) || !line.starts_with(old_base) {
            out.push_str(line);
        } else {
            out.push_str(new_base);
            out.push_str(&line[old_base.len()..]);
        }
        out.push_str(&src[end..nl_end]);
        first = false;
        pos = nl_end;
        if end == nl_end {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_newlines_and_indentation() {
        let s = Style::detect("def f():\r\n\treturn 1\r\n", 88);
        assert_eq!((s.newline, s.indent_unit.as_str()), ("\r\n", "\t"));
        let s = Style::detect("x = [\n 1]\nif x:\n  y = 1\n", 88);
        assert_eq!((s.newline, s.indent_unit.as_str()), ("\n", "  "));
        // A docstring line ending in `:` opens no block; a nested first
        // block counts what its body adds.
        let s = Style::detect("\"\"\"Actions:\n  list, show\n\"\"\"\nclass A:\n    def f(self):\n        pass\n", 88);
        assert_eq!(s.indent_unit, "    ");
        let s = Style::detect("if a:\n\tif b:\n\t\tpass\n", 88);
        assert_eq!(s.indent_unit, "\t");
    }

    #[test]
    fn finds_comments_around_entries() {
        let src = "{\n    'a': 1,\n    # one\n    # two\n    'b': 2,  # tail\n}";
        let b = src.find("'b'").unwrap();
        let index = crate::syntax::LineIndex::new(src);
        let above = comments_above(&Lines::new(src, &index), b, src.find('{').unwrap() + 1).unwrap();
        assert_eq!(&src[above], "    # one\n    # two\n");
        let after = src.find("2,").unwrap() + 2;
        assert_eq!(&src[trailing_comment(src, after).unwrap()], "# tail");
        assert!(ends_line(src, after));
    }

    #[test]
    fn reindents_continuation_lines_only() {
        let src = "    'a': [\n        1,\n    ]";
        let out = reindent(src, &(4..src.len()), "    ", "\t\t", |_| false);
        assert_eq!(out, "'a': [\n\t\t    1,\n\t\t]");
    }
}
