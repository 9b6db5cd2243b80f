//! Every request message the server decodes, from arbitrary bytes: decoding
//! must return a value or an error, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mgz_service::proto::*;
use prost::Message;

fuzz_target!(|data: &[u8]| {
    let _ = UrlItem::decode(data);
    let _ = DiscoveredBatch::decode(data);
    let _ = GetParams::decode(data);
    let _ = ListUrlParams::decode(data);
    let _ = CountUrlParams::decode(data);
    let _ = Pagination::decode(data);
    let _ = LogLevelParams::decode(data);
    let _ = UrlStatusRequest::decode(data);
});
