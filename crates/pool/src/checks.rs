//! Checks that the pool keeps its promises on the running machine, for
//! `numakit doctor`: workers of node k run only on node k's CPUs, memory
//! first touched by a worker of node k lands on node k, and workers take
//! their own node's tasks before stealing. Like the placement doctor, it
//! verifies by observation (getcpu, move_pages), not by return codes.

use std::sync::{Arc, Barrier, Mutex, PoisonError};
use std::time::Duration;

use numakit_placement::doctor::{check, Check, Status};
use numakit_placement::{
    current_cpu, BufferOptions, NodeBuffer, PageLocation, Placement, PlacementError,
};
use numakit_topology::{NodeId, Topology};

use crate::{Pool, PoolBuilder, PoolError};

/// Bytes first-touched per node.
const TOUCH_BYTES: usize = 256 << 10;

/// Runs the pool checks with a strict, pinned pool.
pub fn run(topology: Arc<Topology>) -> Vec<Check> {
    let pool = match PoolBuilder::new(topology.clone()).build() {
        Ok(pool) => pool,
        Err(e) => return vec![failure("pool_build", &e)],
    };
    let mut checks = workers_checks(&pool);
    checks.extend(first_touch_checks(&pool));
    checks.push(local_first_check(&pool));
    checks
}

fn failure(name: &str, e: &PoolError) -> Check {
    let refused = matches!(e, PoolError::Placement(p) if p.is_refusal());
    let status = if refused {
        Status::Unavailable
    } else {
        Status::Fail
    };
    check(name, status, e.to_string())
}

fn workers_checks(pool: &Pool) -> Vec<Check> {
    let seen = match pool.broadcast(|ctx| (ctx.clone(), current_cpu())) {
        Ok(seen) => seen,
        Err(e) => return vec![failure("pool_workers", &e)],
    };
    let topo = pool.topology();
    pool.nodes()
        .into_iter()
        .map(|node| {
            let name = format!("pool_workers_node_{node}");
            let cpus = topo.allowed_cpus_of(node).unwrap_or_default();
            let mine: Vec<_> = seen.iter().filter(|(ctx, _)| ctx.node == node).collect();
            let mut ran_on = Vec::new();
            let mut ok = !mine.is_empty();
            for (ctx, observed) in &mine {
                match observed {
                    Ok((cpu, kernel_node)) => {
                        ran_on.push(*cpu);
                        ok &= cpus.contains(*cpu) && *kernel_node == node && ctx.cpu == Some(*cpu);
                    }
                    Err(_) => ok = false,
                }
            }
            let status = if ok { Status::Pass } else { Status::Fail };
            check(
                name,
                status,
                format!(
                    "{} worker(s) ran on CPUs {ran_on:?}; node {node} has CPUs {cpus}",
                    mine.len()
                ),
            )
        })
        .collect()
}

fn first_touch_checks(pool: &Pool) -> Vec<Check> {
    let topo = pool.topology();
    let nodes: Vec<NodeId> = pool
        .nodes()
        .into_iter()
        .filter(|n| topo.memory_nodes().contains(n))
        .collect();
    let mut options = BufferOptions::new(Placement::Anywhere);
    options.prefault = false;
    let buffers: Result<Vec<Mutex<NodeBuffer<u8>>>, PlacementError> = nodes
        .iter()
        .map(|_| {
            NodeBuffer::with_options(pool.placer(), TOUCH_BYTES, options.clone()).map(Mutex::new)
        })
        .collect();
    let buffers = match buffers {
        Ok(b) => b,
        Err(e) => return vec![failure("pool_first_touch", &PoolError::Placement(e))],
    };
    let touched = pool.broadcast(|ctx| {
        let Some(i) = nodes.iter().position(|&n| n == ctx.node) else {
            return;
        };
        if ctx.index_in_node == 0 {
            let mut buffer = buffers[i].lock().unwrap_or_else(PoisonError::into_inner);
            buffer.iter_mut().step_by(4096).for_each(|b| *b = 1);
        }
    });
    if let Err(e) = touched {
        return vec![failure("pool_first_touch", &e)];
    }
    nodes
        .iter()
        .zip(buffers)
        .map(|(&node, buffer)| {
            let name = format!("pool_first_touch_node_{node}");
            let buffer = buffer.into_inner().unwrap_or_else(PoisonError::into_inner);
            match buffer.page_locations() {
                Err(e) => failure(&name, &PoolError::Placement(e)),
                Ok(locs) => {
                    let here = locs.iter().filter(|l| **l == PageLocation::Node(node)).count();
                    let status = if here == locs.len() { Status::Pass } else { Status::Fail };
                    check(name, status, format!("{here}/{} pages first touched by a worker of node {node} are on node {node}; per node {:?}", locs.len(), buffer.pages_per_node().unwrap_or_default()))
                }
            }
        })
        .collect()
}

/// From a log of (worker, worker's node, task's node): how many tasks ran
/// on their own node, how many were stolen, and which workers ran a local
/// task after stealing one.
fn steal_order(log: &[(usize, NodeId, NodeId)], workers: usize) -> (usize, usize, Vec<usize>) {
    let mut late_local = Vec::new();
    let (mut local, mut stolen) = (0, 0);
    for w in 0..workers {
        let homes: Vec<(NodeId, NodeId)> = log
            .iter()
            .filter(|e| e.0 == w)
            .map(|e| (e.1, e.2))
            .collect();
        let first_stolen = homes
            .iter()
            .position(|(mine, home)| mine != home)
            .unwrap_or(homes.len());
        let here = homes.iter().filter(|(m, h)| m == h).count();
        local += here;
        stolen += homes.len() - here;
        if homes[first_stolen..].iter().any(|(m, h)| m == h) {
            late_local.push(w);
        }
    }
    (local, stolen, late_local)
}

/// Holds every worker at a gate while tasks are queued on all nodes (three
/// times more on the first), then checks that no worker ran one of its own
/// node's tasks after a stolen one.
fn local_first_check(pool: &Pool) -> Check {
    let nodes = pool.nodes();
    if nodes.len() < 2 {
        return check(
            "pool_local_first",
            Status::Unavailable,
            "one node with workers: nothing to steal",
        );
    }
    let workers = pool.workers();
    let gate = Barrier::new(workers + 1);
    let log: Mutex<Vec<(usize, NodeId, NodeId)>> = Mutex::new(Vec::new());
    let result = pool.scope(|s| {
        for w in 0..workers {
            let gate = &gate;
            s.spawn_on_worker(w, move |_| {
                gate.wait();
            });
        }
        for (i, &home) in nodes.iter().enumerate() {
            let count = if i == 0 { 12 * workers } else { 4 * workers };
            for _ in 0..count {
                let log = &log;
                let queued = s.spawn_on(home, move |ctx| {
                    log.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push((ctx.index, ctx.node, home));
                    std::thread::sleep(Duration::from_micros(100));
                });
                if let Err(e) = queued {
                    gate.wait();
                    return Err(e);
                }
            }
        }
        gate.wait();
        Ok(())
    });
    if let Err(e) = result.and_then(|r| r) {
        return failure("pool_local_first", &e);
    }
    let log = log.into_inner().unwrap_or_else(PoisonError::into_inner);
    let (local, stolen, late_local) = steal_order(&log, workers);
    let status = if late_local.is_empty() && stolen > 0 {
        Status::Pass
    } else {
        Status::Fail
    };
    check(
        "pool_local_first",
        status,
        format!("{} tasks: {local} local, {stolen} stolen; workers that ran a local task after stealing: {late_local:?}", log.len()),
    )
}

#[cfg(test)]
mod tests {
    use super::steal_order;

    #[test]
    fn a_local_task_after_a_stolen_one_is_reported() {
        // Worker 0 (node 0) runs local, local, stolen: fine. Worker 1
        // (node 1) steals, then runs a task of its own node: late.
        let log = [(0, 0, 0), (1, 1, 0), (0, 0, 0), (0, 0, 1), (1, 1, 1)];
        assert_eq!(steal_order(&log, 2), (3, 2, vec![1]));
        assert_eq!(steal_order(&[], 2), (0, 0, vec![]));
    }
}
