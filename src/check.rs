//! Checking: from source text to findings (pure), and from a list of files to
//! per-file outcomes, in parallel, delivered in file order as they complete.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc;

use rayon::prelude::*;

use crate::contract;
use crate::diagnostics::{self, Finding};
use crate::source::SourceText;
use crate::syntax::{self, LineIndex, ParseScope};

/// Checks one source text; findings come sorted by position.
pub fn check_source(src: &str, scope: ParseScope) -> Vec<Finding> {
    let pieces = syntax::parse_pieces(src, scope);
    if pieces.is_empty() {
        return Vec::new();
    }
    let dicts = contract::tool_results(src, &pieces);
    if dicts.iter().all(|d| !d.is_violating()) {
        return Vec::new();
    }
    let index = LineIndex::new(src);
    let mut findings: Vec<Finding> = dicts.iter().flat_map(|d| diagnostics::findings_for(d, src, &index)).collect();
    findings.sort_by_key(|f| (f.entry.start, f.code));
    findings
}

/// What checking one file gave.
#[derive(Debug)]
pub struct FileOutcome {
    pub path: PathBuf,
    pub result: Result<Vec<Finding>, String>,
}

/// Checks `files` in parallel and hands each outcome to `sink` in the order of
/// `files`, as soon as it and all before it are done, so output streams
/// without being reordered by thread timing.
pub fn check_files(files: Vec<PathBuf>, scope: ParseScope, mut sink: impl FnMut(FileOutcome)) {
    let (tx, rx) = mpsc::channel::<(usize, FileOutcome)>();
    std::thread::scope(|s| {
        s.spawn(move || {
            files.into_par_iter().enumerate().for_each_with(tx, |tx, (i, path)| {
                let result = SourceText::read(&path).map(|src| check_source(&src.text, scope));
                // The receiver lives until every sender is gone.
                let _ = tx.send((i, FileOutcome { path, result }));
            });
        });
        let mut pending = BTreeMap::new();
        let mut next = 0;
        for (i, outcome) in rx {
            pending.insert(i, outcome);
            while let Some(outcome) = pending.remove(&next) {
                sink(outcome);
                next += 1;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidate_and_whole_file_scopes_agree() {
        let src = "def f(x):\n    return {'status': 'ok', 'content': [], 'frames': x, **extra}\n\nlam = lambda: {\"status\": 1, \"content\": [{'status': 1, 'content': [], 'n': 2}]}\n";
        let fast = check_source(src, ParseScope::Candidates);
        assert_eq!(fast.len(), 3);
        assert_eq!(fast, check_source(src, ParseScope::WholeFile));
    }
}
