//! Routing: (host, path, query) to the [`Resource`] it returns. Pure and
//! deterministic; the server and the ground truth both call [`route`].
//!
//! | path | answer |
//! |---|---|
//! | `/robots.txt` | by host kind: 404, allow-all, patterns, crawl-delay, 500, stall |
//! | `/sitemap.xml` | hosts with sitemap-only pages: their URLs plus a few regular pages |
//! | `/`, `/{section}/{slug}-{j}.html` | regular page `j` (any query string is ignored) |
//! | `/archive/old-{k}.html` | sitemap-only page `k` |
//! | `/redirect/chain-{c}/hop-{m}` | redirect hop `m` of a chain of `c` hops (c in 1, 3) |
//! | `/redirect/loop-a`, `/redirect/loop-b` | a 301/302 loop |
//! | `/status/{404,410,500,503,429}` | that status |
//! | `/img/photo-{k}.jpg`, `/files/report-{k}.pdf` | small JPEG / PDF bodies |
//! | traps | see `traps.rs` |

use crate::links::{orphan_page, regular_page};
use crate::page::{
    Resource, orphan_path, page_path, parse_index, parse_orphan_path, parse_page_path,
};
use crate::traps;
use crate::world::{RobotsKind, World};

/// The answer to `path?query` on host `hi`.
pub(crate) fn route(world: &World, hi: u32, path: &str, query: Option<&str>) -> Resource {
    let seed = world.cfg.seed;
    let host = &world.hosts[hi as usize];
    if let Some(j) = parse_page_path(seed, hi, host.pages, path) {
        return Resource::Html(regular_page(world, hi, j));
    }
    match path {
        "/robots.txt" => return robots(world, hi),
        "/sitemap.xml" if host.orphans > 0 => return Resource::Sitemap(sitemap(world, hi)),
        "/redirect/loop-a" if host.redirect_loop => return redirect(301, "/redirect/loop-b"),
        "/redirect/loop-b" if host.redirect_loop => return redirect(302, "/redirect/loop-a"),
        _ => {}
    }
    if let Some(k) = parse_orphan_path(host.orphans, path) {
        return Resource::Html(orphan_page(world, hi, k));
    }
    if let Some(r) = fixed_resource(path) {
        return r;
    }
    if host.redirects
        && let Some(r) = chain_hop(world, hi, path)
    {
        return r;
    }
    let status = path.strip_prefix("/status/").and_then(parse_index);
    if host.errors
        && let Some(code) = status.filter(|c| [404, 410, 500, 503, 429].contains(c))
    {
        return Resource::Status(code as u16);
    }
    match host.trap {
        Some(trap) => traps::route(world, hi, trap, path, query).unwrap_or(Resource::NotFound),
        None => Resource::NotFound,
    }
}

fn redirect(status: u16, location: &str) -> Resource {
    Resource::Redirect {
        status,
        location: location.to_string(),
    }
}

/// Images and PDFs: `k` in 0..2.
fn fixed_resource(path: &str) -> Option<Resource> {
    if let Some(k) = path
        .strip_prefix("/img/photo-")
        .and_then(|r| r.strip_suffix(".jpg"))
    {
        let k = parse_index(k).filter(|&k| k < 2)?;
        let mut body = vec![0xFF, 0xD8, 0xFF, 0xE0];
        body.extend(std::iter::repeat_n(k as u8, 600));
        body.extend([0xFF, 0xD9]);
        return Some(Resource::Binary {
            content_type: "image/jpeg",
            body,
        });
    }
    let k = path.strip_prefix("/files/report-")?.strip_suffix(".pdf")?;
    let k = parse_index(k).filter(|&k| k < 2)?;
    let body = format!("%PDF-1.4\n% report {k}\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n");
    Some(Resource::Binary {
        content_type: "application/pdf",
        body: body.into_bytes(),
    })
}

/// `/redirect/chain-{c}/hop-{m}`: hop m of c; the last hop points at a regular page.
fn chain_hop(world: &World, hi: u32, path: &str) -> Option<Resource> {
    let rest = path.strip_prefix("/redirect/chain-")?;
    let (c, m) = rest.split_once("/hop-")?;
    let (c, m) = (parse_index(c)?, parse_index(m)?);
    if !(c == 1 || c == 3) || m >= c {
        return None;
    }
    let status = [301, 302, 307, 308][((c / 3 + m) % 4) as usize];
    let pages = world.hosts[hi as usize].pages;
    let location = if m + 1 < c {
        format!("hop-{}", m + 1)
    } else {
        let host = &world.hosts[hi as usize].name;
        format!(
            "http://{host}{}",
            page_path(world.cfg.seed, hi, (pages - 1) / (c + 1))
        )
    };
    Some(Resource::Redirect { status, location })
}

/// The robots.txt of host `hi`.
fn robots(world: &World, hi: u32) -> Resource {
    let host = &world.hosts[hi as usize];
    let mut text = String::from("# robots.txt of a synthetic host\n");
    match host.robots {
        RobotsKind::Absent => return Resource::NotFound,
        RobotsKind::ServerError => return Resource::Status(500),
        RobotsKind::Timeout => return Resource::Stall,
        RobotsKind::AllowAll => text.push_str("User-agent: *\nDisallow:\n"),
        RobotsKind::Patterns => text.push_str(
            "User-agent: evilbot\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\n\
             Allow: /private/press-*\nDisallow: /*.pdf$\nDisallow: /*?view=print\n\
             Disallow: /status/\n",
        ),
        RobotsKind::CrawlDelay => {
            text.push_str("User-agent: *\nDisallow: /redirect/\n");
            text.push_str(&format!("Crawl-delay: {}\n", world.cfg.crawl_delay_secs));
        }
    }
    if host.orphans > 0 {
        text.push_str(&format!("\nSitemap: http://{}/sitemap.xml\n", host.name));
    }
    Resource::Robots(text)
}

/// The sitemap of host `hi`: every sitemap-only page, then up to 5 regular pages.
fn sitemap(world: &World, hi: u32) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for url in sitemap_urls(world, hi) {
        xml.push_str(&format!("  <url><loc>{url}</loc></url>\n"));
    }
    xml.push_str("</urlset>\n");
    xml
}

/// The `loc` URLs of host `hi`'s sitemap (empty when it has none).
pub(crate) fn sitemap_urls(world: &World, hi: u32) -> Vec<String> {
    let host = &world.hosts[hi as usize];
    if host.orphans == 0 {
        return Vec::new();
    }
    let regular = (0..host.pages.min(5)).map(|j| page_path(world.cfg.seed, hi, j));
    (0..host.orphans)
        .map(orphan_path)
        .chain(regular)
        .map(|p| format!("http://{}{p}", host.name))
        .collect()
}
