//! Any Host header and request target: the sim answers with a known status, never panics.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mgz_sim::{Sim, SimConfig};

fn sim() -> &'static Sim {
    static SIM: OnceLock<Sim> = OnceLock::new();
    SIM.get_or_init(|| Sim::new(&SimConfig::small(1, 40, 2_000)).expect("valid config"))
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (host, target) = text.split_once('\n').unwrap_or(("www.site-0.sim", &text));
    let resp = sim().respond(host, target);
    let known = [200, 301, 302, 307, 308, 400, 404, 410, 429, 500, 503];
    assert!(known.contains(&resp.rendered.status));
});
