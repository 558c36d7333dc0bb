//! # numakit-cli
//!
//! The `numakit` command: argument parsing, one folder per command family,
//! and the text and JSON rendering of results. The work itself lives in
//! the library crates; this crate only wires them to a terminal.
//!
//! - [`args`]: the command line's top level (the commands, the global
//!   options, the pool's options); each family's own options live in its
//!   folder under [`commands`].
//! - [`commands`]: one module or folder per command.
//! - [`common`]: what every command shares: output, exit codes and usage
//!   errors, the memory budget, files, progress, option parsers, and the
//!   parallel sum that the main job and the benchmarks run.
//! - [`render`]: tables, charts and heat maps.
//! - [`process`]: the process's set-up in `main`: SIGPIPE, signals, the
//!   allocator, the logger.

// Every command writes through `common::output`, which returns errors
// instead of panicking on a full disk or a closed pipe.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod args;
pub mod commands;
pub mod common;
pub mod dispatch;
pub mod process;
pub mod render;
