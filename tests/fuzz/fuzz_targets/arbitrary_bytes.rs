#![no_main]
//! Arbitrary bytes → `text_of` → every invariant of `invariants.rs`.

use libfuzzer_sys::fuzz_target;

#[path = "../invariants.rs"]
mod invariants;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = toolshape::source::text_of(data) else { return };
    if let Err(broken) = invariants::check_text(&text) {
        panic!("invariant broken: {broken}\n--- input ---\n{text:?}");
    }
});
