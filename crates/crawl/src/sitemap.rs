//! Sitemaps (sitemaps.org protocol) parsed with quick-xml: `<urlset>` gives
//! page URLs, `<sitemapindex>` gives more sitemaps. The other formats search
//! engines accept as sitemaps give page URLs too: a text file of one URL per
//! line (a body that does not start with `<`), RSS 2.0 (`<item><link>`) and
//! Atom 1.0 (`<entry><link href>`, rel absent or `alternate`). Gzip is detected by its
//! magic bytes and inflated with a cap, so a compressed bomb stops at
//! [`MAX_SITEMAP_BYTES`] (50 MB, the protocol's limit). At most
//! [`MAX_SITEMAP_URLS`] (50,000) `<loc>` entries are kept per file. A
//! location is the `<loc>` of an entry (`<url>` or `<sitemap>` directly under
//! the root), its text joined across comments and CDATA sections; the `loc`
//! elements of extensions (`<image:loc>` inside `<image:image>`) name other
//! resources and are skipped.

use std::io::Read;

use quick_xml::Reader;
use quick_xml::events::Event;

use crate::CrawlError;
use crate::body_budget::BodyLease;

/// Largest (decompressed) sitemap accepted.
pub const MAX_SITEMAP_BYTES: usize = 50 * 1024 * 1024;
/// Most URLs taken from one sitemap.
pub const MAX_SITEMAP_URLS: usize = 50_000;

/// What one sitemap file lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sitemap {
    /// `<urlset>`: page URLs.
    Urls(Vec<String>),
    /// `<sitemapindex>`: further sitemap URLs.
    Index(Vec<String>),
}

/// Parses a sitemap body (plain or gzip). The flag says whether it was cut
/// at [`MAX_SITEMAP_BYTES`] (what came before the cut is still parsed), and
/// is set even when the result is an error (a bomb of zeros is both).
pub fn parse(body: &[u8]) -> (Result<Sitemap, CrawlError>, bool) {
    if is_gzip(body) {
        match gunzip_capped(body, MAX_SITEMAP_BYTES) {
            Ok((xml, cut)) => (parse_xml(&xml), cut),
            Err(e) => (Err(e), false),
        }
    } else {
        let n = body.len().min(MAX_SITEMAP_BYTES);
        (parse_xml(&body[..n]), n < body.len())
    }
}

/// [`parse`], with the inflated text of a gzip body covered by `lease` (the
/// body's share of the crawl's [`crate::body_budget::BodyBudget`]) as it
/// grows, and the runtime given back between steps of inflating. Same result
/// as [`parse`].
pub async fn parse_covered(
    body: &[u8],
    lease: &mut BodyLease,
) -> (Result<Sitemap, CrawlError>, bool) {
    if !is_gzip(body) {
        return parse(body);
    }
    let mut dec = Inflater::new(body, MAX_SITEMAP_BYTES);
    let mut out = Vec::new();
    // The body's own buffer is what the lease covers so far.
    let base = lease.counted();
    loop {
        if out.len() == out.capacity() {
            if out.len() > MAX_SITEMAP_BYTES {
                break; // one byte past the cap: cut
            }
            let grown = (out.capacity() * 2).clamp(STEP, MAX_SITEMAP_BYTES + 1);
            lease.cover(base + grown).await;
            out.reserve_exact(grown - out.len());
        }
        let room = out.capacity() - out.len();
        match dec.step(&mut out, room) {
            Ok(0) => break,
            Ok(_) => tokio::task::yield_now().await,
            Err(e) => return (Err(e), false),
        }
    }
    let cut = dec.finish(&mut out);
    (parse_xml(&out), cut)
}

fn is_gzip(body: &[u8]) -> bool {
    body.starts_with(&[0x1f, 0x8b])
}

/// Bytes inflated per step.
const STEP: usize = 1 << 20;

/// Inflates a gzip body a step at a time, at most `cap` bytes (one more is
/// read to tell whether the body went on).
struct Inflater<'a> {
    dec: std::io::Take<flate2::read::MultiGzDecoder<&'a [u8]>>,
    cap: usize,
}

impl<'a> Inflater<'a> {
    fn new(body: &'a [u8], cap: usize) -> Self {
        let dec = flate2::read::MultiGzDecoder::new(body).take(cap as u64 + 1);
        Inflater { dec, cap }
    }

    /// Appends up to `most` more bytes to `out`; 0 at the end.
    fn step(&mut self, out: &mut Vec<u8>, most: usize) -> Result<usize, CrawlError> {
        (&mut self.dec)
            .take(most as u64)
            .read_to_end(out)
            .map_err(|e| CrawlError::Sitemap(format!("gzip: {e}")))
    }

    /// Cuts `out` to the cap; whether there was more.
    fn finish(self, out: &mut Vec<u8>) -> bool {
        let cut = out.len() > self.cap;
        out.truncate(self.cap);
        cut
    }
}

/// Inflates at most `cap` bytes; the flag says whether more was there. Memory
/// is bounded by `cap` whatever the ratio (a gzip bomb stops at the cap).
fn gunzip_capped(body: &[u8], cap: usize) -> Result<(Vec<u8>, bool), CrawlError> {
    let mut dec = Inflater::new(body, cap);
    let mut out = Vec::new();
    while dec.step(&mut out, STEP)? > 0 {}
    let cut = dec.finish(&mut out);
    Ok((out, cut))
}

/// How one sitemap format names its locations: an entry element at a depth
/// under the root, and the location inside it (the text of a child element,
/// or an attribute of one).
struct Format {
    kind: Kind,
    entry_depth: usize,
    entry: &'static [u8],
    loc: &'static [u8],
    /// `Some(attr)`: the location is this attribute of `loc` (Atom's
    /// `<link href>`), else `loc`'s text.
    attr: Option<&'static [u8]>,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Pages,
    Index,
}

/// The format a root element starts, if it is a sitemap format.
fn format_of(root: &[u8]) -> Option<Format> {
    let f = |kind, entry_depth, entry, loc, attr| Format {
        kind,
        entry_depth,
        entry,
        loc,
        attr,
    };
    Some(match root {
        b"urlset" => f(Kind::Pages, 1, b"url", b"loc", None),
        b"sitemapindex" => f(Kind::Index, 1, b"sitemap", b"loc", None),
        // RSS 2.0: <rss><channel><item><link>URL</link>.
        b"rss" => f(Kind::Pages, 2, b"item", b"link", None),
        // Atom 1.0: <feed><entry><link href="URL"/>.
        b"feed" => f(Kind::Pages, 1, b"entry", b"link", Some(b"href")),
        _ => return None,
    })
}

/// A text sitemap: one absolute URL per line, UTF-8 (a leading BOM and
/// blank lines are skipped; a line that is not an `http(s)://` URL is too).
fn parse_text(body: &[u8]) -> Result<Sitemap, CrawlError> {
    let text = String::from_utf8_lossy(body.strip_prefix(b"\xef\xbb\xbf").unwrap_or(body));
    let absolute = |l: &&str| {
        let b = l.as_bytes();
        (b.len() > 8 && b[..8].eq_ignore_ascii_case(b"https://"))
            || (b.len() > 7 && b[..7].eq_ignore_ascii_case(b"http://"))
    };
    let urls: Vec<String> = (text.lines())
        .map(str::trim)
        .filter(absolute)
        .take(MAX_SITEMAP_URLS)
        .map(String::from)
        .collect();
    if urls.is_empty() {
        return Err(CrawlError::Sitemap("no URL in a text sitemap".into()));
    }
    Ok(Sitemap::Urls(urls))
}

fn parse_xml(xml: &[u8]) -> Result<Sitemap, CrawlError> {
    let head = xml.strip_prefix(b"\xef\xbb\xbf").unwrap_or(xml);
    if head.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'<') {
        return parse_text(xml);
    }
    let mut reader = Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut format: Option<Format> = None;
    // The text of the location being read: quick-xml ends a text event at a
    // comment or a CDATA section, so a location can come in pieces.
    let mut loc: Option<String> = None;
    // A location belongs to an entry (`<url>` or `<sitemap>` child of the
    // root): not an extension's `<image:loc>` deeper in the entry, which
    // names an image, not a page. `depth` counts the open elements.
    let (mut depth, mut in_entry) = (0usize, false);
    let mut locs = Vec::new();
    loop {
        let ev = reader.read_event_into(&mut buf);
        let ev = ev.map_err(|e| CrawlError::Sitemap(e.to_string()))?;
        let (start, empty) = match &ev {
            Event::Start(e) => (Some(e), false),
            Event::Empty(e) => (Some(e), true),
            _ => (None, false),
        };
        if let Some(e) = start {
            let name = e.local_name();
            let Some(f) = format.as_ref() else {
                format = format_of(name.as_ref());
                if format.is_none() {
                    return Err(CrawlError::Sitemap("not a sitemap".into()));
                }
                depth += usize::from(!empty);
                buf.clear();
                continue;
            };
            if depth == f.entry_depth {
                in_entry = name.as_ref() == f.entry;
            } else if depth == f.entry_depth + 1 && in_entry && name.as_ref() == f.loc {
                match f.attr {
                    Some(attr) if atom_alternate(e) => {
                        if let Ok(Some(a)) = e.try_get_attribute(attr)
                            && let Ok(v) = a.unescape_value()
                        {
                            push_loc(&mut locs, v.trim());
                        }
                    }
                    Some(_) => {}
                    None if empty => {}
                    None => loc = Some(String::new()),
                }
            }
            depth += usize::from(!empty);
        }
        match ev {
            Event::End(_) => {
                depth = depth.saturating_sub(1);
                let loc_depth = format.as_ref().map_or(0, |f| f.entry_depth + 1);
                if depth == loc_depth
                    && let Some(text) = loc.take()
                {
                    push_loc(&mut locs, text.trim());
                }
            }
            Event::Text(t) => {
                if let Some(text) = loc.as_mut() {
                    let piece = t
                        .unescape()
                        .map_err(|e| CrawlError::Sitemap(e.to_string()))?;
                    text.push_str(&piece);
                }
            }
            Event::CData(t) => {
                if let Some(text) = loc.as_mut() {
                    text.push_str(&String::from_utf8_lossy(&t));
                }
            }
            Event::Eof => break,
            _ => {}
        }
        if locs.len() >= MAX_SITEMAP_URLS {
            locs.truncate(MAX_SITEMAP_URLS);
            break;
        }
        buf.clear();
    }
    match format.map(|f| f.kind) {
        Some(Kind::Index) => Ok(Sitemap::Index(locs)),
        Some(Kind::Pages) => Ok(Sitemap::Urls(locs)),
        None => Err(CrawlError::Sitemap("empty document".into())),
    }
}

/// Whether an Atom `<link>` points at the entry itself: no `rel`, or
/// `rel="alternate"` (not `enclosure`, `related`, `self` …).
fn atom_alternate(e: &quick_xml::events::BytesStart<'_>) -> bool {
    match e.try_get_attribute("rel") {
        Ok(Some(rel)) => rel.value.trim_ascii().eq_ignore_ascii_case(b"alternate"),
        Ok(None) => true,
        Err(_) => false,
    }
}

fn push_loc(locs: &mut Vec<String>, text: &str) {
    if !text.is_empty() {
        locs.push(text.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A page list, as `parse` returns it.
    fn urls(list: &[&str]) -> Sitemap {
        Sitemap::Urls(list.iter().map(|u| u.to_string()).collect())
    }

    const URLSET: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://a.sim/x?a=1&amp;b=2</loc><lastmod>2020-01-01</lastmod></url>
  <url><loc> http://a.sim/y </loc></url>
</urlset>"#;

    #[test]
    fn urlset_and_index() {
        assert_eq!(
            parse(URLSET.as_bytes()).0.unwrap(),
            urls(&["http://a.sim/x?a=1&b=2", "http://a.sim/y"])
        );
        let idx = "<sitemapindex><sitemap><loc>http://a.sim/s1.xml</loc></sitemap></sitemapindex>";
        assert_eq!(
            parse(idx.as_bytes()).0.unwrap(),
            Sitemap::Index(vec!["http://a.sim/s1.xml".into()])
        );
    }

    /// A comment or a CDATA section splits the text of a `<loc>` into
    /// several events; the location is still one URL.
    #[test]
    fn a_location_in_pieces_is_one_url() {
        let xml = "<urlset><url><loc> http://a.sim/<!-- c -->x?a=1&amp;<![CDATA[b=2&c]]>=3 </loc></url>\
                   <url><loc><![CDATA[http://a.sim/y]]></loc></url><url><loc></loc></url></urlset>";
        assert_eq!(
            parse(xml.as_bytes()).0.unwrap(),
            urls(&["http://a.sim/x?a=1&b=2&c=3", "http://a.sim/y"])
        );
    }

    /// Extensions nest their own `loc` elements in an entry (Google's image
    /// sitemaps: `<image:image><image:loc>`); only the entry's own `<loc>`
    /// is a page (or, in an index, a sitemap).
    #[test]
    fn only_an_entrys_own_loc_counts() {
        let xml = r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
            xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
          <url><image:image><image:loc>http://a.sim/i.jpg</image:loc></image:image>
            <loc>http://a.sim/page</loc></url>
          <loc>http://a.sim/stray</loc>
          <sitemap><loc>http://a.sim/not-in-a-urlset.xml</loc></sitemap>
        </urlset>"#;
        assert_eq!(
            parse(xml.as_bytes()).0.unwrap(),
            urls(&["http://a.sim/page"])
        );
        let idx = "<sitemapindex><url><loc>http://a.sim/p</loc></url>\
                   <sitemap><loc>http://a.sim/s.xml</loc></sitemap></sitemapindex>";
        assert_eq!(
            parse(idx.as_bytes()).0.unwrap(),
            Sitemap::Index(vec!["http://a.sim/s.xml".into()])
        );
    }

    #[test]
    fn text_sitemaps_list_one_url_per_line() {
        let text = "\u{feff}http://a.sim/1\r\n\n  HTTPS://a.sim/2  \nnot a url\n/relative\nhttp://\nftp://a.sim/f\n";
        assert_eq!(
            parse(text.as_bytes()).0.unwrap(),
            urls(&["http://a.sim/1", "HTTPS://a.sim/2"])
        );
        assert!(parse(b"Not Found\n").0.is_err());
        let mut many = String::new();
        for i in 0..MAX_SITEMAP_URLS + 5 {
            many.push_str(&format!("http://a.sim/{i}\n"));
        }
        assert!(
            matches!(parse(many.as_bytes()).0, Ok(Sitemap::Urls(v)) if v.len() == MAX_SITEMAP_URLS)
        );
    }

    #[test]
    fn rss_and_atom_feeds_list_their_entries() {
        let rss = r#"<?xml version="1.0"?><rss version="2.0"><channel>
            <title>t</title><link>http://a.sim/channel-home</link>
            <item><title>one</title><link> http://a.sim/one?a=1&amp;b=2 </link></item>
            <item><link><![CDATA[http://a.sim/two]]></link><guid>http://a.sim/guid</guid></item>
            <item><description><link>http://a.sim/nested</link></description></item>
        </channel></rss>"#;
        assert_eq!(
            parse(rss.as_bytes()).0.unwrap(),
            urls(&["http://a.sim/one?a=1&b=2", "http://a.sim/two"])
        );
        let atom = r#"<feed xmlns="http://www.w3.org/2005/Atom"><link href="http://a.sim/feed-home"/>
            <entry><link href="http://a.sim/e1"/><link rel="enclosure" href="http://a.sim/e1.mp3"/></entry>
            <entry><link rel=" Alternate " href="http://a.sim/e2?x=1&amp;y=2"></link></entry>
            <entry><link rel="self" href="http://a.sim/self"/><title>no page link</title></entry>
        </feed>"#;
        assert_eq!(
            parse(atom.as_bytes()).0.unwrap(),
            urls(&["http://a.sim/e1", "http://a.sim/e2?x=1&y=2"])
        );
    }

    #[test]
    fn a_byte_order_mark_and_whitespace_before_xml_are_skipped() {
        let xml = format!("\u{feff}\n  {URLSET}");
        assert!(matches!(parse(xml.as_bytes()).0, Ok(Sitemap::Urls(v)) if v.len() == 2));
    }

    #[test]
    fn gzip_is_inflated() {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(URLSET.as_bytes()).unwrap();
        let gz = enc.finish().unwrap();
        assert!(matches!(parse(&gz), (Ok(Sitemap::Urls(v)), false) if v.len() == 2));
    }

    #[test]
    fn url_cap() {
        let mut s = String::from("<urlset>");
        for i in 0..MAX_SITEMAP_URLS + 10 {
            s.push_str(&format!("<url><loc>http://a.sim/{i}</loc></url>"));
        }
        s.push_str("</urlset>");
        assert!(
            matches!(parse(s.as_bytes()).0, Ok(Sitemap::Urls(v)) if v.len() == MAX_SITEMAP_URLS)
        );
    }

    #[test]
    fn malformed() {
        for bad in [
            &b""[..],
            b"<html><body>hi</body></html>",
            b"\x1f\x8b\x08garbage",
            b"<urlset><url><loc>&bogus;</loc>",
        ] {
            let _ = parse(bad); // must not panic
        }
        assert!(parse(b"<html/>").0.is_err());
        assert!(parse(b"\x1f\x8b\x08garbage").0.is_err());
    }

    #[test]
    fn gzip_bomb_is_capped() {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        enc.write_all(b"<urlset>").unwrap();
        let zeros = vec![b' '; 1 << 20];
        for _ in 0..60 {
            enc.write_all(&zeros).unwrap();
        }
        let gz = enc.finish().unwrap();
        assert!(gz.len() < 200_000);
        let (inflated, cut) = gunzip_capped(&gz, 1 << 20).unwrap();
        assert_eq!(inflated.len(), 1 << 20);
        assert!(cut);
        let (whole, cut) = gunzip_capped(&gz, 61 << 20).unwrap();
        assert_eq!((whole.len(), cut), ((60 << 20) + 8, false));
    }

    fn gz(parts: &[&[u8]], repeat: usize) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        for _ in 0..repeat {
            for p in parts {
                enc.write_all(p).unwrap();
            }
        }
        enc.finish().unwrap()
    }

    #[tokio::test]
    async fn the_budgeted_parse_agrees_and_counts_the_inflated_text() {
        use crate::body_budget::BodyBudget;
        let bodies = [
            URLSET.as_bytes().to_vec(),
            gz(&[URLSET.as_bytes()], 1),
            // 60 MiB of spaces inside a urlset: cut at 50 MB.
            gz(&[b"<urlset>", &[b' '; 1 << 20]], 60),
            // 45,000 entries, about 3 MiB inflated.
            gz(
                &[b"<url><loc>http://a.sim/a-long-path-to-fill-the-file-with</loc></url>"],
                45_000,
            ),
            b"\x1f\x8b\x08garbage".to_vec(),
            Vec::new(),
        ];
        for body in &bodies {
            let budget = BodyBudget::new(1 << 20);
            let mut lease = budget.lease();
            let covered = parse_covered(body, &mut lease).await;
            assert_eq!(format!("{covered:?}"), format!("{:?}", parse(body)));
            if let Ok((inflated, _)) = gunzip_capped(body, MAX_SITEMAP_BYTES) {
                // Every inflated byte was covered before it was written.
                assert!(
                    budget.peak_held() >= inflated.len(),
                    "{}",
                    budget.peak_held()
                );
                assert_eq!(budget.overdrafts(), usize::from(inflated.len() > 1 << 20));
            }
            drop(lease);
            assert_eq!(budget.held(), 0);
        }
    }
}
