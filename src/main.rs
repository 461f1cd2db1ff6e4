//! The `toolshape` binary: a thin shell around [`toolshape::cli`].

/// mimalloc, not the system allocator: a check makes millions of small,
/// short-lived allocations on two threads, and glibc's arenas spend a
/// quarter of the CPU on them (and the kernel more, growing the arenas a
/// page at a time); ruff swaps its allocator for the same reason.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(toolshape::cli::main());
}
