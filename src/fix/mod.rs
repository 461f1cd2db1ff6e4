//! Fix planning: for each violating tool-result dict, the edits that move its
//! extra keys and spreads into a `{"json": {...}}` content block, and whether
//! doing so is safe.
//!
//! As in ruff's `ruff_diagnostics`, a [`Fix`] is a set of [`Edit`]s with an
//! [`Applicability`]. A fix is *safe* when the rewritten dict provably yields
//! the same status, content blocks (plus the json block) and toolUseId, with
//! side effects in the same order; otherwise it is *unsafe* and says why. A
//! dict that cannot be rewritten mechanically, or whose rewrite would break
//! the program, gets a [`Remedy::Manual`] with the reason. Planning is pure:
//! source text in, edits out. Applying them is [`crate::apply`]'s job.

mod augment;
pub(crate) mod layout;
mod plan;
pub mod reads;
mod safety;
mod writes;

pub use layout::Style;

use crate::contract;
use crate::diagnostics::Finding;
use crate::semantic::project::BuilderSpec;
use crate::syntax::ParsedPiece;

use crate::syntax::tree::{FieldChild, KindName};
use std::ops::Range;

pub use crate::diagnostics::{Applicability, Edit};

/// The rewrite of one tool-result dict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    /// Non-overlapping edits, sorted by position.
    pub edits: Vec<Edit>,
    pub applicability: Applicability,
    /// Why the fix is unsafe, in words a reviewer understands (empty when safe).
    pub unsafe_reasons: Vec<String>,
    /// What moves into the json block, in order: key names and `**spread`s.
    pub moves: Vec<String>,
    /// Whether the text block now mentions moved telemetry, and why not.
    pub text: TextAugment,
    /// What a repair of a result's shape (TS006–TS009) does, in words
    /// (`None` for the moves of keys).
    pub repair: Option<String>,
}

/// What a fix does to the text block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextAugment {
    /// The text now mentions `keys` (and not the `skipped` ones, each with
    /// why): the text expression `before` becomes `after` (source text).
    Added { keys: Vec<String>, skipped: Vec<String>, before: String, after: String },
    /// The text is left as it is, for this reason.
    NotAdded(String),
}

impl TextAugment {
    /// A one-line note for reviewers.
    pub fn note(&self) -> String {
        match self {
            TextAugment::Added { keys, skipped, .. } if skipped.is_empty() => {
                format!("text augmented with {}", keys.join(", "))
            }
            TextAugment::Added { keys, skipped, .. } => {
                format!("text augmented with {}; not mentioned: {}", keys.join(", "), skipped.join("; "))
            }
            TextAugment::NotAdded(why) => format!("text not augmented: {why}"),
        }
    }
}

/// What to do about one violating dict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Remedy {
    Fix(Fix),
    /// Leave it to a person, for this reason.
    Manual(String),
}

impl Remedy {
    /// The remedy a rule's `proposal` makes (a repair of a result's shape,
    /// which moves no key); `text` says why its text block is as it is.
    pub fn of(proposal: crate::diagnostics::Proposal, text: &str) -> Self {
        match proposal {
            crate::diagnostics::Proposal::Edits { edits, applicability, unsafe_reasons, title } => Remedy::Fix(Fix {
                edits,
                applicability,
                unsafe_reasons,
                moves: Vec::new(),
                text: TextAugment::NotAdded(text.to_owned()),
                repair: Some(title),
            }),
            crate::diagnostics::Proposal::Manual(why) => Remedy::Manual(why),
        }
    }
}

/// What a TS005 fix says of the text block.
const NOT_A_RESULT_TEXT: &str = "a tool result made from a dict that was not one";

/// What a plan repairs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A violating dict display, as the contract reads it.
    Dict(contract::ToolResultDict),
    /// One statement's later writes into a result name (TS004 findings).
    Writes(Vec<Finding>),
    /// A part of a tool result of the wrong shape (TS006–TS009): its
    /// status, its content, a block, a block's text.
    Shape(Box<Finding>),
}

/// The remedy for one violating dict, or one statement of later writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The byte range the fix rewrites: the dict, or the write statement.
    pub range: Range<usize>,
    pub subject: Subject,
    pub remedy: Remedy,
    /// Where a reviewer may choose among remedies ([`PlanOptions::alternatives`]):
    /// each fix with what it does, the remedy's fix first. Empty otherwise.
    pub alternatives: Vec<(String, Fix)>,
}

impl Plan {
    /// The fix's applicability; `None` when it needs manual repair.
    pub fn applicability(&self) -> Option<Applicability> {
        match &self.remedy {
            Remedy::Fix(fix) => Some(fix.applicability),
            Remedy::Manual(_) => None,
        }
    }

    /// The findings this plan repairs, in `src` (the text it was planned
    /// on), each marked with the fix's applicability.
    pub fn findings(&self, src: &str, index: &crate::syntax::LineIndex) -> Vec<Finding> {
        let fixable = self.applicability();
        let found = match &self.subject {
            Subject::Dict(dict) => crate::rules::findings_for(dict, src, index),
            Subject::Writes(findings) => findings.clone(),
            Subject::Shape(finding) => vec![(**finding).clone()],
        };
        found.into_iter().map(|f| Finding { fixable, ..f }).collect()
    }
}

pub(crate) use crate::syntax::tree::excerpt;

/// Whether fixes also mention moved telemetry in the text block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AugmentText {
    /// Where it is provably safe (the default).
    #[default]
    Safe,
    /// Never touch the text block.
    Never,
}

/// Everything planning needs besides the source.
#[derive(Debug, Clone)]
pub struct PlanOptions {
    pub style: Style,
    pub augment_text: AugmentText,
    /// Whether to build the edits; `check` needs only each fix's verdict.
    pub with_edits: bool,
    /// What counts as a violation in this project.
    pub rules: contract::Rules,
    /// The result builders this file defines, with what their calls in
    /// the project allow ([`crate::semantic::project`]).
    pub builders: Vec<BuilderSpec>,
    /// Origins (a display, a write statement) whose moved keys the project
    /// reads, each with the read: their fixes are unsafe for it.
    pub read_reasons: Vec<(Range<usize>, String)>,
    /// Displays whose content blocks the project reads (`r["content"][0]`):
    /// their text is not augmented.
    pub keep_text: Vec<Range<usize>>,
    /// The TS005 findings of the file (the project pass finds them): each
    /// display is made a real tool result, unless the project reads its keys.
    pub not_results: Vec<Finding>,
    /// Also plan the other remedies a reviewer may choose
    /// ([`Plan::alternatives`]): the review's `Tab`.
    pub alternatives: bool,
    /// Append a new json block even where one could be merged into.
    pub append_json: bool,
}

impl PlanOptions {
    /// Options for `src`: its layout habits and the given line length.
    pub fn for_source(src: &str, line_length: usize, augment_text: AugmentText, rules: contract::Rules) -> Self {
        PlanOptions {
            style: Style::detect(src, line_length),
            augment_text,
            with_edits: true,
            rules,
            builders: Vec::new(),
            read_reasons: Vec::new(),
            keep_text: Vec::new(),
            not_results: Vec::new(),
            alternatives: false,
            append_json: false,
        }
    }

    /// Options for judging fixes without building them.
    pub fn verdicts_only(rules: contract::Rules) -> Self {
        let style = Style { newline: "\n", indent_unit: "    ".into(), line_length: usize::MAX };
        PlanOptions {
            style,
            augment_text: AugmentText::Never,
            with_edits: false,
            rules,
            builders: Vec::new(),
            read_reasons: Vec::new(),
            keep_text: Vec::new(),
            not_results: Vec::new(),
            alternatives: false,
            append_json: false,
        }
    }

    /// These options, for a file that defines the result `builders`.
    pub fn with_builders(self, builders: Vec<BuilderSpec>) -> Self {
        PlanOptions { builders, ..self }
    }

    /// These options, with the reads of moved keys in the project.
    pub fn with_read_reasons(self, read_reasons: Vec<(Range<usize>, String)>) -> Self {
        PlanOptions { read_reasons, ..self }
    }

    /// Whether the unsafe reason `why` of a fix is a read of a key it
    /// moves: of the file's results, or passed through one of its builders.
    pub fn is_read_reason(&self, why: &str) -> bool {
        self.read_reasons.iter().any(|(_, r)| r == why)
            || self.builders.iter().any(|b| b.read_reasons.iter().any(|r| r == why))
    }
}

/// Plans a remedy for every violating tool-result dict in the parsed pieces
/// of `src`, and for every statement of later writes into a result name
/// (TS004), in source order.
pub fn plan_source(src: &str, pieces: &[ParsedPiece], options: &PlanOptions) -> Vec<Plan> {
    plan_source_in(src, pieces, options, &crate::semantic::FileContext::for_pieces(src, pieces))
}

/// [`plan_source`] with the file's whole-file context (a piece that is the
/// whole file serves it; otherwise the file is parsed whole only if some
/// question about the code around a dict is asked).
pub fn plan_source_in(
    src: &str,
    pieces: &[ParsedPiece],
    options: &PlanOptions,
    context: &crate::semantic::FileContext<'_>,
) -> Vec<Plan> {
    let mut plans = Vec::new();
    let index = context.line_index();
    contract::for_each_tool_result(src, pieces, &options.rules, |node, piece, dict| {
        let piece_src = &src[piece.offset..];
        let shapes = crate::rules::shape_findings(node, &dict, (piece_src, piece.offset), src, &options.rules, context);
        if !shapes.is_empty() {
            // A dict someone else parses is repaired by no one but a person.
            let keys = dict.entries.iter().filter_map(|e| e.key_name());
            let strong = plan::evidently_not_a_result(src, dict.range.start, keys);
            plans.extend(shapes.into_iter().map(|shape| shape_plan(shape, strong.as_deref())));
        }
        if dict.is_violating() {
            let root = piece.tree.root_node();
            let remedy = plan::plan_dict(src, index, context, piece.offset, root, node, &dict, options);
            let mut alternatives = Vec::new();
            if let (true, Remedy::Fix(merged)) = (options.alternatives, &remedy) {
                // Where the fix merges into an existing json block, a new
                // block may be appended instead.
                let append = PlanOptions { append_json: true, alternatives: false, ..options.clone() };
                if let Remedy::Fix(appended) =
                    plan::plan_dict(src, index, context, piece.offset, root, node, &dict, &append)
                    && appended.edits != merged.edits
                {
                    alternatives = vec![
                        ("merge into the existing json block".to_owned(), merged.clone()),
                        ("append a new json block".to_owned(), appended),
                    ];
                }
            }
            plans.push(Plan { range: dict.range.clone(), subject: Subject::Dict(dict), remedy, alternatives });
        }
    });
    plans.extend(
        options.not_results.iter().filter_map(|f| not_result_plan(src, pieces, index, f, options.alternatives)),
    );
    let writes = crate::rules::later_writes(src, pieces, &options.rules, context);
    if !writes.is_empty() {
        plans.extend(writes::plan_writes(src, context, writes, options));
    }
    plans.sort_by_key(|p| (p.range.start, std::cmp::Reverse(p.range.end)));
    for plan in &mut plans {
        let Remedy::Fix(fix) = &mut plan.remedy else { continue };
        // A fix is unsafe when the project reads what it moves: its
        // origin lies in the plan (a display, a write statement) or holds it.
        let r = &plan.range;
        for (origin, reason) in &options.read_reasons {
            let inside = |a: &Range<usize>, b: &Range<usize>| b.start <= a.start && a.end <= b.end;
            if (inside(origin, r) || inside(r, origin)) && !fix.unsafe_reasons.contains(reason) {
                fix.applicability = Applicability::Unsafe;
                fix.unsafe_reasons.push(reason.clone());
            }
        }
    }
    plans
}

/// The plan of a shape finding: its rule's proposal as a fix, or manual
/// when the dict is `evidently` not a tool result.
fn shape_plan(shape: crate::rules::ShapeFinding, evidently: Option<&str>) -> Plan {
    let remedy = match evidently {
        Some(why) => Remedy::Manual(why.to_owned()),
        None => Remedy::of(shape.proposal, "a repair of the result's shape"),
    };
    Plan { range: shape.range, subject: Subject::Shape(Box::new(shape.finding)), remedy, alternatives: Vec::new() }
}

/// The plan of a TS005 finding `found` (its display's range in `src`, as
/// the text stands now), unless the display is a tool result by now.
pub(crate) fn not_result_plan(
    src: &str,
    pieces: &[ParsedPiece],
    index: &crate::syntax::LineIndex,
    found: &Finding,
    alternatives: bool,
) -> Option<Plan> {
    let range = found.dict.clone();
    let whole;
    let (piece_src, offset, root) = match pieces.iter().find(|p| {
        let root = p.tree.root_node();
        p.offset <= range.start && range.end <= p.offset + root.end_byte()
    }) {
        Some(p) => (&src[p.offset..], p.offset, p.tree.root_node()),
        None => {
            whole = crate::syntax::parse(src);
            (src, 0, whole.root_node())
        }
    };
    let dict = root.descendant_for_byte_range(range.start - offset, range.end - offset)?;
    if dict.kind_name() != "dictionary" || dict.byte_range() != (range.start - offset..range.end - offset) {
        return None;
    }
    // A suppression comment silences it, wherever the finding came from.
    if crate::suppress::line_suppression(src, range.start).covers(crate::diagnostics::Code::NotAResult) {
        return None;
    }
    let keys: Vec<String> = {
        let mut cursor = dict.walk();
        dict.named_children(&mut cursor)
            .filter_map(|c| c.field("key"))
            .filter_map(|k| crate::syntax::tree::constant_str(k, piece_src))
            .collect()
    };
    let (status, content) = (keys.iter().any(|k| k == "status"), keys.iter().any(|k| k == "content"));
    let missing = match (status, content) {
        (true, false) => "content",
        (false, true) => "status",
        _ => return None,
    };
    let span = crate::diagnostics::Span::new(index, src, &range);
    let finding = Finding { entry: range.clone(), span, dict: range.clone(), dict_span: span, ..found.clone() };
    let strong = plan::evidently_not_a_result(src, range.start, keys.iter().map(String::as_str));
    let remedy = if let Some(why) = strong {
        Remedy::Manual(why)
    } else if let Some(read) = found.reads.first() {
        let more = match found.reads.len() {
            1 => String::new(),
            n => format!(", +{} more", n - 1),
        };
        let what = read
            .key
            .as_deref()
            .map_or_else(|| "the whole result".to_owned(), |k| format!("its {}", crate::rules::quote_key(k)));
        Remedy::Manual(format!(
            "{}:{} reads {what}{more}: toolshape does not rewrite the reads of a result it reshapes",
            read.path, read.line
        ))
    } else {
        let mut remedies = crate::rules::not_a_result_remedies(dict, piece_src, offset, missing)
            .into_iter()
            .map(|p| Remedy::of(p, NOT_A_RESULT_TEXT));
        let first = remedies.next().unwrap_or_else(|| Remedy::Manual("no remedy".into()));
        if alternatives {
            let fixes: Vec<(String, Fix)> = std::iter::once(first.clone())
                .chain(remedies)
                .filter_map(|r| match r {
                    Remedy::Fix(f) => Some((f.repair.clone().unwrap_or_default(), f)),
                    Remedy::Manual(_) => None,
                })
                .collect();
            if fixes.len() > 1 {
                return Some(Plan {
                    range,
                    subject: Subject::Shape(Box::new(finding)),
                    remedy: first,
                    alternatives: fixes,
                });
            }
        }
        first
    };
    Some(Plan { range, subject: Subject::Shape(Box::new(finding)), remedy, alternatives: Vec::new() })
}

/// Applies non-overlapping `edits` to `src`.
pub fn apply_edits(src: &str, edits: &[Edit]) -> String {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out = String::with_capacity(src.len() + edits.iter().map(|e| e.replacement.len()).sum::<usize>());
    let mut at = 0;
    for edit in sorted {
        debug_assert!(edit.range.start >= at, "edits overlap");
        out.push_str(&src[at..edit.range.start]);
        out.push_str(&edit.replacement);
        at = edit.range.end;
    }
    out.push_str(&src[at..]);
    out
}
