//! Interactive review (`toolshape fix --interactive`): every fix is shown with
//! the findings it resolves, its safety verdict, what it moves and its diff,
//! and is applied or skipped one at a time, in the spirit of `git add -p`.
//!
//! [`FileReview`] is the pure engine for one file: plan the text as it
//! stands, offer the first undecided fix, apply or skip it, plan again — so
//! decisions compose, and a tool result nested in another is offered after
//! the outer one is decided, computed on the text as it then is.
//! [`review_files`] drives it over files with answers from a
//! [`DecisionSource`]: [`TerminalDecisions`] reads keys from the terminal,
//! tests script their own. A file is written (re-parse checked, atomically,
//! BOM kept) as soon as its last fix is decided, so a later Ctrl-C or crash
//! never loses a finished file and never leaves a half-written one; `q`
//! writes what was accepted in the file under review too.
//!
//! `a` applies this fix and every remaining one in the file, unsafe ones
//! included, as its key says. The keys that reach across files (`k`, `A`)
//! apply only *safe* fixes without asking: an unsafe fix they meet is still
//! shown and needs its own `y`; pressed on an unsafe fix, they set their rule
//! and ask about that fix again.

mod engine;
mod terminal;
#[cfg(test)]
mod tests;

pub use engine::*;
pub use terminal::*;
