//! # numakit-cluster
//!
//! The distributed join across a shared-nothing cluster of multicore
//! machines, as Chakraborty describes it ("Processing Database Joins over
//! a Shared-Nothing System of Multicore Machines"): R and S are
//! partitioned over P processes; equi-joins go by hash distribution
//! (all-to-all personalized exchange), non-equi joins by broadcasting the
//! smaller relation; each process computes with numakit's pool while its
//! links send and receive, exchanges in ring order (or all at once),
//! joins every bucket as soon as it arrives, needs no global barrier, and
//! delivers its result to a sink. The metrics are the paper's §V:
//! computation and communication loads, join span, intra-node gain,
//! speedup.
//!
//! What a process holds of its peers' pieces can be bounded
//! ([`JoinSpec::receive_budget`]): senders then wait for credit that the
//! receiver gives back as it joins and releases their pieces
//! ([`credit`]), so a join larger than the budget still completes.
//!
//! The processes talk through the [`transport::Transport`] trait; the
//! backend is timely dataflow (`transport::timely_backend`, the only
//! module that uses timely), whose structure is the paper's: worker
//! threads, one send and one receive thread per peer, queues between
//! them, progress tracking instead of barriers.
//!
//! This crate does not read its input files (the CLI connects it to
//! numakit's I/O) and does not start remote machines (srun, mpirun or a
//! hostfile do; [`launch`] reads what they set). The one thing it writes
//! is a result directory, through numakit's I/O layer: every process's
//! part, published by the sink as a whole or not at all
//! ([`result_dir`]).
//!
//! # Examples
//!
//! Two processes of an equi-join, as threads of one program talking over
//! loopback TCP through timely. Each holds half of R (keys 0..100, once)
//! and a whole copy of S's keys 0..100, so every one of S's 200 rows
//! matches one row of R; the sink (process 0) gets the merged result.
//!
//! ```
//! use std::error::Error;
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use numakit_cluster::launch::free_local_addresses;
//! use numakit_cluster::transport::{self, connect::Endpoints};
//! use numakit_cluster::{run_process, JoinSpec, Predicate, ProcessRun};
//! use numakit_ops::{Relation, Tuple};
//! use numakit_placement::PlacementMode;
//! use numakit_pool::PoolBuilder;
//!
//! type Failure = Box<dyn Error + Send + Sync>;
//!
//! /// Process `i` of two: its pool, its rows, its connections, its join.
//! fn process(i: usize, addresses: Vec<String>, spec: JoinSpec) -> Result<ProcessRun, Failure> {
//!     let topology = Arc::new(numakit_topology::discover()?);
//!     let pool = PoolBuilder::new(topology).placement(PlacementMode::Off).threads(1).build()?;
//!     let first = 50 * i as u64;
//!     let r: Vec<Tuple> = (first..first + 50).map(|k| Tuple::new(k, k)).collect();
//!     let s: Vec<Tuple> = (0..100).map(|k| Tuple::new(k, i as u64)).collect();
//!     let (left, right) = (Relation::from_tuples(&pool, &r)?, Relation::from_tuples(&pool, &s)?);
//!     let endpoints = Endpoints {
//!         process: i,
//!         addresses,
//!         timeout: Duration::from_secs(10),
//!         peer_timeout: transport::connect::DEFAULT_PEER_TIMEOUT,
//!         fingerprint: spec.fingerprint(),
//!     };
//!     let transport = transport::connect(&endpoints)?;
//!     Ok(run_process(&pool, transport, &left, &right, &spec, Duration::from_secs(10))?)
//! }
//!
//! # fn main() -> Result<(), Failure> {
//! let addresses = free_local_addresses(2)?;
//! let spec = JoinSpec::new(Predicate::Equal);
//! let processes: Vec<_> = (0..2)
//!     .map(|i| {
//!         let (addresses, spec) = (addresses.clone(), spec.clone());
//!         std::thread::spawn(move || process(i, addresses, spec))
//!     })
//!     .collect();
//! let runs = processes
//!     .into_iter()
//!     .map(|p| p.join().expect("a process panicked"))
//!     .collect::<Result<Vec<_>, _>>()?;
//!
//! let result = runs[0].cluster.as_ref().expect("process 0 is the sink");
//! assert_eq!(result.result.rows, 200);
//! assert_eq!(result.processes.len(), 2);
//! assert!(runs[1].cluster.is_none(), "only the sink has the whole result");
//! assert_eq!(runs[0].own.result.rows + runs[1].own.result.rows, 200);
//! # Ok(())
//! # }
//! ```

// No unsafe code here: what needs it (syscalls, raw buffers, the
// result directory's renameat2) lives in the placement and pool crates
// behind safe wrappers.
#![forbid(unsafe_code)]

pub mod credit;
pub mod error;
pub mod frames;
pub mod join;
pub mod launch;
pub mod message;
pub mod metrics;
pub mod partition;
pub mod predicate;
pub mod reference;
pub mod result_dir;
pub mod run;
pub mod schedule;
pub mod sink;
pub mod table;
pub mod transport;

pub use error::{ClusterError, Result};
pub use frames::FrameMode;
pub use join::JoinSpec;
pub use message::Side;
pub use predicate::Predicate;
pub use result_dir::ResultDir;
pub use run::{run_process, run_process_delivering, ClusterResult, Deliver, ProcessRun};
pub use schedule::SendOrder;
pub use sink::{Output, PartOutcome, PartRecord, PartialResult, ResultRow};
