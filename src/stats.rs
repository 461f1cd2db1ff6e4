//! Counters of the work a run does, for `--verbose`: files and bytes read
//! from disk, bytes lexed, tree-sitter parses (how many, how many bytes,
//! how much CPU time), and the wall time of each phase of `check`.
//!
//! They say where a run's time goes without a profiler: what toolshape
//! parses, against what it reads, is the figure its speed rests on (a
//! dict display costs tree-sitter 20–50 µs). The counters are
//! process-wide atomics, so recording costs a few nanoseconds and no pass
//! hands them around; only the command line reads them, at the end.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

static FILES_READ: AtomicU64 = AtomicU64::new(0);
static BYTES_READ: AtomicU64 = AtomicU64::new(0);
static LEXES: AtomicU64 = AtomicU64::new(0);
static BYTES_LEXED: AtomicU64 = AtomicU64::new(0);
static PARSES: AtomicU64 = AtomicU64::new(0);
static BYTES_PARSED: AtomicU64 = AtomicU64::new(0);
static PARSE_NANOS: AtomicU64 = AtomicU64::new(0);
/// Each phase's name, wall time and bytes parsed, summed over the batches
/// of a run, in the order the phases first ran.
static PHASES: Mutex<Vec<Phase>> = Mutex::new(Vec::new());
/// The bytes parsed when the last phase ended: a phase's share is what the
/// parse counter gained since.
static PARSED_AT_LAST_PHASE: AtomicU64 = AtomicU64::new(0);

/// One phase of `check`: its wall time and the bytes tree-sitter parsed
/// in it, summed over the batches of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phase {
    pub name: &'static str,
    pub wall: Duration,
    pub bytes_parsed: u64,
}

/// A file of `bytes` bytes was read from disk.
pub fn read(bytes: usize) {
    FILES_READ.fetch_add(1, Relaxed);
    BYTES_READ.fetch_add(bytes as u64, Relaxed);
}

/// The lexer went over `bytes` bytes.
pub fn lexed(bytes: usize) {
    LEXES.fetch_add(1, Relaxed);
    BYTES_LEXED.fetch_add(bytes as u64, Relaxed);
}

/// Runs `parse`, a tree-sitter parse of `bytes` bytes, counting it and
/// the time it takes.
pub fn parsing<T>(bytes: usize, parse: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let out = parse();
    PARSE_NANOS.fetch_add(started.elapsed().as_nanos() as u64, Relaxed);
    PARSES.fetch_add(1, Relaxed);
    BYTES_PARSED.fetch_add(bytes as u64, Relaxed);
    out
}

/// Adds `elapsed` to the wall time of the phase `name`, which just ended,
/// and the bytes parsed since the previous phase ended to its bytes.
pub fn phase(name: &'static str, elapsed: Duration) {
    let parsed = BYTES_PARSED.load(Relaxed);
    let bytes_parsed = parsed.saturating_sub(PARSED_AT_LAST_PHASE.swap(parsed, Relaxed));
    let mut phases = PHASES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    match phases.iter_mut().find(|p| p.name == name) {
        Some(p) => {
            p.wall += elapsed;
            p.bytes_parsed += bytes_parsed;
        }
        None => phases.push(Phase { name, wall: elapsed, bytes_parsed }),
    }
}

/// What the counters hold now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Work {
    pub files_read: u64,
    pub bytes_read: u64,
    pub lexes: u64,
    pub bytes_lexed: u64,
    pub parses: u64,
    pub bytes_parsed: u64,
    /// CPU time in tree-sitter's parser, summed over the threads.
    pub parse_time: Duration,
    pub phases: Vec<Phase>,
}

/// The counters as they stand.
pub fn work() -> Work {
    Work {
        files_read: FILES_READ.load(Relaxed),
        bytes_read: BYTES_READ.load(Relaxed),
        lexes: LEXES.load(Relaxed),
        bytes_lexed: BYTES_LEXED.load(Relaxed),
        parses: PARSES.load(Relaxed),
        bytes_parsed: BYTES_PARSED.load(Relaxed),
        parse_time: Duration::from_nanos(PARSE_NANOS.load(Relaxed)),
        phases: PHASES.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone(),
    }
}

impl Work {
    /// The lines `--verbose` prints: what was read, lexed and parsed, then
    /// the phases (when `check` ran any).
    pub fn lines(&self) -> Vec<String> {
        let share = match self.bytes_read {
            0 => String::new(),
            read => format!(" ({:.1}% of the bytes read)", 100.0 * self.bytes_parsed as f64 / read as f64),
        };
        let mut lines = vec![format!(
            "{} read in {}, {} lexed in {}, {} parsed in {}{share}, {:.1} ms of CPU",
            size(self.bytes_read),
            count(self.files_read, "file read"),
            size(self.bytes_lexed),
            count(self.lexes, "pass"),
            size(self.bytes_parsed),
            count(self.parses, "tree-sitter parse"),
            self.parse_time.as_secs_f64() * 1e3,
        )];
        if !self.phases.is_empty() {
            let phases: Vec<String> = self
                .phases
                .iter()
                .map(|p| format!("{} {:.1} ms ({} parsed)", p.name, p.wall.as_secs_f64() * 1e3, size(p.bytes_parsed)))
                .collect();
            lines.push(format!("phases: {}", phases.join(", ")));
        }
        lines
    }
}

/// `n` and `what`, plural unless one: `1 file read`, `2 file reads`, `3 passes`.
fn count(n: u64, what: &str) -> String {
    match (n, what.ends_with('s')) {
        (1, _) => format!("1 {what}"),
        (_, true) => format!("{n} {what}es"),
        (_, false) => format!("{n} {what}s"),
    }
}

/// `bytes` as people read them: `512 B`, `4.2 KB`, `11.3 MB` (powers of 1000).
fn size(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{:.1} KB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_read_them() {
        assert_eq!(size(512), "512 B");
        assert_eq!(size(4_200), "4.2 KB");
        assert_eq!(size(11_282_614), "11.3 MB");
        assert_eq!(count(1, "pass"), "1 pass");
        assert_eq!(count(2, "pass"), "2 passes");
        assert_eq!(count(1, "file"), "1 file");
        assert_eq!(count(0, "tree-sitter parse"), "0 tree-sitter parses");
    }

    #[test]
    fn lines_say_what_share_of_the_bytes_read_was_parsed() {
        let work = Work {
            files_read: 2,
            bytes_read: 10_000,
            lexes: 3,
            bytes_lexed: 6_000,
            parses: 3,
            bytes_parsed: 500,
            parse_time: Duration::from_micros(1_500),
            phases: vec![
                Phase { name: "files", wall: Duration::from_millis(2), bytes_parsed: 400 },
                Phase { name: "reads", wall: Duration::from_micros(500), bytes_parsed: 100 },
            ],
        };
        assert_eq!(
            work.lines(),
            [
                "10.0 KB read in 2 file reads, 6.0 KB lexed in 3 passes, 500 B parsed in 3 tree-sitter parses (5.0% \
                 of the bytes read), 1.5 ms of CPU",
                "phases: files 2.0 ms (400 B parsed), reads 0.5 ms (100 B parsed)",
            ]
        );
    }
}
