//! The options of `numakit run`, the main job.

use clap::Args;

use crate::common::parallel_sum::SumArgs;
use crate::common::pool::PoolArgs;

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
