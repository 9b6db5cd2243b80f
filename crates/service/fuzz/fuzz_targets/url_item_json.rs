//! `mgz frontier put` reads JSON lines: any text must give an item or a typed
//! error, and an item must survive a write/read round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mgz_service::json::{from_line, to_line};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(item) = from_line(text) {
        let again = from_line(&to_line(&item)).expect("our own output parses");
        assert_eq!(again, item);
    }
});
