//! The command line: argument parsing (clap) and the commands' top-level
//! flow. Everything here is glue; the work happens in the library modules.

use rayon::prelude::*;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::check::{self, CheckOptions, FileOutcome};
use crate::config::{ConfigSource, Overrides, Resolver, Settings};
use crate::discovery::{self, FoundFile, WalkOptions};
use crate::fix::AugmentText;
use crate::progress::Progress;
use crate::project::{ProjectOptions, ProjectPlan, Projects};
use crate::report::{self, Format, Palette};
use crate::source;
use crate::syntax::ParseScope;
use crate::{fixer, review};

/// Exit status: no violations.
pub const EXIT_CLEAN: i32 = 0;
/// Exit status: violations found (or, for `fix --diff`, a diff printed).
pub const EXIT_FINDINGS: i32 = 1;
/// Exit status: usage error, missing path, unreadable file.
pub const EXIT_ERROR: i32 = 2;
/// Exit status: interrupted by SIGINT or SIGTERM (as a shell reports SIGINT).
pub const EXIT_INTERRUPTED: i32 = 130;

#[derive(Debug, Parser)]
#[command(
    name = "toolshape",
    version,
    about = "Find and fix Strands tool results that break the tool-result contract."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Report every tool-result contract violation.
    Check(CheckArgs),
    /// Move extra keys and spreads into a json content block.
    Fix(FixArgs),
    /// Print a shell completion script (e.g. `toolshape completions bash > ...`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Options shared by every command that reads a tree.
#[derive(Debug, Args)]
pub struct TreeArgs {
    /// Files or directories to check [default: .]
    pub paths: Vec<PathBuf>,
    /// Leave out files and folders matching this glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Walk everything: ignore .gitignore and the built-in skipped folders.
    #[arg(long)]
    pub no_ignore: bool,
    /// Follow symbolic links while walking directories.
    #[arg(long)]
    pub follow_links: bool,
    /// Parse every file whole instead of pre-filtering on the literals
    /// `"status"` and `"content"`; finds keys spelled only through escapes or
    /// concatenation.
    #[arg(long)]
    pub no_prefilter: bool,
    /// When to use colour.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Read the source from stdin (give `-` as the path) as if it were this
    /// file: its name in the output, its project's settings.
    #[arg(long, value_name = "PATH")]
    pub stdin_filename: Option<PathBuf>,
    /// Use this configuration file (a toolshape.toml, or a pyproject.toml
    /// with [tool.toolshape]) for every file, instead of the nearest one.
    #[arg(long, value_name = "PATH", conflicts_with = "isolated")]
    pub config: Option<PathBuf>,
    /// Read no configuration file at all: built-in defaults only; and the
    /// paths given are the project (result builders are looked for there only).
    #[arg(long)]
    pub isolated: bool,
    /// The project whose result builders the paths may call [default: the
    /// nearest folder above each file with a pyproject.toml, toolshape.toml
    /// or .git].
    #[arg(long, value_name = "DIR")]
    pub project_root: Option<PathBuf>,
    /// Apply the exclusions to paths named on the command line too (for
    /// pre-commit hooks and editors, which name every file).
    #[arg(long)]
    pub force_exclude: bool,
    /// Print findings, diffs and errors only: no summary, no warnings, no
    /// progress bar.
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also say which configuration files apply, how many files were found
    /// and how long the run took (on stderr).
    #[arg(short, long)]
    pub verbose: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub tree: TreeArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Print counts per rule instead of each finding.
    #[arg(long)]
    pub statistics: bool,
    /// Also report toolshape suppression comments that silence nothing (TS100).
    #[arg(long)]
    pub report_unused_ignores: bool,
    /// Write a suppression comment for every current finding, so that CI
    /// gates only new violations (a baseline for legacy code).
    #[arg(long, conflicts_with_all = ["statistics", "report_unused_ignores"])]
    pub add_ignores: bool,
}

#[derive(Debug, Args)]
pub struct FixArgs {
    #[command(flatten)]
    pub tree: TreeArgs,
    /// Write nothing; print a unified diff that `git apply` accepts.
    #[arg(long)]
    pub diff: bool,
    /// Also apply fixes that may change behaviour (each says why).
    #[arg(long, overrides_with = "no_unsafe_fixes")]
    pub unsafe_fixes: bool,
    /// Apply safe fixes only, whatever the configuration says.
    #[arg(long, overrides_with = "unsafe_fixes")]
    pub no_unsafe_fixes: bool,
    /// Leave the reads of moved keys as they are (fixes whose keys the
    /// project reads then stay unsafe).
    #[arg(long)]
    pub no_rewrite_reads: bool,
    /// Mention moved telemetry in the text block where that is provably safe
    /// [default: safe, or the configuration's `augment-text`].
    #[arg(long, value_enum, value_name = "WHEN")]
    pub augment_text: Option<AugmentText>,
    /// Show each fix with its diff and decide it (y/n/a/d/k/A/q, ? for help);
    /// unsafe fixes are offered too. Needs a terminal.
    #[arg(short = 'i', long, conflicts_with = "diff")]
    pub interactive: bool,
    /// Also write a Markdown summary (for a pull-request body) to FILE.
    #[arg(long, value_name = "FILE")]
    pub summary_md: Option<PathBuf>,
    /// Make the summary's links absolute: URL/path#Lline, for a URL such as
    /// https://github.com/OWNER/REPO/blob/BRANCH (the pull request's branch).
    #[arg(long, value_name = "URL", requires = "summary_md")]
    pub summary_link_base: Option<String>,
}

impl TreeArgs {
    /// The name stdin's source goes by, when the source comes from stdin.
    fn stdin_name(&self) -> Option<PathBuf> {
        let dash = self.paths.len() == 1 && self.paths[0].as_os_str() == "-";
        (dash || (self.paths.is_empty() && self.stdin_filename.is_some()))
            .then(|| self.stdin_filename.clone().unwrap_or_else(|| PathBuf::from("-")))
    }

    fn walk_options(&self) -> WalkOptions {
        WalkOptions {
            exclude: self.exclude.clone(),
            no_ignore: self.no_ignore,
            follow_links: self.follow_links,
            force_exclude: self.force_exclude,
        }
    }

    fn config_source(&self) -> ConfigSource {
        match (&self.config, self.isolated) {
            (Some(path), _) => ConfigSource::File(path.clone()),
            (None, true) => ConfigSource::Isolated,
            (None, false) => ConfigSource::Discover,
        }
    }

    /// Where settings come from, as the flags say; a `--config` file that
    /// cannot be used is reported here.
    fn resolver(&self) -> Option<Resolver> {
        match Resolver::new(self.config_source()) {
            Ok(resolver) => Some(resolver),
            Err(error) => {
                report_error(&error.path.display().to_string(), &error.message);
                None
            }
        }
    }

    /// Reports the configuration errors met so far; true if there were any
    /// (the run stops: no file is checked under a configuration it cannot
    /// read).
    fn config_failed(&self, resolver: &Resolver) -> bool {
        let errors = resolver.errors();
        for error in &errors {
            report_error(&error.path.display().to_string(), &error.message);
        }
        !errors.is_empty()
    }

    /// Says, with `--verbose`, which configuration files are in use.
    fn tell_config(&self, resolver: &Resolver, files: usize) {
        if !self.verbose {
            return;
        }
        let configs = resolver.files_in_use();
        if configs.is_empty() {
            eprintln!("toolshape: no configuration file; built-in defaults");
        }
        for config in configs {
            eprintln!("toolshape: configuration {}", config.display());
        }
        eprintln!("toolshape: {} to check", report::plural(files, "file"));
    }

    /// Discovers the files, each with its settings: `None` (after saying
    /// why) when the run cannot go on.
    fn files_and_settings(&self, errors: &mut usize) -> Option<Vec<FoundFile>> {
        self.files_settings_and_marks(errors).map(|(files, _)| files)
    }

    /// [`TreeArgs::files_and_settings`], and which folders the walk found
    /// a project marker in.
    fn files_settings_and_marks(&self, errors: &mut usize) -> Option<(Vec<FoundFile>, discovery::MarkedFolders)> {
        let resolver = self.resolver()?;
        let (files, marked) = self.discover(errors, &resolver)?;
        if self.config_failed(&resolver) {
            return None;
        }
        self.tell_config(&resolver, files.len());
        Some((files, marked))
    }

    fn scope(&self) -> ParseScope {
        if self.no_prefilter { ParseScope::WholeFile } else { ParseScope::Candidates }
    }

    fn palette(&self) -> Palette {
        let enabled = match self.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        };
        Palette { enabled }
    }

    /// The paths to walk, `.` when none were given.
    fn roots(&self) -> Vec<PathBuf> {
        if self.paths.is_empty() { vec![PathBuf::from(".")] } else { self.paths.clone() }
    }

    /// The settings stdin's source gets as `name`, or `None` when
    /// `--force-exclude` leaves that name out; `Err` (an exit status) after
    /// reporting a configuration that cannot be used.
    fn stdin_settings(&self, name: &std::path::Path) -> Result<Option<Arc<Settings>>, i32> {
        let resolver = self.resolver().ok_or(EXIT_ERROR)?;
        let settings = resolver.for_file(name);
        let excluded = discovery::force_excluded(name, &self.walk_options(), &resolver);
        if self.config_failed(&resolver) {
            return Err(EXIT_ERROR);
        }
        match excluded {
            Ok(excluded) => Ok((!excluded).then_some(settings)),
            Err(message) => {
                eprintln!("error: {message}");
                Err(EXIT_ERROR)
            }
        }
    }

    /// The projects `files` belong to, their roots not yet walked.
    fn unwalked_plan(&self, files: &[PathBuf], marked: Option<&discovery::MarkedFolders>) -> ProjectPlan {
        let options = ProjectOptions { root: self.project_root.as_deref(), isolated: self.isolated, marked };
        ProjectPlan::new(&self.roots(), files, &options)
    }

    /// Walks the roots of `plan`.
    fn walk_plan(&self, plan: ProjectPlan) -> ProjectPlan {
        let resolver = Resolver::new(self.config_source()).unwrap_or_else(|_| Resolver::isolated());
        plan.walk(&self.walk_options(), &resolver)
    }

    /// The projects `files` (each with its rules) belong to, indexed by
    /// reading them.
    fn projects(&self, files: Vec<(PathBuf, crate::contract::Rules)>) -> Projects {
        let (paths, rules): (Vec<PathBuf>, Vec<_>) = files.into_iter().unzip();
        self.walk_plan(self.unwalked_plan(&paths, None)).index(Vec::new(), rules)
    }

    /// The project stdin's source (`text`, read as the file `name` under
    /// `rules`) stands in, indexed with that text in place of the file's
    /// (whether or not a file has that name). No path is given: the folder
    /// the run starts in is no folder given, so the project is walked whole.
    fn stdin_projects(&self, name: &std::path::Path, text: &str, rules: crate::contract::Rules) -> Projects {
        let options = ProjectOptions { root: self.project_root.as_deref(), isolated: self.isolated, marked: None };
        let plan = self.walk_plan(ProjectPlan::new(&[], &[name.to_path_buf()], &options));
        let known = crate::semantic::project::Known {
            text: Some(text.into()),
            ..crate::semantic::project::Known::of(text, true)
        };
        plan.index(vec![Some(known)], vec![rules])
    }

    /// The first phase of `fix` (and of the review): each file read once
    /// and fixed as far as it alone says (the projects' roots walked beside
    /// it; only a violating file's bytes are kept), the projects indexed,
    /// and the reads of moved keys found (they make fixes unsafe, and need
    /// every file's findings, its calls of builders too, first).
    fn fix_phase_one(
        &self,
        files: &[FoundFile],
        options: &fixer::FixOptions,
    ) -> (Projects, Vec<Result<fixer::Seen, String>>) {
        let paths: Vec<PathBuf> = files.iter().map(|f| f.path.clone()).collect();
        let walk = |plan| self.walk_plan(plan);
        let (mut projects, early) =
            check::first_phase(files, self.unwalked_plan(&paths, None), walk, |file, bytes, text| {
                fixer::first_look(bytes, text, options, &file.settings)
            });
        check::attach_fix_reads(files, &early, &mut projects, options);
        // Tools that return what is not a tool result (TS005): their
        // displays are fixed too.
        projects.not_a_result_findings(options.scope, |j| files[j].settings.fix_policy(options.overrides).rules);
        (projects, early)
    }

    /// Discovers files; discovery errors are reported on stderr.
    fn discover(&self, errors: &mut usize, resolver: &Resolver) -> Option<(Vec<FoundFile>, discovery::MarkedFolders)> {
        match discovery::discover(&self.roots(), &self.walk_options(), resolver) {
            Ok(found) => {
                for err in &found.errors {
                    report_error(&err.path.display().to_string(), &err.message);
                    *errors += 1;
                }
                for warning in found.warnings.iter().filter(|_| !self.quiet) {
                    eprintln!("warning: {}: {}", warning.path.display(), warning.message);
                }
                Some((found.files, found.marked))
            }
            Err(message) => {
                eprintln!("error: {message}");
                None
            }
        }
    }
}

fn report_error(path: &str, message: &str) {
    eprintln!("error: {path}: {message}");
}

/// With `--verbose`, how long the run took.
fn tell_elapsed(tree: &TreeArgs, started: std::time::Instant) {
    if tree.verbose {
        for line in crate::stats::work().lines() {
            eprintln!("toolshape: {line}");
        }
        eprintln!("toolshape: done in {:.2?}", started.elapsed());
    }
}

/// Writes to stdout; a closed pipe (`| head`) ends the program quietly.
fn emit(out: &mut impl Write, line: &str) {
    if writeln!(out, "{line}").is_err() {
        std::process::exit(EXIT_ERROR);
    }
}

/// What a run is about to do, for the program around the library to tune
/// itself by ([`main_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    /// `check`, before its files are found.
    Check,
    /// `check`, about to read `files` files.
    Checking { files: usize },
    /// Any other command.
    Other,
}

static ON_RUN: std::sync::OnceLock<fn(Run)> = std::sync::OnceLock::new();

fn tell(run: Run) {
    if let Some(on_run) = ON_RUN.get() {
        on_run(run);
    }
}

/// [`main`], telling `on_run` what the run is about to do: the command, and
/// for `check` how many files it reads, once they are found and before any
/// is read. The binary tunes its memory by it.
pub fn main_with(on_run: fn(Run)) -> i32 {
    let _ = ON_RUN.set(on_run);
    main()
}

/// Runs the command line and returns the exit status.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return if err.use_stderr() { EXIT_ERROR } else { EXIT_CLEAN };
        }
    };
    tell(if matches!(&cli.command, Command::Check(args) if !args.add_ignores) { Run::Check } else { Run::Other });
    match cli.command {
        Command::Check(args) => run_check(&args),
        Command::Fix(args) => run_fix(&args),
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "toolshape",
                &mut io::stdout(),
            );
            EXIT_CLEAN
        }
    }
}

fn run_check(args: &CheckArgs) -> i32 {
    let started = std::time::Instant::now();
    if args.add_ignores {
        return run_add_ignores(args);
    }
    let mut errors = 0;
    let stdin_name = args.tree.stdin_name();
    // Stdin's source gets the rules its name would get.
    let (files, marked, stdin) = match stdin_name {
        Some(name) => match args.tree.stdin_settings(&name) {
            Ok(Some(settings)) => (Vec::new(), None, Some((name, settings.rules()))),
            // Excluded (with --force-exclude): nothing to check.
            Ok(None) => (Vec::new(), None, None),
            Err(status) => return status,
        },
        None => match args.tree.files_settings_and_marks(&mut errors) {
            Some((found, marked)) => (found, Some(marked), None),
            None => return EXIT_ERROR,
        },
    };
    tell(Run::Checking { files: files.len() });
    crate::stats::phase("discovery", started.elapsed());
    let options = CheckOptions { scope: args.tree.scope(), report_unused_ignores: args.report_unused_ignores };
    // The projects are walked while the files are checked (stdin's project
    // is its own: `TreeArgs::stdin_projects`).
    let plan_paths: Vec<PathBuf> = files.iter().map(|f| f.path.clone()).collect();
    let plan = args.tree.unwalked_plan(&plan_paths, marked.as_ref());
    let walk = |plan| args.tree.walk_plan(plan);
    let palette = args.tree.palette();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut tally = report::CheckTally::default();
    if args.format == Format::Json && !args.statistics {
        emit(&mut out, "[");
    }
    let mut progress = Progress::new(files.len(), !args.tree.quiet);
    // SARIF and JUnit are single documents: their findings are kept.
    let mut kept: Vec<(PathBuf, crate::diagnostics::Finding)> = Vec::new();
    let mut sink = |FileOutcome { path, result, notes }: FileOutcome| {
        progress.advance();
        if !args.tree.quiet {
            for note in &notes {
                progress.suspend(|| {
                    let _ = out.flush();
                    eprintln!("warning: {}: {note}", path.display());
                });
            }
        }
        match result {
            Err(message) => progress.suspend(|| {
                let _ = out.flush();
                report_error(&path.display().to_string(), &message);
                errors += 1;
            }),
            Ok(findings) => {
                let mut lines = Vec::new();
                for f in findings.iter().filter(|_| !args.statistics) {
                    lines.push(match args.format {
                        Format::Sarif | Format::Junit => {
                            kept.push((path.clone(), f.clone()));
                            continue;
                        }
                        Format::Text => report::text_finding(&path, f, palette),
                        Format::Github => report::github_finding(&path, f),
                        Format::Json => {
                            let sep = if tally.violations == 0 && f == &findings[0] { "  " } else { ", " };
                            format!("{sep}{}", report::json_finding(&path, f))
                        }
                    });
                }
                if !lines.is_empty() {
                    let shown = progress.is_shown();
                    progress.suspend(|| {
                        for line in &lines {
                            emit(&mut out, line);
                        }
                        if shown {
                            let _ = out.flush();
                        }
                    });
                }
                tally.add(&findings);
            }
        }
    };
    match stdin {
        Some((name, rules)) => {
            let mut notes = Vec::new();
            let result = read_stdin().and_then(|bytes| {
                let text = source::text_of(&bytes)?;
                let mut findings = check::check_with_facts(&text, &options, &rules, false, Vec::new(), Vec::new()).0;
                let mut projects = args.tree.stdin_projects(&name, &text, rules.clone());
                check::add_project_findings(&mut findings, &projects, &name, &text, &options, &rules);
                findings.extend(check::stdin_not_results(&mut projects, options.scope, &rules));
                findings.sort_by_key(|f| (f.entry.start, f.code));
                let unsafe_fixes = match args.tree.stdin_settings(&name) {
                    Ok(Some(settings)) => settings.fix_policy(Default::default()).unsafe_fixes,
                    _ => false,
                };
                let (mut findings, _) =
                    check::stdin_reads(findings, &mut projects, (&name, &text), &options, (&rules, unsafe_fixes));
                check::stdin_unused_ignores(&mut findings, (&name, &text), &projects, &options, &rules);
                if !findings.is_empty()
                    && let Some(line) = check::legacy_line(&text)
                {
                    findings.clear();
                    notes.push(check::legacy_note(line));
                }
                Ok(findings)
            });
            sink(FileOutcome { path: name, result, notes });
        }
        None => check::check_files(files, &options, plan, walk, &mut sink),
    }
    progress.finish();
    let quiet = args.tree.quiet;
    match (args.format, args.statistics) {
        (Format::Json, true) => emit(&mut out, &tally.statistics_json()),
        (Format::Json, false) => emit(&mut out, "]"),
        (_, true) => {
            for line in tally.statistics_lines() {
                emit(&mut out, &line);
            }
            if !quiet {
                emit(&mut out, &tally.summary());
            }
        }
        (Format::Text, false) if !quiet => emit(&mut out, &tally.summary()),
        (Format::Sarif, false) => emit(&mut out, &report::sarif(&kept)),
        (Format::Junit, false) => emit(&mut out, &report::junit(&kept, tally.files_checked)),
        (Format::Text | Format::Github, false) => {}
    }
    let _ = out.flush();
    tell_elapsed(&args.tree, started);
    exit_status(errors, tally.violations > 0)
}

/// `check --add-ignores`: a suppression comment for every current finding,
/// written in place (atomically, in the file's own encoding); files that
/// would not re-parse as before are left alone and reported.
fn run_add_ignores(args: &CheckArgs) -> i32 {
    if args.tree.stdin_name().is_some() {
        eprintln!("error: --add-ignores writes files; it cannot read stdin");
        return EXIT_ERROR;
    }
    let mut errors = 0;
    let Some(files) = args.tree.files_and_settings(&mut errors) else {
        return EXIT_ERROR;
    };
    if let Err(message) = crate::apply::exit_on_interrupt(
        EXIT_INTERRUPTED,
        "Interrupted: every file has either all its suppressions or none; run the command again to finish.",
    ) {
        eprintln!("warning: an interrupt could not be made safe: {message}");
    }
    let options = CheckOptions::new(args.tree.scope());
    let mut projects = args.tree.projects(files.iter().map(|f| (f.path.clone(), f.settings.rules())).collect());
    // Tools that return what is not a tool result (TS005) are found
    // project-wide, once; each file's join its other findings.
    let not_results = projects.not_a_result_findings(options.scope, |j| files[j].settings.rules());
    let projects = &projects;
    let (mut added, mut files_changed, mut left) = (0, 0, 0);
    check::par_map_ordered(
        files.into_iter().zip(not_results).collect(),
        |(FoundFile { path, settings }, not_results)| {
            let outcome =
                crate::baseline::add_ignores_to_file(&path, &options, &settings.rules(), projects, not_results);
            (path, outcome)
        },
        |(path, outcome)| match outcome {
            Err(message) => {
                report_error(&path.display().to_string(), &message);
                errors += 1;
            }
            Ok(file) => {
                added += file.added;
                files_changed += usize::from(file.added > 0);
                for (line, why) in &file.skipped {
                    eprintln!("{}:{line}: no suppression added: {why}", path.display());
                    left += 1;
                }
            }
        },
    );
    if !args.tree.quiet {
        println!(
            "Added {} in {}.",
            report::plural(added, "suppression comment"),
            report::plural(files_changed, "file")
        );
    }
    exit_status(errors, left > 0)
}

fn exit_status(errors: usize, findings: bool) -> i32 {
    if errors > 0 {
        EXIT_ERROR
    } else if findings {
        EXIT_FINDINGS
    } else {
        EXIT_CLEAN
    }
}

fn read_stdin() -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut io::stdin(), &mut bytes).map_err(|e| format!("cannot read stdin: {e}"))?;
    Ok(bytes)
}

impl FixArgs {
    /// The fix settings the command line sets (over the configuration).
    fn overrides(&self) -> Overrides {
        let unsafe_fixes = match (self.unsafe_fixes, self.no_unsafe_fixes) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        };
        Overrides { unsafe_fixes, augment_text: self.augment_text }
    }
}

/// `fix --stdin-filename PATH -`: the fixed source goes to stdout (with
/// `--diff`, a patch of it instead), what is left to stderr.
fn run_fix_stdin(args: &FixArgs, name: &std::path::Path) -> i32 {
    let policy = match args.tree.stdin_settings(name) {
        Ok(Some(settings)) => settings.fix_policy(args.overrides()),
        // Excluded (with --force-exclude): the source goes through as it is
        // (with `--diff`, no patch).
        Ok(None) => {
            let passed = |bytes: Vec<u8>| match args.diff {
                true => Ok(()),
                false => io::stdout().write_all(&bytes).map_err(|e| e.to_string()),
            };
            return match read_stdin().and_then(passed) {
                Ok(()) => EXIT_CLEAN,
                Err(message) => {
                    report_error(&name.display().to_string(), &message);
                    EXIT_ERROR
                }
            };
        }
        Err(status) => return status,
    };
    let source = match read_stdin().and_then(source::SourceText::decode) {
        Ok(source) => source,
        Err(message) => {
            report_error(&name.display().to_string(), &message);
            return EXIT_ERROR;
        }
    };
    let mut projects = args.tree.stdin_projects(name, &source.text, policy.rules.clone());
    let mut policy = policy;
    policy.builders = projects.builder_specs(name);
    // The project's reads of the keys its fixes move keep those fixes
    // unsafe: the reads stand in other files, which stdin cannot rewrite.
    let options = CheckOptions::new(args.tree.scope());
    let mut found =
        check::check_with_facts(&source.text, &options, &policy.rules, false, policy.builders.clone(), Vec::new()).0;
    found.extend(projects.builder_call_findings(name, &source.text, &policy.rules));
    policy.not_results = check::stdin_not_results(&mut projects, options.scope, &policy.rules);
    let (_, reasons) =
        check::stdin_reads(found, &mut projects, (name, &source.text), &options, (&policy.rules, policy.unsafe_fixes));
    policy.read_reasons = reasons;
    let mut fixed = crate::apply::fix_text(&source.text, &policy);
    fixed.leftovers.extend(projects.builder_call_leftovers(name, &fixed.text, &policy));
    if args.diff {
        return stdin_patch(args, name, source, fixed);
    }
    let bytes = match source.encode(&fixed.text) {
        Ok(bytes) => bytes,
        Err(message) => {
            report_error(&name.display().to_string(), &message);
            return EXIT_ERROR;
        }
    };
    if io::stdout().write_all(&bytes).and_then(|_| io::stdout().flush()).is_err() {
        return EXIT_ERROR;
    }
    for line in fixer::leftover_lines(name, &fixed.leftovers, args.tree.palette()) {
        eprintln!("{line}");
    }
    let bug = fixed.leftovers.iter().any(|l| l.why == crate::apply::LeftBecause::BrokeSyntax);
    exit_status(usize::from(bug), !fixed.leftovers.is_empty())
}

/// `fix --diff` of stdin's `source`: the patch from it to its `fixed` text
/// on stdout, what is left (at its place in `source`) on stderr; exit 1
/// when there is a patch.
fn stdin_patch(
    args: &FixArgs,
    name: &std::path::Path,
    source: source::SourceText,
    fixed: crate::apply::FixedText,
) -> i32 {
    let mut file = fixer::FileFix {
        bom: source.bom,
        encoding: source.encoding,
        original: source.text,
        fixed,
        write_error: None,
        reads_rewritten: 0,
        notes: Vec::new(),
    };
    file.trace_lines_to_original();
    let palette = args.tree.palette();
    if io::stdout().write_all(&file.patch(name, palette)).and_then(|_| io::stdout().flush()).is_err() {
        return EXIT_ERROR;
    }
    for line in fixer::leftover_lines(name, &file.fixed.leftovers, palette) {
        eprintln!("{line}");
    }
    let bug = file.fixed.leftovers.iter().any(|l| l.why == crate::apply::LeftBecause::BrokeSyntax);
    exit_status(usize::from(bug), file.fixed.text != file.original)
}

fn run_fix(args: &FixArgs) -> i32 {
    if let Some(name) = args.tree.stdin_name() {
        return run_fix_stdin(args, &name);
    }
    if args.interactive {
        return run_review(args);
    }
    run_fix_tree(args, !args.no_rewrite_reads)
}

/// `fix` over the paths given. When reads are rewritten (`rewrite_reads`),
/// nothing is written or printed until every file is fixed and each fix
/// a rewritten read depends on is known to have applied; if one did not
/// (a fix dropped by the re-parse guard), the run starts again without
/// rewriting reads.
fn run_fix_tree(args: &FixArgs, rewrite_reads: bool) -> i32 {
    let started = std::time::Instant::now();
    let mut errors = 0;
    let Some(files) = args.tree.files_and_settings(&mut errors) else {
        return EXIT_ERROR;
    };
    let palette = args.tree.palette();
    let options = fixer::FixOptions {
        overrides: args.overrides(),
        write: !args.diff,
        scope: args.tree.scope(),
        planner: crate::fix::plan_source,
        rewrite_reads,
    };
    let (projects, early) = args.tree.fix_phase_one(&files, &options);
    // With reads to rewrite, files are written once all are fixed.
    let deferred = projects.rewrites_reads();
    let options = fixer::FixOptions { write: options.write && !deferred, ..options };
    // (Once: a run started again keeps the handler of the first.)
    let again = rewrite_reads == args.no_rewrite_reads;
    if !args.diff
        && !again
        && let Err(message) = crate::apply::exit_on_interrupt(
            EXIT_INTERRUPTED,
            "Interrupted: every file is either fixed or as it was; run `toolshape fix` again to finish.",
        )
    {
        eprintln!("warning: an interrupt could not be made safe: {message}");
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut tally = fixer::FixTally::default();
    let mut progress = Progress::new(files.len(), !args.tree.quiet);
    // What the Markdown summary lists: per file, fixes applied and left.
    let mut reported: Vec<fixer::FileReport> = Vec::new();
    let work = |(j, (FoundFile { path, settings }, seen)): (usize, (FoundFile, Result<fixer::Seen, String>))| {
        let reads = fixer::FileReads::of(&projects, j);
        let outcome = seen.and_then(|seen| fixer::fix_file(&path, &options, &settings, &projects, seen, reads));
        (path, outcome)
    };
    let mut items = Some(files.into_iter().zip(early).enumerate().collect::<Vec<_>>());
    let mut held: Vec<(PathBuf, Result<fixer::FileFix, String>)> = Vec::new();
    if deferred {
        check::par_map_ordered(items.take().unwrap_or_default(), work, |done| {
            progress.advance();
            held.push(done);
        });
        let missed: usize = held.iter().filter_map(|(_, o)| o.as_ref().ok()).map(|f| f.fixed.missed).sum();
        if missed > 0 {
            progress.finish();
            eprintln!(
                "warning: {} that rewritten reads depend on did not apply (or a rewrite would break the syntax); fixing again without rewriting reads",
                crate::report::plural(missed, "fix")
            );
            return run_fix_tree(args, false);
        }
        if !args.diff {
            held.par_iter_mut().for_each(|(path, outcome)| {
                if let Ok(file) = outcome {
                    file.write(path);
                }
            });
        }
    }
    let mut report = |(path, outcome): (PathBuf, Result<fixer::FileFix, String>)| {
        if !deferred {
            progress.advance();
        }
        let shown = path.display().to_string();
        let mut file = match outcome {
            Ok(file) => file,
            Err(message) => {
                progress.suspend(|| {
                    let _ = out.flush();
                    report_error(&shown, &message);
                });
                errors += 1;
                return;
            }
        };
        if args.diff {
            // Nothing is written: lines point into the file as it is.
            file.trace_lines_to_original();
        }
        tally.add(&file);
        if args.summary_md.is_some() {
            let report = fixer::FileReport::of(&path, &file);
            if !report.is_empty() {
                reported.push(report);
            }
        }
        let problems = file.problems();
        errors += problems.len();
        let leftovers = fixer::leftover_lines(&path, &file.fixed.leftovers, palette);
        let mut reads_left =
            if args.tree.quiet { Vec::new() } else { fixer::reads_left_lines(&path, &file.fixed.applied) };
        if !args.tree.quiet {
            reads_left.extend(file.notes.iter().map(|note| format!("warning: {shown}: {note}")));
        }
        if problems.is_empty()
            && leftovers.is_empty()
            && reads_left.is_empty()
            && (!args.diff || (file.fixed.applied.is_empty() && file.reads_rewritten == 0))
        {
            return;
        }
        progress.suspend(|| {
            if args.diff {
                let patch = file.patch(&path, palette);
                if !patch.is_empty() && out.write_all(&patch).is_err() {
                    std::process::exit(EXIT_ERROR);
                }
            }
            for line in &leftovers {
                if args.diff {
                    let _ = out.flush();
                    eprintln!("{line}");
                } else {
                    emit(&mut out, line);
                }
            }
            let _ = out.flush();
            for line in &reads_left {
                eprintln!("{line}");
            }
            for problem in &problems {
                report_error(&shown, problem);
            }
        });
    };
    match items.take() {
        Some(items) => check::par_map_ordered(items, work, report),
        None => held.into_iter().for_each(&mut report),
    }
    progress.finish();
    let summary = tally.summary(args.diff);
    if let Some(file) = &args.summary_md {
        let markdown = fixer::summary_markdown(&reported, &summary, args.summary_link_base.as_deref());
        if let Err(e) = std::fs::write(file, markdown) {
            report_error(&file.display().to_string(), &format!("cannot write the summary: {e}"));
            errors += 1;
        }
    }
    let status = if args.diff {
        let _ = out.flush();
        if !args.tree.quiet {
            eprintln!("{summary}");
        }
        exit_status(errors, tally.fixed > 0 || tally.reads > 0)
    } else {
        if !args.tree.quiet {
            emit(&mut out, &summary);
        }
        let _ = out.flush();
        exit_status(errors, tally.leftovers() > 0)
    };
    tell_elapsed(&args.tree, started);
    status
}

fn run_review(args: &FixArgs) -> i32 {
    if !(io::stdin().is_terminal() && io::stdout().is_terminal()) {
        eprintln!(
            "error: --interactive needs a terminal on stdin and stdout; \
             use `toolshape fix --diff` to see every fix as a patch, or `toolshape fix` to apply the safe ones"
        );
        return EXIT_ERROR;
    }
    let mut errors = 0;
    let Some(files) = args.tree.files_and_settings(&mut errors) else {
        return EXIT_ERROR;
    };
    if let Err(message) =
        crate::apply::exit_on_interrupt(EXIT_INTERRUPTED, "Aborted: files not yet written were left as they were.")
    {
        eprintln!("warning: Ctrl-C outside a question will not be handled gracefully: {message}");
    }
    let palette = args.tree.palette();
    // The project's reads (and builders) make fixes unsafe here as in `fix`.
    let fix_options = fixer::FixOptions {
        overrides: args.overrides(),
        write: false,
        scope: args.tree.scope(),
        planner: crate::fix::plan_source,
        // The review does not rewrite reads (yet): fixes whose keys are read
        // stay unsafe there.
        rewrite_reads: false,
    };
    let (projects, _) = args.tree.fix_phase_one(&files, &fix_options);
    // The reads a fix's own acceptance can rewrite: those that need no
    // other fix (as `fix` finds them with reads rewritten). The review
    // rewrites them with that fix, in whatever file they stand.
    let any_reads = (0..files.len()).any(|j| !projects.read_reasons(j).is_empty());
    let rewriting = any_reads.then(|| {
        let options = fixer::FixOptions { rewrite_reads: true, ..fix_options };
        args.tree.fix_phase_one(&files, &options).0
    });
    let mut project = review::ReviewProject::default();
    for (j, file) in files.iter().enumerate() {
        let mut rewrites = Vec::new();
        let mut read_reasons = projects.read_reasons(j);
        if let Some(rewriting) = &rewriting {
            for w in rewriting.origin_rewrites(j).iter().filter(|w| w.alone) {
                let target = &files[w.file];
                rewrites.push(review::ReviewRewrite {
                    origin: w.origin.clone(),
                    path: target.path.clone(),
                    rewrite: w.rewrite.clone(),
                    accessor: target.settings.json_accessor(),
                    note: w.note.clone(),
                });
                // Rewritten with the fix: no longer a reason it is unsafe.
                let stays = format!("{} (", w.note);
                read_reasons.retain(|(origin, why)| !(*origin == w.origin && why.starts_with(&stays)));
            }
        }
        let word = review::FileWord {
            builders: projects.builder_specs(&file.path),
            read_reasons,
            not_results: projects.not_results(j).to_vec(),
            rewrites,
        };
        if !word.builders.is_empty()
            || !word.read_reasons.is_empty()
            || !word.not_results.is_empty()
            || !word.rewrites.is_empty()
        {
            project.files.insert(file.path.clone(), word);
        }
    }
    let options = review::ReviewOptions {
        project: Some(&project),
        overrides: args.overrides(),
        scope: args.tree.scope(),
        palette,
        planner: crate::fix::plan_source,
    };
    let mut terminal = review::TerminalDecisions::new(palette);
    let report = review::review_files(files, &options, &mut terminal);
    let stdout = io::stdout();
    let mut out = stdout.lock();
    emit(&mut out, "");
    for line in review::summary_lines(&report) {
        emit(&mut out, &line);
    }
    let _ = out.flush();
    if report.stop == Some(review::Stop::Aborted) {
        EXIT_INTERRUPTED
    } else {
        exit_status(errors + usize::from(report.has_failures()), report.violations_left())
    }
}
