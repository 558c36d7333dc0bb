//! Tables of unusual shapes through numakit-frame's join, group-by and
//! sort, checked against the sequential reference and by hand:
//!
//! - one part per row against one part (the same results);
//! - every part on one worker, and parts naming more workers than the
//!   pool has (a table made for a bigger pool);
//! - parts whose dictionary-encoded columns have different dictionaries,
//!   one of them empty (every key null); dictionary keys of several index
//!   and value types (Int8/UInt8/Int16/UInt16 over Utf8, LargeUtf8,
//!   Utf8View, Binary) against plain columns;
//! - columns declared non-nullable; a left key column used twice;
//! - a group-by aggregating its own key column;
//! - scale: more groups than the cache budget under `auto`, 60k distinct
//!   strings sharing a long prefix, integer keys alike in their low bits;
//! - join results larger than the memory limit allows.

mod common;

use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{
    Array, ArrayRef, DictionaryArray, Int32Array, Int64Array, RecordBatch, StringArray,
};
use arrow_schema::{DataType, Field, Schema};
use common::*;
use numakit_frame::aggregate::{self, Aggregate, AggregateRequest};
use numakit_frame::join::{self, JoinRequest};
use numakit_frame::reference;
use numakit_frame::sort::{self, SortColumn, SortRequest};
use numakit_frame::{FrameError, MemoryLimit, Part, Table};
use numakit_ops::join::{JoinAlgorithm, JoinKind};
use numakit_ops::timing::Silent;
use numakit_pool::Pool;

fn arc<A: Array + 'static>(a: A) -> ArrayRef {
    Arc::new(a)
}

/// Join (every kind), group-by and sort of `left` (and `right`), all
/// checked against the reference; keys `k`, value `x`.
fn everything_agrees(pool: &Pool, left: &Table, right: &Table, what: &str) {
    for kind in [
        JoinKind::Inner,
        JoinKind::LeftOuter,
        JoinKind::Semi,
        JoinKind::Anti,
    ] {
        for algorithm in [
            None,
            Some(JoinAlgorithm::RadixCprl),
            Some(JoinAlgorithm::Mpsm),
        ] {
            let mut r = JoinRequest::on(&["k"]);
            r.kind = kind;
            r.algorithm = algorithm;
            r.memory_limit = MemoryLimit::unlimited();
            let (report, result) = join::run(pool, left, right, &r, &Silent)
                .unwrap_or_else(|e| panic!("{what}: {kind:?} join: {e}"));
            reference::check_join(left, right, &r, result.as_ref(), report.rows)
                .unwrap_or_else(|e| panic!("{what}: {kind:?} join: {e}"));
        }
    }
    let a = AggregateRequest {
        keys: vec!["k".into()],
        aggregates: Aggregate::parse_list("count,count:x,sum:x,min:x,max:x").unwrap(),
        method: None,
        memory_limit: MemoryLimit::unlimited(),
        cost_model: None,
    };
    let (_, groups) =
        aggregate::run(pool, left, &a, &Silent).unwrap_or_else(|e| panic!("{what}: group-by: {e}"));
    reference::check_aggregate(left, &a, &groups)
        .unwrap_or_else(|e| panic!("{what}: group-by: {e}"));
    for descending in [false, true] {
        let s = SortRequest {
            by: vec![
                SortColumn {
                    name: "k".into(),
                    descending,
                    nulls_first: descending,
                },
                SortColumn::ascending("x"),
            ],
            columns: None,
            memory_limit: MemoryLimit::unlimited(),
        };
        let (_, sorted) =
            sort::run(pool, left, &s, &Silent).unwrap_or_else(|e| panic!("{what}: sort: {e}"));
        reference::check_sort(left, &s, &sorted).unwrap_or_else(|e| panic!("{what}: sort: {e}"));
    }
}

fn key_columns(n: usize) -> Vec<(&'static str, Vec<(&'static str, ArrayRef)>)> {
    let strings =
        StringArray::from_iter((0..n).map(|i| (i % 5 != 4).then(|| format!("key{}", i % 7))));
    let ints =
        Int64Array::from_iter((0..n).map(|i| (i % 6 != 5).then_some(((i * 37) % 11) as i64 - 5)));
    let wide = Int64Array::from_iter((0..n).map(|i| {
        (i % 4 != 3).then_some(if i % 2 == 0 {
            i64::MIN + (i % 3) as i64
        } else {
            i64::MAX
        })
    }));
    let x = Int64Array::from_iter((0..n).map(|i| (i % 9 != 0).then_some(i as i64)));
    vec![
        ("strings", vec![("k", arc(strings)), ("x", arc(x.clone()))]),
        ("ints", vec![("k", arc(ints)), ("x", arc(x.clone()))]),
        ("wide ints", vec![("k", arc(wide)), ("x", arc(x))]),
    ]
}

#[test]
fn one_part_per_row_agrees_with_one_part() {
    for pool in pools() {
        for (what, columns) in key_columns(23) {
            let one = table("t", columns.clone(), Layout::ONE, pool.workers());
            let many = table(
                "t",
                columns,
                Layout {
                    parts: 23,
                    empty_part: true,
                },
                pool.workers(),
            );
            assert_eq!(many.parts().len(), 24);
            everything_agrees(&pool, &many, &one, what);
            everything_agrees(&pool, &one, &many, what);
        }
    }
}

/// Re-homes every part of `t` on `worker`.
fn on_worker(t: &Table, worker: usize) -> Table {
    let parts = t
        .parts()
        .iter()
        .map(|p| Part {
            batch: p.batch.clone(),
            worker,
        })
        .collect();
    Table::new(t.name(), t.schema().clone(), parts).unwrap()
}

#[test]
fn every_part_on_one_worker() {
    let pool = pool(2);
    for (what, columns) in key_columns(40) {
        let t = table(
            "t",
            columns,
            Layout {
                parts: 5,
                empty_part: false,
            },
            2,
        );
        for worker in [0, 1] {
            let skewed = on_worker(&t, worker);
            everything_agrees(
                &pool,
                &skewed,
                &t,
                &format!("{what}, parts on worker {worker}"),
            );
            everything_agrees(
                &pool,
                &t,
                &skewed,
                &format!("{what}, parts on worker {worker}"),
            );
        }
    }
}

/// Regression (a bug until 93a2626): tables whose parts name workers the pool does not have (made
/// for a bigger pool: `Table::from_batches(.., workers = 4)` used with a
/// pool of 1 or 2) lose those parts in the dictionary build
/// (`keys::dictionary` scatters a part only on the worker whose index
/// equals `part.worker`, with no modulo, unlike the rest of the crate),
/// so string keys fail ("a part was not coded") or go wrong.
#[test]
fn parts_made_for_a_bigger_pool() {
    for pool in pools() {
        for (what, columns) in key_columns(40) {
            let t = table(
                "t",
                columns,
                Layout {
                    parts: 8,
                    empty_part: false,
                },
                4,
            );
            assert!(t.parts().iter().any(|p| p.worker >= pool.workers()) || pool.workers() == 4);
            everything_agrees(
                &pool,
                &t,
                &t,
                &format!("{what}, table for 4 workers on {}", pool.workers()),
            );
        }
    }
}

/// The same, for the key types that do not use the dictionary (these
/// work and must keep working).
#[test]
fn parts_made_for_a_bigger_pool_with_number_keys() {
    for pool in pools() {
        for (what, columns) in key_columns(40).into_iter().filter(|(w, _)| *w == "ints") {
            let t = table(
                "t",
                columns,
                Layout {
                    parts: 8,
                    empty_part: false,
                },
                4,
            );
            everything_agrees(
                &pool,
                &t,
                &t,
                &format!("{what}, table for 4 workers on {}", pool.workers()),
            );
        }
        let t = table(
            "t",
            key_columns(40).remove(1).1,
            Layout {
                parts: 8,
                empty_part: false,
            },
            4,
        );
        let far = on_worker(&t, 7);
        everything_agrees(&pool, &far, &t, "ints, every part on worker 7");
    }
}

#[test]
fn parts_with_different_dictionaries() {
    let schema = Arc::new(Schema::new(vec![
        Field::new(
            "k",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            true,
        ),
        Field::new("x", DataType::Int64, true),
    ]));
    let batch = |keys: Vec<Option<i32>>, values: Vec<Option<&str>>, x: Vec<Option<i64>>| {
        let dict = DictionaryArray::<Int32Type>::try_new(
            Int32Array::from(keys),
            arc(StringArray::from(values)),
        )
        .unwrap();
        RecordBatch::try_new(schema.clone(), vec![arc(dict), arc(Int64Array::from(x))]).unwrap()
    };
    let batches = vec![
        batch(
            vec![Some(0), Some(1), Some(0), None],
            vec![Some("apple"), Some("pear")],
            vec![Some(1), Some(2), Some(3), Some(4)],
        ),
        // An empty dictionary: every key null.
        batch(vec![None, None], vec![], vec![Some(5), None]),
        // The same strings under other indices, a null value, an unused one.
        batch(
            vec![Some(2), Some(0), Some(3), Some(1)],
            vec![Some("pear"), None, Some("apple"), Some("fig")],
            vec![Some(6), Some(7), Some(8), Some(9)],
        ),
        batch(vec![], vec![Some("unused")], vec![]),
    ];
    for pool in pools() {
        let t = Table::from_batches("t", schema.clone(), batches.clone(), pool.workers()).unwrap();
        everything_agrees(&pool, &t, &t, "dictionaries");
        // By hand: apple (x 1, 3, 6), pear (2, 7), fig (8), null (4, 5, null, 9).
        let a = AggregateRequest {
            keys: vec!["k".into()],
            aggregates: Aggregate::parse_list("count,sum:x").unwrap(),
            method: None,
            memory_limit: MemoryLimit::unlimited(),
            cost_model: None,
        };
        let (_, groups) = aggregate::run(&pool, &t, &a, &Silent).unwrap();
        use v::*;
        assert_same_rows(
            all(&groups),
            vec![
                vec![s("apple"), i(3), i(10)],
                vec![s("pear"), i(2), i(9)],
                vec![s("fig"), i(1), i(8)],
                vec![null(), i(4), i(18)],
            ],
        );
        let plain = table(
            "p",
            vec![("k", arc(StringArray::from(vec!["fig", "pear", "kiwi"])))],
            Layout::ONE,
            pool.workers(),
        );
        let mut r = JoinRequest::on(&["k"]);
        r.memory_limit = MemoryLimit::unlimited();
        let (_, joined) = join::run(&pool, &t, &plain, &r, &Silent).unwrap();
        let joined = joined.unwrap();
        assert_eq!(joined.rows(), 3);
        let (_, joined) = join::run(&pool, &plain, &t, &r, &Silent).unwrap();
        assert_eq!(joined.unwrap().rows(), 3);
    }
}

#[test]
fn a_group_by_may_aggregate_its_own_key() {
    use v::*;
    for pool in pools() {
        let t = table(
            "t",
            vec![(
                "k",
                arc(Int64Array::from(vec![Some(3), None, Some(3), Some(-1)])),
            )],
            Layout {
                parts: 2,
                empty_part: false,
            },
            pool.workers(),
        );
        let a = AggregateRequest {
            keys: vec!["k".into()],
            aggregates: Aggregate::parse_list("count,count:k,sum:k,min:k,max:k,avg:k").unwrap(),
            method: None,
            memory_limit: MemoryLimit::unlimited(),
            cost_model: None,
        };
        let (_, groups) = aggregate::run(&pool, &t, &a, &Silent).unwrap();
        reference::check_aggregate(&t, &a, &groups).unwrap();
        assert_same_rows(
            all(&groups),
            vec![
                vec![i(3), i(2), i(2), i(6), i(3), i(3), f(3.0)],
                vec![null(), i(1), i(0), null(), null(), null(), null()],
                vec![i(-1), i(1), i(1), i(-1), i(-1), i(-1), f(-1.0)],
            ],
        );
    }
}

/// A join whose result cannot fit a memory limit that its inputs fit:
/// `FrameError::MemoryLimit` (until 93a2626 the kernel's ResultTooLarge
/// came through as `FrameError::Ops`).
#[test]
fn join_results_beyond_the_memory_limit_are_memory_limit_errors() {
    let pool = pool(2);
    let n = 3000;
    let t = table(
        "t",
        vec![("k", arc(Int64Array::from(vec![1i64; n])))],
        Layout {
            parts: 2,
            empty_part: false,
        },
        2,
    );
    for algorithm in [
        Some(JoinAlgorithm::NoPartition),
        Some(JoinAlgorithm::RadixPro),
        Some(JoinAlgorithm::RadixCprl),
        Some(JoinAlgorithm::Mpsm),
    ] {
        let mut r = JoinRequest::on(&["k"]);
        r.algorithm = algorithm;
        // 9 million result rows need far more than 16 MiB more.
        r.memory_limit = MemoryLimit::bytes(numakit_frame::memory::resident_bytes() + (16 << 20));
        match join::run(&pool, &t, &t, &r, &Silent) {
            Err(FrameError::MemoryLimit { .. }) => {}
            Err(e) => panic!("{algorithm:?}: {e:?}"),
            Ok((report, _)) => panic!("{algorithm:?}: {} rows under a 16 MiB limit", report.rows),
        }
        // Counting needs no result memory: 16 MiB above what the process
        // holds now (the refused attempt's buffers stay cached by the
        // pool for reuse, so "now" is measured again).
        r.count_only = true;
        r.memory_limit = MemoryLimit::bytes(numakit_frame::memory::resident_bytes() + (16 << 20));
        let (report, _) = join::run(&pool, &t, &t, &r, &Silent).unwrap();
        assert_eq!(report.rows, (n * n) as u64);
    }
}

#[test]
fn a_semi_join_may_carry_no_column() {
    let pool = pool(2);
    let t = table(
        "t",
        vec![("k", arc(Int64Array::from(vec![1, 2, 3])))],
        Layout::ONE,
        2,
    );
    let u = table(
        "u",
        vec![("k", arc(Int64Array::from(vec![2, 3, 3])))],
        Layout::ONE,
        2,
    );
    let mut r = JoinRequest::on(&["k"]);
    r.kind = JoinKind::Semi;
    r.left_columns = Some(Vec::new());
    r.memory_limit = MemoryLimit::unlimited();
    match join::run(&pool, &t, &u, &r, &Silent) {
        Ok((report, result)) => {
            assert_eq!(report.rows, 2);
            assert_eq!(result.map(|t| t.rows()), Some(2));
        }
        // Refusing it is fine too, with a one-line message.
        Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
    }
}

/// A group-by with more groups than the per-worker tables' cache budget
/// (so `auto` hands it to the operators' kernels), keys as wide integers
/// and as strings, checked by hand.
#[test]
fn many_groups_under_auto() {
    let pool = pool(2);
    let n = 240_000usize;
    // Key i appears once, key i for i % 10 == 0 a second time.
    let mut keys: Vec<i64> = (0..n as i64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15u64 as i64))
        .collect();
    keys.extend(
        (0..n as i64)
            .step_by(10)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15u64 as i64)),
    );
    let x: Vec<i64> = (0..keys.len() as i64).collect();
    let t = table(
        "t",
        vec![
            ("k", arc(Int64Array::from(keys.clone()))),
            ("x", arc(Int64Array::from(x))),
        ],
        Layout {
            parts: 7,
            empty_part: false,
        },
        2,
    );
    let a = AggregateRequest {
        keys: vec!["k".into()],
        aggregates: Aggregate::parse_list("count,sum:x").unwrap(),
        method: None,
        memory_limit: MemoryLimit::unlimited(),
        cost_model: None,
    };
    let started = std::time::Instant::now();
    let (report, groups) = aggregate::run(&pool, &t, &a, &Silent).unwrap();
    eprintln!(
        "{:?} {} in {:?}",
        report.path,
        report.reason,
        started.elapsed()
    );
    assert_eq!(groups.rows(), n);
    let mut want = std::collections::HashMap::new();
    for (row, k) in keys.iter().enumerate() {
        let e = want.entry(*k).or_insert((0i64, 0i64));
        e.0 += 1;
        e.1 += row as i64;
    }
    for batch in groups.batches() {
        let k = batch
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        let c = batch
            .column(1)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        let s = batch
            .column(2)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        for r in 0..batch.num_rows() {
            assert_eq!(
                want.remove(&k.value(r)),
                Some((c.value(r), s.value(r))),
                "key {}",
                k.value(r)
            );
        }
    }
    assert!(want.is_empty());
}

/// Many distinct strings (the dictionaries' merge across workers and
/// partitions), sharing long prefixes, joined and grouped; checked by
/// hand.
#[test]
fn many_distinct_strings() {
    let prefix = "p".repeat(40);
    let n = 60_000usize;
    let left: Vec<Option<String>> = (0..n)
        .map(|i| (i % 97 != 0).then(|| format!("{prefix}{i}")))
        .collect();
    // The right side: every third left key, twice, and keys the left lacks.
    let right: Vec<Option<String>> = (0..n)
        .step_by(3)
        .flat_map(|i| [Some(format!("{prefix}{i}")), Some(format!("{prefix}{i}"))])
        .chain((0..1000).map(|i| Some(format!("{prefix}x{i}"))))
        .collect();
    let matched_left = (0..n).filter(|i| i % 3 == 0 && i % 97 != 0).count();
    for pool in pools() {
        let l = table(
            "l",
            vec![
                ("k", arc(StringArray::from(left.clone()))),
                ("lid", ids(n, 0)),
            ],
            Layout {
                parts: 9,
                empty_part: false,
            },
            pool.workers(),
        );
        let r = table(
            "r",
            vec![
                ("k", arc(arrow_array::StringViewArray::from(right.clone()))),
                ("rid", ids(right.len(), 0)),
            ],
            Layout {
                parts: 4,
                empty_part: false,
            },
            pool.workers(),
        );
        for (kind, want) in [
            (JoinKind::Inner, 2 * matched_left),
            (JoinKind::Semi, matched_left),
            (JoinKind::Anti, n - matched_left),
            (JoinKind::LeftOuter, 2 * matched_left + n - matched_left),
        ] {
            let mut req = JoinRequest::on(&["k"]);
            req.kind = kind;
            req.memory_limit = MemoryLimit::unlimited();
            let (report, result) = join::run(&pool, &l, &r, &req, &Silent).unwrap();
            assert_eq!(
                (report.rows as usize, result.unwrap().rows()),
                (want, want),
                "{kind:?}"
            );
            // Swapped sides: the dictionary is built from the other table.
            req.count_only = true;
            let (report, _) = join::run(&pool, &r, &l, &req, &Silent).unwrap();
            let swapped = match kind {
                JoinKind::Inner => 2 * matched_left,
                JoinKind::Semi => 2 * matched_left,
                JoinKind::Anti => right.len() - 2 * matched_left,
                JoinKind::LeftOuter => right.len(),
            };
            assert_eq!(report.rows as usize, swapped, "{kind:?} swapped");
        }
        let a = AggregateRequest {
            keys: vec!["k".into()],
            aggregates: vec![Aggregate::count_rows()],
            method: None,
            memory_limit: MemoryLimit::unlimited(),
            cost_model: None,
        };
        let (_, groups) = aggregate::run(&pool, &r, &a, &Silent).unwrap();
        assert_eq!(groups.rows(), n.div_ceil(3) + 1000);
        let counts = column(&groups, "count");
        assert_eq!(
            counts.iter().filter(|c| **c == v::i(2)).count(),
            n.div_ceil(3)
        );
        assert_eq!(counts.iter().filter(|c| **c == v::i(1)).count(), 1000);
    }
}

/// Integer keys that are their own codes and agree in their low bits
/// (multiples of 2^40, -1, the int64 ends): every algorithm, every kind,
/// against the reference.
#[test]
fn keys_alike_in_their_low_bits() {
    let pool = pool(2);
    let key = |i: usize| -> Option<i64> {
        match i % 11 {
            0 => None,
            1 => Some(-1),
            2 => Some(i64::MIN),
            3 => Some(i64::MAX),
            _ => Some(((i % 37) as i64 - 18) << 40),
        }
    };
    let left = table(
        "l",
        vec![
            ("k", arc(Int64Array::from_iter((0..900).map(key)))),
            ("x", ids(900, 0)),
        ],
        Layout {
            parts: 4,
            empty_part: false,
        },
        2,
    );
    let right = table(
        "r",
        vec![
            (
                "k",
                arc(Int64Array::from_iter((0..300).map(|i| key(i * 7 + 1)))),
            ),
            ("x", ids(300, 0)),
        ],
        Layout {
            parts: 3,
            empty_part: false,
        },
        2,
    );
    everything_agrees(&pool, &left, &right, "low bits alike");
    let u = |i: usize| -> Option<u64> {
        (i % 7 != 0)
            .then_some((((i % 13) as u64) << 52) | (u64::from(i % 2 == 0) * (u64::MAX >> 12)))
    };
    let left = table(
        "l",
        vec![
            (
                "k",
                arc(arrow_array::UInt64Array::from_iter((0..700).map(u))),
            ),
            ("x", ids(700, 0)),
        ],
        Layout {
            parts: 4,
            empty_part: false,
        },
        2,
    );
    let right = table(
        "r",
        vec![
            (
                "k",
                arc(arrow_array::UInt64Array::from_iter(
                    (0..200).map(|i| u(i * 3)),
                )),
            ),
            ("x", ids(200, 0)),
        ],
        Layout {
            parts: 3,
            empty_part: false,
        },
        2,
    );
    everything_agrees(&pool, &left, &right, "unsigned high bits");
}

/// Dictionary-encoded keys of several index and value types (values
/// numbered once per part), against plain columns of the same strings.
#[test]
fn dictionary_flavors() {
    use arrow_array::types::{Int8Type, UInt16Type, UInt8Type};
    use arrow_array::{
        BinaryArray, Int16Array, Int8Array, LargeStringArray, StringViewArray, UInt16Array,
        UInt8Array,
    };
    let strings = ["", "b", "a", "b", "zz", "a", "", "q"];
    // Rows index the values in this order; None is a null row.
    let rows: Vec<Option<usize>> = (0..40)
        .map(|i| (i % 6 != 5).then_some((i * 5) % strings.len()))
        .collect();
    let plain = arc(StringArray::from_iter(
        rows.iter().map(|r| r.map(|i| strings[i])),
    ));
    let values: Vec<&str> = strings.to_vec();
    let i8_keys = Int8Array::from_iter(rows.iter().map(|r| r.map(|i| i as i8)));
    let u8_keys = UInt8Array::from_iter(rows.iter().map(|r| r.map(|i| i as u8)));
    let u16_keys = UInt16Array::from_iter(rows.iter().map(|r| r.map(|i| i as u16)));
    let i16_keys = Int16Array::from_iter(rows.iter().map(|r| r.map(|i| i as i16)));
    let flavors: Vec<(&str, ArrayRef)> = vec![
        (
            "Int8 -> LargeUtf8",
            arc(DictionaryArray::<Int8Type>::try_new(
                i8_keys,
                arc(LargeStringArray::from(values.clone())),
            )
            .unwrap()),
        ),
        (
            "UInt8 -> Utf8",
            arc(DictionaryArray::<UInt8Type>::try_new(
                u8_keys,
                arc(StringArray::from(values.clone())),
            )
            .unwrap()),
        ),
        (
            "UInt16 -> Utf8View",
            arc(DictionaryArray::<UInt16Type>::try_new(
                u16_keys,
                arc(StringViewArray::from(values.clone())),
            )
            .unwrap()),
        ),
        (
            "Int16 -> Binary (against binary)",
            arc(DictionaryArray::<arrow_array::types::Int16Type>::try_new(
                i16_keys,
                arc(BinaryArray::from_iter_values(
                    values.iter().map(|s| s.as_bytes()),
                )),
            )
            .unwrap()),
        ),
    ];
    for pool in pools() {
        for (what, dict) in &flavors {
            let plain = if what.contains("Binary") {
                arc(BinaryArray::from_iter(
                    rows.iter().map(|r| r.map(|i| strings[i].as_bytes())),
                ))
            } else {
                plain.clone()
            };
            let x = || ids(rows.len(), 0);
            let d = table(
                "d",
                vec![("k", dict.clone()), ("x", x())],
                Layout {
                    parts: 3,
                    empty_part: true,
                },
                pool.workers(),
            );
            let p = table(
                "p",
                vec![("k", plain), ("x", x())],
                Layout {
                    parts: 2,
                    empty_part: false,
                },
                pool.workers(),
            );
            everything_agrees(&pool, &d, &p, what);
            everything_agrees(&pool, &p, &d, what);
            everything_agrees(&pool, &d, &d, what);
        }
    }
}

/// Columns declared non-nullable: results that need nulls (unmatched
/// left-outer rows, all-null aggregates) must declare them nullable.
#[test]
fn non_nullable_inputs() {
    let pool = pool(2);
    let strict = |name: &str, columns: Vec<(&str, ArrayRef)>| {
        let schema = Arc::new(Schema::new(
            columns
                .iter()
                .map(|(n, a)| Field::new(*n, a.data_type().clone(), false))
                .collect::<Vec<_>>(),
        ));
        let batch = RecordBatch::try_new(
            schema.clone(),
            columns.into_iter().map(|(_, a)| a).collect(),
        )
        .unwrap();
        Table::from_batches(name, schema, Table::split_for(vec![batch], 2), 2).unwrap()
    };
    let left = strict(
        "l",
        vec![
            ("k", arc(Int64Array::from(vec![1, 2, 3]))),
            ("s", arc(StringArray::from(vec!["a", "b", "c"]))),
        ],
    );
    let right = strict(
        "r",
        vec![
            ("k", arc(Int64Array::from(vec![2, 2, 9]))),
            (
                "w",
                arc(arrow_array::Float64Array::from(vec![0.5, 1.5, 2.5])),
            ),
        ],
    );
    for kind in [
        JoinKind::Inner,
        JoinKind::LeftOuter,
        JoinKind::Semi,
        JoinKind::Anti,
    ] {
        let mut r = JoinRequest::on(&["k"]);
        r.kind = kind;
        r.memory_limit = MemoryLimit::unlimited();
        let (report, result) = join::run(&pool, &left, &right, &r, &Silent).unwrap();
        reference::check_join(&left, &right, &r, result.as_ref(), report.rows).unwrap();
    }
    let a = AggregateRequest {
        keys: vec!["s".into()],
        aggregates: Aggregate::parse_list("count,sum:k,min:k,max:s").unwrap(),
        method: None,
        memory_limit: MemoryLimit::unlimited(),
        cost_model: None,
    };
    let (_, groups) = aggregate::run(&pool, &left, &a, &Silent).unwrap();
    reference::check_aggregate(&left, &a, &groups).unwrap();
    let s = SortRequest {
        by: vec![SortColumn {
            name: "s".into(),
            descending: true,
            nulls_first: true,
        }],
        columns: None,
        memory_limit: MemoryLimit::unlimited(),
    };
    let (_, sorted) = sort::run(&pool, &left, &s, &Silent).unwrap();
    reference::check_sort(&left, &s, &sorted).unwrap();
}

/// A left key column used twice, against two right columns: rows match
/// where both right columns equal the left key.
#[test]
fn a_key_column_used_twice() {
    use v::*;
    let pool = pool(2);
    let left = table(
        "l",
        vec![("k", arc(Int64Array::from(vec![Some(1), Some(2), None])))],
        Layout::ONE,
        2,
    );
    let right = table(
        "r",
        vec![
            (
                "a",
                arc(Int64Array::from(vec![Some(1), Some(2), Some(2), None])),
            ),
            (
                "b",
                arc(Int64Array::from(vec![Some(1), Some(3), Some(2), None])),
            ),
            ("rid", ids(4, 0)),
        ],
        Layout::ONE,
        2,
    );
    let mut r = JoinRequest::on(&["k", "k"]);
    r.right_on = vec!["a".into(), "b".into()];
    r.memory_limit = MemoryLimit::unlimited();
    let (report, result) = join::run(&pool, &left, &right, &r, &Silent).unwrap();
    let result = result.unwrap();
    reference::check_join(&left, &right, &r, Some(&result), report.rows).unwrap();
    assert_same_rows(all(&result), vec![vec![i(1), i(0)], vec![i(2), i(2)]]);
}
