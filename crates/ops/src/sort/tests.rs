//! Tests of the sort as a whole: the radix sort alone against the
//! standard library's sort, and the NUMA-aware sort against
//! `reference::sort` on random and adversarial data with one and two
//! workers.

use proptest::prelude::*;

use super::*;
use crate::datagen::{generate, splitmix64, GenSpec, KeyDist};
use crate::reference;
use crate::testing::pool;
use crate::timing::Silent;

/// Inputs by name: (name, tuples).
fn datasets() -> Vec<(&'static str, Vec<Tuple>)> {
    let rows = |n: usize, key: &dyn Fn(usize) -> u64| -> Vec<Tuple> {
        (0..n).map(|i| Tuple::new(key(i), i as u64)).collect()
    };
    vec![
        ("random", rows(100_000, &|i| splitmix64(i as u64))),
        ("empty", Vec::new()),
        ("one row", rows(1, &|_| 42)),
        ("all equal", rows(50_000, &|_| 7)),
        (
            "zero and max",
            rows(40_000, &|i| {
                if splitmix64(i as u64) % 2 == 0 {
                    0
                } else {
                    u64::MAX
                }
            }),
        ),
        ("sorted", rows(70_000, &|i| i as u64 * 3)),
        ("reverse", rows(70_000, &|i| u64::MAX - i as u64)),
        (
            "small range",
            rows(90_000, &|i| splitmix64(i as u64) % 1000),
        ),
        (
            "high bits only",
            rows(60_000, &|i| splitmix64(i as u64) & 0xff00_0000_0000_0000),
        ),
        // A heavy tail: most keys tiny, a few up to 2^60.
        (
            "heavy tail",
            rows(120_000, &|i| {
                let u = (splitmix64(i as u64) >> 11) as f64 / (1u64 << 53) as f64;
                (1.0 / (u + 1e-9)).powi(2) as u64
            }),
        ),
        // Runs of equal high parts of every length, for the LSD fix-up.
        (
            "clustered",
            rows(80_000, &|i| {
                let h = splitmix64(i as u64);
                ((h % 97) << 50) | ((h >> 20) % (1 + i as u64 % 5000))
            }),
        ),
    ]
}

fn zipf(pool: &Pool) -> Vec<Tuple> {
    let spec = GenSpec {
        rows: 200_000,
        keys: KeyDist::Zipf {
            distinct: 100_000,
            exponent: 1.5,
        },
        seed: 5,
    };
    generate(pool, &spec).unwrap().to_vec()
}

/// Tuples by key, then payload.
fn canonical(mut rows: Vec<Tuple>) -> Vec<Tuple> {
    rows.sort_unstable();
    rows
}

fn check_relation_sort(pool: &Pool, name: &str, rows: &[Tuple]) {
    let input = Relation::from_tuples(pool, rows).unwrap();
    let result = sort(pool, &input, &Silent).unwrap();
    let names: Vec<_> = result.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["local sort", "splitters", "exchange", "merge"]);
    let sorted = result.sorted.unwrap();
    sorted.check_pool(pool).unwrap();
    for (w, chunk) in sorted.chunks().iter().enumerate() {
        assert_eq!(chunk.worker, w);
        assert_eq!(chunk.node, pool.worker_contexts()[w].node);
    }
    let out = sorted.to_vec();
    assert!(
        out.windows(2).all(|w| w[0].key <= w[1].key),
        "{name}: not sorted"
    );
    assert_eq!(
        canonical(out),
        reference::sort(rows),
        "{name}: wrong tuples"
    );
}

#[test]
fn numa_sort_matches_the_reference() {
    for threads in [1, 2] {
        let pool = pool(threads);
        for (name, rows) in datasets() {
            check_relation_sort(&pool, name, &rows);
        }
        check_relation_sort(&pool, "zipf 1.5", &zipf(&pool));
    }
}

#[test]
fn numa_sort_outputs_chunks_as_long_as_the_inputs() {
    let pool = pool(2);
    let n = 200_001;
    type KeyOf = fn(u64) -> u64;
    let keys: [(&str, KeyOf); 3] = [
        ("random", splitmix64),
        ("all equal", |_| 3),
        ("two keys", |i| i % 2),
    ];
    for (name, key) in keys {
        let input = Relation::from_fn(&pool, n, |i| Tuple::new(key(i as u64), i as u64)).unwrap();
        let sorted = sort(&pool, &input, &Silent).unwrap().sorted.unwrap();
        let sizes = |r: &Relation| {
            r.chunks()
                .iter()
                .map(|c| c.tuples.len())
                .collect::<Vec<_>>()
        };
        assert_eq!(sizes(&sorted), sizes(&input), "{name}");
    }
}

#[test]
fn uneven_inputs_give_even_outputs() {
    let pool = pool(2);
    let contexts = pool.worker_contexts();
    let lens = [30_000, 0, 5, 1234];
    let mut chunks = Vec::new();
    let mut rows = Vec::new();
    for ctx in &contexts {
        let len = lens[ctx.index % lens.len()];
        let mut chunk = crate::relation::Chunk::alloc(&pool, ctx.index, ctx.node, len).unwrap();
        for (i, t) in chunk.tuples.iter_mut().enumerate() {
            *t = Tuple::new(
                splitmix64(i as u64 + 77 * ctx.index as u64) % 5000,
                rows.len() as u64,
            );
            rows.push(*t);
        }
        chunks.push(chunk);
    }
    let input = Relation::from_chunks(chunks);
    let sorted = sort(&pool, &input, &Silent).unwrap().sorted.unwrap();
    let sizes: Vec<usize> = sorted.chunks().iter().map(|c| c.tuples.len()).collect();
    let even: Vec<usize> = crate::par::even_ranges(rows.len(), pool.workers())
        .iter()
        .map(|r| r.len())
        .collect();
    assert_eq!(sizes, even);
    assert_eq!(canonical(sorted.to_vec()), reference::sort(&rows));
    let owned = sort_owned(&pool, input, &SortOptions::default(), &Silent).unwrap();
    assert_eq!(
        canonical(owned.sorted.unwrap().to_vec()),
        reference::sort(&rows)
    );
}

#[test]
fn owned_sorts_match_the_reference() {
    for threads in [1, 2] {
        let pool = pool(threads);
        for (name, rows) in datasets() {
            let input = Relation::from_tuples(&pool, &rows).unwrap();
            let out = sort_owned(&pool, input, &SortOptions::default(), &Silent).unwrap();
            let out = out.sorted.unwrap().to_vec();
            assert!(out.windows(2).all(|w| w[0].key <= w[1].key), "{name}");
            assert_eq!(canonical(out), reference::sort(&rows), "{name}");
            let keys: Vec<u64> = rows.iter().map(|t| t.key).collect();
            let column = KeyColumn::from_keys(&pool, &keys).unwrap();
            let out = sort_keys_owned(&pool, column, &SortOptions::default(), &Silent).unwrap();
            let mut expect = keys;
            expect.sort_unstable();
            assert_eq!(out.sorted.unwrap().to_vec(), expect, "{name}");
        }
    }
}

/// Chunks of uneven lengths, each with room for an even share of the rows,
/// are sorted, exchanged and merged without a buffer of their own size
/// being made: the results live in the very chunks that came in.
#[test]
fn owned_chunks_with_room_for_an_even_share_hold_the_result() {
    let pool = pool(2);
    let lens = [10_000usize, 30_000];
    let share = lens.iter().sum::<usize>().div_ceil(2);
    let mut keys = Vec::new();
    let mut chunks = Vec::new();
    for (w, &len) in lens.iter().enumerate() {
        let node = pool.worker_contexts()[w].node;
        let mut chunk = KeyChunk::alloc(&pool, w, node, share.max(len)).unwrap();
        chunk.keys.set_len(len).unwrap();
        for (i, k) in chunk.keys.iter_mut().enumerate() {
            *k = splitmix64((w * 100_000 + i) as u64);
            keys.push(*k);
        }
        chunks.push(chunk);
    }
    let before: Vec<*const u64> = chunks.iter().map(|c| c.keys.as_ptr()).collect();
    let column = KeyColumn::from_chunks(chunks);
    let out = sort_keys_owned(&pool, column, &SortOptions::default(), &Silent).unwrap();
    let sorted = out.sorted.unwrap();
    let after: Vec<*const u64> = sorted.chunks().iter().map(|c| c.keys.as_ptr()).collect();
    assert_eq!(after, before, "the merge made a buffer of its own");
    let lens: Vec<usize> = sorted.chunks().iter().map(|c| c.keys.len()).collect();
    assert_eq!(lens, vec![share, share]);
    keys.sort_unstable();
    assert_eq!(sorted.to_vec(), keys);
}

#[test]
fn keys_only_sort_matches_std() {
    for threads in [1, 2] {
        let pool = pool(threads);
        for (name, rows) in datasets() {
            let keys: Vec<u64> = rows.iter().map(|t| t.key).collect();
            let input = KeyColumn::from_keys(&pool, &keys).unwrap();
            let result = sort_keys(&pool, &input, &Silent).unwrap();
            let sorted = result.sorted.unwrap();
            sorted.check_pool(&pool).unwrap();
            let mut expect = keys;
            expect.sort_unstable();
            assert_eq!(sorted.to_vec(), expect, "{name}");
        }
    }
}

/// Sorts one after another in the same process take their memory from
/// the previous sorts' buffers (stale contents, other sizes, the other
/// element type): every result must still be right.
#[test]
fn sorts_in_reused_memory_stay_right() {
    for threads in [1, 2] {
        let pool = pool(threads);
        let mut sets = datasets();
        for round in 0..2 {
            let mut kept = None;
            for (name, rows) in &sets {
                check_relation_sort(&pool, name, rows);
                let keys: Vec<u64> = rows.iter().map(|t| !t.key).collect();
                let input = KeyColumn::from_keys(&pool, &keys).unwrap();
                let sorted = sort_keys(&pool, &input, &Silent).unwrap().sorted.unwrap();
                let mut expect = keys;
                expect.sort_unstable();
                assert_eq!(sorted.to_vec(), expect, "{name}, round {round}");
                // Every other result stays alive while the next sort runs.
                kept = if kept.is_none() { Some(sorted) } else { None };
            }
            sets.reverse();
        }
    }
}

#[test]
fn every_exchange_schedule_sorts() {
    use numakit_shuffle::{Strategy, SyncMode};
    let pool = pool(2);
    let rows: Vec<Tuple> = (0..30_000u64)
        .map(|i| Tuple::new(splitmix64(i) % 5000, i))
        .collect();
    let input = Relation::from_tuples(&pool, &rows).unwrap();
    for strategy in [Strategy::Naive, Strategy::Ring, Strategy::Random] {
        for sync in [SyncMode::Tight, SyncMode::Loose] {
            let options = SortOptions {
                exchange: Exchange::new(strategy, sync),
            };
            let out = sort_with(&pool, &input, &options, &Silent).unwrap();
            assert_eq!(
                canonical(out.sorted.unwrap().to_vec()),
                reference::sort(&rows)
            );
        }
    }
}

#[test]
fn a_relation_of_another_pool_is_refused() {
    let input = Relation::from_tuples(&pool(1), &[Tuple::new(1, 1)]).unwrap();
    let two = pool(2);
    if two.workers() == 2 {
        assert!(sort(&two, &input, &Silent).is_err());
    }
}

#[test]
fn signed_keys_map_in_order() {
    let values = [i64::MIN, -5, -1, 0, 1, 7, i64::MAX];
    let mapped: Vec<u64> = values.iter().map(|&v| i64_to_ordered_u64(v)).collect();
    assert!(mapped.windows(2).all(|w| w[0] < w[1]));
    assert!(values
        .iter()
        .zip(&mapped)
        .all(|(&v, &m)| ordered_u64_to_i64(m) == v));
}

/// Keys that stress the radix sort: every distribution of `datasets`,
/// large enough to take the split path (and, at 1.2M keys, the
/// streaming split).
#[test]
fn radix_sort_matches_std_sort() {
    for (name, rows) in datasets() {
        let mut keys: Vec<u64> = rows.iter().map(|t| t.key).collect();
        let mut expect = keys.clone();
        expect.sort_unstable();
        sort_keys_local(&mut keys);
        assert_eq!(keys, expect, "{name}");
        let mut tuples = rows.clone();
        sort_local(&mut tuples);
        assert!(tuples.windows(2).all(|w| w[0].key <= w[1].key), "{name}");
        assert_eq!(canonical(tuples), reference::sort(&rows), "{name}");
    }
    let mut big: Vec<u64> = (0..1_200_000u64).map(splitmix64).collect();
    let mut expect = big.clone();
    expect.sort_unstable();
    sort_keys_local(&mut big);
    assert_eq!(big, expect);
}

#[test]
fn radix_sort_fixes_up_runs_of_equal_high_parts() {
    // In-cache sizes whose high bits take few values: long runs share
    // the high part that the LSD passes sort on.
    for (n, values) in [(30_000u64, 50u64), (20_000, 3), (2_000, 400)] {
        let keys: Vec<u64> = (0..n)
            .map(|i| {
                let high = splitmix64(splitmix64(i) % values) >> 40;
                (high << 40) | (splitmix64(i + n) >> 34)
            })
            .collect();
        let mut sorted = keys.clone();
        sort_keys_local(&mut sorted);
        let mut expect = keys.clone();
        expect.sort_unstable();
        assert_eq!(sorted, expect, "{n} keys, {values} high parts");
        let rows: Vec<Tuple> = keys.iter().map(|&k| Tuple::new(k, k % 7)).collect();
        let mut tuples = rows.clone();
        sort_local(&mut tuples);
        assert_eq!(canonical(tuples), reference::sort(&rows));
    }
}

/// A few high parts, each with many random low parts.
fn clustered_keys() -> impl Strategy<Value = Vec<u64>> {
    let highs = prop::collection::vec(any::<u64>(), 1..8);
    let picks = prop::collection::vec((any::<usize>(), 0u64..1 << 30), 0..20_000);
    (highs, picks).prop_map(|(highs, picks)| {
        picks
            .into_iter()
            .map(|(h, low)| (highs[h % highs.len()] & !((1 << 30) - 1)) | low)
            .collect()
    })
}

#[test]
fn radix_sort_into_leaves_the_input_alone() {
    let input: Vec<Tuple> = (0..100_000u64)
        .map(|i| Tuple::new(splitmix64(i) >> 20, i))
        .collect();
    let mut out = vec![Tuple::default(); input.len()];
    let mut scratch = vec![Tuple::default(); input.len()];
    lsd::radix_sort_into(&input, &mut out, &mut scratch);
    assert_eq!(canonical(out), reference::sort(&input));
    assert_eq!(input[5], Tuple::new(splitmix64(5) >> 20, 5));
}

fn key_strategy() -> impl Strategy<Value = Vec<u64>> {
    prop_oneof![
        prop::collection::vec(any::<u64>(), 0..3000),
        prop::collection::vec(0u64..16, 0..3000),
        prop::collection::vec(
            prop_oneof![Just(0u64), Just(u64::MAX), any::<u64>()],
            0..500
        ),
        (
            any::<u64>(),
            prop::collection::vec(0u64..1 << 20, 0..40_000)
        )
            .prop_map(|(base, low)| low.into_iter().map(|l| base ^ l).collect()),
        clustered_keys(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn radix_sort_agrees_with_std(keys in key_strategy()) {
        let mut sorted = keys.clone();
        sort_keys_local(&mut sorted);
        let mut expect = keys.clone();
        expect.sort_unstable();
        prop_assert_eq!(&sorted, &expect);
        let rows: Vec<Tuple> = keys.iter().enumerate().map(|(i, &k)| Tuple::new(k, i as u64)).collect();
        let mut tuples = rows.clone();
        sort_local(&mut tuples);
        prop_assert_eq!(canonical(tuples), reference::sort(&rows));
    }
}
