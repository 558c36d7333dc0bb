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

/// Like [`try_per_part`], handing each of `items` by value to `f(index,
/// item)` on the worker `index` names (modulo the pool's size), so each
/// item is freed as soon as its work is done rather than when all is.
pub(crate) fn try_per_item<T, R, F>(pool: &Pool, items: Vec<T>, f: F) -> Result<Vec<R>>
where
    T: Send,
    R: Send,
    F: Fn(usize, T) -> Result<R> + Sync,
{
    let count = items.len();
    let cells: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    try_per_part(
        pool,
        count,
        |i| i,
        |i| {
            let item = cells[i]
                .lock()
                .ok()
                .and_then(|mut c| c.take())
                .ok_or_else(|| FrameError::InvalidRequest("an item's work was lost".into()))?;
            f(i, item)
        },
    )
}
