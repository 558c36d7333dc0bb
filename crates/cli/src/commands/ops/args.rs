//! Options of the operator commands: `join`, `aggregate` and `sort`.
//!
//! Each runs on generated data by default (reproducible from `--seed`) or
//! on files (CSV, Parquet, Arrow IPC; the format follows the extension),
//! and can write its result to a file in any of those formats.

use std::path::PathBuf;

use clap::Args;

/// What every operator command shares.
#[derive(Debug, Clone, Args)]
pub struct OpCommon {
    /// The workers.
    #[command(flatten)]
    pub pool: crate::common::pool::PoolArgs,

    /// Repetitions (min/median/max are reported; the result is checked to
    /// be the same every time).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = crate::common::parse::reps)]
    pub reps: usize,

    /// Check the result against a plain sequential implementation (slow on
    /// big inputs; refused above 50M rows).
    #[arg(long)]
    pub verify: bool,

    /// Seed of the generated data.
    #[arg(long, default_value_t = 42, value_name = "N")]
    pub seed: u64,

    /// Write the result to FILE (.csv, .parquet or .arrow).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// The table format (csv, parquet or arrow) of files whose name does not
    /// end in .csv, .parquet/.pq or .arrow/.ipc/.feather: the inputs and
    /// --out. A known extension always decides for its own file.
    #[arg(long, value_name = "FORMAT", value_parser = crate::common::parse::table_format)]
    pub format: Option<numakit_io::Format>,

    /// Compression of a Parquet --out: `zstd` (level 1: the smallest files,
    /// as Polars writes them), `snappy` (DuckDB's, Spark's and pyarrow's
    /// default: long strings write several times faster, files are larger)
    /// or `none`. Other formats ignore it.
    #[arg(long, default_value = "zstd", value_name = "CODEC", value_parser = crate::common::parse::parquet_compression)]
    pub compression: numakit_io::ParquetCompression,

    /// Rows of a file input's result printed when there is no --out.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub show: usize,
}

/// The options of `numakit join`.
#[derive(Debug, Args)]
pub struct JoinArgs {
    /// The left (build) relation R: a file. Without it, R is generated.
    #[arg(long, value_name = "FILE", requires = "right")]
    pub left: Option<PathBuf>,

    /// The right (probe) relation S: a file.
    #[arg(long, value_name = "FILE", requires = "left")]
    pub right: Option<PathBuf>,

    /// Key column(s) of both files, comma separated (several columns are
    /// joined as one composite key).
    #[arg(
        long,
        default_value = "key",
        value_delimiter = ',',
        value_name = "COLS"
    )]
    pub key: Vec<String>,

    /// Key column(s) of the left file when they differ from --key.
    #[arg(long, value_delimiter = ',', value_name = "COLS")]
    pub left_key: Option<Vec<String>>,

    /// Key column(s) of the right file when they differ from --key.
    #[arg(long, value_delimiter = ',', value_name = "COLS")]
    pub right_key: Option<Vec<String>>,

    /// The left file's columns in the result, comma separated (default:
    /// all, the key once under its left name); gathered by row after the
    /// join, not moved by it.
    #[arg(long, value_delimiter = ',', value_name = "COLS", requires = "left")]
    pub left_columns: Option<Vec<String>>,

    /// The right file's columns in the result (default: all but the key;
    /// inner and left joins). A name the left side already uses gets
    /// --suffix.
    #[arg(long, value_delimiter = ',', value_name = "COLS", requires = "right")]
    pub right_columns: Option<Vec<String>>,

    /// Appended to the name of a right column that clashes with a left one.
    #[arg(long, default_value = "_right", value_name = "TEXT")]
    pub suffix: String,

    /// Generated R: number of rows.
    #[arg(long, default_value = "2000000", value_name = "N", value_parser = crate::common::parse::count)]
    pub left_rows: u64,

    /// Generated S: number of rows.
    #[arg(long, default_value = "32000000", value_name = "N", value_parser = crate::common::parse::count)]
    pub right_rows: u64,

    /// Generated R's keys: dense (a primary key), uniform:MAX, zipf:S\[:DISTINCT\],
    /// sequential, fk:N, sparse:GROUPS, or pqrs:P:Q:R\[:DOMAIN\] (Wang et
    /// al.'s PQRS model, the generator of Chakraborty et al.'s joins:
    /// quadrant shares P, Q, R and S = 1 - P - Q - R over rows in time
    /// order x keys 1..DOMAIN, default 800000).
    #[arg(long, default_value = "dense", value_name = "DIST")]
    pub left_keys: String,

    /// Generated S's keys (default fk over R's rows: every row matches once,
    /// Balkesen et al.'s workload A).
    #[arg(long, value_name = "DIST")]
    pub right_keys: Option<String>,

    /// Algorithms, comma separated: npo (no partitioning), pro, cprl (radix
    /// joins), mpsm (sort-merge), all, or auto (numakit's pick).
    #[arg(
        long,
        default_value = "auto",
        value_delimiter = ',',
        value_name = "LIST"
    )]
    pub algorithm: Vec<String>,

    /// How mpsm's merge phase visits the other workers' sorted runs, comma
    /// separated, each SCHEDULE\[:SYNC\]: ring (the coordinated ring, the
    /// default), naive (every worker reads run 0 first, then 1, ...),
    /// random, migration, migration-copy; tight (a barrier after each step,
    /// the default) or loose. Several run mpsm once each, side by side (Li
    /// Figure 8: `--algorithm mpsm --merge-exchange naive,ring`).
    #[arg(
        long,
        default_value = "ring",
        value_delimiter = ',',
        value_name = "LIST",
        value_parser = crate::common::parse::exchange
    )]
    pub merge_exchange: Vec<numakit_shuffle::Exchange>,

    /// inner, left (outer), semi or anti.
    #[arg(long, default_value = "inner", value_name = "KIND")]
    pub kind: String,

    /// count (rows only, never materialised), checksum (generated inputs:
    /// rows aggregated on the fly) or materialize (rows kept; implied by
    /// --out). Default: count for generated inputs, materialize for files
    /// (the first rows are printed).
    #[arg(long, value_name = "OUTPUT")]
    pub output: Option<String>,

    /// The options every operator command shares.
    #[command(flatten)]
    pub common: OpCommon,
}

/// The options of `numakit aggregate`.
#[derive(Debug, Args)]
pub struct AggregateArgs {
    /// Input file. Without it, the input is generated.
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,

    /// Group-by key column(s) of a file, comma separated: any common type
    /// (integers, decimals, floats, strings, dates, timestamps, booleans);
    /// null keys form one group.
    #[arg(
        long,
        default_value = "key",
        value_delimiter = ',',
        value_name = "COLS"
    )]
    pub key: Vec<String>,

    /// Aggregates, comma separated: `count` (rows) or FUNC:COL with FUNC
    /// one of count, sum, min, max, avg, e.g.
    /// `count,sum:l_quantity,avg:l_extendedprice,min:l_shipdate`. Result
    /// columns: the keys, then `count` and FUNC_COL.
    #[arg(long, value_delimiter = ',', value_name = "LIST", value_parser = crate::common::parse::aggregate)]
    pub agg: Option<Vec<numakit_frame::aggregate::Aggregate>>,

    /// Shorthand for --agg count,sum:COL,min:COL,max:COL,avg:COL (the
    /// default with --input when --agg is not given is --value value).
    #[arg(long, value_name = "COL")]
    pub value: Option<String>,

    /// Generated input: number of rows.
    #[arg(long, default_value = "16000000", value_name = "N", value_parser = crate::common::parse::count)]
    pub rows: u64,

    /// Generated input: distinct keys, random 64-bit values drawn uniformly
    /// (`--keys sparse:N`: hash tables, the general case), unless --keys
    /// says otherwise (`uniform:N` gives the dense keys 1..N, which take
    /// the direct-indexed array fast path).
    #[arg(long, default_value = "65536", value_name = "N", value_parser = crate::common::parse::count)]
    pub groups: u64,

    /// Generated keys: sparse:GROUPS (random 64-bit keys), uniform:MAX
    /// (dense 1..MAX), zipf:S\[:DISTINCT\], dense, sequential.
    #[arg(long, value_name = "DIST")]
    pub keys: Option<String>,

    /// Methods, comma separated: shuffle (ring), naive-shuffle, migration,
    /// migration-copy (Li §4.3; the report splits their time as Li Figure
    /// 11 does: read, update, copy state, wait), local (per-worker tables merged at the end), partitioned
    /// (cache-sized partitions one at a time), auto (numakit's pick from a
    /// HyperLogLog estimate of the groups and the cache size: local or
    /// partitioned on one node; on several, local when its tables fit the
    /// cache, else the one of Li's three the simulator predicts fastest for
    /// that estimate, see --cost-model), or all.
    #[arg(
        long,
        default_value = "auto",
        value_delimiter = ',',
        value_name = "LIST"
    )]
    pub method: Vec<String>,

    /// On several NUMA nodes, `--method auto` weighs Li's shuffle, migration
    /// and migration-copy with the simulator's cost model; this is the
    /// machine it predicts on: a preset name (see `numakit topo
    /// --list-presets`) or a JSON description, such as the one `numakit probe
    /// --save FILE` writes of this machine with its measured bandwidths.
    /// Default: this machine's topology, with the bandwidths discovery cannot
    /// know assumed (the reason lists them).
    #[arg(long, value_name = "PRESET|FILE")]
    pub cost_model: Option<String>,

    /// Read the file whole before grouping (the operator's time then
    /// excludes reading). By default a group-by of a file runs while the
    /// file is read, holding only its groups in memory.
    #[arg(long)]
    pub in_memory: bool,

    /// Li Figure 10: every method over growing group counts (generated data).
    #[arg(long)]
    pub sweep: bool,

    /// The options every operator command shares.
    #[command(flatten)]
    pub common: OpCommon,
}

/// The options of `numakit sort`.
#[derive(Debug, Args)]
pub struct SortArgs {
    /// Input file. Without it, the input is generated.
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,

    /// The sort key column(s), comma separated, each optionally `:desc` or
    /// `:asc` (e.g. `l_shipdate,l_orderkey:desc`). Strings sort by their
    /// bytes, floats with NaN after every number.
    #[arg(
        long,
        default_value = "key",
        value_delimiter = ',',
        value_name = "COLS"
    )]
    pub key: Vec<String>,

    /// Sort every key column in descending order (unless it says `:asc`).
    #[arg(long)]
    pub descending: bool,

    /// Where nulls go: first or last.
    #[arg(long, default_value = "last", value_name = "WHERE")]
    pub nulls: String,

    /// The columns of a file's result, comma separated (default: all).
    #[arg(long, value_delimiter = ',', value_name = "COLS")]
    pub columns: Option<Vec<String>>,

    /// One column carried along with the key (the same as --columns
    /// KEY,COL).
    #[arg(long, value_name = "COL")]
    pub payload: Option<String>,

    /// Generated input: number of rows.
    #[arg(long, default_value = "16000000", value_name = "N", value_parser = crate::common::parse::count)]
    pub rows: u64,

    /// Generated keys: uniform:MAX, zipf:S\[:DISTINCT\], dense, sequential
    /// (default: uniform over the whole 64-bit range).
    #[arg(long, value_name = "DIST")]
    pub keys: Option<String>,

    /// Generated input: sort the keys alone (no payload, half the bytes to
    /// move).
    #[arg(long)]
    pub keys_only: bool,

    /// The options every operator command shares.
    #[command(flatten)]
    pub common: OpCommon,
}
