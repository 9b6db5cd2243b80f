//! `--seen bloom` and `--seen fingerprint`: a false positive drops a new line;
//! their rate stays within the `--fpr` bound while the input holds at most
//! `--expected` distinct lines.

use mgz_dedup::{Deduper, Emit, Options, Sink, backend};

/// Dedupes `n` distinct lines through a bloom sized for `n` at `fpr`;
/// returns the indexes of the lines wrongly reported as repeats.
fn false_positives(n: usize, fpr: f64) -> Vec<usize> {
    false_positives_of("bloom", n, fpr)
}

fn false_positives_of(name: &str, n: usize, fpr: f64) -> Vec<usize> {
    let opts = backend::SeenOptions::new(Some(n as u64), Some(fpr));
    let set = backend::open(name, &opts).unwrap();
    let mut dedup = Deduper::new(set, Options::default());
    let input: Vec<u8> = (0..n)
        .flat_map(|i| format!("https://host{}.example/p/{i}\n", i % 97).into_bytes())
        .collect();
    let mut sink = Sink::new(Vec::new(), Emit::Repeats, None);
    dedup.run(&input[..], &mut sink, &mut |_| {}).unwrap();
    let stats = dedup.stats();
    let repeats = sink.into_inner();
    let fps: Vec<usize> = repeats
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            std::str::from_utf8(l)
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(stats.duplicates, fps.len() as u64);
    assert_eq!(stats.distinct + stats.duplicates, n as u64);
    fps
}

/// Upper bound of a binomial count: mean plus four standard deviations.
fn bound(trials: usize, p: f64) -> f64 {
    let mean = trials as f64 * p;
    mean + 4.0 * (mean * (1.0 - p)).sqrt()
}

#[test]
fn bloom_false_positive_rate_is_within_bound() {
    let (n, p) = (60_000, 0.01);
    let fps = false_positives(n, p);
    // Over the whole run every lookup saw at most n keys: each is below p.
    assert!(
        (fps.len() as f64) <= bound(n, p),
        "{} false positives",
        fps.len()
    );
    // Near full (the last 10 %), the measured rate is close to p: below
    // p + 10 % (plus sampling noise), and not vanishingly small.
    let tail = n / 10;
    let late = fps.iter().filter(|&&i| i >= n - tail).count();
    assert!(
        (late as f64) <= bound(tail, 1.1 * p),
        "{late} in the last {tail}"
    );
    assert!(
        late as f64 >= 0.2 * p * tail as f64,
        "{late} in the last {tail}: filter oversized?"
    );
}

#[test]
fn a_tighter_rate_gives_fewer_false_positives() {
    let n = 20_000;
    let loose = false_positives(n, 0.05).len();
    let tight = false_positives(n, 0.0005).len();
    assert!(tight < loose, "tight {tight}, loose {loose}");
    assert!((tight as f64) <= bound(n, 0.0005));
}

#[test]
fn fingerprint_false_positive_rate_is_within_bound() {
    // At a deliberately loose rate, so that false positives are measurable.
    let (n, p) = (60_000, 0.01);
    let fps = false_positives_of("fingerprint", n, p).len();
    assert!((fps as f64) <= bound(n, p), "{fps} false positives");
    assert!(
        fps > 0,
        "no false positive at p = 1 %: is the rate applied?"
    );
}
