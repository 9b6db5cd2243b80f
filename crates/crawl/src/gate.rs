//! Per-host request spacing: every request to a host (robots.txt, sitemaps,
//! pages, redirects) takes a slot from its gate, and consecutive slots of one
//! host are at least that host's delay apart (`--delay`, raised to its
//! robots.txt `Crawl-delay`). The frontier already spaces the leases it
//! serves; the gate also covers the extra robots/sitemap requests a lease may
//! cause, so the spacing seen by a server always holds.
//!
//! A gate's key is a politeness unit: the host, or with `--politeness
//! domain` its registrable domain ([`crate::run::Shared::politeness_unit`]),
//! so that all hosts of one domain share one gate.
//!
//! Adaptive spacing (`--delay-factor F`, default [`DEFAULT_FACTOR`]): when
//! a request ends, its host's next one waits at least `F ×` the server's
//! response time (from sending the request to the response head, see
//! [`crate::fetch::Fetched::response_time`]), at most [`MAX_ADAPTIVE`], as
//! well as the delay. A server that slows down under load (or is simply
//! slow) is asked less often: with `F = 2` it spends at most a third of its
//! time on this crawl's requests, whatever `--delay` says. A fast server
//! never notices it (a 50 ms answer asks for 100 ms, under the default 1 s
//! delay). A host whose delay is zero (`--delay 0`, politeness off, and no
//! `Crawl-delay`) is not spaced by it either.
//!
//! A rerun of a crawl starts its gates at a floor ([`Gates::resuming`],
//! from [`crate::pace`]): a gate made before one delay past the floor has
//! passed has its first slot there, so the first request a host sees from
//! the rerun comes at least its delay after the last one of the run before.
//!
//! Memory: bounded by the hosts recently served, not by every host the crawl
//! has met. A gate is a 32-byte entry (`(u64, Slot)`, keyed by the xxh3 hash
//! of the unit: two units whose 64-bit hashes collide share one gate, which
//! only spaces their requests more) in a hash map. A gate whose next slot has
//! passed and whose delay is the default says nothing a new gate would not:
//! such gates are dropped in a sweep whenever the map has doubled since the
//! last one (amortised O(1) per request), so the map holds the units served
//! within the last delay, plus those whose delay robots.txt raised, and its
//! table shrinks again after a burst. `tests/host_memory.rs` measures 48 bytes
//! per busy host and 6.5 per host met over time (a `String`-keyed map that
//! kept every host: 101 either way). Hosts
//! contacted are counted in a [`FingerprintSet`] (about 5 bytes a host,
//! false positives at most 2^-36 per new host: the count can only miss one).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mgz_seen::SeenSet;
use mgz_seen::fingerprint::{DEFAULT_EPSILON, FingerprintSet};
use xxhash_rust::xxh3::xxh3_64;

/// Fewest gates at which a sweep runs.
const MIN_SWEEP: usize = 1024;
/// Longest delay a gate keeps (a day; robots.txt delays are capped far lower).
const MAX_DELAY_MS: u64 = 86_400_000;
/// `--delay-factor`'s default: a slow host gets at most a third of its time
/// taken by this crawl (Heritrix's default factor is 5, with a 3 s floor).
pub const DEFAULT_FACTOR: f64 = 2.0;
/// Longest gap a response time asks for: `Crawl-delay`'s cap.
pub const MAX_ADAPTIVE: Duration = crate::robots::MAX_CRAWL_DELAY;

#[derive(Clone, Copy)]
struct Slot {
    next: Instant,
    delay_ms: u64,
}

impl Slot {
    /// Takes the next slot at `now`: returns when it starts and moves
    /// `next` one delay past it.
    fn take(&mut self, now: Instant) -> Instant {
        let start = self.next.max(now);
        self.next = start + Duration::from_millis(self.delay_ms);
        start
    }
}

struct Inner {
    slots: HashMap<u64, Slot>,
    /// Sweep once `slots` holds this many gates.
    sweep_at: usize,
    /// Every unit that ever had a gate.
    seen: FingerprintSet,
    /// A new gate's first slot is no sooner than this plus its delay.
    floor: Option<Instant>,
    /// Units that answered 429 or 503, and until when they are left alone
    /// ([`Gates::block`]): only those, so the common gate stays 32 bytes.
    blocked: HashMap<u64, Instant>,
}

/// Gates for all hosts.
pub struct Gates {
    default_ms: u64,
    /// `--delay-factor`: finite and at least 0 (0: no adaptive spacing).
    factor: f64,
    inner: Mutex<Inner>,
}

/// The key of `unit`'s gate.
fn key(unit: &str) -> u64 {
    xxh3_64(unit.as_bytes())
}

/// `d` in whole milliseconds, at most [`MAX_DELAY_MS`].
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).map_or(MAX_DELAY_MS, |ms| ms.min(MAX_DELAY_MS))
}

impl Inner {
    /// The gate of `unit`, made with the default delay if it has none.
    fn slot(&mut self, unit: &str, default_ms: u64, now: Instant) -> &mut Slot {
        if self.slots.len() >= self.sweep_at {
            self.slots
                .retain(|_, s| s.next > now || s.delay_ms != default_ms);
            self.blocked.retain(|_, until| *until > now);
            self.sweep_at = (self.slots.len() * 2).max(MIN_SWEEP);
            // A burst of busy hosts must not keep its table for good.
            if self.slots.capacity() > 4 * self.sweep_at {
                self.slots.shrink_to(self.sweep_at);
            }
        }
        let seen = &mut self.seen;
        let first = match self.floor {
            Some(f) => now.max(f + Duration::from_millis(default_ms)),
            None => now,
        };
        self.slots.entry(key(unit)).or_insert_with(|| {
            seen.insert(unit.as_bytes());
            Slot {
                next: first,
                delay_ms: default_ms,
            }
        })
    }
}

impl Gates {
    /// Gates with `default_delay` between requests to one host.
    pub fn new(default_delay: Duration) -> Gates {
        Gates::resuming(default_delay, None)
    }

    /// [`Gates::new`] for a crawl whose earlier requests may have gone on
    /// until `floor`: each host's first slot is one delay (its own, once
    /// raised) after it.
    pub fn resuming(default_delay: Duration, floor: Option<Instant>) -> Gates {
        Gates {
            default_ms: millis(default_delay),
            factor: DEFAULT_FACTOR,
            inner: Mutex::new(Inner {
                slots: HashMap::new(),
                sweep_at: MIN_SWEEP,
                seen: FingerprintSet::new(1 << 16, DEFAULT_EPSILON)
                    .expect("a valid constant capacity and rate"),
                floor,
                blocked: HashMap::new(),
            }),
        }
    }

    /// Sets the adaptive factor (see the module docs); a negative or
    /// non-finite one turns adaptive spacing off.
    pub fn with_factor(mut self, factor: f64) -> Gates {
        self.factor = if factor.is_finite() && factor > 0.0 {
            factor
        } else {
            0.0
        };
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Raises `host`'s delay to at least `delay`.
    pub fn raise_delay(&self, host: &str, delay: Duration) {
        let ms = millis(delay);
        let mut g = self.lock();
        let slot = g.slot(host, self.default_ms, Instant::now());
        if ms > slot.delay_ms {
            // The slot already taken was spaced by the old delay; push the next one out.
            slot.next += Duration::from_millis(ms - slot.delay_ms);
            slot.delay_ms = ms;
        }
    }

    /// The current delay of `host`.
    pub fn delay(&self, host: &str) -> Duration {
        let g = self.lock();
        let ms = g
            .slots
            .get(&key(host))
            .map_or(self.default_ms, |s| s.delay_ms);
        Duration::from_millis(ms)
    }

    /// Reserves the next slot of `host` and returns when it starts.
    pub fn reserve(&self, host: &str) -> Instant {
        let mut g = self.lock();
        let now = Instant::now();
        g.slot(host, self.default_ms, now).take(now)
    }

    /// Notes that a request to `host` just finished, its server having
    /// answered in `response_time`: the next one starts no sooner than one
    /// delay from now, nor than the factor times `response_time` from now.
    /// Spacing from the end as well as from the reserved start keeps the gap
    /// a server sees at least the delay even when a request left late (a
    /// busy machine, a slow connect).
    pub fn done(&self, host: &str, response_time: Duration) {
        let mut g = self.lock();
        let now = Instant::now();
        let slot = g.slot(host, self.default_ms, now);
        let mut gap = slot.delay_ms;
        if gap > 0 {
            // In f64 milliseconds: `as` saturates, so no product overflows.
            let scaled = (response_time.as_secs_f64() * 1000.0 * self.factor) as u64;
            gap = gap.max(scaled.min(millis(MAX_ADAPTIVE)));
        }
        slot.next = slot.next.max(now + Duration::from_millis(gap));
    }

    /// Leaves `host` alone until `until` (a 429 or 503 answer's
    /// `Retry-After`, or the back-off): no slot starts before it, and a
    /// request that reserved an earlier slot sees [`Gates::blocked_until`]
    /// when it wakes, so it does not go out either.
    pub fn block(&self, host: &str, until: Instant) {
        let mut g = self.lock();
        let slot = g.slot(host, self.default_ms, Instant::now());
        slot.next = slot.next.max(until);
        let until = g.blocked.get(&key(host)).map_or(until, |u| (*u).max(until));
        g.blocked.insert(key(host), until);
    }

    /// When `host`'s block ends, if it is blocked now.
    pub fn blocked_until(&self, host: &str) -> Option<Instant> {
        let mut g = self.lock();
        let k = key(host);
        let until = *g.blocked.get(&k)?;
        if until > Instant::now() {
            return Some(until);
        }
        g.blocked.remove(&k);
        None
    }

    /// Reserves the next slot of `host` and returns when it starts, unless
    /// that is more than `max_wait` from now: then reserves nothing and
    /// returns how far off it is. One look at the gate for both.
    pub fn reserve_within(&self, host: &str, max_wait: Duration) -> Result<Instant, Duration> {
        let mut g = self.lock();
        let now = Instant::now();
        let slot = g.slot(host, self.default_ms, now);
        let ahead = slot.next.saturating_duration_since(now);
        if ahead > max_wait {
            return Err(ahead);
        }
        Ok(slot.take(now))
    }

    /// How long until `host`'s next free slot (zero when it is free now or
    /// has no gate).
    pub fn ahead(&self, host: &str) -> Duration {
        let g = self.lock();
        g.slots.get(&key(host)).map_or(Duration::ZERO, |s| {
            s.next.saturating_duration_since(Instant::now())
        })
    }

    /// Number of hosts (politeness units) that ever had a gate.
    pub fn hosts(&self) -> usize {
        self.lock().seen.len()
    }

    /// Gates held now (see the module docs).
    pub fn held(&self) -> usize {
        self.lock().slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_spaced_per_host() {
        let g = Gates::new(Duration::from_millis(100));
        let a1 = g.reserve("a");
        let a2 = g.reserve("a");
        let b1 = g.reserve("b");
        assert!(a2 - a1 >= Duration::from_millis(100));
        assert!(b1 < a2);
        g.raise_delay("a", Duration::from_millis(500));
        let a3 = g.reserve("a");
        assert!(a3 - a2 >= Duration::from_millis(500));
        assert_eq!(g.delay("a"), Duration::from_millis(500));
        g.raise_delay("a", Duration::from_millis(10));
        assert_eq!(g.delay("a"), Duration::from_millis(500));
    }

    #[test]
    fn idle_gates_are_swept_and_every_host_is_still_counted() {
        let g = Gates::new(Duration::from_millis(1));
        for round in 0..20 {
            for i in 0..5_000 {
                g.reserve(&format!("h{round}-{i}.example"));
            }
            // Every gate of earlier rounds is idle; only this round's can
            // be kept by a sweep, and the map holds at most twice those.
            assert!(g.held() <= 10_000, "round {round}: {} gates", g.held());
            std::thread::sleep(Duration::from_millis(3));
        }
        assert_eq!(g.hosts(), 100_000);
        let cap = g.lock().slots.capacity();
        assert!(cap <= 4 * 10_000, "capacity {cap}");
    }

    #[test]
    fn sweeps_keep_raised_delays_and_slots_still_ahead() {
        let g = Gates::new(Duration::ZERO);
        g.raise_delay("slow", Duration::from_millis(300));
        let s1 = g.reserve("slow");
        let busy = Gates::new(Duration::from_secs(3600));
        let b1 = busy.reserve("busy");
        for i in 0..5 * MIN_SWEEP {
            g.reserve(&format!("h{i}"));
            busy.reserve(&format!("h{i}"));
        }
        // With no default delay, every other gate is idle and swept.
        assert!(g.held() < 2 * MIN_SWEEP, "{} gates", g.held());
        assert_eq!(g.delay("slow"), Duration::from_millis(300));
        assert!(g.reserve("slow") - s1 >= Duration::from_millis(300));
        // A gate whose next slot is still ahead survives every sweep.
        assert_eq!(busy.held(), 5 * MIN_SWEEP + 1);
        assert!(busy.reserve("busy") - b1 >= Duration::from_secs(3600));
        // A swept gate starts afresh, and its host is not counted twice.
        assert_eq!(g.hosts(), 5 * MIN_SWEEP + 1);
        g.done("h0", Duration::ZERO);
        assert_eq!(g.hosts(), 5 * MIN_SWEEP + 1);
    }

    #[test]
    fn a_resumed_crawls_first_slots_wait_one_delay_past_the_floor() {
        // The floor is the earlier run's last request, up to now. Delays of
        // seconds: nothing sleeps, and a stalled test thread cannot pass one.
        let floor = Instant::now() - Duration::from_millis(100);
        let g = Gates::resuming(Duration::from_secs(3), Some(floor));
        let a1 = g.reserve("a");
        assert_eq!(a1, floor + Duration::from_secs(3));
        assert!(g.reserve("a") - a1 >= Duration::from_secs(3));
        // A delay raised by robots.txt counts from the floor too.
        g.raise_delay("slow", Duration::from_secs(9));
        assert_eq!(g.reserve("slow"), floor + Duration::from_secs(9));
        // Without a default delay, only raised gates wait.
        let z = Gates::resuming(Duration::ZERO, Some(floor));
        assert!(z.reserve("b") <= Instant::now());
        // A floor more than a delay ago holds nothing back.
        let old = Instant::now() - Duration::from_millis(400);
        let o = Gates::resuming(Duration::from_millis(300), Some(old));
        let c = o.reserve("c");
        assert!(c <= Instant::now() && c > old + Duration::from_millis(300));
    }

    #[test]
    fn a_slow_answer_spaces_the_next_request_by_the_factor() {
        // Delays of seconds: nothing sleeps, and a stalled test thread
        // cannot make a bound pass.
        let s = Duration::from_secs(1);
        let g = Gates::new(s); // DEFAULT_FACTOR, 2
        let next_after = |g: &Gates, host: &str, took: Duration| {
            g.reserve(host);
            let before = Instant::now();
            g.done(host, took);
            let next = g.reserve(host);
            (
                next.saturating_duration_since(before),
                next - Instant::now().min(next),
            )
        };
        // 3 s answers: 6 s to the next request, more than the delay.
        let (least, most) = next_after(&g, "slow", 3 * s);
        assert!(least >= 6 * s && most <= 6 * s, "{least:?} {most:?}");
        // A fast answer leaves the delay in charge.
        let (least, most) = next_after(&g, "fast", Duration::from_millis(10));
        assert!(least >= s && most <= s, "{least:?} {most:?}");
        // A hung one asks for the cap at most.
        let (least, most) = next_after(&g, "hung", Duration::from_secs(3600));
        assert!(least >= MAX_ADAPTIVE && most <= MAX_ADAPTIVE, "{least:?}");
        let (least, _) = next_after(&g, "stuck", Duration::MAX);
        assert!(least >= MAX_ADAPTIVE, "{least:?}");
        // Another factor scales it; 0, a negative or a non-finite one turn it off.
        let half = Gates::new(s).with_factor(0.5);
        let (least, most) = next_after(&half, "slow", 4 * s);
        assert!(least >= 2 * s && most <= 2 * s, "{least:?} {most:?}");
        for f in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let off = Gates::new(s).with_factor(f);
            let (least, most) = next_after(&off, "slow", 3 * s);
            assert!(least >= s && most <= s, "factor {f}: {least:?} {most:?}");
        }
        // Politeness off (no delay): no spacing at all, until robots.txt
        // gives the host a delay.
        let z = Gates::new(Duration::ZERO);
        let (_, most) = next_after(&z, "x", 3 * s);
        assert_eq!(most, Duration::ZERO);
        z.raise_delay("y", Duration::from_millis(100));
        let (least, _) = next_after(&z, "y", 3 * s);
        assert!(least >= 6 * s, "{least:?}");
    }

    #[test]
    fn a_blocked_host_takes_no_slot_before_its_block_ends() {
        // Seconds again: nothing sleeps.
        let s = Duration::from_secs(1);
        let g = Gates::new(s);
        let reserved = g.reserve("busy");
        assert_eq!(g.blocked_until("busy"), None);
        let until = Instant::now() + 60 * s;
        g.block("busy", until);
        // A slot reserved before is still the caller's to give up; the
        // next free one comes after the block, and the block is reported.
        assert!(reserved <= Instant::now() + s);
        assert_eq!(g.blocked_until("busy"), Some(until));
        let ahead = g.reserve_within("busy", 2 * s).unwrap_err();
        assert!(ahead > 59 * s, "{ahead:?}");
        assert!(g.reserve_within("busy", 61 * s).unwrap() >= until);
        // A shorter block later does not shorten it; other hosts are free.
        g.block("busy", Instant::now() + s);
        assert_eq!(g.blocked_until("busy"), Some(until));
        assert_eq!(g.blocked_until("other"), None);
        assert_eq!(g.ahead("other"), Duration::ZERO);
        assert!(g.reserve_within("other", Duration::ZERO).unwrap() <= Instant::now());
        // An ended block is forgotten.
        g.block("brief", Instant::now() - s);
        assert_eq!(g.blocked_until("brief"), None);
        assert!(!g.lock().blocked.contains_key(&key("brief")));
    }

    #[test]
    fn huge_delays_are_capped_instead_of_overflowing() {
        let g = Gates::new(Duration::MAX);
        let a1 = g.reserve("a");
        let a2 = g.reserve("a");
        assert_eq!(a2 - a1, Duration::from_millis(MAX_DELAY_MS));
        g.raise_delay("b", Duration::MAX);
        g.done("b", Duration::MAX);
        assert_eq!(g.delay("b"), Duration::from_millis(MAX_DELAY_MS));
    }
}
