//! # numakit-probe
//!
//! The memory probe: what a machine's NUMA character is, measured the way
//! Li et al. (Table 1) and Kiefer et al. (§3, §4) measured theirs.
//!
//! - [`matrix`]: for every pair (CPU node, memory node), dependent-load
//!   latency ([`chase`]) with base and huge pages, read, write and copy
//!   bandwidth ([`stream`]) with a thread sweep to saturation, and
//!   bandwidth beside cross traffic ([`bandwidth`]).
//! - [`all_remote`]: Li §2's every node reading at once, its own memory
//!   against the other nodes' memory.
//! - [`kiefer`]: the four synthetic experiments of Kiefer et al.'s Table 1
//!   (remote access, thread migration, cache migration, cache concurrency).
//! - [`strategies`]: placement strategies for partitioned work (default,
//!   aligned, 1-ahead, interleave; Kiefer §4) on numakit's own scan,
//!   aggregation and join.
//! - [`describe`]: a measured machine written as a described machine, so
//!   that the simulator and the shuffle planner can reason about it.
//!
//! Every measurement places its memory and threads through
//! `numakit-placement` and checks where they really were (page-location
//! queries, `getcpu`). This crate measures and reports data; tables,
//! charts and files are the CLI's.

// No unsafe code here: what needs it (syscalls, raw buffers) lives in the
// placement and pool crates behind safe wrappers.
#![forbid(unsafe_code)]

pub mod all_remote;
pub mod bandwidth;
pub mod budget;
pub mod chase;
pub mod clock;
pub mod describe;
pub mod error;
pub mod kiefer;
pub mod latency;
pub mod matrix;
pub mod strategies;
pub mod stream;
pub mod team;

pub use error::{ProbeError, Result};
pub use matrix::{MatrixOptions, MatrixReport};
