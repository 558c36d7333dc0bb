//! # numakit-cli
//!
//! The `numakit` command: argument parsing, one module per command, and
//! the text and JSON rendering of results. The work itself lives in the
//! library crates; this crate only wires them to a terminal. `reduce` is
//! the main job's built-in workload, shared with the benchmarks.

pub mod allocator;
pub mod args;
pub mod budget;
pub mod chart;
pub mod closed_pipe;
pub mod cluster_args;
pub mod commands;
pub mod error_line;
pub mod files;
pub mod format;
pub mod heatmap;
pub mod logger;
pub mod mr_args;
pub mod op_args;
pub mod output;
pub mod probe_args;
pub mod progress;
pub mod reduce;
pub mod signals;
pub mod usage;
