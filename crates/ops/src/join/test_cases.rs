//! Test data for the join algorithms, and the check that holds an
//! algorithm against [`reference::join`] on it: every kind, every output,
//! 1 and 2 workers, adversarial and random inputs.
//!
//! Test-only; it runs joins through the public dispatcher and judges
//! results, it implements none.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use numakit_pool::Pool;

use crate::datagen::{generate, GenSpec, KeyDist};
use crate::join::{join, JoinAlgorithm, JoinKind, JoinOptions, JoinOutput, JoinRow};
use crate::reference;
use crate::relation::Relation;
use crate::testing::pool;
use crate::timing::Silent;
use crate::tuple::Tuple;

const KINDS: [JoinKind; 4] = [
    JoinKind::Inner,
    JoinKind::LeftOuter,
    JoinKind::Semi,
    JoinKind::Anti,
];
const OUTPUTS: [JoinOutput; 3] = [
    JoinOutput::Materialize,
    JoinOutput::Count,
    JoinOutput::Checksum,
];

/// A named pair of inputs: (left = R, right = S).
pub(super) struct Case {
    pub name: &'static str,
    pub left: Vec<Tuple>,
    pub right: Vec<Tuple>,
}

fn keyed(keys: &[u64], payload_base: u64) -> Vec<Tuple> {
    keys.iter()
        .enumerate()
        .map(|(i, &k)| Tuple::new(k, payload_base + i as u64))
        .collect()
}

fn generated(pool: &Pool, rows: u64, keys: KeyDist, seed: u64) -> Vec<Tuple> {
    generate(pool, &GenSpec { rows, keys, seed })
        .expect("generate")
        .to_vec()
}

/// The adversarial inputs of the project's test rules.
pub(super) fn adversarial_cases(pool: &Pool) -> Vec<Case> {
    let max = u64::MAX;
    let zipf = KeyDist::Zipf {
        distinct: 500,
        exponent: 1.5,
    };
    let case = |name, left, right| Case { name, left, right };
    vec![
        case("both empty", vec![], vec![]),
        case("empty left", vec![], keyed(&[1, 2, 3], 0)),
        case("empty right", keyed(&[1, 2, 3], 0), vec![]),
        case("one row each, match", keyed(&[5], 1), keyed(&[5], 2)),
        case("one row each, no match", keyed(&[5], 1), keyed(&[6], 2)),
        case("all keys equal", keyed(&[9; 60], 0), keyed(&[9; 45], 1000)),
        case("all keys zero", keyed(&[0; 30], 0), keyed(&[0; 20], 1000)),
        case(
            "all keys max",
            keyed(&[max; 30], 0),
            keyed(&[max; 25], 1000),
        ),
        case(
            "extreme keys",
            keyed(&[0, max, max, 1, max - 1, 0, 7], 0),
            keyed(&[max, 0, 0, 2, max - 1, 5], 100),
        ),
        case(
            "zipf 1.5 both sides",
            generated(pool, 1200, zipf, 1),
            generated(pool, 1500, zipf, 2),
        ),
        case(
            "workload A (dense x fk)",
            generated(pool, 5000, KeyDist::Dense, 3),
            generated(pool, 20_000, KeyDist::ForeignKey { build_rows: 5000 }, 4),
        ),
        case(
            "uniform with misses",
            generated(pool, 3000, KeyDist::Uniform { max: 1000 }, 5),
            generated(pool, 3000, KeyDist::Uniform { max: 2000 }, 6),
        ),
        case(
            "many morsels",
            generated(pool, 40_000, KeyDist::Sequential, 7),
            generated(pool, 90_000, KeyDist::Uniform { max: 60_000 }, 8),
        ),
    ]
}

/// Runs `algorithm` on `left` and `right` and compares every output with
/// the reference; panics with a description on a difference.
pub(super) fn check_one(
    pool: &Pool,
    algorithm: JoinAlgorithm,
    kind: JoinKind,
    left: &[Tuple],
    right: &[Tuple],
    name: &str,
) {
    let expected = reference::join(left, right, kind);
    let checksum = expected
        .iter()
        .fold(0u64, |acc, r| acc.wrapping_add(r.checksum()));
    let l = Relation::from_tuples(pool, left).expect("left");
    let r = Relation::from_tuples(pool, right).expect("right");
    let what = format!("{name}: {kind:?} with {} workers", pool.workers());
    for output in OUTPUTS {
        let opts = JoinOptions {
            algorithm,
            kind,
            output,
            row_limit: None,
            merge_exchange: crate::join::RING_MERGE,
        };
        let result = join(pool, &l, &r, &opts, &Silent).expect("join");
        assert_eq!(
            result.rows,
            expected.len() as u64,
            "{what}, {output:?}: rows"
        );
        match output {
            JoinOutput::Count => assert_eq!(result.checksum, 0, "{what}"),
            _ => assert_eq!(result.checksum, checksum, "{what}, {output:?}: checksum"),
        }
        if output == JoinOutput::Materialize {
            assert_eq!(result.materialized.len(), pool.workers(), "{what}");
            let mut rows: Vec<JoinRow> = result.materialized.concat();
            rows.sort_unstable();
            assert!(rows == expected, "{what}: materialized rows differ");
        }
    }
}

/// Holds `algorithm` against the reference on every adversarial case,
/// every kind and output, with 1 and 2 workers.
pub(super) fn check_algorithm(algorithm: JoinAlgorithm) {
    for threads in [1, 2] {
        let pool = pool(threads);
        for case in adversarial_cases(&pool) {
            for kind in KINDS {
                check_one(&pool, algorithm, kind, &case.left, &case.right, case.name);
            }
        }
    }
}

/// Keys that collide often and include the extremes.
fn key_strategy() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => 0u64..24,
        1 => Just(0u64),
        1 => Just(u64::MAX),
        1 => any::<u64>(),
    ]
}

/// Holds `algorithm` against the reference on `cases` random inputs.
pub(super) fn check_random(algorithm: JoinAlgorithm, cases: u32) {
    let pools = [pool(1), pool(2)];
    let inputs = (
        prop::collection::vec(key_strategy(), 0..300),
        prop::collection::vec(key_strategy(), 0..300),
        0usize..4,
        0usize..2,
    );
    let mut runner = TestRunner::new(Config::with_cases(cases));
    runner
        .run(&inputs, |(left, right, kind, threads)| {
            let (left, right) = (keyed(&left, 0), keyed(&right, 1 << 32));
            let pool = &pools[threads];
            check_one(pool, algorithm, KINDS[kind], &left, &right, "random");
            Ok(())
        })
        .expect("random joins agree with the reference");
}
