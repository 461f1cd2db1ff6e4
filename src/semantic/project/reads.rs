//! The project's reads of moved keys (`docs/rules.md`, "Reads of moved
//! keys"): the origin of each finding, the producers (functions whose
//! returns carry keyed origins, through return chains), the receivers of
//! their results in every project file that names one, and the reads of
//! each receiver handed back to the findings of their origins.
//!
//! Files are read only if they name a producer (an aho-corasick search
//! over the producers' names, repeated while chains add new ones): a
//! receiver always calls a producer by its name, or names it in an import.

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;
use tree_sitter::Node;

use super::{BuilderKey, Callee, Project, SharedText, callee_of, last_name, module_bindings};
use crate::diagnostics::{Code, Finding};
use crate::semantic::is_strands_tool;
use crate::semantic::reads::{Read, ReadForm, call_reads_in, own_scope_nodes, possible_reads, value_uses, yields};
use crate::semantic::results::result_names;
use crate::semantic::scope::{Resolution, ScopeKind, SemanticModel};
use crate::syntax::tree::{FieldChild, KindName};
use crate::syntax::tree::{operand, unparenthesize};
use crate::syntax::{self, LineIndex, Position, outline};

/// A read found in the project: its module, span and what it reads.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ReadSite {
    pub module: usize,
    pub start: Position,
    pub end: Position,
    pub form: ReadForm,
    pub key: Option<String>,
    /// The read as written (its first line).
    pub text: String,
    /// The receiver as written (start, end): a rewrite of the read goes
    /// around it.
    pub receiver: (usize, usize),
    /// The quote character of the read's key.
    pub quote: char,
    /// How the read can be rewritten, if the fixes it depends on apply.
    pub rewrite: Result<Rewrite, String>,
    /// A read on a result no producer is traced to, but which is plainly
    /// a tool result (`tool_result[...]`): never rewritten.
    pub possible: bool,
    /// For a `block` read, the block's index.
    pub block: Option<usize>,
}

impl ReadSite {
    /// The read `r` of module `m`'s `text` (its lines `index`), not yet
    /// judged for a rewrite.
    fn of(m: usize, text: &str, index: &LineIndex, r: &crate::semantic::reads::Read) -> Self {
        let (start, end) = index.span(text, &r.range);
        let written = text[r.range.clone()].lines().next().unwrap_or_default();
        ReadSite {
            module: m,
            start,
            end,
            form: r.form,
            key: r.key.clone(),
            text: written.chars().take(60).collect(),
            receiver: (r.receiver.start, r.receiver.end),
            quote: r.quote,
            rewrite: Err(String::new()),
            possible: false,
            block: r.block,
        }
    }
}

/// A read rewritten to look its key up in the json block the fixes put it
/// in: `r["content"][index]["json"]` instead of `r`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rewrite {
    /// The block's index in the content list (`-1`: the last one).
    pub index: i64,
    /// The origins (module, start, end) whose fixes must all apply: every
    /// fix that gives a result reaching the read its json blocks.
    pub needs: Vec<(usize, usize, usize)>,
}

impl Rewrite {
    /// The verdict of a read that needs no rewrite to stay right: a
    /// `block` read of a block the fixes leave where it was.
    pub const UNNEEDED: Rewrite = Rewrite { index: 0, needs: Vec::new() };
}

/// The reads of one finding, with the range of its origin in its file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FindingReads {
    pub origin: Range<usize>,
    pub reads: Vec<ReadSite>,
}

/// The fix a moved key comes from: a display (TS001, TS002), a write
/// statement (TS004) or a call (TS003), by module and range.
type OriginId = (usize, usize, usize);

fn origin(m: usize, range: &Range<usize>) -> OriginId {
    (m, range.start, range.end)
}

/// A keyed origin: the key and where it is moved from.
type Keyed = (String, OriginId);

/// A function of a scanned file, as far as reads need it.
struct Producer {
    key: BuilderKey,
    tool: bool,
    /// Keyed origins of its own returns (cases 1-3).
    own: Vec<Keyed>,
    /// Callees of its returns that are calls (case 4).
    chains: Vec<Callee>,
    /// Where its name stands in its `def`.
    name_at: usize,
    /// What each of its returns gives (for the shapes of its results).
    shapes: Vec<Return>,
    /// Per return (aligned with `shapes`): its own keyed origins, the
    /// callee it returns the result of, and when it can run (`docs/rules.md`,
    /// "Dispatch by a constant").
    returns: Vec<ReturnKeys>,
    /// The parameters a call may dispatch on by a constant.
    dispatch: Vec<String>,
    /// The length of the content list display of every result it returns
    /// (when all are displays, or names bound to one, of one length).
    content_len: Option<usize>,
    /// Whether it always ends in a `return` or a `raise` (never falls off
    /// its end, never yields).
    total: bool,
    /// How many write statements (TS004) into a result it holds.
    writes: usize,
}

/// What one `return` of a producer gives its receivers.
struct ReturnKeys {
    own: Vec<Keyed>,
    chain: Option<Callee>,
    /// `(P, C, true)`: runs only when `P == C`; `(P, C, false)`: only when
    /// `P != C`.
    when: Vec<(String, String, bool)>,
}

impl Producer {
    /// Whether a call passing `keywords` dispatches on one of its
    /// parameters.
    fn dispatches(&self, keywords: &[(String, String)]) -> bool {
        keywords.iter().any(|(k, _)| self.dispatch.contains(k))
    }
}

impl ReturnKeys {
    /// Whether the return can run for a call passing `keywords`.
    fn can_run(&self, keywords: &[(String, String)]) -> bool {
        self.when.iter().all(|(p, c, eq)| keywords.iter().filter(|(k, _)| k == p).all(|(_, v)| (v == c) == *eq))
    }
}

/// A call whose result is read.
struct Receiver {
    module: usize,
    call: Range<usize>,
    callee: Option<Callee>,
    /// `X.tool.NAME(...)`: `NAME`.
    tool_name: Option<String>,
    reads: Vec<ReadSite>,
    /// Whether its reads are all that uses the result.
    exclusive: bool,
    /// Its keyword arguments whose values are constant strings.
    keywords: Vec<(String, String)>,
    /// Not a call: the producer used as a value (its one read is the
    /// `escape`).
    value_use: Option<ValueUse>,
    /// A call whose callee's last name `N` names a producer: `N`, with the
    /// `escape` read at the call it has when the project resolves the
    /// callee to no function (`docs/rules.md`, "Calls toolshape cannot
    /// resolve").
    unresolved: Option<(String, ReadSite)>,
}

/// How a producer is used as a value (`docs/rules.md`, "Escapes").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValueUse {
    /// `X` anywhere a value stands: an escape unless it is a tool's.
    Plain,
    /// Called through a wrapper, `W(X)(...)`, given another name to be
    /// called by (`fn = X`, `return X`, `{"k": X}`), or handed to a call
    /// that keeps its value (`to_thread(X, a)`): an escape even of a tool.
    Escaping,
    /// Handed to a decorator of its `def`: an escape even of a tool.
    Decorator,
}

/// The keys of every origin, and the keyed write origins (TS004) by the
/// display of the result name they write into.
struct Origins {
    keyed: HashMap<OriginId, Vec<String>>,
    writes: HashMap<OriginId, Vec<Keyed>>,
    /// Every write statement (TS004, keyed or not) by the display it
    /// writes into.
    statements: HashMap<OriginId, Vec<Range<usize>>>,
    /// The findings (given file, finding) at each origin of a fix that
    /// moves keys: the ones whose readers it may break.
    at_origin: HashMap<OriginId, Vec<(usize, usize)>>,
    /// Each given module's origins, sorted: its first scan parses only the
    /// definitions around them.
    regions: HashMap<usize, Vec<Range<usize>>>,
}

/// A json block a fix gives a result, in the order the blocks are added.
#[derive(Debug, Clone)]
struct Block {
    keys: Vec<String>,
    /// The fix that adds it (`None`: the display already ends in it).
    origin: Option<OriginId>,
    /// Whether every result of its kind gets it (a write in a branch may
    /// not run).
    always: bool,
    /// The keys it holds that were never top-level keys (those of a json
    /// block the result already had); `None`: unknown.
    json_only: Option<Vec<String>>,
}

/// One kind of result a producer returns, as the fixes shape it: the json
/// blocks appended to its content, and where the first one stands (the
/// length of a content list display; `None` when unknown).
#[derive(Debug, Clone)]
struct Shape {
    blocks: Vec<Block>,
    base: Option<usize>,
}

/// What one `return` of a producer gives, for the shapes of its results.
enum Return {
    Shape(Shape),
    /// A call of a result builder with keyed extras (the call's origin).
    Builder(OriginId, Option<Callee>),
    /// A call of another function: its results.
    Chain(Callee),
    /// Something toolshape does not follow: why.
    Unknown(&'static str),
}

/// What one scanned file gives.
#[derive(Default)]
struct Scanned {
    producers: Vec<Producer>,
    receivers: Vec<Receiver>,
    facts: Option<super::Facts>,
    /// Scanned around its origins only (its facts are partial).
    partial: bool,
    /// The whole file's tree and model, when it was parsed whole: the
    /// receivers and possible reads use them again.
    whole: Option<Parsed>,
    /// The file's outline, when only the functions naming a producer were
    /// parsed.
    outlined: Option<Outlined>,
}

/// A file parsed with the bodies of the functions that name no producer
/// left out ([`syntax::outline::Outline`]), where that is the same as the
/// whole file to a scan: every name of a producer is in a kept function
/// (a module-level `def` or a method of a module-level class), so every
/// module-level statement, alias and import is in the parse; and every
/// function declaring a `global` is kept (none of them holding a name of a
/// producer), so every name the module binds is bound in the parse too
/// (its facts are the whole file's; see [`functions_holding`]).
struct Outlined {
    /// The outline's text: the file's, each left-out body reduced to `0`.
    text: String,
    /// The ranges of the functions kept whole, in order.
    kept: Vec<Range<usize>>,
    parsed: Parsed,
}

impl Outlined {
    /// The outline of `text` keeping the functions that hold `hits`; `None`
    /// when a hit is outside every function, when no function is left
    /// out, or when the outline does not parse cleanly.
    fn around(text: &str, hits: &[usize]) -> Option<Outlined> {
        if syntax::keeps_whole(text) {
            return None;
        }
        let layout = syntax::layout(text)?;
        let definitions = syntax::outline::definitions_in(text, &layout.lines);
        let functions = syntax::outline::functions(&definitions);
        let kept = functions_holding(text, &layout.lines, &functions, hits)?;
        if kept.iter().all(|&k| k) {
            return None;
        }
        let blanked = functions.iter().zip(&kept).filter(|(_, k)| !**k).map(|(f, _)| f.def);
        let outline = syntax::outline::Outline::new(text, blanked)?;
        let tree = outline.parse();
        if tree.root_node().has_error() {
            return None;
        }
        let model = SemanticModel::of(&tree, &outline.text, &outline.ranges);
        let kept = functions.iter().zip(&kept).filter(|(_, k)| **k).map(|(f, _)| f.def.range.clone()).collect();
        Some(Outlined { text: outline.text, kept, parsed: Parsed { tree, model } })
    }

    /// Whether the outline holds what is at `at` whole.
    fn holds(&self, at: usize) -> bool {
        let i = self.kept.partition_point(|r| r.start <= at);
        i > 0 && self.kept[i - 1].contains(&at)
    }
}

/// Which of `functions` (of `text`, whose logical lines are `lines`) to
/// keep for `hits`, the places of the names of producers: those holding
/// one, and those declaring a `global`; `None` unless every hit is in a
/// function and no function holding one declares a `global`. Then every
/// call a scan follows stands in a function holding a hit: a call of a
/// producer names it there, or a name bound to one there (a module-level
/// alias or import would be a hit outside every function, and only a
/// `global` binds a module-level name from inside one: in a function
/// holding no hit, to nothing a scan follows). The functions declaring a
/// `global` are kept for the module-level names they bind.
fn functions_holding(
    text: &str,
    lines: &[syntax::lexer::LogicalLine],
    functions: &[syntax::outline::Function<'_>],
    hits: &[usize],
) -> Option<Vec<bool>> {
    let mut kept = vec![false; functions.len()];
    for &at in hits {
        let i = functions.partition_point(|f| f.def.range.start <= at).checked_sub(1)?;
        if !functions[i].def.range.contains(&at) {
            return None;
        }
        kept[i] = true;
    }
    for (f, kept) in functions.iter().zip(&mut kept) {
        if syntax::outline::declares_global(text, lines, &f.def.range) {
            if *kept {
                return None;
            }
            *kept = true;
        }
    }
    Some(kept)
}

/// The ranges of the functions of `text` holding `hits` (see
/// [`functions_holding`]), in order; `None` when those do not say where
/// the calls a scan follows stand.
fn hit_function_ranges(text: &str, hits: &[usize]) -> Option<Vec<Range<usize>>> {
    let layout = syntax::layout(text)?;
    let definitions = syntax::outline::definitions_in(text, &layout.lines);
    let functions = syntax::outline::functions(&definitions);
    let kept = functions_holding(text, &layout.lines, &functions, hits)?;
    Some(functions.iter().zip(kept).filter(|(_, k)| *k).map(|(f, _)| f.def.range.clone()).collect())
}

/// Why an `escape` read of a use as a value is left.
pub const USED_AS_A_VALUE: &str = "the function is used as a value there: its results go where toolshape cannot follow";
/// Why the `escape` read of a producer's decorator is left.
pub const DECORATED: &str = "the function is decorated there: its results go where toolshape cannot follow";
/// Why an `escape` read of a result handed on is left.
pub const HANDED_ON: &str = "the result is handed on there: toolshape cannot follow it";
/// Why the `escape` read of a call toolshape cannot resolve is left.
pub const UNRESOLVED: &str = "toolshape cannot resolve the call there: its result may be the function's";
/// Why the `escape` read of a use as a value toolshape cannot resolve is
/// left.
pub const UNRESOLVED_USE: &str = "toolshape cannot resolve the use as a value there: it may be the function";

/// A file's tree with its semantic model.
struct Parsed {
    tree: tree_sitter::Tree,
    model: Arc<SemanticModel>,
}

impl Parsed {
    fn of(text: &str) -> Self {
        let tree = syntax::parse(text);
        let model = SemanticModel::of(&tree, text, &[]);
        Parsed { tree, model }
    }
}

impl Project {
    /// The reads of every finding of `given` (each checked module with its
    /// findings), aligned with them; `read` reads a module's text. The
    /// possible reads of the keys `searched` holds were searched ahead
    /// ([`search_possible_reads`]): only the others are searched here.
    pub fn reads(
        &mut self,
        given: &[(usize, &[Finding])],
        read: impl Fn(&std::path::Path) -> Option<SharedText> + Sync,
        searched: Option<PossibleReads>,
    ) -> Vec<Vec<FindingReads>> {
        let mut out: Vec<Vec<FindingReads>> = given
            .iter()
            .map(|(_, f)| f.iter().map(|f| FindingReads { origin: f.dict.clone(), reads: Vec::new() }).collect())
            .collect();
        if given.iter().all(|(_, f)| f.iter().all(|f| f.moved_key().is_none())) {
            return out;
        }
        // Origins of the findings, and which findings each one holds.
        let mut at_origin: HashMap<OriginId, Vec<(usize, usize)>> = HashMap::new();
        let mut keyed_at: HashMap<&OriginId, Vec<String>> = HashMap::new();
        let mut origins: Vec<Vec<OriginId>> = Vec::new();
        // Each given file's text, and its findings' origins (a write's
        // needs the tree), in parallel.
        let read_given: Vec<Option<(SharedText, Vec<OriginId>)>> = given
            .par_iter()
            .map(|(m, findings)| {
                let text = read(&self.modules[*m].path)?;
                let tree = findings.iter().any(|f| f.code == Code::LaterWrite).then(|| syntax::parse(&text));
                let of_file = findings
                    .iter()
                    .map(|f| {
                        origin(*m, &tree.as_ref().map_or_else(|| f.dict.clone(), |t| origin_range(f, t.root_node())))
                    })
                    .collect();
                Some((text, of_file))
            })
            .collect();
        let mut texts: Vec<(usize, SharedText)> = Vec::new();
        for (g, ((m, _), found)) in given.iter().zip(read_given).enumerate() {
            let (text, of_file) = found.unwrap_or_default();
            for (f, o) in out[g].iter_mut().zip(&of_file) {
                f.origin = o.1..o.2;
            }
            texts.push((*m, text));
            origins.push(of_file);
        }
        for (g, of_file) in origins.iter().enumerate() {
            for (i, o) in of_file.iter().enumerate() {
                // Only fixes that move keys have readers to break.
                if given[g].1[i].code.moves_keys() {
                    at_origin.entry(*o).or_default().push((g, i));
                }
            }
        }
        let mut writes: HashMap<OriginId, Vec<Keyed>> = HashMap::new();
        let mut statements: HashMap<OriginId, Vec<Range<usize>>> = HashMap::new();
        for (g, of_file) in origins.iter().enumerate() {
            for (i, o) in of_file.iter().enumerate() {
                let f = &given[g].1[i];
                if f.code == Code::LaterWrite {
                    let at = statements.entry(origin(o.0, &f.dict)).or_default();
                    if !at.contains(&(o.1..o.2)) {
                        at.push(o.1..o.2);
                    }
                }
                if let Some(key) = f.moved_key() {
                    keyed_at.entry(o).or_default().push(key.clone());
                    if f.code == Code::LaterWrite {
                        writes.entry(origin(o.0, &f.dict)).or_default().push((key.clone(), *o));
                    }
                }
            }
        }
        let keyed: HashMap<OriginId, Vec<String>> = keyed_at.into_iter().map(|(o, keys)| (*o, keys)).collect();
        // The given files are first parsed only around the origins of keys
        // that move (the definitions holding them): a given file is scanned
        // whole, like any other, once it names a producer elsewhere. A file
        // whose findings move no key is no origin: it is searched like any
        // file without findings.
        let mut regions: HashMap<usize, Vec<Range<usize>>> = HashMap::new();
        for ((m, findings), of_file) in given.iter().zip(&origins) {
            let mut r: Vec<Range<usize>> =
                of_file.iter().zip(*findings).filter(|(_, f)| f.code.moves_keys()).map(|(o, _)| o.1..o.2).collect();
            if r.is_empty() {
                continue;
            }
            r.sort_by_key(|r| (r.start, r.end));
            regions.insert(*m, r);
        }
        texts.retain(|(m, _)| regions.contains_key(m));
        let known = Origins { keyed, writes, statements, at_origin, regions };
        // The possible reads (of every finding of their key) need nothing
        // that the search for traced reads learns: they are searched beside it.
        let paths = self.module_paths();
        let read = &read;
        let PossibleReads { keys: searched, sites: mut possible } = searched.unwrap_or_default();
        let keys: BTreeSet<String> = given
            .iter()
            .flat_map(|(_, f)| f.iter().filter_map(|f| f.moved_key()))
            .filter(|k| !searched.contains(*k))
            .cloned()
            .collect();
        // The traced reads run in rounds, each waiting on the last: they
        // start at once, here, and the search (files apart, in parallel)
        // waits for a free worker.
        let ((), left) = rayon::join(
            || self.traced_reads(given, texts, &known, read, &mut out),
            || search_possible_reads(&paths, keys, read).sites,
        );
        possible.extend(left);
        let mut with_key: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
        for (g, (_, findings)) in given.iter().enumerate() {
            for (i, f) in findings.iter().enumerate() {
                if let Some(key) = f.moved_key() {
                    with_key.entry(key.as_str()).or_default().push((g, i));
                }
            }
        }
        for site in possible.into_iter().flatten() {
            let key = site.key.clone().unwrap_or_default();
            for &(g, i) in with_key.get(key.as_str()).into_iter().flatten() {
                out[g][i].reads.push(site.clone());
            }
        }
        for per_file in &mut out {
            for FindingReads { reads, .. } in per_file {
                reads.sort_by(|a, b| {
                    (&self.modules[a.module].path, a.start, a.end).cmp(&(&self.modules[b.module].path, b.start, b.end))
                });
                // A read is listed once, however many receivers reach it (the
                // calls of a checking function: `docs/rules.md`, "Results
                // handed to a checking function"); left, if any of them
                // leaves it.
                reads.dedup_by(|later, kept| {
                    let same = (later.module, later.start, later.end, later.form, &later.key, later.possible)
                        == (kept.module, kept.start, kept.end, kept.form, &kept.key, kept.possible);
                    if same && kept.rewrite.is_ok() && later.rewrite.is_err() {
                        std::mem::swap(kept, later);
                    }
                    same
                });
            }
        }
        out
    }

    /// The traced reads of the keys the findings `given` move, into `out`
    /// (aligned with `given`): the given files (`texts`) are scanned
    /// around their origins (`known`), then every file naming a producer
    /// found so far, until return chains add no new name; then the
    /// receivers of those producers and of the builders are judged, and
    /// each read goes to the findings at the origins it may reach.
    fn traced_reads(
        &mut self,
        given: &[(usize, &[Finding])],
        texts: Vec<(usize, SharedText)>,
        known: &Origins,
        read: &(impl Fn(&std::path::Path) -> Option<SharedText> + Sync),
        out: &mut [Vec<FindingReads>],
    ) {
        let Origins { keyed, regions, at_origin, .. } = known;
        // Scan the given files, then every file naming a producer found so
        // far, until chains add no new name.
        let mut scanned: HashMap<usize, Scanned> = HashMap::new();
        let mut partial: BTreeSet<usize> = BTreeSet::new();
        // Each file to scan, with where it names the producers found last
        // (none for a checked file, or one scanned before: see `Focus`).
        let mut batch: Vec<(usize, SharedText, Vec<usize>)> =
            texts.into_iter().map(|(m, t)| (m, t, Vec::new())).collect();
        let mut names: BTreeSet<String> = BTreeSet::new();
        let mut keys: HashMap<BuilderKey, BTreeSet<Keyed>>;
        // The texts of the scanned files, for their receivers.
        let mut scanned_texts: Vec<(usize, SharedText)> = Vec::new();
        let mut asked: HashSet<BuilderKey> = HashSet::new();
        loop {
            let results: Vec<(usize, Scanned)> = batch
                .par_iter()
                .map(|(m, text, hits)| {
                    let focus = match regions.get(m) {
                        _ if scanned.contains_key(m) => Focus::Whole,
                        Some(around) => Focus::Around(around),
                        None => Focus::Names(hits),
                    };
                    (*m, scan(*m, text, known, focus))
                })
                .collect();
            for (m, mut s) in results {
                if s.partial {
                    partial.insert(m);
                } else {
                    partial.remove(&m);
                }
                // The names a scan learned, beside what was known: reads
                // only resolve names, and builders are already resolved.
                if let Some(facts) = s.facts.take() {
                    match &mut self.modules[m].facts {
                        Some(known) if !s.partial => known.merge_bindings(facts, true),
                        Some(known) => known.merge_bindings(facts, false),
                        none => *none = Some(facts),
                    }
                }
                scanned.insert(m, s);
            }
            scanned_texts.extend(batch.drain(..).map(|(m, text, _)| (m, text)));
            keys = self.producer_keys(&scanned);
            // The functions the keyed producers' results come from must be
            // known whole for the shapes of those results: their files are
            // scanned (again, whole, if scanned around their origins).
            let bodies = self.unscanned_bodies(&scanned, &keys, &mut asked);
            if !bodies.is_empty() {
                batch = bodies
                    .into_par_iter()
                    .filter_map(|(m, functions)| {
                        let text = read(&self.modules[m].path)?;
                        let hits = NameSearch::new(&functions).hits(&text).collect();
                        Some((m, text, hits))
                    })
                    .collect();
                if !batch.is_empty() {
                    continue;
                }
            }
            let found: BTreeSet<String> =
                keys.iter().filter(|(_, k)| !k.is_empty()).map(|(key, _)| key.2.clone()).collect();
            let new: Vec<String> = found.difference(&names).cloned().collect();
            names = found;
            if new.is_empty() {
                break;
            }
            let search = NameSearch::new(&new);
            let (scanned, partial) = (&scanned, &partial);
            let outlined = |m: &usize| scanned.get(m).and_then(|s| s.outlined.as_ref());
            let found: Vec<(usize, SharedText, Vec<usize>)> = (0..self.modules.len())
                .into_par_iter()
                .filter(|m| !scanned.contains_key(m) || partial.contains(m) || outlined(m).is_some())
                .filter_map(|m| {
                    let text = read(&self.modules[m].path)?;
                    // A file scanned around its origins names a producer
                    // when it does so elsewhere than in the `def`s scanned;
                    // an outlined one, outside the functions it kept.
                    let own: BTreeSet<usize> = match partial.contains(&m) {
                        true => scanned[&m].producers.iter().map(|p| p.name_at).collect(),
                        false => BTreeSet::new(),
                    };
                    let kept = |at: &usize| outlined(&m).is_some_and(|o| o.holds(*at));
                    let hits: Vec<usize> = search.hits(&text).filter(|at| !own.contains(at) && !kept(at)).collect();
                    (!hits.is_empty()).then_some((m, text, hits))
                })
                .collect();
            batch.extend(found);
            if batch.is_empty() {
                break;
            }
        }
        // Receivers call a producer or a builder by its name (or import it
        // by that name): only the scanned files that name one hold any.
        scanned_texts.sort_by_key(|(m, _)| *m);
        scanned_texts.dedup_by_key(|(m, _)| *m);
        let mut callees: BTreeSet<String> = names.clone();
        callees.extend(
            given.iter().flat_map(|(_, f)| f.iter().filter_map(|f| f.builder.as_ref().map(|b| b.name.clone()))),
        );
        if !callees.is_empty() {
            let search = NameSearch::new(&callees);
            let found: Vec<(usize, Vec<Receiver>)> = scanned_texts
                .par_iter()
                .filter_map(|(m, text)| {
                    let hits: Vec<usize> = search.hits(text).collect();
                    if hits.is_empty() {
                        return None;
                    }
                    let s = scanned.get(m);
                    // An outline holds every call of a callee it kept whole
                    // (and every read of its result: see `Outlined`).
                    let outlined = s.and_then(|s| s.outlined.as_ref()).filter(|o| hits.iter().all(|&at| o.holds(at)));
                    // Parsed whole, only the calls that may reach a keyed
                    // origin are followed (see `may_reach`).
                    let wanted = |call: Node<'_>, root: Node<'_>, model: &SemanticModel| {
                        self.may_reach(*m, call, root, text, model, &callees, keyed)
                    };
                    let whole = || {
                        let whole = s.and_then(|s| s.whole.as_ref());
                        receivers_of(*m, text, whole, &callees, Some(&hits), None, Some(&wanted))
                    };
                    let receivers = match outlined {
                        Some(o) => {
                            let wanted = |call: Node<'_>, root: Node<'_>, model: &SemanticModel| {
                                self.may_reach(*m, call, root, &o.text, model, &callees, keyed)
                            };
                            receivers_of(*m, &o.text, Some(&o.parsed), &callees, None, Some(o), Some(&wanted))
                                .or_else(whole)
                        }
                        None => whole(),
                    }
                    .unwrap_or_default();
                    Some((*m, receivers))
                })
                .collect();
            for (m, receivers) in found {
                if let Some(s) = scanned.get_mut(&m) {
                    s.receivers = receivers;
                }
            }
        }
        let shaper = Shaper::new(self, &scanned, known);
        let mut modules: Vec<&usize> = scanned.keys().collect();
        modules.sort();
        for m in modules {
            for r in &scanned[m].receivers {
                let mut reached: BTreeSet<Keyed> = BTreeSet::new();
                // The kinds of result the receiver may be, once fixed.
                let mut shapes: Vec<Result<Vec<Shape>, String>> = Vec::new();
                let function = r.callee.as_ref().and_then(|c| self.function_of(r.module, c));
                // A tool is handed to an agent as a value: that is no escape,
                // unless it is called through a wrapper or by another name.
                let exempt = |key: &BuilderKey| r.value_use == Some(ValueUse::Plain) && shaper.is_tool(key);
                let here: OriginId = origin(r.module, &r.call);
                if let Some((name, escape)) = &r.unresolved
                    && r.tool_name.is_none()
                    && !keyed.contains_key(&here)
                    && self.unresolved(r, function.as_ref(), &scanned, &shaper)
                {
                    let mut escape = escape.clone();
                    escape.rewrite = Err(match r.value_use {
                        Some(_) => UNRESOLVED_USE.into(),
                        None => UNRESOLVED.into(),
                    });
                    let reached: BTreeSet<&OriginId> = shaper
                        .named(name)
                        .into_iter()
                        .flat_map(|key| shaper.reached(key, &[], &keys))
                        .map(|(_, o)| o)
                        .collect::<BTreeSet<OriginId>>()
                        .iter()
                        .filter_map(|o| at_origin.get_key_value(o).map(|(o, _)| o))
                        .collect();
                    for o in reached {
                        for &(g, i) in &at_origin[o] {
                            out[g][i].reads.push(escape.clone());
                        }
                    }
                    continue;
                }
                if r.value_use.is_some() && function.as_ref().is_none_or(exempt) {
                    continue;
                }
                if let Some(key) = function {
                    let from = shaper.reached(&key, &r.keywords, &keys);
                    if !from.is_empty() {
                        shapes.push(shaper.of_call(&key, &r.keywords));
                    }
                    reached.extend(from);
                }
                if let Some(ks) = keyed.get(&here) {
                    shapes.push(shaper.of_builder_call(here, r.callee.as_ref()));
                    reached.extend(ks.iter().map(|k| (k.clone(), here)));
                }
                if let Some(name) = &r.tool_name {
                    let named: Vec<&BuilderKey> = shaper.tools_named(name);
                    if named.is_empty() {
                        shapes.push(Err("no tool of that name gives its result".into()));
                    }
                    for key in named {
                        shapes.push(shaper.of_call(key, &r.keywords));
                        reached.extend(shaper.reached(key, &r.keywords, &keys));
                    }
                }
                // A call both of a builder and of a producer, or of tools of
                // several shapes: each must be known.
                let shapes: Result<Vec<Shape>, String> = match shapes.len() {
                    0 => Err("toolshape cannot tell which function gives the result".into()),
                    _ if r.callee.is_some() && keyed.contains_key(&here) && shapes.len() > 1 => {
                        Err("the result's function both builds and returns results".into())
                    }
                    _ => shapes.into_iter().collect::<Result<Vec<Vec<Shape>>, String>>().map(|s| s.concat()),
                };
                for read in &r.reads {
                    let mut read = read.clone();
                    read.rewrite = match &shapes {
                        _ if r.value_use == Some(ValueUse::Decorator) => Err(DECORATED.into()),
                        _ if r.value_use.is_some() => Err(USED_AS_A_VALUE.into()),
                        _ if read.form == ReadForm::Escape => Err(HANDED_ON.into()),
                        _ if !r.exclusive => {
                            Err("the result is used for more than reading keys there, so its shape is unknown".into())
                        }
                        Ok(shapes) => rewrite_for(shapes, &read),
                        Err(why) => Err(why.clone()),
                    };
                    let read = &read;
                    let sees_all = read.key.is_none();
                    let origins: BTreeSet<&OriginId> = reached
                        .iter()
                        .filter(|(k, _)| sees_all || read.key.as_ref() == Some(k))
                        .map(|(_, o)| o)
                        .collect();
                    for o in origins {
                        for &(g, i) in at_origin.get(o).into_iter().flatten() {
                            let f = &given[g].1[i];
                            if sees_all || read.key == f.key {
                                out[g][i].reads.push(read.clone());
                            }
                        }
                    }
                }
            }
        }
    }

    /// The keyed origins of every producer of `scanned`, through return
    /// chains, until nothing changes.
    fn producer_keys(&self, scanned: &HashMap<usize, Scanned>) -> HashMap<BuilderKey, BTreeSet<Keyed>> {
        let mut keys: HashMap<BuilderKey, BTreeSet<Keyed>> = HashMap::new();
        let mut chains: Vec<(BuilderKey, BuilderKey)> = Vec::new();
        for s in scanned.values() {
            for p in &s.producers {
                keys.entry(p.key.clone()).or_default().extend(p.own.iter().cloned());
                for c in &p.chains {
                    if let Some(to) = self.function_of(p.key.0, c) {
                        chains.push((p.key.clone(), to));
                    }
                }
            }
        }
        loop {
            let mut changed = false;
            for (from, to) in &chains {
                let add: Vec<Keyed> = keys.get(to).into_iter().flatten().cloned().collect();
                let into = keys.entry(from.clone()).or_default();
                for k in add {
                    changed |= into.insert(k);
                }
            }
            if !changed {
                return keys;
            }
        }
    }

    /// The modules of the functions that the results of the producers
    /// with keys come from (their returned chains and builder calls,
    /// followed), that no scan has seen, each with those functions' names;
    /// each function is asked for once (`asked`).
    fn unscanned_bodies(
        &self,
        scanned: &HashMap<usize, Scanned>,
        keys: &HashMap<BuilderKey, BTreeSet<Keyed>>,
        asked: &mut HashSet<BuilderKey>,
    ) -> std::collections::BTreeMap<usize, Vec<String>> {
        let producers: HashMap<&BuilderKey, &Producer> =
            scanned.values().flat_map(|s| &s.producers).map(|p| (&p.key, p)).collect();
        let mut work: Vec<BuilderKey> =
            keys.iter().filter(|(_, k)| !k.is_empty()).map(|(key, _)| key.clone()).collect();
        let mut seen: HashSet<BuilderKey> = HashSet::new();
        let mut out: std::collections::BTreeMap<usize, Vec<String>> = std::collections::BTreeMap::new();
        while let Some(key) = work.pop() {
            if !seen.insert(key.clone()) {
                continue;
            }
            let Some(p) = producers.get(&key) else {
                if asked.insert(key.clone()) {
                    out.entry(key.0).or_default().push(key.2.clone());
                }
                continue;
            };
            for r in &p.shapes {
                if let Return::Chain(callee) | Return::Builder(_, Some(callee)) = r {
                    work.extend(self.function_of(key.0, callee));
                }
            }
        }
        out
    }

    /// Whether the call `call` of module `m`'s `text` (in the tree `root`,
    /// its model `model`) may be a receiver whose reads reach a keyed
    /// origin: one named like one of `callees` (the producers with keys,
    /// and the builders), one whose callee resolves to a function of such
    /// a name (a producer reached through an import alias), or a keyed
    /// origin itself (a builder call). The reads of any other call reach
    /// nothing: [`Shaper::reached`] gives only the keys of producers,
    /// which are all named in `callees`.
    #[allow(clippy::too_many_arguments)]
    fn may_reach(
        &self,
        m: usize,
        call: Node<'_>,
        root: Node<'_>,
        text: &str,
        model: &SemanticModel,
        callees: &BTreeSet<String>,
        keyed: &HashMap<OriginId, Vec<String>>,
    ) -> bool {
        last_name(call, text).is_some_and(|n| callees.contains(n))
            || keyed.contains_key(&origin(m, &call.byte_range()))
            || super::instance_callee(call, root, text, model)
                .or_else(|| callee_of(call, text, model))
                .and_then(|c| self.function_of(m, &c))
                .is_some_and(|key| callees.contains(&key.2))
    }

    /// The function `callee`, called in module `from`, resolves to.
    fn function_of(&self, from: usize, callee: &Callee) -> Option<BuilderKey> {
        self.resolve_function(from, callee)
    }

    /// Whether the call receiver `r` (its callee resolved to `function`) is
    /// a call toolshape cannot resolve (`docs/rules.md`, "Calls toolshape
    /// cannot resolve"): its callee resolves to no function or class of
    /// the project, and is no name imported from outside the project; or
    /// it resolves to a method that its class does not define (an
    /// inherited one), in a module scanned whole.
    fn unresolved(
        &self,
        r: &Receiver,
        function: Option<&BuilderKey>,
        scanned: &HashMap<usize, Scanned>,
        shaper: &Shaper<'_>,
    ) -> bool {
        match (&r.callee, function) {
            (None, _) => true,
            (Some(callee), None) => !self.resolved_elsewhere(r.module, callee),
            (Some(Callee::Method { .. } | Callee::Instance { .. }), Some(key)) => {
                scanned.get(&key.0).is_some_and(|s| !s.partial) && !shaper.functions.contains_key(key)
            }
            (Some(_), Some(_)) => false,
        }
    }
}

/// The range of the origin of `f`: its display, its call, or the smallest
/// statement holding its write.
fn origin_range(f: &Finding, root: Node<'_>) -> Range<usize> {
    if f.code != Code::LaterWrite {
        return f.dict.clone();
    }
    let mut node = root.descendant_for_byte_range(f.entry.start, f.entry.end);
    while let Some(n) = node {
        if n.kind_name().ends_with("_statement") && n.start_byte() <= f.entry.start && f.entry.end <= n.end_byte() {
            return n.byte_range();
        }
        node = n.parent();
    }
    f.entry.clone()
}

/// What of a file [`scan`] parses.
#[derive(Clone, Copy)]
enum Focus<'a> {
    /// The definitions around these regions (a checked file's origins):
    /// its facts are then partial.
    Around(&'a [Range<usize>]),
    /// The functions holding these names of producers (an
    /// [`Outlined`] file), or the whole file when that is not the same.
    Names(&'a [usize]),
    Whole,
}

/// The producers and receivers of module `m`'s `text`, parsed as `focus`
/// says; `keyed` holds the keys of every origin.
fn scan(m: usize, text: &str, origins: &Origins, focus: Focus<'_>) -> Scanned {
    if let Focus::Names(hits) = focus
        && let Some(outlined) = Outlined::around(text, hits)
    {
        let (producers, facts) = scan_parsed(m, &outlined.text, origins, &outlined.parsed, false);
        return Scanned { producers, facts: Some(facts), outlined: Some(outlined), ..Scanned::default() };
    }
    // Only the definitions around `around`, when that parse is clean.
    let part = match focus {
        Focus::Around(r) if !syntax::keeps_whole(text) => {
            let spans = super::definition_spans(text, r);
            Some((syntax::parse_ranges(text, &spans), spans))
        }
        _ => None,
    };
    let partial = part.as_ref().is_some_and(|(t, _)| !t.root_node().has_error());
    let parsed = match part {
        Some((tree, spans)) if partial => {
            let model = SemanticModel::of(&tree, text, &spans);
            Parsed { tree, model }
        }
        _ => Parsed::of(text),
    };
    let (producers, facts) = scan_parsed(m, text, origins, &parsed, partial);
    let whole = (!partial).then_some(parsed);
    Scanned { producers, receivers: Vec::new(), facts: Some(facts), partial, whole, outlined: None }
}

/// The producers of `text` as `parsed` holds them, with the module-level
/// names it binds (only some when the parse is `partial`).
fn scan_parsed(
    m: usize,
    text: &str,
    origins: &Origins,
    parsed: &Parsed,
    partial: bool,
) -> (Vec<Producer>, super::Facts) {
    let (root, model) = (parsed.tree.root_node(), &parsed.model);
    let names = result_names(model, root, text);
    let keyed_of = |range: Range<usize>| -> Vec<Keyed> {
        let at = origin(m, &range);
        origins.keyed.get(&at).into_iter().flatten().map(|k| (k.clone(), at)).collect()
    };
    // Each function's scope, by where its `def` starts.
    let scope_of: HashMap<usize, usize> = model
        .scopes
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind == crate::semantic::scope::ScopeKind::Function)
        .map(|(i, s)| (s.range.start, i))
        .collect();
    let mut producers = Vec::new();
    for (class, def) in definitions(root, text) {
        let name_range = def.field("name").map_or(0..0, |n| n.byte_range());
        let name_at = name_range.start;
        let name = text[name_range].to_owned();
        let scope = scope_of.get(&def.start_byte()).copied().unwrap_or_default();
        let dispatch = dispatch_parameters(def, scope, text, model);
        let mut per_return = Vec::new();
        let mut shapes = Vec::new();
        let returns = return_statements_at(def);
        for &(statement, value) in &returns {
            let mut own = Vec::new();
            let mut chain = None;
            let when = if dispatch.is_empty() { Vec::new() } else { dispatch_when(def, statement, &dispatch, text) };
            let Some(value) = value else {
                shapes.push(Return::Unknown("a bare `return` gives None"));
                per_return.push(ReturnKeys { own, chain, when });
                continue;
            };
            shapes.push(return_shape(m, value, scope, (root, text), (model, partial), &names, origins));
            let value = unparenthesize(value);
            match value.kind_name() {
                "dictionary" => own.extend(keyed_of(value.byte_range())),
                "identifier" => {
                    let n = &text[value.byte_range()];
                    for rn in names.iter().filter(|r| r.scope == scope && r.name == n) {
                        for d in &rn.displays {
                            own.extend(keyed_of(d.clone()));
                            own.extend(origins.writes.get(&origin(m, d)).into_iter().flatten().cloned());
                        }
                    }
                }
                "call" => {
                    own.extend(keyed_of(value.byte_range()));
                    chain = scanned_callee(value, text, model, partial);
                }
                _ => {}
            }
            per_return.push(ReturnKeys { own, chain, when });
        }
        let content_len = {
            let lens: Vec<Option<usize>> = returns
                .iter()
                .map(|&(_, value)| {
                    let value = unparenthesize(value?);
                    let dict = match value.kind_name() {
                        "dictionary" => value,
                        "identifier" => {
                            let n = &text[value.byte_range()];
                            let rn = names.iter().find(|r| r.scope == scope && r.name == n)?;
                            let [d] = rn.displays.as_slice() else { return None };
                            root.descendant_for_byte_range(d.start, d.end).filter(|d| d.kind_name() == "dictionary")?
                        }
                        _ => return None,
                    };
                    content_list(dict, text).len
                })
                .collect();
            lens.first().copied().flatten().filter(|n| lens.iter().all(|l| *l == Some(*n)))
        };
        let own: Vec<Keyed> = per_return.iter().flat_map(|r| r.own.iter().cloned()).collect();
        let chains: Vec<Callee> = per_return.iter().filter_map(|r| r.chain.clone()).collect();
        let tool = is_strands_tool(def, text);
        let total = def.field("body").is_some_and(always_returns) && !yields(def, text);
        let writes = origins
            .statements
            .iter()
            .filter(|((module, ..), _)| *module == m)
            .flat_map(|(_, at)| at)
            .filter(|at| def.start_byte() <= at.start && at.end <= def.end_byte())
            .count();
        producers.push(Producer {
            key: (m, class, name),
            tool,
            own,
            chains,
            name_at,
            shapes,
            returns: per_return,
            dispatch,
            content_len,
            total,
            writes,
        });
    }
    // A partial parse knows only some module-level names.
    let mut facts = module_bindings(root, text, model);
    if partial {
        facts.bindings.retain(|_, b| !matches!(b, super::Bound::Other));
    }
    (producers, facts)
}

/// The callee of `call` as a scan of its file sees it: [`callee_of`], and
/// in a `partial` parse (the definitions around the origins only, no
/// module-level statement) a name the parse leaves unbound, or `A.name`
/// with `A` so, as a module-level name, which the project's facts of the
/// module resolve if it binds it there.
fn scanned_callee(call: Node<'_>, text: &str, model: &SemanticModel, partial: bool) -> Option<Callee> {
    callee_of(call, text, model).or_else(|| {
        let function = unparenthesize(call.field("function")?);
        let unbound = |name: Node<'_>| {
            let n = &text[name.byte_range()];
            (model.resolve(n, model.scope_at(name.start_byte())) == Resolution::Builtin).then(|| n.to_owned())
        };
        match function.kind_name() {
            _ if !partial => None,
            "identifier" => unbound(function).map(Callee::Name),
            "attribute" => {
                let object = function.field("object").filter(|o| o.kind_name() == "identifier")?;
                let attribute = text[function.field("attribute")?.byte_range()].to_owned();
                unbound(object).map(|base| Callee::Attribute(base, attribute))
            }
            _ => None,
        }
    })
}

/// What the `return` of `value` (in the function whose scope is `scope`,
/// of module `m`) gives, once its fixes apply.
fn return_shape(
    m: usize,
    value: Node<'_>,
    scope: usize,
    (root, text): (Node<'_>, &str),
    (model, partial): (&SemanticModel, bool),
    names: &[crate::semantic::results::ResultName],
    origins: &Origins,
) -> Return {
    let value = unparenthesize(value);
    let keys_at = |range: &Range<usize>| origins.keyed.get(&origin(m, range));
    match value.kind_name() {
        "dictionary" => match keys_at(&value.byte_range()) {
            Some(keys) => match display_block(value, text, keys.clone(), origin(m, &value.byte_range())) {
                Ok((block, base)) => Return::Shape(Shape { blocks: vec![block], base }),
                Err(why) => Return::Unknown(why),
            },
            None if spreads(value) => Return::Unknown("a spread may give the result a json block"),
            // A result no fix changes: the json block it ends in, if any.
            None => {
                let content = content_list(value, text);
                match content.last_json {
                    _ if content.other_json => Return::Unknown("its content holds a json block that is not a dict"),
                    Some(json_only) => Return::Shape(Shape {
                        blocks: vec![Block { keys: Vec::new(), origin: None, always: true, json_only }],
                        base: content.len.map(|n| n - 1),
                    }),
                    None => Return::Shape(Shape { blocks: Vec::new(), base: content.len }),
                }
            }
        },
        "identifier" => {
            let n = &text[value.byte_range()];
            let Some(rn) = names.iter().find(|r| r.scope == scope && r.name == n) else {
                return Return::Unknown("it returns a name toolshape does not follow");
            };
            let [display] = rn.displays.as_slice() else {
                return Return::Unknown("it returns a name bound to more than one result");
            };
            name_shape(m, n, display, scope, (root, text), model, origins)
        }
        "call" => {
            let callee = scanned_callee(value, text, model, partial);
            match (keys_at(&value.byte_range()), callee) {
                (Some(_), callee) => Return::Builder(origin(m, &value.byte_range()), callee),
                (None, Some(callee)) => Return::Chain(callee),
                (None, None) => Return::Unknown("it returns the result of a call toolshape cannot resolve"),
            }
        }
        _ => Return::Unknown("it returns something other than a result, a name or a call"),
    }
}

/// The shape of the result name `name` (its one display `display`, in
/// `scope`) as it is returned: the display's own block, then one block per
/// write statement into it. Every use of the name must be one of those
/// writes or a `return name`: any other use may change its content.
fn name_shape(
    m: usize,
    name: &str,
    display: &Range<usize>,
    scope: usize,
    (root, text): (Node<'_>, &str),
    model: &SemanticModel,
    origins: &Origins,
) -> Return {
    let Resolution::Bindings { bindings, .. } = model.resolve(name, scope) else {
        return Return::Unknown("it returns a name toolshape does not follow");
    };
    if bindings.len() != 1 {
        return Return::Unknown("it returns a name bound more than once");
    }
    let at = origin(m, display);
    let mut statements: Vec<Range<usize>> = origins.statements.get(&at).cloned().unwrap_or_default();
    statements.sort_by_key(|r| r.start);
    let node_at = |r: &Range<usize>| root.descendant_for_byte_range(r.start, r.end);
    // The `return name` statements, and whether every use is one.
    let mut returns: Vec<usize> = Vec::new();
    for r in model.references.iter().filter(|r| r.name == name) {
        if !matches!(model.resolve(name, r.scope), Resolution::Bindings { scope: s, .. } if s == scope) {
            continue;
        }
        if r.scope != scope {
            return Return::Unknown("a nested scope uses the result");
        }
        if statements.iter().any(|s| s.start <= r.at.start && r.at.end <= s.end) {
            continue;
        }
        let returned = node_at(&r.at)
            .and_then(|n| n.parent())
            .filter(|p| p.kind_name() == "return_statement")
            .map(|p| p.start_byte());
        match returned {
            Some(start) => returns.push(start),
            None => return Return::Unknown("the function uses the result for more than its writes and return"),
        }
    }
    let Some(dict) = node_at(display).filter(|d| d.kind_name() == "dictionary") else {
        return Return::Unknown("it returns a name toolshape does not follow");
    };
    let mut blocks: Vec<Block> = Vec::new();
    let base = match origins.keyed.get(&at) {
        Some(keys) => match display_block(dict, text, keys.clone(), at) {
            Ok((block, base)) => {
                blocks.push(block);
                base
            }
            Err(why) => return Return::Unknown(why),
        },
        None if spreads(dict) => return Return::Unknown("a spread may give the result a json block"),
        // The writes' blocks follow the display's own content.
        None => content_list(dict, text).len,
    };
    for statement in &statements {
        let keys: Vec<String> = origins
            .writes
            .get(&at)
            .into_iter()
            .flatten()
            .filter(|(_, o)| *o == origin(m, statement))
            .map(|(k, _)| k.clone())
            .collect();
        if keys.is_empty() {
            return Return::Unknown("a write adds keys toolshape cannot name");
        }
        // A write runs for every result when it stands in the function's
        // own body and every `return` of the name comes after it.
        // (The smallest node over the statement may be its expression.)
        let mut node = node_at(statement);
        while let Some(n) =
            node.filter(|n| n.kind_name() != "expression_statement" && !n.kind_name().ends_with("_statement"))
        {
            node = n.parent().filter(|p| p.byte_range() == n.byte_range());
        }
        let in_body = node.and_then(|s| s.parent()).is_some_and(|b| {
            b.kind_name() == "block" && b.parent().is_some_and(|d| d.kind_name() == "function_definition")
        });
        let always = in_body && returns.iter().all(|&r| r >= statement.end);
        blocks.push(Block { keys, origin: Some(origin(m, statement)), always, json_only: Some(Vec::new()) });
    }
    if blocks.is_empty() {
        return Return::Unknown("it may return a result whose keys no fix moves");
    }
    Return::Shape(Shape { blocks, base })
}

/// A shaped display's content list display, as far as the shapes of its
/// fixed results need it.
struct ContentList {
    /// Its length (`None`: not a list display, or one with `*` elements).
    len: Option<usize>,
    /// Its last element is a json block whose value is a dict display: the
    /// constant keys of that dict (`None`: some key is not a constant, or a
    /// `**` stands in it). A fix merges into it.
    last_json: Option<Option<Vec<String>>>,
    /// A json block stands before its last element, or its last json
    /// block's value is not a dict display.
    other_json: bool,
}

/// The content of the display `dict`.
fn content_list(dict: Node<'_>, text: &str) -> ContentList {
    let key_is = |p: Node<'_>, name: &str| {
        p.kind_name() == "pair"
            && p.field("key").and_then(|k| crate::syntax::tree::constant_str(k, text)).as_deref() == Some(name)
    };
    let unknown = ContentList { len: None, last_json: None, other_json: false };
    let mut cursor = dict.walk();
    let content = dict.named_children(&mut cursor).find(|p| key_is(*p, "content"));
    let Some(value) = content.and_then(|p| p.field("value")).map(unparenthesize) else { return unknown };
    if value.kind_name() != "list" {
        return unknown;
    }
    let mut cursor = value.walk();
    let elements: Vec<Node<'_>> = value.named_children(&mut cursor).filter(|e| e.kind_name() != "comment").collect();
    if elements.iter().any(|e| e.kind_name() == "list_splat") {
        return unknown;
    }
    // Each element's json value, if it is a json block.
    fn json_of<'t>(e: Node<'t>, text: &str) -> Option<Node<'t>> {
        let e = unparenthesize(e);
        let mut cursor = e.walk();
        let pair = (e.kind_name() == "dictionary")
            .then(|| {
                e.named_children(&mut cursor).find(|p| {
                    p.kind_name() == "pair"
                        && p.field("key").and_then(|k| crate::syntax::tree::constant_str(k, text)).as_deref()
                            == Some("json")
                })
            })
            .flatten()?;
        pair.field("value").map(unparenthesize)
    }
    let jsons: Vec<(usize, Node<'_>)> =
        elements.iter().enumerate().filter_map(|(i, e)| Some((i, json_of(*e, text)?))).collect();
    let last = jsons.last().filter(|(i, v)| i + 1 == elements.len() && v.kind_name() == "dictionary");
    let last_json = last.map(|(_, v)| {
        let mut cursor = v.walk();
        v.named_children(&mut cursor)
            .filter(|p| p.kind_name() != "comment")
            .map(|p| match p.kind_name() {
                "pair" => p.field("key").and_then(|k| crate::syntax::tree::constant_str(k, text)),
                _ => None,
            })
            .collect::<Option<Vec<String>>>()
    });
    let other_json = jsons.len() > usize::from(last.is_some());
    ContentList { len: Some(elements.len()), last_json, other_json }
}

/// Whether the display `dict` holds a `**` spread at its top level (a fix
/// may add a json block of it, or not).
fn spreads(dict: Node<'_>) -> bool {
    let mut cursor = dict.walk();
    dict.named_children(&mut cursor).any(|p| p.kind_name() == "dictionary_splat")
}

/// The json block the fix of the shaped display `dict` (an origin, with
/// `keys`) gives its results, and where it stands: merged into the
/// content's last json block, or appended.
fn display_block(
    dict: Node<'_>,
    text: &str,
    keys: Vec<String>,
    origin: OriginId,
) -> Result<(Block, Option<usize>), &'static str> {
    let content = content_list(dict, text);
    if content.other_json {
        return Err("its content holds a json block the fix does not merge into");
    }
    Ok(match content.last_json {
        Some(json_only) => (Block { keys, origin: Some(origin), always: true, json_only }, content.len.map(|n| n - 1)),
        None => (Block { keys, origin: Some(origin), always: true, json_only: Some(Vec::new()) }, content.len),
    })
}

/// The read's rewrite, given every kind of result that reaches it
/// (`shapes`): the index of the block that holds its key in each of them,
/// the last one where that is always right, else one from the start.
fn rewrite_for(shapes: &[Shape], read: &ReadSite) -> Result<Rewrite, String> {
    // A block read needs no rewrite: it is safe when the fixes leave its
    // block where it was (its index below the first block a fix adds to
    // or merges into, in every result a fix changes).
    if read.form == ReadForm::Block {
        let i = read.block.unwrap_or(usize::MAX);
        let ok = shapes.iter().all(|s| s.blocks.iter().all(|b| b.origin.is_none()) || s.base.is_some_and(|b| i < b));
        return match ok {
            true => Ok(Rewrite::UNNEEDED),
            false => Err("it reads a content block at an index where a fix may put the json block".into()),
        };
    }
    let Some(key) = &read.key else {
        return Err(match read.form {
            ReadForm::Content => "it reads the content list, which the fix extends".into(),
            _ => "it uses the whole result".into(),
        });
    };
    if shapes.is_empty() {
        return Err("toolshape cannot tell which function gives the result".into());
    }
    // On a result without the key, a store or a `setdefault` writes it
    // into that result's last json block, where the other rewritten reads
    // of the receiver look for it: as on the top level before.
    // A block holding keys that were never top-level (a json block the
    // result had already) must not hold this one.
    let clean = shapes.iter().flat_map(|s| &s.blocks).all(|b| b.json_only.as_ref().is_some_and(|j| !j.contains(key)));
    if !clean {
        return Err("a result already holds that key, or keys toolshape cannot read, in a json block".into());
    }
    // A key written twice lands in two blocks (the last one wins before).
    if shapes.iter().any(|s| s.blocks.iter().filter(|b| b.keys.contains(key)).count() > 1) {
        return Err("the key is written more than once, into separate json blocks".into());
    }
    let holding = |shape: &Shape| shape.blocks.iter().position(|b| b.keys.contains(key));
    let last_ok = shapes.iter().all(|shape| match holding(shape) {
        Some(i) => {
            let block = &shape.blocks[i];
            i + 1 == shape.blocks.len() && (block.always || shape.blocks[..i].iter().any(|b| b.always))
        }
        // Without the key, the last block must still be a json block.
        None => shape.blocks.iter().any(|b| b.always),
    });
    let index = if last_ok {
        Some(-1)
    } else {
        let at = |shape: &Shape| -> Option<i64> {
            let i = holding(shape)?;
            let base = shape.base?;
            shape.blocks[..=i].iter().all(|b| b.always).then_some((base + i) as i64)
        };
        let first = at(&shapes[0]);
        first.filter(|_| shapes.iter().all(|s| at(s) == first))
    };
    let Some(index) = index else {
        return Err("the key does not stand in the same json block of every result that reaches the read".into());
    };
    let mut needs: Vec<OriginId> = shapes.iter().flat_map(|s| &s.blocks).filter_map(|b| b.origin).collect();
    needs.sort();
    needs.dedup();
    Ok(Rewrite { index, needs })
}

/// The shapes of the results of the project's producers.
struct Shaper<'a> {
    project: &'a Project,
    functions: HashMap<&'a BuilderKey, &'a Producer>,
    keyed: &'a HashMap<OriginId, Vec<String>>,
}

impl<'a> Shaper<'a> {
    fn new(project: &'a Project, scanned: &'a HashMap<usize, Scanned>, origins: &'a Origins) -> Self {
        let functions = scanned.values().flat_map(|s| &s.producers).map(|p| (&p.key, p)).collect();
        Shaper { project, functions, keyed: &origins.keyed }
    }

    /// Whether the function `key` is a tool.
    fn is_tool(&self, key: &BuilderKey) -> bool {
        self.functions.get(key).is_some_and(|p| p.tool)
    }

    /// The producers (tools or not, functions or methods) named `name`.
    fn named(&self, name: &str) -> Vec<&'a BuilderKey> {
        let mut keys: Vec<&BuilderKey> = self.functions.keys().copied().filter(|k| k.2 == name).collect();
        keys.sort();
        keys
    }

    /// The tools named `name`.
    fn tools_named(&self, name: &str) -> Vec<&'a BuilderKey> {
        self.named(name).into_iter().filter(|key| self.is_tool(key)).collect()
    }

    /// The keyed origins a call of the function `key` passing `keywords`
    /// reaches (`keys`: every producer's, chains followed): those of the
    /// returns that can run for them.
    fn reached(
        &self,
        key: &BuilderKey,
        keywords: &[(String, String)],
        keys: &HashMap<BuilderKey, BTreeSet<Keyed>>,
    ) -> Vec<Keyed> {
        let all = || keys.get(key).into_iter().flatten().cloned().collect();
        let Some(f) = self.functions.get(key).filter(|f| f.dispatches(keywords)) else { return all() };
        let mut out: BTreeSet<Keyed> = BTreeSet::new();
        for r in f.returns.iter().filter(|r| r.can_run(keywords)) {
            out.extend(r.own.iter().cloned());
            if let Some(to) = r.chain.as_ref().and_then(|c| self.project.function_of(key.0, c)) {
                out.extend(keys.get(&to).into_iter().flatten().cloned());
            }
        }
        out.into_iter().collect()
    }

    /// Every kind of result a call of the function `key` passing
    /// `keywords` gets.
    fn of_call(&self, key: &BuilderKey, keywords: &[(String, String)]) -> Result<Vec<Shape>, String> {
        self.follow(key, &mut Vec::new(), keywords)
    }

    fn follow(
        &self,
        key: &BuilderKey,
        path: &mut Vec<BuilderKey>,
        keywords: &[(String, String)],
    ) -> Result<Vec<Shape>, String> {
        let name = &key.2;
        let Some(f) = self.functions.get(key) else {
            return Err(format!("toolshape does not know the results of `{name}()`"));
        };
        if path.contains(key) {
            return Err(format!("`{name}()` returns its own results"));
        }
        if !f.total {
            return Err(format!("`{name}()` may end without returning a result"));
        }
        path.push(key.clone());
        let mut out = Vec::new();
        let dispatched = f.dispatches(keywords);
        for (r, when) in f.shapes.iter().zip(&f.returns) {
            if dispatched && !when.can_run(keywords) {
                continue;
            }
            match r {
                Return::Shape(shape) => out.push(shape.clone()),
                Return::Builder(call, callee) => out.extend(self.of_builder_call(*call, callee.as_ref())?),
                Return::Chain(callee) => match self.project.function_of(key.0, callee) {
                    Some(to) => out.extend(self.follow(&to, path, &[])?),
                    None => return Err(format!("`{name}()` returns the result of a call toolshape cannot resolve")),
                },
                Return::Unknown(why) => return Err(format!("`{name}()`: {why}")),
            }
        }
        path.pop();
        Ok(out)
    }

    /// The result of a call of a result builder with keyed extras: the
    /// builder's fix appends one json block of them, when the builder has
    /// no keys of its own and no other write.
    fn of_builder_call(&self, call: OriginId, callee: Option<&Callee>) -> Result<Vec<Shape>, String> {
        let builder = callee.and_then(|c| self.project.function_of(call.0, c)).and_then(|k| self.functions.get(&k));
        let Some(builder) = builder else { return Err("toolshape does not know the builder's body".into()) };
        if !builder.own.is_empty() || builder.writes > 1 || !builder.chains.is_empty() {
            return Err(format!("`{}()` gives its results more than the extras' json block", builder.key.2));
        }
        let keys = self.keyed.get(&call).cloned().unwrap_or_default();
        let block = Block { keys, origin: Some(call), always: true, json_only: Some(Vec::new()) };
        Ok(vec![Shape { blocks: vec![block], base: builder.content_len }])
    }
}

/// The markers of a possible receiver, for the prefilter.
const POSSIBLE: [&str; 5] = ["tool_result", "toolResult", "ToolResult", "ToolCallEvent", "ToolInvocationEvent"];

/// Which texts may hold a possible read of the moved keys: a marker, and
/// one of the keys between quotes.
struct PossibleFilter {
    keys: Vec<String>,
    markers: syntax::search::Patterns,
    quoted: QuotedKeys,
}

/// How [`PossibleFilter`] looks for the keys between quotes: a `memmem`
/// search per key, or one packed search of them all. Each memmem search
/// skips through a text by the key's rarest bytes, about ten times as
/// fast as the packed search, which stops at every quote of a file: on
/// the 12 MB of strands-agents, five keys took 2.0 ms by memmem and 3.0 ms
/// packed. Past [`QuotedKeys::FINDERS_UP_TO`] keys, the one packed search
/// is the quicker.
enum QuotedKeys {
    Finders(Vec<memchr::memmem::Finder<'static>>),
    /// Two patterns per key (`"k"`, `'k'`), in the order of the keys.
    Packed(syntax::search::Patterns),
}

impl QuotedKeys {
    const FINDERS_UP_TO: usize = 6;

    fn new(keys: &[String]) -> Self {
        if keys.len() <= Self::FINDERS_UP_TO {
            return QuotedKeys::Finders(
                keys.iter().map(|k| memchr::memmem::Finder::new(k.as_bytes()).into_owned()).collect(),
            );
        }
        let quoted = keys.iter().flat_map(|k| [format!("\"{k}\""), format!("'{k}'")]);
        QuotedKeys::Packed(syntax::search::Patterns::new(quoted).expect("literal patterns"))
    }

    /// Whether the key `finder` looks for stands between two like quotes
    /// somewhere in `text` (`"k"` or `'k'`, as written).
    fn quoted_by(finder: &memchr::memmem::Finder<'_>, text: &[u8]) -> bool {
        let len = finder.needle().len();
        finder.find_iter(text).any(|at| syntax::between_like_quotes(text, at..at + len))
    }

    fn any_in(&self, text: &str) -> bool {
        match self {
            QuotedKeys::Finders(finders) => finders.iter().any(|f| Self::quoted_by(f, text.as_bytes())),
            QuotedKeys::Packed(patterns) => patterns.is_match(text),
        }
    }

    /// Per key, whether `text` holds it between quotes.
    fn held_in(&self, text: &str, keys: usize) -> Vec<bool> {
        match self {
            QuotedKeys::Finders(finders) => finders.iter().map(|f| Self::quoted_by(f, text.as_bytes())).collect(),
            QuotedKeys::Packed(patterns) => {
                let mut held = vec![false; keys];
                for (pattern, _) in patterns.occurrences(text) {
                    held[pattern / 2] = true;
                }
                held
            }
        }
    }
}

impl PossibleFilter {
    fn new(keys: BTreeSet<String>) -> Self {
        let keys: Vec<String> = keys.into_iter().collect();
        PossibleFilter {
            markers: syntax::search::Patterns::leftmost_first(POSSIBLE).expect("literal patterns"),
            quoted: QuotedKeys::new(&keys),
            keys,
        }
    }

    fn may_hold(&self, text: &str) -> bool {
        self.quoted.any_in(text) && self.markers.is_match(text)
    }

    /// The keys `text` holds between quotes, as written: the keys whose
    /// possible reads it is searched for (so that a finding's reads do not
    /// hang on which other keys the run moves).
    fn quoted_keys(&self, text: &str) -> Vec<&str> {
        let held = self.quoted.held_in(text, self.keys.len());
        self.keys.iter().zip(held).filter(|(_, h)| *h).map(|(k, _)| k.as_str()).collect()
    }
}

/// The possible reads of some moved keys in a project, searched apart
/// from the traced ones: they need nothing that search learns (see
/// [`search_possible_reads`]).
#[derive(Debug, Default)]
pub struct PossibleReads {
    /// The keys searched.
    keys: BTreeSet<String>,
    /// The reads found, per module that holds one.
    sites: Vec<Vec<ReadSite>>,
}

/// The possible reads of `keys` in each module of a project (at `paths`,
/// read by `read`). A finding's possible reads are those of its key, so
/// the keys of a run may be searched in parts: those of the first phase's
/// findings while TS005 runs, the ones later passes add in the reads pass.
pub fn search_possible_reads(
    paths: &[std::path::PathBuf],
    keys: BTreeSet<String>,
    read: &(impl Fn(&std::path::Path) -> Option<SharedText> + Sync),
) -> PossibleReads {
    if keys.is_empty() {
        return PossibleReads { keys, sites: Vec::new() };
    }
    let filter = PossibleFilter::new(keys);
    // A few files per job: the core that ends TS005 (searched beside) first
    // takes part of them, where a half of the project went to one core.
    let sites = (0..paths.len())
        .into_par_iter()
        .with_max_len(4)
        .filter_map(|m| possible_in(m, &read(&paths[m])?, &filter))
        .collect();
    PossibleReads { keys: filter.keys.into_iter().collect(), sites }
}

/// The possible reads of the moved keys in module `m`'s `text` (`None`
/// when it cannot hold one, by `filter`). A possible read is a keyed read
/// on a possible receiver, so a marker, and a string spelling the key
/// where a keyed read's key can stand, are in the function it is in: only
/// such functions are parsed
/// ([`possible_ranges`]). A read whose receiver names what the module
/// binds needs the module's own statements: the whole file is parsed then,
/// as it is when the part parsed is not clean.
fn possible_in(m: usize, text: &str, filter: &PossibleFilter) -> Option<Vec<ReadSite>> {
    if !filter.may_hold(text) {
        return None;
    }
    let markers: Vec<Range<usize>> = filter.markers.find_iter(text).collect();
    // No marker that may start a read or stand in an alias's value (the
    // statement is judged once the file is lexed): nothing to parse.
    if !markers.iter().any(|r| may_start_a_read(text, r) || in_marked_attribute(text, r)) {
        return None;
    }
    let keys = filter.quoted_keys(text);
    let keyed = |parsed: &Parsed| -> Vec<Read> {
        possible_reads(parsed.tree.root_node(), text, &parsed.model)
            .into_iter()
            .filter(|r| r.key.as_deref().is_some_and(|k| keys.contains(&k)))
            .collect()
    };
    let reads = match possible_ranges(text, &markers, &keys) {
        Some(ranges) if ranges.is_empty() => return None,
        Some(ranges) if !syntax::keeps_whole(text) => {
            let tree = syntax::parse_ranges(text, &ranges);
            let part = (!tree.root_node().has_error()).then(|| {
                let model = SemanticModel::of(&tree, text, &ranges);
                Parsed { tree, model }
            });
            match part.map(|p| (keyed(&p), p)) {
                Some((reads, p)) if !reads.iter().any(|r| names_module_binding(&p.model, &r.receiver)) => reads,
                _ => keyed(&Parsed::of(text)),
            }
        }
        _ => keyed(&Parsed::of(text)),
    };
    let index = LineIndex::new(text);
    let sites: Vec<ReadSite> = reads
        .iter()
        .map(|r| ReadSite {
            rewrite: Err("a possible read: the result is not traced to its producer".into()),
            possible: true,
            ..ReadSite::of(m, text, &index, r)
        })
        .collect();
    (!sites.is_empty()).then_some(sites)
}

/// What of `text` to parse for the possible reads of `keys` around the
/// markers at `regions`: the ranges of the functions (module-level ones,
/// methods of module-level classes) that hold a marker and a string
/// spelling a key where a keyed read's key can stand
/// ([`syntax::lexer::Layout::valued`]; empty: no read can stand
/// anywhere); `None` when only
/// the whole file will do: the lexer cannot vouch for it, a marker
/// outside those functions stands in a statement with a key or after an
/// `=` (or in a class whose methods the outline cannot list, and which
/// holds one), or a marked function declares a `global`.
fn possible_ranges(text: &str, markers: &[Range<usize>], keys: &[&str]) -> Option<Vec<Range<usize>>> {
    let layout = syntax::lexer::layout_with(text.as_bytes(), keys)?;
    let holds_key = |r: Range<usize>| {
        let at = layout.valued.partition_point(|&v| v < r.start);
        layout.valued.get(at).is_some_and(|&v| v < r.end)
    };
    // The logical line (statement) holding `at`.
    let statement = |at: usize| {
        let line = layout.lines.partition_point(|l| l.start <= at).checked_sub(1)?;
        let end = layout.lines.get(line + 1).map_or(text.len(), |l| l.start - l.indent);
        Some(layout.lines[line].start..end)
    };
    let after_an_assign = |r: &Range<usize>| {
        statement(r.start).is_some_and(|s| {
            let before = &text.as_bytes()[s.start..r.start.max(s.start)];
            memchr::memchr_iter(b'=', before).any(|i| {
                !matches!(before.get(i.wrapping_sub(1)), Some(b'=' | b'!' | b'<' | b'>'))
                    && before.get(i + 1) != Some(&b'=')
            })
        })
    };
    // Whether the marker at `r` may stand in the value of an alias of a
    // receiver (`tr = block["toolResult"]`, `tr = view(m).tool_result`),
    // read elsewhere: in a string or a marked attribute's name, after an
    // `=` in its statement.
    let alias_value = |r: &Range<usize>| {
        let quoted = r.start > 0 && matches!(text.as_bytes()[r.start - 1], b'"' | b'\'');
        (quoted || in_marked_attribute(text, r)) && after_an_assign(r)
    };
    // The markers that may stand in a receiver with a read, or in an alias
    // of one.
    let regions: Vec<&Range<usize>> = markers
        .iter()
        .filter(|r| marker_in_string(&layout, text, r).unwrap_or_else(|| may_start_a_read(text, r) || alias_value(r)))
        .collect();
    let defs = outline::definitions_in(text, &layout.lines);
    let functions = outline::functions(&defs);
    let mut marked = vec![false; functions.len()];
    for r in regions {
        let i = functions.partition_point(|f| f.def.range.start <= r.start);
        if let Some(i) = i.checked_sub(1).filter(|&i| functions[i].def.range.contains(&r.start)) {
            marked[i] = true;
            continue;
        }
        // Outside every function: its statement, or the class the outline
        // cannot see the methods of.
        let class = defs.iter().find(|d| d.range.contains(&r.start));
        let unlisted = class.and_then(|c| {
            let member = c.members.iter().find(|m| m.class && m.range.contains(&r.start));
            member.or(c.members.is_empty().then_some(c))
        });
        let around = match unlisted {
            Some(d) => d.range.clone(),
            None => statement(r.start)?,
        };
        // An indented statement outside every function and class listed
        // stands in a block (a `def` under a module-level `if` or `try`):
        // only the whole file says where its reads stand.
        if unlisted.is_none() && class.is_none() && around.start > 0 && !text[..around.start].ends_with(['\n', '\r']) {
            return None;
        }
        // So does one deeper than a class's members: a method under an
        // `if` or `try` of the class body, which the outline does not list.
        if let (None, Some(c)) = (unlisted, class) {
            let indent_at = |at: usize| {
                layout.lines.partition_point(|l| l.start <= at).checked_sub(1).map(|i| layout.lines[i].indent)
            };
            let members = layout.lines.iter().find(|l| c.body.contains(&l.start)).map(|l| l.indent);
            if indent_at(r.start) > members {
                return None;
            }
        }
        // An alias bound there (`tr = block["toolResult"]`) may be read
        // in functions that name no marker.
        if alias_value(r) || holds_key(around) {
            return None;
        }
    }
    // A function binding a module-level name may bind an alias that other
    // functions read without naming a marker.
    let lines = &layout.lines;
    if functions.iter().zip(&marked).any(|(f, &marked)| marked && outline::declares_global(text, lines, &f.def.range)) {
        return None;
    }
    let kept: Vec<outline::Function<'_>> = functions
        .iter()
        .zip(marked)
        .filter(|(f, marked)| *marked && holds_key(f.def.range.clone()))
        .map(|(f, _)| *f)
        .collect();
    Some(outline::function_ranges(text, &kept))
}

/// Whether a name in `receiver` resolves, by `model`, to what the module
/// binds (or to nothing): a part parsed without the module's own
/// statements cannot judge it.
fn names_module_binding(model: &SemanticModel, receiver: &Range<usize>) -> bool {
    model.references.iter().filter(|r| receiver.start <= r.at.start && r.at.end <= receiver.end).any(|r| {
        match model.resolve(&r.name, r.scope) {
            Resolution::Bindings { scope, .. } => model.scopes[scope].kind == ScopeKind::Module,
            _ => true,
        }
    })
}

/// Whether the marker at `r` may stand in a possible receiver, when it
/// stands in a comment or a plain string literal of `layout` (`None` when
/// in neither). A receiver's marker is in a name, an attribute or an
/// annotation's type, or it is the whole index of `X["toolResult"]` (also
/// parenthesized), written just so; a marker in a comment or in any other
/// string (a docstring, a template of generated code, a tuple of names)
/// is in none.
fn marker_in_string(layout: &syntax::lexer::Layout, text: &str, r: &Range<usize>) -> Option<bool> {
    if in_a_comment(&layout.comments, r) {
        return Some(false);
    }
    let at = layout.strings.partition_point(|s| s.range.start < r.start).checked_sub(1)?;
    let s = layout.strings.get(at).filter(|s| s.range.end >= r.end)?;
    let exact = matches!(&text[s.range.clone()], "\"toolResult\"" | "'toolResult'");
    Some(exact && may_be_an_index(text, &layout.comments, s))
}

/// Whether the bytes `r` stand in one of `comments` (in order).
fn in_a_comment(comments: &[Range<usize>], r: &Range<usize>) -> bool {
    let i = comments.partition_point(|c| c.start <= r.start);
    i.checked_sub(1).is_some_and(|i| r.end <= comments[i].end)
}

/// Whether the string `s` of `text` may be the index of a subscript: it
/// follows an opening parenthesis, or a `[` that follows what a subscript's
/// value ends with (a name, a closing bracket, a string), not an operator
/// or delimiter before a list display (`NAMES = ["toolResult"]`). Yes
/// when a comment (one of `comments`) stands in the way of telling.
fn may_be_an_index(text: &str, comments: &[Range<usize>], s: &syntax::lexer::PlainString) -> bool {
    let bytes = text.as_bytes();
    let before = |at: usize| bytes[..at].iter().rposition(|b| !b.is_ascii_whitespace() && *b != b'\\');
    match s.after {
        b'(' => true,
        b'[' => {
            let Some(open) = before(s.range.start).filter(|&i| bytes[i] == b'[') else { return true };
            // A `[` that opens the file opens a display.
            let Some(value_end) = before(open) else { return false };
            in_a_comment(comments, &(value_end..value_end + 1))
                || !matches!(
                    bytes[value_end],
                    b'=' | b'('
                        | b'['
                        | b'{'
                        | b','
                        | b':'
                        | b';'
                        | b'+'
                        | b'-'
                        | b'*'
                        | b'/'
                        | b'%'
                        | b'<'
                        | b'>'
                        | b'|'
                        | b'&'
                        | b'^'
                        | b'~'
                        | b'@'
                )
        }
        _ => false,
    }
}

/// Whether the marker at `at` in `text` may stand in a possible receiver
/// with a read, read from the bytes around it: the word (or string) it is
/// in is followed, past closing brackets and blanks, by `[` or `.`, or
/// preceded, past opening brackets, blanks and a dotted name, by `in` or
/// by the `:` of an annotation. A guess that only ever says yes too often:
/// a receiver's read, or the annotation of its parameter, always passes.
fn may_start_a_read(text: &str, at: &Range<usize>) -> bool {
    let bytes = text.as_bytes();
    // `X["toolResult"]`: a receiver by itself.
    if at.start > 0 && matches!(bytes[at.start - 1], b'"' | b'\'') {
        return true;
    }
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let blank = |b: u8| b.is_ascii_whitespace() || b == b'\\';
    // Forwards: the rest of the word, a string's closing quote and `]`.
    let mut end = at.end;
    while end < bytes.len() && word(bytes[end]) {
        end += 1;
    }
    while end < bytes.len() && (blank(bytes[end]) || matches!(bytes[end], b')' | b']' | b'"' | b'\'')) {
        end += 1;
    }
    if end < bytes.len() && matches!(bytes[end], b'[' | b'.') {
        return true;
    }
    // Backwards: the dotted name it is in, opening brackets.
    let mut start = at.start;
    while start > 0 && (word(bytes[start - 1]) || bytes[start - 1] == b'.') {
        start -= 1;
    }
    while start > 0 && (blank(bytes[start - 1]) || bytes[start - 1] == b'(') {
        start -= 1;
    }
    let before = &bytes[..start];
    before.ends_with(b":") || (before.ends_with(b"in") && (before.len() == 2 || !word(before[before.len() - 3])))
}

/// Whether the marker at `at` in `text` is `tool_result` or `toolResult`
/// in the name of an attribute (`view(m).last_tool_result`).
fn in_marked_attribute(text: &str, at: &Range<usize>) -> bool {
    let bytes = text.as_bytes();
    let start = at.start - bytes[..at.start].iter().rev().take_while(|&&b| syntax::lexer::is_ident_byte(b)).count();
    start > 0 && bytes[start - 1] == b'.' && matches!(&text[at.clone()], "tool_result" | "toolResult")
}

/// Whether a call (given its tree's root and the model) is worth following
/// as a receiver.
type WantedCall<'a> = dyn Fn(Node<'_>, Node<'_>, &SemanticModel) -> bool + 'a;

/// The receivers of module `m`'s `text`: its calls whose results are read.
/// `outlined`: the text is an outline's, which only tells when every
/// function a result is handed to was kept whole (`None` otherwise).
/// `wanted`: which calls to follow (all, if none is given).
fn receivers_of(
    m: usize,
    text: &str,
    whole: Option<&Parsed>,
    names: &BTreeSet<String>,
    hits: Option<&[usize]>,
    outlined: Option<&Outlined>,
    wanted: Option<&WantedCall<'_>>,
) -> Option<Vec<Receiver>> {
    let owned;
    let parsed = match whole {
        Some(parsed) => parsed,
        None => {
            owned = Parsed::of(text);
            &owned
        }
    };
    let (root, model) = (parsed.tree.root_node(), &parsed.model);
    let index = LineIndex::new(text);
    let mut receivers = Vec::new();
    let wanted = |call: Node<'_>| wanted.is_none_or(|w| w(call, root, model));
    let mut calls = match outlined {
        Some(o) => call_reads_in(root, text, model, &|at| o.holds(at), &wanted, None)?,
        None => {
            // The calls followed stand in the functions holding the names'
            // places, where those say so: a big module's other functions
            // are not walked.
            let within = hits.and_then(|hits| hit_function_ranges(text, hits));
            call_reads_in(root, text, model, &|_| true, &wanted, within.as_deref()).unwrap_or_default()
        }
    };
    // A call whose result is dropped or returned has no reads, but named
    // like a producer it may be a call toolshape cannot resolve.
    let mut read: Vec<(usize, usize)> = calls.iter().map(|c| (c.call.start, c.call.end)).collect();
    read.sort_unstable();
    let named = |node: Node<'_>| {
        if read.binary_search(&(node.start_byte(), node.end_byte())).is_err()
            && last_name(node, text).is_some_and(|n| names.contains(n))
        {
            Some(crate::semantic::reads::CallReads { call: node.byte_range(), reads: Vec::new(), exclusive: true })
        } else {
            None
        }
    };
    match hits {
        // The names' places (whole names of `text`) lead to the calls they
        // end: a walk of a big module's every node costs far more.
        Some(hits) => {
            let mut found: Vec<_> = hits.iter().filter_map(|&at| called_at(root, text, at)).filter_map(named).collect();
            // In the walk's order: by start, an outer call first.
            found.sort_by_key(|c| (c.call.start, std::cmp::Reverse(c.call.end)));
            calls.extend(found);
        }
        None => syntax::for_each_node(root, |node| {
            if node.kind_name() == "call" {
                calls.extend(named(node));
            }
        }),
    }
    for cr in calls {
        let Some(call) = root.descendant_for_byte_range(cr.call.start, cr.call.end).filter(|n| n.kind_name() == "call")
        else {
            continue;
        };
        let callee = super::instance_callee(call, root, text, model).or_else(|| callee_of(call, text, model));
        let tool_name = direct_tool_name(call, text);
        let unresolved = last_name(call, text).filter(|n| names.contains(*n)).map(|n| {
            let escape = Read {
                form: ReadForm::Escape,
                key: None,
                range: call.byte_range(),
                receiver: call.byte_range(),
                quote: '"',
                block: None,
            };
            (n.to_owned(), ReadSite::of(m, text, &index, &escape))
        });
        // A call that resolves to nothing is no receiver, unless it is
        // named like a producer.
        if callee.is_none() && tool_name.is_none() && unresolved.is_none() {
            continue;
        }
        let reads = cr.reads.iter().map(|r| ReadSite::of(m, text, &index, r)).collect();
        receivers.push(Receiver {
            module: m,
            call: cr.call.clone(),
            callee,
            tool_name,
            reads,
            exclusive: cr.exclusive,
            keywords: constant_keywords(call, text),
            value_use: None,
            unresolved,
        });
    }
    // A producer used as a value: a receiver that reads every key where
    // toolshape cannot follow.
    for node in value_uses(root, text, model, names, hits) {
        let callee = super::instance_callee_of_function(node, root, text, model)
            .or_else(|| super::callee_of_function(node, text, model));
        let named =
            crate::semantic::reads::called_through_wrapper(node) || crate::semantic::reads::gives_another_name(node);
        // A tool's use escapes in those forms, and handed to a call that
        // keeps its value; an unresolved use only in the first two.
        let escapes = named || crate::semantic::reads::handed_to_a_kept_call(node, text, model);
        // Named like a producer, and called later, it may be a use
        // toolshape cannot resolve.
        let name = match node.kind_name() {
            "attribute" => node.field("attribute").map(|a| &text[a.byte_range()]),
            _ => Some(&text[node.byte_range()]),
        };
        let unresolved = name.filter(|n| named && names.contains(*n)).map(|n| n.to_owned());
        if callee.is_none() && unresolved.is_none() {
            continue;
        }
        let read = Read {
            form: ReadForm::Escape,
            key: None,
            range: node.byte_range(),
            receiver: node.byte_range(),
            quote: '"',
            block: None,
        };
        receivers.push(Receiver {
            module: m,
            call: node.byte_range(),
            callee,
            tool_name: None,
            reads: vec![ReadSite::of(m, text, &index, &read)],
            exclusive: false,
            keywords: Vec::new(),
            value_use: Some(if escapes { ValueUse::Escaping } else { ValueUse::Plain }),
            unresolved: unresolved.map(|n| (n, ReadSite::of(m, text, &index, &read))),
        });
    }
    // A producer handed to its decorators: the same.
    for (decorator, callee) in decorated_functions(root, text, names) {
        let read = Read {
            form: ReadForm::Escape,
            key: None,
            range: decorator.byte_range(),
            receiver: decorator.byte_range(),
            quote: '"',
            block: None,
        };
        receivers.push(Receiver {
            module: m,
            call: decorator.byte_range(),
            callee: Some(callee),
            tool_name: None,
            reads: vec![ReadSite::of(m, text, &index, &read)],
            exclusive: false,
            keywords: Vec::new(),
            value_use: Some(ValueUse::Decorator),
            unresolved: None,
        });
    }
    Some(receivers)
}

/// The decorators that hand a function named one of `names` to code
/// toolshape does not follow ([`crate::semantic::opaque_decorators`]), each
/// with the function as a callee: a module-level `def` (`F`) or a method
/// directly in a module-level class (`K.F`).
fn decorated_functions<'t>(root: Node<'t>, text: &str, names: &BTreeSet<String>) -> Vec<(Node<'t>, Callee)> {
    // The definition a statement holds, its decorators seen through.
    let defined = |statement: Node<'t>| match statement.kind_name() {
        "decorated_definition" => statement.field("definition"),
        _ => Some(statement),
    };
    let mut out = Vec::new();
    let mut found = |def: Node<'t>, class: Option<&str>| {
        let Some(name) = def.field("name").map(|n| &text[n.byte_range()]) else { return };
        if !names.contains(name) {
            return;
        }
        for d in crate::semantic::opaque_decorators(def, text) {
            let callee = match class {
                None => Callee::Name(name.to_owned()),
                Some(class) => Callee::Method { class: class.to_owned(), name: name.to_owned() },
            };
            out.push((d, callee));
        }
    };
    let mut top = root.walk();
    for statement in root.named_children(&mut top) {
        let Some(def) = defined(statement) else { continue };
        match def.kind_name() {
            "function_definition" => found(def, None),
            "class_definition" => {
                let Some(class) = def.field("name").map(|n| &text[n.byte_range()]) else { continue };
                let Some(body) = def.field("body") else { continue };
                let mut members = body.walk();
                for member in body.named_children(&mut members) {
                    if let Some(method) = defined(member).filter(|d| d.kind_name() == "function_definition") {
                        found(method, Some(class));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// A search for the identifiers `names` in a text, in one pass: an
/// Aho-Corasick automaton for the usual few hundred names, a set of the
/// text's words past [`NameSearch::AUTOMATON_NAMES`] (a generated file can
/// define 100,000 producers, and building the automaton for names sharing
/// prefixes, `n1`, `n10`, `n100`..., takes time quadratic in them).
enum NameSearch {
    /// Every match is reported (overlapping), kept only as a whole word: a
    /// leftmost-longest automaton is itself built in quadratic time.
    Automaton(Option<syntax::search::Patterns>),
    Words(HashSet<String>),
}

impl NameSearch {
    const AUTOMATON_NAMES: usize = 2_000;

    fn new<'n>(names: impl IntoIterator<Item = &'n String>) -> Self {
        let names: Vec<&String> = names.into_iter().filter(|n| !n.is_empty()).collect();
        if names.len() > Self::AUTOMATON_NAMES {
            return NameSearch::Words(names.into_iter().cloned().collect());
        }
        NameSearch::Automaton(syntax::search::Patterns::new(names).ok())
    }

    /// Where each word of `text` that is one of the names starts, in order.
    fn hits<'t>(&'t self, text: &'t str) -> Box<dyn Iterator<Item = usize> + 't> {
        let bytes = text.as_bytes();
        let word = syntax::lexer::is_ident_byte;
        match self {
            NameSearch::Automaton(names) => Box::new(names.iter().flat_map(|names| names.name_matches(text))),
            // The maximal runs of name bytes, each looked up.
            NameSearch::Words(names) => {
                let mut at = 0;
                Box::new(std::iter::from_fn(move || {
                    while at < bytes.len() {
                        let start = at + bytes[at..].iter().take_while(|&&b| !word(b)).count();
                        let end = start + bytes[start..].iter().take_while(|&&b| word(b)).count();
                        at = end;
                        if end > start && text.get(start..end).is_some_and(|w| names.contains(w)) {
                            return Some(start);
                        }
                    }
                    None
                }))
            }
        }
    }
}

/// The call whose callee's last name ([`last_name`]: `N` of `N(...)`, of
/// `X.N(...)`, parentheses seen through) is the name starting at `at`.
fn called_at<'t>(root: Node<'t>, text: &str, at: usize) -> Option<Node<'t>> {
    let len = text.as_bytes()[at..].iter().take_while(|&&b| syntax::lexer::is_ident_byte(b)).count();
    let name = root
        .descendant_for_byte_range(at, at + len)
        .filter(|n| n.kind_name() == "identifier" && n.start_byte() == at && n.end_byte() == at + len)?;
    let function = match name.parent() {
        Some(p) if p.kind_name() == "attribute" && p.field("attribute") == Some(name) => p,
        _ => name,
    };
    let (function, parent) = crate::syntax::tree::parenthesized_in(function);
    parent.filter(|call| call.kind_name() == "call" && call.field("function") == Some(function))
}

/// The keyword arguments of `call` whose values are constant strings.
fn constant_keywords(call: Node<'_>, text: &str) -> Vec<(String, String)> {
    let Some(args) = call.field("arguments") else { return Vec::new() };
    let mut cursor = args.walk();
    args.named_children(&mut cursor)
        .filter(|a| a.kind_name() == "keyword_argument")
        .filter_map(|a| {
            let name = a.field("name")?;
            let value = crate::syntax::tree::constant_str(a.field("value")?, text)?;
            Some((text[name.byte_range()].to_owned(), value))
        })
        .collect()
}

/// `NAME` of a direct tool call `X.tool.NAME(...)`.
fn direct_tool_name(call: Node<'_>, src: &str) -> Option<String> {
    let function = call.field("function").filter(|f| f.kind_name() == "attribute")?;
    let object = function.field("object").filter(|o| o.kind_name() == "attribute")?;
    let tool = object.field("attribute")?;
    let name = function.field("attribute")?;
    (&src[tool.byte_range()] == "tool").then(|| src[name.byte_range()].to_owned())
}

/// Module-level functions and methods of module-level classes: each with
/// its class.
pub(super) fn definitions<'t>(root: Node<'t>, src: &str) -> Vec<(Option<String>, Node<'t>)> {
    let mut out = Vec::new();
    let defs_in = |block: Node<'t>| -> Vec<Node<'t>> {
        let mut cursor = block.walk();
        block
            .named_children(&mut cursor)
            .map(|c| if c.kind_name() == "decorated_definition" { c.field("definition").unwrap_or(c) } else { c })
            .collect()
    };
    for node in defs_in(root) {
        match node.kind_name() {
            "function_definition" => out.push((None, node)),
            "class_definition" => {
                let class = node.field("name").map(|n| src[n.byte_range()].to_owned());
                if let Some(body) = node.field("body") {
                    for def in defs_in(body).into_iter().filter(|d| d.kind_name() == "function_definition") {
                        out.push((class.clone(), def));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Each `return` statement in `def`'s own scope, with its value.
pub(super) fn return_statements_at<'t>(def: Node<'t>) -> Vec<(Node<'t>, Option<Node<'t>>)> {
    // A walk that skips expressions finds the same returns in the same
    // order. Where the parse has errors, every node is looked at.
    let whole = def.has_error();
    let holds_statements = |n: Node<'_>| whole || crate::syntax::tree::holds_statements(n.kind_name());
    let mut out = Vec::new();
    own_scope_nodes(def, holds_statements, |node| {
        if node.kind_name() == "return_statement" {
            out.push((node, operand(node)));
        }
    });
    out
}

/// The parameters of `def` (its scope `scope`) a call may dispatch on: not
/// `*args` or `**kwargs`, and bound in the function only as parameters.
fn dispatch_parameters(def: Node<'_>, scope: usize, text: &str, model: &SemanticModel) -> Vec<String> {
    use crate::semantic::scope::BindingKind;
    let Some(parameters) = def.field("parameters") else { return Vec::new() };
    let mut out = Vec::new();
    let mut cursor = parameters.walk();
    for p in parameters.named_children(&mut cursor) {
        let name = match p.kind_name() {
            "identifier" => Some(p),
            "default_parameter" | "typed_default_parameter" => p.field("name"),
            "typed_parameter" => p.named_child(0).filter(|n| n.kind_name() == "identifier"),
            _ => None,
        };
        let Some(name) = name.map(|n| &text[n.byte_range()]) else { continue };
        let only_parameter = matches!(model.resolve(name, scope), Resolution::Bindings { scope: s, bindings }
            if s == scope && bindings.iter().all(|&b| model.bindings[b].kind == BindingKind::Parameter));
        if only_parameter {
            out.push(name.to_owned());
        }
    }
    out
}

/// `(P, C)` when `test` (parentheses seen through) is `P == C` or `C == P`,
/// `P` one of `parameters`, `C` a constant string.
fn dispatch_test(test: Node<'_>, parameters: &[String], text: &str) -> Option<(String, String)> {
    let test = unparenthesize(test);
    if test.kind_name() != "comparison_operator" {
        return None;
    }
    let mut cursor = test.walk();
    let operands: Vec<Node<'_>> = test.named_children(&mut cursor).filter(|n| n.kind_name() != "comment").collect();
    let [a, b] = operands.as_slice() else { return None };
    if text[a.end_byte()..b.start_byte()].trim() != "==" {
        return None;
    }
    let (a, b) = (unparenthesize(*a), unparenthesize(*b));
    let (name, constant) = if a.kind_name() == "identifier" { (a, b) } else { (b, a) };
    let name = &text[name.byte_range()];
    let constant = crate::syntax::tree::constant_str(constant, text)?;
    parameters.iter().any(|p| p == name).then(|| (name.to_owned(), constant))
}

/// When the return `statement` of `def` can run, as constraints on the
/// dispatch `parameters` (`docs/rules.md`, "Dispatch by a constant").
fn dispatch_when(def: Node<'_>, statement: Node<'_>, parameters: &[String], text: &str) -> Vec<(String, String, bool)> {
    let mut when = Vec::new();
    // Up from the statement: the `if`/`elif` bodies it is in, and the
    // clauses it follows.
    let mut child = statement;
    while let Some(parent) = child.parent() {
        if parent.id() == def.id() {
            break;
        }
        match parent.kind_name() {
            "if_statement" | "elif_clause" if parent.field("consequence") == Some(child) => {
                if let Some((p, c)) = parent.field("condition").and_then(|t| dispatch_test(t, parameters, text)) {
                    when.push((p, c, true));
                }
            }
            "if_statement" if matches!(child.kind_name(), "elif_clause" | "else_clause") => {
                // The tests of the `if` and of the `elif`s before `child`.
                let mut tests = vec![parent.field("condition")];
                let mut cursor = parent.walk();
                for clause in parent.children_by_field_name("alternative", &mut cursor) {
                    if clause.id() == child.id() {
                        break;
                    }
                    tests.push(clause.field("condition"));
                }
                for (p, c) in tests.into_iter().flatten().filter_map(|t| dispatch_test(t, parameters, text)) {
                    when.push((p, c, false));
                }
            }
            _ => {}
        }
        child = parent;
    }
    // After an `if P == C:` in the body itself whose body ends in a
    // `return` or a `raise`.
    if let Some(body) = def.field("body") {
        let mut cursor = body.walk();
        for s in body
            .named_children(&mut cursor)
            .filter(|s| s.kind_name() == "if_statement" && s.end_byte() <= statement.start_byte())
        {
            let ends = s.field("consequence").and_then(|b| {
                let mut c = b.walk();
                b.named_children(&mut c).filter(|n| n.kind_name() != "comment").last()
            });
            if ends.is_some_and(|e| matches!(e.kind_name(), "return_statement" | "raise_statement"))
                && let Some((p, c)) = s.field("condition").and_then(|t| dispatch_test(t, parameters, text))
            {
                when.push((p, c, false));
            }
        }
    }
    when
}

/// Whether the statements of `block` always end in a `return` or a
/// `raise`: its last statement is one, or an `if` with an `else` (a `try`,
/// a `with`) whose every branch always does.
fn always_returns(block: Node<'_>) -> bool {
    let mut cursor = block.walk();
    let Some(last) = block.named_children(&mut cursor).filter(|c| c.kind_name() != "comment").last() else {
        return false;
    };
    fn body_of(n: Node<'_>) -> Option<Node<'_>> {
        n.field("body").or_else(|| n.field("consequence"))
    }
    match last.kind_name() {
        "return_statement" | "raise_statement" => true,
        "if_statement" => {
            let mut cursor = last.walk();
            let branches: Vec<Node<'_>> = last.children_by_field_name("alternative", &mut cursor).collect();
            body_of(last).is_some_and(always_returns)
                && branches.iter().any(|b| b.kind_name() == "else_clause")
                && branches.iter().all(|b| body_of(*b).is_some_and(always_returns))
        }
        "with_statement" => body_of(last).is_some_and(always_returns),
        "try_statement" => {
            let mut cursor = last.walk();
            let mut ok = body_of(last).is_some_and(always_returns);
            for clause in last.named_children(&mut cursor) {
                match clause.kind_name() {
                    "except_clause" | "except_group_clause" => {
                        let mut c = clause.walk();
                        let block = clause.named_children(&mut c).filter(|n| n.kind_name() == "block").last();
                        ok &= block.is_some_and(always_returns);
                    }
                    // An `else` runs only when the body did not return.
                    "else_clause" => ok = false,
                    _ => {}
                }
            }
            ok
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`possible_ranges`] parses of `text` for the possible reads of
    /// `keys`, as the texts of the ranges.
    fn parsed<'t>(text: &'t str, keys: &[&str]) -> Option<Vec<&'t str>> {
        let mut markers: Vec<Range<usize>> =
            POSSIBLE.iter().flat_map(|m| text.match_indices(m).map(|(at, m)| at..at + m.len())).collect();
        markers.sort_by_key(|r| (r.start, r.end));
        possible_ranges(text, &markers, keys).map(|ranges| ranges.into_iter().map(|r| &text[r]).collect())
    }

    /// The functions [`hit_function_ranges`] keeps of `text` for the hits
    /// at each whole word `producer`, by their names.
    fn kept_for(text: &str, producer: &str) -> Option<Vec<String>> {
        let bytes = text.as_bytes();
        let word = |at: usize| {
            let ident = |i: Option<&u8>| i.is_some_and(|&b| syntax::lexer::is_ident_byte(b));
            !ident(at.checked_sub(1).and_then(|i| bytes.get(i))) && !ident(bytes.get(at + producer.len()))
        };
        let hits: Vec<usize> = text.match_indices(producer).map(|(at, _)| at).filter(|&at| word(at)).collect();
        let ranges = hit_function_ranges(text, &hits)?;
        Some(ranges.iter().map(|r| text[r.clone()].split(['(', ' ']).nth(1).unwrap_or_default().to_owned()).collect())
    }

    #[test]
    fn a_global_bound_where_no_producer_is_named_keeps_its_function_not_the_whole_file() {
        let module = concat!(
            "_last = 0\n",
            "def wait():\n",
            "    global _last\n",
            "    _last = 1\n",
            "def other():\n",
            "    return 2\n",
            "def reader():\n",
            "    r = ok('x')\n",
            "    return r['frames']\n",
        );
        assert_eq!(kept_for(module, "ok"), Some(vec!["wait".to_owned(), "reader".to_owned()]));
        // A function naming a producer that binds a module-level name may
        // bind it to the producer or its result, read anywhere: only the
        // whole file says where.
        let binding = module.replace("    _last = 1\n", "    _last = ok('y')\n");
        assert_eq!(kept_for(&binding, "ok"), None);
    }

    #[test]
    fn markers_in_comments_and_strings_ask_for_no_parse() {
        // A docstring, comments, a template of generated code, a tuple and
        // a list of names: none is a receiver, even at module level beside
        // a key and after an `=`.
        let src = concat!(
            "\"\"\"Reads `X[\"toolResult\"]` and `tool_result.frames`.\"\"\"\n",
            "# tool_result[\"frames\"]\n",
            "TEMPLATE = 'x = tool_result[\"frames\"]'\n",
            "NAMES = (\"tool_result\", \"toolResult\")\n",
            "KEYS = [\"toolResult\", \"frames\"]\n",
            "def f(m):\n",
            "    # the toolResult of m\n",
            "    return m[\"frames\"]\n",
        );
        assert_eq!(parsed(src, &["frames"]), Some(Vec::new()));
        // In code they still are: a marked name, `X["toolResult"]` (also
        // parenthesized, and as an alias's value), a name in an f-string's
        // replacement field.
        let read = "def g(m):\n    return m[\"toolResult\"][\"frames\"]\n";
        assert_eq!(parsed(&format!("{src}{read}"), &["frames"]), Some(vec![read]));
        let read = "def g(m):\n    return m[(\"toolResult\")][\"frames\"]\n";
        assert_eq!(parsed(&format!("{src}{read}"), &["frames"]), Some(vec![read]));
        let read = "def g(m):\n    return (m  # a comment ending in =\n        [\"toolResult\"][\"frames\"])\n";
        assert_eq!(parsed(&format!("{src}{read}"), &["frames"]), Some(vec![read]));
        let read = "def g(tool_result):\n    return f'{tool_result[\"frames\"]}'\n";
        assert_eq!(parsed(&format!("{src}{read}"), &["frames"]), Some(vec![read]));
        assert_eq!(parsed(&format!("{src}tr = block[\"toolResult\"]\n"), &["frames"]), None);
    }

    #[test]
    fn both_searches_for_quoted_keys_agree() {
        let texts = [
            "",
            "\"k\"",
            "'k'",
            "x = \"k' + 'k\"",
            "d[k] = kk + \"kk\" + r'k' + b\"k\"",
            "tr.get(\"is\" \"Error\") or tr['isError']",
            "\"\"\"isError\"\"\" 'metrics\"",
            "'metrics'",
        ];
        let keys: Vec<String> = ["isError", "k", "metrics"].map(String::from).to_vec();
        let finders = QuotedKeys::new(&keys);
        assert!(matches!(finders, QuotedKeys::Finders(_)));
        let quoted = keys.iter().flat_map(|k| [format!("\"{k}\""), format!("'{k}'")]);
        let packed = QuotedKeys::Packed(syntax::search::Patterns::new(quoted).expect("literal patterns"));
        for text in texts.iter().map(|t| t.to_string()).chain([format!("{}'metrics'", "y = 'k ".repeat(400))]) {
            assert_eq!(finders.any_in(&text), packed.any_in(&text), "{text:?}");
            assert_eq!(finders.held_in(&text, 3), packed.held_in(&text, 3), "{text:?}");
        }
        let many: Vec<String> = (0..=QuotedKeys::FINDERS_UP_TO).map(|i| format!("key{i}")).collect();
        assert!(matches!(QuotedKeys::new(&many), QuotedKeys::Packed(_)));
    }
}
