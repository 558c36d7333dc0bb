//! The matrix on this machine: every cell and class present, every
//! measuring thread on its seat's node, bad requests refused. (What the
//! figures are is a measurement for `numakit interfere`, not a test.)

use std::sync::Arc;
use std::time::Duration;

use numakit_interfere::matrix;
use numakit_interfere::{InterferenceRequest, Sizes, Workload};
use numakit_placement::{PlacementMode, Placer};

fn placer() -> Placer {
    Placer::new(
        Arc::new(numakit_topology::discover().expect("topology")),
        PlacementMode::BestEffort,
    )
}

#[test]
fn every_pair_is_measured_and_classified() {
    let placer = placer();
    if placer.topology().allowed.cpus.len() < 2 {
        eprintln!("skipped: one CPU");
        return;
    }
    let workloads = vec![
        Workload::Scan,
        Workload::Probe,
        Workload::Compute,
        Workload::Join,
    ];
    let request = InterferenceRequest {
        workloads: workloads.clone(),
        duration: Duration::from_millis(20),
        reps: 2,
        sizes: Sizes {
            cache_bytes: 1 << 20,
            scan_bytes: 16 << 20,
            chase_bytes: 8 << 20,
            rows: 1 << 14,
        },
    };
    let heard = std::sync::Mutex::new(Vec::new());
    let report = matrix::run(&placer, &request, &|what| {
        heard.lock().unwrap().push(what.to_string())
    })
    .expect("measured");
    assert_eq!(report.alone.len(), 4);
    assert!(
        report.alone.iter().all(|a| a.per_second > 0.0),
        "{:?}",
        report.alone
    );
    assert_eq!(report.colocated.len(), 16);
    for v in &workloads {
        for a in &workloads {
            let cell = report
                .colocated
                .iter()
                .find(|c| c.victim == *v && c.aggressor == *a)
                .expect("a cell per pair");
            assert!(cell.slowdown.is_finite() && cell.slowdown > 0.0, "{cell:?}");
            assert!(
                cell.min <= cell.slowdown && cell.slowdown <= cell.max,
                "{cell:?}"
            );
        }
    }
    assert_eq!(report.classes.len(), 4);
    for class in &report.classes {
        assert_eq!(
            class.cache_sensitivity.is_some(),
            class.workload != Workload::Scan
        );
        assert!(class.bandwidth_appetite.is_some());
    }
    let nodes = placer.topology().compute_nodes().len();
    assert_eq!(report.isolated.is_some(), nodes > 1);
    assert_eq!(report.isolated_unavailable.is_some(), nodes == 1);
    assert!(report.placement_verified);
    // Alone once per workload and every pair, per repetition.
    assert_eq!(
        heard
            .lock()
            .unwrap()
            .iter()
            .filter(|h| h.contains("beside"))
            .count(),
        2 * 16 * nodes.min(2)
    );
}

#[test]
fn bad_requests_are_refused_before_any_work() {
    let placer = placer();
    let good = InterferenceRequest {
        workloads: vec![Workload::Compute],
        duration: Duration::from_millis(5),
        reps: 1,
        sizes: Sizes::for_cache(1 << 20),
    };
    for bad in [
        InterferenceRequest {
            workloads: vec![],
            ..good.clone()
        },
        InterferenceRequest {
            reps: 0,
            ..good.clone()
        },
        InterferenceRequest {
            duration: Duration::ZERO,
            ..good.clone()
        },
    ] {
        let err = matrix::run(&placer, &bad, &|_| {}).unwrap_err().to_string();
        assert!(!err.is_empty() && !err.contains('\n'), "{err}");
    }
}
