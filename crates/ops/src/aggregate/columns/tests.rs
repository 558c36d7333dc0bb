//! The columns aggregation against a plain reference: random codes, null
//! keys, null values, integers, wide integers and floats, direct and
//! hashed indexes, one and two workers.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;
use crate::testing::pool;
use crate::timing::Silent;

/// One value of every column kind per row, `None` for null.
#[derive(Clone, Debug)]
struct Row {
    code: Option<u64>,
    int: Option<i64>,
    wide: Option<i128>,
    float: Option<f64>,
}

/// The bitmap of `rows` rows, or `None` (every row valid, as the table
/// layer hands a column without nulls) when no row is null: both update
/// paths are taken.
fn validity(bits: &[u8], rows: usize) -> Option<Validity<'_>> {
    let valid = Validity::new(bits, 0);
    (0..rows).any(|i| !valid.get(i)).then_some(valid)
}

fn bitmap(valid: &[bool]) -> Vec<u8> {
    let mut bits = vec![0u8; valid.len().div_ceil(8) + 1];
    for (i, &v) in valid.iter().enumerate() {
        if v {
            bits[i / 8] |= 1 << (i % 8);
        }
    }
    bits
}

/// Expected (rows, count int, sum int, min int, max int, sum wide, min
/// float, max float) per code.
type Expected = BTreeMap<
    Option<u64>,
    (
        u64,
        u64,
        i128,
        Option<i64>,
        Option<i64>,
        i128,
        Option<f64>,
        Option<f64>,
    ),
>;

fn reference(rows: &[Row]) -> Expected {
    let mut out: Expected = BTreeMap::new();
    for r in rows {
        let e = out
            .entry(r.code)
            .or_insert((0, 0, 0, None, None, 0, None, None));
        e.0 += 1;
        if let Some(v) = r.int {
            e.1 += 1;
            e.2 += i128::from(v);
            e.3 = Some(e.3.map_or(v, |m| m.min(v)));
            e.4 = Some(e.4.map_or(v, |m| m.max(v)));
        }
        if let Some(w) = r.wide {
            e.5 += w;
        }
        if let Some(f) = r.float {
            let key = |x: f64| if x.is_nan() { f64::INFINITY } else { x };
            e.6 = Some(e.6.map_or(f, |m: f64| if key(f) < key(m) { f } else { m }));
            e.7 = Some(e.7.map_or(
                f,
                |m: f64| if f.is_nan() || key(f) > key(m) { f } else { m },
            ));
        }
    }
    out
}

fn specs() -> Vec<AggSpec> {
    vec![
        AggSpec {
            column: 0,
            func: Func::Count,
            float: false,
        },
        AggSpec {
            column: 0,
            func: Func::Sum,
            float: false,
        },
        AggSpec {
            column: 0,
            func: Func::Min,
            float: false,
        },
        AggSpec {
            column: 0,
            func: Func::Max,
            float: false,
        },
        AggSpec {
            column: 1,
            func: Func::Sum,
            float: false,
        },
        AggSpec {
            column: 2,
            func: Func::Min,
            float: true,
        },
        AggSpec {
            column: 2,
            func: Func::Max,
            float: true,
        },
    ]
}

fn run(rows: &[Row], threads: usize, max_code: Option<u64>) -> Expected {
    let pool = pool(threads);
    let workers = pool.workers();
    // Cut the rows into 3 segments per worker.
    let pieces: Vec<&[Row]> = rows
        .chunks(rows.len().div_ceil(3 * workers).max(1))
        .collect();
    struct Owned {
        codes: Vec<u64>,
        keyless: Vec<u32>,
        ints: Vec<i64>,
        int_bits: Vec<u8>,
        wides: Vec<i128>,
        wide_bits: Vec<u8>,
        floats: Vec<f64>,
        float_bits: Vec<u8>,
    }
    let owned: Vec<Owned> = pieces
        .iter()
        .map(|piece| Owned {
            codes: piece.iter().map(|r| r.code.unwrap_or(0)).collect(),
            keyless: piece
                .iter()
                .enumerate()
                .filter(|(_, r)| r.code.is_none())
                .map(|(i, _)| i as u32)
                .collect(),
            ints: piece.iter().map(|r| r.int.unwrap_or(0)).collect(),
            int_bits: bitmap(&piece.iter().map(|r| r.int.is_some()).collect::<Vec<_>>()),
            wides: piece.iter().map(|r| r.wide.unwrap_or(0)).collect(),
            wide_bits: bitmap(&piece.iter().map(|r| r.wide.is_some()).collect::<Vec<_>>()),
            floats: piece.iter().map(|r| r.float.unwrap_or(0.0)).collect(),
            float_bits: bitmap(&piece.iter().map(|r| r.float.is_some()).collect::<Vec<_>>()),
        })
        .collect();
    let mut segments: Vec<Vec<Segment<'_>>> = vec![Vec::new(); workers];
    for (i, o) in owned.iter().enumerate() {
        segments[i % workers].push(Segment {
            codes: &o.codes,
            keyless: &o.keyless,
            columns: vec![
                ValueColumn {
                    values: Values::I64(&o.ints),
                    valid: validity(&o.int_bits, o.codes.len()),
                },
                ValueColumn {
                    values: Values::I128(&o.wides),
                    valid: validity(&o.wide_bits, o.codes.len()),
                },
                ValueColumn {
                    values: Values::F64(&o.floats),
                    valid: validity(&o.float_bits, o.codes.len()),
                },
            ],
        });
    }
    let opts = ColumnsOptions {
        max_code,
        expected_groups: 4,
    };
    let result = aggregate(&pool, &segments, &specs(), &opts, &Silent).unwrap();
    assert_eq!(result.direct, max_code.is_some());
    let mut out: Expected = BTreeMap::new();
    for g in &result.groups {
        for (i, &code) in g.codes.iter().enumerate() {
            let n = |k: usize| g.rows[i] - g.states[k].nulls().get(i);
            // Every state over a column counts that column's nulls alike
            // (COUNT's own count is compared with the reference below).
            for k in 1..=3 {
                assert_eq!(n(k), n(0), "aggregate {k}'s count, group {code:?}");
            }
            assert_eq!(n(5), n(6), "the float extremes' counts, group {code:?}");
            let (
                State::SumInt { sum, .. },
                State::MinInt { v: min, .. },
                State::MaxInt { v: max, .. },
            ) = (&g.states[1], &g.states[2], &g.states[3])
            else {
                panic!("unexpected states");
            };
            let State::SumInt { sum: wide, .. } = &g.states[4] else {
                panic!()
            };
            let (State::MinFloat { v: fmin, .. }, State::MaxFloat { v: fmax, .. }) =
                (&g.states[5], &g.states[6])
            else {
                panic!()
            };
            let some = |k: usize| n(k) > 0;
            let previous = out.insert(
                code,
                (
                    g.rows[i],
                    n(0),
                    sum[i],
                    some(2).then(|| min[i] as i64),
                    some(3).then(|| max[i] as i64),
                    wide[i],
                    some(5).then_some(fmin[i]),
                    some(6).then_some(fmax[i]),
                ),
            );
            assert!(previous.is_none(), "group {code:?} came out twice");
        }
    }
    out
}

fn same(a: &Expected, b: &Expected) -> bool {
    let float_eq = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) => x == y || (x.is_nan() && y.is_nan()),
        (x, y) => x.is_none() && y.is_none(),
    };
    a.len() == b.len()
        && a.iter().zip(b).all(|((ka, va), (kb, vb))| {
            ka == kb
                && (va.0, va.1, va.2, va.3, va.4, va.5) == (vb.0, vb.1, vb.2, vb.3, vb.4, vb.5)
                && float_eq(va.6, vb.6)
                && float_eq(va.7, vb.7)
        })
}

fn row_strategy(max_code: u64) -> impl Strategy<Value = Row> {
    (
        prop::option::weighted(0.9, 0..=max_code),
        prop::option::weighted(
            0.8,
            prop_oneof![Just(i64::MIN), Just(i64::MAX), any::<i64>()],
        ),
        prop::option::weighted(0.8, -(1i128 << 100)..(1i128 << 100)),
        prop::option::weighted(
            0.8,
            prop_oneof![
                Just(f64::NAN),
                Just(-0.0),
                Just(f64::NEG_INFINITY),
                -1e6..1e6f64
            ],
        ),
    )
        .prop_map(|(code, int, wide, float)| Row {
            code,
            int,
            wide,
            float,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn agrees_with_the_reference(
        rows in prop::collection::vec(row_strategy(40), 0..600),
        threads in 1usize..=2,
        direct in any::<bool>(),
    ) {
        let want = reference(&rows);
        let got = run(&rows, threads, direct.then_some(40));
        prop_assert!(same(&got, &want), "got {got:?}\nwant {want:?}");
    }

    #[test]
    fn many_groups_grow_the_hash_index(
        rows in prop::collection::vec(row_strategy(u64::MAX), 0..3000),
    ) {
        let want = reference(&rows);
        prop_assert!(same(&run(&rows, 2, None), &want));
    }
}

#[test]
fn wide_sums_are_exact_even_when_they_leave_128_bits_on_the_way() {
    let pool = pool(1);
    let p = i128::MAX - 5;
    for (values, want) in [
        (vec![p, p, -p], Some(p)),
        (vec![p, -p, p], Some(p)),
        (vec![-p, -p, p, 3], Some(-p + 3)),
        (vec![p, p], None),
        (vec![-p, -p, -p, p], None),
    ] {
        let codes = vec![1u64; values.len()];
        let segments = vec![vec![Segment {
            codes: &codes,
            keyless: &[],
            columns: vec![ValueColumn {
                values: Values::I128(&values),
                valid: None,
            }],
        }]];
        let specs = [AggSpec {
            column: 0,
            func: Func::Sum,
            float: false,
        }];
        let result = aggregate(
            &pool,
            &segments,
            &specs,
            &ColumnsOptions::default(),
            &Silent,
        )
        .unwrap();
        let groups = result.groups.iter().find(|g| !g.is_empty()).unwrap();
        assert_eq!(groups.states[0].exact_sum(0), want, "{values:?}");
    }
}

/// A worker's own table is kept sparse while small (fast lookups); the
/// partitions of the radix path, which all live at once, stay compact
/// (a sparse index there cost groupby 2^20 a quarter more memory and
/// time).
#[test]
fn partitions_keep_compact_indexes_and_a_workers_table_a_sparse_one() {
    let specs = [AggSpec {
        column: 0,
        func: Func::Sum,
        float: false,
    }];
    let codes: Vec<u64> = (0..4096u64)
        .map(|c| c.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    let values: Vec<i64> = vec![1; codes.len()];
    let segment = Segment {
        codes: &codes,
        keyless: &[],
        columns: vec![ValueColumn {
            values: Values::I64(&values),
            valid: None,
        }],
    };
    let mut partition = Partial::for_partition(&specs);
    let mut own = Partial::new(&specs, None, 1024);
    partition.add(&segment, &specs).unwrap();
    own.add(&segment, &specs).unwrap();
    assert_eq!((partition.groups(), own.groups()), (4096, 4096));
    assert_eq!(
        partition.index.slot_bytes(),
        16 * 1024 * 16,
        "a quarter full"
    );
    assert!(
        own.index.slot_bytes() >= 8 * 4096 * 16,
        "an eighth full at most"
    );
}
