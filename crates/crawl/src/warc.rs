//! A WARC/1.1 writer: one `warcinfo` record per file opening, then a
//! `request` and a `response` record per fetch, appended and flushed together.
//!
//! The response block is the HTTP message as the crawler saw it after
//! transfer and content decoding: `Transfer-Encoding`, `Content-Encoding` and
//! `Content-Length` are replaced by the real length of the stored body, so the
//! record parses as plain HTTP. A body cut by the fetch cap carries
//! `WARC-Truncated: length`.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use crate::CrawlError;
use crate::fetch::Fetched;

/// Appends records to one WARC file; shareable between tasks.
pub struct WarcWriter {
    out: Mutex<BufWriter<File>>,
    counter: AtomicU64,
}

impl WarcWriter {
    /// Opens `path` for appending and writes a `warcinfo` record.
    pub fn open(path: &Path, software: &str) -> Result<WarcWriter, CrawlError> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let w = WarcWriter {
            out: Mutex::new(BufWriter::new(file)),
            counter: AtomicU64::new(0),
        };
        let info = format!("software: {software}\r\nformat: WARC File Format 1.1\r\n");
        let id = w.record_id();
        let head = [("WARC-Type", "warcinfo"), ("WARC-Record-ID", &id)];
        w.write_record(&head, "application/warc-fields", info.as_bytes(), &[])?;
        w.flush()?;
        Ok(w)
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

    fn write_record(
        &self,
        fields: &[(&str, &str)],
        content_type: &str,
        block_head: &[u8],
        block_body: &[u8],
    ) -> Result<(), CrawlError> {
        let date = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string();
        let mut head = String::from("WARC/1.1\r\n");
        for (k, v) in fields {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str(&format!(
            "WARC-Date: {date}\r\nContent-Type: {content_type}\r\n"
        ));
        let len = block_head.len() + block_body.len();
        head.push_str(&format!("Content-Length: {len}\r\n\r\n"));
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        out.write_all(head.as_bytes())?;
        out.write_all(block_head)?;
        out.write_all(block_body)?;
        out.write_all(b"\r\n\r\n")?;
        Ok(())
    }

    /// Writes the request and response records of one fetch.
    pub fn write_exchange(
        &self,
        url: &str,
        user_agent: &str,
        resp: &Fetched,
    ) -> Result<(), CrawlError> {
        let parsed = url::Url::parse(url).map_err(|e| CrawlError::Config(e.to_string()))?;
        let req = request_block(&parsed, user_agent);
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
        self.write_record(
            &fields,
            "application/http;msgtype=response",
            &head,
            &resp.body,
        )?;
        let fields = [
            ("WARC-Type", "request"),
            ("WARC-Record-ID", req_id.as_str()),
            ("WARC-Target-URI", url),
            ("WARC-Concurrent-To", resp_id.as_str()),
        ];
        self.write_record(
            &fields,
            "application/http;msgtype=request",
            req.as_bytes(),
            &[],
        )?;
        Ok(())
    }

    /// Flushes buffered records to the file.
    pub fn flush(&self) -> Result<(), CrawlError> {
        self.out.lock().unwrap_or_else(|p| p.into_inner()).flush()?;
        Ok(())
    }
}

fn request_block(url: &url::Url, user_agent: &str) -> String {
    let target = &url[url::Position::BeforePath..url::Position::AfterQuery];
    let host = &url[url::Position::BeforeHost..url::Position::AfterPort];
    format!(
        "GET {target} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: {user_agent}\r\n\
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
        };
        w.write_exchange("http://a.sim:8080/x?q=1", "mgz", &resp)
            .unwrap();
        w.flush().unwrap();
        let text = String::from_utf8(std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(text.matches("WARC/1.1\r\n").count(), 3);
        assert!(text.contains("GET /x?q=1 HTTP/1.1\r\nHost: a.sim:8080\r\n"));
        assert!(text.contains("WARC-Truncated: length"));
        assert!(!text.contains("content-encoding"));
        assert!(text.contains("Content-Length: 9\r\n\r\n<p>hi</p>"));
    }
}
