//! The project pass: which functions of a project are *result builders*
//! (their `**kwargs` flow into the top level of the tool result they
//! return), resolved across its modules, and the calls of them whose
//! keywords the runtime drops (TS003). The definitions are `docs/rules.md`'s.
//!
//! Two phases, both parallel: facts per file (bindings, functions, the
//! flows of their `**kwargs`), then resolution (imports, re-exports, chains
//! of builders, to a fixpoint). Only files that can matter are parsed: first
//! those holding a tool-result display and a `**`, then, round by round,
//! those naming a builder found so far (an Aho-Corasick search over the
//! names, as whole names: `ok` inside `token` names nothing). A name
//! toolshape cannot resolve is never a builder.

use foldhash::{HashMap, HashMapExt};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use tree_sitter::Node;

/// A file's text as the project passes share it: read once, never copied
/// per pass.
pub type SharedText = std::sync::Arc<str>;

use super::results;

mod reads;
mod tool_returns;

use super::scope::{BindingKind, Resolution, ScopeKind, SemanticModel};
use crate::syntax;
use crate::syntax::tree::{FieldChild, KindName};
use crate::syntax::tree::{constant_str, not_json_serializable, operand, unparenthesize};
pub use reads::{
    DECORATED, FindingReads, HANDED_ON, PossibleReads, ReadSite, UNRESOLVED, UNRESOLVED_USE, search_possible_reads,
};
pub use tool_returns::{HalfShaped, ToolBodies};

/// How a module-level name is bound, when it is bound exactly once (or,
/// for [`Callee::Local`], how a function's own scope binds a name once).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Bound {
    Def,
    /// `class K`, bound once.
    Class,
    /// `from M import name [as alias]`: `level` leading dots.
    From {
        level: usize,
        module: String,
        name: String,
    },
    /// `import M as alias`, or `import M` (one component).
    Import {
        module: String,
    },
    /// Bound more than once, or otherwise.
    Other,
}

/// What a call's callee is, before resolution.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Callee {
    /// A module-level name of the calling file.
    Name(String),
    /// `A.name`, `A` a module-level name of the calling file.
    Attribute(String, String),
    /// `self.name` / `cls.name` in a method of the module-level class.
    Method { class: String, name: String },
    /// `K(...).name` or `N.name` with `N = K(...)`: a method of the class
    /// that `class` (a [`Callee::Name`], [`Callee::Attribute`] or
    /// [`Callee::Local`]) names (receivers only: `docs/rules.md`, "Calls on
    /// an instance").
    Instance { class: Box<Callee>, name: String },
    /// A name that a function's own scope binds exactly once, by the import
    /// `import` (a [`Bound::From`] or [`Bound::Import`]): called itself
    /// (`attribute` none) or as `A.attribute` (`docs/rules.md`, "Imports
    /// inside a function").
    Local { import: Bound, attribute: Option<String> },
}

/// A function that may be a builder.
#[derive(Debug, Clone)]
struct Function {
    name: String,
    line: usize,
    column: usize,
    /// Its `**kwargs` parameter.
    kwargs: String,
    /// Parameters a keyword can name (the `**kwargs` one excluded).
    named: Vec<String>,
    /// Whether a return holds the `**kwargs` by one of forms 1-3.
    direct: bool,
    /// Callees of returns that pass the `**kwargs` on (form 4).
    chains: Vec<Callee>,
    /// Dict parameters that flow into its result, with their positions
    /// (`None`: keyword-only).
    dict_params: Vec<(String, Option<usize>)>,
    /// Leading parameters a call through `self.` / `cls.` does not pass.
    offset: usize,
    /// Whether a decorator wraps it (and may call it with any keywords).
    decorated: bool,
    /// Whether a return merges its `**kwargs` with a result name
    /// (`{**N, **K}`, case 3), which toolshape does not rewrite.
    merged: bool,
}

/// A call in a file, with what it passes by keyword.
#[derive(Debug, Clone)]
pub struct Call {
    callee: Callee,
    /// The call's byte range, and the line it starts on.
    pub range: Range<usize>,
    line: usize,
    /// Keywords whose value is evidently not JSON-serializable, and what it is.
    unserializable: Vec<(String, &'static str)>,
    /// `k=v` arguments: the name and the argument's range.
    pub keywords: Vec<(String, Range<usize>)>,
    /// `**m` arguments: the argument's range and `m`'s text; whether it
    /// passes the enclosing builder's own `**kwargs` on (not reported).
    pub spreads: Vec<(Range<usize>, String, Option<String>)>,
    /// For each of `spreads`, the keys `m` can only hold, when it is a
    /// display that spells them ([`spread_keys`]), each with why its value
    /// evidently cannot go through `json.dumps`.
    spread_keys: Vec<Option<SpelledKeys>>,
    /// Positional arguments before any `*args`, by range.
    positional: Vec<Range<usize>>,
    /// The function the call stands in (class, name), and whether that
    /// function uses its `**kwargs` anywhere but in passing them on here.
    enclosing: Option<(Option<String>, String)>,
    touched: bool,
}

/// The facts of one file.
#[derive(Debug, Default)]
pub struct Facts {
    /// Learned from the file's top-level definitions that may hold a
    /// builder only (the module's other bindings are not known): enough to
    /// find builders, completed from a whole parse once one is found.
    partial: bool,
    bindings: HashMap<String, Bound>,
    /// Module-level functions with a `**kwargs` parameter.
    functions: HashMap<String, Function>,
    /// Methods with a `**kwargs` parameter, by class and name.
    methods: HashMap<(String, String), Function>,
}

impl Facts {
    /// Adds the module-level names `other` knows; with `whole` (it read the
    /// whole file), its word on each name wins.
    fn merge_bindings(&mut self, other: Facts, whole: bool) {
        for (name, bound) in other.bindings {
            if whole {
                self.bindings.insert(name, bound);
            } else {
                self.bindings.entry(name).or_insert(bound);
            }
        }
    }
}

/// How a file that names a builder uses it, for the builder's call
/// reasons: learned only once some builder is known, and only for the
/// builders' names.
#[derive(Debug, Default)]
struct Usage {
    /// A hash of the text the usage was read from: the calls of builders
    /// in the same text are found among [`Usage::calls`] again.
    text_hash: u64,
    /// The calls whose callee a builder can be.
    calls: Vec<Call>,
    /// Uses of a module-level name, or of an attribute of one, that are
    /// not calls (a builder passed as a callback), with their lines.
    uses: Vec<(Callee, usize)>,
    /// Builder names used as an attribute other than as `self.n(...)` /
    /// `cls.n(...)` of a method its class defines in this file: the first
    /// line of each.
    attributes: HashMap<String, usize>,
    /// Attributes of dotted names (`pkg.mod.n`): the name, the line and the
    /// dotted object.
    dotted: Vec<(String, usize, String)>,
    /// `from M import *`: the level, the module and the line.
    star_imports: Vec<(usize, String, usize)>,
    /// The calls whose callee's last name is a builder's (`n(...)`,
    /// `X.n(...)`): that name, the callee when it is one toolshape may
    /// resolve, and the line.
    named_calls: Vec<(String, Option<Callee>, usize)>,
    /// Import statements inside functions or classes: the names they
    /// import or bind a module as ([`imported_names`]) and their line;
    /// calls through them are not followed.
    local_imports: Vec<(Vec<String>, usize)>,
    /// Builder names bound more than once in a module (`ok = wrap(ok)`),
    /// with the line of a use: calls through them are not followed.
    rebound: Vec<(String, usize)>,
}

/// What a check already learned of a file of the project: the facts a
/// builder needs ([`round_zero_facts`]; `None`: it cannot define one by
/// itself) and the modules its import statements name
/// ([`syntax::imported_modules`]), and the names of its decorator lines
/// ([`syntax::decorator_names`]: which files may hold a tool).
#[derive(Debug, Default)]
pub struct Known {
    pub facts: Option<Facts>,
    pub imports: Vec<(usize, String)>,
    pub decorators: Vec<String>,
    /// Its text as the check read it, kept for the project passes (within
    /// [`crate::source::TextCache::SEEDED`]), so that no pass reads it again.
    pub text: Option<SharedText>,
}

impl Known {
    /// What [`Project::index`] learns of `text` itself; its imports only
    /// when `imports` (they matter only if the project has files outside
    /// the checked ones).
    pub fn of(text: &str, imports: bool) -> Self {
        let imports = if imports { syntax::imported_modules(text) } else { Vec::new() };
        Known { facts: round_zero_facts(text), imports, decorators: syntax::decorator_names(text), text: None }
    }
}

/// One module of the project.
#[derive(Debug)]
struct Module {
    path: PathBuf,
    /// Dotted name from the project root (`pkg.mod`, `pkg` for `pkg/__init__.py`).
    name: String,
    /// The package relative imports start from.
    package: String,
    facts: Option<Facts>,
    usage: Option<Usage>,
    /// The names of its decorator lines, when a check read it.
    decorators: Option<Vec<String>>,
}

/// A builder: a module index and the function (with its class, for a method).
type BuilderKey = (usize, Option<String>, String);

/// A project's builders, resolved.
#[derive(Debug)]
pub struct Project {
    root: PathBuf,
    modules: Vec<Module>,
    /// Modules by path, once some builder is found (nothing looks a
    /// module up by path before).
    by_path: HashMap<std::ffi::OsString, usize>,
    /// Modules by the last component of their name.
    by_last: HashMap<String, Vec<usize>>,
    builders: BTreeSet<BuilderKey>,
    /// The builders whose `**kwargs` flow into their result (directly or
    /// through a chain): the ones a chain can end in.
    kw_builders: BTreeSet<BuilderKey>,
    /// Every name a call of a builder may use (definitions, aliases).
    names: Vec<String>,
    search: Option<syntax::search::Patterns>,
    /// Why each builder's calls make its fix unsafe.
    verdicts: HashMap<BuilderKey, Vec<String>>,
    /// Those of the reasons that are reads of keys passed through it.
    reads: HashMap<BuilderKey, Vec<String>>,
}

/// Where a builder is defined, for findings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuilderSite {
    pub name: String,
    pub path: PathBuf,
    pub line: usize,
    pub column: usize,
}

/// A call of a builder found in a file.
#[derive(Debug, Clone)]
pub struct BuilderCall {
    pub call: Call,
    pub builder: BuilderSite,
    /// Named parameters of the builder (keywords that do not become keys).
    pub named: Vec<String>,
    /// The builders whose fix repairs this call: the builder itself, or
    /// those its chain of calls ends in.
    pub roots: Vec<BuilderId>,
    /// Whether the builder's `**kwargs` flow into its result (else its
    /// extra keywords are not keys of it).
    pub kwargs_flow: bool,
    /// What the arguments bound to its dict parameters add, each with its
    /// span.
    pub dict_args: Vec<(String, results::Added, Range<usize>)>,
}

/// A builder that toolshape fixes in its own body (its `**kwargs` flow
/// into its result directly), as the planner of its file needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuilderSpec {
    /// The module-level class it is a method of.
    pub class: Option<String>,
    pub name: String,
    /// Its `**kwargs` parameter.
    pub kwargs: String,
    /// Why its calls in the project make the fix unsafe (empty: safe), each
    /// naming the place: a call that passes `status`, `content` or
    /// `toolUseId`, or a `**mapping`; a use that is not a call.
    pub call_reasons: Vec<String>,
    /// Those of `call_reasons` that are reads of a key passed through it:
    /// an applied fix leaves them as they are (`fix` warns of them).
    pub read_reasons: Vec<String>,
    /// Whether a return merges the `**kwargs` with a result name
    /// (`{**N, **K}`): that flow is not rewritten, so the builder is left
    /// for manual repair.
    pub merged: bool,
}

/// A builder, by file and name, across the phases of a run.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BuilderId {
    pub path: PathBuf,
    pub class: Option<String>,
    pub name: String,
}

impl Project {
    /// Indexes the project at `root` whose Python files are `files` (each
    /// under `root`); `checked` are those the run reports on. `known` holds
    /// what a check already learned of some files; the others are read with
    /// `read` (`None`: unreadable or not text, left out). Texts are not
    /// kept: a later round reads again only files it has not parsed, and
    /// only when some builder was found.
    ///
    /// A file outside the checked ones is read at first only if the checked
    /// files reach it by imports (an import statement of theirs, or of a
    /// file so reached, names its module as `docs/rules.md` resolves
    /// modules): a builder the checked files can call lies in such a file.
    /// Every file is read once some builder is found (to find its calls and
    /// chains).
    pub fn index(
        root: &Path,
        files: Vec<PathBuf>,
        checked: &[bool],
        mut known: Vec<Option<Known>>,
        allowed: &[String],
        read: impl Fn(&Path) -> Option<SharedText> + Sync,
    ) -> Self {
        let mut imports: Vec<(usize, Vec<(usize, String)>)> = Vec::new();
        let modules: Vec<Module> = files
            .iter()
            .enumerate()
            .map(|(i, path)| {
                let rel = path.strip_prefix(root).unwrap_or(path);
                let mut parts: Vec<String> =
                    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                let last = parts.pop().unwrap_or_default();
                let stem = last.strip_suffix(".py").unwrap_or(&last).to_owned();
                let package = parts.join(".");
                if stem != "__init__" {
                    parts.push(stem);
                }
                let decorators = known[i].as_mut().map(|k| std::mem::take(&mut k.decorators));
                let facts = known[i].as_mut().and_then(|k| {
                    imports.push((i, std::mem::take(&mut k.imports)));
                    k.facts.take()
                });
                Module { path: path.clone(), name: parts.join("."), package, facts, usage: None, decorators }
            })
            .collect();
        let mut by_last: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, m) in modules.iter().enumerate() {
            by_last.entry(m.name.rsplit('.').next().unwrap_or_default().to_owned()).or_default().push(i);
        }
        let mut project = Project {
            root: root.to_owned(),
            modules,
            by_path: HashMap::new(),
            by_last,
            builders: BTreeSet::new(),
            kw_builders: BTreeSet::new(),
            names: Vec::new(),
            search: None,
            verdicts: HashMap::new(),
            reads: HashMap::new(),
        };
        // Round 0: files that can define a builder by themselves, among the
        // checked files a check has not seen yet and the files they reach
        // by imports; then, round by round, unparsed files that name a
        // builder or an alias found so far.
        let mut seen: Vec<bool> = known.iter().map(Option::is_some).collect();
        let outside = checked.iter().any(|c| !c);
        let mut frontier: Vec<usize> = (0..project.modules.len()).filter(|&i| !seen[i] && checked[i]).collect();
        loop {
            for &i in &frontier {
                seen[i] = true;
            }
            let learned: Vec<(usize, Known)> = frontier
                .into_par_iter()
                .filter_map(|i| Some((i, Known::of(&read(&project.modules[i].path)?, outside))))
                .collect();
            for (i, k) in learned {
                imports.push((i, k.imports));
                project.modules[i].facts = k.facts;
                project.modules[i].decorators = Some(k.decorators);
            }
            // Resolved in parallel, each worker keeping the absolute
            // imports it has met (they mean the same in every module).
            let project_ref = &project;
            let seen_ref = &seen;
            let next: BTreeSet<usize> = std::mem::take(&mut imports)
                .into_par_iter()
                .fold(
                    || (BTreeSet::new(), HashMap::<String, Option<usize>>::new()),
                    |(mut next, mut absolute), (i, named)| {
                        for (level, dotted) in named {
                            let found = if level == 0 {
                                *absolute.entry(dotted).or_insert_with_key(|d| project_ref.module_named(d))
                            } else {
                                project_ref.resolve_module(i, level, &dotted)
                            };
                            if let Some(m) = found.filter(|&m| !seen_ref[m]) {
                                next.insert(m);
                            }
                        }
                        (next, absolute)
                    },
                )
                .map(|(next, _)| next)
                .reduce(BTreeSet::new, |mut a, b| {
                    a.extend(b);
                    a
                });
            if next.is_empty() {
                break;
            }
            frontier = next.into_iter().collect();
        }
        project.resolve_builders();
        while let Some(search) = project.search.clone() {
            let facts: Vec<(usize, Facts)> = (0..project.modules.len())
                .into_par_iter()
                .filter(|&i| project.modules[i].facts.as_ref().is_none_or(|f| f.partial))
                .filter_map(|i| {
                    let text = read(&project.modules[i].path)?;
                    search.is_name_match(&text).then(|| (i, file_facts(&text)))
                })
                .collect();
            if facts.is_empty() {
                break;
            }
            for (i, f) in facts {
                project.modules[i].facts = Some(f);
            }
            project.resolve_builders();
        }
        if let Some(search) = project.search.clone() {
            let names: BTreeSet<String> = project.names.iter().cloned().collect();
            let usages: Vec<(usize, Usage)> = (0..project.modules.len())
                .into_par_iter()
                .filter_map(|i| {
                    let text = read(&project.modules[i].path)?;
                    search.is_name_match(&text).then(|| (i, file_usage(&text, &names)))
                })
                .collect();
            for (i, usage) in usages {
                project.modules[i].usage = Some(usage);
            }
        }
        project.verdicts = project.call_verdicts(allowed);
        if !project.builders.is_empty() {
            project.by_path =
                project.modules.iter().enumerate().map(|(i, m)| (m.path.as_os_str().to_owned(), i)).collect();
        }
        project
    }

    /// The direct builders a builder's calls end in: itself when its own
    /// `**kwargs` flow into its result, and those its chains reach.
    fn roots(&self, key: &BuilderKey) -> Vec<BuilderKey> {
        let mut out = BTreeSet::new();
        let mut seen = BTreeSet::new();
        let mut stack = vec![key.clone()];
        while let Some(k) = stack.pop() {
            if !seen.insert(k.clone()) {
                continue;
            }
            let Some(f) = self.function(&k) else { continue };
            if f.direct {
                out.insert(k.clone());
            }
            for chain in &f.chains {
                if let Some(next) = self.resolve_callee(k.0, chain, &self.kw_builders) {
                    stack.push(next);
                }
            }
        }
        out.into_iter().collect()
    }

    fn id(&self, key: &BuilderKey) -> BuilderId {
        BuilderId { path: self.modules[key.0].path.clone(), class: key.1.clone(), name: key.2.clone() }
    }

    /// Why the calls of each direct builder make its fix unsafe.
    fn call_verdicts(&self, allowed: &[String]) -> HashMap<BuilderKey, Vec<String>> {
        let mut verdicts: HashMap<BuilderKey, BTreeSet<String>> =
            self.builders.iter().map(|k| (k.clone(), BTreeSet::new())).collect();
        let rel = |m: usize| {
            let path = &self.modules[m].path;
            path.strip_prefix(&self.root).unwrap_or(path).display().to_string()
        };
        let mut add = |key: &BuilderKey, reason: String| {
            for root in self.roots(key) {
                verdicts.entry(root).or_default().insert(reason.clone());
            }
        };
        for (i, m) in self.modules.iter().enumerate() {
            let Some(facts) = &m.usage else { continue };
            for call in &facts.calls {
                let Some(key) = self.resolve_callee(i, &call.callee, &self.builders) else { continue };
                let Some(f) = self.function(&key) else { continue };
                let at = format!("{}:{}", rel(i), call.line);
                for (k, _) in &call.keywords {
                    let kept = crate::contract::ALLOWED_KEYS.contains(&k.as_str()) || allowed.contains(k);
                    if !f.named.contains(k) && kept {
                        add(
                            &key,
                            format!(
                                "{at} passes {k}= to `{}()`, which the fixed builder would no longer put at the top level",
                                f.name
                            ),
                        );
                    }
                    if !f.named.contains(k) && k == "cancelled" {
                        add(
                            &key,
                            format!(
                                "{at} passes cancelled= to `{}()`: the Strands SDK reads it at the top level",
                                f.name
                            ),
                        );
                    }
                }
                for (k, what) in &call.unserializable {
                    if !f.named.contains(k) {
                        add(
                            &key,
                            format!(
                                "{at} passes {k}= {what} to `{}()`, which json.dumps cannot serialize in a json block",
                                f.name
                            ),
                        );
                    }
                }
                // A `**m` could hold anything; a builder's own `**kw` passed
                // on is fine only from a function toolshape follows as a
                // chain of builders, and untouched there.
                for ((_, text, passes_own), known) in call.spreads.iter().zip(&call.spread_keys) {
                    let from = call.enclosing.as_ref().map(|(c, n)| (i, c.clone(), n.clone()));
                    // A display that spells its keys is judged key by key,
                    // as keywords are.
                    if let (None, Some(keys)) = (passes_own, known) {
                        for (k, what) in keys.iter().filter(|(k, _)| !f.named.contains(k)) {
                            let kept = crate::contract::ALLOWED_KEYS.contains(&k.as_str()) || allowed.contains(k);
                            let why = match what {
                                _ if k == "cancelled" => {
                                    "it holds cancelled, which the Strands SDK reads at the top level".to_owned()
                                }
                                _ if kept => format!(
                                    "it holds {k}, which the fixed builder would no longer put at the top level"
                                ),
                                Some(what) => {
                                    format!("its {k} is {what}, which json.dumps cannot serialize in a json block")
                                }
                                None => continue,
                            };
                            add(&key, format!("{at} passes `**{text}` to `{}()`: {why}", f.name));
                        }
                        continue;
                    }
                    let why = if passes_own.is_none() {
                        "which could hold \"status\", \"content\" or \"toolUseId\""
                    } else if call.touched {
                        "after using it otherwise"
                    } else if from.is_none_or(|k| !self.kw_builders.contains(&k)) {
                        "from a function toolshape does not follow as a builder"
                    } else {
                        continue;
                    };
                    add(&key, format!("{at} passes `**{text}` to `{}()`, {why}", f.name));
                }
            }
            for (callee, line) in &facts.uses {
                if let Some(key) = self.resolve_callee(i, callee, &self.builders) {
                    add(
                        &key,
                        format!(
                            "{}:{line} uses `{}` without calling it, so toolshape cannot see those calls",
                            rel(i),
                            key.2
                        ),
                    );
                }
            }
            for (level, module, line) in &facts.star_imports {
                let Some(source) = self.resolve_module(i, *level, module) else { continue };
                for key in self.builders.iter().filter(|k| k.0 == source) {
                    add(
                        key,
                        format!(
                            "{}:{line} imports * from `{}`'s module, so toolshape cannot see every call",
                            rel(i),
                            key.2
                        ),
                    );
                }
            }
            // A call named like a function builder that resolves to no
            // function of the project, and to nothing outside it.
            for (name, callee, line) in &facts.named_calls {
                let resolved = callee
                    .as_ref()
                    .is_some_and(|c| self.resolve_function(i, c).is_some() || self.resolved_elsewhere(i, c));
                if resolved {
                    continue;
                }
                for key in self.builders.iter().filter(|k| k.1.is_none() && &k.2 == name) {
                    add(
                        key,
                        format!(
                            "{}:{line} calls `{name}()` through a name toolshape cannot resolve, so it cannot see what that call passes",
                            rel(i)
                        ),
                    );
                }
            }
            for (words, line) in &facts.local_imports {
                for key in &self.builders {
                    let module = &self.modules[key.0].name;
                    let last = module.rsplit('.').next().unwrap_or(module);
                    if words.iter().any(|w| *w == key.2 || w == last) {
                        add(
                            key,
                            format!(
                                "{}:{line} imports `{}` (or its module) inside a function or class; toolshape does not follow every use of such an import",
                                rel(i),
                                key.2
                            ),
                        );
                    }
                }
            }
            for (name, line) in &facts.rebound {
                for key in self.builders.iter().filter(|k| &k.2 == name) {
                    add(
                        key,
                        format!(
                            "{}:{line} uses `{name}`, which its module binds more than once; toolshape cannot see those calls",
                            rel(i)
                        ),
                    );
                }
            }
            for key in &self.builders {
                let name = &key.2;
                if key.1.is_some() {
                    if let Some(line) = facts.attributes.get(name) {
                        add(
                            key,
                            format!(
                                "{}:{line} uses `.{name}` on an object toolshape cannot tell, which may be a call of the method",
                                rel(i)
                            ),
                        );
                    }
                } else if let Some((_, line, object)) = facts.dotted.iter().find(|(n, _, o)| {
                    let module = &self.modules[key.0].name;
                    n == name
                        && (module == o
                            || module.ends_with(&format!(".{o}"))
                            || o.ends_with(module.rsplit('.').next().unwrap_or(module)))
                }) {
                    add(key, format!("{}:{line} uses `{object}.{name}`, which toolshape does not resolve", rel(i)));
                }
            }
        }
        for key in &self.builders {
            let Some(f) = self.function(key) else { continue };
            if f.decorated {
                add(key, format!("`{}()` is decorated: the decorator may call it with any keywords", f.name));
            }
            let own = self.modules[key.0].facts.as_ref().and_then(|m| m.bindings.get(&key.2));
            if key.1.is_none() && matches!(own, Some(Bound::Other)) {
                add(key, format!("{} binds `{}` more than once; toolshape cannot see every call", rel(key.0), key.2));
            }
        }
        verdicts.into_iter().map(|(k, v)| (k, v.into_iter().collect())).collect()
    }

    /// The builders `path` defines that toolshape fixes in their own body,
    /// with what their calls allow.
    pub fn builder_specs(&self, path: &Path) -> Vec<BuilderSpec> {
        let Some(m) = self.module_of(path) else { return Vec::new() };
        self.builders
            .iter()
            .filter(|k| k.0 == m)
            .filter_map(|k| {
                let f = self.function(k).filter(|f| f.direct)?;
                Some(BuilderSpec {
                    class: k.1.clone(),
                    name: k.2.clone(),
                    kwargs: f.kwargs.clone(),
                    call_reasons: self.verdicts.get(k).cloned().unwrap_or_default(),
                    read_reasons: self.reads.get(k).cloned().unwrap_or_default(),
                    merged: f.merged,
                })
            })
            .collect()
    }

    /// Every file of the project that defines a builder fixed in its body.
    pub fn builder_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = self
            .builders
            .iter()
            .filter(|k| self.function(k).is_some_and(|f| f.direct))
            .map(|k| self.modules[k.0].path.clone())
            .collect();
        files.dedup();
        files
    }

    /// Whether the project has result builders at all.
    pub fn has_builders(&self) -> bool {
        !self.builders.is_empty()
    }

    /// The names a call of a builder may use.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Recomputes the builders (direct ones, then chains to a fixpoint) and
    /// the names to search for.
    fn resolve_builders(&mut self) {
        let mut builders: BTreeSet<BuilderKey> = BTreeSet::new();
        for (i, m) in self.modules.iter().enumerate() {
            let Some(facts) = &m.facts else { continue };
            builders.extend(facts.functions.values().filter(|f| f.direct).map(|f| (i, None, f.name.clone())));
            builders.extend(
                facts.methods.iter().filter(|(_, f)| f.direct).map(|((c, n), _)| (i, Some(c.clone()), n.clone())),
            );
        }
        loop {
            let mut added = Vec::new();
            for (i, m) in self.modules.iter().enumerate() {
                let Some(facts) = &m.facts else { continue };
                let functions = facts.functions.values().map(|f| (None, f));
                let methods = facts.methods.iter().map(|((c, _), f)| (Some(c.clone()), f));
                for (class, f) in functions.chain(methods) {
                    let key = (i, class, f.name.clone());
                    if builders.contains(&key) {
                        continue;
                    }
                    if f.chains.iter().any(|c| self.resolve_callee(i, c, &builders).is_some()) {
                        added.push(key);
                    }
                }
            }
            if added.is_empty() {
                break;
            }
            builders.extend(added);
        }
        // Dict-parameter builders (chains pass `**kwargs` on, so they end
        // in builders of those only).
        self.kw_builders = builders.clone();
        for (i, m) in self.modules.iter().enumerate() {
            let Some(facts) = &m.facts else { continue };
            let functions = facts.functions.values().map(|f| (None, f));
            let methods = facts.methods.iter().map(|((c, _), f)| (Some(c.clone()), f));
            builders.extend(
                functions
                    .chain(methods)
                    .filter(|(_, f)| !f.dict_params.is_empty())
                    .map(|(c, f)| (i, c, f.name.clone())),
            );
        }
        self.builders = builders;
        // The names that may reach a builder: its own, and every alias a
        // parsed file binds to one.
        let mut names: BTreeSet<String> = self.builders.iter().map(|(_, _, n)| n.clone()).collect();
        for m in &self.modules {
            let Some(facts) = &m.facts else { continue };
            for (alias, bound) in &facts.bindings {
                if let Bound::From { name, .. } = bound
                    && names.contains(name)
                {
                    names.insert(alias.clone());
                }
            }
        }
        self.names = names.into_iter().collect();
        self.search = (!self.names.is_empty())
            .then(|| syntax::search::Patterns::new(&self.names).expect("builder names are plain identifiers"));
    }

    /// Whether `text` may hold a call of a builder.
    pub fn may_call_a_builder(&self, text: &str) -> bool {
        self.search.as_ref().is_some_and(|s| s.is_name_match(text))
    }

    /// Makes the fix of the builder `id` unsafe for `reason` (a read of a
    /// key it moves).
    pub fn add_call_reason(&mut self, id: &BuilderId, reason: String) {
        let Some(m) = self.module_of(&id.path) else { return };
        let key = (m, id.class.clone(), id.name.clone());
        for reasons in [self.verdicts.entry(key.clone()).or_default(), self.reads.entry(key).or_default()] {
            if !reasons.contains(&reason) {
                reasons.push(reason.clone());
            }
        }
    }

    /// The path of module `m`, as indexed.
    pub fn module_path(&self, m: usize) -> &Path {
        &self.modules[m].path
    }

    /// The path of every module, in module order.
    pub fn module_paths(&self) -> Vec<PathBuf> {
        self.modules.iter().map(|m| m.path.clone()).collect()
    }

    /// The module a file is, by its path as indexed.
    pub fn module_of(&self, path: &Path) -> Option<usize> {
        self.by_path.get(path.as_os_str()).copied()
    }

    /// The calls of builders in `text`, the current text of the project's
    /// file `path`.
    pub fn builder_calls(&self, path: &Path, text: &str) -> Vec<BuilderCall> {
        let Some(module) = self.module_of(path) else { return Vec::new() };
        if !self.may_call_a_builder(text) {
            return Vec::new();
        }
        let tree = syntax::parse(text);
        // The project's usage of the module found its calls in the same
        // text (unless the text is not the one on disk: stdin).
        let found;
        let all_calls = match &self.modules[module].usage {
            Some(usage) if usage.text_hash == text_hash(text) => &usage.calls,
            _ => {
                found = calls(tree.root_node(), text, &SemanticModel::of(&tree, text, &[]));
                &found
            }
        };
        let mut out = Vec::new();
        for call in all_calls {
            let Some(key) = self.resolve_callee(module, &call.callee, &self.builders) else { continue };
            let Some(f) = self.function(&key) else { continue };
            let site = BuilderSite {
                name: f.name.clone(),
                path: self.modules[key.0].path.clone(),
                line: f.line,
                column: f.column,
            };
            let roots = self.roots(&key).iter().map(|k| self.id(k)).collect();
            let kwargs_flow = self.kw_builders.contains(&key);
            let dict_args = dict_arguments(&tree, text, call, f, matches!(call.callee, Callee::Method { .. }));
            let call = call.clone();
            out.push(BuilderCall { call, builder: site, named: f.named.clone(), roots, kwargs_flow, dict_args });
        }
        out
    }

    fn function(&self, key: &BuilderKey) -> Option<&Function> {
        let facts = self.modules[key.0].facts.as_ref()?;
        match &key.1 {
            None => facts.functions.get(&key.2),
            Some(class) => facts.methods.get(&(class.clone(), key.2.clone())),
        }
    }

    /// The builder a callee of module `from` names, if it names one.
    fn resolve_callee(&self, from: usize, callee: &Callee, builders: &BTreeSet<BuilderKey>) -> Option<BuilderKey> {
        self.resolve_function(from, callee).filter(|key| builders.contains(key))
    }

    /// The function `callee`, called in module `from`, resolves to.
    fn resolve_function(&self, from: usize, callee: &Callee) -> Option<BuilderKey> {
        Some(match callee {
            Callee::Name(name) => match self.export(from, name, 0)? {
                Target::Function(key) => key,
                Target::Module(_) | Target::Class(..) => return None,
            },
            Callee::Attribute(base, name) => match self.export(from, base, 0)? {
                Target::Module(m) => match self.export(m, name, 0)? {
                    Target::Function(key) => key,
                    Target::Module(_) | Target::Class(..) => return None,
                },
                Target::Function(_) | Target::Class(..) => return None,
            },
            Callee::Local { .. } => match self.local_target(from, callee)? {
                Target::Function(key) => key,
                Target::Module(_) | Target::Class(..) => return None,
            },
            Callee::Method { class, name } => (from, Some(class.clone()), name.clone()),
            Callee::Instance { class, name } => {
                let target = match class.as_ref() {
                    Callee::Name(k) => self.export(from, k, 0)?,
                    Callee::Attribute(base, k) => match self.export(from, base, 0)? {
                        Target::Module(m) => self.export(m, k, 0)?,
                        _ => return None,
                    },
                    local @ Callee::Local { .. } => self.local_target(from, local)?,
                    _ => return None,
                };
                match target {
                    Target::Class(m, k) => (m, Some(k), name.clone()),
                    _ => return None,
                }
            }
        })
    }

    /// What the [`Callee::Local`] `callee`, called in module `from`, names:
    /// the import's target, or the attribute of the module it imports.
    fn local_target(&self, from: usize, callee: &Callee) -> Option<Target> {
        let Callee::Local { import, attribute } = callee else { return None };
        let target = self.import_target(from, import, 0)?;
        match (attribute, target) {
            (None, target) => Some(target),
            (Some(name), Target::Module(m)) => self.export(m, name, 0),
            (Some(_), _) => None,
        }
    }

    /// Whether `callee`, called in module `from`, is the project's to
    /// follow no further (`docs/rules.md`, "Calls toolshape cannot
    /// resolve"): a class (a constructor call), or a module-level name, or
    /// `A.name` of a module-level name `A`, imported from a module outside
    /// the project (the standard library's, an installed package's).
    fn resolved_elsewhere(&self, from: usize, callee: &Callee) -> bool {
        // No module of the project has `dotted` among the parts of its own
        // dotted name (a namespace package has no module of its own).
        let foreign = |dotted: &str| {
            !self.modules.iter().any(|m| {
                let name = m.name.as_str();
                name == dotted
                    || name.strip_suffix(dotted).is_some_and(|p| p.ends_with('.'))
                    || name.strip_prefix(dotted).is_some_and(|q| q.starts_with('.'))
                    || name.contains(&format!(".{dotted}."))
            })
        };
        let outside = |name: &str| match self.modules[from].facts.as_ref().and_then(|f| f.bindings.get(name)) {
            Some(Bound::From { level: 0, module, .. } | Bound::Import { module }) => foreign(module),
            _ => false,
        };
        let class = |m: usize, name: &str| matches!(self.export(m, name, 0), Some(Target::Class(..)));
        match callee {
            Callee::Name(name) => outside(name) || class(from, name),
            Callee::Attribute(base, name) => {
                outside(base) || matches!(self.export(from, base, 0), Some(Target::Module(m)) if class(m, name))
            }
            Callee::Local { import, .. } => {
                matches!(import, Bound::From { level: 0, module, .. } | Bound::Import { module } if foreign(module))
                    || matches!(self.local_target(from, callee), Some(Target::Class(..)))
            }
            Callee::Method { .. } | Callee::Instance { .. } => false,
        }
    }

    /// What the module-level name `name` of module `m` is: a function
    /// defined there or imported, or a module.
    fn export(&self, m: usize, name: &str, depth: usize) -> Option<Target> {
        if depth > 32 {
            return None;
        }
        let facts = self.modules[m].facts.as_ref();
        match facts.and_then(|f| f.bindings.get(name)) {
            Some(Bound::Def) => Some(Target::Function((m, None, name.to_owned()))),
            Some(Bound::Class) => Some(Target::Class(m, name.to_owned())),
            Some(import) => self.import_target(m, import, depth),
            None => None,
        }
    }

    /// What the import `bound` (a [`Bound::From`] or [`Bound::Import`] of
    /// module `m`) binds its name to.
    fn import_target(&self, m: usize, bound: &Bound, depth: usize) -> Option<Target> {
        match bound {
            Bound::From { level, module, name: imported } => {
                if let Some(source) = self.resolve_module(m, *level, module) {
                    if let Some(target) = self.export(source, imported, depth + 1) {
                        return Some(target);
                    }
                    if self.modules[source].facts.as_ref().is_some_and(|f| f.bindings.contains_key(imported)) {
                        return None;
                    }
                }
                // `from pkg import mod`: a submodule (of a package with or
                // without an `__init__.py`).
                self.resolve_module(m, *level, &join(module, imported)).map(Target::Module)
            }
            Bound::Import { module } => self.resolve_module(m, 0, module).map(Target::Module),
            Bound::Def | Bound::Class | Bound::Other => None,
        }
    }

    /// The module `level` dots and `dotted` name, imported from module `m`.
    fn resolve_module(&self, m: usize, level: usize, dotted: &str) -> Option<usize> {
        if level == 0 {
            return self.module_named(dotted);
        }
        let mut package: Vec<&str> = self.modules[m].package.split('.').filter(|p| !p.is_empty()).collect();
        for _ in 1..level {
            package.pop()?;
        }
        let base = package.join(".");
        let full = if dotted.is_empty() { base } else { join(&base, dotted) };
        let last = full.rsplit('.').next().unwrap_or(&full);
        self.by_last.get(last)?.iter().copied().find(|&i| self.modules[i].name == full)
    }

    /// The one module named `dotted`, or whose name ends with `.dotted`.
    fn module_named(&self, dotted: &str) -> Option<usize> {
        let last = dotted.rsplit('.').next().unwrap_or(dotted);
        let candidates = self.by_last.get(last)?;
        let mut found = candidates.iter().filter(|&&i| {
            let name = &self.modules[i].name;
            name.strip_suffix(dotted).is_some_and(|rest| rest.is_empty() || rest.ends_with('.'))
        });
        let first = *found.next()?;
        found.next().is_none().then_some(first)
    }
}

/// The facts of a file that may define a builder by itself (it holds a
/// `**` and a candidate tool-result display); `None` for any other file.
pub fn round_zero_facts(text: &str) -> Option<Facts> {
    if !may_hold_a_builder(text) {
        return None;
    }
    match syntax::lexer::candidate_regions(text.as_bytes()) {
        syntax::lexer::Candidates::FullParse(_) => Some(file_facts(text)),
        syntax::lexer::Candidates::Regions(regions) => {
            if !may_define_a_builder_in(text, Some(&regions)) {
                return None;
            }
            partial_facts(text, &regions).or_else(|| Some(file_facts(text)))
        }
    }
}

/// The facts of the top-level definitions around `regions` only (see
/// [`definition_spans`]), `None` when that parse has syntax errors or the
/// whole file's tree is kept (see [`syntax::keeps_whole`]).
fn partial_facts(text: &str, regions: &[Range<usize>]) -> Option<Facts> {
    if syntax::keeps_whole(text) {
        return None;
    }
    let spans = definition_spans(text, regions);
    let tree = syntax::parse_ranges(text, &spans);
    if tree.root_node().has_error() {
        return None;
    }
    let model = SemanticModel::of(&tree, text, &spans);
    Some(Facts { partial: true, ..facts_of(tree.root_node(), text, &model) })
}

/// [`round_zero_facts`] from the pieces a check parsed (their regions serve
/// the lexical test) and the file's shared whole-file context. Only the
/// top-level definitions that hold a candidate region are parsed (they are
/// all a builder of forms 1-3 can be); the facts are then partial.
pub fn round_zero_facts_in(file: &super::FileContext<'_>, text: &str, pieces: &[syntax::ParsedPiece]) -> Option<Facts> {
    let regions: Option<Vec<Range<usize>>> = match pieces {
        [p] if p.offset == 0 && p.tree.root_node().end_byte() == text.len() => None,
        _ => Some(pieces.iter().map(|p| p.offset..p.offset + p.tree.root_node().end_byte()).collect()),
    };
    if !may_define_a_builder_in(text, regions.as_deref()) {
        return None;
    }
    // A whole parse made for other questions serves; else the definitions
    // around the regions are parsed alone.
    if !file.is_parsed()
        && let Some(facts) = regions.as_deref().and_then(|r| partial_facts(text, r))
    {
        return Some(facts);
    }
    // Complete facts need the whole file, not an outline of it.
    Some(facts_of(file.whole_tree().root_node(), text, file.whole_model()))
}

/// The spans of `text` that hold the top-level definitions around
/// `regions`, read lexically: from the nearest line at or before a region
/// that starts, unindented, with `def `, `async `, `class ` or `@`, to the
/// next such line after it (or the end). A guess a string could fool, so
/// the caller parses the spans and trusts them only without syntax errors.
fn definition_spans(text: &str, regions: &[Range<usize>]) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut starts = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let line = &bytes[at..];
        if [&b"def "[..], b"async ", b"class ", b"@"].iter().any(|k| line.starts_with(k)) {
            starts.push(at);
        }
        at = match memchr::memchr(b'\n', line) {
            Some(i) => at + i + 1,
            None => bytes.len(),
        };
    }
    let mut spans: Vec<Range<usize>> = Vec::new();
    for r in regions {
        let at = starts.partition_point(|&s| s <= r.start);
        let mut at = at.checked_sub(1);
        // A definition starts at its decorators: the `@` lines right above.
        while let Some(i) = at.filter(|&i| i > 0) {
            let (up, here) = (starts[i - 1], starts[i]);
            let one_line = memchr::memchr(b'\n', &bytes[up..here]).is_some_and(|nl| up + nl + 1 == here);
            if bytes[up] == b'@' && one_line {
                at = Some(i - 1);
            } else {
                break;
            }
        }
        let from = at.map_or(0, |i| starts[i]);
        let to = starts.get(starts.partition_point(|&s| s < r.end)).copied().unwrap_or(bytes.len());
        match spans.last_mut() {
            Some(last) if from <= last.end => last.end = last.end.max(to),
            _ => spans.push(from..to),
        }
    }
    spans
}

/// Whether `text` may define a builder by itself, read from its bytes: it
/// holds both keys and a way for a mapping to reach a result: `**` (forms
/// 1 and 3), or `.update(`, `|=`, `.items(` (form 2, which a dict-parameter
/// builder may use without any `**`: `r.update(data)`).
pub fn may_hold_a_builder(text: &str) -> bool {
    let flows = ["**", ".update(", "|=", ".items("].iter().any(|w| text.contains(w));
    flows && !syntax::lacks_key_bytes(text.as_bytes())
}

/// Whether `text` may define a builder by itself (forms 1-3 of
/// `docs/rules.md`), given its candidate regions (`None`: the file is
/// parsed whole, so anything may hold), read lexically: a candidate
/// tool-result display that holds a `**`, or one bound to a name that is
/// written later or spread (`**name`). A superset, never a miss.
fn may_define_a_builder_in(text: &str, regions: Option<&[Range<usize>]>) -> bool {
    if !may_hold_a_builder(text) {
        return false;
    }
    let Some(regions) = regions else { return true };
    // Each name bound to a result is asked once whether it is spread, and
    // from where no write into it may stand after (`may_be_written` from a
    // later place finds a subset): a module binding `result` to many
    // displays is not read again for each.
    let mut names: Vec<(&str, bool, usize)> = Vec::new();
    regions.iter().any(|r| {
        text[r.clone()].contains("**")
            || syntax::assigned_names(text, r.start).iter().any(|name| {
                let i = match names.iter().position(|(n, ..)| n == name) {
                    Some(i) => i,
                    None => {
                        names.push((name, text.contains(&format!("**{name}")), usize::MAX));
                        names.len() - 1
                    }
                };
                let (_, spread, unwritten_from) = &mut names[i];
                if *spread {
                    return true;
                }
                if r.start >= *unwritten_from {
                    return false;
                }
                let written = syntax::may_be_written(text, r.start, name);
                if !written {
                    *unwritten_from = r.start;
                }
                written
            })
    })
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() { b.to_owned() } else { format!("{a}.{b}") }
}

enum Target {
    Function(BuilderKey),
    Module(usize),
    /// A module-level class: its module and name.
    Class(usize, String),
}

// ----- facts of one file -----------------------------------------------------

fn file_facts(src: &str) -> Facts {
    let tree = syntax::parse(src);
    let model = SemanticModel::of(&tree, src, &[]);
    facts_of(tree.root_node(), src, &model)
}

fn facts_of(root: Node<'_>, src: &str, model: &SemanticModel) -> Facts {
    let mut facts = module_bindings(root, src, model);
    facts.partial = false;
    let results = results::result_names(model, root, src);
    let mut cursor = root.walk();
    for statement in root.named_children(&mut cursor) {
        let definition = definition_of(statement);
        match definition.map(|d| (d.kind_name(), d)) {
            Some(("function_definition", def)) => {
                if let Some(f) = function(def, src, model, &results) {
                    facts.functions.insert(f.name.clone(), f);
                }
            }
            Some(("class_definition", class)) => {
                let Some(class_name) = class.field("name").map(|n| &src[n.byte_range()]) else {
                    continue;
                };
                let Some(body) = class.field("body") else { continue };
                let mut c = body.walk();
                for member in body.named_children(&mut c) {
                    if let Some(def) = definition_of(member).filter(|d| d.kind_name() == "function_definition")
                        && let Some(f) = function(def, src, model, &results)
                    {
                        facts.methods.insert((class_name.to_owned(), f.name.clone()), f);
                    }
                }
            }
            _ => {}
        }
    }
    facts
}

/// What the module scope of `root` binds, and how (the part of a file's
/// [`Facts`] that resolving a name needs): partial facts, no functions.
fn module_bindings(root: Node<'_>, src: &str, model: &SemanticModel) -> Facts {
    let mut facts = Facts { partial: true, ..Facts::default() };
    let mut names: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for i in model.bindings_in_scope(0) {
        names.entry(model.bindings[i].name.as_str()).or_default().push(i);
    }
    for (name, ids) in names {
        let bound = match ids.as_slice() {
            [only] => bound_by(&model.bindings[*only], root, src),
            _ => Bound::Other,
        };
        facts.bindings.insert(name.to_owned(), bound);
    }
    facts
}

/// The 1-based line of byte `at` in the tree of `root`.
fn root_line(root: Node<'_>, at: usize) -> usize {
    root.descendant_for_byte_range(at, at).map_or(0, |n| n.start_position().row + 1)
}

/// The last name of `call`'s callee (parentheses seen through): `N` of
/// `N(...)` and of `X.N(...)`.
pub(crate) fn last_name<'s>(call: Node<'_>, text: &'s str) -> Option<&'s str> {
    let function = unparenthesize(call.field("function")?);
    match function.kind_name() {
        "identifier" => Some(&text[function.byte_range()]),
        "attribute" => Some(&text[function.field("attribute")?.byte_range()]),
        _ => None,
    }
}

/// A hash of all of `text`, to know a text read again.
fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// The [`Usage`] of `src` for the builder `names`.
fn file_usage(src: &str, names: &BTreeSet<String>) -> Usage {
    let tree = syntax::parse(src);
    let model = SemanticModel::of(&tree, src, &[]);
    let root = tree.root_node();
    let facts = facts_of(root, src, &model);
    let mut usage = Usage { text_hash: text_hash(src), calls: calls(root, src, &model), ..Usage::default() };
    uses_of(root, src, &model, &facts, names, &mut usage);
    syntax::for_each_node(root, |node| {
        if node.kind_name() == "call"
            && let Some(name) = last_name(node, src).filter(|n| names.contains(*n))
        {
            let callee = callee_of(node, src, &model);
            usage.named_calls.push((name.to_owned(), callee, node.start_position().row + 1));
        }
    });
    usage
}

/// The definition a statement is, through its decorators.
fn definition_of(statement: Node<'_>) -> Option<Node<'_>> {
    match statement.kind_name() {
        "function_definition" | "class_definition" => Some(statement),
        "decorated_definition" => statement.field("definition"),
        _ => None,
    }
}

fn bound_by(binding: &super::scope::Binding, root: Node<'_>, src: &str) -> Bound {
    match binding.kind {
        BindingKind::FunctionDefinition => Bound::Def,
        BindingKind::ClassDefinition => Bound::Class,
        BindingKind::FromImport | BindingKind::Import => {
            let Some(name) = root.descendant_for_byte_range(binding.at.start, binding.at.end) else {
                return Bound::Other;
            };
            let mut statement = name;
            while !matches!(statement.kind_name(), "import_statement" | "import_from_statement") {
                match statement.parent() {
                    Some(p) => statement = p,
                    None => return Bound::Other,
                }
            }
            let aliased = name.parent().filter(|p| p.kind_name() == "aliased_import");
            let imported = match aliased {
                Some(a) => a.field("name").map(|n| src[n.byte_range()].to_owned()),
                None => name.parent().map(|n| src[n.byte_range()].to_owned()),
            };
            let Some(imported) = imported else { return Bound::Other };
            if statement.kind_name() == "import_statement" {
                // `import a.b` binds `a` to the package `a`, not to `a.b`.
                return if aliased.is_some() || !imported.contains('.') {
                    Bound::Import { module: imported }
                } else {
                    Bound::Other
                };
            }
            let Some(module) = statement.field("module_name") else { return Bound::Other };
            let (level, dotted) = match module.kind_name() {
                "relative_import" => {
                    let mut c = module.walk();
                    let children: Vec<Node<'_>> = module.named_children(&mut c).collect();
                    let level = children
                        .iter()
                        .find(|c| c.kind_name() == "import_prefix")
                        .map_or(0, |p| src[p.byte_range()].matches('.').count());
                    let dotted = children
                        .iter()
                        .find(|c| c.kind_name() == "dotted_name")
                        .map(|d| src[d.byte_range()].to_owned());
                    (level, dotted.unwrap_or_default())
                }
                _ => (0, src[module.byte_range()].to_owned()),
            };
            Bound::From { level, module: dotted.split_whitespace().collect(), name: imported }
        }
        _ => Bound::Other,
    }
}

/// The facts of a function that may be a builder: one with a `**kwargs`
/// parameter, or with a dict parameter that flows into its result; `None`
/// for any other.
fn function(def: Node<'_>, src: &str, model: &SemanticModel, results: &[results::ResultName]) -> Option<Function> {
    let name = src[def.field("name")?.byte_range()].to_owned();
    let params = def.field("parameters")?;
    let mut named = Vec::new();
    // Named parameters with their position (`None`: keyword-only).
    let mut positions: Vec<(String, Option<usize>)> = Vec::new();
    let mut kwargs = None;
    let mut keyword_only = false;
    let mut position = 0;
    let mut cursor = params.walk();
    for p in params.named_children(&mut cursor) {
        let id = match p.kind_name() {
            "identifier" => Some(p),
            "typed_parameter" => {
                let mut c = p.walk();
                let inner = p.named_children(&mut c).find(|n| n.kind_name() != "type");
                match inner {
                    Some(n) if n.kind_name() == "dictionary_splat_pattern" => {
                        kwargs = operand(n).map(|k| src[k.byte_range()].to_owned());
                        None
                    }
                    Some(n) if n.kind_name() == "list_splat_pattern" => {
                        keyword_only = true;
                        None
                    }
                    Some(n) if n.kind_name() == "identifier" => Some(n),
                    _ => None,
                }
            }
            "default_parameter" | "typed_default_parameter" => p.field("name"),
            "dictionary_splat_pattern" => {
                kwargs = operand(p).map(|k| src[k.byte_range()].to_owned());
                None
            }
            "list_splat_pattern" | "keyword_separator" => {
                keyword_only = true;
                None
            }
            _ => None,
        };
        if let Some(id) = id {
            let n = src[id.byte_range()].to_owned();
            positions.push((n.clone(), (!keyword_only).then_some(position)));
            position += 1;
            named.push(n);
        }
    }
    let scope = model.scopes.iter().position(|s| s.kind == ScopeKind::Function && s.range == def.byte_range())?;
    // A decorator other than `@staticmethod` / `@classmethod` may call it
    // with any keywords.
    let decorated = def.parent().filter(|p| p.kind_name() == "decorated_definition").is_some_and(|h| {
        let mut c = h.walk();
        h.named_children(&mut c)
            .filter(|d| d.kind_name() == "decorator")
            .any(|d| !matches!(src[d.byte_range()].trim_start_matches('@').trim(), "staticmethod" | "classmethod"))
    });
    let root = {
        let mut n = def;
        while let Some(p) = n.parent() {
            n = p;
        }
        n
    };
    let local_results: Vec<&results::ResultName> = results.iter().filter(|r| r.scope == scope).collect();
    let once = |p: &str| model.bindings_in(scope, p).count() == 1;
    let returned = returned_values(def);
    // Dict parameters: named parameters that flow into the result.
    let dict_params: Vec<(String, Option<usize>)> = positions
        .iter()
        .filter(|(p, _)| once(p) && flows(&returned, p, true, scope, model, &local_results, root, src).0)
        .cloned()
        .collect();
    let Some(kwargs) = kwargs else {
        if dict_params.is_empty() {
            return None;
        }
        let f = Function {
            name,
            line: 0,
            column: 0,
            kwargs: String::new(),
            named,
            direct: false,
            chains: Vec::new(),
            dict_params,
            offset: method_offset(def, src),
            decorated,
            merged: false,
        };
        return Some(positioned(f, def, src));
    };
    // The `**kwargs` must not be rebound in the function.
    let (direct, chains, merged) = if once(&kwargs) {
        flows(&returned, &kwargs, false, scope, model, &local_results, root, src)
    } else {
        (false, Vec::new(), false)
    };
    let offset = method_offset(def, src);
    let f =
        Function { name, line: 0, column: 0, kwargs, named, direct, chains, dict_params, offset, decorated, merged };
    Some(positioned(f, def, src))
}

/// How many leading parameters a call through `self.` / `cls.` does not
/// pass: 1 for a method (its first parameter), 0 for a `@staticmethod` or a
/// function.
fn method_offset(def: Node<'_>, src: &str) -> usize {
    let holder = def.parent().filter(|p| p.kind_name() == "decorated_definition");
    let in_class =
        holder.unwrap_or(def).parent().and_then(|b| b.parent()).is_some_and(|c| c.kind_name() == "class_definition");
    let static_method = holder.is_some_and(|h| {
        let mut c = h.walk();
        h.named_children(&mut c)
            .filter(|d| d.kind_name() == "decorator")
            .any(|d| src[d.byte_range()].trim_start_matches('@').trim() == "staticmethod")
    });
    usize::from(in_class && !static_method)
}

/// What a function returns, read once for every parameter [`flows`] asks
/// about (a tool may take dozens of parameters and return hundreds of
/// dict displays).
struct Returned<'t> {
    /// A `return`'s value, parentheses aside.
    value: Node<'t>,
    /// When the value is a dict display: the operands of its `**` spreads.
    spreads: Vec<Node<'t>>,
}

/// The values the `return`s of `def` itself give ([`returns_of`]).
fn returned_values(def: Node<'_>) -> Vec<Returned<'_>> {
    let returned = returns_of(def).into_iter().filter_map(|ret| operand(ret).map(unparenthesize));
    returned.map(|value| Returned { value, spreads: spread_operands(value) }).collect()
}

/// The operands of the `**` spreads of `display` (none unless it is a
/// dict display).
fn spread_operands(display: Node<'_>) -> Vec<Node<'_>> {
    if display.kind_name() != "dictionary" {
        return Vec::new();
    }
    let mut c = display.walk();
    display.named_children(&mut c).filter(|e| e.kind_name() == "dictionary_splat").filter_map(operand).collect()
}

/// Whether the parameter `k` of the function (scope `scope`) whose returns
/// are `returned` flows into the top level of a shaped dict it returns
/// (forms 1-3), and the callees of its returns that pass `**k` on (form 4,
/// for a `**kwargs` only). A dict parameter's spread may be written
/// `**(k or {})`.
#[allow(clippy::too_many_arguments)]
fn flows(
    returned: &[Returned<'_>],
    k: &str,
    dict_param: bool,
    scope: usize,
    model: &SemanticModel,
    local_results: &[&results::ResultName],
    root: Node<'_>,
    src: &str,
) -> (bool, Vec<Callee>, bool) {
    let is_k = |n: Node<'_>| {
        let n = unparenthesize(n);
        if n.kind_name() == "identifier" {
            return &src[n.byte_range()] == k;
        }
        // `P or {}`
        dict_param
            && n.kind_name() == "boolean_operator"
            && n.field("operator").is_some_and(|o| &src[o.byte_range()] == "or")
            && n.field("left").is_some_and(|l| l.kind_name() == "identifier" && &src[l.byte_range()] == k)
            && n.field("right").map(unparenthesize).is_some_and(|r| {
                r.kind_name() == "dictionary" && r.named_children(&mut r.walk()).all(|c| c.kind_name() == "comment")
            })
    };
    let node_at = |r: &Range<usize>| root.descendant_for_byte_range(r.start, r.end);
    let mut direct = false;
    let mut merged = false;
    let mut chains = Vec::new();
    for &Returned { value, ref spreads } in returned {
        match value.kind_name() {
            // Forms 1 and 3. Whether the display is a tool result is asked
            // only of one that spreads `k`.
            "dictionary" if spreads.iter().any(|&s| is_k(s)) => {
                let shaped =
                    crate::contract::tool_result_dict(value, src, 0, &crate::contract::Rules::CONTRACT).is_some();
                let with_result = spreads.iter().any(|&n| {
                    let n = unparenthesize(n);
                    n.kind_name() == "identifier" && local_results.iter().any(|r| r.name == src[n.byte_range()])
                });
                if shaped || with_result {
                    direct = true;
                    merged |= !shaped;
                }
            }
            // Form 2.
            "identifier" => {
                let name = &src[value.byte_range()];
                let Some(result) = local_results.iter().find(|r| r.name == name) else { continue };
                let in_display =
                    result.displays.iter().filter_map(node_at).any(|d| spread_operands(d).into_iter().any(is_k));
                if in_display || writes_kwargs_into(model, scope, result, k, &is_k, root, src) {
                    direct = true;
                }
            }
            // Form 4.
            "call" if !dict_param => {
                if let Some(args) = value.field("arguments")
                    && holds_splat_arg(args, &is_k)
                    && let Some(callee) = callee_of(value, src, model)
                {
                    chains.push(callee);
                }
            }
            _ => {}
        }
    }
    (direct, chains, merged)
}

fn positioned(mut f: Function, def: Node<'_>, src: &str) -> Function {
    let start = def.start_byte();
    let line_start = src[..start].rfind(['\n', '\r']).map_or(0, |i| i + 1);
    f.line = src[..start].matches('\n').count() + src[..start].matches('\r').count()
        - src[..start].matches("\r\n").count()
        + 1;
    f.column = src[line_start..start].chars().count() + 1;
    f
}

fn holds_splat_arg(args: Node<'_>, wanted: &dyn Fn(Node<'_>) -> bool) -> bool {
    let mut c = args.walk();
    args.named_children(&mut c).any(|a| a.kind_name() == "dictionary_splat" && operand(a).is_some_and(wanted))
}

/// The `return` statements of `def` itself (not of nested functions).
fn returns_of(def: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let Some(body) = def.field("body") else { return out };
    // Only what may hold a `return` is walked (every node where the parse
    // has errors): the same returns, in the same order.
    let whole = def.has_error();
    let mut stack = vec![body];
    let mut c = body.walk();
    while let Some(n) = stack.pop() {
        match n.kind_name() {
            "return_statement" => out.push(n),
            "function_definition" | "class_definition" | "lambda" => {}
            kind if whole || crate::syntax::tree::holds_statements(kind) => {
                stack.extend(n.named_children(&mut c).filter(|child| {
                    let kind = child.kind_name();
                    whole || kind == "return_statement" || crate::syntax::tree::holds_statements(kind)
                }));
            }
            _ => {}
        }
    }
    out
}

/// Whether the function (scope `scope`) writes its `**kwargs` into the
/// result name: `N.update(K)`, `N.update(**K)`, `N |= K`, or
/// `for k, v in K.items(): ... N[k] = v`.
fn writes_kwargs_into(
    model: &SemanticModel,
    scope: usize,
    result: &results::ResultName,
    kwargs: &str,
    spread: &dyn Fn(Node<'_>) -> bool,
    root: Node<'_>,
    src: &str,
) -> bool {
    let is = |n: Option<Node<'_>>, name: &str| {
        n.is_some_and(|n| n.kind_name() == "identifier" && &src[n.byte_range()] == name)
    };
    model.references_to(scope, &result.name).filter(|r| r.scope == scope).any(|r| {
        let Some(node) = root.descendant_for_byte_range(r.at.start, r.at.end) else { return false };
        let Some(parent) = node.parent() else { return false };
        match parent.kind_name() {
            "attribute" if parent.field("object") == Some(node) => {
                let update = parent.field("attribute").is_some_and(|a| &src[a.byte_range()] == "update");
                let call = parent.parent().filter(|c| c.kind_name() == "call" && c.field("function") == Some(parent));
                let Some(args) = call.and_then(|c| c.field("arguments")).filter(|_| update) else { return false };
                let mut c = args.walk();
                let args: Vec<Node<'_>> = args.named_children(&mut c).collect();
                matches!(args.as_slice(), [a] if is(Some(*a), kwargs) || (a.kind_name() == "dictionary_splat" && operand(*a).is_some_and(spread)))
            }
            "augmented_assignment" if parent.field("left") == Some(node) => {
                parent.field("operator").is_some_and(|o| &src[o.byte_range()] == "|=")
                    && is(parent.field("right"), kwargs)
            }
            // N[k] = v in the body of `for k, v in K.items():`.
            "subscript" if parent.field("value") == Some(node) => {
                let Some(assignment) = parent.parent().filter(|a| {
                    a.kind_name() == "assignment" && a.field("left") == Some(parent)
                }) else {
                    return false;
                };
                let mut c = parent.walk();
                let keys: Vec<Node<'_>> = parent.children_by_field_name("subscript", &mut c).collect();
                let (Some(key), Some(value)) = (keys.first().filter(|_| keys.len() == 1), assignment.field("right"))
                else {
                    return false;
                };
                let mut up = assignment.parent();
                while let Some(n) = up {
                    if n.kind_name() == "for_statement" {
                        let left = n.field("left");
                        let right = n.field("right");
                        let mut c = left.map(|l| l.walk());
                        let targets: Vec<Node<'_>> = match (left, c.as_mut()) {
                            (Some(l), Some(c)) if l.kind_name() == "pattern_list" => l.named_children(c).collect(),
                            _ => Vec::new(),
                        };
                        let items = right.filter(|r| r.kind_name() == "call").is_some_and(|call| {
                            let f = call.field("function");
                            let no_args = call.field("arguments").is_some_and(|a| a.named_child_count() == 0);
                            f.is_some_and(|f| {
                                f.kind_name() == "attribute"
                                    && is(f.field("object"), kwargs)
                                    && f.field("attribute").is_some_and(|a| &src[a.byte_range()] == "items")
                            }) && no_args
                        });
                        if let [k, v] = targets.as_slice()
                            && items
                            && is(Some(*key), &src[k.byte_range()])
                            && is(Some(value), &src[v.byte_range()])
                        {
                            return true;
                        }
                    }
                    if matches!(n.kind_name(), "function_definition" | "class_definition" | "lambda") {
                        break;
                    }
                    up = n.parent();
                }
                false
            }
            _ => false,
        }
    })
}

/// The callee of `call`, if it is one a builder can be: a module-level
/// name, an attribute of one, or a method of the enclosing module-level class.
fn callee_of(call: Node<'_>, src: &str, model: &SemanticModel) -> Option<Callee> {
    callee_of_function(call.field("function")?, src, model)
}

/// What [`callee_of`] gives a call whose callee is `function` (a call's
/// callee, or an expression that would be one where it stands).
fn callee_of_function(function: Node<'_>, src: &str, model: &SemanticModel) -> Option<Callee> {
    // `(f)(...)` calls `f`.
    let function = unparenthesize(function);
    match function.kind_name() {
        "identifier" => named_callee(function, None, src, model),
        "attribute" => {
            let object = function.field("object")?;
            let attr = src[function.field("attribute")?.byte_range()].to_owned();
            if object.kind_name() != "identifier" {
                return None;
            }
            let base = &src[object.byte_range()];
            if matches!(base, "self" | "cls") {
                let class = enclosing_class(function, src)?;
                return Some(Callee::Method { class, name: attr });
            }
            named_callee(object, Some(attr), src, model)
        }
        _ => None,
    }
}

/// The callee the name `name` (an identifier) gives, called itself
/// (`attribute` none) or as `name.attribute`: a module-level name, or a
/// name its function's own scope binds exactly once, by an import
/// (`docs/rules.md`, "Imports inside a function"); none otherwise.
fn named_callee(name: Node<'_>, attribute: Option<String>, src: &str, model: &SemanticModel) -> Option<Callee> {
    let text = &src[name.byte_range()];
    match model.resolve(text, model.scope_at(name.start_byte())) {
        Resolution::Bindings { scope: 0, .. } => Some(match attribute {
            None => Callee::Name(text.to_owned()),
            Some(attribute) => Callee::Attribute(text.to_owned(), attribute),
        }),
        Resolution::Bindings { scope, bindings } if model.scopes[scope].kind == ScopeKind::Function => {
            let [only] = bindings.as_slice() else { return None };
            let binding = &model.bindings[*only];
            if !matches!(binding.kind, BindingKind::Import | BindingKind::FromImport) {
                return None;
            }
            let mut root = name;
            while let Some(p) = root.parent() {
                root = p;
            }
            let import = bound_by(binding, root, src);
            matches!(import, Bound::From { .. } | Bound::Import { .. }).then_some(Callee::Local { import, attribute })
        }
        _ => None,
    }
}

/// The callee of `call` when it is a call on an instance of a class the
/// module names (`docs/rules.md`, "Calls on an instance"): `K(...).m(...)`,
/// or `N.m(...)` where the reading scope owns `N` and binds it once, by a
/// plain `N = K(...)`. Only receivers resolve such calls.
fn instance_callee<'t>(call: Node<'t>, root: Node<'t>, src: &str, model: &SemanticModel) -> Option<Callee> {
    instance_callee_of_function(call.field("function")?, root, src, model)
}

/// What [`instance_callee`] gives a call whose callee is `function` (in the
/// tree whose root is `root`).
fn instance_callee_of_function<'t>(
    function: Node<'t>,
    root: Node<'t>,
    src: &str,
    model: &SemanticModel,
) -> Option<Callee> {
    let function = Some(unparenthesize(function)).filter(|f| f.kind_name() == "attribute")?;
    let name = src[function.field("attribute")?.byte_range()].to_owned();
    let object = crate::syntax::tree::unparenthesize(function.field("object")?);
    // The class a call `K(...)` or `A.K(...)` constructs, as a callee.
    let class_of = |construct: Node<'_>| -> Option<Callee> {
        let f = construct.field("function")?;
        match f.kind_name() {
            "identifier" => named_callee(f, None, src, model),
            "attribute" => {
                let base = f.field("object").filter(|b| b.kind_name() == "identifier")?;
                let k = &src[f.field("attribute")?.byte_range()];
                named_callee(base, Some(k.to_owned()), src, model)
            }
            _ => None,
        }
    };
    let class = match object.kind_name() {
        "call" => class_of(object)?,
        "identifier" => {
            let n = &src[object.byte_range()];
            if matches!(n, "self" | "cls") {
                return None;
            }
            let here = model.scope_at(object.start_byte());
            let Resolution::Bindings { scope, bindings } = model.resolve(n, here) else { return None };
            let [only] = bindings.as_slice() else { return None };
            if scope != here {
                return None;
            }
            let value =
                super::plain_assigned_value(root, &model.bindings[*only]).filter(|v| v.kind_name() == "call")?;
            let class = class_of(value)?;
            // A name in an annotation is not followed (`docs/rules.md`,
            // "Annotations").
            if crate::syntax::tree::in_annotation(root, object.start_byte()) {
                return None;
            }
            class
        }
        _ => return None,
    };
    Some(Callee::Instance { class: Box::new(class), name })
}

/// The module-level class whose method (a function directly in its body)
/// holds `node`.
fn enclosing_class(node: Node<'_>, src: &str) -> Option<String> {
    let mut n = node.parent();
    while let Some(x) = n {
        // A default value or an annotation is evaluated around the `def`.
        let in_body = x.field("body").is_some_and(|b| b.start_byte() <= node.start_byte());
        if x.kind_name() == "function_definition" && in_body {
            let mut holder = x.parent()?;
            if holder.kind_name() == "decorated_definition" {
                holder = holder.parent()?;
            }
            let class =
                holder.parent().filter(|c| holder.kind_name() == "block" && c.kind_name() == "class_definition")?;
            let mut top = class.parent()?;
            if top.kind_name() == "decorated_definition" {
                top = top.parent()?;
            }
            let name = class.field("name")?;
            return (top.kind_name() == "module").then(|| src[name.byte_range()].to_owned());
        }
        n = x.parent();
    }
    None
}

/// Every call in the module with its keywords and spreads.
fn calls(root: Node<'_>, src: &str, model: &SemanticModel) -> Vec<Call> {
    let mut out = Vec::new();
    let mut kwargs_of: HashMap<usize, Option<String>> = HashMap::new();
    syntax::for_each_node_in_context(root, |node, ancestors| {
        if node.kind_name() != "call" {
            return;
        }
        let Some(callee) = callee_of(node, src, model) else { return };
        let Some(args) = node.field("arguments").filter(|a| a.kind_name() == "argument_list") else {
            return;
        };
        let mut keywords = Vec::new();
        let mut spreads = Vec::new();
        let mut spread_keys = Vec::new();
        let mut unserializable = Vec::new();
        let mut positional = Vec::new();
        let mut splatted = false;
        // A tool may take dozens of parameters and make thousands of
        // calls: its `**kwargs` is read once.
        let own_kwargs = super::enclosing_def(ancestors.iter().rev().copied())
            .and_then(|def| kwargs_of.entry(def.id()).or_insert_with(|| kwargs_parameter(def, src)).clone());
        let mut c = args.walk();
        for arg in args.named_children(&mut c) {
            match arg.kind_name() {
                "comment" => {}
                "list_splat" | "parenthesized_list_splat" => splatted = true,
                _ if !splatted && !matches!(arg.kind_name(), "keyword_argument" | "dictionary_splat") => {
                    positional.push(arg.byte_range())
                }
                "keyword_argument" => {
                    if let Some(name) = arg.field("name") {
                        let name = src[name.byte_range()].to_owned();
                        if let Some(what) = arg.field("value").and_then(|v| not_json_serializable(v, src)) {
                            unserializable.push((name.clone(), what));
                        }
                        keywords.push((name, arg.byte_range()));
                    }
                }
                "dictionary_splat" => {
                    let Some(value) = operand(arg) else { continue };
                    let text = src[value.byte_range()].to_owned();
                    let passes_own = own_kwargs.as_ref().filter(|k| {
                        let v = unparenthesize(value);
                        v.kind_name() == "identifier" && &src[v.byte_range()] == k.as_str() && is_returned(node)
                    });
                    spreads.push((arg.byte_range(), text, passes_own.cloned()));
                    spread_keys.push(spread_keys_of(value, src));
                }
                _ => {}
            }
        }
        let line = node.start_position().row + 1;
        let enclosing = super::enclosing_function_of(ancestors.iter().rev().copied(), src);
        let touched =
            own_kwargs.as_ref().is_some_and(|k| model.references_to(model.scope_at(node.start_byte()), k).count() > 1);
        out.push(Call {
            callee,
            range: node.byte_range(),
            line,
            unserializable,
            keywords,
            spreads,
            spread_keys,
            positional,
            enclosing,
            touched,
        });
    });
    out
}

/// The keys a `**m` argument spells, each with why its value evidently
/// cannot go through `json.dumps` ([`spread_keys_of`]).
type SpelledKeys = Vec<(String, Option<&'static str>)>;

/// The keys a `**m` argument can only hold (`docs/rules.md`, "TS003: a
/// builder is fixed once"), each with why its value evidently cannot go
/// through `json.dumps`: `m` (parentheses seen through) a dict display
/// whose every entry is a pair with a constant string key, or a dict
/// comprehension `{k: v for k in (...)}` with one `for` clause whose
/// target is the name `k`, whose iterable is a tuple, list or set display
/// of constant strings, and whose key is `k` (its `if` clauses only leave
/// keys out). `None` for anything else.
fn spread_keys_of(value: Node<'_>, src: &str) -> Option<SpelledKeys> {
    let value = unparenthesize(value);
    let mut cursor = value.walk();
    let children: Vec<Node<'_>> = value.named_children(&mut cursor).filter(|c| c.kind_name() != "comment").collect();
    match value.kind_name() {
        "dictionary" => children
            .iter()
            .map(|pair| {
                let key = Some(*pair).filter(|p| p.kind_name() == "pair")?.field("key")?;
                let unserializable = pair.field("value").and_then(|v| not_json_serializable(v, src));
                Some((constant_str(key, src)?, unserializable))
            })
            .collect(),
        "dictionary_comprehension" => {
            let body = value.field("body").filter(|b| b.kind_name() == "pair")?;
            let clauses: Vec<&Node<'_>> = children.iter().filter(|c| c.kind_name() == "for_in_clause").collect();
            let [clause] = clauses.as_slice() else { return None };
            let target = clause.field("left").filter(|t| t.kind_name() == "identifier")?;
            let key = unparenthesize(body.field("key")?);
            if key.kind_name() != "identifier" || src[key.byte_range()] != src[target.byte_range()] {
                return None;
            }
            let iterable = unparenthesize(clause.field("right")?);
            if !matches!(iterable.kind_name(), "tuple" | "list" | "set") {
                return None;
            }
            let mut c = iterable.walk();
            iterable
                .named_children(&mut c)
                .filter(|e| e.kind_name() != "comment")
                .map(|e| Some((constant_str(e, src)?, None)))
                .collect()
        }
        _ => None,
    }
}

/// What the arguments of `call` bound to the dict parameters of `f` add
/// (see `docs/rules.md`): a dict display's entries as an `update` reads
/// them, nothing for `None`, and any other argument as a mapping.
fn dict_arguments(
    tree: &tree_sitter::Tree,
    src: &str,
    call: &Call,
    f: &Function,
    method: bool,
) -> Vec<(String, results::Added, Range<usize>)> {
    let mut out = Vec::new();
    let offset = if method { f.offset } else { 0 };
    for (param, position) in &f.dict_params {
        let by_keyword = call.keywords.iter().find(|(k, _)| k == param).map(|(_, r)| r.clone());
        let argument = match by_keyword {
            Some(kw) => tree
                .root_node()
                .descendant_for_byte_range(kw.start, kw.end)
                .and_then(|k| k.field("value"))
                .map(|v| v.byte_range()),
            None => position.and_then(|p| p.checked_sub(offset)).and_then(|p| call.positional.get(p).cloned()),
        };
        let Some(range) = argument else { continue };
        let Some(node) = tree.root_node().descendant_for_byte_range(range.start, range.end) else { continue };
        let value = unparenthesize(node);
        match value.kind_name() {
            "none" => {}
            "dictionary" => {
                results::display_writes(value, src, &mut |added, span| out.push((param.clone(), added, span)))
            }
            _ => {
                let text = src[value.byte_range()].to_owned();
                let added = results::Added::Mapping { written: text.clone(), expression: text };
                out.push((param.clone(), added, value.byte_range()));
            }
        }
    }
    out
}

/// Records in `facts` the uses of names and attributes that could reach a
/// builder other than by a call toolshape resolves (see [`Facts`]).
fn uses_of(
    root: Node<'_>,
    src: &str,
    model: &SemanticModel,
    facts: &Facts,
    names: &BTreeSet<String>,
    usage: &mut Usage,
) {
    let is_callee = |n: Node<'_>| n.parent().is_some_and(|p| p.kind_name() == "call" && p.field("function") == Some(n));
    for reference in &model.references {
        if matches!(facts.bindings.get(&reference.name), Some(Bound::Other)) && names.contains(&reference.name) {
            usage.rebound.push((reference.name.clone(), root_line(root, reference.at.start)));
            continue;
        }
        if !matches!(facts.bindings.get(&reference.name), Some(Bound::Def | Bound::From { .. } | Bound::Import { .. }))
        {
            continue;
        }
        if !matches!(model.resolve(&reference.name, reference.scope), Resolution::Bindings { scope: 0, .. }) {
            continue;
        }
        let Some(node) = root.descendant_for_byte_range(reference.at.start, reference.at.end) else { continue };
        if node.kind_name() != "identifier" || is_callee(node) {
            continue;
        }
        let line = node.start_position().row + 1;
        let parent = node.parent();
        match parent.filter(|p| p.kind_name() == "attribute" && p.field("object") == Some(node)) {
            Some(attribute) => {
                if !is_callee(attribute)
                    && let Some(a) = attribute.field("attribute")
                    && names.contains(&src[a.byte_range()])
                {
                    usage.uses.push((Callee::Attribute(reference.name.clone(), src[a.byte_range()].to_owned()), line));
                }
            }
            None if names.contains(&reference.name) => usage.uses.push((Callee::Name(reference.name.clone()), line)),
            None => {}
        }
    }
    let methods: BTreeSet<(String, String)> = facts.methods.keys().cloned().collect();
    syntax::for_each_node(root, |node| match node.kind_name() {
        "attribute" => {
            let (Some(object), Some(attr)) = (node.field("object"), node.field("attribute")) else {
                return;
            };
            let name = &src[attr.byte_range()];
            if !names.contains(name) {
                return;
            }
            let line = node.start_position().row + 1;
            let object_text = &src[object.byte_range()];
            if object.kind_name() == "identifier" && matches!(object_text, "self" | "cls") && is_callee(node) {
                let own = enclosing_class(node, src).is_some_and(|c| methods.contains(&(c, name.to_owned())));
                if own {
                    return;
                }
            }
            usage.attributes.entry(name.to_owned()).or_insert(line);
            if object.kind_name() == "attribute"
                && object_text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
            {
                usage.dotted.push((name.to_owned(), line, object_text.to_owned()));
            }
        }
        "import_statement" | "import_from_statement" if node.parent().is_some_and(|p| p.kind_name() != "module") => {
            usage.local_imports.push((imported_names(node, src), node.start_position().row + 1));
        }
        "wildcard_import" => {
            let Some(statement) = node.parent().filter(|p| p.kind_name() == "import_from_statement") else { return };
            let Some(module) = statement.field("module_name") else { return };
            let text = &src[module.byte_range()];
            let level = text.bytes().take_while(|b| *b == b'.').count();
            let dotted: String = text[level..].split_whitespace().collect();
            usage.star_imports.push((level, dotted, node.start_position().row + 1));
        }
        _ => {}
    });
}

/// The name of the `**kwargs` parameter of `def`, if it has one.
fn kwargs_parameter(def: Node<'_>, src: &str) -> Option<String> {
    let params = def.field("parameters")?;
    let mut c = params.walk();
    params.named_children(&mut c).find_map(|p| {
        let splat = match p.kind_name() {
            "dictionary_splat_pattern" => Some(p),
            "typed_parameter" => {
                let mut c2 = p.walk();
                p.named_children(&mut c2).find(|n| n.kind_name() == "dictionary_splat_pattern")
            }
            _ => None,
        }?;
        operand(splat).map(|k| src[k.byte_range()].to_owned())
    })
}

/// Whether `call` is the value of a `return` (parentheses aside).
fn is_returned(call: Node<'_>) -> bool {
    crate::syntax::tree::parenthesized_in(call).1.is_some_and(|p| p.kind_name() == "return_statement")
}

/// The names a local import statement `node` may reach a builder through
/// (`docs/rules.md`, "TS003: a builder is fixed once"): each name a `from
/// M import` imports (`n` of `n as x`), each module an `import ... as x`
/// binds (its last name), and the first name of each plain `import a.b`
/// (what it binds). Not the module a `from` imports from, nor an alias.
fn imported_names(node: Node<'_>, src: &str) -> Vec<String> {
    let from = node.kind_name() == "import_from_statement";
    let module = node.field("module_name").map(|m| m.id());
    let mut names = Vec::new();
    let mut cursor = node.walk();
    for item in node.named_children(&mut cursor) {
        if Some(item.id()) == module {
            continue;
        }
        let (dotted, aliased) = match item.kind_name() {
            "aliased_import" => (item.field("name"), true),
            "dotted_name" => (Some(item), false),
            _ => continue,
        };
        let Some(dotted) = dotted else { continue };
        let text = &src[dotted.byte_range()];
        let parts: Vec<&str> = text.split('.').map(str::trim).collect();
        let name = if from || aliased { parts.last() } else { parts.first() };
        names.extend(name.map(|n| (*n).to_owned()));
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_bound_to_many_results_is_judged_as_if_each_were_asked_alone() {
        let display = r#"{"status": "success", "content": [{"text": "t"}]}"#;
        let regions = |text: &str| -> Vec<Range<usize>> {
            text.match_indices(display).map(|(at, d)| at + d.find('{').unwrap()..at + d.len()).collect()
        };
        let cases = [
            // Written after the first display only.
            (format!("r = {display}\nr['x'] = 1\nr = {display}\n"), true),
            // Written after the second only.
            (format!("r = {display}\nr = {display}\nr.update(x=1)\n"), true),
            // Spread somewhere.
            (format!("r = {display}\nr = {display}\nf(**r)\n"), true),
            // Written before the displays only, then rebound to them.
            (format!("r = {{}}\nr['x'] = 1\nr = {display}\nr = {display}\n"), false),
        ];
        for (text, builder) in cases {
            // `**` must stand in the file for any builder to be looked for.
            let text = format!("{text}g(**kw)\n");
            let regions = regions(&text);
            assert_eq!(regions.len(), 2, "{text}");
            let alone = regions.iter().any(|r| may_define_a_builder_in(&text, Some(std::slice::from_ref(r))));
            assert_eq!(may_define_a_builder_in(&text, Some(&regions)), builder, "{text}");
            assert_eq!(alone, builder, "{text}");
        }
    }

    fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let mut paths = Vec::new();
        for (rel, text) in files {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            paths.push(path);
        }
        let checked = vec![true; paths.len()];
        let known = paths.iter().map(|_| None).collect();
        let project = Project::index(dir.path(), paths, &checked, known, &[], |p| {
            std::fs::read_to_string(p).ok().map(SharedText::from)
        });
        (dir, project)
    }

    #[test]
    fn facts_that_claim_the_whole_file_see_every_function() {
        // A docstring line that looks like a `def` fools the lexical spans
        // around the candidate, so the facts come from one parse, which
        // must be the whole file: `err` holds no candidate display.
        let src = "def ok(text, **extra):\n    \"\"\"Build it.\ndef looks_like_code():\n    \"\"\"\n    return {'status': 'success', 'content': [{'text': text}], **extra}\n\n\ndef err(msg, **kw):\n    x = [1, 2]\n    return ok(msg, **kw)\n";
        let pieces = syntax::parse_pieces(src, syntax::ParseScope::Candidates);
        assert!(!pieces.is_empty());
        let file = crate::semantic::FileContext::for_pieces(src, &pieces);
        // A fix question first builds the outline view.
        let _ = file.tree();
        let facts = round_zero_facts_in(&file, src, &pieces).expect("a builder may be defined");
        assert!(!facts.partial, "the lexical spans were not fooled");
        // Its chain (form 4) is read from its body.
        let err = facts.functions.get("err").expect("err takes **kw");
        assert_eq!(err.chains.len(), 1, "{:?}", err.chains);
    }

    #[test]
    fn a_project_without_tools_is_read_once_by_ts005() {
        let (_dir, mut p) = project(&[
            ("a.py", "def ok(text):\n    return {'status': 'success', 'content': [{'text': text}]}\n"),
            ("b.py", "from a import ok\n\ndef f():\n    return ok('x')\n"),
            ("c.py", "@other\ndef g():\n    return {'content': []}\n"),
        ]);
        let reads = std::sync::atomic::AtomicUsize::new(0);
        let read = |path: &Path| {
            reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            std::fs::read_to_string(path).ok().map(SharedText::from)
        };
        assert_eq!(p.half_shaped(&["tool"], ToolBodies::Reaching, read), Vec::new());
        // The index listed every module's decorator lines: with no tool
        // among them, no module is read again.
        assert_eq!(reads.into_inner(), 0);
    }

    fn keywords(p: &Project, dir: &Path, rel: &str) -> Vec<String> {
        let path = dir.join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        p.builder_calls(&path, &text)
            .into_iter()
            .flat_map(|c| {
                let builder = c.builder.name.clone();
                c.call
                    .keywords
                    .iter()
                    .filter(|(k, _)| !c.named.contains(k))
                    .map(|(k, _)| format!("{builder}:{k}"))
                    .chain(c.call.spreads.iter().filter(|s| s.2.is_none()).map(|s| format!("{builder}:**{}", s.1)))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn builders_are_found_in_every_flow_form_and_across_modules() {
        let common = "def ok(text, **extra):\n    return {'status': 'success', 'content': [{'text': text}], **extra}\n\
                      def upd(text, **kw):\n    r = {'status': 'success', 'content': []}\n    r.update(kw)\n    return r\n\
                      def loop(text, **kw):\n    r = {'status': 'success', 'content': []}\n    for k, v in kw.items():\n        r[k] = v\n    return r\n\
                      def merged(text, **kw):\n    r = {'status': 'success', 'content': []}\n    return {**r, **kw}\n\
                      def err(msg, **kw):\n    return ok(msg, **kw)\n\
                      def not_one(text, **kw):\n    kw = {}\n    return {'status': 'success', 'content': [], **kw}\n";
        let tools = "from .common import ok, err as fail\nfrom . import common\nimport pkg.common as c\n\
                     def t(devices):\n    ok('x', devices=devices, text2=1)\n    fail('y', code=3)\n    \
                     common.upd('z', a=1)\n    c.loop('w', b=2, **devices)\n    c.merged('v', m=1)\n    c.not_one('u', n=1)\n    \
                     ok(text='t')\n";
        let (dir, p) = project(&[("pkg/__init__.py", ""), ("pkg/common.py", common), ("pkg/tools.py", tools)]);
        assert_eq!(
            keywords(&p, dir.path(), "pkg/tools.py"),
            ["ok:devices", "ok:text2", "err:code", "upd:a", "loop:b", "loop:**devices", "merged:m"]
        );
        // The chain's own **kw passed on is flow, not a finding.
        assert!(keywords(&p, dir.path(), "pkg/common.py").is_empty());
    }

    /// How many call reasons of the builder `ok` that `common` (as
    /// `pkg/common.py`) defines hold `marker`, with `files` beside it.
    fn reasons_of_ok(common: &str, files: &[(&str, &str)], marker: &str) -> usize {
        let all: Vec<(&str, &str)> =
            [("pkg/__init__.py", ""), ("pkg/common.py", common)].into_iter().chain(files.iter().copied()).collect();
        let (dir, p) = project(&all);
        let specs = p.builder_specs(&dir.path().join("pkg/common.py"));
        let ok = specs.iter().find(|s| s.name == "ok").expect("ok is a builder");
        ok.call_reasons.iter().filter(|r| r.contains(marker)).count()
    }

    /// Asserts that `reasons` counts `want` for each of `cases`.
    fn expect_reasons(reasons: &dyn Fn(&str) -> usize, cases: &[&str], want: usize) {
        for case in cases {
            assert_eq!(reasons(case), want, "{case}");
        }
    }

    #[test]
    fn only_a_local_import_that_reaches_the_builder_or_its_module_is_a_reason() {
        let common =
            "def ok(t, **e):\n    return {'status': 'success', 'content': [], **e}\ndef parse(p):\n    return p\n";
        let reasons = |body: &str| {
            let user = format!("def f():\n    {body}\n");
            reasons_of_ok(common, &[("app.py", &user)], "inside a function")
        };
        // Through these, calls of `ok` go where toolshape does not look.
        expect_reasons(
            &reasons,
            &[
                "from pkg.common import ok",
                "from pkg.common import ok as good",
                "from pkg import common; common.ok('a', **m)",
                "from pkg import common as c; c.ok('a', **m)",
                "import pkg.common as c; c.ok('a', **m)",
                "import common; common.ok('a', **m)",
                "from .common import parse, ok",
            ],
            1,
        );
        // These bind neither `ok` nor its module (`import pkg.common` binds
        // `pkg`: `pkg.common.ok(...)` is a dotted attribute, a reason of
        // its own).
        expect_reasons(
            &reasons,
            &[
                "from pkg.common import parse; ok = 1",
                "from pkg.common import parse as ok2; ok = 1",
                "import pkg.common; ok = 1",
                "import os; ok = 1",
            ],
            0,
        );
    }

    #[test]
    fn a_call_named_like_a_builder_that_toolshape_cannot_resolve_is_a_reason() {
        let common = "def ok(t, **e):\n    return {'status': 'success', 'content': [], **e}\n";
        let reasons = |user: &str| {
            let files = [("pkg/other.py", "def ok(x):\n    return x\n"), ("app.py", user)];
            reasons_of_ok(common, &files, "cannot resolve")
        };
        // An alias of the module, a dotted path, a parameter, any object.
        expect_reasons(
            &reasons,
            &[
                "import pkg.common\nc = pkg.common\ndef f():\n    return c.ok('a', status='error')\n",
                "import pkg.common\ndef f():\n    return pkg.common.ok('a', status='error')\n",
                "def f(ok):\n    return ok('a', status='error')\n",
                "def f(x):\n    return x.helpers.ok('a')\n",
            ],
            1,
        );
        // Resolved: to the builder, to another function of the project, or
        // to a module outside it.
        expect_reasons(
            &reasons,
            &[
                "from pkg.common import ok\ndef f():\n    return ok('a', frames=1)\n",
                "from pkg import common\ndef f():\n    return common.ok('a')\n",
                "from pkg.other import ok\ndef f():\n    return ok(1)\n",
                "import requests\ndef f():\n    return requests.ok(1)\n",
                "from requests import ok\ndef f():\n    return ok(1)\n",
            ],
            0,
        );
    }

    #[test]
    fn a_spread_that_spells_its_keys_is_judged_key_by_key() {
        let common = "def ok(t, **e):\n    return {'status': 'success', 'content': [], **e}\n";
        let reasons = |argument: &str| {
            let user =
                format!("from pkg.common import ok\ndef f(s, m, keys, name, y):\n    return ok('a', {argument})\n");
            reasons_of_ok(common, &[("app.py", &user)], "passes `**")
        };
        // Keys it spells, none of them reserved: the keywords they are.
        expect_reasons(
            &reasons,
            &[
                "**{'ssid': s}",
                "**({'a': s, \"b\": 1})",
                "**{k: s.get(k) for k in ('a', 'b') if k}",
                "**{k: s for k in ['a']}",
            ],
            0,
        );
        expect_reasons(
            &reasons,
            &[
                "**{'status': s}",
                "**{k: s for k in ('a', 'toolUseId')}",
                "**{'cancelled': True}",
                "**{'x': {1, 2}}",
                "**{k: s for k in keys}",
                "**{k.upper(): s for k in ('a',)}",
                "**{name: s for k in ('a',)}",
                "**{k: s for k in ('a',) for j in y}",
                "**{**m}",
                "**{name: s}",
                "**m",
            ],
            1,
        );
    }

    #[test]
    fn methods_reexports_and_unresolvable_names() {
        let base = "class Tools:\n    def _ok(self, text, **extra):\n        return {'status': 'success', 'content': [], **extra}\n    \
                    def run(self):\n        return self._ok('a', frames=1)\n";
        let init = "from .base import Tools\nfrom .helpers import ok as good\n";
        let helpers = "def ok(t, **e):\n    return {'status': 'success', 'content': [], **e}\n";
        let user = "from pkg import good\nfrom star import *\ndef f(ok):\n    good('a', x=1)\n    ok('b', y=2)\n";
        let (dir, p) =
            project(&[("pkg/__init__.py", init), ("pkg/base.py", base), ("pkg/helpers.py", helpers), ("app.py", user)]);
        assert_eq!(keywords(&p, dir.path(), "pkg/base.py"), ["_ok:frames"]);
        assert_eq!(keywords(&p, dir.path(), "app.py"), ["ok:x"], "a parameter named ok is not the builder");
    }
}
