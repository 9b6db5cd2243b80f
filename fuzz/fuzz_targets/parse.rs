//! Fuzzes `CanonicalUrl::parse` and everything derived from its output.
//!
//! Beyond "no panic", checks the crate's invariants on every accepted input:
//! idempotence, key round trip, that SURT/IA paths accept the result, that
//! `PlainUrl::check` (the parser-free path) agrees with the parser
//! wherever it answers, and that a host's queue key (`host_queue_key`, read
//! from the host's text) agrees with the registrable domain read from the
//! parsed host's type.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mgz_url::{
    CanonicalUrl, PlainUrl, Policy, QueueKeyKind, SurtOptions, host_queue_key, ia, surt,
};

fuzz_target!(|data: &[u8]| {
    let _ = CanonicalUrl::from_key_bytes(data);
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = ia::surt(text, SurtOptions::default());
    let _ = ia::google_canonicalize(text);
    let _ = host_queue_key(text, QueueKeyKind::RegistrableDomain);
    for policy in [Policy::safe(), Policy::aggressive()] {
        if let Some(plain) = PlainUrl::check(text, &policy) {
            let url = CanonicalUrl::parse(text, None, &policy).expect("plain text parses");
            assert_eq!(url.as_str(), plain.as_str(), "plain text changed: {text:?}");
            assert_eq!(url.host(), plain.host(), "plain host: {text:?}");
            assert_eq!(url.key_bytes(), plain.key_bytes(), "plain key: {text:?}");
        }
        let Ok(url) = CanonicalUrl::parse(text, None, &policy) else {
            continue;
        };
        let again = CanonicalUrl::parse(url.as_str(), None, &policy);
        assert_eq!(again.as_ref(), Ok(&url), "not idempotent: {text:?}");
        let back = CanonicalUrl::from_key_bytes(&url.key_bytes());
        assert_eq!(back.as_ref(), Ok(&url), "key round trip: {text:?}");
        let host = url.as_url().host_str().unwrap_or("");
        assert_eq!(host_queue_key(host, QueueKeyKind::Host), host);
        assert_eq!(
            host_queue_key(host, QueueKeyKind::RegistrableDomain),
            url.registrable_domain().unwrap_or(host),
            "queue key: {text:?}"
        );
        let _ = surt(&url, SurtOptions::default());
        let _ = CanonicalUrl::parse("../x?y#z", Some(&url), &policy);
    }
});
