//! Group-by aggregation of numakit-frame over keys and values of every
//! common type.
//!
//! Property tests: random tables with 1-3 key columns of any type (nulls,
//! limits, NaN, long strings, skew, all-equal, all-null) and value columns
//! of any type, several aggregates at once (COUNT(*), COUNT, SUM, MIN, MAX,
//! AVG as the type allows), on 1 and 2 threads, in one or several parts;
//! checked against the sequential reference, with sums computed here
//! exactly: a sum beyond its result type must be `FrameError::Overflow`,
//! never a wrapped number. The one-value path (one integer column without
//! nulls, or COUNT(*) alone) runs with every method.
//!
//! Hand-computed tests: null keys form one group, (1, NULL) differs from
//! (1, 2), all-null groups give null SUM/MIN/MAX/AVG and COUNT 0, MIN/MAX
//! of strings, dates and floats (NaN greatest), result names and types,
//! Int64 and UInt64 SUM overflow on both paths and every method, empty
//! tables, keys at the integer limits.

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array};
use arrow_schema::DataType;
use common::*;
use numakit_frame::aggregate::{self, AggFunc, Aggregate, AggregatePath, AggregateRequest};
use numakit_frame::reference::{self, Value};
use numakit_frame::{FrameError, MemoryLimit, Table};
use numakit_ops::aggregate::AggMethod;
use numakit_ops::timing::Silent;
use numakit_pool::Pool;
use proptest::prelude::*;

fn request(
    keys: &[&str],
    aggregates: Vec<Aggregate>,
    method: Option<AggMethod>,
) -> AggregateRequest {
    AggregateRequest {
        keys: keys.iter().map(|k| k.to_string()).collect(),
        aggregates,
        method,
        memory_limit: MemoryLimit::unlimited(),
        cost_model: None,
    }
}

fn arc<A: arrow_array::Array + 'static>(a: A) -> ArrayRef {
    Arc::new(a)
}

/// What the exact sums say the group-by must do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Expect {
    /// Every sum, and every partial sum in any order, fits: the
    /// reference decides.
    Fits,
    /// Every exact SUM fits its result type, but a group's values (or its
    /// positive or negative ones) add up beyond 128 bits on the way, or an
    /// AVG's sum is beyond 128 bits: numakit must give a result (its sums
    /// are exact whatever the order; see
    /// `decimal_sums_whose_partial_sums_leave_128_bits`), which the
    /// reference, adding in 128 bits, cannot check.
    Unverifiable,
    /// Some exact SUM is beyond its result type: an overflow error.
    Overflow,
}

/// Exact per-group sums (in 256 bits) of every SUM and AVG column.
fn expect(input: &Table, request: &AggregateRequest) -> Expect {
    use arrow_buffer::i256;
    let key_columns: Vec<usize> = request
        .keys
        .iter()
        .map(|k| input.column_index(k).unwrap())
        .collect();
    let keys = reference::rows(input, &key_columns).unwrap();
    let fits_i128 = |x: i256| x.to_i128().is_some();
    let mut outcome = Expect::Fits;
    for a in &request.aggregates {
        if !matches!(a.func, AggFunc::Sum | AggFunc::Avg) {
            continue;
        }
        let name = a.column.as_deref().unwrap();
        let c = input.column_index(name).unwrap();
        let data_type = match input.schema().field(c).data_type() {
            DataType::Dictionary(_, values) => values.as_ref().clone(),
            other => other.clone(),
        };
        let values = column(input, name);
        // Per group: (exact sum, sum of positives, sum of negatives).
        let mut sums: HashMap<&Vec<Value>, (i256, i256, i256)> = HashMap::new();
        for (key, value) in keys.iter().zip(&values) {
            let Value::Number { unscaled, .. } = value else {
                continue;
            };
            let v = i256::from_i128(*unscaled);
            let e = sums
                .entry(key)
                .or_insert((i256::ZERO, i256::ZERO, i256::ZERO));
            e.0 = e.0.wrapping_add(v);
            if *unscaled > 0 {
                e.1 = e.1.wrapping_add(v);
            } else {
                e.2 = e.2.wrapping_add(v);
            }
        }
        for &(sum, positive, negative) in sums.values() {
            let fits = match sum.to_i128() {
                None => false,
                Some(s) => match data_type {
                    DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
                        i64::try_from(s).is_ok()
                    }
                    DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => {
                        u64::try_from(s).is_ok()
                    }
                    _ => s.abs() < 10i128.pow(38),
                },
            };
            let this = if a.func == AggFunc::Sum && !fits {
                Expect::Overflow
            } else if !fits_i128(sum) || !fits_i128(positive) || !fits_i128(negative) {
                Expect::Unverifiable
            } else {
                Expect::Fits
            };
            outcome = outcome.max(this);
        }
    }
    outcome
}

/// Runs the group-by and checks it: against the reference when the sums
/// fit, as an overflow error when one does not. Returns the result when
/// there is one.
fn checked(
    pool: &Pool,
    input: &Table,
    request: &AggregateRequest,
) -> Option<(aggregate::AggregateReport, Table)> {
    let what = format!(
        "group-by {:?} {:?} method {:?}, {} threads",
        request.keys,
        request.aggregates,
        request.method,
        pool.workers()
    );
    let outcome = aggregate::run(pool, input, request, &Silent);
    match (expect(input, request), outcome) {
        (Expect::Fits, Ok((report, result))) => {
            reference::check_aggregate(input, request, &result)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(report.groups as usize, result.rows(), "{what}");
            assert_eq!(report.input_rows as usize, input.rows(), "{what}");
            let names: Vec<String> = result
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect();
            let want: Vec<String> = request
                .keys
                .iter()
                .cloned()
                .chain(request.aggregates.iter().map(Aggregate::output_name))
                .collect();
            assert_eq!(names, want, "{what}");
            for (i, key) in request.keys.iter().enumerate() {
                let c = input.column_index(key).unwrap();
                assert_eq!(
                    result.schema().field(i).data_type(),
                    input.schema().field(c).data_type(),
                    "{what}"
                );
            }
            Some((report, result))
        }
        (Expect::Fits, Err(e)) => panic!("{what}: {e}"),
        (Expect::Overflow, Err(FrameError::Overflow(message))) => {
            assert!(!message.contains('\n'), "{message}");
            None
        }
        (Expect::Overflow, other) => panic!(
            "{what}: expected an overflow error, got {:?}",
            other.map(|(_, t)| all(&t))
        ),
        // Sums that leave 128 bits on the way: a result is required, but
        // the reference's own 128-bit sums cannot check it.
        (Expect::Unverifiable, Err(e)) => panic!("{what}: {e}"),
        (Expect::Unverifiable, Ok(_)) => None,
    }
}

/// The aggregates a column of `t` allows.
fn allowed(t: KeyType) -> Vec<AggFunc> {
    let numeric = t.is_numeric();
    let mut funcs = vec![AggFunc::Count, AggFunc::Min, AggFunc::Max];
    if numeric {
        funcs.extend([AggFunc::Sum, AggFunc::Avg]);
    }
    funcs
}

const KEYS: [&str; 3] = ["k0", "k1", "k2"];
const VALUES: [&str; 3] = ["v0", "v1", "v2"];

#[derive(Clone, Debug)]
struct Case {
    key_types: Vec<KeyType>,
    value_types: Vec<KeyType>,
    /// Row-major: key cells then value cells.
    rows: Vec<Vec<Option<u8>>>,
    /// (function index into `allowed`, value column) or COUNT(*).
    picks: Vec<Option<(usize, usize)>>,
    layout: Layout,
    threads: usize,
    method: Option<AggMethod>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        proptest::collection::vec(key_type(), 1..=3),
        proptest::collection::vec(key_type(), 1..=3),
        any::<bool>(),
    )
        .prop_flat_map(|(key_types, value_types, few)| {
            let cells: Vec<BoxedStrategy<Option<u8>>> = key_types
                .iter()
                .map(|t| {
                    cell(
                        if few {
                            t.domain_len().min(3)
                        } else {
                            t.domain_len()
                        },
                        12,
                        !few,
                    )
                })
                .chain(value_types.iter().map(|t| cell(t.domain_len(), 15, false)))
                .collect();
            let nv = value_types.len();
            (
                Just(key_types),
                Just(value_types),
                proptest::collection::vec(cells, 0..40),
                proptest::collection::vec(
                    proptest::option::weighted(0.85, (0usize..5, 0..nv)),
                    1..6,
                ),
                layout(),
                0usize..2,
                proptest::option::of(Just(AggMethod::Local)),
            )
        })
        .prop_map(
            |(key_types, value_types, rows, picks, layout, threads, method)| Case {
                key_types,
                value_types,
                rows,
                picks,
                layout,
                threads,
                method,
            },
        )
}

fn input_of(
    types: (&[KeyType], &[KeyType]),
    rows: &[Vec<Option<u8>>],
    layout: Layout,
    workers: usize,
) -> Table {
    let nk = types.0.len();
    let mut columns = Vec::new();
    for (c, t) in types.0.iter().chain(types.1).enumerate() {
        let cells: Vec<Option<u8>> = rows.iter().map(|r| r[c]).collect();
        let name = if c < nk { KEYS[c] } else { VALUES[c - nk] };
        columns.push((name, t.array(&cells)));
    }
    table("input", columns, layout, workers)
}

fn aggregates_of(value_types: &[KeyType], picks: &[Option<(usize, usize)>]) -> Vec<Aggregate> {
    let mut out: Vec<Aggregate> = Vec::new();
    for pick in picks {
        let a = match *pick {
            None => Aggregate::count_rows(),
            Some((f, c)) => {
                let funcs = allowed(value_types[c]);
                Aggregate::of(funcs[f % funcs.len()], VALUES[c])
            }
        };
        if !out.iter().any(|o| o.output_name() == a.output_name()) {
            out.push(a);
        }
    }
    out
}

#[test]
fn any_keys_and_values_agree_with_the_reference() {
    let pools = pools();
    runner(150)
        .run(&case(), |c| {
            let pool = &pools[c.threads];
            let input = input_of(
                (&c.key_types, &c.value_types),
                &c.rows,
                c.layout,
                pool.workers(),
            );
            let keys = &KEYS[..c.key_types.len()];
            let r = request(keys, aggregates_of(&c.value_types, &c.picks), c.method);
            checked(pool, &input, &r);
            Ok(())
        })
        .unwrap();
}

/// Value columns the one-value path takes (64-bit integer lanes).
const ONE_VALUE_TYPES: [KeyType; 14] = [
    KeyType::Dec32,
    KeyType::Dec64,
    KeyType::Time32Ms,
    KeyType::DurationMs,
    KeyType::DictInt64,
    KeyType::Int8,
    KeyType::Int32,
    KeyType::Int64,
    KeyType::UInt32,
    KeyType::Date32,
    KeyType::Date64,
    KeyType::TsMicro,
    KeyType::TsMilliUtc,
    KeyType::Boolean,
];

#[test]
fn the_one_value_path_agrees_with_the_reference_for_every_method() {
    let pools = pools();
    let strategy = (
        proptest::collection::vec(key_type(), 1..=2),
        proptest::option::of(proptest::sample::select(ONE_VALUE_TYPES.to_vec())),
        proptest::sample::select(AggMethod::ALL.to_vec()),
        any::<bool>(),
    )
        .prop_flat_map(|(key_types, value, method, skewed)| {
            let cells: Vec<BoxedStrategy<Option<u8>>> = key_types
                .iter()
                .map(|t| cell(t.domain_len(), 10, skewed))
                .chain(value.iter().map(|t| cell(t.domain_len(), 0, false)))
                .collect();
            (
                Just(key_types),
                Just(value),
                Just(method),
                proptest::collection::vec(cells, 0..60),
                proptest::collection::vec(0usize..5, 1..4),
                layout(),
                0usize..2,
            )
        });
    runner(150)
        .run(
            &strategy,
            |(key_types, value, method, rows, picks, layout, threads)| {
                let pool = &pools[threads];
                let values: Vec<KeyType> = value.into_iter().collect();
                let input = input_of((&key_types, &values), &rows, layout, pool.workers());
                let aggregates = match values.first() {
                    None => vec![Aggregate::count_rows()],
                    Some(&t) => {
                        let funcs = allowed(t);
                        let picks: Vec<Option<(usize, usize)>> = picks
                            .iter()
                            .map(|&f| (f < 4).then(|| (f % funcs.len(), 0)))
                            .collect();
                        let mut list = aggregates_of(&values, &picks);
                        // COUNT(col) alone reads no values: keep one that does.
                        if list
                            .iter()
                            .all(|a| matches!(a.func, AggFunc::Count | AggFunc::CountRows))
                        {
                            list.push(Aggregate::of(AggFunc::Max, "v0"));
                        }
                        list
                    }
                };
                let r = request(&KEYS[..key_types.len()], aggregates, Some(method));
                if let Some((report, _)) = checked(pool, &input, &r) {
                    // A method named explicitly runs the operators' kernels;
                    // `auto` may choose either path.
                    if method != AggMethod::Auto {
                        prop_assert_eq!(report.path, AggregatePath::OneValue, "{}", report.reason);
                        // Its time outside the kernels is reported too; the
                        // partitioned method scatters from the columns, every
                        // other one first makes tuples of them.
                        let names: Vec<&str> =
                            report.phases.iter().map(|p| p.name.as_str()).collect();
                        prop_assert!(names.contains(&"convert groups"), "{:?}", names);
                        prop_assert_eq!(
                            names.contains(&"make tuples"),
                            method != AggMethod::Partitioned,
                            "{:?}",
                            names
                        );
                    }
                }
                Ok(())
            },
        )
        .unwrap();
}

// ---------------------------------------------------------------------
// Hand-computed expectations.

fn nullable_ints(values: &[Option<i64>]) -> ArrayRef {
    arc(Int64Array::from(values.to_vec()))
}

fn with_methods(f: impl Fn(&Pool, Option<AggMethod>, Layout)) {
    for pool in pools() {
        for layout in [
            Layout::ONE,
            Layout {
                parts: 3,
                empty_part: true,
            },
        ] {
            for method in std::iter::once(None).chain(AggMethod::ALL.map(Some)) {
                f(&pool, method, layout);
            }
        }
    }
}

#[test]
fn null_keys_form_one_group_on_both_paths() {
    use v::*;
    let keys = nullable_ints(&[Some(1), Some(1), None, Some(2), None]);
    // One integer column without nulls: the one-value path, every method.
    with_methods(|pool, method, layout| {
        let input = table(
            "t",
            vec![
                ("k", keys.clone()),
                (
                    "x",
                    nullable_ints(&[Some(10), Some(20), Some(5), Some(3), Some(7)]),
                ),
            ],
            layout,
            pool.workers(),
        );
        let r = request(
            &["k"],
            Aggregate::parse_list("count,sum:x,min:x,max:x,avg:x").unwrap(),
            method,
        );
        let (report, result) = checked(pool, &input, &r).unwrap();
        if method.is_some_and(|m| m != AggMethod::Auto) {
            assert_eq!(report.path, AggregatePath::OneValue, "{}", report.reason);
        }
        assert_same_rows(
            all(&result),
            vec![
                vec![i(1), i(2), i(30), i(10), i(20), f(15.0)],
                vec![null(), i(2), i(12), i(5), i(7), f(6.0)],
                vec![i(2), i(1), i(3), i(3), i(3), f(3.0)],
            ],
        );
    });
    // A null value: the many-column path; group 2's values are all null.
    for pool in pools() {
        let input = table(
            "t",
            vec![
                ("k", keys.clone()),
                (
                    "x",
                    nullable_ints(&[Some(10), Some(20), Some(5), None, Some(7)]),
                ),
            ],
            Layout {
                parts: 2,
                empty_part: false,
            },
            pool.workers(),
        );
        let r = request(
            &["k"],
            Aggregate::parse_list("count,count:x,sum:x,min:x,max:x,avg:x").unwrap(),
            None,
        );
        let (report, result) = checked(&pool, &input, &r).unwrap();
        // Null values take the many-column engine (batch by batch here).
        assert!(
            matches!(
                report.path,
                AggregatePath::Columns | AggregatePath::Streaming
            ),
            "{:?}",
            report.path
        );
        assert_same_rows(
            all(&result),
            vec![
                vec![i(1), i(2), i(2), i(30), i(10), i(20), f(15.0)],
                vec![null(), i(2), i(2), i(12), i(5), i(7), f(6.0)],
                vec![i(2), i(1), i(0), null(), null(), null(), null()],
            ],
        );
        // Another method than local is refused on this path, naming it.
        let mut shuffle = r.clone();
        shuffle.method = Some(AggMethod::Shuffle);
        let err = aggregate::run(&pool, &input, &shuffle, &Silent).unwrap_err();
        assert!(
            matches!(err, FrameError::InvalidRequest(_)) && err.to_string().contains("shuffle"),
            "{err}"
        );
    }
}

#[test]
fn composite_keys_keep_nulls_as_values() {
    use v::*;
    let a = nullable_ints(&[Some(1), Some(1), Some(1), None, None, None, Some(1)]);
    let b = arc(arrow_array::StringArray::from(vec![
        None,
        Some("2"),
        None,
        Some("2"),
        None,
        None,
        Some(""),
    ]));
    with_methods(|pool, method, layout| {
        let input = table(
            "t",
            vec![("a", a.clone()), ("b", b.clone())],
            layout,
            pool.workers(),
        );
        let (_, result) = checked(
            pool,
            &input,
            &request(&["a", "b"], vec![Aggregate::count_rows()], method),
        )
        .unwrap();
        assert_same_rows(
            all(&result),
            vec![
                vec![i(1), null(), i(2)],
                vec![i(1), s("2"), i(1)],
                vec![i(1), s(""), i(1)],
                vec![null(), s("2"), i(1)],
                vec![null(), null(), i(2)],
            ],
        );
    });
    // Three wide columns: the tuple dictionary, with nulls in every column.
    let wide = |vals: &[Option<i64>]| nullable_ints(vals);
    let x = wide(&[
        Some(i64::MIN),
        Some(i64::MAX),
        None,
        Some(i64::MIN),
        Some(i64::MIN),
    ]);
    let y = wide(&[
        Some(i64::MAX),
        Some(i64::MIN),
        Some(0),
        Some(i64::MAX),
        None,
    ]);
    let z = wide(&[None, Some(0), Some(i64::MAX), None, Some(i64::MIN)]);
    for pool in pools() {
        let input = table(
            "t",
            vec![("x", x.clone()), ("y", y.clone()), ("z", z.clone())],
            Layout {
                parts: 2,
                empty_part: false,
            },
            pool.workers(),
        );
        let (report, result) = checked(
            &pool,
            &input,
            // A named method keeps the group-by off the batch-by-batch
            // path, so the keys are coded whole (here by the tuple
            // dictionary, which this test is about).
            &request(
                &["x", "y", "z"],
                vec![Aggregate::count_rows()],
                Some(AggMethod::Local),
            ),
        )
        .unwrap();
        assert!(
            matches!(
                report.key_encoding,
                numakit_frame::keys::KeyEncoding::TupleDictionary { columns: 3, .. }
            ),
            "{:?}",
            report.key_encoding
        );
        let (mn, mx) = (i64::MIN as i128, i64::MAX as i128);
        assert_same_rows(
            all(&result),
            vec![
                vec![i(mn), i(mx), null(), i(2)],
                vec![i(mx), i(mn), i(0), i(1)],
                vec![null(), i(0), i(mx), i(1)],
                vec![i(mn), null(), i(mn), i(1)],
            ],
        );
    }
}

#[test]
fn names_and_types_of_results_follow_sql() {
    use arrow_array::{
        Date32Array, Decimal128Array, Float32Array, Int32Array, StringArray, UInt8Array,
    };
    let pool = pool(2);
    let input = table(
        "t",
        vec![
            ("k", arc(StringArray::from(vec!["a", "b", "a"]))),
            ("i", arc(Int32Array::from(vec![1, 2, 3]))),
            ("u", arc(UInt8Array::from(vec![200, 100, 250]))),
            (
                "d",
                arc(Decimal128Array::from(vec![150, -1, 1])
                    .with_precision_and_scale(10, 2)
                    .unwrap()),
            ),
            ("f", arc(Float32Array::from(vec![1.5, 2.5, f32::NAN]))),
            ("s", arc(StringArray::from(vec!["x", "y", "z"]))),
            ("day", arc(Date32Array::from(vec![3, 2, 1]))),
        ],
        Layout::ONE,
        2,
    );
    let r = request(
        &["k"],
        Aggregate::parse_list(
            "count,count:s,sum:i,sum:u,sum:d,sum:f,avg:i,avg:d,min:f,max:s,min:day,max:d",
        )
        .unwrap(),
        None,
    );
    let (_, result) = checked(&pool, &input, &r).unwrap();
    let fields: Vec<(String, DataType)> = result
        .schema()
        .fields()
        .iter()
        .map(|f| (f.name().clone(), f.data_type().clone()))
        .collect();
    let want = [
        ("k", DataType::Utf8),
        ("count", DataType::Int64),
        ("count_s", DataType::Int64),
        ("sum_i", DataType::Int64),
        ("sum_u", DataType::UInt64),
        ("sum_d", DataType::Decimal128(38, 2)),
        ("sum_f", DataType::Float64),
        ("avg_i", DataType::Float64),
        ("avg_d", DataType::Float64),
        ("min_f", DataType::Float32),
        ("max_s", DataType::Utf8),
        ("min_day", DataType::Date32),
        ("max_d", DataType::Decimal128(10, 2)),
    ];
    assert_eq!(fields, want.map(|(n, t)| (n.to_string(), t)).to_vec());
    use v::*;
    assert_same_rows(
        all(&result),
        vec![
            vec![
                s("a"),
                i(2),
                i(2),
                i(4),
                i(450),
                d(151, 2),
                f(f64::NAN),
                f(2.0),
                f(0.755),
                f(1.5),
                s("z"),
                i(86_400_000),
                d(150, 2),
            ],
            vec![
                s("b"),
                i(1),
                i(1),
                i(2),
                i(100),
                d(-1, 2),
                f(2.5),
                f(2.0),
                f(-0.01),
                f(2.5),
                s("y"),
                i(2 * 86_400_000),
                d(-1, 2),
            ],
        ],
    );
    // Clashing output names are refused before any work.
    let clash = request(&["count"], vec![Aggregate::count_rows()], None);
    let input = table(
        "t",
        vec![("count", arc(Int32Array::from(vec![1])))],
        Layout::ONE,
        2,
    );
    let err = aggregate::run(&pool, &input, &clash, &Silent).unwrap_err();
    assert!(
        matches!(err, FrameError::InvalidRequest(_)) && err.to_string().contains("\"count\""),
        "{err}"
    );
    let twice = request(
        &["count"],
        Aggregate::parse_list("sum:count,sum:count").unwrap(),
        None,
    );
    assert!(matches!(
        aggregate::run(&pool, &input, &twice, &Silent),
        Err(FrameError::InvalidRequest(_))
    ));
}

#[test]
fn min_and_max_of_strings_dates_and_floats() {
    use arrow_array::{Date64Array, Float64Array, LargeStringArray};
    use v::*;
    let long = "q".repeat(1200);
    let la = format!("{long}a");
    for pool in pools() {
        let input = table(
            "t",
            vec![
                (
                    "g",
                    nullable_ints(&[
                        Some(1),
                        Some(1),
                        Some(1),
                        Some(1),
                        Some(2),
                        Some(2),
                        Some(3),
                    ]),
                ),
                (
                    "s",
                    arc(LargeStringArray::from(vec![
                        Some("b"),
                        Some(""),
                        Some(la.as_str()),
                        None,
                        Some(long.as_str()),
                        Some(la.as_str()),
                        None,
                    ])),
                ),
                (
                    "t",
                    arc(Date64Array::from(vec![
                        Some(-5),
                        Some(i64::MAX),
                        None,
                        Some(i64::MIN),
                        None,
                        Some(0),
                        None,
                    ])),
                ),
                (
                    "x",
                    arc(Float64Array::from(vec![
                        Some(-0.0),
                        Some(f64::NAN),
                        Some(f64::NEG_INFINITY),
                        Some(1.0),
                        Some(0.0),
                        Some(-0.0),
                        None,
                    ])),
                ),
            ],
            Layout {
                parts: 3,
                empty_part: false,
            },
            pool.workers(),
        );
        let r = request(
            &["g"],
            Aggregate::parse_list("min:s,max:s,min:t,max:t,min:x,max:x,sum:x").unwrap(),
            None,
        );
        let (_, result) = checked(&pool, &input, &r).unwrap();
        assert_same_rows(
            all(&result),
            vec![
                vec![
                    i(1),
                    s(""),
                    s(&la),
                    i(i64::MIN as i128),
                    i(i64::MAX as i128),
                    f(f64::NEG_INFINITY),
                    f(f64::NAN),
                    f(f64::NAN),
                ],
                vec![i(2), s(&long), s(&la), i(0), i(0), f(0.0), f(0.0), f(0.0)],
                vec![i(3), null(), null(), null(), null(), null(), null(), null()],
            ],
        );
    }
}

#[test]
fn int64_sum_overflow_is_an_error_on_every_path_and_method() {
    let long = |v: Vec<i64>| arc(Int64Array::from(v));
    with_methods(|pool, method, layout| {
        for values in [
            vec![i64::MAX, 1, 0],
            vec![i64::MIN, -1, 0],
            vec![i64::MAX, i64::MAX, 2],
        ] {
            let input = table(
                "t",
                vec![("k", long(vec![7, 7, 7])), ("x", long(values.clone()))],
                layout,
                pool.workers(),
            );
            let r = request(
                &["k"],
                vec![Aggregate::count_rows(), Aggregate::of(AggFunc::Sum, "x")],
                method,
            );
            match aggregate::run(pool, &input, &r, &Silent) {
                Err(FrameError::Overflow(message)) => {
                    assert!(
                        message.contains("\"x\"") && !message.contains('\n'),
                        "{message}"
                    );
                }
                other => panic!(
                    "{values:?} with {method:?}: {:?}",
                    other.map(|(_, t)| all(&t))
                ),
            }
        }
        // Sums that come back into range are exact.
        let input = table(
            "t",
            vec![
                ("k", long(vec![7, 7, 7])),
                ("x", long(vec![i64::MAX, 1, -1])),
            ],
            layout,
            pool.workers(),
        );
        let r = request(&["k"], vec![Aggregate::of(AggFunc::Sum, "x")], method);
        let (_, result) = checked(pool, &input, &r).unwrap();
        assert_same_rows(all(&result), vec![vec![v::i(7), v::i(i64::MAX as i128)]]);
    });
    // The many-column path (a null among the values).
    for pool in pools() {
        let input = table(
            "t",
            vec![
                ("k", long(vec![1, 1, 1])),
                ("x", nullable_ints(&[Some(i64::MAX), None, Some(1)])),
            ],
            Layout::ONE,
            pool.workers(),
        );
        let r = request(&["k"], vec![Aggregate::of(AggFunc::Sum, "x")], None);
        assert!(matches!(
            aggregate::run(&pool, &input, &r, &Silent),
            Err(FrameError::Overflow(_))
        ));
        // UInt64 beyond u64::MAX, and Decimal(38) beyond 38 digits.
        let unsigned = arc(arrow_array::UInt64Array::from(vec![u64::MAX, 1]));
        let input = table(
            "t",
            vec![("k", long(vec![1, 1])), ("x", unsigned)],
            Layout::ONE,
            pool.workers(),
        );
        assert!(matches!(
            aggregate::run(&pool, &input, &r, &Silent),
            Err(FrameError::Overflow(_))
        ));
        let p38 = 10i128.pow(38) - 1;
        let dec = arc(arrow_array::Decimal128Array::from(vec![p38, 1])
            .with_precision_and_scale(38, 0)
            .unwrap());
        let input = table(
            "t",
            vec![("k", long(vec![1, 1])), ("x", dec)],
            Layout::ONE,
            pool.workers(),
        );
        assert!(matches!(
            aggregate::run(&pool, &input, &r, &Silent),
            Err(FrameError::Overflow(_))
        ));
    }
}

/// Regression (a bug until 93a2626): a decimal SUM beyond 128 bits fails inside the kernel with
/// `FrameError::Ops(SumOverflow)` ("the SUM of aggregate 0 overflows 128
/// bits", an internal index), not `FrameError::Overflow` naming the
/// column as smaller overflows do.
#[test]
fn decimal_sums_beyond_128_bits_are_overflow_errors() {
    let pool = pool(1);
    let p38 = 10i128.pow(38) - 1;
    let dec = arc(arrow_array::Decimal128Array::from(vec![p38, p38])
        .with_precision_and_scale(38, 0)
        .unwrap());
    let input = table(
        "t",
        vec![("k", arc(Int64Array::from(vec![1, 1]))), ("x", dec)],
        Layout::ONE,
        1,
    );
    let r = request(&["k"], vec![Aggregate::of(AggFunc::Sum, "x")], None);
    match aggregate::run(&pool, &input, &r, &Silent) {
        Err(FrameError::Overflow(message)) => assert!(message.contains("\"x\""), "{message}"),
        other => panic!("{:?}", other.map(|(_, t)| all(&t))),
    }
}

#[test]
fn empty_one_row_and_all_equal_inputs() {
    use v::*;
    with_methods(|pool, method, layout| {
        let empty = table(
            "t",
            vec![("k", nullable_ints(&[])), ("x", nullable_ints(&[]))],
            layout,
            pool.workers(),
        );
        for list in ["count", "count,sum:x,min:x", "avg:x"] {
            let (report, result) = checked(
                pool,
                &empty,
                &request(&["k"], Aggregate::parse_list(list).unwrap(), method),
            )
            .unwrap();
            assert_eq!((report.groups, result.rows()), (0, 0));
        }
        let one = table(
            "t",
            vec![
                ("k", nullable_ints(&[Some(-3)])),
                ("x", nullable_ints(&[Some(i64::MIN)])),
            ],
            layout,
            pool.workers(),
        );
        let (_, result) = checked(
            pool,
            &one,
            &request(
                &["k"],
                Aggregate::parse_list("count,sum:x,max:x").unwrap(),
                method,
            ),
        )
        .unwrap();
        assert_same_rows(
            all(&result),
            vec![vec![i(-3), i(1), i(i64::MIN as i128), i(i64::MIN as i128)]],
        );
        let n = 500;
        let same = table(
            "t",
            vec![
                ("k", arc(arrow_array::StringArray::from(vec!["k"; n]))),
                ("x", arc(Int64Array::from_iter_values(0..n as i64))),
            ],
            layout,
            pool.workers(),
        );
        let (_, result) = checked(
            pool,
            &same,
            &request(
                &["k"],
                Aggregate::parse_list("count,sum:x,min:x,max:x").unwrap(),
                method,
            ),
        )
        .unwrap();
        assert_same_rows(
            all(&result),
            vec![vec![
                s("k"),
                i(n as i128),
                i((n * (n - 1) / 2) as i128),
                i(0),
                i(n as i128 - 1),
            ]],
        );
        let nulls = table(
            "t",
            vec![
                ("k", nullable_ints(&[None, None, None])),
                ("x", nullable_ints(&[Some(1), Some(2), Some(3)])),
            ],
            layout,
            pool.workers(),
        );
        let (_, result) = checked(
            pool,
            &nulls,
            &request(
                &["k"],
                Aggregate::parse_list("count,sum:x").unwrap(),
                method,
            ),
        )
        .unwrap();
        assert_same_rows(all(&result), vec![vec![null(), i(3), i(6)]]);
    });
    // A table without any part.
    let pool = pool(2);
    let none = table(
        "t",
        vec![("k", nullable_ints(&[])), ("x", nullable_ints(&[]))],
        Layout {
            parts: 0,
            empty_part: false,
        },
        2,
    );
    let (_, result) = checked(
        &pool,
        &none,
        &request(&["k"], Aggregate::parse_list("count,sum:x").unwrap(), None),
    )
    .unwrap();
    assert_eq!(result.rows(), 0);
}

/// Keys at the ends of int64 and uint64 (codes 0 and 2^64 - 1) and a
/// Zipf-like skew over a few thousand rows, with every method.
#[test]
fn keys_at_the_integer_limits_and_skew() {
    use v::*;
    with_methods(|pool, method, layout| {
        let keys = arc(Int64Array::from(vec![
            i64::MIN,
            i64::MAX,
            i64::MIN,
            0,
            i64::MAX,
        ]));
        let input = table(
            "t",
            vec![
                ("k", keys),
                (
                    "x",
                    nullable_ints(&[Some(1), Some(2), Some(3), Some(4), Some(5)]),
                ),
            ],
            layout,
            pool.workers(),
        );
        let (_, result) = checked(
            pool,
            &input,
            &request(
                &["k"],
                Aggregate::parse_list("count,sum:x").unwrap(),
                method,
            ),
        )
        .unwrap();
        assert_same_rows(
            all(&result),
            vec![
                vec![i(i64::MIN as i128), i(2), i(4)],
                vec![i(i64::MAX as i128), i(2), i(7)],
                vec![i(0), i(1), i(4)],
            ],
        );
        let keys = arc(arrow_array::UInt64Array::from(vec![u64::MAX, 0, u64::MAX]));
        let input = table(
            "t",
            vec![
                ("k", keys),
                ("x", nullable_ints(&[Some(1), Some(2), Some(3)])),
            ],
            layout,
            pool.workers(),
        );
        let (_, result) = checked(
            pool,
            &input,
            &request(
                &["k"],
                Aggregate::parse_list("count,sum:x").unwrap(),
                method,
            ),
        )
        .unwrap();
        assert_same_rows(
            all(&result),
            vec![
                vec![i(u64::MAX as i128), i(2), i(4)],
                vec![i(0), i(1), i(2)],
            ],
        );
    });
    let n = 3000;
    let mut x = 7u64;
    let zipf: Vec<Option<i64>> = (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (x >> 33) as u32;
            (r % 13 != 0).then(|| (u32::MAX / (r | 1)).min(2000) as i64 * 1_000_003)
        })
        .collect();
    for pool in pools() {
        for method in AggMethod::ALL {
            let input = table(
                "t",
                vec![
                    ("k", nullable_ints(&zipf)),
                    ("x", arc(Int64Array::from_iter_values(0..n as i64))),
                ],
                Layout {
                    parts: 6,
                    empty_part: false,
                },
                pool.workers(),
            );
            checked(
                &pool,
                &input,
                &request(
                    &["k"],
                    Aggregate::parse_list("count,sum:x,min:x,max:x,avg:x").unwrap(),
                    Some(method),
                ),
            )
            .unwrap();
        }
    }
}

/// Regression (a bug until 93a2626): a Decimal128(38) group-by key holding both +-(10^38 - 1) spans
/// more than i128 holds; `keys::column_codes` computes `hi - lo` without
/// checking (panic in debug, wrapped codes in release).
#[test]
fn decimal38_keys_at_both_limits_can_be_grouped() {
    use v::*;
    let pool = pool(1);
    let p38 = 10i128.pow(38) - 1;
    let dec = arc(arrow_array::Decimal128Array::from(vec![p38, -p38, p38])
        .with_precision_and_scale(38, 0)
        .unwrap());
    let input = table("t", vec![("k", dec)], Layout::ONE, 1);
    let (_, result) = checked(
        &pool,
        &input,
        &request(&["k"], vec![Aggregate::count_rows()], None),
    )
    .unwrap();
    assert_same_rows(all(&result), vec![vec![i(p38), i(2)], vec![i(-p38), i(1)]]);
}

/// Regression (a bug until the sums kept a count of their wraps): decimal
/// sums were added in 128 bits with a checked add, so a group whose
/// positive values alone exceed i128 failed even when the exact sum fits
/// (here 10^38 - 1, the largest Decimal(38)), and whether it failed
/// depended on the order of addition: [P, -P, P] succeeded where
/// [P, P, -P] failed.
#[test]
fn decimal_sums_whose_partial_sums_leave_128_bits() {
    use v::*;
    let pool = pool(1);
    let p38 = 10i128.pow(38) - 1;
    for values in [vec![p38, -p38, p38], vec![p38, p38, -p38]] {
        let dec = arc(arrow_array::Decimal128Array::from(values.clone())
            .with_precision_and_scale(38, 0)
            .unwrap());
        let input = table(
            "t",
            vec![("k", arc(Int64Array::from(vec![1, 1, 1]))), ("x", dec)],
            Layout::ONE,
            1,
        );
        let r = request(&["k"], Aggregate::parse_list("sum:x,avg:x").unwrap(), None);
        match aggregate::run(&pool, &input, &r, &Silent) {
            Ok((_, result)) => {
                assert_same_rows(all(&result), vec![vec![i(1), i(p38), f(p38 as f64 / 3.0)]])
            }
            Err(e) => panic!("{values:?}: {e}"),
        }
    }
}
