//! Runs a kernel compiled for AVX2 where the CPU has it, and for the
//! baseline instruction set elsewhere.
//!
//! The kernels of the numeric applications are plain loops that the
//! compiler vectorises; compiled for AVX2 they process twice as many
//! 32-bit lanes per instruction and gain a single-instruction 32-bit
//! multiply. A kernel implements [`Kernel`] with an `#[inline(always)]`
//! `run`, and [`run`] calls it through a `#[target_feature]` wrapper when
//! the CPU allows, so one source yields both copies. (AVX-512 would need
//! Rust 1.89, past the workspace's minimum.)
//!
//! It changes how fast a kernel runs, never what it computes.

/// A computation that runs faster with wide instructions. `run` must be
/// `#[inline(always)]` so that the wide wrapper compiles its body.
pub trait Kernel {
    /// What the computation returns.
    type Output;
    /// Does the computation.
    fn run(self) -> Self::Output;
}

/// Whether this CPU runs the AVX2 copies.
#[inline]
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Runs `kernel`, compiled for AVX2 where the CPU has it.
#[inline]
pub fn run<K: Kernel>(kernel: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    if available() {
        // SAFETY: the CPU has AVX2, the only feature the wrapper enables
        // (checked just above).
        return unsafe { run_avx2(kernel) };
    }
    kernel.run()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn run_avx2<K: Kernel>(kernel: K) -> K::Output {
    kernel.run()
}
