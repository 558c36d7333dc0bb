//! The slowdown matrix: every workload alone, then every ordered pair
//! (victim, aggressor) at the same time on two CPUs, co-located (one node:
//! a shared last-level cache and memory controllers) and, where there is a
//! second node, isolated (one CPU on each). A victim's slowdown is its
//! throughput alone over its throughput beside the aggressor; each
//! repetition runs every measurement once, in forward order on even
//! repetitions and backward on odd ones, and the reported figures are
//! medians over the repetitions.
//!
//! Each measuring thread reads its own hardware counters over its run,
//! where the kernel offers them, so that a slowdown stands beside what the
//! victim's work cost alone and beside the aggressor (LLC misses per
//! lookup, IPC). Join and aggregate work on their pool's worker, which the
//! measuring thread's counters do not see: they get none. Where the
//! kernel offers no counters, the report says why in one line.
//!
//! It does not decide what the figures mean ([`crate::classify`] does)
//! or where jobs should run.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use numakit_ops::timing::median;
use numakit_placement::counters::{CounterGroup, Counts};
use numakit_placement::Placer;
use numakit_probe::team::{self, Seat};
use numakit_topology::NodeId;
use serde::Serialize;

use crate::cell::{Cell, CellCounters};
use crate::classify::{classify, Class};
use crate::error::{InterfereError, Result};
use crate::workload::{prepare, Prepared, Sizes, Spot, Workload};

/// What to measure.
#[derive(Clone, Debug, PartialEq)]
pub struct InterferenceRequest {
    /// The workloads, at least one; every ordered pair of them is run.
    pub workloads: Vec<Workload>,
    /// How long each run lasts.
    pub duration: Duration,
    /// Repetitions of every run; medians are reported.
    pub reps: usize,
    /// The workloads' data sizes.
    pub sizes: Sizes,
}

/// One workload's throughput alone.
#[derive(Clone, Debug, Serialize)]
pub struct Alone {
    /// The workload.
    pub workload: Workload,
    /// Median units of work per second.
    pub per_second: f64,
    /// What the units are.
    pub unit: &'static str,
    /// Its hardware counts alone, every repetition together, per unit of
    /// its work; `None` without counters or for pool work (join, aggregate).
    pub counters: Option<Counts>,
}

/// Where the two CPUs of a pair were.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct PairSeats {
    /// The victim's CPU and node.
    pub victim: Seat,
    /// The aggressor's CPU and node.
    pub aggressor: Seat,
}

/// Every measurement of a request.
#[derive(Clone, Debug, Serialize)]
pub struct InterferenceReport {
    /// Each workload alone on the first CPU.
    pub alone: Vec<Alone>,
    /// The pairs on two CPUs of one node.
    pub colocated: Vec<Cell>,
    /// Where the co-located pairs ran.
    pub colocated_seats: PairSeats,
    /// The pairs on two nodes; `None` on a machine with one node.
    pub isolated: Option<Vec<Cell>>,
    /// Where the isolated pairs ran.
    pub isolated_seats: Option<PairSeats>,
    /// Why there is no isolated matrix, when there is none.
    pub isolated_unavailable: Option<String>,
    /// Each workload's class, from the co-located matrix (the scan's
    /// has no cache sensitivity: see [`crate::classify`]).
    pub classes: Vec<Class>,
    /// The sizes the workloads ran with.
    pub sizes: Sizes,
    /// Milliseconds of each run.
    pub run_ms: u64,
    /// Repetitions of each run.
    pub reps: usize,
    /// Whether every measuring thread was seen on its node.
    pub placement_verified: bool,
    /// The victims' counts in the co-located matrix, alone and beside
    /// each aggressor (only victims that were counted).
    pub colocated_counters: Vec<CellCounters>,
    /// The same for the isolated matrix.
    pub isolated_counters: Option<Vec<CellCounters>>,
    /// Why there are no counts, in one line, when this process cannot
    /// open hardware counters.
    pub counters_unavailable: Option<String>,
}

/// Two CPUs of one node, and a CPU of another node if there is one.
fn seats(placer: &Placer) -> Result<(Seat, Seat, Option<Seat>)> {
    let topology = placer.topology();
    let allowed = &topology.allowed.cpus;
    let cpus_of = |node: NodeId| -> Vec<Seat> {
        topology
            .cpus
            .iter()
            .filter(|c| c.node == Some(node) && allowed.contains(c.id))
            .map(|c| Seat { cpu: c.id, node })
            .collect()
    };
    let nodes = topology.compute_nodes();
    let shared = nodes
        .iter()
        .map(|&n| cpus_of(n))
        .find(|cpus| cpus.len() >= 2)
        .ok_or_else(|| {
            InterfereError::BadRequest(
                "interference needs two CPUs of one node, and this process may use fewer".into(),
            )
        })?;
    let (a, b) = (shared[0], shared[1]);
    let other = nodes
        .iter()
        .filter(|&&n| n != a.node)
        .find_map(|&n| cpus_of(n).first().copied());
    Ok((a, b, other))
}

/// Each workload's data on each seat it runs on.
struct Stage {
    prepared: BTreeMap<(Workload, u32), Prepared>,
}

impl Stage {
    fn new(placer: &Placer, request: &InterferenceRequest, seats: &[Seat]) -> Result<Self> {
        let mut prepared = BTreeMap::new();
        for &w in &request.workloads {
            for &seat in seats {
                if let std::collections::btree_map::Entry::Vacant(slot) =
                    prepared.entry((w, seat.cpu))
                {
                    slot.insert(prepare(
                        placer,
                        w,
                        Spot::Seat(seat),
                        &request.sizes,
                        u64::from(seat.cpu) + 1,
                    )?);
                }
            }
        }
        Ok(Stage { prepared })
    }

    fn get(&self, w: Workload, seat: Seat) -> &Prepared {
        &self.prepared[&(w, seat.cpu)]
    }
}

/// What runs started together gave: each one's rate and hardware counts
/// (per unit of its work), in the order asked, and whether every thread
/// ran on its node.
struct Together {
    rates: Vec<f64>,
    counts: Vec<Option<Counts>>,
    placed: bool,
}

/// How the counters count `units` of `w`'s work: scans per 64-byte line,
/// the others per unit; `None` for work that runs on a pool's worker
/// (join, aggregate), which the measuring thread's counters do not see.
fn counted_work(w: Workload, units: f64) -> Option<(f64, &'static str)> {
    match w {
        Workload::Scan => Some((units / 64.0, "line")),
        Workload::Probe => Some((units, "lookup")),
        Workload::Chase => Some((units, "load")),
        Workload::Compute => Some((units, "round")),
        _ => None,
    }
}

/// `runs` (workload, seat) started together, each for `duration`, each
/// thread counting its own work.
fn run_together(
    placer: &Placer,
    stage: &Stage,
    runs: &[(Workload, Seat)],
    duration: Duration,
) -> Result<Together> {
    let seats: Vec<Seat> = runs.iter().map(|r| r.1).collect();
    let deadline = std::sync::OnceLock::<Instant>::new();
    let out = team::run_counted_with_cue(
        placer,
        &seats,
        || {
            let _ = deadline.set(Instant::now() + duration);
        },
        |i| {
            let (w, seat) = runs[i];
            let end = *deadline.get_or_init(|| Instant::now() + duration);
            stage.get(w, seat).run_until(end)
        },
    )?;
    let mut together = Together {
        rates: Vec::with_capacity(runs.len()),
        counts: Vec::with_capacity(runs.len()),
        placed: out.check.all_placed(),
    };
    for ((result, counts), &(w, _)) in out.results.into_iter().zip(out.counts).zip(runs) {
        let (units, seconds) = result?;
        together.rates.push(units / seconds.max(1e-9));
        let work = counted_work(w, units);
        together
            .counts
            .push(counts.zip(work).map(|(c, (n, unit))| c.with_work(n, unit)));
    }
    Ok(together)
}

/// Per repetition: each workload's rate alone and, per ordered pair, the
/// victim's rate beside the aggressor; and the same runs' counts.
#[derive(Default)]
struct Samples {
    alone: BTreeMap<Workload, Vec<f64>>,
    beside: BTreeMap<(Workload, Workload), Vec<f64>>,
    alone_counts: BTreeMap<Workload, Vec<Option<Counts>>>,
    beside_counts: BTreeMap<(Workload, Workload), Vec<Option<Counts>>>,
}

/// One run of a repetition.
#[derive(Clone, Copy)]
enum Run {
    Alone(Workload),
    Pair(Workload, Workload),
}

/// The runs of repetition `rep`: every workload alone, then every ordered
/// pair; backward on odd repetitions.
fn schedule(workloads: &[Workload], rep: usize) -> Vec<Run> {
    let mut runs: Vec<Run> = workloads.iter().map(|&w| Run::Alone(w)).collect();
    for &v in workloads {
        runs.extend(workloads.iter().map(|&a| Run::Pair(v, a)));
    }
    if rep % 2 == 1 {
        runs.reverse();
    }
    runs
}

fn measure(
    placer: &Placer,
    stage: &Stage,
    request: &InterferenceRequest,
    (victim, aggressor): (Seat, Seat),
    placed: &mut bool,
    progress: &dyn Fn(&str),
) -> Result<Samples> {
    let mut samples = Samples::default();
    for rep in 0..request.reps.max(1) {
        for run in schedule(&request.workloads, rep) {
            match run {
                Run::Alone(w) => {
                    progress(&format!("{w} alone, repetition {}", rep + 1));
                    let t = run_together(placer, stage, &[(w, victim)], request.duration)?;
                    *placed &= t.placed;
                    samples.alone.entry(w).or_default().push(t.rates[0]);
                    samples.alone_counts.entry(w).or_default().push(t.counts[0]);
                }
                Run::Pair(v, a) => {
                    progress(&format!("{v} beside {a}, repetition {}", rep + 1));
                    let runs = [(v, victim), (a, aggressor)];
                    let t = run_together(placer, stage, &runs, request.duration)?;
                    *placed &= t.placed;
                    samples.beside.entry((v, a)).or_default().push(t.rates[0]);
                    let counts = samples.beside_counts.entry((v, a)).or_default();
                    counts.push(t.counts[0]);
                }
            }
        }
    }
    Ok(samples)
}

/// The victims' counts alone and beside each aggressor, where every run
/// of both was counted.
fn cell_counters(samples: &Samples) -> Vec<CellCounters> {
    samples
        .beside_counts
        .iter()
        .filter_map(|(&(victim, aggressor), beside)| {
            let alone = samples.alone_counts.get(&victim)?;
            Some(CellCounters {
                victim,
                aggressor,
                alone: Counts::sum(alone.iter().copied())?,
                beside: Counts::sum(beside.iter().copied())?,
            })
        })
        .collect()
}

fn cells(samples: &Samples) -> Vec<Cell> {
    samples
        .beside
        .iter()
        .map(|(&(v, a), together)| {
            let alone = &samples.alone[&v];
            let ratios: Vec<f64> = alone
                .iter()
                .zip(together)
                .map(|(x, y)| x / y.max(1e-9))
                .collect();
            let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
            let max = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            Cell {
                victim: v,
                aggressor: a,
                slowdown: median(&ratios),
                min,
                max,
            }
        })
        .collect()
}

/// Each workload alone: its median rate and its counts over every
/// repetition.
fn alone_figures(workloads: &[Workload], samples: &Samples) -> Vec<Alone> {
    workloads
        .iter()
        .map(|&w| Alone {
            workload: w,
            per_second: median(&samples.alone[&w]),
            unit: w.unit(),
            counters: samples
                .alone_counts
                .get(&w)
                .and_then(|c| Counts::sum(c.iter().copied())),
        })
        .collect()
}

/// Checks the request before anything is allocated.
fn check(request: &InterferenceRequest) -> Result<()> {
    let bad = |why: &str| Err(InterfereError::BadRequest(why.into()));
    if request.workloads.is_empty() {
        return bad("name at least one workload");
    }
    if request.reps == 0 {
        return bad("repetitions must be at least 1");
    }
    if request.duration.is_zero() {
        return bad("each run must last at least a millisecond");
    }
    Ok(())
}

/// Measures the matrices `request` asks for on `placer`'s machine;
/// `progress` hears what runs.
pub fn run(
    placer: &Placer,
    request: &InterferenceRequest,
    progress: &dyn Fn(&str),
) -> Result<InterferenceReport> {
    check(request)?;
    let (a, b, other) = seats(placer)?;
    let mut stage_seats = vec![a, b];
    stage_seats.extend(other);
    progress("placing the workloads' data");
    let stage = Stage::new(placer, request, &stage_seats)?;
    let mut placed = true;
    let colocated = measure(placer, &stage, request, (a, b), &mut placed, progress)?;
    let isolated = match other {
        Some(far) => Some(measure(
            placer,
            &stage,
            request,
            (a, far),
            &mut placed,
            progress,
        )?),
        None => None,
    };
    let colocated_cells = cells(&colocated);
    let alone = alone_figures(&request.workloads, &colocated);
    Ok(InterferenceReport {
        alone,
        classes: classify(&request.workloads, &colocated_cells),
        colocated: colocated_cells,
        colocated_seats: PairSeats {
            victim: a,
            aggressor: b,
        },
        isolated: isolated.as_ref().map(cells),
        isolated_seats: other.map(|far| PairSeats {
            victim: a,
            aggressor: far,
        }),
        isolated_unavailable: other
            .is_none()
            .then(|| "one node: no CPU on another node to isolate a workload on".to_string()),
        sizes: request.sizes,
        run_ms: request.duration.as_millis() as u64,
        reps: request.reps,
        placement_verified: placed,
        colocated_counters: cell_counters(&colocated),
        isolated_counters: isolated.as_ref().map(cell_counters),
        counters_unavailable: CounterGroup::hardware().err().map(|e| e.reason()),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use numakit_placement::PlacementMode;

    use super::*;

    #[test]
    fn odd_repetitions_run_backward() {
        use Workload::{Compute, Scan};
        let forward = schedule(&[Scan, Compute], 0);
        let backward = schedule(&[Scan, Compute], 1);
        assert_eq!(forward.len(), 2 + 4);
        assert!(matches!(forward[0], Run::Alone(Scan)));
        assert!(matches!(forward[2], Run::Pair(Scan, Scan)));
        assert!(matches!(backward[0], Run::Pair(Compute, Compute)));
        assert!(matches!(backward[5], Run::Alone(Scan)));
    }

    #[test]
    fn pool_work_is_not_counted_and_scans_count_lines() {
        assert_eq!(counted_work(Workload::Scan, 640.0), Some((10.0, "line")));
        assert_eq!(counted_work(Workload::Probe, 5.0), Some((5.0, "lookup")));
        assert_eq!(counted_work(Workload::Join, 5.0), None);
        assert_eq!(counted_work(Workload::Aggregate, 5.0), None);
    }

    /// Counted victims have counts alone and beside every aggressor, or
    /// the report has the one-line reason there are none; never both.
    #[test]
    fn victims_carry_counts_or_the_report_says_why_not() {
        let placer = Placer::new(
            Arc::new(numakit_topology::discover().unwrap()),
            PlacementMode::BestEffort,
        );
        if placer.topology().allowed.cpus.len() < 2 {
            eprintln!("skipped: one CPU");
            return;
        }
        let workloads = vec![Workload::Scan, Workload::Probe, Workload::Join];
        let request = InterferenceRequest {
            workloads: workloads.clone(),
            duration: Duration::from_millis(10),
            reps: 1,
            sizes: Sizes {
                cache_bytes: 1 << 20,
                scan_bytes: 8 << 20,
                chase_bytes: 8 << 20,
                rows: 1 << 12,
            },
        };
        let report = run(&placer, &request, &|_| {}).unwrap();
        let join = report.alone.iter().find(|a| a.workload == Workload::Join);
        assert!(join.is_some_and(|a| a.counters.is_none()), "pool work");
        match &report.counters_unavailable {
            Some(reason) => {
                assert!(!reason.is_empty() && !reason.contains('\n'), "{reason}");
                assert!(report.colocated_counters.is_empty());
                assert!(report.alone.iter().all(|a| a.counters.is_none()));
            }
            None => {
                // Scan and probe as victims, beside each of the three.
                assert_eq!(report.colocated_counters.len(), 2 * 3);
                for c in &report.colocated_counters {
                    assert!(c.alone.work.is_some() && c.beside.work.is_some(), "{c:?}");
                    assert!(c.beside.instructions.or(c.beside.cycles) > Some(0), "{c:?}");
                }
            }
        }
    }
}
