//! # numakit-mapreduce
//!
//! A shared-memory MapReduce runtime in the Phoenix line (Phoenix Rebirth,
//! Phoenix++), built on the NUMA-aware pool and placement layers.
//!
//! (Work in progress: the runtime is being built.)
