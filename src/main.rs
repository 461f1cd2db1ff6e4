//! The `toolshape` binary: a thin shell around [`toolshape::cli`].

/// mimalloc, not the system allocator: a check makes millions of small,
/// short-lived allocations on two threads, and glibc's arenas spend a
/// quarter of the CPU on them (and the kernel more, growing the arenas a
/// page at a time); ruff swaps its allocator for the same reason.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// tree-sitter's C library allocates its parse stacks and trees through
/// `malloc`, not through Rust's global allocator: half of a check's parse
/// time is spent there. These hand those allocations to mimalloc as well.
mod tree_sitter_alloc {
    use std::ffi::c_void;

    /// tree-sitter asks that no allocation of a non-zero size return null.
    fn or_abort(p: *mut c_void, size: usize) -> *mut c_void {
        if p.is_null() && size != 0 {
            std::process::abort();
        }
        p
    }
    unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
        or_abort(unsafe { libmimalloc_sys::mi_malloc(size) }, size)
    }
    unsafe extern "C" fn calloc(n: usize, size: usize) -> *mut c_void {
        let Some(bytes) = n.checked_mul(size) else { std::process::abort() };
        or_abort(unsafe { libmimalloc_sys::mi_zalloc(bytes) }, bytes)
    }
    unsafe extern "C" fn realloc(p: *mut c_void, size: usize) -> *mut c_void {
        or_abort(unsafe { libmimalloc_sys::mi_realloc(p, size) }, size)
    }
    unsafe extern "C" fn free(p: *mut c_void) {
        unsafe { libmimalloc_sys::mi_free(p) }
    }

    /// Installs mimalloc as tree-sitter's allocator; called first thing,
    /// before any parser or tree exists.
    pub fn install() {
        // SAFETY: the four functions are one allocator family, abort
        // rather than return null, and return pointers aligned as `malloc`'s
        // (mimalloc aligns to 16 bytes); no tree-sitter object exists yet
        // and no other thread runs.
        unsafe { tree_sitter::set_allocator(Some(tree_sitter::Allocator { malloc, calloc, realloc, free })) }
    }
}

fn main() {
    tree_sitter_alloc::install();
    std::process::exit(toolshape::cli::main());
}
