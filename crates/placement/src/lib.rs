//! # numakit-placement
//!
//! Where threads run and where memory lives. The [`Placer`] pins threads to
//! a CPU, a CPU set or a node, and sets memory policies (local, bind,
//! preferred, interleave) for a thread or a region, validating every id
//! against the [`numakit_topology::Topology`]. [`NodeBuffer`] is memory
//! placed on chosen nodes; [`pages`] asks the kernel where pages really are
//! and migrates them; [`memory_limit`] is the limit every layer checks
//! before it allocates; [`doctor`] checks what this machine or container lets
//! us control; [`resctrl`] partitions the caches and memory bandwidth
//! between groups of threads; [`AtomicWords`] is placed memory that threads
//! share. All system calls live in [`sys`], the crate's only unsafe module
//! besides the raw buffer and the shared words. No threads are pooled here:
//! that is the pool's layer.

pub mod buffer;
pub mod counters;
pub mod doctor;
pub mod error;
pub mod memory_limit;
pub mod pages;
pub mod placer;
pub mod policy;
pub mod resctrl;
pub mod shared_words;
pub mod sys;

pub use buffer::{BufferOptions, HugePages, NodeBuffer};
pub use error::{PlacementError, Result};
pub use memory_limit::{LimitExceeded, MemoryLimit};
pub use pages::PageLocation;
pub use placer::{current_affinity, current_cpu, Outcome, PlacementMode, Placer};
pub use policy::{MemPolicy, Placement};
pub use shared_words::AtomicWords;
