//! A counting global allocator, so benchmarks measure memory instead of
//! estimating it. It wraps the allocator [`crate::heap`] chooses and, once [`enable`]d
//! (`mgz bench` does), keeps two relaxed atomics: bytes live now and the
//! high-water mark since the last [`reset_peak`]. Relaxed is enough: the
//! counters are read on the thread that did the work being measured, after
//! it finished.
//!
//! Off by default: every other command allocates at full speed. Counting
//! costs two read-modify-writes of shared cache lines per allocation, which
//! was ~5 % of a crawl's CPU (perf) with threads on both cores allocating.
//! Blocks freed after [`enable`] that were allocated before it make [`live`]
//! low by their size (a few argument strings): measurements are differences
//! taken after enabling.
//!
//! The blocks come from [`crate::heap`]'s choice of mimalloc or glibc.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering::Relaxed};

use crate::heap::Chosen as System;

/// The allocator installed in the `mgz` binary.
pub struct Counting;

static ON: AtomicBool = AtomicBool::new(false);
// Signed: a block allocated before `enable` and freed after it subtracts
// what was never added.
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

/// Starts counting (for the rest of the process).
pub fn enable() {
    ON.store(true, Relaxed);
}

fn grew(by: usize) {
    if ON.load(Relaxed) {
        let by = by as isize;
        let now = LIVE.fetch_add(by, Relaxed) + by;
        PEAK.fetch_max(now, Relaxed);
    }
}

fn shrank(by: usize) {
    if ON.load(Relaxed) {
        LIVE.fetch_sub(by as isize, Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged; the counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is; the caller upholds `alloc`'s contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is; `ptr` came from this allocator.
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                shrank(layout.size() - new_size);
            }
        }
        p
    }
}

/// Glibc malloc arenas allowed (`M_ARENA_MAX`) for a crawl.
pub const ARENAS: i32 = 2;

/// Caps glibc's malloc arenas at [`ARENAS`] for what still uses glibc
/// malloc (SQLite, the TLS library; Rust's heap is mimalloc). Glibc's default is 8 per core,
/// one per thread that finds the others busy). A crawl's threads are many
/// but mostly waiting; each extra arena keeps its own free memory: 2 arenas
/// took ~2.5 MB off a 1,169-page crawl's peak RSS at the same CPU. Call it
/// before threads start; a no-op on other C libraries.
///
/// It also fixes the mmap and trim thresholds at [`MMAP_THRESHOLD`]: left
/// dynamic, glibc raises both after the first large block (a big page body)
/// is freed, and later bodies then fragment the arenas instead of going back
/// to the OS when freed. `MGZ_MALLOC=default` keeps glibc's dynamic
/// thresholds and turns the crawl's periodic [`trim`] off (to measure the
/// difference).
pub fn limit_arenas() {
    #[cfg(target_env = "gnu")]
    {
        let fixed = tuned();
        // SAFETY: `mallopt` only sets allocator parameters; these take any
        // positive value and are safe to set at any time.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, ARENAS);
            if fixed {
                libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
                libc::mallopt(libc::M_TRIM_THRESHOLD, MMAP_THRESHOLD);
            }
        }
    }
}

/// Whether the crawl's allocator tuning is on: fixed thresholds here and
/// the periodic [`trim`]; `MGZ_MALLOC=default` turns both off.
pub fn tuned() -> bool {
    std::env::var_os("MGZ_MALLOC").is_none_or(|v| v != "default")
}

/// Blocks from this size up get their own mapping (glibc's initial default,
/// kept fixed by [`limit_arenas`]); also the free top of an arena kept.
pub const MMAP_THRESHOLD: i32 = 128 * 1024;

/// Gives the free pages inside glibc's arenas back to the OS
/// (`malloc_trim(0)`), not only the free top. A no-op on other C libraries.
pub fn trim() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim takes the arena locks itself and only releases
    // whole free pages.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Bytes allocated (since [`enable`]) and not yet freed.
pub fn live() -> usize {
    LIVE.load(Relaxed).max(0) as usize
}

/// Highest [`live`] value since the last [`reset_peak`].
pub fn peak() -> usize {
    PEAK.load(Relaxed).max(0) as usize
}

/// Starts a new high-water mark at the current [`live`] value.
pub fn reset_peak() {
    PEAK.store(LIVE.load(Relaxed), Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test binary runs with this allocator installed (it is `main.rs`'s
    /// `#[global_allocator]`). Other tests allocate concurrently, so the
    /// check leaves them 16 MiB of slack around a 64 MiB block.
    #[test]
    fn counts_a_large_block_and_its_release() {
        const BIG: isize = 64 << 20;
        const SLACK: isize = 16 << 20;
        enable();
        // The raw signed counter: blocks allocated before `enable` and freed
        // since can hold it below zero, where `live()` clamps.
        let raw = || LIVE.load(Relaxed);
        let before = raw();
        reset_peak();
        let block = std::hint::black_box(vec![1u8; BIG as usize]);
        let during = raw();
        assert!(during + SLACK >= before + BIG, "{before} -> {during}");
        assert!(peak() as isize >= during);
        drop(block);
        assert!(raw() < during - BIG + SLACK);
    }
}
