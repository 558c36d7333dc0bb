//! Node-placed memory that several threads read and write at once: a
//! [`NodeBuffer`] of 64-bit words seen only through `AtomicU64`.
//!
//! The words start at zero (fresh mappings are zero-filled, so a big table
//! needs no clearing pass), and every access after that is atomic, so
//! threads never race; relaxed loads and stores compile to plain moves.
//! The module does not interpret the words: a join's hash table or a
//! memory benchmark's shared array does.

use std::sync::atomic::AtomicU64;

use crate::buffer::{BufferOptions, HugePages, NodeBuffer};
use crate::error::Result;
use crate::placer::Placer;
use crate::policy::Placement;

/// `len` zeroed 64-bit words, placed as asked, shared as atomics.
pub struct AtomicWords {
    /// Owns the mapping; never read or written as plain `u64` again.
    buffer: NodeBuffer<u64>,
    start: *const AtomicU64,
    len: usize,
}

// SAFETY: the words are only reachable as `&[AtomicU64]`, which is both
// `Send` and `Sync`; the raw pointer is just a cached view of the mapping
// that `buffer` owns for as long as `self` lives.
unsafe impl Send for AtomicWords {}
// SAFETY: see above.
unsafe impl Sync for AtomicWords {}

impl AtomicWords {
    /// Maps `len` zeroed words with `placement`. Pages are not touched
    /// here: whoever writes a page first faults it in, and the placement's
    /// memory policy decides its node.
    pub fn zeroed(
        placer: &Placer,
        len: usize,
        placement: Placement,
        huge_pages: HugePages,
    ) -> Result<Self> {
        let mut options = BufferOptions::new(placement);
        options.prefault = false;
        options.huge_pages = huge_pages;
        Self::with_options(placer, len, options)
    }

    /// Maps `len` zeroed words made as `options` say (with `prefault`,
    /// every page is touched now by a thread of the target node).
    pub fn with_options(placer: &Placer, len: usize, options: BufferOptions) -> Result<Self> {
        let mut buffer = NodeBuffer::<u64>::with_options(placer, len, options)?;
        let start = buffer.as_mut_ptr().cast_const().cast::<AtomicU64>();
        Ok(Self { buffer, start, len })
    }

    /// The words.
    #[inline(always)]
    pub fn words(&self) -> &[AtomicU64] {
        // SAFETY: `start` points to `len` initialised (zero-filled) u64s of
        // a mapping owned by `buffer`, which lives as long as `self`; it is
        // page aligned (or dangling and 8-aligned when `len` is 0), and
        // `AtomicU64` has the size, alignment and bit validity of `u64`.
        // The pointer came from `&mut`, and nothing touches the memory
        // except through the atomics handed out here (`buffer` is only
        // asked where its pages are), so every concurrent access is atomic.
        unsafe { std::slice::from_raw_parts(self.start, self.len) }
    }

    /// How many of the words' pages each node holds (see
    /// [`NodeBuffer::pages_per_node`]); pages not yet touched are absent.
    pub fn pages_per_node(
        &self,
    ) -> Result<std::collections::BTreeMap<numakit_topology::NodeId, usize>> {
        self.buffer.pages_per_node()
    }

    /// The size of the words in bytes.
    pub fn byte_len(&self) -> usize {
        self.buffer.byte_len()
    }
}

impl std::fmt::Debug for AtomicWords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AtomicWords")
            .field("len", &self.len)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    use crate::placer::PlacementMode;

    use super::*;

    #[test]
    fn words_start_at_zero_and_are_shared() {
        let topo = Arc::new(numakit_topology::discover().unwrap());
        let placer = Placer::new(topo.clone(), PlacementMode::BestEffort);
        let placement = Placement::Interleave(topo.node_ids());
        let words = AtomicWords::zeroed(&placer, 10_000, placement, HugePages::Never).unwrap();
        assert_eq!(words.words().len(), 10_000);
        assert!(words.words().iter().all(|w| w.load(Ordering::Relaxed) == 0));
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for w in words.words() {
                        w.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        assert!(words.words().iter().all(|w| w.load(Ordering::Relaxed) == 2));
        let empty = AtomicWords::zeroed(&placer, 0, Placement::Anywhere, HugePages::Never).unwrap();
        assert!(empty.words().is_empty());
    }

    #[test]
    fn prefaulted_words_are_resident_on_their_node() {
        let topo = Arc::new(numakit_topology::discover().unwrap());
        let placer = Placer::new(topo.clone(), PlacementMode::BestEffort);
        let node = topo.compute_nodes()[0];
        let words = AtomicWords::with_options(
            &placer,
            1 << 16,
            BufferOptions::new(Placement::OnNode(node)),
        )
        .unwrap();
        let pages: usize = words.pages_per_node().unwrap().values().sum();
        assert_eq!(pages * crate::sys::page_size(), words.byte_len());
    }
}
