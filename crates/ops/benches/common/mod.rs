//! What the operators' benchmarks share: whether `cargo test` runs them as
//! a quick check (without `--bench`). Their median is
//! `numakit_ops::timing::median`, the one every report uses.

#![allow(dead_code)] // each benchmark uses what it needs

/// True when run by `cargo test` (one quick pass), false under `cargo bench`.
pub(crate) fn quick() -> bool {
    !std::env::args().any(|a| a == "--bench")
}
