//! Python string-literal semantics: prefixes, quotes and escape decoding.
//!
//! This module answers one question exactly as CPython does: given the source
//! text of a single string literal token (prefix, quotes and body), what kind of
//! literal is it and, for a plain `str` constant, what value does it have?
//! Implicit concatenation is handled by [`concat_constant`]. The lexer and the
//! contract both rely on it, so a key such as `"st\x61tus"` or `"sta" "tus"` is
//! `"status"` everywhere in toolshape.

/// What a string literal token evaluates to, as far as the contract cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiteralKind {
    /// A plain (possibly raw or `u`-prefixed) string constant.
    Str,
    /// A bytes literal (`b"..."`): never a constant string key.
    Bytes,
    /// An f-string or t-string: not a constant.
    Formatted,
}

/// The parts of a string literal token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiteralToken<'a> {
    pub kind: LiteralKind,
    pub raw: bool,
    /// The prefix letters as written (`rb`, `F`, ...).
    pub prefix: &'a str,
    /// The quote as written: `'`, `"`, `'''` or `"""`.
    pub quote: &'a str,
    /// The text between the quotes, undecoded.
    pub body: &'a str,
}

/// Classifies a prefix (case-insensitive). `None` when it is not a valid
/// Python 3 string prefix.
pub fn prefix_kind(prefix: &str) -> Option<(LiteralKind, bool)> {
    let mut raw = false;
    let mut bytes = false;
    let mut formatted = false;
    let mut unicode = false;
    for c in prefix.chars() {
        let flag = match c.to_ascii_lowercase() {
            'r' => &mut raw,
            'b' => &mut bytes,
            'f' | 't' => &mut formatted,
            'u' => &mut unicode,
            _ => return None,
        };
        if *flag {
            return None;
        }
        *flag = true;
    }
    let combos = [bytes && formatted, unicode && (raw || bytes || formatted)];
    if combos.iter().any(|&bad| bad) || prefix.len() > 2 {
        return None;
    }
    let kind = if bytes {
        LiteralKind::Bytes
    } else if formatted {
        LiteralKind::Formatted
    } else {
        LiteralKind::Str
    };
    Some((kind, raw))
}

/// Splits a single literal token's text into prefix, quote and body.
/// Returns `None` if the text is not a complete string literal token.
pub fn split_token(text: &str) -> Option<LiteralToken<'_>> {
    let quote_at = text.find(['\'', '"'])?;
    let (prefix, rest) = text.split_at(quote_at);
    let (kind, raw) = prefix_kind(prefix)?;
    let q = &rest[..1];
    let triple = rest.len() >= 6 && rest.as_bytes()[1] == q.as_bytes()[0] && rest.as_bytes()[2] == q.as_bytes()[0];
    let quote = if triple { &rest[..3] } else { q };
    if rest.len() < 2 * quote.len() || !rest.ends_with(quote) {
        return None;
    }
    let body = &rest[quote.len()..rest.len() - quote.len()];
    Some(LiteralToken { kind, raw, prefix, quote, body })
}

/// Decodes a `str` literal body (newlines normalized, escapes processed unless
/// `raw`). Returns `None` where CPython would reject the literal (a truncated
/// `\x`, an unknown `\N{...}` name, an out-of-range `\U`).
pub fn decode_body(body: &str, raw: bool) -> Option<String> {
    let normalized;
    let body = if body.contains('\r') {
        normalized = body.replace("\r\n", "\n").replace('\r', "\n");
        normalized.as_str()
    } else {
        body
    };
    if raw || !body.contains('\\') {
        return Some(body.to_owned());
    }
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            // A lone trailing backslash cannot end a valid literal body.
            return None;
        };
        match e {
            '\n' => {}
            '\\' | '\'' | '"' => out.push(e),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '0'..='7' => {
                let mut value = e.to_digit(8)?;
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(value)?);
            }
            'x' => out.push(hex_escape(&mut chars, 2)?),
            'u' => out.push(hex_escape(&mut chars, 4)?),
            'U' => out.push(hex_escape(&mut chars, 8)?),
            'N' => {
                if chars.next() != Some('{') {
                    return None;
                }
                let mut name = String::new();
                loop {
                    match chars.next()? {
                        '}' => break,
                        ch => name.push(ch),
                    }
                }
                out.push(unicode_names2::character(&name)?);
            }
            other => {
                // Unknown escapes are kept verbatim (CPython warns, but accepts).
                out.push('\\');
                out.push(other);
            }
        }
    }
    Some(out)
}

fn hex_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, digits: usize) -> Option<char> {
    let mut value: u32 = 0;
    for _ in 0..digits {
        value = value * 16 + chars.next()?.to_digit(16)?;
    }
    // Lone surrogates are valid in Python strings but not in Rust's; no
    // contract key can contain one, so the value simply never matches.
    char::from_u32(value).or(Some('\u{FFFD}'))
}

/// The value of one literal token if it is a `str` constant.
pub fn str_constant(token_text: &str) -> Option<String> {
    let token = split_token(token_text)?;
    match token.kind {
        LiteralKind::Str => decode_body(token.body, token.raw),
        _ => None,
    }
}

/// The value of an implicit concatenation of literal tokens, if every part is
/// a `str` constant (one f-string part makes the whole a JoinedStr, one bytes
/// part a bytes constant or an error: neither is a constant string key).
pub fn concat_constant<'a>(parts: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut value = String::new();
    for part in parts {
        value.push_str(&str_constant(part)?);
    }
    Some(value)
}

/// What a byte-level look at source text finds outside code: a comment or
/// a string literal (its quotes; a prefix stays with the code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Quoted {
    Comment(std::ops::Range<usize>),
    String(std::ops::Range<usize>),
}

/// The comments and string literals of `src`, read from a place outside
/// any string, in order; and whether a string is still open at the end
/// (then what follows its opening cannot be vouched for). A byte look for
/// quick questions, not a lexer: f-string fields are read as string text.
pub fn quoted_spans(src: &[u8]) -> (Vec<Quoted>, bool) {
    let mut out = Vec::new();
    let mut at = 0;
    // Each step jumps to the next byte that can matter (`memchr`): outside
    // strings a `#` or a quote, inside one a backslash, its quote or (for
    // a one-line string) a line break.
    while let Some(i) = memchr::memchr3(b'#', b'"', b'\'', &src[at..]) {
        at += i;
        if src[at] == b'#' {
            let end = memchr::memchr(b'\n', &src[at..]).map_or(src.len(), |i| at + i);
            out.push(Quoted::Comment(at..end));
            at = end;
            continue;
        }
        let (start, quote) = (at, src[at]);
        let triple = src[at..].starts_with(&[quote; 3]);
        let width = if triple { 3 } else { 1 };
        at += width;
        let mut closed = false;
        while at < src.len() {
            let next = match triple {
                true => memchr::memchr2(b'\\', quote, &src[at..]),
                false => memchr::memchr3(b'\\', quote, b'\n', &src[at..]),
            };
            let Some(i) = next else {
                at = src.len();
                break;
            };
            at += i;
            match src[at] {
                b'\\' => at += 2,
                b'\n' => break,
                _ if !triple || src[at..].starts_with(&[quote; 3]) => {
                    at += width;
                    closed = true;
                    break;
                }
                _ => at += 1,
            }
        }
        let end = at.min(src.len());
        out.push(Quoted::String(start..end));
        if !closed && end == src.len() {
            return (out, true);
        }
        at = end;
    }
    (out, false)
}

/// The comments and string literals of one statement `src` (read from its
/// start, which stands outside any string), each a range from its `#` or
/// opening quote to its end, when the byte look of [`quoted_spans`] can
/// vouch for them. It cannot, and this is `None`, when a string is left
/// open or an f-string's (or t-string's) replacement fields do not close
/// inside it: since Python 3.12 a field may hold the f-string's own quote
/// (`f"{d["k"]}"`), which the byte look reads as the string's end.
pub fn vouched_quoted_spans(src: &[u8]) -> Option<Vec<std::ops::Range<usize>>> {
    let (spans, open) = quoted_spans(src);
    if open {
        return None;
    }
    let mut out = Vec::with_capacity(spans.len());
    for span in spans {
        let range = match span {
            Quoted::Comment(range) => range,
            Quoted::String(range) => {
                let (text, quote) = (&src[range.clone()], src[range.start]);
                let width = if text.starts_with(&[quote; 3]) { 3 } else { 1 };
                // Closed by its own quote, not an escaped one (a one-line
                // string a line break cut is not closed).
                if text.len() < 2 * width || !text.ends_with(&[quote; 3][..width]) {
                    return None;
                }
                let body = &text[width..text.len() - width];
                if body.iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1 {
                    return None;
                }
                // The prefix: the name bytes right before the quote.
                let prefix_start =
                    src[..range.start].iter().rposition(|&b| !super::lexer::is_ident_byte(b)).map_or(0, |i| i + 1);
                let prefix = std::str::from_utf8(&src[prefix_start..range.start]).unwrap_or("");
                let formatted = matches!(prefix_kind(prefix), Some((LiteralKind::Formatted, _)));
                if formatted && !fields_close(body) {
                    return None;
                }
                range
            }
        };
        out.push(range);
    }
    Some(out)
}

/// Whether every replacement field of an f-string's `body` (between its
/// quotes) closes inside it, its braces nested; `{{` and `}}` outside a
/// field are literal braces.
fn fields_close(body: &[u8]) -> bool {
    let mut depth = 0usize;
    let mut i = 0;
    while i < body.len() {
        match (body[i], depth) {
            (b'{' | b'}', 0) if body.get(i + 1) == Some(&body[i]) => i += 1,
            (b'{', _) => depth += 1,
            (b'}', 0) => return false,
            (b'}', _) => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    depth == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_spans_are_vouched_for_unless_a_field_or_string_stays_open() {
        fn spans(src: &str) -> Option<Vec<&str>> {
            vouched_quoted_spans(src.as_bytes()).map(|v| v.into_iter().map(|r| &src[r]).collect())
        }
        assert_eq!(spans("return g('(a)') # (b)\n"), Some(vec!["'(a)'", "# (b)"]));
        assert_eq!(
            spans("return f\"{x} ({y!r:{w}}) {{(}}\" + rb'('\n"),
            Some(vec!["\"{x} ({y!r:{w}}) {{(}}\"", "'('"])
        );
        assert_eq!(spans("return f'{d[\"k\"]}', \"\"\"(\n)\"\"\"\n"), Some(vec!["'{d[\"k\"]}'", "\"\"\"(\n)\"\"\""]));
        // A field holding the f-string's own quote (Python 3.12), a field
        // closing nothing, a string left open: no vouching.
        assert_eq!(spans("return f\"{d[\"k\"]} (a)\"\n"), None);
        assert_eq!(spans("return F'}('\n"), None);
        assert_eq!(spans("return '(a\n"), None);
        assert_eq!(spans("return '(a\\'\n"), None);
        assert_eq!(spans("return \"\"\"(a\n"), None);
        // A plain string's braces are text.
        assert_eq!(spans("return '{('\n"), Some(vec!["'{('"]));
    }

    /// [`quoted_spans`] as a state machine that looks at every byte: the
    /// reference its jumps must agree with.
    fn quoted_spans_bytewise(src: &[u8]) -> (Vec<Quoted>, bool) {
        let mut out = Vec::new();
        // The string being read: where it starts, its quote, whether triple.
        let mut open: Option<(usize, u8, bool)> = None;
        let mut i = 0;
        while i < src.len() {
            let b = src[i];
            match open {
                None if b == b'#' => {
                    let stop = src[i..].iter().position(|&c| c == b'\n').map_or(src.len(), |n| i + n);
                    out.push(Quoted::Comment(i..stop));
                    i = stop;
                }
                None if b == b'"' || b == b'\'' => {
                    let three = src[i..].starts_with(&[b; 3]);
                    open = Some((i, b, three));
                    i += if three { 3 } else { 1 };
                }
                None => i += 1,
                Some(_) if b == b'\\' => i += 2,
                Some((from, _, false)) if b == b'\n' => {
                    out.push(Quoted::String(from..i));
                    open = None;
                }
                Some((from, q, three)) if b == q && (!three || src[i..].starts_with(&[q; 3])) => {
                    i += if three { 3 } else { 1 };
                    out.push(Quoted::String(from..i));
                    open = None;
                }
                Some(_) => i += 1,
            }
        }
        match open {
            Some((from, _, _)) => {
                out.push(Quoted::String(from..src.len()));
                (out, true)
            }
            None => (out, false),
        }
    }

    #[test]
    fn quoted_spans_agree_with_a_bytewise_reading() {
        // Every text of up to 7 bytes over the bytes that matter, and
        // longer pseudo-random ones.
        let alphabet = b"#\"'\\\na ";
        let mut texts: Vec<Vec<u8>> = vec![Vec::new()];
        let mut level: Vec<Vec<u8>> = vec![Vec::new()];
        for _ in 0..7 {
            level = level.iter().flat_map(|t| alphabet.iter().map(move |&b| [t.as_slice(), &[b]].concat())).collect();
            texts.extend(level.iter().cloned());
        }
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            let len = (seed % 64) as usize;
            let text: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    alphabet[(seed % alphabet.len() as u64) as usize]
                })
                .collect();
            texts.push(text);
        }
        for text in &texts {
            assert_eq!(quoted_spans(text), quoted_spans_bytewise(text), "{:?}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn prefixes_follow_python() {
        for ok in ["", "r", "R", "u", "U", "b", "Br", "rB", "f", "Rf", "fR", "t"] {
            assert!(prefix_kind(ok).is_some(), "{ok}");
        }
        for bad in ["ur", "bu", "fb", "rr", "x", "bf", "rbf"] {
            assert!(prefix_kind(bad).is_none(), "{bad}");
        }
        assert_eq!(prefix_kind("rb"), Some((LiteralKind::Bytes, true)));
        assert_eq!(prefix_kind("F"), Some((LiteralKind::Formatted, false)));
    }

    #[test]
    fn decodes_like_cpython() {
        let cases = [
            (r#""status""#, Some("status")),
            (r#"'st\x61tus'"#, Some("status")),
            (r#""st\u0061tus""#, Some("status")),
            (r#""st\U00000061tus""#, Some("status")),
            (r#""st\141tus""#, Some("status")),
            (r#""st\N{LATIN SMALL LETTER A}tus""#, Some("status")),
            ("'''status'''", Some("status")),
            (r#"r"st\x61tus""#, Some(r"st\x61tus")),
            (r#"U"status""#, Some("status")),
            ("\"sta\\\ntus\"", Some("status")),
            ("\"sta\\\r\ntus\"", Some("status")),
            (r#""a\d""#, Some(r"a\d")),
            (r#""\x6""#, None),
            (r#"b"status""#, None),
            (r#"f"status""#, None),
            (r#""\N{NO SUCH NAME}""#, None),
            ("'''a\r\nb'''", Some("a\nb")),
        ];
        for (text, want) in cases {
            assert_eq!(str_constant(text).as_deref(), want, "{text}");
        }
    }

    #[test]
    fn concatenation_requires_all_str_parts() {
        assert_eq!(concat_constant(["\"sta\"", "'tus'"]).as_deref(), Some("status"));
        assert_eq!(concat_constant(["\"sta\"", "f'tus'"]), None);
        assert_eq!(concat_constant(["b\"sta\"", "b'tus'"]), None);
    }
}
