//! Snapshot tests of the fixer. Each file under `tests/fixtures/fix/` is one
//! situation; its snapshot (in `snapshots/`) shows what `check` reports, the
//! diff `fix` makes with safe fixes only, what it leaves and why, and the
//! same with `--unsafe-fixes`. A fixture may start with
//! `# toolshape-test: line-length=N` to set the line length, or
//! `# toolshape-test: augment-text=never`.
//!
//! Beyond the snapshots, every fixture must satisfy the fixer's invariants:
//! no new syntax errors, a second fix changes nothing, and after
//! `--unsafe-fixes` nothing fixable is left.

use std::path::Path;

use toolshape::apply::{FixPolicy, fix_text, syntax_error_count};
use toolshape::check::{CheckOptions, check_source};
use toolshape::contract::Rules;
use toolshape::diff;
use toolshape::fix::AugmentText;
use toolshape::fixer::leftover_lines;
use toolshape::report::{Palette, text_finding};
use toolshape::source::SourceText;
use toolshape::syntax::{ParseScope, lacks_key_bytes};

const PLAIN: Palette = Palette { enabled: false };

/// A `# toolshape-test: NAME=VALUE` setting on the fixture's first line.
fn setting<'a>(src: &'a str, name: &str) -> Option<&'a str> {
    src.lines().next()?.strip_prefix("# toolshape-test: ")?.strip_prefix(name)?.strip_prefix('=').map(str::trim)
}

fn line_length(src: &str) -> usize {
    setting(src, "line-length").map(|n| n.parse().expect("line-length is a number")).unwrap_or(88)
}

fn augment_text(src: &str) -> AugmentText {
    match setting(src, "augment-text") {
        Some("never") => AugmentText::Never,
        Some(other) => panic!("unknown augment-text setting {other}"),
        None => AugmentText::Safe,
    }
}

/// Makes carriage returns visible in snapshots.
fn visible(text: &str) -> String {
    text.replace('\r', "␍")
}

fn section(out: &mut String, name: &str, body: &str) {
    out.push_str(&format!("== {name} ==\n"));
    out.push_str(body.trim_end_matches('\n'));
    out.push_str("\n\n");
}

fn report(name: &Path, src: &str) -> String {
    let line_length = line_length(src);
    let mut out = String::new();
    let check = |scope| check_source(src, &CheckOptions::new(scope), &Rules::CONTRACT);
    let findings = check(ParseScope::WholeFile);
    // The prefilter's one documented blind spot: keys spelled only through
    // escapes or concatenation in a file where no plain literal spells them.
    if !lacks_key_bytes(src.as_bytes()) {
        assert_eq!(findings, check(ParseScope::Candidates), "prefilter and whole-file parse disagree");
    }
    let lines: Vec<String> = findings.iter().map(|f| text_finding(name, f, PLAIN)).collect();
    let check = if lines.is_empty() { "(no findings)".to_owned() } else { lines.join("\n") };
    section(&mut out, "check", &check);
    let baseline = syntax_error_count(src);
    let mut previous: Option<String> = None;
    for unsafe_fixes in [false, true] {
        let policy = FixPolicy::new(Rules::CONTRACT, unsafe_fixes, line_length, augment_text(src));
        let fixed = fix_text(src, &policy);
        assert!(syntax_error_count(&fixed.text) <= baseline, "the fix added a syntax error:\n{}", fixed.text);
        assert_eq!(fix_text(&fixed.text, &policy).text, fixed.text, "a second fix changed the text again");
        let title = if unsafe_fixes { "fix --unsafe-fixes" } else { "fix" };
        if previous.as_deref() == Some(fixed.text.as_str()) {
            section(&mut out, title, "(same as fix)");
            continue;
        }
        let mut body = diff::unified(name, src, &fixed.text, 3, PLAIN);
        if body.is_empty() {
            body = "(no change)\n".into();
        }
        for applied in &fixed.applied {
            body.push_str(&format!("note: {}\n", applied.note()));
        }
        for line in leftover_lines(name, &fixed.leftovers, PLAIN) {
            body.push_str(&format!("left: {line}\n"));
        }
        if unsafe_fixes {
            let left = check_source(&fixed.text, &CheckOptions::new(ParseScope::WholeFile), &Rules::CONTRACT);
            assert!(left.iter().all(|f| f.fixable.is_none()), "fixable findings remain after --unsafe-fixes");
        }
        section(&mut out, title, &visible(&body));
        previous = Some(fixed.text);
    }
    out
}

#[test]
fn fix_snapshots() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        insta::glob!("fixtures/fix/*.py", |path| {
            let source = SourceText::decode(std::fs::read(path).unwrap()).unwrap();
            let name = Path::new(path.file_name().unwrap());
            insta::assert_snapshot!(report(name, &source.text));
        });
    });
}
