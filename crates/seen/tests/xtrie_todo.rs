//! The XTrie as a to-do list, against a model: every new key becomes to-do
//! once, `pop_todo` hands each pending key out exactly once (in whatever
//! round-robin order), and re-inserting a known key queues nothing.

use std::collections::BTreeSet;

use mgz_seen::{SeenSet, xtrie::XTrie};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Insert(Vec<u8>),
    Pop,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let key = prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'.', 0, 255]), 0..6);
    let op = prop_oneof![3 => key.prop_map(Op::Insert), 1 => Just(Op::Pop)];
    prop::collection::vec(op, 0..150)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn pops_each_pending_key_exactly_once(ops in ops()) {
        let mut t = XTrie::new();
        let mut known = BTreeSet::new();
        let mut pending = BTreeSet::new();
        for op in &ops {
            match op {
                Op::Insert(k) => {
                    let new = known.insert(k.clone());
                    prop_assert_eq!(t.insert(k), new);
                    if new {
                        pending.insert(k.clone());
                    }
                }
                Op::Pop => match t.pop_todo() {
                    Some(k) => prop_assert!(pending.remove(&k), "popped {:?} not pending", k),
                    None => prop_assert!(pending.is_empty(), "None with {:?} pending", pending),
                },
            }
        }
        while let Some(k) = t.pop_todo() {
            prop_assert!(pending.remove(&k), "popped {:?} not pending", k);
        }
        prop_assert!(pending.is_empty(), "never popped: {:?}", pending);
        prop_assert_eq!(t.len(), known.len());
    }
}

#[test]
fn round_robin_interleaves_hosts() {
    let mut t = XTrie::new();
    for host in ["com.a", "com.b", "com.c"] {
        for page in 0..3 {
            t.insert(format!("{host}/{page}").as_bytes());
        }
    }
    let order: Vec<String> = std::iter::from_fn(|| t.pop_todo())
        .map(|k| String::from_utf8(k).unwrap())
        .collect();
    let hosts: Vec<&str> = order.iter().map(|u| &u[..5]).collect();
    // No host twice in a row: "not crawled sequentially - far from it".
    assert!(hosts.windows(2).all(|w| w[0] != w[1]), "{order:?}");
    assert_eq!(order.len(), 9);
}
