//! [`Relation`]: tuples held in one node-placed chunk per pool worker.
//!
//! Worker w's chunk lives on w's node, so a worker that scans its own
//! chunk reads local memory, and an operator can tell for every tuple
//! where it lies. Chunks are filled by their own worker (the first touch
//! happens on the right node even without a memory policy). A relation
//! belongs to the pool it was made for: operators refuse one made for a
//! different number of workers. A relation an operator made of buffers
//! from [`crate::recycle`] (the sort's output) gives them back there when
//! dropped, so that the next run reuses its memory.
//!
//! This module does not generate or load data ([`crate::datagen`] and the
//! I/O layer do) and does not sort or partition it.

use numakit_placement::{BufferOptions, NodeBuffer, Placement};
use numakit_pool::{NodeSlice, Pool};
use numakit_topology::NodeId;

use crate::error::{OpsError, Result};
use crate::par::{even_ranges, per_worker_mut};
use crate::recycle;
use crate::tuple::{Tuple, TUPLE_BYTES};

/// One worker's part of a relation.
pub struct Chunk {
    /// The node the chunk's memory is on (its worker's node).
    pub node: NodeId,
    /// Index of the worker the chunk belongs to.
    pub worker: usize,
    pub tuples: NodeBuffer<Tuple>,
}

impl Chunk {
    /// An uninitialised (zeroed) chunk of `len` tuples bound to `node`;
    /// its pages are touched by whoever writes it first.
    pub fn alloc(pool: &Pool, worker: usize, node: NodeId, len: usize) -> Result<Self> {
        let mut options = BufferOptions::new(Placement::OnNode(node));
        options.prefault = false;
        Ok(Self {
            node,
            worker,
            tuples: NodeBuffer::with_options(pool.placer(), len, options)?,
        })
    }
}

impl std::fmt::Debug for Chunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chunk")
            .field("node", &self.node)
            .field("worker", &self.worker)
            .field("len", &self.tuples.len())
            .finish()
    }
}

/// Tuples spread over the workers of a pool, one chunk per worker.
#[derive(Debug)]
pub struct Relation {
    chunks: Vec<Chunk>,
    /// Whether dropping the relation gives its buffers to [`recycle`].
    recycled: bool,
}

impl Relation {
    /// A relation of the given chunks (one per worker, in worker order).
    pub fn from_chunks(chunks: Vec<Chunk>) -> Self {
        Self {
            chunks,
            recycled: false,
        }
    }

    /// Like [`Relation::from_chunks`], for chunks whose buffers go back to
    /// [`recycle`] when the relation is dropped.
    pub(crate) fn from_recycled_chunks(chunks: Vec<Chunk>) -> Self {
        Self {
            chunks,
            recycled: true,
        }
    }

    /// `len` tuples where tuple i is `f(i)`, split evenly over the pool's
    /// workers in order and written by each chunk's own worker. The
    /// content depends only on `f`, not on the number of workers.
    pub fn from_fn<F>(pool: &Pool, len: usize, f: F) -> Result<Self>
    where
        F: Fn(usize) -> Tuple + Sync,
    {
        Self::from_segments(pool, len, |start, out| {
            for (i, t) in out.iter_mut().enumerate() {
                *t = f(start + i);
            }
        })
    }

    /// Like [`Relation::from_fn`], but `fill(start, out)` writes the
    /// tuples `start..start + out.len()` at once.
    pub fn from_segments<F>(pool: &Pool, len: usize, fill: F) -> Result<Self>
    where
        F: Fn(usize, &mut [Tuple]) + Sync,
    {
        let ranges = even_ranges(len, pool.workers());
        let mut chunks = pool
            .worker_contexts()
            .iter()
            .zip(&ranges)
            .map(|(ctx, r)| Chunk::alloc(pool, ctx.index, ctx.node, r.len()))
            .collect::<Result<Vec<_>>>()?;
        per_worker_mut(pool, &mut chunks, |ctx, chunk| {
            fill(ranges[ctx.index].start, &mut chunk.tuples);
        })?;
        Ok(Self::from_chunks(chunks))
    }

    /// The tuples of `rows`, split evenly over the pool's workers.
    pub fn from_tuples(pool: &Pool, rows: &[Tuple]) -> Result<Self> {
        Self::from_segments(pool, rows.len(), |start, out| {
            out.copy_from_slice(&rows[start..start + out.len()]);
        })
    }

    /// Number of tuples.
    pub fn len(&self) -> usize {
        self.chunks.iter().map(|c| c.tuples.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Size of the tuples in bytes.
    pub fn bytes(&self) -> u64 {
        (self.len() * TUPLE_BYTES) as u64
    }

    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    pub fn chunks_mut(&mut self) -> &mut [Chunk] {
        &mut self.chunks
    }

    /// The chunks, which no longer go back to [`recycle`] when dropped.
    pub fn into_chunks(mut self) -> Vec<Chunk> {
        std::mem::take(&mut self.chunks)
    }

    /// The chunks as node-tagged slices, for morsel-driven scans.
    pub fn node_slices(&self) -> Vec<NodeSlice<'_, Tuple>> {
        self.chunks
            .iter()
            .map(|c| NodeSlice {
                node: c.node,
                data: &c.tuples,
            })
            .collect()
    }

    /// All tuples, chunk after chunk, in one vector.
    pub fn to_vec(&self) -> Vec<Tuple> {
        let mut out = Vec::with_capacity(self.len());
        for c in &self.chunks {
            out.extend_from_slice(&c.tuples);
        }
        out
    }

    /// Fails unless the relation has one chunk per worker of `pool`.
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

impl Drop for Relation {
    fn drop(&mut self) {
        if self.recycled {
            for chunk in self.chunks.drain(..) {
                recycle::give_back(chunk.node, chunk.tuples);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pool;

    #[test]
    fn from_fn_does_not_depend_on_the_worker_count() {
        for threads in [1, 2] {
            let pool = pool(threads);
            let r = Relation::from_fn(&pool, 1001, |i| Tuple::new(i as u64 * 3, i as u64)).unwrap();
            assert_eq!(r.chunks().len(), pool.workers());
            assert_eq!(r.len(), 1001);
            let v = r.to_vec();
            assert!(v.iter().enumerate().all(|(i, t)| t.key == i as u64 * 3));
            r.check_pool(&pool).unwrap();
        }
    }

    #[test]
    fn empty_and_tiny_relations_work() {
        let pool = pool(2);
        let r = Relation::from_tuples(&pool, &[]).unwrap();
        assert!(r.is_empty());
        let r = Relation::from_tuples(&pool, &[Tuple::new(u64::MAX, 0)]).unwrap();
        assert_eq!(r.to_vec(), vec![Tuple::new(u64::MAX, 0)]);
        assert_eq!(
            r.chunks().iter().filter(|c| c.tuples.is_empty()).count(),
            pool.workers() - 1
        );
    }

    #[test]
    fn chunks_live_on_their_workers_nodes() {
        let pool = pool(2);
        let r = Relation::from_fn(&pool, 1 << 16, |i| Tuple::new(i as u64, 0)).unwrap();
        for c in r.chunks() {
            let pages = c.tuples.pages_per_node().unwrap();
            assert!(pages.keys().all(|&n| n == c.node), "{pages:?}");
        }
        assert!(matches!(
            r.check_pool(&pool_of_one()),
            Err(OpsError::WorkerMismatch { .. })
        ));
    }

    fn pool_of_one() -> Pool {
        pool(1)
    }
}
