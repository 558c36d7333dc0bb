//! The pool's public behaviour: scoped tasks, reuse, panics, phases,
//! morsels, plans, and real pinning on this machine.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use numakit_placement::{current_cpu, PlacementMode};
use numakit_pool::{NodeSlice, PoolBuilder, PoolError};
use numakit_topology::{MachineDescription, NodeSet, Topology};

fn two_nodes(cores: u32) -> Arc<Topology> {
    let json = format!(
        r#"{{"name":"t","description":"","source":"","nodes":[
        {{"id":0,"socket":0,"cores":{cores},"threads_per_core":1,"memory_gib":1}},
        {{"id":1,"socket":1,"cores":{cores},"threads_per_core":1,"memory_gib":1}}]}}"#
    );
    Arc::new(
        MachineDescription::from_json(&json, "t")
            .unwrap()
            .to_topology(),
    )
}

fn unpinned(cores: u32) -> numakit_pool::Pool {
    PoolBuilder::new(two_nodes(cores))
        .placement(PlacementMode::Off)
        .build()
        .unwrap()
}

#[test]
fn scoped_tasks_borrow_and_all_run() {
    let pool = unpinned(2);
    let data: Vec<u64> = (1..=1000).collect();
    let sum = AtomicU64::new(0);
    pool.scope(|s| {
        for (i, chunk) in data.chunks(7).enumerate() {
            let sum = &sum;
            s.spawn_on((i % 2) as u32, move |_| {
                sum.fetch_add(chunk.iter().sum::<u64>(), SeqCst);
            })
            .unwrap();
        }
    })
    .unwrap();
    assert_eq!(sum.into_inner(), 500_500);
}

#[test]
fn a_panicking_task_is_an_error_and_the_pool_survives() {
    let pool = unpinned(2);
    let ran = AtomicUsize::new(0);
    let err = pool
        .scope(|s| {
            for i in 0..20 {
                let ran = &ran;
                s.spawn(move |_| {
                    if i == 7 {
                        panic!("task seven failed");
                    }
                    ran.fetch_add(1, SeqCst);
                });
            }
        })
        .unwrap_err();
    assert!(
        matches!(err, PoolError::TaskPanicked { ref message, .. } if message.contains("task seven")),
        "{err}"
    );
    assert_eq!(ran.load(SeqCst), 19, "the other tasks still ran");
    let again = pool.broadcast(|ctx| ctx.index).unwrap();
    assert_eq!(again, vec![0, 1, 2, 3]);
}

#[test]
fn a_panic_in_a_lockstep_phase_does_not_deadlock() {
    let pool = unpinned(2);
    let err = pool
        .run_lockstep(10, |ctx, step| {
            if ctx.index == 2 && step == 3 {
                panic!("step three");
            }
        })
        .unwrap_err();
    assert!(err.to_string().contains("step three"), "{err}");
    pool.run_lockstep(3, |_, _| {}).unwrap();
}

#[test]
fn lockstep_steps_never_overlap() {
    let pool = unpinned(2);
    let steps = 50;
    let arrived: Vec<AtomicUsize> = (0..steps).map(|_| AtomicUsize::new(0)).collect();
    pool.run_lockstep(steps, |_, step| {
        if step > 0 {
            assert_eq!(
                arrived[step - 1].load(SeqCst),
                4,
                "step {step} began before step {} ended",
                step - 1
            );
        }
        arrived[step].fetch_add(1, SeqCst);
    })
    .unwrap();
    let loose = AtomicUsize::new(0);
    pool.run_loose(steps, |_, _| {
        loose.fetch_add(1, SeqCst);
    })
    .unwrap();
    assert_eq!(loose.into_inner(), 4 * steps);
}

#[test]
fn the_pool_is_reused_across_many_phases() {
    let pool = unpinned(1);
    for round in 0..200u64 {
        let total = AtomicU64::new(0);
        pool.scope(|s| {
            for i in 0..8 {
                let total = &total;
                s.spawn(move |_| {
                    total.fetch_add(round * i, SeqCst);
                });
            }
        })
        .unwrap();
        assert_eq!(total.into_inner(), round * 28);
    }
    let stats = pool.stats();
    let tasks: u64 = stats.iter().map(|s| s.tasks_local + s.tasks_stolen).sum();
    assert_eq!(tasks, 1600);
    pool.reset_stats();
    assert!(pool
        .stats()
        .iter()
        .all(|s| s.tasks_local == 0 && s.tasks_stolen == 0));
}

#[test]
fn nested_scopes_help_instead_of_deadlocking() {
    let pool = unpinned(1);
    let count = AtomicUsize::new(0);
    pool.scope(|outer| {
        for _ in 0..4 {
            let (pool, count) = (&pool, &count);
            outer.spawn(move |_| {
                pool.scope(|inner| {
                    for _ in 0..4 {
                        inner.spawn(move |_| {
                            count.fetch_add(1, SeqCst);
                        });
                    }
                })
                .unwrap();
                assert!(matches!(
                    pool.broadcast(|_| ()),
                    Err(PoolError::NestedBroadcast)
                ));
            });
        }
    })
    .unwrap();
    assert_eq!(count.into_inner(), 16);
}

#[test]
fn fold_morsels_sums_node_slices() {
    let pool = unpinned(2);
    let a: Vec<u64> = (0..100_000).collect();
    let b: Vec<u64> = (100_000..150_001).collect();
    let parts = [
        NodeSlice {
            node: 0,
            data: &a[..],
        },
        NodeSlice {
            node: 1,
            data: &b[..],
        },
    ];
    let partials = pool
        .fold_morsels(
            &parts,
            4096,
            || 0u64,
            |acc, _, m| acc + m.data.iter().sum::<u64>(),
        )
        .unwrap();
    assert_eq!(partials.iter().sum::<u64>(), (0..150_001u64).sum::<u64>());
    let empty: [NodeSlice<'_, u64>; 0] = [];
    assert!(pool
        .fold_morsels(&empty, 16, || 0u64, |a, _, _| a)
        .unwrap()
        .is_empty());
    assert!(pool
        .for_each_morsel(
            &[NodeSlice {
                node: 7,
                data: &a[..1]
            }],
            1,
            |_, _| {}
        )
        .is_err());
}

#[test]
fn plans_balance_nodes_and_refuse_bad_requests() {
    let topo = two_nodes(4);
    let plan = PoolBuilder::new(topo.clone()).threads(3).plan().unwrap();
    assert_eq!(plan, vec![(0, 0), (0, 1), (1, 4)]);
    let over = PoolBuilder::new(topo.clone()).threads(10).plan().unwrap();
    assert_eq!(over.len(), 10);
    assert_eq!(over.iter().filter(|(n, _)| *n == 1).count(), 5);
    assert!(matches!(
        PoolBuilder::new(topo.clone()).threads(0).plan(),
        Err(PoolError::BadThreadCount(0))
    ));
    let only_one = PoolBuilder::new(topo.clone())
        .nodes(NodeSet::single(1))
        .plan()
        .unwrap();
    assert!(only_one.iter().all(|(n, _)| *n == 1));
    let err = PoolBuilder::new(topo)
        .nodes(NodeSet::single(9))
        .plan()
        .unwrap_err();
    assert!(err.to_string().contains("node 9"), "{err}");
}

#[test]
fn workers_on_this_machine_run_where_pinned() {
    let topo = Arc::new(numakit_topology::discover().unwrap());
    let pool = match PoolBuilder::new(topo.clone()).build() {
        Ok(pool) => pool,
        Err(e) => panic!("a strict pool should build on this machine: {e}"),
    };
    assert_eq!(pool.workers(), topo.allowed.cpus.len());
    let seen = pool
        .broadcast(|ctx| (ctx.cpu, current_cpu().unwrap()))
        .unwrap();
    for (pinned, (cpu, node)) in seen {
        assert_eq!(pinned, Some(cpu));
        assert_eq!(topo.node_of_cpu(cpu), Some(node));
    }
}

/// Broadcasts from several threads take turns. If two broadcasts could
/// queue their per-worker jobs in different orders on different workers,
/// two lock-step phases would each hold part of the pool at their own
/// barrier and this test would hang (and time out) instead of finishing.
#[test]
fn lockstep_phases_from_several_threads_take_turns() {
    let pool = unpinned(2);
    let steps = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..500 {
                    pool.run_lockstep(2, |_, _| {
                        steps.fetch_add(1, SeqCst);
                    })
                    .unwrap();
                }
            });
        }
    });
    assert_eq!(steps.into_inner(), 4 * 500 * 2 * 4);
}
