//! Every aggregation method against `reference::aggregate`, with 1 and 2
//! workers, on random and adversarial data.

use rand::rngs::SmallRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Zipf};

use super::split::part_of_hash;
use super::*;
use crate::datagen::splitmix64;
use crate::hash::hash64;
use crate::reference;
use crate::testing::pool;
use crate::timing::Silent;
use crate::tuple::Tuple;

fn rows(pairs: &[(u64, i64)]) -> Vec<Tuple> {
    pairs
        .iter()
        .map(|&(k, v)| Tuple::new(k, v as u64))
        .collect()
}

fn uniform(n: usize, distinct: u64, seed: u64) -> Vec<Tuple> {
    (0..n as u64)
        .map(|i| {
            let r = splitmix64(i ^ (seed << 48));
            let value = (splitmix64(r) % 2001) as i64 - 1000;
            Tuple::new(r % distinct, value as u64)
        })
        .collect()
}

fn zipf(n: usize, distinct: u64, exponent: f64) -> Vec<Tuple> {
    let z = Zipf::new(distinct as f64, exponent).unwrap();
    let mut rng = SmallRng::seed_from_u64(5);
    (0..n as u64)
        .map(|i| Tuple::new(z.sample(&mut rng) as u64, i.wrapping_mul(0x9e37)))
        .collect()
}

/// The adversarial and random inputs every method must get right.
fn datasets() -> Vec<(&'static str, Vec<Tuple>)> {
    let extremes = rows(&[
        (0, i64::MIN),
        (u64::MAX, i64::MAX),
        (0, i64::MIN),
        (u64::MAX, i64::MAX),
        (u64::MAX, i64::MAX),
        (0, -1),
        (1, 0),
    ]);
    let overflowing: Vec<Tuple> = (0..5000u64)
        .map(|i| Tuple::new(i % 3, if i % 2 == 0 { i64::MAX } else { i64::MIN } as u64))
        .collect();
    vec![
        ("empty", Vec::new()),
        ("one row", rows(&[(42, -7)])),
        (
            "all keys equal",
            (0..20_000).map(|i| Tuple::new(9, i)).collect(),
        ),
        ("extremes", extremes),
        ("i128 sums", overflowing),
        ("zipf 1.5", zipf(60_000, 10_000, 1.5)),
        ("uniform 5k", uniform(80_000, 5_000, 1)),
        (
            "all distinct",
            (0..60_000u64)
                .map(|i| Tuple::new(splitmix64(i), i))
                .collect(),
        ),
        ("dense with strays", dense_with_strays()),
    ]
}

/// Dense keys, too many rows to sketch them all, and a few keys far
/// outside the range that a sample misses.
fn dense_with_strays() -> Vec<Tuple> {
    let mut data = uniform(400_000, 50_000, 11);
    for (i, stray) in [0, 1 << 40, u64::MAX, 50_001, 1 << 20]
        .into_iter()
        .enumerate()
    {
        data[i * 77_777 + 5] = Tuple::new(stray, i as u64);
    }
    data
}

/// A fixed cache (L2 1 MiB, 4 MiB of L3 usable), so that the automatic
/// choice does not depend on the machine the tests run on.
fn fixed_cache(workers: usize) -> CacheBudget {
    CacheBudget {
        private_bytes: 1 << 20,
        shared_reported_bytes: 32 << 20,
        shared_usable_bytes: 4 << 20,
        shared_usable_spread: (4 << 20, 4 << 20),
        sharers: workers,
    }
}

fn check(method: AggMethod, workers: usize, name: &str, data: &[Tuple]) -> AggResult {
    let pool = pool(workers);
    let input = Relation::from_tuples(&pool, data).unwrap();
    let opts = AggOptions {
        method,
        cache: Some(fixed_cache(workers)),
        cost_model: None,
    };
    let got = aggregate(&pool, &input, &opts, &Silent).unwrap();
    let want = reference::aggregate(data);
    let what = format!("{} on {name} with {workers} workers", method.name());
    assert_eq!(got.group_count(), want.len(), "{what}: group count");
    assert_eq!(got.sorted(), want, "{what}: groups");
    assert_eq!(
        got.groups.len(),
        pool.workers(),
        "{what}: one output per worker"
    );
    let ran = got.method.unwrap();
    assert_ne!(ran, AggMethod::Auto, "{what}");
    if method != AggMethod::Auto {
        assert_eq!(ran, method, "{what}");
    }
    got
}

#[test]
fn every_method_matches_the_reference() {
    for (name, data) in datasets() {
        for method in AggMethod::ALL {
            for workers in [1, 2] {
                check(method, workers, name, &data);
            }
        }
    }
}

#[test]
fn owners_hold_their_own_keys() {
    // Sparse keys, so that local aggregation hashes too.
    let data: Vec<Tuple> = uniform(30_000, 2_000, 3)
        .into_iter()
        .map(|t| Tuple::new(splitmix64(t.key), t.payload))
        .collect();
    for method in [
        AggMethod::Shuffle,
        AggMethod::NaiveShuffle,
        AggMethod::Migration,
        AggMethod::MigrationCopy,
        AggMethod::Local,
    ] {
        let got = check(method, 2, "uniform 2k", &data);
        let workers = got.groups.len();
        for (w, groups) in got.groups.iter().enumerate() {
            assert!(groups
                .iter()
                .all(|g| part_of_hash(hash64(g.key), workers) == w));
        }
    }
}

#[test]
fn averages_and_exact_sums() {
    let data = rows(&[(7, i64::MAX), (7, i64::MAX), (7, 1), (8, -3), (8, 4)]);
    let got = check(AggMethod::Auto, 2, "avg", &data);
    let g = got.sorted();
    assert_eq!(g[0].sum, 2 * i64::MAX as i128 + 1);
    assert_eq!((g[0].min, g[0].max, g[0].count), (1, i64::MAX, 3));
    assert_eq!(g[1].avg(), 0.5);
}

#[test]
fn auto_explains_and_follows_the_group_count() {
    let few = check(AggMethod::Auto, 2, "few", &uniform(200_000, 1_000, 7));
    assert_eq!(few.method, Some(AggMethod::Local));
    let est = few.estimated_groups.unwrap();
    assert!((900..=1100).contains(&est), "{est}");
    assert!(
        few.reason.contains(&format!("~{est} groups")),
        "{}",
        few.reason
    );
    assert!(few.reason.contains("cache budget"), "{}", few.reason);

    let many: Vec<Tuple> = (0..600_000u64)
        .map(|i| Tuple::new(splitmix64(i) % 500_000, i))
        .collect();
    let many = check(AggMethod::Auto, 2, "many", &many);
    assert_eq!(many.method, Some(AggMethod::Partitioned), "{}", many.reason);
    assert!(many.reason.contains("partitions"), "{}", many.reason);
    assert!(many.phases.iter().any(|p| p.name == "partition"));
}

#[test]
fn partitioned_balances_skew_and_reuses_its_table() {
    // Many partitions of very different sizes.
    let data = zipf(300_000, 200_000, 1.5);
    let pool = pool(2);
    let input = Relation::from_tuples(&pool, &data).unwrap();
    let want = reference::aggregate(&data);
    let range = dense::KeyRange {
        base: 1,
        len: 5_000,
    };
    for (keys, parts, part_bits) in [
        (choose::KeyLayout::Hashed, 128, 0),
        (
            choose::KeyLayout::Dense(range),
            5_000usize.div_ceil(64) + 1,
            6,
        ),
    ] {
        let plan = choose::AggregationPlan {
            method: AggMethod::Partitioned,
            keys,
            parts,
            part_bits,
            expected_groups: 1,
            reason: String::new(),
            prediction: None,
        };
        let mut timer = PhaseTimer::new(&Silent);
        let groups = partitioned::run(
            &pool,
            partitioned::Input::Relation(&input),
            &plan,
            &mut timer,
        )
        .unwrap();
        let mut all: Vec<Group> = groups.into_iter().flatten().collect();
        all.sort_unstable_by_key(|g| g.key);
        assert_eq!(all, want, "{keys:?}");
    }
}

#[test]
fn exchange_methods_report_their_state_moves() {
    let data = uniform(20_000, 500, 9);
    for method in [
        AggMethod::Shuffle,
        AggMethod::NaiveShuffle,
        AggMethod::Migration,
        AggMethod::MigrationCopy,
    ] {
        let got = check(method, 2, "moves", &data);
        let moves = got.state_moves.unwrap();
        // Li Figure 11's split: every piece was read and aggregated; on one
        // node no table is copied.
        let times = got.breakdown.unwrap();
        assert!(
            times.read_seconds > 0.0 && times.update_seconds > 0.0,
            "{times:?}"
        );
        assert_eq!(times.copy_seconds, 0.0, "{method:?}");
        let workers = got.groups.len() as u64;
        assert_eq!(moves.visits, workers * workers);
        assert_eq!(moves.misplaced_visits, 0);
        if method == AggMethod::MigrationCopy {
            // The state always travels with the thread.
            assert_eq!(moves.local_state_visits, moves.visits);
        }
        if method != AggMethod::MigrationCopy {
            assert_eq!(moves.copies, 0);
        }
    }
    let local = check(AggMethod::Local, 2, "moves", &data);
    assert!(local.state_moves.is_none());
    assert!(local.breakdown.is_none());
}

#[test]
fn method_names_round_trip() {
    for m in AggMethod::ALL {
        assert_eq!(m.name().parse::<AggMethod>(), Ok(m));
    }
    assert!("nope".parse::<AggMethod>().is_err());
}

#[test]
fn a_relation_of_another_pool_is_refused() {
    let input = Relation::from_tuples(&pool(1), &rows(&[(1, 1)])).unwrap();
    let two = pool(2);
    if two.workers() == 2 {
        let opts = AggOptions::new(AggMethod::Auto);
        assert!(aggregate(&two, &input, &opts, &Silent).is_err());
    }
}

#[test]
fn every_method_gives_one_fingerprint_and_a_changed_group_another() {
    let data: Vec<Tuple> = uniform(20_000, 500, 11);
    let prints: Vec<u64> = AggMethod::ALL
        .into_iter()
        .map(|method| check(method, 2, "uniform 500", &data).fingerprint())
        .collect();
    assert!(prints.windows(2).all(|w| w[0] == w[1]), "{prints:?}");
    let mut changed = check(AggMethod::Local, 2, "uniform 500", &data);
    let group = changed.groups.iter_mut().flatten().next().expect("a group");
    group.max += 1;
    assert_ne!(changed.fingerprint(), prints[0]);
}

#[test]
fn the_result_names_the_table_layout_that_ran() {
    let dense: Vec<Tuple> = uniform(20_000, 500, 11);
    let sparse: Vec<Tuple> = dense
        .iter()
        .map(|t| Tuple::new(splitmix64(t.key), t.payload))
        .collect();
    assert_eq!(
        check(AggMethod::Local, 2, "dense", &dense).tables,
        TableLayout::Array
    );
    assert_eq!(
        check(AggMethod::Local, 2, "sparse", &sparse).tables,
        TableLayout::HashTable
    );
    for method in [
        AggMethod::Shuffle,
        AggMethod::NaiveShuffle,
        AggMethod::Migration,
        AggMethod::MigrationCopy,
    ] {
        assert_eq!(
            check(method, 2, "dense", &dense).tables,
            TableLayout::HashTable,
            "{method:?}"
        );
    }
}
