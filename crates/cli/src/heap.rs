//! Which allocator serves the `mgz` process: mimalloc or glibc malloc,
//! chosen once per process, before `main`, from the command line.
//!
//! Measured (docs/BENCHMARKS.md "Frontier RSS" and "Crawler"):
//! - the frontier under heavy writes (`mgz serve`, `mgz bench frontier`):
//!   glibc's per-thread arenas held peak RSS at ~2 × the heap; mimalloc
//!   with immediate purge and lazily committed arenas at ~1.3 ×, and puts
//!   ran faster;
//! - a small crawl (`mgz crawl` of 1,169 pages): glibc with 2 arenas
//!   peaked at 23–25 MB, mimalloc at 26.5–27 MB (its per-thread pages), which
//!   put the crawl over its bound of 2 × wget2's RSS.
//!
//! So mimalloc serves `serve` and `bench frontier`, glibc everything else;
//! `MGZ_ALLOCATOR=mimalloc|system` overrides the choice (for measuring).
//! mimalloc purges freed pages at once, except under `serve` (1 s, see
//! [`SERVE_PURGE_DELAY_MS`]); `MGZ_PURGE_DELAY=MS` overrides that.
//!
//! Invariant: every block is freed by the allocator that made it. The
//! choice only decides where NEW blocks come from; `free` and `realloc` ask
//! mimalloc whether it owns the pointer (`mi_is_in_heap_region`), so a
//! block allocated before the choice was made is still returned correctly.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use mimalloc::MiMalloc;

static MIMALLOC: AtomicBool = AtomicBool::new(false);

/// `mi_option_arena_eager_commit` in mimalloc v3's `mimalloc.h` enum (the
/// Rust bindings list only the v2 numbering).
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
/// `mi_option_purge_delay` in the same enum.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Runs [`choose`] as an ELF constructor, before the Rust runtime's first
/// allocation (set later, the arena option misses mimalloc's first 1 GiB
/// arena: peak RSS was 120 MB instead of 100 MB at 300k URLs).
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static CHOOSE_EARLY: extern "C" fn() = {
    extern "C" fn early() {
        choose();
    }
    early
};

/// Decides the allocator from `MGZ_ALLOCATOR` or the command line (read
/// without allocating) and tunes mimalloc if it is chosen. Idempotent.
pub fn choose() {
    let mut buf = [0u8; 512];
    let args = cmdline(&mut buf);
    let mut words = args.split(|&b| b == 0).skip(1);
    let (a, b) = (words.next().unwrap_or(b""), words.next().unwrap_or(b""));
    let by_command = a == b"serve" || (a == b"bench" && b == b"frontier");
    let use_mi = match env_choice() {
        Some(v) => v,
        None => by_command,
    };
    if use_mi {
        tune(with_env(c"MGZ_PURGE_DELAY", |v| purge_delay(a, v)));
    }
    MIMALLOC.store(use_mi, Relaxed);
}

/// Whether new blocks come from mimalloc.
pub fn is_mimalloc() -> bool {
    MIMALLOC.load(Relaxed)
}

/// `/proc/self/cmdline` (NUL-separated arguments), truncated to `buf`.
fn cmdline(buf: &mut [u8]) -> &[u8] {
    let path = c"/proc/self/cmdline";
    // SAFETY: a NUL-terminated path; the fd is closed below; `read` writes
    // at most `buf.len()` bytes into `buf`.
    let n = unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return &[];
        }
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        n
    };
    &buf[..n.max(0) as usize]
}

/// `MGZ_ALLOCATOR`: `mimalloc` → Some(true), `system` → Some(false).
fn env_choice() -> Option<bool> {
    with_env(c"MGZ_ALLOCATOR", |v| match v? {
        b"mimalloc" => Some(true),
        b"system" => Some(false),
        _ => None,
    })
}

/// mimalloc's purge delay under `mgz serve`, ms. A PutDiscovered stream
/// hands the frontier up to 16,384 URLs at once, whose multi-megabyte
/// buffers are freed and allocated again at every call, and the discovery
/// log's values (a megabyte or more per call) are freed in bulk after each
/// move: purged soon after, each call faulted fresh pages in. Measured at
/// 10M URLs, two streams (docs/BENCHMARKS.md, "Session 30"): 10 ms (the
/// choice of session 13, mimalloc's own default) 268-281k URLs/s with 13-16 s
/// of system CPU; 1,000 ms 303-314k URLs/s with 5-7 s, and the crawler loop
/// served 40.9k against 36.1k URLs/s; for 65-110 MB more peak RSS at 1M and
/// 10M URLs (freed pages kept a second: a fixed cost, not one per URL).
/// `mgz bench frontier` keeps 0: its peak RSS per URL at 10M is the bound
/// it checks.
const SERVE_PURGE_DELAY_MS: libc::c_long = 1000;

/// The purge delay for first argument `command`: `MGZ_PURGE_DELAY` (ms,
/// 0..=1000) when set, else [`SERVE_PURGE_DELAY_MS`] for `serve`, else 0.
fn purge_delay(command: &[u8], env: Option<&[u8]>) -> libc::c_long {
    let from_env = env
        .and_then(|v| std::str::from_utf8(v).ok())
        .and_then(|v| v.parse::<libc::c_long>().ok())
        .filter(|ms| (0..=1000).contains(ms));
    match (from_env, command) {
        (Some(ms), _) => ms,
        (None, b"serve") => SERVE_PURGE_DELAY_MS,
        (None, _) => 0,
    }
}

/// `f` of the value of environment variable `name`, read without
/// allocating and used at once.
fn with_env<R>(name: &std::ffi::CStr, f: impl FnOnce(Option<&[u8]>) -> R) -> R {
    // SAFETY: getenv with a NUL-terminated name; it runs before any thread
    // exists, so nothing changes the environment while `f` reads the value.
    let v = unsafe { libc::getenv(name.as_ptr()) };
    // SAFETY: a non-null result of getenv is a NUL-terminated string, valid
    // until the environment changes (not before `f` returns, see above).
    let value = (!v.is_null()).then(|| unsafe { std::ffi::CStr::from_ptr(v) }.to_bytes());
    f(value)
}

/// Sets mimalloc's purge delay (`delay_ms`: how long freed pages stay
/// before they go back to the OS) and makes it commit arena memory only as
/// it is used, so RSS follows the heap.
fn tune(delay_ms: libc::c_long) {
    // SAFETY: mi_option_set only stores an option value; mimalloc reads
    // options at each purge and arena reservation, so setting them while
    // allocations are live is allowed (its docs: options may be set any time).
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, delay_ms);
        libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0);
    }
}

fn owned_by_mimalloc(ptr: *mut u8) -> bool {
    // SAFETY: a read-only lookup of the address in mimalloc's region map.
    unsafe { libmimalloc_sys::mi_is_in_heap_region(ptr.cast()) }
}

/// The chosen allocator, as a `GlobalAlloc` (wrapped by the counter).
pub struct Chosen;

// SAFETY: new blocks come from one of two sound allocators; each block is
// freed or resized by the one that owns it (see the module invariant).
unsafe impl GlobalAlloc for Chosen {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is; the caller upholds `alloc`'s contract.
        unsafe {
            if is_mimalloc() {
                MiMalloc.alloc(layout)
            } else {
                System.alloc(layout)
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        unsafe {
            if is_mimalloc() {
                MiMalloc.alloc_zeroed(layout)
            } else {
                System.alloc_zeroed(layout)
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` goes back to the allocator that made it.
        unsafe {
            if owned_by_mimalloc(ptr) {
                MiMalloc.dealloc(ptr, layout)
            } else {
                System.dealloc(ptr, layout)
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: resized by the allocator that made it (the block stays there).
        unsafe {
            if owned_by_mimalloc(ptr) {
                MiMalloc.realloc(ptr, layout, new_size)
            } else {
                System.realloc(ptr, layout, new_size)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `serve` keeps freed pages 1 s, everything else purges at once;
    /// a valid `MGZ_PURGE_DELAY` wins, an invalid one is ignored.
    #[test]
    fn purge_delay_by_command_and_environment() {
        assert_eq!(purge_delay(b"serve", None), SERVE_PURGE_DELAY_MS);
        assert_eq!(purge_delay(b"bench", None), 0);
        assert_eq!(purge_delay(b"serve", Some(b"0")), 0);
        assert_eq!(purge_delay(b"bench", Some(b"250")), 250);
        assert_eq!(purge_delay(b"serve", Some(b"-5")), SERVE_PURGE_DELAY_MS);
        assert_eq!(purge_delay(b"bench", Some(b"5000")), 0);
        assert_eq!(purge_delay(b"bench", Some(b"ten")), 0);
    }

    /// The ownership test the invariant rests on: every mimalloc block, small
    /// to huge and over-aligned, is recognised, and no glibc block is.
    #[test]
    fn ownership_is_recognised_for_every_size() {
        for shift in [0u32, 3, 6, 10, 14, 17, 20, 23, 26] {
            for align in [1usize, 16, 4096] {
                let layout = Layout::from_size_align(1usize << shift, align).unwrap();
                // SAFETY: non-zero size; each block is freed by its allocator.
                unsafe {
                    let m = MiMalloc.alloc(layout);
                    let s = System.alloc(layout);
                    assert!(!m.is_null() && !s.is_null());
                    assert!(owned_by_mimalloc(m), "mimalloc {layout:?}");
                    assert!(!owned_by_mimalloc(s), "glibc {layout:?}");
                    MiMalloc.dealloc(m, layout);
                    System.dealloc(s, layout);
                }
            }
        }
    }
}
