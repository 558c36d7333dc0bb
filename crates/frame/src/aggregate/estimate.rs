//! How many groups a group-by will have, estimated before any aggregation
//! from a sample of the key codes (a HyperLogLog sketch of blocks of rows
//! spread over every part, scaled up to the input as the operators' own
//! estimate does). It steers the choice of path only; results never
//! depend on it.

use numakit_ops::aggregate::estimate::scale_up;
use numakit_ops::aggregate::hll::{HyperLogLog, DEFAULT_PRECISION};

use crate::keys::GroupKeys;

/// Rows sketched in all.
const SAMPLE_ROWS: usize = 1 << 17;
/// Consecutive rows taken at a time.
const BLOCK_ROWS: usize = 64;

/// The estimated number of groups of `keys` (null keys count as one).
pub(crate) fn estimate_groups(keys: &GroupKeys) -> u64 {
    let rows: usize = keys.parts.iter().map(|p| p.codes.len()).sum();
    if rows == 0 {
        return 0;
    }
    let Ok(mut sketch) = HyperLogLog::new(DEFAULT_PRECISION) else {
        return rows as u64;
    };
    let blocks = (SAMPLE_ROWS / BLOCK_ROWS).max(1);
    let stride = (rows / blocks).max(BLOCK_ROWS);
    let mut sampled = 0u64;
    let mut nulls = false;
    let mut at = 0usize;
    for part in &keys.parts {
        let len = part.codes.len();
        while at < len {
            for row in at..(at + BLOCK_ROWS).min(len) {
                if part.invalid.binary_search(&(row as u32)).is_ok() {
                    nulls = true;
                } else {
                    sketch.insert(part.codes[row]);
                }
                sampled += 1;
            }
            at += stride;
        }
        at -= len;
    }
    scale_up(
        sketch.estimate() + f64::from(u8::from(nulls)),
        sampled,
        rows as u64,
    )
}
