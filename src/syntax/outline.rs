//! Outlines: a file's module-level definitions read lexically, and the
//! file with the bodies of some top-level functions blanked, so that a parse
//! of what is left costs what is left. An outline keeps every byte offset
//! (and line and column) of the file, and every statement of the module's
//! own block: the names the module binds are the file's.

use std::ops::Range;

use super::{lexer, literal};

/// A `def` or `class` statement of the module's block or of a
/// module-level class's body, read lexically.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// Its name.
    pub name: String,
    /// From its first decorator to the next statement of its block.
    pub range: Range<usize>,
    /// After the colon of its header to the end of `range`.
    pub body: Range<usize>,
    /// A `class` statement (else a `def` or `async def`).
    pub class: bool,
    /// A class's methods (the definitions of its body), when its body is
    /// indented consistently.
    pub members: Vec<Definition>,
}

/// The module-level definitions of `text`, in order, with the members of
/// its classes; `lines` are its logical lines ([`lexer::layout`]).
pub fn definitions_in(text: &str, lines: &[lexer::LogicalLine]) -> Vec<Definition> {
    let top: Vec<lexer::LogicalLine> = lines.iter().filter(|l| l.indent == 0).copied().collect();
    let mut out = block_definitions(text, &top, text.len());
    for class in out.iter_mut().filter(|d| d.class) {
        let inside: Vec<lexer::LogicalLine> = lines.iter().filter(|l| class.body.contains(&l.start)).copied().collect();
        let Some(first) = inside.first() else { continue };
        let indent = &text.as_bytes()[first.start - first.indent..first.start];
        // Every line of the body is at the members' indentation or deeper.
        if !inside.iter().all(|l| text.as_bytes()[l.start - l.indent..l.start].starts_with(indent)) {
            continue;
        }
        let members: Vec<lexer::LogicalLine> = inside.iter().filter(|l| l.indent == first.indent).copied().collect();
        class.members = block_definitions(text, &members, class.range.end);
    }
    out
}

/// A function of a file's outline: a module-level `def`, or a method of a
/// module-level class (with that class).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Function<'d> {
    /// The class it is a method of.
    pub class: Option<&'d Definition>,
    pub def: &'d Definition,
}

/// The functions of `defs` ([`definitions_in`]), in order.
pub fn functions(defs: &[Definition]) -> Vec<Function<'_>> {
    let mut out = Vec::new();
    for d in defs {
        if d.class {
            out.extend(d.members.iter().filter(|m| !m.class).map(|m| Function { class: Some(d), def: m }));
        } else {
            out.push(Function { class: None, def: d });
        }
    }
    out
}

/// The ranges of `text` that parse `functions` (in order, from
/// [`functions`]) and nothing else but the headers of their classes: a
/// module of those functions, and of those classes holding just those
/// methods. Offsets, lines and columns stay the file's.
pub fn function_ranges(text: &str, functions: &[Function<'_>]) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut open: Option<&Definition> = None;
    for f in functions {
        match f.class {
            None => out.push(f.def.range.clone()),
            Some(class) => {
                if open != Some(class) {
                    out.push(class.range.start..class.body.start);
                }
                // From the line break before the method: its indentation opens
                // the class's block.
                // (Or from where the method before it ends, at its line.)
                let from = bytes[..f.def.range.start].iter().rposition(|&b| b == b'\n').unwrap_or(class.body.start);
                let after = out.last().map_or(0, |r| r.end);
                out.push(from.max(class.body.start).max(after)..f.def.range.end);
            }
        }
        open = f.class;
    }
    out.retain(|r| !r.is_empty());
    out
}

/// The statement a decorator line decorates, from the `@` at `at` to the
/// next statement at its indentation or shallower (its block's next, or a
/// dedent); `None` when no logical line of `lines` starts at `at` (the `@`
/// stands in a string). A line whose indentation the bytes cannot compare
/// with the decorator's (neither is a prefix of the other) ends nothing,
/// so the span never ends early.
pub fn decorated_span(text: &str, lines: &[lexer::LogicalLine], at: usize) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    let i = lines.binary_search_by_key(&at, |l| l.start).ok()?;
    let indent_of = |l: &lexer::LogicalLine| &bytes[l.start - l.indent..l.start];
    let own = indent_of(&lines[i]);
    // The decorators and the header stand at the decorator's indentation.
    let mut j = i + 1;
    while lines.get(j).is_some_and(|l| indent_of(l) == own && bytes[l.start] == b'@') {
        j += 1;
    }
    let deeper = |l: &lexer::LogicalLine| {
        let theirs = indent_of(l);
        theirs.len() > own.len() || !(own.starts_with(theirs) || theirs.starts_with(own))
    };
    let end = lines[(j + 1).min(lines.len())..].iter().find(|l| !deeper(l)).map_or(text.len(), |l| l.start - l.indent);
    Some(at..end.max(at))
}

/// The names a statement in `range` of `text` (whose logical lines are
/// `lines`) may return a call of: on each logical line there, after the
/// first word `return` that may start a statement (`starts_a_statement`),
/// each name that a `(` follows. The list is complete: a `return`
/// statement lies in one logical line, starts it or follows a `:` or `;`
/// there, and a call it returns opens its arguments on that line, after
/// its callee. Left out: a `(` inside a `{...}` that opens after the
/// `return` (a call there is nested in a display, never the value
/// returned), and one in a string or comment of the line, an f-string's
/// fields included (a string's value is a string, not a call), when the
/// line's strings can be vouched for ([`literal::vouched_quoted_spans`];
/// otherwise such a `(` counts as code). `None` when a `(` follows
/// something else that may be a callee (a `)`, `]`, `}` or string, or a
/// name on an earlier line).
pub fn returned_callees<'t>(text: &'t str, layout: &lexer::Layout, range: Range<usize>) -> Option<Vec<&'t str>> {
    let (lines, braces) = (&layout.lines, &layout.braces);
    let bytes = text.as_bytes();
    let word = lexer::is_ident_byte;
    let first = lines.partition_point(|l| l.start < range.start);
    let ends = lines[first..].iter().skip(1).map(|l| l.start - l.indent).chain(std::iter::once(range.end));
    static RETURN: super::search::Needle = super::search::Needle::new("return");
    let mut out: Vec<&str> = Vec::new();
    for (line, end) in lines[first..].iter().take_while(|l| l.start < range.end).zip(ends) {
        let segment = line.start..end.min(range.end).max(line.start);
        let Some(at) = RETURN.find_iter(&bytes[segment.clone()]).find(|&at| {
            let at = segment.start + at;
            let before = at > segment.start && word(bytes[at - 1]);
            let after = at + RETURN.as_str().len();
            !before && !bytes.get(after).is_some_and(|&b| word(b)) && starts_a_statement(bytes, segment.start, at)
        }) else {
            continue;
        };
        let at = segment.start + at;
        // The outermost `{...}` holding `paren`, if any opens after `at`.
        let in_display = |paren: usize| {
            let i = braces.partition_point(|b| b.start < paren);
            i.checked_sub(1).is_some_and(|i| braces[i].start > at && paren < braces[i].end)
        };
        // The line's strings and comments, read once it has a `(` to judge
        // (offsets in the line).
        let quoted = std::cell::OnceCell::new();
        let quoted_at = |paren: usize| {
            let spans = quoted.get_or_init(|| literal::vouched_quoted_spans(&bytes[segment.clone()]));
            let at = paren - segment.start;
            spans.as_ref().is_some_and(|spans| {
                let i = spans.partition_point(|r| r.start < at);
                i.checked_sub(1).is_some_and(|i| at < spans[i].end)
            })
        };
        for paren in memchr::memchr_iter(b'(', &bytes[at..segment.end]) {
            let paren = at + paren;
            if in_display(paren) || quoted_at(paren) {
                continue;
            }
            let mut before = paren;
            while before > 0 && matches!(bytes[before - 1], b' ' | b'\t') {
                before -= 1;
            }
            let Some(&b) = before.checked_sub(1).map(|i| &bytes[i]) else { continue };
            if word(b) {
                let start = bytes[..before].iter().rposition(|&c| !word(c)).map_or(0, |i| i + 1);
                let name = &text[start..before];
                if !out.contains(&name) {
                    out.push(name);
                }
            } else if matches!(b, b')' | b']' | b'}' | b'"' | b'\'' | b'\n' | b'\r' | b'\\') {
                return None;
            }
        }
    }
    Some(out)
}

/// Whether `range` of `text` (whose logical lines are `lines`) may hold a
/// `global` statement ([`global_statements`]).
pub fn declares_global(text: &str, lines: &[lexer::LogicalLine], range: &Range<usize>) -> bool {
    global_statements(text, lines, range).next().is_some()
}

/// Where the `global` statements of `range` of `text` may start: the word
/// where a statement may start (`starts_a_statement`: `global x`, `def f():
/// global x`, `y = 1; global x`), not inside a name or after other code
/// (`"a global name"`).
fn global_statements<'t>(
    text: &'t str,
    lines: &'t [lexer::LogicalLine],
    range: &Range<usize>,
) -> impl Iterator<Item = usize> + 't {
    static GLOBAL: super::Word = super::Word::new("global");
    let start = range.start;
    GLOBAL.offsets(&text.as_bytes()[range.clone()]).map(move |at| start + at).filter(move |&at| {
        let line = lines[..lines.partition_point(|l| l.start <= at)].last().map_or(0, |l| l.start);
        starts_a_statement(text.as_bytes(), line, at)
    })
}

/// The names the `global` statements of `range` of `text` (whose logical
/// lines are `lines`) declare, each read as `global a, b`; `None` when one
/// is not that plain (a name that is not ASCII, a comment or a line
/// continuation in the list), so that a caller takes the safe way.
pub fn global_names<'t>(text: &'t str, lines: &[lexer::LogicalLine], range: &Range<usize>) -> Option<Vec<&'t str>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    for at in global_statements(text, lines, range) {
        let mut i = at + "global".len();
        loop {
            while matches!(bytes.get(i), Some(b' ' | b'\t')) {
                i += 1;
            }
            let from = i;
            while bytes.get(i).is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_') {
                i += 1;
            }
            if i == from || bytes[from].is_ascii_digit() {
                return None;
            }
            out.push(&text[from..i]);
            while matches!(bytes.get(i), Some(b' ' | b'\t')) {
                i += 1;
            }
            match bytes.get(i) {
                Some(b',') => i += 1,
                None | Some(b'\n' | b'\r' | b';') => break,
                Some(_) => return None,
            }
        }
    }
    Some(out)
}

/// Whether the word at `at` may start a statement of the logical line
/// that starts at `line`: it is the line's first token, or follows a `:`
/// (`if c: return x`) or a `;`, white space and line continuations
/// between. A word elsewhere (`and return its card` in a docstring) starts
/// none.
fn starts_a_statement(bytes: &[u8], line: usize, at: usize) -> bool {
    let mut i = at;
    while i > line && matches!(bytes[i - 1], b' ' | b'\t' | b'\x0c' | b'\\' | b'\n' | b'\r') {
        i -= 1;
    }
    i == line || matches!(bytes[i - 1], b':' | b';')
}

/// The definitions among `lines` (the statements of one block, which ends
/// at `end`).
fn block_definitions(text: &str, lines: &[lexer::LogicalLine], end: usize) -> Vec<Definition> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut decorators: Option<usize> = None;
    for (i, line) in lines.iter().enumerate() {
        let next = lines.get(i + 1).map_or(end, |next| next.start - next.indent);
        let rest = &text[line.start..next];
        if rest.starts_with('@') {
            decorators.get_or_insert(line.start);
            continue;
        }
        let from = decorators.take().unwrap_or(line.start);
        let header = match rest.strip_prefix("async") {
            Some(after) if after.starts_with([' ', '\t', '\\']) => {
                after.trim_start_matches([' ', '\t', '\\', '\n', '\r'])
            }
            _ => rest,
        };
        let (class, named) = if let Some(after) = header.strip_prefix("def") {
            (false, after)
        } else if let Some(after) = header.strip_prefix("class") {
            (true, after)
        } else {
            continue;
        };
        if !named.starts_with([' ', '\t', '\\']) {
            continue;
        }
        let name: String = named
            .trim_start_matches([' ', '\t', '\\', '\n', '\r'])
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let Some(colon) = line.colon.filter(|&c| c < next) else { continue };
        if name.is_empty() || bytes.get(colon + 1) == Some(&b'=') {
            continue;
        }
        out.push(Definition { name, range: from..next, body: colon + 1..next, class, members: Vec::new() });
    }
    out
}

/// An outline of a file: its text with the body of some functions reduced
/// to the statement `0`, and the ranges to parse (the rest of each such
/// body is left out of them). Offsets, lines and columns are the file's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outline {
    pub text: String,
    pub ranges: Vec<Range<usize>>,
}

impl Outline {
    /// The outline of `text` that leaves out the bodies of `blanked`
    /// (sorted functions of [`definitions_in`]); `None` when one cannot be
    /// reduced (its first token is not ASCII).
    pub fn new<'d>(text: &str, blanked: impl IntoIterator<Item = &'d Definition>) -> Option<Outline> {
        let mut bytes = text.as_bytes().to_vec();
        let mut ranges = Vec::new();
        let mut from = 0;
        for def in blanked {
            let at = def.body.start + first_statement(&text.as_bytes()[def.body.clone()])?;
            if !bytes[at].is_ascii() {
                return None;
            }
            bytes[at] = b'0';
            ranges.push(from..at + 1);
            // The line break that ends the body opens the next statement.
            from = text.as_bytes()[..def.body.end]
                .iter()
                .rposition(|&b| matches!(b, b'\n' | b'\r'))
                .filter(|&nl| nl > at)
                .unwrap_or(def.body.end);
        }
        ranges.push(from..text.len());
        ranges.retain(|r| !r.is_empty());
        // One ASCII byte replaced another.
        let text = String::from_utf8(bytes).expect("an ASCII byte for an ASCII byte keeps UTF-8");
        Some(Outline { text, ranges })
    }

    /// Parses the outline.
    pub fn parse(&self) -> tree_sitter::Tree {
        super::parse_ranges(&self.text, &self.ranges)
    }
}

/// The offset in `body` of its first token: past white space, line breaks
/// and comments.
fn first_statement(body: &[u8]) -> Option<usize> {
    let mut at = 0;
    while at < body.len() {
        match body[at] {
            b' ' | b'\t' | b'\x0c' | b'\n' | b'\r' => at += 1,
            b'#' => {
                while at < body.len() && !matches!(body[at], b'\n' | b'\r') {
                    at += 1;
                }
            }
            _ => return Some(at),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::tree::KindName;

    fn lines(src: &str) -> Vec<lexer::LogicalLine> {
        layout(src).lines
    }

    fn layout(src: &str) -> lexer::Layout {
        lexer::layout(src.as_bytes()).unwrap()
    }

    /// The definitions of `src`; `None` where the lexer cannot vouch for it.
    fn definitions(src: &str) -> Option<Vec<Definition>> {
        Some(definitions_in(src, &lexer::layout(src.as_bytes())?.lines))
    }

    #[test]
    fn a_decorated_span_ends_at_the_next_statement_of_its_block() {
        let src = "def outer():\n    @tool\n    @other\n    def t(a):\n        if a:\n            return 1\n\n        return 2\n    x = t\n@tool\ndef last(): return 3\n";
        let l = lines(src);
        let at = src.find("@tool").unwrap();
        let span = decorated_span(src, &l, at).unwrap();
        assert_eq!(
            &src[span],
            "@tool\n    @other\n    def t(a):\n        if a:\n            return 1\n\n        return 2\n"
        );
        let at = src.rfind("@tool").unwrap();
        assert_eq!(&src[decorated_span(src, &l, at).unwrap()], "@tool\ndef last(): return 3\n");
        // A `@` in a string starts no statement.
        let src = "s = '''\n@tool\n'''\n";
        assert_eq!(decorated_span(src, &lines(src), src.find('@').unwrap()), None);
        // An indentation the bytes cannot compare ends nothing.
        let src = " \t@tool\n \tdef t():\n\t  return f()\nx = 1\n";
        assert_eq!(&src[decorated_span(src, &lines(src), 2).unwrap()], "@tool\n \tdef t():\n\t  return f()\n");
    }

    #[test]
    fn the_names_of_global_statements_are_read_or_none_when_unsure() {
        for (src, want) in [
            ("def f():\n    global R\n    R = 1\n", Some(vec!["R"])),
            ("def f(): global a , b;global c\n", Some(vec!["a", "b", "c"])),
            ("def f():\n    x = 1; global _m\r\n", Some(vec!["_m"])),
            ("def f():\n    return 'a global name'\n", Some(vec![])),
            ("def f():\n    global a, \\\n        b\n", None),
            ("def f():\n    global a  # why\n", None),
            ("def f():\n    global \u{e9}t\u{e9}\n", None),
            ("def f():\n    global\n", None),
        ] {
            assert_eq!(global_names(src, &lines(src), &(0..src.len())), want, "{src}");
        }
    }

    #[test]
    fn a_global_statement_is_found_where_a_statement_may_start() {
        for (src, want) in [
            ("def f():\n    global R\n    R = 1\n", true),
            ("def f(): global R; R = 1\n", true),
            ("def f():\n    x = 1; global R\n", true),
            ("def f():\n    return 'a global name'\n", false),
            ("def f():\n    global_count = 1\n", false),
            ("def f():\n    x.global_ = 1\n", false),
        ] {
            assert_eq!(declares_global(src, &lines(src), &(0..src.len())), want, "{src}");
        }
    }

    #[test]
    fn returned_callees_lists_every_name_a_paren_follows_after_return() {
        let src = "def f():\n    x = g(1)\n    if x: return h (x) + k.m(2)\n    return [n(i) for i in (1, 2)]\n";
        let got = returned_callees(src, &layout(src), 0..src.len()).unwrap();
        assert_eq!(got, ["h", "m", "n", "in"]);
        let src = "def f():\n    return x\n    returned(1)\n";
        assert_eq!(returned_callees(src, &layout(src), 0..src.len()).unwrap(), Vec::<&str>::new());
        // The word in a docstring or a string returns nothing; after `;` it does.
        let src =
            "def f():\n    \"\"\"Send and return the\n    (raw) reply.\"\"\"\n    x = 'return g(1)'; return h(2)\n";
        assert_eq!(returned_callees(src, &layout(src), 0..src.len()).unwrap(), ["h"]);
        let src = "def f():\n    if 'return' in s: \\\n        return k(2)\n";
        assert_eq!(returned_callees(src, &layout(src), 0..src.len()).unwrap(), ["k"]);
        // A call nested in a display opened after the `return` is never
        // the value returned, whatever its callee; one after it may be.
        let src = "def f(e):\n    return {'status': 'error', 'content': [{'text': '\\n'.join(str(e))}]}\n";
        assert_eq!(returned_callees(src, &layout(src), 0..src.len()).unwrap(), Vec::<&str>::new());
        let src = "def f(k):\n    if k: return {'a': g(1), 'b': {h(2)}}.get(k)\n";
        assert_eq!(returned_callees(src, &layout(src), 0..src.len()).unwrap(), ["get"]);
        // So is one in a string or a comment, an f-string's fields
        // included: the value of a string is no call.
        let src = "def f(x):\n    d = {'a': g(1)}; return h(x, '{', f'{i(x)}')\n";
        assert_eq!(returned_callees(src, &layout(src), 0..src.len()).unwrap(), ["h"]);
        let src =
            "def f(n):\n    return h(\n        f\"(has {len(n)} ({n}) message(s))\"  # (x)\n        '(y)'\n    )\n";
        assert_eq!(returned_callees(src, &layout(src), 0..src.len()).unwrap(), ["h"]);
        let src = "def f(n):\n    return f'{n}' \\\n        ('(')\n";
        assert_eq!(returned_callees(src, &layout(src), 0..src.len()), None);
        // A callee the bytes do not name: unknown.
        for src in [
            "def f(k):\n    return {'a': g, 'b': h}[k](1)\n",
            "def f():\n    return g()(1)\n",
            "def f():\n    return d['k'](1)\n",
            "def f():\n    return (\n        g\n        (1))\n",
            // A field holding its f-string's own quote: the strings of the
            // line cannot be vouched for, so the `(` counts as code.
            "def f(d):\n    return f\"{d[\"k\"]} (a)\"\n",
        ] {
            assert_eq!(returned_callees(src, &layout(src), 0..src.len()), None, "{src}");
        }
    }

    #[test]
    fn reads_definitions_with_decorators_headers_and_bodies() {
        let src = "import x\n@tool\n@other(a=1)\ndef f(a: int = {'k': 1}) -> dict:\n    '''doc\nat column 0'''\n    return {}\n\n# c\nasync def g(): return 1\nclass K(Base):\n    def m(self):\n        pass\nx: int = 1\n";
        let defs = definitions(src).unwrap();
        let got: Vec<(&str, &str, bool)> =
            defs.iter().map(|d| (d.name.as_str(), &src[d.range.clone()], d.class)).collect();
        assert_eq!(
            got,
            [
                (
                    "f",
                    "@tool\n@other(a=1)\ndef f(a: int = {'k': 1}) -> dict:\n    '''doc\nat column 0'''\n    return {}\n\n# c\n",
                    false
                ),
                ("g", "async def g(): return 1\n", false),
                ("K", "class K(Base):\n    def m(self):\n        pass\n", true),
            ]
        );
        assert_eq!(&src[defs[0].body.clone()], "\n    '''doc\nat column 0'''\n    return {}\n\n# c\n");
        let members: Vec<(&str, &str)> =
            defs[2].members.iter().map(|d| (d.name.as_str(), &src[d.range.clone()])).collect();
        assert_eq!(members, [("m", "def m(self):\n        pass\n")]);
    }

    #[test]
    fn reads_methods_only_in_a_consistently_indented_class() {
        let src = "class K:\n    x = 1\n    @staticmethod\n    def m():\n        return 1\n\n    async def n(self): pass\nclass T:\n    def m(self): pass\n\tdef n(self): pass\n";
        let defs = definitions(src).unwrap();
        let members: Vec<(&str, &str)> =
            defs[0].members.iter().map(|d| (d.name.as_str(), &src[d.range.clone()])).collect();
        assert_eq!(
            members,
            [("m", "    @staticmethod\n    def m():\n        return 1\n\n"), ("n", "    async def n(self): pass\n")]
                .map(|(n, r)| (n, r.trim_start()))
        );
        assert!(defs[1].members.is_empty());
        let outline = Outline::new(src, defs[0].members.iter()).unwrap();
        let tree = outline.parse();
        assert!(!tree.root_node().has_error(), "{}", tree.root_node().to_sexp());
        let kept: Vec<&str> = outline.ranges.iter().map(|r| &outline.text[r.clone()]).collect();
        assert_eq!(kept[1], "\n    async def n(self): 0");
    }

    #[test]
    fn function_ranges_parse_the_functions_alone_with_their_class_headers() {
        let src = "import x\n@deco\nclass K(B):\n    '''doc'''\n    a = 1\n\n    def m(self):\n        return self.a\n    b = 2\n    @staticmethod\n    def n():\n        return 3\nY = 1\ndef f(p):\n    return p\n";
        let defs = definitions(src).unwrap();
        let all = functions(&defs);
        let names: Vec<&str> = all.iter().map(|f| f.def.name.as_str()).collect();
        assert_eq!(names, ["m", "n", "f"]);
        let ranges = function_ranges(src, &[all[1], all[2]]);
        let kept: Vec<&str> = ranges.iter().map(|r| &src[r.clone()]).collect();
        assert_eq!(
            kept,
            [
                "@deco\nclass K(B):",
                "\n    @staticmethod\n    def n():\n        return 3\n",
                "def f(p):\n    return p\n"
            ]
        );
        let tree = crate::syntax::parse_ranges(src, &ranges);
        assert!(!tree.root_node().has_error(), "{}", tree.root_node().to_sexp());
        let both = function_ranges(src, &all[..2]);
        let tree = crate::syntax::parse_ranges(src, &both);
        assert!(!tree.root_node().has_error(), "{}", tree.root_node().to_sexp());
        assert_eq!(tree.root_node().named_child_count(), 1, "one class holds both methods");
        let next = "class C:\n    def a(self):\n        return 1\n    def b(self):\n        return 2\n";
        let defs = definitions(next).unwrap();
        let ranges = function_ranges(next, &functions(&defs));
        assert!(ranges.windows(2).all(|w| w[0].end <= w[1].start), "{ranges:?}");
        let tree = crate::syntax::parse_ranges(next, &ranges);
        assert!(!tree.root_node().has_error(), "{}", tree.root_node().to_sexp());
    }

    #[test]
    fn an_outline_parses_the_rest_and_keeps_offsets() {
        let src = "def f():\n    # lead\n    return {'a': 'é'}\ndef g(): return 2\nclass K:\n    x = 1\n";
        let defs = definitions(src).unwrap();
        let outline = Outline::new(src, defs.iter().filter(|d| !d.class)).unwrap();
        assert_eq!(outline.text.len(), src.len());
        let kept: Vec<&str> = outline.ranges.iter().map(|r| &outline.text[r.clone()]).collect();
        assert_eq!(kept, ["def f():\n    # lead\n    0", "\ndef g(): 0", "\nclass K:\n    x = 1\n"]);
        let tree = outline.parse();
        assert!(!tree.root_node().has_error());
        let k = tree.root_node().named_child(2).unwrap();
        assert_eq!(
            (k.kind_name(), k.start_byte(), k.start_position().row),
            ("class_definition", src.find("class").unwrap(), 4)
        );
    }

    #[test]
    fn gives_up_where_the_lexer_does() {
        assert!(definitions("def f(:\n").is_none());
        assert!(definitions("x = 1\n\x0cdef f(): pass\n").is_none());
    }
}
