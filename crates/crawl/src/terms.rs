//! Top terms of a page's visible text: lowercase words of 3–30 letters or
//! digits (not all digits), English stopwords removed, ranked by count then
//! alphabetically. Cost: one pass and a map of distinct words (bounded by the
//! text cap of the extractor).

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::LazyLock;

/// English stopwords (function words and very common verbs).
const STOPWORDS: &[&str] = &[
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "and",
    "any",
    "are",
    "aren",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "can",
    "cannot",
    "could",
    "did",
    "does",
    "doing",
    "don",
    "down",
    "during",
    "each",
    "else",
    "etc",
    "even",
    "ever",
    "every",
    "few",
    "for",
    "from",
    "further",
    "get",
    "got",
    "had",
    "has",
    "have",
    "having",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "however",
    "into",
    "isn",
    "its",
    "itself",
    "just",
    "let",
    "like",
    "made",
    "make",
    "many",
    "may",
    "more",
    "most",
    "much",
    "must",
    "myself",
    "never",
    "nor",
    "not",
    "now",
    "off",
    "once",
    "one",
    "only",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "see",
    "she",
    "should",
    "since",
    "some",
    "still",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "too",
    "under",
    "until",
    "upon",
    "use",
    "used",
    "using",
    "very",
    "was",
    "wasn",
    "way",
    "were",
    "weren",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "within",
    "without",
    "won",
    "would",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// `word` in one integer if it has at most 16 bytes, big-endian and
/// zero-padded so integer order is byte order (words hold no NUL).
fn packed(word: &str) -> Option<u128> {
    let b = word.as_bytes();
    (b.len() <= 16).then(|| {
        let mut k = [0u8; 16];
        k[..b.len()].copy_from_slice(b);
        u128::from_be_bytes(k)
    })
}

/// [`STOPWORDS`] packed: a lookup is ~8 integer compares instead of ~8
/// string compares (it runs once per distinct word of every page).
static STOP_KEYS: LazyLock<Vec<u128>> = LazyLock::new(|| {
    let mut keys: Vec<u128> = STOPWORDS.iter().filter_map(|w| packed(w)).collect();
    keys.sort_unstable();
    keys
});

fn is_stopword(word: &str) -> bool {
    packed(word).is_some_and(|k| STOP_KEYS.binary_search(&k).is_ok())
}

/// FxHash-style multiply-rotate hasher: the words are short and not chosen
/// by an attacker who gains anything from collisions (a page can only slow
/// its own ranking), so SipHash's cost buys nothing here.
#[derive(Default)]
struct WordHasher(u64);

impl std::hash::Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type Counts<'a> = HashMap<Cow<'a, str>, u32, BuildHasherDefault<WordHasher>>;

/// Whether `word` is a candidate term: 3–30 characters, not all digits.
fn candidate(word: &str) -> bool {
    let chars = if word.is_ascii() {
        word.len()
    } else {
        word.chars().count()
    };
    (3..=30).contains(&chars) && !word.bytes().all(|b| b.is_ascii_digit())
}

/// The maximal runs of characters of `text` that satisfy `keep`, like
/// `text.split(|c| !keep(c))` without the empty pieces, but deciding ASCII
/// bytes with `keep_ascii` (no UTF-8 decoding) and decoding only the
/// characters that start with a non-ASCII byte. `keep_ascii(b)` must equal
/// `keep(b as char)` for every ASCII `b`.
pub(crate) fn runs(
    text: &str,
    keep_ascii: fn(u8) -> bool,
    keep: fn(char) -> bool,
) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut i = 0;
    // Whether the character at `at` is kept, and its length.
    let class = move |at: usize| -> (bool, usize) {
        let b = bytes[at];
        if b.is_ascii() {
            return (keep_ascii(b), 1);
        }
        let c = text[at..].chars().next().unwrap_or(' ');
        (keep(c), c.len_utf8())
    };
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let (kept, len) = class(i);
            if kept {
                break;
            }
            i += len;
        }
        let start = i;
        while i < bytes.len() {
            let (kept, len) = class(i);
            if !kept {
                break;
            }
            i += len;
        }
        (i > start).then(|| &text[start..i])
    })
}

/// Runs of alphanumeric characters.
fn words(text: &str) -> impl Iterator<Item = &str> {
    runs(text, |b| b.is_ascii_alphanumeric(), char::is_alphanumeric)
}

/// `word` in lower case: borrowed when it already is, else written to `buf`
/// (ASCII) or allocated (other scripts, rare).
fn lowered<'w>(word: &'w str, buf: &'w mut String) -> Cow<'w, str> {
    if word.is_ascii() {
        if !word.bytes().any(|b| b.is_ascii_uppercase()) {
            return Cow::Borrowed(word);
        }
        buf.clear();
        buf.extend(word.bytes().map(|b| char::from(b.to_ascii_lowercase())));
        return Cow::Borrowed(buf.as_str());
    }
    if word.chars().any(char::is_uppercase) {
        Cow::Owned(word.to_lowercase())
    } else {
        Cow::Borrowed(word)
    }
}

/// The `n` most frequent content words of `text`. One pass; a word already
/// in lower case is counted by reference and a capitalised one is looked up
/// through a reused buffer, so the only allocations are one per distinct
/// capitalised word and the map (sized from the text up front); stopwords
/// are dropped from the distinct words at the end instead of being looked
/// up for every word.
pub fn top_terms(text: &str, n: usize) -> Vec<String> {
    let mut counts = Counts::with_capacity_and_hasher(text.len() / 24, Default::default());
    let mut buf = String::new();
    for word in words(text) {
        if !candidate(word) {
            continue;
        }
        match lowered(word, &mut buf) {
            // Already lower case (most words): one hash, counted by reference.
            Cow::Borrowed(k) if k.as_ptr() == word.as_ptr() => {
                *counts.entry(Cow::Borrowed(word)).or_insert(0) += 1;
            }
            k => match counts.get_mut(k.as_ref()) {
                Some(c) => *c += 1,
                None => {
                    counts.insert(Cow::Owned(k.into_owned()), 1);
                }
            },
        }
    }
    let mut ranked: Vec<(Cow<'_, str>, u32)> = counts
        .into_iter()
        .filter(|(w, _)| !is_stopword(w))
        .collect();
    let order = |a: &(Cow<'_, str>, u32), b: &(Cow<'_, str>, u32)| {
        b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0))
    };
    if ranked.len() > n && n > 0 {
        ranked.select_nth_unstable_by(n - 1, order);
        ranked.truncate(n);
    }
    ranked.sort_unstable_by(order);
    ranked
        .into_iter()
        .take(n)
        .map(|(w, _)| w.into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_sorted() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(STOP_KEYS.len(), STOPWORDS.len());
        assert!(STOPWORDS.iter().all(|w| is_stopword(w)));
        for w in [
            "th",
            "thei",
            "thex",
            "theirs1",
            "a",
            "",
            "zzzzzzzzzzzzzzzzzz",
        ] {
            assert!(!is_stopword(w), "{w}");
        }
    }

    #[test]
    fn ranks_content_words() {
        let t = "The crawler and the frontier: crawler, CRAWLER, frontier; the 2024 a of";
        assert_eq!(top_terms(t, 5), ["crawler", "frontier"]);
        assert!(top_terms("", 5).is_empty());
        assert_eq!(top_terms("Zürich zürich Ünïcode", 1), ["zürich"]);
        assert!(top_terms("crawler frontier", 0).is_empty());
    }

    /// The simple model: count every lowercased candidate, drop stopwords, sort.
    fn model(text: &str, n: usize) -> Vec<String> {
        let mut m: std::collections::BTreeMap<String, u32> = Default::default();
        for w in text.split(|c: char| !c.is_alphanumeric()) {
            let c = w.chars().count();
            if (3..=30).contains(&c) && !w.chars().all(|c| c.is_ascii_digit()) {
                let l = w.to_lowercase();
                if !is_stopword(&l) {
                    *m.entry(l).or_default() += 1;
                }
            }
        }
        let mut v: Vec<_> = m.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v.into_iter().take(n).map(|(w, _)| w).collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        #[test]
        fn runs_match_std_splitting(text in "[a-z0-9 \\t\\n\\x0b\\x0c\\r\\x1c\\u{85}\\u{a0}\\u{2003}\\u{3000}é’İ,.-]{0,40}") {
            let ws: Vec<&str> = runs(&text, |b| !(b as char).is_whitespace(), |c| !c.is_whitespace()).collect();
            proptest::prop_assert_eq!(ws, text.split_whitespace().collect::<Vec<_>>());
            let alnum: Vec<&str> = words(&text).collect();
            let std: Vec<&str> = text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
            proptest::prop_assert_eq!(alnum, std);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        #[test]
        fn matches_the_model(words in proptest::collection::vec("(the|and|Crawl|crawl|CRAWL|web|Web|zürich|ZÜRICH|1234|ab|abc|x{31}|data|Data|ĳssel|İstanbul|naïve|Naïve)", 0..60), seps in proptest::collection::vec("[ ,.;\\-\u{a0}\u{2014}é’]{1,3}", 60), n in 0usize..8) {
            let text: String = words.iter().zip(&seps).map(|(w, s)| format!("{w}{s}")).collect();
            proptest::prop_assert_eq!(top_terms(&text, n), model(&text, n));
        }
    }
}
