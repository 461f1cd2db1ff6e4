//! Discovery: which files to check, from the paths the user gave.
//!
//! A file named explicitly is always checked. Directories are walked for
//! `*.py` and `*.pyi`, skipping version-control, cache, build and
//! virtual-environment folders, hidden folders and whatever `.gitignore` files
//! say (matched with the `ignore` crate's gitignore matcher). Each folder is
//! listed once, and what it holds (`.gitignore`, `pyvenv.cfg`, configuration
//! files) is read from that listing; a folder left out is never opened.
//! Symlinks are not followed unless asked; then walkdir walks, and its loop
//! detection keeps a followed cycle from looping. Paths keep the spelling the user gave them, and the result is
//! sorted and free of duplicates so output is deterministic. Each folder's
//! configuration (see [`crate::config`]) adds its `exclude` globs, or
//! replaces the built-in skipped folders with them.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use rayon::prelude::*;

use std::sync::Arc;

use crate::config::{Resolver, Settings};

/// Folder names never descended into unless `--no-ignore` is given.
pub const SKIPPED_DIRS: [&str; 9] =
    ["__pycache__", "node_modules", ".tox", ".nox", "build", "dist", "site-packages", ".git", "venv"];

/// How to walk.
#[derive(Debug, Clone, Default)]
pub struct WalkOptions {
    /// Glob patterns (matched against the file or folder name and the whole
    /// path) to leave out.
    pub exclude: Vec<String>,
    /// Walk everything: no `.gitignore`, no default skipped folders (but
    /// `.git` and `__pycache__`, which hold no source).
    pub no_ignore: bool,
    /// Follow symbolic links while walking.
    pub follow_links: bool,
    /// Apply the exclusions to paths named explicitly, too (as pre-commit
    /// hooks need: they name every file).
    pub force_exclude: bool,
}

/// A path that could not be walked or read as a directory entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveryError {
    pub path: PathBuf,
    pub message: String,
}

/// A file to check, with the settings of its folder.
#[derive(Debug, Clone)]
pub struct FoundFile {
    /// As the user spelled it (or as the walk reached it below such a path).
    pub path: PathBuf,
    pub settings: Arc<Settings>,
}

impl FoundFile {
    /// A file under the built-in settings (as `--isolated` gives).
    pub fn with_defaults(path: PathBuf) -> Self {
        FoundFile { path, settings: Arc::new(Settings::default()) }
    }
}

/// The outcome of discovery.
#[derive(Debug, Default)]
pub struct Discovered {
    pub files: Vec<FoundFile>,
    pub errors: Vec<DiscoveryError>,
    /// Things worth saying that are not errors (a symlink loop not followed).
    pub warnings: Vec<DiscoveryError>,
    /// Which of the folders the walk listed hold a project marker.
    pub marked: MarkedFolders,
}

/// The names whose presence makes a folder a project's root.
pub const PROJECT_MARKERS: [&str; 3] = ["pyproject.toml", "toolshape.toml", ".git"];

/// Whether each folder a walk listed holds one of [`PROJECT_MARKERS`]
/// (as `Path::exists` would say of it), by its absolute path: the project
/// plan asks this of every folder above the files, and the walk has read
/// the answer in each listing (600 file-system look-ups on a dense tree).
#[derive(Debug, Default, Clone)]
pub struct MarkedFolders {
    listed: foldhash::HashMap<PathBuf, bool>,
}

impl MarkedFolders {
    /// Whether the folder at `abs` holds a marker; `None` when no walk
    /// listed it.
    pub fn holds_marker(&self, abs: &Path) -> Option<bool> {
        self.listed.get(abs).copied()
    }
}

/// A file found, the path that identifies it on disk (so that one file
/// reached under two spellings, `a.py` and `./a.py`, is checked once), and
/// its settings.
type Found = (PathBuf, PathBuf, Arc<Settings>);

/// Finds the files to check below `paths`, each with its folder's settings
/// from `resolver` (which also knows each folder's configured exclusions).
pub fn discover(paths: &[PathBuf], options: &WalkOptions, resolver: &Resolver) -> Result<Discovered, String> {
    let excludes = build_excludes(&options.exclude)?;
    let mut out = Discovered::default();
    let mut found: Vec<Found> = Vec::new();
    for root in paths {
        let meta = match std::fs::metadata(root) {
            Ok(meta) => meta,
            Err(err) => {
                let message = if err.kind() == std::io::ErrorKind::NotFound {
                    "no such file or directory".to_owned()
                } else {
                    err.to_string()
                };
                out.errors.push(DiscoveryError { path: root.clone(), message });
                continue;
            }
        };
        if options.force_exclude && excluded_explicitly(root, &excludes, resolver) {
            continue;
        }
        if meta.is_dir() {
            walk_dir(root, options, &excludes, resolver, &mut found, &mut out);
        } else if meta.is_file() {
            let identity = std::fs::canonicalize(root).unwrap_or_else(|_| root.clone());
            found.push((root.clone(), identity, resolver.for_file(root)));
        } else {
            out.errors.push(DiscoveryError {
                path: root.clone(),
                message: "not a regular file (a FIFO, socket or device); skipped".to_owned(),
            });
        }
    }
    // A single walk is already in sorted order; sorting 10^4 paths
    // component by component is not free.
    let order = |a: &Found, b: &Found| (&a.0, &a.1).cmp(&(&b.0, &b.1));
    if !found.is_sorted_by(|a, b| order(a, b).is_le()) {
        // Stable: a merge of the sorted runs the walks produced.
        found.sort_by(order);
    }
    if paths.len() > 1 || options.follow_links {
        let mut seen = foldhash::HashSet::default();
        found.retain(|(_, identity, _)| seen.insert(identity.clone()));
    }
    out.files = found.into_iter().map(|(path, _, settings)| FoundFile { path, settings }).collect();
    out.errors.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Whether `--force-exclude` leaves out `path`, a path named on the command
/// line or the name stdin's source goes by.
pub fn force_excluded(path: &Path, options: &WalkOptions, resolver: &Resolver) -> Result<bool, String> {
    Ok(options.force_exclude && excluded_explicitly(path, &build_excludes(&options.exclude)?, resolver))
}

fn build_excludes(patterns: &[String]) -> Result<GlobSet, String> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = Glob::new(pattern).map_err(|e| format!("invalid --exclude pattern `{pattern}`: {e}"))?;
        builder.add(glob);
    }
    builder.build().map_err(|e| e.to_string())
}

fn is_python(path: &Path) -> bool {
    matches!(path.extension().and_then(OsStr::to_str), Some("py" | "pyi"))
}

fn excluded(path: &Path, excludes: &GlobSet) -> bool {
    !excludes.is_empty() && (excludes.is_match(path) || path.file_name().is_some_and(|n| excludes.is_match(n)))
}

/// Whether a path named on the command line is excluded (`--exclude`, or
/// its folder's configuration).
/// A path is excluded when it, or a folder it lies in, is: for the command
/// line's globs any folder on the path as given, for the configuration's
/// the folders up to the configuration's own.
fn excluded_explicitly(path: &Path, excludes: &GlobSet, resolver: &Resolver) -> bool {
    if path.ancestors().any(|a| !a.as_os_str().is_empty() && excluded(a, excludes)) {
        return true;
    }
    // A name given for stdin need not exist: resolve its folder instead.
    let abs = std::fs::canonicalize(path)
        .or_else(|_| {
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            std::fs::canonicalize(parent).map(|dir| dir.join(path.file_name().unwrap_or_default()))
        })
        .unwrap_or_else(|_| std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()));
    let config = &resolver.for_abs_dir(abs.parent().unwrap_or(&abs)).config;
    abs.ancestors().take_while(|a| a.starts_with(&config.root) && *a != config.root).any(|a| config.excludes(a))
}

/// Whether a folder (not yet listed) is a virtual environment that the
/// built-in rules leave out.
fn is_venv(path: &Path, options: &WalkOptions) -> bool {
    !options.no_ignore && path.join("pyvenv.cfg").is_file()
}

/// Whether a folder below a root is left out by the built-in rules for its
/// name; `defaults` is false when the configuration's `exclude` replaced
/// the built-in folder list (a virtual environment is told by its
/// `pyvenv.cfg`).
fn skipped_by_name(path: &Path, options: &WalkOptions, defaults: bool) -> bool {
    let name = path.file_name().and_then(OsStr::to_str).unwrap_or("");
    if name == ".git" || name == "__pycache__" {
        return true;
    }
    if options.no_ignore {
        return false;
    }
    (defaults && SKIPPED_DIRS.contains(&name)) || name.starts_with('.')
}

/// `.gitignore` matchers of the folders on the current walk path.
#[derive(Clone)]
struct IgnoreStack {
    /// (walk depth of the folder, its matcher).
    layers: Vec<(usize, Gitignore)>,
}

impl IgnoreStack {
    /// Starts with the `.gitignore` files of the root's ancestors up to the
    /// enclosing git repository's top, if there is one.
    fn for_root(root_abs: &Path) -> Self {
        let mut ancestors = Vec::new();
        for dir in root_abs.ancestors().skip(1) {
            ancestors.push(dir.to_path_buf());
            if dir.join(".git").exists() {
                break;
            }
        }
        if !root_abs.ancestors().skip(1).any(|d| d.join(".git").exists()) {
            ancestors.clear();
        }
        let mut stack = IgnoreStack { layers: Vec::new() };
        for dir in ancestors.iter().rev() {
            stack.push(0, dir);
        }
        stack
    }

    fn push(&mut self, depth: usize, dir_abs: &Path) {
        if dir_abs.join(".gitignore").is_file() {
            self.push_file(depth, dir_abs);
        }
    }

    /// Adds the `.gitignore` that the folder `dir_abs` holds.
    fn push_file(&mut self, depth: usize, dir_abs: &Path) {
        let mut builder = GitignoreBuilder::new(dir_abs);
        builder.add(dir_abs.join(".gitignore"));
        if let Ok(gi) = builder.build() {
            self.layers.push((depth, gi));
        }
    }

    /// Drops the layers of folders the walk has left.
    fn leave_to(&mut self, depth: usize) {
        while self.layers.last().is_some_and(|(d, _)| *d > depth) {
            self.layers.pop();
        }
    }

    fn ignored(&self, path_abs: &Path, is_dir: bool) -> bool {
        for (_, gi) in self.layers.iter().rev() {
            match gi.matched(path_abs, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }
}

/// One thing a walk met, in walk order.
enum Item {
    /// A file to check.
    File(Found),
    /// A folder left for another walker (shallow walks only), with its
    /// absolute path.
    Dir(PathBuf, PathBuf),
    /// A folder listed (its absolute path), and whether it holds a project
    /// marker.
    Listed(PathBuf, bool),
    Error(DiscoveryError),
    Warning(DiscoveryError),
}

/// Where a walk starts: a folder (`abs`, absolute) at `depth` below its
/// root; a `shallow` walk reads only the folder's own entries.
#[derive(Clone, Copy)]
struct Start<'p> {
    path: &'p Path,
    abs: &'p Path,
    depth: usize,
    shallow: bool,
}

/// What every walker below one root shares.
struct RootWalk<'a> {
    root: &'a Path,
    root_abs: PathBuf,
    options: &'a WalkOptions,
    excludes: &'a GlobSet,
    resolver: &'a Resolver,
}

/// Walks `root`: its own entries first, then each of its folders on its own
/// thread; the results are joined in walk (sorted) order.
fn walk_dir(
    root: &Path,
    options: &WalkOptions,
    excludes: &GlobSet,
    resolver: &Resolver,
    found: &mut Vec<Found>,
    out: &mut Discovered,
) {
    let root_abs = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut ignores = IgnoreStack { layers: Vec::new() };
    if !options.no_ignore {
        ignores = IgnoreStack::for_root(&root_abs);
        ignores.push(0, &root_abs);
    }
    let ctx = RootWalk { root, root_abs, options, excludes, resolver };
    let top = ctx.walk(Start { path: root, abs: &ctx.root_abs, depth: 0, shallow: true }, ignores.clone());
    let items: Vec<Vec<Item>> = top
        .into_par_iter()
        .map(|item| match item {
            Item::Dir(dir, abs) => ctx.walk(Start { path: &dir, abs: &abs, depth: 1, shallow: false }, ignores.clone()),
            other => vec![other],
        })
        .collect();
    for item in items.into_iter().flatten() {
        match item {
            Item::File(file) => found.push(file),
            Item::Error(e) => out.errors.push(e),
            Item::Warning(w) => out.warnings.push(w),
            Item::Listed(abs, marked) => {
                out.marked.listed.insert(abs, marked);
            }
            Item::Dir(..) => unreachable!("deep walks descend into every folder they keep"),
        }
    }
}

impl RootWalk<'_> {
    /// Walks from `start` (`ignores` holds the `.gitignore` files above
    /// it); a shallow walk hands the folder's own folders back. Links are followed by
    /// walkdir, which knows their loops; otherwise each folder is listed
    /// once ([`RootWalk::walk_listed`]).
    fn walk(&self, start: Start<'_>, ignores: IgnoreStack) -> Vec<Item> {
        if self.options.follow_links { self.walk_links(start, ignores) } else { self.walk_listed(start, ignores) }
    }

    /// [`RootWalk::walk`], following links.
    fn walk_links(&self, from: Start<'_>, mut ignores: IgnoreStack) -> Vec<Item> {
        let Start { path: start, abs: start_abs, depth: offset, shallow } = from;
        let options = self.options;
        if !options.no_ignore && !shallow {
            ignores.push(offset, start_abs);
        }
        // The settings of the folders on the current walk path, by depth:
        // one look-up per folder, not per entry.
        let mut settings: Vec<(usize, Arc<Settings>)> = vec![(offset, self.resolver.for_abs_dir(start_abs))];
        let use_gitignore = !options.no_ignore;
        let mut items = Vec::new();
        let mut walker = walkdir::WalkDir::new(start).follow_links(options.follow_links).sort_by_file_name();
        if shallow {
            walker = walker.max_depth(1);
        }
        let mut walker = walker.into_iter();
        while let Some(entry) = walker.next() {
            let entry = match entry {
                Ok(entry) => entry,
                Err(err) => {
                    let path = err.path().map(Path::to_path_buf).unwrap_or_else(|| start.to_path_buf());
                    items.push(if err.loop_ancestor().is_some() {
                        Item::Warning(DiscoveryError { path, message: "symlink loop; not followed".to_owned() })
                    } else {
                        let message = err.io_error().map(|e| e.to_string()).unwrap_or_else(|| err.to_string());
                        Item::Error(DiscoveryError { path, message })
                    });
                    continue;
                }
            };
            if entry.depth() == 0 {
                continue;
            }
            let depth = entry.depth() + offset;
            let path = entry.path();
            let file_type = entry.file_type();
            let is_dir = file_type.is_dir();
            ignores.leave_to(depth - 1);
            while settings.len() > 1 && settings.last().is_some_and(|(d, _)| *d > depth - 1) {
                settings.pop();
            }
            let here = &settings.last().expect("the start's settings stay").1;
            let config = &here.config;
            let rel = path.strip_prefix(self.root).unwrap_or(path);
            let abs = self.root_abs.join(rel);
            let left_out = self.left_out(path, &abs, config, is_dir, &ignores) || (is_dir && is_venv(path, options));
            if is_dir {
                if left_out {
                    walker.skip_current_dir();
                } else if shallow {
                    items.push(Item::Dir(path.to_path_buf(), abs));
                } else {
                    if use_gitignore {
                        ignores.push(depth, &abs);
                    }
                    settings.push((depth, self.resolver.for_abs_dir(&abs)));
                }
                continue;
            }
            if !left_out && file_type.is_file() && is_python(path) {
                // Below a canonical root, a path is its own identity unless
                // links were followed to get there.
                let identity = if options.follow_links { std::fs::canonicalize(path).unwrap_or(abs) } else { abs };
                items.push(Item::File((path.to_path_buf(), identity, here.clone())));
            }
        }
        items
    }
}

/// A folder's entries, read once and sorted by name, with their types as
/// the listing gives them (no file is looked up).
struct Listing {
    entries: Vec<(std::ffi::OsString, std::fs::FileType)>,
}

impl Listing {
    fn read(dir: &Path) -> std::io::Result<Listing> {
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            entries.push((entry.file_name(), entry.file_type()?));
        }
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Ok(Listing { entries })
    }

    /// The kind of the folder's entry named `name`, if it has one.
    fn entry(&self, name: &str) -> Option<std::fs::FileType> {
        let at = self.entries.binary_search_by(|(n, _)| n.as_os_str().cmp(OsStr::new(name))).ok()?;
        Some(self.entries[at].1)
    }

    /// Whether the folder (`dir`) has an entry named `name` that exists, of
    /// any kind (a link: when what it points to exists).
    fn has(&self, dir: &Path, name: &str) -> bool {
        match self.entry(name) {
            Some(kind) if kind.is_symlink() => dir.join(name).exists(),
            kind => kind.is_some(),
        }
    }

    /// Whether the folder (`dir`) holds a file named `name`: a regular
    /// file, or a link to one.
    fn holds(&self, dir: &Path, name: &str) -> bool {
        match self.entry(name) {
            Some(kind) if kind.is_symlink() => dir.join(name).is_file(),
            kind => kind.is_some_and(|k| k.is_file()),
        }
    }
}

/// A folder the listing walk is in: its entries still to visit.
struct Open {
    entries: std::vec::IntoIter<(std::ffi::OsString, std::fs::FileType)>,
    path: PathBuf,
    abs: PathBuf,
    depth: usize,
    settings: Arc<Settings>,
}

impl RootWalk<'_> {
    /// Whether the entry `path` (`abs`, in a folder configured by
    /// `config`) is left out: by `--exclude`, the configuration, the
    /// built-in folder names or a `.gitignore` of `ignores` (whether a
    /// folder is a virtual environment its listing tells).
    fn left_out(
        &self,
        path: &Path,
        abs: &Path,
        config: &crate::config::ProjectConfig,
        is_dir: bool,
        ignores: &IgnoreStack,
    ) -> bool {
        excluded(path, self.excludes)
            || config.excludes(abs)
            || (is_dir && skipped_by_name(path, self.options, config.skips_default_folders()))
            || (!self.options.no_ignore && ignores.ignored(abs, is_dir))
    }

    /// [`RootWalk::walk`] without following links: each folder is listed
    /// once, and what it holds (`.gitignore`, `pyvenv.cfg`, configuration
    /// files) is read from its listing; a folder left out is never opened.
    fn walk_listed(&self, from: Start<'_>, mut ignores: IgnoreStack) -> Vec<Item> {
        let Start { path: start, abs: start_abs, depth: offset, shallow } = from;
        let mut items = Vec::new();
        let Some(first) = self.open(start, start_abs, offset, !shallow, &mut ignores, &mut items) else { return items };
        let mut stack = vec![first];
        while let Some(top) = stack.last_mut() {
            let Some((name, file_type)) = top.entries.next() else {
                let done = stack.pop().expect("the folder is on the stack");
                ignores.leave_to(done.depth.saturating_sub(1));
                continue;
            };
            let depth = top.depth + 1;
            let path = top.path.join(&name);
            let abs = top.abs.join(&name);
            let here = top.settings.clone();
            let is_dir = file_type.is_dir();
            if self.left_out(&path, &abs, &here.config, is_dir, &ignores) {
                continue;
            }
            if is_dir {
                if shallow {
                    items.push(Item::Dir(path, abs));
                } else if let Some(open) = self.open(&path, &abs, depth, true, &mut ignores, &mut items) {
                    stack.push(open);
                }
            } else if file_type.is_file() && is_python(&path) {
                // Below a canonical root, a path is its own identity.
                items.push(Item::File((path, abs, here)));
            }
        }
        items
    }

    /// Lists the folder `path` (at `depth`) to walk it: `None` when it
    /// cannot be read (an error in `items`) or is a virtual environment
    /// left out. A folder that is `entered` adds its `.gitignore` to
    /// `ignores`.
    fn open(
        &self,
        path: &Path,
        abs: &Path,
        depth: usize,
        entered: bool,
        ignores: &mut IgnoreStack,
        items: &mut Vec<Item>,
    ) -> Option<Open> {
        let listing = match Listing::read(path) {
            Ok(listing) => listing,
            Err(err) => {
                items.push(Item::Error(DiscoveryError { path: path.to_path_buf(), message: err.to_string() }));
                return None;
            }
        };
        let options = self.options;
        if depth > 0 && !options.no_ignore && listing.holds(path, "pyvenv.cfg") {
            return None;
        }
        if entered && !options.no_ignore && listing.holds(path, ".gitignore") {
            ignores.push_file(depth, abs);
        }
        let settings = self.resolver.for_listed_dir(abs, |name| listing.holds(path, name));
        let marked = PROJECT_MARKERS.iter().any(|name| listing.has(path, name));
        items.push(Item::Listed(abs.to_path_buf(), marked));
        Some(Open {
            entries: listing.entries.into_iter(),
            path: path.to_path_buf(),
            abs: abs.to_path_buf(),
            depth,
            settings,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn discover_isolated(paths: &[PathBuf], options: &WalkOptions) -> Result<Discovered, String> {
        discover(paths, options, &Resolver::isolated())
    }

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x = 1\n").unwrap();
    }

    fn names(found: &Discovered, root: &Path) -> Vec<String> {
        found.files.iter().map(|f| f.path.strip_prefix(root).unwrap().to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn the_walk_says_which_folders_hold_a_project_marker() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for f in ["app/pyproject.toml", "app/src/a.py", "lib/toolshape.toml", "lib/b.py", "plain/c.py", "repo/d.py"] {
            touch(&root.join(f));
        }
        // `.git` is a folder in a clone, a file in a worktree.
        std::fs::create_dir_all(root.join("repo/.git")).unwrap();
        touch(&root.join("wt/.git"));
        touch(&root.join("wt/e.py"));
        // A link to nothing is no marker, as `Path::exists` says.
        #[cfg(unix)]
        {
            touch(&root.join("dangling/f.py"));
            std::os::unix::fs::symlink(root.join("missing"), root.join("dangling/pyproject.toml")).unwrap();
        }
        let found = discover_isolated(std::slice::from_ref(&root), &WalkOptions::default()).unwrap();
        for folder in ["", "app", "app/src", "lib", "plain", "repo", "wt", "dangling"] {
            let abs = root.join(folder);
            let looked = PROJECT_MARKERS.iter().any(|m| abs.join(m).exists());
            assert_eq!(found.marked.holds_marker(&abs), Some(looked), "{folder}");
        }
        assert_eq!(found.marked.holds_marker(&root.join("app")), Some(true));
        assert_eq!(found.marked.holds_marker(&root.join("plain")), Some(false));
        // A folder the walk did not list is not known.
        assert_eq!(found.marked.holds_marker(root.parent().unwrap()), None);
    }

    #[test]
    fn walks_python_files_and_skips_the_usual_folders() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "a.py",
            "b.pyi",
            "c.txt",
            "pkg/d.py",
            "build/e.py",
            ".hidden/f.py",
            "venv2/g.py",
            "node_modules/h.py",
            "kept/i.py",
            "ignored/j.py",
            "k_ignored.py",
        ] {
            touch(&root.join(f));
        }
        std::fs::write(root.join("venv2/pyvenv.cfg"), "").unwrap();
        std::fs::write(root.join(".gitignore"), "ignored/\n*_ignored.py\n").unwrap();
        let found = discover_isolated(&[root.to_path_buf()], &WalkOptions::default()).unwrap();
        assert_eq!(names(&found, root), ["a.py", "b.pyi", "kept/i.py", "pkg/d.py"]);

        // Following links (walkdir's walk) sees the same tree.
        let followed =
            discover_isolated(&[root.to_path_buf()], &WalkOptions { follow_links: true, ..Default::default() })
                .unwrap();
        assert_eq!(names(&followed, root), names(&found, root));

        let all =
            discover_isolated(&[root.to_path_buf()], &WalkOptions { no_ignore: true, ..Default::default() }).unwrap();
        assert_eq!(all.files.len(), 10);
        let all_followed = discover_isolated(
            &[root.to_path_buf()],
            &WalkOptions { no_ignore: true, follow_links: true, ..Default::default() },
        )
        .unwrap();
        assert_eq!(names(&all_followed, root), names(&all, root));

        let some = discover_isolated(
            &[root.to_path_buf()],
            &WalkOptions { exclude: vec!["pkg".into(), "a.*".into()], ..Default::default() },
        )
        .unwrap();
        assert_eq!(names(&some, root), ["b.pyi", "kept/i.py"]);
    }

    #[test]
    fn explicit_files_and_missing_paths() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("script");
        touch(&script);
        let missing = dir.path().join("missing.py");
        let found =
            discover_isolated(&[script.clone(), missing.clone(), script.clone()], &WalkOptions::default()).unwrap();
        assert_eq!(found.files.iter().map(|f| &f.path).collect::<Vec<_>>(), [&script]);
        assert_eq!(found.errors, vec![DiscoveryError { path: missing, message: "no such file or directory".into() }]);
        let dotted = dir.path().join(".").join("script");
        let found = discover_isolated(&[dotted, script], &WalkOptions::default()).unwrap();
        assert_eq!(found.files.len(), 1, "one file under two spellings is checked once");
    }

    #[cfg(unix)]
    #[test]
    fn symlink_cycles_never_loop() {
        let dir = tempfile::tempdir().unwrap();
        touch(&dir.path().join("a/x.py"));
        std::os::unix::fs::symlink(dir.path(), dir.path().join("a/loop")).unwrap();
        let found = discover_isolated(&[dir.path().to_path_buf()], &WalkOptions::default()).unwrap();
        assert_eq!(found.files.len(), 1);
        let followed =
            discover_isolated(&[dir.path().to_path_buf()], &WalkOptions { follow_links: true, ..Default::default() })
                .unwrap();
        assert_eq!(followed.files.len(), 1);
        assert_eq!((followed.errors.len(), followed.warnings.len()), (0, 1));
    }
}
