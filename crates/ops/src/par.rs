//! Small parallel patterns on the pool that every operator needs: give
//! each worker exclusive access to its own item, and split a length into
//! one contiguous range per worker.
//!
//! Nothing here knows about tuples or placement.

use std::ops::Range;
use std::sync::{Mutex, PoisonError};

use numakit_pool::{Pool, WorkerContext};

use crate::error::{OpsError, Result};

/// Runs `f(ctx, &mut items[ctx.index])` on every worker, on that worker's
/// thread (and so on its node). `items` has one entry per worker.
pub fn per_worker_mut<T, R, F>(pool: &Pool, items: &mut [T], f: F) -> Result<Vec<R>>
where
    T: Send,
    R: Send,
    F: Fn(&WorkerContext, &mut T) -> R + Sync,
{
    if items.len() != pool.workers() {
        return Err(OpsError::WorkerMismatch {
            expected: items.len(),
            actual: pool.workers(),
        });
    }
    let slots: Vec<Mutex<&mut T>> = items.iter_mut().map(Mutex::new).collect();
    Ok(pool.broadcast(|ctx| {
        let mut item = slots[ctx.index]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        f(ctx, &mut item)
    })?)
}

/// `len` split into `parts` contiguous ranges whose sizes differ by at
/// most one, in order.
pub fn even_ranges(len: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.max(1);
    let (base, extra) = (len / parts, len % parts);
    let mut start = 0;
    (0..parts)
        .map(|i| {
            let size = base + usize::from(i < extra);
            let r = start..start + size;
            start += size;
            r
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_ranges_cover_everything_in_order() {
        for (len, parts) in [(0, 3), (1, 3), (10, 3), (9, 3), (5, 1), (7, 0)] {
            let r = even_ranges(len, parts);
            assert_eq!(r.len(), parts.max(1));
            assert_eq!(r.first().map(|r| r.start), Some(0));
            assert_eq!(r.last().map(|r| r.end), Some(len));
            assert!(r.windows(2).all(|w| w[0].end == w[1].start));
            let sizes: Vec<_> = r.iter().map(|r| r.len()).collect();
            let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(max - min <= 1);
        }
    }
}
