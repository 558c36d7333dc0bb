//! Node-placed memory that several workers read and write at once: a
//! [`NodeBuffer`] of 64-bit words seen only through `AtomicU64`, and a
//! cache prefetch hint.
//!
//! This is the join's only unsafe code, kept small: the words start at
//! zero (fresh mappings are zero-filled, so a big table needs no clearing
//! pass), and every access after that is atomic, so threads never race.
//! The module does not interpret the words; the hash table does.

use std::sync::atomic::AtomicU64;

use numakit_placement::{BufferOptions, HugePages, NodeBuffer, Placement, Placer};

use crate::error::Result;

/// `len` zeroed 64-bit words, placed as asked, shared as atomics.
pub struct AtomicWords {
    /// Owns the mapping; never read or written as plain `u64` again.
    _buffer: NodeBuffer<u64>,
    start: *const AtomicU64,
    len: usize,
}

// SAFETY: the words are only reachable as `&[AtomicU64]`, which is both
// `Send` and `Sync`; the raw pointer is just a cached view of the mapping
// that `_buffer` owns for as long as `self` lives.
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
        let mut buffer = NodeBuffer::<u64>::with_options(placer, len, options)?;
        let start = buffer.as_mut_ptr().cast_const().cast::<AtomicU64>();
        Ok(Self {
            _buffer: buffer,
            start,
            len,
        })
    }

    /// The words.
    #[inline(always)]
    pub fn words(&self) -> &[AtomicU64] {
        // SAFETY: `start` points to `len` initialised (zero-filled) u64s of
        // a mapping owned by `_buffer`, which lives as long as `self`; it is
        // page aligned (or dangling and 8-aligned when `len` is 0), and
        // `AtomicU64` has the size, alignment and bit validity of `u64`.
        // The pointer came from `&mut`, and nothing touches the memory
        // except through the atomics handed out here, so every concurrent
        // access is atomic.
        unsafe { std::slice::from_raw_parts(self.start, self.len) }
    }
}

impl std::fmt::Debug for AtomicWords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AtomicWords")
            .field("len", &self.len)
            .finish()
    }
}

/// Asks the CPU to start loading the cache line of `item` (a hint: no
/// effect on results, nothing on architectures without the instruction).
#[inline(always)]
pub fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and has no architectural effect; SSE,
    // which the instruction belongs to, is part of every x86-64 CPU.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    use numakit_placement::PlacementMode;

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
                        prefetch(w);
                    }
                });
            }
        });
        assert!(words.words().iter().all(|w| w.load(Ordering::Relaxed) == 2));
        let empty = AtomicWords::zeroed(&placer, 0, Placement::Anywhere, HugePages::Never).unwrap();
        assert!(empty.words().is_empty());
    }
}
