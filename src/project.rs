//! The project pass at the edge: which project each checked file belongs to
//! (the nearest folder above it holding a `pyproject.toml`, a
//! `toolshape.toml` or a `.git`, or `--project-root`, else the path it was
//! found under), the walk of each project with the same excludes, its index
//! of result builders ([`crate::semantic::project`]), and the TS003
//! findings of a file's text.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::config::Resolver;
use crate::contract::Rules;
use crate::diagnostics::{BuilderRef, Code, Finding, Origin, Span};
use crate::discovery::{self, WalkOptions};
use crate::semantic::project::Project;
use crate::source;
use crate::suppress::line_suppression;
use crate::syntax::LineIndex;

const MARKERS: [&str; 3] = ["pyproject.toml", "toolshape.toml", ".git"];

/// The projects of a run and the file each checked path is in them.
#[derive(Default)]
pub struct Projects {
    projects: Vec<Project>,
    /// Canonical path → (project, the path as the project indexed it).
    files: HashMap<PathBuf, (usize, PathBuf)>,
    cwd: PathBuf,
}

/// How to find the projects of a run.
pub struct ProjectOptions<'a> {
    /// `--project-root`: one project for every path.
    pub root: Option<&'a Path>,
    /// `--isolated`: the paths given are the project.
    pub isolated: bool,
}

impl Projects {
    /// The projects of `files` (found under `paths`), each walked with
    /// `walk` and its folders' settings, and indexed.
    pub fn discover(
        paths: &[PathBuf],
        files: &[PathBuf],
        options: &ProjectOptions<'_>,
        walk: &WalkOptions,
        resolver: &Resolver,
    ) -> Self {
        let cwd = std::env::current_dir().unwrap_or_default();
        let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
        // The root of each file.
        let mut roots: Vec<PathBuf> = Vec::new();
        let mut root_of: Vec<usize> = Vec::new();
        let given: Vec<PathBuf> = paths.iter().map(|p| absolute(p)).collect();
        for file in files {
            let abs = absolute(file);
            let root = match (options.root, options.isolated) {
                (Some(root), _) => absolute(root),
                (None, true) => given.iter().find(|g| abs.starts_with(g)).cloned().map_or_else(
                    || abs.parent().map(Path::to_path_buf).unwrap_or_default(),
                    |g| if g.is_file() { g.parent().map(Path::to_path_buf).unwrap_or_default() } else { g },
                ),
                (None, false) => nearest_marker(&abs).unwrap_or_else(|| {
                    given
                        .iter()
                        .filter(|g| abs.starts_with(g))
                        .max_by_key(|g| g.components().count())
                        .map(|g| {
                            if g.is_file() { g.parent().map(Path::to_path_buf).unwrap_or_default() } else { g.clone() }
                        })
                        .unwrap_or_else(|| abs.parent().map(Path::to_path_buf).unwrap_or_default())
                }),
            };
            let i = roots.iter().position(|r| *r == root).unwrap_or_else(|| {
                roots.push(root);
                roots.len() - 1
            });
            root_of.push(i);
        }
        let mut projects = Vec::new();
        let mut indexed = HashMap::new();
        for root in &roots {
            let walked = discovery::discover(std::slice::from_ref(root), walk, resolver)
                .map(|d| d.files.into_iter().map(|f| f.path).collect::<Vec<_>>())
                .unwrap_or_default();
            let walked: Vec<PathBuf> =
                walked.into_iter().filter(|p| p.extension().is_some_and(|e| e == "py")).collect();
            for path in &walked {
                indexed.insert(canonical(path), (projects.len(), path.clone()));
            }
            projects.push(Project::index(root, walked, |p| source::with_text(p, |text| text.to_owned()).ok()));
        }
        let mut files_map = HashMap::new();
        for (file, &i) in files.iter().zip(&root_of) {
            let key = canonical(file);
            let entry = indexed.get(&key).cloned().filter(|(p, _)| *p == i).unwrap_or((i, absolute(file)));
            files_map.insert(key, entry);
        }
        Projects { projects, files: files_map, cwd }
    }

    /// The TS003 findings of `text`, the current text of the checked file
    /// `path`, under `rules`: suppressions and allowed keys applied.
    pub fn builder_call_findings(&self, path: &Path, text: &str, rules: &Rules) -> Vec<Finding> {
        if !rules.enabled(Code::BuilderCall) {
            return Vec::new();
        }
        let Some((project, indexed)) = self.files.get(&canonical(path)) else { return Vec::new() };
        let project = &self.projects[*project];
        let calls = project.builder_calls(indexed, text);
        if calls.is_empty() {
            return Vec::new();
        }
        let index = LineIndex::new(text);
        let silenced = |at: usize| line_suppression(text, at).covers(Code::BuilderCall);
        let mut out = Vec::new();
        for call in calls {
            let builder = BuilderRef {
                name: call.builder.name.clone(),
                path: self.display(&call.builder.path),
                line: call.builder.line,
                column: call.builder.column,
            };
            let dict = call.call.range.clone();
            let mut push = |range: std::ops::Range<usize>, key: Option<String>, spread: Option<String>, expression| {
                if silenced(range.start) || silenced(dict.start) {
                    return;
                }
                out.push(Finding {
                    code: Code::BuilderCall,
                    key,
                    spread,
                    detail: None,
                    span: Span::new(&index, text, &range),
                    entry: range,
                    dict: dict.clone(),
                    dict_span: Span::new(&index, text, &dict),
                    fixable: None,
                    origin: Origin::BuilderCall,
                    expression,
                    builder: Some(builder.clone()),
                });
            };
            for (name, range) in &call.call.keywords {
                if !call.named.contains(name) && !rules.allows_key(name) {
                    push(range.clone(), Some(name.clone()), None, None);
                }
            }
            for (range, expression, passes_own) in &call.call.spreads {
                if passes_own.is_none() {
                    push(range.clone(), None, Some(text[range.clone()].to_owned()), Some(expression.clone()));
                }
            }
        }
        out.sort_by_key(|f| f.entry.start);
        out
    }

    /// A builder's path as findings spell it: relative to the working
    /// folder when under it.
    fn display(&self, path: &Path) -> String {
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
        abs.strip_prefix(&self.cwd).unwrap_or(&abs).display().to_string()
    }
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).or_else(|_| std::path::absolute(path)).unwrap_or_else(|_| path.to_owned())
}

/// The nearest folder above `file` that holds a project marker.
fn nearest_marker(file: &Path) -> Option<PathBuf> {
    file.ancestors().skip(1).find(|dir| MARKERS.iter().any(|m| dir.join(m).exists())).map(Path::to_path_buf)
}
