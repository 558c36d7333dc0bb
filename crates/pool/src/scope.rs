//! Scoped task submission: spawn tasks that borrow from the caller, with a
//! home node each, and wait for all of them.
//!
//! [`Pool::scope`] returns only when every task spawned in it has finished,
//! even if the scope body or a task panics; that is what makes borrowing
//! sound. A task's panic is caught on the worker, the pool stays usable,
//! and the scope returns [`crate::PoolError::TaskPanicked`]. A scope opened
//! from inside a task helps run queued work while it waits, so nesting
//! cannot deadlock the pool.

use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use numakit_topology::NodeId;

use crate::completion::ScopeState;
use crate::context::WorkerContext;
use crate::error::Result;
use crate::job::{erase_lifetime, Job};
use crate::pool::Pool;

/// A handle for spawning tasks that may borrow data living for `'env`.
pub struct Scope<'pool, 'env> {
    pool: &'pool Pool,
    state: Arc<ScopeState>,
    _env: PhantomData<&'env mut &'env ()>,
}

impl<'env> Scope<'_, 'env> {
    /// Spawns a task whose data lives on `node`: it is queued at that node
    /// (or the nearest node with workers) and stolen by others only when
    /// their own queues are empty.
    pub fn spawn_on<F>(&self, node: NodeId, task: F) -> Result<()>
    where
        F: FnOnce(&WorkerContext) + Send + 'env,
    {
        let index = self.pool.shared.route(node)?;
        let job = self.wrap(task);
        self.pool.shared.push_node(index, job);
        Ok(())
    }

    /// Spawns a task without a home node (spread round-robin over nodes).
    pub fn spawn<F>(&self, task: F)
    where
        F: FnOnce(&WorkerContext) + Send + 'env,
    {
        let shared = &self.pool.shared;
        let index = match shared.current_worker() {
            Some(w) => shared.workers[w].ctx.node_index,
            None => shared.any_node(),
        };
        let job = self.wrap(task);
        shared.push_node(index, job);
    }

    /// Spawns a task that only worker `worker` may run.
    pub(crate) fn spawn_on_worker<F>(&self, worker: usize, task: F)
    where
        F: FnOnce(&WorkerContext) + Send + 'env,
    {
        let job = self.wrap(task);
        self.pool.shared.push_worker(worker, job);
    }

    fn wrap<F>(&self, task: F) -> Job
    where
        F: FnOnce(&WorkerContext) + Send + 'env,
    {
        self.state.pending.fetch_add(1, Ordering::AcqRel);
        let state = self.state.clone();
        let run = move |ctx: &WorkerContext| {
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| task(ctx))) {
                state.record_panic(ctx, payload.as_ref());
            }
        };
        // SAFETY: `Pool::scope` waits until `pending` is zero, i.e. until
        // this job has run (the worker calls `finish_one` after `run`
        // returned), before the scope (and so `'env`) can end.
        let run = unsafe { erase_lifetime(Box::new(run)) };
        Job {
            run,
            scope: self.state.clone(),
        }
    }
}

impl Pool {
    /// Runs `body`, which may spawn tasks borrowing from the caller, and
    /// waits for all of them. Returns `body`'s value, or the first task
    /// panic as an error.
    pub fn scope<'env, R>(&self, body: impl FnOnce(&Scope<'_, 'env>) -> R) -> Result<R> {
        let scope = Scope {
            pool: self,
            state: Arc::new(ScopeState::default()),
            _env: PhantomData,
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| body(&scope)));
        self.wait_for(&scope.state);
        let value = outcome.unwrap_or_else(|payload| resume_unwind(payload));
        let panic = scope
            .state
            .panic
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match panic {
            Some(err) => Err(err),
            None => Ok(value),
        }
    }

    fn wait_for(&self, state: &ScopeState) {
        let shared = &self.shared;
        if let Some(me) = shared.current_worker() {
            while state.pending.load(Ordering::Acquire) > 0 {
                match shared.find_job(me) {
                    Some((job, stolen)) => shared.execute(me, job, stolen),
                    None => std::thread::yield_now(),
                }
            }
            return;
        }
        let mut guard = state.lock.lock().unwrap_or_else(PoisonError::into_inner);
        while state.pending.load(Ordering::Acquire) > 0 {
            guard = state
                .all_done
                .wait(guard)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}
