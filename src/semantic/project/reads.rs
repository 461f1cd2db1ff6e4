//! The project's reads of moved keys (`docs/rules.md`, "Reads of moved
//! keys"): the origin of each finding, the producers (functions whose
//! returns carry keyed origins, through return chains), the receivers of
//! their results in every project file that names one, and the reads of
//! each receiver handed back to the findings of their origins.
//!
//! Files are read only if they name a producer (an aho-corasick search
//! over the producers' names, repeated while chains add new ones): a
//! receiver always calls a producer by its name, or names it in an import.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;

use rayon::prelude::*;
use tree_sitter::Node;

use super::{BuilderKey, Callee, Project, callee_of, module_bindings};
use crate::diagnostics::{Code, Finding};
use crate::semantic::is_strands_tool;
use crate::semantic::reads::{ReadForm, call_reads};
use crate::semantic::results::result_names;
use crate::semantic::scope::SemanticModel;
use crate::syntax::tree::unparenthesize;
use crate::syntax::{self, LineIndex, Position};

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
}

/// A call whose result is read.
struct Receiver {
    module: usize,
    call: Range<usize>,
    callee: Option<Callee>,
    /// `X.tool.NAME(...)`: `NAME`.
    tool_name: Option<String>,
    reads: Vec<ReadSite>,
}

/// The keys of every origin, and the keyed write origins (TS004) by the
/// display of the result name they write into.
struct Origins {
    keyed: HashMap<OriginId, Vec<String>>,
    writes: HashMap<OriginId, Vec<Keyed>>,
}

/// What one scanned file gives.
#[derive(Default)]
struct Scanned {
    producers: Vec<Producer>,
    receivers: Vec<Receiver>,
    facts: Option<super::Facts>,
    /// Scanned around its origins only (its facts are partial).
    partial: bool,
}

impl Project {
    /// The reads of every finding of `given` (each checked module with its
    /// findings), aligned with them; `read` reads a module's text.
    pub fn reads(
        &mut self,
        given: &[(usize, &[Finding])],
        read: impl Fn(&std::path::Path) -> Option<String> + Sync,
    ) -> Vec<Vec<FindingReads>> {
        let mut out: Vec<Vec<FindingReads>> = given
            .iter()
            .map(|(_, f)| f.iter().map(|f| FindingReads { origin: f.dict.clone(), reads: Vec::new() }).collect())
            .collect();
        if given.iter().all(|(_, f)| f.iter().all(|f| f.key.is_none())) {
            return out;
        }
        // Origins of the findings, and which findings each one holds.
        let mut at_origin: HashMap<OriginId, Vec<(usize, usize)>> = HashMap::new();
        let mut keyed_at: HashMap<&OriginId, Vec<String>> = HashMap::new();
        let mut origins: Vec<Vec<OriginId>> = Vec::new();
        // Each given file's text, and its findings' origins (a write's
        // needs the tree), in parallel.
        let read_given: Vec<Option<(String, Vec<OriginId>)>> = given
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
        let mut texts: Vec<(usize, String)> = Vec::new();
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
                at_origin.entry(*o).or_default().push((g, i));
            }
        }
        let mut writes: HashMap<OriginId, Vec<Keyed>> = HashMap::new();
        for (g, of_file) in origins.iter().enumerate() {
            for (i, o) in of_file.iter().enumerate() {
                let f = &given[g].1[i];
                if let Some(key) = &f.key {
                    keyed_at.entry(o).or_default().push(key.clone());
                    if f.code == Code::LaterWrite {
                        writes.entry(origin(o.0, &f.dict)).or_default().push((key.clone(), *o));
                    }
                }
            }
        }
        let keyed: HashMap<OriginId, Vec<String>> = keyed_at.into_iter().map(|(o, keys)| (*o, keys)).collect();
        let known = Origins { keyed, writes };
        let keyed = &known.keyed;
        // Scan the given files, then every file naming a producer found so
        // far, until chains add no new name.
        let mut scanned: HashMap<usize, Scanned> = HashMap::new();
        // The given files are first parsed only around their origins (the
        // definitions holding them): a given file is scanned whole, like
        // any other, once it names a producer elsewhere.
        let mut regions: HashMap<usize, Vec<Range<usize>>> = HashMap::new();
        for ((m, _), of_file) in given.iter().zip(&origins) {
            let mut r: Vec<Range<usize>> = of_file.iter().map(|o| o.1..o.2).collect();
            r.sort_by_key(|r| (r.start, r.end));
            regions.insert(*m, r);
        }
        let mut partial: BTreeSet<usize> = BTreeSet::new();
        let mut batch: Vec<(usize, String)> = texts;
        let mut names: BTreeSet<String> = BTreeSet::new();
        let mut keys: HashMap<BuilderKey, BTreeSet<Keyed>>;
        // The texts of the scanned files, for their receivers.
        let mut scanned_texts: Vec<(usize, String)> = Vec::new();
        loop {
            let results: Vec<(usize, Scanned)> = batch
                .par_iter()
                .map(|(m, text)| {
                    let around = (!scanned.contains_key(m)).then(|| regions.get(m)).flatten();
                    (*m, scan(*m, text, &known, around.map(Vec::as_slice)))
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
            scanned_texts.append(&mut batch);
            keys = self.producer_keys(&scanned);
            let found: BTreeSet<String> =
                keys.iter().filter(|(_, k)| !k.is_empty()).map(|(key, _)| key.2.clone()).collect();
            let new: Vec<String> = found.difference(&names).cloned().collect();
            names = found;
            if new.is_empty() {
                break;
            }
            let search = NameSearch::new(&new);
            let (scanned, partial) = (&scanned, &partial);
            batch = (0..self.modules.len())
                .into_par_iter()
                .filter(|m| !scanned.contains_key(m) || partial.contains(m))
                .filter_map(|m| {
                    let text = read(&self.modules[m].path)?;
                    // A file scanned around its origins names a producer
                    // when it does so elsewhere than in the `def`s scanned.
                    let own: BTreeSet<usize> = match partial.contains(&m) {
                        true => scanned[&m].producers.iter().map(|p| p.name_at).collect(),
                        false => BTreeSet::new(),
                    };
                    let names_one = search.hits(&text).any(|at| !own.contains(&at));
                    names_one.then_some((m, text))
                })
                .collect();
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
                .filter(|(_, text)| search.hits(text).next().is_some())
                .map(|(m, text)| (*m, receivers_of(*m, text)))
                .collect();
            for (m, receivers) in found {
                if let Some(s) = scanned.get_mut(&m) {
                    s.receivers = receivers;
                }
            }
        }
        // Direct tool calls reach the tools of that name.
        let mut tools: HashMap<&str, BTreeSet<Keyed>> = HashMap::new();
        for s in scanned.values() {
            for p in s.producers.iter().filter(|p| p.tool) {
                if let Some(k) = keys.get(&p.key) {
                    tools.entry(p.key.2.as_str()).or_default().extend(k.iter().cloned());
                }
            }
        }
        let mut modules: Vec<&usize> = scanned.keys().collect();
        modules.sort();
        for m in modules {
            for r in &scanned[m].receivers {
                let mut reached: BTreeSet<Keyed> = BTreeSet::new();
                if let Some(key) = r.callee.as_ref().and_then(|c| self.function_of(r.module, c)) {
                    reached.extend(keys.get(&key).into_iter().flatten().cloned());
                }
                let here: OriginId = origin(r.module, &r.call);
                if let Some(ks) = keyed.get(&here) {
                    reached.extend(ks.iter().map(|k| (k.clone(), here)));
                }
                if let Some(name) = &r.tool_name {
                    reached.extend(tools.get(name.as_str()).into_iter().flatten().cloned());
                }
                for read in &r.reads {
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
        for per_file in &mut out {
            for FindingReads { reads, .. } in per_file {
                reads.sort_by(|a, b| {
                    (&self.modules[a.module].path, a.start, a.end).cmp(&(&self.modules[b.module].path, b.start, b.end))
                });
                reads.dedup();
            }
        }
        out
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

    /// The function `callee`, called in module `from`, resolves to.
    fn function_of(&self, from: usize, callee: &Callee) -> Option<BuilderKey> {
        self.resolve_function(from, callee)
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
        if n.kind().ends_with("_statement") && n.start_byte() <= f.entry.start && f.entry.end <= n.end_byte() {
            return n.byte_range();
        }
        node = n.parent();
    }
    f.entry.clone()
}

/// The producers and receivers of module `m`'s `text`; `keyed` holds the
/// keys of every origin.
fn scan(m: usize, text: &str, origins: &Origins, around: Option<&[Range<usize>]>) -> Scanned {
    // Only the definitions around `around`, when that parse is clean.
    let part = around.map(|r| syntax::parse_ranges(text, &super::definition_spans(text, r)));
    let partial = part.as_ref().is_some_and(|t| !t.root_node().has_error());
    let tree = match part {
        Some(t) if partial => t,
        _ => syntax::parse(text),
    };
    let root = tree.root_node();
    let model = SemanticModel::build(root, text);
    let names = result_names(&model, root, text);
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
        let name_range = def.child_by_field_name("name").map_or(0..0, |n| n.byte_range());
        let name_at = name_range.start;
        let name = text[name_range].to_owned();
        let scope = scope_of.get(&def.start_byte()).copied().unwrap_or_default();
        let mut own = Vec::new();
        let mut chains = Vec::new();
        for value in returns(def) {
            let value = unparenthesize(value);
            match value.kind() {
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
                    if let Some(c) = callee_of(value, text, &model) {
                        chains.push(c);
                    }
                }
                _ => {}
            }
        }
        let tool = is_strands_tool(def, text);
        producers.push(Producer { key: (m, class, name), tool, own, chains, name_at });
    }
    // A partial parse knows only some module-level names.
    let mut facts = module_bindings(root, text, &model);
    if partial {
        facts.bindings.retain(|_, b| !matches!(b, super::Bound::Other));
    }
    Scanned { producers, receivers: Vec::new(), facts: Some(facts), partial }
}

/// The receivers of module `m`'s `text`: its calls whose results are read.
fn receivers_of(m: usize, text: &str) -> Vec<Receiver> {
    let tree = syntax::parse(text);
    let root = tree.root_node();
    let model = SemanticModel::build(root, text);
    let index = LineIndex::new(text);
    let mut receivers = Vec::new();
    for cr in call_reads(root, text, &model) {
        let Some(call) = root.descendant_for_byte_range(cr.call.start, cr.call.end).filter(|n| n.kind() == "call")
        else {
            continue;
        };
        let reads = cr
            .reads
            .iter()
            .map(|r| {
                let (start, end) = index.span(text, &r.range);
                let written = text[r.range.clone()].lines().next().unwrap_or_default();
                let text: String = written.chars().take(60).collect();
                ReadSite { module: m, start, end, form: r.form, key: r.key.clone(), text }
            })
            .collect();
        receivers.push(Receiver {
            module: m,
            call: cr.call.clone(),
            callee: callee_of(call, text, &model),
            tool_name: direct_tool_name(call, text),
            reads,
        });
    }
    receivers
}

/// A search for the identifiers `names` in a text (thousands of them in a
/// generated file): the text's words are looked up in a set, in one pass.
struct NameSearch<'n> {
    names: std::collections::HashSet<&'n str>,
}

impl<'n> NameSearch<'n> {
    fn new(names: impl IntoIterator<Item = &'n String>) -> Self {
        NameSearch { names: names.into_iter().map(String::as_str).collect() }
    }

    /// Where each word of `text` that is one of the names starts.
    fn hits<'t>(&'t self, text: &'t str) -> impl Iterator<Item = usize> + 't {
        let bytes = text.as_bytes();
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
        let mut at = 0;
        std::iter::from_fn(move || {
            while at < bytes.len() {
                if !word(bytes[at]) {
                    at += 1;
                    continue;
                }
                let start = at;
                while at < bytes.len() && word(bytes[at]) {
                    at += 1;
                }
                if self.names.contains(&text[start..at]) {
                    return Some(start);
                }
            }
            None
        })
    }
}

/// `NAME` of a direct tool call `X.tool.NAME(...)`.
fn direct_tool_name(call: Node<'_>, src: &str) -> Option<String> {
    let function = call.child_by_field_name("function").filter(|f| f.kind() == "attribute")?;
    let object = function.child_by_field_name("object").filter(|o| o.kind() == "attribute")?;
    let tool = object.child_by_field_name("attribute")?;
    let name = function.child_by_field_name("attribute")?;
    (&src[tool.byte_range()] == "tool").then(|| src[name.byte_range()].to_owned())
}

/// Module-level functions and methods of module-level classes: each with
/// its class.
fn definitions<'t>(root: Node<'t>, src: &str) -> Vec<(Option<String>, Node<'t>)> {
    let mut out = Vec::new();
    let defs_in =
        |block: Node<'t>| -> Vec<Node<'t>> {
            let mut cursor = block.walk();
            block
                .named_children(&mut cursor)
                .map(|c| {
                    if c.kind() == "decorated_definition" {
                        c.child_by_field_name("definition").unwrap_or(c)
                    } else {
                        c
                    }
                })
                .collect()
        };
    for node in defs_in(root) {
        match node.kind() {
            "function_definition" => out.push((None, node)),
            "class_definition" => {
                let class = node.child_by_field_name("name").map(|n| src[n.byte_range()].to_owned());
                if let Some(body) = node.child_by_field_name("body") {
                    for def in defs_in(body).into_iter().filter(|d| d.kind() == "function_definition") {
                        out.push((class.clone(), def));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The values of the `return` statements in `def`'s own scope.
fn returns(def: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let Some(body) = def.child_by_field_name("body") else { return out };
    let mut stack = vec![body];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "function_definition" | "lambda" | "class_definition" => {}
                "return_statement" => out.extend(child.named_child(0)),
                _ => stack.push(child),
            }
        }
    }
    out
}
