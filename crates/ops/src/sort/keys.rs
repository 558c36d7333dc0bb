//! [`KeyColumn`]: plain 64-bit keys in one node-placed chunk per pool
//! worker, the input and output of the keys-only sort (sorting a column of
//! int64 without payload).
//!
//! It is the same container as [`Relation`](crate::relation::Relation)
//! ([`Chunked`]), with [`KeyChunk`]s of `u64` instead of
//! [`Tuple`](crate::tuple::Tuple)s: chunk w lives on worker w's node and
//! is filled by worker w; a sorted column gives its buffers back to
//! [`crate::recycle`] when dropped, as a sorted relation does. This module
//! does not read files or map signed values (see
//! [`super::i64_to_ordered_u64`]).

use std::fmt;

use numakit_placement::NodeBuffer;
use numakit_pool::Pool;
use numakit_topology::NodeId;

use crate::error::Result;
use crate::relation::{alloc_chunk, fmt_chunk, Chunked, NodeChunk};

/// One worker's keys.
pub struct KeyChunk {
    /// The node the chunk's memory is on (its worker's node).
    pub node: NodeId,
    /// Index of the worker the chunk belongs to.
    pub worker: usize,
    /// The chunk's keys (sorted within the chunk after a sort).
    pub keys: NodeBuffer<u64>,
}

impl KeyChunk {
    /// An untouched (zero) chunk of `len` keys bound to `node`.
    pub fn alloc(pool: &Pool, worker: usize, node: NodeId, len: usize) -> Result<Self> {
        alloc_chunk(pool, worker, node, len)
    }
}

impl NodeChunk for KeyChunk {
    type Item = u64;

    fn from_parts(worker: usize, node: NodeId, keys: NodeBuffer<u64>) -> Self {
        Self { node, worker, keys }
    }

    fn node(&self) -> NodeId {
        self.node
    }

    fn worker(&self) -> usize {
        self.worker
    }

    fn values(&self) -> &NodeBuffer<u64> {
        &self.keys
    }

    fn values_mut(&mut self) -> &mut NodeBuffer<u64> {
        &mut self.keys
    }

    fn into_parts(self) -> (NodeId, NodeBuffer<u64>) {
        (self.node, self.keys)
    }
}

impl fmt::Debug for KeyChunk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_chunk("KeyChunk", self, f)
    }
}

/// Keys spread over the workers of a pool, one chunk per worker.
pub type KeyColumn = Chunked<KeyChunk>;

impl Chunked<KeyChunk> {
    /// The keys of `keys`, split evenly over the pool's workers.
    pub fn from_keys(pool: &Pool, keys: &[u64]) -> Result<Self> {
        Self::from_slice(pool, keys)
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
