//! Static canonical Huffman coding of bytes, one code per run.
//!
//! ```text
//! lens  : [u8; 256]            code length of every byte (1..=MAX_LEN; all bytes coded)
//! primary: [u16; 2^8]          next 8 stream bits -> (symbol << 4) | length, 0 if longer
//! slow   : canonical first code / count / offset per length, for 9..=MAX_LEN bit codes
//! stream: LSB-first bits; a symbol's code is stored bit-reversed so the
//!         decoder can index `table` with the low bits of its buffer
//! ```
//!
//! Every byte gets a code (frequencies are smoothed by +1), so a run's code
//! can encode keys merged in from other runs with an estimated histogram.
//! Lengths are capped at `MAX_LEN` by halving the frequencies and rebuilding.
//! Cost: encoding is one table lookup per byte, decoding too for codes up to
//! 8 bits (the frequent bytes), a few steps more for rarer ones. About
//! 1.1 KiB per run, so that small runs stay cheap.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Longest code.
pub(crate) const MAX_LEN: u32 = 11;

/// Bits the primary decode table resolves; longer codes take the slow path.
const FAST: u32 = 10;

/// A canonical Huffman code over bytes (decoder side, ~1.1 KiB).
#[derive(Debug, Clone)]
pub(crate) struct Code {
    lens: [u8; 256],
    /// Next FAST stream bits -> (symbol << 4) | length, or 0 for a longer code.
    primary: Vec<u16>,
    /// Symbols in canonical order (by length, then value).
    sorted: [u8; 256],
    /// Per length: first canonical code, and index of its symbol in `sorted`.
    first: [u16; MAX_LEN as usize + 1],
    count: [u16; MAX_LEN as usize + 1],
    offset: [u16; MAX_LEN as usize + 1],
}

/// Encoder side of a [`Code`]: bit-reversed codes and lengths.
pub(crate) struct Encoder {
    codes: [u16; 256],
    lens: [u8; 256],
}

/// Code lengths for `freqs` (every symbol gets a code), capped at `MAX_LEN`.
fn lengths(freqs: &[u64; 256]) -> [u8; 256] {
    let mut f: Vec<u64> = freqs.iter().map(|&x| x + 1).collect();
    loop {
        let lens = unbounded_lengths(&f);
        if lens.iter().all(|&l| u32::from(l) <= MAX_LEN) {
            return lens;
        }
        f.iter_mut().for_each(|x| *x = *x / 2 + 1);
    }
}

fn unbounded_lengths(f: &[u64]) -> [u8; 256] {
    // Nodes 0..256 are leaves; parents get new ids. `parent[i]` links upward.
    let mut parent = vec![usize::MAX; 511];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = f
        .iter()
        .enumerate()
        .map(|(i, &w)| Reverse((w, i)))
        .collect();
    let mut next = 256;
    while heap.len() > 1 {
        let Reverse((wa, a)) = heap.pop().expect("two nodes");
        let Reverse((wb, b)) = heap.pop().expect("two nodes");
        parent[a] = next;
        parent[b] = next;
        heap.push(Reverse((wa + wb, next)));
        next += 1;
    }
    let mut depth = vec![0u8; next];
    for i in (0..next - 1).rev() {
        depth[i] = depth[parent[i]] + 1;
    }
    let mut lens = [0u8; 256];
    lens.copy_from_slice(&depth[..256]);
    lens
}

/// Canonical codes (MSB-first values) for `lens`, and the symbol order.
fn canonical(lens: &[u8; 256]) -> ([u32; 256], [u8; 256]) {
    let mut order: Vec<u8> = (0..=255).collect();
    order.sort_by_key(|&s| (lens[s as usize], s));
    let mut codes = [0u32; 256];
    let (mut code, mut prev_len) = (0u32, 0u8);
    for &s in &order {
        code <<= lens[s as usize] - prev_len;
        prev_len = lens[s as usize];
        codes[s as usize] = code;
        code += 1;
    }
    let mut sorted = [0u8; 256];
    sorted.copy_from_slice(&order);
    (codes, sorted)
}

fn reversed(code: u32, len: u8) -> u32 {
    code.reverse_bits() >> (32 - u32::from(len))
}

impl Code {
    /// The code for a byte histogram.
    pub(crate) fn from_freqs(freqs: &[u64; 256]) -> Self {
        let lens = lengths(freqs);
        let (codes, sorted) = canonical(&lens);
        let mut primary = vec![0u16; 1 << FAST];
        let (mut first, mut count, mut offset) = ([0u16; 12], [0u16; 12], [0u16; 12]);
        for (i, &s) in sorted.iter().enumerate().rev() {
            let len = lens[s as usize];
            first[len as usize] = codes[s as usize] as u16;
            offset[len as usize] = i as u16;
            count[len as usize] += 1;
            if u32::from(len) <= FAST {
                let rev = reversed(codes[s as usize], len);
                for fill in 0..1u32 << (FAST - u32::from(len)) {
                    primary[(rev | fill << len) as usize] = u16::from(s) << 4 | u16::from(len);
                }
            }
        }
        Self {
            lens,
            primary,
            sorted,
            first,
            count,
            offset,
        }
    }

    /// The encoder for this code.
    pub(crate) fn encoder(&self) -> Encoder {
        let (codes, _) = canonical(&self.lens);
        let mut rev = [0u16; 256];
        for s in 0..256 {
            rev[s] = reversed(codes[s], self.lens[s]) as u16;
        }
        Encoder {
            codes: rev,
            lens: self.lens,
        }
    }

    /// Expected byte histogram of `symbols` bytes under this code (2^-len each).
    pub(crate) fn add_estimate(&self, symbols: u64, freqs: &mut [u64; 256]) {
        for (f, &l) in freqs.iter_mut().zip(&self.lens) {
            *f += symbols >> l;
        }
    }

    /// Heap bytes owned.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.primary.capacity() * 2
    }

    /// Decodes one byte from `input`.
    #[inline]
    pub(crate) fn get(&self, input: &mut BitReader<'_>) -> u8 {
        let entry = self.primary[input.peek(FAST) as usize];
        if entry != 0 {
            input.consume(u32::from(entry & 15));
            return (entry >> 4) as u8;
        }
        self.slow_get(input)
    }

    /// Canonical decoding one bit at a time, for codes longer than FAST.
    fn slow_get(&self, input: &mut BitReader<'_>) -> u8 {
        let bits = input.peek(MAX_LEN);
        let mut code = 0u32;
        for len in 1..=MAX_LEN as usize {
            code = code << 1 | ((bits >> (len - 1)) & 1) as u32;
            let delta = code.wrapping_sub(u32::from(self.first[len]));
            if self.count[len] > 0 && delta < u32::from(self.count[len]) {
                input.consume(len as u32);
                return self.sorted[usize::from(self.offset[len]) + delta as usize];
            }
        }
        // Unreachable for streams this code wrote; a zero byte keeps decoding total.
        input.consume(MAX_LEN);
        0
    }
}

impl Encoder {
    /// Appends the code of `byte` to `out`.
    #[inline]
    pub(crate) fn put(&self, out: &mut BitWriter<'_>, byte: u8) {
        out.put(
            u64::from(self.codes[byte as usize]),
            u32::from(self.lens[byte as usize]),
        );
    }
}

/// LSB-first bit writer appending to a byte vector.
pub(crate) struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    bits: u32,
}

impl<'a> BitWriter<'a> {
    pub(crate) fn new(out: &'a mut Vec<u8>) -> Self {
        Self {
            out,
            acc: 0,
            bits: 0,
        }
    }

    #[inline]
    fn put(&mut self, code: u64, len: u32) {
        self.acc |= code << self.bits;
        self.bits += len;
        if self.bits >= 32 {
            self.out.extend_from_slice(&(self.acc as u32).to_le_bytes());
            self.acc >>= 32;
            self.bits -= 32;
        }
    }

    /// Flushes the last partial byte (zero padded).
    pub(crate) fn finish(self) {
        let bytes = self.bits.div_ceil(8) as usize;
        self.out.extend_from_slice(&self.acc.to_le_bytes()[..bytes]);
    }
}

/// LSB-first bit reader; reads past the end as zero bits.
pub(crate) struct BitReader<'a> {
    input: &'a [u8],
    pos: usize,
    acc: u64,
    bits: u32,
}

impl<'a> BitReader<'a> {
    pub(crate) fn new(input: &'a [u8]) -> Self {
        Self {
            input,
            pos: 0,
            acc: 0,
            bits: 0,
        }
    }

    #[inline]
    fn peek(&mut self, n: u32) -> u64 {
        if self.bits < 32 {
            self.refill();
        }
        self.acc & ((1 << n) - 1)
    }

    /// Tops the accumulator up to at least 56 bits, eight bytes at a time
    /// when the input allows (the common case inside a block).
    fn refill(&mut self) {
        if let Some(chunk) = self.input.get(self.pos..self.pos + 8) {
            let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            self.acc |= word << self.bits;
            let taken = (63 - self.bits) / 8;
            self.pos += taken as usize;
            self.bits += taken * 8;
            return;
        }
        while self.bits <= 56 {
            let byte = self.input.get(self.pos).copied().unwrap_or(0);
            self.acc |= u64::from(byte) << self.bits;
            self.pos += 1;
            self.bits += 8;
        }
    }

    #[inline]
    fn consume(&mut self, n: u32) {
        self.acc >>= n;
        self.bits -= n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(data: &[u8], freqs: &[u64; 256]) -> usize {
        let code = Code::from_freqs(freqs);
        let enc = code.encoder();
        let mut out = Vec::new();
        let mut w = BitWriter::new(&mut out);
        data.iter().for_each(|&b| enc.put(&mut w, b));
        w.finish();
        let mut r = BitReader::new(&out);
        let back: Vec<u8> = (0..data.len()).map(|_| code.get(&mut r)).collect();
        assert_eq!(back, data);
        out.len()
    }

    #[test]
    fn round_trips_every_byte_under_any_histogram() {
        let all: Vec<u8> = (0..=255).chain((0..=255).rev()).collect();
        round_trip(&all, &[0; 256]);
        let mut skewed = [0u64; 256];
        skewed[b'a' as usize] = 1 << 40;
        skewed[b'b' as usize] = 1 << 20;
        round_trip(&all, &skewed);
        let mut fib = [0u64; 256];
        let (mut a, mut b) = (1u64, 1u64);
        for f in fib.iter_mut().take(60) {
            *f = a;
            (a, b) = (b, a.saturating_add(b));
        }
        round_trip(&all, &fib);
    }

    #[test]
    fn lengths_are_capped_and_form_a_complete_prefix_code() {
        let mut f = [1u64; 256];
        f[0] = u64::MAX / 4;
        let lens = lengths(&f);
        assert!(lens.iter().all(|&l| l >= 1 && u32::from(l) <= MAX_LEN));
        let kraft: f64 = lens.iter().map(|&l| 2f64.powi(-i32::from(l))).sum();
        assert!((kraft - 1.0).abs() < 1e-9, "{kraft}");
    }

    #[test]
    fn skewed_text_compresses() {
        let text = b"org.wikipedia.en/wiki/Some_title_here".repeat(50);
        let mut freqs = [0u64; 256];
        text.iter().for_each(|&b| freqs[b as usize] += 1);
        let bytes = round_trip(&text, &freqs);
        assert!(bytes * 10 < text.len() * 7, "{bytes} of {}", text.len());
    }
}
