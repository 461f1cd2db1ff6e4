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

/// How the heap fits the run. Transparent huge pages, only where they
/// pay: mimalloc marks its arenas for huge pages, and memory then faults
/// in 2 MiB at a time instead of 4 KiB. On the dense benchmark tree,
/// `check`'s 8,800 page faults become 330 and it takes 5-17% less time;
/// but a huge page that a run only touches in part counts whole, and the
/// peak memory grows by half (44 → 62 MB). So they stay on only for a
/// `check` of at most as many files as the first phase keeps the texts of
/// ([`toolshape::source::TextCache::SEEDED_FILES`]); a check of a whole
/// environment (once its files are found), `fix` and `review` (which hold
/// more at a time) turn them off. `MIMALLOC_ALLOW_THP=0` turns them off
/// for every run.
///
/// Such a `check` also keeps the memory it frees for its own next
/// allocations: by default mimalloc gives freed memory back to the kernel
/// after 10 ms (it gave back 52 MB during a 55 ms dense check), and each
/// page asked for again is faulted and zeroed anew. Kept, the peak memory
/// is the same and the dense check 2-4% quicker. `MIMALLOC_PURGE_DELAY`
/// set in the environment is left as it is.
mod heap {
    use std::ffi::{c_int, c_long};
    use toolshape::cli::Run;

    pub fn fit(run: Run) {
        match run {
            Run::Check => keep_freed_memory(true),
            Run::Checking { files } if files <= toolshape::source::TextCache::SEEDED_FILES => {}
            Run::Checking { .. } => {
                keep_freed_memory(false);
                huge_pages_off();
            }
            Run::Other => huge_pages_off(),
        }
    }

    // mimalloc's option setter; `libmimalloc-sys` declares it only with a
    // feature that pulls in another crate.
    unsafe extern "C" {
        fn mi_option_set(option: c_int, value: c_long);
    }

    /// `mi_option_purge_delay` of `mimalloc.h` (version 2). The options are
    /// part of mimalloc's ABI: retired ones keep their place.
    const PURGE_DELAY: c_int = 15;
    /// Its default: freed memory goes back to the kernel after 10 ms.
    const DEFAULT_PURGE_DELAY: c_long = 10;

    fn keep_freed_memory(keep: bool) {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        // SAFETY: sets one integer of mimalloc's options table; the runs
        // call this before any other thread exists, or while the pool's
        // threads wait between phases (a reader sees the old or the new
        // delay, either of which is safe).
        unsafe { mi_option_set(PURGE_DELAY, if keep { -1 } else { DEFAULT_PURGE_DELAY }) }
    }

    #[cfg(target_os = "linux")]
    fn huge_pages_off() {
        // SAFETY: PR_SET_THP_DISABLE takes plain integers and touches no
        // memory of ours; on failure, huge pages stay on, which is safe.
        let _ = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
    }

    #[cfg(not(target_os = "linux"))]
    fn huge_pages_off() {}
}

fn main() {
    tree_sitter_alloc::install();
    std::process::exit(toolshape::cli::main_with(heap::fit));
}
