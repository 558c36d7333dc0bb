//! Joins of numakit-frame over keys of every common type.
//!
//! Property tests: random tables (keys of every type from small domains
//! that include each type's limits, nulls, NaN/-0.0/infinities, empty,
//! long and prefix-sharing strings; uniform, skewed, all-equal and
//! all-null columns; one or several parts, some empty) joined with every
//! kind and algorithm on 1 and 2 threads, checked against the sequential
//! reference; composite keys of 2-3 columns, including ones whose packed
//! code would exceed 64 bits (the tuple dictionary); pairs of different
//! but comparable types (Int32/Int64, Int64/UInt64, decimals of different
//! scales, int/decimal, Utf8/LargeUtf8, Utf8View/dictionary, Date32/Date64,
//! timestamp units, Float32/Float64). Counting agrees with materializing.
//!
//! Hand-computed tests pin the semantics so that a bug shared by the
//! operator and the reference cannot hide: -1 never meets u64::MAX, 1.5
//! meets 1.50, 2 meets 2.00, -0.0 meets 0.0, nulls never match, ranges
//! that do not overlap, empty and one-row sides, all-equal keys.

mod common;

use common::*;
use numakit_frame::join::{self, JoinRequest};
use numakit_frame::reference::{self, Value};
use numakit_frame::{FrameError, MemoryLimit, Table};
use numakit_ops::join::{JoinAlgorithm, JoinKind};
use numakit_ops::timing::Silent;
use numakit_pool::Pool;
use proptest::prelude::*;

const KINDS: [JoinKind; 4] = [
    JoinKind::Inner,
    JoinKind::LeftOuter,
    JoinKind::Semi,
    JoinKind::Anti,
];

const ALGORITHMS: [Option<JoinAlgorithm>; 5] = [
    None,
    Some(JoinAlgorithm::NoPartition),
    Some(JoinAlgorithm::RadixPro),
    Some(JoinAlgorithm::RadixCprl),
    Some(JoinAlgorithm::Mpsm),
];

fn request(on: &[&str], kind: JoinKind, algorithm: Option<JoinAlgorithm>) -> JoinRequest {
    let mut r = JoinRequest::on(on);
    r.kind = kind;
    r.algorithm = algorithm;
    r.memory_limit = MemoryLimit::unlimited();
    r
}

/// Joins, checks the result against the reference and the count-only run
/// against the result; returns the result table.
fn checked(pool: &Pool, left: &Table, right: &Table, request: &JoinRequest) -> Table {
    let what = format!(
        "{:?} join, algorithm {:?}, {} threads",
        request.kind,
        request.algorithm,
        pool.workers()
    );
    let (report, result) =
        join::run(pool, left, right, request, &Silent).unwrap_or_else(|e| panic!("{what}: {e}"));
    let result = result.expect("a materialized join has a result");
    assert_eq!(report.rows as usize, result.rows(), "{what}: report rows");
    reference::check_join(left, right, request, Some(&result), report.rows)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let mut counting = request.clone();
    counting.count_only = true;
    let (count, none) = join::run(pool, left, right, &counting, &Silent)
        .unwrap_or_else(|e| panic!("{what}, count only: {e}"));
    assert!(none.is_none(), "{what}: counting materialized a table");
    assert_eq!(
        count.rows, report.rows,
        "{what}: count only vs materialized"
    );
    result
}

#[derive(Clone, Debug)]
struct Case {
    types: (KeyType, KeyType),
    left: Vec<Option<u8>>,
    right: Vec<Option<u8>>,
    layouts: (Layout, Layout),
    kind: JoinKind,
    algorithm: Option<JoinAlgorithm>,
    threads: usize,
}

fn types() -> impl Strategy<Value = (KeyType, KeyType)> {
    prop_oneof![
        3 => key_type().prop_map(|t| (t, t)),
        2 => proptest::sample::select(CROSS_PAIRS.to_vec()),
    ]
}

fn side(t: KeyType) -> impl Strategy<Value = Vec<Option<u8>>> {
    (shape(), 0usize..30).prop_flat_map(move |(s, rows)| cells_of(t.domain_len(), s, rows))
}

fn case() -> impl Strategy<Value = Case> {
    types().prop_flat_map(|(lt, rt)| {
        (
            side(lt),
            side(rt),
            (layout(), layout()),
            proptest::sample::select(KINDS.to_vec()),
            proptest::sample::select(ALGORITHMS.to_vec()),
            0usize..2,
        )
            .prop_map(
                move |(left, right, layouts, kind, algorithm, threads)| Case {
                    types: (lt, rt),
                    left,
                    right,
                    layouts,
                    kind,
                    algorithm,
                    threads,
                },
            )
    })
}

#[test]
fn single_keys_of_every_type_agree_with_the_reference() {
    let pools = pools();
    runner(160)
        .run(&case(), |c| {
            let pool = &pools[c.threads];
            let left = table(
                "left",
                vec![
                    ("k", c.types.0.array(&c.left)),
                    ("lid", ids(c.left.len(), 0)),
                ],
                c.layouts.0,
                pool.workers(),
            );
            let right = table(
                "right",
                vec![
                    ("k", c.types.1.array(&c.right)),
                    ("rid", ids(c.right.len(), 1000)),
                ],
                c.layouts.1,
                pool.workers(),
            );
            let result = checked(pool, &left, &right, &request(&["k"], c.kind, c.algorithm));
            // The key appears once, under its left name and type.
            let names: Vec<&str> = result
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().as_str())
                .collect();
            let want: &[&str] = match c.kind {
                JoinKind::Inner | JoinKind::LeftOuter => &["k", "lid", "rid"],
                _ => &["k", "lid"],
            };
            prop_assert_eq!(names, want);
            prop_assert_eq!(result.schema().field(0).data_type(), &c.types.0.data_type());
            Ok(())
        })
        .unwrap();
}

/// Every type with itself, every kind and algorithm, on a fixed table
/// that has duplicates, nulls and keys missing on either side.
#[test]
fn every_type_kind_and_algorithm_on_a_fixed_table() {
    let pool = pool(2);
    let left_cells = [
        Some(0),
        Some(1),
        Some(1),
        None,
        Some(3),
        Some(7),
        Some(5),
        Some(2),
    ];
    let right_cells = [
        Some(1),
        Some(7),
        Some(7),
        None,
        Some(4),
        Some(6),
        Some(2),
        Some(0),
    ];
    for t in ALL_KEY_TYPES {
        let left = table(
            "left",
            vec![("k", t.array(&left_cells)), ("lid", ids(8, 0))],
            Layout {
                parts: 3,
                empty_part: false,
            },
            2,
        );
        let right = table(
            "right",
            vec![("k", t.array(&right_cells)), ("rid", ids(8, 100))],
            Layout {
                parts: 2,
                empty_part: true,
            },
            2,
        );
        for kind in KINDS {
            for algorithm in ALGORITHMS {
                let result = checked(&pool, &left, &right, &request(&["k"], kind, algorithm));
                // Inner matches (domain of 8): 0, 1 twice, 7 twice, 2 once;
                // booleans have 2 values (cells taken mod 2).
                if kind == JoinKind::Inner && t.domain_len() == 8 {
                    let expect = match t {
                        // -0.0 (index 2) also meets 0.0 (index 3) ...
                        KeyType::Float32 | KeyType::Float64 => 1 + 2 + 2 + 1 + 1,
                        _ => 1 + 2 + 2 + 1,
                    };
                    assert_eq!(result.rows(), expect, "{t:?} {algorithm:?}");
                }
            }
        }
    }
}

#[derive(Clone, Debug)]
struct CompositeCase {
    types: Vec<KeyType>,
    left: Vec<Vec<Option<u8>>>,
    right: Vec<Vec<Option<u8>>>,
    layouts: (Layout, Layout),
    kind: JoinKind,
    algorithm: Option<JoinAlgorithm>,
    threads: usize,
}

fn rows_of(types: &[KeyType], rows: std::ops::Range<usize>) -> BoxedStrategy<Vec<Vec<Option<u8>>>> {
    // Row-major cells (each row one cell per column), mostly few values so
    // that rows match.
    let types = types.to_vec();
    proptest::collection::vec(
        types
            .iter()
            .map(|t| cell(t.domain_len().min(4), 10, false))
            .collect::<Vec<_>>(),
        rows,
    )
    .boxed()
}

fn composite_case() -> impl Strategy<Value = CompositeCase> {
    proptest::collection::vec(key_type(), 2..=3).prop_flat_map(|types| {
        (
            rows_of(&types, 0..25),
            rows_of(&types, 0..25),
            (layout(), layout()),
            proptest::sample::select(KINDS.to_vec()),
            proptest::sample::select(ALGORITHMS.to_vec()),
            0usize..2,
        )
            .prop_map(move |(left, right, layouts, kind, algorithm, threads)| {
                CompositeCase {
                    types: types.clone(),
                    left,
                    right,
                    layouts,
                    kind,
                    algorithm,
                    threads,
                }
            })
    })
}

const KEY_NAMES: [&str; 3] = ["k0", "k1", "k2"];

fn columns_of(
    types: &[KeyType],
    rows: &[Vec<Option<u8>>],
) -> Vec<(&'static str, arrow_array::ArrayRef)> {
    types
        .iter()
        .enumerate()
        .map(|(c, t)| {
            let cells: Vec<Option<u8>> = rows.iter().map(|r| r[c]).collect();
            (KEY_NAMES[c], t.array(&cells))
        })
        .collect()
}

#[test]
fn composite_keys_agree_with_the_reference() {
    let pools = pools();
    runner(100)
        .run(&composite_case(), |c| {
            let pool = &pools[c.threads];
            let mut lcols = columns_of(&c.types, &c.left);
            lcols.push(("lid", ids(c.left.len(), 0)));
            let mut rcols = columns_of(&c.types, &c.right);
            rcols.push(("rid", ids(c.right.len(), 1000)));
            let left = table("left", lcols, c.layouts.0, pool.workers());
            let right = table("right", rcols, c.layouts.1, pool.workers());
            let on = &KEY_NAMES[..c.types.len()];
            checked(pool, &left, &right, &request(on, c.kind, c.algorithm));
            Ok(())
        })
        .unwrap();
}

/// Three Int64 key columns over the whole range: the packed code would
/// need more than 64 bits, so the tuple dictionary codes the keys.
#[test]
fn composite_keys_wider_than_64_bits_use_the_tuple_dictionary() {
    let pools = pools();
    let strategy = (
        proptest::collection::vec(any::<i64>(), 3 * 4),
        proptest::collection::vec(proptest::collection::vec(cell(4, 8, false), 3), 1..40),
        proptest::collection::vec(proptest::collection::vec(cell(4, 8, false), 3), 1..40),
        proptest::sample::select(KINDS.to_vec()),
        proptest::sample::select(ALGORITHMS.to_vec()),
        0usize..2,
    );
    runner(60)
        .run(
            &strategy,
            |(mut domain, left, right, kind, algorithm, threads)| {
                // Each column spans (almost) all of int64.
                for c in 0..3 {
                    domain[4 * c] = i64::MIN;
                    domain[4 * c + 1] = i64::MAX;
                }
                let pool = &pools[threads];
                let column = |rows: &[Vec<Option<u8>>], c: usize| -> arrow_array::ArrayRef {
                    std::sync::Arc::new(arrow_array::Int64Array::from(
                        rows.iter()
                            .map(|r| r[c].map(|i| domain[4 * c + i as usize]))
                            .collect::<Vec<_>>(),
                    ))
                };
                // Both sides need the extremes for the shared range to be wide.
                let mut left = left;
                let mut right = right;
                for side in [&mut left, &mut right] {
                    side.push(vec![Some(0), Some(0), Some(0)]);
                    side.push(vec![Some(1), Some(1), Some(1)]);
                }
                let ltable = table(
                    "left",
                    vec![
                        ("a", column(&left, 0)),
                        ("b", column(&left, 1)),
                        ("c", column(&left, 2)),
                        ("lid", ids(left.len(), 0)),
                    ],
                    Layout {
                        parts: 3,
                        empty_part: false,
                    },
                    pool.workers(),
                );
                let rtable = table(
                    "right",
                    vec![
                        ("a", column(&right, 0)),
                        ("b", column(&right, 1)),
                        ("c", column(&right, 2)),
                        ("rid", ids(right.len(), 0)),
                    ],
                    Layout {
                        parts: 2,
                        empty_part: false,
                    },
                    pool.workers(),
                );
                let r = request(&["a", "b", "c"], kind, algorithm);
                checked(pool, &ltable, &rtable, &r);
                let (report, _) = join::run(pool, &ltable, &rtable, &r, &Silent).unwrap();
                prop_assert!(
                    matches!(
                        report.key_encoding,
                        numakit_frame::keys::KeyEncoding::TupleDictionary { columns: 3, .. }
                    ),
                    "{:?}",
                    report.key_encoding
                );
                Ok(())
            },
        )
        .unwrap();
}

// ---------------------------------------------------------------------
// Hand-computed expectations.

/// The (lid, rid) pairs of an inner join, the lids of other kinds; rids
/// of unmatched left-outer rows are null.
fn pairs(result: &Table) -> Vec<Vec<Value>> {
    let names: Vec<String> = result
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let wanted: Vec<usize> = ["lid", "rid"]
        .iter()
        .filter_map(|n| names.iter().position(|m| m == n))
        .collect();
    reference::rows(result, &wanted).unwrap()
}

fn lr(l: i128, r: Option<i128>) -> Vec<Value> {
    vec![v::i(l), r.map_or(Value::Null, v::i)]
}

fn l(x: i128) -> Vec<Value> {
    vec![v::i(x)]
}

/// Runs every kind and algorithm on both pools and compares with the
/// hand-computed results (inner pairs; unmatched left rows).
fn expect_everywhere(
    left: (arrow_array::ArrayRef, &str),
    right: (arrow_array::ArrayRef, &str),
    inner: &[(i128, i128)],
) {
    let nl = left.0.len();
    let nr = right.0.len();
    let matched: Vec<i128> = {
        let mut m: Vec<i128> = inner.iter().map(|p| p.0).collect();
        m.sort();
        m.dedup();
        m
    };
    let unmatched: Vec<i128> = (0..nl as i128).filter(|i| !matched.contains(i)).collect();
    for pool in pools() {
        for layout in [
            Layout::ONE,
            Layout {
                parts: 3,
                empty_part: true,
            },
        ] {
            let ltable = table(
                "left",
                vec![(left.1, left.0.clone()), ("lid", ids(nl, 0))],
                layout,
                pool.workers(),
            );
            let rtable = table(
                "right",
                vec![(right.1, right.0.clone()), ("rid", ids(nr, 0))],
                layout,
                pool.workers(),
            );
            for algorithm in ALGORITHMS {
                for kind in KINDS {
                    let mut r = request(&[left.1], kind, algorithm);
                    r.right_on = vec![right.1.to_string()];
                    let result = checked(&pool, &ltable, &rtable, &r);
                    let want: Vec<Vec<Value>> = match kind {
                        JoinKind::Inner => inner.iter().map(|&(a, b)| lr(a, Some(b))).collect(),
                        JoinKind::LeftOuter => inner
                            .iter()
                            .map(|&(a, b)| lr(a, Some(b)))
                            .chain(unmatched.iter().map(|&a| lr(a, None)))
                            .collect(),
                        JoinKind::Semi => matched.iter().map(|&a| l(a)).collect(),
                        JoinKind::Anti => unmatched.iter().map(|&a| l(a)).collect(),
                    };
                    assert_same_rows(pairs(&result), want);
                }
            }
        }
    }
}

fn arc<A: arrow_array::Array + 'static>(a: A) -> arrow_array::ArrayRef {
    std::sync::Arc::new(a)
}

#[test]
fn signed_and_unsigned_keys_meet_only_on_equal_values() {
    use arrow_array::{Int64Array, UInt64Array};
    let left = arc(Int64Array::from(vec![
        Some(-1),
        Some(5),
        None,
        Some(i64::MAX),
        Some(0),
        Some(i64::MIN),
    ]));
    let right = arc(UInt64Array::from(vec![
        Some(u64::MAX),
        Some(5),
        None,
        Some(i64::MAX as u64),
        Some(i64::MAX as u64 + 1),
        Some(5),
    ]));
    expect_everywhere(
        (left.clone(), "k"),
        (right.clone(), "u"),
        &[(1, 1), (1, 5), (3, 3)],
    );
    // And the other way round: u64::MAX does not meet -1.
    let inner_flipped = [(1, 1), (5, 1), (3, 3)];
    expect_everywhere((right, "u"), (left, "k"), &inner_flipped);
}

#[test]
fn int32_meets_int64_and_int8_meets_uint8() {
    use arrow_array::{Int32Array, Int64Array, Int8Array, UInt8Array};
    let left = arc(Int32Array::from(vec![
        Some(i32::MIN),
        Some(-1),
        Some(7),
        None,
        Some(i32::MAX),
    ]));
    let right = arc(Int64Array::from(vec![
        Some(i32::MIN as i64),
        Some(i32::MIN as i64 - 1),
        Some(7),
        Some(-1),
        Some(i32::MAX as i64 + 1),
        Some(4294967295), // -1 as u32 bits: no match
    ]));
    expect_everywhere((left, "a"), (right, "b"), &[(0, 0), (1, 3), (2, 2)]);
    let left = arc(Int8Array::from(vec![-1i8, 127, -128, 0]));
    let right = arc(UInt8Array::from(vec![255u8, 127, 128, 0]));
    expect_everywhere((left, "a"), (right, "b"), &[(1, 1), (3, 3)]);
}

#[test]
fn decimals_of_different_scales_compare_by_value() {
    use arrow_array::{Decimal128Array, Int32Array, Int64Array};
    let dec = |values: Vec<Option<i128>>, p: u8, s: i8| {
        arc(Decimal128Array::from(values)
            .with_precision_and_scale(p, s)
            .unwrap())
    };
    // 1.5, -1.5, 0.1, 2.0, NULL as Decimal(10, 1)
    let left = dec(vec![Some(15), Some(-15), Some(1), Some(20), None], 10, 1);
    // 1.50, 1.55, -1.50, 0.10, 2.00, 0.01 as Decimal(12, 2)
    let right = dec(
        vec![
            Some(150),
            Some(155),
            Some(-150),
            Some(10),
            Some(200),
            Some(1),
        ],
        12,
        2,
    );
    expect_everywhere(
        (left, "a"),
        (right.clone(), "b"),
        &[(0, 0), (1, 2), (2, 3), (3, 4)],
    );
    // Integers against decimals: 2 meets 2.00, not 2.01; 1 does not meet 0.01.
    let ints = arc(Int32Array::from(vec![Some(2), Some(1), None, Some(-2)]));
    let right2 = dec(
        vec![Some(201), Some(200), Some(1), Some(-200), Some(100)],
        12,
        2,
    );
    expect_everywhere((ints, "i"), (right2, "d"), &[(0, 1), (1, 4), (3, 3)]);
    // Decimal(38, 0) at its limits against Int64: no overflow, no false match.
    let p38 = 99_999_999_999_999_999_999_999_999_999_999_999_999i128;
    let wide = dec(
        vec![
            Some(p38),
            Some(-p38),
            Some(i64::MAX as i128),
            Some(i64::MIN as i128),
            Some(0),
        ],
        38,
        0,
    );
    let longs = arc(Int64Array::from(vec![i64::MAX, i64::MIN, 0, -1]));
    expect_everywhere((wide.clone(), "w"), (longs, "l"), &[(2, 0), (3, 1), (4, 2)]);
    // Decimal(38, 0) against Decimal(38, 10): only values both can hold.
    let fine = dec(
        vec![
            Some(0),
            Some(10_000_000_000),
            Some(-10_000_000_000),
            Some(p38),
            Some(5),
        ],
        38,
        10,
    );
    let small = dec(
        vec![Some(0), Some(1), Some(-1), Some(p38), Some(-p38)],
        38,
        0,
    );
    expect_everywhere((small, "s"), (fine, "f"), &[(0, 0), (1, 1), (2, 2)]);
    // Wide decimals against themselves near one limit (both limits:
    // `decimal38_keys_at_both_limits_can_be_joined`).
    let high = dec(
        vec![
            Some(p38),
            Some(-p38 / 2),
            Some(i64::MAX as i128),
            Some(p38 - 1),
            Some(0),
        ],
        38,
        0,
    );
    expect_everywhere(
        (high.clone(), "w"),
        (high, "w"),
        &[(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)],
    );
    let low = dec(
        vec![
            Some(-p38),
            Some(p38 / 2),
            Some(i64::MIN as i128),
            Some(-p38 + 1),
        ],
        38,
        0,
    );
    expect_everywhere(
        (low.clone(), "w"),
        (low, "w"),
        &[(0, 0), (1, 1), (2, 2), (3, 3)],
    );
}

/// Regression (a bug until 93a2626): the shared range of two Decimal128(38) key columns holding both
/// +-(10^38 - 1) is 2 * 10^38 - 2 wide, more than i128 holds, and
/// `keys::join::pair_codes` computes `hi - lo` without checking: a panic
/// (debug) or codes taken modulo 2^64 (release), where values 2^64 apart
/// would wrongly meet.
#[test]
fn decimal38_keys_at_both_limits_can_be_joined() {
    use arrow_array::Decimal128Array;
    let p38 = 99_999_999_999_999_999_999_999_999_999_999_999_999i128;
    let keys = arc(Decimal128Array::from(vec![p38, -p38])
        .with_precision_and_scale(38, 0)
        .unwrap());
    expect_everywhere((keys.clone(), "k"), (keys, "k"), &[(0, 0), (1, 1)]);
}

#[test]
fn floats_meet_with_sql_equality_of_zeros_and_nans() {
    use arrow_array::{Float32Array, Float64Array};
    let left = arc(Float64Array::from(vec![
        Some(-0.0),
        Some(0.0),
        Some(f64::NAN),
        Some(f64::INFINITY),
        Some(f64::NEG_INFINITY),
        None,
        Some(0.1),
        Some(1.5),
    ]));
    let right = arc(Float32Array::from(vec![
        Some(0.0f32),
        Some(f32::NAN),
        Some(f32::INFINITY),
        None,
        Some(0.1f32), // not 0.1f64
        Some(1.5f32),
        Some(f32::MIN_POSITIVE),
    ]));
    expect_everywhere(
        (left, "x"),
        (right, "y"),
        &[(0, 0), (1, 0), (2, 1), (3, 2), (7, 5)],
    );
}

#[test]
fn strings_of_every_layout_meet_by_their_bytes() {
    use arrow_array::types::Int32Type;
    use arrow_array::{DictionaryArray, LargeStringArray, StringArray, StringViewArray};
    let long = "p".repeat(2000);
    let a = format!("{long}a");
    let b = format!("{long}b");
    let left = arc(StringArray::from(vec![
        Some(""),
        None,
        Some(a.as_str()),
        Some(b.as_str()),
        Some(long.as_str()),
        Some("x"),
    ]));
    let right = arc(LargeStringArray::from(vec![
        Some(b.as_str()),
        Some(""),
        Some(long.as_str()),
        None,
        Some("X"),
        Some(a.as_str()),
        Some(""),
    ]));
    let inner = [(0, 1), (0, 6), (2, 5), (3, 0), (4, 2)];
    expect_everywhere((left.clone(), "s"), (right, "t"), &inner);
    let view = arc(StringViewArray::from(vec![
        Some(b.as_str()),
        Some(""),
        Some(long.as_str()),
        None,
        Some("X"),
        Some(a.as_str()),
        Some(""),
    ]));
    expect_everywhere((left.clone(), "s"), (view, "t"), &inner);
    // A dictionary whose values repeat and include a null value.
    let values = arc(StringArray::from(vec![
        Some(b.as_str()),
        Some(""),
        Some(long.as_str()),
        None,
        Some("X"),
        Some(a.as_str()),
        Some(b.as_str()),
    ]));
    let keys = arrow_array::Int32Array::from(vec![
        Some(6),
        Some(1),
        Some(2),
        Some(3),
        Some(4),
        Some(5),
        Some(1),
        None,
    ]);
    let dict = arc(DictionaryArray::<Int32Type>::try_new(keys, values).unwrap());
    expect_everywhere((left, "s"), (dict, "t"), &inner);
}

#[test]
fn dates_timestamps_and_booleans_meet_in_common_units() {
    use arrow_array::{
        BooleanArray, Date32Array, Date64Array, TimestampMicrosecondArray, TimestampSecondArray,
    };
    let days = arc(Date32Array::from(vec![
        Some(0),
        Some(1),
        Some(-1),
        None,
        Some(19_000),
    ]));
    let millis = arc(Date64Array::from(vec![
        Some(86_400_000),
        Some(1),
        Some(-86_400_000),
        Some(0),
        Some(19_000 * 86_400_000 + 1),
    ]));
    expect_everywhere((days, "d"), (millis, "m"), &[(0, 3), (1, 0), (2, 2)]);
    let seconds = arc(TimestampSecondArray::from(vec![
        Some(1),
        Some(-1),
        Some(i64::MAX),
        None,
    ]));
    let micros = arc(TimestampMicrosecondArray::from(vec![
        Some(1_000_000),
        Some(1),
        Some(-1_000_000),
        Some(i64::MAX),
    ]));
    expect_everywhere((seconds, "s"), (micros, "u"), &[(0, 0), (1, 2)]);
    let zoned = arc(TimestampMicrosecondArray::from(vec![1_000_000i64, 5]).with_timezone("UTC"));
    let zoned2 = arc(TimestampSecondArray::from(vec![1i64, 5]).with_timezone("+02:00"));
    expect_everywhere((zoned, "z"), (zoned2, "y"), &[(0, 0)]);
    let left = arc(BooleanArray::from(vec![Some(true), Some(false), None]));
    let right = arc(BooleanArray::from(vec![
        Some(true),
        Some(true),
        None,
        Some(false),
    ]));
    expect_everywhere((left, "b"), (right, "c"), &[(0, 0), (0, 1), (1, 3)]);
}

#[test]
fn ranges_that_do_not_overlap_match_nothing() {
    use arrow_array::Int64Array;
    let left = arc(Int64Array::from_iter_values(0..50));
    let right = arc(Int64Array::from_iter_values(1_000..1_030));
    expect_everywhere((left, "k"), (right, "k"), &[]);
    // Touching ranges: exactly one value shared.
    let left = arc(Int64Array::from_iter_values(0..50));
    let right = arc(Int64Array::from_iter_values(49..80));
    expect_everywhere((left, "k"), (right, "k"), &[(49, 0)]);
    // Strings that share nothing.
    let left = arc(arrow_array::StringArray::from(vec!["a", "b"]));
    let right = arc(arrow_array::StringArray::from(vec!["c", "d", "a "]));
    expect_everywhere((left, "k"), (right, "k"), &[]);
}

#[test]
fn empty_and_one_row_sides() {
    use arrow_array::Int64Array;
    let empty = || arc(Int64Array::from(Vec::<i64>::new()));
    let one = || arc(Int64Array::from(vec![7]));
    expect_everywhere((empty(), "k"), (empty(), "k"), &[]);
    expect_everywhere((empty(), "k"), (one(), "k"), &[]);
    expect_everywhere((one(), "k"), (empty(), "k"), &[]);
    expect_everywhere((one(), "k"), (one(), "k"), &[(0, 0)]);
    let null = || arc(Int64Array::from(vec![None::<i64>]));
    expect_everywhere((null(), "k"), (null(), "k"), &[]);
    expect_everywhere((null(), "k"), (one(), "k"), &[]);
    // Tables with no part at all.
    let pool = pool(2);
    let no_parts = table(
        "left",
        vec![("k", empty()), ("lid", ids(0, 0))],
        Layout {
            parts: 0,
            empty_part: false,
        },
        2,
    );
    let right = table(
        "right",
        vec![("k", one()), ("rid", ids(1, 0))],
        Layout::ONE,
        2,
    );
    for kind in KINDS {
        for algorithm in ALGORITHMS {
            let r = request(&["k"], kind, algorithm);
            assert_eq!(checked(&pool, &no_parts, &right, &r).rows(), 0);
            let expect = usize::from(matches!(kind, JoinKind::LeftOuter | JoinKind::Anti));
            assert_eq!(checked(&pool, &right, &no_parts, &r).rows(), expect);
        }
    }
}

#[test]
fn all_equal_keys_give_the_full_product() {
    use arrow_array::StringArray;
    let pool = pool(2);
    let (nl, nr) = (37, 23);
    let left = table(
        "left",
        vec![
            ("k", arc(StringArray::from(vec!["same"; nl]))),
            ("lid", ids(nl, 0)),
        ],
        Layout {
            parts: 4,
            empty_part: false,
        },
        2,
    );
    let right = table(
        "right",
        vec![
            ("k", arc(StringArray::from(vec!["same"; nr]))),
            ("rid", ids(nr, 0)),
        ],
        Layout {
            parts: 3,
            empty_part: false,
        },
        2,
    );
    for algorithm in ALGORITHMS {
        let result = checked(
            &pool,
            &left,
            &right,
            &request(&["k"], JoinKind::Inner, algorithm),
        );
        assert_eq!(result.rows(), nl * nr);
        let semi = checked(
            &pool,
            &left,
            &right,
            &request(&["k"], JoinKind::Semi, algorithm),
        );
        assert_eq!(semi.rows(), nl, "a semi join returns each left row once");
        let anti = checked(
            &pool,
            &left,
            &right,
            &request(&["k"], JoinKind::Anti, algorithm),
        );
        assert_eq!(anti.rows(), 0);
    }
}

/// Larger skewed inputs (a few thousand rows, Zipf-like keys near the
/// int64 limits) on every algorithm.
#[test]
fn skewed_keys_near_the_limits() {
    use arrow_array::Int64Array;
    let pool = pool(2);
    let zipf = |n: usize, seed: u64| -> Vec<Option<i64>> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let r = (x >> 33) as u32;
                if r % 17 == 0 {
                    return None;
                }
                // rank ~ 1/u: small ranks dominate.
                let rank = (u32::MAX / (r | 1)).min(500) as i64;
                Some(if rank % 2 == 0 {
                    i64::MAX - rank
                } else {
                    i64::MIN + rank
                })
            })
            .collect()
    };
    let left = table(
        "left",
        vec![
            ("k", arc(Int64Array::from(zipf(1500, 1)))),
            ("lid", ids(1500, 0)),
        ],
        Layout {
            parts: 5,
            empty_part: false,
        },
        2,
    );
    let right = table(
        "right",
        vec![
            ("k", arc(Int64Array::from(zipf(400, 2)))),
            ("rid", ids(400, 0)),
        ],
        Layout {
            parts: 2,
            empty_part: false,
        },
        2,
    );
    for kind in KINDS {
        for algorithm in ALGORITHMS {
            checked(&pool, &left, &right, &request(&["k"], kind, algorithm));
        }
    }
}

#[test]
fn key_types_that_cannot_meet_are_refused_naming_both_columns() {
    use arrow_array::{Int64Array, StringArray, TimestampMillisecondArray};
    let pool = pool(1);
    let ints = table(
        "left",
        vec![("id", arc(Int64Array::from(vec![1])))],
        Layout::ONE,
        1,
    );
    let strings = table(
        "right",
        vec![("name", arc(StringArray::from(vec!["1"])))],
        Layout::ONE,
        1,
    );
    let mut r = request(&["id"], JoinKind::Inner, None);
    r.right_on = vec!["name".into()];
    let err = join::run(&pool, &ints, &strings, &r, &Silent).unwrap_err();
    assert!(matches!(err, FrameError::KeyMismatch { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("\"id\"")
            && message.contains("Int64")
            && message.contains("\"name\"")
            && message.contains("Utf8"),
        "{message}"
    );
    assert!(!message.contains('\n'), "{message}");
    let local = table(
        "left",
        vec![("t", arc(TimestampMillisecondArray::from(vec![1])))],
        Layout::ONE,
        1,
    );
    let zoned = table(
        "right",
        vec![(
            "t",
            arc(TimestampMillisecondArray::from(vec![1]).with_timezone("UTC")),
        )],
        Layout::ONE,
        1,
    );
    let err = join::run(
        &pool,
        &local,
        &zoned,
        &request(&["t"], JoinKind::Inner, None),
        &Silent,
    )
    .unwrap_err();
    assert!(matches!(err, FrameError::KeyMismatch { .. }), "{err:?}");
}
