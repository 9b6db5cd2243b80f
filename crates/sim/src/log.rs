//! The request log: one record per request, in arrival order.
//!
//! A `Mutex<VecDeque>` capped at `log_capacity` records (about 100 bytes
//! each); the oldest are dropped beyond it and counted. Records are pushed
//! when the answer is decided, stamped with the arrival time, so the order
//! of two concurrent requests may differ from their time order by the
//! routing time (microseconds); sort by `time_us` when it matters.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Instant;

/// One request as the server saw it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RequestRecord {
    /// Microseconds since the server started, at arrival.
    pub time_us: u64,
    /// The `Host` header, lowercased, port removed (empty when missing).
    pub host: String,
    /// The request method.
    pub method: String,
    /// Path and query as sent.
    pub path: String,
    /// The status answered; 0 when the connection was closed without an answer.
    pub status: u16,
}

/// A bounded, shared request log.
#[derive(Debug)]
pub(crate) struct RequestLog {
    start: Instant,
    capacity: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    records: VecDeque<RequestRecord>,
    dropped: u64,
}

impl RequestLog {
    pub(crate) fn new(capacity: usize) -> Self {
        RequestLog {
            start: Instant::now(),
            capacity,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Microseconds since start.
    pub(crate) fn now_us(&self) -> u64 {
        self.start.elapsed().as_micros() as u64
    }

    pub(crate) fn push(&self, record: RequestRecord) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if self.capacity == 0 {
            inner.dropped += 1;
            return;
        }
        if inner.records.len() == self.capacity {
            inner.records.pop_front();
            inner.dropped += 1;
        }
        inner.records.push_back(record);
    }

    /// A copy of the kept records, from the `since`-th kept record on.
    pub(crate) fn snapshot(&self, since: usize) -> Vec<RequestRecord> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.records.iter().skip(since).cloned().collect()
    }

    /// Requests seen in total (kept and dropped).
    pub(crate) fn total(&self) -> u64 {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.records.len() as u64 + inner.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(i: u64) -> RequestRecord {
        RequestRecord {
            time_us: i,
            host: "h".into(),
            method: "GET".into(),
            path: "/".into(),
            status: 200,
        }
    }

    #[test]
    fn keeps_the_newest_records_up_to_capacity() {
        let log = RequestLog::new(3);
        (0..5).for_each(|i| log.push(rec(i)));
        let kept: Vec<u64> = log.snapshot(0).iter().map(|r| r.time_us).collect();
        assert_eq!(kept, [2, 3, 4]);
        assert_eq!(log.snapshot(2).len(), 1);
        assert_eq!(log.total(), 5);
    }
}
