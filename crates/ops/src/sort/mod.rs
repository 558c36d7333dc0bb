//! Sorting tuples by key, NUMA-aware: each worker sorts its local chunk
//! (LSD radix sort), sampled splitters cut the key range into one range
//! per worker, the ranges are exchanged through the shuffle, and each
//! worker merges the sorted runs it received. The result is one sorted
//! run per worker, in key order across workers.
//!
//! This module defines the vocabulary and dispatches; the steps live in
//! submodules.

use serde::Serialize;

use numakit_pool::Pool;

use crate::error::{OpsError, Result};
use crate::relation::Relation;
use crate::timing::{PhaseTime, Progress};
use crate::tuple::Tuple;

/// Sorts `tuples` by key (payloads follow their keys; order among equal
/// keys is unspecified). Single-threaded; the NUMA-aware sort runs one
/// per worker.
pub fn sort_local(tuples: &mut [Tuple]) {
    tuples.sort_unstable_by_key(|t| t.key);
}

/// The outcome of a sort.
#[derive(Debug, Default, Serialize)]
pub struct SortResult {
    /// The sorted relation: chunk w holds keys no larger than chunk w+1's.
    #[serde(skip)]
    pub sorted: Option<Relation>,
    pub phases: Vec<PhaseTime>,
}

/// Sorts `input` on `pool`.
pub fn sort(pool: &Pool, input: &Relation, progress: &dyn Progress) -> Result<SortResult> {
    input.check_pool(pool)?;
    let _ = progress;
    Err(OpsError::InvalidArgument(
        "the sort is not built yet".into(),
    ))
}
