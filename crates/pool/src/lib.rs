//! # numakit-pool
//!
//! A NUMA-aware worker pool. One worker per allowed CPU by default, pinned,
//! grouped by node. Every node has a task queue: a worker takes its own
//! node's tasks first and steals from other nodes nearest first. Tasks
//! carry a home node ([`Scope::spawn_on`]); [`Pool::for_each_morsel`] cuts
//! node-placed data into morsels queued at their home. Phases can run in
//! lock-step ([`Pool::run_lockstep`], a barrier per step) or free-running
//! ([`Pool::run_loose`]). The pool is built once and reused across phases
//! and jobs; a panicking task comes back as [`PoolError::TaskPanicked`] and
//! leaves the pool usable. Per-worker statistics count local and stolen
//! tasks and busy time.
//!
//! Layers above keep runtime state that belongs to one pool (a buffer
//! cache, a measurement) in the pool itself, one value per type, made on
//! first use and dropped with the pool ([`Pool::state`]).
//!
//! The pool schedules; it does not place data (that is
//! `numakit-placement`) and knows no operator.

mod barrier;
mod builder;
pub mod checks;
mod completion;
mod context;
mod error;
mod job;
pub mod morsel;
mod phases;
mod pool;
#[cfg(test)]
mod scheduling_tests;
mod scope;
mod sleep;
mod state;
pub mod stats;

pub use barrier::{Broken, PhaseBarrier};
pub use builder::{PoolBuilder, MAX_THREADS_PER_CPU};
pub use context::WorkerContext;
pub use error::{PoolError, Result};
pub use morsel::{Morsel, NodeSlice};
pub use pool::Pool;
pub use scope::Scope;
pub use stats::{NodeStats, WorkerStats};
