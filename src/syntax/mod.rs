//! Parsing: tree-sitter-python behind a per-thread parser, the lexical
//! prefilter that decides which parts of a file need parsing at all, Python
//! string-literal semantics, and positions (lines and character columns, with
//! Python's idea of a line break).

pub mod legacy;
pub mod lexer;
pub mod literal;
mod memo;
pub mod outline;
pub mod plain;
pub mod search;
pub mod tree;

use std::cell::RefCell;
use std::ops::Range;

use tree_sitter::{Node, Parser, Tree};

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new(new_parser());
}

fn new_parser() -> Parser {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .expect("tree-sitter-python is compatible with the linked tree-sitter");
    parser
}

/// Parses `text` with this thread's parser (or gives the tree a parse of
/// the same text gave before, see `memo`).
pub fn parse(text: &str) -> Tree {
    memo::tree(text, &[], false, || parse_uncached(text))
}

/// [`parse`] for a piece of a file parsed alone (a display): kept apart
/// from whole files, under a budget of their own (see `memo`).
fn parse_piece(text: &str) -> Tree {
    memo::tree(text, &[], true, || parse_uncached(text))
}

/// A value derived from the tree [`parse`] (empty `ranges`) or
/// [`parse_ranges`] gives for `text`, built by `build` from that tree once
/// per run while the memo keeps the tree (see `memo`): `cost` says how many
/// bytes of memory it holds. `build` must be a pure function of the tree.
pub fn derived<T: std::any::Any + Send + Sync>(
    text: &str,
    ranges: &[Range<usize>],
    cost: impl FnOnce(&T) -> usize,
    build: impl FnOnce() -> T,
) -> std::sync::Arc<T> {
    memo::derived(text, ranges, cost, build)
}

/// Whether the tree of the whole of `text` is kept (see `memo`), so that
/// [`parse`] gives it without parsing. A pass that would parse only part
/// of a file (an outline, the definitions around some places) takes the
/// whole tree instead: every such pass answers the same from the whole
/// file (it is what they fall back to), and a part parsed after the whole
/// costs a parse that a kept tree makes free.
pub fn keeps_whole(text: &str) -> bool {
    memo::keeps_whole(text)
}

/// Lets the trees and layouts kept for `text` hold it instead of a copy:
/// a file's text that the run keeps (see `memo`).
pub fn share_text(text: &std::sync::Arc<str>) {
    memo::share(text);
}

/// Drops the trees and layouts kept for the passes to share: the files
/// asked for next are others (the next batch of projects).
pub fn forget_parses() {
    memo::clear();
}

fn parse_uncached(text: &str) -> Tree {
    crate::stats::parsing(text.len(), || PARSER.with(|p| p.borrow_mut().parse(text, None)))
        .expect("parsing without a timeout or cancellation always yields a tree")
}

/// The [`lexer::layout`] of `text`, lexed once per run (see `memo`).
pub fn layout(text: &str) -> Option<std::sync::Arc<lexer::Layout>> {
    memo::layout(text, || lexer::layout(text.as_bytes()))
}

/// Parses only `ranges` of `text` (sorted, disjoint): a tree whose nodes
/// carry their offsets in `text`, for the cost of those bytes alone.
pub fn parse_ranges(text: &str, ranges: &[Range<usize>]) -> Tree {
    memo::tree(text, ranges, false, || parse_ranges_uncached(text, ranges))
}

fn parse_ranges_uncached(text: &str, ranges: &[Range<usize>]) -> Tree {
    let offsets: Vec<usize> = ranges.iter().flat_map(|r| [r.start, r.end]).collect();
    let points = points_at(text, &offsets);
    let included: Vec<tree_sitter::Range> = ranges
        .iter()
        .enumerate()
        .map(|(i, r)| tree_sitter::Range {
            start_byte: r.start,
            end_byte: r.end,
            start_point: points[2 * i],
            end_point: points[2 * i + 1],
        })
        .collect();
    PARSER.with(|p| {
        let mut parser = p.borrow_mut();
        parser.set_included_ranges(&included).expect("the ranges are sorted and disjoint");
        let bytes = ranges.iter().map(|r| r.len()).sum();
        let tree = crate::stats::parsing(bytes, || parser.parse(text, None));
        parser.set_included_ranges(&[]).expect("the whole text is always a valid range");
        tree.expect("parsing without a timeout or cancellation always yields a tree")
    })
}

/// A text replacement: `old_range` of the text before it becomes `inserted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextChange<'a> {
    pub old_range: (usize, usize),
    pub inserted: &'a str,
}

/// Re-parses `new_text`, which is `old_text` with `changes` (non-overlapping,
/// in any order) applied, reusing `old_tree` wherever the changes did not
/// reach. The result is the tree a fresh parse of `new_text` gives, for a
/// fraction of the cost on large files.
pub fn reparse(old_text: &str, old_tree: &Tree, new_text: &str, changes: &[TextChange<'_>]) -> Tree {
    let mut tree = old_tree.clone();
    let mut sorted = changes.to_vec();
    // Last first: the text before each change is still the old text.
    sorted.sort_by_key(|c| std::cmp::Reverse(c.old_range.0));
    // Every point needed, found in one sweep over the old text (a scan per
    // change would be quadratic with thousands of changes).
    let mut offsets: Vec<usize> = sorted.iter().flat_map(|c| [c.old_range.0, c.old_range.1]).collect();
    offsets.sort_unstable();
    offsets.dedup();
    let points = points_at(old_text, &offsets);
    let point = |offset: usize| points[offsets.binary_search(&offset).expect("every offset was swept")];
    for change in sorted {
        let (start, old_end) = change.old_range;
        let start_position = point(start);
        let rows = memchr::memchr_iter(b'\n', change.inserted.as_bytes()).count();
        let new_end_position = match change.inserted.rfind('\n') {
            Some(i) => tree_sitter::Point { row: start_position.row + rows, column: change.inserted.len() - i - 1 },
            None => {
                tree_sitter::Point { row: start_position.row, column: start_position.column + change.inserted.len() }
            }
        };
        tree.edit(&tree_sitter::InputEdit {
            start_byte: start,
            old_end_byte: old_end,
            new_end_byte: start + change.inserted.len(),
            start_position,
            old_end_position: point(old_end),
            new_end_position,
        });
    }
    // Counted as a parse of the whole text, whatever it reused.
    crate::stats::parsing(new_text.len(), || PARSER.with(|p| p.borrow_mut().parse(new_text, Some(&tree))))
        .expect("parsing without a timeout or cancellation always yields a tree")
}

/// tree-sitter's points (row by `\n`, column in bytes) of sorted `offsets`.
fn points_at(text: &str, offsets: &[usize]) -> Vec<tree_sitter::Point> {
    let (mut row, mut line_start, mut at) = (0, 0, 0);
    offsets
        .iter()
        .map(|&offset| {
            for i in memchr::memchr_iter(b'\n', &text.as_bytes()[at..offset]) {
                row += 1;
                line_start = at + i + 1;
            }
            at = offset;
            tree_sitter::Point { row, column: offset - line_start }
        })
        .collect()
}

/// A parsed piece of a file: the whole file, or one candidate region.
/// Node byte offsets are relative to the piece; add `offset` for the file.
pub struct ParsedPiece {
    pub offset: usize,
    pub tree: Tree,
    /// Byte ranges (of the file, sorted, disjoint) outside which this piece
    /// holds no tool result: walks skip everything else. `None`: walk it all.
    pub focus: Option<Vec<Range<usize>>>,
    /// The piece is one display that stands right inside another `{...}`
    /// of the file ([`lexer::candidates_in_context`]).
    pub in_display: bool,
}

impl ParsedPiece {
    /// A piece without focus.
    pub fn new(offset: usize, tree: Tree) -> Self {
        ParsedPiece { offset, tree, focus: None, in_display: false }
    }

    /// Visits the piece's nodes in document order, skipping subtrees that lie
    /// wholly outside the focus.
    pub fn for_each_node<'t>(&'t self, visit: impl FnMut(Node<'t>)) {
        let Some(focus) = &self.focus else {
            return for_each_node(self.tree.root_node(), visit);
        };
        let offset = self.offset;
        let relevant = |node: Node<'_>| {
            let (start, end) = (node.start_byte() + offset, node.end_byte() + offset);
            // The first range ending after `start` must begin before `end`.
            let i = focus.partition_point(|r| r.end <= start);
            focus.get(i).is_some_and(|r| r.start < end)
        };
        walk_pruned(self.tree.root_node(), relevant, visit);
    }
}

/// How much of a file to parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseScope {
    /// Only regions the lexer picks (after a quick byte check); the fast path.
    Candidates,
    /// The whole file, always: no blind spots, slower.
    WholeFile,
}

/// True when the file cannot hold a tool-result dict spelled with plain
/// keys: `status` or `content` never stands between two like quotes (as in
/// `"status"`, `'content'`, `r"status"`, `"""content"""`). Keys spelled only
/// through escapes or concatenation are this check's one blind spot;
/// [`ParseScope::WholeFile`] closes it.
pub fn lacks_key_bytes(src: &[u8]) -> bool {
    static STATUS: search::Needle = search::Needle::new("status");
    static CONTENT: search::Needle = search::Needle::new("content");
    let quoted = |needle: &search::Needle| {
        needle.find_iter(src).any(|at| between_like_quotes(src, at..at + needle.as_str().len()))
    };
    !quoted(&STATUS) || !quoted(&CONTENT)
}

/// Whether the bytes at `span` of `src` stand between two like quotes
/// (`"k"` or `'k'`, as written): the byte look for a string spelling them.
pub fn between_like_quotes(src: &[u8], span: Range<usize>) -> bool {
    let quote = span.start.checked_sub(1).map(|i| src[i]);
    matches!(quote, Some(b'"' | b'\'')) && src.get(span.end).copied() == quote
}

/// The names a plain assignment binds to the expression starting at
/// `start` (`r = {`, `r: dict = (`, `a = r = {`), read lexically from the
/// text before it; empty for anything else (a keyword argument, a
/// subscript target, a `return`...).
pub fn assigned_names(src: &str, start: usize) -> Vec<&str> {
    // Spaces, line continuations, opening parentheses and comments may stand
    // between the `=` and the expression.
    let mut before = &src[..start];
    loop {
        let untrimmed = before.len();
        before = before.trim_end_matches(|c: char| c.is_whitespace() || c == '(' || c == '\\');
        // A comment can stand only before a line break: on the same line,
        // what precedes the expression is the `=` or nothing of this kind
        // (looked at without scanning back over a long line).
        let crossed_a_line = src[before.len()..untrimmed].contains(['\n', '\r']);
        if !before.ends_with('=') && !crossed_a_line {
            return Vec::new();
        }
        let line_start = before.rfind(['\n', '\r']).map_or(0, |i| i + 1);
        match before[line_start..].find('#') {
            Some(hash) => before = &before[..line_start + hash],
            None => break,
        }
    }
    let Some(head) = before.strip_suffix('=') else { return Vec::new() };
    if head.ends_with(['=', '!', '<', '>', '|', '&', '+', '-', '*', '/', '%', '^', '@', ':']) {
        return Vec::new();
    }
    let line = &head[head.rfind(['\n', '\r']).map_or(0, |i| i + 1)..];
    let is_name = |t: &str| {
        let t = t.trim();
        !t.is_empty()
            && !t.starts_with(|c: char| c.is_ascii_digit())
            && t.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    let mut names = Vec::new();
    for part in line.split('=') {
        // `name` or `name: annotation`.
        let name = part.split_once(':').map_or(part, |(n, _)| n);
        if !is_name(name) {
            return Vec::new();
        }
        names.push(name.trim());
    }
    names
}

/// The offsets in `text` where `word` stands as a whole word (no name byte
/// right before or after it, [`lexer::is_ident_byte`]), in code, strings
/// and comments alike.
pub fn word_offsets<'t>(text: &'t str, word: &'t str) -> impl Iterator<Item = usize> + 't {
    whole_words(text.as_bytes(), word.len(), memchr::memmem::find_iter(text.as_bytes(), word.as_bytes()))
}

/// A word a pass looks for in many texts, or in many short parts of one
/// (a keyword: `def`, `import`, `global`...), its searcher built once
/// ([`search::Needle`]).
pub struct Word(search::Needle);

impl Word {
    /// `word`, to keep in a `static` (`static DEF: Word = Word::new("def");`).
    pub const fn new(word: &'static str) -> Self {
        Word(search::Needle::new(word))
    }

    /// [`word_offsets`] of this word in `bytes`.
    pub fn offsets<'t>(&'t self, bytes: &'t [u8]) -> impl Iterator<Item = usize> + 't {
        whole_words(bytes, self.0.as_str().len(), self.0.find_iter(bytes))
    }

    /// The word.
    pub fn as_str(&self) -> &'static str {
        self.0.as_str()
    }
}

/// The `hits` of a `len`-byte word in `bytes` that stand as whole words.
fn whole_words<'t>(
    bytes: &'t [u8],
    len: usize,
    hits: impl Iterator<Item = usize> + 't,
) -> impl Iterator<Item = usize> + 't {
    let name = lexer::is_ident_byte;
    hits.filter(move |&at| {
        let joined = (at > 0 && name(bytes[at - 1])) || bytes.get(at + len).is_some_and(|&b| name(b));
        len > 0 && !joined
    })
}

/// Whether `word` stands in `text` as a whole word ([`word_offsets`]).
pub fn holds_word(text: &str, word: &str) -> bool {
    word_offsets(text, word).next().is_some()
}

/// Whether `name` occurs after `from` in `src` where a write into it could
/// stand (spaces aside): `name[...] =` (not `==`), `name.update`,
/// `name.setdefault` or `name |=`. Read lexically, strings inside the
/// brackets stepped over: a superset of the writes, never a miss.
pub fn may_be_written(src: &str, from: usize, name: &str) -> bool {
    word_offsets(&src[from..], name).any(|i| {
        let end = from + i + name.len();
        let rest = src[end..].trim_start_matches([' ', '\t']);
        if rest.starts_with("|=") {
            return true;
        }
        if let Some(attr) = rest.strip_prefix('.') {
            let attr = attr.trim_start_matches([' ', '\t']);
            return attr.starts_with("update") || attr.starts_with("setdefault");
        }
        if !rest.starts_with('[') {
            return false;
        }
        // Past the matching `]`: an `=` that is not `==`.
        let rest = rest.as_bytes();
        let (mut depth, mut j, mut quote) = (0usize, 0, None::<u8>);
        while j < rest.len() {
            let b = rest[j];
            match quote {
                Some(_) if b == b'\\' => j += 1,
                Some(q) if b == q => quote = None,
                Some(_) => {}
                None => match b {
                    b'\'' | b'"' => quote = Some(b),
                    b'[' | b'(' | b'{' => depth += 1,
                    b']' | b')' | b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                },
            }
            j += 1;
        }
        let after = std::str::from_utf8(&rest[(j + 1).min(rest.len())..]).unwrap_or("").trim_start_matches([' ', '\t']);
        // A line break inside the brackets is fine; after them the `=` must
        // follow on the same logical line (a backslash aside: superset).
        after.starts_with('=') && !after.starts_with("==") || after.starts_with('\\')
    })
}

/// The decorators of `text`, read from its bytes: each line that is,
/// after its indentation, `@` and a name (white space aside), called or
/// not, gives that name, once, in order. A tool's decorator line always
/// gives its name (a decorator split over lines aside); a string can give
/// more.
pub fn decorator_names(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, name) in decorator_lines(text) {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Each decorator line of `text` (as [`decorator_names`] reads them): the
/// offset of its `@`, and the name.
pub fn decorator_lines(text: &str) -> impl Iterator<Item = (usize, String)> + '_ {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'@', bytes).filter_map(move |at| {
        // Only blanks since the line's start (the last `\n`): read back over
        // the blanks, not back along the whole line.
        let blanks = bytes[..at].iter().rev().take_while(|b| matches!(b, b' ' | b'\t' | b'\x0c')).count();
        if at > blanks && bytes[at - blanks - 1] != b'\n' {
            return None;
        }
        let rest = &text[at + 1..];
        // (Bytes: the four are ASCII, which no byte of a wider character is.)
        let end = rest.bytes().position(|b| matches!(b, b'(' | b'\n' | b'\r' | b'#')).unwrap_or(rest.len());
        Some((at, rest[..end].split_whitespace().collect()))
    })
}

/// The modules the import statements of `text` name, read lexically, as
/// (leading dots, dotted name): `import a.b as c` gives `a.b` and `a`;
/// `from .x import y, z` gives `.x`, `.x.y` and `.x.z` (the names may be
/// submodules). Parenthesized lists and backslash continuations are
/// followed; a statement the reading cannot follow gives what it read.
pub fn imported_modules(text: &str) -> Vec<(usize, String)> {
    let bytes = text.as_bytes();
    let mut out: Vec<(usize, String)> = Vec::new();
    let word_at = |i: usize| bytes.get(i).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b >= 0x80);
    for at in memchr::memmem::find_iter(bytes, b"import") {
        if (at > 0 && word_at(at - 1)) || word_at(at + 6) {
            continue;
        }
        let mut start = memchr::memrchr2(b'\n', b'\r', &bytes[..at]).map_or(0, |i| i + 1);
        // Back over lines a `\` continues into this one.
        while start >= 2 && bytes[start - 1] == b'\n' && bytes[start - 2] == b'\\' {
            start = memchr::memrchr2(b'\n', b'\r', &bytes[..start - 1]).map_or(0, |i| i + 1);
        }
        // The statement starts after a `;` or the `:` of `try:` / `if x:`
        // on its line.
        if let Some(i) = memchr::memrchr2(b';', b':', &bytes[start..at]) {
            start += i + 1;
        }
        // The statement's end: the line's end, past `\` continuations and
        // the closing parenthesis of `import (...)`.
        let mut end = at;
        let mut depth = 0usize;
        while end < bytes.len() {
            match bytes[end] {
                b'(' => depth += 1,
                b')' => depth = depth.saturating_sub(1),
                b'\\' if matches!(bytes.get(end + 1), Some(b'\n' | b'\r')) => end += 1,
                b'\n' | b'\r' | b'#' | b';' if depth == 0 => break,
                _ => {}
            }
            end += 1;
        }
        let tokens = import_tokens(&text[start..end]);
        let words: Vec<&str> = tokens.iter().map(String::as_str).collect();
        match words.first() {
            Some(&"import") => {
                for item in words[1..].split(|w| *w == ",") {
                    let dotted: String = item.iter().take_while(|w| **w != "as").copied().collect();
                    let mut prefix = String::new();
                    for part in dotted.split('.').filter(|p| !p.is_empty()) {
                        prefix = if prefix.is_empty() { part.to_owned() } else { format!("{prefix}.{part}") };
                        out.push((0, prefix.clone()));
                    }
                }
            }
            Some(&"from") => {
                let Some(split) = words.iter().position(|w| *w == "import") else { continue };
                let module: String = words[1..split].concat();
                let level = module.bytes().take_while(|b| *b == b'.').count();
                let dotted = module[level..].to_owned();
                out.push((level, dotted.clone()));
                for item in words[split + 1..].split(|w| *w == ",") {
                    let Some(name) = item.iter().find(|w| !matches!(**w, "(" | ")")) else { continue };
                    if *name != "*" {
                        out.push((
                            level,
                            if dotted.is_empty() { (*name).to_owned() } else { format!("{dotted}.{name}") },
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The tokens of one import statement: dotted names (`a.b`, `..x`, `.`),
/// `,`, `(`, `)`, `*`; white space, line breaks and backslashes dropped.
fn import_tokens(statement: &str) -> Vec<String> {
    let bytes = statement.as_bytes();
    let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    let mut tokens: Vec<String> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'#' {
            // A comment inside `import (...)`: to its line's end.
            i = memchr::memchr2(b'\n', b'\r', &bytes[i..]).map_or(bytes.len(), |j| i + j);
            continue;
        }
        if is_name(b) || b == b'.' {
            // A dotted name, dots and white space between its parts
            // included (`a . b`), but not into a keyword.
            let mut token = String::new();
            let mut j = i;
            loop {
                let from = j;
                while j < bytes.len() && (is_name(bytes[j]) || bytes[j] == b'.') {
                    j += 1;
                }
                let part = &statement[from..j];
                if !token.is_empty() && !token.ends_with('.') && !part.starts_with('.') {
                    j = from;
                    break;
                }
                if !token.is_empty() && matches!(part, "import" | "as") {
                    j = from;
                    break;
                }
                token.push_str(part);
                let mut k = j;
                while k < bytes.len() && matches!(bytes[k], b' ' | b'\t' | b'\\' | b'\n' | b'\r') {
                    k += 1;
                }
                let joins = bytes.get(k).is_some_and(|&c| c == b'.' || (token.ends_with('.') && is_name(c)));
                if !joins || matches!(token.as_str(), "from" | "import" | "as") {
                    break;
                }
                j = k;
            }
            tokens.push(token);
            i = j.max(i + 1);
        } else {
            if matches!(b, b',' | b'(' | b')' | b'*') {
                tokens.push((b as char).to_string());
            }
            i += 1;
        }
    }
    tokens
}

#[cfg(test)]
mod import_tests {
    use super::imported_modules;

    #[test]
    fn key_bytes_count_only_between_like_quotes() {
        use super::lacks_key_bytes;
        assert!(!lacks_key_bytes(b"r = {'status': 1, \"content\": []}"));
        assert!(!lacks_key_bytes(b"r = {r'status': 1, '''content''': []}"));
        // The plain words elsewhere are not keys.
        assert!(lacks_key_bytes(b"# status\nr = {'st\\x61tus': 1, 'content': []}"));
        assert!(lacks_key_bytes(b"r = {'status\": 1, 'content': []}"));
        assert!(lacks_key_bytes(b"status = content = 1\n"));
        assert!(lacks_key_bytes(b"r = {'status': 1}"));
    }

    #[test]
    fn import_statements_name_their_modules() {
        let src = "import a.b as c, d\nfrom .x import (y,  # the y\n    z)\nfrom .. import w\nfrom p.q import *\nfrom r \\\n  import s\nx = 'import'\nimport e; from f import g\ntry: from h import i\n";
        let got: Vec<String> =
            imported_modules(src).into_iter().map(|(l, d)| format!("{}{d}", ".".repeat(l))).collect();
        assert_eq!(
            got,
            ["a", "a.b", "d", "e", "f", "f.g", "h", "h.i", "p.q", "r", "r.s", ".x", ".x.y", ".x.z", "..", "..w"]
        );
    }
}

/// Parses what `scope` asks for and returns the pieces.
pub fn parse_pieces(src: &str, scope: ParseScope) -> Vec<ParsedPiece> {
    parse_pieces_but(src, scope, |_, _| false).0
}

/// [`parse_pieces`], leaving out the candidate displays `plain` vouches
/// for from their bytes (given each one's offset and text): a check need
/// not parse what yields no finding ([`plain`]). Only candidate regions are
/// left out (their offsets are returned too); a file parsed whole stays
/// whole.
pub fn parse_pieces_but(
    src: &str,
    scope: ParseScope,
    plain: impl Fn(usize, &str) -> bool,
) -> (Vec<ParsedPiece>, Vec<usize>) {
    let (regions, in_display) = match scope {
        ParseScope::WholeFile => (None, Vec::new()),
        ParseScope::Candidates if lacks_key_bytes(src.as_bytes()) => return (Vec::new(), Vec::new()),
        ParseScope::Candidates => match lexed_for_candidates(src) {
            (lexer::Candidates::Regions(regions), in_display) => (Some(regions), in_display),
            (lexer::Candidates::FullParse(_), _) => (None, Vec::new()),
        },
    };
    match regions {
        None => (vec![ParsedPiece::new(0, parse(src))], Vec::new()),
        Some(regions) => {
            let (plain, parsed): (Vec<Range<usize>>, Vec<Range<usize>>) =
                regions.into_iter().partition(|r| plain(r.start, &src[r.clone()]));
            let pieces = parsed
                .into_iter()
                .map(|r| ParsedPiece {
                    in_display: in_display.binary_search(&r.start).is_ok(),
                    ..ParsedPiece::new(r.start, parse_piece(&src[r]))
                })
                .collect();
            (pieces, plain.into_iter().map(|r| r.start).collect())
        }
    }
}

/// The candidate regions of `src`. A file with a decorator line naming a
/// tool (`@tool`, `@strands.tool(...)`; the configured decorators are not
/// known here, and any other name only costs TS005 a lex of its own) is
/// asked its [`layout`] later by TS005: one lex gives both, and the layout
/// is kept for that ask.
fn lexed_for_candidates(src: &str) -> (lexer::Candidates, Vec<usize>) {
    memo::candidates(src, || {
        if !decorator_lines(src).any(|(_, name)| name.contains("tool")) {
            return lexer::candidates_in_context(src.as_bytes());
        }
        let (candidates, layout) = lexer::candidates_and_layout(src.as_bytes());
        memo::offer_layout(src, layout);
        candidates
    })
}

/// Visits every node of a tree in document order without recursion, so
/// deeply nested code cannot overflow the stack.
pub fn for_each_node<'t>(root: Node<'t>, visit: impl FnMut(Node<'t>)) {
    walk_pruned(root, |_| true, visit);
}

/// Visits, in document order and without recursion, the nodes that `enter`
/// accepts, descending only into those.
fn walk_pruned<'t>(root: Node<'t>, enter: impl FnMut(Node<'t>) -> bool, mut visit: impl FnMut(Node<'t>)) {
    walk_in_context(root, enter, |node, _| visit(node));
}

/// [`for_each_node`], each node visited with its ancestors (the root first,
/// its parent last): asking `Node::parent` walks down from the root again,
/// which costs a big tree dearly when it is asked of every node.
pub fn for_each_node_in_context<'t>(root: Node<'t>, visit: impl FnMut(Node<'t>, &[Node<'t>])) {
    walk_in_context(root, |_| true, visit);
}

/// [`for_each_node_in_context`], visiting only the nodes that overlap one
/// of `ranges` (sorted, disjoint) and descending only into those: the
/// parts of a tree a question is about, each node with all its ancestors.
pub fn for_each_node_in_context_within<'t>(
    root: Node<'t>,
    ranges: &[Range<usize>],
    visit: impl FnMut(Node<'t>, &[Node<'t>]),
) {
    let overlaps = |node: Node<'t>| {
        let i = ranges.partition_point(|r| r.end <= node.start_byte());
        ranges.get(i).is_some_and(|r| r.start < node.end_byte())
    };
    walk_in_context(root, overlaps, visit);
}

/// The one walker: [`walk_pruned`], keeping the path down to each node.
fn walk_in_context<'t>(
    root: Node<'t>,
    mut enter: impl FnMut(Node<'t>) -> bool,
    mut visit: impl FnMut(Node<'t>, &[Node<'t>]),
) {
    let mut cursor = root.walk();
    let mut ancestors: Vec<Node<'t>> = Vec::new();
    loop {
        let node = cursor.node();
        let accepted = enter(node);
        if accepted {
            visit(node, &ancestors);
        }
        if accepted && cursor.goto_first_child() {
            ancestors.push(node);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
            ancestors.pop();
        }
    }
}

/// Line starts of a source, with Python's line breaks (`\n`, `\r\n`, `\r`).
pub struct LineIndex {
    starts: Vec<usize>,
}

/// A 1-based line and 1-based column counted in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl LineIndex {
    pub fn new(src: &str) -> Self {
        let bytes = src.as_bytes();
        let mut starts = vec![0];
        // A `\r\n` breaks the line once, at its `\n`.
        let breaks = memchr::memchr2_iter(b'\n', b'\r', bytes)
            .filter(|&at| !(bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n')));
        starts.extend(breaks.map(|at| at + 1));
        LineIndex { starts }
    }

    /// The 0-based line holding byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset) - 1
    }

    /// The byte offset where 0-based `line` starts.
    pub fn line_start(&self, line: usize) -> usize {
        self.starts[line]
    }

    /// The byte offset where 0-based `line` starts, if there is such a line.
    pub fn line_start_checked(&self, line: usize) -> Option<usize> {
        self.starts.get(line).copied()
    }

    pub fn position(&self, src: &str, offset: usize) -> Position {
        let line = self.line_of(offset);
        let start = self.starts[line];
        let before = &src[start..offset];
        let column = if before.is_ascii() { before.len() } else { before.chars().count() } + 1;
        Position { line: line + 1, column }
    }

    pub fn span(&self, src: &str, range: &Range<usize>) -> (Position, Position) {
        (self.position(src, range.start), self.position(src, range.end))
    }
}

#[cfg(test)]
mod tests {
    use super::tree::KindName;
    use super::*;

    #[test]
    fn decorator_lines_are_the_lines_an_at_sign_opens_after_blanks() {
        let src =
            "@tool\nclass A:\n    @ strands . tool (x)\n\t\x0c@staticmethod # note\n    x = a @ b\n\r@cr\r\n  @last";
        let lines: Vec<(usize, String)> = decorator_lines(src).collect();
        let at = |needle: &str| src.find(needle).unwrap();
        assert_eq!(
            lines,
            [
                (0, "tool".to_owned()),
                (at("@ strands"), "strands.tool".to_owned()),
                (at("@staticmethod"), "staticmethod".to_owned()),
                (at("@last"), "last".to_owned()),
            ]
        );
        assert_eq!(decorator_names("@a\n@b\n@a\n"), ["a", "b"]);
    }

    #[test]
    fn a_kept_word_is_found_where_word_offsets_finds_it() {
        static DEF: Word = Word::new("def");
        for text in ["def f(): pass\nasync def g(): undefined\n", "x = 'def'  # def\nundef = defs", "", "def"] {
            let kept: Vec<usize> = DEF.offsets(text.as_bytes()).collect();
            assert_eq!(kept, word_offsets(text, "def").collect::<Vec<_>>(), "{text:?}");
        }
        assert_eq!(DEF.offsets(b"def f(): pass\nasync def g(): undefined\n").collect::<Vec<_>>(), [0, 20]);
        assert_eq!(DEF.as_str(), "def");
    }

    #[test]
    fn lines_break_like_python() {
        let src = "a\r\nb\rc\nd\u{c}é";
        let index = LineIndex::new(src);
        assert_eq!(index.position(src, 0), Position { line: 1, column: 1 });
        assert_eq!(index.position(src, 3), Position { line: 2, column: 1 });
        assert_eq!(index.position(src, 5), Position { line: 3, column: 1 });
        assert_eq!(index.position(src, 7), Position { line: 4, column: 1 });
        assert_eq!(index.position(src, src.len()), Position { line: 4, column: 4 });
    }

    #[test]
    fn focus_prunes_walks_to_its_ranges() {
        let src = "a = {'x': [1]}\nb = {'y': [2]}\n";
        let mut piece = ParsedPiece::new(0, parse(src));
        let count = |piece: &ParsedPiece| {
            let mut dicts = Vec::new();
            piece.for_each_node(|n| {
                if n.kind_name() == "dictionary" {
                    dicts.push(&src[n.byte_range()]);
                }
            });
            dicts
        };
        assert_eq!(count(&piece).len(), 2);
        piece.focus = Some(std::iter::once(19..29).collect());
        assert_eq!(count(&piece), ["{'y': [2]}"]);
    }

    #[test]
    fn reparse_equals_a_fresh_parse() {
        let old = "x = {'a': 1,\n     'b': 2}\ny = [1,\n     2]\n";
        let tree = parse(old);
        let changes = [
            TextChange { old_range: (5, 12), inserted: "" },
            TextChange { old_range: (40, 40), inserted: ",\n     3" },
        ];
        let new = "x = {\n     'b': 2}\ny = [1,\n     2,\n     3]\n";
        let reparsed = reparse(old, &tree, new, &changes);
        assert_eq!(reparsed.root_node().to_sexp(), parse(new).root_node().to_sexp());
        assert!(!reparsed.root_node().has_error());
    }

    #[test]
    fn candidate_scope_skips_files_without_key_bytes() {
        assert!(parse_pieces("x = {'a': 1}\n", ParseScope::Candidates).is_empty());
        assert_eq!(parse_pieces("x = {'a': 1}\n", ParseScope::WholeFile).len(), 1);
    }
}
