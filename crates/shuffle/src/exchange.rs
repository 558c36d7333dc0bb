//! The shuffle as a building block for operators: run a schedule on the
//! pool and call the operator's code for every (consumer, producer) visit.
//!
//! Worker t is consumer t and producer t. At step k, consumer c visits the
//! producer the [`Schedule`] names; what a visit does (sum a piece, merge a
//! run, aggregate a partition) is the caller's closure, which also owns the
//! consumer's state. Tight runs put a barrier after every step, loose runs
//! none. Migrating schedules re-pin the worker to the node of the data
//! before the visit and pin every worker home afterwards, also when the
//! phase failed; the closure learns that it moved (`Visit::moved`) so that
//! "migration & copy" can carry its state along. Every visit checks with
//! getcpu that the worker runs where the schedule says.
//!
//! This module does not know what a piece is or where it lives: data
//! layout belongs to the caller.

use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use crossbeam_utils::CachePadded;
use numakit_placement::{current_cpu, PlacementError};
use numakit_pool::{Pool, WorkerContext};
use numakit_topology::NodeId;
use serde::Serialize;

use crate::data::layout_of;
use crate::error::{Result, ShuffleError};
use crate::schedule::{Layout, Schedule, Strategy, SyncMode};

/// How to run an exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Exchange {
    /// The order in which consumers visit producers (and whether they migrate).
    pub strategy: Strategy,
    /// A barrier after every step (tight) or none (loose).
    pub sync: SyncMode,
    /// Seed of the random schedule.
    pub seed: u64,
}

impl Exchange {
    /// An exchange with this schedule and synchronization, and seed 42.
    pub fn new(strategy: Strategy, sync: SyncMode) -> Self {
        Self {
            strategy,
            sync,
            seed: 42,
        }
    }
}

impl Default for Exchange {
    /// The coordinated ring, tight: the best non-migrating schedule on
    /// every machine the simulator knows.
    fn default() -> Self {
        Self::new(Strategy::Ring, SyncMode::Tight)
    }
}

/// One visit of a consumer to a producer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Visit {
    /// The step of the schedule, from 0 to N - 1 (the last visit has N - 1).
    pub step: usize,
    /// The producer visited (a worker index), each exactly once per consumer.
    pub producer: usize,
    /// The node the consumer runs on for this visit.
    pub node: NodeId,
    /// True when the consumer was just moved to `node` (migrating
    /// schedules only): the moment to carry state along.
    pub moved: bool,
}

/// What an exchange measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ExchangeReport {
    /// Wall-clock time of the phase in seconds (workers already woken;
    /// pinning home after a migrating phase excluded).
    pub seconds: f64,
    /// Visits in which a pinned consumer was observed (getcpu) on another
    /// node than the schedule put it on: 0 when placement works.
    pub misplaced_visits: u64,
}

struct Slot<S> {
    state: S,
    at: usize,
    misplaced: u64,
    error: Option<PlacementError>,
}

/// The schedule an exchange on `pool` follows. Pools with the same number
/// of workers on every node get the schedule of their layout; others get
/// a rotation over all workers (the ring of a one-socket layout), which is
/// refused for migrating strategies.
pub fn schedule_for(pool: &Pool, ex: &Exchange) -> Result<Schedule> {
    let layout = match layout_of(pool) {
        Ok(layout) => layout,
        Err(ShuffleError::UnevenWorkers(counts)) if !ex.strategy.migrates() => {
            let _ = counts;
            Layout::new(1, pool.workers())
        }
        Err(e) => return Err(e),
    };
    Ok(Schedule::build(layout, ex.strategy, ex.seed))
}

/// Runs `ex` on `pool`. `states[c]` is consumer c's state (one per
/// worker); `visit` is called once per (consumer, producer) pair in
/// schedule order. Returns the states and what was measured.
pub fn exchange<S, F>(
    pool: &Pool,
    ex: &Exchange,
    states: Vec<S>,
    visit: F,
) -> Result<(Vec<S>, ExchangeReport)>
where
    S: Send,
    F: Fn(&WorkerContext, &mut S, Visit) + std::marker::Sync,
{
    if states.len() != pool.workers() {
        return Err(ShuffleError::LayoutMismatch {
            expected: states.len(),
            actual: pool.workers(),
        });
    }
    let schedule = schedule_for(pool, ex)?;
    let nodes = pool.nodes();
    let slots = slots_for(states, &pool.worker_contexts());
    let step = |ctx: &WorkerContext, k: usize| {
        let mut slot = slots[ctx.index]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let access = schedule.access(k, ctx.index);
        let run_on = if ex.strategy.migrates() {
            access.run_on
        } else {
            ctx.node_index
        };
        let moved = ex.strategy.migrates() && slot.at != run_on;
        if moved {
            let pinned = pool.placer().pin_to_node(nodes[run_on]).map(drop);
            record(&mut slot, pinned);
            slot.at = run_on;
        }
        if ctx.cpu.is_some() {
            check_node(nodes[run_on], &mut slot);
        }
        let v = Visit {
            step: k,
            producer: access.producer,
            node: nodes[run_on],
            moved,
        };
        visit(ctx, &mut slot.state, v);
    };
    wake(pool)?;
    let start = Instant::now();
    let phase = match ex.sync {
        SyncMode::Tight => pool.run_lockstep(schedule.len(), step),
        SyncMode::Loose => pool.run_loose(schedule.len(), step),
    };
    let seconds = start.elapsed().as_secs_f64();
    if ex.strategy.migrates() {
        // Every worker goes home, also when the phase failed half-way.
        pin_workers_home(pool)?;
    }
    phase?;
    gather(slots, seconds)
}

/// One slot per consumer, starting on its worker's node.
fn slots_for<S>(states: Vec<S>, contexts: &[WorkerContext]) -> Vec<CachePadded<Mutex<Slot<S>>>> {
    states
        .into_iter()
        .zip(contexts)
        .map(|(state, ctx)| {
            CachePadded::new(Mutex::new(Slot {
                state,
                at: ctx.node_index,
                misplaced: 0,
                error: None,
            }))
        })
        .collect()
}

/// The consumers' states and what was measured, or the first placement
/// error a consumer met.
fn gather<S>(
    slots: Vec<CachePadded<Mutex<Slot<S>>>>,
    seconds: f64,
) -> Result<(Vec<S>, ExchangeReport)> {
    let mut states = Vec::with_capacity(slots.len());
    let mut report = ExchangeReport {
        seconds,
        misplaced_visits: 0,
    };
    for slot in slots {
        let slot = CachePadded::into_inner(slot)
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = slot.error {
            return Err(e.into());
        }
        report.misplaced_visits += slot.misplaced;
        states.push(slot.state);
    }
    Ok((states, report))
}

/// An empty broadcast just before a timed phase, so that the time excludes
/// waking idle workers (on virtual machines a halted vCPU can take far
/// longer to wake than a short phase lasts, which biased whichever method
/// ran first by up to 20%).
pub(crate) fn wake(pool: &Pool) -> Result<()> {
    pool.broadcast(|_| ())?;
    Ok(())
}

/// Pins every worker back to its own CPU after a migrating phase.
pub fn pin_workers_home(pool: &Pool) -> Result<()> {
    let pinned = pool.broadcast(|ctx| match ctx.cpu {
        Some(cpu) => pool.placer().pin_to_cpu(cpu).map(drop),
        None => Ok(()),
    })?;
    pinned.into_iter().collect::<std::result::Result<(), _>>()?;
    Ok(())
}

/// Counts a visit in which the consumer does not run on the node the
/// schedule says (a pin that did not take, or placement turned off).
fn check_node<S>(want: NodeId, slot: &mut Slot<S>) {
    match current_cpu() {
        Ok((_, node)) if node != want => slot.misplaced += 1,
        Ok(_) => {}
        Err(e) => record(slot, Err(e)),
    }
}

fn record<S>(slot: &mut Slot<S>, result: std::result::Result<(), PlacementError>) {
    if let Err(e) = result {
        slot.error.get_or_insert(e);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use numakit_placement::PlacementMode;
    use numakit_pool::PoolBuilder;

    use super::*;

    fn pool(threads: usize) -> Pool {
        let topo = Arc::new(numakit_topology::discover().expect("topology"));
        PoolBuilder::new(topo)
            .threads(threads)
            .placement(PlacementMode::BestEffort)
            .build()
            .expect("pool")
    }

    #[test]
    fn every_consumer_visits_every_producer_once() {
        let pool = pool(2);
        for strategy in [
            Strategy::Naive,
            Strategy::Ring,
            Strategy::Random,
            Strategy::Migration,
            Strategy::MigrationCopy,
        ] {
            for sync in [SyncMode::Tight, SyncMode::Loose] {
                let ex = Exchange::new(strategy, sync);
                let states = vec![Vec::new(); pool.workers()];
                let (states, report) = exchange(&pool, &ex, states, |_, seen, v| {
                    seen.push(v.producer);
                })
                .expect("exchange");
                assert_eq!(report.misplaced_visits, 0);
                for mut seen in states {
                    seen.sort_unstable();
                    assert_eq!(seen, (0..pool.workers()).collect::<Vec<_>>());
                }
            }
        }
    }

    #[test]
    fn wrong_number_of_states_is_refused() {
        let pool = pool(2);
        let err = exchange(&pool, &Exchange::default(), vec![(); 3], |_, _, _| {});
        assert!(matches!(err, Err(ShuffleError::LayoutMismatch { .. })));
    }
}
