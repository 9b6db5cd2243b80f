//! Every on-disk value decoder must return Ok or a typed error on any bytes, never panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mgz_frontier::fuzzing::decode_all(data);
});
