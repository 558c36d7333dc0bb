//! Tests of scheduling order that need to address single workers: local
//! tasks before stolen ones, stealing nearest node first.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Barrier, Mutex};

use numakit_placement::PlacementMode;
use numakit_topology::{MachineDescription, Topology};

use crate::{Pool, PoolBuilder};

/// `n` nodes with one single-threaded core each; distances given row-major.
pub(crate) fn described(n: usize, distances: Option<Vec<Vec<u32>>>) -> Arc<Topology> {
    let nodes: Vec<String> = (0..n)
        .map(|i| {
            format!(r#"{{"id":{i},"socket":{i},"cores":1,"threads_per_core":1,"memory_gib":1}}"#)
        })
        .collect();
    let distances = distances
        .map(|d| format!(r#","distances":{}"#, serde_json_like(&d)))
        .unwrap_or_default();
    let json = format!(
        r#"{{"name":"test","description":"","source":"","nodes":[{}]{distances}}}"#,
        nodes.join(",")
    );
    Arc::new(
        MachineDescription::from_json(&json, "test")
            .unwrap()
            .to_topology(),
    )
}

fn serde_json_like(d: &[Vec<u32>]) -> String {
    let rows: Vec<String> = d
        .iter()
        .map(|r| {
            format!(
                "[{}]",
                r.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
            )
        })
        .collect();
    format!("[{}]", rows.join(","))
}

fn unpinned(topo: Arc<Topology>) -> Pool {
    PoolBuilder::new(topo)
        .placement(PlacementMode::Off)
        .build()
        .unwrap()
}

#[test]
fn local_tasks_run_before_stolen_ones() {
    let pool = unpinned(described(2, None));
    let gate = Barrier::new(3);
    let log: Mutex<Vec<(usize, u32)>> = Mutex::new(Vec::new());
    pool.scope(|s| {
        for w in 0..2 {
            let gate = &gate;
            s.spawn_on_worker(w, move |_| {
                gate.wait();
            });
        }
        for i in 0..40u32 {
            let home = if i < 38 { 0 } else { 1 };
            let log = &log;
            s.spawn_on(home, move |ctx| {
                log.lock().unwrap().push((ctx.index, home));
                std::thread::sleep(std::time::Duration::from_micros(200));
            })
            .unwrap();
        }
        gate.wait();
    })
    .unwrap();
    let log = log.into_inner().unwrap();
    assert_eq!(log.len(), 40);
    for worker in 0..2 {
        let homes: Vec<u32> = log
            .iter()
            .filter(|(w, _)| *w == worker)
            .map(|(_, h)| *h)
            .collect();
        let own = worker as u32;
        let first_foreign = homes.iter().position(|&h| h != own).unwrap_or(homes.len());
        assert!(
            homes[first_foreign..].iter().all(|&h| h != own),
            "worker {worker} ran a local task after a stolen one: {homes:?}"
        );
    }
    let stats = pool.stats();
    assert_eq!(
        stats[1].tasks_stolen as usize,
        log.iter().filter(|(w, h)| *w == 1 && *h == 0).count()
    );
    assert!(
        stats[1].tasks_stolen > 0,
        "the idle node should have stolen: {stats:?}"
    );
    assert!(stats[0].tasks_local > 0);
}

#[test]
fn steals_from_the_nearest_node_first() {
    let d = vec![vec![10, 30, 20], vec![30, 10, 20], vec![20, 20, 10]];
    let pool = unpinned(described(3, Some(d)));
    let start_zero = Barrier::new(2);
    let release_others = AtomicBool::new(false);
    let order: Mutex<Vec<u32>> = Mutex::new(Vec::new());
    let done = AtomicUsize::new(0);
    pool.scope(|s| {
        let (start_zero, release_others) = (&start_zero, &release_others);
        s.spawn_on_worker(0, move |_| {
            start_zero.wait();
        });
        for w in 1..3 {
            s.spawn_on_worker(w, move |_| {
                while !release_others.load(SeqCst) {
                    std::thread::yield_now();
                }
            });
        }
        for (home, count) in [(1u32, 3), (2, 3), (0, 3)] {
            for _ in 0..count {
                let (order, done) = (&order, &done);
                s.spawn_on(home, move |ctx| {
                    if ctx.index == 0 {
                        order.lock().unwrap().push(home);
                    }
                    if done.fetch_add(1, SeqCst) + 1 == 9 {
                        release_others.store(true, SeqCst);
                    }
                })
                .unwrap();
            }
        }
        start_zero.wait();
    })
    .unwrap();
    assert_eq!(*order.lock().unwrap(), vec![0, 0, 0, 2, 2, 2, 1, 1, 1]);
}

#[test]
fn memory_only_home_goes_to_the_nearest_compute_node() {
    let json = r#"{"name":"t","description":"","source":"",
      "nodes":[{"id":0,"socket":0,"cores":1,"threads_per_core":1},
               {"id":1,"socket":1,"cores":1,"threads_per_core":1},
               {"id":5,"socket":1,"cores":0,"threads_per_core":0,"memory_gib":4}],
      "distances":[[10,20,30],[20,10,15],[30,15,10]]}"#;
    let topo = Arc::new(
        MachineDescription::from_json(json, "t")
            .unwrap()
            .to_topology(),
    );
    let pool = unpinned(topo);
    assert_eq!(pool.shared.route(5).unwrap(), 1);
    assert!(pool.shared.route(9).is_err());
}
