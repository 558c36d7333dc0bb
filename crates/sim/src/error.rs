//! Errors of the simulator: machines it cannot model, schedules that do not
//! fit the machine, and options out of range. It does not wrap topology
//! errors beyond what a simulation needs (a preset lookup is the caller's).

use numakit_topology::NodeId;

/// Why a machine could not be modelled or a schedule not simulated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// The topology has no node with CPUs, so nothing can run.
    #[error("the topology has no node with CPUs: there is nowhere to run a consumer")]
    NoComputeNodes,

    /// A node whose memory is read has no described bandwidth.
    #[error("node {node} has no memory_bandwidth_gbs: describe the machine (or probe it) before simulating")]
    MissingBandwidth {
        /// The node (with CPUs) whose `memory_bandwidth_gbs` is missing.
        node: NodeId,
    },

    /// A machine of several nodes without interconnect links.
    #[error("{nodes} nodes but no interconnect links: describe the links (bandwidth per direction) before simulating")]
    NoLinks {
        /// How many nodes the topology has.
        nodes: usize,
    },

    /// Two compute nodes that no chain of links joins.
    #[error("no route from node {from} to node {to} over the described links")]
    Unreachable {
        /// The node data would be read from.
        from: NodeId,
        /// The node no route reaches.
        to: NodeId,
    },

    /// A bandwidth that is zero, negative or not a number.
    #[error("{what} must be a positive finite bandwidth, got {value}")]
    BadCapacity {
        /// Which capacity: `memory bandwidth of node 2`, `link 0-1`.
        what: String,
        /// The value found, in GB/s.
        value: f64,
    },

    /// The schedule was built for another number of sockets.
    #[error("the schedule has {schedule} sockets but the machine has {machine} nodes with CPUs")]
    LayoutMismatch {
        /// Sockets (S) of the schedule's layout.
        schedule: usize,
        /// Nodes with CPUs of the modelled machine.
        machine: usize,
    },

    /// The schedule does not visit every (consumer, producer) pair once.
    #[error("invalid schedule: {0}")]
    InvalidSchedule(String),

    /// An option (bytes, threads, calibration constant) out of range.
    #[error("bad option: {0}")]
    BadOption(String),

    /// The simulation stopped making progress (a flow got no bandwidth).
    #[error("the simulation stalled after {events} events at t = {seconds} s")]
    Stalled {
        /// Rate recomputations done before giving up.
        events: usize,
        /// Simulated time reached, in seconds.
        seconds: f64,
    },
}
