//! Turning a [`Resource`] into a status, headers and body bytes.
//!
//! HTML is built as UTF-8 text, then encoded in the host's charset
//! (windows-1252 or Shift_JIS via `encoding_rs`). Links come first in the
//! body, so a crawler that truncates an oversized page still sees them.
//! Malformed pages drop closing tags, leave attribute values unquoted
//! (hrefs never contain spaces or `>`), misnest inline tags and end in an
//! unterminated comment; every link stays extractable by an HTML5 tokenizer.

use crate::hash::Rng;
use crate::page::{Html, Resource};
use crate::world::Charset;

/// A rendered answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// HTTP status.
    pub status: u16,
    /// Response headers (name, value), besides Content-Length.
    pub headers: Vec<(&'static str, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

const WORDS: [&str; 32] = [
    "crawl",
    "frontier",
    "page",
    "link",
    "host",
    "queue",
    "index",
    "archive",
    "search",
    "fetch",
    "robots",
    "politeness",
    "sitemap",
    "anchor",
    "market",
    "river",
    "garden",
    "library",
    "music",
    "winter",
    "harbour",
    "signal",
    "paper",
    "engine",
    "lantern",
    "orchard",
    "station",
    "meadow",
    "copper",
    "violet",
    "thunder",
    "compass",
];
const ACCENTED: [&str; 6] = ["café", "naïve", "Zürich", "façade", "señor", "crème brûlée"];
const JAPANESE: [&str; 4] = ["東京", "日本語", "検索", "ページ"];

/// Renders `res` for a host with charset `charset`; `retry_after` goes with 503/429.
pub(crate) fn render(
    res: &Resource,
    charset: Charset,
    retry_after: u32,
    oversized: usize,
) -> Rendered {
    let plain = |status: u16, ctype: &str, body: Vec<u8>| Rendered {
        status,
        headers: vec![("content-type", ctype.to_string())],
        body,
    };
    match res {
        Resource::Html(html) => render_html(html, charset, oversized),
        Resource::Robots(text) => {
            plain(200, "text/plain; charset=utf-8", text.clone().into_bytes())
        }
        Resource::Sitemap(xml) => plain(200, "application/xml", xml.clone().into_bytes()),
        Resource::Binary { content_type, body } => plain(200, content_type, body.clone()),
        Resource::Redirect { status, location } => {
            let mut r = plain(*status, "text/html", b"<p>Moved</p>".to_vec());
            r.headers.push(("location", location.clone()));
            r
        }
        Resource::Status(code) => {
            let mut r = plain(
                *code,
                "text/html",
                format!("<h1>Error {code}</h1>").into_bytes(),
            );
            if *code == 503 || *code == 429 {
                r.headers.push(("retry-after", retry_after.to_string()));
            }
            r
        }
        Resource::NotFound | Resource::Stall => {
            plain(404, "text/html", b"<h1>Not found</h1>".to_vec())
        }
    }
}

fn render_html(html: &Html, charset: Charset, oversized: usize) -> Rendered {
    let text = html_text(html, charset, oversized);
    let (ctype, body) = match charset {
        Charset::Utf8 => ("text/html; charset=utf-8", text.into_bytes()),
        Charset::Latin1Header => (
            "text/html; charset=ISO-8859-1",
            encode(&text, encoding_rs::WINDOWS_1252),
        ),
        Charset::Cp1252Meta => ("text/html", encode(&text, encoding_rs::WINDOWS_1252)),
        Charset::ShiftJisMeta => ("text/html", encode(&text, encoding_rs::SHIFT_JIS)),
    };
    Rendered {
        status: 200,
        headers: vec![("content-type", ctype.to_string())],
        body,
    }
}

fn encode(text: &str, enc: &'static encoding_rs::Encoding) -> Vec<u8> {
    enc.encode(text).0.into_owned()
}

/// The document as text (before charset encoding).
pub(crate) fn html_text(html: &Html, charset: Charset, oversized: usize) -> String {
    let m = html.malformed;
    let mut out = String::with_capacity(4096);
    out.push_str("<!DOCTYPE html>\n<html><head>\n");
    match charset {
        Charset::Cp1252Meta => out.push_str("<meta charset=\"windows-1252\">\n"),
        Charset::ShiftJisMeta => out.push_str(
            "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=Shift_JIS\">\n",
        ),
        Charset::Utf8 | Charset::Latin1Header => {}
    }
    let robots: Vec<&str> = [(html.noindex, "noindex"), (html.nofollow, "nofollow")]
        .into_iter()
        .filter_map(|(on, word)| on.then_some(word))
        .collect();
    if !robots.is_empty() {
        out.push_str(&format!(
            "<meta name=\"robots\" content=\"{}\">\n",
            robots.join(", ")
        ));
    }
    if let Some(base) = &html.base {
        out.push_str(&format!("<base href=\"{base}\">\n"));
    }
    out.push_str(&format!(
        "<title>{}</title>\n</head>\n<body>\n<h1>{}</h1>\n<ul>\n",
        html.title, html.title
    ));
    let mut rng = Rng::new(html.text_key, &[1]);
    for (i, href) in html.anchors.iter().enumerate() {
        let href = href.replace('&', "&amp;");
        let word = WORDS[rng.below(WORDS.len() as u64) as usize];
        match (m, i % 3) {
            (true, 0) => out.push_str(&format!(
                "<li><a href={href}>{word} <b><i>{i}</b></i></a>\n"
            )),
            (true, _) => out.push_str(&format!("<li><a href='{href}'>{word} {i}</a>\n")),
            (false, _) => out.push_str(&format!("<li><a href=\"{href}\">{word} {i}</a></li>\n")),
        }
    }
    out.push_str(if m { "</div>\n" } else { "</ul>\n" });
    for src in &html.images {
        out.push_str(&format!("<img src=\"{src}\" alt=\"photo\">\n"));
    }
    let target = if html.oversized { oversized } else { 0 };
    paragraphs(&mut out, &mut rng, charset, target);
    if m {
        out.push_str("<p>unclosed paragraph\n<!-- an unterminated comment\n");
    } else {
        out.push_str("</body>\n</html>\n");
    }
    out
}

/// Filler text: 3 to 6 paragraphs, then more until the text reaches `min_len` bytes.
fn paragraphs(out: &mut String, rng: &mut Rng, charset: Charset, min_len: usize) {
    let count = 3 + rng.below(4);
    let mut n = 0;
    while n < count || out.len() < min_len {
        out.push_str("<p>");
        for w in 0..40 + rng.below(40) {
            if w > 0 {
                out.push(' ');
            }
            out.push_str(word(rng, charset));
        }
        out.push_str(".</p>\n");
        n += 1;
    }
}

fn word(rng: &mut Rng, charset: Charset) -> &'static str {
    let roll = rng.below(20);
    match charset {
        Charset::ShiftJisMeta if roll == 0 => JAPANESE[rng.below(4) as usize],
        Charset::Utf8 | Charset::ShiftJisMeta => WORDS[rng.below(WORDS.len() as u64) as usize],
        _ if roll == 0 => ACCENTED[rng.below(6) as usize],
        _ => WORDS[rng.below(WORDS.len() as u64) as usize],
    }
}
