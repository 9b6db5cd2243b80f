//! A WARC/1.1 writer: one `warcinfo` record per file opening, then a
//! `response` and a `request` record per fetch, appended together.
//!
//! Kill safety: an exchange's two records are built in memory and handed to
//! the kernel in one `write` (no user-space buffer), before the page is
//! stored or settled in the frontier, so every page a crawl acknowledged has
//! its records in the file even after SIGKILL. A kill during that `write`
//! can leave its records cut short at the end of the file: [`WarcWriter::open`]
//! finds the end of the last complete record ([`crate::warc_tail`]) and cuts
//! the torn rest off before appending, so a resumed crawl's file reads
//! through. A page fetched again after a kill gets a second pair of records.
//! A file that is not an uncompressed WARC (or is damaged before its end) is
//! refused with [`CrawlError::Warc`] and left untouched.
//!
//! The response block is the HTTP message as the crawler saw it after
//! transfer and content decoding: `Transfer-Encoding`, `Content-Encoding` and
//! `Content-Length` are replaced by the real length of the stored body, so the
//! record parses as plain HTTP. A body cut by the fetch cap carries
//! `WARC-Truncated: length`.

use std::fs::{File, OpenOptions};
use std::io::{Seek, Write};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use crate::CrawlError;
use crate::fetch::Fetched;
use crate::warc_tail::{self, Tail, TailError};

/// Appends records to one WARC file; shareable between tasks.
pub struct WarcWriter {
    /// The file and its length: the end of its last complete record.
    out: Mutex<(File, u64)>,
    /// The file's path, for error messages.
    path: String,
    counter: AtomicU64,
}

impl WarcWriter {
    /// Opens `path` for appending (cutting off a record torn by a killed
    /// crawl, see the module docs) and writes a `warcinfo` record.
    pub fn open(path: &Path, software: &str) -> Result<WarcWriter, CrawlError> {
        let refused = |reason: String| CrawlError::Warc {
            path: path.display().to_string(),
            reason,
        };
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .map_err(|e| refused(format!("cannot be opened: {e}")))?;
        // One writer per file: a second crawl would take the first one's
        // record in progress for a torn one. Held until the writer is dropped.
        file.try_lock().map_err(|e| match e {
            std::fs::TryLockError::WouldBlock => {
                refused("in use by another process (another crawl writes it)".into())
            }
            std::fs::TryLockError::Error(e) => refused(format!("cannot be locked: {e}")),
        })?;
        let len = file
            .metadata()
            .map_err(|e| refused(format!("cannot be read: {e}")))?
            .len();
        match warc_tail::scan(&mut file, len).map_err(|e: TailError| refused(e.to_string()))? {
            Tail::Clean => {}
            Tail::Torn { complete, len } => {
                tracing::warn!(
                    "{}: cut off {} bytes of a record torn by an interrupted crawl",
                    path.display(),
                    len - complete
                );
                file.set_len(complete)
                    .map_err(|e| refused(format!("its torn tail cannot be cut: {e}")))?;
            }
        }
        let end = file
            .seek(std::io::SeekFrom::End(0))
            .map_err(|e| refused(format!("cannot be appended to: {e}")))?;
        let w = WarcWriter {
            out: Mutex::new((file, end)),
            path: path.display().to_string(),
            counter: AtomicU64::new(0),
        };
        let info = format!("software: {software}\r\nformat: WARC File Format 1.1\r\n");
        let id = w.record_id();
        let head = [("WARC-Type", "warcinfo"), ("WARC-Record-ID", &id)];
        let mut rec = Vec::new();
        record(
            &mut rec,
            &head,
            "application/warc-fields",
            info.as_bytes(),
            &[],
        );
        w.append(&rec)?;
        Ok(w)
    }

    /// Hands `bytes` to the kernel in one `write_all` (one `write` for a
    /// regular file unless the disk fills). A write that fails part way
    /// (a full disk) is cut back off, so a record written after it by a
    /// task that got room cannot follow a torn one inside the file.
    fn append(&self, bytes: &[u8]) -> Result<(), CrawlError> {
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        let (file, end) = &mut *out;
        if let Err(e) = file.write_all(bytes) {
            if let Err(cut) = file.set_len(*end) {
                tracing::warn!("warc: cutting off a failed write: {cut}");
            }
            return Err(CrawlError::Warc {
                path: self.path.clone(),
                reason: format!("write failed: {e}"),
            });
        }
        *end += bytes.len() as u64;
        Ok(())
    }

    fn record_id(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let h = Sha256::digest(format!("{}-{nanos}-{n}", std::process::id()));
        let mut b = [0u8; 16];
        b.copy_from_slice(&h[..16]);
        b[6] = (b[6] & 0x0f) | 0x40; // version 4
        b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
        let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
        format!(
            "<urn:uuid:{}-{}-{}-{}-{}>",
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..]
        )
    }

    /// Writes the request and response records of one fetch.
    pub fn write_exchange(
        &self,
        url: &str,
        identity: &str,
        resp: &Fetched,
    ) -> Result<(), CrawlError> {
        let parsed = url::Url::parse(url).map_err(|e| CrawlError::Config(e.to_string()))?;
        let req = request_block(&parsed, identity);
        let (req_id, resp_id) = (self.record_id(), self.record_id());
        let mut fields = vec![
            ("WARC-Type", "response"),
            ("WARC-Record-ID", resp_id.as_str()),
            ("WARC-Target-URI", url),
        ];
        let ip = resp.remote.map(|i| i.to_string());
        if let Some(ip) = &ip {
            fields.push(("WARC-IP-Address", ip));
        }
        if resp.truncated {
            fields.push(("WARC-Truncated", "length"));
        }
        let head = response_head(resp);
        let mut both = Vec::with_capacity(resp.body.len() + head.len() + req.len() + 1024);
        record(
            &mut both,
            &fields,
            "application/http;msgtype=response",
            &head,
            &resp.body,
        );
        let fields = [
            ("WARC-Type", "request"),
            ("WARC-Record-ID", req_id.as_str()),
            ("WARC-Target-URI", url),
            ("WARC-Concurrent-To", resp_id.as_str()),
        ];
        record(
            &mut both,
            &fields,
            "application/http;msgtype=request",
            req.as_bytes(),
            &[],
        );
        self.append(&both)
    }

    /// Makes the records durable (`fsync`): nothing is buffered in the
    /// process, so this only matters against power loss.
    pub fn sync(&self) -> Result<(), CrawlError> {
        self.out
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .sync_data()?;
        Ok(())
    }
}

/// Appends one record (header, block of `block_head` then `block_body`,
/// CRLF CRLF) to `out`.
fn record(
    out: &mut Vec<u8>,
    fields: &[(&str, &str)],
    content_type: &str,
    block_head: &[u8],
    block_body: &[u8],
) {
    let date = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ");
    out.extend_from_slice(b"WARC/1.1\r\n");
    for (k, v) in fields {
        out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    let len = block_head.len() + block_body.len();
    out.extend_from_slice(
        format!(
            "WARC-Date: {date}\r\nContent-Type: {content_type}\r\nContent-Length: {len}\r\n\r\n"
        )
        .as_bytes(),
    );
    out.extend_from_slice(block_head);
    out.extend_from_slice(block_body);
    out.extend_from_slice(b"\r\n\r\n");
}

/// The request as sent: `identity` is the `User-Agent` (and `From`)
/// header lines, each ending in CRLF ([`crate::fetch::Fetcher::identity_headers`]).
fn request_block(url: &url::Url, identity: &str) -> String {
    let target = &url[url::Position::BeforePath..url::Position::AfterQuery];
    let host = &url[url::Position::BeforeHost..url::Position::AfterPort];
    format!(
        "GET {target} HTTP/1.1\r\nHost: {host}\r\n{identity}\
         Accept: */*\r\nAccept-Encoding: gzip, br, deflate\r\n\r\n"
    )
}

fn response_head(resp: &Fetched) -> Vec<u8> {
    let reason = reqwest::StatusCode::from_u16(resp.status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Unknown");
    let mut head = format!("HTTP/1.1 {} {reason}\r\n", resp.status).into_bytes();
    for (name, value) in &resp.headers {
        if matches!(
            name.as_str(),
            "transfer-encoding" | "content-encoding" | "content-length"
        ) {
            continue;
        }
        head.extend_from_slice(name.as_str().as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(format!("Content-Length: {}\r\n\r\n", resp.body.len()).as_bytes());
    head
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_framed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.warc");
        let w = WarcWriter::open(&path, "mgz-test").unwrap();
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("content-type", "text/html".parse().unwrap());
        headers.insert("content-encoding", "gzip".parse().unwrap());
        let resp = Fetched {
            status: 200,
            headers,
            body: b"<p>hi</p>".to_vec(),
            truncated: true,
            remote: None,
            lease: None,
            response_time: std::time::Duration::ZERO,
        };
        w.write_exchange("http://a.sim:8080/x?q=1", "User-Agent: mgz\r\n", &resp)
            .unwrap();
        let text = String::from_utf8(std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(text.matches("WARC/1.1\r\n").count(), 3);
        assert!(text.contains("GET /x?q=1 HTTP/1.1\r\nHost: a.sim:8080\r\n"));
        assert!(text.contains("WARC-Truncated: length"));
        assert!(!text.contains("content-encoding"));
        assert!(text.contains("Content-Length: 9\r\n\r\n<p>hi</p>"));
    }

    fn page(body: &[u8]) -> Fetched {
        Fetched {
            status: 200,
            headers: reqwest::header::HeaderMap::new(),
            body: body.to_vec(),
            truncated: false,
            remote: None,
            lease: None,
            response_time: std::time::Duration::ZERO,
        }
    }

    /// Record types in file order, read with the tail scanner's framing.
    fn types(path: &Path) -> Vec<String> {
        let bytes = std::fs::read(path).unwrap();
        let len = bytes.len() as u64;
        assert_eq!(
            warc_tail::scan(&mut std::io::Cursor::new(&bytes), len),
            Ok(Tail::Clean)
        );
        let text = String::from_utf8_lossy(&bytes);
        text.split("WARC/1.1\r\n")
            .filter_map(|r| r.strip_prefix("WARC-Type: "))
            .map(|r| r[..r.find('\r').unwrap()].to_string())
            .collect()
    }

    #[test]
    fn a_torn_tail_is_cut_off_before_appending() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.warc");
        let w = WarcWriter::open(&path, "t").unwrap();
        w.write_exchange(
            "http://a.sim/1",
            "User-Agent: mgz\r\n",
            &page(b"<p>one</p>"),
        )
        .unwrap();
        let complete = std::fs::metadata(&path).unwrap().len();
        w.write_exchange(
            "http://a.sim/2",
            "User-Agent: mgz\r\n",
            &page(&[b'x'; 3000]),
        )
        .unwrap();
        drop(w);
        let whole = std::fs::read(&path).unwrap();
        // Cuts in the second exchange: its response header, its body, the
        // request record, the very last byte.
        for cut in [
            complete + 1,
            complete + 200,
            complete + 2000,
            whole.len() as u64 - 1,
        ] {
            std::fs::write(&path, &whole[..cut as usize]).unwrap();
            let w = WarcWriter::open(&path, "t").unwrap();
            w.write_exchange(
                "http://a.sim/3",
                "User-Agent: mgz\r\n",
                &page(b"<p>three</p>"),
            )
            .unwrap();
            drop(w);
            let after = std::fs::read(&path).unwrap();
            assert_eq!(after[..complete as usize], whole[..complete as usize]);
            // A cut in the request record keeps the complete response
            // before it (a valid record; the page is fetched again).
            let mut want = vec!["warcinfo", "response", "request"];
            if cut == whole.len() as u64 - 1 {
                want.push("response");
            }
            want.extend(["warcinfo", "response", "request"]);
            assert_eq!(types(&path), want, "cut at {cut}");
        }
        // A clean file is appended to as it is.
        let before = std::fs::read(&path).unwrap();
        drop(WarcWriter::open(&path, "t").unwrap());
        assert!(std::fs::read(&path).unwrap().starts_with(&before));
        assert_eq!(types(&path).len(), 8);
    }

    #[test]
    fn one_writer_per_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.warc");
        let first = WarcWriter::open(&path, "t").unwrap();
        let before = std::fs::read(&path).unwrap();
        match WarcWriter::open(&path, "t") {
            Err(CrawlError::Warc { reason, .. }) => assert!(reason.contains("in use"), "{reason}"),
            other => panic!("{:?}", other.err()),
        }
        assert_eq!(std::fs::read(&path).unwrap(), before);
        drop(first);
        drop(WarcWriter::open(&path, "t").unwrap());
        assert_eq!(types(&path), ["warcinfo", "warcinfo"]);
    }

    #[test]
    fn a_file_that_is_not_a_warc_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        for bytes in [
            &b"my notes\n"[..],
            &[0x1f, 0x8b, 8, 0, 1, 2, 3][..], // a .warc.gz
            &b"WARC/1.1\r\nContent-Length: 2\r\n\r\nabXY\r\n"[..],
        ] {
            std::fs::write(&path, bytes).unwrap();
            match WarcWriter::open(&path, "t") {
                Err(e @ CrawlError::Warc { .. }) => assert_eq!(e.kind(), "warc"),
                other => panic!("{:?}", other.err()),
            }
            assert_eq!(std::fs::read(&path).unwrap(), bytes);
        }
    }
}
