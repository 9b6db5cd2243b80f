//! Reopening: control records (crawls, queues, counters); then `seenidx`
//! restores the seen sets from their snapshot and log, or calls
//! [`rebuild_seen`] here: one sequential scan of the `urls` keys (~0.3 µs per
//! URL plus the seen set's insert on an idle machine) and one of `sched`
//! (plus a URL parse per pending URL, ~1 µs). Leases are not
//! durable: everything in flight at a crash is simply pending again.

use crate::error::{FrontierError, Result};
use crate::frontier::SeenFactory;
use crate::records::{CrawlRec, QueueRec};
use crate::store::Store;
use crate::table::Table;

impl Table {
    /// A table with the crawls, queues and counters of `store`.
    pub fn load(store: &Store, seen: &SeenFactory) -> Result<Table> {
        let mut table = Table {
            active: true,
            ..Table::default()
        };
        load(store, &mut table, seen)?;
        Ok(table)
    }
}

/// Loads crawls, queues and counters from `store` into `table`.
pub fn load(store: &Store, table: &mut Table, seen: &SeenFactory) -> Result<()> {
    table.seg_bits = store.seg_bits;
    for kv in store.meta.prefix(b"c") {
        let (k, v) = kv.into_inner()?;
        let id = crawl_id_of(&k)?;
        table.add_crawl(id, CrawlRec::decode(&v)?, seen);
    }
    table.next_seq = crate::store::stored_next_seq(&store.meta)?;
    if let Some(v) = store.meta.get(b"active")? {
        table.active = v.first().copied().unwrap_or(1) != 0;
    }
    for kv in store.queues.iter() {
        let (k, v) = kv.into_inner()?;
        let qid = qid_of(&k, "queue key")?;
        let rec = QueueRec::decode(&v)?;
        if !table.crawls.contains_key(&rec.crawl) {
            return Err(FrontierError::corrupt(
                "queue record",
                format!("queue {qid} names unknown crawl {}", rec.crawl),
            ));
        }
        table.insert_queue(qid, rec);
        if let Some(q) = table.queues.get_mut(&qid) {
            q.stored = true;
            // Its `disc` entries may be in any segment so far.
            q.disc_from = crate::disc::DISC;
            q.disc_hi = q.disc_hi.max(store.disc_top());
        }
    }
    crate::counters::load(store, table)?;
    Ok(())
}

/// Inserts every stored URL key into its crawl's seen set: the `urls` keys,
/// then the keys of the pending URLs in `sched` and `disc` (unindexed ones have no
/// `urls` entry, see `pending`), re-derived from their canonical text with
/// `policy` (canonicalisation is idempotent, so the key is the stored one).
pub fn rebuild_seen(store: &Store, table: &mut Table, policy: &mgz_url::Policy) -> Result<()> {
    let mut crawl_of = QueueCrawl::default();
    for kv in store.urls.iter() {
        let k = kv.key()?;
        let crawl = crawl_of.get(table, qid_of(&k, "urls key")?)?;
        if let Some(c) = table.crawls.get_mut(&crawl) {
            c.seen.lock().insert(&k[4..]);
        }
    }
    let sched = store
        .sched
        .iter()
        .map(|kv| -> Result<(u32, fjall::UserValue)> {
            let (k, v) = kv.into_inner()?;
            Ok((qid_of(&k, "sched key")?, v))
        });
    let disc = store
        .disc_iter()
        .map(|kv| -> Result<(u32, fjall::UserValue)> {
            let (k, v) = kv.into_inner()?;
            Ok((crate::disc::parse_disc_key(&k)?.0, v))
        });
    for entry in sched.chain(disc) {
        let (qid, v) = entry?;
        let crawl = crawl_of.get(table, qid)?;
        // Pending bodies may leave out the host: it is their queue's key.
        let key = table.queues.get(&qid).map_or("", |q| &*q.rec.key);
        let url = crate::codec::Body::decode(&v, key)?.url;
        let key = match mgz_url::PlainUrl::check(&url, policy) {
            Some(p) => p.key_bytes(),
            None => mgz_url::CanonicalUrl::parse(&url, None, policy)
                .map_err(|e| FrontierError::corrupt("sched value", format!("stored URL: {e}")))?
                .key_bytes(),
        };
        if let Some(c) = table.crawls.get_mut(&crawl) {
            c.seen.lock().insert(&key);
        }
    }
    Ok(())
}

/// The crawl of the last queue looked up (keys come grouped by queue).
#[derive(Default)]
struct QueueCrawl(Option<(u32, u32)>);

impl QueueCrawl {
    fn get(&mut self, table: &Table, qid: u32) -> Result<u32> {
        if let Some((q, c)) = self.0
            && q == qid
        {
            return Ok(c);
        }
        let c =
            table.queues.get(&qid).map(|q| q.rec.crawl).ok_or_else(|| {
                FrontierError::corrupt("store key", format!("unknown queue {qid}"))
            })?;
        self.0 = Some((qid, c));
        Ok(c)
    }
}

fn crawl_id_of(k: &[u8]) -> Result<u32> {
    match k {
        [b'c', a, b, c, d] => Ok(u32::from_be_bytes([*a, *b, *c, *d])),
        _ => Err(FrontierError::corrupt("meta key", "bad crawl key")),
    }
}

pub(crate) fn qid_of(k: &[u8], what: &str) -> Result<u32> {
    k.get(..4)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_be_bytes)
        .ok_or_else(|| FrontierError::corrupt(what, "shorter than 4 bytes"))
}
