//! Suppression comments: `# toolshape: ignore`, `# toolshape: ignore[TS001]`
//! and ruff-style `# noqa` / `# noqa: TS001` on a dict's first line or on an
//! entry's line silence those findings (and keep `fix` away from them).
//! Which suppressions silence nothing is TS100's to find
//! ([`crate::rules::unused_suppressions`]).

use std::cell::{Cell, RefCell};

use crate::diagnostics::Code;

/// What a line's comment suppresses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Suppression {
    #[default]
    Nothing,
    Everything,
    Codes(Vec<Code>),
}

impl Suppression {
    pub fn covers(&self, code: Code) -> bool {
        match self {
            Suppression::Nothing => false,
            Suppression::Everything => true,
            Suppression::Codes(codes) => codes.contains(&code),
        }
    }

    /// Both suppressions at once.
    pub fn union(self, other: Suppression) -> Suppression {
        match (self, other) {
            (Suppression::Everything, _) | (_, Suppression::Everything) => Suppression::Everything,
            (Suppression::Nothing, s) | (s, Suppression::Nothing) => s,
            (Suppression::Codes(mut a), Suppression::Codes(b)) => {
                a.extend(b);
                Suppression::Codes(a)
            }
        }
    }
}

fn parse_codes(list: &str) -> Vec<Code> {
    list.split([',', ' ']).filter_map(|c| c.trim().parse().ok()).collect()
}

/// The suppression written in the tail of a line (from some code position to
/// the line's end). A `#` inside a string on that line can mislead it, as
/// ruff's noqa detection can: suppressions are meant for comments.
pub fn in_line_tail(tail: &str) -> Suppression {
    let mut result = Suppression::Nothing;
    for (at, _) in tail.match_indices('#') {
        let comment = tail[at + 1..].trim_start();
        let lower = comment.to_ascii_lowercase();
        if let Some(rest) = lower.strip_prefix("toolshape:") {
            let rest = rest.trim_start();
            if let Some(args) = rest.strip_prefix("ignore") {
                let args = args.trim_start();
                result = result.union(match args.strip_prefix('[').and_then(|a| a.split_once(']')) {
                    Some((list, _)) => Suppression::Codes(parse_codes(&list.to_ascii_uppercase())),
                    None => Suppression::Everything,
                });
            }
        } else if let Some(rest) = lower.strip_prefix("noqa") {
            let rest = rest.trim_start();
            result = result.union(match rest.strip_prefix(':') {
                Some(list) => Suppression::Codes(parse_codes(&list.to_ascii_uppercase())),
                None => Suppression::Everything,
            });
        }
    }
    result
}

/// The suppression comment in the rest of the line from `pos` (a place
/// outside any string: an entry's or a dict's start).
pub fn line_suppression(src: &str, pos: usize) -> Suppression {
    read_from(src, pos).0
}

/// [`line_suppression`] of `pos`, and how far on its answer holds: to the
/// comment's `#`, or to the line's end when the line has no comment past
/// `pos` (every place in between outside a string reads the same). `None`
/// when the reading cannot be vouched for.
fn read_from(src: &str, pos: usize) -> (Suppression, Option<usize>) {
    let rest = &src[pos..];
    // No `#` before the line ends: nothing to read (one scan of the tail).
    match memchr::memchr3(b'\n', b'\r', b'#', rest.as_bytes()) {
        Some(at) if rest.as_bytes()[at] == b'#' => {}
        Some(at) => return (Suppression::Nothing, Some(pos + at)),
        None => return (Suppression::Nothing, Some(src.len())),
    }
    let end = memchr::memchr2(b'\n', b'\r', rest.as_bytes()).unwrap_or(rest.len());
    let tail = &rest[..end];
    match comment_of(tail) {
        Some(Some(comment)) => (in_line_tail(comment), Some(pos + tail.len() - comment.len())),
        Some(None) => (Suppression::Nothing, Some(pos + end)),
        // A string still open at the end (or `pos` inside an f-string's
        // field): every `#` of the tail may start the comment.
        None => (in_line_tail(tail), None),
    }
}

/// The line tails of a text (from a place outside any string to the
/// line's end) read for suppressions, with a memory of the last searches:
/// the next stop (line break or `#`) found from a place is the next stop of
/// every place up to it, and a comment read from a place is the comment of
/// every place up to its `#`. Many questions about one line (each entry of
/// every dict on a megabyte line) then cost one scan of it, not one each.
pub struct LineTails<'s> {
    src: &'s str,
    /// (where the last search started, the stop it found).
    last: Cell<(usize, usize)>,
    /// (where the last reading started, how far it holds, what it read).
    read: RefCell<Option<(usize, usize, Suppression)>>,
    /// (the last range asked about, whether it may hold a suppression).
    claims: RefCell<Option<(std::ops::Range<usize>, bool)>>,
}

impl<'s> LineTails<'s> {
    pub fn new(src: &'s str) -> Self {
        LineTails { src, last: Cell::new((usize::MAX, 0)), read: RefCell::new(None), claims: RefCell::new(None) }
    }

    /// The first line break or `#` at or after `pos` (the text's length:
    /// none).
    fn stop(&self, pos: usize) -> usize {
        let (from, found) = self.last.get();
        if from <= pos && pos <= found {
            return found;
        }
        let rest = self.src.as_bytes().get(pos..).unwrap_or_default();
        let found = pos + memchr::memchr3(b'\n', b'\r', b'#', rest).unwrap_or(rest.len());
        self.last.set((pos, found));
        found
    }

    /// [`line_suppression`] of `pos`, without a scan when the line holds no
    /// `#` past it.
    pub fn suppression(&self, pos: usize) -> Suppression {
        if self.src.as_bytes().get(self.stop(pos)) != Some(&b'#') {
            return Suppression::Nothing;
        }
        if let Some((from, upto, read)) = &*self.read.borrow()
            && *from <= pos
            && pos <= *upto
        {
            return read.clone();
        }
        let (read, holds) = read_from(self.src, pos);
        *self.read.borrow_mut() = holds.map(|upto| (pos, upto, read.clone()));
        read
    }

    /// Whether `range` of the text may hold a suppression comment: a `#`,
    /// and `toolshape:` or `noqa` in any case (a byte look, asked again of
    /// the same range for free).
    pub fn may_suppress_in(&self, range: std::ops::Range<usize>) -> bool {
        if let Some((asked, answer)) = &*self.claims.borrow()
            && *asked == range
        {
            return *answer;
        }
        let bytes = self.src.as_bytes().get(range.clone()).unwrap_or_default();
        let holds = |word: &[u8]| bytes.windows(word.len()).any(|w| w.eq_ignore_ascii_case(word));
        let answer = memchr::memchr(b'#', bytes).is_some() && (holds(b"toolshape:") || holds(b"noqa"));
        *self.claims.borrow_mut() = Some((range, answer));
        answer
    }
}

/// The comment that ends `line` (read from a place outside any string),
/// from its `#` (`Some(None)`: none): a `#` inside a string literal is not
/// one. `None` when a string is still open at the end of the line, so that
/// the reading cannot be vouched for.
pub(crate) fn comment_of(line: &str) -> Option<Option<&str>> {
    use crate::syntax::literal::{Quoted, quoted_spans};
    let (spans, open) = quoted_spans(line.as_bytes());
    match spans.iter().find_map(|s| match s {
        Quoted::Comment(r) => Some(r.start),
        Quoted::String(_) => None,
    }) {
        Some(at) => Some(Some(&line[at..])),
        None if open => None,
        None => Some(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_in_a_string_is_not_a_comment() {
        assert_eq!(line_suppression("\"content\": \"# noqa\"}", 0), Suppression::Nothing);
        assert_eq!(line_suppression("'a\\'# noqa', 'b'}  # noqa", 0), Suppression::Everything);
        let codes = Suppression::Codes(vec![Code::ExtraKey]);
        assert_eq!(line_suppression("\"\"\"# noqa\"\"\", x  # noqa: TS001", 0), codes);
        // Unclosed: not vouched for, so every `#` counts, as before.
        assert_eq!(line_suppression("\"\"\"still open # noqa", 0), Suppression::Everything);
    }

    #[test]
    fn line_tails_agree_with_a_fresh_look_from_every_place() {
        let src = "a = {'x': 1}  # noqa: TS001\r\nb = 1\rc = {'y': 2, 'z': 3}  # toolshape: ignore\n\nd = '#'\n\
                   e = [{'a': '#'}, {'b': 1}, {'c': \"# noqa\"}]  # noqa: TS002 # toolshape: ignore[TS001]\n";
        // The places outside strings (the ones the rules ask about).
        let mut quote = None;
        let outside: Vec<bool> = src
            .bytes()
            .map(|b| {
                let was = quote.is_none();
                match (quote, b) {
                    (None, b'\'' | b'"') => quote = Some(b),
                    (Some(q), _) if q == b => quote = None,
                    _ => {}
                }
                was && quote.is_none()
            })
            .collect();
        let tails = LineTails::new(src);
        // In order, backwards and out of order: the memory never misleads.
        let order: Vec<usize> =
            (0..src.len()).chain((0..src.len()).rev()).chain((0..src.len()).map(|i| i * 7 % src.len())).collect();
        for pos in order {
            if !outside[pos] {
                continue;
            }
            assert_eq!(tails.suppression(pos), line_suppression(src, pos), "at {pos}");
            for end in pos..=src.len() {
                let text = src[pos..end].to_ascii_lowercase();
                let may = text.contains('#') && (text.contains("toolshape:") || text.contains("noqa"));
                assert_eq!(tails.may_suppress_in(pos..end), may, "{pos}..{end}");
            }
        }
    }

    #[test]
    fn every_form_is_read() {
        assert_eq!(in_line_tail("x,  # toolshape: ignore"), Suppression::Everything);
        assert_eq!(in_line_tail("x,  # toolshape: ignore[TS001]"), Suppression::Codes(vec![Code::ExtraKey]));
        assert_eq!(in_line_tail("x,  # noqa: TS002, E501"), Suppression::Codes(vec![Code::Spread]));
        assert_eq!(in_line_tail("x,  # NOQA"), Suppression::Everything);
        assert!(in_line_tail("x,  # per-frame  # toolshape: ignore[TS001,TS002]").covers(Code::Spread));
        assert_eq!(in_line_tail("x,  # just a comment"), Suppression::Nothing);
        assert!(!in_line_tail("x,  # noqa: E501").covers(Code::ExtraKey));
    }
}
