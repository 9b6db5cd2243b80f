//! Top terms of a page's visible text: lowercase words of 3–30 letters or
//! digits (not all digits), English stopwords removed, ranked by count then
//! alphabetically. Cost: one pass and a map of distinct words (bounded by the
//! text cap of the extractor).

use std::borrow::Cow;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::sync::LazyLock;

use crate::swar::{HIGH, ONES, in_range};

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

/// [`STOPWORDS`] packed (all are ASCII and at most 16 bytes): the distinct
/// words of a page are checked once each, one integer hash apiece (a binary
/// search per word was a sixth of `top_terms`).
static STOP_SET: LazyLock<HashSet<u128, BuildHasherDefault<WordHasher>>> =
    LazyLock::new(|| STOPWORDS.iter().filter_map(|w| packed(w)).collect());

fn is_stopword(word: &str) -> bool {
    packed(word).is_some_and(|k| STOP_SET.contains(&k))
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
    /// Packed words: one folded multiply of the two halves (the low half
    /// is all padding for words of up to 8 bytes, so a plain
    /// multiply-rotate would leave the table's low bits poorly mixed).
    fn write_u128(&mut self, v: u128) {
        let lo = (v as u64) ^ self.0 ^ 0x243f_6a88_85a3_08d3;
        let hi = ((v >> 64) as u64) ^ 0x1319_8a2e_0370_7344;
        let m = u128::from(lo) * u128::from(hi);
        self.0 = (m as u64) ^ ((m >> 64) as u64);
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

/// A counted word in lower case: packed into one integer when it is ASCII
/// and at most 16 bytes (most words: one integer to hash and compare, no
/// string), else its text.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Word<'a> {
    Packed(u128),
    Text(Cow<'a, str>),
}

impl Word<'_> {
    /// The word's bytes; a packed word is unpacked into `buf`.
    fn bytes<'s>(&'s self, buf: &'s mut [u8; 16]) -> &'s [u8] {
        match self {
            Word::Packed(k) => {
                *buf = k.to_be_bytes();
                // Zero padding after the last byte (words hold no NUL).
                &buf[..16 - (k.trailing_zeros() / 8) as usize]
            }
            Word::Text(t) => t.as_bytes(),
        }
    }
}

/// Word counts: packed words and the others apart (two maps, so the common
/// case hashes one integer).
struct Tally<'a> {
    packed: HashMap<u128, u32, BuildHasherDefault<WordHasher>>,
    text: Counts<'a>,
    buf: String,
}

impl<'a> Tally<'a> {
    /// Counts `word` (any characters) if it is a candidate.
    fn general(&mut self, word: &'a str) {
        if !candidate(word) {
            return;
        }
        let lower = lowered(word, &mut self.buf);
        // Lowercasing can make a word ASCII (the Kelvin sign is a `k`): it
        // must then meet the packed count of the same word.
        if lower.is_ascii()
            && let Some(k) = packed(&lower)
        {
            *self.packed.entry(k).or_insert(0) += 1;
            return;
        }
        match lower {
            // Already lower case: counted by reference.
            Cow::Borrowed(k) if k.as_ptr() == word.as_ptr() => {
                *self.text.entry(Cow::Borrowed(word)).or_insert(0) += 1;
            }
            k => match self.text.get_mut(k.as_ref()) {
                Some(c) => *c += 1,
                None => {
                    self.text.insert(Cow::Owned(k.into_owned()), 1);
                }
            },
        }
    }
}

/// ASCII letters and digits, by byte: one load per byte in the word scan
/// (`u8::is_ascii_alphanumeric` is three range checks).
static ALNUM: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    t
};

/// The first `k` (0..=8) bytes of a [`Chunk`]: its top bytes.
fn head(k: usize) -> u64 {
    u64::MAX
        .checked_shr(8 * k as u32)
        .map_or(u64::MAX, |rest| !rest)
}

/// Eight bytes of the text classified at once (SWAR).
struct Chunk {
    /// The bytes, big-endian (the first on top, as in [`packed`]), zero
    /// past the end of the text (a NUL ends a word as the end does).
    bytes: u64,
    /// `0x80` in each byte that is an ASCII letter: a byte below `0x80`
    /// that `| 0x20` puts in `a..=z`.
    letters: u64,
    /// How many bytes from the first are ASCII letters or digits.
    len: usize,
}

impl Chunk {
    fn at(b: &[u8], start: usize) -> Chunk {
        let bytes = match b.get(start..start + 8) {
            Some(w) => u64::from_be_bytes(w.try_into().unwrap_or([0; 8])),
            None => {
                let rest = b.get(start..).unwrap_or_default();
                let mut buf = [0u8; 8];
                buf[..rest.len()].copy_from_slice(rest);
                u64::from_be_bytes(buf)
            }
        };
        let ascii = !bytes & HIGH;
        let low7 = bytes & !HIGH;
        let letters = in_range(low7 | (ONES * 0x20), b'a', b'z') & ascii;
        let alnum = letters | (in_range(low7, b'0', b'9') & ascii);
        let len = ((alnum ^ HIGH).leading_zeros() / 8) as usize;
        Chunk {
            bytes,
            letters,
            len,
        }
    }

    /// The first `len` bytes lowercased (`0x20` is the letter bit shifted
    /// down; digits have it already), the others zero.
    fn key(&self) -> u64 {
        (self.bytes | (self.letters >> 2)) & head(self.len)
    }

    /// Whether the first `len` bytes hold a letter.
    fn has_letter(&self) -> bool {
        self.letters & head(self.len) != 0
    }
}

/// End of the word (maximal run of alphanumeric characters) that starts at
/// byte `from` of `text`.
fn word_end(text: &str, from: usize) -> usize {
    text[from..]
        .char_indices()
        .find(|(_, c)| !c.is_alphanumeric())
        .map_or(text.len(), |(i, _)| from + i)
}

/// Whether an alphanumeric character starts at byte `i` of `text` (false at
/// its end): a word that reaches `i` goes on there.
fn alnum_at(text: &str, i: usize) -> bool {
    match text.as_bytes().get(i) {
        Some(&c) if c.is_ascii() => ALNUM[usize::from(c)],
        Some(_) => text[i..].chars().next().is_some_and(char::is_alphanumeric),
        None => false,
    }
}

/// Counts the word that starts with the ASCII letter or digit at byte
/// `start` of `text`; returns where to go on.
///
/// Its bytes are classified eight at a time ([`Chunk`]), at most twice (most
/// words are shorter than 8 bytes): its ASCII part ends at the first byte
/// that is no ASCII letter or digit. When that byte is ASCII (or the text's
/// end), the word ends there, and a word of 3 to 16 bytes is its lowercased
/// key ([`packed`]'s layout) already; shorter words are no candidates; the
/// byte after is no letter or digit, so the scan goes on past it.
/// Otherwise (a non-ASCII byte, or 16 letters and digits and maybe more) a
/// byte scan and the general path decide.
fn ascii_word<'a>(tally: &mut Tally<'a>, text: &'a str, start: usize) -> usize {
    let b = text.as_bytes();
    let first = Chunk::at(b, start);
    let (len, key, letter) = if first.len < 8 {
        let key = u128::from(first.key()) << 64;
        (first.len, key, first.has_letter())
    } else {
        let second = Chunk::at(b, start + 8);
        let key = (u128::from(first.key()) << 64) | u128::from(second.key());
        let letter = first.has_letter() || second.has_letter();
        (8 + second.len, key, letter)
    };
    match b.get(start + len) {
        Some(next) if len == 16 || !next.is_ascii() => {
            long_ascii_word(tally, text, start, len, (key, letter))
        }
        next => {
            if len >= 3 && letter {
                *tally.packed.entry(key).or_insert(0) += 1;
            }
            start + len + usize::from(next.is_some())
        }
    }
}

/// [`ascii_word`] for a word whose first `len` bytes (up to 16) are ASCII
/// letters and digits, followed by a non-ASCII byte or more letters and
/// digits, with their key and whether they hold a letter.
fn long_ascii_word<'a>(
    tally: &mut Tally<'a>,
    text: &'a str,
    start: usize,
    len: usize,
    (key, letter): (u128, bool),
) -> usize {
    let b = text.as_bytes();
    let mut i = start + len;
    while i < b.len() && ALNUM[usize::from(b[i])] {
        i += 1;
    }
    if alnum_at(text, i) {
        // The word goes on in another script.
        let end = word_end(text, i);
        tally.general(&text[start..end]);
        return end;
    }
    if (3..=16).contains(&(i - start)) {
        if letter {
            *tally.packed.entry(key).or_insert(0) += 1;
        }
    } else {
        tally.general(&text[start..i]);
    }
    i
}

/// The `n` most frequent content words of `text`. One pass over the bytes:
/// an ASCII word is lowercased and packed into an integer key as it is
/// scanned ([`ascii_word`]), so most words cost one integer hash; longer
/// words and words with other scripts go through the general path
/// (lowercased, counted by text). Stopwords are dropped from the distinct
/// words at the end instead of being looked up for every word.
pub fn top_terms(text: &str, n: usize) -> Vec<String> {
    let mut tally = Tally {
        // About one distinct word per 18 bytes on the median page of the
        // PostgreSQL manual: a byte in 16 keeps most pages from growing the
        // map (a byte in 24 had half of them grow; one in 12 allocates more
        // than it saves). At most 4096 entries under the text cap.
        packed: HashMap::with_capacity_and_hasher(text.len() / 16, Default::default()),
        text: Counts::default(),
        buf: String::new(),
    };
    let b = text.as_bytes();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if !c.is_ascii() {
            let ch = text[i..].chars().next().unwrap_or(' ');
            if ch.is_alphanumeric() {
                let end = word_end(text, i);
                tally.general(&text[i..end]);
                i = end;
            } else {
                i += ch.len_utf8();
            }
        } else if ALNUM[usize::from(c)] {
            i = ascii_word(&mut tally, text, i);
        } else {
            i += 1;
        }
    }
    best(tally, n)
        .into_iter()
        .map(|r| {
            let mut buf = [0u8; 16];
            String::from_utf8_lossy(r.word.bytes(&mut buf)).into_owned()
        })
        .collect()
}

/// A counted word, ordered by rank: higher counts first, then the words
/// byte by byte. Distinct entries of a [`Tally`] hold distinct words, so
/// the order is total and the ranking does not depend on the maps' order.
struct Ranked<'a> {
    count: u32,
    word: Word<'a>,
}

impl Ranked<'_> {
    fn is_stopword(&self) -> bool {
        match &self.word {
            Word::Packed(k) => STOP_SET.contains(k),
            Word::Text(w) => is_stopword(w),
        }
    }
}

impl Ord for Ranked<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (other.count.cmp(&self.count)).then_with(|| match (&self.word, &other.word) {
            // Big-endian and zero-padded, without NULs: integer order is
            // byte order.
            (Word::Packed(a), Word::Packed(b)) => a.cmp(b),
            (a, b) => {
                let (mut x, mut y) = ([0u8; 16], [0u8; 16]);
                a.bytes(&mut x).cmp(b.bytes(&mut y))
            }
        })
    }
}

impl PartialOrd for Ranked<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Ranked<'_> {}

/// The `n` best-ranked words of `tally` that are no stopwords, best first.
/// One pass keeps the best in a heap whose top is the worst kept: most
/// words (seen once) lose to it on their count alone, so they cost one
/// comparison and no stopword lookup (collecting and ranking every distinct
/// word was a fifth of [`top_terms`]).
fn best(tally: Tally<'_>, n: usize) -> Vec<Ranked<'_>> {
    let packed = (tally.packed.into_iter()).map(|(k, count)| Ranked {
        count,
        word: Word::Packed(k),
    });
    let text = (tally.text.into_iter()).map(|(w, count)| Ranked {
        count,
        word: Word::Text(w),
    });
    let mut heap = BinaryHeap::with_capacity(n.min(packed.len() + text.len()));
    for r in packed.chain(text) {
        if heap.len() < n {
            if !r.is_stopword() {
                heap.push(r);
            }
        } else if let Some(mut worst) = heap.peek_mut()
            && r < *worst
            && !r.is_stopword()
        {
            *worst = r;
        }
    }
    heap.into_sorted_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_sorted() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(STOP_SET.len(), STOPWORDS.len());
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
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]
        #[test]
        fn matches_the_model(words in proptest::collection::vec("(the|and|Crawl|crawl|CRAWL|web|Web|zürich|ZÜRICH|1234|ab|abc|x{31}|data|Data|ĳssel|İstanbul|naïve|Naïve|\u{212A}ey|KEY|key|abcdefghijklmnop|ABCDEFGHIJKLMNOP|abcdefghijklmnopq|ABCDEFGHIJKLMNOPQ|a1b2c3|0123456789012345678|résumé|RÉSUMÉ|abcé|ABC)", 0..60), seps in proptest::collection::vec("[ ,.;\\-\u{a0}\u{2014}é’]{1,3}", 60), n in 0usize..8) {
            let text: String = words.iter().zip(&seps).map(|(w, s)| format!("{w}{s}")).collect();
            proptest::prop_assert_eq!(top_terms(&text, n), model(&text, n));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]
        /// Words glued from pieces around the 16-byte window of
        /// `ascii_word`: words ending just before, at and after it, text
        /// ending inside it, other scripts and whitespace right after ASCII.
        #[test]
        fn window_edges_match_the_model(
            pieces in proptest::collection::vec("(a|Ab|ZZ| |  |\\t|\u{a0}|é|É|\u{212a}|日|—|’|0|42|x{6,9}|X{14,18}|y{29,31}|abcdefghijklmnop|&amp;)", 0..40),
            n in 0usize..40,
        ) {
            let text = pieces.concat();
            proptest::prop_assert_eq!(top_terms(&text, n), model(&text, n));
        }
    }
}
