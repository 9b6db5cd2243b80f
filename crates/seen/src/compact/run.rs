//! A frozen run: sorted keys, front-coded in blocks, Huffman-coded per run.
//!
//! ```text
//! Run
//! ├─ filter     : BlockFilter, 10 bits per key (≈1% false positives)
//! ├─ index      : first key of every block, front-coded against the previous
//! │               block's first key: [varint lcp][varint len][suffix];
//! │               every GROUP-th entry is a group head with lcp = 0 (full key)
//! ├─ group_offs : u32 offset in `index` of each group head (binary searched)
//! ├─ block_offs : u32 offset in `blocks` of each block, plus the end
//! ├─ blocks     : per block, keys 2..=BLOCK as [varint lcp][varint len][suffix]
//! │               against the previous key, all bytes Huffman-coded, byte aligned
//! └─ code       : the run's canonical Huffman code (~1.1 KiB)
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

use xxhash_rust::xxh3::xxh3_64;

use super::buffer::{read_varint, write_varint};
use super::filter::BlockFilter;
use super::huffman::{BitReader, BitWriter, Code, Encoder};

/// Keys per block.
pub(crate) const BLOCK: usize = 32;
/// Blocks per index group.
const GROUP: usize = 16;

/// An immutable sorted run of keys.
#[derive(Debug)]
pub(crate) struct Run {
    len: usize,
    symbols: u64,
    code: Code,
    filter: BlockFilter,
    index: Vec<u8>,
    group_offs: Vec<u32>,
    block_offs: Vec<u32>,
    blocks: Vec<u8>,
}

fn lcp(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Appends the front coding of `key` against `prev` to `out`.
fn front_code(out: &mut Vec<u8>, prev: &[u8], key: &[u8]) {
    let shared = lcp(prev, key);
    write_varint(out, shared);
    write_varint(out, key.len() - shared);
    out.extend_from_slice(&key[shared..]);
}

/// Byte histogram of the block streams a run of `keys` (sorted) would code.
pub(crate) fn histogram<'a>(keys: impl IntoIterator<Item = &'a [u8]>) -> [u64; 256] {
    let mut freqs = [0u64; 256];
    let (mut prev, mut raw): (&[u8], Vec<u8>) = (&[], Vec::new());
    for (i, key) in keys.into_iter().enumerate() {
        if !i.is_multiple_of(BLOCK) {
            raw.clear();
            front_code(&mut raw, prev, key);
            raw.iter().for_each(|&b| freqs[b as usize] += 1);
        }
        prev = key;
    }
    freqs
}

/// Builds a [`Run`] from exactly `len` keys pushed in increasing order.
pub(crate) struct RunBuilder {
    run: Run,
    enc: Encoder,
    pushed: usize,
    prev: Vec<u8>,
    prev_first: Vec<u8>,
    raw: Vec<u8>,
}

impl RunBuilder {
    pub(crate) fn new(len: usize, code: Code) -> Self {
        let enc = code.encoder();
        let run = Run {
            len,
            symbols: 0,
            code,
            filter: BlockFilter::with_keys(len),
            index: Vec::new(),
            group_offs: Vec::with_capacity(len.div_ceil(BLOCK * GROUP)),
            block_offs: Vec::with_capacity(len.div_ceil(BLOCK) + 1),
            blocks: Vec::new(),
        };
        Self {
            run,
            enc,
            pushed: 0,
            prev: Vec::new(),
            prev_first: Vec::new(),
            raw: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, key: &[u8]) {
        debug_assert!(self.pushed == 0 || self.prev.as_slice() < key);
        self.run.filter.insert(xxh3_64(key));
        if self.pushed.is_multiple_of(BLOCK) {
            self.start_block(key);
        } else {
            front_code(&mut self.raw, &self.prev, key);
        }
        self.prev.clear();
        self.prev.extend_from_slice(key);
        self.pushed += 1;
    }

    fn start_block(&mut self, key: &[u8]) {
        self.seal_block();
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

    fn seal_block(&mut self) {
        if self.raw.is_empty() {
            return;
        }
        self.run.symbols += self.raw.len() as u64;
        let mut w = BitWriter::new(&mut self.run.blocks);
        self.raw.iter().for_each(|&b| self.enc.put(&mut w, b));
        w.finish();
        self.raw.clear();
    }

    pub(crate) fn finish(mut self) -> Run {
        debug_assert_eq!(self.pushed, self.run.len);
        self.seal_block();
        self.run.block_offs.push(self.run.blocks.len() as u32);
        self.run.blocks.shrink_to_fit();
        self.run.index.shrink_to_fit();
        self.run
    }
}

/// Reads front-coded entries from the index or a Huffman-coded block.
trait ByteSource {
    fn byte(&mut self) -> u8;
    #[inline]
    fn varint(&mut self) -> usize {
        let (mut v, mut shift) = (0usize, 0);
        loop {
            let b = self.byte();
            v |= usize::from(b & 0x7F) << shift;
            if b < 0x80 {
                return v;
            }
            shift += 7;
        }
    }
    /// Replaces `cur` (the previous key) by the next key.
    #[inline]
    fn next_key(&mut self, cur: &mut Vec<u8>) {
        let shared = self.varint();
        let suffix = self.varint();
        cur.truncate(shared);
        cur.reserve(suffix);
        for _ in 0..suffix {
            cur.push(self.byte());
        }
    }
}

struct Plain<'a>(&'a [u8], usize);

impl ByteSource for Plain<'_> {
    #[inline]
    fn byte(&mut self) -> u8 {
        self.1 += 1;
        self.0[self.1 - 1]
    }
}

struct Coded<'a>(&'a Code, BitReader<'a>);

impl ByteSource for Coded<'_> {
    #[inline]
    fn byte(&mut self) -> u8 {
        self.0.get(&mut self.1)
    }
}

impl Run {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn code(&self) -> &Code {
        &self.code
    }

    pub(crate) fn symbols(&self) -> u64 {
        self.symbols
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

    fn block_reader(&self, b: usize) -> Coded<'_> {
        let bytes = &self.blocks[self.block_offs[b] as usize..self.block_offs[b + 1] as usize];
        Coded(&self.code, BitReader::new(bytes))
    }

    fn keys_in_block(&self, b: usize) -> usize {
        BLOCK.min(self.len - b * BLOCK)
    }

    /// The block that would hold `key` and its first key, if `key` is not
    /// below the run's first key.
    fn find_block(&self, key: &[u8]) -> Option<(usize, Vec<u8>)> {
        let groups = self.group_offs.len();
        let g = partition(groups, |g| self.group_head(g) <= key).checked_sub(1)?;
        let mut src = Plain(&self.index, self.group_offs[g] as usize);
        let mut cur = Vec::new();
        src.next_key(&mut cur);
        let (mut best, mut best_key) = (g * GROUP, cur.clone());
        for b in g * GROUP + 1..((g + 1) * GROUP).min(self.blocks_count()) {
            src.next_key(&mut cur);
            if cur.as_slice() > key {
                break;
            }
            best = b;
            best_key.clone_from(&cur);
        }
        Some((best, best_key))
    }

    /// Whether `key` (with xxh3 `hash`) is in the run.
    pub(crate) fn contains(&self, key: &[u8], hash: u64) -> bool {
        if !self.filter.may_contain(hash) {
            return false;
        }
        let Some((b, mut cur)) = self.find_block(key) else {
            return false;
        };
        let mut src = self.block_reader(b);
        for i in 0..self.keys_in_block(b) {
            if i > 0 {
                src.next_key(&mut cur);
            }
            match cur.as_slice().cmp(key) {
                Ordering::Equal => return true,
                Ordering::Greater => return false,
                Ordering::Less => {}
            }
        }
        false
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.code.heap_bytes()
            + self.filter.heap_bytes()
            + self.index.capacity()
            + (self.group_offs.capacity() + self.block_offs.capacity()) * 4
            + self.blocks.capacity()
    }

    /// A cursor over the keys in increasing order.
    pub(crate) fn cursor(&self) -> RunCursor<'_> {
        RunCursor {
            run: self,
            next: 0,
            index: Plain(&self.index, 0),
            first: Vec::new(),
            block: None,
            cur: Vec::new(),
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
    next: usize,
    index: Plain<'a>,
    first: Vec<u8>,
    block: Option<Coded<'a>>,
    cur: Vec<u8>,
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
            self.block = Some(self.run.block_reader(b));
        } else if let Some(src) = self.block.as_mut() {
            src.next_key(&mut self.cur);
        }
        self.next += 1;
        true
    }

    /// The current key (valid after `advance` returned `true`).
    pub(crate) fn key(&self) -> &[u8] {
        &self.cur
    }
}
