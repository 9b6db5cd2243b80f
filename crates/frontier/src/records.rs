//! Durable control records: one per crawl (in `meta`) and one per queue (in
//! `queues`). They are rewritten in the same atomic batch as the URL changes
//! they count, so counters never drift from the URLs after a crash.

use crate::codec::{Reader, VALUE_VERSION};
use crate::error::Result;

/// Default politeness delay between two serves of one queue.
pub const DEFAULT_DELAY_MS: u64 = 1_000;

/// A crawl: its id and default queue delay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawlRec {
    /// Crawl name (never empty).
    pub name: String,
    /// Delay applied to queues without their own.
    pub default_delay_ms: u64,
}

/// A queue's durable control state and counters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueueRec {
    /// Owning crawl id.
    pub crawl: u32,
    /// Queue key.
    pub key: Box<str>,
    /// Own politeness delay; `None` = the crawl default. In RAM as a u32
    /// (49 days; longer ones are clamped), on disk as a u64.
    pub delay_ms: Option<u32>,
    /// Not served before this time (seconds); 0 = not blocked.
    pub block_until_s: u64,
    /// Maximum URLs completed + in flight; 0 = unlimited.
    pub limit: u32,
    /// URLs completed.
    pub completed: u64,
    /// URLs not completed.
    pub pending: u64,
}

/// `meta` key of a crawl record.
pub fn crawl_meta_key(id: u32) -> Vec<u8> {
    let mut k = b"c".to_vec();
    k.extend_from_slice(&id.to_be_bytes());
    k
}

impl CrawlRec {
    /// Encodes with the version byte.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![VALUE_VERSION];
        out.extend_from_slice(&self.default_delay_ms.to_le_bytes());
        out.extend_from_slice(&(self.name.len() as u32).to_le_bytes());
        out.extend_from_slice(self.name.as_bytes());
        out
    }

    /// Decodes a value written by [`CrawlRec::encode`].
    pub fn decode(bytes: &[u8]) -> Result<CrawlRec> {
        let mut r = Reader::new(bytes, "crawl record");
        r.version()?;
        let default_delay_ms = r.u64()?;
        let name = r.string()?;
        r.finish()?;
        Ok(CrawlRec {
            name,
            default_delay_ms,
        })
    }
}

impl QueueRec {
    /// Encodes with the version byte.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![VALUE_VERSION];
        out.extend_from_slice(&self.crawl.to_le_bytes());
        out.push(u8::from(self.delay_ms.is_some()));
        out.extend_from_slice(&u64::from(self.delay_ms.unwrap_or(0)).to_le_bytes());
        out.extend_from_slice(&self.block_until_s.to_le_bytes());
        out.extend_from_slice(&self.limit.to_le_bytes());
        out.extend_from_slice(&self.completed.to_le_bytes());
        out.extend_from_slice(&self.pending.to_le_bytes());
        out.extend_from_slice(&(self.key.len() as u32).to_le_bytes());
        out.extend_from_slice(self.key.as_bytes());
        out
    }

    /// Decodes a value written by [`QueueRec::encode`].
    pub fn decode(bytes: &[u8]) -> Result<QueueRec> {
        let mut r = Reader::new(bytes, "queue record");
        r.version()?;
        let crawl = r.u32()?;
        let has_delay = r.u8()? != 0;
        let delay = r.u64()?;
        let rec = QueueRec {
            crawl,
            delay_ms: has_delay.then_some(u32::try_from(delay).unwrap_or(u32::MAX)),
            block_until_s: r.u64()?,
            limit: r.u32()?,
            completed: r.u64()?,
            pending: r.u64()?,
            key: r.string()?.into(),
        };
        r.finish()?;
        Ok(rec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_reject_garbage() {
        let q = QueueRec {
            crawl: 2,
            key: "example.com".into(),
            delay_ms: Some(5),
            block_until_s: 7,
            limit: 3,
            completed: 11,
            pending: 13,
        };
        let enc = q.encode();
        assert_eq!(QueueRec::decode(&enc).unwrap(), q);
        assert!(QueueRec::decode(&enc[..enc.len() - 1]).is_err());
        let c = CrawlRec {
            name: "DEFAULT".into(),
            default_delay_ms: 1000,
        };
        assert_eq!(CrawlRec::decode(&c.encode()).unwrap(), c);
        assert!(CrawlRec::decode(&[]).is_err());
    }

    /// The on-disk delay is a u64 (as before the in-RAM field became a
    /// u32): a longer one than a u32 of milliseconds holds is read clamped.
    #[test]
    fn a_stored_delay_past_49_days_is_clamped() {
        let q = QueueRec {
            key: "example.com".into(),
            delay_ms: Some(u32::MAX),
            ..QueueRec::default()
        };
        let mut enc = q.encode();
        // version u8, crawl u32, has-delay u8, then the delay u64.
        let at = 1 + 4 + 1;
        assert_eq!(enc[at..at + 8], u64::from(u32::MAX).to_le_bytes());
        enc[at..at + 8].copy_from_slice(&(u64::from(u32::MAX) * 10).to_le_bytes());
        assert_eq!(QueueRec::decode(&enc).unwrap(), q);
    }
}
