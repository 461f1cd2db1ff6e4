//! The project pass at the edge: which project each checked file belongs to
//! (the nearest folder above it holding a `pyproject.toml`, a
//! `toolshape.toml` or a `.git`, or `--project-root`, else the path it was
//! found under), the walk of each project with the same excludes, its index
//! of result builders ([`crate::semantic::project`]), and the TS003
//! findings of a file's text.

use foldhash::{HashMap, HashMapExt};
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::apply::{FixPolicy, LeftBecause, Leftover};
use crate::config::Resolver;
use crate::contract::{EntryKind, Rules};
use crate::diagnostics::{Applicability, BuilderRef, Code, Finding, Origin, ReadRef, Span};
use crate::discovery::{self, WalkOptions};
use crate::fix;
use crate::semantic::project::{
    BuilderId, BuilderSpec, FindingReads, Known, PossibleReads, Project, ReadSite, SharedText, search_possible_reads,
};
use crate::semantic::reads::ReadForm;
use crate::semantic::results::Added;
use crate::source;
use crate::syntax::tree::{FieldChild, KindName};
use crate::syntax::{self, LineIndex};
use rayon::prelude::*;

use crate::discovery::{MarkedFolders, PROJECT_MARKERS};

/// What fixing a builder in its own body does, as planned before any file
/// of the run is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuilderRemedy {
    /// A fix, with why it is unsafe (empty: safe).
    Fix(Applicability, Vec<String>),
    /// No mechanical fix, for this reason.
    Manual(String),
}

/// The projects of a run and the file each checked path is in them.
#[derive(Default)]
pub struct Projects {
    projects: Vec<Project>,
    /// The remedy of each builder fixed in its own body.
    remedies: HashMap<BuilderId, BuilderRemedy>,
    /// Canonical path → (project, the path as the project indexed it).
    files: HashMap<OsString, (usize, PathBuf)>,
    cwd: PathBuf,
    /// The folders given, absolute and as spelled, for builder paths.
    given: Vec<(PathBuf, PathBuf)>,
    any_builders: bool,
    /// The texts of the files the project passes read, read once.
    texts: source::TextCache,
    /// Each checked file (in the order the plan was made for): its project
    /// and its module there (`None`: not a module).
    checked: Vec<(usize, Option<usize>)>,
    /// Per checked file, once reads are attached: the origins whose moved
    /// keys are read, each with the read.
    read_reasons: Vec<Vec<(Range<usize>, String)>>,
    /// Per checked file: the reads `fix` rewrites there (where the
    /// accessor goes, and the accessor).
    read_rewrites: Vec<Vec<fix::reads::ReadRewrite>>,
    /// Per checked file: the origins whose fixes the rewritten reads need.
    expected_fixes: Vec<Vec<Range<usize>>>,
    /// Per checked file: the displays whose content blocks are read.
    keep_text: Vec<Vec<Range<usize>>>,
    /// Per checked file: each origin fixed there, with the reads of its
    /// keys rewritten with it (`path:line reads ...`).
    rewritten_reads: Vec<Vec<(Range<usize>, String)>>,
    /// Per checked file: its TS005 findings, with the reads of their keys.
    not_results: Vec<Vec<Finding>>,
    /// Per checked file: the TS005 findings a suppression comment silences
    /// (for TS100, which asks which comments silence something).
    silenced_not_results: Vec<Vec<Finding>>,
    /// Per checked file: each origin fixed there with a read of its keys
    /// that is rewritten with it, in whatever checked file it stands.
    origin_rewrites: Vec<Vec<OriginRewrite>>,
    /// Per project, the possible reads searched beside TS005
    /// ([`Projects::find_not_results_and_possible_reads`]), for the next
    /// reads pass.
    searched: Vec<Option<PossibleReads>>,
}

/// A read rewritten with the fix of one origin ([`Projects::origin_rewrites`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginRewrite {
    /// The origin (a display, a write statement) in its file's text.
    pub origin: Range<usize>,
    /// The checked file the read stands in.
    pub file: usize,
    pub rewrite: fix::reads::ReadRewrite,
    /// `path:line reads r["k"]`.
    pub note: String,
    /// Whether the fix of this origin is all the rewrite needs (else it
    /// needs the fixes of other origins too: `fix` applies them together).
    pub alone: bool,
}

/// How `fix` treats the reads of moved keys.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Per checked file: whether its unsafe fixes apply.
    pub unsafe_fixes: Vec<bool>,
    /// Whether reads are rewritten, or why not (`--no-rewrite-reads`).
    pub rewrite: Result<(), &'static str>,
}

impl ReadOptions {
    fn unsafe_fixes(&self, j: usize) -> bool {
        self.unsafe_fixes.get(j).copied().unwrap_or(false)
    }
}

/// How to find the projects of a run.
pub struct ProjectOptions<'a> {
    /// `--project-root`: one project for every path.
    pub root: Option<&'a Path>,
    /// `--isolated`: the paths given are the project.
    pub isolated: bool,
    /// What the walk that found the files read of their folders' markers
    /// (a folder it did not list is looked at).
    pub marked: Option<&'a MarkedFolders>,
}

/// The projects of a run before they are indexed: each root with its
/// Python files.
pub struct ProjectPlan {
    roots: Vec<(PathBuf, Vec<PathBuf>)>,
    /// Each checked file's root.
    root_of: Vec<(PathBuf, usize)>,
    /// After the walk, each checked file's place in its root's files
    /// (`None`: not a module, e.g. a stub).
    slots: Vec<Option<usize>>,
    cwd: PathBuf,
    given: Vec<(PathBuf, PathBuf)>,
    /// The folders given, absolute.
    given_dirs: Vec<PathBuf>,
}

impl ProjectPlan {
    /// The projects of `files` (found under `paths`), their roots found but
    /// not yet walked (see [`ProjectPlan::walk`]).
    pub fn new(paths: &[PathBuf], files: &[PathBuf], options: &ProjectOptions<'_>) -> Self {
        let cwd = std::env::current_dir().unwrap_or_default();
        let abs = |p: &Path| canonical(&cwd, p);
        let given: Vec<PathBuf> = paths.iter().map(|p| abs(p)).collect();
        // Each path given with the folder it stands for (a file: its folder).
        let given_folders: Vec<(PathBuf, PathBuf)> = given
            .iter()
            .map(|g| {
                let dir = if g.is_file() { g.parent().map(Path::to_path_buf).unwrap_or_default() } else { g.clone() };
                (g.clone(), dir)
            })
            .collect();
        let under_given = |file: &Path| {
            given_folders
                .iter()
                .filter(|(g, _)| file.starts_with(g))
                .max_by_key(|(g, _)| g.components().count())
                .map(|(_, dir)| dir.clone())
        };
        let files_abs: Vec<PathBuf> = files.iter().map(|f| abs(f)).collect();
        let mut markers = if options.root.is_none() && !options.isolated {
            markers_of_folders(&files_abs, options.marked)
        } else {
            HashMap::new()
        };
        let mut roots: Vec<(PathBuf, Vec<PathBuf>)> = Vec::new();
        let mut root_of = Vec::new();
        // The last folder whose root is its project marker's, with that
        // root: the files of a folder come one after the other, and the
        // marker depends on the folder alone.
        let mut marked_folder: Option<(PathBuf, usize)> = None;
        for file_abs in files_abs {
            let parent = file_abs.parent().unwrap_or(Path::new(""));
            if let Some((folder, i)) = &marked_folder
                && folder.as_os_str() == parent.as_os_str()
            {
                root_of.push((file_abs, *i));
                continue;
            }
            let parent = parent.to_path_buf();
            let marker = match (options.root, options.isolated) {
                (None, false) => nearest_marker(&parent, &mut markers, options.marked),
                _ => None,
            };
            let by_marker = marker.is_some();
            let root = match (options.root, marker) {
                (Some(root), _) => abs(root),
                (None, Some(marker)) => marker,
                (None, None) => under_given(&file_abs).unwrap_or_else(|| parent.clone()),
            };
            let i = roots.iter().position(|(r, _)| *r == root).unwrap_or_else(|| {
                roots.push((root, Vec::new()));
                roots.len() - 1
            });
            if by_marker {
                marked_folder = Some((parent, i));
            }
            root_of.push((file_abs, i));
        }
        let given_dirs: Vec<PathBuf> = given.iter().filter(|g| g.is_dir()).cloned().collect();
        let given = paths.iter().map(|p| (canonical(&cwd, p), p.clone())).filter(|(abs, _)| abs.is_dir()).collect();
        ProjectPlan { roots, root_of, slots: Vec::new(), cwd, given, given_dirs }
    }

    /// Splits the plan (not yet walked) into plans of whole projects, each
    /// with the indexes of its checked files in this plan (ascending): the
    /// projects in the order of their first file, a batch closed once it
    /// holds `files` checked files or more, the last one joining the one
    /// before when it holds fewer (a run of fewer files, or of a few big
    /// projects, stays one batch: each batch waits for its slowest file at
    /// every phase). Projects share nothing, so checking the batches one
    /// after the other finds what checking them at once does, while the
    /// trees the passes share are those of one batch.
    pub fn batches(self, files: usize) -> Vec<(ProjectPlan, Vec<usize>)> {
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); self.roots.len()];
        for (j, (_, r)) in self.root_of.iter().enumerate() {
            members[*r].push(j);
        }
        let held = |group: &Vec<usize>| group.iter().map(|&r| members[r].len()).sum::<usize>();
        let mut groups: Vec<Vec<usize>> = vec![Vec::new()];
        for r in 0..members.len() {
            let open = groups.last_mut().expect("a group is open");
            open.push(r);
            if held(open) >= files {
                groups.push(Vec::new());
            }
        }
        let last = groups.pop().expect("a group is open");
        match groups.last_mut() {
            Some(before) if held(&last) < files => before.extend(last),
            _ => groups.push(last),
        }
        groups.retain(|g| !g.is_empty());
        self.split(groups, &members)
    }

    /// Splits the plan (not yet walked) into at most `lanes` plans of whole
    /// projects, to be checked at the same time, each with the indexes of
    /// its checked files in this plan (ascending): the projects, biggest
    /// first, each joining the lane with the fewest checked files. The
    /// passes after the first phase follow chains of files one after the
    /// other; two projects checked side by side keep both cores busy where
    /// one project's chain would leave one idle. (Projects share nothing,
    /// as for [`ProjectPlan::batches`].) One plan when it holds one project.
    pub fn lanes(self, lanes: usize) -> Vec<(ProjectPlan, Vec<usize>)> {
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); self.roots.len()];
        for (j, (_, r)) in self.root_of.iter().enumerate() {
            members[*r].push(j);
        }
        let mut order: Vec<usize> = (0..members.len()).filter(|&r| !members[r].is_empty()).collect();
        order.sort_by_key(|&r| (std::cmp::Reverse(members[r].len()), r));
        let mut groups: Vec<Vec<usize>> = vec![Vec::new(); lanes.max(1).min(order.len().max(1))];
        let mut held = vec![0usize; groups.len()];
        for r in order {
            let lightest = (0..groups.len()).min_by_key(|&g| (held[g], g)).expect("a lane");
            groups[lightest].push(r);
            held[lightest] += members[r].len();
        }
        for group in &mut groups {
            group.sort_unstable();
        }
        groups.retain(|g| !g.is_empty());
        self.split(groups, &members)
    }

    /// The plans of `groups` of projects (by index), each with the indexes
    /// of its checked files in this plan (`members`: per project); this
    /// plan itself when there is one group.
    fn split(self, groups: Vec<Vec<usize>>, members: &[Vec<usize>]) -> Vec<(ProjectPlan, Vec<usize>)> {
        if groups.len() <= 1 {
            let all = (0..self.root_of.len()).collect();
            return vec![(self, all)];
        }
        groups
            .into_iter()
            .map(|group| {
                let mut checked: Vec<usize> = group.iter().flat_map(|&r| members[r].iter().copied()).collect();
                checked.sort_unstable();
                let place: HashMap<usize, usize> = group.iter().enumerate().map(|(i, &r)| (r, i)).collect();
                let root_of = checked.iter().map(|&j| (self.root_of[j].0.clone(), place[&self.root_of[j].1])).collect();
                let plan = ProjectPlan {
                    roots: group.iter().map(|&r| self.roots[r].clone()).collect(),
                    root_of,
                    slots: Vec::new(),
                    cwd: self.cwd.clone(),
                    given: self.given.clone(),
                    given_dirs: self.given_dirs.clone(),
                };
                (plan, checked)
            })
            .collect()
    }

    /// Whether some project holds files outside the paths given (its root
    /// lies above them): only then do imports decide which files are read.
    pub fn has_outside_files(&self) -> bool {
        self.roots.iter().any(|(root, _)| !self.given_dirs.iter().any(|g| root.starts_with(g)))
    }

    /// Lists each project's Python files: a project whose root is, or lies
    /// under, a folder given is the files found under it (the walk that
    /// found them used the same excludes); another is walked with `walk`
    /// and its folders' settings.
    pub fn walk(mut self, walk: &WalkOptions, resolver: &Resolver) -> Self {
        let cwd = self.cwd.clone();
        let is_module = |f: &Path| f.extension().is_some_and(|e| e == "py");
        self.slots = vec![None; self.root_of.len()];
        for (i, (root, root_files)) in self.roots.iter_mut().enumerate() {
            let mine = self.root_of.iter().enumerate().filter(|(_, (f, r))| *r == i && is_module(f));
            if self.given_dirs.iter().any(|g| root.starts_with(g)) {
                // The files found under a folder given are its project (the
                // walk that found them used the same excludes).
                for (j, (f, _)) in mine {
                    self.slots[j] = Some(root_files.len());
                    root_files.push(f.clone());
                }
            } else {
                let walked = discovery::discover(std::slice::from_ref(root), walk, resolver)
                    .map(|d| d.files.into_iter().map(|f| canonical(&cwd, &f.path)).filter(|f| is_module(f)).collect())
                    .unwrap_or_default();
                *root_files = walked;
                let place: HashMap<OsString, usize> =
                    root_files.iter().enumerate().map(|(k, f)| (f.as_os_str().to_owned(), k)).collect();
                for (j, (f, _)) in mine {
                    self.slots[j] = Some(place.get(f.as_os_str()).copied().unwrap_or_else(|| {
                        root_files.push(f.clone());
                        root_files.len() - 1
                    }));
                }
            }
        }
        self
    }

    /// Indexes every project (once walked); `known` holds what a check
    /// learned of the files it read, `rules` each checked file's rules
    /// (both in the order of the files the plan was made for, or empty; a
    /// builder in a file without rules is judged under the contract's).
    pub fn index(self, known: Vec<Option<Known>>, rules: Vec<Rules>) -> Projects {
        let mut known = known;
        known.resize_with(self.root_of.len(), || None);
        // Keys a project tolerates (the settings of any of its checked
        // files allow them) stay at the top level: a builder's fix would
        // move them too.
        let mut allowed: Vec<Vec<String>> = vec![Vec::new(); self.roots.len()];
        for ((_, r), rules) in self.root_of.iter().zip(&rules) {
            allowed[*r].extend(rules.extra_allowed_keys().iter().cloned());
        }
        for keys in &mut allowed {
            keys.sort();
            keys.dedup();
        }
        let mut projects = Vec::new();
        // The texts the first phase kept: no pass reads those files again
        // (they count against the cache's budget).
        let kept: Vec<(&PathBuf, SharedText)> = self
            .root_of
            .iter()
            .zip(&mut known)
            .filter_map(|((path, _), known)| Some((path, known.as_mut()?.text.take()?)))
            .collect();
        let room = source::TextCache::BUDGET.saturating_sub(kept.iter().map(|(_, t)| t.len()).sum());
        let texts = source::TextCache::new(room);
        texts.reserve(kept.len());
        for (path, text) in kept {
            texts.overlay(path, text);
        }
        for (i, (root, files)) in self.roots.into_iter().enumerate() {
            let mut mine: Vec<Option<Known>> = (0..files.len()).map(|_| None).collect();
            let mut checked = vec![false; files.len()];
            for (j, (_, r)) in self.root_of.iter().enumerate() {
                if let (true, Some(slot)) = (*r == i, self.slots.get(j).copied().flatten()) {
                    checked[slot] = true;
                    mine[slot] = known[j].take();
                }
            }
            projects.push(Project::index(&root, files, &checked, mine, &allowed[i], |p| texts.text(p)));
        }
        let any_builders = projects.iter().any(Project::has_builders);
        let checked = self.root_of.iter().zip(&self.slots).map(|((_, r), s)| (*r, *s)).collect();
        if !any_builders {
            // Nothing is looked up by path again.
            return Projects { projects, checked, cwd: self.cwd, given: self.given, texts, ..Projects::default() };
        }
        let mut rules_by_path: HashMap<OsString, Rules> = HashMap::new();
        for ((f, _), r) in self.root_of.iter().zip(rules) {
            rules_by_path.insert(f.as_os_str().to_owned(), r);
        }
        let files = self.root_of.into_iter().map(|(f, i)| (f.as_os_str().to_owned(), (i, f))).collect();
        let rules_of = |p: &Path| rules_by_path.get(p.as_os_str()).cloned().unwrap_or(Rules::CONTRACT);
        let remedies = projects.iter().flat_map(|p| builder_remedies(p, &rules_of)).collect();
        Projects {
            projects,
            remedies,
            files,
            cwd: self.cwd,
            given: self.given,
            any_builders,
            texts,
            checked,
            read_reasons: Vec::new(),
            read_rewrites: Vec::new(),
            expected_fixes: Vec::new(),
            keep_text: Vec::new(),
            rewritten_reads: Vec::new(),
            not_results: Vec::new(),
            silenced_not_results: Vec::new(),
            searched: Vec::new(),
            origin_rewrites: Vec::new(),
        }
    }
}

impl Projects {
    /// Attaches to each finding the reads of the key its fix moves
    /// (`docs/rules.md`, "Reads of moved keys"), searched in its whole
    /// project; `findings` are the checked files' findings, in the order
    /// the plan was made for, as judged before their reads were known.
    /// Decides which reads `fix` rewrites (`options`): a read whose
    /// rewrite is exact, in a checked file, every fix it depends on
    /// applied; the other reads make their fixes unsafe.
    pub fn attach_reads(&mut self, findings: &mut [Vec<Finding>], options: &ReadOptions) {
        self.attach_reads_with(findings, options, Vec::new());
    }

    /// [`Projects::attach_reads`], and in the same reads pass the reads of
    /// the findings of `extra` (per project, each module with its findings
    /// of keys that move: the keys TS005's fixes move), which are returned
    /// aligned with them and attach to nothing. One pass over the project
    /// serves both.
    pub fn attach_reads_with(
        &mut self,
        findings: &mut [Vec<Finding>],
        options: &ReadOptions,
        extra: Vec<Vec<(usize, &[Finding])>>,
    ) -> Vec<Vec<Vec<FindingReads>>> {
        let mut extra_sites: Vec<Vec<Vec<FindingReads>>> = vec![Vec::new(); self.projects.len()];
        let mut read_reasons: Vec<Vec<(Range<usize>, String)>> = vec![Vec::new(); findings.len()];
        let mut read_rewrites: Vec<Vec<fix::reads::ReadRewrite>> = vec![Vec::new(); findings.len()];
        let mut expected_fixes: Vec<Vec<Range<usize>>> = vec![Vec::new(); findings.len()];
        let mut keep_text: Vec<Vec<Range<usize>>> = vec![Vec::new(); findings.len()];
        let mut rewritten_reads: Vec<Vec<(Range<usize>, String)>> = vec![Vec::new(); findings.len()];
        let mut origin_rewrites: Vec<Vec<OriginRewrite>> = vec![Vec::new(); findings.len()];
        self.origin_rewrites = origin_rewrites.clone();
        self.keep_text = keep_text.clone();
        self.rewritten_reads = rewritten_reads.clone();
        self.read_reasons = read_reasons.clone();
        self.read_rewrites = read_rewrites.clone();
        self.expected_fixes = expected_fixes.clone();
        // The possible reads searched ahead serve this pass only.
        let mut searched = std::mem::take(&mut self.searched);
        let own_moves = findings.iter().any(|f| f.iter().any(|f| f.moved_key().is_some()));
        let extra_moves = extra.iter().flatten().any(|(_, f)| !f.is_empty());
        if !own_moves && !extra_moves {
            return extra.iter().map(|of| of.iter().map(|(_, f)| no_reads(f)).collect()).collect();
        }
        let texts = &self.texts;
        let read = |p: &Path| texts.text(p);
        // Each project's checked files with findings: (file, module).
        let mut mine: Vec<Vec<(usize, usize)>> = vec![Vec::new(); self.projects.len()];
        // Each project's checked modules: module → checked file.
        let mut checked_at: Vec<HashMap<usize, usize>> = vec![HashMap::new(); self.projects.len()];
        for (j, &(r, slot)) in self.checked.iter().enumerate() {
            if let Some(slot) = slot {
                checked_at[r].insert(slot, j);
                if findings.get(j).is_some_and(|f| !f.is_empty()) {
                    mine[r].push((j, slot));
                }
            }
        }
        searched.resize_with(self.projects.len(), || None);
        let sites: Vec<Vec<Vec<FindingReads>>> = {
            let findings = &*findings;
            let mut extra = extra;
            extra.resize_with(self.projects.len(), Vec::new);
            let both: Vec<BothReads> = self
                .projects
                .par_iter_mut()
                .zip(&mine)
                .zip(&extra)
                .zip(searched)
                .map(|(((project, mine), extra), searched)| {
                    let own: Vec<(usize, &[Finding])> = if own_moves {
                        mine.iter().map(|&(j, slot)| (slot, findings[j].as_slice())).collect()
                    } else {
                        Vec::new()
                    };
                    reads_of_both(project, &own, extra, read, searched)
                })
                .collect();
            let mut own = Vec::with_capacity(both.len());
            for (r, (mine, theirs)) in both.into_iter().enumerate() {
                own.push(mine);
                extra_sites[r] = theirs;
            }
            own
        };
        if !own_moves {
            return extra_sites;
        }
        // Per project, each origin (module, start, end): whether its fix
        // applies without its reads, the checked file it is in, and the
        // builders a call origin is repaired by.
        type Oid = (usize, usize, usize);
        let mut applies: Vec<HashMap<Oid, bool>> = vec![HashMap::new(); self.projects.len()];
        let mut file_of: Vec<HashMap<Oid, usize>> = vec![HashMap::new(); self.projects.len()];
        let mut roots_of: Vec<HashMap<Oid, Vec<BuilderId>>> = vec![HashMap::new(); self.projects.len()];
        // The origins fixed where they stand (not calls: their builders'
        // fixes repair them), for the check that they were.
        let mut fixed_in: Vec<HashMap<Oid, usize>> = vec![HashMap::new(); self.projects.len()];
        for ((p, mine), sites) in mine.iter().enumerate().zip(&sites) {
            for (&(j, slot), per_file) in mine.iter().zip(sites) {
                let path = self.projects[p].module_path(slot).to_path_buf();
                let calls: Vec<(Range<usize>, Vec<BuilderId>)> =
                    if findings[j].iter().any(|f| f.code == Code::BuilderCall) {
                        source::with_text(&path, |text| {
                            self.builder_call_findings_with_roots(&path, text, &Rules::CONTRACT)
                                .into_iter()
                                .map(|(f, roots)| (f.entry, roots))
                                .collect()
                        })
                        .unwrap_or_default()
                    } else {
                        Vec::new()
                    };
                for (f, FindingReads { origin, .. }) in findings[j].iter().zip(per_file) {
                    let oid = (slot, origin.start, origin.end);
                    let mut ok = match f.fixable {
                        Some(Applicability::Safe) => true,
                        Some(Applicability::Unsafe) => options.unsafe_fixes(j),
                        None => false,
                    };
                    if f.code == Code::BuilderCall {
                        let roots: Vec<BuilderId> = calls
                            .iter()
                            .filter(|(entry, _)| *entry == f.entry)
                            .flat_map(|(_, r)| r.iter().cloned())
                            .collect();
                        ok &= !roots.is_empty() && roots.iter().all(|r| self.files.contains_key(r.path.as_os_str()));
                        roots_of[p].entry(oid).or_default().extend(roots);
                    }
                    *applies[p].entry(oid).or_insert(true) &= ok;
                    file_of[p].insert(oid, j);
                    if f.code != Code::BuilderCall {
                        fixed_in[p].insert(oid, j);
                    }
                }
            }
        }
        // Which fixes apply once their reads are known, and which reads are
        // rewritten: a fix with a read left is unsafe (for every call of a
        // builder whose call's key is read), until nothing changes.
        let mut applied = applies.clone();
        let rewritten = |p: usize, site: &ReadSite, applied: &HashMap<Oid, bool>| -> Result<(), String> {
            // The read's own reason first: it says more than that rewriting
            // is off.
            let rewrite = site.rewrite.as_ref().map_err(Clone::clone)?;
            options.rewrite.map_err(str::to_owned)?;
            if !checked_at[p].contains_key(&site.module) {
                let path = self.display(self.projects[p].module_path(site.module));
                return Err(format!("{path} is not among the paths given: include it to rewrite the read"));
            }
            match rewrite.needs.iter().find(|o| !applied.get(o).copied().unwrap_or(false)) {
                Some(_) => Err("rewritten only together with the fixes of every result it may read, and one of those is not applied".into()),
                None => Ok(()),
            }
        };
        loop {
            let mut next = applies.clone();
            for ((p, mine), sites) in mine.iter().enumerate().zip(&sites) {
                let mut blocked_roots: Vec<&BuilderId> = Vec::new();
                for (&(_, slot), per_file) in mine.iter().zip(sites) {
                    for FindingReads { origin, reads } in per_file {
                        let oid = (slot, origin.start, origin.end);
                        let left: Vec<&ReadSite> = reads
                            .iter()
                            .filter(|r| match r.form {
                                ReadForm::Block => r.rewrite.is_err(),
                                _ => rewritten(p, r, &applied[p]).is_err(),
                            })
                            .collect();
                        if left.is_empty() {
                            continue;
                        }
                        // A read left keeps its own fix from applying, and
                        // every fix that shapes the results it sees: all of
                        // them apply in one run, or none does (a later run
                        // could not tell the shape of a result fixed before).
                        let mut blocked = vec![oid];
                        for r in left {
                            blocked.extend(r.rewrite.iter().flat_map(|w| w.needs.iter().copied()));
                        }
                        for o in blocked {
                            let unsafe_ok = file_of[p].get(&o).is_some_and(|&j| options.unsafe_fixes(j));
                            if !unsafe_ok {
                                next[p].insert(o, false);
                                blocked_roots.extend(roots_of[p].get(&o).into_iter().flatten());
                            }
                        }
                    }
                }
                for (oid, roots) in &roots_of[p] {
                    let unsafe_ok = file_of[p].get(oid).is_some_and(|&j| options.unsafe_fixes(j));
                    if !unsafe_ok && roots.iter().any(|r| blocked_roots.contains(&r)) {
                        next[p].insert(*oid, false);
                    }
                }
            }
            if next == applied {
                break;
            }
            applied = next;
        }
        let mut builder_reasons: Vec<(usize, BuilderId, String)> = Vec::new();
        for ((p, mine), sites) in mine.iter().enumerate().zip(sites) {
            for (&(j, slot), per_file) in mine.iter().zip(sites) {
                for (f, FindingReads { origin, reads }) in findings[j].iter_mut().zip(per_file) {
                    let oid = (slot, origin.start, origin.end);
                    let mut refs = Vec::new();
                    for r in reads {
                        let path = self.display(self.projects[p].module_path(r.module));
                        let verdict = rewritten(p, &r, &applied[p]);
                        match (&verdict, &r.rewrite) {
                            // A block read keeps the block's text as it is.
                            _ if r.form == ReadForm::Block && r.rewrite.is_ok() => {
                                if fixed_in[p].contains_key(&oid) && !keep_text[j].contains(&origin) {
                                    keep_text[j].push(origin.clone());
                                }
                            }
                            (Ok(()), Ok(rewrite)) => {
                                let k = checked_at[p][&r.module];
                                let insert = fix::reads::ReadRewrite {
                                    receiver: r.receiver.0..r.receiver.1,
                                    index: rewrite.index,
                                    quote: r.quote,
                                };
                                if !read_rewrites[k].contains(&insert) {
                                    read_rewrites[k].push(insert.clone());
                                }
                                let note = (origin.clone(), format!("{path}:{} reads {}", r.start.line, r.text));
                                if fixed_in[p].contains_key(&oid) && !rewritten_reads[j].contains(&note) {
                                    let alone = rewrite.needs.iter().all(|n| *n == oid);
                                    let by_origin = OriginRewrite {
                                        origin: origin.clone(),
                                        file: k,
                                        rewrite: insert.clone(),
                                        note: note.1.clone(),
                                        alone,
                                    };
                                    if !origin_rewrites[j].contains(&by_origin) {
                                        origin_rewrites[j].push(by_origin);
                                    }
                                    rewritten_reads[j].push(note);
                                }
                                for need in &rewrite.needs {
                                    let (at, range) = (fixed_in[p].get(need), need.1..need.2);
                                    if let Some(&at) = at
                                        && !expected_fixes[at].contains(&range)
                                    {
                                        expected_fixes[at].push(range);
                                    }
                                }
                            }
                            _ => {
                                let why = verdict.clone().err().unwrap_or_default();
                                let reason = match r.form {
                                    ReadForm::Escape if why == crate::semantic::project::HANDED_ON => format!(
                                        "{path}:{} hands on the result of `{}`: toolshape cannot follow it",
                                        r.start.line, r.text
                                    ),
                                    ReadForm::Escape if why == crate::semantic::project::UNRESOLVED => format!(
                                        "{path}:{} calls `{}`, which toolshape cannot resolve: its result may be read there",
                                        r.start.line, r.text
                                    ),
                                    ReadForm::Escape if why == crate::semantic::project::UNRESOLVED_USE => format!(
                                        "{path}:{} uses `{}`, which toolshape cannot resolve, as a value: its results \
                                         may be read where toolshape cannot follow",
                                        r.start.line, r.text
                                    ),
                                    ReadForm::Escape if why == crate::semantic::project::DECORATED => format!(
                                        "{path}:{} decorates the function with `@{}`: its results go where toolshape \
                                         cannot follow",
                                        r.start.line, r.text
                                    ),
                                    ReadForm::Escape => format!(
                                        "{path}:{} uses `{}` as a value: its results go where toolshape cannot follow",
                                        r.start.line, r.text
                                    ),
                                    _ => format!("{path}:{} reads {} ({why})", r.start.line, r.text),
                                };
                                if f.code == Code::BuilderCall {
                                    for id in roots_of[p].get(&oid).into_iter().flatten() {
                                        builder_reasons.push((p, id.clone(), reason.clone()));
                                    }
                                } else if !read_reasons[j].iter().any(|(o, w)| *o == origin && *w == reason) {
                                    read_reasons[j].push((origin.clone(), reason));
                                }
                            }
                        }
                        refs.push(ReadRef {
                            path,
                            line: r.start.line,
                            column: r.start.column,
                            end_line: r.end.line,
                            end_column: r.end.column,
                            form: r.form.as_str(),
                            key: r.key.clone(),
                            rewritable: verdict.is_ok() && r.form != ReadForm::Block,
                            possible: r.possible,
                        });
                    }
                    // The reads of a finding whose fix moves no key
                    // (TS005's are its own pass's) stay as they were.
                    if f.code.moves_keys() {
                        f.reads = refs;
                    }
                }
            }
        }
        for rewrites in &mut read_rewrites {
            rewrites.sort_by_key(|r| (r.receiver.start, r.receiver.end));
        }
        self.read_reasons = read_reasons;
        self.read_rewrites = read_rewrites;
        self.expected_fixes = expected_fixes;
        self.keep_text = keep_text;
        self.rewritten_reads = rewritten_reads;
        self.origin_rewrites = origin_rewrites;
        // A read of a key passed through a builder makes the builder's fix
        // unsafe, for every call of it.
        builder_reasons.sort();
        builder_reasons.dedup();
        for (p, id, reason) in builder_reasons {
            self.projects[p].add_call_reason(&id, reason.clone());
            if let Some(BuilderRemedy::Fix(applicability, why)) = self.remedies.get_mut(&id)
                && !why.contains(&reason)
            {
                *applicability = Applicability::Unsafe;
                why.push(reason);
            }
        }
        extra_sites
    }

    /// The displays in the checked file `j` whose content blocks the
    /// project reads: their text is not augmented.
    pub fn keep_text(&self, j: usize) -> &[Range<usize>] {
        self.keep_text.get(j).map_or(&[], Vec::as_slice)
    }

    /// The origins fixed in the checked file `j`, each with a read of its
    /// keys that `fix` rewrites with it.
    pub fn rewritten_reads(&self, j: usize) -> &[(Range<usize>, String)] {
        self.rewritten_reads.get(j).map_or(&[], Vec::as_slice)
    }

    /// The origins fixed in the checked file `j`, each with a read that
    /// is rewritten with it (wherever the read stands).
    pub fn origin_rewrites(&self, j: usize) -> &[OriginRewrite] {
        self.origin_rewrites.get(j).map_or(&[], Vec::as_slice)
    }

    /// Whether `fix` rewrites some read.
    pub fn rewrites_reads(&self) -> bool {
        self.read_rewrites.iter().any(|r| !r.is_empty())
    }

    /// The reads `fix` rewrites in the checked file `j`, in source order.
    pub fn read_rewrites(&self, j: usize) -> &[fix::reads::ReadRewrite] {
        self.read_rewrites.get(j).map_or(&[], Vec::as_slice)
    }

    /// The origins in the checked file `j` whose fixes the rewritten reads
    /// depend on: `fix` checks that each of them applied.
    pub fn expected_fixes(&self, j: usize) -> &[Range<usize>] {
        self.expected_fixes.get(j).map_or(&[], Vec::as_slice)
    }

    /// The origins of the checked file `j` (in the order the plan was made
    /// for) whose moved keys the project reads, each with the read.
    pub fn read_reasons(&self, j: usize) -> Vec<(Range<usize>, String)> {
        self.read_reasons.get(j).cloned().unwrap_or_default()
    }

    /// Whether some project has a result builder (else no file has TS003).
    pub fn any_builders(&self) -> bool {
        self.any_builders
    }

    /// The project of the checked file `path`, and its path as indexed.
    fn project_of(&self, path: &Path) -> Option<(&Project, &PathBuf)> {
        let (project, indexed) = self.files.get(canonical(&self.cwd, path).as_os_str())?;
        Some((&self.projects[*project], indexed))
    }

    /// The result builders the checked file `path` defines and toolshape
    /// fixes in their body, with what their calls allow.
    pub fn builder_specs(&self, path: &Path) -> Vec<BuilderSpec> {
        if !self.any_builders {
            return Vec::new();
        }
        self.project_of(path).map(|(p, indexed)| p.builder_specs(indexed)).unwrap_or_default()
    }

    /// Whether the fix of a call's builders (`roots`) is planned, as one
    /// verdict: manual if one is, unsafe if one is, else safe.
    fn call_remedy(&self, roots: &[BuilderId]) -> BuilderRemedy {
        let mut reasons = Vec::new();
        for root in roots {
            match self.remedies.get(root) {
                Some(BuilderRemedy::Fix(_, why)) => reasons.extend(why.iter().cloned()),
                Some(BuilderRemedy::Manual(why)) => return BuilderRemedy::Manual(why.clone()),
                None => {
                    return BuilderRemedy::Manual(format!(
                        "toolshape does not rewrite the flow of `{}()`'s keywords: have it put them into a json block",
                        root.name
                    ));
                }
            }
        }
        if roots.is_empty() {
            return BuilderRemedy::Manual(
                "toolshape does not rewrite a dict parameter's flow: have the builder put it into a json block".into(),
            );
        }
        let applicability = if reasons.is_empty() { Applicability::Safe } else { Applicability::Unsafe };
        reasons.dedup();
        BuilderRemedy::Fix(applicability, reasons)
    }

    /// The TS003 findings of `text` that `toolshape fix` with `policy`
    /// leaves, and why: a call is repaired by the fix of its builders, in
    /// their own files, when those fixes apply and those files are fixed in
    /// this run.
    pub fn builder_call_leftovers(&self, path: &Path, text: &str, policy: &FixPolicy) -> Vec<Leftover> {
        let mut out: Vec<Leftover> = Vec::new();
        for (finding, roots) in self.builder_call_findings_with_roots(path, text, &policy.rules) {
            let why = match self.call_remedy(&roots) {
                BuilderRemedy::Manual(why) => LeftBecause::Manual(why),
                BuilderRemedy::Fix(Applicability::Unsafe, why) if !policy.unsafe_fixes => LeftBecause::Unsafe(why),
                BuilderRemedy::Fix(..) => match roots.iter().find(|r| !self.files.contains_key(r.path.as_os_str())) {
                    Some(outside) => LeftBecause::Elsewhere(format!(
                        "the fix is in `{}()`, defined in {}, which is not among the paths given: include it to fix its calls",
                        outside.name,
                        self.display(&outside.path)
                    )),
                    None => continue,
                },
            };
            out.push(Leftover { findings: vec![finding], why });
        }
        out
    }

    /// The TS005 findings of the checked file `j`, once
    /// [`Projects::not_a_result_findings`] found them.
    pub fn not_results(&self, j: usize) -> &[Finding] {
        self.not_results.get(j).map_or(&[], Vec::as_slice)
    }

    /// The TS005 findings of checked file `j` that a suppression comment
    /// silences (known once [`Projects::not_a_result_findings`] ran).
    pub fn silenced_not_results(&self, j: usize) -> &[Finding] {
        self.silenced_not_results.get(j).map_or(&[], Vec::as_slice)
    }

    /// The TS005 findings of every checked file (by position), under each
    /// file's rules (`rules_of`): the half-shaped displays the tools of its
    /// project return, wherever the tools stand, with the reads of the keys
    /// their fixes move (a reads pass of their own). Suppressions applied;
    /// kept for [`Projects::not_results`].
    pub fn not_a_result_findings(
        &mut self,
        scope: syntax::ParseScope,
        rules_of: impl Fn(usize) -> Rules,
    ) -> Vec<Vec<Finding>> {
        let found = self.find_not_results(scope, rules_of);
        let texts = &self.texts;
        let read = |p: &Path| texts.text(p);
        let sites: Vec<Vec<Vec<FindingReads>>> = self
            .projects
            .par_iter_mut()
            .zip(found.moved())
            .map(|(project, given)| project.reads(&given, read, None))
            .collect();
        self.finish_not_results(found, sites)
    }

    /// The half-shaped displays the tools of each project return (TS005),
    /// found in the checked files whose rules (`rules_of`) have TS005 on;
    /// [`Projects::finish_not_results`] makes them findings once the reads
    /// of the keys their fixes move are known.
    pub fn find_not_results(
        &mut self,
        scope: syntax::ParseScope,
        rules_of: impl Fn(usize) -> Rules,
    ) -> FoundNotResults {
        not_results_in(&mut self.projects, &self.texts, &self.checked, scope, rules_of)
    }

    /// [`Projects::find_not_results`], and beside it the possible reads of
    /// the keys that `findings` (each checked file's, from the first
    /// phase) move, which the next reads pass then does not search again:
    /// they need nothing TS005 or the later passes learn, and keep the
    /// other core busy while TS005's parts that run on one do.
    pub fn find_not_results_and_possible_reads(
        &mut self,
        scope: syntax::ParseScope,
        rules_of: impl Fn(usize) -> Rules + Send,
        findings: &[Option<&[Finding]>],
    ) -> FoundNotResults {
        let mut keys: Vec<BTreeSet<String>> = vec![BTreeSet::new(); self.projects.len()];
        for (j, &(r, slot)) in self.checked.iter().enumerate() {
            if let (Some(_), Some(Some(found))) = (slot, findings.get(j)) {
                keys[r].extend(found.iter().filter_map(|f| f.moved_key().cloned()));
            }
        }
        let paths: Vec<Vec<PathBuf>> = self
            .projects
            .iter()
            .zip(&keys)
            .map(|(p, k)| if k.is_empty() { Vec::new() } else { p.module_paths() })
            .collect();
        let Projects { projects, texts, checked, .. } = self;
        let texts = &*texts;
        let read = |p: &Path| texts.text(p);
        let (found, searched) = rayon::join(
            || not_results_in(projects, texts, checked, scope, rules_of),
            || {
                paths
                    .par_iter()
                    .zip(keys)
                    .map(|(paths, keys)| Some(search_possible_reads(paths, keys, &read)))
                    .collect()
            },
        );
        self.searched = searched;
        found
    }

    /// The TS005 findings of `found`, with the reads `sites` of the keys
    /// their fixes move (per project, aligned with
    /// [`FoundNotResults::moved`]; none when no fix moves a key): each judged by the plan `fix` would
    /// make. None of the reads is rewritten: each leaves its display for a
    /// person. Kept for [`Projects::not_results`].
    pub fn finish_not_results(
        &mut self,
        found: FoundNotResults,
        sites: Vec<Vec<Vec<FindingReads>>>,
    ) -> Vec<Vec<Finding>> {
        let mut out: Vec<Vec<Finding>> = vec![Vec::new(); self.checked.len()];
        let mut silenced: Vec<Vec<Finding>> = vec![Vec::new(); self.checked.len()];
        let FoundNotResults { per_project, rules } = found;
        let mut sites = sites.into_iter();
        for (r, of) in per_project.into_iter().enumerate() {
            let reads = self.read_refs(r, &of, sites.next().unwrap_or_default());
            for (((j, halves), reads), (text, whole)) in of.by_file.into_iter().zip(reads).zip(&of.parsed) {
                let index = LineIndex::new(text);
                let rules = rules[j].clone().unwrap_or_default();
                for (half, reads) in halves.into_iter().zip(reads) {
                    if half.range.end > text.len() {
                        continue;
                    }
                    let span = Span::new(&index, text, &half.range);
                    let at = (half.range.clone(), span);
                    let mut finding = Finding {
                        detail: Some(crate::rules::not_a_result_message(
                            &half.tool,
                            half.missing,
                            half.status.as_deref(),
                        )),
                        reads,
                        ..Finding::at(Code::NotAResult, Some(half.missing.to_owned()), at.clone(), at)
                    };
                    if rules.silences(text, half.range.start, Code::NotAResult) {
                        silenced[j].push(finding);
                        continue;
                    }
                    // What `fix` would do, as for every other finding.
                    let plan = crate::fix::not_result_plan(text, whole, &index, &finding, false);
                    finding.fixable = plan.and_then(|p| p.applicability());
                    out[j].push(finding);
                }
                out[j].sort_by_key(|f| f.entry.start);
            }
        }
        self.not_results = out.clone();
        self.silenced_not_results = silenced;
        out
    }

    /// The reads `sites` of project `r` (aligned with `of.moved`) as each
    /// half-shaped display of `of` lists them: per file, per display.
    fn read_refs(&self, r: usize, of: &NotResultsOf, sites: Vec<Vec<FindingReads>>) -> Vec<Vec<Vec<ReadRef>>> {
        let mut out: Vec<Vec<Vec<ReadRef>>> = of.by_file.iter().map(|(_, h)| vec![Vec::new(); h.len()]).collect();
        for (g, per_file) in sites.into_iter().enumerate() {
            for (FindingReads { reads, .. }, &h) in per_file.into_iter().zip(&of.owner[g]) {
                for site in reads {
                    let read = ReadRef {
                        path: self.display(self.projects[r].module_path(site.module)),
                        line: site.start.line,
                        column: site.start.column,
                        end_line: site.end.line,
                        end_column: site.end.column,
                        form: site.form.as_str(),
                        key: site.key.clone(),
                        rewritable: false,
                        possible: site.possible,
                    };
                    if !out[g][h].contains(&read) {
                        out[g][h].push(read);
                    }
                }
            }
        }
        for per_file in &mut out {
            for reads in per_file {
                reads.sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
            }
        }
        out
    }

    /// The TS003 findings of `text`, the current text of the checked file
    /// `path`, under `rules`: suppressions and allowed keys applied.
    pub fn builder_call_findings(&self, path: &Path, text: &str, rules: &Rules) -> Vec<Finding> {
        self.builder_call_findings_with_roots(path, text, rules).into_iter().map(|(f, _)| f).collect()
    }

    /// [`Projects::builder_call_findings`], each with the builders whose
    /// fix repairs it.
    fn builder_call_findings_with_roots(
        &self,
        path: &Path,
        text: &str,
        rules: &Rules,
    ) -> Vec<(Finding, Vec<BuilderId>)> {
        if !rules.enabled(Code::BuilderCall) {
            return Vec::new();
        }
        if !self.any_builders {
            return Vec::new();
        }
        let Some((project, indexed)) = self.project_of(path) else { return Vec::new() };
        let calls = project.builder_calls(indexed, text);
        if calls.is_empty() {
            return Vec::new();
        }
        let index = LineIndex::new(text);
        let silenced = |at: usize| rules.silences(text, at, Code::BuilderCall);
        let mut out = Vec::new();
        for call in calls {
            let builder = BuilderRef {
                name: call.builder.name.clone(),
                path: self.display(&call.builder.path),
                line: call.builder.line,
                column: call.builder.column,
            };
            let dict = call.call.range.clone();
            let mut push = |range: std::ops::Range<usize>,
                            key: Option<String>,
                            spread: Option<String>,
                            expression,
                            roots: &[BuilderId],
                            detail: Option<String>| {
                if silenced(range.start) || silenced(dict.start) {
                    return;
                }
                let fixable = match self.call_remedy(roots) {
                    BuilderRemedy::Fix(applicability, _) => Some(applicability),
                    BuilderRemedy::Manual(_) => None,
                };
                let finding = Finding {
                    code: Code::BuilderCall,
                    key,
                    spread,
                    detail,
                    span: Span::new(&index, text, &range),
                    entry: range,
                    dict: dict.clone(),
                    dict_span: Span::new(&index, text, &dict),
                    fixable,
                    origin: Origin::BuilderCall,
                    expression,
                    builder: Some(builder.clone()),
                    reads: Vec::new(),
                };
                out.push((finding, roots.to_vec()));
            };
            if call.kwargs_flow {
                for (name, range) in &call.call.keywords {
                    if !call.named.contains(name) && !rules.allows_key(name) {
                        push(range.clone(), Some(name.clone()), None, None, &call.roots, None);
                    }
                }
                for (range, expression, passes_own) in &call.call.spreads {
                    if passes_own.is_none() {
                        let written = text[range.clone()].to_owned();
                        push(range.clone(), None, Some(written), Some(expression.clone()), &call.roots, None);
                    }
                }
            }
            // A dict parameter's flow is not rewritten: no roots.
            for (param, added, range) in &call.dict_args {
                let param = Some(param.clone());
                match added {
                    Added::Key(key) if rules.allows_key(key) => {}
                    Added::Key(key) => push(range.clone(), Some(key.clone()), None, None, &[], param),
                    Added::ComputedKey(e) => push(range.clone(), None, None, Some(e.clone()), &[], param),
                    Added::Mapping { written, expression } => {
                        push(range.clone(), None, Some(written.clone()), Some(expression.clone()), &[], param)
                    }
                }
            }
        }
        out.sort_by_key(|(f, _)| f.entry.start);
        out
    }

    /// A builder's path as findings spell it: under a folder given, as
    /// that folder was spelled (`./pkg/ok.py` for `.`); else relative to the
    /// working folder when under it; else absolute.
    fn display(&self, path: &Path) -> String {
        let abs = canonical(&self.cwd, path);
        let spelled = self
            .given
            .iter()
            .filter(|(g, _)| abs.starts_with(g))
            .max_by_key(|(g, _)| g.components().count())
            .map(|(g, as_given)| as_given.join(abs.strip_prefix(g).expect("filtered")));
        spelled.unwrap_or_else(|| abs.strip_prefix(&self.cwd).unwrap_or(&abs).to_path_buf()).display().to_string()
    }
}

/// Plans, before any file is written, the fix of every builder of
/// `project` fixed in its own body: the plan of its file that repairs the
/// flow of its `**kwargs` (the display holding `**kwargs`, or the write of
/// them into its result).
fn builder_remedies(project: &Project, rules_of: &dyn Fn(&Path) -> Rules) -> Vec<(BuilderId, BuilderRemedy)> {
    let mut out = Vec::new();
    for path in project.builder_files() {
        let specs = project.builder_specs(&path);
        let Ok(text) = source::with_text(&path, |text| text.to_owned()) else { continue };
        let options = fix::PlanOptions::verdicts_only(rules_of(&path)).with_builders(specs.clone());
        let pieces = vec![crate::syntax::ParsedPiece::new(0, crate::syntax::parse(&text))];
        let plans = fix::plan_source(&text, &pieces, &options);
        let tree = &pieces[0].tree;
        for spec in specs {
            let carries = |plan: &fix::Plan| {
                let in_builder = tree
                    .root_node()
                    .descendant_for_byte_range(plan.range.start, plan.range.end)
                    .and_then(|n| crate::semantic::enclosing_function(n, &text))
                    .is_some_and(|(class, name)| class == spec.class && name == spec.name);
                let own = |e: &Option<String>| e.as_deref() == Some(spec.kwargs.as_str());
                let flows = match &plan.subject {
                    fix::Subject::Dict(dict) => dict.entries.iter().any(|e| {
                        matches!(&e.kind, EntryKind::Spread)
                            && text[e.value.clone()].trim_matches(['(', ')', ' ', '\t', '\n', '\r']) == spec.kwargs
                    }),
                    // `N.update(kwargs)` and the like, or the loop over
                    // `kwargs.items()` the plan replaces whole.
                    fix::Subject::Writes(found) => {
                        found.iter().any(|f| own(&f.expression))
                            || tree
                                .root_node()
                                .descendant_for_byte_range(plan.range.start, plan.range.end)
                                .is_some_and(|n| n.kind_name() == "for_statement" && n.byte_range() == plan.range)
                    }
                    fix::Subject::Shape(_) => false,
                };
                in_builder && flows
            };
            // Every plan that carries the flow must be applied for the
            // calls to be repaired: one manual makes it manual, one unsafe
            // makes it unsafe.
            let carrying: Vec<&fix::Remedy> = plans.iter().filter(|p| carries(p)).map(|p| &p.remedy).collect();
            if carrying.is_empty() && !spec.merged {
                continue;
            }
            let remedy = if spec.merged {
                BuilderRemedy::Manual(format!(
                    "`{}()` returns its `**{}` merged with a result (`{{**result, **{}}}`), which toolshape does not rewrite",
                    spec.name, spec.kwargs, spec.kwargs
                ))
            } else if let Some(why) = carrying.iter().find_map(|r| match r {
                fix::Remedy::Manual(why) => Some(why.clone()),
                fix::Remedy::Fix(_) => None,
            }) {
                BuilderRemedy::Manual(why)
            } else {
                let mut reasons: Vec<String> = carrying
                    .iter()
                    .filter_map(|r| match r {
                        fix::Remedy::Fix(f) => Some(f.unsafe_reasons.clone()),
                        fix::Remedy::Manual(_) => None,
                    })
                    .flatten()
                    .collect();
                reasons.sort();
                reasons.dedup();
                let applicability = if reasons.is_empty() { Applicability::Safe } else { Applicability::Unsafe };
                BuilderRemedy::Fix(applicability, reasons)
            };
            out.push((BuilderId { path: path.clone(), class: spec.class, name: spec.name }, remedy));
        }
    }
    out
}

/// A path's absolute spelling (from `cwd`), `.` and `..` folded lexically:
/// the same file reached from two roots gets one key, without a system
/// call per file.
fn canonical(cwd: &Path, path: &Path) -> PathBuf {
    let abs = if path.is_absolute() { path.to_owned() } else { cwd.join(path.strip_prefix(".").unwrap_or(path)) };
    if is_folded(&abs) { abs } else { fold(&abs) }
}

/// `abs` with its `.` components left out and each `..` taking the
/// component before it away, lexically.
fn fold(abs: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether the absolute path `abs` is spelled as [`canonical`] would fold
/// it: no `.` or `..` component, no doubled or trailing separator (the
/// files of a walk, mostly: each then costs no folding).
#[cfg(unix)]
fn is_folded(abs: &Path) -> bool {
    let bytes = abs.as_os_str().as_encoded_bytes();
    let ends = |tail: &[u8]| bytes.ends_with(tail);
    bytes.starts_with(b"/")
        && bytes.len() > 1
        && !ends(b"/")
        && !ends(b"/.")
        && !ends(b"/..")
        && memchr::memmem::find(bytes, b"//").is_none()
        && memchr::memmem::find(bytes, b"/./").is_none()
        && memchr::memmem::find(bytes, b"/../").is_none()
}

#[cfg(not(unix))]
fn is_folded(_: &Path) -> bool {
    false
}

/// For the folders of `files` and every folder above them, the nearest
/// folder at or above it that holds a project marker ([`nearest_marker`]
/// for each): the folders' markers are looked for in parallel (a dense tree
/// of 200 folders costs 600 file-system look-ups), but for those `marked`
/// knows.
fn markers_of_folders(files: &[PathBuf], marked: Option<&MarkedFolders>) -> HashMap<PathBuf, Option<PathBuf>> {
    use rayon::prelude::*;
    // Each folder once: the files of a folder come one after the other, and
    // a folder seen before was seen with its ancestors.
    let mut seen: foldhash::HashSet<&Path> = foldhash::HashSet::default();
    let mut folders: Vec<&Path> = Vec::new();
    let mut last: Option<&Path> = None;
    for parent in files.iter().filter_map(|f| f.parent()) {
        if last.replace(parent) == Some(parent) {
            continue;
        }
        for dir in parent.ancestors() {
            if !seen.insert(dir) {
                break;
            }
            folders.push(dir);
        }
    }
    let marked: foldhash::HashSet<&Path> =
        folders.par_iter().filter(|dir| holds_marker(dir, marked)).map(|dir| *dir).collect();
    // Shallow folders first: each one's answer is its own or its parent's.
    folders.sort_by_cached_key(|dir| dir.components().count());
    let mut known: HashMap<PathBuf, Option<PathBuf>> = HashMap::with_capacity(folders.len());
    for dir in folders {
        let found = match marked.contains(dir) {
            true => Some(dir.to_path_buf()),
            false => dir.parent().and_then(|up| known.get(up).cloned().flatten()),
        };
        known.insert(dir.to_path_buf(), found);
    }
    known
}

/// Whether the folder `dir` holds a project marker: as `marked` says when
/// a walk listed it, else looked at.
fn holds_marker(dir: &Path, marked: Option<&MarkedFolders>) -> bool {
    marked.and_then(|m| m.holds_marker(dir)).unwrap_or_else(|| PROJECT_MARKERS.iter().any(|m| dir.join(m).exists()))
}

/// The nearest folder at or above `dir` that holds a project marker; each
/// folder's answer is kept in `known`, so that the files of a tree look at
/// each folder's markers once.
fn nearest_marker(
    dir: &Path,
    known: &mut HashMap<PathBuf, Option<PathBuf>>,
    marked: Option<&MarkedFolders>,
) -> Option<PathBuf> {
    if let Some(found) = known.get(dir) {
        return found.clone();
    }
    let found = if holds_marker(dir, marked) {
        Some(dir.to_path_buf())
    } else {
        dir.parent().and_then(|up| nearest_marker(up, known, marked))
    };
    known.insert(dir.to_path_buf(), found.clone());
    found
}

/// The half-shaped displays of `projects` ([`Projects::find_not_results`]):
/// `checked` maps each checked file to its project and module, `texts`
/// reads them.
fn not_results_in(
    projects: &mut [Project],
    texts: &source::TextCache,
    checked: &[(usize, Option<usize>)],
    scope: syntax::ParseScope,
    rules_of: impl Fn(usize) -> Rules,
) -> FoundNotResults {
    let tools = match scope {
        syntax::ParseScope::Candidates => crate::semantic::project::ToolBodies::Reaching,
        syntax::ParseScope::WholeFile => crate::semantic::project::ToolBodies::All,
    };
    // Each project's checked modules, and the rules of its first file.
    let mut checked_at: Vec<HashMap<usize, usize>> = vec![HashMap::new(); projects.len()];
    let mut decorators: Vec<Option<Vec<String>>> = vec![None; projects.len()];
    let mut rules: Vec<Option<Rules>> = vec![None; checked.len()];
    for (j, &(r, slot)) in checked.iter().enumerate() {
        let of_file = rules_of(j);
        if let Some(slot) = slot.filter(|_| of_file.enabled(Code::NotAResult)) {
            checked_at[r].insert(slot, j);
            decorators[r].get_or_insert_with(|| of_file.tool_decorators().iter().map(|d| d.to_string()).collect());
            rules[j] = Some(of_file);
        }
    }
    let read = |p: &Path| texts.text(p);
    let found: Vec<Vec<crate::semantic::project::HalfShaped>> = projects
        .par_iter_mut()
        .zip(&decorators)
        .map(|(project, decorators)| match decorators {
            Some(d) => project.half_shaped(&d.iter().map(String::as_str).collect::<Vec<_>>(), tools, read),
            None => Vec::new(),
        })
        .collect();
    let mut per_project = Vec::with_capacity(found.len());
    for (r, halves) in found.into_iter().enumerate() {
        let mut by_file: HashMap<usize, Vec<crate::semantic::project::HalfShaped>> = HashMap::new();
        for half in halves {
            if let Some(&j) = checked_at[r].get(&half.module) {
                by_file.entry(j).or_default().push(half);
            }
        }
        let mut by_file: Vec<(usize, Vec<crate::semantic::project::HalfShaped>)> = by_file.into_iter().collect();
        by_file.sort_by_key(|(j, _)| *j);
        // Each file read and parsed once, for the reads and the plans.
        let parsed: Vec<(SharedText, [syntax::ParsedPiece; 1])> = by_file
            .iter()
            .map(|(_, halves)| {
                let path = halves.first().map(|h| projects[r].module_path(h.module).to_path_buf());
                let text = path.and_then(|p| texts.text(&p)).unwrap_or_default();
                let tree = syntax::parse(&text);
                (text, [syntax::ParsedPiece::new(0, tree)])
            })
            .collect();
        let (moved, owner) = moved_out_of(&by_file, &parsed);
        per_project.push(NotResultsOf { by_file, parsed, moved, owner });
    }
    FoundNotResults { per_project, rules }
}

/// Findings with no reads yet, each at its own origin.
fn no_reads(findings: &[Finding]) -> Vec<FindingReads> {
    findings.iter().map(|f| FindingReads { origin: f.dict.clone(), reads: Vec::new() }).collect()
}

/// The reads of a reads pass's own findings, and of the extra ones, each
/// per file and per finding.
type BothReads = (Vec<Vec<FindingReads>>, Vec<Vec<FindingReads>>);

/// The reads of `own` and of `extra` (each a module with its findings) in
/// `project`, in one reads pass (the possible reads of some keys already
/// `searched`): a module in both is given once, with both's findings.
/// Returns the reads aligned with `own`, and with `extra`.
fn reads_of_both(
    project: &mut Project,
    own: &[(usize, &[Finding])],
    extra: &[(usize, &[Finding])],
    read: impl Fn(&Path) -> Option<SharedText> + Sync,
    searched: Option<PossibleReads>,
) -> BothReads {
    if extra.iter().all(|(_, f)| f.is_empty()) {
        let own_sites = if own.is_empty() { Vec::new() } else { project.reads(own, read, searched) };
        return (own_sites, extra.iter().map(|(_, f)| no_reads(f)).collect());
    }
    // Each module once: its own findings first, then the extra ones.
    let mut given: Vec<(usize, Vec<Finding>)> = own.iter().map(|(m, f)| (*m, f.to_vec())).collect();
    let mut extra_at: Vec<(usize, usize)> = Vec::with_capacity(extra.len());
    for (m, found) in extra {
        let g = match given.iter().position(|(g, _)| g == m) {
            Some(g) => g,
            None => {
                given.push((*m, Vec::new()));
                given.len() - 1
            }
        };
        extra_at.push((g, given[g].1.len()));
        given[g].1.extend(found.iter().cloned());
    }
    let refs: Vec<(usize, &[Finding])> = given.iter().map(|(m, f)| (*m, f.as_slice())).collect();
    let mut sites = project.reads(&refs, read, searched);
    let theirs = extra
        .iter()
        .zip(&extra_at)
        .map(|((_, found), &(g, from))| sites[g][from..from + found.len()].to_vec())
        .collect();
    let own_sites = sites
        .drain(..own.len())
        .zip(own)
        .map(|(mut of_file, (_, found))| {
            of_file.truncate(found.len());
            of_file
        })
        .collect();
    (own_sites, theirs)
}

/// The half-shaped displays of each project, found by
/// [`Projects::find_not_results`] and not yet findings.
pub struct FoundNotResults {
    per_project: Vec<NotResultsOf>,
    /// Each checked file's rules, when TS005 is on there.
    rules: Vec<Option<Rules>>,
}

impl FoundNotResults {
    /// Whether some display's fix moves a key out of the top level, so
    /// that its reads must be searched.
    pub fn moves_keys(&self) -> bool {
        self.per_project.iter().any(|of| of.moved.iter().any(|(_, f)| !f.is_empty()))
    }

    /// Per project, each file with displays: its module and the keys their
    /// fixes move, as findings of keys that move (what a reads pass asks).
    pub fn moved(&self) -> Vec<Vec<(usize, &[Finding])>> {
        self.per_project.iter().map(|of| of.moved.iter().map(|(m, f)| (*m, f.as_slice())).collect()).collect()
    }
}

/// One project's half-shaped displays in its checked files.
struct NotResultsOf {
    /// Each checked file with its displays.
    by_file: Vec<(usize, Vec<crate::semantic::project::HalfShaped>)>,
    /// Each file's text and tree, aligned with `by_file`.
    parsed: Vec<(SharedText, [syntax::ParsedPiece; 1])>,
    /// Each file's module and the keys its displays' fixes move (every key
    /// but status, content and toolUseId), as findings, aligned with
    /// `by_file`.
    moved: Vec<(usize, Vec<Finding>)>,
    /// For each finding of `moved`, the display (its index in its file's)
    /// it belongs to.
    owner: Vec<Vec<usize>>,
}

/// Per file, its module and the findings of the keys moved out of the top
/// level; and per file, the display each finding belongs to.
type MovedOut = (Vec<(usize, Vec<Finding>)>, Vec<Vec<usize>>);

/// The keys the fixes of the half-shaped displays of `by_file` move out of
/// the top level, as findings of keys that move, per file (with its
/// module), and the display each belongs to. `parsed` holds each file's
/// text and tree.
fn moved_out_of(
    by_file: &[(usize, Vec<crate::semantic::project::HalfShaped>)],
    parsed: &[(SharedText, [syntax::ParsedPiece; 1])],
) -> MovedOut {
    let mut given: Vec<(usize, Vec<Finding>)> = Vec::new();
    let mut owner: Vec<Vec<usize>> = Vec::new();
    for ((_, halves), (text, [piece])) in by_file.iter().zip(parsed) {
        let module = halves.first().map_or(0, |h| h.module);
        let tree = &piece.tree;
        let index = LineIndex::new(text);
        let (mut found, mut of) = (Vec::new(), Vec::new());
        for (h, half) in halves.iter().enumerate() {
            let Some(dict) = tree.root_node().descendant_for_byte_range(half.range.start, half.range.end) else {
                continue;
            };
            let mut cursor = dict.walk();
            for pair in dict.named_children(&mut cursor).filter(|c| c.kind_name() == "pair") {
                let Some(key) = pair.field("key").and_then(|k| crate::syntax::tree::constant_str(k, text)) else {
                    continue;
                };
                if matches!(key.as_str(), "status" | "content" | "toolUseId") {
                    continue;
                }
                let span = Span::new(&index, text, &half.range);
                let dict = (half.range.clone(), span);
                found.push(Finding::at(Code::ExtraKey, Some(key), (pair.byte_range(), span), dict));
                of.push(h);
            }
        }
        given.push((module, found));
        owner.push(of);
    }
    (given, owner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_already_folded_is_kept_as_it_is_spelled_and_others_are_folded() {
        let cwd = Path::new("/work/tree");
        for p in [
            "a/b.py",
            "./a/b.py",
            "././a",
            "../x/y.py",
            ".",
            "./",
            "a//b",
            "a/./b",
            "a/../b",
            "a/b/..",
            "a/b/.",
            "/abs/x.py",
            "/abs//x",
            "/abs/x/",
            "/abs/x/.",
            "/abs/x/..",
            "/abs/.hidden/x",
            "/abs/..x/y",
            "/",
        ] {
            let p = Path::new(p);
            let abs = if p.is_absolute() { p.to_owned() } else { cwd.join(p) };
            assert_eq!(canonical(cwd, p).as_os_str(), fold(&abs).as_os_str(), "{p:?}");
        }
    }

    #[test]
    fn the_walk_s_markers_find_the_roots_that_looking_finds() {
        let dir = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(top.join("pyproject.toml"), "").unwrap();
        for f in ["a.py", "inner/pyproject.toml", "inner/pkg/b.py", "repo/.git/HEAD", "repo/c.py", "plain/sub/d.py"] {
            std::fs::create_dir_all(top.join(f).parent().unwrap()).unwrap();
            std::fs::write(top.join(f), "").unwrap();
        }
        let walked = crate::discovery::discover(
            &[top.join("inner"), top.join("repo"), top.join("plain")],
            &crate::discovery::WalkOptions::default(),
            &crate::config::Resolver::isolated(),
        )
        .unwrap();
        let files: Vec<PathBuf> = walked.files.iter().map(|f| f.path.clone()).collect();
        assert_eq!(files.len(), 3);
        let paths = [top.join("inner"), top.join("repo"), top.join("plain")];
        let plan = |marked| ProjectPlan::new(&paths, &files, &ProjectOptions { root: None, isolated: false, marked });
        let (looked, told) = (plan(None), plan(Some(&walked.marked)));
        assert_eq!(told.roots, looked.roots);
        assert_eq!(told.root_of, looked.root_of);
        // `plain` has no marker of its own: the one above the paths counts.
        let roots: Vec<&Path> = told.roots.iter().map(|(r, _)| r.as_path()).collect();
        assert_eq!(roots, [top.join("inner").as_path(), &top, &top.join("repo")]);
    }

    #[test]
    fn lanes_hold_whole_projects_the_biggest_first_in_the_lightest_lane() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        // Projects of 5, 3 and 2 files, each under its own marker.
        for (name, n) in [("a", 2), ("b", 5), ("c", 3)] {
            let root = dir.path().join(name);
            std::fs::create_dir_all(&root).unwrap();
            std::fs::write(root.join("pyproject.toml"), "").unwrap();
            for i in 0..n {
                let file = root.join(format!("m{i}.py"));
                std::fs::write(&file, "x = 1\n").unwrap();
                files.push(file);
            }
        }
        files.sort();
        let plan = || {
            ProjectPlan::new(
                &[dir.path().to_path_buf()],
                &files,
                &ProjectOptions { root: None, isolated: false, marked: None },
            )
        };
        let lanes = plan().lanes(2);
        let members: Vec<Vec<usize>> = lanes.iter().map(|(_, m)| m.clone()).collect();
        // `b` (files 2..7) alone; `a` (0, 1) and `c` (7..10) together.
        assert_eq!(members, [vec![2, 3, 4, 5, 6], vec![0, 1, 7, 8, 9]]);
        assert_eq!(lanes.iter().map(|(p, _)| p.roots.len()).collect::<Vec<_>>(), [1, 2]);
        // One lane, or one project: the plan as it is.
        assert_eq!(plan().lanes(1).len(), 1);
        assert_eq!(plan().lanes(8).len(), 3);
        let one = ProjectPlan::new(
            &[dir.path().join("b")],
            &files[2..7],
            &ProjectOptions { root: None, isolated: false, marked: None },
        );
        assert_eq!(one.lanes(2).iter().map(|(_, m)| m.clone()).collect::<Vec<_>>(), [vec![0, 1, 2, 3, 4]]);
    }
}
