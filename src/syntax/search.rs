//! Multi-pattern searches over whole files, for the prefilters that decide
//! which files a pass reads further.
//!
//! An `aho_corasick::AhoCorasick` picks its own prefilter from a table of
//! byte frequencies in ordinary text, where quotes and `t` count as rare; in
//! Python they are everywhere, and `is_match` then stops at each one. A
//! [`Patterns`] answers "does any occur?" with a packed (SIMD) search of
//! the patterns' leading bytes where the patterns allow one, and keeps the
//! automaton for the searches that list every match.

use std::ops::Range;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, BuildError, MatchKind, Span, packed};

/// One literal a pass looks for in many texts, or in many short parts of
/// one (a keyword, a quoted key): kept in a `static`, its `memmem` searcher
/// is built once. `memmem::find_iter` builds one per call, which costs
/// more than searching a display, an import statement or a line.
pub struct Needle {
    literal: &'static str,
    finder: OnceLock<memchr::memmem::Finder<'static>>,
}

impl Needle {
    /// `literal`, to keep in a `static` (`static DEF: Needle = Needle::new("def");`).
    pub const fn new(literal: &'static str) -> Self {
        Needle { literal, finder: OnceLock::new() }
    }

    /// Where the literal starts in `haystack`, left to right, without
    /// overlaps.
    pub fn find_iter<'h>(&'h self, haystack: &'h [u8]) -> impl Iterator<Item = usize> + 'h {
        self.finder.get_or_init(|| memchr::memmem::Finder::new(self.literal.as_bytes())).find_iter(haystack)
    }

    /// The literal.
    pub fn as_str(&self) -> &'static str {
        self.literal
    }
}

/// Literal patterns with a fast [`Patterns::is_match`].
#[derive(Debug, Clone)]
pub struct Patterns {
    automaton: AhoCorasick,
    /// `None` where a packed search cannot be built (too many patterns, or
    /// no SIMD on this machine): the automaton answers.
    packed: Option<packed::Searcher>,
    patterns: Vec<Vec<u8>>,
}

impl Patterns {
    pub fn new<P: AsRef<[u8]>>(patterns: impl IntoIterator<Item = P>) -> Result<Self, BuildError> {
        Self::with_kind(patterns, MatchKind::Standard)
    }

    /// Patterns whose [`Patterns::find_iter`] lists the leftmost match at
    /// each step, the earlier pattern first where two start together.
    pub fn leftmost_first<P: AsRef<[u8]>>(patterns: impl IntoIterator<Item = P>) -> Result<Self, BuildError> {
        Self::with_kind(patterns, MatchKind::LeftmostFirst)
    }

    fn with_kind<P: AsRef<[u8]>>(patterns: impl IntoIterator<Item = P>, kind: MatchKind) -> Result<Self, BuildError> {
        let patterns: Vec<Vec<u8>> = patterns.into_iter().map(|p| p.as_ref().to_vec()).collect();
        let automaton = AhoCorasick::builder().match_kind(kind).build(&patterns)?;
        // An empty pattern matches everywhere; the automaton knows that.
        // (A packed search is leftmost-first, as `find_iter` asks.)
        let packed = if patterns.iter().any(Vec::is_empty) { None } else { packed::Searcher::new(&patterns) };
        Ok(Patterns { automaton, packed, patterns })
    }

    /// The matches of `text`, without overlaps, leftmost first (the
    /// automaton's `find_iter` for [`Patterns::leftmost_first`] patterns).
    pub fn find_iter<'t>(&'t self, text: &'t str) -> impl Iterator<Item = Range<usize>> + 't {
        debug_assert_eq!(self.automaton.match_kind(), MatchKind::LeftmostFirst, "packed searches are leftmost-first");
        let mut at = 0;
        std::iter::from_fn(move || {
            if at > text.len() {
                return None;
            }
            let found = match &self.packed {
                Some(searcher) => searcher.find_in(text, Span::from(at..text.len()))?.range(),
                None => self.automaton.find(aho_corasick::Input::new(text).range(at..))?.range(),
            };
            // An empty match steps on (no packed search has an empty pattern).
            at = if found.is_empty() { found.end + 1 } else { found.end };
            Some(found)
        })
    }

    /// Every occurrence of every pattern in `text`, overlapping ones too,
    /// as (pattern, range), by start and then pattern: the occurrences the
    /// automaton's overlapping search lists (in another order).
    pub fn occurrences<'t>(&'t self, text: &'t str) -> impl Iterator<Item = (usize, Range<usize>)> + 't {
        // Without a packed search, the automaton lists them all (by end).
        let sorted = self.packed.is_none().then(|| {
            let mut found: Vec<(usize, Range<usize>)> =
                self.automaton.find_overlapping_iter(text).map(|m| (m.pattern().as_usize(), m.range())).collect();
            found.sort_by_key(|(p, r)| (r.start, *p));
            found
        });
        // The leftmost match from `at` starts at or before every occurrence
        // after `at`: stepping one byte past each start visits every start
        // that has one, and there every pattern is tried. Listed as found,
        // so that a caller that needs the first stops there.
        let bytes = text.as_bytes();
        let mut at = 0;
        let packed = std::iter::from_fn(move || {
            let searcher = self.packed.as_ref()?;
            if at >= text.len() {
                return None;
            }
            let start = searcher.find_in(text, Span::from(at..text.len()))?.start();
            at = start + 1;
            let here = self.patterns.iter().enumerate().filter(move |(_, pattern)| bytes[start..].starts_with(pattern));
            Some(here.map(move |(p, pattern)| (p, start..start + pattern.len())))
        })
        .flatten();
        sorted.into_iter().flatten().chain(packed)
    }

    /// Whether any pattern occurs in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        match &self.packed {
            Some(searcher) => searcher.find(text).is_some(),
            None => self.automaton.is_match(text),
        }
    }

    /// Whether any pattern occurs in `text` as a whole name: with no byte
    /// of a name right before or after it (an ASCII letter, digit or `_`,
    /// or any byte of a non-ASCII character: outside strings and comments,
    /// Python code has those only in names). Code can refer to a function
    /// only by spelling its name, so a file where `ok` stands only inside
    /// `token` and `hook` cannot call a builder `ok`.
    pub fn is_name_match(&self, text: &str) -> bool {
        self.name_matches(text).next().is_some()
    }

    /// Where each whole name (see [`Patterns::is_name_match`]) of `text`
    /// that is a pattern starts, in order.
    pub fn name_matches<'t>(&'t self, text: &'t str) -> impl Iterator<Item = usize> + 't {
        let bytes = text.as_bytes();
        let in_name = |at: usize| bytes.get(at).is_some_and(|&b| super::lexer::is_ident_byte(b));
        // Most files hold none: the quick look says so first. Overlapping:
        // `ok` inside `tok` must not hide a whole `tok`; no two whole names
        // overlap, so the order of their ends is that of their starts.
        let any = self.is_match(text);
        any.then(|| self.occurrences(text)).into_iter().flatten().filter_map(move |(_, m)| {
            (!m.start.checked_sub(1).is_some_and(in_name) && !in_name(m.end)).then_some(m.start)
        })
    }

    /// The automaton, for the searches that list matches.
    pub fn automaton(&self) -> &AhoCorasick {
        &self.automaton
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quick_answer_is_the_automatons() {
        let patterns = ["\"error\"", "'error'", "tool_result", "ToolResult", "x"];
        let texts = [
            "",
            "x",
            "error = 'errors'",
            "d['error']",
            "r = {\"error\": 1}",
            "def f(tool_results): pass",
            "a = 'ToolResul' + 't'",
            &"y = 'err' + \"or\"\n".repeat(300),
            &format!("{}tool_result", "z = 1\n".repeat(500)),
        ];
        for set in [&patterns[..4], &patterns[..], &patterns[4..]] {
            let searched = Patterns::new(set).expect("literal patterns");
            assert!(searched.packed.is_some(), "a packed search is built here");
            for text in texts {
                assert_eq!(searched.is_match(text), searched.automaton().is_match(text), "{set:?} in {text:?}");
            }
        }
        // Whole names only.
        let names = Patterns::new(["ok", "tok"]).expect("names");
        for (text, whole) in [
            ("token = hook(book)", false),
            ("return ok(x)", true),
            ("r = common.ok", true),
            ("tok()", true),
            ("stok = okay = ok_ = _ok", false),
            ("ok", true),
            ("é_ok = 1; okà = 2", false),
            ("x=ok\n", true),
        ] {
            assert_eq!(names.is_name_match(text), whole, "{text:?}");
        }
        let empty: [&str; 0] = [];
        assert!(Patterns::new(empty).expect("no pattern").occurrences("abc").next().is_none());
        assert!(!Patterns::new(empty).expect("no pattern").is_match("abc"));
        assert!(Patterns::new([""]).expect("an empty pattern").is_match("abc"));
    }

    /// Texts where patterns overlap, nest, share a start or a quote.
    fn overlapping_texts() -> Vec<String> {
        let mut texts: Vec<String> = [
            "",
            "tool_resultoolResult ToolResultool_result",
            "x[\"a\"b\"] = 'a' \"a\"\"ab\" 'a\"b'",
            "ToolCallEventToolInvocationEventtool_result",
            "okokay tok ok_ okay",
        ]
        .map(String::from)
        .to_vec();
        texts.push("\"ab\"'a' tool_result\n".repeat(700));
        texts
    }

    #[test]
    fn every_occurrence_is_the_overlapping_searchs() {
        let sets: [&[&str]; 4] = [
            &["\"a\"", "'a'", "\"a\"b\"", "'a\"b'", "\"ab\"", "'ab'"],
            &["tool_result", "toolResult", "ToolResult", "ToolCallEvent", "ToolInvocationEvent"],
            &["ok", "okay", "tok", "k"],
            &["a"],
        ];
        for set in sets {
            let searched = Patterns::new(set).expect("literal patterns");
            for text in overlapping_texts() {
                let mut expected: Vec<(usize, std::ops::Range<usize>)> = searched
                    .automaton()
                    .find_overlapping_iter(&text)
                    .map(|m| (m.pattern().as_usize(), m.range()))
                    .collect();
                expected.sort_by_key(|(p, r)| (r.start, *p));
                assert_eq!(searched.occurrences(&text).collect::<Vec<_>>(), expected, "{set:?} in {text:?}");
            }
        }
    }

    #[test]
    fn leftmost_first_matches_are_the_automatons() {
        // No marker holds another: the standard search (the earliest end)
        // and the leftmost-first one find the same matches.
        let markers = ["tool_result", "toolResult", "ToolResult", "ToolCallEvent", "ToolInvocationEvent"];
        let leftmost = Patterns::leftmost_first(markers).expect("literal patterns");
        let standard = AhoCorasick::new(markers).expect("literal patterns");
        for text in overlapping_texts() {
            let found: Vec<_> = leftmost.find_iter(&text).collect();
            assert_eq!(found, leftmost.automaton().find_iter(&text).map(|m| m.range()).collect::<Vec<_>>());
            assert_eq!(found, standard.find_iter(&text).map(|m| m.range()).collect::<Vec<_>>(), "{text:?}");
        }
        // With an empty pattern, every position matches once.
        let empty = Patterns::leftmost_first(["x", ""]).expect("literal patterns");
        assert_eq!(empty.find_iter("ab").collect::<Vec<_>>(), [0..0, 1..1, 2..2]);
    }
}
