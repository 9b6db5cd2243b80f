//! Fuzzes `mgz_seen::restore` for the backends with a snapshot form (and the
//! split forms of `mgz_seen::parted`): any
//! bytes give a set or `SeenError::BadSnapshot`, never a panic, and a set
//! that was accepted keeps working (lookups, inserts, merges, re-snapshot).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for name in ["fingerprint", "hash", "compact", "fingerprint-parts", "hash-parts"] {
        let Ok(mut set) = mgz_seen::restore(name, data) else {
            continue;
        };
        for i in 0..2000u32 {
            let key = i.to_be_bytes();
            set.contains(&key);
            set.insert(&key);
        }
        let again = set.snapshot().expect("a restored set has a snapshot form");
        let back = mgz_seen::restore(name, &again).expect("own snapshot restores");
        assert_eq!(back.len(), set.len());
    }
});
