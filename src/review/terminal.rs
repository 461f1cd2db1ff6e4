//! The review's terminal front end: how an offer, an event and the summary
//! read, the keys and what they do, and [`TerminalDecisions`], which puts
//! offers to a person at the terminal.

use std::path::PathBuf;

use console::{Key, Term};

use super::engine::{
    Decision, DecisionSource, Event, FileOutcome, FileReport, Offer, ReviewReport, Stop, label, one_line,
};
use crate::fix::Applicability;
use crate::report::{self, Palette};

/// The one-line legend of the keys, shown with every question (`Tab`
/// only where the offer has another remedy).
pub fn legend(offer: &Offer) -> String {
    let tab = if offer.remedy.is_some() { "Tab remedy, " } else { "" };
    format!(
        "y apply, n skip, e edit, s suppress, {tab}a rest of file, d skip file, k same keys, A all safe, q quit, ? help"
    )
}

/// What each key does, for `?`.
pub fn help_text(offer: &Offer) -> String {
    let moves = offer.moves.iter().map(|m| one_line(m)).collect::<Vec<_>>().join(", ");
    [
        "y - apply this fix".to_owned(),
        "n - skip this fix".to_owned(),
        "e - edit the fixed result in $VISUAL or $EDITOR; the edit is applied if it parses and keeps to the contract"
            .to_owned(),
        "s - write `# toolshape: ignore[CODES]` for this tool result instead of fixing it".to_owned(),
        "Tab - show the next remedy, where there is more than one".to_owned(),
        "a - apply this fix and every remaining fix in this file (unsafe ones too)".to_owned(),
        "d - skip this fix and every remaining fix in this file".to_owned(),
        format!("k - apply this fix and every remaining safe fix that moves the same keys ({moves})"),
        "A - apply this fix and every remaining safe fix, in every file".to_owned(),
        "q - quit; the fixes accepted so far are written".to_owned(),
        "Ctrl-C - abort; nothing not yet written is written".to_owned(),
        "? - print this help".to_owned(),
        "a, k and A apply safe fixes only: each unsafe fix is shown and needs its own y.".to_owned(),
        "A file is written as soon as its last fix is decided.".to_owned(),
    ]
    .join("\n")
}

/// Renders an offer: header, findings, verdict, moves, diff (no prompt).
pub fn render_offer(offer: &Offer, palette: Palette) -> String {
    let mut out = String::new();
    let verdict = match offer.applicability {
        Applicability::Safe => palette.green("safe fix"),
        Applicability::Unsafe => palette.red(&palette.bold("UNSAFE fix")),
    };
    out.push_str(&format!(
        "{} {} {}\n",
        palette.bold(&format!("[{}/{}]", offer.number, offer.total)),
        palette.bold(&format!("{}:{}", offer.path.display(), offer.line)),
        verdict
    ));
    let resolves: Vec<String> = offer.findings.iter().map(|f| format!("{} {}", f.code, one_line(&label(f)))).collect();
    out.push_str(&format!("  resolves: {}\n", resolves.join(", ")));
    match offer.applicability {
        Applicability::Safe if offer.text_augmented => out.push_str(
            "  safe: same status, content blocks (plus the json block; the text mentions what moved) \
             and toolUseId; side effects in the same order\n",
        ),
        Applicability::Safe => out.push_str(
            "  safe: same status, content blocks (plus the json block) and toolUseId; side effects in the same order\n",
        ),
        Applicability::Unsafe => {
            // A read is listed once, as a read (below).
            for reason in offer.unsafe_reasons.iter().filter(|r| !offer.reads.contains(r)) {
                out.push_str(&format!("  {} {reason}\n", palette.red("unsafe:")));
            }
        }
    }
    if let Some((n, of, what)) = &offer.remedy {
        out.push_str(&format!("  {} {what} (Tab: the next)\n", palette.bold(&format!("remedy {n}/{of}:"))));
    }
    match &offer.repair {
        Some(repair) => {
            let after = if offer.clean_after {
                String::new()
            } else {
                format!(" {}", palette.red("(!) the tool result still breaks the contract after this fix"))
            };
            out.push_str(&format!("  repair: {repair}{after}\n"));
        }
        None => {
            let moves = offer.moves.iter().map(|m| one_line(m)).collect::<Vec<_>>().join(", ");
            let receipt = match (offer.moves_match_findings(), offer.clean_after) {
                (true, true) => "exactly the flagged entries; none left after".to_owned(),
                (true, false) => palette.red("(!) the tool result still breaks the contract after this fix"),
                (false, _) => palette.red(&format!("(!) the findings flag: {}", resolves.join(", "))),
            };
            out.push_str(&format!("  moves: {moves} -> json ({receipt})\n"));
            out.push_str(&format!("  {}\n", offer.text_note));
        }
    }
    for read in &offer.rewrites {
        out.push_str(&format!("  {} {read}\n", palette.green("rewrites:")));
    }
    for read in &offer.reads {
        out.push_str(&format!("  {} {read}\n", palette.red("read:")));
    }
    out.push_str(&offer.diff);
    if let Some(note) = &offer.note {
        out.push_str(&format!("{}\n", palette.bold(note)));
    }
    out
}

/// The line after a fix that a rule settled.
pub fn render_event(event: &Event, palette: Palette) -> String {
    match event {
        Event::Settled { path, line, number, total, applied, rule } => palette.dim(&format!(
            "[{number}/{total}] {}:{line} {} by `{}`",
            path.display(),
            if *applied { "applied" } else { "skipped" },
            rule.key()
        )),
        Event::Dropped { path, line } => palette.red(&format!(
            "{}:{line}: the fix would add a syntax error, so it was dropped (a toolshape bug: please report it)",
            path.display()
        )),
        Event::ReadsRewritten { path, reads } => palette.green(&format!(
            "Rewrote {} in {}, with the fixes that moved their keys.",
            report::plural(*reads, "read"),
            path.display()
        )),
        Event::ReadsLeft { path, line, reads } => palette.red(&format!(
            "{}:{line}: the edited fix was applied; these reads of its keys were not rewritten and may now fail: {}",
            path.display(),
            reads.join("; ")
        )),
        Event::Suppressed { path, line, codes } => palette.dim(&format!(
            "{}:{line}: suppressed with `# toolshape: ignore[{}]` instead of fixed",
            path.display(),
            codes.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")
        )),
        Event::Written { path, applied } => {
            palette.green(&format!("Wrote {} ({} applied).", path.display(), report::plural(*applied, "fix")))
        }
        Event::Failed { path, message } => format!("error: {}: {message}", path.display()),
    }
}

/// The summary: one line per file with violations, then the totals.
pub fn summary_lines(report: &ReviewReport) -> Vec<String> {
    let mut lines = Vec::new();
    if report.files.is_empty() {
        lines.push("Nothing to review: no fixable violations.".to_owned());
        return lines;
    }
    lines.push("Summary:".to_owned());
    for file in &report.files {
        let mut counts = Vec::new();
        let accepted = match file.outcome {
            FileOutcome::Aborted => "accepted",
            _ => "applied",
        };
        for (n, what) in [
            (file.applied, accepted),
            (file.suppressed, "suppressed"),
            (file.skipped, "skipped"),
            (file.failed, "failed"),
        ] {
            if n > 0 {
                counts.push(format!("{n} {what}"));
            }
        }
        if file.undecided > 0 {
            counts.push(format!("{} not reviewed", file.undecided));
        }
        if file.manual > 0 {
            counts.push(format!("{} left for manual repair", file.manual));
        }
        let outcome = match &file.outcome {
            FileOutcome::Written => "written".to_owned(),
            FileOutcome::Unchanged | FileOutcome::NotReached => "unchanged".to_owned(),
            FileOutcome::Aborted => "aborted, not written".to_owned(),
            FileOutcome::WriteFailed(why) => format!("not written: {why}"),
        };
        let counts = if counts.is_empty() { "nothing to do".to_owned() } else { counts.join(", ") };
        lines.push(format!("  {}: {counts} — {outcome}", file.path.display()));
    }
    let sum = |f: fn(&FileReport) -> usize| report.files.iter().map(f).sum::<usize>();
    let written = sum(FileReport::written);
    let files_written = report.files.iter().filter(|f| f.written() > 0).count();
    let mut totals =
        vec![format!("Applied {} in {}", report::plural(written, "fix"), report::plural(files_written, "file"))];
    for (n, what) in [
        (sum(|f| if f.outcome == FileOutcome::Written { f.suppressed } else { 0 }), "suppressed"),
        (sum(|f| f.skipped), "skipped"),
        (sum(|f| f.failed), "failed"),
        (sum(|f| f.undecided), "not reviewed"),
        (sum(|f| f.manual), "left for manual repair"),
    ] {
        if n > 0 {
            totals.push(format!("{n} {what}"));
        }
    }
    let lead = match report.stop {
        Some(Stop::Quit) => "Quit. ",
        Some(Stop::Aborted) => "Aborted. ",
        None => "",
    };
    lines.push(format!("{lead}{}.", totals.join("; ")));
    lines
}

/// What a key does at the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyAction {
    Decide(Decision),
    /// `e`: open the editor (the front end does; the engine hears the text).
    Edit,
    Help,
}

/// The action of `key`, if it has one.
pub fn key_action(key: &Key) -> Option<KeyAction> {
    let decision = match key {
        Key::Char('y') => Decision::Apply,
        Key::Char('n') => Decision::Skip,
        Key::Char('s') => Decision::Suppress,
        Key::Tab => Decision::NextRemedy,
        Key::Char('a') => Decision::ApplyRestOfFile,
        Key::Char('d') => Decision::SkipRestOfFile,
        Key::Char('k') => Decision::ApplySameMoves,
        Key::Char('A') => Decision::ApplyAllSafe,
        Key::Char('q') => Decision::Quit,
        Key::CtrlC => Decision::Abort,
        Key::Char('e') => return Some(KeyAction::Edit),
        Key::Char('?') => return Some(KeyAction::Help),
        _ => return None,
    };
    Some(KeyAction::Decide(decision))
}

/// The editor `e` runs: `$VISUAL`, else `$EDITOR` (as git does), if set.
pub fn configured_editor() -> Option<String> {
    ["VISUAL", "EDITOR"].iter().filter_map(|v| std::env::var(v).ok()).find(|e| !e.trim().is_empty())
}

/// What came of editing an offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edited {
    /// The reviewer saved this text.
    Text(String),
    /// The editor closed without a change.
    Unchanged,
    /// No editor, or it could not run: why, for the reviewer.
    Failed(String),
}

/// Opens `region` in the configured editor (through `dialoguer::Editor`,
/// as a `.py` file so that the editor highlights it).
pub fn edit_region(region: &str) -> Edited {
    let Some(editor) = configured_editor() else {
        return Edited::Failed(
            "no editor is configured: set $VISUAL or $EDITOR (for example EDITOR=nano) to edit a fix".into(),
        );
    };
    match dialoguer::Editor::new().executable(&editor).extension(".py").trim_newlines(false).edit(region) {
        Ok(Some(text)) if text != region => Edited::Text(text),
        Ok(_) => Edited::Unchanged,
        Err(e) => Edited::Failed(format!("the editor `{editor}` could not run: {e}")),
    }
}

/// Answers from the keyboard; offers and events go to the terminal.
pub struct TerminalDecisions {
    term: Term,
    palette: Palette,
    /// The offer on screen (path, number, revision), so that asking about
    /// it again repeats only its note.
    on_screen: Option<(PathBuf, usize, usize)>,
}

impl TerminalDecisions {
    pub fn new(palette: Palette) -> Self {
        TerminalDecisions { term: Term::stdout(), palette, on_screen: None }
    }

    fn say(&self, text: &str) {
        // A terminal that cannot be written to leaves nothing to tell.
        let _ = self.term.write_str(text);
    }

    /// Shows `text` a screenful at a time: Space or Enter for the next
    /// page, any other key for the rest at once.
    fn page(&self, text: &str) {
        let rows = usize::from(self.term.size().0);
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        // Room for the question under the last page.
        let page = rows.saturating_sub(2);
        if rows < 8 || lines.len() <= page {
            self.say(text);
            return;
        }
        let mut at = 0;
        while at < lines.len() {
            let end = (at + page).min(lines.len());
            self.say(&lines[at..end].concat());
            at = end;
            if at == lines.len() {
                break;
            }
            let left = lines.len() - at;
            self.say(
                &self.palette.dim(&format!("-- {left} more lines: Space for the next page, any other key for all --")),
            );
            let key = self.term.read_key_raw();
            let _ = self.term.clear_line();
            if !matches!(key, Ok(Key::Char(' ') | Key::Enter)) {
                self.say(&lines[at..].concat());
                break;
            }
        }
    }
}

impl DecisionSource for TerminalDecisions {
    fn decide(&mut self, offer: &Offer) -> Decision {
        let shown = Some((offer.path.clone(), offer.number, offer.revision));
        if self.on_screen == shown {
            if let Some(note) = &offer.note {
                self.say(&format!("{}\n", self.palette.bold(note)));
            }
        } else {
            self.page(&format!("\n{}", render_offer(offer, self.palette)));
            self.on_screen = shown;
        }
        loop {
            self.say(&format!("{} [{}] ", self.palette.bold("Apply this fix?"), legend(offer)));
            // Raw keys: Ctrl-C arrives as a key, not as a signal.
            let Ok(key) = self.term.read_key_raw() else {
                self.say("\n");
                return Decision::Abort;
            };
            match key_action(&key) {
                Some(KeyAction::Decide(decision)) => {
                    let shown = match key {
                        Key::Char(c) => c.to_string(),
                        Key::Tab => "Tab".to_owned(),
                        _ => "^C".to_owned(),
                    };
                    self.say(&format!("{shown}\n"));
                    return decision;
                }
                Some(KeyAction::Edit) => {
                    self.say("e\n");
                    match edit_region(&offer.edit_region) {
                        Edited::Text(text) => return Decision::Edit(text),
                        Edited::Unchanged => self.say("The editor closed without a change: nothing changed.\n"),
                        Edited::Failed(why) => self.say(&format!("{}\n", self.palette.red(&why))),
                    }
                }
                Some(KeyAction::Help) => self.say(&format!("?\n{}\n", help_text(offer))),
                None => self.say("\nThat key does nothing here; press ? for help.\n"),
            }
        }
    }

    fn tell(&mut self, event: &Event) {
        let line = render_event(event, self.palette);
        match event {
            Event::Failed { .. } => eprintln!("{line}"),
            _ => self.say(&format!("{line}\n")),
        }
    }
}
