//! # numakit-mapreduce
//!
//! A shared-memory MapReduce runtime in the Phoenix line (Phoenix Rebirth,
//! Phoenix++) on numakit's NUMA-aware pool.
//!
//! An application implements [`Job`]: how its input is split, what map
//! emits, which [`Combiner`] folds a key's values as they arrive, and what
//! reduce makes of them. A [`Runtime`] runs jobs on one pool, reused for
//! every phase and every run: map tasks are queued at the node that holds
//! their split (asked of the kernel), each worker folds into its own
//! container ([`ContainerKind`]: an array for small integer keys, a fixed
//! or a growable hash table), reduce merges one partition of every
//! worker's container per task, and the outputs merge in parallel, in the
//! order asked ([`OutputOrder`]). A [`KeepAll`] job's reduce reads a
//! key's values through a prefetching iterator ([`Values`]) over
//! chunks that never move ([`ValueChunks`]); [`Prefetch`] turns the
//! prefetching off. [`Input`] memory-maps a file or reads it
//! into node-placed blocks. Errors and panics in job code come back as a
//! [`MapReduceError`]; the pool stays usable.
//!
//! ```
//! use numakit_mapreduce::{Emitter, Job, JobError, JobOptions, Runtime, Split, Sum, split};
//! # use std::sync::Arc;
//! let topology = Arc::new(numakit_topology::discover().unwrap());
//! let pool = numakit_pool::PoolBuilder::new(topology)
//!     .placement(numakit_placement::PlacementMode::BestEffort)
//!     .build()
//!     .unwrap();
//!
//! /// Counts the words of a text.
//! struct WordCount;
//!
//! impl<'a> Job<'a> for WordCount {
//!     type Record = u8;
//!     type Key = &'a [u8];
//!     type Value = u64;
//!     type Combiner = Sum<u64>;
//!     type Output = u64;
//!
//!     fn split(&self, text: &'a [u8], target: usize) -> Vec<std::ops::Range<usize>> {
//!         split::words(text, target, |b| b.is_ascii_alphabetic())
//!     }
//!     fn map(&self, split: Split<'a, u8>, out: &mut Emitter<'_, 'a, Self>) -> Result<(), JobError> {
//!         for word in split.records.split(|b| !b.is_ascii_alphabetic()).filter(|w| !w.is_empty()) {
//!             out.emit(word, 1);
//!         }
//!         Ok(())
//!     }
//!     fn reduce(&self, _word: &&'a [u8], count: Sum<u64>) -> Result<u64, JobError> {
//!         Ok(count.0)
//!     }
//! }
//!
//! let text = b"the cat and the hat";
//! let out = Runtime::new(&pool).run(&WordCount, text, &JobOptions::default()).unwrap();
//! let the = out.pairs.iter().find(|(w, _)| *w == b"the").unwrap();
//! assert_eq!(the.1, 2);
//! ```

pub mod combiner;
pub mod container;
pub mod error;
pub mod input;
pub mod job;
mod locality;
pub mod order;
pub mod prefetch;
pub mod runtime;
pub mod split;
pub mod stats;
pub mod values;

/// Key/value pairs.
pub type Pairs<K, V> = Vec<(K, V)>;
/// Pairs cut into partitions (or sorted runs).
pub type Parts<K, V> = Vec<Pairs<K, V>>;

pub use combiner::{Combiner, Count, KeepAll, Max, Min, Sum};
pub use container::ContainerKind;
pub use error::{JobError, MapReduceError, Result};
pub use input::{Input, InputMode};
pub use job::{Emitter, Job, Split};
pub use order::OutputOrder;
pub use prefetch::Prefetch;
pub use runtime::{JobOptions, JobOutput, Runtime, DEFAULT_CHUNK_BYTES};
pub use stats::{CpuSplit, JobStats, NodeTasks, PhaseCpu, PhaseSeconds};
pub use values::{IntoValues, ValueChunks, Values};
