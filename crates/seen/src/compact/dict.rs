//! A word dictionary trained once per set, so a frequent word costs one
//! Huffman symbol instead of one per letter.
//!
//! ```text
//! words : "news" "products" "wiki" ...   concatenated bytes
//! offs  : u32 start of each word, plus the end            (<= MAX_WORDS words)
//! token : text symbol 256 + word id   (text symbols 0..=255 are literal bytes)
//! ```
//!
//! Tokenising a suffix: every maximal run of ASCII letters of length
//! `MIN_WORD..=MAX_WORD` that is a dictionary word becomes its token; all
//! other bytes stay literal. Decoding just expands tokens, so any dictionary
//! (even an empty one) decodes what it encoded; the set trains it once, at
//! the first freeze with at least `TRAIN_KEYS` keys, and never changes it,
//! so every run stays decodable. Costs ~11 bytes per word (~3 KiB).

use std::collections::HashMap;

/// Word -> token symbol: an open-addressed table of `SLOTS` word ids
/// (4 × `MAX_WORDS`, so probes are short) under a multiply-shift hash of the
/// word's first and last eight bytes (a HashMap with xxh3 was a sixth of a
/// merge), behind a filter of the (first byte, length) pairs that occur, so
/// most letter runs that are no word skip the hash.
pub(crate) struct Tokens<'a> {
    dict: &'a Dict,
    /// Word id + 1 per slot; 0 is empty.
    slots: Vec<u16>,
    lens: [u64; 256],
}

const SLOT_BITS: u32 = 10;

/// Home slot of `word` (at least `MIN_WORD` bytes): a multiply-shift hash
/// of its first two and last two bytes and its length. Collisions only
/// lengthen a probe; loading whole words cost a variable-length copy.
fn slot_of(word: &[u8]) -> usize {
    let n = word.len();
    let ends = u64::from(word[0])
        | u64::from(word[1]) << 8
        | u64::from(word[n - 2]) << 16
        | u64::from(word[n - 1]) << 24
        | (n as u64) << 32;
    (ends.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOT_BITS)) as usize
}

impl Tokens<'_> {
    /// The dictionary these tokens name.
    pub(crate) fn dict(&self) -> &Dict {
        self.dict
    }

    fn get(&self, word: &[u8]) -> Option<u16> {
        let first = *word.first()?;
        if self.lens[first as usize] >> word.len().min(63) & 1 == 0 {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut slot = slot_of(word);
        loop {
            let id = usize::from(self.slots[slot]).checked_sub(1)?;
            if self.dict.word(id) == word {
                return Some(256 + id as u16);
            }
            slot = (slot + 1) & mask;
        }
    }
}

/// Words in a dictionary (text alphabet = 256 bytes + this many tokens).
pub(crate) const MAX_WORDS: usize = 256;
const MIN_WORD: usize = 3;
const MAX_WORD: usize = 32;

/// The trained words.
#[derive(Debug, Default, Clone)]
pub(crate) struct Dict {
    words: Vec<u8>,
    offs: Vec<u32>,
}

/// Maximal runs of ASCII letters in `text`, as (start, end).
fn letter_runs(text: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < text.len() && !text[i].is_ascii_alphabetic() {
            i += 1;
        }
        if i >= text.len() {
            return None;
        }
        let start = i;
        while i < text.len() && text[i].is_ascii_alphabetic() {
            i += 1;
        }
        Some((start, i))
    })
}

impl Dict {
    /// No words.
    pub(crate) const EMPTY: Dict = Dict {
        words: Vec::new(),
        offs: Vec::new(),
    };

    /// Learns the words that save the most bytes in `suffixes`.
    pub(crate) fn train<'a>(suffixes: impl IntoIterator<Item = &'a [u8]>) -> Self {
        let mut counts: HashMap<&[u8], u64> = HashMap::new();
        for text in suffixes {
            for (a, b) in
                letter_runs(text).filter(|(a, b)| (MIN_WORD..=MAX_WORD).contains(&(b - a)))
            {
                *counts.entry(&text[a..b]).or_default() += 1;
            }
        }
        let mut ranked: Vec<(&[u8], u64)> = counts.into_iter().filter(|&(_, c)| c >= 4).collect();
        // Bytes saved ~ count * (len - 1); ties by the word, for determinism.
        ranked.sort_by(|a, b| {
            let gain = |(w, c): &(&[u8], u64)| c * (w.len() as u64 - 1);
            gain(b).cmp(&gain(a)).then(a.0.cmp(b.0))
        });
        let mut dict = Dict {
            words: Vec::new(),
            offs: vec![0],
        };
        for (w, _) in ranked.into_iter().take(MAX_WORDS) {
            dict.words.extend_from_slice(w);
            dict.offs.push(dict.words.len() as u32);
        }
        dict.words.shrink_to_fit();
        dict.offs.shrink_to_fit();
        dict
    }

    /// Number of words.
    pub(crate) fn len(&self) -> usize {
        self.offs.len().saturating_sub(1)
    }

    /// Word `id`.
    pub(crate) fn word(&self, id: usize) -> &[u8] {
        &self.words[self.offs[id] as usize..self.offs[id + 1] as usize]
    }

    /// Length of word `id`; 0 for an id past the end (corrupt input).
    pub(crate) fn word_len(&self, id: usize) -> usize {
        match (self.offs.get(id), self.offs.get(id + 1)) {
            (Some(&a), Some(&b)) => (b - a) as usize,
            _ => 0,
        }
    }

    /// The encoder's view: word -> token symbol.
    pub(crate) fn tokens(&self) -> Tokens<'_> {
        let mut slots = vec![0u16; 1 << SLOT_BITS];
        let mut lens = [0u64; 256];
        for i in 0..self.len() {
            let w = self.word(i);
            lens[w[0] as usize] |= 1 << w.len().min(63);
            let mut slot = slot_of(w);
            while slots[slot] != 0 {
                slot = (slot + 1) & (slots.len() - 1);
            }
            slots[slot] = i as u16 + 1;
        }
        Tokens {
            dict: self,
            slots,
            lens,
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.words.capacity() + self.offs.capacity() * 4
    }
}

/// Whether `b` is an ASCII letter (branch-free `is_ascii_alphabetic`).
#[inline]
pub(crate) fn is_letter(b: u8) -> bool {
    (b | 0x20).wrapping_sub(b'a') < 26
}

/// Calls `emit` with the text symbols of `text` under `tokens`: one pass,
/// each maximal letter run of a word's length looked up once.
pub(crate) fn tokenize(text: &[u8], tokens: &Tokens<'_>, mut emit: impl FnMut(u16)) {
    let (mut done, mut i, n) = (0, 0, text.len());
    while i < n {
        if !is_letter(text[i]) {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < n && is_letter(text[i]) {
            i += 1;
        }
        if (MIN_WORD..=MAX_WORD).contains(&(i - start))
            && let Some(t) = tokens.get(&text[start..i])
        {
            text[done..start].iter().for_each(|&x| emit(u16::from(x)));
            emit(t);
            done = i;
        }
    }
    text[done..].iter().for_each(|&x| emit(u16::from(x)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_frequent_words_and_tokenizes_only_whole_letter_runs() {
        let texts: Vec<String> = (0..50)
            .map(|i| format!("news/{i}/products-newsy"))
            .collect();
        let dict = Dict::train(texts.iter().map(|t| t.as_bytes()));
        let words: Vec<&[u8]> = (0..dict.len()).map(|i| dict.word(i)).collect();
        assert!(words.contains(&&b"products"[..]) && words.contains(&&b"news"[..]));
        let tokens = dict.tokens();
        let mut out = Vec::new();
        tokenize(b"news/x/newsy/news", &tokens, |s| out.push(s));
        let news = tokens.get(b"news").unwrap();
        let newsy = tokens.get(b"newsy").unwrap();
        let want: Vec<u16> = [
            news,
            u16::from(b'/'),
            u16::from(b'x'),
            u16::from(b'/'),
            newsy,
        ]
        .into_iter()
        .chain([u16::from(b'/'), news])
        .collect();
        assert_eq!(out, want);
        assert!(dict.len() <= MAX_WORDS);
    }

    #[test]
    fn empty_dictionary_keeps_every_byte_literal() {
        let dict = Dict::default();
        let tokens = dict.tokens();
        let mut out = Vec::new();
        tokenize(b"abc/def", &tokens, |s| out.push(s));
        assert_eq!(
            out,
            b"abc/def".iter().map(|&b| u16::from(b)).collect::<Vec<_>>()
        );
    }
}
