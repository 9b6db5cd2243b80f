//! Link and keyword extraction with lol_html.
//!
//! The body (already capped by the fetcher) is decoded to UTF-8 with
//! encoding_rs — charset from the `Content-Type` header, else a BOM, else a
//! `<meta charset>` in the first 1024 bytes, else UTF-8 — and streamed through
//! lol_html in 16 KiB chunks. Collected: `a[href]`, `area[href]`,
//! `link[href]` with rel alternate/next/prev, `frame[src]`, `iframe[src]`,
//! the URL of a `<meta http-equiv=refresh>`, the links inside `<noscript>`,
//! `<noembed>` and `<noframes>` (parsed as a client without scripts, embeds
//! or frames sees them), the first `<base href>`, title,
//! meta description/keywords/robots and the visible text (text nodes outside
//! script/style/title), each capped so one page costs O(caps), whatever its
//! size. Text nodes are separated by a
//! space (a tag separates words); the chunks lol_html splits one node into
//! are joined first (`NodeText`), so a chunk boundary never splits a word.
//! The parser's own buffers are limited to [`PARSER_MEMORY`]; a page that
//! exceeds it keeps what was read.

use std::cell::RefCell;
use std::sync::LazyLock;

use crate::swar::{self, HIGH, LOW7};

use encoding_rs::Encoding;
use lol_html::html_content::Element;
use lol_html::html_content::TextType;
use lol_html::{
    ElementContentHandlers, HtmlRewriter, MemorySettings, Selector, Settings, doc_text,
};

/// Hard limit on lol_html's internal buffers per page.
pub const PARSER_MEMORY: usize = 8 * 1024 * 1024;
const MAX_LINKS: usize = 10_000;
const MAX_TITLE: usize = 1_000;
const MAX_META: usize = 2_000;
/// Visible text kept for the full-text index.
pub const MAX_TEXT: usize = 64 * 1024;
const MAX_HREF: usize = 8_192;
/// Most `<noscript>` (and other raw-text) content read for links per page.
const MAX_NOSCRIPT: usize = 64 * 1024;

/// What a page yields.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Extracted {
    /// Raw link targets in document order (unresolved), then those inside
    /// `<noscript>` elements.
    pub links: Vec<String>,
    /// First `<base href>`.
    pub base: Option<String>,
    /// `<title>` text, whitespace collapsed.
    pub title: String,
    /// `<meta name=description>`.
    pub description: String,
    /// `<meta name=keywords>`.
    pub keywords: String,
    /// Visible text, whitespace collapsed, capped at [`MAX_TEXT`].
    pub text: String,
    /// Meta robots `nofollow` (or `none`).
    pub nofollow: bool,
    /// Meta robots `noindex` (or `none`).
    pub noindex: bool,
    /// The encoding used to decode the body.
    pub encoding: &'static str,
}

/// What [`meta_charset`] looks for, as a pattern (its test model).
#[cfg(test)]
const META_CHARSET: &str = r#"(?i-u)<meta[^>]{0,512}?charset[\t\n\x0c\r ]*=[\t\n\x0c\r ]*["']?[\t\n\x0c\r ]*([a-z0-9_:.\-]{1,40})"#;

/// Picks the encoding: header charset, BOM, `<meta>` prescan, UTF-8.
pub fn sniff_encoding(body: &[u8], content_type: Option<&str>) -> &'static Encoding {
    let from_header = content_type
        .and_then(|ct| {
            ct.to_ascii_lowercase().split(';').find_map(|p| {
                p.trim()
                    .strip_prefix("charset=")
                    .map(|c| c.trim_matches(['"', '\'', ' ']).to_string())
            })
        })
        .and_then(|c| Encoding::for_label(c.as_bytes()));
    if let Some(enc) = from_header {
        return enc;
    }
    if let Some((enc, _)) = Encoding::for_bom(body) {
        return enc;
    }
    let head = &body[..body.len().min(1024)];
    meta_charset(head)
        .and_then(Encoding::for_label)
        // A meta tag cannot honestly declare UTF-16: the bytes it sits in are ASCII.
        .map(|e| {
            if e == encoding_rs::UTF_16LE || e == encoding_rs::UTF_16BE {
                encoding_rs::UTF_8
            } else {
                e
            }
        })
        .unwrap_or(encoding_rs::UTF_8)
}

/// The label of the first `charset=` inside a `<meta` tag of `head`, as
/// the bytes pattern [`META_CHARSET`] finds it (the tests check it against
/// that regex; ASCII case and ASCII whitespace, as in the WHATWG prescan). Found by searching the
/// lowercased head for `charset` and looking back for its `<meta`: the
/// regex ran a bounded backtracker over every page's first KiB (4 % of the
/// page work's instructions).
fn meta_charset(head: &[u8]) -> Option<&[u8]> {
    let lower = head.to_ascii_lowercase();
    let is_space = |b: u8| b.is_ascii_whitespace();
    for at in memchr::memmem::find_iter(&lower, b"charset") {
        // The leftmost `<meta` this `charset` can belong to: at most 512
        // bytes before it, no `>` between.
        let window = &lower[at.saturating_sub(512 + 5)..at];
        let gt = memchr::memrchr(b'>', window).map_or(0, |g| g + 1);
        // (A later `charset` never belongs to an earlier `<meta`, so the
        // first one that parses is the pattern's leftmost match.)
        if memchr::memmem::find(&window[gt..], b"<meta").is_none() {
            continue;
        }
        let mut i = at + 7;
        while i < lower.len() && is_space(lower[i]) {
            i += 1;
        }
        if lower.get(i) != Some(&b'=') {
            continue;
        }
        i += 1;
        while i < lower.len() && is_space(lower[i]) {
            i += 1;
        }
        if matches!(lower.get(i), Some(b'"' | b'\'')) {
            i += 1;
        }
        while i < lower.len() && is_space(lower[i]) {
            i += 1;
        }
        let label = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b':' | b'.' | b'-');
        let n = lower[i..].iter().take(40).take_while(|b| label(b)).count();
        if n > 0 {
            return Some(&head[i..i + n]);
        }
    }
    None
}

/// Parses robots directives (`noindex`, `nofollow`, `none`, any case) from
/// a meta robots content; returns `(noindex, nofollow)`.
pub fn robots_directives(value: &str) -> (bool, bool) {
    let (mut noindex, mut nofollow) = (false, false);
    for token in value.split([',', ' ', '\t', '\n', '\r']) {
        if token.eq_ignore_ascii_case("noindex") {
            noindex = true;
        } else if token.eq_ignore_ascii_case("nofollow") {
            nofollow = true;
        } else if token.eq_ignore_ascii_case("none") {
            (noindex, nofollow) = (true, true);
        }
    }
    (noindex, nofollow)
}

/// The directives of one `X-Robots-Tag` header value that apply to the
/// crawler whose robots.txt token is `agent`; returns `(noindex, nofollow)`.
///
/// A header may name the crawler it addresses, as search engines document
/// it: `googlebot: noindex, nofollow` is for Googlebot only. A comma-separated
/// piece of the form `TOKEN: …` (TOKEN a product token that is not a
/// directive taking a value, such as `unavailable_after`) starts the part of
/// the value addressed to TOKEN, up to the next such piece; pieces before any
/// are for every crawler. Only the parts for every crawler and for `agent`
/// (ASCII case-insensitive) count.
pub fn header_robots_directives(value: &str, agent: &str) -> (bool, bool) {
    const TAKES_VALUE: [&str; 4] = [
        "unavailable_after",
        "max-snippet",
        "max-image-preview",
        "max-video-preview",
    ];
    let is_token = |t: &str| {
        !t.is_empty()
            && (t.bytes()).all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    let (mut ours, mut out) = (true, (false, false));
    for piece in value.split(',') {
        let mut piece = piece.trim();
        if let Some((name, rest)) = piece.split_once(':')
            && let name = name.trim_end()
            && is_token(name)
            && !TAKES_VALUE.iter().any(|v| name.eq_ignore_ascii_case(v))
        {
            ours = name.eq_ignore_ascii_case(agent);
            piece = rest;
        }
        if ours {
            let (noindex, nofollow) = robots_directives(piece);
            out = (out.0 | noindex, out.1 | nofollow);
        }
    }
    out
}

/// Decodes character references (`&amp;`, `&#47;`, `&eacute;`): lol_html
/// hands out attribute values and text as written.
fn unescape(raw: &str) -> std::borrow::Cow<'_, str> {
    if raw.contains('&') {
        html_escape::decode_html_entities(raw)
    } else {
        raw.into()
    }
}

/// Whether an ASCII byte is kept by [`push_capped`]: not whitespace in
/// `char::is_whitespace`'s sense (which, unlike `u8::is_ascii_whitespace`,
/// counts the vertical tab).
fn not_space_ascii(b: u8) -> bool {
    !matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ')
}

/// Whether the character starting at byte `i` of `s` is whitespace
/// (`char::is_whitespace`).
fn space_at(s: &str, i: usize) -> bool {
    match s.as_bytes()[i] {
        b if b.is_ascii() => !not_space_ascii(b),
        _ => s[i..].chars().next().is_some_and(char::is_whitespace),
    }
}

/// Byte length of the character starting at byte `i` of `s`.
fn char_len(s: &str, i: usize) -> usize {
    s[i..].chars().next().map_or(1, char::len_utf8)
}

/// `0x80` in each byte of the little-endian `x` (eight bytes of text) that
/// [`span_end`]'s scan need not look at: printable ASCII (`0x21..=0x7f`,
/// never whitespace) and a space followed, in `x`, by printable ASCII (it
/// joins two words of a span). Exact for every byte ([`swar`]).
fn span_bytes(x: u64) -> u64 {
    let printable = swar::in_range(x & LOW7, 0x21, 0x7f) & !x;
    // Byte k + 1 is above byte k; the last byte's next is not in `x`.
    printable | (swar::equal(x, b' ') & (printable >> 8))
}

/// `0x80` in each byte of `x` that is ASCII whitespace (`\t`, `\n`, the
/// vertical tab, `\x0c`, `\r`, the space). Exact for every byte ([`swar`]).
fn space_bytes(x: u64) -> u64 {
    (swar::in_range(x & LOW7, b'\t', b'\r') & !x) | swar::equal(x, b' ')
}

/// The first byte at or after `i` of `b` that is not ASCII whitespace (or
/// its end): eight bytes at a time ([`space_bytes`]), the last seven one
/// at a time.
fn skip_ascii_space(b: &[u8], mut i: usize) -> usize {
    while let Some(w) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
        let stop = !space_bytes(x) & HIGH;
        if stop != 0 {
            return i + (stop.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i)
        && !not_space_ascii(c)
    {
        i += 1;
    }
    i
}

/// Whether a character other than whitespace starts at byte `i` of `s`
/// (false at its end).
fn word_at(s: &str, i: usize) -> bool {
    match s.as_bytes().get(i) {
        Some(&b) if b.is_ascii() => not_space_ascii(b),
        Some(_) => !space_at(s, i),
        None => false,
    }
}

/// End of the span (words joined by single ASCII spaces) that starts with
/// the character, not whitespace, at byte `i` of `s`: the first whitespace
/// that is not a space followed by a character other than whitespace (or
/// the end of `s`).
///
/// Eight bytes at a time ([`span_bytes`]) while they are all printable
/// ASCII or spaces joining words (most text); a character at a time
/// otherwise (whitespace, control and non-ASCII characters, a space at the
/// end of the eight bytes, the last seven bytes).
fn span_end(s: &str, mut i: usize) -> usize {
    let b = s.as_bytes();
    loop {
        while let Some(w) = b.get(i..i + 8) {
            let x = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
            let stop = !span_bytes(x) & HIGH;
            if stop != 0 {
                i += (stop.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        match b.get(i) {
            None => return b.len(),
            Some(b' ') if word_at(s, i + 1) => i += 1,
            Some(&c) if c.is_ascii() => {
                if !not_space_ascii(c) {
                    return i;
                }
                i += 1;
            }
            Some(_) if space_at(s, i) => return i,
            Some(_) => i += char_len(s, i),
        }
    }
}

/// Appends the words of `src` (entities decoded, whitespace collapsed to
/// one space) to `dst` while they fit in `cap` bytes: a word is added if
/// `dst`, the word and one separator fit.
///
/// Text is mostly words already joined by single spaces, so it is copied
/// a span at a time (words joined by single ASCII spaces); a span that may
/// not fit whole is added word by word under the rule above.
fn push_capped(dst: &mut String, src: &str, cap: usize) {
    if dst.len() + 2 > cap {
        return; // full: not even a one-byte word fits
    }
    let src = unescape(src);
    let (s, b) = (&*src, src.as_bytes());
    let mut i = 0;
    while i < b.len() {
        // Whitespace between spans: mostly ASCII, skipped without a call.
        i = skip_ascii_space(b, i);
        match b.get(i) {
            None => break,
            Some(c) if c.is_ascii() => {}
            Some(_) if !space_at(s, i) => {}
            Some(_) => {
                i += char_len(s, i);
                continue;
            }
        }
        let start = i;
        let end = span_end(s, i);
        let span = &s[start..end];
        i = end;
        if dst.len() + span.len() < cap {
            if !dst.is_empty() {
                dst.push(' ');
            }
            dst.push_str(span);
            continue;
        }
        for word in span.split(' ') {
            if dst.len() + word.len() + 1 > cap {
                return;
            }
            if !dst.is_empty() {
                dst.push(' ');
            }
            dst.push_str(word);
        }
    }
}

/// Most bytes of one text node held before the part up to its last
/// whitespace is collapsed into the output (bounds the memory of a huge
/// text node; no word or character reference spans whitespace).
const NODE_HOLD: usize = 8 * 1024;

/// Most bytes of one word (a run without raw whitespace) held whole. Longer
/// than any cap even if every byte were a reference's: beyond it the word is
/// dropped as [`push_capped`] would drop it (it cannot fit), up to the next
/// whitespace. A word of entities (`&amp;&nbsp;…`) may hold decoded
/// whitespace, so it is not cut below this.
const WORD_HOLD: usize = 12 * MAX_TEXT;

/// The text of one text node, gathered from lol_html's chunks before it is
/// collapsed: lol_html ends a chunk where its input ended (our 16 KiB
/// writes) and before a `<` that opens no tag, which can fall inside a word
/// or a character reference (`Po` + `stgreSQL`, `AT&am` + `p;T`). A node
/// that arrives in one chunk (most do) is collapsed without a copy.
///
/// Held: the node's text since the last collapse, at most [`NODE_HOLD`]
/// plus a word of at most [`WORD_HOLD`] plus one chunk. Past the hold, each
/// byte is searched for whitespace once (`ws`: where the last one in `held`
/// starts, 0 when none past the first byte), so tiny chunks cost no rescans.
#[derive(Default)]
struct NodeText {
    held: String,
    ws: usize,
    /// Bytes of `held` already searched for whitespace.
    scanned: usize,
    /// Dropping a word longer than [`WORD_HOLD`] up to the next whitespace.
    skipping: bool,
}

impl NodeText {
    /// Adds `chunk` of the current text node (`last`: the node ends with it)
    /// to `dst` under [`push_capped`]'s rule.
    fn add(&mut self, dst: &mut String, chunk: &str, last: bool, cap: usize) {
        let mut chunk = chunk;
        if self.skipping {
            match chunk.find(char::is_whitespace) {
                Some(i) => {
                    chunk = &chunk[i..];
                    self.skipping = false;
                }
                None => chunk = "",
            }
            if last {
                self.skipping = false;
            }
        }
        if self.held.is_empty() && last {
            push_capped(dst, chunk, cap);
            return;
        }
        self.held.push_str(chunk);
        if last {
            self.flush(dst, cap);
            return;
        }
        if self.held.len() <= NODE_HOLD {
            return;
        }
        // Past the hold: find the last whitespace in what was not scanned
        // yet (each byte is scanned once, however small the chunks).
        if let Some(i) = self.held[self.scanned..].rfind(char::is_whitespace)
            && self.scanned + i > 0
        {
            self.ws = self.scanned + i;
        }
        self.scanned = self.held.len();
        if self.ws > 0 {
            // Collapse up to the last whitespace (a word or a reference may
            // go on in the next chunk); what is kept starts with it, and
            // holds no other whitespace.
            let rest = self.held.split_off(self.ws);
            self.flush(dst, cap);
            self.scanned = rest.len();
            self.held = rest;
        } else if self.held.len() > WORD_HOLD {
            // One word longer than any cap: it cannot be kept; what came
            // before it (whitespace at 0 at most) is, and so is what follows.
            self.held.clear();
            (self.ws, self.scanned) = (0, 0);
            self.skipping = true;
        }
    }

    /// Collapses what is held into `dst`.
    fn flush(&mut self, dst: &mut String, cap: usize) {
        push_capped(dst, &self.held, cap);
        self.held.clear();
        (self.ws, self.scanned) = (0, 0);
    }
}

/// The robots token [`extract`] honours `<meta name=TOKEN>` for: the
/// default user agent's (`mgz/0.1 …`).
pub const DEFAULT_AGENT: &str = "mgz";

/// Extracts links and keywords from an HTML body, honouring meta robots
/// directives for every crawler (`<meta name=robots>`) and for
/// [`DEFAULT_AGENT`].
pub fn extract(body: &[u8], content_type: Option<&str>) -> Extracted {
    extract_for(body, content_type, DEFAULT_AGENT)
}

/// [`extract`] for the crawler whose robots token is `agent` (lowercase):
/// `<meta name=AGENT content=nofollow>` (any case) applies to it, a meta
/// addressed to another crawler (`<meta name=googlebot>`) does not.
pub fn extract_for(body: &[u8], content_type: Option<&str>, agent: &str) -> Extracted {
    extract_with(body, content_type, agent, true)
}

/// [`extract_for`], with or without the visible text. Without it
/// (`text: false`, `mgz crawl --no-text`) lol_html reads the document
/// with its tag scanner and switches to its full tokenizer only inside
/// `<title>` and the raw-text elements whose content is searched for
/// links, which halves the cost of a page: the links, base, title, meta
/// tags and directives found are the same, and [`Extracted::text`] is empty.
pub fn extract_with(body: &[u8], content_type: Option<&str>, agent: &str, text: bool) -> Extracted {
    let enc = sniff_encoding(body, content_type);
    let (decoded, _, _) = enc.decode(body);
    let out = RefCell::new(Extracted {
        encoding: enc.name(),
        ..Extracted::default()
    });
    let pass = Pass {
        agent,
        text,
        noscripts: true,
    };
    let noscripts = run_rewriter(decoded.as_bytes(), &out, pass);
    // `<noscript>` content is raw text to a parser that runs scripts (as
    // lol_html's does), but it is what a client without scripts, such as
    // this crawler, gets: its links are parsed from it, each element on its
    // own (links only: its text is usually "enable JavaScript"). The other
    // raw-text fallbacks (`<noembed>`, `<noframes>`, `<iframe>` content)
    // come along: they are what a client without embeds or frames sees.
    for html in noscripts.iter().filter(|h| h.contains('<')) {
        let inner = RefCell::new(Extracted::default());
        let pass = Pass {
            agent,
            text: false,
            noscripts: false,
        };
        run_rewriter(html.as_bytes(), &inner, pass);
        for link in inner.into_inner().links {
            push_link(&out, &link);
        }
    }
    out.into_inner()
}

fn add_link(out: &RefCell<Extracted>, value: Option<String>) {
    if let Some(v) = value {
        push_link(out, &unescape(&v));
    }
}

/// Adds a link target already decoded, within the caps.
fn push_link(out: &RefCell<Extracted>, target: &str) {
    let mut o = out.borrow_mut();
    if target.len() <= MAX_HREF && o.links.len() < MAX_LINKS {
        o.links.push(target.to_string());
    }
}

/// The URL of a `<meta http-equiv=refresh>` `content` (already decoded), as
/// the HTML standard's "shared declarative refresh steps" read it:
/// `5; url='next.html'`, `0;URL=next.html`, `0, next.html`. `None` when
/// there is no URL (a refresh of the page itself) or the time is malformed.
pub fn refresh_url(content: &str) -> Option<&str> {
    let ws = |c: char| matches!(c, '\t' | '\n' | '\x0c' | '\r' | ' ');
    let s = content.trim_start_matches(ws);
    let after_time = s.trim_start_matches(|c: char| c.is_ascii_digit());
    if after_time.len() == s.len() && !after_time.starts_with('.') {
        return None; // no time
    }
    let rest = after_time.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    if !(rest.is_empty() || rest.starts_with([';', ',']) || rest.starts_with(ws)) {
        return None;
    }
    let rest = rest.trim_start_matches(ws);
    let rest = rest.strip_prefix([';', ',']).unwrap_or(rest);
    let url = rest.trim_start_matches(ws);
    if url.is_empty() {
        return None;
    }
    // `url =` is optional; without the `=` the text is the URL as it is.
    let mut target = url;
    if url.len() >= 3 && url.as_bytes()[..3].eq_ignore_ascii_case(b"url") {
        let eq = url[3..].trim_start_matches(ws);
        if let Some(value) = eq.strip_prefix('=') {
            target = value.trim_start_matches(ws);
        }
    }
    let target = match target.chars().next() {
        Some(q @ ('"' | '\'')) => target[1..].split(q).next().unwrap_or(""),
        _ => target,
    };
    (!target.is_empty()).then_some(target)
}

fn on_meta(out: &RefCell<Extracted>, name: &str, content: &str, agent: &str) {
    let mut o = out.borrow_mut();
    match name {
        "description" => push_capped(&mut o.description, content, MAX_META),
        "keywords" => push_capped(&mut o.keywords, content, MAX_META),
        _ if name == "robots" || name == agent => {
            let (ni, nf) = robots_directives(content);
            o.noindex |= ni;
            o.nofollow |= nf;
        }
        _ => {}
    }
}

/// The extractor's CSS selectors, parsed once: `element!` would parse them
/// (cssparser) for every page. Tag names only: the handlers check the
/// attributes they need, which costs less than `a[href]`-style conditions
/// in lol_html's selector VM (`page_work` over the PostgreSQL pages:
/// 1,709 M → 1,667 M instructions; docs/BENCHMARKS.md, session 35).
struct Selectors {
    anchors: Selector,
    frames: Selector,
    links: Selector,
    base: Selector,
    meta: Selector,
    title: Selector,
    /// Elements whose content lol_html reads as raw text.
    raw_text: Selector,
}

static SELECTORS: LazyLock<Selectors> = LazyLock::new(|| {
    let parse = |s: &str| s.parse::<Selector>().expect("static selector");
    Selectors {
        anchors: parse("a, area"),
        frames: parse("frame, iframe"),
        links: parse("link"),
        base: parse("base"),
        meta: parse("meta"),
        title: parse("title"),
        raw_text: parse("noscript, noembed, noframes, iframe, style, xmp"),
    }
});

/// What one lol_html pass collects.
#[derive(Clone, Copy)]
struct Pass<'a> {
    /// Robots token whose `<meta name=…>` applies.
    agent: &'a str,
    /// Collect the visible text.
    text: bool,
    /// Return the raw-text nodes that hold markup.
    noscripts: bool,
}

/// Streams `html` through lol_html into `out`; with `pass.noscripts`, also
/// returns each raw-text node that holds markup (`<noscript>` content and
/// the like; at most [`MAX_NOSCRIPT`] bytes in all).
fn run_rewriter(html: &[u8], out: &RefCell<Extracted>, pass: Pass<'_>) -> Vec<String> {
    use std::borrow::Cow::Borrowed;
    let Pass {
        agent,
        text,
        noscripts,
    } = pass;
    let held = RefCell::new((Vec::<String>::new(), 0usize, false));
    // Raw text (`<noscript>`, `<noembed>`, `<noframes>`, `<iframe>`
    // fallback, `<style>`, `<xmp>` content): only a node with markup in it
    // is kept (not a style sheet).
    let raw_text = |t: &mut lol_html::html_content::TextChunk<'_>| {
        if t.text_type() != TextType::RawText {
            return Ok(());
        }
        let (list, total, open) = &mut *held.borrow_mut();
        let chunk = t.as_str();
        if !*open {
            list.push(String::new());
        }
        *open = !t.last_in_text_node();
        if let Some(node) = list.last_mut() {
            if *total + chunk.len() <= MAX_NOSCRIPT {
                node.push_str(chunk);
                *total += chunk.len();
            }
            if !*open && !node.contains('<') {
                *total -= node.len();
                list.pop();
            }
        }
        Ok(())
    };
    let sel = &*SELECTORS;
    let handlers = ElementContentHandlers::default;
    let (title_node, text_node) = (
        RefCell::<NodeText>::default(),
        RefCell::<NodeText>::default(),
    );
    let titles = std::cell::Cell::new(0u32);
    let link = |el: &mut Element<'_, '_>| {
        let rel = el
            .get_attribute("rel")
            .unwrap_or_default()
            .to_ascii_lowercase();
        if rel
            .split_ascii_whitespace()
            .any(|r| matches!(r, "alternate" | "next" | "prev"))
        {
            add_link(out, el.get_attribute("href"));
        }
        Ok(())
    };
    let mut settings = Settings {
        element_content_handlers: vec![
            (
                Borrowed(&sel.anchors),
                handlers().element(|el: &mut Element<'_, '_>| {
                    add_link(out, el.get_attribute("href"));
                    Ok(())
                }),
            ),
            (
                Borrowed(&sel.frames),
                handlers().element(|el: &mut Element<'_, '_>| {
                    add_link(out, el.get_attribute("src"));
                    Ok(())
                }),
            ),
            (Borrowed(&sel.links), handlers().element(link)),
            (
                Borrowed(&sel.base),
                handlers().element(|el: &mut Element<'_, '_>| {
                    let mut o = out.borrow_mut();
                    if o.base.is_none() {
                        // A `<base>` without href is skipped: the first with one counts.
                        o.base = el.get_attribute("href").map(|b| unescape(&b).into_owned());
                    }
                    Ok(())
                }),
            ),
            (
                Borrowed(&sel.meta),
                handlers().element(|el: &mut Element<'_, '_>| {
                    if let (Some(name), Some(content)) =
                        (el.get_attribute("name"), el.get_attribute("content"))
                    {
                        on_meta(out, &name.to_ascii_lowercase(), &content, agent);
                    } else if let Some(equiv) = el.get_attribute("http-equiv")
                        && equiv.trim().eq_ignore_ascii_case("refresh")
                        && let Some(content) = el.get_attribute("content")
                    {
                        // A refresh that names a URL is a link (a moved page).
                        if let Some(to) = refresh_url(&unescape(&content)) {
                            push_link(out, to);
                        }
                    }
                    Ok(())
                }),
            ),
            (
                Borrowed(&sel.title),
                // The page's title is its first `<title>` (as `document.title`
                // is): not an SVG icon's title or a stray one in the body.
                handlers()
                    .element(|_: &mut Element<'_, '_>| {
                        titles.set(titles.get().saturating_add(1));
                        Ok(())
                    })
                    .text(|t: &mut lol_html::html_content::TextChunk<'_>| {
                        if titles.get() == 1 {
                            let last = t.last_in_text_node();
                            let title = &mut out.borrow_mut().title;
                            title_node
                                .borrow_mut()
                                .add(title, t.as_str(), last, MAX_TITLE);
                        }
                        Ok(())
                    }),
            ),
        ],
        document_content_handlers: Vec::new(),
        memory_settings: MemorySettings {
            max_allowed_memory_usage: PARSER_MEMORY,
            ..MemorySettings::default()
        },
        strict: false,
        ..Settings::new()
    };
    if text {
        // The whole document through the full tokenizer: every text node.
        settings.document_content_handlers.push(doc_text!(|t| {
            match t.text_type() {
                TextType::Data => {
                    let last = t.last_in_text_node();
                    let text = &mut out.borrow_mut().text;
                    text_node.borrow_mut().add(text, t.as_str(), last, MAX_TEXT);
                }
                TextType::RawText if noscripts => raw_text(t)?,
                _ => {}
            }
            Ok(())
        }));
    } else if noscripts {
        // Only the elements whose content is raw text go through the
        // full tokenizer.
        settings
            .element_content_handlers
            .push((Borrowed(&sel.raw_text), handlers().text(raw_text)));
    }
    {
        let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
        // On a parser error (memory limit) keep what was collected so far.
        if html
            .chunks(16 * 1024)
            .all(|chunk| rewriter.write(chunk).is_ok())
        {
            let _ = rewriter.end();
        }
    }
    // What an unfinished node left (the document or the parse cut short).
    let mut o = out.borrow_mut();
    title_node.borrow_mut().flush(&mut o.title, MAX_TITLE);
    text_node.borrow_mut().flush(&mut o.text, MAX_TEXT);
    drop(o);
    held.into_inner().0
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r#"<!doctype html><html><head><base href="http://b.sim/dir/">
<title> Hello
 World </title><meta name="Description" content="A page"><meta name=keywords content="x, y">
<meta name="robots" content="NOFOLLOW"><link rel="next" href="/p2"><link rel=stylesheet href="s.css">
<script>var hidden = "<a href='/no'>";</script><style>.x{}</style></head>
<body><a href="a.html?x=1&amp;y=2">A &amp; B</a> text <AREA HREF="m.html"><iframe src="//c.sim/f"></iframe>
<frame src="fr.html"><a name="x">no href</a></body></html>"#;

    #[test]
    fn collects_everything() {
        let e = extract(PAGE.as_bytes(), Some("text/html"));
        assert_eq!(
            e.links,
            ["/p2", "a.html?x=1&y=2", "m.html", "//c.sim/f", "fr.html"]
        );
        assert_eq!(e.base.as_deref(), Some("http://b.sim/dir/"));
        assert_eq!(e.title, "Hello World");
        assert_eq!(e.description, "A page");
        assert_eq!(e.keywords, "x, y");
        assert!(e.nofollow && !e.noindex);
        assert_eq!(e.text, "A & B text no href");
    }

    #[test]
    fn elements_without_the_attribute_they_need_are_skipped() {
        // The selectors name tags only; each handler checks its attributes.
        let page = r#"<html><head><base target=_top><base HREF="http://b.sim/x/"><base href="http://late.sim/">
<meta name=description><meta content="orphan"><meta NAME="Keywords" CONTENT="k1">
<meta name=robots><link href="no-rel.html"><link rel="next"><link REL="Prev Alternate" HREF="p.html">
</head><body><a>none</a><a href="">empty</a><area alt=x><iframe></iframe><frame name=f>
<a id=y HREF=ok.html>ok</a></body></html>"#;
        let e = extract(page.as_bytes(), Some("text/html"));
        assert_eq!(e.links, ["p.html", "", "ok.html"]);
        assert_eq!(e.base.as_deref(), Some("http://b.sim/x/"));
        assert_eq!(e.description, "");
        assert_eq!(e.keywords, "k1");
        assert!(!e.noindex && !e.nofollow);
    }

    #[test]
    fn meta_robots_for_another_crawler_does_not_apply() {
        let page = r#"<meta name=googlebot content=noindex><meta name=MyBot content=nofollow>"#;
        let e = extract(page.as_bytes(), None);
        assert!(!e.noindex && !e.nofollow);
        let e = extract_for(page.as_bytes(), None, "mybot");
        assert!(!e.noindex && e.nofollow);
        let ours = r#"<meta name="MGZ" content="NOINDEX">"#;
        assert!(extract(ours.as_bytes(), None).noindex);
        assert!(!extract_for(ours.as_bytes(), None, "mybot").noindex);
    }

    #[test]
    fn links_inside_noscript_are_found() {
        let page = r#"<head><style>a{color:red}</style><noscript><link rel=next href=/ns-head></noscript></head>
<body><a href=/a>a</a><noscript><a href="/in-noscript?x=1&amp;y=2">x</a><img src=/p.gif>
</noscript><noscript>Enable JavaScript</noscript><noscript><a href="/unclosed</noscript>
<noscript><a href=/after-unclosed>y</a></noscript>"#;
        let e = extract(page.as_bytes(), None);
        assert_eq!(
            e.links,
            ["/a", "/ns-head", "/in-noscript?x=1&y=2", "/after-unclosed"]
        );
        assert_eq!(e.text, "a");
        // A style sheet before it does not use up the cap.
        let css = format!("<style>{}</style>", "b{x:y}".repeat(20_000));
        let after = format!("{css}<noscript><a href=/kept></noscript>");
        assert_eq!(extract(after.as_bytes(), None).links, ["/kept"]);
        // The content read is capped: 10,000 links of ~17 bytes, ~170 KB.
        let mut big = String::from("<noscript>");
        for i in 0..10_000 {
            big.push_str(&format!("<a href=/{i:05}>"));
        }
        let n = extract(big.as_bytes(), None).links.len();
        assert!(n > 1_000 && n <= MAX_NOSCRIPT / 14, "{n}");
    }

    #[test]
    fn refresh_urls_are_read_as_the_standard_reads_them() {
        for (content, want) in [
            ("0; url=next.html", Some("next.html")),
            ("5;URL='a b.html'", Some("a b.html")),
            ("0, next.html", Some("next.html")),
            (" 3 ; url = \"q.html\" tail", Some("q.html")),
            ("1.5; url=x", Some("x")),
            (".5 url=x", Some("x")),
            ("0; 'unterminated", Some("unterminated")),
            ("0; urlfoo", Some("urlfoo")),
            ("0; url", Some("url")),
            ("0; u\u{20ac}", Some("u\u{20ac}")),
            ("0", None),
            ("10;", None),
            ("0; url=", None),
            ("", None),
            ("abc", None),
            ("5x; url=y", None),
            ("; url=y", None),
        ] {
            assert_eq!(refresh_url(content), want, "{content:?}");
        }
    }

    #[test]
    fn a_meta_refresh_url_is_a_link() {
        let page = r#"<head><meta http-equiv="Refresh" content="0; URL=moved.html?a=1&amp;b=2">
<meta http-equiv=refresh content="30"><meta http-equiv=" REFRESH " content="1;url=second.html">
<meta http-equiv=content-type content="text/html; charset=utf-8"><meta http-equiv=refresh>"#;
        let e = extract(page.as_bytes(), Some("text/html"));
        assert_eq!(e.links, ["moved.html?a=1&b=2", "second.html"]);
    }

    proptest::proptest! {
        #[test]
        fn refresh_url_takes_any_text(
            content in "(0|5|\\.| |\t|;|,|url|URL|=|'|\"|a|\u{e9}|u\u{20ac}|\u{3000})*"
        ) {
            if let Some(url) = refresh_url(&content) {
                proptest::prop_assert!(!url.is_empty() && content.contains(url));
            }
        }
    }

    #[test]
    fn charsets() {
        let latin = b"<meta charset=\"iso-8859-1\"><title>caf\xe9</title>";
        assert_eq!(extract(latin, None).title, "café");
        assert_eq!(
            extract(latin, Some("text/html; charset=utf-8")).title,
            "caf\u{fffd}"
        );
        let bom = b"\xef\xbb\xbf<title>ok</title>";
        assert_eq!(extract(bom, Some("text/html; charset=bogus")).title, "ok");
        let sjis = b"<meta http-equiv=Content-Type content=\"text/html; charset=Shift_JIS\"><title>\x93\xfa</title>";
        assert_eq!(extract(sjis, None).encoding, "Shift_JIS");
    }

    /// The rule of `push_capped`, one word at a time.
    fn push_model(dst: &mut String, src: &str, cap: usize) {
        if dst.len() + 2 > cap {
            return;
        }
        for word in unescape(src).split_whitespace() {
            if dst.len() + word.len() + 1 > cap {
                return;
            }
            if !dst.is_empty() {
                dst.push(' ');
            }
            dst.push_str(word);
        }
    }

    /// Text made of words, runs of ASCII and other whitespace, control
    /// characters and entities (some of which decode to whitespace).
    fn text_pieces() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::strategy::Strategy;
        let piece = "(a|b|ab| |  |\\t|\\n|\\x0b|\\x0c|\\r|\\x01|\\x1f|\\u{85}|\\u{a0}|\\u{2003}|\\u{3000}|é|日|&amp;|&nbsp;|&#32;|&lt;|&)";
        proptest::collection::vec(piece, 0..24).prop_map(|t| t.concat())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn push_capped_matches_the_model(
            start in "(|a|ab c)",
            src in text_pieces(),
            cap in 0usize..48,
        ) {
            let (mut got, mut want) = (start.clone(), start);
            push_capped(&mut got, &src, cap);
            push_model(&mut want, &src, cap);
            proptest::prop_assert_eq!(got, want);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Longer words around the eight-byte windows of `span_end` and
        /// `skip_ascii_space`: words and whitespace runs ending before, at
        /// and after a window's end, a space as a window's last byte,
        /// non-ASCII right after ASCII, text shorter than a window.
        #[test]
        fn push_capped_windows_match_the_model(
            start in "(|a|ab c)",
            pieces in proptest::collection::vec("(a|Ab|x{6,9}|Y{15,17}| |  | {7,9}|\\t|\\n|\\x0b|\\r|\\x01|\u{85}|\u{a0}|\u{3000}|é|日|&amp;|&nbsp;|0123456789)", 0..40),
            cap in 0usize..200,
        ) {
            let src = pieces.concat();
            let (mut got, mut want) = (start.clone(), start);
            push_capped(&mut got, &src, cap);
            push_model(&mut want, &src, cap);
            proptest::prop_assert_eq!(got, want);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// One text node of up to ~40 KB starting anywhere in the first
        /// write: it reaches the output as if it had come in one chunk,
        /// through the 16 KiB writes and the hold limit.
        #[test]
        fn a_text_node_in_chunks_collapses_as_a_whole(
            pad in 0usize..(16 * 1024),
            piece in text_pieces(),
            times in 1usize..400,
        ) {
            let node = piece.repeat(times);
            let page = format!("<!--{}--><p>{node}", "x".repeat(pad));
            let mut want = String::new();
            push_model(&mut want, &node, MAX_TEXT);
            proptest::prop_assert_eq!(extract(page.as_bytes(), None).text, want);
        }
    }

    /// Heads made of pieces of meta tags, charset declarations, spaces,
    /// quotes, `>` and non-UTF-8 bytes.
    fn heads() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::strategy::Strategy;
        const PIECES: &[&[u8]] = &[
            b"<meta",
            b"<META ",
            b"charset",
            b"CharSet",
            b"=",
            b" ",
            b"\t\x0b",
            b"\"",
            b"'",
            b">",
            b"utf-8",
            b"ISO-8859-1",
            b"\xe9\xc2\xa0",
            &[b'x'; 200],
            b"abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij",
        ];
        let piece = proptest::sample::select(PIECES).prop_map(<[u8]>::to_vec);
        proptest::collection::vec(piece, 0..16).prop_map(|p| p.concat())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        #[test]
        fn meta_charset_matches_the_pattern(head in heads()) {
            let re = regex::bytes::Regex::new(META_CHARSET).unwrap();
            let want = re.captures(&head).map(|c| c.get(1).unwrap().as_bytes().to_vec());
            proptest::prop_assert_eq!(meta_charset(&head).map(<[u8]>::to_vec), want);
        }
    }

    #[test]
    fn directives() {
        assert_eq!(robots_directives("noindex, nofollow"), (true, true));
        assert_eq!(robots_directives("none"), (true, true));
        assert_eq!(robots_directives("NoIndex\tNOFOLLOW"), (true, true));
        let header = |v: &str| header_robots_directives(v, "mgz");
        assert_eq!(header("noindex, nofollow"), (true, true));
        assert_eq!(header("googlebot: noindex"), (false, false));
        assert_eq!(header("googlebot: noindex, nofollow"), (false, false));
        assert_eq!(header("nofollow, googlebot: noindex"), (false, true));
        assert_eq!(header("googlebot: noindex, MGZ: nofollow"), (false, true));
        assert_eq!(header("mgz:none"), (true, true));
        assert_eq!(header("otherbot: noindex, mgz: all"), (false, false));
        assert_eq!(
            header("unavailable_after: 25 Jun 2010 15:00:00 PST"),
            (false, false)
        );
        assert_eq!(
            header("unavailable_after: 25 Jun 2010, noindex"),
            (true, false)
        );
        assert_eq!(header("max-snippet: 20, nofollow"), (false, true));
        assert_eq!(header(": noindex"), (true, false));
        assert_eq!(robots_directives("all"), (false, false));
    }

    /// lol_html hands a text node over in chunks split where its input
    /// was (the 16 KiB writes) and before a `<` that starts no tag; a
    /// chunk boundary is not a word boundary.
    #[test]
    fn words_and_entities_split_across_chunks_stay_whole() {
        for at in [3, 4, 5, 7, 11] {
            // "Postgres" (or the entity after it) straddles the first write.
            let pad = "x".repeat(16 * 1024 - 6 - at);
            let page = format!("<p>{pad}</p>PostgreSQL AT&amp;T done");
            let e = extract(page.as_bytes(), None);
            let rest = e.text.strip_prefix(pad.as_str());
            assert_eq!(rest, Some(" PostgreSQL AT&T done"), "split at {at}");
        }
        let e = extract(b"<title>Hi <b> there</title><p>if a < b or c<=d then", None);
        assert_eq!(e.title, "Hi <b> there");
        assert_eq!(e.text, "if a < b or c<=d then");
    }

    /// What a node holds stays near the hold limit, whatever its shape:
    /// after a cut the held text starts with whitespace, which must not
    /// count as a place to cut again (the held text would grow with the
    /// node, and each chunk would rescan it).
    /// The case the property test found (session 37): a node of ~12 KB
    /// whose only whitespace is `&nbsp;` references was cut at the hold
    /// limit inside a reference (`&am` + `p;`).
    #[test]
    fn a_long_word_of_references_is_not_cut() {
        let node = "ab&amp;a&amp;&amp;&nbsp;&amp;\u{e9}\u{65e5}\u{e9}\u{e9}".repeat(369);
        let page = format!("<!--{}--><p>{node}", "x".repeat(2363));
        let mut want = String::new();
        push_capped(&mut want, &node, MAX_TEXT);
        assert_eq!(extract(page.as_bytes(), None).text, want);
    }

    #[test]
    fn a_held_node_stays_bounded() {
        let chunk = "w".repeat(16 * 1024);
        for head in ["", " ", "a ", " \u{3000}"] {
            let (mut node, mut dst) = (NodeText::default(), String::new());
            node.add(&mut dst, head, false, MAX_TEXT);
            for _ in 0..300 {
                node.add(&mut dst, &chunk, false, MAX_TEXT);
                assert!(node.held.len() <= WORD_HOLD + chunk.len(), "{head:?}");
            }
            node.add(&mut dst, " tail", true, MAX_TEXT);
            // The 4.8 MB word cannot fit, as in `push_capped`: dropped; the
            // words around it are kept.
            let mut want = String::new();
            push_capped(&mut want, &format!("{head} tail"), MAX_TEXT);
            assert_eq!(dst, want, "{head:?}");
        }
    }

    /// Everything but the text, as `extract_with(.., false)` finds it.
    fn without_text(body: &[u8]) -> Extracted {
        extract_with(body, Some("text/html"), DEFAULT_AGENT, false)
    }

    /// `--no-text` reads the same links, base, title, meta and directives:
    /// only the visible text is left out.
    #[test]
    fn without_text_everything_else_is_the_same() {
        let pages = [
            PAGE,
            r#"<head><noscript><link rel=next href=/ns-head></noscript></head><p>a<noscript><a href="/in?x=1&amp;y=2">x</a></noscript>
<iframe src=/f><a href=/fallback></iframe><noembed><a href=/ne></noembed><noframes><a href=/nf></noframes>
<xmp><a href=/xmp></xmp><style>/* <a href=/css> */</style><script>"<a href=/script>"</script><textarea><a href=/ta></textarea>"#,
            r#"<meta http-equiv=refresh content="0; url=/moved"><meta name=MGZ content="noindex, nofollow"><title>a<b>c</b></title>"#,
        ];
        for page in pages {
            let full = extract(page.as_bytes(), Some("text/html"));
            assert!(!full.links.is_empty());
            let bare = without_text(page.as_bytes());
            assert_eq!(bare.text, "");
            assert_eq!(
                bare,
                Extracted {
                    text: String::new(),
                    ..full
                }
            );
        }
    }

    /// Markup built from the pieces the extractor cares about; with
    /// `foreign`, SVG elements too.
    fn markup(foreign: bool) -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::strategy::Strategy;
        let mut pieces = vec![
            "<a href=/a>",
            "<A HREF='/b?x=1&amp;y'>",
            "</a>",
            "<area href=c>",
            "<base href=http://b.sim/>",
            "<link rel=next href=/n>",
            "<link rel=stylesheet href=s.css>",
            "<frame src=f>",
            "<iframe src=/i>",
            "</iframe>",
            "<noscript>",
            "</noscript>",
            "<noembed>",
            "</noembed>",
            "<noframes>",
            "</noframes>",
            "<style>",
            "</style>",
            "<xmp>",
            "</xmp>",
            "<script>",
            "</script>",
            "<textarea>",
            "</textarea>",
            "<title>",
            "</title>",
            "<!--",
            "-->",
            "<meta name=description content=d>",
            "<meta name=keywords content='k, l'>",
            "<meta name=robots content=nofollow>",
            "<meta http-equiv=refresh content='1;url=/r'>",
            "<p>",
            "text ",
            "&amp;",
            "&nbsp;",
            "<",
            ">",
            "\"",
            "'",
            " ",
            "é",
            "<![CDATA[",
            "]]>",
        ];
        if foreign {
            pieces.extend(["<svg>", "</svg>", "<math>", "</math>", "<foreignObject>"]);
        }
        proptest::collection::vec(proptest::sample::select(pieces), 0..40).prop_map(|v| v.concat())
    }

    proptest::proptest! {
        #[test]
        fn without_text_only_the_text_differs(page in markup(false)) {
            let full = extract(page.as_bytes(), Some("text/html"));
            let bare = without_text(page.as_bytes());
            proptest::prop_assert_eq!(bare, Extracted { text: String::new(), ..full });
        }

        /// In SVG or MathML, lol_html's tag scanner and its tokenizer can
        /// disagree on a title after a stray raw-text end tag
        /// (`<svg></xmp><title>t`: the tokenizer reads the title's text,
        /// the tag scanner does not); everything else is the same.
        #[test]
        fn without_text_the_links_are_the_same_in_foreign_content(page in markup(true)) {
            let full = extract(page.as_bytes(), Some("text/html"));
            let bare = without_text(page.as_bytes());
            let title = bare.title.clone();
            proptest::prop_assert_eq!(bare, Extracted { text: String::new(), title, ..full });
        }
    }

    /// The title is the first `<title>` element's text, as `document.title`
    /// is, not the titles of SVG icons or stray ones in the body as well.
    #[test]
    fn the_title_is_the_first_title_element() {
        let e = extract(
            b"<title>Page</title><p>x<svg><title>icon</title></svg><title>second</title>",
            None,
        );
        assert_eq!(e.title, "Page");
        let e = extract(b"<title></title><title>second</title>", None);
        assert_eq!(e.title, "");
    }

    #[test]
    fn hostile_inputs_do_not_panic_and_stay_bounded() {
        let huge_attr = format!("<a href=\"{}\">x</a><a href=ok>", "a".repeat(20 << 20));
        let e = extract(huge_attr.as_bytes(), None);
        assert!(e.links.len() <= 1);
        let many = "<a href=x>".repeat(50_000);
        assert_eq!(extract(many.as_bytes(), None).links.len(), MAX_LINKS);
        for junk in [
            &b"<<<>>><a href=\"unterminated"[..],
            b"\0\xff\xfe<title>",
            b"<svg><a href=q></svg><math><a xlink:href=z>",
            b"</a></a><!--",
        ] {
            let _ = extract(junk, Some("text/html; charset=x-nonsense"));
        }
        let text = "word ".repeat(100_000);
        assert!(extract(text.as_bytes(), None).text.len() <= MAX_TEXT);
        // One 4 MB text node without whitespace (held up to `WORD_HOLD`,
        // then skipped) and a 4 MB title: the word fits no cap, so it is
        // dropped as `push_capped` drops it; the words after it are kept.
        let word = format!("<title>{0} t</title><p>{0} after", "w".repeat(4 << 20));
        let e = extract(word.as_bytes(), None);
        assert_eq!((e.title.as_str(), e.text.as_str()), ("t", "after"));
    }
}
