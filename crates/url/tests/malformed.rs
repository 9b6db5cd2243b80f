//! Malformed and edge-case inputs: each gets its typed error, never a panic.

use mgz_url::{CanonicalUrl, Policy, UrlError};

fn safe(text: &str) -> Result<CanonicalUrl, UrlError> {
    CanonicalUrl::parse(text, None, &Policy::safe())
}

fn ok(text: &str) -> String {
    safe(text)
        .unwrap_or_else(|e| panic!("{text:?}: {e}"))
        .to_string()
}

#[test]
fn typed_errors() {
    assert_eq!(safe(""), Err(UrlError::Empty));
    assert_eq!(safe(" \t\n "), Err(UrlError::Empty));
    assert_eq!(
        safe("http://exa mple.com/"),
        Err(UrlError::WhitespaceInHost)
    );
    assert_eq!(safe("http://a%20b.com/"), Err(UrlError::WhitespaceInHost));
    assert_eq!(
        safe("http://a.com/\u{7}x"),
        Err(UrlError::ControlCharacter {
            byte: 7,
            offset: 13
        })
    );
    assert_eq!(
        safe("http://a.com/\u{7f}"),
        Err(UrlError::ControlCharacter {
            byte: 0x7f,
            offset: 13
        })
    );
    assert_eq!(safe("http://a.com:99999/"), Err(UrlError::InvalidPort));
    assert_eq!(safe("http://a.com:8o/"), Err(UrlError::InvalidPort));
    assert_eq!(safe("http://xn--a.com/"), Err(UrlError::InvalidIdna));
    assert_eq!(safe("/relative/path"), Err(UrlError::RelativeWithoutBase));
    assert_eq!(safe("http://"), Err(UrlError::MissingHost));
    assert_eq!(safe("http://.../"), Err(UrlError::MissingHost));
    assert!(matches!(
        safe("http://[::1/"),
        Err(UrlError::InvalidHost { .. })
    ));
    assert!(matches!(
        safe("http://256.256.256.256/"),
        Err(UrlError::InvalidHost { .. })
    ));
    for scheme in [
        "ftp://a.com/",
        "mailto:a@b.c",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "data:,x",
    ] {
        assert!(
            matches!(safe(scheme), Err(UrlError::UnsupportedScheme { .. })),
            "{scheme}"
        );
    }
}

#[test]
fn length_limit_is_configurable() {
    let long = format!("http://a.com/{}", "x".repeat(2100));
    assert_eq!(
        safe(&long),
        Err(UrlError::TooLong {
            len: 2113,
            limit: 2048
        })
    );
    let roomy = Policy::safe().with_max_len(4096);
    assert!(CanonicalUrl::parse(&long, None, &roomy).is_ok());
    // The limit applies after canonicalisation: `%7E` → `~` shrinks.
    let escaped = format!("http://a.com/{}", "%7E".repeat(700));
    assert_eq!(safe(&escaped).map(|u| u.as_str().len()), Ok(713));
}

#[test]
fn safe_rules() {
    assert_eq!(
        ok("HTTPS://User:Pw@WWW.Example.COM.:443/a/../B/./c?#x"),
        "https://www.example.com/B/c"
    );
    assert_eq!(ok("http://a.com"), "http://a.com/");
    assert_eq!(
        ok("http://a.com/%7euser/%2f%3f%23%26?q=%7e%2f"),
        "http://a.com/~user/%2F%3F%23%26?q=~%2F"
    );
    assert_eq!(ok("http://a.com/A/b/?b=1&a=2"), "http://a.com/A/b/?b=1&a=2");
    assert_eq!(
        ok("http://B\u{fc}cher.example/"),
        "http://xn--bcher-kva.example/"
    );
    assert_eq!(ok("http://0x7f.1/"), "http://127.0.0.1/");
    assert_eq!(ok("http://[0:0::1]:8080"), "http://[::1]:8080/");
    assert_eq!(ok("http://a.com/caf\u{e9} x"), "http://a.com/caf%C3%A9%20x");
    assert_eq!(ok("http://a.com/x?"), "http://a.com/x");
    assert_eq!(ok("http://a.com/x?#"), "http://a.com/x");
}

#[test]
fn aggressive_rules() {
    let p = Policy::aggressive();
    let c = |t: &str| CanonicalUrl::parse(t, None, &p).unwrap().to_string();
    assert_eq!(
        c("http://www3.Example.com/A%2fB;JSESSIONID=abc?utm_medium=m&b=1&a=2&fbclid=1"),
        "http://example.com/a%2Fb?a=2&b=1"
    );
    assert_eq!(c("http://www.com/?sid=1"), "http://www.com/");
    assert_eq!(c("http://wwwfoo.com/"), "http://wwwfoo.com/");
}

#[test]
fn resolves_against_a_base() {
    let base = safe("http://a.com/dir/page.html?q").unwrap();
    let r = |t: &str| CanonicalUrl::parse(t, Some(&base), &Policy::safe()).map(|u| u.to_string());
    assert_eq!(r("other.html#x"), Ok("http://a.com/dir/other.html".into()));
    assert_eq!(r("../up/%7e"), Ok("http://a.com/up/~".into()));
    assert_eq!(r("//B.com"), Ok("http://b.com/".into()));
    assert_eq!(r("?x=1"), Ok("http://a.com/dir/page.html?x=1".into()));
    assert_eq!(
        r("mailto:x@y.z"),
        Err(UrlError::UnsupportedScheme {
            scheme: "mailto".into()
        })
    );
    assert_eq!(r(""), Err(UrlError::Empty));
}
