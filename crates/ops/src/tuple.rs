//! The row every operator moves: a 64-bit key and a 64-bit payload.
//!
//! Sixteen bytes, four to a cache line, the shape of Balkesen et al.'s
//! workloads. The payload is an opaque 64-bit value: a row id, a value to
//! aggregate (read as `i64`), or anything the caller encodes.

use bytemuck::{Pod, Zeroable};
use serde::{Deserialize, Serialize};

/// A key and its payload.
#[repr(C)]
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Pod,
    Zeroable,
    Serialize,
    Deserialize,
)]
pub struct Tuple {
    /// The join, group or sort key.
    pub key: u64,
    /// The value carried with the key: a row id, a value to aggregate
    /// (read as `i64`), or whatever the caller encodes.
    pub payload: u64,
}

impl Tuple {
    /// The tuple `(key, payload)`.
    pub const fn new(key: u64, payload: u64) -> Self {
        Self { key, payload }
    }
}

/// Bytes per tuple.
pub const TUPLE_BYTES: usize = std::mem::size_of::<Tuple>();
