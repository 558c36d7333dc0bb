//! Phases that involve every worker: broadcast, lock-step ("tight") and
//! free-running ("loose") step sequences, the two shapes the shuffle paper
//! compares.
//!
//! A broadcast runs a closure once on each worker, on that worker's thread
//! and therefore on its node. In a lock-step phase all workers finish step
//! k before any starts step k+1; a panic in one worker breaks the barrier
//! so the others stop instead of waiting forever.

use std::sync::{Mutex, PoisonError};

use crate::barrier::{BreakOnUnwind, PhaseBarrier};
use crate::context::WorkerContext;
use crate::error::{PoolError, Result};
use crate::pool::Pool;

impl Pool {
    /// Runs `f` once on every worker; returns the results in worker order.
    pub fn broadcast<R, F>(&self, f: F) -> Result<Vec<R>>
    where
        R: Send,
        F: Fn(&WorkerContext) -> R + Sync,
    {
        if self.shared.current_worker().is_some() {
            return Err(PoolError::NestedBroadcast);
        }
        let _turn = self
            .shared
            .broadcast_turn
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let slots: Vec<Mutex<Option<R>>> = (0..self.workers()).map(|_| Mutex::new(None)).collect();
        self.scope(|scope| {
            for worker in 0..self.workers() {
                let (f, slots) = (&f, &slots);
                scope.spawn_on_worker(worker, move |ctx| {
                    let value = f(ctx);
                    *slots[ctx.index]
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) = Some(value);
                });
            }
        })?;
        Ok(slots
            .into_iter()
            .filter_map(|m| m.into_inner().unwrap_or_else(PoisonError::into_inner))
            .collect())
    }

    /// Runs `steps` steps on every worker in lock-step: a barrier after
    /// each step (the papers' "tight" variant).
    pub fn run_lockstep<F>(&self, steps: usize, f: F) -> Result<()>
    where
        F: Fn(&WorkerContext, usize) + Sync,
    {
        let barrier = PhaseBarrier::new(self.workers());
        self.broadcast(|ctx| {
            let _guard = BreakOnUnwind(&barrier);
            for step in 0..steps {
                f(ctx, step);
                if barrier.wait().is_err() {
                    return;
                }
            }
        })
        .map(drop)
    }

    /// Runs `steps` steps on every worker with no barrier between steps
    /// (the papers' "loose" variant).
    pub fn run_loose<F>(&self, steps: usize, f: F) -> Result<()>
    where
        F: Fn(&WorkerContext, usize) + Sync,
    {
        self.broadcast(|ctx| (0..steps).for_each(|step| f(ctx, step)))
            .map(drop)
    }
}
