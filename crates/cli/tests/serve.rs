//! `mgz serve` as a process, driven by `mgz frontier ...`: the startup line,
//! SIGTERM, SIGKILL after acks, bearer tokens, dump and re-import.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

mod common;
use common::sigterm;

const MGZ: &str = env!("CARGO_BIN_EXE_mgz");

/// A running `mgz serve`; killed when dropped.
struct Served {
    child: Child,
    addr: String,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(state: &Path, extra: &[&str]) -> Served {
    let mut child = Command::new(MGZ)
        .args(["serve", "--listen", "127.0.0.1:0", "--state"])
        .arg(state)
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("server exited before listening")
            .unwrap();
        if let Some(rest) = line.split("Started URLFrontierServer addr=").nth(1) {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
    };
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = log.clone();
    std::thread::spawn(move || {
        lines
            .map_while(Result::ok)
            .for_each(|l| sink.lock().unwrap().push(l))
    });
    Served { child, addr, log }
}

fn mgz(served: &Served, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(MGZ)
        .args(["frontier", "--server", &served.addr])
        .args(args)
        .output()
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.success(), text(out.stdout), text(out.stderr))
}

/// `mgz frontier put` with `args` and `input` on its standard input.
fn put_stdin(served: &Served, args: &[&str], input: &[u8]) -> (bool, String, String) {
    let out = common::output_with_input(
        Command::new(MGZ)
            .args(["frontier", "--server", &served.addr, "put"])
            .args(args),
        input,
    );
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.success(), text(out.stdout), text(out.stderr))
}

#[test]
fn put_reads_standard_input_without_a_file_or_with_a_dash() {
    let dir = tempfile::tempdir().unwrap();
    let served = serve(&dir.path().join("state"), &[]);
    let (ok, out, err) = put_stdin(&served, &[], b"http://a.example/1\nhttp://b.example/2\n");
    assert!(ok, "{out}{err}");
    assert!(out.contains("sent 2 acked 2 ok 2 "), "{out}");
    let (ok, out, err) = put_stdin(&served, &["-"], b"http://a.example/1\nhttp://c.example/3\n");
    assert!(ok, "{out}{err}");
    assert!(out.contains("ok 1 skipped 1 "), "{out}");
    assert_eq!(stats_size(&served), 3);
}

/// A malformed JSONL line stops the put there, naming the line and what
/// a rerun does; the lines after it are not sent, and a rerun of the fixed
/// input puts each URL once.
#[test]
fn a_malformed_jsonl_line_is_named_and_a_rerun_puts_each_url_once() {
    let dir = tempfile::tempdir().unwrap();
    let served = serve(&dir.path().join("state"), &[]);
    let item = |url: &str| format!("{{\"discovered\":{{\"info\":{{\"url\":\"{url}\"}}}}}}\n");
    let bad = [
        item("http://a.example/1"),
        "{bad json\n".into(),
        item("http://a.example/3"),
    ]
    .concat();
    let (ok, _, err) = put_stdin(&served, &[], bad.as_bytes());
    assert!(!ok);
    assert!(err.contains("line 2 (nothing after it was sent"), "{err}");
    assert!(err.contains("not JSON"), "{err}");
    assert_eq!(stats_size(&served), 1, "line 3 was sent");
    let fixed = [
        item("http://a.example/1"),
        item("http://a.example/2"),
        item("http://a.example/3"),
    ]
    .concat();
    let (ok, out, err) = put_stdin(&served, &[], fixed.as_bytes());
    assert!(ok, "{out}{err}");
    assert!(out.contains("ok 2 skipped 1 "), "{out}");
    assert_eq!(stats_size(&served), 3);
}

fn stats_size(served: &Served) -> u64 {
    let (ok, out, err) = mgz(served, &["stats"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    v["size"].as_u64().unwrap()
}

#[test]
fn sigkill_after_acks_loses_nothing_and_sigterm_flushes() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let input = dir.path().join("urls.txt");
    let urls: String = (0..3000)
        .map(|i| format!("http://h{}.example/{i}\n", i % 17))
        .collect();
    std::fs::write(&input, urls).unwrap();
    let mut served = serve(&state, &[]);
    let (ok, out, err) = mgz(&served, &["put", "--batch", "100", input.to_str().unwrap()]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("ok 3000 "), "{out}");
    // Every ack was sent after the durable point: kill without warning.
    served.child.kill().unwrap();
    served.child.wait().unwrap();
    let served = serve(&state, &[]);
    assert_eq!(stats_size(&served), 3000);
    let (ok, out, _) = mgz(&served, &["put", input.to_str().unwrap()]);
    assert!(
        ok && out.contains("skipped 3000 "),
        "re-sent URLs are known: {out}"
    );
    let mut served = served;
    sigterm(&served.child);
    let status = served.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    std::thread::sleep(Duration::from_millis(100));
    let log = served.log.lock().unwrap().join("\n");
    assert!(log.contains("frontier flushed"), "{log}");
}

#[test]
fn concurrent_put_streams_keep_each_url_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("urls.txt");
    // 500 distinct URLs, each sent three times: every copy takes its URL's
    // stream, so the first is OK and the repeats SKIPPED, on any stream count.
    let urls: String = (0..1500)
        .map(|i| format!("http://h{}.example/{}\n", i % 500 % 7, i % 500))
        .collect();
    std::fs::write(&input, urls).unwrap();
    let served = serve(&dir.path().join("state"), &[]);
    let path = input.to_str().unwrap();
    let (ok, out, err) = mgz(&served, &["put", "--streams", "3", "--batch", "16", path]);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("acked 1500 ok 500 skipped 1000 failed 0"),
        "{out}"
    );
    assert_eq!(stats_size(&served), 500);
    let (ok, out, err) = mgz(&served, &["put", "--streams", "1", path]);
    assert!(ok && out.contains("ok 0 skipped 1500"), "{out}{err}");
    let (ok, _, err) = mgz(&served, &["put", "--streams", "0", path]);
    assert!(!ok && err.contains("streams"), "{err}");
}

#[test]
fn the_crawler_loop_completes_every_url_and_logs_each_call() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("urls.txt");
    let urls: String = (0..300)
        .map(|i| format!("http://h{}.example/{i}\n", i % 3))
        .collect();
    std::fs::write(&input, urls).unwrap();
    let served = serve(&dir.path().join("state"), &[]);
    let (ok, out, err) = mgz(&served, &["put", input.to_str().unwrap()]);
    assert!(ok && out.contains("ok 300"), "{out}{err}");
    let (ok, _, err) = mgz(&served, &["set-delay", "0"]);
    assert!(ok, "{err}");
    let args = [
        "get",
        "--total",
        "300",
        "--per-queue",
        "10",
        "--complete",
        "--quiet",
        "--log-calls",
    ];
    let (ok, out, err) = mgz(&served, &args);
    assert!(ok && out.is_empty(), "{out}{err}");
    assert!(err.contains("served 300 URLs (completed 300)"), "{err}");
    // One line per call: "call N at S s: K URLs, T in all", numbered from
    // 1, K adding up to T.
    let mut total = 0;
    let calls: Vec<&str> = err.lines().filter(|l| l.starts_with("call ")).collect();
    for (n, line) in calls.iter().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[1], (n + 1).to_string(), "{line}");
        total += words[5].parse::<u64>().unwrap();
        assert_eq!(words[7], total.to_string(), "{line}");
    }
    assert_eq!(total, 300, "{err}");
    // At 10 per queue and call, three queues of 100 take 10 calls at least.
    assert!(calls.len() >= 10, "{err}");
    assert_eq!(stats_size(&served), 0);
}

#[test]
fn bearer_token_is_enforced_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let served = serve(&dir.path().join("s"), &["--token", "hunter2"]);
    let (ok, _, err) = mgz(&served, &["stats"]);
    assert!(!ok && err.contains("missing bearer token"), "{err}");
    let (ok, _, err) = mgz(&served, &["--token", "hunter3", "stats"]);
    assert!(!ok, "{err}");
    let (ok, out, err) = mgz(&served, &["--token", "hunter2", "stats"]);
    assert!(ok, "{err}");
    assert!(out.contains("\"size\":0"), "{out}");
}

/// Drops `creationDate` (the import date, by the API's definition).
fn without_creation(dump: &str) -> Vec<serde_json::Value> {
    let mut v: Vec<serde_json::Value> = dump
        .lines()
        .map(|l| {
            let mut item: serde_json::Value = serde_json::from_str(l).unwrap();
            item.as_object_mut().unwrap().remove("creationDate");
            item
        })
        .collect();
    v.sort_by_key(|i| i.to_string());
    v
}

#[test]
fn dump_and_reimport_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let later = 4_000_000_000u64; // 2096: scheduled, not due
    let input = dir.path().join("items.jsonl");
    let lines = [
        r#"{"discovered":{"info":{"url":"http://example.com/discovered","key":"example.com","metadata":{"source":{"values":["seed"]}}}}}"#.to_owned(),
        r#"{"known":{"info":{"url":"http://example.com/done","key":"example.com"}}}"#.to_owned(),
        format!(r#"{{"known":{{"info":{{"url":"http://example.com/later"}},"refetchableFromDate":"{later}"}}}}"#),
        r#"{"discovered":{"info":{"url":"http://bespoke.com/","crawlID":"BESPOKE"}}}"#.to_owned(),
    ];
    std::fs::write(&input, lines.join("\n")).unwrap();
    let a = serve(&dir.path().join("a"), &[]);
    let (ok, out, err) = mgz(&a, &["put", input.to_str().unwrap()]);
    assert!(ok && out.contains("ok 4 "), "{out}{err}");
    let dump_a = dir.path().join("a.jsonl");
    let (ok, _, err) = mgz(&a, &["dump", "-o", dump_a.to_str().unwrap()]);
    assert!(ok, "{err}");
    let text_a = std::fs::read_to_string(&dump_a).unwrap();
    assert_eq!(text_a.lines().count(), 4);
    assert!(
        text_a
            .lines()
            .all(|l| l.starts_with("{\"creationDate\"") && l.contains("\"known\""))
    );

    let b = serve(&dir.path().join("b"), &[]);
    let (ok, out, err) = mgz(&b, &["put", dump_a.to_str().unwrap()]);
    assert!(ok && out.contains("ok 4 "), "{out}{err}");
    let (ok, text_b, err) = mgz(&b, &["dump"]);
    assert!(ok, "{err}");
    assert_eq!(without_creation(&text_a), without_creation(&text_b));
    let done = text_b.lines().find(|l| l.contains("/done")).unwrap();
    assert!(
        !done.contains("refetchableFromDate"),
        "completed stays completed: {done}"
    );
    assert!(text_b.contains(&format!("\"refetchableFromDate\":\"{later}\"")));
    assert!(
        text_b.contains(r#""metadata":{"source":{"values":["seed"]}}"#),
        "{text_b}"
    );
    assert!(text_b.contains(r#""crawlID":"BESPOKE""#));
    // Completed and scheduled URLs are not served; the two discovered ones are.
    let (ok, served_urls, _) = mgz(&b, &["get", "--per-queue", "0"]);
    assert!(ok);
    let mut got: Vec<&str> = served_urls.lines().collect();
    got.sort();
    assert_eq!(
        got,
        ["http://bespoke.com/", "http://example.com/discovered"]
    );
}

/// `mgz frontier` with extra global flags (TLS, token) before the subcommand.
fn mgz_at(server: &str, flags: &[&str], args: &[&str]) -> (bool, String, String) {
    let out = Command::new(MGZ)
        .args(["frontier", "--server", server])
        .args(flags)
        .args(args)
        .output()
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (out.status.success(), text(out.stdout), text(out.stderr))
}

#[test]
fn tls_client_trusts_the_given_ca_only_and_sends_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let (cert_pem, key_pem) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_pem, cert.cert.pem()).unwrap();
    std::fs::write(&key_pem, cert.signing_key.serialize_pem()).unwrap();
    let input = dir.path().join("urls.txt");
    std::fs::write(&input, "http://a.example/1\nhttp://b.example/2\n").unwrap();
    let (cert_arg, key_arg) = (cert_pem.to_str().unwrap(), key_pem.to_str().unwrap());
    let served = serve(
        &dir.path().join("s"),
        &[
            "--tls-cert",
            cert_arg,
            "--tls-key",
            key_arg,
            "--token",
            "t0k",
        ],
    );
    let https = format!("https://{}", served.addr);
    let trusted = ["--tls-ca", cert_arg, "--tls-domain", "localhost"];
    let with_token = [&trusted[..], &["--token", "t0k"]].concat();

    // CA + name override + token: the handshake and the call succeed.
    let (ok, out, err) = mgz_at(&https, &with_token, &["put", input.to_str().unwrap()]);
    assert!(ok && out.contains("ok 2 "), "{out}{err}");
    // A bare host:port with --tls-ca means TLS too.
    let (ok, out, err) = mgz_at(&served.addr, &with_token, &["stats"]);
    assert!(ok && out.contains("\"size\":2"), "{out}{err}");
    // The name in the certificate is checked: the URL's IP is not in it.
    let (ok, _, err) = mgz_at(
        &https,
        &["--tls-ca", cert_arg, "--token", "t0k"],
        &["stats"],
    );
    assert!(!ok && err.contains("connecting to"), "{err}");
    // Without the CA the self-signed certificate is refused.
    let no_ca = ["--tls-domain", "localhost", "--token", "t0k"];
    let (ok, _, err) = mgz_at(&https, &no_ca, &["stats"]);
    assert!(!ok && err.to_lowercase().contains("certificate"), "{err}");
    // TLS alone is not enough: the token is still required.
    let (ok, _, err) = mgz_at(&https, &trusted, &["stats"]);
    assert!(!ok && err.contains("missing bearer token"), "{err}");
    // Plain text against the TLS port is not served.
    let plain = format!("http://{}", served.addr);
    let (ok, _, _) = mgz_at(&plain, &["--token", "t0k"], &["stats"]);
    assert!(!ok);
    // A CA with an http:// URL is a contradiction, said before connecting.
    let (ok, _, err) = mgz_at(&plain, &trusted, &["stats"]);
    assert!(!ok && err.contains("--tls-ca given"), "{err}");
}
