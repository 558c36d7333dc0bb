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
//! The processes talk through the [`transport::Transport`] trait; the
//! backend is timely dataflow (`transport::timely_backend`, the only
//! module that uses timely), whose structure is the paper's: worker
//! threads, one send and one receive thread per peer, queues between
//! them, progress tracking instead of barriers.
//!
//! This crate does not read or write files (the CLI connects it to
//! numakit's I/O) and does not start remote machines (srun, mpirun or a
//! hostfile do; [`launch`] reads what they set).

// No unsafe code here: what needs it (syscalls, raw buffers) lives in the
// placement and pool crates behind safe wrappers.
#![forbid(unsafe_code)]

pub mod error;
pub mod frames;
pub mod join;
pub mod launch;
pub mod message;
pub mod metrics;
pub mod partition;
pub mod predicate;
pub mod reference;
pub mod run;
pub mod schedule;
pub mod sink;
pub mod table;
pub mod transport;

pub use error::{ClusterError, Result};
pub use join::JoinSpec;
pub use message::Side;
pub use predicate::Predicate;
pub use run::{run_process, run_process_delivering, ClusterResult, Deliver, ProcessRun};
pub use schedule::SendOrder;
pub use sink::{Output, PartOutcome, PartRecord, PartialResult, ResultRow};
