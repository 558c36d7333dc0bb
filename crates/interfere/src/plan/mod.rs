//! The co-scheduler: given concurrent jobs (each one of numakit's
//! workloads on one thread) and the machine, it places them on nodes and
//! CPUs so that the predicted interference is least, says why, and can
//! measure its choice against naive placement.
//!
//! The predictions ([`predict`]) come from this machine's co-located
//! slowdown matrix (measured first, for the distinct workloads among the
//! jobs) or from the workloads' declared characters. The search
//! ([`search`]) follows from them: two bandwidth-hungry jobs are not put
//! on one node when another will do, a cache-sensitive job goes beside a
//! compute-bound one, and each job gets a node of its own when there are
//! enough. More jobs than CPUs run in waves. [`layout`] gives the groups
//! nodes and CPUs and explains; [`check`](mod@check) measures.
//!
//! It does not partition caches or bandwidth (resctrl is placement's),
//! and a job is one thread: multi-threaded jobs are not modelled.

pub mod check;
pub mod layout;
pub mod predict;
pub mod search;

use std::time::Duration;

use numakit_placement::Placer;
use serde::Serialize;

use crate::cell::Cell;
use crate::error::{InterfereError, Result};
use crate::matrix::{self, InterferenceRequest};
use crate::workload::{Sizes, Workload};

pub use check::PlanCheck;
pub use layout::{job_names, Machine, NodeCpus, Plan};
pub use predict::{Predictor, Source};

/// The most jobs a request may name (each holds its own data, up to
/// 128 MiB, twice when the plan is checked).
pub const MAX_JOBS: usize = 32;

/// What to plan.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanRequest {
    /// The jobs, one workload each (a workload may appear several times).
    pub jobs: Vec<Workload>,
    /// Where predictions come from: [`Source::Measured`] measures the
    /// co-located matrix of the jobs' workloads first.
    pub prediction: Source,
    /// Each matrix run's length, and each job's work in a check (what it
    /// does alone in this time).
    pub duration: Duration,
    /// Repetitions of the matrix runs and of the check.
    pub reps: usize,
    /// Whether to run the plan against naive placement.
    pub check: bool,
    /// The workloads' data sizes.
    pub sizes: Sizes,
}

/// A plan, what it was made from, and how it measured.
#[derive(Clone, Debug, Serialize)]
pub struct PlanReport {
    /// The jobs' names, in request order.
    pub jobs: Vec<String>,
    /// The nodes and CPUs the plan could use.
    pub machine: Machine,
    /// Where the predictions came from.
    pub prediction: Source,
    /// The co-located matrix measured for the predictions.
    pub matrix: Option<Vec<Cell>>,
    /// The plan.
    pub plan: Plan,
    /// The plan against naive placement, when asked.
    pub check: Option<PlanCheck>,
}

fn validate(request: &PlanRequest) -> Result<()> {
    let bad = |why: String| Err(InterfereError::BadRequest(why));
    if request.jobs.is_empty() {
        return bad("name at least one job to plan".into());
    }
    if request.jobs.len() > MAX_JOBS {
        return bad(format!(
            "{} jobs: plans are made for at most {MAX_JOBS}",
            request.jobs.len()
        ));
    }
    if request.reps == 0 {
        return bad("repetitions must be at least 1".into());
    }
    if request.duration.is_zero() {
        return bad("each run must last at least a millisecond".into());
    }
    Ok(())
}

/// Makes (and, when asked, checks) the plan `request` asks for on
/// `placer`'s machine; `progress` hears what runs.
pub fn run(placer: &Placer, request: &PlanRequest, progress: &dyn Fn(&str)) -> Result<PlanReport> {
    validate(request)?;
    let machine = Machine::of(placer.topology());
    let (predictor, cells) = match request.prediction {
        Source::Declared => (Predictor::declared(), None),
        Source::Measured => {
            let mut workloads = request.jobs.clone();
            workloads.sort();
            workloads.dedup();
            let measured = matrix::run(
                placer,
                &InterferenceRequest {
                    workloads,
                    duration: request.duration,
                    reps: request.reps,
                    sizes: request.sizes,
                },
                progress,
            )?;
            (
                Predictor::measured(&measured.colocated),
                Some(measured.colocated),
            )
        }
    };
    let plan = layout::make(&request.jobs, &machine, &predictor)?;
    let check = if request.check {
        Some(check::check(
            placer,
            &plan,
            &request.jobs,
            &request.sizes,
            (request.duration, request.reps),
            progress,
        )?)
    } else {
        None
    };
    Ok(PlanReport {
        jobs: job_names(&request.jobs),
        machine,
        prediction: request.prediction,
        matrix: cells,
        plan,
        check,
    })
}
