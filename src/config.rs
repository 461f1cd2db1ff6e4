//! Project configuration: `[tool.toolshape]` in a `pyproject.toml`, or a
//! `toolshape.toml`, found by walking up from each file's folder (the nearest
//! one wins, as with ruff), or one file named with `--config`, or none with
//! `--isolated`. Reading is strict: an unknown key or a bad value is an error
//! that names the file, the key and what is allowed. The line length falls
//! back to `[tool.ruff]` / `[tool.black]` in the nearest `pyproject.toml`.
//!
//! This module owns the files and their meaning ([`Settings`]); the walk
//! asks it which paths are excluded, and the commands ask it for each file's
//! [`crate::contract::Rules`] and fix policy.

use foldhash::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;

use crate::apply::FixPolicy;
use crate::contract::Rules;
use crate::diagnostics::Code;
use crate::fix::AugmentText;

/// Black's and ruff's default.
pub const DEFAULT_LINE_LENGTH: usize = 88;

/// The longest line length accepted (ruff's limit).
pub const MAX_LINE_LENGTH: usize = 320;

/// The file names a project's own settings live in, by priority.
pub const CONFIG_FILES: [&str; 2] = ["toolshape.toml", "pyproject.toml"];

/// The keys of `[tool.toolshape]` / `toolshape.toml`, as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Options {
    /// Globs that replace the built-in list of skipped folders.
    pub exclude: Option<Vec<String>>,
    /// Globs excluded on top of `exclude` (or the built-in list).
    pub extend_exclude: Option<Vec<String>>,
    /// The rule codes to check (all when absent).
    pub select: Option<Vec<RuleCode>>,
    /// Rule codes not to check.
    pub ignore: Option<Vec<RuleCode>>,
    /// Whether `fix` applies unsafe fixes too.
    pub unsafe_fixes: Option<bool>,
    /// Whether fixes mention moved telemetry in the text block.
    pub augment_text: Option<AugmentText>,
    /// The line length rewrites are fitted to.
    pub line_length: Option<LineLength>,
    /// Extra top-level keys the project tolerates in tool results.
    pub allowed_keys: Option<Vec<String>>,
    /// The statuses a tool result may carry (TS006), replacing the
    /// contract's `success`, `error` and `degraded`.
    pub statuses: Option<Vec<String>>,
    /// The content block types (TS008), replacing the contract's.
    pub block_types: Option<Vec<String>>,
    /// The decorators (dotted names) that make a function a Strands tool
    /// (TS005), replacing `tool`, `strands.tool` and `strands.tools.tool`.
    pub tool_decorators: Option<Vec<String>>,
    /// The project's accessor of a result's json payload
    /// (`"module.path:function"`), for rewritten reads of moved keys.
    pub json_accessor: Option<Accessor>,
}

/// A `json-accessor` as written in a configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accessor(pub crate::fix::reads::JsonAccessor);

impl<'de> Deserialize<'de> for Accessor {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map(Accessor).map_err(serde::de::Error::custom)
    }
}

/// A rule code as written in a configuration file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleCode(pub Code);

impl<'de> Deserialize<'de> for RuleCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map(RuleCode).map_err(serde::de::Error::custom)
    }
}

/// A line length within `1..=MAX_LINE_LENGTH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineLength(pub usize);

impl<'de> Deserialize<'de> for LineLength {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = i64::deserialize(d)?;
        usize::try_from(n).ok().filter(|n| (1..=MAX_LINE_LENGTH).contains(n)).map(LineLength).ok_or_else(|| {
            serde::de::Error::custom(format!("line-length must be from 1 to {MAX_LINE_LENGTH}, not {n}"))
        })
    }
}

/// A `pyproject.toml`, as far as toolshape reads it. Other tables are
/// someone else's business and never rejected.
#[derive(Debug, Default, Deserialize)]
struct Pyproject {
    tool: Option<PyprojectTools>,
}

#[derive(Debug, Default, Deserialize)]
struct PyprojectTools {
    toolshape: Option<Options>,
    ruff: Option<toml::Table>,
    black: Option<toml::Table>,
}

impl PyprojectTools {
    /// `[tool.ruff]`'s line length, else `[tool.black]`'s.
    fn formatter_line_length(&self) -> Option<usize> {
        [&self.ruff, &self.black].into_iter().flatten().find_map(|table| {
            let n = table.get("line-length")?.as_integer()?;
            usize::try_from(n).ok().filter(|&n| n > 0)
        })
    }
}

/// A configuration file that could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

/// What one configuration file says, read and checked.
#[derive(Debug, Clone)]
pub struct ProjectConfig {
    /// The file, or `None` for the built-in defaults.
    pub origin: Option<PathBuf>,
    /// The folder `exclude` globs with a `/` are anchored to (absolute).
    pub root: PathBuf,
    pub options: Options,
    /// `[tool.ruff]`/`[tool.black]` line length of the same pyproject.toml.
    formatter_line_length: Option<usize>,
    excludes: Excludes,
}

/// Compiled `exclude` / `extend-exclude` globs of one configuration.
#[derive(Debug, Clone, Default)]
struct Excludes {
    /// Whether `exclude` replaced the built-in skipped folders.
    replaces_defaults: bool,
    /// Globs without `/`: matched against a file or folder name.
    names: GlobSet,
    /// Globs with `/`: matched against the path relative to the root.
    anchored: GlobSet,
}

impl Excludes {
    fn new(options: &Options) -> Result<Self, String> {
        let mut names = GlobSetBuilder::new();
        let mut anchored = GlobSetBuilder::new();
        let lists = [("exclude", &options.exclude), ("extend-exclude", &options.extend_exclude)];
        for (key, patterns) in lists {
            for pattern in patterns.iter().flatten() {
                let trimmed = pattern.trim_start_matches("./").trim_end_matches('/');
                let bad = |e: globset::Error| format!("invalid glob `{pattern}` in `{key}`: {}", e.kind());
                if trimmed.contains('/') {
                    anchored.add(GlobBuilder::new(trimmed).literal_separator(true).build().map_err(bad)?);
                } else {
                    names.add(Glob::new(trimmed).map_err(bad)?);
                }
            }
        }
        Ok(Excludes {
            replaces_defaults: options.exclude.is_some(),
            names: names.build().map_err(|e| e.to_string())?,
            anchored: anchored.build().map_err(|e| e.to_string())?,
        })
    }
}

impl ProjectConfig {
    /// The built-in defaults (no file).
    pub fn defaults() -> Self {
        ProjectConfig {
            origin: None,
            root: PathBuf::new(),
            options: Options::default(),
            formatter_line_length: None,
            excludes: Excludes::default(),
        }
    }

    /// Reads a `toolshape.toml` or a `pyproject.toml`. `Ok(None)`: a
    /// pyproject.toml without a `[tool.toolshape]` table.
    pub fn read(path: &Path) -> Result<Option<Self>, ConfigError> {
        let error = |message: String| ConfigError { path: path.to_path_buf(), message };
        let text = std::fs::read_to_string(path).map_err(|e| error(format!("cannot read: {e}")))?;
        let root = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let root =
            std::fs::canonicalize(if root.as_os_str().is_empty() { Path::new(".") } else { &root }).unwrap_or(root);
        let is_pyproject = path.file_name().is_some_and(|n| n == "pyproject.toml");
        Self::parse(&text, is_pyproject, root, path).map_err(error)
    }

    /// Reads configuration text (see [`ProjectConfig::read`]).
    pub fn parse(text: &str, is_pyproject: bool, root: PathBuf, origin: &Path) -> Result<Option<Self>, String> {
        if is_pyproject {
            return Self::of_pyproject(&toml::from_str(text), root, origin);
        }
        Self::of_options(toml::from_str(text).map_err(|e| describe(&e, ""))?, None, root, origin).map(Some)
    }

    /// The configuration a `pyproject.toml` parsed as `project` gives
    /// (see [`ProjectConfig::read`]).
    fn of_pyproject(
        project: &Result<Pyproject, toml::de::Error>,
        root: PathBuf,
        origin: &Path,
    ) -> Result<Option<Self>, String> {
        let tools = project.as_ref().map_err(|e| describe(e, "[tool.toolshape] "))?.tool.as_ref();
        match tools.and_then(|t| t.toolshape.clone()) {
            Some(options) => {
                let formatter = tools.and_then(PyprojectTools::formatter_line_length);
                Self::of_options(options, formatter, root, origin).map(Some)
            }
            None => Ok(None),
        }
    }

    /// The configuration `options` give (read from `origin`), with the
    /// line length of the formatter configured beside them.
    fn of_options(
        options: Options,
        formatter_line_length: Option<usize>,
        root: PathBuf,
        origin: &Path,
    ) -> Result<Self, String> {
        let excludes = Excludes::new(&options)?;
        Ok(ProjectConfig { origin: Some(origin.to_path_buf()), root, options, formatter_line_length, excludes })
    }

    /// The rules this configuration checks.
    pub fn rules(&self) -> Rules {
        let codes = |list: &Option<Vec<RuleCode>>| list.as_ref().map(|l| l.iter().map(|c| c.0).collect::<Vec<_>>());
        let select = codes(&self.options.select);
        let list = |l: &Option<Vec<String>>| l.clone().unwrap_or_default();
        Rules::new(
            select.as_deref(),
            &codes(&self.options.ignore).unwrap_or_default(),
            list(&self.options.allowed_keys),
        )
        .with_vocabulary(
            list(&self.options.statuses),
            list(&self.options.block_types),
            list(&self.options.tool_decorators),
        )
    }

    /// Whether the built-in skipped folders still apply.
    pub fn skips_default_folders(&self) -> bool {
        !self.excludes.replaces_defaults
    }

    /// Whether `exclude`/`extend-exclude` leave out `abs` (an absolute path).
    pub fn excludes(&self, abs: &Path) -> bool {
        let Excludes { names, anchored, .. } = &self.excludes;
        if names.is_empty() && anchored.is_empty() {
            return false;
        }
        abs.file_name().is_some_and(|name| names.is_match(name))
            || (!anchored.is_empty() && abs.strip_prefix(&self.root).is_ok_and(|rel| anchored.is_match(rel)))
    }
}

/// A toml error as one message: where, which key, what is allowed.
fn describe(error: &toml::de::Error, table: &str) -> String {
    let message = error.message().trim_end_matches('.');
    let at = error.span().map(|_| error.to_string()).unwrap_or_default();
    // toml's Display shows the line and a caret under the offending key; its
    // last line repeats the message, so keep only the location part.
    let location: Vec<&str> = at.lines().take_while(|l| !l.starts_with(message)).collect();
    let location = location.join("\n");
    let location = location.trim_end();
    if location.is_empty() {
        format!("invalid {table}configuration: {message}")
    } else {
        format!("invalid {table}configuration: {message}\n{location}")
    }
}

/// The settings that apply to the files of one folder.
#[derive(Debug, Clone)]
pub struct Settings {
    pub config: Arc<ProjectConfig>,
    pub line_length: usize,
    /// The nearest `[tool.ruff]`/`[tool.black]` line length at or above
    /// this folder (what folders below inherit).
    nearest_formatter: Option<usize>,
}

impl Default for Settings {
    /// The built-in defaults, as `--isolated` gives.
    fn default() -> Self {
        Settings::new(Arc::new(ProjectConfig::defaults()), None)
    }
}

impl Settings {
    /// The settings of `config`; the line length is its own, else the
    /// nearest formatter's, else its pyproject.toml's formatter's (for
    /// `--config`), else 88.
    fn new(config: Arc<ProjectConfig>, nearest_formatter: Option<usize>) -> Self {
        let line_length = config
            .options
            .line_length
            .map(|l| l.0)
            .or(nearest_formatter)
            .or(config.formatter_line_length)
            .unwrap_or(DEFAULT_LINE_LENGTH);
        Settings { config, line_length, nearest_formatter }
    }

    pub fn rules(&self) -> Rules {
        self.config.rules()
    }

    /// The fix policy for these files: the command line's flags win over
    /// the configuration, which wins over the defaults.
    /// The project's accessor of a result's json payload, if configured.
    pub fn json_accessor(&self) -> Option<crate::fix::reads::JsonAccessor> {
        self.config.options.json_accessor.as_ref().map(|a| a.0.clone())
    }

    pub fn fix_policy(&self, overrides: Overrides) -> FixPolicy {
        let options = &self.config.options;
        FixPolicy::new(
            self.rules(),
            overrides.unsafe_fixes.or(options.unsafe_fixes).unwrap_or(false),
            self.line_length,
            overrides.augment_text.or(options.augment_text).unwrap_or_default(),
        )
    }
}

/// Fix settings given on the command line, which override configuration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overrides {
    pub unsafe_fixes: Option<bool>,
    pub augment_text: Option<AugmentText>,
}

/// Where settings come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    /// The nearest configuration file above each file (the default).
    Discover,
    /// This file for every file (`--config`).
    File(PathBuf),
    /// No file at all (`--isolated`).
    Isolated,
}

/// Answers "which settings apply here?" for folders. Each folder is looked
/// at once (two `stat`s, and a read where a file exists): a folder without
/// files of its own shares its parent's answer. Errors are collected (each
/// once) for the command to report before it does any work.
pub struct Resolver {
    /// The one answer of `--config` / `--isolated`.
    fixed: Option<Arc<Settings>>,
    /// Folder (as spelled) → settings.
    by_dir: Mutex<HashMap<PathBuf, Arc<Settings>>>,
    /// Absolute folder → settings.
    by_abs_dir: Mutex<HashMap<PathBuf, Arc<Settings>>>,
    errors: Mutex<Vec<ConfigError>>,
}

impl Resolver {
    /// A resolver; `--config PATH` is read (and checked) right away.
    pub fn new(source: ConfigSource) -> Result<Self, ConfigError> {
        let fixed = match source {
            ConfigSource::Discover => None,
            ConfigSource::Isolated => Some(Arc::new(Settings::default())),
            ConfigSource::File(path) => {
                let config = ProjectConfig::read(&path)?
                    .ok_or_else(|| ConfigError { path, message: "has no [tool.toolshape] table".to_owned() })?;
                Some(Arc::new(Settings::new(Arc::new(config), None)))
            }
        };
        Ok(Resolver { fixed, by_dir: Mutex::default(), by_abs_dir: Mutex::default(), errors: Mutex::default() })
    }

    /// A resolver that reads no file (`--isolated`).
    pub fn isolated() -> Self {
        Resolver::new(ConfigSource::Isolated).expect("the defaults need no file")
    }

    /// The settings for the file `path`.
    pub fn for_file(&self, path: &Path) -> Arc<Settings> {
        self.for_dir(path.parent().unwrap_or(Path::new("")))
    }

    /// The settings for the files of folder `dir` (as spelled).
    pub fn for_dir(&self, dir: &Path) -> Arc<Settings> {
        if let Some(fixed) = &self.fixed {
            return fixed.clone();
        }
        if let Some(settings) = self.by_dir.lock().expect("settings lock").get(dir) {
            return settings.clone();
        }
        let spelled = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        let abs = std::fs::canonicalize(spelled).unwrap_or_else(|_| absolute(spelled));
        let settings = self.for_abs_dir(&abs);
        self.by_dir.lock().expect("settings lock").insert(dir.to_path_buf(), settings.clone());
        settings
    }

    /// The settings for the files of the absolute folder `abs`.
    pub fn for_abs_dir(&self, abs: &Path) -> Arc<Settings> {
        self.for_abs_dir_holding(abs, None)
    }

    /// [`Resolver::for_abs_dir`] for a folder whose listing a walk has
    /// read: `holds` says whether it holds a file of a name (no file is
    /// looked up).
    pub fn for_listed_dir(&self, abs: &Path, holds: impl Fn(&str) -> bool) -> Arc<Settings> {
        self.for_abs_dir_holding(abs, Some(&holds))
    }

    fn for_abs_dir_holding(&self, abs: &Path, holds: Option<&dyn Fn(&str) -> bool>) -> Arc<Settings> {
        if let Some(fixed) = &self.fixed {
            return fixed.clone();
        }
        if let Some(settings) = self.by_abs_dir.lock().expect("settings lock").get(abs) {
            return settings.clone();
        }
        let parent = abs.parent().map(|p| self.for_abs_dir(p));
        let settings = self.settings_of(abs, parent, holds);
        self.by_abs_dir.lock().expect("settings lock").insert(abs.to_path_buf(), settings.clone());
        settings
    }

    /// The configuration errors met so far, each once, sorted by file.
    pub fn errors(&self) -> Vec<ConfigError> {
        let mut errors = self.errors.lock().expect("errors lock").clone();
        errors.sort_by(|a, b| a.path.cmp(&b.path));
        errors.dedup();
        errors
    }

    /// Every configuration file in use so far, sorted.
    pub fn files_in_use(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = match &self.fixed {
            Some(settings) => settings.config.origin.iter().cloned().collect(),
            None => {
                let known = self.by_abs_dir.lock().expect("settings lock");
                known.values().filter_map(|s| s.config.origin.clone()).collect()
            }
        };
        files.sort();
        files.dedup();
        files
    }

    /// The settings of folder `abs` given its parent's: the parent's own
    /// when `abs` holds neither a toolshape.toml nor a pyproject.toml.
    fn settings_of(
        &self,
        abs: &Path,
        parent: Option<Arc<Settings>>,
        holds: Option<&dyn Fn(&str) -> bool>,
    ) -> Arc<Settings> {
        let toolshape_toml = abs.join(CONFIG_FILES[0]);
        let pyproject_toml = abs.join(CONFIG_FILES[1]);
        let (has_own, has_pyproject) = match holds {
            Some(holds) => (holds(CONFIG_FILES[0]), holds(CONFIG_FILES[1])),
            None => (toolshape_toml.is_file(), pyproject_toml.is_file()),
        };
        let parent = parent.unwrap_or_default();
        if !has_own && !has_pyproject {
            return parent;
        }
        // Parsed once, for its formatter's line length and its own table.
        let pyproject: Option<Result<Pyproject, toml::de::Error>> =
            has_pyproject.then(|| toml::from_str(&std::fs::read_to_string(&pyproject_toml).unwrap_or_default()));
        let formatter = pyproject.as_ref().and_then(|p| p.as_ref().ok()?.tool.as_ref()?.formatter_line_length());
        let nearest_formatter = formatter.or(parent.nearest_formatter);
        let read = |path: &Path, parsed: Option<&Result<Pyproject, toml::de::Error>>| {
            let result = match parsed {
                Some(parsed) => ProjectConfig::of_pyproject(parsed, abs.to_path_buf(), path)
                    .map_err(|message| ConfigError { path: path.to_path_buf(), message }),
                None => ProjectConfig::read(path),
            };
            result.unwrap_or_else(|error| {
                self.errors.lock().expect("errors lock").push(error);
                // A broken file still ends the search: the files below it
                // must not silently get someone else's settings.
                Some(ProjectConfig { origin: Some(path.to_path_buf()), ..ProjectConfig::defaults() })
            })
        };
        let own = if has_own { read(&toolshape_toml, None) } else { read(&pyproject_toml, pyproject.as_ref()) };
        let config = match own {
            Some(config) => Arc::new(config),
            None => parent.config.clone(),
        };
        Arc::new(Settings::new(config, nearest_formatter))
    }
}

/// `path` made absolute without touching the disk.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, pyproject: bool) -> Result<Option<ProjectConfig>, String> {
        ProjectConfig::parse(text, pyproject, PathBuf::from("/p"), Path::new("/p/pyproject.toml"))
    }

    #[test]
    fn every_key_is_read() {
        let text = "exclude = ['legacy']\nextend-exclude = ['gen/*.py']\nselect = ['TS001', 'TS002']\n\
                    ignore = ['TS002']\nunsafe-fixes = true\naugment-text = 'never'\nline-length = 100\n\
                    allowed-keys = ['trace']\n";
        let config = parse(text, false).unwrap().unwrap();
        assert_eq!(config.options.unsafe_fixes, Some(true));
        assert_eq!(config.options.augment_text, Some(AugmentText::Never));
        assert_eq!(config.options.line_length, Some(LineLength(100)));
        let rules = config.rules();
        assert!(rules.enabled(Code::ExtraKey) && !rules.enabled(Code::Spread));
        assert!(rules.allows_key("trace") && !rules.allows_key("frames"));
        assert!(!config.skips_default_folders());
        assert!(config.excludes(Path::new("/p/src/legacy")));
        assert!(config.excludes(Path::new("/p/gen/a.py")));
        assert!(!config.excludes(Path::new("/p/gen/deeper/a.py")), "`*` stays within a folder");
        assert!(!config.excludes(Path::new("/elsewhere/gen/a.py")));
    }

    #[test]
    fn a_json_accessor_names_a_module_and_a_function() {
        let config = parse("json-accessor = 'tests.support:tool_json'\n", false).unwrap().unwrap();
        let accessor = config.options.json_accessor.unwrap().0;
        assert_eq!((accessor.module.as_str(), accessor.name.as_str()), ("tests.support", "tool_json"));
        let bad = parse("json-accessor = 'tests.support.tool_json'\n", false).unwrap_err();
        assert!(bad.contains("module.path:function"), "{bad}");
    }

    #[test]
    fn pyproject_without_the_table_is_not_a_config() {
        assert!(parse("[project]\nname = 'x'\n[tool.ruff]\nunknown = 1\n", true).unwrap().is_none());
        let config = parse("[tool.toolshape]\n[tool.black]\nline-length = 99\n", true).unwrap().unwrap();
        assert_eq!(config.formatter_line_length, Some(99));
    }

    #[test]
    fn errors_name_the_key_and_what_is_allowed() {
        let unknown = parse("[tool.toolshape]\nselct = ['TS001']\n", true).unwrap_err();
        assert!(unknown.contains("unknown field `selct`") && unknown.contains("`select`"), "{unknown}");
        assert!(unknown.contains("line 2"), "{unknown}");
        let code = parse("select = ['TS099']\n", false).unwrap_err();
        assert!(code.contains("TS099") && code.contains("TS001, TS002, TS003, TS004, TS005"), "{code}");
        let augment = parse("augment-text = 'always'\n", false).unwrap_err();
        assert!(augment.contains("`safe`") && augment.contains("`never`"), "{augment}");
        let length = parse("line-length = 0\n", false).unwrap_err();
        assert!(length.contains("from 1 to 320"), "{length}");
        let kind = parse("unsafe-fixes = 'yes'\n", false).unwrap_err();
        assert!(kind.contains("unsafe-fixes") || kind.contains("boolean") || kind.contains("bool"), "{kind}");
        let glob = parse("exclude = ['a[']\n", false).unwrap_err();
        assert!(glob.contains("a[") && glob.contains("exclude"), "{glob}");
    }

    #[test]
    fn the_nearest_file_wins_and_line_length_falls_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("pyproject.toml"), "[tool.ruff]\nline-length = 60\n").unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/pyproject.toml"), "[tool.toolshape]\nallowed-keys = ['x']\n").unwrap();
        std::fs::write(root.join("a/b/toolshape.toml"), "line-length = 70\n").unwrap();
        let resolver = Resolver::new(ConfigSource::Discover).unwrap();
        let top = resolver.for_file(&root.join("t.py"));
        assert_eq!((top.config.origin.is_none(), top.line_length), (true, 60));
        let a = resolver.for_file(&root.join("a/t.py"));
        assert!(a.rules().allows_key("x"));
        assert_eq!(a.line_length, 60, "ruff's line length from the nearest pyproject.toml");
        let b = resolver.for_file(&root.join("a/b/t.py"));
        assert!(!b.rules().allows_key("x"), "the nearest file wins; files are not merged");
        assert_eq!(b.line_length, 70);
        assert!(resolver.errors().is_empty());

        // A nearer formatter setting beats the configuration file's own.
        std::fs::create_dir_all(root.join("a/c")).unwrap();
        std::fs::write(root.join("a/c/pyproject.toml"), "[tool.black]\nline-length = 50\n").unwrap();
        let c = resolver.for_file(&root.join("a/c/t.py"));
        assert!(c.rules().allows_key("x"), "a pyproject.toml without [tool.toolshape] passes the config on");
        assert_eq!(c.line_length, 50);

        let isolated = Resolver::new(ConfigSource::Isolated).unwrap();
        assert_eq!(isolated.for_file(&root.join("a/b/t.py")).line_length, DEFAULT_LINE_LENGTH);
        let fixed = Resolver::new(ConfigSource::File(root.join("a/pyproject.toml"))).unwrap();
        assert!(fixed.for_file(&root.join("a/b/t.py")).rules().allows_key("x"));
    }

    #[test]
    fn a_broken_file_is_reported_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("toolshape.toml"), "nope = 1\n").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let resolver = Resolver::new(ConfigSource::Discover).unwrap();
        resolver.for_file(&dir.path().join("a.py"));
        resolver.for_file(&dir.path().join("sub/b.py"));
        let errors = resolver.errors();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].message.contains("unknown field `nope`"));
        assert!(Resolver::new(ConfigSource::File(dir.path().join("toolshape.toml"))).is_err());
    }
}
