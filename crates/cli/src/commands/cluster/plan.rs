//! What the options of `cluster join` ask for, checked before any
//! process starts or connects: the join spec (predicate, send order,
//! frame mode, broadcast side, sink), the generated relations, the
//! timeouts and buckets within bounds, the threads per process, and
//! whether the data fits the memory limit. Every error here is one of
//! the command line.

use crate::commands::cluster::args::ClusterJoinArgs;
use crate::common::parse::key_dist;
use anyhow::{bail, ensure, Result};
use numakit_cluster::{JoinSpec, Output, Predicate, Side};
use numakit_ops::datagen::GenSpec;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Refuses relations whose share would not fit this process: its share
/// of both generated relations, and as much again received from peers
/// (the hash distribution's frames, or a broadcast relation whole).
pub fn check_memory(args: &ClusterJoinArgs, processes: usize) -> Result<()> {
    if args.left.is_some() {
        return Ok(()); // files: read and checked by the loader
    }
    let rows = args.rows_r.saturating_add(args.rows_s);
    let share = crate::common::budget::times(rows, 16) / processes.max(1) as u64;
    let broadcast = crate::common::budget::times(args.rows_r.min(args.rows_s), 16);
    crate::common::budget::check(
        &format!(
            "{} (--left-rows {} --right-rows {})",
            if processes > 1 {
                "a process's share of the relations and what it receives"
            } else {
                "the relations and what the processes exchange"
            },
            args.rows_r,
            args.rows_s
        ),
        share.saturating_mul(2).saturating_add(broadcast),
    )
}

/// The parsed options shared by every process.
pub struct ClusterJoinPlan {
    /// The join: predicate, key, buckets, order, sink output.
    pub spec: JoinSpec,
    /// Where `--sink files:DIR` publishes the result rows.
    pub files_dir: Option<PathBuf>,
    /// How R is generated (rows over all processes, keys, seed).
    pub left_spec: GenSpec,
    /// How S is generated (seed + 1).
    pub right_spec: GenSpec,
}

/// The join spec and data of `args` (one send order: the first listed);
/// any error is one of the command line.
pub fn plan(args: &ClusterJoinArgs) -> Result<ClusterJoinPlan> {
    crate::common::usage::arguments(plan_of(args))
}

/// The longest --connect-timeout or --peer-timeout: a day.
const MAX_TIMEOUT_SECONDS: f64 = 86_400.0;

/// The most hash buckets a join may ask for (each has a table and frames
/// in every process; more than this only costs memory and messages).
const MAX_BUCKETS: u32 = 1 << 20;

fn plan_of(args: &ClusterJoinArgs) -> Result<ClusterJoinPlan> {
    let predicate = Predicate::parse(&args.predicate).map_err(anyhow::Error::msg)?;
    let order = *args
        .order
        .first()
        .ok_or_else(|| crate::usage_error!("--order names no order"))?;
    let (left_spec, right_spec) = generated_specs(args)?;
    let (output, files_dir) = sink_of(
        args.sink.as_deref(),
        predicate,
        left_spec.rows.saturating_mul(right_spec.rows),
    )?;
    let broadcast = match args.broadcast.as_str() {
        "left" => Side::Left,
        "right" => Side::Right,
        "auto" if args.left.is_none() && right_spec.rows < left_spec.rows => Side::Right,
        "auto" => Side::Left,
        other => bail!("unknown --broadcast `{other}` (left, right, auto)"),
    };
    ensure!(
        args.buckets > 0 && args.buckets <= MAX_BUCKETS,
        "--buckets must be from 1 to {MAX_BUCKETS}"
    );
    ensure!(args.block_rows > 0, "--block-rows must be at least 1");
    ensure!(
        args.connect_timeout > 0.0 && args.connect_timeout <= MAX_TIMEOUT_SECONDS,
        "--connect-timeout must be a positive number of seconds, at most {MAX_TIMEOUT_SECONDS}"
    );
    ensure!(
        args.peer_timeout > 0.0 && args.peer_timeout <= MAX_TIMEOUT_SECONDS,
        "--peer-timeout must be a positive number of seconds, at most {MAX_TIMEOUT_SECONDS}"
    );
    let spec = JoinSpec {
        predicate,
        order,
        buckets: args.buckets,
        frames: args.frames,
        block_rows: usize::try_from(args.block_rows)?,
        broadcast,
        output,
        task_delay: Duration::from_millis(args.task_delay_ms),
        receive_budget: args.receive_budget,
    };
    Ok(ClusterJoinPlan {
        spec,
        files_dir,
        left_spec,
        right_spec,
    })
}

/// The most result rows an inequality join hashes by default (its result
/// can hold every pair; beyond this it is counted, not enumerated).
pub const HASHED_LESS_ROWS: u64 = 1 << 28;

/// The sink's output: `--sink`, or by default the rows and their hash
/// (`sum`), except for an inequality join whose result could exceed
/// [`HASHED_LESS_ROWS`] (`pairs` bounds it): counted only.
fn sink_of(
    text: Option<&str>,
    predicate: Predicate,
    pairs: u64,
) -> Result<(Output, Option<PathBuf>)> {
    let text = text.unwrap_or(
        if predicate == Predicate::Less && pairs > HASHED_LESS_ROWS {
            "count"
        } else {
            "sum"
        },
    );
    Ok(match text.split_once(':') {
        None if text == "count" => (Output::Count, None),
        None if text == "sum" => (Output::Checksum, None),
        Some(("sample", n)) => {
            let n: usize = n
                .parse()
                .map_err(|_| anyhow::anyhow!("sample:N needs a number of rows, not `{n}`"))?;
            ensure!(n > 0, "sample:N needs N >= 1");
            (Output::Sample(n), None)
        }
        Some(("files", dir)) if !dir.is_empty() => (Output::Rows, Some(PathBuf::from(dir))),
        _ => bail!("unknown --sink `{text}` (count, sum, sample:N, files:DIR)"),
    })
}

fn generated_specs(args: &ClusterJoinArgs) -> Result<(GenSpec, GenSpec)> {
    crate::usage_ensure!(
        args.keys_renamed.is_none() && args.zipf_renamed.is_none(),
        "cluster join's --keys and --zipf are now --left-keys and --right-keys, as in `numakit join` (e.g. --right-keys zipf:1.2)"
    );
    let (r, s) = (args.rows_r, args.rows_s);
    let right_keys = args
        .right_keys
        .clone()
        .unwrap_or_else(|| format!("fk:{}", r.max(1)));
    let lk = key_dist(&args.left_keys, r)?;
    let rk = key_dist(&right_keys, s)?;
    let left = GenSpec {
        rows: r,
        keys: lk,
        seed: args.seed,
    };
    let right = GenSpec {
        rows: s,
        keys: rk,
        seed: args.seed.wrapping_add(1),
    };
    Ok((left, right))
}

/// The threads each of `processes` local processes gets by default.
pub fn threads_per_process(processes: usize) -> Result<usize> {
    let topology = Arc::new(numakit_topology::discover()?);
    Ok((topology.allowed.cpus.len() / processes.max(1)).max(1))
}
