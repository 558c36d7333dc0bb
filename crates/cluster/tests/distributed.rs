//! The distributed join with P = 1..4 processes (threads of this test,
//! each with its own pool and its own timely connections over loopback)
//! gives exactly what numakit's single-machine join gives on the union of
//! the processes' data: equi and non-equi, skewed keys, edge cases, both
//! send orders.

use std::sync::Arc;
use std::time::{Duration, Instant};

use numakit_cluster::launch::free_local_addresses;
use numakit_cluster::message::Message;
use numakit_cluster::partition::share;
use numakit_cluster::reference::{nested_loop, single_machine};
use numakit_cluster::transport::connect::Endpoints;
use numakit_cluster::{
    run_process, ClusterError, ClusterResult, FrameMode, JoinSpec, Output, PartialResult,
    Predicate, SendOrder, Side,
};
use numakit_ops::datagen::{generate, GenSpec, KeyDist};
use numakit_ops::{Relation, Tuple};
use numakit_placement::PlacementMode;
use numakit_pool::{Pool, PoolBuilder};

fn pool() -> Pool {
    let topology = Arc::new(numakit_topology::discover().unwrap());
    PoolBuilder::new(topology)
        .placement(PlacementMode::Off)
        .threads(2)
        .build()
        .unwrap()
}

/// Runs the join of `left` and `right` (whole relations, split over
/// `p` processes by rows) and returns the sink's result.
fn distributed(p: usize, left: &[Tuple], right: &[Tuple], spec: &JoinSpec) -> ClusterResult {
    let addresses = free_local_addresses(p).unwrap();
    let handles: Vec<_> = (0..p)
        .map(|i| {
            let addresses = addresses.clone();
            let spec = spec.clone();
            let l = left[range(left.len(), i, p)].to_vec();
            let r = right[range(right.len(), i, p)].to_vec();
            std::thread::spawn(move || {
                let pool = pool();
                let l = Relation::from_tuples(&pool, &l).unwrap();
                let r = Relation::from_tuples(&pool, &r).unwrap();
                let endpoints = Endpoints {
                    process: i,
                    addresses,
                    timeout: Duration::from_secs(20),
                    peer_timeout: numakit_cluster::transport::connect::DEFAULT_PEER_TIMEOUT,
                    fingerprint: spec.fingerprint(),
                };
                let transport = numakit_cluster::transport::connect(&endpoints)?;
                run_process(&pool, transport, &l, &r, &spec, Duration::from_secs(60))
            })
        })
        .collect();
    let mut cluster = None;
    for h in handles {
        let run = h.join().unwrap().unwrap();
        if let Some(c) = run.cluster {
            cluster = Some(c);
        }
    }
    cluster.expect("the sink has the result")
}

fn range(len: usize, i: usize, p: usize) -> std::ops::Range<usize> {
    let r = share(len as u64, i, p);
    r.start as usize..r.end as usize
}

fn generated(spec: &GenSpec) -> Vec<Tuple> {
    generate(&pool(), spec).unwrap().to_vec()
}

fn reference(
    left: &[Tuple],
    right: &[Tuple],
    predicate: Predicate,
    output: Output,
) -> PartialResult {
    let pool = pool();
    let l = Relation::from_tuples(&pool, left).unwrap();
    let r = Relation::from_tuples(&pool, right).unwrap();
    single_machine(&pool, &l, &r, predicate, output).unwrap()
}

fn spec(predicate: Predicate, order: SendOrder, output: Output) -> JoinSpec {
    let mut s = JoinSpec::new(predicate);
    s.order = order;
    s.output = output;
    s.buckets = 8;
    s.block_rows = 500;
    s
}

fn check(p: usize, left: &[Tuple], right: &[Tuple], spec: &JoinSpec) {
    let want = reference(left, right, spec.predicate, spec.output);
    let got = distributed(p, left, right, spec);
    assert_eq!(got.result, want, "P={p} {spec:?}");
    assert_eq!(got.processes.len(), p);
    let rows: u64 = got.processes.iter().map(|m| m.result_rows).sum();
    assert_eq!(rows, want.rows, "the processes' rows add up");
    for m in &got.processes {
        assert!(m.span_seconds > 0.0 && m.compute_seconds > 0.0, "{m:?}");
        if p > 1 && !left.is_empty() {
            assert!(m.bytes_sent > 0, "process {} sent nothing", m.process);
        }
    }
}

#[test]
fn equi_joins_equal_the_single_machine_join_for_p_1_to_4() {
    let left = generated(&GenSpec {
        rows: 6_000,
        keys: KeyDist::Dense,
        seed: 1,
    });
    let right = generated(&GenSpec {
        rows: 20_000,
        keys: KeyDist::ForeignKey { build_rows: 6_000 },
        seed: 2,
    });
    for p in 1..=4 {
        for order in [SendOrder::Ring, SendOrder::AllAtOnce] {
            check(
                p,
                &left,
                &right,
                &spec(Predicate::Equal, order, Output::Sample(40)),
            );
        }
    }
}

#[test]
fn both_frame_modes_equal_the_single_machine_join_for_p_1_to_4() {
    let left = generated(&GenSpec {
        rows: 5_000,
        keys: KeyDist::Uniform { max: 2_000 },
        seed: 3,
    });
    let right = generated(&GenSpec {
        rows: 12_000,
        keys: KeyDist::Zipf {
            distinct: 2_000,
            exponent: 1.2,
        },
        seed: 4,
    });
    // Both modes must give the reference's rows, checksum and sample.
    for p in 1..=4 {
        for order in [SendOrder::Ring, SendOrder::AllAtOnce] {
            for frames in [FrameMode::AllSenders, FrameMode::PerSender] {
                let mut spec = spec(Predicate::Equal, order, Output::Sample(40));
                spec.frames = frames;
                check(p, &left, &right, &spec);
            }
        }
    }
}

#[test]
fn zipf_skewed_keys_and_every_output() {
    let left = generated(&GenSpec {
        rows: 3_000,
        keys: KeyDist::Dense,
        seed: 3,
    });
    let right = generated(&GenSpec {
        rows: 15_000,
        keys: KeyDist::Zipf {
            distinct: 3_000,
            exponent: 1.3,
        },
        seed: 4,
    });
    for output in [Output::Count, Output::Checksum, Output::Rows] {
        check(
            3,
            &left,
            &right,
            &spec(Predicate::Equal, SendOrder::Ring, output),
        );
    }
    // Duplicates on both sides: uniform keys over a small range.
    let left = generated(&GenSpec {
        rows: 2_000,
        keys: KeyDist::Uniform { max: 300 },
        seed: 5,
    });
    let right = generated(&GenSpec {
        rows: 2_000,
        keys: KeyDist::Uniform { max: 300 },
        seed: 6,
    });
    check(
        4,
        &left,
        &right,
        &spec(Predicate::Equal, SendOrder::AllAtOnce, Output::Checksum),
    );
}

#[test]
fn non_equi_joins_broadcast_and_equal_the_reference() {
    let left = generated(&GenSpec {
        rows: 1_500,
        keys: KeyDist::Uniform { max: 50_000 },
        seed: 7,
    });
    let right = generated(&GenSpec {
        rows: 4_000,
        keys: KeyDist::Uniform { max: 50_000 },
        seed: 8,
    });
    for p in [2, 3, 4] {
        for order in [SendOrder::Ring, SendOrder::AllAtOnce] {
            check(
                p,
                &left,
                &right,
                &spec(Predicate::Band { width: 30 }, order, Output::Sample(25)),
            );
        }
    }
    check(
        3,
        &left,
        &right,
        &spec(Predicate::Less, SendOrder::Ring, Output::Checksum),
    );
    check(
        2,
        &left,
        &right,
        &spec(Predicate::Less, SendOrder::AllAtOnce, Output::Count),
    );
    // The larger relation broadcast instead: the same result.
    let mut s = spec(
        Predicate::Band { width: 100 },
        SendOrder::Ring,
        Output::Checksum,
    );
    s.broadcast = Side::Right;
    check(3, &left, &right, &s);
}

#[test]
fn edge_cases() {
    let t = |keys: &[u64]| -> Vec<Tuple> {
        keys.iter()
            .enumerate()
            .map(|(i, &k)| Tuple::new(k, i as u64))
            .collect()
    };
    let extremes = t(&[0, u64::MAX, 0, u64::MAX - 1, 7, u64::MAX]);
    let cases: Vec<(Vec<Tuple>, Vec<Tuple>)> = vec![
        (Vec::new(), t(&[1, 2, 3])),
        (t(&[1, 2, 3]), Vec::new()),
        (t(&[5]), t(&[5])),
        (vec![Tuple::new(9, 1); 50], vec![Tuple::new(9, 2); 70]),
        (extremes.clone(), extremes),
    ];
    for (l, r) in &cases {
        for p in [2, 3] {
            check(
                p,
                l,
                r,
                &spec(Predicate::Equal, SendOrder::Ring, Output::Sample(10)),
            );
            check(
                p,
                l,
                r,
                &spec(
                    Predicate::Band { width: 1 },
                    SendOrder::AllAtOnce,
                    Output::Sample(10),
                ),
            );
            check(
                p,
                l,
                r,
                &spec(Predicate::Less, SendOrder::Ring, Output::Checksum),
            );
        }
    }
    // The brute-force join agrees on the extremes (the reference itself).
    let (l, r) = &cases[4];
    let want = nested_loop(l, r, Predicate::Band { width: 1 });
    let got = reference(l, r, Predicate::Band { width: 1 }, Output::Sample(1000));
    assert_eq!(got.sample, want);
}

#[test]
fn a_peer_that_never_comes_is_an_error_naming_it_in_bounded_time() {
    let addresses = free_local_addresses(3).unwrap();
    let endpoints = Endpoints {
        process: 0,
        addresses,
        timeout: Duration::from_millis(800),
        peer_timeout: numakit_cluster::transport::connect::DEFAULT_PEER_TIMEOUT,
        fingerprint: 1,
    };
    let start = Instant::now();
    let err = match numakit_cluster::transport::connect::<Message>(&endpoints) {
        Err(e) => e,
        Ok(_) => panic!("no peer should connect"),
    };
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(matches!(err, ClusterError::ConnectTimeout { .. }), "{err}");
    assert!(
        err.to_string().contains("peer 1") || err.to_string().contains("peer 2"),
        "{err}"
    );
}
