//! The bench's key list: canonical keys packed in one byte arena plus end
//! offsets (4 bytes of overhead per key, no per-key allocation), so the list
//! itself stays small and out of the backends' measured bytes.

use std::io::BufRead;

use anyhow::{Context, bail};
use mgz_url::{CanonicalUrl, Policy};

/// Keys packed end to end: key `i` is `bytes[ends[i-1]..ends[i]]`.
#[derive(Default)]
pub struct KeyArena {
    bytes: Vec<u8>,
    ends: Vec<u32>,
}

impl KeyArena {
    /// Appends one key.
    pub fn push(&mut self, key: &[u8]) -> anyhow::Result<()> {
        self.bytes.extend_from_slice(key);
        let end = u32::try_from(self.bytes.len()).context("key list over 4 GiB")?;
        self.ends.push(end);
        Ok(())
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Key `i`.
    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }

    /// All keys in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Total key bytes.
    pub fn total_bytes(&self) -> usize {
        self.bytes.len()
    }

    fn shrink(&mut self) {
        self.bytes.shrink_to_fit();
        self.ends.shrink_to_fit();
    }
}

/// URLs read and what became of them.
pub struct Loaded {
    /// Canonical keys of the lines that parsed, in input order.
    pub keys: KeyArena,
    /// Lines that failed to canonicalise (skipped).
    pub failed: usize,
}

fn add(loaded: &mut Loaded, line: &str, policy: &Policy) -> anyhow::Result<()> {
    if line.trim().is_empty() {
        return Ok(());
    }
    match CanonicalUrl::parse(line, None, policy) {
        Ok(url) => loaded.keys.push(&url.key_bytes()),
        Err(_) => {
            loaded.failed += 1;
            Ok(())
        }
    }
}

/// Reads URLs one per line from `path` and canonicalises them.
pub fn load_file(path: &std::path::Path) -> anyhow::Result<Loaded> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let policy = Policy::safe();
    let mut loaded = Loaded {
        keys: KeyArena::default(),
        failed: 0,
    };
    for line in std::io::BufReader::new(file).lines() {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        add(&mut loaded, &line, &policy)?;
    }
    loaded.keys.shrink();
    if loaded.keys.len() == 0 {
        bail!("no usable URL in {}", path.display());
    }
    Ok(loaded)
}

/// Generates `n` URLs (see [`super::r#gen`]) and canonicalises them.
pub fn generate(n: usize) -> anyhow::Result<Loaded> {
    let policy = Policy::safe();
    let mut loaded = Loaded {
        keys: KeyArena::default(),
        failed: 0,
    };
    let mut result = Ok(());
    super::r#gen::Generator::new(n).for_each(|url| {
        if result.is_ok() {
            result = add(&mut loaded, url, &policy);
        }
    });
    result?;
    loaded.keys.shrink();
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arena_round_trips_and_empty_keys() {
        let mut a = KeyArena::default();
        for k in [&b"abc"[..], b"", b"de"] {
            a.push(k).unwrap();
        }
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![&b"abc"[..], b"", b"de"]);
        assert_eq!(a.total_bytes(), 5);
    }
}
