//! Options of `numakit cluster`: the distributed join across processes
//! and machines (Chakraborty), launched on one machine (`--local P`) or as
//! users start cluster jobs (a hostfile and a process index, from
//! `--process` or from srun / mpirun).

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// The subcommands of `numakit cluster`.
#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Join R and S partitioned over P processes: equi-joins by hash
    /// distribution, non-equi joins by broadcasting the smaller relation;
    /// every process computes on its pool while it sends and receives, in
    /// ring order or all at once, joins each bucket as it arrives, and
    /// reports to the sink (process 0). Prints the result, each process's
    /// computation and communication loads, join span and intra-node gain.
    ///
    /// Quick try on this machine: `numakit cluster join --local 4 --verify`.
    /// On a cluster: list one `host:port` per process in a hostfile and
    /// start `numakit cluster join --hostfile hosts --process I` on each
    /// machine, or let srun / mpirun start them (the index then comes from
    /// SLURM_PROCID or OMPI_COMM_WORLD_RANK; with mpirun pass
    /// `--bind-to none` so each process keeps all its CPUs for its pool).
    Join(ClusterJoinArgs),
}

/// The options of `numakit cluster join`.
#[derive(Debug, Clone, Args)]
pub struct ClusterJoinArgs {
    /// Start P processes of this program on this machine (loopback) and
    /// show the sink's result.
    #[arg(long, value_name = "P", conflicts_with = "hostfile")]
    pub local: Option<usize>,

    /// A file listing every process's address, one `host:port` (or
    /// `host`, see --port) per line, in process order.
    #[arg(long, value_name = "FILE", group = "peers")]
    pub hostfile: Option<PathBuf>,

    /// Internal (what --local gives its processes instead of a hostfile):
    /// every process's `host:port`, comma-separated, in process order.
    #[arg(
        long,
        value_name = "ADDRS",
        group = "peers",
        conflicts_with = "local",
        value_delimiter = ',',
        hide = true
    )]
    pub addresses: Option<Vec<String>>,

    /// This process's index in the hostfile (default: SLURM_PROCID,
    /// OMPI_COMM_WORLD_RANK or PMI_RANK).
    #[arg(long, value_name = "I", requires = "peers")]
    pub process: Option<usize>,

    /// Port of hostfile lines without one: PORT + the line's index.
    #[arg(long, default_value_t = 7400, value_name = "PORT")]
    pub port: u16,

    /// Rows of the left relation R over all processes (generated; K, M, G
    /// are powers of 1000). Named as in `join`; `--rows-r` is the old name.
    #[arg(long = "left-rows", alias = "rows-r", default_value = "1M", value_name = "N", value_parser = crate::common::parse::count)]
    pub rows_r: u64,

    /// Rows of the right relation S over all processes (generated).
    /// `--rows-s` is the old name.
    #[arg(long = "right-rows", alias = "rows-s", default_value = "4M", value_name = "N", value_parser = crate::common::parse::count)]
    pub rows_s: u64,

    /// Generated R's keys, as in `join`: dense (a primary key), uniform:MAX,
    /// zipf:S\[:DISTINCT\], sequential, fk:N, sparse:GROUPS, or
    /// pqrs:P:Q:R\[:DOMAIN\] (Chakraborty et al.'s generator, Wang et al.'s
    /// PQRS model; e.g. pqrs:0.4:0.1:0.2, keys 1..800000).
    #[arg(long, default_value = "dense", value_name = "DIST")]
    pub left_keys: String,

    /// Generated S's keys (default fk over R's rows: every S row matches
    /// one R row). A zipf's DISTINCT defaults to S's rows, as in `join`.
    #[arg(long, value_name = "DIST")]
    pub right_keys: Option<String>,

    /// The old spelling of the key distributions, kept only to say so.
    #[arg(long = "keys", hide = true, value_name = "DIST")]
    pub keys_renamed: Option<String>,

    /// The old spelling of a zipf exponent, kept only to say so.
    #[arg(long = "zipf", hide = true, value_name = "S")]
    pub zipf_renamed: Option<String>,

    /// Seed of the generated data (S uses SEED + 1).
    #[arg(long, default_value_t = 42, value_name = "N")]
    pub seed: u64,

    /// Each process's R from a file (CSV, Parquet, Arrow); `{process}` in
    /// the path becomes the process index.
    #[arg(long, value_name = "FILE", requires = "right")]
    pub left: Option<String>,

    /// Each process's S from a file, like --left.
    #[arg(long, value_name = "FILE", requires = "left")]
    pub right: Option<String>,

    /// Key column of the files.
    #[arg(long, default_value = "key", value_name = "COL")]
    pub key: String,

    /// Payload column of the files (default: the row's number, with the
    /// process index in the top 16 bits).
    #[arg(long, value_name = "COL")]
    pub payload: Option<String>,

    /// The join predicate: eq (hash distribution), band:W (|r.key -
    /// s.key| <= W) or lt (r.key < s.key); the non-equi ones broadcast.
    #[arg(long, default_value = "eq", value_name = "PRED")]
    pub predicate: String,

    /// Send order: ring (phase k sends to (i+k) mod P) or all-at-once; a
    /// comma-separated list runs each in turn and compares them.
    #[arg(
        long,
        default_value = "ring",
        value_delimiter = ',',
        value_name = "ORDER"
    )]
    pub order: Vec<numakit_cluster::schedule::SendOrder>,

    /// What the sink gets: count, sum (count and a checksum of every row,
    /// aggregated on the fly), sample:N (the N smallest rows too), or
    /// files:DIR (every process writes its rows to DIR/part-I.csv; DIR is
    /// replaced as a whole, with a MANIFEST.json, only once every part is
    /// complete, and only if it is new, empty or an earlier result; every
    /// process must see the same DIR). Default: sum, or count for lt
    /// (whose result is huge).
    #[arg(long, value_name = "SINK")]
    pub sink: Option<String>,

    /// Non-equi joins: the relation to broadcast, left, right or auto (the
    /// smaller; left for files).
    #[arg(long, default_value = "auto", value_name = "SIDE")]
    pub broadcast: String,

    /// The workers of each process's pool (default --threads: the CPUs
    /// this process may use, divided among the --local processes).
    #[command(flatten)]
    pub pool: crate::common::pool::PoolArgs,

    /// Buckets per process (equi-joins): the unit of sending and of tasks.
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub buckets: u32,

    /// How a receiver builds a bucket's hash tables (equi-joins):
    /// all-senders builds one table per bucket once every sender's R piece
    /// of it is in, and probes each S row once; per-sender builds a table
    /// of each sender's R piece the moment it arrives and probes each S
    /// row against up to P of them (every pair of pieces joined once).
    /// Per-sender helps when one sender's R is late (a slow link or
    /// machine): building starts without it, at the price of P small
    /// probes per S row instead of one.
    #[arg(long, default_value = "all-senders", value_name = "MODE")]
    pub frames: numakit_cluster::FrameMode,

    /// Bytes of its peers' pieces each process may hold received and not
    /// yet joined (e.g. 64MiB, 512K, 1000000; K, M, G are powers of 1024,
    /// KB, MB, GB of 1000): senders wait for the receiver's credit
    /// instead. Every process must be given the same. Default:
    /// unbounded.
    #[arg(long, value_name = "BYTES", value_parser = receive_budget)]
    pub receive_budget: Option<u64>,

    /// Rows per broadcast block (non-equi joins).
    #[arg(long, default_value = "64K", value_name = "N", value_parser = crate::common::parse::count)]
    pub block_rows: u64,

    /// Check the result against numakit's single-machine join of the same
    /// data, computed by the sink (limited to 50M input rows).
    #[arg(long)]
    pub verify: bool,

    /// Runs with --local 1, 2, ..., P (the same data) and reports the
    /// speedup of each over one process.
    #[arg(long, requires = "local")]
    pub sweep: bool,

    /// Repetitions of each run (medians are reported, with min and max;
    /// default 1, or 3 with --sweep so that every speedup is a median).
    #[arg(long, value_name = "N", value_parser = crate::common::parse::reps)]
    pub reps: Option<usize>,

    /// Draw the loads and spans per process (or the sweep's speedup) as
    /// an SVG chart.
    #[arg(long, value_name = "FILE")]
    pub chart: Option<PathBuf>,

    /// Seconds to wait for every peer to connect.
    #[arg(long, default_value_t = 20.0, value_name = "SECS")]
    pub connect_timeout: f64,

    /// Seconds a connected peer may send nothing, not even a heartbeat
    /// (peers beat five times as often, at least every 2 s), before the
    /// join stops with an error naming it: a peer stopped (SIGSTOP),
    /// hung, or cut off by the network while its machine still answers.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    pub peer_timeout: f64,

    /// Testing: process I fails after writing its part (files:DIR).
    #[arg(long, value_name = "I", hide = true)]
    pub fail_part_write: Option<usize>,

    /// Testing: every join task sleeps this long (makes a join slow).
    #[arg(long, default_value_t = 0, value_name = "MS", hide = true)]
    pub task_delay_ms: u64,
}

/// `--receive-budget`: a size in bytes (not a percentage: every process
/// must have the same budget).
fn receive_budget(text: &str) -> Result<u64, String> {
    let bad = || format!("`{text}` is not a size of at least 1 byte (e.g. 64MiB, 512K, 1000000)");
    if text.trim().ends_with('%') {
        return Err(format!("{}, not a percentage", bad()));
    }
    numakit_placement::MemoryLimit::parse(text)
        .map(|limit| limit.bytes)
        .map_err(|_| bad())
}

impl ClusterJoinArgs {
    /// `--reps`, or its default: 3 for a sweep, else 1.
    pub fn reps(&self) -> usize {
        self.reps.unwrap_or(if self.sweep {
            crate::common::parse::SWEEP_REPS
        } else {
            1
        })
    }
}
