//! Seed 001's three XTrie tables for `www.test.com` and `www.nest.com`,
//! reproduced block by block: after both inserts, after the first to-do
//! request, after the second.
//!
//! The seed reverses the domain character by character, so it stores
//! `moc.tset.www` and `moc.tsen.www`; the XTrie takes keys as given (see its
//! module doc), so this test inserts those reversed strings literally.
//!
//! The tables below are copied verbatim from the seed. Two cells cannot
//! follow from any consistent rule; for those the test checks the rule and
//! [`DEVIATIONS`] records each one:
//!
//! 1. Block 12 (the last `w` of `moc.tset.www`) shows RR = 13 in all three
//!    tables. Block 12 has no children and block 13 (`n`) is a child of
//!    block 7, so 13 is not a child of 12. The seed's own rule, "the RR-Todo
//!    value is usually initialized to the same as the first child", gives 0,
//!    as it does for block 17, the same kind of leaf (RR = 0 in the seed).
//! 2. Block 7 (`e`) shows RR = 9 after the second request. 9 (`.`) is a
//!    grandchild of 7; the seed's text says the pointer "has looped back to
//!    the beginning", i.e. to 7's first child, which is 8 (`t`).

use mgz_seen::{SeenSet, xtrie::XTrie};

/// (ID, entry, FC, NP, RR, T, I, D), as printed in the seed.
type Row = (u64, u8, u64, u64, u64, u8, u8, u8);

#[rustfmt::skip]
const AFTER_INSERT: [Row; 17] = [
    ( 1, b'm',  2,  0,  2, 0, 1, 0),
    ( 2, b'o',  3,  0,  3, 0, 1, 0),
    ( 3, b'c',  4,  0,  4, 0, 1, 0),
    ( 4, b'.',  5,  0,  5, 0, 1, 0),
    ( 5, b't',  6,  0,  6, 0, 1, 0),
    ( 6, b's',  7,  0,  7, 0, 1, 0),
    ( 7, b'e',  8,  0,  8, 0, 1, 0),
    ( 8, b't',  9, 13,  9, 0, 1, 0),
    ( 9, b'.', 10,  0, 10, 0, 1, 0),
    (10, b'w', 11,  0, 11, 0, 1, 0),
    (11, b'w', 12,  0, 12, 0, 1, 0),
    (12, b'w',  0,  0, 13, 1, 0, 1),
    (13, b'n', 14,  0, 14, 0, 1, 0),
    (14, b'.', 15,  0, 15, 0, 1, 0),
    (15, b'w', 16,  0, 16, 0, 1, 0),
    (16, b'w', 17,  0, 17, 0, 1, 0),
    (17, b'w',  0,  0,  0, 1, 0, 1),
];

#[rustfmt::skip]
const AFTER_FIRST_POP: [Row; 17] = [
    ( 1, b'm',  2,  0,  2, 0, 1, 0),
    ( 2, b'o',  3,  0,  3, 0, 1, 0),
    ( 3, b'c',  4,  0,  4, 0, 1, 0),
    ( 4, b'.',  5,  0,  5, 0, 1, 0),
    ( 5, b't',  6,  0,  6, 0, 1, 0),
    ( 6, b's',  7,  0,  7, 0, 1, 0),
    ( 7, b'e',  8,  0, 13, 0, 1, 0),
    ( 8, b't',  9, 13,  9, 0, 0, 0),
    ( 9, b'.', 10,  0, 10, 0, 0, 0),
    (10, b'w', 11,  0, 11, 0, 0, 0),
    (11, b'w', 12,  0, 12, 0, 0, 0),
    (12, b'w',  0,  0, 13, 1, 0, 0),
    (13, b'n', 14,  0, 14, 0, 1, 0),
    (14, b'.', 15,  0, 15, 0, 1, 0),
    (15, b'w', 16,  0, 16, 0, 1, 0),
    (16, b'w', 17,  0, 17, 0, 1, 0),
    (17, b'w',  0,  0,  0, 1, 0, 1),
];

#[rustfmt::skip]
const AFTER_SECOND_POP: [Row; 17] = [
    ( 1, b'm',  2,  0,  2, 0, 0, 0),
    ( 2, b'o',  3,  0,  3, 0, 0, 0),
    ( 3, b'c',  4,  0,  4, 0, 0, 0),
    ( 4, b'.',  5,  0,  5, 0, 0, 0),
    ( 5, b't',  6,  0,  6, 0, 0, 0),
    ( 6, b's',  7,  0,  7, 0, 0, 0),
    ( 7, b'e',  8,  0,  9, 0, 0, 0),
    ( 8, b't',  9, 13,  9, 0, 0, 0),
    ( 9, b'.', 10,  0, 10, 0, 0, 0),
    (10, b'w', 11,  0, 11, 0, 0, 0),
    (11, b'w', 12,  0, 12, 0, 0, 0),
    (12, b'w',  0,  0, 13, 1, 0, 0),
    (13, b'n', 14,  0, 14, 0, 0, 0),
    (14, b'.', 15,  0, 15, 0, 0, 0),
    (15, b'w', 16,  0, 16, 0, 0, 0),
    (16, b'w', 17,  0, 17, 0, 0, 0),
    (17, b'w',  0,  0,  0, 1, 0, 0),
];

/// (table, block ID, RR in the seed, RR by the consistent rule).
const DEVIATIONS: [(usize, u64, u64, u64); 4] = [
    (0, 12, 13, 0), // 1. a leaf's RR: no first child
    (1, 12, 13, 0), // 1. carried over
    (2, 12, 13, 0), // 1. carried over
    (2, 7, 9, 8),   // 2. wrapped to 7's first child, not a grandchild
];

fn expected(table: usize, rows: &[Row; 17]) -> Vec<Row> {
    let mut rows = rows.to_vec();
    for &(t, id, seed_rr, rule_rr) in &DEVIATIONS {
        if t == table {
            let row = &mut rows[id as usize - 1];
            assert_eq!(row.4, seed_rr, "deviation list matches the seed's table");
            row.4 = rule_rr;
        }
    }
    rows
}

fn actual(t: &XTrie) -> Vec<Row> {
    (1..=t.block_count() as u64)
        .map(|id| {
            let b = t.block(id).unwrap();
            let f = |x: bool| u8::from(x);
            (
                id,
                b.byte,
                b.fc,
                b.np,
                b.rr,
                f(b.terminal),
                f(b.inherited),
                f(b.todo),
            )
        })
        .collect()
}

#[test]
fn seed_tables_for_www_test_com_and_www_nest_com() {
    let mut t = XTrie::new();
    assert!(t.insert(b"moc.tset.www"));
    assert!(t.insert(b"moc.tsen.www"));
    assert_eq!(actual(&t), expected(0, &AFTER_INSERT), "after insert");

    assert_eq!(t.pop_todo().as_deref(), Some(&b"moc.tset.www"[..]));
    assert_eq!(
        actual(&t),
        expected(1, &AFTER_FIRST_POP),
        "after first request"
    );

    assert_eq!(t.pop_todo().as_deref(), Some(&b"moc.tsen.www"[..]));
    assert_eq!(
        actual(&t),
        expected(2, &AFTER_SECOND_POP),
        "after second request"
    );

    assert_eq!(t.pop_todo(), None, "nothing left to do");
    assert!(t.contains(b"moc.tset.www") && t.contains(b"moc.tsen.www"));
}

#[test]
fn block_zero_is_null() {
    let t = XTrie::new();
    assert_eq!(t.block(0), None);
    assert_eq!(t.block(1), None);
}
