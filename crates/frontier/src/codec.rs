//! Byte encodings of keys and values in the store (drawn in the crate README).
//!
//! Keys are big-endian so that byte order is numeric order: a queue's pending
//! URLs sort by next-fetch time, then by discovery sequence (FIFO).
//! Every value starts with [`VALUE_VERSION`]; decoding checks every length
//! against the bytes left and returns [`FrontierError::Corrupt`] instead of
//! panicking on garbage.

use crate::error::{FrontierError, Result};
use crate::types::Metadata;

/// Version byte leading every stored value.
pub const VALUE_VERSION: u8 = 1;

/// `sched` key: qid (4) | next_fetch secs (8) | seq (8).
pub fn sched_key(qid: u32, next_fetch: u64, seq: u64) -> [u8; 20] {
    let mut k = [0u8; 20];
    k[..4].copy_from_slice(&qid.to_be_bytes());
    k[4..12].copy_from_slice(&next_fetch.to_be_bytes());
    k[12..].copy_from_slice(&seq.to_be_bytes());
    k
}

/// Splits a `sched` key into (qid, next_fetch, seq).
pub fn parse_sched_key(k: &[u8]) -> Result<(u32, u64, u64)> {
    if k.len() != 20 {
        return Err(FrontierError::corrupt(
            "sched key",
            format!("{} bytes", k.len()),
        ));
    }
    let mut r = Reader::new(k, "sched key");
    Ok((r.u32()?, r.u64()?, r.u64()?))
}

/// The URL key bytes of a `urls` key (after its queue id).
pub fn url_key_part(k: &[u8]) -> Result<&[u8]> {
    k.get(4..)
        .ok_or_else(|| FrontierError::corrupt("urls key", format!("{} bytes", k.len())))
}

/// `urls` key: qid (4) | URL key bytes.
pub fn url_key(qid: u32, key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(4 + key.len());
    k.extend_from_slice(&qid.to_be_bytes());
    k.extend_from_slice(key);
    k
}

/// The fields of a URL that do not change with its schedule.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Body {
    /// Canonical URL text.
    pub url: String,
    /// Link depth.
    pub depth: u32,
    /// Creation time, seconds.
    pub created: u64,
    /// Metadata.
    pub metadata: Metadata,
}

/// Version byte of values holding a [`Body`] (`sched`/`disc` bodies and
/// `urls` states) as written now: 2, the compact fields below. Version 1
/// (fixed-width integers, the URL whole) is still read.
///
/// ```text
/// v1 fields: depth u32 | created u64 | url: len u32, bytes | metadata: count u32,
///            per name: len u32, bytes, values u32, per value: len u32, bytes
/// v2 fields: scheme u8 | depth varint | created varint |
///            url after the scheme (and host): len varint, bytes |
///            metadata: count varint, per name: len varint, bytes, values varint,
///            per value: len varint, bytes
/// ```
/// The scheme byte: bits 0-1 the scheme left out (0: none, 1: "http://",
/// 2: "https://"); bit 2 set: the host is left out too, because it equals
/// the key of the URL's queue (the default key), which every reader of a
/// pending URL's body knows (`Body::decode` takes it); the rest then starts
/// with `/`. Only pending bodies (`sched`, `disc`) leave the host out;
/// completed ones (`urls`) are read without a queue at hand in places, so
/// they keep it.
/// Varints are LEB128 (7 bits a byte, low first; at most 10 bytes, no
/// bits past 64). A pending v2 body of the frontier benchmark is 35 bytes
/// shorter than v1 (38 against 73 for a 52-byte URL on a 16-byte host).
/// Every byte is copied into fjall's journal and memtable, flushed and
/// compacted: a throw-away build that stored no URL text put with ~10 %
/// less CPU, and the state on disk after a 10M put is a quarter smaller
/// (docs/BENCHMARKS.md, "Session 15").
pub const BODY_VERSION: u8 = 2;

/// Scheme prefixes a v2 body leaves out, by code (0 is none).
const SCHEMES: [&str; 3] = ["", "http://", "https://"];

/// Bit of the scheme byte: the host (= the queue key) is left out.
const HOST_LEFT_OUT: u8 = 4;

/// The fields of a `Body` encoding (after the version byte), v2; the host
/// is left out when it equals `queue_key`.
fn encode_fields(
    (url, queue_key): (&str, Option<&str>),
    depth: u32,
    created: u64,
    metadata: &Metadata,
    out: &mut Vec<u8>,
) {
    let code = match url.as_bytes() {
        [b'h', b't', b't', b'p', b's', b':', b'/', b'/', ..] => 2,
        [b'h', b't', b't', b'p', b':', b'/', b'/', ..] => 1,
        _ => 0,
    };
    let after = &url[SCHEMES[code].len()..];
    let rest = match queue_key {
        Some(k) if code > 0 && !k.is_empty() => {
            after.strip_prefix(k).filter(|r| r.starts_with('/'))
        }
        _ => None,
    };
    out.push(code as u8 | if rest.is_some() { HOST_LEFT_OUT } else { 0 });
    put_varint(out, u64::from(depth));
    put_varint(out, created);
    put_var_bytes(out, rest.unwrap_or(after).as_bytes());
    put_metadata(out, metadata);
}

/// Appends `metadata` as v2 fields: count varint, per name: len varint,
/// bytes, values varint, per value: len varint, bytes.
fn put_metadata(out: &mut Vec<u8>, metadata: &Metadata) {
    put_varint(out, metadata.len() as u64);
    for (name, values) in metadata {
        put_var_bytes(out, name.as_bytes());
        put_varint(out, values.len() as u64);
        for v in values {
            put_var_bytes(out, v.as_bytes());
        }
    }
}

/// Appends `v` as a LEB128 varint (see [`BODY_VERSION`]).
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_var_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// The `urls` value: where a URL stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlState {
    /// Pending: its body lives in `sched` under (next_fetch, seq).
    Pending {
        /// Next fetch, seconds (> 0).
        next_fetch: u64,
        /// Discovery sequence number.
        seq: u64,
    },
    /// Completed: never served again; the body is kept here.
    Completed(Body),
}

impl Body {
    /// Appends the encoding (with version byte) of a pending URL's body,
    /// given by its parts (so nothing is copied into an owned `Body`
    /// first), to `out`; the host is left out if it equals `queue_key`.
    pub fn encode_parts(
        (url, queue_key): (&str, &str),
        depth: u32,
        created: u64,
        metadata: &Metadata,
        out: &mut Vec<u8>,
    ) {
        out.push(BODY_VERSION);
        encode_fields((url, Some(queue_key)), depth, created, metadata, out);
    }

    fn encode_fields(&self, out: &mut Vec<u8>) {
        let url = (self.url.as_str(), None);
        encode_fields(url, self.depth, self.created, &self.metadata, out);
    }

    /// Decodes a pending URL's body written by [`Body::encode_parts`]
    /// (version 2) or by an older binary (version 1); `queue_key` is the key
    /// of the queue the entry belongs to.
    pub fn decode(bytes: &[u8], queue_key: &str) -> Result<Body> {
        let mut r = Reader::new(bytes, "sched value");
        let version = r.body_version()?;
        let body = Body::decode_fields(&mut r, version, Some(queue_key))?;
        r.finish()?;
        Ok(body)
    }

    /// The fields of a value of `version` (1 or [`BODY_VERSION`]); a host
    /// left out is `queue_key` (none for `urls` values, which keep it).
    fn decode_fields(r: &mut Reader<'_>, version: u8, queue_key: Option<&str>) -> Result<Body> {
        let v2 = version == BODY_VERSION;
        let (scheme, host, depth, created) = match v2 {
            true => {
                let code = r.u8()?;
                let bad = || FrontierError::corrupt(r.what, format!("scheme code {code}"));
                let scheme = *SCHEMES.get(usize::from(code & 3)).ok_or_else(bad)?;
                let host = match code & !3 {
                    0 => "",
                    HOST_LEFT_OUT if !scheme.is_empty() => queue_key.ok_or_else(bad)?,
                    _ => return Err(bad()),
                };
                let depth = u32::try_from(r.varint()?)
                    .map_err(|_| FrontierError::corrupt(r.what, "depth over 32 bits"))?;
                (scheme, host, depth, r.varint()?)
            }
            false => ("", "", r.u32()?, r.u64()?),
        };
        let rest = r.text(v2)?;
        let mut url = String::with_capacity(scheme.len() + host.len() + rest.len());
        url.push_str(scheme);
        url.push_str(host);
        url.push_str(rest);
        Ok(Body {
            url,
            depth,
            created,
            metadata: read_metadata(r, v2)?,
        })
    }
}

/// Reads the metadata fields of a value of version 1 (`v2` false) or 2.
fn read_metadata(r: &mut Reader<'_>, v2: bool) -> Result<Metadata> {
    let mut metadata = Metadata::new();
    for _ in 0..r.count(v2)? {
        let name = r.text(v2)?.to_string();
        let mut values = Vec::new();
        for _ in 0..r.count(v2)? {
            values.push(r.text(v2)?.to_string());
        }
        metadata.insert(name, values);
    }
    Ok(metadata)
}

/// Tags of `urls` values (after the version byte).
const TAG_PENDING: u8 = 0;
/// Completed, the body whole (written before format 9; still read).
const TAG_COMPLETED: u8 = 1;
/// Completed, the body without its URL, which is rebuilt from the entry's
/// key (format 9; see [`UrlState::completed_value`]).
const TAG_COMPLETED_KEYED: u8 = 2;

impl UrlState {
    /// Encodes with version and tag byte; a completed body whole, URL
    /// included (tag 1, as written before format 9: the frontier now
    /// writes [`UrlState::completed_value`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![BODY_VERSION];
        match self {
            UrlState::Pending { next_fetch, seq } => {
                out.push(TAG_PENDING);
                out.extend_from_slice(&next_fetch.to_le_bytes());
                out.extend_from_slice(&seq.to_le_bytes());
            }
            UrlState::Completed(body) => {
                out.push(TAG_COMPLETED);
                body.encode_fields(&mut out);
            }
        }
        out
    }

    /// The `urls` value of a completed URL whose entry key holds its URL
    /// key bytes (`url_key(qid, key_bytes)`, with `key_bytes` made from the
    /// same canonical URL as the text): the URL is left out and rebuilt
    /// from the key when read (`CanonicalUrl::from_key_bytes`, which gives
    /// the canonical text back). `version | 2 | depth varint | created
    /// varint | metadata`: 9 bytes for a URL without metadata and a
    /// creation time in seconds (5 of them), against 50-60 more with its text. Every completion writes one, so this is what fjall
    /// flushes and compacts in a crawl's steady state.
    pub fn completed_value(depth: u32, created: u64, metadata: &Metadata) -> Vec<u8> {
        let mut out = vec![BODY_VERSION, TAG_COMPLETED_KEYED];
        put_varint(&mut out, u64::from(depth));
        put_varint(&mut out, created);
        put_metadata(&mut out, metadata);
        out
    }

    /// Decodes a `urls` value; `url_key` is the URL key part of its entry
    /// key (after the queue id, see [`url_key_part`]), from which a value of
    /// [`UrlState::completed_value`] gets its URL.
    pub fn decode(bytes: &[u8], url_key: &[u8]) -> Result<UrlState> {
        let (mut state, keyed) = parse_state(bytes)?;
        if let (UrlState::Completed(body), true) = (&mut state, keyed) {
            let url = mgz_url::CanonicalUrl::from_key_bytes(url_key)
                .map_err(|e| FrontierError::corrupt("urls key", e.to_string()))?;
            body.url = url.as_str().to_string();
        }
        Ok(state)
    }

    /// What a `urls` value says without its URL (no key needed, no URL
    /// parsed): the state, every field checked as [`UrlState::decode`]
    /// does.
    pub fn head(bytes: &[u8]) -> Result<StateHead> {
        Ok(match parse_state(bytes)?.0 {
            UrlState::Pending { next_fetch, seq } => StateHead::Pending { next_fetch, seq },
            UrlState::Completed(body) => StateHead::Completed {
                created: body.created,
            },
        })
    }
}

/// A `urls` value's state without the URL of a completed one (see
/// [`UrlState::head`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateHead {
    /// Pending at this schedule position.
    Pending {
        /// Next fetch, seconds.
        next_fetch: u64,
        /// Discovery sequence number.
        seq: u64,
    },
    /// Completed.
    Completed {
        /// Creation time, seconds.
        created: u64,
    },
}

/// Parses a `urls` value; `true` when it is completed and its URL is to
/// be rebuilt from the entry's key (the body's `url` is then empty).
fn parse_state(bytes: &[u8]) -> Result<(UrlState, bool)> {
    let mut r = Reader::new(bytes, "urls value");
    let version = r.body_version()?;
    let parsed = match r.u8()? {
        TAG_PENDING => (
            UrlState::Pending {
                next_fetch: r.u64()?,
                seq: r.u64()?,
            },
            false,
        ),
        TAG_COMPLETED => (
            UrlState::Completed(Body::decode_fields(&mut r, version, None)?),
            false,
        ),
        TAG_COMPLETED_KEYED if version == BODY_VERSION => {
            let depth = u32::try_from(r.varint()?)
                .map_err(|_| FrontierError::corrupt(r.what, "depth over 32 bits"))?;
            let created = r.varint()?;
            let metadata = read_metadata(&mut r, true)?;
            let body = Body {
                url: String::new(),
                depth,
                created,
                metadata,
            };
            (UrlState::Completed(body), true)
        }
        tag => return Err(FrontierError::corrupt("urls value", format!("tag {tag}"))),
    };
    r.finish()?;
    Ok(parsed)
}

#[cfg(test)]
fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

/// Bounds-checked little-endian reader.
pub struct Reader<'a> {
    bytes: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    /// Reads `bytes`; errors name `what`.
    pub fn new(bytes: &'a [u8], what: &'static str) -> Self {
        Reader { bytes, what }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.bytes.len() < n {
            return Err(FrontierError::corrupt(self.what, "truncated"));
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }

    /// Checks the leading version byte.
    pub fn version(&mut self) -> Result<()> {
        let v = self.u8()?;
        if v != VALUE_VERSION {
            return Err(FrontierError::FormatVersion {
                what: self.what.into(),
                found: v.into(),
                expected: VALUE_VERSION.into(),
            });
        }
        Ok(())
    }

    /// The leading version byte of a value holding a body: 1 or
    /// [`BODY_VERSION`].
    fn body_version(&mut self) -> Result<u8> {
        match self.u8()? {
            v @ (1 | BODY_VERSION) => Ok(v),
            v => Err(FrontierError::FormatVersion {
                what: self.what.into(),
                found: v.into(),
                expected: BODY_VERSION.into(),
            }),
        }
    }

    /// A LEB128 varint of at most 64 bits.
    pub fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.u8()?;
            let bits = u64::from(b & 0x7f);
            if i == 9 && bits > 1 {
                return Err(FrontierError::corrupt(self.what, "varint over 64 bits"));
            }
            v |= bits << (7 * i);
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(FrontierError::corrupt(self.what, "varint over 10 bytes"))
    }

    /// A count or length: a varint in version-2 values, else a u32.
    fn count(&mut self, v2: bool) -> Result<u64> {
        match v2 {
            true => self.varint(),
            false => self.u32().map(u64::from),
        }
    }

    /// A length-prefixed UTF-8 string, borrowed (length as [`Reader::count`]).
    fn text(&mut self, v2: bool) -> Result<&'a str> {
        let n = usize::try_from(self.count(v2)?)
            .map_err(|_| FrontierError::corrupt(self.what, "length over usize"))?;
        let b = self.take(n)?;
        std::str::from_utf8(b).map_err(|_| FrontierError::corrupt(self.what, "bad UTF-8"))
    }

    /// One byte.
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    /// A u32: big-endian in keys is handled by callers; values are little-endian.
    pub fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(if self.what.ends_with("key") {
            u32::from_be_bytes(b.try_into().unwrap_or_default())
        } else {
            u32::from_le_bytes(b.try_into().unwrap_or_default())
        })
    }

    /// A u64, same byte-order rule as [`Reader::u32`].
    pub fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        Ok(if self.what.ends_with("key") {
            u64::from_be_bytes(b.try_into().unwrap_or_default())
        } else {
            u64::from_le_bytes(b.try_into().unwrap_or_default())
        })
    }

    /// A length-prefixed UTF-8 string.
    pub fn string(&mut self) -> Result<String> {
        let n = self.u32()? as usize;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| FrontierError::corrupt(self.what, "bad UTF-8"))
    }

    /// Whether every byte was consumed.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Errors unless every byte was consumed.
    pub fn finish(&self) -> Result<()> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(FrontierError::corrupt(self.what, "trailing bytes"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body() -> Body {
        let mut metadata = Metadata::new();
        metadata.insert("a".into(), vec!["1".into(), "2".into()]);
        Body {
            url: "http://x/".into(),
            depth: 3,
            created: 99,
            metadata,
        }
    }

    #[test]
    fn round_trips() {
        let mut v = Vec::new();
        let b = body();
        Body::encode_parts((&b.url, "x"), b.depth, b.created, &b.metadata, &mut v);
        assert_eq!(Body::decode(&v, "x").unwrap(), body());
        let s = UrlState::Completed(body());
        assert_eq!(UrlState::decode(&s.encode(), b"x/").unwrap(), s);
        let p = UrlState::Pending {
            next_fetch: 5,
            seq: 7,
        };
        assert_eq!(UrlState::decode(&p.encode(), b"x/").unwrap(), p);
        assert_eq!(parse_sched_key(&sched_key(1, 2, 3)).unwrap(), (1, 2, 3));
    }

    /// Version 1 fields, as binaries before format 6 wrote them.
    fn encode_v1(b: &Body, out: &mut Vec<u8>) {
        out.extend_from_slice(&b.depth.to_le_bytes());
        out.extend_from_slice(&b.created.to_le_bytes());
        put_bytes(out, b.url.as_bytes());
        out.extend_from_slice(&(b.metadata.len() as u32).to_le_bytes());
        for (name, values) in &b.metadata {
            put_bytes(out, name.as_bytes());
            out.extend_from_slice(&(values.len() as u32).to_le_bytes());
            for v in values {
                put_bytes(out, v.as_bytes());
            }
        }
    }

    #[test]
    fn version_1_values_still_decode() {
        let b = body();
        let mut v = vec![1];
        encode_v1(&b, &mut v);
        // A version-1 body holds its whole URL: the queue key is not used.
        assert_eq!(Body::decode(&v, "other.example").unwrap(), b);
        let mut s = vec![1, 1];
        encode_v1(&b, &mut s);
        assert_eq!(UrlState::decode(&s, b"y/").unwrap(), UrlState::Completed(b));
        let mut p = vec![1, 0];
        p.extend_from_slice(&5u64.to_le_bytes());
        p.extend_from_slice(&7u64.to_le_bytes());
        let want = UrlState::Pending {
            next_fetch: 5,
            seq: 7,
        };
        assert_eq!(UrlState::decode(&p, b"y/").unwrap(), want);
    }

    #[test]
    fn version_2_bodies_are_shorter_and_keep_every_field() {
        let mut metadata = Metadata::new();
        metadata.insert("k".into(), vec![String::new(), "é".repeat(200)]);
        let urls = [
            "https://www.site1234.com/news/blog/page-1234567.html",
            "http://x/",
            "http://x",
            "https://x.y/",
            "http://x.yz/a",
            "ftp://x/",
            "",
            "https:/",
            "http://",
        ];
        // Queue keys: the host (left out when the URL continues with `/`),
        // a prefix of it, a longer one, another, and the empty key.
        let keys = [
            "x",
            "x.y",
            "www.site1234.com",
            "www.site1234.co",
            "other",
            "",
        ];
        for url in urls {
            for key in keys {
                for (depth, created) in [(0, 0), (3, 1_764_000_000), (u32::MAX, u64::MAX)] {
                    for md in [Metadata::new(), metadata.clone()] {
                        let b = Body {
                            url: url.into(),
                            depth,
                            created,
                            metadata: md,
                        };
                        let mut v = Vec::new();
                        Body::encode_parts((&b.url, key), b.depth, b.created, &b.metadata, &mut v);
                        assert_eq!(v[0], BODY_VERSION);
                        assert_eq!(Body::decode(&v, key).unwrap(), b, "{url} in {key}");
                        let left_out = v[1] & HOST_LEFT_OUT != 0;
                        let host_is_key = ["http://", "https://"].iter().any(|s| {
                            url.strip_prefix(s)
                                .and_then(|r| r.strip_prefix(key))
                                .is_some_and(|r| r.starts_with('/'))
                        });
                        assert_eq!(left_out, host_is_key && !key.is_empty(), "{url} in {key}");
                        let mut v1 = vec![1];
                        encode_v1(&b, &mut v1);
                        assert!(v.len() < v1.len(), "{url}: {} vs {}", v.len(), v1.len());
                        let s = UrlState::Completed(b.clone());
                        assert_eq!(UrlState::decode(&s.encode(), b"y/").unwrap(), s);
                    }
                }
            }
        }
        // The benchmark's URLs: 35 bytes saved in their queue (the host's),
        // 19 in another.
        let url = "https://www.site1234.com/news/blog/page-1234567.html";
        let mut v1 = vec![1];
        let b = Body {
            url: url.into(),
            depth: 1,
            created: 1_764_000_000,
            metadata: Metadata::new(),
        };
        encode_v1(&b, &mut v1);
        let mut v = Vec::new();
        Body::encode_parts(
            (url, "www.site1234.com"),
            1,
            1_764_000_000,
            &Metadata::new(),
            &mut v,
        );
        assert_eq!((v1.len(), v.len()), (73, 38));
        v.clear();
        Body::encode_parts(
            (url, "site1234.com"),
            1,
            1_764_000_000,
            &Metadata::new(),
            &mut v,
        );
        assert_eq!(v.len(), 54);
    }

    #[test]
    fn malformed_version_2_values_are_errors() {
        let mut v = Vec::new();
        let b = body();
        Body::encode_parts((&b.url, "x"), b.depth, b.created, &b.metadata, &mut v);
        assert_eq!(v[1], 1 | HOST_LEFT_OUT);
        for cut in 0..v.len() {
            assert!(Body::decode(&v[..cut], "x").is_err(), "cut at {cut}");
        }
        let mut extra = v.clone();
        extra.push(0);
        assert!(Body::decode(&extra, "x").is_err());
        // Scheme codes past the table, unknown flag bits, a host left out
        // without a scheme, and a completed body that leaves its host out.
        for code in [3, 7, 8, 0x80, HOST_LEFT_OUT] {
            let mut bad = v.clone();
            bad[1] = code;
            assert!(Body::decode(&bad, "x").is_err(), "code {code}");
        }
        let mut done = vec![BODY_VERSION, 1];
        done.extend_from_slice(&v[1..]);
        assert!(UrlState::decode(&done, b"x/").is_err());
        // A varint of 11 bytes, and one with bits past 64.
        let long = [
            2, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ];
        assert!(Body::decode(&long, "x").is_err());
        let wide = [
            2, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
        ];
        assert!(Body::decode(&wide, "x").is_err());
        // Depth over 32 bits.
        let deep = [2, 0, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0, 0];
        assert!(matches!(
            Body::decode(&deep, "x"),
            Err(FrontierError::Corrupt { .. })
        ));
        // A URL length past the end, bad UTF-8, a huge metadata count.
        assert!(Body::decode(&[2, 0, 0, 0, 0x7f, b'a'], "x").is_err());
        assert!(Body::decode(&[2, 0, 0, 0, 1, 0xff, 0], "x").is_err());
        assert!(Body::decode(&[2, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f], "x").is_err());
        // The largest 64-bit varint is fine.
        let max = [
            2, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0,
        ];
        assert_eq!(Body::decode(&max, "x").unwrap().created, u64::MAX);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let mut v = Vec::new();
        let b = body();
        Body::encode_parts((&b.url, "x"), b.depth, b.created, &b.metadata, &mut v);
        for cut in 0..v.len() {
            assert!(Body::decode(&v[..cut], "x").is_err());
        }
        let mut bad = v.clone();
        bad[0] = 9;
        assert!(matches!(
            Body::decode(&bad, "x"),
            Err(FrontierError::FormatVersion { .. })
        ));
        assert!(UrlState::decode(&[1, 7], b"x/").is_err());
        assert!(parse_sched_key(&[0; 3]).is_err());
    }

    /// Completed values written now leave the URL to the entry's key: the
    /// text comes back as the canonical URL the key was made from, every
    /// other field as written, and the value is a few bytes.
    #[test]
    fn completed_values_take_their_url_from_the_key() {
        use mgz_url::{CanonicalUrl, Policy};
        let mut metadata = Metadata::new();
        metadata.insert("k".into(), vec![String::new(), "é".repeat(3)]);
        let urls = [
            "http://x.com/",
            "https://www.site1234.com/news/blog/page-1234567.html",
            "https://a.b.example:8443/p/q?x=1&y=%20z",
            "http://[::1]:8080/v6",
            "http://127.0.0.1/ip",
            "http://xn--bcher-kva.example/%C3%A9",
        ];
        for text in urls {
            let url = CanonicalUrl::parse(text, None, &Policy::safe()).unwrap();
            let key = url.key_bytes();
            for (depth, created) in [(0, 0), (3, 1_764_000_000), (u32::MAX, u64::MAX)] {
                for md in [Metadata::new(), metadata.clone()] {
                    let v = UrlState::completed_value(depth, created, &md);
                    // Version, tag, the two integers and the metadata: no URL.
                    let mut fields = Vec::new();
                    put_varint(&mut fields, u64::from(depth));
                    put_varint(&mut fields, created);
                    put_metadata(&mut fields, &md);
                    assert_eq!(v.len(), 2 + fields.len(), "{text}");
                    let want = Body {
                        url: url.as_str().to_string(),
                        depth,
                        created,
                        metadata: md.clone(),
                    };
                    let got = UrlState::decode(&v, &key).unwrap();
                    assert_eq!(got, UrlState::Completed(want), "{text}");
                    assert_eq!(
                        UrlState::head(&v).unwrap(),
                        StateHead::Completed { created }
                    );
                }
            }
        }
        let v = UrlState::completed_value(1, 2, &metadata);
        // A key that does not rebuild a URL, a cut or extended value, and
        // the tag under version 1 are errors.
        for bad_key in [&b""[..], b"\xff\xfe", b"no-slash"] {
            assert!(matches!(
                UrlState::decode(&v, bad_key),
                Err(FrontierError::Corrupt { .. })
            ));
        }
        let key = b"com.x/";
        for cut in 0..v.len() {
            assert!(UrlState::decode(&v[..cut], key).is_err(), "cut at {cut}");
            assert!(UrlState::head(&v[..cut]).is_err(), "cut at {cut}");
        }
        let mut extra = v.clone();
        extra.push(0);
        assert!(UrlState::decode(&extra, key).is_err());
        let mut v1 = v.clone();
        v1[0] = 1;
        assert!(UrlState::decode(&v1, key).is_err());
        // Older values keep working through `head` too.
        let old = UrlState::Completed(body()).encode();
        assert_eq!(
            UrlState::head(&old).unwrap(),
            StateHead::Completed { created: 99 }
        );
        let p = UrlState::Pending {
            next_fetch: 5,
            seq: 7,
        };
        let want = StateHead::Pending {
            next_fetch: 5,
            seq: 7,
        };
        assert_eq!(UrlState::head(&p.encode()).unwrap(), want);
        assert!(url_key_part(&[0, 0, 1]).is_err());
        assert_eq!(url_key_part(&url_key(7, b"com.x/")).unwrap(), b"com.x/");
    }
}
