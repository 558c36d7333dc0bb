//! The completion state a scope shares with its queued jobs: how many are
//! still pending, the first panic, and the condition the scope's owner
//! waits on. Workers report to it after running a job; it schedules nothing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

use crate::context::WorkerContext;
use crate::error::{panic_message, PoolError};

#[derive(Default)]
pub(crate) struct ScopeState {
    pub(crate) pending: AtomicUsize,
    pub(crate) panic: Mutex<Option<PoolError>>,
    pub(crate) lock: Mutex<()>,
    pub(crate) all_done: Condvar,
}

impl ScopeState {
    pub(crate) fn finish_one(&self) {
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
            self.all_done.notify_all();
        }
    }

    pub(crate) fn record_panic(&self, ctx: &WorkerContext, payload: &(dyn std::any::Any + Send)) {
        let mut slot = self.panic.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(PoolError::TaskPanicked {
                worker: ctx.index,
                node: ctx.node,
                message: panic_message(payload),
            });
        }
    }
}
