//! toolshape finds Strands tool results that break the tool-result contract
//! and rewrites them with format-preserving edits.
//!
//! The pipeline, one module per stage:
//! [`discovery`] (which files) → [`source`] and [`syntax`] (text, parsing,
//! Python string semantics) → [`contract`] (what a tool result is and what
//! violates it) → [`diagnostics`] (findings) → [`check`] (the driver) →
//! [`report`] (output formats) → [`cli`], with [`config`] for each folder's
//! settings and [`progress`] for long runs. `fix` goes through [`fixer`] and
//! [`apply`], or, with `--interactive`, through [`review`]; `check
//! --add-ignores` writes baseline suppressions through [`baseline`]. [`stats`]
//! counts the work a run does, for `--verbose`.

pub mod apply;
pub mod baseline;
pub mod check;
pub mod cli;
pub mod config;
pub mod contract;
pub mod diagnostics;
pub mod diff;
pub mod discovery;
pub mod fix;
pub mod fixer;
pub mod progress;
pub mod project;
pub mod report;
pub mod review;
pub mod rules;
pub mod semantic;
pub mod source;
pub mod stats;
pub mod suppress;
pub mod syntax;
