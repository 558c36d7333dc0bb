//! The command line: every command, option and its help text.

pub use crate::common::pool::PoolArgs;
use clap::{Args, Parser, Subcommand};
use numakit_placement::{HugePages, MemoryLimit, PlacementMode};

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
    /// Benchmarks (medians of repetitions, measured side by side).
    #[command(subcommand)]
    Bench(BenchCommand),
    /// The distributed join across processes and machines (Chakraborty):
    /// hash distribution or broadcast, ring-order exchange pipelined with
    /// the join, per-process loads, join span and intra-node gain.
    #[command(subcommand)]
    Cluster(crate::commands::cluster::args::ClusterCommand),
}

/// The options of `numakit run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Data size of the reduction and the shuffle in MiB; also scales the
    /// operators' data (a 250K x 1M-row join per 64 MiB).
    #[arg(long, default_value_t = 256, value_name = "MIB")]
    pub size_mib: u64,

    /// The workers of the main job's pool.
    #[command(flatten)]
    pub pool: PoolArgs,

    /// How the parallel sum (section 3) lays out and walks its data.
    #[command(flatten)]
    pub sum: SumArgs,
}

/// How the parallel sum of `run` and `bench pool` lays out and walks its
/// data.
#[derive(Debug, Clone, Args)]
pub struct SumArgs {
    /// Huge pages for the data: `never` (exact per-page placement),
    /// `transparent` (2 MiB THP, fewer TLB misses) or `reserved` (hugetlbfs pool).
    #[arg(long, default_value = "never", value_name = "MODE")]
    pub huge_pages: HugePages,

    /// Morsel size in KiB: the unit of work queued at a node.
    #[arg(long, default_value_t = crate::common::parallel_sum::DEFAULT_MORSEL_KIB, value_name = "KIB", value_parser = crate::common::parse::positive)]
    pub morsel_kib: usize,
}

/// The options of `numakit topo`.
#[derive(Debug, Args)]
pub struct TopoArgs {
    /// A described machine instead of this one: a preset name (see
    /// --list-presets) or a JSON description file.
    #[arg(long, value_name = "PRESET|FILE")]
    pub machine: Option<String>,

    /// List the built-in machine presets and exit.
    #[arg(long)]
    pub list_presets: bool,
}

/// The benchmarks of `numakit bench`.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Parallel sum of node-placed u64 through the pool vs plain threads
    /// reading the same memory, plus the cost of dispatching one task.
    Pool(PoolBenchArgs),
}

/// The options of `numakit bench pool`.
#[derive(Debug, Args)]
pub struct PoolBenchArgs {
    /// Data size in MiB (the foundation's goal is measured at >= 1024).
    #[arg(long, default_value_t = 1024, value_name = "MIB")]
    pub size_mib: u64,

    /// Repetitions of each method (alternating); medians are reported.
    #[arg(long, default_value_t = 7, value_name = "N", value_parser = crate::common::parse::reps)]
    pub reps: usize,

    /// The workers of the pool (the plain sum uses as many threads).
    #[command(flatten)]
    pub pool: PoolArgs,

    /// How the sum lays out and walks its data.
    #[command(flatten)]
    pub sum: SumArgs,

    /// Empty tasks dispatched to measure the per-task cost.
    #[arg(long, default_value_t = 200_000, value_name = "N")]
    pub tasks: usize,
}

/// The options of `numakit shuffle`.
#[derive(Debug, Args)]
pub struct ShuffleArgs {
    /// Data size in MiB (64-bit integers spread over all partitions).
    #[arg(long, default_value_t = 512, value_name = "MIB")]
    pub size_mib: u64,

    /// The workers; their count must divide evenly over the nodes.
    #[command(flatten)]
    pub pool: PoolArgs,

    /// Schedules to run, comma separated: naive, ring, random, migration,
    /// migration-copy.
    #[arg(
        long,
        default_value = "naive,ring,random,migration,migration-copy",
        value_delimiter = ',',
        value_name = "LIST"
    )]
    pub schedules: Vec<numakit_shuffle::Strategy>,

    /// Synchronization variants, comma separated: tight, loose.
    #[arg(
        long,
        default_value = "tight,loose",
        value_delimiter = ',',
        value_name = "LIST"
    )]
    pub sync: Vec<numakit_shuffle::SyncMode>,

    /// `pull` (consume in place) or `push` (copy into consumer-local buffers).
    #[arg(long, default_value = "pull", value_name = "FORM")]
    pub form: String,

    /// Piece sizes over consumers: `uniform` or `zipf:THETA`.
    #[arg(long, default_value = "uniform", value_name = "SKEW")]
    pub skew: String,

    /// State each consumer carries along with migration-copy, in KiB.
    #[arg(long, default_value_t = 64, value_name = "KIB")]
    pub state_kib: usize,

    /// Repetitions of every schedule (min/median/max are reported).
    #[arg(long, default_value_t = 5, value_name = "N", value_parser = crate::common::parse::reps)]
    pub reps: usize,

    /// Also sweep the thread count (naive, ring and migration, tight), as
    /// in Li Figure 7.
    #[arg(long)]
    pub sweep: bool,

    /// Write an SVG chart in the style of Li Figure 6 (and Figure 7 with
    /// --sweep, to FILE with `-sweep` before the extension).
    #[arg(long, value_name = "FILE")]
    pub chart: Option<std::path::PathBuf>,

    /// Recommend a schedule from the simulator instead of measuring.
    #[arg(long)]
    pub plan: bool,

    /// With --plan: a described machine (preset or JSON file) instead of this one.
    #[arg(long, value_name = "PRESET|FILE", requires = "plan")]
    pub machine: Option<String>,
}

/// The options of `numakit simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// The machine: a preset name (see `numakit topo --list-presets`) or a
    /// JSON description. Default: this machine.
    #[arg(long, value_name = "PRESET|FILE", conflicts_with = "all_presets")]
    pub machine: Option<String>,

    /// Every built-in preset, one after the other.
    #[arg(long)]
    pub all_presets: bool,

    /// Total threads, spread evenly over the sockets (default: every
    /// hardware thread, the configuration of "maximum bandwidth").
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Write the predictions as SVG charts: FILE (Figure 6 style) and FILE
    /// with `-sweep` before the extension (Figure 7). One machine only.
    #[arg(long, value_name = "FILE", conflicts_with = "all_presets")]
    pub chart: Option<std::path::PathBuf>,

    /// Predict Li's Figure 10 instead: group-by aggregation by shuffling
    /// (naive, ring) vs thread migration (with and without copying the
    /// table), from 1K to 64M distinct keys per partition, and where the
    /// ring shuffle overtakes migration. One partition per core unless
    /// `--threads` says otherwise.
    #[arg(long, conflicts_with = "chart")]
    pub aggregation: bool,
}
