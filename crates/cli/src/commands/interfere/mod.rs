//! `numakit interfere`: the options, one call of the interfere crate's
//! matrix (or, with `--plan`, of its co-scheduler: [`plan`]), and the
//! report ([`render`], or JSON). The workloads, the pinned threads and the
//! medians are the library's.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use numakit_interfere::matrix;
use numakit_interfere::{InterferenceRequest, Sizes, Workload};
use numakit_placement::{PlacementMode, Placer};

pub mod plan;
pub mod render;

use crate::common::output;
use crate::common::progress::Spinner;

/// The options of `numakit interfere`.
#[derive(Debug, Args)]
pub struct InterfereArgs {
    /// The workloads, run alone and in every ordered pair: scan, probe,
    /// chase, compute, join, aggregate (default: all).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = workload)]
    pub workloads: Vec<Workload>,

    /// Milliseconds of each run.
    #[arg(long, default_value_t = 200, value_name = "MS", value_parser = crate::common::parse::positive)]
    pub ms: usize,

    /// Repetitions of every run (order alternating); medians reported.
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = crate::common::parse::reps)]
    pub reps: usize,

    /// The probe's hash table, in MiB (default: the usable last-level
    /// cache this machine measures, which can be far below what sysfs
    /// says).
    #[arg(long, value_name = "MIB", value_parser = crate::common::parse::positive)]
    pub cache_mib: Option<usize>,

    /// The scan's and the chase's buffers, in MiB; they should be much
    /// larger than the last-level cache.
    #[arg(long, default_value_t = 128, value_name = "MIB", value_parser = crate::common::parse::positive)]
    pub buffer_mib: usize,

    /// Instead of the matrix: plan where these concurrent jobs should run
    /// so that they interfere least (one workload per job, repeats
    /// allowed, e.g. scan,scan,probe,compute), explain the choice and
    /// measure it against running every job at once anywhere.
    #[arg(long, value_name = "JOBS", value_delimiter = ',', value_parser = workload)]
    pub plan: Vec<Workload>,

    /// With --plan: predict interference from this machine's matrix of the
    /// jobs' workloads, measured first (`measured`), or from the
    /// workloads' declared characters (`declared`, no measuring).
    #[arg(long, default_value = "measured", value_name = "FROM", value_parser = ["measured", "declared"], requires = "plan")]
    pub predict: String,

    /// With --plan: only plan, do not measure the plan against naive
    /// placement.
    #[arg(long, requires = "plan")]
    pub no_check: bool,
}

fn workload(text: &str) -> Result<Workload, String> {
    text.parse()
}

/// The workloads' data sizes the options ask for.
pub fn sizes(args: &InterfereArgs) -> Sizes {
    let cache_bytes = match args.cache_mib {
        Some(mib) => (mib as u64) << 20,
        None => numakit_ops::cache_probe::measure().usable_bytes,
    };
    let buffer_bytes = (args.buffer_mib as u64) << 20;
    Sizes {
        scan_bytes: buffer_bytes,
        chase_bytes: buffer_bytes,
        ..Sizes::for_cache(cache_bytes)
    }
}

/// The request the options ask for.
pub fn request(args: &InterfereArgs) -> InterferenceRequest {
    InterferenceRequest {
        workloads: if args.workloads.is_empty() {
            Workload::ALL.to_vec()
        } else {
            args.workloads.clone()
        },
        duration: Duration::from_millis(args.ms as u64),
        reps: args.reps,
        sizes: sizes(args),
    }
}

/// Runs `numakit interfere`.
pub fn run(args: &InterfereArgs, mode: PlacementMode, json: bool, quiet: bool) -> Result<()> {
    let placer = Placer::new(Arc::new(numakit_topology::discover()?), mode);
    if !args.plan.is_empty() {
        return plan::run(args, &placer, json, quiet);
    }
    let spinner = Spinner::new(quiet || json);
    spinner.set_prefix("interfere");
    let request = request(args);
    let report = matrix::run(&placer, &request, &|what| {
        spinner.set_prefix(what.to_string())
    })
    .map_err(|e| crate::usage_error!("{e}"))?;
    spinner.finish();
    output::report(json, &report, || render::render(&report))?;
    Ok(())
}
