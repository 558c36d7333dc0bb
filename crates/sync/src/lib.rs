//! # numakit-sync
//!
//! NUMA-aware locks and combining, as ordinary Rust locks: a guard that
//! unlocks when dropped, `Send`/`Sync` as `std::sync::Mutex` has them, and
//! no poisoning (a panic inside a critical section releases the lock and
//! leaves the data as the panicking code left it).
//!
//! - [`TicketLock`]: a plain FIFO ticket lock, the baseline.
//! - [`CohortLock`]: the cohort lock of Dice, Marathe and Shavit in its
//!   C-TKT-TKT form: a global ticket lock plus one ticket lock per node.
//!   The lock is handed to a waiter on the same node up to a bound before
//!   it goes to another node, so the protected data crosses the
//!   interconnect once per batch instead of once per acquisition.
//! - [`FlatCombiner`]: flat combining, where one thread (the combiner)
//!   applies the queued operations of the others.
//!
//! Every primitive counts its **handoffs between nodes** ([`LockStats`]):
//! acquisitions whose previous holder ran on another node, the figure that
//! does not depend on the hardware. The node of a thread comes from
//! [`node`]: set explicitly (pinned threads, or tests that simulate several
//! nodes on one), or asked of the kernel (`getcpu`) for unpinned threads.
//! [`bench`](mod@bench) measures them side by side with `std::sync::Mutex`.
//!
//! The only unsafe code is in [`guarded`] (the cell behind the guard), and
//! under loom in [`primitives`] (the cell's `get_mut`). No threads are
//! pooled here and no memory is placed: the pool and placement layers do
//! that.
//!
//! The locks take their atomics, cell, thread-locals and spin-waits from
//! one internal module, [`primitives`], so that under `--cfg loom` the
//! model checker loom runs them under their possible interleavings (the
//! models, and their bounds, are in `tests/loom.rs`; `scripts/test` runs
//! them).

pub mod bench;
pub mod cohort;
pub mod combining;
pub mod error;
pub mod guarded;
pub mod handoffs;
pub mod node;
mod primitives;
pub mod ticket;
mod wait;

pub use cohort::{CohortLock, RawCohort, DEFAULT_COHORT_BOUND};
pub use combining::{CombinerStats, FlatCombiner};
pub use error::SyncError;
pub use guarded::{Lock, LockGuard, RawLock};
pub use handoffs::LockStats;
pub use node::{set_thread_node, thread_node};
pub use ticket::{RawTicket, TicketLock};
