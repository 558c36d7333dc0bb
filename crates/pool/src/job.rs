//! Jobs as the queues hold them, and the one unsafe step of scoped spawning.
//!
//! A scope lets tasks borrow from the caller's stack, but the queues are
//! shared with long-lived worker threads and so hold `'static` closures.
//! [`erase_lifetime`] bridges the two; the scope upholds its contract by
//! waiting for every job it spawned before it returns or unwinds.

use std::sync::Arc;

use crate::completion::ScopeState;
use crate::context::WorkerContext;

/// A queued unit of work.
pub(crate) type JobFn = Box<dyn FnOnce(&WorkerContext) + Send + 'static>;

/// A job and the scope to tell when it is done. The worker records its
/// statistics between the two, so a scope that has returned has all of its
/// tasks counted.
pub(crate) struct Job {
    pub(crate) run: JobFn,
    pub(crate) scope: Arc<ScopeState>,
}

/// Extends a job's lifetime to `'static` so that it can be queued.
///
/// # Safety
/// The caller must guarantee that the job has run to completion (or been
/// dropped) before anything it borrows for `'env` goes away.
pub(crate) unsafe fn erase_lifetime<'env>(
    job: Box<dyn FnOnce(&WorkerContext) + Send + 'env>,
) -> JobFn {
    // SAFETY: only the lifetime bound of the trait object changes; layout
    // is identical. The caller (`Scope`) waits for the job before `'env`
    // ends, so the extended lifetime is never actually relied upon.
    unsafe { std::mem::transmute::<Box<dyn FnOnce(&WorkerContext) + Send + 'env>, JobFn>(job) }
}
