//! The 54 canonicalisation vectors of `shared/data/canon_vectors.jsonl`.
mod common;

use mgz_url::{CanonicalUrl, Policy, SurtOptions, ia};

struct Vector {
    kind: String,
    input: String,
    expected: String,
}

fn vectors() -> Vec<Vector> {
    let path = common::data_file("canon_vectors.jsonl").expect("canon_vectors.jsonl not found");
    println!("vectors from {}", path.display());
    common::lines(&path)
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("vector is JSON");
            let field = |k: &str| v[k].as_str().expect("string field").to_string();
            Vector {
                kind: field("kind"),
                input: field("input"),
                expected: field("expected"),
            }
        })
        .collect()
}

/// Google vectors where `Policy::safe()` differs by design, with what safe
/// gives instead (`Err:` + the error's Display) and why.
const SAFE_DIFFERS: [(&str, &str, &str); 17] = [
    (
        "http://host/%25%32%35",
        "http://host/%2525",
        "`%25` is reserved: decoding once, not repeatedly",
    ),
    (
        "http://host/%25%32%35%25%32%35",
        "http://host/%2525%2525",
        "no repeated decoding",
    ),
    (
        "http://host/%2525252525252525",
        "http://host/%2525252525252525",
        "no repeated decoding",
    ),
    (
        "http://host/asdf%25%32%35asd",
        "http://host/asdf%2525asd",
        "no repeated decoding",
    ),
    (
        "http://host/%%%25%32%35asd%%",
        "http://host/%25%25%2525asd%25%25",
        "lone `%` → `%25`, no repeated decoding",
    ),
    (
        "http://host%23.com/%257Ea%2521b%2540c%2523d%2524e%25f%255E00%252611%252A22%252833%252944_55%252B",
        "Err:invalid host: forbidden character",
        "`#` is forbidden in a host",
    ),
    (
        "www.google.com/",
        "Err:relative URL without a base (no scheme)",
        "a scheme is required",
    ),
    (
        "www.google.com",
        "Err:relative URL without a base (no scheme)",
        "a scheme is required",
    ),
    (
        "http://www.google.com/q?",
        "http://www.google.com/q",
        "an empty `?` is dropped",
    ),
    (
        "http://\u{1}\u{80}.com/",
        "Err:control character 0x01 at byte 7",
        "control characters are rejected",
    ),
    (
        "Bücher.ch:8080",
        "Err:relative URL without a base (no scheme)",
        "a scheme is required",
    ),
    (
        "☃.com",
        "Err:relative URL without a base (no scheme)",
        "a scheme is required",
    ),
    (
        "http://www.t%EF%BF%BD%04.82.net/",
        "Err:invalid internationalised domain name",
        "U+FFFD and U+0004 are not valid in a host",
    ),
    (
        "http:// leadingspace.com/",
        "Err:whitespace inside the host",
        "whitespace in a host is rejected",
    ),
    (
        "http://%20leadingspace.com/",
        "Err:whitespace inside the host",
        "whitespace in a host is rejected",
    ),
    (
        "%20leadingspace.com/",
        "Err:relative URL without a base (no scheme)",
        "a scheme is required",
    ),
    (
        "http://host.com//twoslashes?more//slashes",
        "http://host.com//twoslashes?more//slashes",
        "empty path segments can name other resources",
    ),
];

fn safe_outcome(input: &str) -> String {
    match CanonicalUrl::parse(input, None, &Policy::safe()) {
        Ok(u) => u.to_string(),
        Err(e) => format!("Err:{e}"),
    }
}

#[test]
fn there_are_54_vectors() {
    let all = vectors();
    assert_eq!(all.len(), 54);
    assert_eq!(
        all.iter().filter(|v| v.kind == "google-canonical").count(),
        37
    );
    assert_eq!(all.iter().filter(|v| v.kind == "surt-default").count(), 17);
}

#[test]
fn google_vectors_pass_in_google_mode() {
    for v in vectors().iter().filter(|v| v.kind == "google-canonical") {
        let got = ia::google_canonicalize(&v.input);
        assert_eq!(
            got.as_deref(),
            Ok(v.expected.as_str()),
            "input {:?}",
            v.input
        );
    }
}

#[test]
fn google_vectors_under_safe_pass_or_differ_as_documented() {
    let mut agreed = 0;
    for v in vectors().iter().filter(|v| v.kind == "google-canonical") {
        let got = safe_outcome(&v.input);
        let differs = SAFE_DIFFERS.iter().find(|(input, _, _)| *input == v.input);
        match (differs, v.input.as_str()) {
            (Some((_, want, why)), _) => assert_eq!(&got, want, "{:?} ({why})", v.input),
            // `mailto:` is not crawlable; Google keeps it as is.
            (None, "mailto:foo@example.com") => assert!(got.starts_with("Err:unsupported scheme")),
            (None, _) => {
                assert_eq!(got, v.expected, "input {:?}", v.input);
                agreed += 1;
            }
        }
    }
    println!("safe agrees with Google on {agreed} of 37 vectors");
    assert_eq!(agreed, 37 - SAFE_DIFFERS.len() - 1);
}

#[test]
fn surt_default_vectors_pass_in_ia_mode() {
    for v in vectors().iter().filter(|v| v.kind == "surt-default") {
        let got = ia::surt(&v.input, SurtOptions::default());
        assert_eq!(
            got.as_deref(),
            Ok(v.expected.as_str()),
            "input {:?}",
            v.input
        );
    }
}
