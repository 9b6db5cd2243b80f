//! `mgz_url::ia::surt` against the Python `surt` package on real URLs.
//!
//! Runs when a Python venv with `surt` is found: `$MGZ_VENV`, else
//! `<repo>/.venv` (CI creates it from `.ci/requirements.txt`). Otherwise the
//! test prints why it skipped and passes.
mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mgz_url::{SurtOptions, ia};

/// Prints `surt.surt(line, **opts)` per input line, `EXC\t<type>` on error.
const SCRIPT: &str = r#"
import json, sys
import surt
opts = json.loads(sys.argv[1])
for line in sys.stdin.buffer:
    url = line.rstrip(b"\n").decode("utf-8")
    try:
        out = surt.surt(url, **opts)
    except Exception as e:
        out = "EXC\t" + type(e).__name__
    sys.stdout.write(out.replace("\n", "\\n") + "\n")
"#;

fn python() -> Result<PathBuf, String> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let venv = match std::env::var_os("MGZ_VENV") {
        Some(v) => PathBuf::from(v),
        None => repo.join(".venv"),
    };
    let py = venv.join("bin/python");
    let ok = Command::new(&py)
        .args(["-c", "import surt"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Ok(py)
    } else {
        Err(format!(
            "no Python with `surt` at {} (set MGZ_VENV or create <repo>/.venv)",
            py.display()
        ))
    }
}

fn run_python(py: &Path, opts_json: &str, urls: &[String]) -> Vec<String> {
    let mut child = Command::new(py)
        .args(["-c", SCRIPT, opts_json])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawning python");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = urls.join("\n") + "\n";
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("python output");
    writer
        .join()
        .expect("writer thread")
        .expect("writing to python");
    assert!(out.status.success(), "python failed");
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(str::to_string)
        .collect()
}

/// Real URLs plus variants that exercise the IA rules.
fn corpus() -> Vec<String> {
    let mut urls = common::lines(&common::data_file("postgres-doc-hrefs.txt").expect("hrefs"));
    match common::data_file("wiki-urls-10000") {
        Some(wiki) => urls.extend(common::lines(&wiki)),
        None => println!("wiki-urls-10000 not found (set MGZ_SHARED); using postgres hrefs only"),
    }
    let variants: Vec<String> = urls
        .iter()
        .step_by(7)
        .enumerate()
        .map(|(i, u)| variant(i, u))
        .collect();
    urls.extend(variants);
    urls
}

/// Synthetic URLs assembled from awkward pieces (deterministic LCG).
fn synthetic(n: usize) -> Vec<String> {
    const SCHEMES: [&str; 7] = [
        "http://",
        "https://",
        "HTTP://",
        "",
        "http:////",
        "ftp://",
        "dns:",
    ];
    const HOSTS: [&str; 12] = [
        "www.Example.com",
        "www12.a.org",
        "3279880203",
        "010.1.1.1",
        "1.2.3",
        "[::1]",
        "B%C3%BCcher.ch",
        "a..b...c.",
        "host%23.com",
        "user:pw@x.com",
        "xn--n3h.com",
        "wwwx.y.z",
    ];
    const PORTS: [&str; 6] = ["", ":80", ":443", ":8080", ":", ":0"];
    const PATHS: [&str; 10] = [
        "",
        "/",
        "/A/./b/../C/",
        "//x//y",
        "/%7e%2F%252F",
        "/(a(0123456789abcdefghijklmn))/p.aspx",
        "/caf%C3%A9/é",
        "/a%zz%",
        "/.../x",
        "/INDEX.PHP/",
    ];
    const QUERIES: [&str; 8] = [
        "",
        "?",
        "?b=2&a=1&A",
        "?sid=0123456789abcdefABCDEF0123456789&x",
        "?cfid=1&cftoken=2",
        "?ASPSESSIONIDabcdefgh=abcdefghijklmnopqrstuvwx",
        "?q=%41%2f&&z",
        "?utm_source=x&a=%20b",
    ];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut pick = |len: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize % len
    };
    (0..n)
        .map(|_| {
            let frag = if pick(3) == 0 { "#f" } else { "" };
            format!(
                "{}{}{}{}{}{frag}",
                SCHEMES[pick(SCHEMES.len())],
                HOSTS[pick(HOSTS.len())],
                PORTS[pick(PORTS.len())],
                PATHS[pick(PATHS.len())],
                QUERIES[pick(QUERIES.len())]
            )
        })
        .collect()
}

fn variant(i: usize, url: &str) -> String {
    let sid = "0123456789ABCDEFabcdef0123456789";
    match i % 6 {
        0 => url.to_uppercase(),
        1 => url
            .replacen("://", "://www3.", 1)
            .replacen(".org/", ".org:80/", 1),
        2 => format!("{url}?z=1&B=2&jsessionid={sid}&a"),
        3 => format!("{url}/./x/../%7Ey/"),
        4 => format!("  {url}?PHPSESSID={sid}#frag"),
        _ => url
            .replacen("https://", "https://https://", 1)
            .replacen("/", "//", 3),
    }
}

#[test]
fn agrees_with_python_surt() {
    let py = match python() {
        Ok(py) => py,
        Err(reason) => {
            println!("SKIPPED agrees_with_python_surt: {reason}");
            return;
        }
    };
    let real = corpus();
    let urls: Vec<String> = real.iter().cloned().chain(synthetic(3000)).collect();
    println!("{} real URLs and variants, 3000 synthetic", real.len());
    let option_sets = [
        ("{}", SurtOptions::default()),
        (
            r#"{"with_scheme": true, "trailing_comma": true}"#,
            SurtOptions::default()
                .with_scheme(true)
                .trailing_comma(true),
        ),
        (
            r#"{"host_massage": false}"#,
            SurtOptions::default().host_massage(false),
        ),
    ];
    for (json, opts) in option_sets {
        let want = run_python(&py, json, &urls);
        assert_eq!(want.len(), urls.len());
        let mut differ = Vec::new();
        for (url, want) in urls.iter().zip(&want) {
            let got = match ia::surt(url, opts) {
                Ok(s) => s,
                Err(_) => "EXC".to_string(),
            };
            let same = got == *want || (got == "EXC" && want.starts_with("EXC\t"));
            if !same {
                differ.push((url, got, want));
            }
        }
        let agree = urls.len() - differ.len();
        println!(
            "surt {json}: {agree}/{} agree ({:.3}%)",
            urls.len(),
            100.0 * agree as f64 / urls.len() as f64
        );
        for (url, got, want) in differ.iter().take(10) {
            println!("  {url:?}\n    rust   {got:?}\n    python {want:?}");
        }
        assert!(
            differ.is_empty(),
            "{} URLs differ from Python surt",
            differ.len()
        );
    }
}
