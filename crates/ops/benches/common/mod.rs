//! What the operators' benchmarks share: the median of repetitions and
//! whether `cargo test` runs them as a quick check (without `--bench`).

#![allow(dead_code)] // each benchmark uses what it needs

/// The median of `values` (the upper one of an even count).
pub(crate) fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// True when run by `cargo test` (one quick pass), false under `cargo bench`.
pub(crate) fn quick() -> bool {
    !std::env::args().any(|a| a == "--bench")
}
