//! Measured false-positive rate at the expected count, for each Bloom layout.
//!
//! Why these numbers: with n = 20,000 keys inserted and 200,000 absent keys
//! looked up at p = 1 %, the false-positive count is binomial with mean
//! 2,000 and standard deviation 44.5; "within 10 % of p" is ±200, i.e. ±4.5
//! standard deviations, so a correct filter fails with probability ~1e-5
//! while a filter 10 % off fails half the time or more. (The hash is fixed, so
//! the test is deterministic anyway.)

use mgz_seen::{
    SeenSet,
    bloom::{BlockedBloom, ClassicBloom, ScalableBloom},
};

const N: usize = 20_000;
const PROBES: usize = 200_000;
const P: f64 = 0.01;

fn key(i: usize) -> Vec<u8> {
    format!("org.example{}/wiki/Page_{i}", i % 113).into_bytes()
}

fn measured_fpr(s: &mut dyn SeenSet) -> f64 {
    for i in 0..N {
        s.insert(&key(i));
    }
    assert!((0..N).all(|i| s.contains(&key(i))), "false negative");
    let fp = (N..N + PROBES).filter(|&i| s.contains(&key(i))).count();
    fp as f64 / PROBES as f64
}

#[test]
fn classic_within_10_percent_of_p() {
    let f = measured_fpr(&mut ClassicBloom::new(N, P).unwrap());
    assert!((f - P).abs() <= 0.1 * P, "classic measured {f}");
}

#[test]
fn blocked_within_10_percent_of_p() {
    let f = measured_fpr(&mut BlockedBloom::new(N, P).unwrap());
    assert!((f - P).abs() <= 0.1 * P, "blocked measured {f}");
}

#[test]
fn scalable_stays_under_p_at_4n() {
    let mut s = ScalableBloom::new(N / 4, P).unwrap();
    let f = measured_fpr(&mut s);
    assert!(s.slices() >= 3, "{} slices", s.slices());
    assert!(f <= 1.1 * P, "scalable measured {f}");
}
