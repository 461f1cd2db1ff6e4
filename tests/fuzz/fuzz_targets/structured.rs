#![no_main]
//! A structure-aware generator: fuzzer choices → a Python module holding
//! tool-result dicts (key spellings, nesting, layouts) → every invariant.


use libfuzzer_sys::fuzz_target;

#[path = "../invariants.rs"]
mod invariants;

#[path = "../generator.rs"]
mod generator;

fuzz_target!(|program: generator::Program| {
    let text = program.render();
    if let Err(broken) = invariants::check_text(&text) {
        panic!("invariant broken: {broken}\n--- input ---\n{text:?}");
    }
});

