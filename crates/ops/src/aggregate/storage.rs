//! Zeroed, node-placed arrays for aggregation state, in memory reused
//! across runs.
//!
//! On the virtual machines we measure on, the first touch of fresh memory
//! is the dominant cost of a large table: zeroing a gigabyte of new pages
//! took over a second here, clearing reused memory a few tens of
//! milliseconds. So tables take their memory from the partitioner's
//! buffer cache ([`crate::partition::recycle`], buffers bound to a node,
//! huge pages when large) and give it back when dropped (an array holds
//! its pool's [`Recycler`] for that); an array of `T`
//! is a view of such a tuple buffer, zeroed when taken.
//!
//! This module only provides memory; the tables decide what it holds.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};

use numakit_placement::NodeBuffer;
use numakit_pool::Pool;
use numakit_topology::NodeId;

use crate::error::{OpsError, Result};
use crate::partition::recycle::{self, Recycler};
use crate::tuple::{Tuple, TUPLE_BYTES};

/// `len` zeroed values of `T` on one node.
pub struct NodeArray<T> {
    node: NodeId,
    buffer: Option<NodeBuffer<Tuple>>,
    /// Where `buffer` goes back when the array is dropped.
    recycler: Arc<Recycler>,
    /// Tuples of `buffer` the view covers.
    tuples: usize,
    len: usize,
    _of: std::marker::PhantomData<T>,
}

impl<T: Pod> NodeArray<T> {
    /// `len` zeroed values bound to `node`.
    pub fn zeroed(pool: &Pool, node: NodeId, len: usize) -> Result<Self> {
        let unit = unit_bytes::<T>();
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| OpsError::InvalidArgument(format!("an array of {len} values")))?;
        let tuples = bytes.div_ceil(unit) * unit / TUPLE_BYTES;
        let recycler = Recycler::of(pool);
        let buffer = if tuples == 0 {
            None
        } else {
            let mut b = recycle::take(pool, node, tuples)?;
            b[..tuples].fill(Tuple::zeroed());
            Some(b)
        };
        Ok(Self {
            node,
            buffer,
            recycler,
            tuples,
            len,
            _of: std::marker::PhantomData,
        })
    }

    /// The node the array's memory is bound to.
    pub fn node(&self) -> NodeId {
        self.node
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no values (it then holds no memory).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The values, zero until written.
    pub fn as_slice(&self) -> &[T] {
        match &self.buffer {
            Some(b) => &bytemuck::cast_slice(&b[..self.tuples])[..self.len],
            None => &[],
        }
    }

    /// The values, to write.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        match &mut self.buffer {
            Some(b) => &mut bytemuck::cast_slice_mut(&mut b[..self.tuples])[..self.len],
            None => &mut [],
        }
    }
}

impl<T> Drop for NodeArray<T> {
    fn drop(&mut self) {
        if let Some(buffer) = self.buffer.take() {
            self.recycler.give_back(self.node, buffer);
        }
    }
}

/// The smallest whole number of tuples that holds a whole number of `T`s.
fn unit_bytes<T>() -> usize {
    let size = std::mem::size_of::<T>().max(1);
    let (mut a, mut b) = (size, TUPLE_BYTES);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    size / a * TUPLE_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pool;

    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
    struct Forty([u64; 5]);

    #[test]
    fn arrays_are_zeroed_even_when_reused() {
        let pool = pool(1);
        let node = pool.nodes()[0];
        for round in 0..3u64 {
            let mut a = NodeArray::<Forty>::zeroed(&pool, node, 1001).unwrap();
            assert_eq!(a.len(), 1001);
            assert!(a.as_slice().iter().all(|f| *f == Forty([0; 5])));
            a.as_mut_slice().fill(Forty([round + 1; 5]));
        }
        assert_eq!(unit_bytes::<Forty>(), 80);
        assert_eq!(unit_bytes::<u64>(), 16);
        assert_eq!(unit_bytes::<[u64; 6]>(), 48);
        let empty = NodeArray::<Forty>::zeroed(&pool, node, 0).unwrap();
        assert!(empty.is_empty() && empty.as_slice().is_empty());
    }
}
