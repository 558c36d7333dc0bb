//! How the C allocator keeps memory between one batch and the next.
//!
//! numakit decodes files batch by batch and drops each batch once it is
//! used; glibc would serve each batch's megabyte-sized buffers with fresh
//! `mmap`s and hand them back with `munmap`, so every batch paid its page
//! faults again (a third of a streamed group-by's time on our VMs). Raising
//! the mmap threshold to glibc's maximum and the trim threshold well above
//! it keeps freed buffers in the allocator's heaps for the next batch.
//!
//! It does not change how much memory is used at the peak, and does
//! nothing on other C libraries.

/// glibc's ceiling for the mmap threshold on 64-bit machines.
const MMAP_THRESHOLD: libc::c_int = 32 << 20;
/// Freed memory at the top of a heap is returned past this.
const TRIM_THRESHOLD: libc::c_int = 1 << 30;

/// Tunes the allocator; call once, first thing in `main`.
pub fn keep_freed_memory() {
    #[cfg(target_env = "gnu")]
    {
        // SAFETY: mallopt only sets the allocator's tuning parameters; it is
        // called before any other thread exists, and a refused value leaves
        // the default in place (its return value says so; either is fine).
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        }
    }
}
