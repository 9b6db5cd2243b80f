//! Pipelined handling of the two client-streaming puts.
//!
//! A put is acknowledged only once durable, and the store makes writes durable
//! by group commit (one sync every few milliseconds). Handling one message at a
//! time would cap a stream at one sync per message, so the driver
//!
//! 1. takes every message already received (up to `max_chunk`) as one chunk,
//!    so one store call serves many messages;
//! 2. keeps up to `depth` chunks in the store at once (on the blocking pool),
//!    so their syncs are shared;
//! 3. sends the answers in the order the messages came, and ends the response
//!    stream once the client has half-closed and every chunk is answered.
//!
//! A client that goes away mid-stream only stops the driver: chunks already
//! handed to the store finish (their URLs are stored; the client never saw the
//! acks, so it resends them and gets `SKIPPED` for the discovered ones).

use std::sync::Arc;

use futures_util::FutureExt as _;
use futures_util::stream::{FuturesOrdered, StreamExt as _};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Status, Streaming};

use crate::metrics::StreamGuard;

/// How a put stream is cut into store calls.
#[derive(Debug, Clone, Copy)]
pub struct PipelineLimits {
    /// Messages per store call at most.
    pub max_chunk: usize,
    /// Store calls in progress per stream at most.
    pub depth: usize,
}

/// Turns each chunk of input messages into exactly one answer per message.
pub type ChunkFn<In, Out> = dyn Fn(Vec<In>) -> Result<Vec<Out>, Status> + Send + Sync;

/// Starts the driver; the returned stream carries the answers.
pub fn spawn<In, Out>(
    input: Streaming<In>,
    limits: PipelineLimits,
    handle: Arc<ChunkFn<In, Out>>,
    guard: StreamGuard,
) -> ReceiverStream<Result<Out, Status>>
where
    In: Send + 'static,
    Out: Send + 'static,
{
    let (tx, rx) = mpsc::channel(limits.max_chunk.max(16));
    tokio::spawn(drive(input, limits, handle, tx, guard));
    ReceiverStream::new(rx)
}

async fn drive<In, Out>(
    mut input: Streaming<In>,
    limits: PipelineLimits,
    handle: Arc<ChunkFn<In, Out>>,
    tx: mpsc::Sender<Result<Out, Status>>,
    _guard: StreamGuard,
) where
    In: Send + 'static,
    Out: Send + 'static,
{
    let mut in_store = FuturesOrdered::new();
    let mut input_open = true;
    let mut broken: Option<Status> = None;
    loop {
        tokio::select! {
            biased;
            Some(done) = in_store.next(), if !in_store.is_empty() => {
                if !send_answers(&tx, done).await {
                    return;
                }
            }
            first = input.next(), if input_open && in_store.len() < limits.depth => {
                let (chunk, tail) = match first {
                    Some(Ok(msg)) => take_ready(&mut input, msg, limits.max_chunk),
                    Some(Err(status)) => (Vec::new(), Tail::Broken(status)),
                    None => (Vec::new(), Tail::End),
                };
                if !chunk.is_empty() {
                    tracing::trace!(messages = chunk.len(), in_store = in_store.len(), "chunk");
                    let handle = handle.clone();
                    in_store.push_back(tokio::task::spawn_blocking(move || handle(chunk)));
                }
                match tail {
                    Tail::More => {}
                    Tail::End => input_open = false,
                    Tail::Broken(status) => {
                        // Malformed message or broken connection: what came before it
                        // is still stored and answered, then the stream fails.
                        tracing::debug!(%status, "put stream broken on the client side");
                        input_open = false;
                        broken = Some(status);
                    }
                }
            }
            else => break,
        }
    }
    if let Some(status) = broken {
        let _ = tx.send(Err(status)).await;
    }
}

/// What follows a chunk taken from the input.
enum Tail {
    More,
    End,
    Broken(Status),
}

/// The first message plus every one already received, up to `max`.
fn take_ready<In>(input: &mut Streaming<In>, first: In, max: usize) -> (Vec<In>, Tail) {
    let mut chunk = vec![first];
    while chunk.len() < max {
        match input.next().now_or_never() {
            Some(Some(Ok(msg))) => chunk.push(msg),
            Some(Some(Err(status))) => return (chunk, Tail::Broken(status)),
            Some(None) => return (chunk, Tail::End),
            None => break,
        }
    }
    (chunk, Tail::More)
}

/// Forwards one chunk's answers; `false` once the client is gone.
async fn send_answers<Out>(
    tx: &mpsc::Sender<Result<Out, Status>>,
    done: Result<Result<Vec<Out>, Status>, tokio::task::JoinError>,
) -> bool {
    let answers = match done {
        Ok(answers) => answers,
        Err(join) => Err(Status::internal(format!("store task failed: {join}"))),
    };
    match answers {
        Ok(answers) => {
            for answer in answers {
                if tx.send(Ok(answer)).await.is_err() {
                    return false;
                }
            }
            true
        }
        Err(status) => {
            let _ = tx.send(Err(status)).await;
            false
        }
    }
}
