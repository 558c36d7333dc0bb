//! [`Relation`]: tuples held in one node-placed chunk per pool worker, and
//! [`Chunked`], the container it is made of (shared with the keys-only
//! sort's [`KeyColumn`](crate::sort::KeyColumn)).
//!
//! Worker w's chunk lives on w's node, so a worker that scans its own
//! chunk reads local memory, and an operator can tell for every value
//! where it lies. Chunks are filled by their own worker (the first touch
//! happens on the right node even without a memory policy). A container
//! belongs to the pool it was made for: operators refuse one made for a
//! different number of workers. A container an operator made of buffers
//! from [`crate::recycle`] (the sort's output) gives them back there when
//! dropped, so that the next run reuses its memory.
//!
//! [`Chunked`] is generic over its chunk type ([`NodeChunk`]): [`Chunk`]
//! holds tuples, [`KeyChunk`](crate::sort::KeyChunk) plain keys; the two
//! differ only in their element type and the name of their data field.
//!
//! This module does not generate or load data ([`crate::datagen`] and the
//! I/O layer do) and does not sort or partition it.

use std::fmt;
use std::sync::Arc;

use bytemuck::Pod;
use numakit_placement::{BufferOptions, HugePages, NodeBuffer, Placement};
use numakit_pool::{NodeSlice, Pool};
use numakit_topology::NodeId;

use crate::error::{OpsError, Result};
use crate::par::{even_ranges, per_worker_mut};
use crate::recycle;
use crate::tuple::Tuple;

/// One worker's part of a [`Chunked`] container: values on one node. The
/// accessors let the container handle any chunk type; users read the
/// chunk types' own fields.
pub trait NodeChunk: Send + Sized {
    /// What the chunk holds.
    type Item: Pod + Send + Sync;

    /// A chunk of `values` on `node`, belonging to worker `worker`.
    fn from_parts(worker: usize, node: NodeId, values: NodeBuffer<Self::Item>) -> Self;

    /// The node the chunk's memory is on (its worker's node).
    fn node(&self) -> NodeId;

    /// Index of the worker the chunk belongs to.
    fn worker(&self) -> usize;

    /// The chunk's values.
    fn values(&self) -> &NodeBuffer<Self::Item>;

    /// The chunk's values, mutably.
    fn values_mut(&mut self) -> &mut NodeBuffer<Self::Item>;

    /// The chunk's node and values.
    fn into_parts(self) -> (NodeId, NodeBuffer<Self::Item>);
}

/// An uninitialised (zeroed) chunk of `len` values bound to `node`; its
/// pages are touched by whoever writes it first.
///
/// A chunk of [`recycle::HUGE_PAGES_FROM_BYTES`] or more takes
/// transparent huge pages, as the partitioner's large buffers do: it is
/// still bound to `node` (the policy places every huge page), and filling
/// it costs one fault per 2 MiB instead of per 4 KiB. Measured on this
/// VM, fresh processes, 2 threads: the in-memory join of 4M x 64M keys
/// built its relations in 0.32-0.41 s instead of 0.69-0.83 s, and the
/// group-by of 2^24 keys its tuples in 0.21 s instead of 0.56-0.67 s
/// (and freed them in no time instead of 0.12 s).
pub(crate) fn alloc_chunk<C: NodeChunk>(
    pool: &Pool,
    worker: usize,
    node: NodeId,
    len: usize,
) -> Result<C> {
    let mut options = BufferOptions::new(Placement::OnNode(node));
    options.prefault = false;
    let bytes = len.saturating_mul(std::mem::size_of::<C::Item>());
    if bytes >= recycle::HUGE_PAGES_FROM_BYTES {
        options.huge_pages = HugePages::Transparent;
    }
    let values = NodeBuffer::with_options(pool.placer(), len, options)?;
    Ok(C::from_parts(worker, node, values))
}

/// A chunk's `Debug` form: its node, worker and length (not its values).
pub(crate) fn fmt_chunk<C: NodeChunk>(
    name: &str,
    chunk: &C,
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    f.debug_struct(name)
        .field("node", &chunk.node())
        .field("worker", &chunk.worker())
        .field("len", &chunk.values().len())
        .finish()
}

/// One worker's part of a relation.
pub struct Chunk {
    /// The node the chunk's memory is on (its worker's node).
    pub node: NodeId,
    /// Index of the worker the chunk belongs to.
    pub worker: usize,
    /// The chunk's tuples, in no particular order unless an operator
    /// says so (the sort's output is sorted chunk after chunk).
    pub tuples: NodeBuffer<Tuple>,
}

impl Chunk {
    /// An uninitialised (zeroed) chunk of `len` tuples bound to `node`;
    /// its pages are touched by whoever writes it first.
    pub fn alloc(pool: &Pool, worker: usize, node: NodeId, len: usize) -> Result<Self> {
        alloc_chunk(pool, worker, node, len)
    }
}

impl NodeChunk for Chunk {
    type Item = Tuple;

    fn from_parts(worker: usize, node: NodeId, tuples: NodeBuffer<Tuple>) -> Self {
        Self {
            node,
            worker,
            tuples,
        }
    }

    fn node(&self) -> NodeId {
        self.node
    }

    fn worker(&self) -> usize {
        self.worker
    }

    fn values(&self) -> &NodeBuffer<Tuple> {
        &self.tuples
    }

    fn values_mut(&mut self) -> &mut NodeBuffer<Tuple> {
        &mut self.tuples
    }

    fn into_parts(self) -> (NodeId, NodeBuffer<Tuple>) {
        (self.node, self.tuples)
    }
}

impl fmt::Debug for Chunk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_chunk("Chunk", self, f)
    }
}

/// Values spread over the workers of a pool, one chunk per worker, in
/// worker order. [`Relation`] holds tuples,
/// [`KeyColumn`](crate::sort::KeyColumn) plain keys.
#[derive(Debug)]
pub struct Chunked<C: NodeChunk> {
    chunks: Vec<C>,
    /// The pool's [`recycle::Recycler`] that dropping the container gives
    /// its buffers back to, if any.
    recycler: Option<Arc<recycle::Recycler>>,
}

/// Tuples spread over the workers of a pool, one chunk per worker.
pub type Relation = Chunked<Chunk>;

impl<C: NodeChunk> Chunked<C> {
    /// A container of the given chunks (one per worker, in worker order).
    pub fn from_chunks(chunks: Vec<C>) -> Self {
        Self {
            chunks,
            recycler: None,
        }
    }

    /// Like [`Chunked::from_chunks`], for chunks whose buffers go back to
    /// `recycler` when the container is dropped.
    pub(crate) fn from_recycled_chunks(chunks: Vec<C>, recycler: Arc<recycle::Recycler>) -> Self {
        Self {
            chunks,
            recycler: Some(recycler),
        }
    }

    /// `len` values where value i is `f(i)`, split evenly over the pool's
    /// workers in order and written by each chunk's own worker. The
    /// content depends only on `f`, not on the number of workers.
    pub fn from_fn<F>(pool: &Pool, len: usize, f: F) -> Result<Self>
    where
        F: Fn(usize) -> C::Item + Sync,
    {
        Self::from_segments(pool, len, |start, out| {
            for (i, v) in out.iter_mut().enumerate() {
                *v = f(start + i);
            }
        })
    }

    /// Like [`Chunked::from_fn`], but `fill(start, out)` writes the
    /// values `start..start + out.len()` at once.
    pub fn from_segments<F>(pool: &Pool, len: usize, fill: F) -> Result<Self>
    where
        F: Fn(usize, &mut [C::Item]) + Sync,
    {
        let ranges = even_ranges(len, pool.workers());
        let mut chunks = pool
            .worker_contexts()
            .iter()
            .zip(&ranges)
            .map(|(ctx, r)| alloc_chunk::<C>(pool, ctx.index, ctx.node, r.len()))
            .collect::<Result<Vec<_>>>()?;
        per_worker_mut(pool, &mut chunks, |ctx, chunk| {
            fill(ranges[ctx.index].start, chunk.values_mut());
        })?;
        Ok(Self::from_chunks(chunks))
    }

    /// The values of `values`, split evenly over the pool's workers.
    pub fn from_slice(pool: &Pool, values: &[C::Item]) -> Result<Self> {
        Self::from_segments(pool, values.len(), |start, out| {
            out.copy_from_slice(&values[start..start + out.len()]);
        })
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.chunks.iter().map(|c| c.values().len()).sum()
    }

    /// Whether the container has no values (it still has one chunk per
    /// worker).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Size of the values in bytes.
    pub fn bytes(&self) -> u64 {
        (self.len() * std::mem::size_of::<C::Item>()) as u64
    }

    /// The chunks, one per worker, in worker order.
    pub fn chunks(&self) -> &[C] {
        &self.chunks
    }

    /// The chunks, mutably, one per worker, in worker order.
    pub fn chunks_mut(&mut self) -> &mut [C] {
        &mut self.chunks
    }

    /// The chunks, which no longer go back to [`recycle`] when dropped.
    pub fn into_chunks(mut self) -> Vec<C> {
        std::mem::take(&mut self.chunks)
    }

    /// The chunks as node-tagged slices, for morsel-driven scans.
    pub fn node_slices(&self) -> Vec<NodeSlice<'_, C::Item>> {
        self.chunks
            .iter()
            .map(|c| NodeSlice {
                node: c.node(),
                data: c.values(),
            })
            .collect()
    }

    /// All values, chunk after chunk, in one vector.
    pub fn to_vec(&self) -> Vec<C::Item> {
        let mut out = Vec::with_capacity(self.len());
        for c in &self.chunks {
            out.extend_from_slice(c.values());
        }
        out
    }

    /// Fails unless the container has one chunk per worker of `pool`.
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

impl Chunked<Chunk> {
    /// The tuples of `rows`, split evenly over the pool's workers.
    pub fn from_tuples(pool: &Pool, rows: &[Tuple]) -> Result<Self> {
        Self::from_slice(pool, rows)
    }
}

impl<C: NodeChunk> Drop for Chunked<C> {
    fn drop(&mut self) {
        if let Some(recycler) = self.recycler.take() {
            for chunk in self.chunks.drain(..) {
                let (node, values) = chunk.into_parts();
                recycler.give_back(node, values);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pool;

    #[test]
    fn large_chunks_take_huge_pages_and_small_ones_base_pages() {
        let pool = pool(1);
        let node = pool.nodes()[0];
        let tuples = recycle::HUGE_PAGES_FROM_BYTES / std::mem::size_of::<Tuple>();
        let large = Chunk::alloc(&pool, 0, node, tuples).unwrap();
        assert_eq!(large.tuples.huge_pages(), HugePages::Transparent);
        let small = Chunk::alloc(&pool, 0, node, tuples - 1).unwrap();
        assert_eq!(small.tuples.huge_pages(), HugePages::Never);
    }

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
