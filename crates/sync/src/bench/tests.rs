use std::sync::Arc;

use numakit_placement::{PlacementMode, Placer};

use super::*;

fn placer() -> Placer {
    let topology = Arc::new(numakit_topology::discover().expect("topology"));
    Placer::new(topology, PlacementMode::BestEffort)
}

fn request(placer: &Placer) -> LockBenchRequest {
    LockBenchRequest {
        locks: LockKind::ALL.to_vec(),
        threads: vec![1, 3],
        nodes: placer.topology().compute_nodes(),
        critical_ns: 50,
        outside_ns: 0,
        duration: Duration::from_millis(20),
        reps: 2,
        cohort_bound: 8,
        uncontended_pairs: 2_000,
    }
}

#[test]
fn every_lock_runs_verified_at_every_thread_count() {
    let placer = placer();
    let report = run(&placer, &request(&placer), &|_| {}).expect("the benchmark runs");
    assert_eq!(report.contended.len(), 8);
    assert_eq!(report.uncontended.len(), 4);
    for point in &report.contended {
        assert!(point.acquisitions > 0, "{point:?}");
        assert!(point.acquisitions_per_s.median > 0.0, "{point:?}");
    }
    let std = &report.uncontended[0];
    assert_eq!(std.lock, LockKind::StdMutex);
    assert_eq!(std.vs_std_mutex, Some(1.0));
}

#[test]
fn bad_requests_are_refused_with_their_reason() {
    let placer = placer();
    let mut r = request(&placer);
    r.threads = vec![2, 0];
    let err = run(&placer, &r, &|_| {}).expect_err("refused");
    assert!(err.to_string().contains("at least 1"), "{err}");
    let mut r = request(&placer);
    r.nodes = vec![999];
    assert!(matches!(
        run(&placer, &r, &|_| {}),
        Err(SyncError::Placement { node: 999, .. })
    ));
    let mut r = request(&placer);
    r.locks.clear();
    assert!(run(&placer, &r, &|_| {}).is_err());
}

#[test]
fn lock_names_parse_back() {
    for kind in LockKind::ALL {
        assert_eq!(kind.name().parse::<LockKind>(), Ok(kind));
    }
    assert!("spin".parse::<LockKind>().is_err());
}

#[test]
fn spreads_take_the_middle() {
    let s = Spread::of(&[3.0, 1.0, 2.0, 10.0]);
    assert_eq!((s.min, s.median, s.max), (1.0, 2.5, 10.0));
}
