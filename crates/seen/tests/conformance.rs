//! Every backend against the one `SeenSet` conformance suite (`suite/mod.rs`).
//! Adding a backend is one line.

mod suite;

use mgz_seen::backend;

conformance!(hash, || backend("hash", &suite::opts()).unwrap());
conformance!(xtrie, || backend("xtrie", &suite::opts()).unwrap());
conformance!(tst, || backend("tst", &suite::opts()).unwrap());
conformance!(bloom, || backend("bloom", &suite::opts()).unwrap());
conformance!(bloom_classic, || backend("bloom-classic", &suite::opts())
    .unwrap());
conformance!(bloom_blocked, || backend("bloom-blocked", &suite::opts())
    .unwrap());
conformance!(bloom_scalable, || backend("bloom-scalable", &suite::opts())
    .unwrap());
conformance!(fingerprint, || backend("fingerprint", &suite::opts())
    .unwrap());
conformance!(compact, || backend("compact", &suite::opts()).unwrap());
conformance!(fingerprint_parts, || backend(
    "fingerprint-parts",
    &suite::opts()
)
.unwrap());
conformance!(compact_parts, || backend("compact-parts", &suite::opts())
    .unwrap());
conformance!(compact_background, || Box::new(
    mgz_seen::compact::CompactSet::new().with_background_merges()
));
conformance!(compact_parts_background, || Box::new(
    mgz_seen::parted::Parted::compact_background()
));
