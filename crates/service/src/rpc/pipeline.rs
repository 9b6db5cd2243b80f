//! Pipelined handling of the two client-streaming puts.
//!
//! A put is acknowledged only once durable, and the store makes writes durable
//! by group commit (one sync every few milliseconds). Each stream runs two
//! stages so that neither decoding nor writing ever waits for a sync:
//!
//! ```text
//!  h2 stream ─decode─▶ write stage ──────────────▶ ack stage ──────────▶ answers
//!                      pending chunk (≤ max_chunk   ≤ `waiting` written   statuses → acks,
//!                      URLs) fills while the one    chunks; one blocking  in input order
//!                      store write runs; the write  hop waits every ready
//!                      returns statuses + a wait    chunk's durable point
//! ```
//!
//! - The write stage keeps at most one store write per stream, so a stream's
//!   items reach the store in the order they were sent (a later known item
//!   overwrites an earlier one, a repeated discovered URL is `SKIPPED` the
//!   second time, as in a one-by-one server). The next chunk is decoded and
//!   gathered meanwhile, and goes out the moment the write returns: the chunk
//!   size follows the store's speed.
//! - The ack stage waits for durability and only then sends the answers (a
//!   failed wait turns the chunk's statuses into `FAIL`).
//! - Memory per stream: one pending chunk of ≤ `max_chunk` URLs, one being
//!   written, ≤ `waiting` chunks of statuses (+ ack IDs) waiting for a sync.
//!
//! A client that goes away mid-stream only stops the stages: chunks already
//! handed to the store finish (their URLs are stored; the client never saw the
//! acks, so it resends them and gets `SKIPPED` for the discovered ones).

use std::sync::Arc;

use futures_util::FutureExt as _;
use futures_util::stream::StreamExt as _;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Status, Streaming};

use crate::backend::Durable;
use crate::metrics::{Metrics, StreamGuard};
use crate::proto::ack_message::Status as AckStatus;

/// How a put stream is cut into store calls.
#[derive(Debug, Clone, Copy)]
pub struct PipelineLimits {
    /// URLs gathered for one store write at most.
    pub max_chunk: usize,
    /// Written chunks waiting for their durable point at most.
    pub waiting: usize,
}

/// How many URLs an input message carries (an empty batch counts as one).
pub trait Weigh {
    /// URLs in the message.
    fn urls(&self) -> usize;
}

/// Turns a chunk's statuses (one per URL) into the stream's answers.
pub trait Shape: Send + 'static {
    /// The answer message.
    type Out: Send + 'static;
    /// The answers, in input order.
    fn answers(self, statuses: Vec<AckStatus>) -> Vec<Self::Out>;
}

/// A chunk written to the store, its answers waiting for the durable point.
pub struct Stored<S> {
    /// How the statuses group into answers.
    pub shape: S,
    /// One status per URL.
    pub statuses: Vec<AckStatus>,
    /// Returns once the statuses may be acknowledged.
    pub durable: Durable,
}

/// Writes one chunk of input messages; store errors are `FAIL` statuses.
pub type ChunkFn<In, S> = dyn Fn(Vec<In>) -> Stored<S> + Send + Sync;

/// What the write stage hands to the ack stage.
enum Staged<S> {
    Stored(Stored<S>),
    /// The input broke (malformed message, reset, a failed write task): answer
    /// everything before it, then fail the stream with this.
    Broken(Status),
}

/// Starts both stages; the returned stream carries the answers.
pub fn spawn<In, S>(
    input: Streaming<In>,
    limits: PipelineLimits,
    handle: Arc<ChunkFn<In, S>>,
    metrics: Arc<Metrics>,
    guard: StreamGuard,
) -> ReceiverStream<Result<S::Out, Status>>
where
    In: Weigh + Send + 'static,
    S: Shape,
{
    let (answers_tx, answers_rx) = mpsc::channel(256);
    let (staged_tx, staged_rx) = mpsc::channel(limits.waiting.max(1));
    tokio::spawn(write_stage(input, limits.max_chunk, handle, staged_tx));
    tokio::spawn(ack_stage(staged_rx, answers_tx, metrics, guard));
    ReceiverStream::new(answers_rx)
}

/// Messages received but not yet handed to the store.
struct Pending<In> {
    messages: Vec<In>,
    urls: usize,
}

impl<In: Weigh> Pending<In> {
    fn push(&mut self, msg: In) {
        self.urls += msg.urls();
        self.messages.push(msg);
    }

    fn take(&mut self) -> Vec<In> {
        self.urls = 0;
        std::mem::take(&mut self.messages)
    }
}

async fn write_stage<In, S>(
    mut input: Streaming<In>,
    max_chunk: usize,
    handle: Arc<ChunkFn<In, S>>,
    staged: mpsc::Sender<Staged<S>>,
) where
    In: Weigh + Send + 'static,
    S: Shape,
{
    let mut pending = Pending {
        messages: Vec::new(),
        urls: 0,
    };
    let mut writing = None;
    let mut input_open = true;
    let mut broken = None;
    loop {
        if writing.is_none() && !pending.messages.is_empty() {
            let (chunk, handle) = (pending.take(), handle.clone());
            tracing::trace!(messages = chunk.len(), "chunk to the store");
            writing = Some(tokio::task::spawn_blocking(move || handle(chunk)));
        }
        let Some(task) = writing.as_mut() else {
            if !input_open {
                break;
            }
            // Nothing in the store: wait for input only.
            let tail = gather(&mut input, &mut pending, max_chunk).await;
            input_open = tail.is_none();
            broken = broken.or(tail.flatten());
            continue;
        };
        tokio::select! {
            biased;
            done = task => {
                writing = None;
                let next = done.map_or_else(
                    |join| Staged::Broken(Status::internal(format!("store task failed: {join}"))),
                    Staged::Stored,
                );
                let failed = matches!(next, Staged::Broken(_));
                if staged.send(next).await.is_err() || failed {
                    return; // the client is gone, or the stream failed
                }
            }
            tail = gather(&mut input, &mut pending, max_chunk), if input_open && pending.urls < max_chunk => {
                input_open = tail.is_none();
                broken = broken.or(tail.flatten());
            }
        }
    }
    if let Some(status) = broken {
        let _ = staged.send(Staged::Broken(status)).await;
    }
}

/// Waits for one message, then takes every one already decoded, up to
/// `max_chunk` URLs pending. `None` = input still open; `Some(None)` = the
/// client half-closed; `Some(Some(status))` = the input broke.
async fn gather<In: Weigh>(
    input: &mut Streaming<In>,
    pending: &mut Pending<In>,
    max_chunk: usize,
) -> Option<Option<Status>> {
    let mut next = input.next().await;
    loop {
        match next {
            Some(Ok(msg)) => pending.push(msg),
            Some(Err(status)) => {
                // Malformed message or broken connection: what came before it
                // is still stored and answered, then the stream fails.
                tracing::debug!(%status, "put stream broken on the client side");
                return Some(Some(status));
            }
            None => return Some(None),
        }
        if pending.urls >= max_chunk {
            return None;
        }
        match input.next().now_or_never() {
            Some(more) => next = more,
            None => return None,
        }
    }
}

async fn ack_stage<S: Shape>(
    mut staged: mpsc::Receiver<Staged<S>>,
    answers: mpsc::Sender<Result<S::Out, Status>>,
    metrics: Arc<Metrics>,
    _guard: StreamGuard,
) {
    let mut ready = Vec::new();
    while staged.recv_many(&mut ready, usize::MAX).await > 0 {
        let mut chunks = Vec::with_capacity(ready.len());
        let mut broken = None;
        for s in ready.drain(..) {
            match s {
                Staged::Stored(stored) => chunks.push(stored),
                Staged::Broken(status) => {
                    broken = Some(status);
                    break;
                }
            }
        }
        let Some(chunks) = wait_durable(chunks, &answers).await else {
            return;
        };
        for (shape, statuses) in chunks {
            metrics.add_acks(&statuses);
            for answer in shape.answers(statuses) {
                if answers.send(Ok(answer)).await.is_err() {
                    return; // the client is gone
                }
            }
        }
        if let Some(status) = broken {
            let _ = answers.send(Err(status)).await;
            return;
        }
    }
}

/// Waits, in order and in one blocking hop, for every chunk's durable point;
/// a chunk whose wait failed gets `FAIL` for all its URLs.
async fn wait_durable<S: Shape>(
    chunks: Vec<Stored<S>>,
    answers: &mpsc::Sender<Result<S::Out, Status>>,
) -> Option<Vec<(S, Vec<AckStatus>)>> {
    let waited = tokio::task::spawn_blocking(move || {
        let wait = |c: Stored<S>| {
            let mut statuses = c.statuses;
            if let Err(err) = (c.durable)() {
                static NOT_DURABLE: super::limited::Limited = super::limited::Limited::new();
                NOT_DURABLE.warn("write not durable; acking FAIL", &err);
                statuses.fill(AckStatus::Fail);
            }
            (c.shape, statuses)
        };
        chunks.into_iter().map(wait).collect()
    })
    .await;
    match waited {
        Ok(chunks) => Some(chunks),
        Err(join) => {
            let status = Status::internal(format!("durability wait failed: {join}"));
            let _ = answers.send(Err(status)).await;
            None
        }
    }
}
