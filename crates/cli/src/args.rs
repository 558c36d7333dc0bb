//! The command line: the commands and the global options. Each command's
//! own options live beside the command (`commands/*/args.rs` or the
//! command's module) and are re-exported here; nothing below imports this
//! module, so the arguments flow one way (args -> commands).

use clap::{Parser, Subcommand};
use numakit_placement::{MemoryLimit, PlacementMode};

pub use crate::commands::bench::{BenchCommand, PoolBenchArgs};
pub use crate::commands::run::args::RunArgs;
pub use crate::commands::shuffle::ShuffleArgs;
pub use crate::commands::simulate::SimulateArgs;
pub use crate::commands::topo::TopoArgs;
pub use crate::common::parallel_sum::SumArgs;
pub use crate::common::pool::PoolArgs;

const ABOUT: &str = "NUMA-aware data processing: know the machine, place threads and memory, run work next to its data";

const LONG_ABOUT: &str = "\
numakit discovers the NUMA topology of this machine (or loads a described one), \
pins threads and places memory on chosen nodes, and runs work on a worker pool \
that keeps tasks next to their data.

Start with `numakit run` (the main job on built-in data), then `numakit topo` \
and `numakit doctor` to see what this machine gives you.";

/// The whole command line: the command chosen and the global options that
/// every command takes.
#[derive(Debug, Parser)]
#[command(name = "numakit", version, about = ABOUT, long_about = LONG_ABOUT)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,

    /// Print machine-readable JSON instead of tables.
    #[arg(long, global = true)]
    pub json: bool,

    /// How placement requests are enforced: `strict` (refusals are errors),
    /// `best-effort` (one warning, then run unplaced) or `off` (never pin or
    /// set memory policies).
    #[arg(
        long,
        global = true,
        default_value = "best-effort",
        value_name = "MODE"
    )]
    pub placement: PlacementMode,

    /// Memory the command may use: bytes (8GiB, 512M, 2GB) or a percentage
    /// of what is available (75%). Default: 80% of the memory available to
    /// the process (its cgroup's limit and `ulimit -v` included). Every
    /// command checks its inputs, buffers and tables against it before it
    /// allocates: past it, one clear line naming the option, never an abort.
    #[arg(long, global = true, value_name = "SIZE", value_parser = crate::common::parse::memory_limit)]
    pub memory_limit: Option<MemoryLimit>,

    /// More detail on stderr (repeat for debug output).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// No progress or warnings on stderr.
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

/// The commands; each variant's doc comment is its `--help` summary.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run numakit's main job on built-in data: topology, doctor, a parallel
    /// reduction over node-placed memory with per-node statistics, a
    /// shuffle, and the simulator's predictions for Li's 4-socket server.
    Run(RunArgs),
    /// Show the machine: nodes, CPUs, cores, caches, memory, distances,
    /// what this process may use, and links of described machines.
    Topo(TopoArgs),
    /// Check whether this machine or container gives numakit NUMA control,
    /// by placing memory and pinning threads and verifying where they landed.
    Doctor,
    /// The shuffle primitive (Li et al. §4.1): every schedule, tight and
    /// loose, measured against a plain parallel read of the same bytes;
    /// `--sweep` for the thread-count sweep, `--plan` for a recommendation.
    Shuffle(ShuffleArgs),
    /// Predict every shuffle schedule on a described machine with the
    /// interconnect simulator (calibrated on Li et al. Table 1), and the
    /// thread sweep of Figure 7.
    Simulate(SimulateArgs),
    /// Equi-join two tables (CSV/Parquet/Arrow files with columns of any
    /// common type and nulls, or generated 64-bit keys): no-partitioning
    /// hash join, radix joins PRO and CPRL, or MPSM sort-merge join; inner,
    /// left outer, semi or anti. Prints the first result rows (or writes
    /// them with --out) and the time of each phase.
    Join(crate::commands::ops::args::JoinArgs),
    /// Group by key columns of any type and compute any number of COUNT,
    /// SUM, MIN, MAX and AVG aggregates (--agg); one integer value column
    /// runs by shuffle, thread migration, or migration with state copy (Li
    /// §4.3), or the method numakit picks from an estimate of the groups.
    Aggregate(crate::commands::ops::args::AggregateArgs),
    /// Sort a table by key columns of any type, ascending or descending,
    /// nulls first or last, carrying every column: local radix sort of
    /// order-preserving codes, sampled splitters, exchange through the
    /// shuffle, multi-way merge. Input already in order is not re-sorted.
    Sort(crate::commands::ops::args::SortArgs),
    /// The Phoenix MapReduce applications on numakit's runtime (word-count,
    /// histogram, kmeans, linear-regression, matrix-multiply, pca,
    /// string-match), on generated input or Phoenix++ input files; the time
    /// of split, map, reduce and merge, and the speedup with --sweep.
    Mapreduce(crate::commands::mapreduce::args::MapReduceArgs),
    /// Measure the machine's NUMA character: latency and read/write/copy
    /// bandwidth between every pair of nodes (thread sweep to saturation,
    /// cross traffic), Kiefer's four experiments, and placement strategies
    /// for partitioned work; `--save` writes the machine for the simulator.
    Probe(crate::commands::probe::args::ProbeArgs),
    /// Interference between co-located workloads (a scan, a cache-sized
    /// hash probe, a pointer chase, a compute loop, the radix join, the
    /// aggregation): each pair at the same time on two CPUs of a node (and
    /// of two nodes where there are), each one's slowdown against running
    /// alone, and each classified by cache sensitivity and bandwidth
    /// appetite.
    Interfere(crate::commands::interfere::InterfereArgs),
    /// Benchmarks (medians of repetitions, measured side by side).
    #[command(subcommand)]
    Bench(BenchCommand),
    /// The distributed join across processes and machines (Chakraborty):
    /// hash distribution or broadcast, ring-order exchange pipelined with
    /// the join, per-process loads, join span and intra-node gain.
    #[command(subcommand)]
    Cluster(crate::commands::cluster::args::ClusterCommand),
    /// Rerun a figure or table of Li, Kiefer, Chakraborty or Phoenix
    /// Rebirth with numakit's own commands, our figures beside the
    /// published ones, the paper's claims checked and what differs; `--list`
    /// shows every item of the four papers and how each is reproduced.
    Paper(crate::commands::paper::PaperArgs),
}
