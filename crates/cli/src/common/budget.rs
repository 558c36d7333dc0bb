//! The process's memory limit (the global `--memory-limit`), set once
//! when the command starts and checked by every command before it
//! allocates what its options size: generated inputs, buffers, matrices,
//! files read whole. It is the placement layer's [`MemoryLimit`], the one
//! the operators check, not a second copy.
//!
//! It does not estimate needs: each command knows what its options cost
//! and says so in its check, naming the option.

use std::sync::OnceLock;

use anyhow::Result;
use numakit_placement::MemoryLimit;

static LIMIT: OnceLock<MemoryLimit> = OnceLock::new();

/// Sets the limit from `--memory-limit` (the default share when `None`).
/// Only the first call counts.
pub fn set(limit: Option<MemoryLimit>) {
    let _ = LIMIT.set(limit.unwrap_or_default());
}

/// The limit in force.
pub fn limit() -> MemoryLimit {
    *LIMIT.get_or_init(MemoryLimit::default)
}

/// Fails with one line unless `need` more bytes fit under the limit;
/// `what` says what needs them (`the word-count input (--size-mib
/// 999999)`).
pub fn check(what: &str, need: u64) -> Result<()> {
    Ok(limit().check(what, need)?)
}

/// `count` items of `size` bytes, saturating (sizes from options can be
/// absurd; the check then refuses them).
pub fn times(count: impl TryInto<u64>, size: u64) -> u64 {
    count.try_into().unwrap_or(u64::MAX).saturating_mul(size)
}
