//! A frozen run: sorted keys, front-coded in blocks, Huffman-coded per run.
//!
//! ```text
//! Run
//! ├─ filter     : BlockFilter, 10 bits per key (≈1% false positives)
//! ├─ index      : first key of every block, front-coded against the previous
//! │               block's first key: [varint lcp][varint len][suffix];
//! │               every GROUP-th entry is a group head with lcp = 0 (full key)
//! ├─ group_offs : u32 offset in `index` of each group head
//! ├─ head_words : per group head, its 8 bytes after the run's common prefix
//! │               (big-endian u64): searched first, in one small array, so
//! │               a lookup touches the index only where those words tie
//! ├─ block_offs : u32 offset in `blocks` of each block, plus the end
//! ├─ blocks     : per block, keys 2..=BLOCK as [varint lcp][varint bits][suffix]
//! │               against the previous key; varint bytes Huffman-coded with
//! │               `codes.num`, suffix symbols (bytes, dictionary words) with
//! │               `codes.text`; `bits` is the length of the suffix's code in
//! │               bits, so a scan jumps over a key's text without decoding
//! │               it; byte aligned
//! └─ codes      : the run's two canonical Huffman codes (~1.1 KiB each)
//! ```
//!
//! Invariants: keys strictly increase across the run; block `b` holds keys
//! `b*BLOCK ..` (the last block may be short); its first key lives only in the
//! index; offsets fit in `u32` (runs stay below 4 GiB).
//!
//! Bytes per key ≈ Huffman(lcp + bits + suffix) (≈ 0.6 × (2 + suffix) on URLs;
//! the length in bits costs ~0.4 B/key more than a length in bytes did)
//! + index (≈ (suffix + 2) / BLOCK + key / (BLOCK · GROUP)) + 4 / BLOCK + 10/8.
//!
//! Cost: `contains` of an absent key is one filter probe 99% of the time;
//! otherwise a binary search over group heads, a scan of <= GROUP index
//! entries and a scan of one block (<= BLOCK keys, stopping at the key),
//! which decodes only the text of keys sharing exactly as much with the
//! key as the scan has matched so far, and jumps over the rest.

use std::cmp::Ordering;
use std::sync::{Arc, OnceLock};

use xxhash_rust::xxh3::xxh3_64;

use super::buffer::{read_varint, write_varint};
use super::dict::{Dict, MAX_WORDS, Tokens, is_letter, tokenize};
use super::filter::BlockFilter;
use super::huffman::{BitReader, BitWriter, Code, Encoder};

/// A run's two Huffman codes: one for the lcp/length varint bytes, one for
/// suffix bytes (their statistics differ: small numbers against URL text).
#[derive(Debug, Clone)]
pub(crate) struct Codes {
    pub(crate) num: Code,
    pub(crate) text: Code,
    /// Encoders of `num` and `text`, built at the first run coded with
    /// this generation and kept (a run builder used to build them for every
    /// run: 3.5 % of `mgz dedup`'s CPU with small buffers). Generations no
    /// longer coded with never build them.
    enc: OnceLock<[Encoder; 2]>,
}

/// Keys per block.
pub(crate) const BLOCK: usize = 32;
/// Blocks per index group.
const GROUP: usize = 16;
/// Key hashes a builder holds before adding them to the filter at once.
const PENDING_HASHES: usize = 256;

/// How a key decoded by a [`RunCursor`] was coded in its run: a merge into
/// a run of the same code generation copies its text codes from here.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Carried<'a> {
    /// lcp with its predecessor in the run.
    old: usize,
    /// The block's coded stream and the bit range in it of the text
    /// symbols of the suffix `key[old..]`.
    input: &'a [u8],
    bits: (usize, usize),
}

/// What a run's filter and index say about a key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Probe {
    /// Certainly not in the run.
    Absent,
    /// The first key of a block: certainly in the run.
    Present,
    /// Only block `b` can hold it; decode to tell.
    Block(usize),
}

/// The keys of one decoded block, for answering many lookups with one decode.
#[derive(Debug, Default)]
pub(crate) struct DecodedBlock {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl DecodedBlock {
    fn key(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    /// Whether the block holds `key` (binary search: keys are sorted).
    pub(crate) fn contains(&self, key: &[u8]) -> bool {
        let n = self.ends.len();
        let i = partition(n, |i| self.key(i) < key);
        i < n && self.key(i) == key
    }
}

/// An immutable sorted run of keys.
#[derive(Debug)]
pub(crate) struct Run {
    len: usize,
    /// Shared with the other runs coded in the same generation (the set owns them).
    codes: Arc<Codes>,
    filter: BlockFilter,
    index: Vec<u8>,
    group_offs: Vec<u32>,
    /// Bytes every key of the run starts with (lcp of its first and last key).
    common: usize,
    head_words: Vec<u64>,
    block_offs: Vec<u32>,
    blocks: Vec<u8>,
}

/// Length of the common prefix of `a` and `b`, compared 8 bytes at a time
/// (keys of one host share tens of bytes; a byte loop was 4 % of inserts).
fn lcp(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (mut ca, mut cb) = (a[..n].chunks_exact(8), b[..n].chunks_exact(8));
    let mut done = 0;
    for (x, y) in (&mut ca).zip(&mut cb) {
        let diff = u64::from_le_bytes(x.try_into().expect("8 bytes"))
            ^ u64::from_le_bytes(y.try_into().expect("8 bytes"));
        if diff != 0 {
            return done + (diff.trailing_zeros() / 8) as usize;
        }
        done += 8;
    }
    let tail = ca.remainder().iter().zip(cb.remainder());
    done + tail.take_while(|(x, y)| x == y).count()
}

/// Appends the front coding of `key` against `prev` to `out`.
fn front_code(out: &mut Vec<u8>, prev: &[u8], key: &[u8]) {
    let shared = lcp(prev, key);
    write_varint(out, shared);
    write_varint(out, key.len() - shared);
    out.extend_from_slice(&key[shared..]);
}

/// Non-first keys of a block in a run of `keys` (sorted): each with its lcp.
fn coded_suffixes<'a>(keys: &'a [&'a [u8]]) -> impl Iterator<Item = (usize, &'a [u8])> + 'a {
    suffixes(keys)
        .zip(keys)
        .enumerate()
        .filter(|(i, _)| !i.is_multiple_of(BLOCK))
        .map(|(_, (suffix, key))| (key.len() - suffix.len(), *key))
}

/// The suffixes a run of `keys` (sorted) would code: what a dictionary learns from.
pub(crate) fn suffixes<'a>(keys: &'a [&'a [u8]]) -> impl Iterator<Item = &'a [u8]> + 'a {
    keys.iter().enumerate().map(|(i, key)| {
        let prev: &[u8] = if i == 0 { &[] } else { keys[i - 1] };
        &key[lcp(prev, key)..]
    })
}

impl Codes {
    /// Codes learned from a run of `keys` (sorted) tokenised with `dict`,
    /// with primary decode tables of `fast` bits: the text code from the
    /// suffixes' symbols, then the number code from the lcps and the
    /// suffixes' lengths in bits under that text code.
    pub(crate) fn learn(keys: &[&[u8]], dict: &Dict, fast: u32) -> Self {
        let tokens = dict.tokens();
        let mut text = vec![0u64; 256 + MAX_WORDS];
        for (shared, key) in coded_suffixes(keys) {
            tokenize(&key[shared..], &tokens, |t| text[t as usize] += 1);
        }
        let text = Code::from_freqs(&text, fast);
        let enc = text.encoder();
        let (mut num, mut bytes) = (vec![0u64; 256], Vec::new());
        for (shared, key) in coded_suffixes(keys) {
            let mut bits = 0;
            tokenize(&key[shared..], &tokens, |t| bits += enc.bits(t));
            bytes.clear();
            write_varint(&mut bytes, shared);
            write_varint(&mut bytes, bits);
            bytes.iter().for_each(|&b| num[b as usize] += 1);
        }
        let num = Code::from_freqs(&num, fast);
        // Coded with at once: keep the encoders.
        let encoders = [num.encoder(), enc];
        Self {
            num,
            text,
            enc: OnceLock::from(encoders),
        }
    }

    /// The encoders of `num` and `text`.
    fn encoders(&self) -> &[Encoder; 2] {
        self.enc
            .get_or_init(|| [self.num.encoder(), self.text.encoder()])
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        let enc: usize = self
            .enc
            .get()
            .map_or(0, |e| e.iter().map(Encoder::heap_bytes).sum());
        self.num.heap_bytes() + self.text.heap_bytes() + enc
    }
}

/// Builds a [`Run`] from exactly `len` keys pushed in increasing order.
pub(crate) struct RunBuilder<'d> {
    run: Run,
    tokens: Tokens<'d>,
    /// The run's codes (their encoders).
    codes: Arc<Codes>,
    bits: BitWriter,
    pushed: usize,
    prev: Vec<u8>,
    prev_first: Vec<u8>,
    num: Vec<u8>,
    /// Text symbols of the key being coded (its length in bits goes first).
    symbols: Vec<u16>,
    /// Hashes of pushed keys not yet in the filter (see `BlockFilter::insert_all`).
    hashes: Vec<u64>,
}

impl<'d> RunBuilder<'d> {
    /// `sizes` estimates the run's block and index bytes (a merge: its
    /// inputs'), so that they are allocated once instead of grown by
    /// doubling (copies, and up to twice the bytes while it builds); the
    /// estimate is trimmed to what was used at the end.
    pub(crate) fn new(len: usize, codes: Arc<Codes>, dict: &'d Dict, sizes: [usize; 2]) -> Self {
        let run = Run {
            len,
            codes: codes.clone(),
            filter: BlockFilter::with_keys(len),
            index: Vec::with_capacity(sizes[1]),
            group_offs: Vec::with_capacity(len.div_ceil(BLOCK * GROUP)),
            common: 0,
            head_words: Vec::new(),
            block_offs: Vec::with_capacity(len.div_ceil(BLOCK) + 1),
            blocks: Vec::with_capacity(sizes[0]),
        };
        let bits = BitWriter::default();
        let (prev, prev_first, num) = (Vec::new(), Vec::new(), Vec::new());
        Self {
            run,
            tokens: dict.tokens(),
            codes,
            bits,
            pushed: 0,
            prev,
            prev_first,
            num,
            symbols: Vec::new(),
            hashes: Vec::with_capacity(PENDING_HASHES),
        }
    }

    /// Queues `key`'s hash for the filter.
    #[inline]
    fn hash_key(&mut self, key: &[u8]) {
        self.hashes.push(xxh3_64(key));
        if self.hashes.len() == PENDING_HASHES {
            self.run.filter.insert_all(&self.hashes);
            self.hashes.clear();
        }
    }

    pub(crate) fn push(&mut self, key: &[u8]) {
        debug_assert!(self.pushed == 0 || self.prev.as_slice() < key);
        self.hash_key(key);
        if self.pushed.is_multiple_of(BLOCK) {
            self.start_block(key);
        } else {
            self.code_key(key);
        }
        self.prev.clear();
        self.prev.extend_from_slice(key);
        self.pushed += 1;
    }

    /// Like [`RunBuilder::push`] for a key decoded from another run (`from`:
    /// its coding there; `None` codes it afresh), where it followed a key it
    /// shared `from.old` bytes with: its new predecessor (between the two)
    /// shares at least as much, so the new suffix is a tail of the old one
    /// and its codes are copied instead of tokenising and coding it again.
    pub(crate) fn push_recoded(&mut self, key: &[u8], from: Option<Carried<'_>>) {
        debug_assert!(self.pushed == 0 || self.prev.as_slice() < key);
        self.hash_key(key);
        if self.pushed.is_multiple_of(BLOCK) {
            self.start_block(key);
        } else {
            let shared = lcp(&self.prev, key);
            match from {
                Some(c) if c.old <= shared => self.code_tail(key, shared, c),
                _ => self.code_suffix(key, shared),
            }
        }
        self.prev.clear();
        self.prev.extend_from_slice(key);
        self.pushed += 1;
    }

    /// Codes `key` against the previous key: varints with the number code,
    /// the suffix with the text code.
    fn code_key(&mut self, key: &[u8]) {
        let shared = lcp(&self.prev, key);
        self.code_suffix(key, shared);
    }

    /// Codes `key[shared..]` afresh, after its lcp and length in bits.
    fn code_suffix(&mut self, key: &[u8], shared: usize) {
        self.symbols.clear();
        let symbols = &mut self.symbols;
        tokenize(&key[shared..], &self.tokens, |t| symbols.push(t));
        self.code_symbols(shared, None);
    }

    /// Writes the lcp, the length in bits of `self.symbols` plus the
    /// `copy` bit range of another stream, the symbols, then that range.
    fn code_symbols(&mut self, shared: usize, copy: Option<(&[u8], usize, usize)>) {
        let [num, text] = self.codes.encoders();
        let copied = copy.map_or(0, |(_, from, to)| to - from);
        let bits = self.symbols.iter().map(|&t| text.bits(t)).sum::<usize>() + copied;
        self.num.clear();
        write_varint(&mut self.num, shared);
        write_varint(&mut self.num, bits);
        let (w, out) = (&mut self.bits, &mut self.run.blocks);
        for &b in &self.num {
            num.put(w, out, u16::from(b));
        }
        for &t in &self.symbols {
            text.put(w, out, t);
        }
        if let Some((input, from, to)) = copy {
            w.copy_bits(out, input, from, to);
        }
    }

    /// Codes `key[shared..]` from `c`, the coding of `key[c.old..]`
    /// (`c.old <= shared`). A letter run that `shared` cuts is tokenised
    /// afresh (the cut tail may be a dictionary word: words are learned from
    /// suffixes cut the same way); the codes from the end of that run on are
    /// copied as bits, since tokens never cross a letter run's end and the
    /// code is the same. A symbol that straddles the copy start (only in a
    /// corrupt stream) leaves literals.
    fn code_tail(&mut self, key: &[u8], shared: usize, c: Carried<'_>) {
        self.symbols.clear();
        let mut from = shared;
        if shared > c.old
            && shared < key.len()
            && is_letter(key[shared - 1])
            && is_letter(key[shared])
        {
            from += key[shared..].iter().take_while(|&&b| is_letter(b)).count();
            let symbols = &mut self.symbols;
            tokenize(&key[shared..from], &self.tokens, |t| symbols.push(t));
        }
        let dict = self.tokens.dict();
        let mut pos = c.old;
        // Decode again only the symbols before `from` (none when the lcp is
        // unchanged), to find the bit where the copy starts.
        let mut src = BitReader::at(c.input, c.bits.0);
        while pos < from && src.bit_pos() < c.bits.1 {
            let t = self.run.codes.text.get(&mut src);
            let len = if t < 256 {
                1
            } else {
                dict.word_len(usize::from(t - 256))
            };
            if pos + len > from {
                let end = (pos + len).min(key.len());
                self.symbols
                    .extend(key[from..end].iter().map(|&b| u16::from(b)));
            }
            pos += len;
        }
        let copy = (pos >= from && src.bit_pos() <= c.bits.1).then_some((
            c.input,
            src.bit_pos(),
            c.bits.1,
        ));
        self.code_symbols(shared, copy);
    }

    fn start_block(&mut self, key: &[u8]) {
        self.bits.finish(&mut self.run.blocks);
        let block = self.run.block_offs.len();
        self.run.block_offs.push(self.run.blocks.len() as u32);
        if block.is_multiple_of(GROUP) {
            self.run.group_offs.push(self.run.index.len() as u32);
            self.prev_first.clear();
        }
        front_code(&mut self.run.index, &self.prev_first, key);
        self.prev_first.clear();
        self.prev_first.extend_from_slice(key);
    }

    pub(crate) fn finish(mut self) -> Run {
        debug_assert_eq!(self.pushed, self.run.len);
        self.run.filter.insert_all(&self.hashes);
        self.bits.finish(&mut self.run.blocks);
        self.run.block_offs.push(self.run.blocks.len() as u32);
        self.run.blocks.shrink_to_fit();
        self.run.index.shrink_to_fit();
        let groups = self.run.group_offs.len();
        if groups > 0 {
            self.run.common = lcp(self.run.group_head(0), &self.prev);
        }
        self.run.head_words = (0..groups)
            .map(|g| word_after(self.run.group_head(g), self.run.common))
            .collect();
        self.run
    }
}

/// The 8 bytes of `key` after its first `skip`, big-endian, zero padded:
/// among keys sharing those `skip` bytes, a smaller word means a smaller key.
pub(crate) fn word_after(key: &[u8], skip: usize) -> u64 {
    let rest = key.get(skip..).unwrap_or(&[]);
    let mut buf = [0u8; 8];
    let n = rest.len().min(8);
    buf[..n].copy_from_slice(&rest[..n]);
    u64::from_be_bytes(buf)
}

/// Reads front-coded entries from the index or a Huffman-coded block.
trait ByteSource {
    /// A byte of an lcp or length varint.
    fn num_byte(&mut self) -> u8;
    #[inline]
    fn varint(&mut self) -> usize {
        let (mut v, mut shift) = (0usize, 0);
        loop {
            let b = self.num_byte();
            v |= usize::from(b & 0x7F) << shift;
            if b < 0x80 {
                return v;
            }
            shift += 7;
        }
    }
    /// Replaces `cur` (the previous key) by the next key; returns the
    /// bytes it shares with the previous key.
    fn next_key(&mut self, cur: &mut Vec<u8>) -> usize;
}

struct Plain<'a>(&'a [u8], usize);

impl ByteSource for Plain<'_> {
    #[inline]
    fn num_byte(&mut self) -> u8 {
        self.1 += 1;
        self.0[self.1 - 1]
    }
    /// The suffix is plain bytes: one copy instead of a push per byte.
    #[inline]
    fn next_key(&mut self, cur: &mut Vec<u8>) -> usize {
        let shared = self.varint();
        let suffix = self.varint();
        cur.truncate(shared);
        cur.extend_from_slice(&self.0[self.1..self.1 + suffix]);
        self.1 += suffix;
        shared
    }
}

struct Coded<'a>(&'a Codes, BitReader<'a>, &'a Dict);

impl ByteSource for Coded<'_> {
    #[inline]
    fn num_byte(&mut self) -> u8 {
        self.0.num.get(&mut self.1) as u8
    }
    /// Text symbols are bytes or dictionary words, until the suffix's bits are read.
    #[inline]
    fn next_key(&mut self, cur: &mut Vec<u8>) -> usize {
        let shared = self.varint();
        let end = self.text_end();
        cur.truncate(shared);
        self.text(cur, end);
        shared
    }
}

impl Coded<'_> {
    /// Like [`ByteSource::next_key`], also returning the bit range of the
    /// suffix's text symbols (a merge copies them instead of coding the
    /// text again); `None` for a key of a corrupt stream (its symbols do
    /// not spell exactly its suffix, or its lcp exceeds the previous key).
    #[inline]
    fn next_key_spanned(&mut self, cur: &mut Vec<u8>) -> (usize, Option<(usize, usize)>) {
        let prev_len = cur.len();
        let shared = self.varint();
        let end = self.text_end();
        cur.truncate(shared);
        let start = self.1.bit_pos();
        let clean = self.text(cur, end) && shared <= prev_len;
        (shared, clean.then_some((start, end)))
    }

    /// Reads a suffix's length in bits; returns the stream bit where its
    /// text ends (at most the end of the block: a corrupt length stops there).
    #[inline]
    fn text_end(&mut self) -> usize {
        let bits = self.varint();
        let limit = self.1.input().len() * 8;
        self.1.bit_pos().saturating_add(bits).min(limit)
    }

    /// Appends text symbols to `cur` until stream bit `end`; `false` when
    /// the last symbol ran past it or named a missing word (a corrupt stream).
    #[inline]
    fn text(&mut self, cur: &mut Vec<u8>, end: usize) -> bool {
        while self.1.bit_pos() < end {
            match self.0.text.get(&mut self.1) {
                s @ 0..=255 => cur.push(s as u8),
                t => match self.2.len() > usize::from(t - 256) {
                    true => cur.extend_from_slice(self.2.word(usize::from(t - 256))),
                    // Only a corrupt stream names a missing word; stop there.
                    false => return false,
                },
            }
        }
        self.1.bit_pos() == end
    }

    /// Decodes a suffix that starts at byte `from` of its key (whose first
    /// `from` bytes equal `key`'s) and ends at stream bit `end`, and compares
    /// it with `key[from..]`, jumping to `end` at the first difference.
    /// Returns the decoded key's order against `key` and the bytes the two share.
    #[inline]
    fn compare_text(&mut self, key: &[u8], from: usize, end: usize) -> (Ordering, usize) {
        let mut pos = from;
        while self.1.bit_pos() < end {
            let t = self.0.text.get(&mut self.1);
            let word: &[u8] = match t {
                0..=255 => {
                    let byte = t as u8;
                    match key.get(pos) {
                        Some(&k) if k == byte => {
                            pos += 1;
                            continue;
                        }
                        other => {
                            self.1.seek(end);
                            return (other.map_or(Ordering::Greater, |k| byte.cmp(k)), pos);
                        }
                    }
                }
                // Only a corrupt stream names a missing word: call it above `key`.
                t if self.2.len() <= usize::from(t - 256) => {
                    self.1.seek(end);
                    return (Ordering::Greater, pos);
                }
                t => self.2.word(usize::from(t - 256)),
            };
            let common = lcp(word, key.get(pos..).unwrap_or(&[]));
            if common < word.len() {
                self.1.seek(end);
                let order = key
                    .get(pos + common)
                    .map_or(Ordering::Greater, |k| word[common].cmp(k));
                return (order, pos + common);
            }
            pos += word.len();
        }
        (pos.cmp(&key.len()), pos)
    }
}

impl Run {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn blocks_count(&self) -> usize {
        self.block_offs.len() - 1
    }

    fn group_head(&self, g: usize) -> &[u8] {
        let mut pos = self.group_offs[g] as usize;
        let _shared = read_varint(&self.index, &mut pos);
        let len = read_varint(&self.index, &mut pos);
        &self.index[pos..pos + len]
    }

    fn block_reader<'a>(&'a self, b: usize, dict: &'a Dict) -> Coded<'a> {
        let bytes = &self.blocks[self.block_offs[b] as usize..self.block_offs[b + 1] as usize];
        Coded(&self.codes, BitReader::new(bytes), dict)
    }

    fn keys_in_block(&self, b: usize) -> usize {
        BLOCK.min(self.len - b * BLOCK)
    }

    /// The block that would hold `key` (`None` when `key` is below the
    /// run's first key); its first key is left in `first`.
    ///
    /// The scan over the group's index entries keeps `m = lcp(first, key)`
    /// (`first <= key` throughout), so an entry sharing more than `m` bytes
    /// with `first` is below `key` and one sharing fewer is above it: most
    /// entries are decided without comparing their text.
    fn find_block(&self, key: &[u8], first: &mut Vec<u8>) -> Option<usize> {
        let g = self.heads_at_most(key).checked_sub(1)?;
        let mut pos = self.group_offs[g] as usize;
        first.clear();
        Plain(&self.index, pos).next_key(first);
        pos = self.group_offs[g] as usize;
        let _ = read_varint(&self.index, &mut pos);
        pos += read_varint(&self.index, &mut pos);
        let mut m = lcp(first, key);
        let mut best = g * GROUP;
        for b in g * GROUP + 1..((g + 1) * GROUP).min(self.blocks_count()) {
            let shared = read_varint(&self.index, &mut pos);
            let len = read_varint(&self.index, &mut pos);
            let suffix = &self.index[pos..pos + len];
            pos += len;
            if shared < m {
                break;
            }
            if shared == m {
                if suffix > &key[m..] {
                    break;
                }
                m += lcp(suffix, &key[m..]);
            }
            first.truncate(shared);
            first.extend_from_slice(suffix);
            best = b;
        }
        Some(best)
    }

    /// How many group heads are `<= key`: the head words narrow it to the
    /// groups whose word ties with `key`'s, and only those compare in full.
    fn heads_at_most(&self, key: &[u8]) -> usize {
        let groups = self.head_words.len();
        if groups == 0 {
            return 0;
        }
        let prefix = &self.group_head(0)[..self.common];
        match key[..self.common.min(key.len())].cmp(prefix) {
            Ordering::Less => return 0,
            Ordering::Greater => return groups,
            Ordering::Equal if key.len() < self.common => return 0,
            Ordering::Equal => {}
        }
        let w = word_after(key, self.common);
        let lo = self.head_words.partition_point(|&h| h < w);
        let hi = lo + self.head_words[lo..].partition_point(|&h| h <= w);
        lo + partition(hi - lo, |i| self.group_head(lo + i) <= key)
    }

    /// First key of block `b`, decoded from its index group.
    fn block_first(&self, b: usize, first: &mut Vec<u8>) {
        let mut src = Plain(&self.index, self.group_offs[b / GROUP] as usize);
        first.clear();
        for _ in 0..=b % GROUP {
            src.next_key(first);
        }
    }

    /// Brings the filter lines of `hashes` into cache (see `BlockFilter::touch`).
    pub(crate) fn touch_filter(&self, hashes: &[u64]) {
        self.filter.touch(hashes);
    }

    /// Where `key` (with xxh3 `hash`) could be, without decoding a block.
    pub(crate) fn locate(&self, key: &[u8], hash: u64, first: &mut Vec<u8>) -> Probe {
        if !self.filter.may_contain(hash) {
            return Probe::Absent;
        }
        match self.find_block(key, first) {
            None => Probe::Absent,
            Some(_) if first.as_slice() == key => Probe::Present,
            Some(b) => Probe::Block(b),
        }
    }

    /// Whether `key` (with xxh3 `hash`) is in the run.
    pub(crate) fn contains(&self, key: &[u8], hash: u64, dict: &Dict) -> bool {
        let mut cur = Vec::new();
        match self.locate(key, hash, &mut cur) {
            Probe::Absent => false,
            Probe::Present => true,
            Probe::Block(b) => self.block_contains(b, &cur, key, dict),
        }
    }

    /// Whether block `b`, whose first key is `first` (below `key`), holds `key`.
    ///
    /// As in `find_block`, `m = lcp(previous key, key)`: a key sharing more
    /// than `m` bytes with its predecessor is below `key`, so its text is
    /// jumped over (its length in bits is stored); one sharing fewer is above. A key
    /// sharing exactly `m` is compared with `key` as it decodes. No key is
    /// rebuilt: the bytes a later key reuses are the first `m`, which equal
    /// `key`'s.
    pub(crate) fn block_contains(&self, b: usize, first: &[u8], key: &[u8], dict: &Dict) -> bool {
        let mut m = lcp(first, key);
        let mut src = self.block_reader(b, dict);
        for _ in 1..self.keys_in_block(b) {
            let shared = src.varint();
            let end = src.text_end();
            if shared > m {
                src.1.seek(end);
                continue;
            }
            if shared < m {
                return false;
            }
            match src.compare_text(key, m, end) {
                (Ordering::Equal, _) => return true,
                (Ordering::Greater, _) => return false,
                (Ordering::Less, common) => m = common,
            }
        }
        false
    }

    /// Decodes block `b` (all its keys, in order) into `out`.
    pub(crate) fn decode_block(&self, b: usize, dict: &Dict, out: &mut DecodedBlock) {
        out.bytes.clear();
        out.ends.clear();
        let mut cur = Vec::new();
        self.block_first(b, &mut cur);
        let mut src = self.block_reader(b, dict);
        for i in 0..self.keys_in_block(b) {
            if i > 0 {
                src.next_key(&mut cur);
            }
            out.bytes.extend_from_slice(&cur);
            out.ends.push(out.bytes.len());
        }
    }

    /// The run's codes (shared: the set counts each generation once).
    pub(crate) fn codes(&self) -> &Arc<Codes> {
        &self.codes
    }

    /// Heap bytes by part: codes (0: counted by the set), filter, index, offsets, blocks.
    /// Bytes of the blocks and of the index (what [`RunBuilder::new`] takes
    /// as an estimate).
    pub(crate) fn sizes(&self) -> [usize; 2] {
        [self.blocks.len(), self.index.len()]
    }

    pub(crate) fn parts(&self) -> [usize; 5] {
        [
            0,
            self.filter.heap_bytes(),
            self.index.capacity(),
            (self.group_offs.capacity() + self.block_offs.capacity()) * 4
                + self.head_words.capacity() * 8,
            self.blocks.capacity(),
        ]
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.filter.heap_bytes()
            + self.index.capacity()
            + (self.group_offs.capacity() + self.block_offs.capacity()) * 4
            + self.head_words.capacity() * 8
            + self.blocks.capacity()
    }

    /// A cursor over the keys in increasing order.
    pub(crate) fn cursor<'a>(&'a self, dict: &'a Dict) -> RunCursor<'a> {
        RunCursor {
            run: self,
            dict,
            next: 0,
            index: Plain(&self.index, 0),
            first: Vec::new(),
            block: None,
            cur: Vec::new(),
            shared: None,
            bits: None,
        }
    }
}

/// Number of leading `i in 0..n` for which `pred` holds (pred is monotone).
fn partition(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) { lo = mid + 1 } else { hi = mid }
    }
    lo
}

/// Sequential decoder over a [`Run`].
pub(crate) struct RunCursor<'a> {
    run: &'a Run,
    dict: &'a Dict,
    next: usize,
    index: Plain<'a>,
    first: Vec<u8>,
    block: Option<Coded<'a>>,
    cur: Vec<u8>,
    /// lcp of the current key with its predecessor (`None`: block first key).
    shared: Option<usize>,
    /// Their bit range in the block (`None`: not to be copied).
    bits: Option<(usize, usize)>,
}

impl RunCursor<'_> {
    /// Advances to the next key; `false` at the end.
    pub(crate) fn advance(&mut self) -> bool {
        if self.next >= self.run.len {
            return false;
        }
        let b = self.next / BLOCK;
        if self.next.is_multiple_of(BLOCK) {
            if b.is_multiple_of(GROUP) {
                self.first.clear();
            }
            self.index.next_key(&mut self.first);
            self.cur.clone_from(&self.first);
            self.block = Some(self.run.block_reader(b, self.dict));
            self.shared = None;
        } else if let Some(src) = self.block.as_mut() {
            let (shared, bits) = src.next_key_spanned(&mut self.cur);
            (self.shared, self.bits) = (Some(shared), bits);
        }
        self.next += 1;
        true
    }

    /// The current key (valid after `advance` returned `true`).
    pub(crate) fn key(&self) -> &[u8] {
        &self.cur
    }

    /// How the current key was coded in its run (`None` for a block's
    /// first key, which the index holds as plain bytes, and for a key of a
    /// corrupt stream).
    pub(crate) fn coding(&self) -> Option<Carried<'_>> {
        Some(Carried {
            old: self.shared?,
            input: self.block.as_ref()?.1.input(),
            bits: self.bits?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lcp_agrees_with_a_byte_loop() {
        let base = b"org.example.www/articles/2024/some-title-here?x=1";
        for cut in 0..base.len() {
            for len in cut..=base.len() {
                let mut other = base[..len].to_vec();
                if len > cut {
                    other[cut] ^= 1;
                }
                let naive = base.iter().zip(&other).take_while(|(a, b)| a == b).count();
                assert_eq!(lcp(base, &other), naive, "cut {cut} len {len}");
                assert_eq!(lcp(&other, base), naive, "cut {cut} len {len}");
            }
        }
        assert_eq!(lcp(b"", b"abc"), 0);
    }
}
