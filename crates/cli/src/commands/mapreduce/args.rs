//! Options of `numakit mapreduce <app>`: the seven Phoenix applications on
//! numakit's MapReduce runtime.
//!
//! Every application runs on generated input by default (reproducible from
//! `--seed`), or on a file in the format the Phoenix++ program reads;
//! `--generate FILE` writes the generated input in that format and exits,
//! so that other systems can run on exactly the same bytes.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

/// The options of `numakit mapreduce`: the application, with its own.
#[derive(Debug, Args)]
pub struct MapReduceArgs {
    /// The application to run.
    #[command(subcommand)]
    pub app: MapReduceApp,
}

/// The Phoenix applications, each with its options.
#[derive(Debug, Subcommand)]
pub enum MapReduceApp {
    /// Count the words of a text (upper-cased), most frequent first.
    WordCount(TextArgs),
    /// Red, green and blue histograms of a 24-bit BMP image.
    Histogram(TextArgs),
    /// k-means clustering of d-dimensional integer points (one MapReduce
    /// job per iteration on one reused pool, until no point moves).
    Kmeans(KmeansArgs),
    /// Least-squares line through (x, y) byte pairs.
    LinearRegression(TextArgs),
    /// Product of two square integer matrices.
    MatrixMultiply(MatrixArgs),
    /// Mean vector and covariance matrix of the rows of an integer matrix.
    Pca(PcaArgs),
    /// Which keys of a file match a fixed set of encrypted words.
    StringMatch(TextArgs),
}

/// What every application shares.
impl MapReduceApp {
    /// The options every application shares.
    pub fn common(&self) -> &MrCommon {
        match self {
            MapReduceApp::WordCount(a)
            | MapReduceApp::Histogram(a)
            | MapReduceApp::LinearRegression(a)
            | MapReduceApp::StringMatch(a) => &a.common,
            MapReduceApp::Kmeans(a) => &a.common,
            MapReduceApp::MatrixMultiply(a) => &a.common,
            MapReduceApp::Pca(a) => &a.common,
        }
    }
}

/// The options every application shares: input, output, workers,
/// repetitions, verification and the sweep.
#[derive(Debug, Clone, Args)]
pub struct MrCommon {
    /// Read the input from FILE (the Phoenix++ program's format; for
    /// matrix-multiply a folder with matrix_file_A.txt and
    /// matrix_file_B.txt). Without it, the input is generated from --seed.
    #[arg(long, value_name = "FILE", conflicts_with = "generate")]
    pub input: Option<PathBuf>,

    /// Write the generated input to FILE in the Phoenix++ program's format
    /// and exit.
    #[arg(long, value_name = "FILE")]
    pub generate: Option<PathBuf>,

    /// Write the full result to FILE as CSV (every word, bin, mean or
    /// matrix row), whole or not at all: nothing is written when the run
    /// fails or --verify finds a difference. (`--output` is the old name.)
    #[arg(
        long = "out",
        alias = "output",
        value_name = "FILE",
        conflicts_with = "generate"
    )]
    pub output: Option<PathBuf>,

    /// The workers (`--sweep` steps their count).
    #[command(flatten)]
    pub pool: crate::common::pool::PoolArgs,

    /// Repetitions (min/median/max are reported; default 1, or 3 with
    /// --sweep so that every speedup is a median).
    #[arg(long, value_name = "N", value_parser = crate::common::parse::reps)]
    pub reps: Option<usize>,

    /// Seed of the generated input (default 42; kmeans, pca and
    /// matrix-multiply draw from the C library's rand() and default to 1,
    /// the stream the Phoenix++ programs use, which never seed it).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Check the result against a plain sequential implementation.
    #[arg(long)]
    pub verify: bool,

    /// Speedup from 1 thread to all, with the time of split, map, reduce
    /// and merge at each thread count (the phases Phoenix times) and, for
    /// the text applications, each phase's user, system and idle time
    /// (Phoenix's Figure 10; every run reports it, in `--json` as `cpu`).
    #[arg(long)]
    pub sweep: bool,

    /// How a file reaches memory: mapped (populated up front), read into
    /// buffers placed on the pool's nodes, or auto: mapped on a machine
    /// with one node (nothing to place; the page cache's pages are used
    /// as they are), read and placed on several (word count always reads:
    /// it upper-cases its text in place).
    #[arg(long, value_enum, default_value_t = InputMode::Auto, value_name = "MODE")]
    pub input_mode: InputMode,

    /// Bytes of input per map task, in KiB (default: the runtime's).
    #[arg(long, value_name = "KIB")]
    pub chunk_kib: Option<usize>,

    /// The container each worker folds its map output into (Phoenix
    /// Figures 6 and 7): `array` (slots for the application's keys:
    /// histogram 768, linear regression 5, string match 4; word count has
    /// no key index, so its words go to the array's overflow table),
    /// `array:N`, `fixed-hash:N` (N buckets per worker, never resized),
    /// `hash` or `hash:N` (growable, room for N keys per worker at first).
    /// It changes speed, never the result. Default: the application's
    /// choice (an array for histogram, linear regression and string
    /// match; hash:16384 for word count). Text applications only.
    #[arg(long, value_name = "KIND")]
    pub container: Option<String>,
}

impl MrCommon {
    /// `--reps`, or its default: 3 for a sweep (a speedup from single runs
    /// is noise), else 1.
    pub fn reps(&self) -> usize {
        self.reps.unwrap_or(if self.sweep {
            crate::common::parse::SWEEP_REPS
        } else {
            1
        })
    }
}

/// How `--input` reaches memory (`--input-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputMode {
    /// mmap with one node, read with several.
    Auto,
    /// Memory-map the file (pages land where the kernel's page cache has them).
    Mmap,
    /// Read the file into node-placed buffers, a share per node.
    Read,
}

/// Applications whose input is one file of bytes.
#[derive(Debug, Args)]
pub struct TextArgs {
    /// The options every application shares.
    #[command(flatten)]
    pub common: MrCommon,

    /// Size of the generated input in MiB.
    #[arg(long, default_value_t = 16, value_name = "MIB")]
    pub size_mib: u64,

    /// Result rows to print (word count: the most frequent words).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,
}

/// The options of `numakit mapreduce kmeans`.
#[derive(Debug, Args)]
pub struct KmeansArgs {
    /// The options every application shares.
    #[command(flatten)]
    pub common: MrCommon,

    /// Points (generated).
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    pub points: usize,

    /// Dimensions of a point.
    #[arg(long, default_value_t = 3, value_name = "D")]
    pub dims: usize,

    /// Clusters (at most 100, as the original).
    #[arg(long, default_value_t = 100, value_name = "K")]
    pub clusters: usize,

    /// Values of the generated data (phoenix: the original's, 0 to 999).
    #[command(flatten)]
    pub values: ValueRangeArg,
}

/// The options of `numakit mapreduce matrix-multiply`.
#[derive(Debug, Args)]
pub struct MatrixArgs {
    /// The options every application shares.
    #[command(flatten)]
    pub common: MrCommon,

    /// Rows and columns of each matrix.
    #[arg(long, default_value_t = 500, value_name = "N")]
    pub size: usize,

    /// Values of the generated data (phoenix: the original's, 0 to 10).
    #[command(flatten)]
    pub values: ValueRangeArg,
}

/// The options of `numakit mapreduce pca`.
#[derive(Debug, Args)]
pub struct PcaArgs {
    /// The options every application shares.
    #[command(flatten)]
    pub common: MrCommon,

    /// Rows of the matrix.
    #[arg(long, default_value_t = 500, value_name = "R")]
    pub rows: usize,

    /// Columns of the matrix.
    #[arg(long, default_value_t = 500, value_name = "C")]
    pub cols: usize,

    /// Values of the generated data (phoenix: the original's, 0 to 99).
    #[command(flatten)]
    pub values: ValueRangeArg,
}

/// `--value-range` of kmeans, pca and matrix-multiply: the range their
/// generated values are drawn from, as `rand() % modulus`.
#[derive(Debug, Clone, Copy, Args)]
pub struct ValueRangeArg {
    /// Range of the generated values, each `rand() % M`: `phoenix` (the
    /// original program's M: 1000 for kmeans, 100 for pca, 11 for
    /// matrix-multiply), `full` (M = 2147483647: 0 to 2^31 - 2, which
    /// takes the kernels off their 16-bit multiply-adds), or a number M
    /// (the originals' `-s M` for kmeans and pca; matrix-multiply's reads
    /// such matrices from its files, see --generate).
    #[arg(
        long,
        default_value = "phoenix",
        value_name = "RANGE",
        value_parser = parse_value_range,
        conflicts_with = "input"
    )]
    pub value_range: ValueRange,
}

/// Which values the numeric applications generate (`--value-range`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueRange {
    /// The original program's own range.
    Phoenix,
    /// `rand() % 2147483647`: nearly every non-negative `int`.
    Full,
    /// `rand() % M`.
    Below(u32),
}

impl ValueRange {
    /// The modulus of `rand()`, given the application's original one.
    pub fn modulus(self, original: u32) -> u32 {
        match self {
            ValueRange::Phoenix => original,
            ValueRange::Full => numakit_mapreduce_apps::numeric::FULL_RANGE_MODULUS,
            ValueRange::Below(m) => m,
        }
    }
}

/// Parses `--value-range`: `phoenix`, `full`, or a modulus from 1 to
/// 2147483647 (the originals take it as a C `int`).
fn parse_value_range(text: &str) -> Result<ValueRange, String> {
    match text {
        "phoenix" => Ok(ValueRange::Phoenix),
        "full" => Ok(ValueRange::Full),
        _ => match text.parse::<u32>() {
            Ok(m) if (1..=numakit_mapreduce_apps::numeric::FULL_RANGE_MODULUS).contains(&m) => {
                Ok(ValueRange::Below(m))
            }
            _ => Err(format!(
                "expected phoenix, full or a modulus from 1 to {}, got {text:?}",
                numakit_mapreduce_apps::numeric::FULL_RANGE_MODULUS
            )),
        },
    }
}
