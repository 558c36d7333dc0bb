//! # numakit-interfere
//!
//! Interference between workloads that share a machine: numakit's own
//! kernels (a streaming scan, a hash probe into a table the size of the
//! usable last-level cache, a pointer chase, a compute loop, the radix join
//! and the aggregation) run in pairs at the same time, each pinned to a
//! CPU, co-located (two CPUs of one node, sharing its last-level cache and
//! memory controllers) and, where the machine has a second node, isolated
//! (on different nodes). Each one's throughput is compared with its
//! throughput alone: the slowdown matrix ([`matrix`]). From the matrix each
//! workload is classified by what it needs, in the spirit of MCC-DB
//! ([`classify`]): how much a scan beside it slows it (cache sensitivity),
//! how much it slows a scan (bandwidth appetite).
//!
//! The co-scheduler ([`plan`]) places concurrent jobs on nodes and CPUs
//! so that their predicted interference is least, from those figures or
//! from the workloads' declared characters, explains its choice, and
//! measures it against naive placement.

pub mod cell;
pub mod classify;
pub mod error;
pub mod matrix;
pub mod plan;
pub mod workload;

pub use cell::Cell;
pub use error::{InterfereError, Result};
pub use matrix::{InterferenceReport, InterferenceRequest};
pub use plan::{PlanReport, PlanRequest};
pub use workload::{Sizes, Workload};
