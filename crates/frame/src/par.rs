//! Running per-part work on the pool: each worker handles the parts it
//! owns (their memory is on its node), and the results come back in part
//! order. Nothing here knows what a part holds.

use std::sync::Mutex;

use numakit_pool::Pool;

use crate::error::{FrameError, Result};

/// Runs `f(part)` for every part, on the worker `worker_of(part)` names
/// (taken modulo the pool's size); the results in part order.
pub(crate) fn per_part<R, F>(
    pool: &Pool,
    parts: usize,
    worker_of: impl Fn(usize) -> usize + Sync,
    f: F,
) -> Result<Vec<R>>
where
    R: Send,
    F: Fn(usize) -> R + Sync,
{
    let workers = pool.workers().max(1);
    let slots: Vec<Mutex<Option<R>>> = (0..parts).map(|_| Mutex::new(None)).collect();
    pool.broadcast(|ctx| {
        for part in (0..parts).filter(|&p| worker_of(p) % workers == ctx.index) {
            let r = f(part);
            if let Ok(mut slot) = slots[part].lock() {
                *slot = Some(r);
            }
        }
    })?;
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .ok()
                .flatten()
                .ok_or_else(|| FrameError::InvalidRequest("a part's work was lost".into()))
        })
        .collect()
}

/// Like [`per_part`] for fallible work: the first error wins.
pub(crate) fn try_per_part<R, F>(
    pool: &Pool,
    parts: usize,
    worker_of: impl Fn(usize) -> usize + Sync,
    f: F,
) -> Result<Vec<R>>
where
    R: Send,
    F: Fn(usize) -> Result<R> + Sync,
{
    per_part(pool, parts, worker_of, f)?.into_iter().collect()
}
