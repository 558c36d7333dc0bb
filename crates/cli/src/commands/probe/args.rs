//! The options of `numakit probe` and its experiments.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use numakit_topology::IdSet;

/// `numakit probe`: the matrices, or one of the experiments.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ProbeArgs {
    /// The experiment to run; `None` measures the matrices.
    #[command(subcommand)]
    pub experiment: Option<ProbeCommand>,

    /// The options of the matrices (used when no experiment is named).
    #[command(flatten)]
    pub matrix: MatrixArgs,
}

/// The experiments of `numakit probe`: Kiefer's, and the placement
/// strategies.
#[derive(Debug, Subcommand)]
pub enum ProbeCommand {
    /// Kiefer experiment 1: one thread reading and writing random words of
    /// a 128 MiB array on its own node vs on the nearest other node.
    RemoteAccess(KieferArgs),
    /// Kiefer experiment 2: one thread over a 16 MiB and a 128 MiB array,
    /// staying put vs moved to another node 100 times during the run.
    ThreadMigration(KieferArgs),
    /// Kiefer experiment 3: one thread per node over its own array,
    /// without migrations vs all rotating across the nodes (each arrival
    /// finds another thread's data in the cache).
    CacheMigration(KieferArgs),
    /// Kiefer experiment 4: groups of threads sharing one array each,
    /// every group on one node vs spread round-robin over the nodes.
    CacheConcurrency(KieferArgs),
    /// All four of Kiefer's experiments, as his Table 1.
    Kiefer(KieferArgs),
    /// Li §2: every node's threads reading at once, first each its own
    /// node's memory, then the other nodes' memory (round-robin); the
    /// bandwidth of both and their ratio (Li: 61 / 99 GB/s).
    AllRemote(AllRemoteArgs),
    /// Placement strategies for partitioned work (Kiefer §4): one instance
    /// per node running numakit's scan, aggregation and join, with threads
    /// and memory placed default, aligned, 1-ahead or interleaved;
    /// throughput normalized to default, and a recommendation.
    Strategies(StrategyArgs),
}

/// The matrices of every (CPU node, memory node) pair.
#[derive(Debug, Args)]
pub struct MatrixArgs {
    /// Larger buffers (1 GiB chases, 512 MiB bandwidth buffers), more
    /// repetitions, and a thread sweep for every pair and kernel.
    #[arg(long, conflicts_with = "quick")]
    pub full: bool,

    /// The default: 256 MiB chases, 128 MiB bandwidth buffers, one thread
    /// sweep per CPU node (its own memory); seconds per node pair.
    #[arg(long)]
    pub quick: bool,

    /// Probe only these nodes, as CPU nodes and as memory nodes (`0,2-3`).
    #[arg(long, value_name = "LIST", value_parser = crate::common::parse::ids)]
    pub nodes: Option<IdSet>,

    /// Rows: the nodes whose CPUs run the probe (default: every allowed
    /// node with CPUs).
    #[arg(long, value_name = "LIST", value_parser = crate::common::parse::ids, conflicts_with = "nodes")]
    pub cpu_nodes: Option<IdSet>,

    /// Columns: the nodes whose memory is probed (default: every allowed
    /// node with memory).
    #[arg(long, value_name = "LIST", value_parser = crate::common::parse::ids, conflicts_with = "nodes")]
    pub memory_nodes: Option<IdSet>,

    /// Most threads per node; the sweep goes up to it (default: every
    /// allowed CPU of the node).
    #[arg(long, value_name = "N")]
    pub threads_per_node: Option<usize>,

    /// The old spelling of --threads-per-node, kept only to say so
    /// (`--threads` is a pool's total everywhere else).
    #[arg(long = "threads", hide = true, value_name = "N")]
    pub threads_renamed: Option<String>,

    /// No thread sweep: measure with exactly --threads-per-node threads per node
    /// (or all of its CPUs), as tools that take a thread count do.
    #[arg(long)]
    pub no_sweep: bool,

    /// Size of the pointer chase in MiB; it must be much larger than the
    /// last-level cache (default: 256 MiB, 1 GiB with --full, or twice the
    /// largest cache sysfs reports, four times with --full, when that is
    /// more; at most an eighth of the memory left).
    #[arg(long, value_name = "MIB")]
    pub latency_mib: Option<u64>,

    /// Timed dependent loads per latency measurement.
    #[arg(long, value_name = "N")]
    pub loads: Option<u64>,

    /// Size of each bandwidth buffer in MiB; a copy uses two, cross traffic
    /// two more (default: sized like the chase).
    #[arg(long, value_name = "MIB")]
    pub bandwidth_mib: Option<u64>,

    /// Bytes each bandwidth measurement moves at least, in MiB (passes over
    /// the buffer; default 512, 4096 with --full).
    #[arg(long, value_name = "MIB")]
    pub pass_mib: Option<u64>,

    /// Repetitions of each measurement (the median is reported).
    #[arg(long, value_name = "N", value_parser = crate::common::parse::reps)]
    pub reps: Option<usize>,

    /// Order of the pointer chase: `random` (every line in one random
    /// order; nearly every load also misses the TLB, as a hash table's
    /// probes do) or `page-rounds` (every load on another page, the pages
    /// in one random order repeated for each line of a page: the pattern
    /// of lmbench's `lat_mem_rd -t`, to compare with it).
    #[arg(long, value_name = "ORDER", value_parser = ["random", "page-rounds"], default_value = "random")]
    pub chase_order: String,

    /// Measure only `latency` or only `bandwidth` (default: both).
    #[arg(long, value_name = "WHAT", value_parser = ["latency", "bandwidth"])]
    pub only: Option<String>,

    /// Skip the latency with transparent huge pages.
    #[arg(long)]
    pub no_huge_pages: bool,

    /// Skip bandwidth beside cross traffic.
    #[arg(long)]
    pub no_cross_traffic: bool,

    /// Write heat maps of the latency and bandwidth matrices as SVG.
    #[arg(long, value_name = "FILE")]
    pub chart: Option<PathBuf>,

    /// Write the measured machine as a described machine (JSON) for
    /// `numakit simulate --machine FILE` and `numakit shuffle --plan
    /// --machine FILE`.
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,

    /// The described machine's name (with --save).
    #[arg(long, value_name = "NAME", requires = "save")]
    pub name: Option<String>,
}

/// Sizes and counts of Kiefer's experiments.
#[derive(Debug, Args)]
pub struct KieferArgs {
    /// Random accesses per thread and setup (Kiefer: 4 billion in all).
    #[arg(long, default_value_t = 4_000_000, value_name = "N")]
    pub accesses: u64,

    /// The array that fits a last-level cache, in MiB.
    #[arg(long, default_value_t = 16, value_name = "MIB")]
    pub small_mib: u64,

    /// The array that does not, in MiB.
    #[arg(long, default_value_t = 128, value_name = "MIB")]
    pub large_mib: u64,

    /// Migrations per run (experiments 2 and 3).
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub migrations: u32,

    /// Threads of experiment 3 (one per node, at most this many).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub threads: usize,

    /// Groups of experiment 4.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub groups: usize,

    /// Threads per group in experiment 4.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub group_threads: usize,
}

/// Li §2's all-local against all-remote reading.
#[derive(Debug, Args)]
pub struct AllRemoteArgs {
    /// Reading threads per node (default: every allowed CPU of the node).
    #[arg(long, value_name = "N", value_parser = crate::common::parse::positive)]
    pub threads_per_node: Option<usize>,

    /// Only these nodes with CPUs read, and only their memory is read
    /// (`0,2-3`; default: every allowed node with CPUs).
    #[arg(long, value_name = "LIST", value_parser = crate::common::parse::ids)]
    pub nodes: Option<IdSet>,

    /// The buffer placed on each node, in MiB (its readers split it); it
    /// should be much larger than the last-level cache.
    #[arg(long, default_value_t = 256, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..))]
    pub buffer_mib: u64,

    /// Passes each thread reads over its share.
    #[arg(long, default_value_t = 4, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub passes: u32,

    /// Repetitions of each scenario (the median is reported).
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = crate::common::parse::reps)]
    pub reps: usize,
}

/// The placement-strategy comparison.
#[derive(Debug, Args)]
pub struct StrategyArgs {
    /// Partitions, one instance each (default: one per node with CPUs;
    /// more than that share the nodes' CPUs).
    #[arg(long, value_name = "N")]
    pub instances: Option<usize>,

    /// Rows each instance scans, aggregates, or probes in the join.
    #[arg(long, default_value_t = 4 << 20, value_name = "N")]
    pub rows: u64,

    /// Distinct keys of the aggregation.
    #[arg(long, default_value_t = 1 << 16, value_name = "N")]
    pub groups: u64,

    /// Rows of the join's build side (every probe row finds one).
    #[arg(long, default_value_t = 1 << 19, value_name = "N")]
    pub build_rows: u64,

    /// Workloads, comma separated: scan, aggregate, join.
    #[arg(
        long,
        default_value = "scan,aggregate,join",
        value_delimiter = ',',
        value_name = "LIST"
    )]
    pub workloads: Vec<numakit_probe::strategies::Workload>,

    /// Strategies, comma separated: default, aligned, 1-ahead, interleave
    /// (default is always run: the others are normalized to it).
    #[arg(
        long,
        default_value = "default,aligned,1-ahead,interleave",
        value_delimiter = ',',
        value_name = "LIST"
    )]
    pub strategies: Vec<numakit_probe::strategies::PlacementStrategy>,

    /// Timed repetitions (the median is reported), after one untimed.
    #[arg(long, default_value_t = 5, value_name = "N", value_parser = crate::common::parse::reps)]
    pub reps: usize,
}
