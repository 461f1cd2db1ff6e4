//! The progress bar of long runs: drawn on stderr (with indicatif) only when
//! stderr is a terminal, the run is not quiet, no CI system is detected, and
//! the run has already taken a second; never in pipes or CI logs. Output
//! printed while the bar shows goes through [`Progress::suspend`] so that the
//! two never mix.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a run goes before its bar appears.
const DELAY: Duration = Duration::from_secs(1);

/// A progress bar over a known number of files, hidden until it is worth
/// showing.
pub struct Progress {
    bar: Option<ProgressBar>,
    started: Instant,
    delay: Duration,
    shown: bool,
}

impl Progress {
    /// A bar over `total` files; `wanted` is false for `--quiet` runs.
    pub fn new(total: usize, wanted: bool) -> Self {
        let allowed = wanted && std::io::stderr().is_terminal() && !in_ci();
        let bar = allowed.then(|| {
            let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::hidden());
            let style = ProgressStyle::with_template("{spinner} {pos}/{len} files [{bar:30}] {elapsed_precise}")
                .expect("the template is valid")
                .progress_chars("=> ");
            bar.set_style(style);
            bar
        });
        Progress { bar, started: Instant::now(), delay: delay(), shown: false }
    }

    /// One more file done.
    pub fn advance(&mut self) {
        let Some(bar) = &self.bar else { return };
        bar.inc(1);
        if !self.shown && self.started.elapsed() >= self.delay {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(120));
            self.shown = true;
        }
    }

    /// Whether the bar is on the screen (output printed meanwhile must be
    /// flushed inside [`Progress::suspend`]).
    pub fn is_shown(&self) -> bool {
        self.shown
    }

    /// Runs `f` (which prints) with the bar cleared from the screen.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) if self.shown => bar.suspend(f),
            _ => f(),
        }
    }

    /// Removes the bar for good.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Whether a CI system runs us (they set `CI`), where a bar only litters logs.
fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The delay before the bar shows; `TOOLSHAPE_PROGRESS_DELAY_MS` shortens
/// it for tests of the bar itself.
fn delay() -> Duration {
    std::env::var("TOOLSHAPE_PROGRESS_DELAY_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(DELAY, Duration::from_millis)
}
