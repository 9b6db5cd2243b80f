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
    /// Own politeness delay, or none (the crawl default). In RAM in 4
    /// bytes (~49.7 days; longer ones are clamped), on disk as a u64.
    pub delay_ms: OwnDelay,
    /// Not served before this time (seconds); 0 = not blocked. In RAM as a
    /// u32 (until 2106: a later time is clamped, which still blocks for
    /// good), on disk as a u64.
    pub block_until_s: u32,
    /// Maximum URLs completed + in flight; 0 = unlimited.
    pub limit: u32,
    /// URLs completed.
    pub completed: u64,
    /// URLs not completed.
    pub pending: u64,
}

/// A queue's own politeness delay in milliseconds, in 4 bytes: `u32::MAX`
/// means none (the crawl's default applies), so a delay is clamped just
/// below it (~49.7 days). An `Option<u32>` took 8 bytes, which with
/// `block_until_s` in a u32 kept [`QueueRec`] at 56 bytes instead of 48.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnDelay(u32);

impl Default for OwnDelay {
    fn default() -> Self {
        OwnDelay::NONE
    }
}

impl OwnDelay {
    /// No own delay.
    pub const NONE: OwnDelay = OwnDelay(u32::MAX);
    /// The longest delay held.
    pub const MAX_MS: u32 = u32::MAX - 1;

    /// A delay of `ms` milliseconds, clamped to [`OwnDelay::MAX_MS`].
    pub fn ms(ms: u64) -> OwnDelay {
        OwnDelay(u32::try_from(ms).map_or(Self::MAX_MS, |m| m.min(Self::MAX_MS)))
    }

    /// The delay, if the queue has its own.
    pub fn get(self) -> Option<u32> {
        (self != OwnDelay::NONE).then_some(self.0)
    }
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
        out.push(u8::from(self.delay_ms.get().is_some()));
        out.extend_from_slice(&u64::from(self.delay_ms.get().unwrap_or(0)).to_le_bytes());
        out.extend_from_slice(&u64::from(self.block_until_s).to_le_bytes());
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
            delay_ms: if has_delay {
                OwnDelay::ms(delay)
            } else {
                OwnDelay::NONE
            },
            block_until_s: crate::table::secs32(r.u64()?),
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
            delay_ms: OwnDelay::ms(5),
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
    /// u32): a longer one than a u32 of milliseconds holds is read clamped;
    /// so is a block past 2106.
    #[test]
    fn a_stored_delay_past_49_days_and_a_block_past_2106_are_clamped() {
        let q = QueueRec {
            key: "example.com".into(),
            delay_ms: OwnDelay::ms(u64::MAX),
            block_until_s: u32::MAX,
            ..QueueRec::default()
        };
        assert_eq!(q.delay_ms.get(), Some(u32::MAX - 1));
        let mut enc = q.encode();
        // version u8, crawl u32, has-delay u8, then the delay u64, then the block u64.
        let at = 1 + 4 + 1;
        assert_eq!(enc[at..at + 8], u64::from(u32::MAX - 1).to_le_bytes());
        enc[at..at + 8].copy_from_slice(&(u64::from(u32::MAX) * 10).to_le_bytes());
        enc[at + 8..at + 16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(QueueRec::decode(&enc).unwrap(), q);
        // No own delay, and a zero delay, stay what they were.
        for d in [OwnDelay::NONE, OwnDelay::ms(0)] {
            let q = QueueRec {
                delay_ms: d,
                ..QueueRec::default()
            };
            assert_eq!(QueueRec::decode(&q.encode()).unwrap().delay_ms, d);
        }
        assert_eq!(OwnDelay::NONE.get(), None);
        assert_eq!(OwnDelay::ms(0).get(), Some(0));
    }

    #[test]
    fn a_queue_record_is_48_bytes() {
        assert_eq!(std::mem::size_of::<QueueRec>(), 48);
    }
}
