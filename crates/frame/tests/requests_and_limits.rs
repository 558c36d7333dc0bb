//! Requests numakit-frame must refuse or name correctly, and its memory
//! limit.
//!
//! - Unsupported key types (lists, structs, 256-bit decimals, intervals,
//!   the Null type) as join, group-by and sort keys, and aggregates a type
//!   does not allow: a `FrameError` whose one-line message names the
//!   column and its type.
//! - A memory limit of 1 byte: `FrameError::MemoryLimit` from joins
//!   (materialized and counted), group-bys (both paths) and sorts, never a
//!   panic or an abort.
//! - Names: a join's key once under its left name, `_right` (or the asked
//!   suffix) on clashes, a clash that cannot be resolved refused before any
//!   work, left outer joins making right columns nullable, chosen columns;
//!   unknown columns named with the available ones; malformed requests.

mod common;

use std::sync::Arc;

use arrow_array::builder::{Int64Builder, ListBuilder};
use arrow_array::{Array, ArrayRef, Int64Array, StringArray};
use arrow_schema::DataType;
use common::*;
use numakit_frame::aggregate::{self, AggFunc, Aggregate, AggregateRequest};
use numakit_frame::join::{self, JoinRequest};
use numakit_frame::reference;
use numakit_frame::sort::{self, SortColumn, SortRequest};
use numakit_frame::{FrameError, MemoryLimit, Table};
use numakit_ops::aggregate::AggMethod;
use numakit_ops::join::{JoinAlgorithm, JoinKind};
use numakit_ops::timing::Silent;

fn arc<A: Array + 'static>(a: A) -> ArrayRef {
    Arc::new(a)
}

fn list_column(rows: usize) -> ArrayRef {
    let mut b = ListBuilder::new(Int64Builder::new());
    for i in 0..rows {
        if i % 3 == 1 {
            b.append_null();
        } else {
            b.values().append_value(i as i64);
            b.append(true);
        }
    }
    arc(b.finish())
}

fn struct_column(rows: usize) -> ArrayRef {
    let field = Arc::new(arrow_schema::Field::new("x", DataType::Int64, true));
    arc(arrow_array::StructArray::from(vec![(
        field,
        arc(Int64Array::from_iter_values(0..rows as i64)),
    )]))
}

fn decimal256_column(rows: usize) -> ArrayRef {
    arc(arrow_array::Decimal256Array::from_iter_values(
        (0..rows as i128).map(arrow_buffer::i256::from_i128),
    ))
}

/// Asserts one line naming `column` and `type_name`.
#[track_caller]
fn assert_names(err: &FrameError, column: &str, type_name: &str) {
    let message = err.to_string();
    assert!(
        message.contains(&format!("\"{column}\"")) && message.contains(type_name),
        "{message}"
    );
    assert!(!message.contains('\n'), "{message}");
}

fn unsupported() -> Vec<(ArrayRef, &'static str)> {
    vec![
        (list_column(4), "List"),
        (struct_column(4), "Struct"),
        (decimal256_column(4), "Decimal256"),
        (arc(arrow_array::NullArray::new(4)), "Null"),
        (
            arc(arrow_array::IntervalDayTimeArray::from(
                vec![arrow_buffer::IntervalDayTime::new(1, 2); 4],
            )),
            "Interval",
        ),
    ]
}

#[test]
fn unsupported_key_types_are_refused_naming_the_column_and_type() {
    let pool = pool(2);
    for (bad, type_name) in unsupported() {
        let with_bad = table(
            "t",
            vec![("bad", bad.clone()), ("k", ids(4, 0))],
            Layout {
                parts: 2,
                empty_part: false,
            },
            2,
        );
        let plain = table(
            "u",
            vec![("bad", ids(4, 0)), ("k", ids(4, 0))],
            Layout::ONE,
            2,
        );
        // Joins, with the bad key on either side.
        for (left, right) in [(&with_bad, &plain), (&plain, &with_bad)] {
            let mut r = JoinRequest::on(&["bad"]);
            r.memory_limit = MemoryLimit::unlimited();
            let err = join::run(&pool, left, right, &r, &Silent).unwrap_err();
            assert!(
                matches!(
                    err,
                    FrameError::UnsupportedType { .. } | FrameError::KeyMismatch { .. }
                ),
                "{type_name}: {err:?}"
            );
            assert_names(&err, "bad", type_name);
        }
        // Group-by.
        let r = AggregateRequest {
            keys: vec!["bad".into()],
            aggregates: vec![Aggregate::count_rows()],
            method: None,
            memory_limit: MemoryLimit::unlimited(),
            cost_model: None,
        };
        let err = aggregate::run(&pool, &with_bad, &r, &Silent).unwrap_err();
        assert!(
            matches!(err, FrameError::UnsupportedType { .. }),
            "{type_name}: {err:?}"
        );
        assert_names(&err, "bad", type_name);
        // In a composite group-by key too.
        let mut r2 = r.clone();
        r2.keys = vec!["k".into(), "bad".into()];
        let err = aggregate::run(&pool, &with_bad, &r2, &Silent).unwrap_err();
        assert_names(&err, "bad", type_name);
        // Sort.
        let s = SortRequest {
            by: vec![SortColumn::ascending("k"), SortColumn::ascending("bad")],
            columns: None,
            memory_limit: MemoryLimit::unlimited(),
        };
        let err = sort::run(&pool, &with_bad, &s, &Silent).unwrap_err();
        assert!(
            matches!(err, FrameError::UnsupportedType { .. }),
            "{type_name}: {err:?}"
        );
        assert_names(&err, "bad", type_name);
    }
}

#[test]
fn aggregates_a_type_does_not_allow_are_refused() {
    let pool = pool(1);
    let t = table(
        "t",
        vec![
            ("k", ids(4, 0)),
            ("s", arc(StringArray::from(vec!["a", "b", "c", "d"]))),
            ("d", arc(arrow_array::Date32Array::from(vec![1, 2, 3, 4]))),
            ("l", list_column(4)),
        ],
        Layout::ONE,
        1,
    );
    for (list, column, type_name) in [
        ("sum:s", "s", "Utf8"),
        ("avg:d", "d", "Date32"),
        ("min:l", "l", "List"),
        ("max:l", "l", "List"),
    ] {
        let r = AggregateRequest {
            keys: vec!["k".into()],
            aggregates: Aggregate::parse_list(list).unwrap(),
            method: None,
            memory_limit: MemoryLimit::unlimited(),
            cost_model: None,
        };
        let err = aggregate::run(&pool, &t, &r, &Silent).unwrap_err();
        assert!(
            matches!(err, FrameError::UnsupportedType { .. }),
            "{list}: {err:?}"
        );
        assert_names(&err, column, type_name);
    }
    // COUNT of a list column counts its non-null rows.
    let r = AggregateRequest {
        keys: vec!["k".into()],
        aggregates: vec![Aggregate::count_rows(), Aggregate::of(AggFunc::Count, "l")],
        method: None,
        memory_limit: MemoryLimit::unlimited(),
        cost_model: None,
    };
    let keyed = table(
        "t",
        vec![
            ("k", arc(Int64Array::from(vec![1, 1, 1, 2, 2, 2]))),
            ("l", list_column(6)),
        ],
        Layout {
            parts: 2,
            empty_part: false,
        },
        1,
    );
    let (_, result) = aggregate::run(&pool, &keyed, &r, &Silent).unwrap();
    // Rows 1 and 4 hold null lists.
    assert_same_rows(
        all_but_lists(&result),
        vec![
            vec![v::i(1), v::i(3), v::i(2)],
            vec![v::i(2), v::i(3), v::i(2)],
        ],
    );
}

fn all_but_lists(t: &Table) -> Vec<Vec<reference::Value>> {
    let columns: Vec<usize> = t
        .schema()
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| !matches!(f.data_type(), DataType::List(_)))
        .map(|(i, _)| i)
        .collect();
    reference::rows(t, &columns).unwrap()
}

// ---------------------------------------------------------------------
// The memory limit.

#[track_caller]
fn assert_memory_limit<T>(result: Result<T, FrameError>, what: &str) {
    match result {
        Err(e @ FrameError::MemoryLimit { .. }) => {
            let message = e.to_string();
            assert!(
                !message.contains('\n') && message.contains("memory limit"),
                "{message}"
            );
        }
        Err(e) => panic!("{what}: {e:?}"),
        Ok(_) => panic!("{what}: ran under a 1-byte memory limit"),
    }
}

fn shuffled(n: usize) -> ArrayRef {
    arc(Int64Array::from_iter_values(
        (0..n as i64).map(|i| (i * 7919) % n as i64),
    ))
}

#[test]
fn a_tiny_memory_limit_stops_joins_and_sorts() {
    let pool = pool(2);
    let n = 2000;
    let t = table(
        "t",
        vec![
            ("k", shuffled(n)),
            (
                "s",
                arc(StringArray::from_iter_values(
                    (0..n).map(|i| format!("s{i}")),
                )),
            ),
        ],
        Layout {
            parts: 3,
            empty_part: false,
        },
        2,
    );
    for algorithm in [
        None,
        Some(JoinAlgorithm::NoPartition),
        Some(JoinAlgorithm::RadixPro),
        Some(JoinAlgorithm::RadixCprl),
        Some(JoinAlgorithm::Mpsm),
    ] {
        for count_only in [false, true] {
            for on in ["k", "s"] {
                let mut r = JoinRequest::on(&[on]);
                r.algorithm = algorithm;
                r.count_only = count_only;
                r.memory_limit = MemoryLimit::bytes(1);
                assert_memory_limit(
                    join::run(&pool, &t, &t, &r, &Silent),
                    &format!("join on {on}, {algorithm:?}"),
                );
            }
        }
    }
    for by in ["k", "s"] {
        let s = SortRequest {
            by: vec![SortColumn {
                name: by.into(),
                descending: true,
                nulls_first: false,
            }],
            columns: None,
            memory_limit: MemoryLimit::bytes(1),
        };
        assert_memory_limit(sort::run(&pool, &t, &s, &Silent), &format!("sort by {by}"));
    }
}

#[test]
fn a_tiny_memory_limit_stops_the_one_value_group_by() {
    let pool = pool(2);
    let n = 2000;
    let t = table(
        "t",
        vec![("k", shuffled(n)), ("x", ids(n, 0))],
        Layout {
            parts: 3,
            empty_part: false,
        },
        2,
    );
    for method in AggMethod::ALL {
        let r = AggregateRequest {
            keys: vec!["k".into()],
            aggregates: Aggregate::parse_list("count,sum:x").unwrap(),
            method: Some(method),
            memory_limit: MemoryLimit::bytes(1),
            cost_model: None,
        };
        assert_memory_limit(
            aggregate::run(&pool, &t, &r, &Silent),
            &format!("{method:?}"),
        );
    }
}

/// Regression (a bug until 93a2626): the many-column group-by path (nulls, floats, strings, several
/// value columns) never checks the memory limit: under a 1-byte limit it
/// runs to the end.
#[test]
fn a_tiny_memory_limit_stops_the_many_column_group_by() {
    let pool = pool(2);
    let n = 2000;
    let t = table(
        "t",
        vec![
            ("k", shuffled(n)),
            (
                "x",
                arc(arrow_array::Float64Array::from_iter_values(
                    (0..n).map(|i| i as f64),
                )),
            ),
            (
                "s",
                arc(StringArray::from_iter_values(
                    (0..n).map(|i| format!("s{i}")),
                )),
            ),
        ],
        Layout {
            parts: 3,
            empty_part: false,
        },
        2,
    );
    let r = AggregateRequest {
        keys: vec!["k".into()],
        aggregates: Aggregate::parse_list("count,sum:x,max:s").unwrap(),
        method: None,
        memory_limit: MemoryLimit::bytes(1),
        cost_model: None,
    };
    assert_memory_limit(
        aggregate::run(&pool, &t, &r, &Silent),
        "many-column group-by",
    );
}

/// Regression (a bug until 93a2626): a sort whose input is in reverse order copies every column (the
/// reversed table) without checking the memory limit.
#[test]
fn a_tiny_memory_limit_stops_the_reversing_sort() {
    let pool = pool(2);
    let n = 2000;
    let t = table(
        "t",
        vec![("k", arc(Int64Array::from_iter_values((0..n as i64).rev())))],
        Layout {
            parts: 3,
            empty_part: false,
        },
        2,
    );
    let s = SortRequest {
        by: vec![SortColumn::ascending("k")],
        columns: None,
        memory_limit: MemoryLimit::bytes(1),
    };
    assert_memory_limit(sort::run(&pool, &t, &s, &Silent), "reversing sort");
}

// ---------------------------------------------------------------------
// Names.

fn unlimited(mut r: JoinRequest) -> JoinRequest {
    r.memory_limit = MemoryLimit::unlimited();
    r
}

fn names(t: &Table) -> Vec<String> {
    t.schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect()
}

#[test]
fn join_results_name_the_key_once_and_suffix_clashes() {
    use v::*;
    let pool = pool(2);
    let left = table(
        "left",
        vec![
            ("k", arc(Int64Array::from(vec![1, 2, 3]))),
            ("v", arc(StringArray::from(vec!["l1", "l2", "l3"]))),
        ],
        Layout::ONE,
        2,
    );
    let right = table(
        "right",
        vec![
            ("w", arc(Int64Array::from(vec![10, 20, 30]))),
            ("k", arc(Int64Array::from(vec![2, 3, 4]))),
            ("v", arc(StringArray::from(vec!["r2", "r3", "r4"]))),
        ],
        Layout::ONE,
        2,
    );
    let r = unlimited(JoinRequest::on(&["k"]));
    let (_, result) = join::run(&pool, &left, &right, &r, &Silent).unwrap();
    let result = result.unwrap();
    assert_eq!(names(&result), ["k", "v", "w", "v_right"]);
    reference::check_join(&left, &right, &r, Some(&result), result.rows() as u64).unwrap();
    assert_same_rows(
        all(&result),
        vec![
            vec![i(2), s("l2"), i(10), s("r2")],
            vec![i(3), s("l3"), i(20), s("r3")],
        ],
    );
    // Left outer: right columns become nullable and hold nulls.
    let mut outer = r.clone();
    outer.kind = JoinKind::LeftOuter;
    outer.suffix = "_r".into();
    let (_, result) = join::run(&pool, &left, &right, &outer, &Silent).unwrap();
    let result = result.unwrap();
    assert_eq!(names(&result), ["k", "v", "w", "v_r"]);
    assert!(result.schema().fields().iter().all(|f| f.is_nullable()));
    assert_same_rows(
        all(&result),
        vec![
            vec![i(1), s("l1"), null(), null()],
            vec![i(2), s("l2"), i(10), s("r2")],
            vec![i(3), s("l3"), i(20), s("r3")],
        ],
    );
    // Keys under different names: the right key is not carried.
    let renamed = table(
        "right",
        vec![
            ("key", arc(Int64Array::from(vec![3, 3]))),
            ("w", arc(Int64Array::from(vec![7, 8]))),
        ],
        Layout::ONE,
        2,
    );
    let mut r2 = r.clone();
    r2.right_on = vec!["key".into()];
    let (_, result) = join::run(&pool, &left, &renamed, &r2, &Silent).unwrap();
    let result = result.unwrap();
    assert_eq!(names(&result), ["k", "v", "w"]);
    assert_same_rows(
        all(&result),
        vec![vec![i(3), s("l3"), i(7)], vec![i(3), s("l3"), i(8)]],
    );
    // Chosen columns, the right key asked for explicitly (renamed).
    let mut r3 = r.clone();
    r3.left_columns = Some(vec!["v".into()]);
    r3.right_columns = Some(vec!["k".into(), "v".into()]);
    let (_, result) = join::run(&pool, &left, &right, &r3, &Silent).unwrap();
    let result = result.unwrap();
    assert_eq!(names(&result), ["v", "k", "v_right"]);
    assert_same_rows(
        all(&result),
        vec![vec![s("l2"), i(2), s("r2")], vec![s("l3"), i(3), s("r3")]],
    );
    // Semi and anti joins carry left columns only.
    for (kind, want) in [
        (
            JoinKind::Semi,
            vec![vec![i(2), s("l2")], vec![i(3), s("l3")]],
        ),
        (JoinKind::Anti, vec![vec![i(1), s("l1")]]),
    ] {
        let mut r4 = r.clone();
        r4.kind = kind;
        r4.right_columns = Some(vec!["w".into()]);
        let (_, result) = join::run(&pool, &left, &right, &r4, &Silent).unwrap();
        let result = result.unwrap();
        assert_eq!(names(&result), ["k", "v"]);
        assert_same_rows(all(&result), want);
    }
}

#[test]
fn clashes_that_cannot_be_resolved_are_refused_before_any_work() {
    let pool = pool(2);
    // The key is a list (unsupported) and the memory limit is 1 byte: only
    // a check made before any work can report the clash.
    let left = table(
        "left",
        vec![
            ("k", list_column(3)),
            ("v", ids(3, 0)),
            ("v_right", ids(3, 0)),
        ],
        Layout::ONE,
        2,
    );
    let right = table(
        "right",
        vec![("k", list_column(3)), ("v", ids(3, 0))],
        Layout::ONE,
        2,
    );
    let mut r = JoinRequest::on(&["k"]);
    r.memory_limit = MemoryLimit::bytes(1);
    let err = join::run(&pool, &left, &right, &r, &Silent).unwrap_err();
    assert!(matches!(err, FrameError::InvalidRequest(_)), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("\"v_right\"") && !message.contains('\n'),
        "{message}"
    );
    // A column carried twice.
    let mut r = JoinRequest::on(&["k"]);
    r.left_columns = Some(vec!["v".into(), "v".into()]);
    let err = join::run(&pool, &left, &right, &r, &Silent).unwrap_err();
    assert!(matches!(err, FrameError::InvalidRequest(_)), "{err:?}");
    // Group-by: a key named like an aggregate's result.
    let t = table(
        "t",
        vec![("sum_x", list_column(3)), ("x", ids(3, 0))],
        Layout::ONE,
        2,
    );
    let a = AggregateRequest {
        keys: vec!["sum_x".into()],
        aggregates: vec![Aggregate::of(AggFunc::Sum, "x")],
        method: None,
        memory_limit: MemoryLimit::bytes(1),
        cost_model: None,
    };
    let err = aggregate::run(&pool, &t, &a, &Silent).unwrap_err();
    // The list key is refused by the same up-front check, or the clash:
    // either way before any work (not the memory limit).
    assert!(
        matches!(
            err,
            FrameError::InvalidRequest(_) | FrameError::UnsupportedType { .. }
        ),
        "{err:?}"
    );
    let t = table(
        "t",
        vec![("sum_x", ids(3, 0)), ("x", ids(3, 0))],
        Layout::ONE,
        2,
    );
    let err = aggregate::run(&pool, &t, &a, &Silent).unwrap_err();
    assert!(
        matches!(err, FrameError::InvalidRequest(_)) && err.to_string().contains("\"sum_x\""),
        "{err:?}"
    );
}

#[test]
fn unknown_columns_and_malformed_requests() {
    let pool = pool(1);
    let t = table(
        "things",
        vec![("a", ids(3, 0)), ("b", ids(3, 0))],
        Layout::ONE,
        1,
    );
    let check_missing = |err: FrameError, column: &str| {
        assert!(matches!(err, FrameError::ColumnNotFound { .. }), "{err:?}");
        let message = err.to_string();
        assert!(
            message.contains(&format!("\"{column}\""))
                && message.contains("a, b")
                && !message.contains('\n'),
            "{message}"
        );
    };
    check_missing(
        join::run(&pool, &t, &t, &unlimited(JoinRequest::on(&["zz"])), &Silent).unwrap_err(),
        "zz",
    );
    let mut r = unlimited(JoinRequest::on(&["a"]));
    r.right_columns = Some(vec!["nope".into()]);
    check_missing(join::run(&pool, &t, &t, &r, &Silent).unwrap_err(), "nope");
    let mut r = unlimited(JoinRequest::on(&["a"]));
    r.right_on = vec!["a".into(), "b".into()];
    assert!(matches!(
        join::run(&pool, &t, &t, &r, &Silent),
        Err(FrameError::InvalidRequest(_))
    ));
    let r = unlimited(JoinRequest::on(&[]));
    assert!(matches!(
        join::run(&pool, &t, &t, &r, &Silent),
        Err(FrameError::InvalidRequest(_))
    ));

    let agg = |keys: &[&str], list: &str| AggregateRequest {
        keys: keys.iter().map(|k| k.to_string()).collect(),
        aggregates: if list.is_empty() {
            Vec::new()
        } else {
            Aggregate::parse_list(list).unwrap()
        },
        method: None,
        memory_limit: MemoryLimit::unlimited(),
        cost_model: None,
    };
    check_missing(
        aggregate::run(&pool, &t, &agg(&["c"], "count"), &Silent).unwrap_err(),
        "c",
    );
    check_missing(
        aggregate::run(&pool, &t, &agg(&["a"], "sum:c"), &Silent).unwrap_err(),
        "c",
    );
    assert!(matches!(
        aggregate::run(&pool, &t, &agg(&[], "count"), &Silent),
        Err(FrameError::InvalidRequest(_))
    ));
    assert!(matches!(
        aggregate::run(&pool, &t, &agg(&["a"], ""), &Silent),
        Err(FrameError::InvalidRequest(_))
    ));
    assert!(matches!(
        aggregate::run(&pool, &t, &agg(&["a", "a"], "count"), &Silent),
        Err(FrameError::InvalidRequest(_))
    ));
    for bad in ["", "sum", "median:a", "sum:", ","] {
        assert!(
            matches!(
                Aggregate::parse_list(bad),
                Err(FrameError::InvalidRequest(_))
            ),
            "{bad}"
        );
    }

    let s = |by: Vec<SortColumn>, columns: Option<Vec<&str>>| SortRequest {
        by,
        columns: columns.map(|c| c.into_iter().map(String::from).collect()),
        memory_limit: MemoryLimit::unlimited(),
    };
    check_missing(
        sort::run(
            &pool,
            &t,
            &s(vec![SortColumn::ascending("q")], None),
            &Silent,
        )
        .unwrap_err(),
        "q",
    );
    check_missing(
        sort::run(
            &pool,
            &t,
            &s(vec![SortColumn::ascending("a")], Some(vec!["q"])),
            &Silent,
        )
        .unwrap_err(),
        "q",
    );
    assert!(matches!(
        sort::run(&pool, &t, &s(vec![], None), &Silent),
        Err(FrameError::InvalidRequest(_))
    ));
    // Sorting by a column the result does not carry.
    let u = table(
        "u",
        vec![
            ("a", arc(Int64Array::from(vec![3, 1, 2]))),
            ("b", ids(3, 0)),
        ],
        Layout::ONE,
        1,
    );
    let (_, result) = sort::run(
        &pool,
        &u,
        &s(vec![SortColumn::ascending("a")], Some(vec!["b"])),
        &Silent,
    )
    .unwrap();
    assert_eq!(names(&result), ["b"]);
    assert_eq!(column(&result, "b"), vec![v::i(1), v::i(2), v::i(0)]);
}
