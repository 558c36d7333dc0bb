//! Streaming stores of whole cache lines: the one unsafe corner of the
//! sort.
//!
//! A radix split that writes to thousands of buckets in a buffer far
//! larger than the caches would otherwise read every destination line
//! before writing it (write-allocate) and evict useful lines; staging a
//! full line per bucket and storing it with non-temporal stores writes
//! each byte once. [`store_line`] is safe for any arguments: it streams
//! only a 64-byte aligned destination of exactly one line and copies
//! plainly otherwise (and on other architectures). Call [`fence`] once
//! after a batch of streaming stores, before another thread may read
//! the data.
//!
//! This module does not decide what to stage or where: the scatter
//! kernels in `radix` do.

use bytemuck::Pod;

/// Bytes in a cache line.
pub(super) const LINE_BYTES: usize = 64;

/// Copies `src` into `dst` (equal lengths). When `dst` is exactly one
/// cache line, aligned to 64 bytes, the copy bypasses the caches.
#[inline(always)]
pub(super) fn store_line<T: Pod>(dst: &mut [T], src: &[T]) {
    let to: &mut [u8] = bytemuck::cast_slice_mut(dst);
    let from: &[u8] = bytemuck::cast_slice(src);
    #[cfg(target_arch = "x86_64")]
    if to.len() == LINE_BYTES && from.len() == LINE_BYTES && to.as_ptr() as usize % LINE_BYTES == 0
    {
        stream_64_bytes(to, from);
        return;
    }
    to.copy_from_slice(from);
}

/// Streams 64 bytes; the caller checked both lengths and that `to` is
/// 64-byte aligned.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn stream_64_bytes(to: &mut [u8], from: &[u8]) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
    debug_assert!(to.len() == LINE_BYTES && from.len() == LINE_BYTES);
    debug_assert!(to.as_ptr() as usize % LINE_BYTES == 0);
    let to = to.as_mut_ptr().cast::<__m128i>();
    let from = from.as_ptr().cast::<__m128i>();
    // SAFETY: the caller checked that `to` and `from` span 64 bytes each,
    // so the four 16-byte accesses stay inside them; `to` is 64-byte
    // aligned, so every streaming store is 16-byte aligned as required;
    // `_mm_loadu_si128` has no alignment requirement; SSE2 is part of the
    // x86_64 baseline. The slices do not overlap (one is `&mut`).
    unsafe {
        for i in 0..4 {
            _mm_stream_si128(to.add(i), _mm_loadu_si128(from.add(i)));
        }
    }
}

/// Orders the streaming stores made so far before every later store, so
/// that a thread synchronising with this one afterwards sees them.
#[inline]
pub(super) fn fence() {
    // SAFETY: `sfence` only orders stores; SSE is part of the x86_64
    // baseline, so the instruction exists on every x86_64 CPU.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_sfence();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C, align(64))]
    struct Lines([u64; 24]);

    #[test]
    fn aligned_lines_are_streamed_and_others_copied() {
        let mut buf = Lines([0; 24]);
        let src: Vec<u64> = (1..=8).collect();
        store_line(&mut buf.0[8..16], &src);
        store_line(&mut buf.0[3..11], &src); // unaligned: plain copy
        fence();
        assert_eq!(&buf.0[3..11], &src[..]);
        assert_eq!(&buf.0[11..16], &src[3..8]);
        store_line(&mut buf.0[20..22], &src[..2]);
        assert_eq!(&buf.0[20..22], &[1, 2]);
    }
}
