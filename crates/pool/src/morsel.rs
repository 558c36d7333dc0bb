//! Morsels: node-placed data cut into small tasks queued at their home node.
//!
//! Morsel-driven parallelism (Leis et al.) keeps every worker busy and most
//! reads local: data that lives on node k is cut into morsels queued at k,
//! taken first by k's workers and stolen by the nearest idle ones. This
//! module only cuts and schedules; what is done with a morsel is the
//! caller's closure.

use std::sync::{Mutex, PoisonError};

use crossbeam_utils::CachePadded;
use numakit_topology::NodeId;

use crate::context::WorkerContext;
use crate::error::Result;
use crate::pool::Pool;

/// A slice of data and the node its memory lives on.
#[derive(Clone, Copy, Debug)]
pub struct NodeSlice<'a, T> {
    /// The node the data's memory is on: its morsels are queued there.
    pub node: NodeId,
    /// The data itself.
    pub data: &'a [T],
}

/// One morsel: a piece of one part.
#[derive(Clone, Copy, Debug)]
pub struct Morsel<'a, T> {
    /// Home node of the data.
    pub node: NodeId,
    /// Which part (index into the parts given).
    pub part: usize,
    /// Offset of the morsel within its part, in elements.
    pub offset: usize,
    /// The morsel's elements: `parts[part].data[offset..offset + data.len()]`.
    pub data: &'a [T],
}

/// Cuts every part into morsels of at most `morsel_len` elements.
pub fn split<'a, T>(parts: &[NodeSlice<'a, T>], morsel_len: usize) -> Vec<Morsel<'a, T>> {
    let len = morsel_len.max(1);
    parts
        .iter()
        .enumerate()
        .flat_map(|(part, p)| {
            p.data.chunks(len).enumerate().map(move |(i, data)| Morsel {
                node: p.node,
                part,
                offset: i * len,
                data,
            })
        })
        .collect()
}

impl Pool {
    /// Runs `f` on every morsel of `parts`, each queued at its home node.
    pub fn for_each_morsel<T, F>(
        &self,
        parts: &[NodeSlice<'_, T>],
        morsel_len: usize,
        f: F,
    ) -> Result<()>
    where
        T: Sync,
        F: Fn(&WorkerContext, Morsel<'_, T>) + Sync,
    {
        let morsels = split(parts, morsel_len);
        self.scope(|scope| {
            for morsel in morsels {
                let f = &f;
                scope.spawn_on(morsel.node, move |ctx| f(ctx, morsel))?;
            }
            Ok(())
        })?
    }

    /// Folds every morsel into one accumulator per worker (no locking
    /// between workers) and returns the accumulators of the workers that
    /// ran at least one morsel.
    pub fn fold_morsels<T, A, I, F>(
        &self,
        parts: &[NodeSlice<'_, T>],
        morsel_len: usize,
        init: I,
        fold: F,
    ) -> Result<Vec<A>>
    where
        T: Sync,
        A: Send,
        I: Fn() -> A + Sync,
        F: Fn(A, &WorkerContext, Morsel<'_, T>) -> A + Sync,
    {
        let slots: Vec<CachePadded<Mutex<Option<A>>>> = (0..self.workers())
            .map(|_| CachePadded::new(Mutex::new(None)))
            .collect();
        self.for_each_morsel(parts, morsel_len, |ctx, morsel| {
            let mut slot = slots[ctx.index]
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let acc = slot.take().unwrap_or_else(&init);
            *slot = Some(fold(acc, ctx, morsel));
        })?;
        Ok(slots
            .into_iter()
            .filter_map(|s| {
                CachePadded::into_inner(s)
                    .into_inner()
                    .unwrap_or_else(PoisonError::into_inner)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_covers_every_element_once() {
        let a: Vec<u32> = (0..10).collect();
        let b: Vec<u32> = (10..13).collect();
        let parts = [
            NodeSlice { node: 0, data: &a },
            NodeSlice { node: 1, data: &b },
        ];
        let morsels = split(&parts, 4);
        assert_eq!(morsels.len(), 4);
        let all: Vec<u32> = morsels
            .iter()
            .flat_map(|m| m.data.iter().copied())
            .collect();
        assert_eq!(all, (0..13).collect::<Vec<_>>());
        assert_eq!(morsels[2].offset, 8);
        assert_eq!(morsels[3].node, 1);
        assert!(split::<u32>(&[], 4).is_empty());
        assert_eq!(
            split(&parts, 0).len(),
            13,
            "a zero length means one element per morsel"
        );
    }
}
