//! The operator commands, `join`, `aggregate` and `sort`: their options
//! ([`args`]), what they share ([`common`]: pools, generated inputs,
//! repetitions), each command on generated data, and on files through the
//! table layer ([`tables`]).

pub mod aggregate;
pub mod args;
pub mod common;
pub mod join;
pub mod sort;
pub mod tables;
