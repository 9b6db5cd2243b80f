//! Static canonical Huffman coding of bytes, one code per run.
//!
//! ```text
//! lens  : [u8; 256]            code length of every byte (1..=MAX_LEN; all bytes coded)
//! primary: [u16; 2^fast]        next `fast` (8 or 10) stream bits -> (symbol << 4) | length,
//!                               0 if the code is longer
//! slow   : canonical first code / count / offset per length, for 9..=MAX_LEN bit codes
//! stream: LSB-first bits; a symbol's code is stored bit-reversed so the
//!         decoder can index `table` with the low bits of its buffer
//! ```
//!
//! Every byte gets a code (frequencies are smoothed by +1), so a run's code
//! can encode keys merged in from other runs with an estimated histogram.
//! Lengths are capped at `MAX_LEN` by halving the frequencies and rebuilding.
//! Cost: encoding is one table lookup per symbol, decoding too for codes up
//! to 8 bits (the frequent symbols), a few steps more for rarer ones. Small
//! runs have a smaller primary table or none. Memory: 2 bytes per symbol
//! plus a primary table of 0, 512 or 2048 bytes by run size.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Longest code (the text alphabet has up to 512 symbols).
pub(crate) const MAX_LEN: u32 = 12;

/// A canonical Huffman code over symbols `0..n` (n = 256 or 512).
#[derive(Debug, Clone)]
pub(crate) struct Code {
    /// Bits the primary table resolves (0: no table); longer codes take the slow path.
    fast: u32,
    /// Next `fast` stream bits -> (symbol << 4) | length, or 0 for a longer
    /// code; empty for small runs, which decode on the slow path only.
    primary: Vec<u16>,
    /// Symbols in canonical order (by length, then value).
    sorted: Vec<u16>,
    /// Per length: first canonical code, count, and index of its first symbol in `sorted`.
    first: [u16; MAX_LEN as usize + 1],
    count: [u16; MAX_LEN as usize + 1],
    offset: [u16; MAX_LEN as usize + 1],
}

/// Encoder side of a [`Code`]: bit-reversed codes and lengths.
#[derive(Debug, Clone)]
pub(crate) struct Encoder {
    codes: Vec<u16>,
    lens: Vec<u8>,
}

/// Code lengths for `freqs` (every symbol gets a code), capped at `MAX_LEN`.
fn lengths(freqs: &[u64]) -> Vec<u8> {
    let mut f: Vec<u64> = freqs.iter().map(|&x| x + 1).collect();
    loop {
        let lens = unbounded_lengths(&f);
        if lens.iter().all(|&l| u32::from(l) <= MAX_LEN) {
            return lens;
        }
        f.iter_mut().for_each(|x| *x = *x / 2 + 1);
    }
}

fn unbounded_lengths(f: &[u64]) -> Vec<u8> {
    // Nodes 0..n are leaves; parents get new ids. `parent[i]` links upward.
    let n = f.len();
    let mut parent = vec![usize::MAX; 2 * n - 1];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = f
        .iter()
        .enumerate()
        .map(|(i, &w)| Reverse((w, i)))
        .collect();
    let mut next = n;
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
        depth[i] = depth[parent[i]].saturating_add(1);
    }
    depth.truncate(n);
    depth
}

/// Canonical codes (MSB-first values) for `lens`, and the symbol order.
fn canonical(lens: &[u8]) -> (Vec<u32>, Vec<u16>) {
    let mut order: Vec<u16> = (0..lens.len() as u16).collect();
    order.sort_by_key(|&s| (lens[s as usize], s));
    let mut codes = vec![0u32; lens.len()];
    let (mut code, mut prev_len) = (0u32, 0u8);
    for &s in &order {
        code <<= lens[s as usize] - prev_len;
        prev_len = lens[s as usize];
        codes[s as usize] = code;
        code += 1;
    }
    (codes, order)
}

fn reversed(code: u32, len: u8) -> u32 {
    code.reverse_bits() >> (32 - u32::from(len))
}

impl Code {
    /// The code for a symbol histogram (its length is the alphabet size);
    /// `fast` is the primary decode table's bits (0, or 8..=MAX_LEN: `2^fast` × 2 bytes).
    pub(crate) fn from_freqs(freqs: &[u64], fast: u32) -> Self {
        let lens = lengths(freqs);
        let (codes, sorted) = canonical(&lens);
        let mut primary = vec![0u16; if fast > 0 { 1 << fast } else { 0 }];
        let (mut first, mut count, mut offset) = ([0u16; 13], [0u16; 13], [0u16; 13]);
        for (i, &s) in sorted.iter().enumerate().rev() {
            let len = lens[s as usize];
            first[len as usize] = codes[s as usize] as u16;
            offset[len as usize] = i as u16;
            count[len as usize] += 1;
            if u32::from(len) <= fast {
                let rev = reversed(codes[s as usize], len);
                for fill in 0..1u32 << (fast - u32::from(len)) {
                    primary[(rev | fill << len) as usize] = s << 4 | u16::from(len);
                }
            }
        }
        Self {
            fast,
            primary,
            sorted,
            first,
            count,
            offset,
        }
    }

    /// Code length of every symbol, recovered from the canonical order.
    fn lens(&self) -> Vec<u8> {
        let mut lens = vec![0u8; self.sorted.len()];
        for len in 1..=MAX_LEN as usize {
            let start = usize::from(self.offset[len]);
            for &s in &self.sorted[start..start + usize::from(self.count[len])] {
                lens[usize::from(s)] = len as u8;
            }
        }
        lens
    }

    /// The encoder for this code.
    pub(crate) fn encoder(&self) -> Encoder {
        let lens = self.lens();
        let (codes, _) = canonical(&lens);
        let rev = codes
            .iter()
            .zip(&lens)
            .map(|(&c, &l)| reversed(c, l) as u16)
            .collect();
        Encoder { codes: rev, lens }
    }

    /// Heap bytes owned.
    pub(crate) fn heap_bytes(&self) -> usize {
        (self.primary.capacity() + self.sorted.capacity()) * 2
    }

    /// Decodes one symbol from `input`.
    #[inline]
    pub(crate) fn get(&self, input: &mut BitReader<'_>) -> u16 {
        if self.fast == 0 {
            return self.slow_get(input, 1);
        }
        let entry = self.primary[input.peek(self.fast) as usize];
        if entry != 0 {
            input.consume(u32::from(entry & 15));
            return entry >> 4;
        }
        self.slow_get(input, self.fast as usize + 1)
    }

    /// Canonical decoding without the primary table: the code of length
    /// `len` is the `len`-bit prefix of the stream read MSB-first, and the
    /// right length is the first whose prefix falls below that length's
    /// last code + 1 (canonical codes of one length are consecutive).
    fn slow_get(&self, input: &mut BitReader<'_>, from_len: usize) -> u16 {
        let bits = input.peek(MAX_LEN) as u32;
        let msb_first = bits.reverse_bits() >> (32 - MAX_LEN);
        for len in from_len..=MAX_LEN as usize {
            let count = u32::from(self.count[len]);
            if count == 0 {
                continue;
            }
            let delta =
                (msb_first >> (MAX_LEN as usize - len)).wrapping_sub(u32::from(self.first[len]));
            if delta < count {
                input.consume(len as u32);
                return self.sorted[usize::from(self.offset[len]) + delta as usize];
            }
        }
        // Unreachable for streams this code wrote; symbol 0 keeps decoding total.
        input.consume(MAX_LEN);
        0
    }
}

impl Encoder {
    /// Heap bytes owned.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.codes.capacity() * 2 + self.lens.capacity()
    }

    /// Length in bits of `symbol`'s code.
    #[inline]
    pub(crate) fn bits(&self, symbol: u16) -> usize {
        usize::from(self.lens[symbol as usize])
    }

    /// Appends the code of `symbol` to `out`.
    #[inline]
    pub(crate) fn put(&self, w: &mut BitWriter, out: &mut Vec<u8>, symbol: u16) {
        let (code, len) = (self.codes[symbol as usize], self.lens[symbol as usize]);
        w.put(out, u64::from(code), u32::from(len));
    }
}

/// Bits `at..at + n` (`n <= 32`) of the LSB-first stream `input`, reading
/// past its end as zeros.
#[inline]
fn bits_at(input: &[u8], at: usize, n: u32) -> u64 {
    let byte = at / 8;
    let word = match input.get(byte..byte + 8) {
        Some(chunk) => u64::from_le_bytes(chunk.try_into().expect("8 bytes")),
        None => {
            let mut buf = [0u8; 8];
            let tail = input.get(byte..).unwrap_or(&[]);
            buf[..tail.len()].copy_from_slice(tail);
            u64::from_le_bytes(buf)
        }
    };
    (word >> (at % 8)) & ((1 << n) - 1)
}

/// LSB-first bit accumulator; the caller passes the output vector.
#[derive(Debug, Default)]
pub(crate) struct BitWriter {
    acc: u64,
    bits: u32,
}

impl BitWriter {
    #[inline]
    fn put(&mut self, out: &mut Vec<u8>, code: u64, len: u32) {
        self.acc |= code << self.bits;
        self.bits += len;
        if self.bits >= 32 {
            out.extend_from_slice(&(self.acc as u32).to_le_bytes());
            self.acc >>= 32;
            self.bits -= 32;
        }
    }

    /// Appends bits `from..to` of the LSB-first stream `input` (coded with
    /// the same code: a merge copies a key's text codes unchanged).
    #[inline]
    pub(crate) fn copy_bits(&mut self, out: &mut Vec<u8>, input: &[u8], from: usize, to: usize) {
        let mut at = from;
        while at < to {
            let n = (to - at).min(32) as u32;
            self.put(out, bits_at(input, at, n), n);
            at += n as usize;
        }
    }

    /// Flushes the last partial byte (zero padded) and starts afresh.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        let bytes = self.bits.div_ceil(8) as usize;
        out.extend_from_slice(&self.acc.to_le_bytes()[..bytes]);
        *self = Self::default();
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

    /// A reader of `input` from bit `bit` on.
    pub(crate) fn at(input: &'a [u8], bit: usize) -> Self {
        let mut r = Self {
            input,
            pos: bit / 8,
            acc: 0,
            bits: 0,
        };
        r.refill();
        r.consume((bit % 8) as u32);
        r
    }

    /// Stream bits consumed so far.
    #[inline]
    pub(crate) fn bit_pos(&self) -> usize {
        self.pos * 8 - self.bits as usize
    }

    /// Moves to stream bit `bit` (forward or back): within the bits already
    /// read ahead it only drops them, else it reads afresh from there.
    #[inline]
    pub(crate) fn seek(&mut self, bit: usize) {
        let at = self.bit_pos();
        if bit >= at && bit - at < self.bits as usize {
            self.consume((bit - at) as u32);
        } else {
            *self = Self::at(self.input, bit);
        }
    }

    /// The stream this reader reads.
    pub(crate) fn input(&self) -> &'a [u8] {
        self.input
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

    /// Codes `data` (symbols below `freqs.len()`) with and without the
    /// primary table, checks both decode back, returns the coded size.
    fn round_trip_symbols(data: &[u16], freqs: &[u64]) -> usize {
        let mut sizes = Vec::new();
        for fast in [0, 8, 10] {
            let code = Code::from_freqs(freqs, fast);
            let enc = code.encoder();
            let mut out = Vec::new();
            let mut w = BitWriter::default();
            data.iter().for_each(|&s| enc.put(&mut w, &mut out, s));
            w.finish(&mut out);
            let mut r = BitReader::new(&out);
            let back: Vec<u16> = (0..data.len()).map(|_| code.get(&mut r)).collect();
            assert!(back == data, "round trip failed (fast = {fast})");
            assert_eq!(code.lens(), lengths(freqs));
            sizes.push(out.len());
        }
        assert!(sizes.iter().all(|&n| n == sizes[0]));
        sizes[0]
    }

    fn round_trip(data: &[u8], freqs: &[u64]) -> usize {
        let symbols: Vec<u16> = data.iter().map(|&b| u16::from(b)).collect();
        round_trip_symbols(&symbols, freqs)
    }

    /// A merge copies a key's codes as bits: any bit range of a stream,
    /// copied at any writer offset, decodes to the same symbols, and a
    /// reader started at a symbol's bit reads on from there.
    #[test]
    fn copied_bit_ranges_decode_to_the_same_symbols() {
        let data: Vec<u16> = (0..300u16).map(|i| (i * 37 + i / 7) % 256).collect();
        let freqs: Vec<u64> = (0..256u64).map(|s| (s * 7919) % 97 + 1).collect();
        let code = Code::from_freqs(&freqs, 8);
        let enc = code.encoder();
        let (mut src, mut w, mut starts) = (Vec::new(), BitWriter::default(), Vec::new());
        for &s in &data {
            starts.push(src.len() * 8 + w.bits as usize);
            enc.put(&mut w, &mut src, s);
        }
        let end = src.len() * 8 + w.bits as usize;
        w.finish(&mut src);
        starts.push(end);
        for (a, b) in [(0, 300), (3, 4), (17, 250), (299, 300), (120, 120)] {
            let mut r = BitReader::at(&src, starts[a]);
            assert_eq!(r.bit_pos(), starts[a]);
            assert!((a..b).all(|i| code.get(&mut r) == data[i]), "reader at {a}");
            for lead in [0u16, 5, 31] {
                let (mut out, mut w) = (Vec::new(), BitWriter::default());
                (0..lead).for_each(|s| enc.put(&mut w, &mut out, s));
                w.copy_bits(&mut out, &src, starts[a], starts[b]);
                w.finish(&mut out);
                let mut r = BitReader::new(&out);
                assert!((0..lead).all(|s| code.get(&mut r) == s));
                assert!((a..b).all(|i| code.get(&mut r) == data[i]), "copy {a}..{b}");
            }
        }
    }

    #[test]
    fn round_trips_a_512_symbol_alphabet() {
        let data: Vec<u16> = (0..512).chain((0..512).step_by(7)).collect();
        let mut freqs = vec![0u64; 512];
        (300..320).for_each(|s| freqs[s] = 1000);
        round_trip_symbols(&data, &freqs);
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

    #[test]
    fn seek_lands_on_every_symbol_boundary_forward_and_back() {
        let data: Vec<u16> = (0..400u16).map(|i| (i * 131 + i / 3) % 256).collect();
        let freqs: Vec<u64> = (0..256u64).map(|s| 1 + (s * s) % 53).collect();
        let code = Code::from_freqs(&freqs, 8);
        let enc = code.encoder();
        let (mut w, mut out, mut starts) = (BitWriter::default(), Vec::new(), Vec::new());
        let mut at = 0;
        for &s in &data {
            starts.push(at);
            at += enc.bits(s);
            enc.put(&mut w, &mut out, s);
        }
        w.finish(&mut out);
        // Near (within the read-ahead), far, backwards, and to the start.
        let order: Vec<usize> = (0..data.len())
            .step_by(3)
            .chain((0..data.len()).rev().step_by(17))
            .chain([0, data.len() - 1, 5, 6, 200, 7])
            .collect();
        let mut r = BitReader::new(&out);
        for i in order {
            r.seek(starts[i]);
            assert_eq!(r.bit_pos(), starts[i]);
            assert_eq!(code.get(&mut r), data[i], "symbol {i}");
            assert_eq!(r.bit_pos(), starts[i] + enc.bits(data[i]));
        }
    }
}
