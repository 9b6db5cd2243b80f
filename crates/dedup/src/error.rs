//! Typed errors of the dedupe engine.

use std::io;

/// Why a dedupe run stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DedupError {
    /// Reading an input failed.
    #[error("reading input: {0}")]
    Input(#[source] io::Error),
    /// The reader of the output went away (`| head`). Not a failure for a
    /// command-line filter: callers normally exit quietly with success.
    #[error("output closed by the reader")]
    OutputClosed,
    /// Writing the output failed for another reason (disk full, ...).
    #[error("writing output: {0}")]
    Output(#[source] io::Error),
    /// Reading, appending to or syncing the `--append-to` file failed.
    #[error("append file: {0}")]
    AppendFile(#[source] io::Error),
    /// `--seen` names no backend this tool offers.
    #[error("unknown seen-set backend {name:?} (known: {known})")]
    UnknownBackend {
        /// The name asked for.
        name: String,
        /// The names this tool offers.
        known: String,
    },
    /// The seen-set backend could not be built.
    #[error("seen-set backend: {0}")]
    Seen(#[from] mgz_seen::SeenError),
    /// The backend options are out of range (`--fpr` outside (0, 1), ...).
    #[error("invalid seen-set options: {reason}")]
    BadOptions {
        /// What is wrong.
        reason: String,
    },
}

impl DedupError {
    /// Classifies a failed write to the output: a broken pipe is the reader
    /// leaving, everything else a real error.
    pub(crate) fn from_output(err: io::Error) -> Self {
        if err.kind() == io::ErrorKind::BrokenPipe {
            DedupError::OutputClosed
        } else {
            DedupError::Output(err)
        }
    }
}
