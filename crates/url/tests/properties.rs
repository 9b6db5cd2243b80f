//! Property tests: canonicalisation is idempotent, never panics, collapses
//! spellings of one URL and keeps different URLs apart.

use mgz_url::{CanonicalUrl, Policy, SurtOptions, ia, surt};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    }
}

/// URL-ish text: mostly valid shapes with awkward characters mixed in.
fn urlish() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![
            "http://", "https://", "HTTP://", "ftp://", "", "//", "http:",
        ]),
        "[a-zA-Z0-9.%\\-\\[\\]:@_~ ]{0,20}",
        prop::option::of("[0-9]{0,6}"),
        "(/[a-zA-Z0-9%./;=&?#~ \\t\u{e9}\u{2603}-]{0,12}){0,4}",
    )
        .prop_map(|(s, h, p, rest)| match p {
            Some(p) => format!("{s}{h}:{p}{rest}"),
            None => format!("{s}{h}{rest}"),
        })
}

fn parse(text: &str, policy: &Policy) -> Result<CanonicalUrl, mgz_url::UrlError> {
    CanonicalUrl::parse(text, None, policy)
}

fn policies() -> [Policy; 2] {
    [Policy::safe(), Policy::aggressive()]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn never_panics_on_arbitrary_strings(text in any::<String>()) {
        for p in policies() {
            let _ = parse(&text, &p);
        }
        let _ = ia::surt(&text, SurtOptions::default());
        let _ = ia::google_canonicalize(&text);
        let _ = CanonicalUrl::from_key_bytes(text.as_bytes());
    }

    #[test]
    fn idempotent_and_keys_round_trip(text in urlish()) {
        for p in policies() {
            if let Ok(u) = parse(&text, &p) {
                let again = parse(u.as_str(), &p).expect("canonical text parses");
                prop_assert_eq!(&again, &u);
                prop_assert_eq!(CanonicalUrl::from_key_bytes(&u.key_bytes()), Ok(u.clone()));
                let _ = surt(&u, SurtOptions::default());
            }
        }
    }

    #[test]
    fn base_resolution_is_idempotent(text in urlish(), base in "[a-z]{1,5}/[a-z]{0,3}") {
        let base = parse(&format!("http://b.example/{base}"), &Policy::safe()).unwrap();
        if let Ok(u) = CanonicalUrl::parse(&text, Some(&base), &Policy::safe()) {
            prop_assert_eq!(parse(u.as_str(), &Policy::safe()), Ok(u.clone()));
        }
    }
}

/// A plain URL and its parts, for variant tests.
#[derive(Debug, Clone)]
struct Plain {
    https: bool,
    host: String,
    path: String,
    query: String,
}

impl Plain {
    fn scheme(&self) -> &str {
        if self.https { "https" } else { "http" }
    }
    fn text(&self) -> String {
        format!(
            "{}://{}{}{}",
            self.scheme(),
            self.host,
            self.path,
            self.query
        )
    }
}

fn plain() -> impl Strategy<Value = Plain> {
    (
        any::<bool>(),
        "[a-z][a-z0-9]{0,6}(\\.[a-z][a-z0-9]{0,6}){1,3}",
        "(/[a-zA-Z0-9_~-]{1,6}){1,3}",
        prop::option::of("[a-z]{1,3}=[a-z0-9]{0,3}&[a-z]{1,3}=[a-z0-9]{0,3}"),
    )
        .prop_map(|(https, host, path, q)| Plain {
            https,
            host,
            path,
            query: q.map(|q| format!("?{q}")).unwrap_or_default(),
        })
}

fn safe(text: &str) -> CanonicalUrl {
    parse(text, &Policy::safe()).expect("plain URL parses")
}

/// `/` and `~` written as escapes, in lower or upper hex.
fn escape_variant(path: &str, upper: bool) -> String {
    let (slash, tilde) = if upper {
        ("%2F", "%7E")
    } else {
        ("%2f", "%7e")
    };
    format!("{path}{slash}{tilde}")
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn spellings_of_one_url_collapse(u in plain(), mask in any::<u64>()) {
        let base = safe(&u.text());
        let host_case: String = u.host.chars().enumerate()
            .map(|(i, c)| if mask >> (i % 64) & 1 == 1 { c.to_ascii_uppercase() } else { c })
            .collect();
        let port = if u.https { ":443" } else { ":80" };
        let variants = [
            format!("{}://{host_case}{}{}", u.scheme(), u.path, u.query),
            format!("{}://{}{port}{}{}", u.scheme(), u.host, u.path, u.query),
            format!("{}#frag{}", u.text(), mask),
            format!("{}://{}/./x/..{}{}", u.scheme(), u.host, u.path, u.query),
        ];
        for v in variants {
            prop_assert_eq!(&safe(&v), &base, "{}", v);
        }
        let lower = safe(&format!("{}://{}{}", u.scheme(), u.host, escape_variant(&u.path, false)));
        let upper = safe(&format!("{}://{}{}", u.scheme(), u.host, escape_variant(&u.path, true)));
        prop_assert_eq!(&lower, &upper);
        prop_assert!(lower.path().ends_with("%2F~"), "{}", lower);
    }

    #[test]
    fn different_urls_stay_apart(u in plain(), port in 1u16..65535) {
        let base = safe(&u.text());
        let key = base.key_bytes();
        let mut others = vec![
            format!("{}://{}{}/{}", u.scheme(), u.host, u.path, u.query),
            format!("{}://{}{}", if u.https { "http" } else { "https" }, u.host, &u.text()[u.scheme().len() + 3 + u.host.len()..]),
        ];
        let default = if u.https { 443 } else { 80 };
        if port != default {
            others.push(format!("{}://{}:{port}{}{}", u.scheme(), u.host, u.path, u.query));
        }
        if u.path.chars().any(|c| c.is_ascii_lowercase()) {
            others.push(format!("{}://{}{}{}", u.scheme(), u.host, u.path.to_uppercase(), u.query));
        }
        if let Some((a, b)) = u.query.trim_start_matches('?').split_once('&') && a != b {
            others.push(format!("{}://{}{}?{b}&{a}", u.scheme(), u.host, u.path));
        }
        for o in others {
            let other = safe(&o);
            prop_assert_ne!(&other, &base, "{}", o);
            prop_assert_ne!(other.key_bytes(), key.clone(), "{}", o);
        }
    }
}

#[test]
fn aggressive_merges_what_safe_keeps_apart() {
    let a = "http://www.Ex.com/A/b?z=1&a=2&utm_source=x&PHPSESSID=1";
    let b = "http://ex.com/a/B?a=2&z=1";
    assert_ne!(safe(a), safe(b));
    let p = Policy::aggressive();
    assert_eq!(parse(a, &p).unwrap(), parse(b, &p).unwrap());
    assert_eq!(parse(a, &p).unwrap().as_str(), "http://ex.com/a/b?a=2&z=1");
}
