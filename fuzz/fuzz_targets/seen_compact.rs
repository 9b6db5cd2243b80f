//! Fuzzes `CompactSet` against a `BTreeSet` model: every insert's answer,
//! every lookup, `len()` and the full sorted `iter()` must agree.
//!
//! Input format: a sequence of ops. Byte `b`: the low bit picks insert (1)
//! or lookup (0); `b >> 1` is the key length (0..=127), and the next bytes
//! are the key. A 0xFF byte pads the set with numbered keys so that small
//! inputs still exercise buffer flushes and run merges. A 0xFE byte starts a
//! batch: the keys of the ops up to the next 0xFE (or the end) go to one
//! `insert_batch`, whose answers must be the model's, one key at a time
//! (repeats inside the batch included). At the end the
//! set's snapshot must restore to the same keys, and the raw input, read as
//! a snapshot, must be refused or accepted without a panic. An input whose
//! length is odd runs the set with background merges (answers must not
//! depend on when they land), and settles it before the final checks.
#![no_main]

use std::collections::BTreeSet;

use libfuzzer_sys::fuzz_target;
use mgz_seen::{SeenSet, compact::CompactSet};

fuzz_target!(|data: &[u8]| {
    let mut set = match data.len() % 2 {
        1 => CompactSet::new().with_background_merges(),
        _ => CompactSet::new(),
    };
    let mut model = BTreeSet::new();
    let mut rest = data;
    while let Some((&op, tail)) = rest.split_first() {
        if op == 0xFE {
            let end = tail.iter().position(|&b| b == 0xFE).unwrap_or(tail.len());
            let (mut ops, after) = tail.split_at(end);
            let mut keys: Vec<&[u8]> = Vec::new();
            while let Some((&kop, ktail)) = ops.split_first() {
                let len = usize::from(kop >> 1).min(ktail.len());
                keys.push(&ktail[..len]);
                ops = &ktail[len..];
            }
            let mut out = Vec::new();
            set.insert_batch(&keys, &mut out);
            let want: Vec<bool> = keys.iter().map(|k| model.insert(k.to_vec())).collect();
            assert_eq!(out, want);
            rest = after.get(1..).unwrap_or(&[]);
            continue;
        }
        if op == 0xFF {
            for i in 0..3000u32 {
                let key = i.to_be_bytes().to_vec();
                assert_eq!(set.insert(&key), model.insert(key));
            }
            rest = tail;
            continue;
        }
        let len = usize::from(op >> 1).min(tail.len());
        let (key, tail) = tail.split_at(len);
        if op & 1 == 1 {
            assert_eq!(set.insert(key), model.insert(key.to_vec()));
        } else {
            assert_eq!(set.contains(key), model.contains(key));
        }
        rest = tail;
    }
    assert_eq!(set.len(), model.len());
    assert!(set.iter().eq(model.iter().cloned()));
    set.settle();
    assert!(set.iter().eq(model.into_iter()));
    // The snapshot restores to the same keys; arbitrary bytes never panic.
    let back = CompactSet::restore(&set.snapshot().expect("compact has a snapshot")).expect("restores");
    assert!(back.iter().eq(set.iter()));
    let _ = CompactSet::restore(data);
});
