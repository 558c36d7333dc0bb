//! Shared helpers of numakit-frame's integration tests: a pool, tables of
//! every key type built from small "domain indices" (so that random rows
//! share keys and joins match), table layouts in parts, and a proptest
//! runner whose case count `PROPTEST_CASES` can raise.
//!
//! Every key type has a domain of values listed in ascending SQL order
//! (including the type's limits, -0.0/NaN/infinities, empty, long and
//! prefix-sharing strings); a cell is `Some(index)` into it or `None`.

#![allow(dead_code)]

use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::*;
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use numakit_frame::Table;
use numakit_placement::PlacementMode;
use numakit_pool::{Pool, PoolBuilder};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// A pool of `threads` workers with best-effort placement (containers
/// may forbid pinning), as in the crate's own unit tests.
pub(crate) fn pool(threads: usize) -> Pool {
    let topo = Arc::new(numakit_topology::discover().expect("topology"));
    let threads = threads.min(topo.allowed.cpus.len().max(1)).max(1);
    PoolBuilder::new(topo)
        .threads(threads)
        .placement(PlacementMode::BestEffort)
        .build()
        .expect("pool")
}

/// Pools of 1 and 2 threads.
pub(crate) fn pools() -> [Pool; 2] {
    [pool(1), pool(2)]
}

/// A proptest runner with `cases` cases (or `PROPTEST_CASES`), no
/// regression files.
pub(crate) fn runner(cases: u32) -> TestRunner {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 2_000,
        ..Config::default()
    })
}

/// A key column type of the tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyType {
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    /// Decimal128(38, 0) with values at +-(10^38 - 1).
    Dec38,
    /// Decimal128(38, 10) with values up to 10^38 - 1 (unscaled).
    Dec38s10,
    /// Decimal128(10, 1).
    Dec10s1,
    /// Decimal128(12, 2).
    Dec12s2,
    Float32,
    Float64,
    Utf8,
    LargeUtf8,
    Utf8View,
    /// Dictionary(Int32, Utf8), with a duplicated value and a null value.
    DictUtf8,
    Binary,
    Date32,
    Date64,
    /// Timestamp(Second, None).
    TsSecond,
    /// Timestamp(Microsecond, None).
    TsMicro,
    /// Timestamp(Millisecond, Some("UTC")).
    TsMilliUtc,
    Boolean,
    /// Decimal32(9, 2).
    Dec32,
    /// Decimal64(18, 3).
    Dec64,
    /// Time32(Millisecond).
    Time32Ms,
    /// Time64(Microsecond).
    Time64Us,
    /// Duration(Millisecond).
    DurationMs,
    BinaryView,
    /// FixedSizeBinary(3).
    Fixed3,
    /// Dictionary(Int16, Int64).
    DictInt64,
}

pub(crate) const ALL_KEY_TYPES: [KeyType; 33] = [
    KeyType::Int8,
    KeyType::Int16,
    KeyType::Int32,
    KeyType::Int64,
    KeyType::UInt8,
    KeyType::UInt16,
    KeyType::UInt32,
    KeyType::UInt64,
    KeyType::Dec38,
    KeyType::Dec38s10,
    KeyType::Dec10s1,
    KeyType::Dec12s2,
    KeyType::Float32,
    KeyType::Float64,
    KeyType::Utf8,
    KeyType::LargeUtf8,
    KeyType::Utf8View,
    KeyType::DictUtf8,
    KeyType::Binary,
    KeyType::Date32,
    KeyType::Date64,
    KeyType::TsSecond,
    KeyType::TsMicro,
    KeyType::TsMilliUtc,
    KeyType::Boolean,
    KeyType::Dec32,
    KeyType::Dec64,
    KeyType::Time32Ms,
    KeyType::Time64Us,
    KeyType::DurationMs,
    KeyType::BinaryView,
    KeyType::Fixed3,
    KeyType::DictInt64,
];

/// Pairs of different types that can be compared in a join (left, right).
pub(crate) const CROSS_PAIRS: [(KeyType, KeyType); 17] = [
    (KeyType::Int32, KeyType::Int64),
    (KeyType::Int64, KeyType::UInt64),
    (KeyType::UInt64, KeyType::Int64),
    (KeyType::Int8, KeyType::UInt8),
    (KeyType::Dec10s1, KeyType::Dec12s2),
    (KeyType::Int64, KeyType::Dec12s2),
    (KeyType::Dec38, KeyType::Dec38s10),
    (KeyType::Utf8, KeyType::LargeUtf8),
    (KeyType::Utf8View, KeyType::DictUtf8),
    (KeyType::Date32, KeyType::Date64),
    (KeyType::TsSecond, KeyType::TsMicro),
    (KeyType::Float32, KeyType::Float64),
    (KeyType::Dec32, KeyType::Dec64),
    (KeyType::Dec64, KeyType::Int32),
    (KeyType::Time32Ms, KeyType::Time64Us),
    (KeyType::Binary, KeyType::BinaryView),
    (KeyType::DictInt64, KeyType::Int64),
];

const P38: i128 = 99_999_999_999_999_999_999_999_999_999_999_999_999;

/// The string domain, in byte order: empty, short, long (> 1 KB) strings
/// sharing a 1500-byte prefix, and non-ASCII.
pub(crate) fn string_domain() -> Vec<String> {
    let long = "x".repeat(1500);
    vec![
        String::new(),
        "a".into(),
        "ab".into(),
        "b".into(),
        long.clone(),
        format!("{long}a"),
        format!("{long}b"),
        "\u{e9}\u{65e5}\u{672c}".into(),
    ]
}

/// The binary domain, in byte order.
pub(crate) fn binary_domain() -> Vec<Vec<u8>> {
    let long = vec![0xABu8; 1100];
    let mut long0 = long.clone();
    long0.push(0);
    vec![
        Vec::new(),
        vec![0],
        vec![0, 0],
        vec![0, 0xFF],
        b"a".to_vec(),
        long,
        long0,
        vec![0xFF],
    ]
}

fn pick<T: Copy>(domain: &[T], cells: &[Option<u8>]) -> Vec<Option<T>> {
    cells
        .iter()
        .map(|c| c.map(|i| domain[i as usize % domain.len()]))
        .collect()
}

impl KeyType {
    /// Values a cell index can take (`0..domain_len()`).
    pub(crate) fn domain_len(self) -> usize {
        match self {
            KeyType::Boolean => 2,
            _ => 8,
        }
    }

    pub(crate) fn data_type(self) -> DataType {
        self.array(&[]).data_type().clone()
    }

    /// Whether SUM and AVG apply (integers, decimals, floats).
    pub(crate) fn is_numeric(self) -> bool {
        matches!(
            self,
            KeyType::Int8
                | KeyType::Int16
                | KeyType::Int32
                | KeyType::Int64
                | KeyType::UInt8
                | KeyType::UInt16
                | KeyType::UInt32
                | KeyType::UInt64
                | KeyType::Dec38
                | KeyType::Dec38s10
                | KeyType::Dec10s1
                | KeyType::Dec12s2
                | KeyType::Dec32
                | KeyType::Dec64
                | KeyType::Float32
                | KeyType::Float64
                | KeyType::DictInt64
        )
    }

    pub(crate) fn is_float(self) -> bool {
        matches!(self, KeyType::Float32 | KeyType::Float64)
    }

    pub(crate) fn is_bytes(self) -> bool {
        matches!(
            self,
            KeyType::Utf8
                | KeyType::LargeUtf8
                | KeyType::Utf8View
                | KeyType::DictUtf8
                | KeyType::Binary
                | KeyType::BinaryView
                | KeyType::Fixed3
        )
    }

    /// The column of `cells` (`Some(i)`: the domain's i-th value).
    pub(crate) fn array(self, cells: &[Option<u8>]) -> ArrayRef {
        match self {
            KeyType::Int8 => Arc::new(Int8Array::from(pick(
                &[i8::MIN, i8::MIN + 1, -1, 0, 1, 2, 100, i8::MAX],
                cells,
            ))),
            KeyType::Int16 => Arc::new(Int16Array::from(pick(
                &[i16::MIN, -300, -1, 0, 1, 2, 300, i16::MAX],
                cells,
            ))),
            KeyType::Int32 => Arc::new(Int32Array::from(pick(
                &[i32::MIN, -1000, -1, 0, 1, 2, 1000, i32::MAX],
                cells,
            ))),
            KeyType::Int64 => Arc::new(Int64Array::from(pick(
                &[i64::MIN, i64::MIN + 1, -1, 0, 1, 42, i64::MAX - 1, i64::MAX],
                cells,
            ))),
            KeyType::UInt8 => Arc::new(UInt8Array::from(pick(
                &[0, 1, 2, 3, 100, 200, 254, u8::MAX],
                cells,
            ))),
            KeyType::UInt16 => Arc::new(UInt16Array::from(pick(
                &[0, 1, 2, 3, 300, 40_000, 65_534, u16::MAX],
                cells,
            ))),
            KeyType::UInt32 => Arc::new(UInt32Array::from(pick(
                &[0, 1, 2, 3, 1000, 3_000_000_000, u32::MAX - 1, u32::MAX],
                cells,
            ))),
            KeyType::UInt64 => Arc::new(UInt64Array::from(pick(
                &[
                    0,
                    1,
                    2,
                    42,
                    i64::MAX as u64,
                    i64::MAX as u64 + 1,
                    u64::MAX - 1,
                    u64::MAX,
                ],
                cells,
            ))),
            // Both limits: a range wider than i128 (`hi - lo` must not
            // overflow).
            KeyType::Dec38 => decimal(
                &[-P38, -P38 + 1, -1, 0, 1, 10i128.pow(20), P38 - 1, P38],
                cells,
                38,
                0,
            ),
            KeyType::Dec38s10 => decimal(
                &[
                    -10i128.pow(37),
                    -10i128.pow(10),
                    -1,
                    0,
                    1,
                    10i128.pow(10),
                    P38 - 1,
                    P38,
                ],
                cells,
                38,
                10,
            ),
            KeyType::Dec10s1 => decimal(
                &[-9_999_999_999, -15, -1, 0, 1, 15, 150, 9_999_999_999],
                cells,
                10,
                1,
            ),
            KeyType::Dec12s2 => decimal(
                &[-999_999_999_999, -150, -10, 0, 100, 150, 151, 1500],
                cells,
                12,
                2,
            ),
            KeyType::Float32 => Arc::new(Float32Array::from(pick(
                &[
                    f32::NEG_INFINITY,
                    -1.5,
                    -0.0,
                    0.0,
                    1e-30,
                    2.5,
                    f32::INFINITY,
                    f32::NAN,
                ],
                cells,
            ))),
            KeyType::Float64 => Arc::new(Float64Array::from(pick(
                &[
                    f64::NEG_INFINITY,
                    -1.5,
                    -0.0,
                    0.0,
                    f64::MIN_POSITIVE,
                    2.5,
                    f64::INFINITY,
                    f64::NAN,
                ],
                cells,
            ))),
            KeyType::Utf8 | KeyType::LargeUtf8 | KeyType::Utf8View => {
                let domain = string_domain();
                let values: Vec<Option<&str>> = cells
                    .iter()
                    .map(|c| c.map(|i| domain[i as usize % 8].as_str()))
                    .collect();
                match self {
                    KeyType::Utf8 => Arc::new(StringArray::from(values)),
                    KeyType::LargeUtf8 => Arc::new(LargeStringArray::from(values)),
                    _ => Arc::new(StringViewArray::from(values)),
                }
            }
            KeyType::DictUtf8 => {
                // Values: the domain, a second "a" (index 8) and a null
                // value (index 9); odd rows use the duplicate "a" and the
                // null value so that equal strings have different indices
                // and a valid index can mean null.
                let mut values: Vec<Option<String>> =
                    string_domain().into_iter().map(Some).collect();
                values.push(Some("a".into()));
                values.push(None);
                let keys: Vec<Option<i32>> = cells
                    .iter()
                    .enumerate()
                    .map(|(row, c)| match (c, row % 2) {
                        (Some(1), 1) => Some(8),
                        (Some(i), _) => Some(*i as i32 % 8),
                        (None, 1) => Some(9),
                        (None, _) => None,
                    })
                    .collect();
                Arc::new(
                    DictionaryArray::<Int32Type>::try_new(
                        Int32Array::from(keys),
                        Arc::new(StringArray::from(values)),
                    )
                    .expect("dictionary"),
                )
            }
            KeyType::Binary | KeyType::BinaryView => {
                let domain = binary_domain();
                let values: Vec<Option<&[u8]>> = cells
                    .iter()
                    .map(|c| c.map(|i| domain[i as usize % 8].as_slice()))
                    .collect();
                if self == KeyType::Binary {
                    Arc::new(BinaryArray::from_opt_vec(values))
                } else {
                    Arc::new(BinaryViewArray::from(values))
                }
            }
            KeyType::Fixed3 => {
                let domain: [[u8; 3]; 8] = [
                    [0, 0, 0],
                    [0, 0, 1],
                    [0, 1, 0],
                    [1, 0, 0],
                    *b"abc",
                    [0x7F, 0, 0],
                    [0xFF, 0xFE, 0],
                    [0xFF, 0xFF, 0xFF],
                ];
                let values = pick(&domain, cells);
                Arc::new(
                    FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                        values.iter().map(|v| v.as_ref().map(|b| b.as_slice())),
                        3,
                    )
                    .expect("fixed-size binary"),
                )
            }
            KeyType::Dec32 => Arc::new(
                Decimal32Array::from(pick(
                    &[-999_999_999, -150, -1, 0, 1, 150, 1000, 999_999_999],
                    cells,
                ))
                .with_precision_and_scale(9, 2)
                .expect("decimal32"),
            ),
            KeyType::Dec64 => Arc::new(
                Decimal64Array::from(pick(
                    &[
                        -999_999_999_999_999_999,
                        -1500,
                        -10,
                        0,
                        10,
                        1500,
                        10_000,
                        999_999_999_999_999_999,
                    ],
                    cells,
                ))
                .with_precision_and_scale(18, 3)
                .expect("decimal64"),
            ),
            KeyType::Time32Ms => Arc::new(Time32MillisecondArray::from(pick(
                &[0, 1, 999, 1000, 60_000, 3_600_000, 86_399_998, 86_399_999],
                cells,
            ))),
            KeyType::Time64Us => Arc::new(Time64MicrosecondArray::from(pick(
                &[
                    0,
                    1,
                    1000,
                    999_000,
                    1_000_000,
                    60_000_000,
                    86_399_999_000,
                    86_399_999_999,
                ],
                cells,
            ))),
            KeyType::DurationMs => Arc::new(DurationMillisecondArray::from(pick(
                &[i64::MIN, -1, 0, 1, 1000, 86_400_000, i64::MAX - 1, i64::MAX],
                cells,
            ))),
            KeyType::DictInt64 => {
                // Values: the Int64 domain in another order, a duplicate
                // of 0 and a null value.
                let domain = [i64::MAX, 0, i64::MIN, 42, -1, 1, i64::MIN + 1, i64::MAX - 1];
                let mut values: Vec<Option<i64>> = domain.iter().copied().map(Some).collect();
                values.push(Some(0));
                values.push(None);
                let sorted = [2usize, 6, 4, 1, 5, 3, 7, 0];
                let keys: Vec<Option<i16>> = cells
                    .iter()
                    .enumerate()
                    .map(|(row, c)| match (c, row % 2) {
                        (Some(3), 1) => Some(8),
                        (Some(i), _) => Some(sorted[*i as usize % 8] as i16),
                        (None, 1) => Some(9),
                        (None, _) => None,
                    })
                    .collect();
                Arc::new(
                    DictionaryArray::<arrow_array::types::Int16Type>::try_new(
                        Int16Array::from(keys),
                        Arc::new(Int64Array::from(values)),
                    )
                    .expect("dictionary"),
                )
            }
            KeyType::Date32 => Arc::new(Date32Array::from(pick(
                &[i32::MIN, -719_528, -1, 0, 1, 19_000, 2_932_896, i32::MAX],
                cells,
            ))),
            KeyType::Date64 => Arc::new(Date64Array::from(pick(
                &[
                    i64::MIN,
                    -86_400_000,
                    -1,
                    0,
                    1,
                    86_400_000,
                    1_641_600_000_000,
                    i64::MAX,
                ],
                cells,
            ))),
            KeyType::TsSecond => Arc::new(TimestampSecondArray::from(pick(
                &[
                    i64::MIN,
                    -1,
                    0,
                    1,
                    1_700_000_000,
                    1_700_000_001,
                    i64::MAX - 1,
                    i64::MAX,
                ],
                cells,
            ))),
            KeyType::TsMicro => Arc::new(TimestampMicrosecondArray::from(pick(
                &[
                    i64::MIN,
                    i64::MIN + 1,
                    -1_000_000,
                    -1,
                    0,
                    1_000_000,
                    1_700_000_000_000_000,
                    i64::MAX,
                ],
                cells,
            ))),
            KeyType::TsMilliUtc => Arc::new(
                TimestampMillisecondArray::from(pick(
                    &[
                        i64::MIN,
                        -1,
                        0,
                        1,
                        2,
                        1_700_000_000_000,
                        i64::MAX - 1,
                        i64::MAX,
                    ],
                    cells,
                ))
                .with_timezone("UTC"),
            ),
            KeyType::Boolean => Arc::new(BooleanArray::from(pick(&[false, true], cells))),
        }
    }
}

fn decimal(domain: &[i128], cells: &[Option<u8>], precision: u8, scale: i8) -> ArrayRef {
    Arc::new(
        Decimal128Array::from(pick(domain, cells))
            .with_precision_and_scale(precision, scale)
            .expect("decimal"),
    )
}

/// Any key type.
pub(crate) fn key_type() -> impl Strategy<Value = KeyType> {
    proptest::sample::select(ALL_KEY_TYPES.to_vec())
}

/// A cell of a domain of `len` values: uniform, or skewed (Zipf-like:
/// index 0 about half the time), with some nulls.
pub(crate) fn cell(len: usize, null_percent: u32, skewed: bool) -> BoxedStrategy<Option<u8>> {
    let len = len.max(1) as u32;
    let value = if skewed {
        (0u32..256)
            .prop_map(move |x| ((7 - (x + 1).ilog2().min(7)) % len) as u8)
            .boxed()
    } else {
        (0..len).prop_map(|x| x as u8).boxed()
    };
    (0u32..100, value)
        .prop_map(move |(n, v)| (n >= null_percent).then_some(v))
        .boxed()
}

/// The shape of a column's cells.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Shape {
    /// Uniform with about 15% nulls.
    Uniform,
    /// Zipf-like skew with about 10% nulls.
    Skewed,
    /// No nulls.
    NoNulls,
    /// Every cell the same value.
    AllEqual(u8),
    /// Every cell null.
    AllNull,
}

pub(crate) fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        4 => Just(Shape::Uniform),
        3 => Just(Shape::Skewed),
        2 => Just(Shape::NoNulls),
        1 => (0u8..8).prop_map(Shape::AllEqual),
        1 => Just(Shape::AllNull),
    ]
}

/// `rows` cells of a domain of `len` values in `shape`.
pub(crate) fn cells_of(len: usize, shape: Shape, rows: usize) -> BoxedStrategy<Vec<Option<u8>>> {
    match shape {
        Shape::Uniform => proptest::collection::vec(cell(len, 15, false), rows).boxed(),
        Shape::Skewed => proptest::collection::vec(cell(len, 10, true), rows).boxed(),
        Shape::NoNulls => proptest::collection::vec(cell(len, 0, false), rows).boxed(),
        Shape::AllEqual(v) => Just(vec![Some(v % len as u8); rows]).boxed(),
        Shape::AllNull => Just(vec![None; rows]).boxed(),
    }
}

/// How a table is cut into parts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    /// Parts to cut the rows into (0: no part at all when empty).
    pub parts: usize,
    /// Put an empty part first.
    pub empty_part: bool,
}

impl Layout {
    pub(crate) const ONE: Layout = Layout {
        parts: 1,
        empty_part: false,
    };
}

pub(crate) fn layout() -> impl Strategy<Value = Layout> {
    (
        prop_oneof![2 => Just(1usize), 3 => 2usize..6],
        proptest::bool::weighted(0.2),
    )
        .prop_map(|(parts, empty_part)| Layout { parts, empty_part })
}

/// A table of named columns (all nullable), cut as `layout` says and
/// spread over `workers` workers.
pub(crate) fn table(
    name: &str,
    columns: Vec<(&str, ArrayRef)>,
    layout: Layout,
    workers: usize,
) -> Table {
    let schema = Arc::new(Schema::new(
        columns
            .iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    ));
    let batch = RecordBatch::try_new(
        schema.clone(),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
    .expect("batch");
    let rows = batch.num_rows();
    let mut batches = if layout.parts == 0 && rows == 0 {
        Vec::new()
    } else {
        Table::split_for(vec![batch.clone()], rows.div_ceil(layout.parts.max(1)))
    };
    if layout.empty_part {
        batches.insert(0, batch.slice(0, 0));
    }
    Table::from_batches(name, schema, batches, workers).expect("table")
}

/// An Int64 column 0..rows (row ids).
pub(crate) fn ids(rows: usize, base: i64) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(
        (0..rows as i64).map(|i| base + i),
    ))
}

/// The data type of a Timestamp with unit and zone.
pub(crate) fn timestamp(unit: TimeUnit, tz: Option<&str>) -> DataType {
    DataType::Timestamp(unit, tz.map(Into::into))
}

/// All rows of a table (through the reference's cells).
pub(crate) fn all(table: &Table) -> Vec<Vec<numakit_frame::reference::Value>> {
    numakit_frame::reference::all_rows(table).expect("rows")
}

/// Column `name` of every row, in order.
pub(crate) fn column(table: &Table, name: &str) -> Vec<numakit_frame::reference::Value> {
    let c = table.column_index(name).expect("column");
    numakit_frame::reference::rows(table, &[c])
        .expect("rows")
        .into_iter()
        .map(|mut r| r.remove(0))
        .collect()
}

/// Shorthands for expected cells.
pub(crate) mod v {
    use numakit_frame::reference::Value;

    pub(crate) fn i(x: i128) -> Value {
        Value::int(x)
    }
    pub(crate) fn d(unscaled: i128, scale: i8) -> Value {
        Value::Number { unscaled, scale }
    }
    pub(crate) fn f(x: f64) -> Value {
        Value::Float(x)
    }
    pub(crate) fn s(x: &str) -> Value {
        Value::Bytes(x.as_bytes().to_vec())
    }
    pub(crate) fn b(x: bool) -> Value {
        Value::Bool(x)
    }
    pub(crate) fn null() -> Value {
        Value::Null
    }
}

/// Asserts that two multisets of rows are equal (floats within 1e-9).
#[track_caller]
pub(crate) fn assert_same_rows(
    got: Vec<Vec<numakit_frame::reference::Value>>,
    want: Vec<Vec<numakit_frame::reference::Value>>,
) {
    if let Err(why) = numakit_frame::reference::same_rows(got.clone(), want.clone()) {
        panic!("{why}\n got: {got:?}\nwant: {want:?}");
    }
}
