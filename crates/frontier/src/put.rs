//! `put_discovered` and `put_known`.
//!
//! Each call: parse and canonicalise every URL (no lock held), then under the
//! table lock decide each item against its crawl's seen set, give each new
//! URL its position and take the counters and seen-log records; after the
//! lock, encode the new URLs' store entries into one fjall
//! batch (pending entries + one counter record + sequence counter); the
//! seen-log frame and the batch commit run in decision order, by this writer
//! or, when its turn has not come, by the writer before it (see `order`);
//! return a [`Commit`] to wait on.
//!
//! The usual batch, all of one crawl whose "seen" answers need no store
//! check, holds the table lock twice with its seen-set insert between:
//!
//! ```text
//! writer A:  prepare ─ [table: crawl ids] ─ {seen: batch insert} ─ [table: queue ids of new URLs, positions, counters, ticket] ─ commit turn
//! writer B:             prepare ─ [table: crawl ids] ─ {seen: ...}  (while A holds the table)
//! ```
//! The set's lock is taken after the table lock, never the other way
//! round. Between the two holds the crawl may be deleted: the second hold
//! checks that the crawl still has the same set (`SharedSeen::same`) and
//! otherwise decides the batch afresh. A seen snapshot waits until no call
//! is between its holds (`Table::seen_staged`; calls meanwhile decide in
//! one hold, `Table::staging_paused`), so the keys it saves are
//! all of decided, committed batches. A batch that creates its crawl is
//! decided in one hold (the crawl's record is committed first).
//! Per new URL the store gets one entry, in `dlog` (20 B key + body, in
//! discovery order; moved into its `disc` segment in bulk later: see `dlog`,
//! `disc`), when the crawl's seen set is trusted and clean; otherwise
//! also a `urls` pointer (~key + 18 B) so "seen" answers can be checked (see
//! `pending`). `put_known` with a schedule writes `sched` instead.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use mgz_url::{CanonicalUrl, PlainUrl};

use crate::codec::{Body, UrlState, url_key};
use crate::commit::{Commit, Handoff};
use crate::dlog::DlogBuf;
use crate::error::{FrontierError, Result};
use crate::frontier::Frontier;
use crate::table::{LeaseKey, Table};
use crate::types::{
    KnownItem, MAX_KEY_LEN, Metadata, PutOutcome, RejectReason, UrlItem, crawl_name,
};

/// An item that passed validation (borrowing its crawl name from the item).
///
/// Borrowed from the item where it can be (a URL that is seen costs no
/// copy of its text, queue key or metadata); stored values are encoded
/// from these parts.
pub(crate) struct Prepared<'a> {
    crawl: &'a str,
    pub(crate) key: Cow<'a, str>,
    /// `keyindex::text_hash` of `key`, computed before the lock.
    key_hash: u64,
    pub(crate) ukey: Vec<u8>,
    /// Canonical URL text.
    pub(crate) url: Cow<'a, str>,
    depth: u32,
    created: u64,
    metadata: &'a Metadata,
}

/// What a test runs between a batch's two holds of the table lock.
#[cfg(test)]
pub(crate) type Hook = Box<dyn FnMut(&Frontier) + Send>;

/// Store-batch slots beyond one per URL: a counter record, the sequence
/// counter, new queue records of the first URLs (more just grow the batch).
const BATCH_SPARE: usize = 8;

/// A decided batch waiting for its commit turn (see `order`): the store
/// batch and its seen-log records, and where its outcome goes.
pub(crate) struct CommitJob {
    work: Option<(fjall::OwnedWriteBatch, Vec<u8>, DlogBuf)>,
    handoff: Arc<Handoff>,
}

impl Drop for CommitJob {
    /// A job dropped unrun (the commit before it panicked) reports it.
    fn drop(&mut self) {
        if self.work.is_some() {
            self.handoff.fill(Err(FrontierError::Poisoned(
                "an earlier commit failed; this batch was not written".into(),
            )));
        }
    }
}

impl Frontier {
    /// Inserts each URL that its crawl has not seen; waits until durable.
    /// `out[i]` is the outcome of `items[i]`.
    pub fn put_discovered(&self, items: &[UrlItem]) -> Result<Vec<PutOutcome>> {
        let (out, commit) = self.put_discovered_nowait(items)?;
        commit.wait()?;
        Ok(out)
    }

    /// Like [`Frontier::put_discovered`] but returns before durability: the
    /// outcomes may be acknowledged only after `Commit::wait` returns `Ok`.
    pub fn put_discovered_nowait(&self, items: &[UrlItem]) -> Result<(Vec<PutOutcome>, Commit)> {
        let done = self.discover(items)?;
        self.maybe_snapshot()?;
        Ok(done)
    }

    fn discover(&self, items: &[UrlItem]) -> Result<(Vec<PutOutcome>, Commit)> {
        let now_s = (self.now_ms() / 1000).max(1);
        // Rejected items get their outcome now; the rest keep their index.
        let mut out = vec![PutOutcome::Seen; items.len()];
        // (item index, item, crawl id, queue id); the ids are filled in
        // under the lock. One vector for the whole call, sized once: under
        // `mgz serve` a call takes up to 16,384 URLs, and every vector of
        // that size that is freed and made again faults fresh pages in.
        let mut prepared = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match self.prepare(item, now_s) {
                Ok(p) => prepared.push((i, p, 0, 0)),
                Err(reason) => out[i] = PutOutcome::Rejected(reason),
            }
        }
        // One entry per new URL, plus counter and queue records. (The same
        // batch as `db.batch()`: the database journals with a manual
        // persist, so neither sets a durability; the committer syncs.)
        let mut batch = fjall::OwnedWriteBatch::with_capacity(
            self.store.db.clone(),
            prepared.len() + BATCH_SPARE,
        );
        let mut t = self.lock_undrained();
        for (_, p, cid, _) in &mut prepared {
            *cid = t.crawl_id(p.crawl, &self.store, &mut batch, &self.opts.seen);
        }
        // The usual batch (one crawl whose "seen" answers need no check, see
        // `one_trusted_crawl`) is answered by one insert into its seen set,
        // made with the table lock free: the set is the biggest part of the
        // put's work, and another writer's decisions go on meanwhile. Not
        // when this batch made the crawl: its record must be committed
        // before any batch that names the crawl, so the whole batch is
        // decided in one hold, as other batches are.
        let mut staged = None;
        if let Some(cid) = self.one_trusted_crawl(&t, &prepared)
            && batch.is_empty()
            && !t.staging_paused
            && let Some(seen) = t.crawls.get(&cid).map(|c| c.seen.clone())
        {
            t.seen_staged += 1;
            drop(t);
            #[cfg(test)]
            if let Some(hook) = (self.between_holds.lock().unwrap()).as_mut() {
                hook(self);
            }
            let keys: Vec<&[u8]> = prepared.iter().map(|(_, p, ..)| &p.ukey[..]).collect();
            let mut fresh = Vec::with_capacity(keys.len());
            seen.lock().insert_batch(&keys, &mut fresh);
            drop(keys);
            t = self.lock_undrained();
            t.seen_staged -= 1;
            // The crawl was deleted meanwhile (its set went with it): the
            // answers are void and the batch is decided afresh below.
            if t.crawls.get(&cid).is_some_and(|c| c.seen.same(&seen)) {
                staged = Some((cid, fresh));
            } else {
                for (_, p, cid, _) in &mut prepared {
                    *cid = t.crawl_id(p.crawl, &self.store, &mut batch, &self.opts.seen);
                }
            }
        }
        // The keyspaces of the segments this batch's seqs may reach, before
        // anything is decided (a new one is made once per segment).
        let most = u64::try_from(prepared.len()).unwrap_or(u64::MAX);
        if let Err(e) = self.store.ensure_segments(t.next_seq, most) {
            // Keys the set took as new will not be stored: its "seen"
            // answers need checking from now on.
            if let Some((cid, _)) = &staged {
                t.set_dirty(*cid);
            }
            return Err(e);
        }
        let mut touched = HashSet::with_capacity(prepared.len());
        let mut in_batch = HashSet::new();
        // New URLs: (queue, position, indexed, index in `prepared`),
        // written to `batch` after the lock (indexes, not the items: a
        // second vector of whole items was a fifth of the page faults of a
        // 16,384-URL call under `mgz serve`).
        let mut news = Vec::with_capacity(prepared.len());
        // Queue ids (of the new URLs only, when the set has answered), for
        // the whole batch: the index prefetches each item's entry, queue
        // slot and key ahead of reading them, so the cache misses of
        // different items overlap (they were a seventh of the put's CPU,
        // all under the lock); then missing queues are made.
        let wanted: Vec<usize> = match &staged {
            Some((_, fresh)) => (fresh.iter().enumerate())
                .filter_map(|(j, &new)| new.then_some(j))
                .collect(),
            None => (0..prepared.len()).collect(),
        };
        let keys: Vec<_> = (wanted.iter())
            .map(|&j| (prepared[j].2, &*prepared[j].1.key, prepared[j].1.key_hash))
            .collect();
        let found = t.keys.find_many(&t.queues, &keys);
        drop(keys);
        for (&j, found) in wanted.iter().zip(found) {
            let (_, p, cid, qid) = &mut prepared[j];
            *qid = found.unwrap_or_else(|| t.queue_id_hashed(*cid, &p.key, p.key_hash));
        }
        if let Some((cid, _)) = &staged {
            for &j in &wanted {
                let (i, p, _, qid) = &prepared[j];
                let pos = t.next_pos(now_s, true);
                t.log_seen((*cid, *qid), &p.ukey, pos);
                note_pending(&mut t, *qid, pos);
                touched.insert(*qid);
                out[*i] = PutOutcome::New;
                news.push((*qid, pos, false, j));
            }
        } else {
            for (j, (i, p, cid, qid)) in prepared.iter().enumerate() {
                // `out[i]` stays `Seen` unless the URL is new.
                let new = self.is_new(&mut t, (*cid, *qid), p, now_s, &mut in_batch)?;
                let Some(indexed) = new else {
                    continue;
                };
                let pos = t.next_pos(now_s, true);
                note_pending(&mut t, *qid, pos);
                touched.insert(*qid);
                out[*i] = PutOutcome::New;
                news.push((*qid, pos, indexed, j));
            }
        }
        if news.is_empty() && batch.is_empty() {
            return Ok((out, Commit::done()));
        }
        t.write_counters(touched, &self.store, &mut batch);
        let fresh = Vec::with_capacity(t.log_buf.len());
        let records = std::mem::replace(&mut t.log_buf, fresh);
        let ticket = self.order.ticket();
        drop(t);
        // Outside the lock: the store entries of the new URLs (their
        // positions are decided), then, in decision order (see `order`),
        // the seen-log frame and the commit.
        let mut scratch = Vec::new();
        let mut logged = DlogBuf::default();
        let written = news.iter().try_for_each(|&(qid, pos, indexed, j)| {
            let (p, at) = (&prepared[j].1, (qid, indexed));
            let out = (&mut scratch, Some(&mut logged));
            write_pending(&self.store, &mut batch, at, p, pos, out)
        });
        let handoff = Arc::new(Handoff::default());
        // A failed write (a segment without its keyspace, which
        // `ensure_segments` rules out) still takes its turn, committing
        // nothing, so the batches after it are not held up.
        let work = match written {
            Ok(()) => Some((batch, records, logged)),
            Err(e) => {
                handoff.fill(Err(e));
                None
            }
        };
        let job = CommitJob {
            work,
            handoff: handoff.clone(),
        };
        self.order.submit(ticket, job, |job| self.run_commit(job));
        // Run by this call (the usual case with one writer): the outcome is
        // known now, and a failure is returned at once as before.
        let commit = match handoff.try_outcome() {
            Some(outcome) => outcome?,
            None => Commit::handed_off(handoff),
        };
        Ok((out, commit))
    }

    /// Writes a batch's seen-log frame and commits it (in its turn, see
    /// `order`), leaving the outcome in its hand-off.
    fn run_commit(&self, mut job: CommitJob) {
        let Some((batch, records, mut logged)) = job.work.take() else {
            return;
        };
        // The discovery log's entries join the batch here, in the turn,
        // in whichever log is active now (see `dlog`).
        let outcome = self.log_frame_of(&records).and_then(|mark| {
            (self.store).dlog_commit(batch, &mut logged, |b| self.commit_marked(b, mark))
        });
        if let Err(e) = &outcome {
            self.committer.poison(e);
        }
        job.handoff.fill(outcome);
    }

    /// Overwrites schedule and metadata of each URL (inserting unknown ones),
    /// releasing its lease; `next_fetch` 0 marks it completed. Waits until durable.
    pub fn put_known(&self, items: &[KnownItem]) -> Result<Vec<PutOutcome>> {
        let (out, commit) = self.put_known_nowait(items)?;
        commit.wait()?;
        Ok(out)
    }

    /// Like [`Frontier::put_known`] but returns before durability.
    pub fn put_known_nowait(&self, items: &[KnownItem]) -> Result<(Vec<PutOutcome>, Commit)> {
        let done = self.overwrite_all(items)?;
        self.maybe_snapshot()?;
        Ok(done)
    }

    fn overwrite_all(&self, items: &[KnownItem]) -> Result<(Vec<PutOutcome>, Commit)> {
        let now_s = (self.now_ms() / 1000).max(1);
        let mut out = Vec::with_capacity(items.len());
        let mut t = self.lock_store()?;
        let mut batch = self.store.db.batch();
        let mut touched = HashSet::new();
        let mut keys_in_batch = HashSet::new();
        let mut commit = Commit::done();
        for item in items {
            let p = match self.prepare(&item.item, now_s) {
                Ok(p) => p,
                Err(reason) => {
                    out.push(PutOutcome::Rejected(reason));
                    continue;
                }
            };
            let cid = t.crawl_id(p.crawl, &self.store, &mut batch, &self.opts.seen);
            let qid = t.queue_id(cid, &p.key);
            let k = url_key(qid, &p.ukey);
            if !keys_in_batch.insert(k.clone()) {
                // Same URL twice: its second write must see the first one.
                t.write_counters(touched.drain(), &self.store, &mut batch);
                let full = std::mem::replace(&mut batch, self.store.db.batch());
                commit = self.commit(&mut t, full)?;
                keys_in_batch.clear();
                keys_in_batch.insert(k.clone());
            }
            let fresh = t.seen_insert(cid, qid, &p.ukey, None);
            let outcome =
                self.overwrite(&mut t, &mut batch, (qid, fresh), &k, p, item.next_fetch)?;
            touched.insert(qid);
            out.push(outcome);
        }
        if !batch.is_empty() {
            t.write_counters(touched, &self.store, &mut batch);
            commit = self.commit(&mut t, batch)?;
        }
        Ok((out, commit))
    }

    /// Validates and canonicalises one item.
    pub(crate) fn prepare<'a>(
        &self,
        item: &'a UrlItem,
        now_s: u64,
    ) -> Result<Prepared<'a>, RejectReason> {
        if item.crawl.len() > MAX_KEY_LEN {
            return Err(RejectReason::CrawlTooLong {
                len: item.crawl.len(),
            });
        }
        // Text that is already canonical in the plain shape (most links)
        // skips the parser: same text, host and key (`mgz_url::PlainUrl`).
        let (url, host, ukey): (Cow<'_, str>, Cow<'_, str>, _) =
            match PlainUrl::check(&item.url, &self.opts.policy) {
                Some(p) => (p.as_str().into(), p.host().into(), p.key_bytes()),
                None => {
                    let parsed = CanonicalUrl::parse(&item.url, None, &self.opts.policy)
                        .map_err(RejectReason::InvalidUrl)?;
                    let host = parsed.host().to_string().into();
                    (parsed.as_str().to_string().into(), host, parsed.key_bytes())
                }
            };
        let key = match item.key.as_deref() {
            Some(k) if !k.is_empty() => Cow::Borrowed(k),
            _ => host,
        };
        if key.len() > MAX_KEY_LEN {
            return Err(RejectReason::KeyTooLong { len: key.len() });
        }
        let created = if item.created == 0 {
            now_s
        } else {
            item.created
        };
        Ok(Prepared {
            crawl: crawl_name(&item.crawl),
            key_hash: crate::keyindex::text_hash(&key),
            key,
            ukey,
            url,
            depth: item.depth,
            created,
            metadata: &item.metadata,
        })
    }

    /// The crawl of every item of `prepared` if they share one whose seen
    /// set is trusted and clean (no "seen" answer needs a store check; see
    /// [`Frontier::is_new`]), so that one batch insert decides them all.
    fn one_trusted_crawl(
        &self,
        t: &Table,
        prepared: &[(usize, Prepared<'_>, u32, u32)],
    ) -> Option<u32> {
        let cid = prepared.first()?.2;
        if prepared.iter().any(|&(_, _, c, _)| c != cid) {
            return None;
        }
        let c = t.crawls.get(&cid)?;
        (!c.dirty && self.trusted(c.seen.lock().as_ref())).then_some(cid)
    }

    /// Whether "seen" answers of `seen` are taken without a store check.
    fn trusted(&self, seen: &dyn mgz_seen::SeenSet) -> bool {
        match seen.guarantee() {
            mgz_seen::Guarantee::Exact => true,
            mgz_seen::Guarantee::FalsePositive { rate } => rate <= self.opts.trust_seen_fpr,
            _ => false,
        }
    }

    /// Whether `p` (bound for queue `qid`, due at `now_s`) is new in crawl
    /// `cid`, marking it seen: `Some(indexed)` if new, where `indexed` says
    /// whether it needs a `urls` pointer. A "seen" answer is checked against
    /// the store when the set may be wrong: deletions since it was built, or
    /// a backend whose false-positive rate is above
    /// `FrontierOptions::trust_seen_fpr`; URLs of such crawls are indexed.
    fn is_new(
        &self,
        t: &mut Table,
        (cid, qid): (u32, u32),
        p: &Prepared<'_>,
        now_s: u64,
        in_batch: &mut HashSet<(u32, Vec<u8>)>,
    ) -> Result<Option<bool>> {
        let Some(c) = t.crawls.get(&cid) else {
            return Ok(None);
        };
        let check = c.dirty || !self.trusted(c.seen.lock().as_ref());
        // An unindexed URL's log record carries its schedule position, so a
        // replay can check the store for it without a `urls` entry.
        let at = (!check).then_some(t.next_pos(now_s, true));
        if t.seen_insert(cid, qid, &p.ukey, at) {
            if check {
                in_batch.insert((cid, p.ukey.clone()));
            }
            return Ok(Some(check));
        }
        if !check || !in_batch.insert((cid, p.ukey.clone())) {
            return Ok(None);
        }
        // The store must hold every batch decided before this one, in the
        // keyspaces reads look at.
        self.settle()?;
        let stored = self.url_state((qid, &p.key), &p.ukey, &p.url)?.is_some();
        Ok((!stored).then_some(true))
    }

    /// Applies one known item to queue `qid`; `fresh`: the seen set had
    /// never seen it, so the store has nothing to read.
    pub(crate) fn overwrite(
        &self,
        t: &mut Table,
        batch: &mut fjall::OwnedWriteBatch,
        (qid, fresh): (u32, bool),
        k: &[u8],
        p: Prepared<'_>,
        next_fetch: u64,
    ) -> Result<PutOutcome> {
        let Some(q) = t.queues.get_mut(&qid) else {
            return Ok(PutOutcome::Seen);
        };
        let h = crate::get::url_hash(&p.url);
        // A leased URL is pending at its lease key: no store read needed.
        let leased = q.by_url.remove(&h).filter(|lk| q.leases.contains_key(lk));
        let old = match leased {
            Some((next_fetch, seq)) => Some(UrlState::Pending { next_fetch, seq }),
            None if fresh => None,
            None => self.url_state((qid, &p.key), &p.ukey, &p.url)?,
        };
        match &old {
            Some(UrlState::Pending { next_fetch, seq }) => {
                self.store.pending_remove(batch, qid, (*next_fetch, *seq));
                q.leases.remove(&(*next_fetch, *seq));
                q.rec.pending = q.rec.pending.saturating_sub(1);
            }
            Some(UrlState::Completed(_)) => q.rec.completed = q.rec.completed.saturating_sub(1),
            None => {}
        }
        if q.rec.pending == 0 {
            // The queue's domain may have nothing left: the next round's
            // sort moves it to the ring's idle tail (see `ring`).
            t.ring_moved = true;
        }
        if next_fetch == 0 {
            q.rec.completed += 1;
            let value = UrlState::completed_value(p.depth, p.created, p.metadata);
            batch.insert(&self.store.urls, k, value);
        } else {
            let pos = t.next_pos(next_fetch, false);
            insert_pending(t, &self.store, batch, (qid, true), &p, pos)?;
        }
        Ok(if old.is_some() {
            PutOutcome::Updated
        } else {
            PutOutcome::New
        })
    }
}

impl Table {
    /// The position the next pending URL gets: due at `next_fetch`, in
    /// `disc` (`disc`: a discovered URL, while its seq fits `disc` keys)
    /// or `sched`.
    pub(crate) fn next_pos(&self, next_fetch: u64, disc: bool) -> LeaseKey {
        let disc = disc && crate::disc::fits(self.next_seq, self.seg_bits);
        let flag = if disc { crate::disc::DISC } else { 0 };
        (next_fetch, self.next_seq | flag)
    }
}

/// Adds a pending URL to queue `qid` at position `pos` (from
/// [`Table::next_pos`]), with a `urls` pointer if `indexed`.
fn insert_pending(
    t: &mut Table,
    store: &crate::store::Store,
    batch: &mut fjall::OwnedWriteBatch,
    (qid, indexed): (u32, bool),
    p: &Prepared<'_>,
    pos: LeaseKey,
) -> Result<()> {
    note_pending(t, qid, pos);
    write_pending(
        store,
        batch,
        (qid, indexed),
        p,
        pos,
        (&mut Vec::new(), None),
    )
}

/// The table's side of a new pending URL at `pos` of queue `qid`: the
/// sequence counter, the queue's count and scan marks.
fn note_pending(t: &mut Table, qid: u32, pos: LeaseKey) {
    t.next_seq += 1;
    t.grows += 1;
    let seg = match crate::disc::is_disc(pos) {
        true => crate::disc::seg_of(pos.1, t.seg_bits),
        false => 0,
    };
    if let Some(q) = t.queues.get_mut(&qid) {
        q.rec.pending += 1;
        q.added(pos, seg);
    }
}

/// The store's side of a new pending URL: its entry at `pos`, and a `urls`
/// pointer if `indexed`. Needs no table lock. The body is encoded into
/// `scratch` (reused across a batch's URLs) and copied once, into fjall's
/// value. With `logged`, a `disc` entry goes to the discovery log and to
/// `logged` (see `dlog`); without, straight to its segment.
fn write_pending(
    store: &crate::store::Store,
    batch: &mut fjall::OwnedWriteBatch,
    (qid, indexed): (u32, bool),
    p: &Prepared<'_>,
    pos: LeaseKey,
    (scratch, logged): (&mut Vec<u8>, Option<&mut DlogBuf>),
) -> Result<()> {
    scratch.clear();
    let url = (&*p.url, &*p.key);
    Body::encode_parts(url, p.depth, p.created, p.metadata, scratch);
    match logged {
        Some(buf) if crate::disc::is_disc(pos) => {
            store.pending_append((qid, pos), scratch, buf)?;
        }
        _ => store.pending_insert(batch, qid, pos, scratch)?,
    }
    if indexed {
        let (next_fetch, seq) = pos;
        let state = UrlState::Pending { next_fetch, seq };
        batch.insert(&store.urls, url_key(qid, &p.ukey), state.encode());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use super::*;
    use crate::{Durability, FrontierOptions};

    fn open(dir: &std::path::Path) -> Frontier {
        let opts = FrontierOptions {
            durability: Durability::OsBuffer,
            ..FrontierOptions::default()
        };
        Frontier::open(dir, opts).unwrap()
    }

    fn items(paths: &[u32]) -> Vec<UrlItem> {
        let url = |i| format!("http://a.example/{i}");
        paths.iter().map(|&i| UrlItem::new(url(i))).collect()
    }

    /// Runs `hook` once, at the next batch's time between its holds.
    fn once(f: &Frontier, mut hook: impl FnMut(&Frontier) + Send + 'static) {
        let mut armed = true;
        *f.between_holds.lock().unwrap() = Some(Box::new(move |f: &Frontier| {
            if std::mem::take(&mut armed) {
                hook(f);
            }
        }));
    }

    /// The crawl is deleted while a batch is between its holds: the set it
    /// answered from went with the crawl, so the batch is decided again in
    /// the crawl made anew (a URL the old set had is new there) and what it
    /// stores survives a reopen.
    #[test]
    fn a_crawl_deleted_between_the_holds_gets_the_batch_decided_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let f = open(dir.path());
        // Creates the crawl: decided in one hold, the hook is not reached.
        let first = f.put_discovered(&items(&[1, 2])).unwrap();
        assert_eq!(first, vec![PutOutcome::New; 2]);
        let deleted = Arc::new(AtomicBool::new(false));
        let d = deleted.clone();
        once(&f, move |f| {
            assert_eq!(f.delete_crawl("").unwrap(), 2);
            d.store(true, Ordering::SeqCst);
        });
        let out = f.put_discovered(&items(&[2, 3])).unwrap();
        assert!(deleted.load(Ordering::SeqCst), "the batch was staged");
        assert_eq!(out, vec![PutOutcome::New; 2], "2 is new in the new crawl");
        assert_eq!(f.stats("", None).size, 2);
        assert_eq!(
            f.put_discovered(&items(&[3])).unwrap(),
            vec![PutOutcome::Seen]
        );
        f.close().unwrap();
        let f = open(dir.path());
        assert_eq!(f.stats("", None).size, 2);
        let again = f.put_discovered(&items(&[1, 2, 3])).unwrap();
        assert_eq!(
            again,
            vec![PutOutcome::New, PutOutcome::Seen, PutOutcome::Seen]
        );
    }

    /// A seen snapshot asked for while a batch is between its holds waits
    /// for the batch to be decided, so it never saves keys of a batch that
    /// has no place in the commit order yet.
    #[test]
    fn a_seen_snapshot_waits_for_a_batch_between_its_holds() {
        let dir = tempfile::tempdir().unwrap();
        let f = Arc::new(open(dir.path()));
        f.put_discovered(&items(&[1])).unwrap();
        let (go, started) = std::sync::mpsc::channel::<()>();
        let finished = Arc::new(AtomicBool::new(false));
        let snapshotter = {
            let (f, finished) = (f.clone(), finished.clone());
            std::thread::spawn(move || {
                started.recv().unwrap();
                f.snapshot_seen().unwrap();
                finished.store(true, Ordering::SeqCst);
            })
        };
        let early = Arc::new(AtomicBool::new(true));
        let paused = Arc::new(AtomicBool::new(false));
        let (fin, e, p) = (finished.clone(), early.clone(), paused.clone());
        once(&f, move |f| {
            go.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(200));
            e.store(fin.load(Ordering::SeqCst), Ordering::SeqCst);
            // Meanwhile no other batch would start between its holds.
            p.store(f.lock_undrained().staging_paused, Ordering::SeqCst);
        });
        let out = f.put_discovered(&items(&[2, 3])).unwrap();
        assert_eq!(out, vec![PutOutcome::New; 2]);
        snapshotter.join().unwrap();
        assert!(finished.load(Ordering::SeqCst));
        assert!(!early.load(Ordering::SeqCst), "the snapshot did not wait");
        assert!(paused.load(Ordering::SeqCst), "staging went on meanwhile");
        assert!(!f.lock_undrained().staging_paused, "staging resumed");
        // Every decided URL is seen after a reopen.
        drop(f.between_holds.lock().unwrap().take());
        Arc::into_inner(f).unwrap().close().unwrap();
        let f = open(dir.path());
        assert_eq!(
            f.put_discovered(&items(&[1, 2, 3])).unwrap(),
            vec![PutOutcome::Seen; 3]
        );
    }
}
