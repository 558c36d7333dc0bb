//! # numakit-shuffle
//!
//! The shuffle primitive of Li et al. (CIDR 2013): N workers each hold N
//! partitions in their own node's memory, and consumer i receives piece i
//! of every producer's partition. [`schedule`] describes who reads what at
//! which step (naive, coordinated ring, coordinated random, thread
//! migration with and without state copy); the executor runs a schedule on
//! the pool, tight (lock-step) or loose, consuming in place or copying into
//! consumer-local buffers. [`mod@exchange`] is the same driver for operators:
//! it calls the operator's closure for every (consumer, producer) visit.

// No unsafe code here: what needs it (syscalls, raw buffers) lives in the
// placement and pool crates behind safe wrappers.
#![forbid(unsafe_code)]

pub mod data;
pub mod error;
pub mod exchange;
pub mod exec;
pub mod schedule;

pub use data::{layout_of, Partition, ShuffleData, Skew};
pub use error::{Result, ShuffleError};
pub use exchange::{exchange, pin_workers_home, schedule_for, Exchange, ExchangeReport, Visit};
pub use exec::{plain_read, shuffle, Form, ShuffleOptions, ShuffleRun};
pub use schedule::{Access, Layout, Schedule, Strategy, SyncMode};
