//! [`KeyColumn`]: plain 64-bit keys in one node-placed chunk per pool
//! worker, the input and output of the keys-only sort (sorting a column of
//! int64 without payload).
//!
//! It mirrors [`Relation`](crate::relation::Relation) for `u64` instead of
//! [`Tuple`](crate::tuple::Tuple): chunk w lives on worker w's node and is
//! filled by worker w; a sorted column gives its buffers back to
//! [`crate::recycle`] when dropped, as a sorted relation does. This module
//! does not read files or map signed values (see
//! [`super::i64_to_ordered_u64`]).

use numakit_placement::{BufferOptions, NodeBuffer, Placement};
use numakit_pool::Pool;
use numakit_topology::NodeId;

use crate::error::{OpsError, Result};
use crate::par::{even_ranges, per_worker_mut};
use crate::recycle;

/// One worker's keys.
pub struct KeyChunk {
    /// The node the chunk's memory is on (its worker's node).
    pub node: NodeId,
    /// Index of the worker the chunk belongs to.
    pub worker: usize,
    pub keys: NodeBuffer<u64>,
}

impl KeyChunk {
    /// An untouched (zero) chunk of `len` keys bound to `node`.
    pub fn alloc(pool: &Pool, worker: usize, node: NodeId, len: usize) -> Result<Self> {
        let mut options = BufferOptions::new(Placement::OnNode(node));
        options.prefault = false;
        Ok(Self {
            node,
            worker,
            keys: NodeBuffer::with_options(pool.placer(), len, options)?,
        })
    }
}

impl std::fmt::Debug for KeyChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyChunk")
            .field("node", &self.node)
            .field("worker", &self.worker)
            .field("len", &self.keys.len())
            .finish()
    }
}

/// Keys spread over the workers of a pool, one chunk per worker.
#[derive(Debug)]
pub struct KeyColumn {
    chunks: Vec<KeyChunk>,
    /// Whether dropping the column gives its buffers to [`recycle`].
    recycled: bool,
}

impl KeyColumn {
    /// A column of the given chunks (one per worker, in worker order).
    pub fn from_chunks(chunks: Vec<KeyChunk>) -> Self {
        Self {
            chunks,
            recycled: false,
        }
    }

    /// Like [`KeyColumn::from_chunks`], for chunks whose buffers go back
    /// to [`recycle`] when the column is dropped.
    pub(crate) fn from_recycled_chunks(chunks: Vec<KeyChunk>) -> Self {
        Self {
            chunks,
            recycled: true,
        }
    }

    /// `len` keys split evenly over the pool's workers in order;
    /// `fill(start, out)` writes keys `start..start + out.len()` on the
    /// chunk's own worker.
    pub fn from_segments<F>(pool: &Pool, len: usize, fill: F) -> Result<Self>
    where
        F: Fn(usize, &mut [u64]) + Sync,
    {
        let ranges = even_ranges(len, pool.workers());
        let mut chunks = pool
            .worker_contexts()
            .iter()
            .zip(&ranges)
            .map(|(ctx, r)| KeyChunk::alloc(pool, ctx.index, ctx.node, r.len()))
            .collect::<Result<Vec<_>>>()?;
        per_worker_mut(pool, &mut chunks, |ctx, chunk| {
            fill(ranges[ctx.index].start, &mut chunk.keys);
        })?;
        Ok(Self::from_chunks(chunks))
    }

    /// `len` keys where key i is `f(i)`.
    pub fn from_fn<F>(pool: &Pool, len: usize, f: F) -> Result<Self>
    where
        F: Fn(usize) -> u64 + Sync,
    {
        Self::from_segments(pool, len, |start, out| {
            for (i, k) in out.iter_mut().enumerate() {
                *k = f(start + i);
            }
        })
    }

    /// The keys of `keys`, split evenly over the pool's workers.
    pub fn from_keys(pool: &Pool, keys: &[u64]) -> Result<Self> {
        Self::from_segments(pool, keys.len(), |start, out| {
            out.copy_from_slice(&keys[start..start + out.len()]);
        })
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.chunks.iter().map(|c| c.keys.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn chunks(&self) -> &[KeyChunk] {
        &self.chunks
    }

    pub fn chunks_mut(&mut self) -> &mut [KeyChunk] {
        &mut self.chunks
    }

    /// The chunks, which no longer go back to [`recycle`] when dropped.
    pub fn into_chunks(mut self) -> Vec<KeyChunk> {
        std::mem::take(&mut self.chunks)
    }

    /// All keys, chunk after chunk, in one vector.
    pub fn to_vec(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.len());
        for c in &self.chunks {
            out.extend_from_slice(&c.keys);
        }
        out
    }

    /// Fails unless the column has one chunk per worker of `pool`.
    pub fn check_pool(&self, pool: &Pool) -> Result<()> {
        if self.chunks.len() != pool.workers() {
            return Err(OpsError::WorkerMismatch {
                expected: self.chunks.len(),
                actual: pool.workers(),
            });
        }
        Ok(())
    }
}

impl Drop for KeyColumn {
    fn drop(&mut self) {
        if self.recycled {
            for chunk in self.chunks.drain(..) {
                recycle::give_back(chunk.node, chunk.keys);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pool;

    #[test]
    fn columns_split_evenly_and_keep_their_keys() {
        let pool = pool(2);
        let keys: Vec<u64> = (0..1001u64).map(|i| i * 7).collect();
        let col = KeyColumn::from_keys(&pool, &keys).unwrap();
        assert_eq!(col.chunks().len(), pool.workers());
        assert_eq!(col.to_vec(), keys);
        assert_eq!(col.len(), 1001);
        col.check_pool(&pool).unwrap();
        assert!(KeyColumn::from_fn(&pool, 0, |i| i as u64)
            .unwrap()
            .is_empty());
    }
}
