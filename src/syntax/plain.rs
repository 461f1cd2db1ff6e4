//! Tool results that are plainly within the contract and bound to no name,
//! read from bytes: `return {"status": "success", "content": [{"text": f"done {n}"}]}`.
//!
//! Most candidate displays of a real tree are such results, and tree-sitter
//! spends tens of microseconds on each (a dict display costs it about half a
//! microsecond a byte). A display this module vouches for yields no finding
//! of any rule, binds no name (so no key can be added to it later) and holds
//! nothing a result builder is made of, so a check need not parse it. The
//! grammar it accepts is deliberately small; anything else is left to
//! tree-sitter:
//!
//! ```text
//! CONTEXT {  entry ("," entry)* [","]  }
//! CONTEXT = return | yield | ":" | "[" | NAME( | ==        (see `bound_to_no_name`)
//! entry   = "status": STATUS | "content": CONTENT | "toolUseId": (STR | CHAIN)
//! CONTENT = [ element ("," element)* [","] ] | CHAIN
//! element = { "TYPE": VALUE [","] } | CHAIN
//! VALUE   = STR | CHAIN | ( ... ) | [ ... ] | { ... }      (a "text" value: STR or CHAIN)
//! CHAIN   = NAME ("." NAME | ( ... ) | [ ... ])*             (NAME not a keyword)
//! ```
//!
//! with blanks (spaces, tabs, line breaks) anywhere between the pieces, each
//! key at most once, `status` and `content` both present and written
//! nowhere else in the display as a string (so no other shaped dict hides
//! inside), every key and status a plain string literal, `STATUS` one of
//! the statuses the rules accept, `TYPE` one of their block types, and `STR`
//! a one-line string literal without prefix or escape, but for a text
//! block's value, which may be an f-string (whose replacement fields hold no
//! quote or backslash) and hold escapes. A text value that calls a builtin
//! that gives no string (`len(...)`, which TS009 judges) is left to
//! tree-sitter. Nowhere a `*`, a comment, a line continuation, a prefixed
//! string or two strings side by side.

/// What the rules accept, as [`unbound_and_within_contract`] needs it.
#[derive(Debug, Clone, Copy)]
pub struct Contract<'a> {
    pub statuses: &'a [&'a str],
    pub block_types: &'a [&'a str],
    /// The builtins whose call in a text block is judged (TS009).
    pub not_strings: &'a [&'a str],
}

/// Whether the display `display` (its `{` to its `}`), which stands at
/// `at` of `src`, is a tool result plainly within `contract` that no name is
/// bound to (returned, yielded, an argument...).
pub fn unbound_and_within_contract(src: &str, at: usize, display: &str, contract: Contract<'_>) -> bool {
    // A key of another shaped dict inside would be one more of these
    // strings (no string inside a value is concatenated or escaped).
    use super::search::Needle;
    static QUOTED: [[Needle; 2]; 2] =
        [[Needle::new("\"status\""), Needle::new("'status'")], [Needle::new("\"content\""), Needle::new("'content'")]];
    let once =
        |quoted: &[Needle; 2]| quoted.iter().map(|q| q.find_iter(display.as_bytes()).count()).sum::<usize>() == 1;
    bound_to_no_name(src.as_bytes(), at)
        && once(&QUOTED[0])
        && once(&QUOTED[1])
        && !display.contains('*')
        && Reader { bytes: display.as_bytes(), at: 0 }.result(contract)
}

/// Whether the display at `at` of `bytes` stands where no name is bound to
/// it, read from the bytes before it: the value of a `return` or a `yield`
/// (parentheses around it or not), a value after a `:` (a pair's in
/// another display, a lambda's body, a statement after a block's header),
/// an element right after a `[`, an argument right after a call's `(`, or
/// an operand of `==`. An assignment (`=`, `:=`, `|=`), a keyword argument
/// or default, a branch of a conditional expression, an element after a
/// `,`: anything else is left to tree-sitter.
fn bound_to_no_name(bytes: &[u8], at: usize) -> bool {
    if after_keyword(bytes, at, b"return") || after_keyword(bytes, at, b"yield") {
        return true;
    }
    let mut i = at;
    while i > 0 && matches!(bytes[i - 1], b' ' | b'\t' | b'\n' | b'\r') {
        i -= 1;
    }
    match i.checked_sub(1).map(|j| bytes[j]) {
        Some(b':' | b'[') => true,
        // `==`, not `=`, `:=`, `|=`...
        Some(b'=') => i >= 2 && bytes[i - 2] == b'=',
        // A call's parenthesis: after a closing bracket, or a name that is
        // no keyword (`if (`, `else (` group an expression).
        Some(b'(') => {
            let mut j = i - 1;
            while j > 0 && matches!(bytes[j - 1], b' ' | b'\t') {
                j -= 1;
            }
            match j.checked_sub(1).map(|k| bytes[k]) {
                Some(b')' | b']') => true,
                Some(b) if super::lexer::is_ident_byte(b) => {
                    let start = bytes[..j].iter().rposition(|&c| !super::lexer::is_ident_byte(c)).map_or(0, |p| p + 1);
                    let word = &bytes[start..j];
                    !word[0].is_ascii_digit() && !KEYWORDS.iter().any(|k| k.as_bytes() == word)
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// Whether the bytes before `at` are `keyword` and nothing but blanks and
/// opening parentheses (a line break only inside one): the display is the
/// value `keyword` hands on (`return (r := {...})` has `=` there).
fn after_keyword(bytes: &[u8], at: usize, keyword: &[u8]) -> bool {
    let mut i = at;
    let mut open_line = false;
    while i > 0 && matches!(bytes[i - 1], b' ' | b'\t' | b'(' | b'\n' | b'\r') {
        match bytes[i - 1] {
            b'\n' | b'\r' => open_line = true,
            b'(' => open_line = false,
            _ => {}
        }
        i -= 1;
    }
    let n = keyword.len();
    !open_line
        && i >= n
        && &bytes[i - n..i] == keyword
        && (i == n || !super::lexer::is_ident_byte(bytes[i - n - 1]))
        && !super::lexer::is_ident_byte(bytes[i])
}

/// Names a chain may not start with: Python's keywords.
const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

/// A cursor over a display's bytes.
struct Reader<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> Reader<'b> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    /// Takes `b` after blanks.
    fn eat(&mut self, b: u8) -> bool {
        self.blanks();
        let found = self.peek() == Some(b);
        if found {
            self.at += 1;
        }
        found
    }

    /// A one-line string literal after blanks, without prefix: its body,
    /// between the quotes. A `leaf` (a text block's value, which no rule
    /// reads inside) may be an f-string and hold escapes.
    fn string(&mut self, leaf: bool) -> Option<&'b str> {
        self.blanks();
        let bytes: &'b [u8] = self.bytes;
        let formatted = leaf && matches!(self.peek(), Some(b'f' | b'F'));
        let start = self.at + usize::from(formatted);
        let quote = *bytes.get(start).filter(|q| matches!(q, b'"' | b'\''))?;
        let body_start = start + 1;
        // Not empty, nor the start of a triple quote.
        if bytes.get(body_start) == Some(&quote) {
            return None;
        }
        let mut depth = 0usize;
        let mut i = body_start;
        loop {
            let b = *bytes.get(i)?;
            match b {
                b'\n' | b'\r' => return None,
                // An escape, in a leaf's text: never of a brace, never in a
                // replacement field.
                b'\\' if leaf && depth == 0 && !matches!(bytes.get(i + 1), Some(b'{' | b'}') | None) => {
                    i += if bytes[i + 1..].starts_with(b"\r\n") { 2 } else { 1 };
                }
                b'\\' => return None,
                _ if depth == 0 && b == quote => break,
                // A replacement field holds no string.
                b'"' | b'\'' if depth > 0 => return None,
                b'{' if formatted && depth == 0 && bytes.get(i + 1) == Some(&b'{') => i += 1,
                b'}' if formatted && depth == 0 && bytes.get(i + 1) == Some(&b'}') => i += 1,
                b'{' if formatted => depth += 1,
                b'}' if formatted => depth = depth.checked_sub(1)?,
                _ => {}
            }
            i += 1;
        }
        self.at = i + 1;
        std::str::from_utf8(&bytes[body_start..i]).ok()
    }

    /// Whatever stands between an opening bracket (taken) and its `close`:
    /// brackets nest, strings are plain ones and stand alone (no implicit
    /// concatenation), and there is no comment or backslash.
    fn balanced(&mut self, close: u8) -> bool {
        loop {
            match self.peek() {
                None | Some(b'#' | b'\\') => return false,
                Some(b) if b == close => {
                    self.at += 1;
                    return true;
                }
                Some(b'(') => {
                    self.at += 1;
                    if !self.balanced(b')') {
                        return false;
                    }
                }
                Some(b'[') => {
                    self.at += 1;
                    if !self.balanced(b']') {
                        return false;
                    }
                }
                Some(b'{') => {
                    self.at += 1;
                    if !self.balanced(b'}') {
                        return false;
                    }
                }
                Some(b')' | b']' | b'}') => return false,
                Some(b'"' | b'\'') => {
                    let prefixed = self.at > 0 && super::lexer::is_ident_byte(self.bytes[self.at - 1]);
                    if prefixed || self.string(false).is_none() {
                        return false;
                    }
                    self.blanks();
                    if self.peek().is_some_and(|b| matches!(b, b'"' | b'\'') || super::lexer::is_ident_byte(b)) {
                        return false;
                    }
                }
                Some(_) => self.at += 1,
            }
        }
    }

    /// A chain after blanks (`a.b(c)[d]`): its first name, and whether the
    /// chain is that name called, and nothing more.
    fn chain(&mut self) -> Option<(&'b str, bool)> {
        self.blanks();
        let bytes: &'b [u8] = self.bytes;
        let start = self.at;
        let name = |r: &mut Self| {
            if !r.peek().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_') {
                return false;
            }
            while r.peek().is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
                r.at += 1;
            }
            true
        };
        if !name(self) {
            return None;
        }
        let first = std::str::from_utf8(&bytes[start..self.at]).ok()?;
        if KEYWORDS.contains(&first) || matches!(self.peek(), Some(b'"' | b'\'')) {
            return None;
        }
        let (mut links, mut called) = (0, false);
        loop {
            let link = match self.peek() {
                Some(b'.') => {
                    self.at += 1;
                    name(self)
                }
                Some(b'(') => {
                    self.at += 1;
                    called = links == 0;
                    self.balanced(b')')
                }
                Some(b'[') => {
                    self.at += 1;
                    self.balanced(b']')
                }
                _ => return Some((first, called && links == 1)),
            };
            if !link {
                return None;
            }
            links += 1;
        }
    }

    /// `item ("," item)* [","]` then `close`, at least one item.
    fn items(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> bool) -> bool {
        loop {
            if !item(self) {
                return false;
            }
            if self.eat(close) {
                return true;
            }
            if !self.eat(b',') {
                return false;
            }
            if self.eat(close) {
                return true;
            }
        }
    }

    /// The whole display, and nothing after it.
    fn result(&mut self, contract: Contract<'_>) -> bool {
        let (mut status, mut content, mut id) = (false, false, false);
        let whole = self.eat(b'{')
            && self.items(b'}', |r| {
                let Some(key) = r.string(false) else { return false };
                if !r.eat(b':') {
                    return false;
                }
                match key {
                    "status" if !status => {
                        status = true;
                        r.string(false).is_some_and(|s| contract.statuses.contains(&s))
                    }
                    "content" if !content => {
                        content = true;
                        if r.eat(b'[') { r.items(b']', |r| r.element(contract)) } else { r.chain().is_some() }
                    }
                    "toolUseId" if !id => {
                        id = true;
                        r.string(false).is_some() || r.chain().is_some()
                    }
                    _ => false,
                }
            });
        self.blanks();
        whole && status && content && self.at == self.bytes.len()
    }

    /// One element of the content list: a block of one of the block types
    /// (a text block's value a string or a chain that is no call of a
    /// builtin giving no string), or a chain.
    fn element(&mut self, contract: Contract<'_>) -> bool {
        self.blanks();
        if self.peek() != Some(b'{') {
            return self.chain().is_some();
        }
        self.at += 1;
        let Some(kind) = self.string(false) else { return false };
        if !contract.block_types.contains(&kind) || !self.eat(b':') {
            return false;
        }
        let value = if kind == "text" {
            let save = self.at;
            self.string(true).is_some() || {
                self.at = save;
                self.chain().is_some_and(|(name, called)| !(called && contract.not_strings.contains(&name)))
            }
        } else {
            self.value()
        };
        value && (self.eat(b'}') || (self.eat(b',') && self.eat(b'}')))
    }

    /// Any value: a string, a chain, or a bracketed expression.
    fn value(&mut self) -> bool {
        self.blanks();
        match self.peek() {
            Some(open @ (b'(' | b'[' | b'{')) => {
                self.at += 1;
                self.balanced(match open {
                    b'(' => b')',
                    b'[' => b']',
                    _ => b'}',
                })
            }
            Some(b'"' | b'\'') => self.string(false).is_some(),
            _ => self.chain().is_some(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Contract, unbound_and_within_contract};

    const CONTRACT: Contract<'static> = Contract {
        statuses: &["success", "error", "degraded"],
        block_types: &["text", "json", "image", "document", "video"],
        not_strings: &["len", "int", "float", "sum", "round", "dict", "list"],
    };

    /// Whether the result display of `line` (the first that opens with a
    /// key of a result, else the first) is vouched for under `contract`.
    fn plain_under(line: &str, contract: Contract<'_>) -> bool {
        let opens = ["{\"status\"", "{'status'", "{\"toolUseId\""];
        let at = opens.iter().filter_map(|o| line.find(o)).min().or_else(|| line.find('{')).expect("a display");
        // Its closing brace (the lines' strings hold balanced braces).
        let mut depth = 0;
        let end = at
            + line[at..]
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .expect("a closed display")
                .0
            + 1;
        unbound_and_within_contract(line, at, &line[at..end], contract)
    }

    fn plain(line: &str) -> bool {
        plain_under(line, CONTRACT)
    }

    /// Results the grammar reads, each a line of a function body.
    const VOUCHED: [&str; 22] = [
        r#"    return {"status": "success", "content": [{"text": "done"}]}"#,
        r#"    return {'status': 'error', 'content': [{'text': f'failed: {e}'}],}"#,
        r#"    return ({"toolUseId": tool_use.id, "status": "degraded", "content": [{"text": "a"}, {"text": 'b',}]})"#,
        "\treturn {\n        \"status\": \"success\",\n        \"content\": [\n        {\"text\": f\"{n} rows\"},\n        ],\n    }",
        r#"return {"content": [{"text": "x"}], "toolUseId": "t1", "status": "error"}"#,
        r#"    return {"status": "error", "content": [{"text": f"Session '{name}' not found ({n:>{w}}) {{x}}"}]}"#,
        r#"    return {"toolUseId": tool_use["toolUseId"], "status": "error", "content": [{"text": str(e)}]}"#,
        r#"    return {"status": "success", "content": [{"text": json.dumps(r, indent=2)}, {"json": {"a": [1, (2, 3)], "b": "x"}}]}"#,
        r#"    return {"status": "success", "content": [{"text": message}, {"image": img}, block_of(x)]}"#,
        r#"    return {"status": "success", "content": blocks}"#,
        r#"    return {"status": "success", "content": _blocks(task)[0:3]}"#,
        r#"    return {"toolUseId": tool_use_id, "status": "error", "content": exception_content}"#,
        r#"    yield {"status": "success", "content": [{"text": "x"}]}"#,
        r#"    f({"status": "success", "content": [{"text": "x"}]})"#,
        r#"    events.append(ToolResultEvent({"status": "success", "content": [{"text": "x"}]}))"#,
        r#"    msg = {"role": "user", "content": [{"toolResult": {"toolUseId": t, "status": "error", "content": [{"text": "x"}]}}]}"#,
        r#"    assert result == {"status": "success", "content": [{"text": "x"}]}"#,
        r#"    results = [{"status": "success", "content": [{"text": "x"}]}]"#,
        r#"    make = lambda: {"status": "success", "content": [{"text": "x"}]}"#,
        r#"    return {"status": "error", "content": [{"text": f"Issue #{n}:\n{e!r}\t\"{q}\""}, {"text": 'it\'s'}]}"#,
        r#"    return {"status": "success", "content": [{"image": {"format": fmt, "source": {"bytes": content_bytes}}}]}"#,
        "    return (\n        {\"status\": \"success\", \"content\": [{\"text\": msg}]}\n    )",
    ];

    #[test]
    fn plain_returned_results_are_vouched_for() {
        for line in VOUCHED {
            assert!(plain(line), "{line}");
        }
    }

    #[test]
    fn what_it_vouches_for_yields_no_finding_when_parsed() {
        // The claim the check rests on: parsed whole, in a function (or
        // in a tool), none of them gives a finding of any rule.
        let options = crate::check::CheckOptions::new(crate::syntax::ParseScope::WholeFile);
        for line in VOUCHED {
            let body = if line.starts_with(char::is_whitespace) { line.to_owned() } else { format!("    {line}") };
            for header in ["def f(x):\n", "from strands import tool\n\n\n@tool\ndef f(x):\n"] {
                let src = format!("{header}{body}\n");
                let found = crate::check::check_source(&src, &options, &crate::contract::Rules::default());
                assert!(found.is_empty(), "{src}\n{found:?}");
            }
        }
    }

    #[test]
    fn anything_else_is_left_to_the_parser() {
        for line in [
            // Bound to a name, or standing where it may be (a conditional's
            // branch, an operand of `or`, a tuple's element), or not a value.
            r#"    r = {"status": "success", "content": [{"text": "x"}]}"#,
            r#"    return (r := {"status": "success", "content": [{"text": "x"}]})"#,
            r#"    returned = {"status": "success", "content": [{"text": "x"}]}"#,
            r#"    x = y if c else {"status": "success", "content": [{"text": "x"}]}"#,
            r#"    x = y if c else ({"status": "success", "content": [{"text": "x"}]})"#,
            r#"    x = a, {"status": "success", "content": [{"text": "x"}]}"#,
            r#"    r |= {"status": "success", "content": [{"text": "x"}]}"#,
            r#"    f(r={"status": "success", "content": [{"text": "x"}]})"#,
            r#"    x = ({"status": "success", "content": [{"text": "x"}]})"#,
            r#"    yield from {"status": "success", "content": [{"text": "x"}]}"#,
            r#"    x = y or {"status": "success", "content": [{"text": "x"}]}"#,
            // Whatever a rule may judge.
            r#"    return {"status": "ok", "content": [{"text": "x"}]}"#,
            r#"    return {"status": status, "content": [{"text": "x"}]}"#,
            r#"    return {"status": "success", "content": []}"#,
            r#"    return {"status": "success", "content": [{"text": "x"}], "frames": 1}"#,
            r#"    return {"status": "success", "content": [{"text": "x"}], **extra}"#,
            r#"    return {"status": "success", "content": [{"text": 3}]}"#,
            r#"    return {"status": "success", "content": [{"text": len(rows)}]}"#,
            r#"    return {"status": "success", "content": [{"text": None}]}"#,
            r#"    return {"status": "success", "content": [{"text": [x]}]}"#,
            r#"    return {"status": "success", "content": [{"json": {"status": "ok", "content": 1}}]}"#,
            r#"    return {"status": "success", "content": [{"text": "x"}, *more]}"#,
            r#"    return {"status": "success", "content": [{"text": x}], "toolUseId": lambda: 1}"#,
            r#"    return {"status": "success", "content": [{"text": x}], "toolUseId": not_closed(}"#,
            "    return\n    {\"status\": \"success\", \"content\": [{\"text\": \"x\"}]}",
            r#"    return {"status": "success", "content": [{"text": "x", "type": "text"}]}"#,
            r#"    return {"status": "success", "content": [{"sound": {"a": 1}}]}"#,
            r#"    return {"status": "success", "status": "error", "content": [{"text": "x"}]}"#,
            r#"    return {"status": "success"}"#,
            // Strings the grammar does not read.
            r#"    return {"status": "success", "content": [{"text": f"{d['k']}"}]}"#,
            r#"    return {"status": "success", "content": [{"text": rb"x"}]}"#,
            r#"    return {"status": "success", "content": [{"json": g(r"x")}]}"#,
            r#"    return {"status": "success", "content": [{"json": g("a" "b")}]}"#,
            r#"    return {"status": "success", "content": [{"json": g("a\n")}]}"#,
            r#"    return {"status": "success", "content": [{"json": {"status": s, "content": c}}]}"#,
            r#"    return {"status": "success", "content": [{"json": g('content', "status")}]}"#,
            r#"    return {"status": "success", "content": [{"text": f"\{x}"}]}"#,
            r#"    return {"status": "success", "content": [{"text": f"{x!r:\n}"}]}"#,
            r#"    return {"status": "success", "content": [{"json": g(x,  # why
            )}]}"#,
            "    return {\"status\": \"success\", \\\n \"content\": [{\"text\": \"x\"}]}",
            r#"    return {"status": "success", "content": [{"text": """x"""}]}"#,
            r#"    return {u"status": "success", "content": [{"text": "x"}]}"#,
            r#"    return {"status": "success", "content": [{"text": b"x"}]}"#,
            r#"    return {"status": "success", "content": [{"text": "x" "y"}]}"#,
            "    return {\"status\": \"success\", # why\n \"content\": [{\"text\": \"x\"}]}",
        ] {
            assert!(!plain(line), "{line}");
        }
        // The rules decide the statuses and the block types.
        let line = r#"return {"status": "success", "content": [{"text": "x"}]}"#;
        assert!(plain(line));
        assert!(!plain_under(line, Contract { statuses: &["error"], ..CONTRACT }));
        assert!(!plain_under(line, Contract { block_types: &["json"], ..CONTRACT }));
    }
}
