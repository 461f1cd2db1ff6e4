//! Trees kept by content, so that a file the project passes ask for again
//! (TS005's tools and the functions their returns call, the reads pass,
//! the second judgement of a file with reads) is parsed once per run.
//!
//! An entry is found by a hash of the text and the ranges, and used only
//! when both are byte-for-byte the same as the ones it was parsed from: a
//! tree is a pure function of them, so a hit is exactly the tree a parse
//! would give. Small parses are not kept (their cost is the parse), and the
//! memo stops growing at [`BUDGET`] bytes of source, text and tree alike.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::ops::Range;
use std::sync::Mutex;

use tree_sitter::Tree;

/// Parses of fewer bytes than this are not kept.
const SMALLEST: usize = 2 * 1024;

/// Bytes the memo keeps at most: each entry's text, plus its parsed bytes
/// times [`TREE_BYTES_PER_BYTE`] for its tree.
const BUDGET: usize = 32 * 1024 * 1024;

/// A rough upper bound of a tree's memory per byte parsed.
const TREE_BYTES_PER_BYTE: usize = 12;

struct Entry {
    text: Box<str>,
    ranges: Box<[Range<usize>]>,
    tree: Tree,
}

#[derive(Default)]
struct Memo {
    entries: HashMap<u64, Vec<Entry>>,
    bytes: usize,
}

static MEMO: Mutex<Option<Memo>> = Mutex::new(None);

fn key(text: &str, ranges: &[Range<usize>]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    ranges.hash(&mut h);
    h.finish()
}

/// The tree of `ranges` of `text` (all of it when `ranges` is empty), from
/// the memo or from `parse`, which is kept for the next ask when the memo
/// has room.
pub(super) fn tree(text: &str, ranges: &[Range<usize>], parse: impl FnOnce() -> Tree) -> Tree {
    let parsed = if ranges.is_empty() { text.len() } else { ranges.iter().map(|r| r.len()).sum() };
    if parsed < SMALLEST {
        return parse();
    }
    let k = key(text, ranges);
    let lock = || MEMO.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(memo) = lock().as_ref() {
        let same = |e: &&Entry| &*e.ranges == ranges && &*e.text == text;
        if let Some(entry) = memo.entries.get(&k).and_then(|es| es.iter().find(same)) {
            return entry.tree.clone();
        }
    }
    let tree = parse();
    let cost = text.len() + parsed * TREE_BYTES_PER_BYTE;
    let mut guard = lock();
    let memo = guard.get_or_insert_with(Memo::default);
    if memo.bytes + cost <= BUDGET {
        memo.bytes += cost;
        memo.entries.entry(k).or_default().push(Entry { text: text.into(), ranges: ranges.into(), tree: tree.clone() });
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_tree_is_used_only_for_the_same_text_and_ranges() {
        let text = format!("x = 1\n{}", "def f():\n    return {'a': 1}\n".repeat(200));
        let other = text.replacen("x = 1", "y = 2", 1);
        let ranges = [6..100, 120..text.len()];
        let parses = std::cell::Cell::new(0);
        let parse = |t: &str| {
            parses.set(parses.get() + 1);
            super::super::parse_uncached(t)
        };
        let first = tree(&text, &[], || parse(&text));
        let again = tree(&text, &[], || parse(&text));
        assert_eq!(first.root_node().to_sexp(), again.root_node().to_sexp());
        assert_eq!(parses.get(), 1, "the second ask of the same text is answered from the memo");
        // The same length, another text: parsed anew.
        let _ = tree(&other, &[], || parse(&other));
        assert_eq!(parses.get(), 2);
        // The same text, other ranges: parsed anew.
        let part = tree(&text, &ranges, || {
            parses.set(parses.get() + 1);
            super::super::parse_ranges_uncached(&text, &ranges)
        });
        assert_eq!(parses.get(), 3);
        assert_eq!(part.root_node().start_byte(), 6);
        // A small text is never kept.
        let _ = tree("x = 1\n", &[], || parse("x = 1\n"));
        let _ = tree("x = 1\n", &[], || parse("x = 1\n"));
        assert_eq!(parses.get(), 5);
    }
}
