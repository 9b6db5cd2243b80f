//! The lookup mix: half keys that were inserted, half near-misses (an
//! inserted key with a suffix appended, so tries must walk the whole shared
//! prefix before answering), shuffled, each with its exact answer.

use std::collections::HashSet;

use super::keys::KeyArena;

/// Lookups with their exact answers.
pub struct Probes {
    /// The keys to look up.
    pub keys: KeyArena,
    /// `present[i]`: whether `keys.get(i)` was inserted.
    pub present: Vec<bool>,
}

/// The exact answer for the input: distinct keys and the probes.
pub struct Truth {
    /// Number of distinct keys in the input.
    pub unique: usize,
    /// The lookup mix.
    pub probes: Probes,
}

fn mix(x: u64) -> u64 {
    let z = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (z ^ (z >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ (z >> 32)
}

impl Truth {
    /// Counts distinct keys and draws `min(n, 1M)` probes.
    pub fn new(keys: &KeyArena) -> anyhow::Result<Self> {
        let exact: HashSet<&[u8]> = keys.iter().collect();
        let count = keys.len().min(1_000_000);
        let mut probes = Probes {
            keys: KeyArena::default(),
            present: Vec::with_capacity(count),
        };
        let mut buf = Vec::new();
        for i in 0..count {
            let r = mix(i as u64);
            let base = keys.get((r % keys.len() as u64) as usize);
            buf.clear();
            buf.extend_from_slice(base);
            if r >> 63 == 1 {
                // A near miss: usually absent, but the exact set decides.
                buf.extend_from_slice(format!("/x{}", r % 1000).as_bytes());
            }
            probes.present.push(exact.contains(buf.as_slice()));
            probes.keys.push(&buf)?;
        }
        Ok(Self {
            unique: exact.len(),
            probes,
        })
    }
}
