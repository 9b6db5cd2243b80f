//! What the crawler keeps per host outside the frontier, counted by this
//! binary's global allocator: the politeness gates, the per-host page
//! budgets and the seeds' scope. A broad crawl meets millions of hosts, so these must cost a few
//! tens of bytes a host, and the gates only for hosts served lately.
//!
//! One test in this binary, so no other test allocates while it counts.

#[path = "common/counting.rs"]
mod counting;

use mgz_crawl::gate::Gates;
use mgz_crawl::traps::{Filter, Scope, SeedScope, TrapLimits};
use std::time::Duration;

const HOSTS: usize = 100_000;

fn hosts() -> Vec<String> {
    (0..HOSTS)
        .map(|i| format!("www.site-{i}.example.org"))
        .collect()
}

/// Bytes per host that `f` leaves held (the value it returns included).
fn per_host<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let before = counting::live();
    let kept = f();
    let held = counting::live() - before;
    (kept, held as f64 / HOSTS as f64)
}

#[test]
fn per_host_state_costs_tens_of_bytes_and_idle_gates_nothing() {
    let names = hosts();

    // Every host busy (a delay of an hour: no gate is idle).
    let (busy, busy_b) = per_host(|| {
        let g = Gates::new(Duration::from_secs(3600));
        for h in &names {
            g.reserve(h);
        }
        g
    });
    assert_eq!(busy.held(), HOSTS);
    assert_eq!(busy.hosts(), HOSTS);
    drop(busy);

    // Hosts met over time, each idle again after its 1 ms delay: sweeps
    // keep the gates of the latest hosts only; the count stays exact.
    let (met, met_b) = per_host(|| {
        let g = Gates::new(Duration::from_millis(1));
        for chunk in names.chunks(5_000) {
            for h in chunk {
                g.reserve(h);
            }
            std::thread::sleep(Duration::from_millis(3));
        }
        g
    });
    assert!(met.held() <= 10_000, "{} gates held", met.held());
    assert_eq!(met.hosts(), HOSTS);
    drop(met);

    // One URL admitted for every host.
    let (filter, budget_b) = per_host(|| {
        let f = Filter::new(
            SeedScope::new(Scope::Any),
            None,
            None,
            TrapLimits::default(),
        );
        for h in &names {
            assert!(f.try_charge(h));
        }
        f
    });
    drop(filter);

    // The scope of ten seeds a host: each host kept once, as a key.
    let (scope, scope_b) = per_host(|| {
        let mut s = SeedScope::new(Scope::Host);
        for _ in 0..10 {
            for h in &names {
                s.add(h);
            }
        }
        s
    });
    assert_eq!(scope.len(), HOSTS);
    drop(scope);

    eprintln!(
        "per host: busy gates {busy_b:.1} B, gates of hosts met {met_b:.1} B, budgets {budget_b:.1} B, \
         seed scope {scope_b:.1} B"
    );
    assert!(scope_b <= 24.0, "seed scope: {scope_b:.1} B per host");
    assert!(busy_b <= 64.0, "busy gates: {busy_b:.1} B per host");
    assert!(met_b <= 24.0, "gates of hosts met: {met_b:.1} B per host");
    assert!(budget_b <= 40.0, "budgets: {budget_b:.1} B per host");
}
