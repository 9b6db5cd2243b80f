//! A small cache of link targets already known to the frontier, so a link
//! that pages repeat (navigation, tables of contents) skips its
//! canonicalisation, scope and trap checks and its frontier put.
//!
//! ```text
//! slots: [u128; SLOTS]   direct-mapped by the key's low bits, 0 = empty
//! key = xxh3-128(base directory | 0xff | raw href), never 0
//! ```
//!
//! Why the base *directory*: against an http(s) base, WHATWG resolution of
//! an href that is not empty and does not start with `?` or `#` (after the
//! leading C0 controls and spaces the parser strips) uses only the base's
//! scheme, host, port and path up to its last `/`: the last segment, query
//! and fragment of the base are dropped. So every page of one directory
//! resolves a given href to the same URL, and the pair names the result.
//! Hrefs that keep part of the base (`""`, `?q`, `#f`) are not cached.
//!
//! Invariants: a key is inserted only after the frontier answered its URL
//! `New`, `Seen` or `Updated`, and the frontier never forgets a URL during a
//! crawl; scope, patterns and traps depend on the URL alone. So a cached
//! pair is a link the crawl would again find known: skipping it changes
//! nothing but the work (it is counted as a duplicate, as the frontier's
//! answer would be). Only page links use it (`discover` with a base):
//! redirects need the known target back (to lower its depth).
//! A 128-bit key collision would skip a new URL; at 2^-128 per pair that is
//! far below the frontier's own `fingerprint` bound (2^-36 per lookup).
//!
//! Memory: `SLOTS` × 16 bytes (64 KiB), fixed. An evicted pair costs one
//! canonicalisation and one frontier put the next time it is seen.

use std::sync::Mutex;

use xxhash_rust::xxh3::Xxh3;

/// Slots of the cache (a power of two).
pub const SLOTS: usize = 4096;

/// Link targets known to the frontier, by (base directory, raw href).
pub struct KnownLinks {
    slots: Mutex<Box<[u128]>>,
}

impl Default for KnownLinks {
    fn default() -> Self {
        KnownLinks {
            slots: Mutex::new(vec![0u128; SLOTS].into_boxed_slice()),
        }
    }
}

/// The part of an http(s) `base` that resolution of a directory-relative
/// or absolute href depends on: up to the last `/` of its path. `None` for
/// other schemes.
pub fn base_dir(base: &url::Url) -> Option<&str> {
    if !matches!(base.scheme(), "http" | "https") {
        return None;
    }
    let upto_path = &base[..url::Position::AfterPath];
    let at = upto_path.rfind('/')?;
    Some(&upto_path[..=at])
}

/// The cache key of `href` against a base of directory `dir`, or `None`
/// when its result depends on more of the base (see the module docs).
pub fn key(dir: &str, href: &str) -> Option<u128> {
    // The parser strips leading C0 controls and spaces (tabs and newlines
    // among them) before it looks at the first character.
    let first = href.trim_start_matches(|c: char| c <= ' ').chars().next()?;
    if matches!(first, '?' | '#') {
        return None;
    }
    let mut h = Xxh3::new();
    h.update(dir.as_bytes());
    h.update(&[0xff]);
    h.update(href.as_bytes());
    Some(h.digest128().max(1))
}

impl KnownLinks {
    fn lock(&self) -> std::sync::MutexGuard<'_, Box<[u128]>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Which of `keys` are cached (`None` keys never are).
    pub fn contains_each(&self, keys: &[Option<u128>]) -> Vec<bool> {
        let slots = self.lock();
        keys.iter()
            .map(|k| k.is_some_and(|k| slots[k as usize & (SLOTS - 1)] == k))
            .collect()
    }

    /// Caches `keys` (replacing whatever shared their slots).
    pub fn insert_all(&self, keys: impl IntoIterator<Item = u128>) {
        let mut slots = self.lock();
        for k in keys {
            slots[k as usize & (SLOTS - 1)] = k;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(base: &str, href: &str) -> String {
        url::Url::parse(base)
            .unwrap()
            .join(href)
            .unwrap()
            .to_string()
    }

    #[test]
    fn pages_of_one_directory_share_keys_that_resolve_alike() {
        let bases = [
            "http://h.sim/docs/a.html",
            "http://h.sim/docs/b.html?x=1#top",
            "http://h.sim/docs/",
        ];
        let hrefs = [
            "c.html",
            "../up.html",
            "/root.html",
            "sub/d.html?q=2#f",
            "//other.sim/x",
            "https://abs.sim/y",
            "\t\n c.html",
            "\\back.html",
        ];
        let dirs: Vec<&str> = bases
            .iter()
            .map(|b| {
                let u = url::Url::parse(b).unwrap();
                let d = base_dir(&u).unwrap().to_string();
                &*Box::leak(d.into_boxed_str())
            })
            .collect();
        assert!(dirs.iter().all(|d| *d == "http://h.sim/docs/"));
        for href in hrefs {
            let k = key(dirs[0], href).expect("cacheable");
            let results: Vec<String> = bases.iter().map(|b| resolve(b, href)).collect();
            assert!(
                results.iter().all(|r| *r == results[0]),
                "{href}: {results:?}"
            );
            assert!(dirs.iter().all(|d| key(d, href) == Some(k)));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// The model: the url crate's own resolution. Whenever `key` caches
        /// an href, every page of the directory (any last segment, query,
        /// fragment) resolves it to one result (or fails alike), and
        /// canonicalisation agrees too.
        #[test]
        fn a_cached_href_resolves_alike_from_every_page_of_its_directory(
            href in "[ a-z0-9./?#:%@\\\t\n&=;-]{0,16}",
            page in "([a-z0-9][a-z0-9.]{0,5})?",
            query in proptest::option::of("[a-z=&]{0,5}"),
            frag in proptest::option::of("[a-z]{0,4}"),
            https in proptest::bool::ANY,
        ) {
            let scheme = if https { "https" } else { "http" };
            let dir_url = format!("{scheme}://h.sim/d1/d2/");
            let mut other = format!("{dir_url}{page}");
            if let Some(q) = &query {
                other.push('?');
                other.push_str(q);
            }
            if let Some(f) = &frag {
                other.push('#');
                other.push_str(f);
            }
            let a = url::Url::parse(&dir_url).unwrap();
            let b = url::Url::parse(&other).unwrap();
            proptest::prop_assert_eq!(base_dir(&a), base_dir(&b));
            let dir = base_dir(&a).unwrap();
            if key(dir, &href).is_some() {
                let (ra, rb) = (a.join(&href).ok(), b.join(&href).ok());
                proptest::prop_assert_eq!(&ra, &rb, "{:?} against {} and {}", href, a, b);
                let policy = mgz_url::Policy::default();
                let ca = mgz_url::CanonicalUrl::parse(a.as_str(), None, &policy).ok();
                let cb = mgz_url::CanonicalUrl::parse(b.as_str(), None, &policy).ok();
                if let (Some(ca), Some(cb)) = (ca, cb) {
                    let ka = mgz_url::CanonicalUrl::parse(&href, Some(&ca), &policy).ok();
                    let kb = mgz_url::CanonicalUrl::parse(&href, Some(&cb), &policy).ok();
                    proptest::prop_assert_eq!(
                        ka.as_ref().map(|u| u.as_str()),
                        kb.as_ref().map(|u| u.as_str())
                    );
                }
            }
        }
    }

    #[test]
    fn hrefs_that_keep_part_of_the_base_are_not_cached() {
        for href in ["", "   ", "?q=1", "#frag", " \t?q", "\n#f"] {
            assert_eq!(key("http://h.sim/docs/", href), None, "{href:?}");
        }
        // And they do resolve differently across one directory's pages.
        assert_ne!(
            resolve("http://h.sim/docs/a.html", "?q=1"),
            resolve("http://h.sim/docs/b.html", "?q=1")
        );
        let other = url::Url::parse("mailto:someone@h.sim").unwrap();
        assert_eq!(base_dir(&other), None);
        let ftp = url::Url::parse("ftp://h.sim/a/b").unwrap();
        assert_eq!(base_dir(&ftp), None);
    }

    #[test]
    fn different_directories_or_hrefs_get_different_keys() {
        let a = key("http://h.sim/a/", "x.html").unwrap();
        assert_ne!(Some(a), key("http://h.sim/b/", "x.html"));
        assert_ne!(Some(a), key("http://h.sim/a/", "y.html"));
        assert_ne!(Some(a), key("https://h.sim/a/", "x.html"));
    }

    #[test]
    fn the_cache_answers_what_was_inserted_until_its_slot_is_reused() {
        let c = KnownLinks::default();
        let k1 = key("http://h.sim/", "a").unwrap();
        let k2 = key("http://h.sim/", "b").unwrap();
        assert_eq!(c.contains_each(&[Some(k1), Some(k2), None]), [false; 3]);
        c.insert_all([k1]);
        assert_eq!(
            c.contains_each(&[Some(k1), Some(k2), None]),
            [true, false, false]
        );
        // A key sharing k1's slot replaces it.
        let clash = (k1 & !(SLOTS as u128 - 1)) ^ (1 << 100) | (k1 & (SLOTS as u128 - 1));
        c.insert_all([clash]);
        assert_eq!(c.contains_each(&[Some(k1), Some(clash)]), [false, true]);
    }
}
