//! What every command shares: the one output path ([`output`]), exit
//! codes and usage errors ([`usage`], [`error_line`]), the memory budget
//! ([`budget`]), files written whole ([`files`]), option parsers
//! ([`parse`]), progress ([`progress`]) and the parallel sum of the main
//! job and the pool benchmark ([`parallel_sum`]). Nothing here knows a
//! particular command.

pub mod budget;
pub mod cache_record;
pub mod error_line;
pub mod files;
pub mod output;
pub mod parallel_sum;
pub mod parse;
pub mod pool;
pub mod progress;
pub mod usage;
