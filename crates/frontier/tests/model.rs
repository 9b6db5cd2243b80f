//! Model-based test: random sequences of put / get / complete / reschedule /
//! lease expiry / delay / block / limit / delete / reopen, run against the
//! frontier and against a plain in-memory model with the same manual clock.
//! Every `get` must serve exactly what the model allows: only eligible queues,
//! each a FIFO prefix of its due URLs, as many queues as allowed; outcomes,
//! counters and URL states must agree after every step.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use mgz_frontier::{
    Durability, Frontier, FrontierOptions, GetParams, KnownItem, ManualClock, PutOutcome,
    StoreOptions, UrlItem,
};
use proptest::prelude::*;

const T0: u64 = 1_700_000_000_000;
const HOSTS: [&str; 4] = ["h0.a.com", "h1.a.com", "b.org", "c.net"];

#[derive(Debug, Clone)]
enum Op {
    Put(Vec<(usize, u8)>),
    Known(usize, u8, u8),
    Get {
        max_q: u32,
        per_q: u32,
        per_turn: u32,
        lease: u32,
    },
    Advance(u64),
    Delay(Option<usize>, u32),
    Block(usize, u64),
    Limit(usize, u32),
    Delete(usize),
    Active(bool),
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    let host = 0..HOSTS.len();
    prop_oneof![
        4 => prop::collection::vec((host.clone(), 0..6u8), 1..6).prop_map(Op::Put),
        2 => (host.clone(), 0..6u8, 0..3u8).prop_map(|(h, p, s)| Op::Known(h, p, s)),
        4 => (0..3u32, 0..3u32, 0..3u32, prop::sample::select(vec![0u32, 5])).prop_map(
            |(max_q, per_q, per_turn, lease)| Op::Get {
                max_q,
                per_q,
                per_turn,
                lease
            }
        ),
        3 => prop::sample::select(vec![100u64, 1_000, 5_000, 31_000]).prop_map(Op::Advance),
        1 => (prop::option::of(host.clone()), 0..3u32).prop_map(|(h, s)| Op::Delay(h, s)),
        1 => (host.clone(), 0..10u64).prop_map(|(h, s)| Op::Block(h, s)),
        1 => (host.clone(), 0..4u32).prop_map(|(h, n)| Op::Limit(h, n)),
        1 => host.clone().prop_map(Op::Delete),
        1 => any::<bool>().prop_map(Op::Active),
        1 => Just(Op::Reopen),
    ]
}

fn url(h: usize, p: u8) -> String {
    format!("http://{}/p{p}", HOSTS[h])
}

#[derive(Debug, Clone)]
struct MUrl {
    host: usize,
    next_fetch: u64,
    seq: u64,
    lease: u64,
}

#[derive(Debug, Clone, Default)]
struct MQueue {
    delay_ms: Option<u64>,
    block_s: u64,
    limit: u32,
    last_serve: u64,
}

/// The plain model.
struct Model {
    now: u64,
    urls: BTreeMap<String, MUrl>,
    queues: HashMap<usize, MQueue>,
    default_delay: u64,
    seq: u64,
    active: bool,
}

impl Model {
    fn now_s(&self) -> u64 {
        self.now / 1000
    }

    fn put(&mut self, h: usize, p: u8) -> PutOutcome {
        let u = url(h, p);
        if self.urls.contains_key(&u) {
            return PutOutcome::Seen;
        }
        self.queues.entry(h).or_default();
        self.seq += 1;
        let m = MUrl {
            host: h,
            next_fetch: self.now_s(),
            seq: self.seq,
            lease: 0,
        };
        self.urls.insert(u, m);
        PutOutcome::New
    }

    fn known(&mut self, h: usize, p: u8, next_fetch: u64) -> PutOutcome {
        self.queues.entry(h).or_default();
        self.seq += 1;
        let m = MUrl {
            host: h,
            next_fetch,
            seq: self.seq,
            lease: 0,
        };
        match self.urls.insert(url(h, p), m) {
            Some(_) => PutOutcome::Updated,
            None => PutOutcome::New,
        }
    }

    fn live(&self, h: usize) -> usize {
        self.urls
            .values()
            .filter(|u| u.host == h && u.lease > self.now)
            .count()
    }

    fn completed(&self, h: usize) -> u64 {
        self.urls
            .values()
            .filter(|u| u.host == h && u.next_fetch == 0)
            .count() as u64
    }

    /// The URLs queue `h` may serve now, in order, or empty if not eligible.
    fn due(&self, h: usize, per_q: u32, per_turn: u32) -> Vec<String> {
        let Some(q) = self.queues.get(&h) else {
            return vec![];
        };
        let delay = q.delay_ms.unwrap_or(self.default_delay);
        if q.block_s * 1000 > self.now || (q.last_serve > 0 && q.last_serve + delay > self.now) {
            return vec![];
        }
        let live = self.live(h);
        let mut room = if per_q == 0 {
            usize::MAX
        } else {
            (per_q as usize).saturating_sub(live)
        };
        if per_turn > 0 {
            room = room.min(per_turn as usize);
        }
        if q.limit > 0 {
            let used = self.completed(h) + live as u64;
            room = room.min(u64::from(q.limit).saturating_sub(used) as usize);
        }
        let mut due: Vec<_> = self
            .urls
            .iter()
            .filter(|(_, u)| u.host == h && u.next_fetch > 0 && u.next_fetch * 1000 <= self.now)
            .filter(|(_, u)| u.lease <= self.now)
            .map(|(k, u)| ((u.next_fetch, u.seq), k.clone()))
            .collect();
        due.sort();
        due.into_iter().take(room).map(|(_, k)| k).collect()
    }
}

struct Harness {
    dir: tempfile::TempDir,
    clock: ManualClock,
    f: Option<Frontier>,
    m: Model,
}

impl Harness {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::new(T0);
        let f = Some(Self::open(dir.path(), &clock));
        let m = Model {
            now: T0,
            urls: BTreeMap::new(),
            queues: HashMap::new(),
            default_delay: 1000,
            seq: 0,
            active: true,
        };
        Harness { dir, clock, f, m }
    }

    fn open(dir: &std::path::Path, clock: &ManualClock) -> Frontier {
        let opts = FrontierOptions {
            clock: Arc::new(clock.clone()),
            durability: Durability::OsBuffer,
            // 4 discovered URLs per `disc` segment: runs cross many.
            store: StoreOptions {
                segment_bits: 2,
                ..StoreOptions::default()
            },
            ..FrontierOptions::default()
        };
        Frontier::open(dir, opts).unwrap()
    }

    fn f(&self) -> &Frontier {
        self.f.as_ref().unwrap()
    }

    fn step(&mut self, op: &Op) {
        match op {
            Op::Put(items) => {
                let batch: Vec<_> = items
                    .iter()
                    .map(|&(h, p)| UrlItem::new(url(h, p)))
                    .collect();
                let got = self.f().put_discovered(&batch).unwrap();
                let want: Vec<_> = items.iter().map(|&(h, p)| self.m.put(h, p)).collect();
                assert_eq!(got, want);
            }
            Op::Known(h, p, s) => {
                let next_fetch = match s {
                    0 => 0,
                    1 => self.m.now_s() - 5,
                    _ => self.m.now_s() + 10,
                };
                let item = KnownItem {
                    item: UrlItem::new(url(*h, *p)),
                    next_fetch,
                };
                let got = self.f().put_known(&[item]).unwrap();
                assert_eq!(got, vec![self.m.known(*h, *p, next_fetch)]);
            }
            Op::Get {
                max_q,
                per_q,
                per_turn,
                lease,
            } => self.get(*max_q, *per_q, *per_turn, *lease),
            Op::Advance(ms) => {
                self.clock.advance_ms(*ms);
                self.m.now += ms;
            }
            Op::Delay(h, s) => {
                let ms = u64::from(*s) * 1000;
                self.f().set_delay("", h.map(|h| HOSTS[h]), *s).unwrap();
                match h {
                    Some(h) => self.m.queues.entry(*h).or_default().delay_ms = Some(ms),
                    None => self.m.default_delay = ms,
                }
            }
            Op::Block(h, s) => {
                let until = self.m.now_s() + s;
                self.f().block_queue_until("", HOSTS[*h], until).unwrap();
                self.m.queues.entry(*h).or_default().block_s = until;
            }
            Op::Limit(h, n) => {
                self.f().set_crawl_limit("", HOSTS[*h], *n).unwrap();
                self.m.queues.entry(*h).or_default().limit = *n;
            }
            Op::Delete(h) => {
                let n = self.f().delete_queue("", HOSTS[*h]).unwrap();
                let before = self.m.urls.len();
                self.m.urls.retain(|_, u| u.host != *h);
                let existed = self.m.queues.remove(h).is_some();
                assert_eq!(n, (before - self.m.urls.len()) as u64);
                assert!(existed || n == 0);
            }
            Op::Active(a) => {
                self.f().set_active(*a).unwrap();
                self.m.active = *a;
            }
            Op::Reopen => {
                drop(self.f.take());
                self.f = Some(Self::open(self.dir.path(), &self.clock));
                self.m.urls.values_mut().for_each(|u| u.lease = 0);
                self.m.queues.values_mut().for_each(|q| q.last_serve = 0);
            }
        }
        self.check_counters();
    }

    fn get(&mut self, max_q: u32, per_q: u32, per_turn: u32, lease: u32) {
        let params = GetParams {
            max_queues: max_q,
            max_urls_per_queue: per_q,
            max_urls_per_turn: per_turn,
            delay_requestable: lease,
            ..GetParams::default()
        };
        let got = self.f().get(&params).unwrap();
        let mut by_queue: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for r in &got {
            let h = HOSTS.iter().position(|h| *h == r.key).unwrap();
            by_queue.entry(h).or_default().push(r.url.clone());
        }
        let eligible: HashSet<usize> = if self.m.active {
            (0..HOSTS.len())
                .filter(|&h| !self.m.due(h, per_q, per_turn).is_empty())
                .collect()
        } else {
            HashSet::new()
        };
        let want_queues = if max_q == 0 {
            eligible.len()
        } else {
            eligible.len().min(max_q as usize)
        };
        assert_eq!(
            by_queue.len(),
            want_queues,
            "served {by_queue:?}, eligible {eligible:?}"
        );
        let lease_ms = u64::from(if lease == 0 { 30 } else { lease }) * 1000;
        for (h, urls) in by_queue {
            let due = self.m.due(h, per_q, per_turn);
            assert!(eligible.contains(&h));
            assert_eq!(
                urls[..],
                due[..urls.len()],
                "queue {h} must serve a FIFO prefix"
            );
            for u in urls {
                self.m.urls.get_mut(&u).unwrap().lease = self.m.now + lease_ms;
            }
            self.m.queues.get_mut(&h).unwrap().last_serve = self.m.now;
        }
    }

    fn check_counters(&self) {
        let s = self.f().stats("", None);
        let m = &self.m;
        let size = m.urls.values().filter(|u| u.next_fetch > 0).count() as u64;
        let done = m.urls.values().filter(|u| u.next_fetch == 0).count() as u64;
        let live = m.urls.values().filter(|u| u.lease > m.now).count() as u64;
        assert_eq!(
            (s.size, s.completed, s.queues),
            (size, done, m.queues.len() as u64)
        );
        assert_eq!(s.in_flight, live);
        for (u, mu) in &m.urls {
            assert_eq!(
                self.f().url_status("", u, None).unwrap().next_fetch,
                mu.next_fetch,
                "{u}"
            );
        }
    }
}

proptest! {
    // MODEL_CASES=500 for a longer exploration; 32 keeps CI fast.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("MODEL_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(32),
        ..ProptestConfig::default()
    })]

    #[test]
    fn frontier_matches_model(ops in prop::collection::vec(op(), 1..40)) {
        let mut h = Harness::new();
        for op in &ops {
            h.step(op);
        }
    }
}

#[test]
fn regression_lease_expiry_makes_url_due_again() {
    let mut h = Harness::new();
    let get = Op::Get {
        max_q: 0,
        per_q: 0,
        per_turn: 0,
        lease: 0,
    };
    for op in [Op::Put(vec![(0, 0)]), get.clone(), Op::Advance(31_000), get] {
        h.step(&op);
    }
}
