//! # numakit-ops
//!
//! Relational operators built on the NUMA-aware pool and the shuffle
//! primitive: radix partitioning (PRO and CPRL), equi-joins (no-partition
//! hash join, radix joins, MPSM sort-merge join), group-by aggregation (by
//! shuffle, by thread migration with or without state copy, or chosen
//! automatically), and a NUMA-aware sort.
//!
//! Operators work on [`Relation`]s: 64-bit keys with a 64-bit payload
//! ([`Tuple`]), held in one node-placed chunk per pool worker. Wider keys
//! and several payload columns are mapped onto this shape by the caller
//! (dictionary codes for keys, row ids for payloads). Every operator has a
//! plain sequential twin in [`mod@reference`] that tests compare it with.
//!
//! This crate does not read or write files and prints nothing: data in and
//! out is the I/O layer's, presentation the CLI's.

pub mod aggregate;
pub mod cache_probe;
pub mod chase;
pub mod datagen;
pub mod error;
pub mod hash;
pub mod join;
pub mod par;
pub mod partition;
mod prefetch;
pub mod recycle;
pub mod reference;
pub mod relation;
pub mod sort;
#[cfg(test)]
mod testing;
pub mod timing;
pub mod tuple;

pub use error::{OpsError, Result};
pub use relation::{Chunk, Relation};
pub use timing::{PhaseTime, PhaseTimer, Progress};
pub use tuple::Tuple;
