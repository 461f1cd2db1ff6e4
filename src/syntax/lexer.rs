//! A fast lexical pass that finds candidate tool-result dict displays.
//!
//! tree-sitter is exact but slow (~8 MB/s); reading bytes is fast. This pass
//! tokenizes just enough of Python (strings with every prefix, f-string
//! replacement fields, comments, brackets, implicit concatenation) to find each
//! `{ ... }` that directly holds string literals whose *values* are `"status"`
//! and `"content"`. Only those regions are handed to tree-sitter. The pass
//! over-approximates (a candidate may turn out to be a set or have the strings
//! as values), never under-approximates: every dict tree-sitter would find with
//! both keys lies inside a candidate region. Whenever the input is something the
//! pass does not fully understand (unbalanced brackets, an unterminated string,
//! a candidate inside an f-string), it answers [`Candidates::FullParse`] and
//! the caller parses the whole file, so exactness never depends on this pass
//! being clever.

use std::ops::Range;

use super::literal;

/// The outcome of the lexical pass over one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Candidates {
    /// Disjoint, sorted byte ranges of `{...}` displays that need parsing.
    Regions(Vec<Range<usize>>),
    /// The pass cannot vouch for the file: parse it whole. The reason is for
    /// debugging and tests.
    FullParse(&'static str),
}

#[derive(Debug)]
enum Frame {
    /// An open `(`, `[` or `{` in code. `keys`: bit 1 once a `"status"`
    /// stood directly in it in a key's place (after `{` or `,`, before
    /// `:`), bit 2 the same for `"content"`.
    Bracket { open: u8, pos: usize, status: bool, content: bool, keys: u8 },
    /// The literal part of an f-string.
    FString { quote: u8, triple: bool, raw: bool, outer_run: Run },
    /// A replacement field `{expr!c:spec}` of an f-string. `in_spec` once the
    /// top-level `:` has been seen.
    Field { in_spec: bool },
}

/// An implicit concatenation of string tokens being collected.
#[derive(Debug, Default)]
struct Run {
    parts: Vec<Range<usize>>,
    /// False once a part is not a plain `str` literal.
    all_str: bool,
    /// The significant byte of code before its first part.
    after: u8,
}

struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    stack: Vec<Frame>,
    run: Run,
    found: Vec<Range<usize>>,
    /// The starts of the candidates of `found` whose innermost enclosing
    /// bracket is a `{`.
    in_display: Vec<usize>,
    fstring_depth: usize,
    /// At the first token of a logical line (module level brackets-wise).
    line_start: bool,
    /// Where the physical line the lexer is in begins: past the last line
    /// break the lexer stepped over (each one passes through
    /// [`Lexer::code`]'s line-break arm; a string or comment never steps
    /// over one it does not end at).
    line_begin: usize,
    /// Only backslash continuations (and blanks) stood since a logical line
    /// began: its first token, a `case` say, is still to come.
    continued: bool,
    /// A `case` soft keyword opened the logical line, and its header's
    /// `:` has not come yet: a mapping pattern looks like a dict display.
    case_header: bool,
    /// A candidate closed in a `case` header: only a whole-file parse can
    /// tell a mapping pattern from a display.
    case_candidate: bool,
    /// The logical lines, when asked for ([`layout`]).
    lines: Option<Vec<LogicalLine>>,
    /// Some logical line is indented with a form feed.
    odd_indent: bool,
    /// The `{` displays that may hold just one of the keys, when asked for
    /// ([`layout`]).
    one_key: Option<Vec<usize>>,
    /// Every `{...}` bracket of code (not an f-string's field), when asked
    /// for ([`layout`]).
    braces: Option<Vec<Range<usize>>>,
    /// The last significant byte of code (a name's: `a`; a string's: `"`).
    prev: u8,
    /// The values looked for, and the offsets of the string runs that
    /// spell one ([`layout_with`]).
    watch: (&'a [&'a str], Vec<usize>),
    /// The plain string literals and the comments of code, when asked for
    /// ([`layout_with`]).
    strings: Option<(Vec<PlainString>, Vec<Range<usize>>)>,
}

/// A logical line: a statement, or a compound statement's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogicalLine {
    /// Its first token.
    pub start: usize,
    /// How many bytes of indentation (spaces and tabs) precede it.
    pub indent: usize,
    /// Its first `:` outside brackets and strings: a compound statement's
    /// header ends there.
    pub colon: Option<usize>,
}

type Step = Result<(), &'static str>;

/// Finds the candidate regions of `src`.
pub fn candidate_regions(src: &[u8]) -> Candidates {
    candidates_in_context(src).0
}

/// [`candidate_regions`], and the starts of the regions whose display
/// stands right inside another `{...}` (its innermost bracket): the value
/// of a pair or an element of a set or comprehension, never bound by an
/// assignment or passed to a call by itself.
pub fn candidates_in_context(src: &[u8]) -> (Candidates, Vec<usize>) {
    let mut lexer = Lexer::new(src, false);
    let step = lexer.run();
    lexer.candidates(step)
}

/// [`candidates_in_context`] and [`layout`] from one pass: what a file
/// that will be asked both costs one lex.
pub fn candidates_and_layout(src: &[u8]) -> ((Candidates, Vec<usize>), Option<Layout>) {
    let mut lexer = Lexer::new(src, true);
    let step = lexer.run();
    let layout = lexer.layout(step);
    (lexer.candidates(step), layout)
}

/// What one pass over a file reads of its statements and displays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Its logical lines, in order.
    pub lines: Vec<LogicalLine>,
    /// The offsets, in order, of the `{` of each display that may hold
    /// exactly one of the constant keys `"status"` and `"content"` and be
    /// what a function returns: one that holds one of those strings (in
    /// brackets of its own or not), unless both stand in it in a key's
    /// place (after `{` or `,`, before `:`), or it stands right inside a
    /// `[...]`, a `{...}` or a call's parentheses (an element, a value or
    /// an argument). A display with one key but not the other that stands
    /// anywhere else always has its `{` here.
    pub one_key: Vec<usize>,
    /// The offsets, in order, of the string runs (a plain `str` literal,
    /// or an implicit concatenation of them) whose value is one of the
    /// values [`layout_with`] was given and that stand where the key of a
    /// keyed read can: right after `[` (`E[k]`), right after the `(` of a
    /// `get`, `pop` or `setdefault` call or of parentheses that group
    /// (`E.get(k)`, a parenthesized key), or right before the word `in` or
    /// `not` (`k in E`, `k not in E`). Every such key Python would read as
    /// one of them is here; a value elsewhere (`{k: v}`, `x = k`, `f(k)`,
    /// `f(a, k)`, `k == v and w`) is not.
    pub valued: Vec<usize>,
    /// The outermost `{...}` brackets of code (dict and set displays and
    /// comprehensions; not an f-string's replacement fields), in order.
    pub braces: Vec<Range<usize>>,
    /// The string literals of code that are not f-strings (one inside an
    /// f-string's replacement field is code's), in order; listed by
    /// [`layout_with`] only.
    pub strings: Vec<PlainString>,
    /// The comments, from `#` to the end of their line, in order; listed
    /// by [`layout_with`] only.
    pub comments: Vec<Range<usize>>,
}

/// A string literal of code that is not an f-string ([`Layout::strings`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainString {
    /// From its prefix to its closing quote.
    pub range: Range<usize>,
    /// The significant byte of code before it: `[` for the index of a
    /// subscript, `(` after an opening parenthesis, `"` for a later part
    /// of an implicit concatenation.
    pub after: u8,
}

/// The [`Layout`] of `src`; `None` where the pass cannot vouch for the
/// file (see [`Candidates::FullParse`]) or a line is indented with a form
/// feed.
pub fn layout(src: &[u8]) -> Option<Layout> {
    let mut lexer = Lexer::new(src, true);
    let step = lexer.run();
    lexer.layout(step)
}

/// [`layout`], also listing the string runs whose value is one of `values`
/// where a keyed read's key can stand ([`Layout::valued`]), the plain
/// string literals ([`Layout::strings`]) and the comments.
pub fn layout_with(src: &[u8], values: &[&str]) -> Option<Layout> {
    let mut lexer = Lexer::new(src, true);
    lexer.watch.0 = values;
    lexer.strings = Some(Default::default());
    let step = lexer.run();
    lexer.layout(step)
}

/// The outermost of `ranges` (brackets: nested or disjoint), in order.
fn outermost(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    ranges.sort_unstable_by_key(|r| (r.start, std::cmp::Reverse(r.end)));
    ranges.dedup_by(|inner, outer| inner.end <= outer.end);
    ranges
}

/// Whether `b` may stand in a Python name (any non-ASCII byte may).
#[inline]
pub fn is_ident_byte(b: u8) -> bool {
    IDENT_BYTES[usize::from(b)]
}

/// What [`Lexer::skip_plain`] may step over.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Plain {
    /// A byte of a name (or a number), an operator or a delimiter: it only
    /// moves on and sets `prev`.
    Step,
    /// A space or a tab.
    Blank,
    /// A byte [`Lexer::code`] looks at itself: a line break, a form feed,
    /// a comment, a backslash, a quote, a bracket, `:` or `!`.
    No,
}

/// The bytes [`Lexer::code`] looks at itself ([`Plain::No`]).
const LOOKED_AT: &[u8] = b"\n\r\x0c#\\'\"([{)]}:!";

static PLAIN: [Plain; 256] = {
    let mut table = [Plain::Step; 256];
    table[b' ' as usize] = Plain::Blank;
    table[b'\t' as usize] = Plain::Blank;
    let mut k = 0;
    while k < LOOKED_AT.len() {
        table[LOOKED_AT[k] as usize] = Plain::No;
        k += 1;
    }
    table
};

/// The first byte of `rest` that may end a one-line string opened by
/// `quote`: the quote, a backslash or a line break. Most such strings are
/// short: their first bytes are looked at one by one (two `memchr` calls
/// cost more than a short string's bytes), the rest by `memchr`.
#[inline]
fn single_line_stop(rest: &[u8], quote: u8) -> Option<usize> {
    const BY_HAND: usize = 32;
    let stops = |b: u8| b == quote || LINE_STRING_STOPS[usize::from(b)];
    let head = &rest[..rest.len().min(BY_HAND)];
    if let Some(at) = head.iter().position(|&b| stops(b)) {
        return Some(at);
    }
    let tail = &rest[head.len()..];
    let end = memchr::memchr3(quote, b'\\', b'\n', tail);
    memchr::memchr(b'\r', &tail[..end.unwrap_or(tail.len())]).or(end).map(|at| head.len() + at)
}

/// The bytes that end a one-line string whatever its quote: a backslash
/// (an escape) and the line breaks.
static LINE_STRING_STOPS: [bool; 256] = {
    let mut table = [false; 256];
    table[b'\\' as usize] = true;
    table[b'\n' as usize] = true;
    table[b'\r' as usize] = true;
    table
};

/// What a `(` opens ([`Lexer::paren_at`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Paren<'a> {
    /// The call of this name.
    Calls(&'a [u8]),
    /// The call of what a `)`, `]` or string ends.
    CallsAnExpression,
    /// Parentheses that group (or a tuple).
    Groups,
}

/// The keywords (soft ones too) a `(` that groups an expression may follow;
/// after any other name a `(` opens a call.
const GROUPING_KEYWORDS: [&[u8]; 24] = [
    b"and", b"as", b"assert", b"async", b"await", b"case", b"del", b"elif", b"else", b"except", b"for", b"from", b"if",
    b"in", b"is", b"lambda", b"match", b"not", b"or", b"raise", b"return", b"while", b"with", b"yield",
];

/// [`is_ident_byte`] as a table: the lexer asks it of every byte of a name.
static IDENT_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        table[b] = byte.is_ascii_alphanumeric() || byte == b'_' || byte >= 0x80;
        b += 1;
    }
    table
};

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`, listing its logical lines if `lines`.
    fn new(src: &'a [u8], lines: bool) -> Self {
        Lexer {
            src,
            pos: 0,
            stack: Vec::new(),
            run: Run::default(),
            found: Vec::new(),
            in_display: Vec::new(),
            fstring_depth: 0,
            line_start: true,
            line_begin: 0,
            continued: false,
            case_header: false,
            case_candidate: false,
            lines: lines.then(Vec::new),
            odd_indent: false,
            one_key: lines.then(Vec::new),
            braces: lines.then(Vec::new),
            prev: b'\n',
            watch: (&[], Vec::new()),
            strings: None,
        }
    }

    /// The candidate regions found by a run that ended with `step`.
    fn candidates(&mut self, step: Step) -> (Candidates, Vec<usize>) {
        match step {
            Ok(()) if self.case_candidate => {
                (Candidates::FullParse("a candidate in a case clause's header (a mapping pattern?)"), Vec::new())
            }
            Ok(()) => {
                let outermost = outermost(std::mem::take(&mut self.found));
                let mut in_display = std::mem::take(&mut self.in_display);
                in_display.sort_unstable();
                in_display.retain(|at| outermost.binary_search_by_key(at, |r| r.start).is_ok());
                (Candidates::Regions(outermost), in_display)
            }
            Err(why) => (Candidates::FullParse(why), Vec::new()),
        }
    }

    /// The [`Layout`] read by a run (of a lexer listing lines) that ended
    /// with `step`; `None` where it cannot vouch for the file.
    fn layout(&mut self, step: Step) -> Option<Layout> {
        step.ok()?;
        if self.odd_indent {
            return None;
        }
        let mut one_key = self.one_key.take()?;
        one_key.sort_unstable();
        let mut valued = std::mem::take(&mut self.watch.1);
        valued.sort_unstable();
        let (strings, comments) = self.strings.take().unwrap_or_default();
        let braces = outermost(self.braces.take()?);
        Some(Layout { lines: self.lines.take()?, one_key, valued, braces, strings, comments })
    }

    fn peek(&self, offset: usize) -> Option<u8> {
        self.src.get(self.pos + offset).copied()
    }

    fn run(&mut self) -> Step {
        crate::stats::lexed(self.src.len());
        while self.pos < self.src.len() {
            match self.stack.last() {
                Some(Frame::FString { .. }) => self.fstring_literal()?,
                Some(Frame::Field { in_spec: true }) => self.format_spec()?,
                _ => self.code()?,
            }
        }
        self.finish_run(None);
        if self.stack.is_empty() { Ok(()) } else { Err("unclosed bracket or string at end of file") }
    }

    /// One step of ordinary code (module level, inside brackets or inside an
    /// f-string replacement field).
    fn code(&mut self) -> Step {
        if !self.line_start && !self.continued && self.run.parts.is_empty() {
            self.skip_plain();
            if self.pos >= self.src.len() {
                return Ok(());
            }
        }
        let b = self.src[self.pos];
        let line_start = std::mem::replace(&mut self.line_start, false);
        let continued = std::mem::replace(&mut self.continued, false);
        if self.lines.is_some()
            && line_start
            && self.stack.is_empty()
            && !matches!(b, b'\n' | b'\r' | b' ' | b'\t' | b'\x0c' | b'#')
        {
            self.logical_line();
        }
        match b {
            b'\n' | b'\r' => {
                // A line feed outside brackets ends the statement, and the
                // string run and `case` header in it (a lone carriage
                // return does to Python, not to tree-sitter: neither here).
                if b == b'\n' && self.stack.is_empty() {
                    self.finish_run(Some(b));
                    self.case_header = false;
                }
                self.pos += 1;
                self.line_begin = self.pos;
                self.line_start = line_start || self.stack.is_empty();
            }
            b' ' | b'\t' | b'\x0c' => {
                // A run of them at once (indentation mostly).
                self.pos +=
                    1 + self.src[self.pos + 1..].iter().take_while(|&&c| matches!(c, b' ' | b'\t' | b'\x0c')).count();
                self.line_start = line_start;
                self.continued = continued;
            }
            b'#' => {
                let start = self.pos;
                self.pos =
                    memchr::memchr2(b'\n', b'\r', &self.src[self.pos..]).map_or(self.src.len(), |i| self.pos + i);
                if let Some((_, comments)) = self.strings.as_mut() {
                    comments.push(start..self.pos);
                }
                self.line_start = line_start;
                self.continued = continued;
            }
            b'\\' => {
                // Line continuation: does not end an implicit concatenation.
                self.pos += 1;
                match self.peek(0) {
                    Some(b'\r') if self.peek(1) == Some(b'\n') => self.pos += 2,
                    Some(b'\n' | b'\r') => self.pos += 1,
                    _ => return Err("stray backslash"),
                }
                self.continued = line_start || continued;
            }
            b'\'' | b'"' => self.string(self.pos, "")?,
            b'(' | b'[' | b'{' => {
                self.finish_run(Some(b));
                self.stack.push(Frame::Bracket { open: b, pos: self.pos, status: false, content: false, keys: 0 });
                self.pos += 1;
                self.prev = b;
            }
            b')' | b']' | b'}' => {
                self.finish_run(Some(b));
                self.close(b)?;
                self.prev = b;
            }
            b':' | b'!' if matches!(self.stack.last(), Some(Frame::Field { .. })) => {
                self.finish_run(Some(b));
                if b == b':' {
                    self.stack.pop();
                    self.stack.push(Frame::Field { in_spec: true });
                    self.pos += 1;
                } else if self.peek(1) == Some(b'=') {
                    self.pos += 2;
                } else {
                    // Conversion `!r`: the letter is skipped with the bang.
                    self.pos += 2;
                }
            }
            _ if is_ident_byte(b) => {
                let start = self.pos;
                while self.pos < self.src.len() && is_ident_byte(self.src[self.pos]) {
                    self.pos += 1;
                }
                let word = &self.src[start..self.pos];
                if (line_start || continued) && self.stack.is_empty() && word == b"case" && self.soft_keyword_follows()
                {
                    self.case_header = true;
                }
                let quote_next = matches!(self.peek(0), Some(b'\'' | b'"'));
                if quote_next
                    && word.len() <= 2
                    && let Some(prefix) = std::str::from_utf8(word).ok().filter(|p| literal::prefix_kind(p).is_some())
                {
                    return self.string(start, prefix);
                }
                self.finish_run(Some(b));
                self.prev = b'a';
            }
            _ => {
                self.finish_run(Some(b));
                self.prev = b;
                if b == b':' && self.stack.is_empty() {
                    // A compound statement's header ends at its first `:`
                    // outside brackets (a pattern holds none).
                    self.case_header = false;
                    if let Some(line) = self.lines.as_mut().and_then(|t| t.last_mut()) {
                        line.colon = line.colon.or(Some(self.pos));
                    }
                }
                self.pos += 1;
            }
        }
        Ok(())
    }

    /// Steps over plain code in one go: names not followed by a quote (a
    /// string's prefix), blanks and operators, up to the next byte that
    /// [`Lexer::code`] must look at itself. Only where no logical line
    /// starts and no string run is open: there each of these bytes only
    /// moves on and sets [`Lexer::prev`].
    fn skip_plain(&mut self) {
        let src = self.src;
        let start = self.pos;
        // One tight loop to the next byte looked at (most bytes of code are
        // plain: a third of a lex went to deciding, byte by byte, what each
        // one was); what the bytes stepped over mean is read back after.
        let mut at = start;
        while at < src.len() && PLAIN[usize::from(src[at])] != Plain::No {
            at += 1;
        }
        // A name right before a quote is a string's prefix (or not: `code`
        // decides): it is left for `code`, whole.
        if matches!(src.get(at), Some(b'\'' | b'"')) {
            while at > start && is_ident_byte(src[at - 1]) {
                at -= 1;
            }
        }
        // The last byte that is not a blank sets `prev`: a name's is `a`.
        if let Some(&b) = src[start..at].iter().rev().find(|&&b| PLAIN[usize::from(b)] != Plain::Blank) {
            self.prev = if is_ident_byte(b) { b'a' } else { b };
        }
        self.pos = at;
    }

    /// A logical line starts at `self.pos`.
    fn logical_line(&mut self) {
        // Only blanks and form feeds stand between the line's start and
        // its first token: no search back for the line break.
        let begin = self.line_begin;
        let indent = &self.src[begin..self.pos];
        self.odd_indent |= indent.contains(&b'\x0c');
        if let Some(lines) = self.lines.as_mut() {
            lines.push(LogicalLine { start: self.pos, indent: indent.len(), colon: None });
        }
    }

    /// Whether what follows a line-opening name can continue a `case`
    /// pattern rather than an assignment, attribute or annotation.
    fn soft_keyword_follows(&self) -> bool {
        let mut at = self.pos;
        while matches!(self.src.get(at), Some(b' ' | b'\t')) {
            at += 1;
        }
        match self.src.get(at) {
            Some(b'=') => self.src.get(at + 1) == Some(&b'='),
            // `case.x` is an attribute; `case .5` a pattern.
            Some(b'.') => self.src.get(at + 1).is_some_and(u8::is_ascii_digit),
            Some(b':' | b',' | b')' | b']' | b'}' | b'\n' | b'\r' | b';' | b'#') | None => false,
            _ => true,
        }
    }

    fn close(&mut self, b: u8) -> Step {
        let expected = match b {
            b')' => b'(',
            b']' => b'[',
            _ => b'{',
        };
        match self.stack.pop() {
            Some(Frame::Field { .. }) if b == b'}' => {
                self.pos += 1;
                Ok(())
            }
            Some(Frame::Bracket { open, pos, status, content, keys }) if open == expected => {
                self.pos += 1;
                if open == b'{'
                    && let Some(braces) = self.braces.as_mut()
                {
                    braces.push(pos..self.pos);
                }
                if open == b'{'
                    && (status || content)
                    && keys != 3
                    && !self.nested_display()
                    && let Some(one_key) = self.one_key.as_mut()
                {
                    one_key.push(pos);
                }
                if status && content {
                    if self.fstring_depth > 0 {
                        return Err("candidate dict inside an f-string");
                    }
                    self.case_candidate |= self.case_header;
                    self.found.push(pos..self.pos);
                    if matches!(self.stack.last(), Some(Frame::Bracket { open: b'{', .. })) {
                        self.in_display.push(pos);
                    }
                }
                Ok(())
            }
            _ => Err("mismatched bracket"),
        }
    }

    /// Whether the display just closed stands right inside a `[...]` or
    /// `{...}`, or among a call's arguments: an element, a value or an
    /// argument there, never what a function returns itself. A `(` opens a
    /// call after a `)`, a `]`, a string or a name that is no keyword
    /// (`f(`, `g()(`, `d[k](`); after anything else (`return (`, `= (`,
    /// a line break) it may group the value returned.
    fn nested_display(&self) -> bool {
        match self.stack.last() {
            Some(Frame::Bracket { open: b'[' | b'{', .. }) => true,
            Some(&Frame::Bracket { open: b'(', pos, .. }) => self.paren_at(pos) != Paren::Groups,
            _ => false,
        }
    }

    /// What the `(` at `pos` opens, read from the code right before it
    /// (spaces and tabs skipped): the call of a name that is no keyword,
    /// the call of what a `)`, a `]` or a string ends, or else (after a
    /// keyword, an operator, a bracket, a line break) parentheses that
    /// group.
    fn paren_at(&self, pos: usize) -> Paren<'a> {
        let src = self.src;
        let end = src[..pos].iter().rposition(|&b| !matches!(b, b' ' | b'\t')).map_or(0, |i| i + 1);
        match src[..end].last() {
            Some(b')' | b']' | b'"' | b'\'') => Paren::CallsAnExpression,
            Some(&b) if is_ident_byte(b) => {
                let start = src[..end].iter().rposition(|&b| !is_ident_byte(b)).map_or(0, |i| i + 1);
                let word = &src[start..end];
                if word[0].is_ascii_digit() || GROUPING_KEYWORDS.contains(&word) {
                    Paren::Groups
                } else {
                    Paren::Calls(word)
                }
            }
            _ => Paren::Groups,
        }
    }

    /// Whether a string right after a `(` stands where a keyed read's key
    /// can: the first argument of `.get(`, `.pop(` or `.setdefault(`, or
    /// in parentheses that group (`E[("k")]`, `("k") in E`); not an
    /// argument of any other call (`f("k")`, `Error("k")`).
    fn key_paren(&self) -> bool {
        match self.stack.last() {
            Some(&Frame::Bracket { open: b'(', pos, .. }) => match self.paren_at(pos) {
                Paren::Calls(name) => matches!(name, b"get" | b"pop" | b"setdefault"),
                Paren::CallsAnExpression => false,
                Paren::Groups => true,
            },
            _ => true,
        }
    }

    /// A string token starting at `start` (its prefix, if any, already read;
    /// `self.pos` is at the opening quote).
    fn string(&mut self, start: usize, prefix: &str) -> Step {
        let (kind, raw) = literal::prefix_kind(prefix).ok_or("bad string prefix")?;
        let quote = self.src[self.pos];
        let triple = self.peek(1) == Some(quote) && self.peek(2) == Some(quote);
        self.pos += if triple { 3 } else { 1 };
        if kind == literal::LiteralKind::Formatted {
            let outer_run = std::mem::take(&mut self.run);
            self.fstring_depth += 1;
            self.stack.push(Frame::FString { quote, triple, raw, outer_run });
            return Ok(());
        }
        loop {
            // Straight to the next byte that may end the string.
            let rest = &self.src[self.pos.min(self.src.len())..];
            let next = if triple { memchr::memchr2(quote, b'\\', rest) } else { single_line_stop(rest, quote) };
            let Some(skip) = next else {
                return Err("unterminated string");
            };
            self.pos += skip;
            let c = self.src[self.pos];
            self.pos += 1;
            match c {
                b'\\' => {
                    if self.peek(0) == Some(b'\r') && self.peek(1) == Some(b'\n') {
                        self.pos += 1;
                    }
                    self.pos += 1;
                }
                b'\n' | b'\r' if !triple => return Err("unterminated string"),
                _ if c == quote => {
                    if !triple {
                        break;
                    }
                    if self.peek(0) == Some(quote) && self.peek(1) == Some(quote) {
                        self.pos += 2;
                        break;
                    }
                }
                _ => {}
            }
        }
        if self.run.parts.is_empty() {
            self.run.all_str = true;
            self.run.after = self.prev;
        }
        self.run.all_str &= kind == literal::LiteralKind::Str;
        self.run.parts.push(start..self.pos);
        if let Some((strings, _)) = self.strings.as_mut() {
            strings.push(PlainString { range: start..self.pos, after: self.prev });
        }
        self.prev = b'"';
        Ok(())
    }

    /// One step inside the literal part of an f-string.
    fn fstring_literal(&mut self) -> Step {
        let Some(Frame::FString { quote, triple, raw, .. }) = self.stack.last() else { unreachable!() };
        let (quote, triple, raw) = (*quote, *triple, *raw);
        let c = self.src[self.pos];
        match c {
            b'\\' => match self.peek(1) {
                Some(b'{' | b'}') => self.pos += 1,
                Some(b'N') if !raw && self.peek(2) == Some(b'{') => {
                    let close = memchr::memchr(b'}', &self.src[self.pos..]).ok_or("unterminated \\N escape")?;
                    self.pos += close + 1;
                }
                Some(b'\r') if self.peek(2) == Some(b'\n') => self.pos += 3,
                Some(_) => self.pos += 2,
                None => return Err("unterminated f-string"),
            },
            b'{' if self.peek(1) == Some(b'{') => self.pos += 2,
            b'}' if self.peek(1) == Some(b'}') => self.pos += 2,
            b'{' => {
                self.stack.push(Frame::Field { in_spec: false });
                self.pos += 1;
            }
            b'}' => return Err("single '}' in f-string"),
            b'\n' | b'\r' if !triple => return Err("unterminated f-string"),
            _ if c == quote && (!triple || (self.peek(1) == Some(quote) && self.peek(2) == Some(quote))) => {
                self.pos += if triple { 3 } else { 1 };
                let Some(Frame::FString { outer_run, .. }) = self.stack.pop() else { unreachable!() };
                self.fstring_depth -= 1;
                self.run = outer_run;
                // The f-string is a part of the enclosing concatenation, and
                // makes it a JoinedStr.
                self.run.parts.push(self.pos..self.pos);
                self.run.all_str = false;
                self.prev = b'"';
            }
            _ => self.pos += 1,
        }
        Ok(())
    }

    /// One step inside a format spec (`{x:>{width}}`).
    fn format_spec(&mut self) -> Step {
        match self.src[self.pos] {
            b'{' => {
                self.stack.push(Frame::Field { in_spec: false });
                self.pos += 1;
            }
            b'}' => {
                self.stack.pop();
                self.pos += 1;
            }
            b'\'' | b'"' | b'\\' | b'\n' | b'\r' => return Err("unusual character in a format spec"),
            _ => self.pos += 1,
        }
        Ok(())
    }

    /// Ends the current implicit concatenation and marks the nearest enclosing
    /// `{` if its value is one of the two keys that make a dict a candidate;
    /// `next` is the byte of code that ends it (`None` at the end).
    /// Ends the string run in progress, if any: most calls find none.
    #[inline(always)]
    fn finish_run(&mut self, next: Option<u8>) {
        if !self.run.parts.is_empty() {
            self.end_run(next);
        }
    }

    fn end_run(&mut self, next: Option<u8>) {
        // The run's parts are cleared, not dropped: their room serves the
        // next run (most files hold thousands of strings).
        let value = (self.run.all_str && self.may_spell_a_value(&self.run)).then(|| self.run_value(&self.run));
        let (first, after) = (self.run.parts[0].start, self.run.after);
        self.run.parts.clear();
        let Some(value) = value else { return };
        // Where a keyed read's key stands, parentheses seen through.
        let read_place = after == b'['
            || (after == b'(' && self.key_paren())
            || (next.is_some_and(is_ident_byte) && self.membership_follows());
        if let Some(v) = value.as_deref()
            && read_place
            && self.watch.0.contains(&v)
        {
            self.watch.1.push(first);
        }
        let (is_status, is_content) = match value.as_deref() {
            Some("status") => (true, false),
            Some("content") => (false, true),
            _ => return,
        };
        // In a key's place: `{` or `,` before it, `:` (not `:=`) after it,
        // directly in the display.
        let key_place = matches!(after, b'{' | b',') && next == Some(b':') && self.src.get(self.pos + 1) != Some(&b'=');
        if key_place && let Some(Frame::Bracket { open: b'{', keys, .. }) = self.stack.last_mut() {
            *keys |= if is_status { 1 } else { 2 };
        }
        for frame in self.stack.iter_mut().rev() {
            match frame {
                Frame::Bracket { open: b'{', status, content, .. } => {
                    *status |= is_status;
                    *content |= is_content;
                    return;
                }
                Frame::Bracket { .. } => {}
                _ => return,
            }
        }
    }

    /// Whether the name a run ends at is `in` or `not`: a string before
    /// it may be the key of `k in E` or `k not in E`; before any other word
    /// (`== "k" and`, `"k" if c else`) it is no key read. [`Lexer::code`]
    /// reads a name whole before it ends a run, so the name ends at
    /// `self.pos`.
    fn membership_follows(&self) -> bool {
        let before = &self.src[..self.pos];
        let start = before.iter().rposition(|&b| !is_ident_byte(b)).map_or(0, |i| i + 1);
        matches!(&before[start..], b"in" | b"not")
    }

    /// Whether `run`'s value may be `"status"`, `"content"` or a watched
    /// value, judged without decoding it: a run with no backslash and no
    /// carriage return means its bodies, joined, so its length is theirs
    /// (a docstring is ruled out without a copy).
    fn may_spell_a_value(&self, run: &Run) -> bool {
        // The bytes of its bodies, joined.
        let mut len = 0;
        for part in &run.parts {
            let token = &self.src[part.clone()];
            let Some(quote_at) = token.iter().position(|&b| matches!(b, b'\'' | b'"')) else { return true };
            let quote = token[quote_at];
            let rest = &token[quote_at..];
            let triple = rest.len() >= 6 && rest[1] == quote && rest[2] == quote;
            let Some(body) = rest.len().checked_sub(if triple { 6 } else { 2 }) else { return true };
            len += body;
        }
        let spells =
            |len: usize| len == "status".len() || len == "content".len() || self.watch.0.iter().any(|v| v.len() == len);
        if spells(len) {
            return true;
        }
        // Escapes and carriage returns only make a value shorter than its
        // bodies (`\x41` is one byte, a `\r\n` one `\n`): a run as short as
        // every value looked for spells none, and one longer spells one
        // only through them.
        let shortest = self.watch.0.iter().map(|v| v.len()).fold("status".len(), usize::min);
        len > shortest && run.parts.iter().any(|part| memchr::memchr2(b'\\', b'\r', &self.src[part.clone()]).is_some())
    }

    /// The value of the string run `run`: borrowed from the source when it
    /// is one token without escapes (no copy per string), else decoded.
    fn run_value(&self, run: &Run) -> Option<std::borrow::Cow<'a, str>> {
        let src: &'a [u8] = self.src;
        if let [only] = run.parts.as_slice() {
            let text = &src[only.clone()];
            if memchr::memchr2(b'\\', b'\r', text).is_none() {
                let token = std::str::from_utf8(text).ok()?;
                let split = literal::split_token(token)?;
                return Some(std::borrow::Cow::Borrowed(split.body));
            }
        }
        let texts: Option<Vec<&str>> = run.parts.iter().map(|r| std::str::from_utf8(&src[r.clone()]).ok()).collect();
        literal::concat_constant(texts?).map(std::borrow::Cow::Owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pass_gives_the_candidates_and_the_layout_of_two() {
        for src in [
            "@tool\ndef f(x):\n    return {'status': 'ok', 'content': [{'text': x}], 'n': 1}\n",
            "def g():\n    r = {'content': []}\n    if r: return {\"status\": 1, \"content\": r, **e}\n",
            "match x:\n    case {'status': s, 'content': c}:\n        pass\n",
            "x = (1,\n",
            "if x:\n\x0c    y = {'status': 1, 'content': 2}\n",
            "s = f'{ {\"status\": 1, \"content\": 2} }'\n",
        ] {
            let (candidates, layout) = candidates_and_layout(src.as_bytes());
            assert_eq!(candidates, candidates_in_context(src.as_bytes()), "{src:?}");
            assert_eq!(layout, super::layout(src.as_bytes()), "{src:?}");
        }
    }

    #[test]
    fn the_name_byte_table_is_the_name_byte_rule() {
        for b in 0..=u8::MAX {
            let rule = b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
            assert_eq!(is_ident_byte(b), rule, "byte {b:#04x}");
        }
    }

    #[test]
    fn plain_bytes_are_those_code_treats_alike() {
        for b in 0..=u8::MAX {
            let want = match b {
                b'\n' | b'\r' | b'\x0c' | b'#' | b'\\' | b'\'' | b'"' | b'(' | b'[' | b'{' | b')' | b']' | b'}' => {
                    Plain::No
                }
                b':' | b'!' => Plain::No,
                b' ' | b'\t' => Plain::Blank,
                _ => Plain::Step,
            };
            assert!(PLAIN[usize::from(b)] == want, "byte {b:#04x}");
        }
    }

    #[test]
    fn plain_code_stepped_over_sets_what_the_next_string_follows() {
        // After `(` or `[` (blanks between or not), or before a word, a key
        // is where a read's can be; after an operator or a name it is not.
        let src = "a = x.get( 'k')\nb = y +'k'\nc = 'k' in z\nd = w[\t'k' ]\ne = v 'k'\nf = rb'k' + u'k'\n";
        let valued = layout_with(src.as_bytes(), &["k"]).expect("a layout").valued;
        let at = |line: &str| src.find(line).expect("the line") + line.find('\'').expect("a quote");
        assert_eq!(valued, [at("x.get( 'k')"), at("c = 'k'"), at("w[\t'k'")]);
        // A name right before a quote is a prefix (`rb`, `u`), not a name
        // the string follows.
        let src = "x = rb'status'\ny = {'status': 1, 'content': f'{a}'}\n";
        assert_eq!(regions(src), ["{'status': 1, 'content': f'{a}'}"]);
    }

    #[test]
    fn layout_with_lists_plain_strings_and_comments_of_code() {
        let src = "\"\"\"Doc.\"\"\"\nx = d[rb'a'] # note\ny = f'{z[\"b\"]} c' 'e' # 'not a string'\n";
        let listed = layout_with(src.as_bytes(), &[]).unwrap();
        let strings: Vec<(&str, char)> =
            listed.strings.iter().map(|s| (&src[s.range.clone()], char::from(s.after))).collect();
        // Each with what code stood before it; an f-string is not listed, a
        // string in its replacement field is; a later part follows a string.
        assert_eq!(strings, [("\"\"\"Doc.\"\"\"", '\n'), ("rb'a'", '['), ("\"b\"", '['), ("'e'", '"')]);
        let comments: Vec<&str> = listed.comments.iter().map(|c| &src[c.clone()]).collect();
        assert_eq!(comments, ["# note", "# 'not a string'"]);
        // Only asked for by `layout_with`.
        let plain = layout(src.as_bytes()).unwrap();
        assert!(plain.strings.is_empty() && plain.comments.is_empty());
    }

    fn regions(src: &str) -> Vec<&str> {
        match candidate_regions(src.as_bytes()) {
            Candidates::Regions(rs) => rs.into_iter().map(|r| &src[r]).collect(),
            Candidates::FullParse(why) => panic!("unexpected full parse: {why}"),
        }
    }

    fn one_key(src: &str) -> Vec<&str> {
        let layout = layout(src.as_bytes()).unwrap();
        layout.one_key.iter().map(|&at| &src[at..at + src[at..].find('}').unwrap() + 1]).collect()
    }

    #[test]
    fn valued_lists_the_string_runs_that_spell_a_value_where_a_key_is_read() {
        let valued = |src: &str| -> Vec<String> {
            let layout = layout_with(src.as_bytes(), &["k", "key"]).unwrap();
            layout.valued.iter().map(|&at| src[at..at + 3].to_string()).collect()
        };
        // Every spelling, in a subscript, a call's first argument, before
        // `in` / `not in`, parentheses and comments seen through.
        let src = "a = x['k'] + x[\"k\"] + x.get('k' 'ey') + x.pop(r'k')\nb = ('\\x6b') in x or 'k'not in x\nc = x[  # c\n  'k']\nd = f'{y[\"k\"]}'\n";
        assert_eq!(valued(src), ["'k'", "\"k\"", "'k'", "r'k", "'\\x", "'k'", "'k'", "\"k\""]);
        // Elsewhere a value is no key read: a display's key or value, an
        // assignment, a later argument, an operand, a comment, another
        // kind of literal, another value.
        let src = "a = {'k': 'k'}\nb = 'k'\nf(a, 'k')\nc = 'k' + 'k'\n# x['k']\nd = x[f'k'] + x[b'k'] + x['kk']\n";
        assert!(valued(src).is_empty(), "{:?}", valued(src));
        assert!(layout_with("x['k']\n".as_bytes(), &[]).unwrap().valued.is_empty());
        // A lone carriage return is a space to tree-sitter: `in` still follows.
        assert_eq!(valued("if 'k'\rin x:\n    pass\n"), ["'k'"]);
        // Before a word other than `in` or `not`, or as an argument of a
        // call other than `.get(`, `.pop(` or `.setdefault(`, a value is no
        // key read.
        assert!(valued("a = s == 'k' and t\nb = 'k' if c else 'kk'\nc = 'k' or x\n").is_empty());
        assert!(valued("f('k')\nraise Error ('k')\ng()('k')\nx.get2('k')\n").is_empty());
        let src = "a = x.pop ('k') or x.setdefault('k', 1) or x[('k')]\nb = f(('k') in x)\n";
        assert_eq!(valued(src), ["'k'", "'k'", "'k'", "'k'"]);
    }

    #[test]
    fn braces_are_the_outermost_code_braces() {
        let src = "a = {1: {2}}\nb = f'{x}' + '{' # {\nc = [{k: v for k in {3}}, {}]\n";
        let braces: Vec<&str> = layout(src.as_bytes()).unwrap().braces.into_iter().map(|r| &src[r]).collect();
        assert_eq!(braces, ["{1: {2}}", "{k: v for k in {3}}", "{}"]);
    }

    #[test]
    fn one_key_lists_displays_without_both_keys_in_a_key_place() {
        let src = "a = {'status': 1}\nb = {'status': 1, 'content': []}\nc = {'content': [], **x}\nd = {'x': 1}\n";
        assert_eq!(one_key(src), ["{'status': 1}", "{'content': [], **x}"]);
        // A key spelled by concatenation or escapes is its value.
        assert_eq!(one_key("e = {'sta' 'tus': 1}\nf = {'st\\x61tus': 1, 'content': 2}\n"), ["{'sta' 'tus': 1}"]);
        // A key's place: after `{` or `,`, before `:`, directly in the display.
        // An element, a value or an argument is never returned itself;
        // a display in parentheses that group may be.
        let src = "a = [{'status': 1}]\nb = {'k': {'status': 1}}\nf({'status': 1})\no.m(\n    {'status': 1})\ng()({'status': 1})\nd[k] ({'status': 1})\n";
        assert_eq!(one_key(src), Vec::<&str>::new());
        let src = "return ({'status': 1})\nx = (\n    {'content': 1})\nreturn await ({'status': 1})\nreturn x if c else ({'status': 1})\n";
        assert_eq!(one_key(src), ["{'status': 1}", "{'content': 1}", "{'status': 1}", "{'status': 1}"]);
        let src = "g = {'status': 'content'}\nh = {k: 'status', 'content': 1}\ni = {('status'): 1, 'content': 2}\nj = {f('status'): 1, 'content': 2}\n";
        assert_eq!(
            one_key(src),
            [
                "{'status': 'content'}",
                "{k: 'status', 'content': 1}",
                "{('status'): 1, 'content': 2}",
                "{f('status'): 1, 'content': 2}"
            ]
        );
    }

    #[test]
    fn finds_plain_and_nested_candidates() {
        let src = "x = {'status': 1, 'content': []}\ny = {'a': {\"status\": 1, \"content\": []}}\nz = {'status': 1}\n";
        assert_eq!(regions(src), vec!["{'status': 1, 'content': []}", "{\"status\": 1, \"content\": []}"]);
    }

    #[test]
    fn candidates_right_inside_a_display_are_told() {
        let r = "{'status': 1, 'content': []}";
        let src = format!(
            "a = {{'x': {r}}}\nb = f({r})\nc = [{r}]\nd = {{k: ({r})}}\ne = {{{r} if c else 1}}\nf = {{'y': [{r}]}}\n"
        );
        let (Candidates::Regions(regions), in_display) = candidates_in_context(src.as_bytes()) else { panic!() };
        assert_eq!(regions.len(), 6);
        let line = |at: usize| src[..at].matches('\n').count();
        assert_eq!(in_display.into_iter().map(line).collect::<Vec<_>>(), [0, 4]);
    }

    #[test]
    fn outermost_candidate_wins() {
        let src = "{'status': 1, 'content': [{'status': 2, 'content': []}]}";
        assert_eq!(regions(src), vec![src]);
    }

    #[test]
    fn keys_by_escape_concatenation_and_parens() {
        let src = "{'st\\x61tus': 1, ('con' # c\n 'tent'): []}";
        assert_eq!(regions(src), vec![src]);
        // Escapes make a value shorter than its body: a body longer than
        // every value looked for may still spell one.
        let src = "{'\\x73\\x74\\x61\\x74\\x75\\x73': 1, 'content': []}";
        assert_eq!(regions(src), vec![src]);
        let layout = layout_with(b"a = x['\\x6b\\x65\\x79'] + x['\\x6b\\x65\\x79s']\n", &["key"]).unwrap();
        assert_eq!(layout.valued, [6]);
    }

    #[test]
    fn long_one_line_strings_end_where_python_ends_them() {
        // Past the bytes looked at one by one, an escaped quote still does
        // not end a string, and a line break still leaves it unterminated.
        let long = "x".repeat(40);
        let src = format!("{{'status': '{long}\\'{long}', 'content': []}}");
        assert_eq!(regions(&src), vec![src.as_str()]);
        for brk in ["\n", "\r"] {
            let src = format!("{{'status': '{long}{brk}', 'content': []}}");
            assert!(matches!(candidate_regions(src.as_bytes()), Candidates::FullParse(_)), "{src:?}");
        }
    }

    #[test]
    fn ignores_comments_fstrings_and_bytes() {
        assert!(regions("# {'status': 1, 'content': []}\n").is_empty());
        assert!(regions("{f'status': 1, 'content': []}").is_empty());
        assert!(regions("{b'status': 1, 'content': []}").is_empty());
        assert!(regions("{'sta' f'tus': 1, 'content': []}").is_empty());
        assert!(regions("x = '{\"status\": 1, \"content\": []}'").is_empty());
    }

    #[test]
    fn fstring_fields_are_lexed() {
        // Braces inside the f-string's fields and format spec must balance.
        let src = "s = f\"{a['x']!r:>{width}} {{literal}} \\N{BULLET}\"\nd = {'status': s, 'content': []}";
        assert_eq!(regions(src), vec!["{'status': s, 'content': []}"]);
    }

    #[test]
    fn match_statements_need_a_whole_parse() {
        let src = "match r:\n    case {'status': s, 'content': c, 'x': 1}:\n        pass\n";
        assert!(matches!(candidate_regions(src.as_bytes()), Candidates::FullParse(_)));
        // `case` as a plain name does not count.
        assert_eq!(regions("case = 1\nx = case\nd = {'status': 1, 'content': []}\n").len(), 1);
        // A pattern over several lines, or past a class pattern's brackets.
        let src = "match r:\n    case Box(x=[1, 2], y={\n        'status': s, 'content': c}):\n        pass\n";
        assert!(matches!(candidate_regions(src.as_bytes()), Candidates::FullParse(_)));
        // A pattern that starts with a float, after a backslash
        // continuation, or past a lone carriage return (a space to
        // tree-sitter) is a pattern still.
        for src in [
            "match r:\n    case .5 | {'status': s, 'content': c}:\n        pass\n    case _:\n        pass\n",
            "match r:\n    \\\n    case {'status': s, 'content': c}:\n        pass\n    case _:\n        pass\n",
            "match r:\n    case 1\r| {'status': s, 'content': c}:\n        pass\n    case _:\n        pass\n",
        ] {
            assert!(matches!(candidate_regions(src.as_bytes()), Candidates::FullParse(_)), "{src:?}");
        }
        assert_eq!(regions("case.x = 1\nd = {'status': 1, 'content': []}\n").len(), 1);
        // Displays in a match statement's bodies, its subject or a later
        // line are displays: their regions serve.
        let body = "{'status': 'ok', 'content': []}";
        let src = format!(
            "match {body}:\n    case [x, *_] | (y):\n        out = {body}\n    case _: return {body}\nz = {body}\n"
        );
        assert_eq!(regions(&src), [body; 4]);
    }

    #[test]
    fn gives_up_where_it_cannot_vouch() {
        for src in ["{'status': 1, 'content': [}", "'abc\n", "f\"{ {'status': 1, 'content': []} }\"", "(("] {
            assert!(matches!(candidate_regions(src.as_bytes()), Candidates::FullParse(_)), "{src}");
        }
    }
}
