//! Execution test of `toolshape fix` on result builders (TS003) and later
//! writes (TS004): the fixed code is run, not only read.
//!
//! For each seed, `tests/reference/gen_exec.py gen` writes a generated
//! multi-module project (a `pyproject.toml` at its root, a `gentools`
//! package, a stub `strands` package with a `tool` decorator) holding result
//! builders in every fixable form, method builders, chains of builders
//! across modules and import styles, tool functions calling them with no
//! extras, with extras and with colliding keywords (`status=`, `content=`,
//! `toolUseId=`, a `**mapping`, a dotted attribute: each makes that builder's
//! fix unsafe), and tool functions returning a result with later writes;
//! plus a manifest of every callable and every call with the model of its
//! result. Then, on a fresh copy for each mode:
//!
//! * `toolshape fix` (safe fixes) and `toolshape fix --unsafe-fixes` rewrite
//!   the copy (exit 0 or 1; with `--unsafe-fixes` everything generated is
//!   fixable, so exit 0), a second run changes nothing, and `check` finds
//!   nothing left that the mode could have fixed;
//! * `gen_exec.py run` compiles every fixed file, imports the original and
//!   the fixed tree in separate processes, calls every callable with the
//!   manifest's arguments and checks docs/rules.md's "Fixes": a call without
//!   extras returns exactly the old result; a call with extras keeps the
//!   status and the content blocks and gains one json block (per builder
//!   call; per write statement for TS004) with exactly the moved keys and
//!   values; a builder with a colliding call is left alone in safe mode (its
//!   source and its results); call sites and chains are never rewritten.
//!   In unsafe mode a colliding call's status (overridden in the original)
//!   is compared with the builder's own instead.
//!
//! `gen_exec.py --self-test` runs first: its own reference fix must pass
//! and a list of wrong fixes (an empty json block, a dropped key, a lost
//! write, two blocks, a swapped value, an unsafe fix applied in safe mode,
//! a rewritten call site...) must each be caught.
//!
//! Needs `python3`; without it the test says SKIPPED loudly (a failure under
//! `TOOLSHAPE_NO_SKIP`).

use std::path::Path;
use std::process::{Command, Output};
use std::time::Instant;

use serde_json::Value;

mod support;
use support::{BIN, copy_tree, describe, fixable_in_mode, manifest_dir, python_or_skip, run, snapshot_tree, truncate};

const SEEDS: [u64; 3] = [11, 2_024, 77_777];

/// The two ways the fixer runs, with the runner's `--mode`.
const MODES: [(&str, &[&str]); 2] = [("safe", &["fix"]), ("unsafe", &["fix", "--unsafe-fixes"])];

/// Runs toolshape with the rules that move keys only: the programs'
/// statuses and contents are filler that the shape rules (TS006–TS009)
/// would repair, changing what this test holds constant.
fn toolshape(args: &[&str], dir: &Path) -> Output {
    let mut cmd = Command::new(BIN);
    let moves_only = manifest_dir().join("tests/fixtures/config/moves_only.toml");
    cmd.args(args).arg("--config").arg(moves_only).arg(dir).env_remove("NO_COLOR").env_remove("FORCE_COLOR");
    run(&mut cmd)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn count(report: &Value, key: &str) -> u64 {
    report[key].as_u64().unwrap_or_else(|| panic!("gen_exec.py report has no number `{key}`: {report:#}"))
}

#[derive(Default)]
struct Totals {
    files: u64,
    callables: u64,
    calls: u64,
    no_extras: u64,
    applied: u64,
    not_applied: u64,
    colliding: u64,
    blocks: u64,
    sources: u64,
}

/// Fixes a fresh copy of `original` in `mode` and runs the checks; returns
/// the problems found.
#[allow(clippy::too_many_arguments)]
fn check_mode(
    python: &str,
    script: &Path,
    label: &str,
    original: &Path,
    manifest: &Path,
    work: &Path,
    (mode, fix_args): (&str, &[&str]),
    totals: &mut Totals,
) -> Vec<String> {
    let started = Instant::now();
    let fixed = work.join(format!("fixed-{mode}"));
    copy_tree(original, &fixed);
    let mut problems = Vec::new();

    let first = toolshape(fix_args, &fixed);
    let code = first.status.code();
    let expected_codes: &[i32] = if mode == "unsafe" { &[0] } else { &[0, 1] };
    if !code.is_some_and(|c| expected_codes.contains(&c)) {
        problems.push(format!(
            "{label} [{mode}]: `toolshape {}` exited {code:?} (expected {expected_codes:?}):\n{}\n{}",
            fix_args.join(" "),
            truncate(&text(&first.stdout), 4000),
            truncate(&text(&first.stderr), 4000)
        ));
        if code.is_none_or(|c| c == 2) {
            return problems;
        }
    }
    if text(&first.stderr).to_lowercase().contains("bug") {
        problems
            .push(format!("{label} [{mode}]: fix reported a toolshape bug:\n{}", truncate(&text(&first.stderr), 4000)));
    }
    let after_first = snapshot_tree(&fixed);
    if after_first == snapshot_tree(original) {
        problems.push(format!("{label} [{mode}]: fix changed nothing"));
    }

    // Idempotent: a second run changes nothing.
    let second = toolshape(fix_args, &fixed);
    if !matches!(second.status.code(), Some(0 | 1)) {
        problems.push(format!("{label} [{mode}]: the second fix failed:\n{}", truncate(&text(&second.stderr), 4000)));
    }
    let after_second = snapshot_tree(&fixed);
    if after_second != after_first {
        let changed: Vec<&str> =
            after_first.iter().zip(&after_second).filter(|(a, b)| a != b).map(|(a, _)| a.0.as_str()).collect();
        problems.push(format!("{label} [{mode}]: a second fix changed files: {changed:?}"));
    }

    // Nothing this mode fixes is left.
    let check = toolshape(&["check", "--format", "json"], &fixed);
    match serde_json::from_slice::<Vec<Value>>(&check.stdout) {
        Ok(findings) => {
            let left = fixable_in_mode(&findings, mode == "unsafe");
            if !left.is_empty() {
                problems.push(format!(
                    "{label} [{mode}]: {} finding(s) this mode fixes remain after the fix: {}",
                    left.len(),
                    truncate(&format!("{left:#?}"), 3000)
                ));
            }
        }
        Err(e) => problems.push(format!("{label} [{mode}]: check printed no JSON ({e}): {}", text(&check.stderr))),
    }

    // Run the original and the fixed code.
    let mut cmd = Command::new(python);
    cmd.arg(script).arg("run").arg(original).arg(&fixed).arg(manifest).args(["--mode", mode]);
    let out = run(&mut cmd);
    let report: Value = match serde_json::from_slice(&out.stdout) {
        Ok(v) => v,
        Err(e) => {
            problems.push(format!(
                "{label} [{mode}]: `{}` printed no JSON ({e}):\n{}",
                describe(&cmd),
                text(&out.stderr)
            ));
            return problems;
        }
    };
    let failures = report["failures"].as_array().cloned().unwrap_or_default();
    if !failures.is_empty() || !out.status.success() {
        let shown: Vec<String> = failures.iter().take(12).map(|f| format!("{f:#}")).collect();
        problems.push(format!(
            "{label} [{mode}]: {} execution failure(s):\n{}{}\n{}",
            failures.len(),
            truncate(&shown.join("\n"), 20_000),
            if failures.len() > shown.len() { "\n..." } else { "" },
            truncate(&text(&out.stderr), 2000)
        ));
    }
    let applied = count(&report, "calls_fix_applied");
    if applied < 50 || count(&report, "calls_no_extras") < 20 {
        problems.push(format!("{label} [{mode}]: too few calls were checked; the test is too weak: {report:#}"));
    }
    if mode == "safe" && count(&report, "calls_fix_not_applied") == 0 {
        problems.push(format!("{label} [{mode}]: no unsafe builder was checked to be left alone: {report:#}"));
    }
    totals.files += count(&report, "files_compiled");
    totals.callables += count(&report, "callables");
    totals.calls += count(&report, "calls");
    totals.no_extras += count(&report, "calls_no_extras");
    totals.applied += applied;
    totals.not_applied += count(&report, "calls_fix_not_applied");
    totals.colliding += count(&report, "calls_colliding");
    totals.blocks += count(&report, "json_blocks_checked");
    totals.sources += count(&report, "sources_unchanged_checked") + count(&report, "sources_changed_checked");
    eprintln!(
        "fix execution: {label} [{mode}]: {} calls ({} without extras, {applied} fixed, {} left by an unsafe fix, \
         {} colliding), {} json blocks, {} callables' sources compared ({:.1?})",
        count(&report, "calls"),
        count(&report, "calls_no_extras"),
        count(&report, "calls_fix_not_applied"),
        count(&report, "calls_colliding"),
        count(&report, "json_blocks_checked"),
        count(&report, "sources_unchanged_checked") + count(&report, "sources_changed_checked"),
        started.elapsed()
    );
    problems
}

#[test]
fn fixed_builders_and_writes_run_as_the_spec_says() {
    let Some(python) = python_or_skip("fixed_builders_and_writes_run_as_the_spec_says") else {
        return;
    };
    let started = Instant::now();
    let script = manifest_dir().join("tests/reference/gen_exec.py");

    // Negative controls first: the runner must catch hand-made wrong fixes.
    let mut self_test = Command::new(&python);
    self_test.arg(&script).arg("--self-test");
    let out = run(&mut self_test);
    assert!(
        out.status.success(),
        "`{}`: a wrong fix went unnoticed (or the self-test broke):\n{}\n{}",
        describe(&self_test),
        text(&out.stdout),
        text(&out.stderr)
    );

    let mut problems = Vec::new();
    let mut totals = [Totals::default(), Totals::default()];
    for seed in SEEDS {
        let dir = tempfile::Builder::new().prefix("toolshape-exec-").tempdir().unwrap();
        let original = dir.path().join("original");
        let manifest = dir.path().join("manifest.json");
        let mut gen_cmd = Command::new(&python);
        gen_cmd
            .arg(&script)
            .arg("gen")
            .arg(&original)
            .args(["--seed", &seed.to_string()])
            .arg("--manifest")
            .arg(&manifest);
        let out = run(&mut gen_cmd);
        assert!(out.status.success(), "`{}` failed:\n{}", describe(&gen_cmd), text(&out.stderr));
        let label = format!("seed {seed}");
        for (mode, total) in MODES.iter().zip(totals.iter_mut()) {
            let found = check_mode(&python, &script, &label, &original, &manifest, dir.path(), *mode, total);
            if !found.is_empty() {
                problems.push(format!(
                    "seed {seed} [{}] -- reproduce: python3 tests/reference/gen_exec.py gen /tmp/o --seed {seed} \
                     --manifest /tmp/m.json && cp -r /tmp/o /tmp/f && toolshape {} --config tests/fixtures/config/moves_only.toml /tmp/f && \
                     python3 tests/reference/gen_exec.py run /tmp/o /tmp/f /tmp/m.json --mode {}",
                    mode.0,
                    mode.1.join(" "),
                    mode.0
                ));
            }
            problems.extend(found);
        }
    }
    for ((mode, _), t) in MODES.iter().zip(&totals) {
        eprintln!(
            "fix execution [{mode}]: {} seeds, {} files compiled, {} callables, {} calls run in both trees ({} without \
             extras returning the old result, {} fixed, {} left by an unsafe fix, {} colliding), {} json blocks checked, \
             {} sources compared",
            SEEDS.len(),
            t.files,
            t.callables,
            t.calls,
            t.no_extras,
            t.applied,
            t.not_applied,
            t.colliding,
            t.blocks,
            t.sources
        );
    }
    eprintln!("fix execution: {:.1?} in all", started.elapsed());
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
