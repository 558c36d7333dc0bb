//! The slowdown matrix: every workload alone, then every ordered pair
//! (victim, aggressor) at the same time on two CPUs, co-located (one node:
//! a shared last-level cache and memory controllers) and, where there is a
//! second node, isolated (one CPU on each). A victim's slowdown is its
//! throughput alone over its throughput beside the aggressor; each
//! repetition runs every measurement once, in forward order on even
//! repetitions and backward on odd ones, and the reported figures are
//! medians over the repetitions.
//!
//! It does not decide what the figures mean ([`crate::classify`] does)
//! or where jobs should run.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use numakit_placement::Placer;
use numakit_probe::team::{self, Seat};
use numakit_topology::NodeId;
use serde::Serialize;

use crate::cell::Cell;
use crate::classify::{classify, Class};
use crate::error::{InterfereError, Result};
use crate::workload::{Prepared, Sizes, Workload};

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

/// `w`'s data made by a thread on `seat`, so its pages land on the seat's
/// node and its pool starts there; then one untimed step, which pays the
/// first run's costs (the operators measure the cache once, tables fault
/// their pages in).
fn prepare_on_seat(
    placer: &Placer,
    request: &InterferenceRequest,
    w: Workload,
    seat: Seat,
) -> Result<Prepared> {
    let made = team::run(placer, &[seat], |_| {
        let prepared = Prepared::new(w, placer, seat, &request.sizes)?;
        prepared.run_until(Instant::now())?;
        Ok::<_, InterfereError>(prepared)
    })?;
    made.results
        .into_iter()
        .next()
        .ok_or_else(|| InterfereError::BadRequest("a preparing thread returned nothing".into()))?
}

impl Stage {
    fn new(placer: &Placer, request: &InterferenceRequest, seats: &[Seat]) -> Result<Self> {
        let mut prepared = BTreeMap::new();
        for &w in &request.workloads {
            for &seat in seats {
                if let std::collections::btree_map::Entry::Vacant(slot) =
                    prepared.entry((w, seat.cpu))
                {
                    slot.insert(prepare_on_seat(placer, request, w, seat)?);
                }
            }
        }
        Ok(Stage { prepared })
    }

    fn get(&self, w: Workload, seat: Seat) -> &Prepared {
        &self.prepared[&(w, seat.cpu)]
    }
}

/// Throughputs of `runs` (workload, seat) started together, each for
/// `duration`; and whether every thread ran on its node.
fn run_together(
    placer: &Placer,
    stage: &Stage,
    runs: &[(Workload, Seat)],
    duration: Duration,
) -> Result<(Vec<f64>, bool)> {
    let seats: Vec<Seat> = runs.iter().map(|r| r.1).collect();
    let deadline = std::sync::OnceLock::<Instant>::new();
    let out = team::run_with_cue(
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
    let mut rates = Vec::with_capacity(runs.len());
    for result in out.results {
        let (units, seconds) = result?;
        rates.push(units / seconds.max(1e-9));
    }
    Ok((rates, out.check.all_placed()))
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// Per repetition: each workload's rate alone and, per ordered pair, the
/// victim's rate beside the aggressor.
struct Samples {
    alone: BTreeMap<Workload, Vec<f64>>,
    beside: BTreeMap<(Workload, Workload), Vec<f64>>,
}

fn measure(
    placer: &Placer,
    stage: &Stage,
    request: &InterferenceRequest,
    (victim, aggressor): (Seat, Seat),
    placed: &mut bool,
    progress: &dyn Fn(&str),
) -> Result<Samples> {
    let mut samples = Samples {
        alone: BTreeMap::new(),
        beside: BTreeMap::new(),
    };
    let pairs: Vec<(Workload, Workload)> = request
        .workloads
        .iter()
        .flat_map(|&v| request.workloads.iter().map(move |&a| (v, a)))
        .collect();
    for rep in 0..request.reps.max(1) {
        let mut order: Vec<Option<(Workload, Workload)>> = request
            .workloads
            .iter()
            .map(|_| None)
            .chain(pairs.iter().copied().map(Some))
            .collect();
        let alone_order: Vec<Workload> = request.workloads.clone();
        if rep % 2 == 1 {
            order.reverse();
        }
        let mut alone_next = if rep % 2 == 1 {
            alone_order.into_iter().rev().collect::<Vec<_>>()
        } else {
            alone_order
        }
        .into_iter();
        for item in order {
            match item {
                None => {
                    let Some(w) = alone_next.next() else { continue };
                    progress(&format!("{w} alone, repetition {}", rep + 1));
                    let (rates, ok) =
                        run_together(placer, stage, &[(w, victim)], request.duration)?;
                    *placed &= ok;
                    samples.alone.entry(w).or_default().push(rates[0]);
                }
                Some((v, a)) => {
                    progress(&format!("{v} beside {a}, repetition {}", rep + 1));
                    let (rates, ok) = run_together(
                        placer,
                        stage,
                        &[(v, victim), (a, aggressor)],
                        request.duration,
                    )?;
                    *placed &= ok;
                    samples.beside.entry((v, a)).or_default().push(rates[0]);
                }
            }
        }
    }
    Ok(samples)
}

fn cells(samples: &Samples) -> Vec<Cell> {
    samples
        .beside
        .iter()
        .map(|(&(v, a), together)| {
            let alone = &samples.alone[&v];
            let mut ratios: Vec<f64> = alone
                .iter()
                .zip(together)
                .map(|(x, y)| x / y.max(1e-9))
                .collect();
            let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
            let max = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            Cell {
                victim: v,
                aggressor: a,
                slowdown: median(&mut ratios),
                min,
                max,
            }
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
    let alone = request
        .workloads
        .iter()
        .map(|&w| Alone {
            workload: w,
            per_second: median(&mut colocated.alone[&w].clone()),
            unit: w.unit(),
        })
        .collect();
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
    })
}
