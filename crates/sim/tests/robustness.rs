//! Arbitrary Host headers and request targets never panic and get a known
//! status; every answer is identical when asked twice (the model is pure).

use mgz_sim::{Sim, SimConfig};
use proptest::prelude::*;

fn sim() -> &'static Sim {
    static SIM: std::sync::OnceLock<Sim> = std::sync::OnceLock::new();
    SIM.get_or_init(|| Sim::new(&SimConfig::small(2, 40, 1_000)).unwrap())
}

const KNOWN: [u16; 11] = [200, 301, 302, 307, 308, 400, 404, 410, 429, 500, 503];

fn hosts() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u32..60).prop_map(|i| format!("www.site-{i}.sim")),
        (0u32..60).prop_map(|i| format!("SHOP-{i}.SIM:8080")),
        "\\PC{0,40}",
    ]
}

fn targets() -> impl Strategy<Value = String> {
    let seg = prop_oneof![
        Just("calendar".to_string()),
        Just("loop".to_string()),
        Just("more".to_string()),
        Just("grow".to_string()),
        Just("shop".to_string()),
        Just("redirect".to_string()),
        Just("status".to_string()),
        Just("..".to_string()),
        "[a-z0-9%-]{0,12}",
    ];
    (
        prop::collection::vec(seg, 0..8),
        "(\\?[a-z=&0-9]{0,20})?",
        any::<bool>(),
    )
        .prop_map(|(segs, q, slash)| {
            format!("/{}{}{q}", segs.join("/"), if slash { "/" } else { "" })
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_request_gets_a_known_status(host in hosts(), target in targets()) {
        let a = sim().respond(&host, &target);
        prop_assert!(KNOWN.contains(&a.rendered.status), "{host} {target}: {}", a.rendered.status);
        prop_assert_eq!(a, sim().respond(&host, &target));
    }

    #[test]
    fn raw_garbage_targets_are_rejected_cleanly(host in hosts(), target in "\\PC{0,200}") {
        let a = sim().respond(&host, &target);
        prop_assert!(KNOWN.contains(&a.rendered.status));
    }
}

#[test]
fn absurdly_long_targets_are_404() {
    let target = format!("/{}", "a".repeat(mgz_sim::MAX_TARGET_LEN));
    assert_eq!(
        sim().respond("www.site-0.sim", &target).rendered.status,
        404
    );
}
