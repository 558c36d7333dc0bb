//! A cache prefetch hint behind a safe function, so that hash tables
//! larger than a cache can ask for the slots of the next rows early.
//!
//! This module only hints; it never reads or writes memory itself.

/// Asks the CPU to bring the cache line holding `item` into its caches.
/// A no-op on targets without a prefetch instruction.
#[inline(always)]
pub(crate) fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is a hint: it never faults and changes no memory,
    // and `item` is a valid reference anyway. SSE, which the intrinsic is
    // gated on, is part of the x86-64 baseline, so every x86-64 CPU has it.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}
