//! Sitemaps (sitemaps.org protocol) parsed with quick-xml: `<urlset>` gives
//! page URLs, `<sitemapindex>` gives more sitemaps. Gzip is detected by its
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
    if body.starts_with(&[0x1f, 0x8b]) {
        match gunzip_capped(body, MAX_SITEMAP_BYTES) {
            Ok((xml, cut)) => (parse_xml(&xml), cut),
            Err(e) => (Err(e), false),
        }
    } else {
        let n = body.len().min(MAX_SITEMAP_BYTES);
        (parse_xml(&body[..n]), n < body.len())
    }
}

/// Inflates at most `cap` bytes; the flag says whether more was there. Memory
/// is bounded by `cap` whatever the ratio (a gzip bomb stops at the cap).
fn gunzip_capped(body: &[u8], cap: usize) -> Result<(Vec<u8>, bool), CrawlError> {
    let mut out = Vec::new();
    let decoder = flate2::read::MultiGzDecoder::new(body);
    let mut capped = decoder.take(cap as u64 + 1);
    capped
        .read_to_end(&mut out)
        .map_err(|e| CrawlError::Sitemap(format!("gzip: {e}")))?;
    let cut = out.len() > cap;
    out.truncate(cap);
    Ok((out, cut))
}

fn parse_xml(xml: &[u8]) -> Result<Sitemap, CrawlError> {
    let mut reader = Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut root: Option<bool> = None; // Some(true) = index
    // The text of the `<loc>` being read: quick-xml ends a text event at a
    // comment or a CDATA section, so a location can come in pieces.
    let mut loc: Option<String> = None;
    // A location is a `<loc>` child of a `<url>` (or `<sitemap>`) child of
    // the root: not an extension's `<image:loc>` deeper in the entry, which
    // names an image, not a page. `depth` counts the open elements.
    let (mut depth, mut in_entry) = (0usize, false);
    let mut locs = Vec::new();
    loop {
        let ev = reader.read_event_into(&mut buf);
        match ev.map_err(|e| CrawlError::Sitemap(e.to_string()))? {
            Event::Start(e) => {
                let name = e.local_name();
                match (root, depth, name.as_ref()) {
                    (None, _, b"urlset") => root = Some(false),
                    (None, _, b"sitemapindex") => root = Some(true),
                    (None, _, _) => return Err(CrawlError::Sitemap("not a sitemap".into())),
                    (Some(index), 1, entry) => {
                        in_entry = entry == if index { &b"sitemap"[..] } else { b"url" };
                    }
                    (Some(_), 2, b"loc") if in_entry => loc = Some(String::new()),
                    _ => {}
                }
                depth += 1;
            }
            Event::End(_) => {
                depth = depth.saturating_sub(1);
                if depth == 2
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
            break;
        }
        buf.clear();
    }
    match root {
        Some(true) => Ok(Sitemap::Index(locs)),
        Some(false) => Ok(Sitemap::Urls(locs)),
        None => Err(CrawlError::Sitemap("empty document".into())),
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

    const URLSET: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://a.sim/x?a=1&amp;b=2</loc><lastmod>2020-01-01</lastmod></url>
  <url><loc> http://a.sim/y </loc></url>
</urlset>"#;

    #[test]
    fn urlset_and_index() {
        assert_eq!(
            parse(URLSET.as_bytes()).0.unwrap(),
            Sitemap::Urls(vec![
                "http://a.sim/x?a=1&b=2".into(),
                "http://a.sim/y".into()
            ])
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
            Sitemap::Urls(vec![
                "http://a.sim/x?a=1&b=2&c=3".into(),
                "http://a.sim/y".into()
            ])
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
            Sitemap::Urls(vec!["http://a.sim/page".into()])
        );
        let idx = "<sitemapindex><url><loc>http://a.sim/p</loc></url>\
                   <sitemap><loc>http://a.sim/s.xml</loc></sitemap></sitemapindex>";
        assert_eq!(
            parse(idx.as_bytes()).0.unwrap(),
            Sitemap::Index(vec!["http://a.sim/s.xml".into()])
        );
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
}
