//! The ground truth equals what an independent crawler of the rendered
//! bytes fetches, and every feature of the issue is reachable from the seeds.

mod common;

use mgz_sim::{Sim, SimConfig, TruthOptions};

fn sim() -> Sim {
    Sim::new(&SimConfig::small(3, 40, 1_200)).expect("valid config")
}

fn opts(depth: u32, robots: bool, sitemaps: bool) -> TruthOptions {
    let mut o = TruthOptions::new(depth);
    o.obey_robots = robots;
    o.follow_sitemaps = sitemaps;
    o
}

#[test]
fn truth_equals_crawl_for_every_rule_combination() {
    let sim = sim();
    for (depth, robots, sitemaps) in [(25, true, false), (25, false, true), (5, true, true)] {
        let crawl = common::crawl(&sim, depth, robots, sitemaps);
        let truth = sim.truth(&opts(depth, robots, sitemaps));
        let crawled: Vec<String> = crawl.pages.into_iter().collect();
        assert_eq!(
            crawled.len(),
            truth.len(),
            "depth {depth} robots {robots} sitemaps {sitemaps}"
        );
        assert_eq!(crawled, truth);
    }
}

#[test]
fn every_feature_is_reachable_from_the_seeds() {
    let sim = sim();
    let crawl = common::crawl(&sim, 25, true, true);
    for status in [0, 200, 301, 302, 307, 308, 404, 410, 500, 503, 429] {
        assert!(
            crawl.statuses.contains_key(&status),
            "status {status} never seen: {:?}",
            crawl.statuses
        );
    }
    for feature in [
        "robots timeout",
        "robots 5xx",
        "robots 4xx",
        "robots crawl-delay",
        "robots $ pattern",
        "robots * pattern",
        "robots allow",
        "sitemap url",
        "retry-after",
        "redirect loop closed",
        "resource application/pdf",
        "image image/jpeg",
        "header charset iso-8859-1",
        "meta charset windows-1252",
        "meta charset shift_jis",
        "non-ascii text in a non-utf-8 page",
        "oversized page",
        "malformed html",
        "meta noindex",
        "meta nofollow",
        "base href",
        "protocol-relative link",
        "cross-host link",
    ] {
        assert!(
            crawl.features.contains(feature),
            "feature {feature:?} never seen: {:?}",
            crawl.features
        );
    }
    let has = |needle: &str| crawl.pages.iter().any(|p| p.contains(needle));
    for trap in [
        "/calendar/",
        "/shop/item-0.html?sid=",
        "/loop/more/more/",
        "/grow/s1-",
        "/archive/old-",
    ] {
        assert!(has(trap), "trap or sitemap page {trap} not reached");
    }
    assert!(
        crawl
            .cut
            .iter()
            .any(|u| u.ends_with("/loop/more/more/more/")),
        "repeat trap not cut"
    );
    assert!(
        crawl.cut.iter().any(|u| u.contains("/grow/")),
        "growing-URL trap not cut"
    );
    assert!(sim.host_names().count() == 40);
}

#[test]
fn truth_can_leave_out_noindex_pages() {
    let sim = sim();
    let crawl = common::crawl(&sim, 8, true, false);
    let mut o = opts(8, true, false);
    o.include_noindex = false;
    let indexable: Vec<String> = crawl.pages.difference(&crawl.noindex).cloned().collect();
    assert!(!crawl.noindex.is_empty());
    assert_eq!(sim.truth(&o), indexable);
}

#[test]
fn sitemaps_list_pages_no_link_reaches() {
    let sim = sim();
    let linked = sim.truth(&opts(1_000, false, false));
    let with_sitemaps = sim.truth(&opts(1_000, false, true));
    let only_sitemap: Vec<&String> = with_sitemaps
        .iter()
        .filter(|u| !linked.contains(u))
        .collect();
    assert!(!only_sitemap.is_empty());
    assert!(
        only_sitemap.iter().all(|u| u.contains("/archive/old-")),
        "{only_sitemap:?}"
    );
}

#[test]
fn url_variants_collapse_or_not_as_documented() {
    let sim = sim();
    let home = sim.respond("www.site-0.sim", "/");
    let parsed = common::parse_html(std::str::from_utf8(&home.rendered.body).unwrap());
    let policy = mgz_url::Policy::safe();
    let base = mgz_url::CanonicalUrl::parse("http://www.site-0.sim/", None, &policy).unwrap();
    let canon = |h: &str| {
        mgz_url::CanonicalUrl::parse(h, Some(&base), &policy)
            .unwrap()
            .as_str()
            .to_string()
    };
    let plain = parsed
        .anchors
        .iter()
        .find(|a| a.starts_with("HTTP://"))
        .expect("upper-case variant");
    let target = canon(plain);
    let collapsing: Vec<&String> = parsed
        .anchors
        .iter()
        .filter(|a| canon(a) == target)
        .collect();
    assert!(collapsing.len() >= 4, "{collapsing:?}");
    let kept: std::collections::BTreeSet<String> = parsed
        .anchors
        .iter()
        .filter(|a| a.contains("view=print") || a.contains("lang=en"))
        .map(|a| canon(a))
        .collect();
    assert_eq!(kept.len(), 3, "{kept:?}");
    for v in &kept {
        let (h, p) = common::split(&mgz_url::CanonicalUrl::parse(v, None, &policy).unwrap());
        assert_eq!(
            sim.respond(&h, &p).rendered.body,
            sim.respond(&h, p.split('?').next().unwrap()).rendered.body
        );
    }
}
