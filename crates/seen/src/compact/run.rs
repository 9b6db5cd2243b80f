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
//! ├─ blocks     : per block, keys 2..=BLOCK as [varint lcp][varint len][suffix]
//! │               against the previous key; varint bytes Huffman-coded with
//! │               `codes.num`, suffix bytes with `codes.text`; byte aligned
//! └─ codes      : the run's two canonical Huffman codes (~1.1 KiB each)
//! ```
//!
//! Invariants: keys strictly increase across the run; block `b` holds keys
//! `b*BLOCK ..` (the last block may be short); its first key lives only in the
//! index; offsets fit in `u32` (runs stay below 4 GiB).
//!
//! Bytes per key ≈ Huffman(lcp + len + suffix) (≈ 0.6 × (2 + suffix) on URLs)
//! + index (≈ (suffix + 2) / BLOCK + key / (BLOCK · GROUP)) + 4 / BLOCK + 10/8.
//!
//! Cost: `contains` of an absent key is one filter probe 99% of the time;
//! otherwise a binary search over group heads, a scan of <= GROUP index
//! entries and the decode of one block (<= BLOCK keys, stopping at the key).

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

/// Symbol histograms of the two streams: `[num (256), text (256 + MAX_WORDS)]`.
pub(crate) type Histograms = [Vec<u64>; 2];

/// Empty histograms of the right sizes.
pub(crate) fn empty_histograms() -> Histograms {
    [vec![0; 256], vec![0; 256 + MAX_WORDS]]
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

/// Symbol histograms of the block streams a run of `keys` (sorted) would code.
pub(crate) fn histogram<'a>(keys: impl IntoIterator<Item = &'a [u8]>, dict: &Dict) -> Histograms {
    let tokens = dict.tokens();
    let mut h = empty_histograms();
    let (mut prev, mut num): (&[u8], Vec<u8>) = (&[], Vec::new());
    for (i, key) in keys.into_iter().enumerate() {
        if !i.is_multiple_of(BLOCK) {
            let shared = lcp(prev, key);
            num.clear();
            write_varint(&mut num, shared);
            write_varint(&mut num, key.len() - shared);
            num.iter().for_each(|&b| h[0][b as usize] += 1);
            tokenize(&key[shared..], &tokens, |t| h[1][t as usize] += 1);
        }
        prev = key;
    }
    h
}

/// The suffixes a run of `keys` (sorted) would code: what a dictionary learns from.
pub(crate) fn suffixes<'a>(keys: &'a [&'a [u8]]) -> impl Iterator<Item = &'a [u8]> + 'a {
    keys.iter().enumerate().map(|(i, key)| {
        let prev: &[u8] = if i == 0 { &[] } else { keys[i - 1] };
        &key[lcp(prev, key)..]
    })
}

impl Codes {
    /// Codes for histograms `h`, with primary decode tables of `fast` bits.
    pub(crate) fn from_histograms(h: &Histograms, fast: u32) -> Self {
        Self {
            num: Code::from_freqs(&h[0], fast),
            text: Code::from_freqs(&h[1], fast),
            enc: OnceLock::new(),
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
            let shared = self.code_lengths(key);
            match from {
                Some(c) if c.old <= shared => self.code_tail(key, shared, c),
                _ => self.code_text(&key[shared..]),
            }
        }
        self.prev.clear();
        self.prev.extend_from_slice(key);
        self.pushed += 1;
    }

    /// Codes `key` against the previous key: varints with the number code,
    /// the suffix with the text code.
    fn code_key(&mut self, key: &[u8]) {
        let shared = self.code_lengths(key);
        self.code_text(&key[shared..]);
    }

    /// Codes the lcp with the previous key and the suffix length; returns the lcp.
    #[inline]
    fn code_lengths(&mut self, key: &[u8]) -> usize {
        let shared = lcp(&self.prev, key);
        self.num.clear();
        write_varint(&mut self.num, shared);
        write_varint(&mut self.num, key.len() - shared);
        for &b in &self.num {
            self.codes.encoders()[0].put(&mut self.bits, &mut self.run.blocks, u16::from(b));
        }
        shared
    }

    fn code_text(&mut self, text: &[u8]) {
        let (enc, bits, out) = (
            &self.codes.encoders()[1],
            &mut self.bits,
            &mut self.run.blocks,
        );
        tokenize(text, &self.tokens, |t| enc.put(bits, out, t));
    }

    /// Codes `key[shared..]` from `c`, the coding of `key[c.old..]`
    /// (`c.old <= shared`). A letter run that `shared` cuts is tokenised
    /// afresh (the cut tail may be a dictionary word: words are learned from
    /// suffixes cut the same way); the codes from the end of that run on are
    /// copied as bits, since tokens never cross a letter run's end and the
    /// code is the same. A symbol that straddles the copy start (only in a
    /// corrupt stream) leaves literals.
    fn code_tail(&mut self, key: &[u8], shared: usize, c: Carried<'_>) {
        let mut from = shared;
        if shared > c.old
            && shared < key.len()
            && is_letter(key[shared - 1])
            && is_letter(key[shared])
        {
            from += key[shared..].iter().take_while(|&&b| is_letter(b)).count();
            self.code_text(&key[shared..from]);
        }
        let (enc, bits, out) = (
            &self.codes.encoders()[1],
            &mut self.bits,
            &mut self.run.blocks,
        );
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
                key[from..end]
                    .iter()
                    .for_each(|&b| enc.put(bits, out, u16::from(b)));
            }
            pos += len;
        }
        if pos >= from {
            bits.copy_bits(out, c.input, src.bit_pos(), c.bits.1);
        }
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
fn word_after(key: &[u8], skip: usize) -> u64 {
    let rest = key.get(skip..).unwrap_or(&[]);
    let mut buf = [0u8; 8];
    let n = rest.len().min(8);
    buf[..n].copy_from_slice(&rest[..n]);
    u64::from_be_bytes(buf)
}

/// Reads front-coded entries from the index or a Huffman-coded block.
trait ByteSource {
    fn byte(&mut self) -> u8;
    /// A byte of an lcp or length varint.
    fn num_byte(&mut self) -> u8 {
        self.byte()
    }
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
    #[inline]
    fn next_key(&mut self, cur: &mut Vec<u8>) -> usize {
        let shared = self.varint();
        let suffix = self.varint();
        cur.truncate(shared);
        cur.reserve(suffix);
        for _ in 0..suffix {
            cur.push(self.byte());
        }
        shared
    }
}

struct Plain<'a>(&'a [u8], usize);

impl ByteSource for Plain<'_> {
    #[inline]
    fn byte(&mut self) -> u8 {
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
    fn byte(&mut self) -> u8 {
        self.0.text.get(&mut self.1) as u8
    }
    #[inline]
    fn num_byte(&mut self) -> u8 {
        self.0.num.get(&mut self.1) as u8
    }
    /// Text symbols are bytes or dictionary words, until the length is reached.
    #[inline]
    fn next_key(&mut self, cur: &mut Vec<u8>) -> usize {
        let shared = self.varint();
        let end = shared + self.varint();
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
        let end = shared + self.varint();
        cur.truncate(shared);
        let start = self.1.bit_pos();
        self.text(cur, end);
        let clean = cur.len() == end && shared <= prev_len;
        (shared, clean.then(|| (start, self.1.bit_pos())))
    }

    /// Appends text symbols to `cur` until it is `end` bytes long.
    #[inline]
    fn text(&mut self, cur: &mut Vec<u8>, end: usize) {
        cur.reserve(end.saturating_sub(cur.len()));
        while cur.len() < end {
            match self.0.text.get(&mut self.1) {
                s @ 0..=255 => cur.push(s as u8),
                t => match self.2.len() > usize::from(t - 256) {
                    true => cur.extend_from_slice(self.2.word(usize::from(t - 256))),
                    // Only a corrupt stream names a missing word; stop there.
                    false => return,
                },
            }
        }
    }

    /// Decodes a suffix of `len` bytes that starts at byte `from` of its key
    /// (whose first `from` bytes equal `key`'s) and compares it with
    /// `key[from..]`, skipping the rest at the first difference. Returns the
    /// decoded key's order against `key` and the bytes the two share.
    #[inline]
    fn compare_text(&mut self, key: &[u8], from: usize, len: usize) -> (Ordering, usize) {
        let (end, mut pos) = (from + len, from);
        while pos < end {
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
                            self.skip_text(end - pos - 1);
                            return (other.map_or(Ordering::Greater, |k| byte.cmp(k)), pos);
                        }
                    }
                }
                // Only a corrupt stream names a missing word: call it above `key`.
                t if self.2.len() <= usize::from(t - 256) => return (Ordering::Greater, pos),
                t => self.2.word(usize::from(t - 256)),
            };
            let word = &word[..word.len().min(end - pos)];
            let common = lcp(word, key.get(pos..).unwrap_or(&[]));
            if common < word.len() {
                self.skip_text(end - pos - word.len());
                let order = key
                    .get(pos + common)
                    .map_or(Ordering::Greater, |k| word[common].cmp(k));
                return (order, pos + common);
            }
            pos += word.len();
        }
        (end.cmp(&key.len()), end)
    }

    /// Decodes and drops `bytes` bytes of text.
    #[inline]
    fn skip_text(&mut self, bytes: usize) {
        let mut left = bytes;
        while left > 0 {
            let n = match self.0.text.get(&mut self.1) {
                0..=255 => 1,
                t => self.2.word_len(usize::from(t - 256)),
            };
            // A corrupt stream may overshoot or name a missing word (length 0).
            if n == 0 || n > left {
                return;
            }
            left -= n;
        }
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
    /// skipped (decoded, not stored); one sharing fewer is above. A key
    /// sharing exactly `m` is compared with `key` as it decodes. No key is
    /// rebuilt: the bytes a later key reuses are the first `m`, which equal
    /// `key`'s.
    pub(crate) fn block_contains(&self, b: usize, first: &[u8], key: &[u8], dict: &Dict) -> bool {
        let mut m = lcp(first, key);
        let mut src = self.block_reader(b, dict);
        for _ in 1..self.keys_in_block(b) {
            let shared = src.varint();
            let suffix = src.varint();
            if shared > m {
                src.skip_text(suffix);
                continue;
            }
            if shared < m {
                return false;
            }
            match src.compare_text(key, m, suffix) {
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
