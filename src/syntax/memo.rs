//! Trees, layouts and candidate regions kept by content, so that a file
//! the project passes ask for again (TS005's tools and the functions their
//! returns call, the reads pass, the second judgement of a file with
//! reads) is parsed once, and lexed once, per run.
//!
//! An entry is found by a hash of the text (and the ranges), and used only
//! when both are byte-for-byte the same as the ones it was made from: a
//! tree and a layout are pure functions of them, so a hit is exactly what
//! a parse or a lex would give. A display's tree is kept too (the same
//! display in two files is parsed once: tree-sitter spends tens of
//! microseconds on one), under a budget of its own ([`SMALL_BUDGET`]);
//! small texts are not lexed into the memo (their cost is the work), and
//! the memo stops growing at [`BUDGET`] bytes of source, text and tree
//! alike. A run that checks its projects in batches [`clear`]s the memo
//! between them: no batch asks for another's files.
//!
//! An entry holds its text: the file's own, shared, when a pass [`share`]d
//! it (the texts the project passes keep), else a copy.
//!
//! A kept tree also keeps what is [`derived`] from it (a module's semantic
//! model, built by several passes from the same tree), under a budget of
//! its own ([`DERIVED_BUDGET`]): a value built by a pure function of the
//! tree is as exact as building it again.

use foldhash::HashMap;
use std::any::Any;
use std::hash::{Hash, Hasher};
use std::ops::Range;
use std::sync::{Arc, Mutex};

use tree_sitter::Tree;

use super::lexer::{Candidates, Layout};

/// Texts of fewer bytes than this are small: their layouts are not kept,
/// and the trees of small pieces (not whole files) count against
/// [`SMALL_BUDGET`].
const SMALLEST: usize = 2 * 1024;

/// Bytes the memo keeps at most: each entry's text, plus its tree's nodes
/// times [`TREE_BYTES_PER_NODE`].
const BUDGET: usize = 32 * 1024 * 1024;

/// Bytes the trees of pieces under [`SMALLEST`] (displays parsed alone)
/// may take, apart from [`BUDGET`]: thousands of small trees kept
/// among the ones a run frees cost the allocator far more pages than
/// they hold (a tree per display of a builder-dense corpus tripled its
/// peak memory), so only the first ones are kept.
const SMALL_BUDGET: usize = 4 * 1024 * 1024;

/// Bytes the values [`derived`] from kept trees may take, apart from the
/// trees' budgets: a model kept must not cost a tree its place (a
/// builder-dense project parsed a tenth more when they shared one).
const DERIVED_BUDGET: usize = 16 * 1024 * 1024;

/// A tree's memory per node: 124 to 128 bytes (measured with
/// tree-sitter-python 0.25 on generated tool modules, this project's
/// bench corpus and the stdlib, which hold 52, 27 and 25 bytes of tree per
/// byte of source: a per-byte bound misses by twice either way; a tree of
/// one 100-byte display holds about 4 KB).
const TREE_BYTES_PER_NODE: usize = 128;

struct Entry {
    text: Arc<str>,
    ranges: Box<[Range<usize>]>,
    tree: Tree,
    /// Values [`derived`] from the tree, one of each type.
    derived: Vec<Arc<dyn Any + Send + Sync>>,
}

/// A text with its layout, shared with whoever asks for it.
type Lexed = (Arc<str>, Option<Arc<Layout>>);

/// A file's candidate regions, and the starts of those right inside
/// another display ([`super::lexer::candidates_in_context`]).
pub(super) type CandidatesInContext = (Candidates, Vec<usize>);

#[derive(Default)]
struct Memo {
    entries: HashMap<u64, Vec<Entry>>,
    layouts: HashMap<u64, Vec<Lexed>>,
    /// The candidates of the [`share`]d texts (see [`candidates`]).
    candidates: HashMap<u64, Vec<(Arc<str>, CandidatesInContext)>>,
    bytes: usize,
    /// What the trees of small pieces cost, kept apart (see [`SMALL_BUDGET`]).
    small_bytes: usize,
    /// What the [`derived`] values cost (see [`DERIVED_BUDGET`]).
    derived_bytes: usize,
    /// The texts [`share`]d, by address: an entry made for one of them
    /// holds it instead of a copy.
    shared: HashMap<usize, Arc<str>>,
}

impl Memo {
    /// `text`, to hold in an entry: the shared text it is, or a copy.
    fn own(&self, text: &str) -> Arc<str> {
        match self.shared.get(&(text.as_ptr() as usize)) {
            Some(shared) if shared.len() == text.len() => shared.clone(),
            _ => text.into(),
        }
    }
}

/// Whether `kept` is `text`: the same bytes (the same address and length
/// first, without reading them).
fn same_text(kept: &Arc<str>, text: &str) -> bool {
    (kept.as_ptr() == text.as_ptr() && kept.len() == text.len()) || **kept == *text
}

/// Lets the entries made for `text` hold it instead of a copy, until the
/// memo is [`clear`]ed: a file's text that a pass keeps for the run.
pub(super) fn share(text: &Arc<str>) {
    let mut guard = lock();
    let memo = guard.get_or_insert_with(Memo::default);
    memo.shared.insert(text.as_ptr() as usize, text.clone());
}

/// A rough upper bound of a layout's memory per byte lexed.
const LAYOUT_BYTES_PER_BYTE: usize = 2;

static MEMO: Mutex<Option<Memo>> = Mutex::new(None);

fn lock() -> std::sync::MutexGuard<'static, Option<Memo>> {
    MEMO.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The key of an entry: its length, ranges and a sample of its bytes (a
/// hit is confirmed by comparing the whole text, so the key need only
/// spread the entries; hashing every byte cost more than the lookups saved).
/// foldhash, not SipHash (0.6% of a dense check's instructions went to
/// hashing these samples): entries with one key are told apart by their
/// texts, so a collision costs a comparison, never a wrong tree.
fn key(text: &str, ranges: &[Range<usize>]) -> u64 {
    use std::hash::BuildHasher;
    const SAMPLES: usize = 64;
    let bytes = text.as_bytes();
    let mut h = foldhash::fast::FixedState::default().build_hasher();
    bytes.len().hash(&mut h);
    ranges.hash(&mut h);
    if bytes.len() <= SAMPLES * 8 {
        // A short text (a display, mostly) is hashed whole.
        bytes.hash(&mut h);
        return h.finish();
    }
    let step = bytes.len() / SAMPLES;
    for at in (0..bytes.len()).step_by(step) {
        bytes[at..bytes.len().min(at + 8)].hash(&mut h);
    }
    bytes[bytes.len().saturating_sub(8)..].hash(&mut h);
    h.finish()
}

/// The tree of `ranges` of `text` (all of it when `ranges` is empty), from
/// the memo or from `parse`, which is kept for the next ask when the memo
/// has room. A `piece` is a part of a file parsed alone (a display): a
/// small one counts against [`SMALL_BUDGET`], a whole file never does (the
/// modules of a builder-dense project are small, and each is asked for by
/// several passes).
pub(super) fn tree(text: &str, ranges: &[Range<usize>], piece: bool, parse: impl FnOnce() -> Tree) -> Tree {
    let parsed = if ranges.is_empty() { text.len() } else { ranges.iter().map(|r| r.len()).sum() };
    let small = piece && parsed < SMALLEST;
    let k = key(text, ranges);
    if let Some(memo) = lock().as_ref() {
        let same = |e: &&Entry| &*e.ranges == ranges && same_text(&e.text, text);
        if let Some(entry) = memo.entries.get(&k).and_then(|es| es.iter().find(same)) {
            return entry.tree.clone();
        }
    }
    let tree = parse();
    let cost = text.len() + tree.root_node().descendant_count() * TREE_BYTES_PER_NODE;
    let mut guard = lock();
    let memo = guard.get_or_insert_with(Memo::default);
    let (bytes, budget) = if small { (&mut memo.small_bytes, SMALL_BUDGET) } else { (&mut memo.bytes, BUDGET) };
    if *bytes + cost <= budget {
        *bytes += cost;
        let entry = Entry { text: memo.own(text), ranges: ranges.into(), tree: tree.clone(), derived: Vec::new() };
        memo.entries.entry(k).or_default().push(entry);
    }
    tree
}

/// Whether the memo keeps the tree of all of `text`: a pass about a part
/// of the file then asks for that tree instead of parsing the part again.
pub(super) fn keeps_whole(text: &str) -> bool {
    let k = key(text, &[]);
    lock().as_ref().is_some_and(|memo| {
        memo.entries.get(&k).is_some_and(|es| es.iter().any(|e| e.ranges.is_empty() && same_text(&e.text, text)))
    })
}

/// The value of type `T` derived from the tree of `ranges` of `text` (the
/// one [`tree`] gives), from the memo or from `build`, which is kept beside
/// that tree when the memo keeps the tree and has room for `cost` of it
/// ([`DERIVED_BUDGET`]).
pub(super) fn derived<T: Any + Send + Sync>(
    text: &str,
    ranges: &[Range<usize>],
    cost: impl FnOnce(&T) -> usize,
    build: impl FnOnce() -> T,
) -> Arc<T> {
    let k = key(text, ranges);
    let same = |e: &&mut Entry| &*e.ranges == ranges && same_text(&e.text, text);
    if let Some(memo) = lock().as_mut()
        && let Some(entry) = memo.entries.get_mut(&k).and_then(|es| es.iter_mut().find(same))
        && let Some(value) = entry.derived.iter().find_map(|d| Arc::clone(d).downcast::<T>().ok())
    {
        return value;
    }
    let value = Arc::new(build());
    let cost = cost(&value);
    let mut guard = lock();
    let Some(memo) = guard.as_mut() else { return value };
    let Some(entry) = memo.entries.get_mut(&k).and_then(|es| es.iter_mut().find(same)) else { return value };
    if !entry.derived.iter().any(|d| d.is::<T>()) && memo.derived_bytes + cost <= DERIVED_BUDGET {
        memo.derived_bytes += cost;
        entry.derived.push(value.clone());
    }
    value
}

/// The layout of `text`, from the memo or from `lex`, which is kept for
/// the next ask when the memo has room. A kept layout is shared, not
/// copied: a module's lines and strings run to a megabyte.
pub(super) fn layout(text: &str, lex: impl FnOnce() -> Option<Layout>) -> Option<Arc<Layout>> {
    if text.len() < SMALLEST {
        return lex().map(Arc::new);
    }
    let k = key(text, &[]);
    if let Some(memo) = lock().as_ref() {
        let same = |e: &&Lexed| same_text(&e.0, text);
        if let Some((_, layout)) = memo.layouts.get(&k).and_then(|es| es.iter().find(same)) {
            return layout.clone();
        }
    }
    let layout = lex().map(Arc::new);
    keep_layout(text, k, &layout);
    layout
}

/// Keeps `layout`, the layout of `text` (whose [`key`] is `k`), if the
/// memo has room and lacks it.
fn keep_layout(text: &str, k: u64, layout: &Option<Arc<Layout>>) {
    let cost = text.len() * (1 + LAYOUT_BYTES_PER_BYTE);
    let mut guard = lock();
    let memo = guard.get_or_insert_with(Memo::default);
    let kept = memo.layouts.get(&k).is_some_and(|es| es.iter().any(|e| same_text(&e.0, text)));
    if !kept && memo.bytes + cost <= BUDGET {
        memo.bytes += cost;
        let text = memo.own(text);
        memo.layouts.entry(k).or_default().push((text, layout.clone()));
    }
}

/// The candidates of `text`, from the memo or from `lex`. Only a
/// [`share`]d text's are kept (the memo holds no copy for them): a file
/// whose findings the reads make unsafe is checked again from its text,
/// and its candidates are the same.
pub(super) fn candidates(text: &str, lex: impl FnOnce() -> CandidatesInContext) -> CandidatesInContext {
    if text.len() < SMALLEST {
        return lex();
    }
    let k = key(text, &[]);
    if let Some(memo) = lock().as_ref() {
        let same = |e: &&(Arc<str>, CandidatesInContext)| same_text(&e.0, text);
        if let Some((_, found)) = memo.candidates.get(&k).and_then(|es| es.iter().find(same)) {
            return found.clone();
        }
    }
    let found = lex();
    let mut guard = lock();
    let memo = guard.get_or_insert_with(Memo::default);
    let shared = memo.shared.get(&(text.as_ptr() as usize)).filter(|s| s.len() == text.len()).cloned();
    let cost = match &found.0 {
        Candidates::Regions(regions) => (regions.len() + found.1.len()) * std::mem::size_of::<Range<usize>>(),
        Candidates::FullParse(_) => 0,
    };
    if let Some(shared) = shared
        && memo.bytes + cost <= BUDGET
    {
        memo.bytes += cost;
        memo.candidates.entry(k).or_default().push((shared, found.clone()));
    }
    found
}

/// Drops every kept tree and layout (their budgets start again), on a
/// thread of its own: freeing thousands of trees is work the next asks
/// need not wait for.
pub(super) fn clear() {
    if let Some(old) = lock().take() {
        std::thread::spawn(move || drop(old));
    }
}

/// Keeps `layout`, lexed from `text` by a pass that needed more than the
/// layout, for whoever asks [`layout`] of `text` next.
pub(super) fn offer_layout(text: &str, layout: Option<Layout>) {
    if text.len() >= SMALLEST {
        keep_layout(text, key(text, &[]), &layout.map(Arc::new));
    }
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
        let first = tree(&text, &[], false, || parse(&text));
        let again = tree(&text, &[], false, || parse(&text));
        assert_eq!(first.root_node().to_sexp(), again.root_node().to_sexp());
        assert_eq!(parses.get(), 1, "the second ask of the same text is answered from the memo");
        // The same length, another text: parsed anew.
        let _ = tree(&other, &[], false, || parse(&other));
        assert_eq!(parses.get(), 2);
        // The same text, other ranges: parsed anew.
        let part = tree(&text, &ranges, false, || {
            parses.set(parses.get() + 1);
            super::super::parse_ranges_uncached(&text, &ranges)
        });
        assert_eq!(parses.get(), 3);
        assert_eq!(part.root_node().start_byte(), 6);
        // A small text (a display parsed alone, mostly) is kept too: the
        // same display in two places is parsed once.
        let display = "{'status': 'success', 'content': [{'text': 'ok'}]}";
        let _ = tree(display, &[], true, || parse(display));
        let kept = tree(display, &[], true, || parse(display));
        assert_eq!(parses.get(), 4);
        assert_eq!(kept.root_node().to_sexp(), super::super::parse_uncached(display).root_node().to_sexp());
        let other = display.replace("ok", "no");
        let _ = tree(&other, &[], true, || parse(&other));
        assert_eq!(parses.get(), 5, "another display of the same length is parsed anew");
    }

    #[test]
    fn the_whole_tree_is_known_kept_only_once_parsed_whole() {
        let text = format!("w = 0\n{}", "def g():\n    return {'whole': 1}\n".repeat(180));
        let ranges = [6..90, 120..200];
        assert!(!keeps_whole(&text));
        let _ = tree(&text, &ranges, false, || super::super::parse_ranges_uncached(&text, &ranges));
        assert!(!keeps_whole(&text), "a part's tree is not the whole file's");
        let _ = tree(&text, &[], false, || super::super::parse_uncached(&text));
        assert!(keeps_whole(&text));
        assert!(!keeps_whole(&text.replacen("w = 0", "w = 1", 1)), "another text of the same length");
    }

    #[test]
    fn a_value_derived_from_a_kept_tree_is_built_once_for_its_text_and_ranges() {
        let text = format!("z = 9\n{}", "def h():\n    return {'derived': 3}\n".repeat(150));
        let builds = std::cell::Cell::new(0);
        let build = || {
            builds.set(builds.get() + 1);
            builds.get()
        };
        let cost = |_: &usize| 64;
        // No tree kept for the text: built each time, kept nowhere.
        let _ = derived(&text, &[], cost, build);
        let _ = derived(&text, &[], cost, build);
        assert_eq!(builds.get(), 2);
        let _ = tree(&text, &[], false, || super::super::parse_uncached(&text));
        let first = derived(&text, &[], cost, build);
        let again = derived(&text, &[], cost, build);
        assert_eq!(builds.get(), 3, "asked again, the value kept with the tree is given");
        assert!(Arc::ptr_eq(&first, &again));
        // A value of another type is another value.
        let named = derived(&text, &[], |_: &String| 64, || String::from("model"));
        assert_eq!(*named, "model");
        // The same text parsed for other ranges is another tree.
        let ranges = [6..100, 120..200];
        let _ = tree(&text, &ranges, false, || super::super::parse_ranges_uncached(&text, &ranges));
        let part = derived(&text, &ranges, cost, build);
        assert_eq!((builds.get(), *part), (4, 4));
    }

    #[test]
    fn the_entries_of_a_shared_text_hold_it_not_a_copy() {
        let text: Arc<str> = format!("s = 1\n{}", "def k():\n    return {'shared': 2}\n".repeat(120)).into();
        let other: Arc<str> = text.replacen("s = 1", "s = 2", 1).into();
        share(&text);
        for t in [&text, &other] {
            let _ = tree(t, &[], false, || super::super::parse_uncached(t));
            let _ = layout(t, || crate::syntax::lexer::layout(t.as_bytes()));
        }
        let guard = lock();
        let memo = guard.as_ref().expect("a memo");
        let held = |t: &Arc<str>| {
            let k = key(t, &[]);
            let tree = memo.entries[&k].iter().find(|e| *e.text == **t).expect("a tree kept");
            let (lexed, _) = memo.layouts[&k].iter().find(|(l, _)| **l == **t).expect("a layout kept");
            (Arc::ptr_eq(&tree.text, t), Arc::ptr_eq(lexed, t))
        };
        assert_eq!(held(&text), (true, true), "a shared text is held itself");
        assert_eq!(held(&other), (false, false), "another is copied");
    }

    #[test]
    fn a_kept_layout_is_used_only_for_the_same_text() {
        let text = format!("import os\n{}", "@tool\ndef f():\n    return {'a': 1}\n".repeat(200));
        // A byte no sample reads: the same key, another text.
        let other = text.replacen("import os", "import oz", 1);
        assert_eq!(key(&other, &[]), key(&text, &[]));
        let lexes = std::cell::Cell::new(0);
        let lex = |t: &str| {
            lexes.set(lexes.get() + 1);
            crate::syntax::lexer::layout(t.as_bytes())
        };
        let first = layout(&text, || lex(&text));
        assert!(first.is_some());
        assert_eq!(layout(&text, || lex(&text)), first);
        assert_eq!(lexes.get(), 1, "the second ask of the same text is answered from the memo");
        let _ = layout(&other, || lex(&other));
        assert_eq!(lexes.get(), 2);
        // A layout offered by a pass that lexed the text for more is used.
        let third = text.replacen("import os", "import io", 1);
        offer_layout(&third, crate::syntax::lexer::layout(third.as_bytes()));
        let _ = layout(&third, || lex(&third));
        assert_eq!(lexes.get(), 2, "an offered layout is not lexed again");
    }

    #[test]
    fn only_a_shared_texts_candidates_are_kept() {
        let make = |n: usize| format!("x = {n}\n{}", "def f():\n    return {'status': 'ok'}\n".repeat(200));
        let (shared, unshared): (Arc<str>, String) = (make(1).into(), make(2));
        share(&shared);
        let lexes = std::cell::Cell::new(0);
        let lex = |t: &str| {
            lexes.set(lexes.get() + 1);
            crate::syntax::lexer::candidates_in_context(t.as_bytes())
        };
        let first = candidates(&shared, || lex(&shared));
        assert_eq!(candidates(&shared, || lex(&shared)), first);
        assert_eq!(lexes.get(), 1, "a shared text's candidates are lexed once");
        // A copy of the text finds them too: the bytes are compared.
        let copy = shared.to_string();
        assert_eq!(candidates(&copy, || lex(&copy)), first);
        assert_eq!(lexes.get(), 1);
        let _ = candidates(&unshared, || lex(&unshared));
        let _ = candidates(&unshared, || lex(&unshared));
        assert_eq!(lexes.get(), 3, "a text the memo would have to copy is lexed each time");
    }
}
