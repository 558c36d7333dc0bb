//! Bounded receive frames: a join whose input is several times the
//! receive budget completes, equals numakit's single-machine join, and
//! shows its backpressure (senders waited, the receivers never held more
//! than the budget), for P = 2 and 3 processes (threads of this test on
//! loopback timely), both frame modes and both send orders.

use std::sync::Arc;
use std::time::Duration;

use numakit_cluster::launch::free_local_addresses;
use numakit_cluster::partition::share;
use numakit_cluster::reference::single_machine;
use numakit_cluster::transport::connect::Endpoints;
use numakit_cluster::{
    run_process, ClusterResult, FrameMode, JoinSpec, Output, Predicate, SendOrder,
};
use numakit_ops::datagen::{generate, GenSpec, KeyDist};
use numakit_ops::{Relation, Tuple};
use numakit_placement::PlacementMode;
use numakit_pool::{Pool, PoolBuilder};

/// Bytes each process may hold of its peers' pieces.
const BUDGET: u64 = 64 * 1024;

fn pool() -> Pool {
    let topology = Arc::new(numakit_topology::discover().unwrap());
    PoolBuilder::new(topology)
        .placement(PlacementMode::Off)
        .threads(2)
        .build()
        .unwrap()
}

fn range(len: usize, i: usize, p: usize) -> std::ops::Range<usize> {
    let r = share(len as u64, i, p);
    r.start as usize..r.end as usize
}

/// The join of `left` and `right`, split by rows over `p` processes.
fn distributed(p: usize, left: &[Tuple], right: &[Tuple], spec: &JoinSpec) -> ClusterResult {
    let addresses = free_local_addresses(p).unwrap();
    let handles: Vec<_> = (0..p)
        .map(|i| {
            let (addresses, spec) = (addresses.clone(), spec.clone());
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
    // A deadlock (every sender waiting for credit) fails the test
    // instead of hanging it.
    let (tx, rx) = std::sync::mpsc::channel();
    let what = format!("P={p} {spec:?}");
    std::thread::spawn(move || {
        let runs: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        let _ = tx.send(runs);
    });
    let runs = rx
        .recv_timeout(Duration::from_secs(120))
        .unwrap_or_else(|_| panic!("{what} did not complete: deadlock?"));
    runs.into_iter()
        .find_map(|r| r.unwrap().unwrap().cluster)
        .expect("the sink has the result")
}

fn relations() -> (Vec<Tuple>, Vec<Tuple>) {
    let pool = pool();
    let left = GenSpec {
        rows: 20_000,
        keys: KeyDist::Dense,
        seed: 11,
    };
    let right = GenSpec {
        rows: 60_000,
        keys: KeyDist::ForeignKey { build_rows: 20_000 },
        seed: 12,
    };
    (
        generate(&pool, &left).unwrap().to_vec(),
        generate(&pool, &right).unwrap().to_vec(),
    )
}

fn spec(frames: FrameMode, order: SendOrder, budget: Option<u64>) -> JoinSpec {
    let mut s = JoinSpec::new(Predicate::Equal);
    s.output = Output::Sample(20);
    s.buckets = 16;
    s.frames = frames;
    s.order = order;
    s.receive_budget = budget;
    // Slow tasks keep pieces held, so that the senders run out of credit.
    s.task_delay = Duration::from_millis(1);
    s
}

#[test]
fn a_join_larger_than_the_budget_completes_and_equals_the_reference() {
    let (left, right) = relations();
    let input_bytes = ((left.len() + right.len()) * std::mem::size_of::<Tuple>()) as u64;
    assert!(input_bytes >= 10 * BUDGET, "the input is several budgets");
    let want = {
        let pool = pool();
        let l = Relation::from_tuples(&pool, &left).unwrap();
        let r = Relation::from_tuples(&pool, &right).unwrap();
        single_machine(&pool, &l, &r, Predicate::Equal, Output::Sample(20)).unwrap()
    };
    for p in [2, 3] {
        for frames in [FrameMode::AllSenders, FrameMode::PerSender] {
            for order in [SendOrder::Ring, SendOrder::AllAtOnce] {
                let spec = spec(frames, order, Some(BUDGET));
                let got = distributed(p, &left, &right, &spec);
                let what = format!("P={p} {} {}", frames.name(), order.name());
                assert_eq!(got.result, want, "{what}");
                let waits: u64 = got.processes.iter().map(|m| m.sender_waits).sum();
                assert!(waits > 0, "{what}: no sender ever waited");
                for m in &got.processes {
                    // Every piece here is smaller than a sender's credit,
                    // so the budget holds exactly.
                    assert!(
                        m.peak_held_bytes <= BUDGET,
                        "{what}: process {} held {} bytes",
                        m.process,
                        m.peak_held_bytes
                    );
                    assert!(m.peak_held_bytes > 0, "{what}");
                }
            }
        }
    }
}

#[test]
fn without_a_budget_nobody_waits_and_a_tiny_one_still_completes() {
    let (left, right) = relations();
    let (left, right) = (&left[..4_000], &right[..12_000]);
    let want = {
        let pool = pool();
        let l = Relation::from_tuples(&pool, left).unwrap();
        let r = Relation::from_tuples(&pool, right).unwrap();
        single_machine(&pool, &l, &r, Predicate::Equal, Output::Sample(20)).unwrap()
    };
    let free = distributed(
        2,
        left,
        right,
        &spec(FrameMode::AllSenders, SendOrder::Ring, None),
    );
    assert_eq!(free.result, want);
    assert!(free.processes.iter().all(|m| m.sender_waits == 0));
    // A budget of one byte: every piece is larger than the credit and
    // goes alone.
    for frames in [FrameMode::AllSenders, FrameMode::PerSender] {
        let tiny = distributed(3, left, right, &spec(frames, SendOrder::Ring, Some(1)));
        assert_eq!(tiny.result, want, "{}", frames.name());
        assert!(tiny.processes.iter().any(|m| m.sender_waits > 0));
    }
}

#[test]
fn a_broadcast_join_under_a_budget_equals_the_reference() {
    let (left, right) = relations();
    let (left, right) = (&left[..3_000], &right[..3_000]);
    let predicate = Predicate::Band { width: 2 };
    let want = {
        let pool = pool();
        let l = Relation::from_tuples(&pool, left).unwrap();
        let r = Relation::from_tuples(&pool, right).unwrap();
        single_machine(&pool, &l, &r, predicate, Output::Count).unwrap()
    };
    let mut spec = spec(FrameMode::AllSenders, SendOrder::Ring, Some(8 * 1024));
    spec.predicate = predicate;
    spec.output = Output::Count;
    spec.block_rows = 100;
    let got = distributed(3, left, right, &spec);
    assert_eq!(got.result, want);
    assert!(got.processes.iter().all(|m| m.peak_held_bytes <= 8 * 1024));
}
