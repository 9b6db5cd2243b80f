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

/// The fields of a `Body` encoding (after the version byte).
fn encode_fields(url: &str, depth: u32, created: u64, metadata: &Metadata, out: &mut Vec<u8>) {
    out.extend_from_slice(&depth.to_le_bytes());
    out.extend_from_slice(&created.to_le_bytes());
    put_bytes(out, url.as_bytes());
    out.extend_from_slice(&(metadata.len() as u32).to_le_bytes());
    for (name, values) in metadata {
        put_bytes(out, name.as_bytes());
        out.extend_from_slice(&(values.len() as u32).to_le_bytes());
        for v in values {
            put_bytes(out, v.as_bytes());
        }
    }
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
    /// Appends the encoding (with version byte) of a body given by its
    /// parts (so nothing is copied into an owned `Body` first) to `out`.
    pub fn encode_parts(
        url: &str,
        depth: u32,
        created: u64,
        metadata: &Metadata,
        out: &mut Vec<u8>,
    ) {
        out.push(VALUE_VERSION);
        encode_fields(url, depth, created, metadata, out);
    }

    fn encode_fields(&self, out: &mut Vec<u8>) {
        encode_fields(&self.url, self.depth, self.created, &self.metadata, out);
    }

    /// Decodes a value written by [`Body::encode_parts`].
    pub fn decode(bytes: &[u8]) -> Result<Body> {
        let mut r = Reader::new(bytes, "sched value");
        r.version()?;
        let body = Body::decode_fields(&mut r)?;
        r.finish()?;
        Ok(body)
    }

    fn decode_fields(r: &mut Reader<'_>) -> Result<Body> {
        let depth = r.u32()?;
        let created = r.u64()?;
        let url = r.string()?;
        let n = r.u32()?;
        let mut metadata = Metadata::new();
        for _ in 0..n {
            let name = r.string()?;
            let count = r.u32()?;
            let mut values = Vec::new();
            for _ in 0..count {
                values.push(r.string()?);
            }
            metadata.insert(name, values);
        }
        Ok(Body {
            url,
            depth,
            created,
            metadata,
        })
    }
}

impl UrlState {
    /// Encodes with version and tag byte.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![VALUE_VERSION];
        match self {
            UrlState::Pending { next_fetch, seq } => {
                out.push(0);
                out.extend_from_slice(&next_fetch.to_le_bytes());
                out.extend_from_slice(&seq.to_le_bytes());
            }
            UrlState::Completed(body) => {
                out.push(1);
                body.encode_fields(&mut out);
            }
        }
        out
    }

    /// Decodes a value written by [`UrlState::encode`].
    pub fn decode(bytes: &[u8]) -> Result<UrlState> {
        let mut r = Reader::new(bytes, "urls value");
        r.version()?;
        let state = match r.u8()? {
            0 => UrlState::Pending {
                next_fetch: r.u64()?,
                seq: r.u64()?,
            },
            1 => UrlState::Completed(Body::decode_fields(&mut r)?),
            tag => return Err(FrontierError::corrupt("urls value", format!("tag {tag}"))),
        };
        r.finish()?;
        Ok(state)
    }
}

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
        Body::encode_parts(&b.url, b.depth, b.created, &b.metadata, &mut v);
        assert_eq!(Body::decode(&v).unwrap(), body());
        let s = UrlState::Completed(body());
        assert_eq!(UrlState::decode(&s.encode()).unwrap(), s);
        let p = UrlState::Pending {
            next_fetch: 5,
            seq: 7,
        };
        assert_eq!(UrlState::decode(&p.encode()).unwrap(), p);
        assert_eq!(parse_sched_key(&sched_key(1, 2, 3)).unwrap(), (1, 2, 3));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let mut v = Vec::new();
        let b = body();
        Body::encode_parts(&b.url, b.depth, b.created, &b.metadata, &mut v);
        for cut in 0..v.len() {
            assert!(Body::decode(&v[..cut]).is_err());
        }
        let mut bad = v.clone();
        bad[0] = 9;
        assert!(matches!(
            Body::decode(&bad),
            Err(FrontierError::FormatVersion { .. })
        ));
        assert!(UrlState::decode(&[1, 7]).is_err());
        assert!(parse_sched_key(&[0; 3]).is_err());
    }
}
