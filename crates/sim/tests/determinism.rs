//! Same seed, same web: byte-identical pages and truth; another seed, another web.

use mgz_sim::{Sim, SimConfig, TruthOptions, seeds, truth};

fn sample_targets(sim: &Sim) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for host in sim.host_names().take(12) {
        for t in [
            "/",
            "/robots.txt",
            "/sitemap.xml",
            "/redirect/chain-3/hop-0",
            "/calendar/2026/11/",
            "/shop/",
            "/loop/more/",
            "/archive/old-0.html",
        ] {
            out.push((host.to_string(), t.to_string()));
        }
        let home = sim.respond(host, "/");
        let text = String::from_utf8_lossy(&home.rendered.body).to_string();
        for href in text.split("href=\"/").skip(1).take(5) {
            let path = href.split('"').next().unwrap_or("");
            out.push((host.to_string(), format!("/{path}")));
        }
    }
    out
}

#[test]
fn same_seed_gives_byte_identical_pages() {
    let cfg = SimConfig::small(11, 30, 900);
    let (a, b) = (Sim::new(&cfg).unwrap(), Sim::new(&cfg).unwrap());
    let targets = sample_targets(&a);
    assert!(targets.len() > 100);
    for (host, t) in &targets {
        assert_eq!(a.respond(host, t), b.respond(host, t), "{host}{t}");
    }
    let other = Sim::new(&SimConfig::small(12, 30, 900)).unwrap();
    let differing = targets
        .iter()
        .filter(|(h, t)| a.respond(h, t) != other.respond(h, t))
        .count();
    assert!(
        differing > targets.len() / 3,
        "seed barely matters: {differing}/{}",
        targets.len()
    );
}

#[test]
fn same_seed_gives_identical_truth() {
    let cfg = SimConfig::small(11, 30, 900);
    let t1 = truth(&cfg, 12, true);
    assert_eq!(t1, truth(&cfg, 12, true));
    assert!(t1.windows(2).all(|w| w[0] < w[1]), "sorted and unique");
    assert_ne!(t1, truth(&SimConfig::small(12, 30, 900), 12, true));
    assert_eq!(
        seeds(&cfg),
        [
            "http://www.site-0.sim/",
            "http://www.site-1.sim/",
            "http://blog.site-2.sim/",
            "http://shop-3.sim/",
            "http://docs.site-4.sim/"
        ]
    );
    let sim = Sim::new(&cfg).unwrap();
    let deeper = sim.truth(&TruthOptions::new(13));
    assert!(
        t1.iter().all(|u| deeper.binary_search(u).is_ok()),
        "truth grows with depth"
    );
    assert!(
        truth(&SimConfig::small(1, 0, 10), 5, true).is_empty(),
        "invalid config gives nothing"
    );
}
