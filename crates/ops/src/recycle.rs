//! Reuse of large node-placed buffers across operator runs.
//!
//! A fresh buffer costs a page fault per page on its first write, and on
//! a virtual machine that can cost several times the operator itself
//! (measured here: a copy into fresh memory ran at 4-7 GB/s, into
//! reused memory at 30+ GB/s; the first touch of memory the host has not
//! backed yet cost up to 2 s per GB). Allocators of other engines keep
//! freed memory for the same reason. So buffers that operators no longer
//! need (partition outputs, sort runs and spares, sorted results that
//! were dropped, aggregation tables) come back to a [`Recycler`], one list
//! per node, and the next operator takes the smallest cached buffer that
//! fits before it maps a new one. At most a quarter of the machine's
//! memory (or 2 GiB where that is unknown) and [`MAX_BUFFERS`] buffers are
//! kept, and nothing is kept on a node that is short of free memory.
//!
//! Every pool has its own recycler, kept in the pool's runtime state
//! ([`Recycler::of`], [`numakit_pool::Pool::state`]): operators on a pool
//! take from and give back to that pool's cache, and the cached buffers
//! are freed when the pool is dropped (or, if a value that gives buffers
//! back when dropped still holds the recycler, when that value is). Such
//! values (a sorted relation, a partitioning, an aggregation table) hold
//! an `Arc` of the recycler, as they have no pool at hand when dropped.
//!
//! Buffers are cached as bytes and handed out as any plain-old-data
//! element type ([`take_as`]; [`take`] for tuples), exactly as long as
//! asked. They are bound to their node (so reusing one never moves data
//! off its node; a buffer given back that is not bound to the node it is
//! given back for is freed instead). A cached buffer is reused whatever
//! its pages; the caller's [`Paging`] says how a new one is mapped.
//! Contents are stale: users overwrite what they use. This module keeps
//! buffers; it does not decide what goes into them.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytemuck::Pod;
use numakit_placement::{BufferOptions, HugePages, NodeBuffer, Placement};
use numakit_pool::Pool;
use numakit_topology::NodeId;

use crate::error::Result;
use crate::tuple::Tuple;

/// With [`Paging::HugeWhenLarge`], new buffers at least this large use
/// transparent huge pages.
pub const HUGE_PAGES_FROM_BYTES: usize = 8 << 20;
/// What is kept when the machine's memory size is unknown.
const DEFAULT_LIMIT_BYTES: usize = 2 << 30;
/// Most buffers kept (the search for a fitting one is linear).
pub const MAX_BUFFERS: usize = 256;
/// A cached buffer fits a request of `n` bytes up to `2n` plus this.
const SLACK_BYTES: usize = 1 << 20;

/// How a buffer the cache has to map anew is paged. Measured on this
/// VM (1 GiB first touched by a fresh process): huge pages fault in at
/// 0.05 s per GiB where the host still backs the memory (freed moments
/// before), but at 2.6-3.0 s per GiB after a few idle seconds (the guest
/// hands free 2 MiB blocks back to the host, and huge pages are made of
/// exactly those); base pages cost 0.4-0.8 s per GiB either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paging {
    /// Transparent huge pages from [`HUGE_PAGES_FROM_BYTES`] up: fewer
    /// TLB misses when scattering into many partitions, cheapest faults
    /// in a busy process, dearest in a fresh one.
    HugeWhenLarge,
    /// Base pages only: a predictable first touch.
    Base,
}

struct Cache {
    /// Every buffer at its full capacity.
    buffers: Vec<(NodeId, NodeBuffer<u8>)>,
    bytes: usize,
}

/// The buffer cache of one pool (see the [module docs](self)). Its
/// buffers are freed when it is dropped.
pub struct Recycler {
    cache: Mutex<Cache>,
    /// Most bytes kept.
    limit: usize,
}

impl Recycler {
    /// A recycler keeping at most `limit` bytes.
    fn new(limit: usize) -> Self {
        Self {
            cache: Mutex::new(Cache {
                buffers: Vec::new(),
                bytes: 0,
            }),
            limit,
        }
    }

    /// The recycler of `pool`, made on first use (it keeps at most a
    /// quarter of the memory of the pool's machine) and dropped with the
    /// pool. Hold the `Arc` in values that give buffers back when dropped.
    pub fn of(pool: &Pool) -> Arc<Recycler> {
        pool.state_or_init(|| Recycler::new(limit_for(pool)))
    }

    fn cache(&self) -> MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The smallest cached buffer on `node` that holds `bytes` without
    /// wasting more than about as much again.
    fn take_cached(&self, node: NodeId, bytes: usize) -> Option<NodeBuffer<u8>> {
        let mut c = self.cache();
        let most = bytes.saturating_mul(2).saturating_add(SLACK_BYTES);
        let best = c
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, (n, b))| *n == node && (bytes..=most).contains(&b.len()))
            .min_by_key(|(_, (_, b))| b.len())
            .map(|(i, _)| i)?;
        let (_, buffer) = c.buffers.swap_remove(best);
        c.bytes -= buffer.len();
        Some(buffer)
    }

    /// Keeps a buffer of any element type for reuse, or frees it: when
    /// the cache is full, when the buffer is not bound to `node`, or when
    /// `node` is short of free memory (bound memory does not spill, so a
    /// cache that fills a small node gets the next allocation there
    /// killed).
    pub fn give_back<T: Pod>(&self, node: NodeId, buffer: NodeBuffer<T>) {
        let Ok(mut buffer) = buffer.cast::<u8>() else {
            return;
        };
        if buffer.set_len(buffer.capacity()).is_err() || !worth_keeping(node, &buffer) {
            return;
        }
        let bytes = buffer.len();
        if node_is_short(node, bytes) {
            return;
        }
        let mut c = self.cache();
        if c.bytes + bytes <= self.limit && c.buffers.len() < MAX_BUFFERS {
            c.bytes += bytes;
            c.buffers.push((node, buffer));
        }
    }

    /// Bytes currently cached.
    pub fn cached_bytes(&self) -> usize {
        self.cache().bytes
    }
}

impl std::fmt::Debug for Recycler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = self.cache();
        f.debug_struct("Recycler")
            .field("buffers", &c.buffers.len())
            .field("bytes", &c.bytes)
            .field("limit", &self.limit)
            .finish()
    }
}

/// A buffer of exactly `len` tuples on `node`, new ones on base pages
/// (see [`take_as`]). Measured on workload A at 4M x 64M rows, fresh
/// process after a few idle seconds: base pages cold 0.79-1.45 s, warm
/// 0.25 s; huge pages cold 1.69-1.78 s, warm 0.23 s. On these VMs idle
/// memory goes back to the host in 2 MiB blocks, and huge-page faults then
/// cost about 2.6 s per GiB; a CLI run is usually cold.
pub fn take(pool: &Pool, node: NodeId, len: usize) -> Result<NodeBuffer<Tuple>> {
    take_as(pool, node, len, Paging::Base)
}

/// A buffer of exactly `len` elements on `node`: a cached one if one
/// fits (its contents stale), else a new one paged as `paging` says
/// (zero, not yet touched: the first write places its pages).
pub fn take_as<T: Pod>(
    pool: &Pool,
    node: NodeId,
    len: usize,
    paging: Paging,
) -> Result<NodeBuffer<T>> {
    let bytes = len.saturating_mul(std::mem::size_of::<T>());
    if bytes > 0 {
        if let Some(cached) = Recycler::of(pool).take_cached(node, bytes) {
            if let Ok(mut buffer) = cached.cast::<T>() {
                if buffer.set_len(len).is_ok() {
                    return Ok(buffer);
                }
            }
        }
    }
    new_buffer(pool, node, len, paging)
}

/// `buffer` (on `node`) with exactly `len` elements: resized when its
/// memory allows, else given back for one that fits ([`take_as`]).
pub fn fit<T: Pod>(
    pool: &Pool,
    node: NodeId,
    mut buffer: NodeBuffer<T>,
    len: usize,
    paging: Paging,
) -> Result<NodeBuffer<T>> {
    if buffer.set_len(len).is_ok() {
        return Ok(buffer);
    }
    give_back(pool, node, buffer);
    take_as(pool, node, len, paging)
}

/// Gives a buffer back to `pool`'s recycler ([`Recycler::give_back`]).
pub fn give_back<T: Pod>(pool: &Pool, node: NodeId, buffer: NodeBuffer<T>) {
    Recycler::of(pool).give_back(node, buffer);
}

/// Whether `buffer` is memory [`take_as`] may hand out on `node`.
fn worth_keeping(node: NodeId, buffer: &NodeBuffer<u8>) -> bool {
    !buffer.is_empty() && *buffer.placement() == Placement::OnNode(node)
}

/// Bytes currently cached for `pool`.
pub fn cached_bytes(pool: &Pool) -> usize {
    Recycler::of(pool).cached_bytes()
}

/// Whether keeping `bytes` more on `node` would leave it with less than
/// four times that, or less than 64 MiB, free.
fn node_is_short(node: NodeId, bytes: usize) -> bool {
    const RESERVE: u64 = 64 << 20;
    numakit_topology::sysfs::node_mem_free(node)
        .is_some_and(|free| free < (4 * bytes as u64).max(RESERVE))
}

fn new_buffer<T: Pod>(
    pool: &Pool,
    node: NodeId,
    len: usize,
    paging: Paging,
) -> Result<NodeBuffer<T>> {
    let mut options = BufferOptions::new(Placement::OnNode(node));
    options.prefault = false;
    let large = len.saturating_mul(std::mem::size_of::<T>()) >= HUGE_PAGES_FROM_BYTES;
    if large && paging == Paging::HugeWhenLarge {
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
        assert_eq!(buffer.len(), 1000);
        let addr = buffer.as_ptr() as usize;
        give_back(&pool, node, buffer);
        // Kept unless the node is short of free memory.
        let kept = cached_bytes(&pool) > 0;
        let again = take(&pool, node, 900).unwrap();
        assert_eq!(again.len(), 900);
        if kept {
            // The pool's own cache: no other test takes from it.
            assert_eq!(again.as_ptr() as usize, addr);
            assert!(again.capacity() >= 1000);
            assert_eq!(cached_bytes(&pool), 0);
        }
        give_back(&pool, node, again);
        assert!(take(&pool, node, 0).unwrap().is_empty());
    }

    #[test]
    fn one_element_type_reuses_another_ones_memory() {
        let pool = pool(1);
        let node = pool.nodes()[0];
        let mut tuples = take(&pool, node, 3000).unwrap();
        tuples.fill(Tuple::new(7, 7));
        let addr = tuples.as_ptr() as usize;
        give_back(&pool, node, tuples);
        let keys = take_as::<u64>(&pool, node, 5000, Paging::Base).unwrap();
        assert_eq!(keys.len(), 5000);
        if keys.as_ptr() as usize == addr {
            assert_eq!(keys[4999], 7, "the tuples' bytes, stale");
        }
        let keys = fit(&pool, node, keys, 6000, Paging::Base).unwrap();
        assert_eq!(keys.len(), 6000);
        let keys = fit(&pool, node, keys, 1 << 20, Paging::Base).unwrap();
        assert_eq!(keys.len(), 1 << 20);
        give_back(&pool, node, keys);
    }

    #[test]
    fn only_buffers_bound_to_their_node_are_kept() {
        let pool = pool(1);
        let node = pool.nodes()[0];
        let options = BufferOptions::new(Placement::Anywhere);
        let anywhere = NodeBuffer::<u64>::with_options(pool.placer(), 512, options).unwrap();
        assert!(!worth_keeping(node, &anywhere.cast::<u8>().unwrap()));
        for paging in [Paging::Base, Paging::HugeWhenLarge] {
            let taken = take_as::<u8>(&pool, node, 16 << 20, paging).unwrap();
            assert!(worth_keeping(node, &taken));
        }
        let fresh = new_buffer::<u8>(&pool, node, 16 << 20, Paging::HugeWhenLarge).unwrap();
        assert_eq!(fresh.huge_pages(), HugePages::Transparent);
        let fresh = new_buffer::<u8>(&pool, node, 16 << 20, Paging::Base).unwrap();
        assert_eq!(fresh.huge_pages(), HugePages::Never);
    }

    #[test]
    fn every_pool_has_its_own_cache_freed_with_it() {
        let pool = pool(1);
        let node = pool.nodes()[0];
        let recycler = Recycler::of(&pool);
        assert!(Arc::ptr_eq(&recycler, &Recycler::of(&pool)));
        assert_eq!(recycler.limit, limit_for(&pool));
        let buffer = take(&pool, node, 1000).unwrap();
        let bytes = buffer.capacity() * std::mem::size_of::<Tuple>();
        recycler.give_back(node, buffer);
        // Kept unless the node is short of memory.
        let kept = cached_bytes(&pool);
        assert!(kept == bytes || (kept == 0 && node_is_short(node, bytes)));

        let other = self::pool(1);
        assert_eq!(cached_bytes(&other), 0, "another pool's cache");
        let again = take(&other, node, 1000).unwrap();
        assert_eq!(cached_bytes(&pool), kept, "not taken from this pool");
        give_back(&other, node, again);

        let cache = Arc::downgrade(&recycler);
        drop(recycler);
        drop(pool);
        assert!(cache.upgrade().is_none(), "freed with the pool");
    }

    #[test]
    fn values_give_back_to_their_own_pool_even_after_it_is_gone() {
        use crate::partition::{cprl, Radix};
        use crate::relation::Relation;
        use crate::timing::Silent;

        let pool = pool(1);
        let node = pool.nodes()[0];
        let input =
            Relation::from_fn(&pool, 50_000, |i| Tuple::new(i as u64 * 7 % 1000, 0)).unwrap();
        let sorted = crate::sort::sort(&pool, &input, &Silent)
            .unwrap()
            .sorted
            .unwrap();
        let parts = cprl::partition(&pool, &input, Radix::top(4).unwrap()).unwrap();
        let before = cached_bytes(&pool);
        drop(parts);
        let bytes = input.bytes() as usize;
        assert!(cached_bytes(&pool) >= before + bytes || node_is_short(node, bytes));

        // The sorted relation holds the recycler past its pool.
        let cache = Arc::downgrade(&Recycler::of(&pool));
        drop(pool);
        assert!(cache.upgrade().is_some());
        drop(sorted);
        assert!(cache.upgrade().is_none(), "freed with the last holder");
    }

    #[test]
    fn the_limits_hold() {
        let pool = pool(1);
        let node = pool.nodes()[0];
        let recycler = Recycler::new(4096 * 3);
        for _ in 0..4 {
            let buffer = new_buffer::<u8>(&pool, node, 4096, Paging::Base).unwrap();
            recycler.give_back(node, buffer);
        }
        assert!(recycler.cached_bytes() <= 4096 * 3);
        let many = Recycler::new(usize::MAX);
        for _ in 0..MAX_BUFFERS + 2 {
            let buffer = new_buffer::<u8>(&pool, node, 64, Paging::Base).unwrap();
            many.give_back(node, buffer);
        }
        assert!(many.cache().buffers.len() <= MAX_BUFFERS);
    }
}
