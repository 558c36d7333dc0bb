//! The probe end to end on this machine, with small sizes: complete and
//! verified matrices, a description the simulator accepts, the four
//! experiments, the strategies, and clear errors for bad requests.

use std::sync::Arc;

use numakit_ops::timing::Silent;
use numakit_placement::{PlacementMode, Placer};
use numakit_probe::kiefer::{self, Experiment, KieferOptions};
use numakit_probe::strategies::{self, PlacementStrategy, Sizes, StrategyOptions, Workload};
use numakit_probe::{describe, matrix, MatrixOptions, ProbeError};
use numakit_topology::MachineDescription;

const MIB: u64 = 1 << 20;

fn placer() -> Placer {
    let topology = Arc::new(numakit_topology::discover().unwrap());
    Placer::new(topology, PlacementMode::BestEffort)
}

fn small() -> MatrixOptions {
    let mut o = MatrixOptions::quick();
    o.latency_bytes = 8 * MIB;
    o.chase.warm = 1000;
    o.chase.loads = 20_000;
    o.bandwidth_bytes = 4 * MIB;
    o.pass_bytes = 8 * MIB;
    o.reps = 2;
    o
}

#[test]
fn the_matrices_are_complete_and_every_page_and_thread_is_placed() {
    let placer = placer();
    let report = matrix::run(&placer, &small(), &Silent).unwrap();
    let (rows, cols) = (report.cpu_nodes.len(), report.memory_nodes.len());
    assert_eq!(rows, placer.topology().compute_nodes().len());
    assert_eq!(cols, placer.topology().memory_nodes().len());
    for matrix in [&report.latency, &report.latency_huge] {
        assert_eq!(matrix.len(), rows);
        assert!(matrix
            .iter()
            .all(|r| r.len() == cols && r.iter().all(|l| l.ns > 0.0)));
    }
    for m in [&report.read, &report.write, &report.copy] {
        assert_eq!(m.len(), rows);
        assert!(m
            .iter()
            .all(|r| r.len() == cols && r.iter().all(|b| b.gbs > 0.0)));
    }
    assert_eq!(
        report.sweeps.len(),
        rows,
        "one local read sweep per CPU node"
    );
    assert!(report.sweeps.iter().all(|s| s.points[0].threads == 1));
    assert!(
        report.placement_verified(),
        "{:?} {:?}",
        report.buffers,
        report.threads
    );
    assert!(report.buffers.pages > 0 && report.threads.threads > 0);
    if cols == 1 {
        assert!(report.cross.is_empty());
        assert!(report.notes.iter().any(|n| n.contains("one memory node")));
    }
}

#[test]
fn a_saved_description_loads_and_simulates() {
    let placer = placer();
    let report = matrix::run(&placer, &small(), &Silent).unwrap();
    let description = describe::describe(placer.topology(), &report, "probed-test").unwrap();
    let json = serde_json::to_string_pretty(&description).unwrap();
    let loaded = MachineDescription::from_json(&json, "test").unwrap();
    let topology = loaded.to_topology();
    assert_eq!(topology.compute_nodes().len(), report.cpu_nodes.len());
    let local = report.read[0][0].gbs;
    let node = &topology.nodes[0];
    assert_eq!(node.memory_bandwidth_gbs, Some(local));
    let one_thread = report.sweeps[0].points[0].gbs;
    assert_eq!(node.thread_bandwidth_gbs, Some(one_thread));
    let cal = numakit_sim::Calibration::for_machine(&topology);
    assert_eq!(cal.per_thread_gbs, one_thread);
    let predicted = numakit_sim::predict_machine(&topology, None, &cal).unwrap();
    assert!(!predicted.rows.is_empty());
}

fn tiny_kiefer() -> KieferOptions {
    KieferOptions {
        accesses: 20_000,
        small_bytes: MIB,
        large_bytes: 4 * MIB,
        migrations: 4,
        threads: 2,
        groups: 2,
        group_threads: 2,
        seed: 1,
        ..KieferOptions::default()
    }
}

#[test]
fn the_four_experiments_fill_table_one() {
    let placer = placer();
    let report = kiefer::run(&placer, &Experiment::ALL, &tiny_kiefer(), &Silent).unwrap();
    let count = |e: u8| report.rows.iter().filter(|r| r.experiment == e).count();
    assert_eq!([count(1), count(2), count(3), count(4)], [2, 4, 4, 4]);
    assert!(report.rows.iter().all(|r| r.baseline_ns > 0.0));
    let nodes = placer.topology().compute_nodes().len();
    for row in &report.rows {
        let measurable = match row.experiment {
            1 => placer.topology().memory_nodes().len() > 1,
            4 => nodes > 1,
            _ => true,
        };
        assert_eq!(row.variant_ns.is_some(), measurable, "{row:?}");
    }
    assert!(
        report.placement_verified(),
        "{:?} {:?}",
        report.buffers,
        report.threads
    );
    if nodes == 1 {
        assert!(report.notes.iter().any(|n| n.contains("experiment 1")));
        assert!(report.notes.iter().any(|n| n.contains("CPUs of node")));
    }
}

#[test]
fn every_strategy_computes_the_same_and_one_is_recommended() {
    let placer = placer();
    let options = StrategyOptions {
        sizes: Sizes {
            rows: 200_000,
            groups: 1000,
            build_rows: 20_000,
        },
        reps: 2,
        mode: PlacementMode::BestEffort,
        ..StrategyOptions::default()
    };
    let report = strategies::run(&placer, &options, &Silent).unwrap();
    assert_eq!(
        report.outcomes.len(),
        Workload::ALL.len() * PlacementStrategy::ALL.len()
    );
    assert!(report.consistent, "{:?}", report.outcomes);
    for o in &report.outcomes {
        assert!(o.rows_per_s > 0.0);
        assert!(
            o.pages.pages > 0 && o.pages.pages == o.pages.on_node,
            "{o:?}"
        );
        if o.strategy == PlacementStrategy::Default {
            assert_eq!(o.vs_default, Some(1.0));
        }
    }
    let join = report
        .outcomes
        .iter()
        .find(|o| o.workload == Workload::Join)
        .unwrap();
    assert_eq!(
        join.check,
        200_000 * report.instances.len() as u64,
        "every probe row matches once"
    );
    assert!(
        report
            .recommendation
            .starts_with("no significant difference")
            || PlacementStrategy::ALL
                .iter()
                .any(|s| report.recommendation.starts_with(s.name())),
        "{}",
        report.recommendation
    );
}

#[test]
fn bad_requests_are_refused_with_a_reason() {
    let placer = placer();
    let mut o = small();
    o.max_threads = Some(0);
    assert!(matches!(
        matrix::run(&placer, &o, &Silent),
        Err(ProbeError::Zero { .. })
    ));
    let mut o = small();
    o.latency_bytes = u64::MAX / 4;
    let err = matrix::run(&placer, &o, &Silent).unwrap_err();
    assert!(matches!(err, ProbeError::MemoryLimit(_)), "{err}");
    assert!(
        err.to_string().contains("the latency buffer needs"),
        "{err}"
    );
    let mut o = small();
    o.cpu_nodes = Some(vec![4000]);
    let err = matrix::run(&placer, &o, &Silent).unwrap_err();
    assert!(err.to_string().contains("node 4000"), "{err}");
    let mut k = tiny_kiefer();
    k.accesses = 0;
    assert!(kiefer::run(&placer, &Experiment::ALL, &k, &Silent).is_err());
    let s = StrategyOptions {
        instances: Some(0),
        ..StrategyOptions::default()
    };
    assert!(strategies::run(&placer, &s, &Silent).is_err());
}
