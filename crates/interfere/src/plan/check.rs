//! A plan against naive placement, measured: every job does the work it
//! does alone in the request's duration, once as the plan says (each
//! job pinned to its CPU, its data on its node; a CPU with jobs in
//! several waves runs them back to back, in wave order) and once
//! naively (every job at once, its threads free to run on every allowed
//! CPU, its data wherever the kernel puts it). The two alternate, naive
//! first on even repetitions; the figures are the times from the first
//! job's start to the last job's end, and their medians.
//!
//! It measures one plan; it does not make one.

use std::sync::Barrier;
use std::time::{Duration, Instant};

use numakit_ops::timing::median;
use numakit_placement::Placer;
use numakit_probe::team::{self, Seat};
use serde::Serialize;

use crate::error::{InterfereError, Result};
use crate::plan::layout::Plan;
use crate::workload::{prepare, Prepared, Sizes, Spot, Workload};

/// What a check measured.
#[derive(Clone, Debug, Serialize)]
pub struct PlanCheck {
    /// Each job's work: what it does alone in this many milliseconds.
    pub work_ms: u64,
    /// Seconds of every naive run, in order.
    pub naive_seconds: Vec<f64>,
    /// Seconds of every planned run, in order.
    pub planned_seconds: Vec<f64>,
    /// Median of `naive_seconds`.
    pub naive_median: f64,
    /// Median of `planned_seconds`.
    pub planned_median: f64,
    /// `naive_median / planned_median`: above 1, the plan finished the
    /// jobs sooner (more jobs per second).
    pub gain: f64,
    /// Whether every planned thread was seen on its node.
    pub placement_verified: bool,
}

/// A job ready to run: where, its data, its work.
struct Ready {
    seat: Option<Seat>,
    data: Prepared,
    units: f64,
}

/// Units each workload does alone in `work`, measured on its first
/// planned job's seat.
fn calibrate(
    placer: &Placer,
    planned: &mut [Ready],
    jobs: &[Workload],
    work: Duration,
) -> Result<()> {
    for (i, &w) in jobs.iter().enumerate() {
        if let Some(first) = jobs[..i].iter().position(|&x| x == w) {
            planned[i].units = planned[first].units;
            continue;
        }
        let ready = &planned[i];
        let seat = ready
            .seat
            .ok_or_else(|| InterfereError::BadRequest("a planned job has no seat".into()))?;
        let run = team::run(placer, &[seat], |_| {
            ready.data.run_until(Instant::now() + work)
        })?;
        let (units, _) = run.results.into_iter().next().ok_or_else(|| {
            InterfereError::BadRequest("a calibrating thread returned nothing".into())
        })??;
        planned[i].units = units;
    }
    Ok(())
}

/// Each planned CPU's jobs, in wave order.
fn queues(plan: &Plan) -> Vec<(Seat, Vec<usize>)> {
    let mut queues: Vec<(Seat, Vec<usize>)> = Vec::new();
    for group in plan.waves.iter().flat_map(|w| &w.groups) {
        for job in &group.jobs {
            let seat = Seat {
                cpu: job.cpu,
                node: group.node,
            };
            match queues.iter_mut().find(|q| q.0 == seat) {
                Some(q) => q.1.push(job.index),
                None => queues.push((seat, vec![job.index])),
            }
        }
    }
    queues
}

/// Seconds for the plan (each CPU runs its jobs back to back, in wave
/// order, with no barrier between waves: a CPU whose job ends early
/// starts its next one rather than idle), and whether every thread was
/// placed.
fn run_planned(placer: &Placer, plan: &Plan, planned: &[Ready]) -> Result<(f64, bool)> {
    let queues = queues(plan);
    let seats: Vec<Seat> = queues.iter().map(|q| q.0).collect();
    let run = team::run(placer, &seats, |k| -> Result<()> {
        for &j in &queues[k].1 {
            planned[j].data.run_units(planned[j].units)?;
        }
        Ok(())
    })?;
    for result in run.results {
        result?;
    }
    Ok((run.wall.as_secs_f64(), run.check.all_placed()))
}

/// Seconds for every job at once, free to run anywhere.
fn run_naive(placer: &Placer, naive: &[Ready]) -> Result<f64> {
    let anywhere = placer.topology().allowed.cpus.clone();
    let start_line = Barrier::new(naive.len());
    let spans = std::thread::scope(|s| {
        let handles: Vec<_> = naive
            .iter()
            .map(|ready| {
                let (start_line, anywhere) = (&start_line, &anywhere);
                s.spawn(move || -> Result<(Instant, Instant)> {
                    let pinned = placer.pin_to_cpus(anywhere);
                    start_line.wait();
                    pinned?;
                    let started = Instant::now();
                    ready.data.run_units(ready.units)?;
                    Ok((started, Instant::now()))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| InterfereError::BadRequest("a job's thread panicked".into()))?
            })
            .collect::<Result<Vec<_>>>()
    })?;
    let first = spans.iter().map(|s| s.0).min();
    let last = spans.iter().map(|s| s.1).max();
    Ok(match (first, last) {
        (Some(a), Some(b)) => b.saturating_duration_since(a).as_secs_f64(),
        _ => 0.0,
    })
}

/// Every job's data twice: on its planned seat, and anywhere.
fn prepare_all(
    placer: &Placer,
    plan: &Plan,
    jobs: &[Workload],
    sizes: &Sizes,
) -> Result<(Vec<Ready>, Vec<Ready>)> {
    let mut seats: Vec<Option<Seat>> = vec![None; jobs.len()];
    for group in plan.waves.iter().flat_map(|w| &w.groups) {
        for j in &group.jobs {
            seats[j.index] = Some(Seat {
                cpu: j.cpu,
                node: group.node,
            });
        }
    }
    let mut planned = Vec::with_capacity(jobs.len());
    let mut naive = Vec::with_capacity(jobs.len());
    for (i, (&w, &seat)) in jobs.iter().zip(&seats).enumerate() {
        let seat =
            seat.ok_or_else(|| InterfereError::BadRequest(format!("job {i} is not in the plan")))?;
        let seed = i as u64 + 1;
        let data = prepare(placer, w, Spot::Seat(seat), sizes, seed)?;
        planned.push(Ready {
            seat: Some(seat),
            data,
            units: 0.0,
        });
        let data = prepare(placer, w, Spot::Anywhere, sizes, seed)?;
        naive.push(Ready {
            seat: None,
            data,
            units: 0.0,
        });
    }
    Ok((planned, naive))
}

/// Measures `plan` for `jobs` against naive placement, `reps` times
/// each; `progress` hears what runs.
pub fn check(
    placer: &Placer,
    plan: &Plan,
    jobs: &[Workload],
    sizes: &Sizes,
    (work, reps): (Duration, usize),
    progress: &dyn Fn(&str),
) -> Result<PlanCheck> {
    progress("placing the jobs' data as planned and naively");
    let (mut planned, mut naive) = prepare_all(placer, plan, jobs, sizes)?;
    progress("measuring each job's work alone");
    calibrate(placer, &mut planned, jobs, work)?;
    for (n, p) in naive.iter_mut().zip(&planned) {
        n.units = p.units;
    }
    let (mut naive_seconds, mut planned_seconds) = (Vec::new(), Vec::new());
    let mut placed = true;
    for rep in 0..reps.max(1) {
        for turn in 0..2 {
            if (turn == 0) == (rep % 2 == 0) {
                progress(&format!(
                    "every job at once, anywhere, repetition {}",
                    rep + 1
                ));
                naive_seconds.push(run_naive(placer, &naive)?);
            } else {
                progress(&format!("the plan, repetition {}", rep + 1));
                let (seconds, ok) = run_planned(placer, plan, &planned)?;
                planned_seconds.push(seconds);
                placed &= ok;
            }
        }
    }
    let (naive_median, planned_median) = (median(&naive_seconds), median(&planned_seconds));
    Ok(PlanCheck {
        work_ms: work.as_millis() as u64,
        naive_seconds,
        planned_seconds,
        naive_median,
        planned_median,
        gain: naive_median / planned_median.max(1e-12),
        placement_verified: placed,
    })
}
