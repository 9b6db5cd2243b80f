//! `PlainUrl::check` agrees with `CanonicalUrl::parse` wherever it answers:
//! same text, host and key bytes, under both policies.
mod common;

use mgz_url::{CanonicalUrl, PlainUrl, Policy};
use proptest::prelude::*;

fn policies() -> [Policy; 2] {
    [Policy::safe(), Policy::aggressive()]
}

/// Checks `text` under every policy; returns how many policies took the
/// plain path.
fn agree(text: &str) -> Result<usize, String> {
    let mut plain = 0;
    for p in policies() {
        let Some(fast) = PlainUrl::check(text, &p) else {
            continue;
        };
        plain += 1;
        let full = CanonicalUrl::parse(text, None, &p)
            .map_err(|e| format!("{text:?}: plain, but the parser says {e}"))?;
        if (full.as_str(), full.host(), full.key_bytes())
            != (fast.as_str(), fast.host(), fast.key_bytes())
        {
            return Err(format!("{text:?}: plain {fast:?}, parsed {full:?}"));
        }
        if full.port().is_some() || (full.scheme() == "https") != fast.is_https() {
            return Err(format!("{text:?}: scheme or port differ"));
        }
    }
    Ok(plain)
}

/// Text near the plain shape: every byte class the check looks at, in
/// every part.
fn near_plain() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["http://", "https://", "HTTPS://", "http:/"]),
        "([a-z0-9]{1,4}|www|xn--a|a--b|-a|a-|[0-9]{1,3}|0x1f|[A-Z]|)([.][a-z0-9-]{0,5}){0,3}",
        prop::option::of(":[0-9]{0,3}"),
        "(/([a-zA-Z0-9._~!$&()*+,;=:@-]{0,6}|[.]|[.][.]|%2e|%7E|%41| |'|é|\\\\)){0,4}",
        prop::option::of("[a-z0-9=&?/'%#.]{0,8}"),
        prop::option::of("#[a-z]{0,3}"),
    )
        .prop_map(|(s, h, port, path, q, frag)| {
            let mut t = format!("{s}{h}{}{path}", port.unwrap_or_default());
            if let Some(q) = q {
                t.push('?');
                t.push_str(&q);
            }
            t.push_str(&frag.unwrap_or_default());
            t
        })
}

/// Text in the plain shape: the check must take it (under the safe policy).
fn plain_shaped() -> impl Strategy<Value = String> {
    (
        prop::bool::ANY,
        "[a-z0-9]{1,8}([.][a-z0-9]{1,8}){0,3}[.][a-z][a-z0-9]{0,4}",
        "(/[a-zA-Z0-9_~!$&()*+,;=:@-]{1,8}){0,5}/?",
        prop::option::of("[a-zA-Z0-9=&?/]{1,12}"),
    )
        .prop_map(|(https, host, path, q)| {
            let scheme = if https { "https" } else { "http" };
            let path = if path.is_empty() {
                "/".to_string()
            } else {
                path
            };
            match q {
                Some(q) => format!("{scheme}://{host}{path}?{q}"),
                None => format!("{scheme}://{host}{path}"),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn agrees_with_the_parser_near_the_shape(text in near_plain()) {
        agree(&text).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn agrees_on_arbitrary_text(text in any::<String>()) {
        agree(&text).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn takes_plain_shaped_text(text in plain_shaped()) {
        let plain = agree(&text).map_err(TestCaseError::fail)?;
        prop_assert!(plain >= 1, "{} not taken", text);
    }

    #[test]
    fn agrees_on_canonical_output(text in near_plain()) {
        for p in policies() {
            if let Ok(u) = CanonicalUrl::parse(&text, None, &p) {
                agree(u.as_str()).map_err(TestCaseError::fail)?;
            }
        }
    }
}

/// Every line of `name` and its canonical form: agreement, and the share
/// of canonical forms the check takes under the safe policy.
fn data_file(name: &str) -> Option<(usize, usize)> {
    let path = common::data_file(name)?;
    let (mut canonical, mut taken) = (0, 0);
    for line in common::lines(&path) {
        agree(&line).unwrap();
        if let Ok(u) = CanonicalUrl::parse(&line, None, &Policy::safe()) {
            agree(u.as_str()).unwrap();
            canonical += 1;
            taken += usize::from(PlainUrl::check(u.as_str(), &Policy::safe()).is_some());
        }
    }
    println!("{name}: {taken} of {canonical} canonical URLs plain");
    Some((canonical, taken))
}

#[test]
fn agrees_on_real_urls() {
    // The PostgreSQL hrefs are in this crate; the Wikipedia list only in
    // the shared data directory. Most PostgreSQL hrefs name the local
    // server (`127.0.0.1:8080`: an IP literal with a port, never plain).
    let (canonical, taken) = data_file("postgres-doc-hrefs.txt").expect("postgres-doc-hrefs.txt");
    assert!(
        canonical > 4000 && taken * 4 > canonical,
        "{taken} of {canonical}"
    );
    if let Some((canonical, taken)) = data_file("wiki-urls-10000") {
        assert!(
            canonical > 9000 && taken * 10 > canonical * 8,
            "{taken} of {canonical}"
        );
    }
}

#[test]
fn agrees_on_the_canonicalisation_vectors() {
    let path = common::data_file("canon_vectors.jsonl").expect("canon_vectors.jsonl");
    for line in common::lines(&path).iter().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        for field in ["input", "expected"] {
            if let Some(text) = v[field].as_str() {
                agree(text).unwrap();
            }
        }
    }
}
