//! Sorting numakit-frame tables by keys of every common type.
//!
//! Property tests: 1-3 sort keys of any type (limits, nulls, NaN/-0.0,
//! empty/long/prefix-sharing strings, dictionaries), each ascending or
//! descending with nulls first or last, on 1 and 2 threads, in one or
//! several parts (some empty), with all or some columns carried; checked
//! against the sequential reference (keys row by row, rows as a
//! multiset). Inputs already in the requested order, or in the reverse
//! order, must be reported as `Sorted` / `Reversed` and still come out
//! right.
//!
//! Hand-computed tests: explicit orders of integers at their limits,
//! floats (NaN greatest, -0.0 equal to 0.0), strings sharing long
//! prefixes, composite keys mixing directions, wide composite keys (the
//! tuple dictionary), one row, empty tables, all-equal keys, names and
//! types kept (dictionary and list columns carried).

mod common;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, StringArray};
use common::*;
use numakit_frame::keys::KeyEncoding;
use numakit_frame::reference::{self, Value};
use numakit_frame::sort::{self, InputOrder, SortColumn, SortRequest};
use numakit_frame::{MemoryLimit, Table};
use numakit_ops::timing::Silent;
use numakit_pool::Pool;
use proptest::prelude::*;

fn arc<A: Array + 'static>(a: A) -> ArrayRef {
    Arc::new(a)
}

fn by(name: &str, descending: bool, nulls_first: bool) -> SortColumn {
    SortColumn {
        name: name.into(),
        descending,
        nulls_first,
    }
}

fn request(by: Vec<SortColumn>, columns: Option<Vec<&str>>) -> SortRequest {
    SortRequest {
        by,
        columns: columns.map(|c| c.into_iter().map(String::from).collect()),
        memory_limit: MemoryLimit::unlimited(),
    }
}

/// Sorts and checks against the reference; the result keeps the names
/// and types of the chosen columns.
fn checked(pool: &Pool, input: &Table, request: &SortRequest) -> (sort::SortReport, Table) {
    let what = format!("sort by {:?}, {} threads", request.by, pool.workers());
    let (report, result) =
        sort::run(pool, input, request, &Silent).unwrap_or_else(|e| panic!("{what}: {e}"));
    reference::check_sort(input, request, &result).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(report.rows as usize, input.rows(), "{what}");
    assert_eq!(result.rows(), input.rows(), "{what}");
    let names: Vec<String> = match &request.columns {
        Some(c) => c.clone(),
        None => input
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect(),
    };
    let got: Vec<(String, arrow_schema::DataType)> = result
        .schema()
        .fields()
        .iter()
        .map(|f| (f.name().clone(), f.data_type().clone()))
        .collect();
    let want: Vec<(String, arrow_schema::DataType)> = names
        .iter()
        .map(|n| {
            (
                n.clone(),
                input
                    .schema()
                    .field(input.column_index(n).unwrap())
                    .data_type()
                    .clone(),
            )
        })
        .collect();
    assert_eq!(got, want, "{what}");
    (report, result)
}

const KEYS: [&str; 3] = ["k0", "k1", "k2"];

#[derive(Clone, Debug)]
struct Case {
    types: Vec<KeyType>,
    /// Per key: descending, nulls first.
    directions: Vec<(bool, bool)>,
    rows: Vec<Vec<Option<u8>>>,
    layout: Layout,
    threads: usize,
    /// Carry only the keys and the ids, in reverse order.
    some_columns: bool,
    /// Arrange the rows in the requested order (Some(false)) or its
    /// reverse (Some(true)) first.
    presorted: Option<bool>,
}

fn case() -> impl Strategy<Value = Case> {
    proptest::collection::vec((key_type(), any::<bool>(), any::<bool>()), 1..=3)
        .prop_flat_map(|keys| {
            let cells: Vec<BoxedStrategy<Option<u8>>> = keys
                .iter()
                .map(|(t, _, _)| cell(t.domain_len(), 15, false))
                .collect();
            (
                Just(keys),
                proptest::collection::vec(cells, 0..50),
                layout(),
                0usize..2,
                any::<bool>(),
                proptest::option::weighted(0.3, any::<bool>()),
            )
        })
        .prop_map(
            |(keys, rows, layout, threads, some_columns, presorted)| Case {
                types: keys.iter().map(|k| k.0).collect(),
                directions: keys.iter().map(|k| (k.1, k.2)).collect(),
                rows,
                layout,
                threads,
                some_columns,
                presorted,
            },
        )
}

/// Orders rows of domain indices as the request orders their values
/// (compared as values: -0.0 and 0.0 are equal).
fn order_rows(types: &[KeyType], rows: &mut [Vec<Option<u8>>], directions: &[(bool, bool)]) {
    let domains: Vec<Vec<Value>> = types
        .iter()
        .map(|t| {
            let all: Vec<Option<u8>> = (0..t.domain_len() as u8).map(Some).collect();
            reference::value::cells(t.array(&all).as_ref()).unwrap()
        })
        .collect();
    rows.sort_by(|a, b| {
        for (c, &(descending, nulls_first)) in directions.iter().enumerate() {
            let value = |i: Option<u8>| i.map(|i| &domains[c][i as usize]);
            let o = match (value(a[c]), value(b[c])) {
                (None, None) => std::cmp::Ordering::Equal,
                (None, Some(_)) if nulls_first => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some(_), None) if nulls_first => std::cmp::Ordering::Greater,
                (Some(_), None) => std::cmp::Ordering::Less,
                (Some(x), Some(y)) if descending => y.cmp(x),
                (Some(x), Some(y)) => x.cmp(y),
            };
            if o.is_ne() {
                return o;
            }
        }
        std::cmp::Ordering::Equal
    });
}

fn input_of(types: &[KeyType], rows: &[Vec<Option<u8>>], layout: Layout, workers: usize) -> Table {
    let mut columns: Vec<(&str, ArrayRef)> = types
        .iter()
        .enumerate()
        .map(|(c, t)| {
            // Domain indices modulo the domain, as the arrays take them.
            let cells: Vec<Option<u8>> = rows.iter().map(|r| r[c]).collect();
            (KEYS[c], t.array(&cells))
        })
        .collect();
    columns.push(("id", ids(rows.len(), 0)));
    table("input", columns, layout, workers)
}

#[test]
fn any_keys_and_directions_agree_with_the_reference() {
    let pools = pools();
    runner(200)
        .run(&case(), |mut c| {
            let pool = &pools[c.threads];
            // Cells are taken modulo their domain (booleans have two values).
            for row in &mut c.rows {
                for (cell, t) in row.iter_mut().zip(&c.types) {
                    *cell = cell.map(|i| i % t.domain_len() as u8);
                }
            }
            if let Some(reverse) = c.presorted {
                order_rows(&c.types, &mut c.rows, &c.directions);
                if reverse {
                    c.rows.reverse();
                }
            }
            let input = input_of(&c.types, &c.rows, c.layout, pool.workers());
            let keys: Vec<SortColumn> = c
                .directions
                .iter()
                .enumerate()
                .map(|(i, &(d, n))| by(KEYS[i], d, n))
                .collect();
            let columns = c.some_columns.then(|| {
                let mut names = vec!["id"];
                names.extend(KEYS[..c.types.len()].iter().rev());
                names
            });
            let (report, result) = checked(pool, &input, &request(keys.clone(), columns));
            if let Some(reverse) = c.presorted {
                // Are all rows equal under the key? Then both orders hold.
                let key_columns: Vec<usize> = (0..c.types.len()).collect();
                let key_rows = reference::rows(&input, &key_columns).unwrap();
                let all_equal = key_rows.windows(2).all(|w| w[0] == w[1]);
                let want = if reverse && !all_equal {
                    InputOrder::Reversed
                } else {
                    InputOrder::Sorted
                };
                prop_assert_eq!(report.input_order, want);
            }
            if report.input_order == InputOrder::Sorted {
                // Nothing moved: the result is the input.
                prop_assert_eq!(column(&result, "id"), column(&input, "id"));
            }
            Ok(())
        })
        .unwrap();
}

// ---------------------------------------------------------------------
// Hand-computed expectations.

/// The ids of the result, in order.
fn id_order(result: &Table) -> Vec<i128> {
    column(result, "id")
        .into_iter()
        .map(|v| match v {
            Value::Number { unscaled, .. } => unscaled,
            other => panic!("id {other:?}"),
        })
        .collect()
}

/// Sorts `key` (with ids 0..) by one column in every layout and pool,
/// and compares the id order where keys differ (ties: either order, as
/// `check_sort` also allows).
fn expect_order(key: ArrayRef, descending: bool, nulls_first: bool, want: &[i128]) {
    let n = key.len();
    for pool in pools() {
        for layout in [
            Layout::ONE,
            Layout {
                parts: 3,
                empty_part: true,
            },
            Layout {
                parts: n.max(1),
                empty_part: false,
            },
        ] {
            let input = table(
                "t",
                vec![("k", key.clone()), ("id", ids(n, 0))],
                layout,
                pool.workers(),
            );
            let (_, result) = checked(
                &pool,
                &input,
                &request(vec![by("k", descending, nulls_first)], None),
            );
            let keys_of = |order: &[i128]| -> Vec<Value> {
                let k = column(&input, "k");
                order.iter().map(|&i| k[i as usize].clone()).collect()
            };
            let got = id_order(&result);
            assert_eq!(
                keys_of(&got),
                keys_of(want),
                "got ids {got:?}, want {want:?}"
            );
        }
    }
}

#[test]
fn integers_at_their_limits_in_every_direction() {
    let key = arc(Int64Array::from(vec![
        Some(3),
        None,
        Some(-1),
        Some(i64::MIN),
        Some(i64::MAX),
        Some(3),
        None,
        Some(0),
    ]));
    expect_order(key.clone(), false, false, &[3, 2, 7, 0, 5, 4, 1, 6]);
    expect_order(key.clone(), false, true, &[1, 6, 3, 2, 7, 0, 5, 4]);
    expect_order(key.clone(), true, false, &[4, 0, 5, 7, 2, 3, 1, 6]);
    expect_order(key, true, true, &[1, 6, 4, 0, 5, 7, 2, 3]);
    let unsigned = arc(arrow_array::UInt64Array::from(vec![
        u64::MAX,
        0,
        i64::MAX as u64 + 1,
        i64::MAX as u64,
    ]));
    expect_order(unsigned.clone(), false, false, &[1, 3, 2, 0]);
    expect_order(unsigned, true, false, &[0, 2, 3, 1]);
    let small = arc(arrow_array::Int8Array::from(vec![
        Some(-128),
        Some(127),
        None,
        Some(-1),
    ]));
    expect_order(small, false, true, &[2, 0, 3, 1]);
}

#[test]
fn floats_order_totally() {
    let key = arc(Float64Array::from(vec![
        Some(f64::NAN),
        Some(0.0),
        Some(f64::NEG_INFINITY),
        None,
        Some(-0.0),
        Some(f64::INFINITY),
        Some(-1e300),
        Some(f64::MIN_POSITIVE),
    ]));
    // -0.0 and 0.0 are equal (ids 1 and 4 may come in either order).
    expect_order(key.clone(), false, false, &[2, 6, 4, 1, 7, 5, 0, 3]);
    expect_order(key, true, true, &[3, 0, 5, 7, 1, 4, 6, 2]);
    let key = arc(arrow_array::Float32Array::from(vec![
        2.5f32,
        f32::NAN,
        -2.5,
        -0.0,
    ]));
    expect_order(key, false, false, &[2, 3, 0, 1]);
}

#[test]
fn strings_and_binaries_order_by_their_bytes() {
    let long = "m".repeat(3000);
    let (la, lb) = (format!("{long}a"), format!("{long}b"));
    let values = vec![
        Some(lb.as_str()),
        Some(""),
        None,
        Some(la.as_str()),
        Some("n"),
        Some(long.as_str()),
        Some("M"),
        Some("\u{e9}"),
    ];
    let want_asc = [1, 6, 5, 3, 0, 4, 7, 2];
    expect_order(
        arc(StringArray::from(values.clone())),
        false,
        false,
        &want_asc,
    );
    expect_order(
        arc(arrow_array::LargeStringArray::from(values.clone())),
        false,
        false,
        &want_asc,
    );
    expect_order(
        arc(arrow_array::StringViewArray::from(values.clone())),
        false,
        false,
        &want_asc,
    );
    let dict: arrow_array::DictionaryArray<arrow_array::types::Int32Type> =
        values.iter().copied().collect();
    expect_order(arc(dict), true, true, &[2, 7, 4, 0, 3, 5, 6, 1]);
    let bytes: Vec<Option<&[u8]>> = values.iter().map(|v| v.map(str::as_bytes)).collect();
    expect_order(
        arc(arrow_array::BinaryArray::from_opt_vec(bytes)),
        false,
        false,
        &want_asc,
    );
}

#[test]
fn dates_timestamps_decimals_and_booleans() {
    let dates = arc(arrow_array::Date32Array::from(vec![
        Some(i32::MAX),
        Some(-1),
        None,
        Some(i32::MIN),
        Some(0),
    ]));
    expect_order(dates, false, false, &[3, 1, 4, 0, 2]);
    let ts = arc(
        arrow_array::TimestampNanosecondArray::from(vec![5, i64::MIN, -5, i64::MAX])
            .with_timezone("Europe/Paris"),
    );
    expect_order(ts, true, false, &[3, 0, 2, 1]);
    let p38 = 10i128.pow(38) - 1;
    let dec = arc(arrow_array::Decimal128Array::from(vec![
        Some(p38),
        Some(-1),
        None,
        Some(0),
        Some(p38 - 1),
    ])
    .with_precision_and_scale(38, 5)
    .unwrap());
    expect_order(dec, false, true, &[2, 1, 3, 4, 0]);
    let dec =
        arc(
            arrow_array::Decimal128Array::from(vec![Some(-p38), Some(1), Some(-p38 + 1), Some(0)])
                .with_precision_and_scale(38, 0)
                .unwrap(),
        );
    expect_order(dec, true, false, &[1, 3, 2, 0]);
    let bools = arc(arrow_array::BooleanArray::from(vec![
        Some(true),
        None,
        Some(false),
        Some(true),
    ]));
    expect_order(bools, false, false, &[2, 0, 3, 1]);
}

/// Regression (a bug until 93a2626): a Decimal128(38) sort or group-by key holding both +-(10^38 - 1)
/// spans more than i128 holds; `keys::column_codes` computes `hi - lo`
/// without checking (panic in debug, wrapped codes in release).
#[test]
fn decimal38_keys_at_both_limits_can_be_sorted() {
    let p38 = 10i128.pow(38) - 1;
    let dec = arc(arrow_array::Decimal128Array::from(vec![p38, -p38, 0])
        .with_precision_and_scale(38, 0)
        .unwrap());
    expect_order(dec, false, false, &[1, 2, 0]);
}

#[test]
fn composite_keys_mixing_directions() {
    let pool = pool(2);
    let s = arc(StringArray::from(vec![
        Some("b"),
        Some("a"),
        None,
        Some("b"),
        Some("a"),
        Some("b"),
        None,
    ]));
    let x = arc(Float64Array::from(vec![
        Some(1.0),
        None,
        Some(2.0),
        Some(f64::NAN),
        Some(3.0),
        Some(1.0),
        None,
    ]));
    let input = table(
        "t",
        vec![("s", s), ("x", x), ("id", ids(7, 0))],
        Layout {
            parts: 3,
            empty_part: false,
        },
        2,
    );
    let r = request(vec![by("s", false, false), by("x", true, true)], None);
    let (_, result) = checked(&pool, &input, &r);
    // a: null x first, then 3.0; b: NaN, 1.0, 1.0; null s last: null x, 2.0.
    let got = id_order(&result);
    assert_eq!(got[..2], [1, 4]);
    assert_eq!(got[2], 3);
    assert!(matches!(got[3..5], [0, 5] | [5, 0]), "{got:?}");
    assert_eq!(got[5..], [6, 2]);
    // Wide keys: three int64 columns over their whole range.
    let col = |v: Vec<Option<i64>>| arc(Int64Array::from(v));
    let (mn, mx) = (Some(i64::MIN), Some(i64::MAX));
    let input = table(
        "t",
        vec![
            ("a", col(vec![mx, mn, mx, None, mn, mn])),
            ("b", col(vec![mn, mx, mn, Some(0), mx, None])),
            ("c", col(vec![Some(1), mn, None, mx, mx, Some(0)])),
            ("id", ids(6, 0)),
        ],
        Layout {
            parts: 2,
            empty_part: false,
        },
        2,
    );
    let r = request(
        vec![
            by("a", false, true),
            by("b", true, false),
            by("c", false, false),
        ],
        None,
    );
    let (report, result) = checked(&pool, &input, &r);
    assert!(
        matches!(
            report.key_encoding,
            KeyEncoding::TupleDictionary { columns: 3, .. }
        ),
        "{:?}",
        report.key_encoding
    );
    // a nulls first: 3; a = MIN: b desc (MAX: c asc MIN 1, MAX 4; then null b: 5); a = MAX: b = MIN: c 1 (0), null (2).
    assert_eq!(id_order(&result), [3, 1, 4, 5, 0, 2]);
}

#[test]
fn one_row_empty_tables_and_all_equal_keys() {
    for pool in pools() {
        let one = table(
            "t",
            vec![
                ("k", arc(StringArray::from(vec!["only"]))),
                ("id", ids(1, 0)),
            ],
            Layout::ONE,
            pool.workers(),
        );
        let (report, result) = checked(&pool, &one, &request(vec![by("k", true, true)], None));
        assert_eq!(
            (report.input_order, id_order(&result)),
            (InputOrder::Sorted, vec![0])
        );
        for layout in [
            Layout {
                parts: 0,
                empty_part: false,
            },
            Layout::ONE,
            Layout {
                parts: 1,
                empty_part: true,
            },
        ] {
            let empty = table(
                "t",
                vec![
                    ("k", arc(Int64Array::from(Vec::<i64>::new()))),
                    ("id", ids(0, 0)),
                ],
                layout,
                pool.workers(),
            );
            let (_, result) = checked(
                &pool,
                &empty,
                &request(vec![by("k", false, false)], Some(vec!["id", "k"])),
            );
            assert_eq!(result.rows(), 0);
        }
        let n = 600;
        let same = table(
            "t",
            vec![
                ("k", arc(Float64Array::from(vec![-0.0; n]))),
                ("id", ids(n, 0)),
            ],
            Layout {
                parts: 4,
                empty_part: false,
            },
            pool.workers(),
        );
        for descending in [false, true] {
            let (report, result) = checked(
                &pool,
                &same,
                &request(vec![by("k", descending, false)], None),
            );
            assert_eq!(report.input_order, InputOrder::Sorted);
            assert_eq!(id_order(&result), (0..n as i128).collect::<Vec<_>>());
        }
        let nulls = table(
            "t",
            vec![
                ("k", arc(StringArray::from(vec![None::<&str>; 9]))),
                ("id", ids(9, 0)),
            ],
            Layout {
                parts: 2,
                empty_part: false,
            },
            pool.workers(),
        );
        checked(&pool, &nulls, &request(vec![by("k", false, true)], None));
    }
}

#[test]
fn sorted_and_reverse_sorted_inputs_are_recognised() {
    let n = 1000i64;
    for pool in pools() {
        let up = table(
            "t",
            vec![
                (
                    "k",
                    arc(Int64Array::from_iter_values((0..n).map(|i| i * 3 - 1000))),
                ),
                ("id", ids(n as usize, 0)),
            ],
            Layout {
                parts: 5,
                empty_part: true,
            },
            pool.workers(),
        );
        let (report, result) = checked(&pool, &up, &request(vec![by("k", false, false)], None));
        assert_eq!(report.input_order, InputOrder::Sorted);
        assert_eq!(id_order(&result), (0..n as i128).collect::<Vec<_>>());
        let (report, result) = checked(&pool, &up, &request(vec![by("k", true, false)], None));
        assert_eq!(report.input_order, InputOrder::Reversed);
        assert_eq!(id_order(&result), (0..n as i128).rev().collect::<Vec<_>>());
        // Sorted within each part but not across parts: must be sorted.
        let saw = table(
            "t",
            vec![
                (
                    "k",
                    arc(Int64Array::from_iter_values((0..n).map(|i| i % 200))),
                ),
                ("id", ids(n as usize, 0)),
            ],
            Layout {
                parts: 5,
                empty_part: false,
            },
            pool.workers(),
        );
        let (report, _) = checked(&pool, &saw, &request(vec![by("k", false, false)], None));
        assert_eq!(report.input_order, InputOrder::Unsorted);
        // Sorted except for the very last row.
        let mut values: Vec<i64> = (0..n).collect();
        values[n as usize - 1] = -1;
        let almost = table(
            "t",
            vec![
                ("k", arc(Int64Array::from(values))),
                ("id", ids(n as usize, 0)),
            ],
            Layout {
                parts: 3,
                empty_part: false,
            },
            pool.workers(),
        );
        let (report, result) = checked(&pool, &almost, &request(vec![by("k", false, false)], None));
        assert_eq!(report.input_order, InputOrder::Unsorted);
        assert_eq!(id_order(&result)[0], n as i128 - 1);
        // Nulls in a sorted column: sorted only with the nulls where asked.
        let with_nulls = arc(Int64Array::from(vec![None, Some(1), Some(2)]));
        let t = table(
            "t",
            vec![("k", with_nulls), ("id", ids(3, 0))],
            Layout {
                parts: 3,
                empty_part: false,
            },
            pool.workers(),
        );
        let (report, _) = checked(&pool, &t, &request(vec![by("k", false, true)], None));
        assert_eq!(report.input_order, InputOrder::Sorted);
        let (report, result) = checked(&pool, &t, &request(vec![by("k", false, false)], None));
        assert_eq!(report.input_order, InputOrder::Unsorted);
        assert_eq!(id_order(&result), [1, 2, 0]);
        let (report, result) = checked(&pool, &t, &request(vec![by("k", true, false)], None));
        assert_eq!(report.input_order, InputOrder::Reversed);
        assert_eq!(id_order(&result), [2, 1, 0]);
    }
}

#[test]
fn names_and_types_are_kept_including_dictionary_and_list_columns() {
    use arrow_array::builder::{Int64Builder, ListBuilder};
    let pool = pool(2);
    let mut lists = ListBuilder::new(Int64Builder::new());
    for i in 0..5i64 {
        if i == 2 {
            lists.append_null();
        } else {
            lists.values().append_value(i);
            lists.values().append_value(-i);
            lists.append(true);
        }
    }
    let dict: arrow_array::DictionaryArray<arrow_array::types::Int32Type> =
        vec!["e", "d", "c", "b", "a"].into_iter().collect();
    let input = table(
        "t",
        vec![
            ("list", arc(lists.finish())),
            ("tag", arc(dict)),
            (
                "when",
                arc(
                    arrow_array::TimestampMillisecondArray::from(vec![5, 4, 3, 2, 1])
                        .with_timezone("UTC"),
                ),
            ),
            ("id", ids(5, 0)),
        ],
        Layout {
            parts: 2,
            empty_part: false,
        },
        2,
    );
    // The reference cannot read lists: check by hand.
    for key in ["tag", "when"] {
        let (report, result) = sort::run(
            &pool,
            &input,
            &request(vec![by(key, false, false)], None),
            &Silent,
        )
        .unwrap();
        assert_eq!(report.input_order, InputOrder::Reversed, "{key}");
        assert_eq!(result.schema(), input.schema());
        let batches = result.batches();
        let mut row = 0;
        for batch in &batches {
            let list = batch.column(0).as_list::<i32>();
            let id = batch
                .column(3)
                .as_primitive::<arrow_array::types::Int64Type>();
            for r in 0..batch.num_rows() {
                let want = 4 - row;
                assert_eq!(id.value(r), want);
                if want == 2 {
                    assert!(list.is_null(r));
                } else {
                    let items = list.value(r);
                    let items = items.as_primitive::<arrow_array::types::Int64Type>();
                    assert_eq!(items.values().to_vec(), vec![want, -want]);
                }
                row += 1;
            }
        }
        assert_eq!(row, 5);
    }
    // Carrying only some columns, in the asked order.
    let (_, result) = sort::run(
        &pool,
        &input,
        &request(vec![by("id", true, false)], Some(vec!["when", "id"])),
        &Silent,
    )
    .unwrap();
    let names: Vec<&str> = result
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect();
    assert_eq!(names, ["when", "id"]);
}

/// A single integer-like key that is the result's only column is sorted
/// as bare 64-bit words: every width, sign and temporal type, both
/// directions, already-ordered, reversed and random inputs.
#[test]
fn a_lone_integer_key_is_sorted_as_bare_words() {
    use arrow_array::{Date32Array, Int32Array, TimestampMicrosecondArray, UInt64Array};
    let n = 5_000usize;
    let mix = |i: usize| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let columns: Vec<ArrayRef> = vec![
        arc(Int64Array::from_iter_values((0..n).map(|i| mix(i) as i64))),
        arc(Int64Array::from_iter_values(
            (0..n).map(|i| i as i64 - 2_500),
        )),
        arc(Int64Array::from_iter_values(
            (0..n).map(|i| 2_500 - i as i64),
        )),
        arc(UInt64Array::from_iter_values((0..n).map(mix))),
        arc(Int32Array::from_iter_values((0..n).map(|i| mix(i) as i32))),
        arc(Date32Array::from_iter_values(
            (0..n).map(|i| (mix(i) % 40_000) as i32 - 20_000),
        )),
        arc(
            TimestampMicrosecondArray::from_iter_values((0..n).map(|i| mix(i) as i64))
                .with_timezone("UTC"),
        ),
    ];
    for pool in pools() {
        for column in &columns {
            let input = table(
                "t",
                vec![("k", column.clone())],
                Layout {
                    parts: 3,
                    empty_part: false,
                },
                pool.workers(),
            );
            for descending in [false, true] {
                let r = request(vec![by("k", descending, false)], Some(vec!["k"]));
                let (report, result) = checked(&pool, &input, &r);
                assert_eq!(report.key_encoding, KeyEncoding::Value);
                assert_eq!(result.schema().field(0).data_type(), column.data_type());
            }
        }
    }
}
