//! Multi-pattern searches over whole files, for the prefilters that decide
//! which files a pass reads further.
//!
//! An `aho_corasick::AhoCorasick` picks its own prefilter from a table of
//! byte frequencies in ordinary text, where quotes and `t` count as rare; in
//! Python they are everywhere, and `is_match` then stops at each one. A
//! [`Patterns`] answers "does any occur?" with a packed (SIMD) search of
//! the patterns' leading bytes where the patterns allow one, and keeps the
//! automaton for the searches that list every match.

use aho_corasick::{AhoCorasick, BuildError, packed};

/// Literal patterns with a fast [`Patterns::is_match`].
#[derive(Debug, Clone)]
pub struct Patterns {
    automaton: AhoCorasick,
    /// `None` where a packed search cannot be built (too many patterns, or
    /// no SIMD on this machine): the automaton answers.
    packed: Option<packed::Searcher>,
}

impl Patterns {
    pub fn new<P: AsRef<[u8]>>(patterns: impl IntoIterator<Item = P>) -> Result<Self, BuildError> {
        let patterns: Vec<Vec<u8>> = patterns.into_iter().map(|p| p.as_ref().to_vec()).collect();
        let automaton = AhoCorasick::new(&patterns)?;
        // An empty pattern matches everywhere; the automaton knows that.
        let packed = if patterns.iter().any(Vec::is_empty) { None } else { packed::Searcher::new(&patterns) };
        Ok(Patterns { automaton, packed })
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
        any.then(|| self.automaton.find_overlapping_iter(text)).into_iter().flatten().filter_map(move |m| {
            (!m.start().checked_sub(1).is_some_and(in_name) && !in_name(m.end())).then_some(m.start())
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
        assert!(!Patterns::new(empty).expect("no pattern").is_match("abc"));
        assert!(Patterns::new([""]).expect("an empty pattern").is_match("abc"));
    }
}
