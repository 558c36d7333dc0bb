//! Every schedule, tight and loose, pull and push, gives the reference
//! result: on described multi-node topologies (pinning off, so they run
//! here) and on this machine, with equal, skewed, empty and tiny data.

use std::sync::Arc;

use numakit_placement::PlacementMode;
use numakit_pool::{Pool, PoolBuilder};
use numakit_shuffle::{
    plain_read, shuffle, Form, ShuffleData, ShuffleError, ShuffleOptions, Skew, Strategy, SyncMode,
};
use numakit_topology::MachineDescription;

fn described_pool(nodes: usize, cores: usize) -> Pool {
    let list: Vec<String> = (0..nodes)
        .map(|i| {
            format!(
                r#"{{"id":{i},"socket":{i},"cores":{cores},"threads_per_core":1,"memory_gib":1}}"#
            )
        })
        .collect();
    let json = format!(
        r#"{{"name":"t","description":"","source":"","nodes":[{}]}}"#,
        list.join(",")
    );
    let topo = Arc::new(
        MachineDescription::from_json(&json, "t")
            .unwrap()
            .to_topology(),
    );
    PoolBuilder::new(topo)
        .placement(PlacementMode::Off)
        .build()
        .unwrap()
}

fn check_all(pool: &Pool, elements: usize, skew: Skew) {
    let data = ShuffleData::generate(pool, elements, skew, 7).unwrap();
    let reference = data.reference();
    assert_eq!(reference.iter().map(|r| r.1).sum::<u64>(), elements as u64);
    for strategy in Strategy::ALL {
        for sync in SyncMode::ALL {
            for form in [Form::Pull, Form::Push] {
                let mut opts = ShuffleOptions::new(strategy, sync);
                opts.form = form;
                opts.state_bytes = 4096;
                let run = shuffle(pool, &data, &opts).unwrap();
                run.verify(&reference).unwrap_or_else(|e| {
                    panic!("{strategy} {sync} {form:?} on {elements} values: {e}")
                });
            }
        }
    }
    let (_, sum) = plain_read(pool, &data).unwrap();
    assert_eq!(sum, reference.iter().map(|r| r.0).sum::<u64>());
}

#[test]
fn schedules_match_the_reference_on_described_machines() {
    for (nodes, cores) in [(1, 3), (2, 2), (4, 1), (3, 2)] {
        let pool = described_pool(nodes, cores);
        check_all(&pool, 100_003, Skew::Uniform);
        check_all(&pool, 50_000, Skew::Zipf(1.5));
    }
}

#[test]
fn adversarial_sizes() {
    let pool = described_pool(2, 2);
    check_all(&pool, 0, Skew::Uniform);
    check_all(&pool, 1, Skew::Uniform);
    check_all(&pool, 3, Skew::Zipf(3.0));
    let data = ShuffleData::generate(&pool, 0, Skew::Uniform, 1).unwrap();
    let run = shuffle(
        &pool,
        &data,
        &ShuffleOptions::new(Strategy::Ring, SyncMode::Tight),
    )
    .unwrap();
    assert!(run.means().iter().all(|m| m.is_nan()), "no values, no mean");
}

#[test]
fn uneven_workers_and_mismatched_data_are_errors() {
    let pool = described_pool(2, 2);
    let uneven = PoolBuilder::new(pool.topology().clone())
        .placement(PlacementMode::Off)
        .threads(3)
        .build()
        .unwrap();
    assert!(matches!(
        ShuffleData::generate(&uneven, 10, Skew::Uniform, 1),
        Err(ShuffleError::UnevenWorkers(_))
    ));
    let small = described_pool(1, 2);
    let data = ShuffleData::generate(&small, 100, Skew::Uniform, 1).unwrap();
    let err = shuffle(
        &pool,
        &data,
        &ShuffleOptions::new(Strategy::Naive, SyncMode::Loose),
    )
    .unwrap_err();
    assert!(matches!(err, ShuffleError::LayoutMismatch { .. }), "{err}");
}

#[test]
fn shuffles_on_this_machine_with_real_pinning() {
    let topo = Arc::new(numakit_topology::discover().unwrap());
    let pool = PoolBuilder::new(topo)
        .placement(PlacementMode::BestEffort)
        .build()
        .unwrap();
    check_all(&pool, 1 << 18, Skew::Uniform);
    let data_m = ShuffleData::generate(&pool, 1 << 14, Skew::Uniform, 5).unwrap();
    for strategy in [Strategy::Migration, Strategy::MigrationCopy, Strategy::Ring] {
        let run = shuffle(
            &pool,
            &data_m,
            &ShuffleOptions::new(strategy, SyncMode::Tight),
        )
        .unwrap();
        assert_eq!(
            run.misplaced_steps, 0,
            "{strategy}: consumers ran where scheduled"
        );
    }
    let data = ShuffleData::generate(&pool, 1 << 16, Skew::Uniform, 3).unwrap();
    for (node, here, total) in data.placement().unwrap() {
        assert_eq!(here, total, "every page of a partition on node {node}");
    }
}

mod random_sizes {
    use super::*;
    use proptest::prelude::{prop_assert_eq, proptest, ProptestConfig};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Random machines, data sizes and skews: every schedule, tight and
        /// loose, in both forms, equals the sequential reference.
        #[test]
        fn every_schedule_equals_the_reference(nodes in 1usize..4, cores in 1usize..4, elements in 0usize..20_000, theta in 0.0f64..2.5, seed in 0u64..1000) {
            let pool = described_pool(nodes, cores);
            let data = ShuffleData::generate(&pool, elements, Skew::Zipf(theta), seed).unwrap();
            let reference = data.reference();
            for strategy in Strategy::ALL {
                for sync in SyncMode::ALL {
                    for form in [Form::Pull, Form::Push] {
                        let mut opts = ShuffleOptions::new(strategy, sync);
                        opts.form = form;
                        opts.seed = seed;
                        opts.state_bytes = 1024;
                        let run = shuffle(&pool, &data, &opts).unwrap();
                        prop_assert_eq!(&run.results, &reference);
                    }
                }
            }
        }
    }
}

/// The reference comes from the data's definition, not from the buffers
/// the shuffle reads: a piece cut in the wrong place, or a value changed
/// after generation, is caught.
#[test]
fn the_reference_catches_a_wrong_cut_and_a_changed_value() {
    let pool = described_pool(2, 2);
    let ring = ShuffleOptions::new(Strategy::Ring, SyncMode::Tight);

    let mut cut = ShuffleData::generate(&pool, 1000, Skew::Uniform, 7).unwrap();
    let reference = cut.reference();
    cut.partitions[0].offsets[1] += 1;
    let run = shuffle(&pool, &cut, &ring).unwrap();
    assert!(run.verify(&reference).is_err(), "a moved cut went unseen");
    assert_eq!(cut.reference(), reference, "the reference read the offsets");

    let mut changed = ShuffleData::generate(&pool, 1000, Skew::Uniform, 7).unwrap();
    changed.partitions[1].buffer[3] ^= 1;
    let run = shuffle(&pool, &changed, &ring).unwrap();
    assert!(
        run.verify(&changed.reference()).is_err(),
        "a changed value went unseen"
    );
}
