//! The one error type of the crate.

use std::path::PathBuf;

/// Why a frontier operation failed. Expected outcomes (a URL already seen, a
/// malformed URL in a batch, an empty queue) are values, not errors.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrontierError {
    /// An I/O error on the state directory (disk full, permission denied, ...).
    #[error("I/O error on frontier state {path}: {source}")]
    Io {
        /// File or directory involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The state directory is not writable (read-only file system or permissions).
    #[error("frontier state directory {path} is read-only or not writable: {reason}")]
    ReadOnly {
        /// The state directory.
        path: PathBuf,
        /// What the operating system reported.
        reason: String,
    },
    /// No room to grow the state (device full, disk quota or file-size
    /// limit): the write was not acknowledged, nothing acknowledged before it
    /// is lost, and the open frontier refuses further writes; reopen once
    /// there is room.
    #[error(
        "no space left for the frontier state (device full, quota or file-size limit); \
         the write was not acknowledged: {0}"
    )]
    DiskFull(String),
    /// Another process has the state directory open (another `mgz crawl`
    /// or `mgz serve` with the same state): one process per directory.
    #[error(
        "frontier state {path} is in use by another process (a crawl or server with the \
         same state directory); stop it first, or use another directory"
    )]
    InUse {
        /// The store directory.
        path: PathBuf,
    },
    /// The embedded store (fjall) reported an error.
    #[error("store error: {0}")]
    Store(String),
    /// A file or record was written by another format version.
    #[error(
        "{what} has format version {found}, this build reads version {expected}: \
         open it with the mgz build that wrote it, or start a new state directory"
    )]
    FormatVersion {
        /// Which file or record.
        what: String,
        /// Version found on disk.
        found: u32,
        /// Version this build understands.
        expected: u32,
    },
    /// A file or record failed its checksum or could not be decoded.
    #[error("corrupt frontier state in {what}: {reason}")]
    Corrupt {
        /// Which file or record.
        what: String,
        /// What was wrong.
        reason: String,
    },
    /// The URL asked about is not in the frontier.
    #[error("URL not found: {0}")]
    NotFound(String),
    /// The crawl or queue named does not exist.
    #[error("unknown queue {key:?} in crawl {crawl:?}")]
    UnknownQueue {
        /// The crawl id.
        crawl: String,
        /// The queue key.
        key: String,
    },
    /// A caller argument is invalid (over-long key, bad URL in a lookup, ...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A previous durable write failed; the frontier refuses further writes.
    #[error("frontier is poisoned after a failed durable write: {0}")]
    Poisoned(String),
}

/// The message of [`FrontierError::Poisoned`] when fjall refused a write
/// after one of its own workers failed (it returns no cause; it logs it).
pub const STORE_POISONED: &str = "the store refused writes after an earlier I/O failure";

/// Result alias of the crate.
pub type Result<T, E = FrontierError> = std::result::Result<T, E>;

impl FrontierError {
    /// Maps an I/O error on `path` to the most specific variant.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        let path = path.into();
        match source.kind() {
            // ENOSPC, EDQUOT and EFBIG (RLIMIT_FSIZE, or the file system's
            // largest file): the state cannot grow, whatever the cause.
            std::io::ErrorKind::StorageFull
            | std::io::ErrorKind::QuotaExceeded
            | std::io::ErrorKind::FileTooLarge => {
                FrontierError::DiskFull(format!("{}: {source}", path.display()))
            }
            std::io::ErrorKind::ReadOnlyFilesystem | std::io::ErrorKind::PermissionDenied => {
                FrontierError::ReadOnly {
                    path,
                    reason: source.to_string(),
                }
            }
            _ => FrontierError::Io { path, source },
        }
    }

    /// Names `path` as the file a version or corruption error is about.
    pub(crate) fn in_file(self, path: &std::path::Path) -> Self {
        let what = path.display().to_string();
        match self {
            FrontierError::FormatVersion {
                found, expected, ..
            } => FrontierError::FormatVersion {
                what,
                found,
                expected,
            },
            FrontierError::Corrupt { reason, .. } => FrontierError::Corrupt { what, reason },
            other => other,
        }
    }

    pub(crate) fn corrupt(what: impl Into<String>, reason: impl Into<String>) -> Self {
        FrontierError::Corrupt {
            what: what.into(),
            reason: reason.into(),
        }
    }
}

impl From<fjall::Error> for FrontierError {
    fn from(err: fjall::Error) -> Self {
        match err {
            fjall::Error::Io(source) => FrontierError::io("store", source),
            fjall::Error::Poisoned => FrontierError::Poisoned(STORE_POISONED.into()),
            other => FrontierError::Store(format!("{other:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Error, ErrorKind};

    #[test]
    fn io_errors_map_to_the_most_specific_variant() {
        for kind in [
            ErrorKind::StorageFull,
            ErrorKind::QuotaExceeded,
            ErrorKind::FileTooLarge,
        ] {
            let e = FrontierError::io("/s/journal", Error::from(kind));
            assert!(
                matches!(&e, FrontierError::DiskFull(m) if m.contains("/s/journal")),
                "{e}"
            );
            assert!(e.to_string().contains("not acknowledged"), "{e}");
        }
        for kind in [ErrorKind::PermissionDenied, ErrorKind::ReadOnlyFilesystem] {
            let e = FrontierError::io("/s", Error::from(kind));
            assert!(matches!(e, FrontierError::ReadOnly { .. }), "{e}");
        }
        let e = FrontierError::io("/s", Error::from(ErrorKind::BrokenPipe));
        assert!(matches!(e, FrontierError::Io { .. }), "{e}");
    }
}
