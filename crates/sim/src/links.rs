//! The links of regular, home and sitemap-only pages.
//!
//! Every regular page `j` links to its "tree children" `2j+1` and `2j+2` on
//! the same host, so every regular page is reachable from `/` within
//! `log2(pages)` hops; home page `i` links to the home pages of hosts `2i+1`
//! and `2i+2`, so every host is reachable from host 0. On top of that each
//! page draws a power-law number of extra links (Pareto, alpha 2.5, minimum
//! 2, cap 150: mean about 6), 15% of them to another host drawn by Zipf
//! popularity. Each href is spelled in one of several styles (root-relative,
//! relative, absolute, protocol-relative; relative to `<base href>` when the
//! page has one), chosen per link.

use crate::hash::{Rng, h};
use crate::page::{Html, SECTIONS, page_names, page_path};
use crate::world::{Trap, World};

/// Spells hrefs for links on one page.
struct Speller<'a> {
    world: &'a World,
    host: u32,
    /// The directory relative hrefs are resolved against (`/` or `/section/`).
    dir: String,
}

impl Speller<'_> {
    /// An href to `path` on host `target` in a style drawn from `rng`.
    fn href(&self, rng: &mut Rng, target: u32, path: &str) -> String {
        let name = &self.world.hosts[target as usize].name;
        let roll = rng.below(100);
        if target != self.host {
            return if roll < 70 {
                format!("http://{name}{path}")
            } else {
                format!("//{name}{path}")
            };
        }
        match roll {
            0..40 => path.to_string(),
            40..70 => relative(&self.dir, path),
            70..90 => format!("http://{name}{path}"),
            _ => format!("//{name}{path}"),
        }
    }
}

/// `path` written relative to directory `dir` (both absolute, `dir` ends in `/`).
pub(crate) fn relative(dir: &str, path: &str) -> String {
    let dir_segs: Vec<&str> = dir
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let (path_dir, file) = path.rsplit_once('/').unwrap_or(("", path));
    let path_segs: Vec<&str> = path_dir.split('/').filter(|s| !s.is_empty()).collect();
    let common = dir_segs
        .iter()
        .zip(&path_segs)
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = "../".repeat(dir_segs.len() - common);
    for seg in &path_segs[common..] {
        out.push_str(seg);
        out.push('/');
    }
    out.push_str(file);
    if out.is_empty() {
        "./".to_string()
    } else {
        out
    }
}

/// The directory part of a path (`/a/b.html` -> `/a/`).
fn dir_of(path: &str) -> String {
    match path.rfind('/') {
        Some(i) => path[..=i].to_string(),
        None => "/".to_string(),
    }
}

/// Regular page `j` of host `hi`.
pub(crate) fn regular_page(world: &World, hi: u32, j: u32) -> Html {
    let seed = world.cfg.seed;
    let host = &world.hosts[hi as usize];
    let mut rng = Rng::new(seed, &[u64::from(hi), u64::from(j), 0x11]);
    let path = page_path(seed, hi, j);
    let mut html = Html::new(
        title_of(seed, hi, j, &host.name),
        h(seed, &[u64::from(hi), u64::from(j)]),
    );
    let flags = rng.below(100);
    let leaf = u64::from(j) * 2 + 1 >= u64::from(host.pages);
    if j > 0 {
        html.noindex = flags < 3;
        html.nofollow = (3..5).contains(&flags);
        html.malformed = (5..10).contains(&flags);
        html.oversized = leaf && hi % 4 == 3 && j == host.pages - 1;
    }
    let mut sp = Speller {
        world,
        host: hi,
        dir: dir_of(&path),
    };
    if j > 0 && (10..15).contains(&flags) {
        let other = SECTIONS[rng.below(SECTIONS.len() as u64) as usize];
        html.base = Some(format!("http://{}/{other}/", host.name));
        sp.dir = format!("/{other}/");
    }
    for child in [2 * j + 1, 2 * j + 2] {
        if child < host.pages {
            let href = sp.href(&mut rng, hi, &page_path(seed, hi, child));
            html.anchors.push(href);
        }
    }
    if !html.oversized {
        // Oversized pages carry only their tree links, so a crawler that
        // truncates or drops big bodies loses nothing reachable elsewhere.
        extra_links(&sp, &mut rng, &mut html);
    }
    if j == 0 {
        home_links(&sp, &mut rng, &mut html);
    } else if flags >= 90 {
        let k = rng.below(2);
        html.anchors.push(format!("/files/report-{k}.pdf"));
        html.images.push(format!("/img/photo-{k}.jpg"));
    }
    html
}

fn title_of(seed: u64, hi: u32, j: u32, host: &str) -> String {
    if j == 0 {
        return format!("Welcome to {host}");
    }
    let (section, slug) = page_names(seed, hi, j);
    format!("{slug} {j} - {section} - {host}")
}

/// The power-law extra links of a page.
fn extra_links(sp: &Speller<'_>, rng: &mut Rng, html: &mut Html) {
    let seed = sp.world.cfg.seed;
    let count = (2.0 * (1.0 - rng.unit()).powf(-1.0 / 1.5)).min(150.0) as u32;
    for _ in 0..count {
        let (target, j) = if rng.chance(0.15) {
            let t = sp.world.popular_host(rng.unit());
            let pages = sp.world.hosts[t as usize].pages;
            (
                t,
                if rng.chance(0.5) {
                    0
                } else {
                    rng.below(u64::from(pages)) as u32
                },
            )
        } else {
            let pages = sp.world.hosts[sp.host as usize].pages;
            (sp.host, rng.below(u64::from(pages)) as u32)
        };
        let mut href = sp.href(rng, target, &page_path(seed, target, j));
        if rng.chance(0.05) {
            href.push_str("#comments");
        }
        html.anchors.push(href);
    }
}

/// The home page's links to other hosts and to this host's features.
fn home_links(sp: &Speller<'_>, rng: &mut Rng, html: &mut Html) {
    let world = sp.world;
    let hi = sp.host;
    let host = &world.hosts[hi as usize];
    for child in [2 * u64::from(hi) + 1, 2 * u64::from(hi) + 2] {
        if child < world.hosts.len() as u64 {
            html.anchors.push(sp.href(rng, child as u32, "/"));
        }
    }
    variant_links(sp, html);
    html.anchors.push("/files/report-0.pdf".to_string());
    html.anchors.push("files/report-1.pdf".to_string());
    html.images.push("/img/photo-0.jpg".to_string());
    html.images.push("img/photo-1.jpg".to_string());
    if host.redirects {
        html.anchors.push("/redirect/chain-1/hop-0".to_string());
        html.anchors.push("/redirect/chain-3/hop-0".to_string());
    }
    if host.redirect_loop {
        html.anchors.push("/redirect/loop-a".to_string());
    }
    if host.errors {
        for code in [404, 410, 500, 503, 429] {
            html.anchors.push(format!("/status/{code}"));
        }
    }
    if let Some(trap) = host.trap {
        html.anchors.push(trap_entry(trap).to_string());
    }
}

/// The first URL path of a trap.
pub(crate) fn trap_entry(trap: Trap) -> &'static str {
    match trap {
        Trap::Calendar => "/calendar/2026/11/",
        Trap::Session => "/shop/",
        Trap::Repeat => "/loop/more/",
        Trap::Long => "/grow/",
    }
}

/// Spellings of page 1 (or `/`) that a canonicaliser must collapse, then ones it must not.
fn variant_links(sp: &Speller<'_>, html: &mut Html) {
    let host = &sp.world.hosts[sp.host as usize];
    let target = if host.pages > 1 {
        page_path(sp.world.cfg.seed, sp.host, 1)
    } else {
        "/".to_string()
    };
    let upper = host.name.to_uppercase();
    let name = &host.name;
    html.anchors.extend([
        format!("HTTP://{upper}:80{target}"),
        format!("http://{name}:80{target}#top"),
        format!("{target}?"),
        format!("//{upper}{target}#"),
        format!("{target}?view=print"),
        format!("{target}?lang=en&ref=home"),
        format!("{target}?ref=home&lang=en"),
    ]);
}

/// Sitemap-only page `k` of host `hi`: links home and to two regular pages.
pub(crate) fn orphan_page(world: &World, hi: u32, k: u32) -> Html {
    let seed = world.cfg.seed;
    let host = &world.hosts[hi as usize];
    let mut rng = Rng::new(seed, &[u64::from(hi), u64::from(k), 0x0A]);
    let mut html = Html::new(
        format!("Archived page {k} - {}", host.name),
        h(seed, &[u64::from(hi), u64::from(k), 0x0A]),
    );
    let sp = Speller {
        world,
        host: hi,
        dir: "/archive/".to_string(),
    };
    html.anchors.push(sp.href(&mut rng, hi, "/"));
    for _ in 0..2 {
        let j = rng.below(u64::from(host.pages)) as u32;
        html.anchors
            .push(sp.href(&mut rng, hi, &page_path(seed, hi, j)));
    }
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(relative("/", "/a/b.html"), "a/b.html");
        assert_eq!(relative("/a/", "/a/b.html"), "b.html");
        assert_eq!(relative("/a/", "/c/d.html"), "../c/d.html");
        assert_eq!(relative("/a/", "/"), "../");
        assert_eq!(relative("/", "/"), "./");
    }
}
