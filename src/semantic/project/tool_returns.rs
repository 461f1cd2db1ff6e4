//! TS005's project pass (`docs/rules.md`, "TS005 not a tool result"): the
//! dict displays a project's Strands tools return — directly, through a
//! name, or through calls of project functions resolved as builder calls
//! are — that carry `"status"` or `"content"` but not both. The SDK
//! rewraps those as one success text block.
//!
//! Only files whose bytes name a tool decorator are parsed for tools; the
//! functions their returns call are parsed on demand, with the modules an
//! import chain passes through (for their module-level names). Each is
//! parsed as an outline: the bodies of the top-level functions no question
//! is about are blanked first.

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::Path;

use rayon::prelude::*;
use tree_sitter::{Node, Tree};

use super::reads::{definitions, return_statements_at};
use super::{Bound, BuilderKey, Callee, Project, SharedText, callee_of, module_bindings};
use crate::semantic::scope::{Resolution, SemanticModel};
use crate::syntax;
use crate::syntax::tree::{FieldChild, KindName};
use crate::syntax::tree::{constant_str, operand, unparenthesize};

/// A display a tool returns that is not a tool result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HalfShaped {
    pub module: usize,
    /// The display, `{` to `}`.
    pub range: Range<usize>,
    /// `"content"` or `"status"`: the key it lacks.
    pub missing: &'static str,
    /// Its status, when a constant string.
    pub status: Option<String>,
    /// The first tool (by path, then position) that returns it.
    pub tool: String,
}

/// One module, parsed for TS005, with its model: whole, or as an outline
/// ([`syntax::outline`]) that leaves out the bodies of the functions and
/// methods no question of TS005 is about.
struct Parsed {
    text: SharedText,
    tree: Tree,
    model: std::sync::Arc<SemanticModel>,
    /// The functions whose bodies the parse left out: `name`, or
    /// `Class.name` for a method.
    blanked: HashSet<String>,
    /// The functions it was asked to keep, named so.
    kept: HashSet<String>,
    /// The decorator lines (offsets) of the tools it was asked to keep.
    tools: Vec<usize>,
    /// The functions (named as `blanked`) whose bytes say they may return a
    /// half-shaped display ([`may_reach`]); the others need no parse.
    reaching: HashSet<String>,
}

/// Which tools (functions with a decorator line naming a tool decorator)
/// TS005 parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolBodies {
    /// Every one (`--no-prefilter`).
    All,
    /// Those that may return a half-shaped display: whose text holds a
    /// display that may hold one key but not the other
    /// ([`syntax::lexer::Layout::one_key`]), or returns a call of a name
    /// that the project may bind to a function (a `def` or an `import ...
    /// as` of it). The others reach none.
    Reaching,
}

/// A tool as read from its module's bytes, before any parse: whether it may
/// return a half-shaped display.
enum Reach {
    /// It may: parse it.
    Yes,
    /// Only through a call of one of these names.
    Through(Vec<String>),
}

/// A module with tool decorator lines, read for TS005.
struct ToolModule {
    m: usize,
    text: SharedText,
    layout: Option<std::sync::Arc<syntax::lexer::Layout>>,
    /// Its tools' decorator lines (offsets), and their reach.
    tools: Vec<(usize, Reach)>,
}

impl ToolModule {
    /// Module `m`'s `text` and its tools, judged as `bodies` says; `None`
    /// without a tool.
    fn read(m: usize, text: SharedText, decorators: &[&str], bodies: ToolBodies) -> Option<ToolModule> {
        let at: Vec<usize> = syntax::decorator_lines(&text)
            .filter(|(_, n)| decorators.contains(&n.as_str()))
            .map(|(at, _)| at)
            .collect();
        if at.is_empty() {
            return None;
        }
        let layout = syntax::layout(&text);
        let tools = match (&layout, bodies) {
            (Some(layout), ToolBodies::Reaching) => at
                .into_iter()
                .filter_map(|at| {
                    // A `@` that starts no statement stands in a string.
                    let span = syntax::outline::decorated_span(&text, &layout.lines, at)?;
                    match span_reach(&text, layout, span) {
                        Reach::Through(names) if names.is_empty() => None,
                        reach => Some((at, reach)),
                    }
                })
                .collect(),
            _ => at.into_iter().map(|at| (at, Reach::Yes)).collect(),
        };
        Some(ToolModule { m, text, layout, tools })
    }
}

/// Whether the statements in `span` of `layout`'s text may return a
/// half-shaped display: a display there may hold just one key
/// ([`syntax::lexer::Layout::one_key`]), or some `return` may return a
/// call ([`syntax::outline::returned_callees`] not empty).
fn may_reach(text: &str, layout: &syntax::lexer::Layout, span: Range<usize>) -> bool {
    !matches!(span_reach(text, layout, span), Reach::Through(names) if names.is_empty())
}

/// What the statements in `span` of `layout`'s text may return that TS005
/// follows: [`Reach::Yes`] when a display there may hold just one key or a
/// `return` calls what the bytes cannot name, else [`Reach::Through`] the
/// names its `return`s call (none: nothing).
fn span_reach(text: &str, layout: &syntax::lexer::Layout, span: Range<usize>) -> Reach {
    if holds_one_key(text, layout, &span) {
        return Reach::Yes;
    }
    match syntax::outline::returned_callees(text, layout, span) {
        None => Reach::Yes,
        Some(names) => Reach::Through(names.into_iter().map(str::to_owned).collect()),
    }
}

/// Whether a display in `span` of `text` may hold just one of the keys
/// and be returned.
fn holds_one_key(text: &str, layout: &syntax::lexer::Layout, span: &Range<usize>) -> bool {
    let first = layout.one_key.partition_point(|&o| o < span.start);
    layout.one_key[first..].iter().take_while(|&&o| o < span.end).any(|&o| may_be_returned(text, span, o))
}

/// Whether the display whose `{` is at `at` in `text` may be what the
/// function in `span` returns as TS005 follows it: the value of a
/// `return`, or the whole value of an assignment (`N = {...}`) to a name
/// the function returns (`return N`), parentheses around it or not. Read
/// from the bytes before it on its line: past spaces, tabs and `(`, a
/// display returned is preceded by the word `return`, one assigned by `=`
/// after a name that some `return N` in `span` names (not a subscript's or
/// an attribute's, `d["k"] =` or `o.k =`, nor a word in quotes: no such
/// target binds a name); one preceded by anything else (`,` `[` `:` `{`, a
/// callee's name, an operator or another keyword) is an element, an
/// argument, a value in another display or an operand. Where the line
/// breaks first, it may be.
fn may_be_returned(text: &str, span: &Range<usize>, at: usize) -> bool {
    let bytes = text.as_bytes();
    let word = syntax::lexer::is_ident_byte;
    let mut i = at;
    while i > 0 && matches!(bytes[i - 1], b' ' | b'\t' | b'(') {
        i -= 1;
    }
    let Some(&before) = i.checked_sub(1).map(|j| &bytes[j]) else { return true };
    match before {
        b'\n' | b'\r' | b'\\' => true,
        // The target is one of the names before the `=` on its line.
        b'=' => {
            let line = bytes[..i].iter().rposition(|&c| matches!(c, b'\n' | b'\r')).map_or(0, |j| j + 1);
            let body = &text[span.start.min(at)..span.end.max(at)];
            let mut names = text[line..i].split(|c: char| !c.is_alphanumeric() && c != '_' && c.is_ascii());
            let mut end = line;
            names.any(|name| {
                let start = end;
                end += name.len() + 1;
                let (before, after) = (start.checked_sub(1).map(|j| bytes[j]), bytes.get(start + name.len()));
                let part =
                    matches!(before, Some(b'.' | b'"' | b'\'')) || matches!(after, Some(b'[' | b'.' | b'"' | b'\''));
                !name.is_empty() && !part && !name.starts_with(|c: char| c.is_ascii_digit()) && returns_name(body, name)
            })
        }
        b if word(b) => {
            let start = bytes[..i].iter().rposition(|&c| !word(c)).map_or(0, |j| j + 1);
            &text[start..i] == "return"
        }
        _ => false,
    }
}

/// Whether `body` may hold `return NAME` (parentheses around the name or
/// not), in code, strings or comments alike.
fn returns_name(body: &str, name: &str) -> bool {
    static RETURN: syntax::Word = syntax::Word::new("return");
    let bytes = body.as_bytes();
    RETURN.offsets(bytes).any(|at| {
        let mut i = at + RETURN.as_str().len();
        while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'(') {
            i += 1;
        }
        body[i..].starts_with(name) && !bytes.get(i + name.len()).is_some_and(|&b| syntax::lexer::is_ident_byte(b))
    })
}

/// Names read from a text, each with the offset of the keyword before it.
type NamesAt<'t> = Vec<(&'t str, usize)>;

/// Where `text` may bind a name to a function, read from bytes: each
/// `def NAME` (the name, and the offset of its `def`), and each name an `as`
/// of an import statement binds (`from m import f as it`, which resolution
/// follows elsewhere; the name, and the offset of its `as`). An import
/// statement runs from the word `import` to the end of its line, line
/// continuations and the parentheses opened in it followed; the `as` of
/// any other statement binds no function TS005 follows.
fn function_bindings(text: &str) -> (NamesAt<'_>, NamesAt<'_>) {
    static DEF: syntax::Word = syntax::Word::new("def");
    static IMPORT: syntax::Word = syntax::Word::new("import");
    static AS: syntax::Word = syntax::Word::new("as");
    let defs =
        DEF.offsets(text.as_bytes()).filter_map(|at| Some((name_after(text, at + DEF.as_str().len())?, at))).collect();
    let mut aliases = Vec::new();
    // Each byte is read once: an `import` inside a statement read already
    // (a prose "import (" reads on to its `)`) holds nothing new.
    let mut read_to = 0;
    for at in IMPORT.offsets(text.as_bytes()) {
        if at < read_to {
            continue;
        }
        read_to = import_statement_end(text.as_bytes(), at + IMPORT.as_str().len());
        for alias in AS.offsets(&text.as_bytes()[at..read_to]) {
            if let Some(name) = name_after(text, at + alias + AS.as_str().len()) {
                aliases.push((name, at + alias));
            }
        }
    }
    (defs, aliases)
}

/// The name after a keyword that ends at `after`, blanks, line breaks and
/// continuations between.
fn name_after(text: &str, after: usize) -> Option<&str> {
    let bytes = text.as_bytes();
    let start =
        after + bytes[after..].iter().take_while(|&&b| matches!(b, b' ' | b'\t' | b'\\' | b'\n' | b'\r')).count();
    let end = start + bytes[start..].iter().take_while(|&&b| syntax::lexer::is_ident_byte(b)).count();
    text.get(start..end).filter(|n| !n.is_empty())
}

/// Where the import statement whose `import` ends at `from` ends: at the
/// first line break or `;` outside the parentheses opened after it, line
/// continuations and comments stepped over.
fn import_statement_end(bytes: &[u8], from: usize) -> usize {
    let (mut at, mut depth) = (from, 0usize);
    while let Some(&b) = bytes.get(at) {
        match b {
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b'#' => at = memchr::memchr2(b'\n', b'\r', &bytes[at..]).map_or(bytes.len(), |i| at + i) - 1,
            b'\\' => {
                // A continuation: its line break does not end the statement.
                at += match bytes.get(at + 1..at + 3) {
                    Some(b"\r\n") => 2,
                    _ => 1,
                };
            }
            b'\n' | b'\r' | b';' if depth == 0 => return at,
            _ => {}
        }
        at += 1;
    }
    bytes.len()
}

/// Whether the `as` at `at` of `text` may bind an imported name: the word
/// `import` stands before it in its logical line (of `layout`; a file the
/// lexer cannot vouch for may bind one anywhere). An `as` of prose (a
/// docstring's "such as get"), of a `with` or of an `except` binds no
/// function TS005 follows.
fn import_alias(text: &str, layout: Option<&syntax::lexer::Layout>, at: usize) -> bool {
    let Some(layout) = layout else { return true };
    let lines = &layout.lines;
    let Some(line) = lines[..lines.partition_point(|l| l.start <= at)].last() else { return true };
    syntax::holds_word(&text[line.start..at], "import")
}

/// What each `def` of `text` at `defs` may return that TS005 follows:
/// [`Reach::Yes`], or [`Reach::Through`] the names it returns calls of
/// (none: nothing). A `def` that starts no statement stands in a string or
/// a comment and binds nothing; a file the lexer cannot vouch for (no
/// `layout`) may return anything.
fn def_reach<'w>(
    text: &str,
    layout: Option<&syntax::lexer::Layout>,
    defs: &[(&'w str, usize)],
) -> Vec<(&'w str, Reach)> {
    let Some(layout) = layout else {
        return defs.iter().map(|&(name, _)| (name, Reach::Yes)).collect();
    };
    let lines = &layout.lines;
    defs.iter()
        .filter_map(|&(name, at)| {
            let line = lines[..lines.partition_point(|l| l.start <= at)].last()?;
            let lead = &text[line.start..at];
            let statement = lead.is_empty()
                || lead
                    .strip_prefix("async")
                    .is_some_and(|r| r.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\\' | b'\n' | b'\r')));
            if !statement {
                return None;
            }
            let Some(span) = syntax::outline::decorated_span(text, lines, line.start) else {
                return Some((name, Reach::Yes));
            };
            Some((name, span_reach(text, layout, span)))
        })
        .collect()
}

/// A module's text with its [`syntax::lexer::layout`] (`None`: the lexer
/// cannot vouch for it).
type Lexed = (SharedText, Option<std::sync::Arc<syntax::lexer::Layout>>);

impl Parsed {
    /// Parses module `text` (`layout` its [`syntax::lexer::layout`]),
    /// keeping whole every function (module-level, or a method of a
    /// module-level class) that holds one of `tools` (decorator lines), may
    /// bind a module-level name from its body (`global`), or is one of
    /// `kept`; the bodies of the others are left out. The module's own
    /// block and its classes' bodies are always parsed: they bind the names
    /// that calls resolve through. A function that may reach a display
    /// and is named in `reaching_named` (names whose calls may return a
    /// half-shaped display) is kept too: a tool's call of it asks for it
    /// next, and one parse then serves both. `None` for a file with Python 2 syntax:
    /// it holds no tool and returns nothing.
    fn of(
        text: SharedText,
        layout: Option<&syntax::lexer::Layout>,
        tools: Vec<usize>,
        mut kept: HashSet<String>,
        reaching_named: &HashSet<String>,
    ) -> Option<Parsed> {
        if syntax::legacy::may_hold(text.as_bytes()) {
            let tree = syntax::parse(&text);
            if syntax::legacy::first_legacy_node(tree.root_node(), &text).is_some() {
                return None;
            }
            return Some(Parsed::whole(text, tree, kept, tools, HashSet::new()));
        }
        let definitions = layout.map(|l| syntax::outline::definitions_in(&text, &l.lines)).unwrap_or_default();
        let mut reaching = HashSet::new();
        for d in &definitions {
            let reaches = |d: &syntax::outline::Definition| layout.is_none_or(|l| may_reach(&text, l, d.range.clone()));
            if !d.class && reaches(d) {
                if reaching_named.contains(&d.name) {
                    kept.insert(d.name.clone());
                }
                reaching.insert(d.name.clone());
            }
            for member in d.members.iter().filter(|m| reaches(m)) {
                let key = format!("{}.{}", d.name, member.name);
                if reaching_named.contains(&member.name) {
                    kept.insert(key.clone());
                }
                reaching.insert(key);
            }
        }
        let holds_tool = |d: &syntax::outline::Definition| tools.iter().any(|at| d.range.contains(at));
        // A function is blanked unless it holds a tool asked for, may bind a
        // module-level name, or is asked for (a method as `Class.name`).
        let binds_globals = |d: &syntax::outline::Definition| {
            layout.is_some_and(|l| syntax::outline::declares_global(&text, &l.lines, &d.range))
        };
        let blank = |d: &&syntax::outline::Definition, key: &str| {
            !d.class && !kept.contains(key) && !binds_globals(d) && !holds_tool(d)
        };
        let mut blanked: Vec<(String, &syntax::outline::Definition)> = Vec::new();
        for d in &definitions {
            if blank(&d, &d.name) {
                blanked.push((d.name.clone(), d));
            }
            for member in &d.members {
                let key = format!("{}.{}", d.name, member.name);
                if blank(&member, &key) {
                    blanked.push((key, member));
                }
            }
        }
        blanked.sort_by_key(|(_, d)| d.body.start);
        if blanked.is_empty() || syntax::keeps_whole(&text) {
            let tree = syntax::parse(&text);
            return Some(Parsed::whole(text, tree, kept, tools, reaching));
        }
        let outline = syntax::outline::Outline::new(&text, blanked.iter().map(|(_, d)| *d));
        let Some((outline, tree)) = outline
            .map(|o| {
                let tree = o.parse();
                (o, tree)
            })
            .filter(|(_, tree)| !tree.root_node().has_error())
        else {
            let tree = syntax::parse(&text);
            return Some(Parsed::whole(text, tree, kept, tools, reaching));
        };
        let model = SemanticModel::of(&tree, &outline.text, &outline.ranges);
        let blanked = blanked.into_iter().map(|(key, _)| key).collect();
        Some(Parsed { text, tree, model, blanked, kept, tools, reaching })
    }

    fn whole(
        text: SharedText,
        tree: Tree,
        kept: HashSet<String>,
        tools: Vec<usize>,
        reaching: HashSet<String>,
    ) -> Parsed {
        let model = SemanticModel::of(&tree, &text, &[]);
        Parsed { text, tree, model, blanked: HashSet::new(), kept, tools, reaching }
    }
}

/// The modules TS005 parsed so far, and how to read and parse more.
struct Loader<'a, R> {
    parsed: HashMap<usize, Option<Parsed>>,
    /// The modules whose module-level names the project learned.
    whole: HashSet<usize>,
    read: &'a R,
    /// The names whose calls may return a half-shaped display: a module
    /// is parsed with the functions of these names kept whole.
    reaching: &'a HashSet<String>,
}

/// What [`Project::reaching_functions`] read from the bytes of a project.
#[derive(Debug, Default)]
struct Reaching {
    /// The names whose calls may return a half-shaped display.
    names: HashSet<String>,
    /// The names it judged (the others are unknown to it).
    judged: HashSet<String>,
}

/// What a function returns, as far as TS005 looks: its returned displays
/// (ranges) and the project functions it returns calls of.
#[derive(Debug, Default, Clone)]
struct Returns {
    displays: Vec<Range<usize>>,
    calls: Vec<Callee>,
}

impl Project {
    /// The names among `wanted` whose calls may return a half-shaped
    /// display, read from bytes: a name some project `def` binds whose body
    /// may hold one ([`def_reach`]), or return a call of such a name (the
    /// callees looked up in turn; every project file is read once for its
    /// bindings, then only the files defining a name asked), or a name an
    /// `as` binds. A call of any other name returns nothing TS005
    /// follows. Also returns the names it judged: `wanted` and the callees
    /// their bodies return, transitively. A judged name that is not
    /// reaching is one whose every `def` returns nothing TS005 follows.
    fn reaching_functions(
        &self,
        wanted: HashSet<String>,
        read: &(impl Fn(&Path) -> Option<SharedText> + Sync),
        tool_modules: &[ToolModule],
    ) -> Reaching {
        // No name asked: no project file need be read again.
        if wanted.is_empty() {
            return Reaching::default();
        }
        // Every function binding of each module: (name, offset of the
        // `def`), and the names an `as` binds (name, offset of the `as`).
        // Each round looks its names up module by module, in parallel: one
        // map of the project's every name cost a thread its time to build.
        // A name is kept as where it stands in the module's text, which
        // the module's entry holds: no string is made per `def`.
        type Bindings = (usize, SharedText, Vec<(Range<usize>, usize)>, Vec<(Range<usize>, usize)>);
        let found: Vec<Bindings> = (0..self.modules.len())
            .into_par_iter()
            .filter_map(|m| {
                let text = read(&self.modules[m].path)?;
                let (defs, aliases) = function_bindings(&text);
                let placed = |names: NamesAt<'_>| -> Vec<(Range<usize>, usize)> {
                    let start = |name: &str| name.as_ptr() as usize - text.as_ptr() as usize;
                    names.into_iter().map(|(n, at)| (start(n)..start(n) + n.len(), at)).collect()
                };
                let (defs, aliases) = (placed(defs), placed(aliases));
                (!defs.is_empty() || !aliases.is_empty()).then_some((m, text, defs, aliases))
            })
            .collect();
        // The bindings among `names` (of `text`) of a name `ask` holds.
        fn asked<'n>(text: &'n str, names: &[(Range<usize>, usize)], ask: &HashSet<String>) -> NamesAt<'n> {
            names.iter().map(|(r, at)| (&text[r.clone()], *at)).filter(|(n, _)| ask.contains(*n)).collect()
        }
        // Each module is lexed once, whatever the rounds ask of it; a tool
        // module already was.
        let tools: HashMap<usize, &ToolModule> = tool_modules.iter().map(|t| (t.m, t)).collect();
        let mut lexed: HashMap<usize, Lexed> = HashMap::new();
        let mut reaching: HashSet<String> = HashSet::new();
        let mut through: Vec<(String, Vec<String>)> = Vec::new();
        let mut looked: HashSet<String> = HashSet::new();
        let mut ask = wanted;
        while !ask.is_empty() {
            // The modules defining the names asked, and those where an `as`
            // binds one, each read once.
            let sites: Vec<(usize, NamesAt<'_>, NamesAt<'_>)> = found
                .par_iter()
                .map(|(m, text, defs, aliases)| (*m, asked(text, defs, &ask), asked(text, aliases, &ask)))
                .filter(|(_, defs, aliases)| !defs.is_empty() || !aliases.is_empty())
                .collect();
            let mut by_module: HashMap<usize, NamesAt<'_>> = HashMap::new();
            let mut alias_sites: Vec<(&str, usize, usize)> = Vec::new();
            for (m, defs, aliases) in sites {
                alias_sites.extend(aliases.into_iter().map(|(name, at)| (name, m, at)));
                if !defs.is_empty() {
                    by_module.insert(m, defs);
                }
            }
            let unread: BTreeSet<usize> = by_module
                .keys()
                .copied()
                .chain(alias_sites.iter().map(|&(_, m, _)| m))
                .filter(|m| !tools.contains_key(m) && !lexed.contains_key(m))
                .collect();
            lexed.par_extend(unread.into_par_iter().map(|m| {
                let text = read(&self.modules[m].path).unwrap_or_default();
                let layout = syntax::layout(&text);
                (m, (text, layout))
            }));
            let lexed_text = |m: usize| match (tools.get(&m), lexed.get(&m)) {
                (Some(t), _) => (&*t.text, t.layout.as_deref()),
                (None, Some((text, layout))) => (&**text, layout.as_deref()),
                (None, None) => ("", None),
            };
            for (name, m, at) in alias_sites {
                let (text, layout) = lexed_text(m);
                if import_alias(text, layout, at) {
                    reaching.insert(name.to_owned());
                }
            }
            let judged: Vec<(String, Reach)> = by_module
                .into_par_iter()
                .flat_map_iter(|(m, defs)| {
                    let (text, layout) = lexed_text(m);
                    def_reach(text, layout, &defs).into_iter().map(|(n, r)| (n.to_owned(), r)).collect::<Vec<_>>()
                })
                .collect();
            looked.extend(ask.iter().cloned());
            let mut next: HashSet<String> = HashSet::new();
            for (name, reach) in judged {
                match reach {
                    Reach::Yes => {
                        reaching.insert(name);
                    }
                    Reach::Through(callees) => {
                        next.extend(callees.iter().filter(|c| !looked.contains(*c)).cloned());
                        through.push((name, callees));
                    }
                }
            }
            ask = next;
        }
        loop {
            let more: Vec<String> = through
                .iter()
                .filter(|(name, callees)| !reaching.contains(name) && callees.iter().any(|c| reaching.contains(c)))
                .map(|(name, _)| name.clone())
                .collect();
            if more.is_empty() {
                return Reaching { names: reaching, judged: looked };
            }
            reaching.extend(more);
        }
    }

    /// The half-shaped displays the project's tools return; a tool is a
    /// function decorated by one of `decorators`, and `tools` says which
    /// are parsed. `read` reads a module.
    pub fn half_shaped(
        &mut self,
        decorators: &[&str],
        tools: ToolBodies,
        read: impl Fn(&Path) -> Option<SharedText> + Sync,
    ) -> Vec<HalfShaped> {
        // Only a file with a decorator line naming a tool decorator is
        // read; a check already listed the decorators of the files it read.
        let modules: Vec<ToolModule> = (0..self.modules.len())
            .into_par_iter()
            .filter(|&m| {
                self.modules[m]
                    .decorators
                    .as_ref()
                    .is_none_or(|names| names.iter().any(|n| decorators.contains(&n.as_str())))
            })
            .filter_map(|m| ToolModule::read(m, read(&self.modules[m].path)?, decorators, tools))
            .collect();
        if modules.is_empty() {
            return Vec::new();
        }
        // The names tools return calls of, that the project binds to a
        // function somewhere.
        let wanted: HashSet<String> = modules
            .iter()
            .flat_map(|t| &t.tools)
            .filter_map(|(_, reach)| match reach {
                Reach::Through(names) => Some(names.iter().cloned()),
                Reach::Yes => None,
            })
            .flatten()
            .collect();
        let Reaching { names: functions, judged } = self.reaching_functions(wanted, &read, &modules);
        // Each module with a tool that may reach a half-shaped display is
        // parsed, those tools kept whole.
        let candidates: Vec<(usize, Parsed)> = modules
            .into_par_iter()
            .filter_map(|t| {
                let asked: Vec<usize> = t
                    .tools
                    .iter()
                    .filter(|(_, reach)| match reach {
                        Reach::Yes => true,
                        Reach::Through(names) => names.iter().any(|n| functions.contains(n.as_str())),
                    })
                    .map(|(at, _)| *at)
                    .collect();
                if asked.is_empty() {
                    return None;
                }
                // The functions its tools may return calls of are kept
                // whole from the start: the worklist asks for them next.
                Some((t.m, Parsed::of(t.text, t.layout.as_deref(), asked, HashSet::new(), &functions)?))
            })
            .collect();
        let mut loader = Loader { parsed: HashMap::new(), whole: HashSet::new(), read: &read, reaching: &functions };
        // Each tool: where it stands, its name, what it returns.
        let mut tools: Vec<(usize, usize, String, Returns)> = Vec::new();
        for (m, p) in candidates {
            let root = p.tree.root_node();
            syntax::for_each_node(root, |node| {
                if node.kind_name() == "function_definition" && crate::semantic::decorated_as(node, &p.text, decorators)
                {
                    let name = node.field("name").map_or("", |n| &p.text[n.byte_range()]);
                    tools.push((m, node.start_byte(), name.to_owned(), returns_of(node, &p)));
                }
            });
            loader.parsed.insert(m, Some(p));
        }
        if tools.is_empty() {
            return Vec::new();
        }
        tools.sort_by(|a, b| (&self.modules[a.0].path, a.1).cmp(&(&self.modules[b.0].path, b.1)));
        let mut functions: HashMap<BuilderKey, Option<Returns>> = HashMap::new();
        let mut found: BTreeMap<(usize, usize), HalfShaped> = BTreeMap::new();
        for (m, _, tool, returns) in &tools {
            let mut seen: HashSet<BuilderKey> = HashSet::new();
            let mut work: Vec<(usize, Returns)> = vec![(*m, returns.clone())];
            while let Some((m, returns)) = work.pop() {
                for display in &returns.displays {
                    if found.contains_key(&(m, display.start)) {
                        continue;
                    }
                    let Some(Some(p)) = loader.parsed.get(&m) else { continue };
                    if let Some(half) = half_shaped(m, display, p, tool) {
                        found.insert((m, display.start), half);
                    }
                }
                for callee in &returns.calls {
                    let Some(key) = self.resolve_loading(m, callee, &mut loader) else { continue };
                    if !seen.insert(key.clone()) {
                        continue;
                    }
                    let returns = match functions.get(&key) {
                        Some(r) => r.clone(),
                        // Judged from its bytes: no `def` of that name returns
                        // what TS005 follows, so it is not parsed.
                        None if judged.contains(&key.2) && !loader.reaching.contains(&key.2) => None,
                        None => {
                            // The function's body must be parsed.
                            let body = match &key.1 {
                                Some(class) => format!("{class}.{}", key.2),
                                None => key.2.clone(),
                            };
                            let r = self.load(key.0, Some(&body), &mut loader).and_then(|p| {
                                let root = p.tree.root_node();
                                let (_, def) = definitions(root, &p.text).into_iter().find(|(class, def)| {
                                    *class == key.1
                                        && def.field("name").is_some_and(|n| p.text[n.byte_range()] == key.2)
                                })?;
                                Some(returns_of(def, p))
                            });
                            functions.insert(key.clone(), r.clone());
                            r
                        }
                    };
                    if let Some(returns) = returns {
                        work.push((key.0, returns));
                    }
                }
            }
        }
        found.into_values().collect()
    }

    /// Module `m`, parsed (once, and again if the body of the top-level
    /// function `body` was blanked); its module-level names are learned
    /// from that parse.
    fn load<'p, R: Fn(&Path) -> Option<SharedText>>(
        &mut self,
        m: usize,
        body: Option<&str>,
        loader: &'p mut Loader<'_, R>,
    ) -> Option<&'p Parsed> {
        let path = &self.modules[m].path;
        let (read, reaching) = (loader.read, loader.reaching);
        let entry = loader.parsed.entry(m).or_insert_with(|| {
            let kept: HashSet<String> = body.into_iter().map(str::to_owned).collect();
            read(path).and_then(|text| {
                let layout = syntax::layout(&text);
                Parsed::of(text, layout.as_deref(), Vec::new(), kept, reaching)
            })
        });
        // A function whose bytes say it returns nothing TS005 follows stays
        // blanked (its body returns nothing); asked for one that may, the
        // module is parsed again with every such function, and what the
        // first parse kept (the displays of its tools).
        if let Some(name) = body
            && let Some(p) = entry.take_if(|p| p.blanked.contains(name) && p.reaching.contains(name))
        {
            let mut kept = p.kept;
            kept.extend(p.reaching);
            let layout = syntax::layout(&p.text);
            *entry = Parsed::of(p.text, layout.as_deref(), p.tools, kept, reaching);
        }
        let p = entry.as_ref()?;
        if loader.whole.insert(m) {
            let facts = module_bindings(p.tree.root_node(), &p.text, &p.model);
            match &mut self.modules[m].facts {
                Some(known) => known.merge_bindings(facts, true),
                none => *none = Some(facts),
            }
        }
        Some(p)
    }

    /// The project function `callee` (called in module `m`) is, learning
    /// the module-level names of each module its import chain passes.
    fn resolve_loading<R: Fn(&Path) -> Option<SharedText>>(
        &mut self,
        m: usize,
        callee: &Callee,
        loader: &mut Loader<'_, R>,
    ) -> Option<BuilderKey> {
        let end = match callee {
            Callee::Name(name) | Callee::Attribute(name, _) => self.follow_loading(m, name, loader),
            Callee::Local { import, .. } => self.follow_import_loading(m, import.clone(), loader),
            Callee::Method { .. } | Callee::Instance { .. } => return self.resolve_function(m, callee),
        };
        if let (Callee::Attribute(_, name) | Callee::Local { attribute: Some(name), .. }, Some(module)) = (callee, end)
        {
            self.follow_loading(module, name, loader);
        }
        self.resolve_function(m, callee)
    }

    /// Follows the module-level name `name` of module `m` through `from`
    /// imports, loading each module on the way; returns the module an
    /// `import` of it names, if it names one.
    fn follow_loading<R: Fn(&Path) -> Option<SharedText>>(
        &mut self,
        m: usize,
        name: &str,
        loader: &mut Loader<'_, R>,
    ) -> Option<usize> {
        self.load(m, None, loader)?;
        let bound = self.modules[m].facts.as_ref()?.bindings.get(name)?.clone();
        self.follow_import_loading(m, bound, loader)
    }

    /// [`Self::follow_loading`] from the way `bound` binds a name of module
    /// `m` (loaded).
    fn follow_import_loading<R: Fn(&Path) -> Option<SharedText>>(
        &mut self,
        mut m: usize,
        mut bound: Bound,
        loader: &mut Loader<'_, R>,
    ) -> Option<usize> {
        for _ in 0..32 {
            match bound {
                Bound::From { level, module, name: imported } => {
                    // As `export` reads it: a name the module binds, or
                    // else a submodule (`from pkg import mod`).
                    if let Some(source) = self.resolve_module(m, level, &module) {
                        self.load(source, None, loader);
                        if let Some(next) = self.modules[source].facts.as_ref().and_then(|f| f.bindings.get(&imported))
                        {
                            bound = next.clone();
                            m = source;
                            continue;
                        }
                    }
                    let submodule = self.resolve_module(m, level, &super::join(&module, &imported))?;
                    self.load(submodule, None, loader);
                    return Some(submodule);
                }
                Bound::Import { module } => {
                    let target = self.resolve_module(m, 0, &module)?;
                    self.load(target, None, loader);
                    return Some(target);
                }
                _ => return None,
            }
        }
        None
    }
}

/// What the function `def` (of the parsed module `p`) returns (cases 1–3).
fn returns_of(def: Node<'_>, p: &Parsed) -> Returns {
    let mut out = Returns::default();
    // The function's own scope: the one its `def` opens.
    let Some(scope) = p
        .model
        .scopes
        .iter()
        .rposition(|s| s.kind == crate::semantic::scope::ScopeKind::Function && s.range.start == def.start_byte())
    else {
        return out;
    };
    for (_, value) in return_statements_at(def) {
        let Some(mut value) = value.map(unparenthesize) else { continue };
        // `return await helper()`: an async tool awaiting its helper.
        if value.kind_name() == "await" {
            match operand(value) {
                Some(awaited) => value = unparenthesize(awaited),
                None => continue,
            }
        }
        match value.kind_name() {
            "dictionary" => out.displays.push(value.byte_range()),
            "identifier" => out.displays.extend(named_displays(value, scope, p)),
            "call" => out.calls.extend(callee_of(value, &p.text, &p.model)),
            _ => {}
        }
    }
    out
}

/// The displays a returned name `name` (in the function of scope `scope`)
/// stands for (case 2): every binding of it there is a plain `N = {...}`,
/// and every other use only returns it, reads a subscript of it or calls
/// its `get`.
fn named_displays(name: Node<'_>, scope: usize, p: &Parsed) -> Vec<Range<usize>> {
    let (text, model, root) = (&p.text, &p.model, p.tree.root_node());
    let n = &text[name.byte_range()];
    let Resolution::Bindings { scope: owner, bindings } = model.resolve(n, model.scope_at(name.start_byte())) else {
        return Vec::new();
    };
    if owner != scope {
        return Vec::new();
    }
    let mut displays = Vec::new();
    for b in bindings.iter().map(|&b| &model.bindings[b]) {
        let display = crate::semantic::plain_assigned_value(root, b)
            .filter(|v| v.kind_name() == "dictionary")
            .map(|v| v.byte_range());
        match display {
            Some(d) => displays.push(d),
            None => return Vec::new(),
        }
    }
    for r in model.references_to(owner, n) {
        let Some(node) = root.descendant_for_byte_range(r.at.start, r.at.end) else { return Vec::new() };
        if !only_returned_or_read(node, text) {
            return Vec::new();
        }
    }
    displays
}

/// Whether the use `node` of a name is the value of a `return`, the object
/// of a load subscript, or the object of a call of its `get`.
fn only_returned_or_read(mut node: Node<'_>, text: &str) -> bool {
    // `(N)["k"]`, `return (N)`: parentheses seen through.
    while let Some(up) = node.parent().filter(|p| p.kind_name() == "parenthesized_expression") {
        node = up;
    }
    let Some(parent) = node.parent() else { return false };
    match parent.kind_name() {
        "return_statement" => true,
        "subscript" if parent.field("value") == Some(node) => !crate::syntax::tree::is_target(parent),
        "attribute" if parent.field("object") == Some(node) => {
            parent.field("attribute").is_some_and(|a| &text[a.byte_range()] == "get")
                && parent.parent().is_some_and(|c| c.kind_name() == "call" && c.field("function") == Some(parent))
        }
        _ => false,
    }
}

/// The display at `range` of module `m`, if half-shaped: no spread, and
/// exactly one of `"status"` and `"content"` among its constant keys.
fn half_shaped(m: usize, range: &Range<usize>, p: &Parsed, tool: &str) -> Option<HalfShaped> {
    let dict = p.tree.root_node().descendant_for_byte_range(range.start, range.end)?;
    if dict.kind_name() != "dictionary" || dict.has_error() {
        return None;
    }
    let mut cursor = dict.walk();
    let (mut status, mut content, mut value) = (false, false, None);
    for entry in dict.named_children(&mut cursor) {
        match entry.kind_name() {
            "dictionary_splat" => return None,
            "pair" => {
                let key = entry.field("key").and_then(|k| constant_str(k, &p.text));
                match key.as_deref() {
                    Some("status") => {
                        status = true;
                        value = value.or_else(|| entry.field("value"));
                    }
                    Some("content") => content = true,
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let missing = match (status, content) {
        (true, false) => "content",
        (false, true) => "status",
        _ => return None,
    };
    Some(HalfShaped {
        module: m,
        range: range.clone(),
        missing,
        status: value.and_then(|v| constant_str(v, &p.text)),
        tool: tool.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::{function_bindings, import_alias, may_be_returned};

    #[test]
    fn function_bindings_are_read_from_words() {
        let src = "import a as b\nwith x as\\\n  y, z as\tw:\n    def f(): pass\nclass Alias: pass\nhas c\nasync def g(): undefined\nx = (m as\n n)\nlast as";
        let (defs, aliases) = function_bindings(src);
        assert_eq!(defs, vec![("f", src.find("def f").unwrap()), ("g", src.find("def g").unwrap())]);
        // Only an import statement's `as` binds a name TS005 follows.
        assert_eq!(aliases, vec![("b", src.find("as b").unwrap())]);
    }

    #[test]
    fn import_aliases_are_read_to_the_end_of_their_statement() {
        let src = "from m import (  # a comment (with a paren)\n    f as g,  # or two )\n    h as\n        i,\n)\nimport a as b, \\\n    c as d; x = y as z\nwith open(p) as e:\n    import q as r\n\"\"\"Call import (as documented.\"\"\"\nfrom n import k as l\n";
        let names: Vec<&str> = function_bindings(src).1.into_iter().map(|(name, _)| name).collect();
        // A docstring's unclosed "import (" reads to the end: a superset.
        assert_eq!(names, ["g", "i", "b", "d", "r", "documented", "l"]);
    }

    #[test]
    fn an_import_alias_follows_the_word_import_in_its_logical_line() {
        let src = "\"\"\"Verbs such as get.\"\"\"\nimport m as a\nfrom m import (\n    f,\n    g as b,\n)\nx = 1; from m import h as c\nwith open(p) as d:\n    pass\ntry:\n    pass\nexcept E as e:  # import\n    pass\n";
        let layout = crate::syntax::layout(src);
        let aliases: Vec<(&str, bool)> = ["get", "a", "b", "c", "d", "e"]
            .into_iter()
            .map(|name| (name, import_alias(src, layout.as_deref(), src.find(&format!("as {name}")).unwrap())))
            .collect();
        assert_eq!(aliases, [("get", false), ("a", true), ("b", true), ("c", true), ("d", false), ("e", false)]);
        // Where the lexer cannot vouch for the file, any `as` may bind one.
        assert!(import_alias(src, None, src.find("as get").unwrap()));
    }

    #[test]
    fn a_display_may_be_returned_only_after_return_or_an_assignment() {
        for (src, want) in [
            ("    return {'content': x}", true),
            ("    return ( {'content': x})", true),
            ("    return({'content': x})", true),
            ("    r = {'content': x}\n    return r", true),
            ("    r: dict = ({'content': x})\n    return (r)", true),
            ("    _m: Message = {'content': x}\n    return _m", true),
            ("    if (r := {'content': x}):\n        return r", true),
            ("    r = (\n        {'content': x})", true),
            ("{'content': x}", true),
            ("    r = {'content': x}\n    return f(r)", false),
            ("    r = {'content': x}\n    return rows", false),
            ("    r = {'content': x}\n    client.put(r)", false),
            ("    f(x={'content': x})", false),
            ("    messages.append({'content': x})", false),
            ("    return [{'content': x}]", false),
            ("    return f ({'content': x})", false),
            ("    return {'a': {'content': x}}", false),
            ("    return x or {'content': x}", false),
            ("    return a if c else {'content': x}", false),
            ("    r = [1, {'content': x}]", false),
            // A subscript, an attribute or a word in quotes binds no name.
            ("    r['result'] = {'content': x}\n    return r", false),
            ("    self.r = {'content': x}\n    return self.r", false),
            ("    d[\"r\"] = {'content': x}\n    return r", false),
            ("    r = d['k'] = {'content': x}\n    return r", true),
            ("    r: Dict[str, Any] = {'content': x}\n    return r", true),
            ("    returned({'content': x})", false),
        ] {
            let at = src.find("{'content'").expect("a display");
            assert_eq!(may_be_returned(src, &(0..src.len()), at), want, "{src}");
        }
    }
}
