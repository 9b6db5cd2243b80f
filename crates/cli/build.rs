//! Links the `mgz` executable position-dependent (`-no-pie`) on Linux.
//!
//! Why (docs/BENCHMARKS.md, "Crawler"): a PIE `mgz` carries ~1 MB of
//! `.rela.dyn` relative relocations that the dynamic loader reads at every
//! start, and it writes the relocated pointers into ~0.7 MB of
//! `.data.rel.ro` (vtables, string tables), which become private dirty
//! pages: both count in every command's resident memory, and the crawl's
//! peak RSS is bounded by 2x wget2's. A non-PIE executable has those
//! addresses fixed by the linker, so they stay clean file pages read on
//! demand. Only the final link changes (the objects stay position
//! independent, which a non-PIE link accepts), so no dependency is rebuilt;
//! the cost is that the binary loads at a fixed address (no ASLR for its
//! own code; libraries, heap and stacks stay randomised).
fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
