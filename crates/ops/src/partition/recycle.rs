//! Reuse of partition output buffers across operator runs.
//!
//! A fresh buffer costs a page fault per page on its first write, and on
//! a virtual machine that can cost several times the partitioning itself
//! (measured here: a copy into fresh memory ran at 4-7 GB/s, into
//! reused memory at 30+ GB/s). Allocators of other engines keep freed
//! memory for the same reason. So dropped partition outputs come back
//! here, one list per node, and the next partitioning takes the smallest
//! cached buffer that fits before it maps a new one. At most a quarter of
//! the machine's memory (or 2 GiB where that is unknown) is kept, and
//! nothing is kept on a node that is short of free memory;
//! [`release_all`] gives everything back to the system.
//!
//! Buffers are bound to their node (so reusing one never moves data off
//! its node) and use transparent huge pages when large. Their contents
//! are stale: users overwrite what they use. This module keeps buffers;
//! it does not decide what goes into them.

use std::sync::{Mutex, PoisonError};

use numakit_placement::{BufferOptions, HugePages, NodeBuffer, Placement};
use numakit_pool::Pool;
use numakit_topology::NodeId;

use crate::error::Result;
use crate::tuple::{Tuple, TUPLE_BYTES};

/// Buffers at least this large use transparent huge pages (fewer TLB
/// misses when scattering into many partitions, fewer faults).
const HUGE_PAGES_FROM_BYTES: usize = 8 << 20;
/// What is kept when the machine's memory size is unknown.
const DEFAULT_LIMIT_BYTES: usize = 2 << 30;

struct Cache {
    buffers: Vec<(NodeId, NodeBuffer<Tuple>)>,
    bytes: usize,
    limit: usize,
}

static CACHE: Mutex<Cache> = Mutex::new(Cache {
    buffers: Vec::new(),
    bytes: 0,
    limit: DEFAULT_LIMIT_BYTES,
});

fn cache() -> std::sync::MutexGuard<'static, Cache> {
    CACHE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A buffer of at least `len` tuples on `node`: a cached one if one fits,
/// else a new one (not yet touched: the first write places its pages).
pub fn take(pool: &Pool, node: NodeId, len: usize) -> Result<NodeBuffer<Tuple>> {
    if len == 0 {
        return new_buffer(pool, node, 0);
    }
    {
        let mut c = cache();
        c.limit = limit_for(pool);
        let best = c
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, (n, b))| *n == node && b.len() >= len && b.len() <= 2 * len + (1 << 16))
            .min_by_key(|(_, (_, b))| b.len())
            .map(|(i, _)| i);
        if let Some(i) = best {
            let (_, buffer) = c.buffers.swap_remove(i);
            c.bytes -= buffer.byte_len();
            return Ok(buffer);
        }
    }
    new_buffer(pool, node, len)
}

/// Returns a buffer for reuse (or frees it when the cache is full, or
/// when its node is short of free memory: bound memory does not spill, so
/// a cache that fills a small node gets the next allocation there killed).
pub fn give_back(node: NodeId, buffer: NodeBuffer<Tuple>) {
    let bytes = buffer.byte_len();
    if bytes == 0 || node_is_short(node, bytes) {
        return;
    }
    let mut c = cache();
    if c.bytes + bytes <= c.limit {
        c.bytes += bytes;
        c.buffers.push((node, buffer));
    }
}

/// Frees every cached buffer; returns the bytes given back.
pub fn release_all() -> usize {
    let mut c = cache();
    let bytes = c.bytes;
    c.buffers.clear();
    c.bytes = 0;
    bytes
}

/// Bytes currently cached.
pub fn cached_bytes() -> usize {
    cache().bytes
}

/// Whether keeping `bytes` more on `node` would leave it with less than
/// four times that, or less than 64 MiB, free.
fn node_is_short(node: NodeId, bytes: usize) -> bool {
    const RESERVE: u64 = 64 << 20;
    numakit_topology::sysfs::node_mem_free(node)
        .is_some_and(|free| free < (4 * bytes as u64).max(RESERVE))
}

fn new_buffer(pool: &Pool, node: NodeId, len: usize) -> Result<NodeBuffer<Tuple>> {
    let mut options = BufferOptions::new(Placement::OnNode(node));
    options.prefault = false;
    if len * TUPLE_BYTES >= HUGE_PAGES_FROM_BYTES {
        options.huge_pages = HugePages::Transparent;
    }
    Ok(NodeBuffer::with_options(pool.placer(), len, options)?)
}

fn limit_for(pool: &Pool) -> usize {
    let topo = pool.topology();
    let total: Option<u64> = topo
        .node_ids()
        .iter()
        .map(|n| topo.node(n).ok().and_then(|node| node.memory_bytes))
        .sum();
    match total {
        Some(bytes) if bytes > 0 => (bytes / 4).min(usize::MAX as u64) as usize,
        _ => DEFAULT_LIMIT_BYTES,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pool;

    #[test]
    fn buffers_come_back_and_are_reused() {
        let pool = pool(1);
        let node = pool.nodes()[0];
        let buffer = take(&pool, node, 1000).unwrap();
        assert!(buffer.len() >= 1000);
        let addr = buffer.as_ptr() as usize;
        give_back(node, buffer);
        let again = take(&pool, node, 900).unwrap();
        // Another test may have taken it in between; then it is new.
        if again.as_ptr() as usize == addr {
            assert!(again.len() >= 900);
        }
        give_back(node, again);
        assert!(take(&pool, node, 0).unwrap().is_empty());
    }
}
