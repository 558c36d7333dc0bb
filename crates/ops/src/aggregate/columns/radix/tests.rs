//! Partitioned partials against the one-table aggregation: the same groups
//! and states, whatever the partitions, buffer flushes, value widths,
//! null keys and null values.

use std::collections::BTreeMap;
use std::sync::Mutex;

use numakit_pool::Pool;

use proptest::prelude::*;

use super::*;
use crate::aggregate::columns::{aggregate, ColumnsOptions, Func, State};
use crate::testing::pool;
use crate::timing::Silent;

fn specs() -> Vec<AggSpec> {
    let spec = |column, func, float| AggSpec {
        column,
        func,
        float,
    };
    vec![
        spec(0, Func::Count, false),
        spec(0, Func::Sum, false),
        spec(0, Func::Min, false),
        spec(0, Func::Max, false),
        spec(1, Func::Sum, true),
        spec(1, Func::Max, true),
        spec(2, Func::Count, false),
    ]
}

/// One segment's columns: codes, keyless rows, integers (64 or 128 bits),
/// floats, and a column of validity alone.
struct Owned {
    codes: Vec<u64>,
    keyless: Vec<u32>,
    ints: Vec<i64>,
    wides: Option<Vec<i128>>,
    int_bits: Vec<u8>,
    floats: Vec<f64>,
    float_bits: Option<Vec<u8>>,
    presence_bits: Vec<u8>,
}

fn bitmap(valid: impl Iterator<Item = bool>) -> Vec<u8> {
    let valid: Vec<bool> = valid.collect();
    let mut bits = vec![0u8; valid.len().div_ceil(8) + 1];
    for (i, v) in valid.into_iter().enumerate() {
        if v {
            bits[i / 8] |= 1 << (i % 8);
        }
    }
    bits
}

type Row = (Option<u64>, Option<i64>, Option<f64>, bool);

fn owned(rows: &[Row], wide: bool, all_floats_valid: bool) -> Owned {
    let ints: Vec<i64> = rows.iter().map(|r| r.1.unwrap_or(0)).collect();
    Owned {
        codes: rows.iter().map(|r| r.0.unwrap_or(7)).collect(),
        keyless: (0..rows.len() as u32)
            .filter(|&i| rows[i as usize].0.is_none())
            .collect(),
        wides: wide.then(|| ints.iter().map(|&v| i128::from(v)).collect()),
        ints,
        int_bits: bitmap(rows.iter().map(|r| r.1.is_some())),
        floats: rows.iter().map(|r| r.2.unwrap_or(0.0)).collect(),
        float_bits: (!all_floats_valid).then(|| bitmap(rows.iter().map(|r| r.2.is_some()))),
        presence_bits: bitmap(rows.iter().map(|r| r.3)),
    }
}

fn segment(o: &Owned) -> Segment<'_> {
    Segment {
        codes: &o.codes,
        keyless: &o.keyless,
        columns: vec![
            ValueColumn {
                values: match &o.wides {
                    Some(w) => Values::I128(w),
                    None => Values::I64(&o.ints),
                },
                valid: Some(Validity::new(&o.int_bits, 0)),
            },
            ValueColumn {
                values: Values::F64(&o.floats),
                valid: o.float_bits.as_deref().map(|b| Validity::new(b, 0)),
            },
            ValueColumn {
                values: Values::None,
                valid: Some(Validity::new(&o.presence_bits, 0)),
            },
        ],
    }
}

/// Each group's rows and each state's (count, value) in comparable form.
type Summary = BTreeMap<Option<u64>, (u64, Vec<(u64, String)>)>;

fn summary(outputs: &[Groups]) -> Summary {
    let mut out = Summary::new();
    for groups in outputs {
        for (i, &code) in groups.codes.iter().enumerate() {
            let states = groups
                .states
                .iter()
                .map(|s| {
                    let n = groups.rows[i] - s.nulls().get(i);
                    let value = match s {
                        State::Count { .. } => String::new(),
                        State::SumInt { .. } => format!("{:?}", s.exact_sum(i)),
                        State::SumFloat { sum, .. } => format!("{:.6}", sum[i]),
                        State::MinInt { v, .. } | State::MaxInt { v, .. } => v[i].to_string(),
                        State::MinFloat { v, .. } | State::MaxFloat { v, .. } => {
                            format!("{:?}", v[i])
                        }
                    };
                    (n, value)
                })
                .collect();
            let previous = out.insert(code, (groups.rows[i], states));
            assert!(previous.is_none(), "group {code:?} twice");
        }
    }
    out
}

fn row() -> impl Strategy<Value = Row> {
    (
        prop_oneof![1 => Just(None), 8 => (0u64..300).prop_map(Some), 1 => any::<u64>().prop_map(Some)],
        prop_oneof![1 => Just(None), 6 => (-1000i64..1000).prop_map(Some), 1 => any::<i64>().prop_map(Some)],
        prop_oneof![1 => Just(None), 6 => (-100i32..100).prop_map(|v| Some(f64::from(v) / 4.0))],
        any::<bool>(),
    )
}

/// The radix run of `plain` (segments per worker); with `early`, each
/// worker aggregates its first segment into a plain partial first and its
/// partitions absorb those partials at the end, as a stream that switched
/// does; owners park the rows of partitions with more than `park` groups
/// (`None`: as `aggregate_radix` does).
fn radix_run(
    pool: &Pool,
    plain: &[Vec<Segment<'_>>],
    specs: &[AggSpec],
    bits: u32,
    early: bool,
    park: Option<usize>,
) -> Vec<Groups> {
    if !early && park.is_none() {
        return aggregate_radix(pool, plain, specs, bits).unwrap();
    }
    let mut shared = RadixShared::new(bits, pool.workers());
    if let Some(groups) = park {
        shared.park_groups = groups;
        // Small buffers, many hand-ons.
        shared.buffer_rows = 4 * CHUNK_ROWS;
    }
    let skip = usize::from(early);
    let firsts: Vec<Partial> = plain
        .iter()
        .map(|segments| {
            let mut partial = Partial::new(specs, None, 4);
            if let Some(first) = segments.first().filter(|_| early) {
                partial.add(first, specs).unwrap();
            }
            partial
        })
        .collect();
    let workers = pool
        .broadcast(|ctx| {
            let mut worker = RadixWorker::new(&shared, ctx.index, specs);
            for segment in plain[ctx.index].iter().skip(skip) {
                worker.add(&shared, segment, specs).unwrap();
            }
            worker.hand_off(&shared, specs).unwrap();
            Mutex::new(Some(worker))
        })
        .unwrap();
    let earlier: Vec<&Partial> = firsts.iter().collect();
    let per_worker = pool
        .broadcast(|ctx| {
            let worker = workers[ctx.index].lock().unwrap().take().unwrap();
            worker.finish(&shared, &earlier, specs).unwrap()
        })
        .unwrap();
    in_partition_order(per_worker)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn partitions_give_the_groups_of_one_table(
        rows in proptest::collection::vec(row(), 0..12000),
        bits in 0u32..5,
        threads in 1usize..3,
        cut in 1usize..7,
        early in any::<bool>(),
        park in prop_oneof![Just(None), Just(Some(0)), Just(Some(40))],
    ) {
        let pool = pool(threads);
        let workers = pool.workers();
        let specs = specs();
        // Segments alternate in width and in whether floats have nulls.
        let pieces: Vec<Owned> = rows
            .chunks(rows.len().div_ceil(cut).max(1))
            .enumerate()
            .map(|(i, piece)| owned(piece, i % 2 == 1, i % 3 == 2))
            .collect();
        let mut plain: Vec<Vec<Segment<'_>>> = vec![Vec::new(); workers];
        for (i, o) in pieces.iter().enumerate() {
            plain[i % workers].push(segment(o));
        }
        let expected = aggregate(&pool, &plain, &specs, &ColumnsOptions::default(), &Silent)
            .unwrap();
        let merged = radix_run(&pool, &plain, &specs, bits, early, park);
        prop_assert_eq!(merged.len(), 1 << bits);
        for (i, groups) in merged.iter().enumerate() {
            prop_assert!(groups.codes.iter().all(|&c| partition_of(c, bits) == i));
        }
        prop_assert_eq!(summary(&merged), summary(&expected.groups));
    }
}

#[test]
fn keys_spread_over_partitions_and_null_keys_go_to_the_first() {
    assert_eq!(partition_of(None, 8), 0);
    assert_eq!(partition_of(Some(12345), 0), 0);
    let mut seen = [0usize; 16];
    for k in 0..16_000u64 {
        seen[partition_of(Some(k), 4)] += 1;
    }
    assert!(seen.iter().all(|&n| n > 700 && n < 1300), "{seen:?}");
}

#[test]
fn owners_park_rows_of_big_partitions_below_twice_their_groups() {
    let pool = pool(1);
    let specs = specs();
    let mut shared = RadixShared::new(0, 1);
    shared.park_groups = 100;
    // Buffers of a few hundred rows, as with many partitions.
    shared.buffer_rows = 4 * CHUNK_ROWS;
    let mut worker = RadixWorker::new(&shared, 0, &specs);
    let rows: Vec<Row> = (0..60_000u64)
        .map(|k| (Some(k % 20_000), Some(k as i64), None, k % 7 != 0))
        .collect();
    let pieces: Vec<Owned> = rows.chunks(1000).map(|r| owned(r, false, true)).collect();
    let mut parked_at_some_point = false;
    for piece in &pieces {
        worker.add(&shared, &segment(piece), &specs).unwrap();
        let part = worker.parts[0].as_ref().unwrap();
        let (parked, groups) = (part.parked_rows(), part.groups());
        parked_at_some_point |= parked > 0;
        assert!(
            parked < 2 * groups.max(1),
            "{parked} rows parked for {groups} groups"
        );
    }
    assert!(parked_at_some_point);
    worker.hand_off(&shared, &specs).unwrap();
    let out = worker.finish(&shared, &[], &specs).unwrap();
    assert_eq!(out.len(), 1);
    let plain = vec![pieces.iter().map(segment).collect::<Vec<_>>()];
    let expected = aggregate(&pool, &plain, &specs, &ColumnsOptions::default(), &Silent).unwrap();
    assert_eq!(summary(&out), summary(&expected.groups));
}
