//! Predictions for a whole machine (every schedule, and a thread sweep as
//! in Li Figure 7) and the cost model that recommends a schedule.
//!
//! The recommendation picks the data-moving schedule (naive, ring, random;
//! tight or loose) with the highest predicted bandwidth, and says whether
//! thread migration would beat it when the consumer's state is small. It
//! does not weigh the cost of moving a large state (that depends on the
//! operator; see Li §4.3), nor does it run anything.

use numakit_shuffle::{Layout, Schedule, Strategy, SyncMode};
use numakit_topology::Topology;
use serde::Serialize;

use crate::calibration::{Calibration, ModelFit};
use crate::error::SimError;
use crate::machine::Machine;
use crate::simulate::{simulate_on, SimOptions};

/// One schedule's prediction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReportRow {
    /// The schedule simulated.
    pub strategy: Strategy,
    /// Tight or loose.
    pub sync: SyncMode,
    /// Predicted shuffle bandwidth, 1e9 bytes per second.
    pub gbs: f64,
    /// Predicted time for the report's total bytes, in seconds.
    pub seconds: f64,
    /// What limited most of the bytes (see [`crate::SimResult::bottleneck`]).
    pub bottleneck: String,
}

/// Naive, ring and migration (all tight) at one thread count.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepPoint {
    /// Threads in all (sockets x `threads_per_socket`).
    pub threads: usize,
    /// Threads on each socket at this point, from 1 up.
    pub threads_per_socket: usize,
    /// Predicted bandwidth of the naive schedule, GB/s.
    pub naive_gbs: f64,
    /// Predicted bandwidth of the coordinated ring, GB/s.
    pub ring_gbs: f64,
    /// Predicted bandwidth of thread migration (no state copy), GB/s.
    pub migration_gbs: f64,
}

/// Every schedule on one machine, and the thread sweep.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MachineReport {
    /// The machine's name ([`Machine::name`]).
    pub machine: String,
    /// Sockets and threads per socket of the rows.
    pub layout: Layout,
    /// Bytes, state size and seed every row was simulated with.
    pub options: SimOptions,
    /// The model constants used.
    pub calibration: Calibration,
    /// Whether those constants apply to this machine.
    pub fit: ModelFit,
    /// Every strategy, tight then loose.
    pub rows: Vec<ReportRow>,
    /// Tight bandwidth by threads per socket, up to the layout's (every
    /// count up to 16, spaced beyond); empty from [`predict_schedules`].
    pub sweep: Vec<SweepPoint>,
}

impl MachineReport {
    /// The row of one schedule.
    pub fn row(&self, strategy: Strategy, sync: SyncMode) -> Option<&ReportRow> {
        self.rows
            .iter()
            .find(|r| r.strategy == strategy && r.sync == sync)
    }
}

/// The recommendation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Recommendation {
    /// The machine's name ([`Machine::name`]).
    pub machine: String,
    /// The layout the predictions are for.
    pub layout: Layout,
    /// The best data-moving schedule (always the ring on a one-node machine,
    /// where all are equivalent).
    pub strategy: Strategy,
    /// Tight or loose, for `strategy` (tight on a one-node machine).
    pub sync: SyncMode,
    /// Predicted bandwidth of the best data-moving schedule, GB/s.
    pub predicted_gbs: f64,
    /// Predicted bandwidth of the naive schedule (its better sync mode), GB/s.
    pub naive_gbs: f64,
    /// The better migration variant (no state copy) and its prediction.
    pub migration_sync: SyncMode,
    /// Predicted bandwidth of that migration variant, GB/s.
    pub migration_gbs: f64,
    /// Whether migration beats the recommendation by more than 5% when the
    /// consumer's state is small.
    pub migration_better: bool,
    /// Whether the model's constants apply to this machine.
    pub fit: ModelFit,
    /// One or two lines for people (and a third when the predictions are
    /// uncalibrated).
    pub why: String,
}

/// Predicts every schedule with the default options; `threads_per_socket`
/// defaults to the hardware threads of a socket.
pub fn predict_machine(
    topo: &Topology,
    threads_per_socket: Option<usize>,
    cal: &Calibration,
) -> Result<MachineReport, SimError> {
    predict_machine_with(topo, threads_per_socket, cal, &SimOptions::default())
}

/// [`predict_machine`] with explicit options.
pub fn predict_machine_with(
    topo: &Topology,
    threads_per_socket: Option<usize>,
    cal: &Calibration,
    opts: &SimOptions,
) -> Result<MachineReport, SimError> {
    let mut report = predict_schedules(topo, threads_per_socket, cal, opts)?;
    let machine = Machine::new(topo)?;
    let layout = report.layout;
    let points = sweep_points(layout.threads_per_socket);
    report.sweep.reserve(points.len());
    for per in points {
        let at = Layout::new(layout.sockets, per);
        let gbs = |s: Strategy| -> Result<f64, SimError> {
            let schedule = Schedule::build(at, s, opts.seed);
            Ok(simulate_on(&machine, &schedule, SyncMode::Tight, opts, cal)?.gbs)
        };
        report.sweep.push(SweepPoint {
            threads: at.threads(),
            threads_per_socket: per,
            naive_gbs: gbs(Strategy::Naive)?,
            ring_gbs: gbs(Strategy::Ring)?,
            migration_gbs: gbs(Strategy::Migration)?,
        });
    }
    Ok(report)
}

/// Every schedule on one machine, tight and loose, without the thread
/// sweep (the report's `sweep` is empty): what [`plan_from_report`] and a
/// table of schedules need, at a fraction of the cost.
pub fn predict_schedules(
    topo: &Topology,
    threads_per_socket: Option<usize>,
    cal: &Calibration,
    opts: &SimOptions,
) -> Result<MachineReport, SimError> {
    let machine = Machine::new(topo)?;
    let layout = layout_for(&machine, threads_per_socket)?;
    let rows = rows_for(&machine, layout, cal, opts, &Strategy::ALL)?;
    Ok(MachineReport {
        machine: machine.name.clone(),
        layout,
        options: *opts,
        calibration: *cal,
        fit: ModelFit::of(topo),
        rows,
        sweep: Vec::new(),
    })
}

/// Threads per socket at which the sweep simulates: every count up to 16,
/// and on larger sockets the first 8, then about 16 evenly spaced up to
/// the whole socket (a simulation costs about threads², so a sweep of
/// every count on a 112-thread socket took most of a minute).
fn sweep_points(max: usize) -> Vec<usize> {
    const EVERY_UP_TO: usize = 16;
    if max <= EVERY_UP_TO {
        return (1..=max).collect();
    }
    let step = (max - 8).div_ceil(16);
    let mut points: Vec<usize> = (1..=8).chain((8 + step..max).step_by(step)).collect();
    points.push(max);
    points
}

/// Recommends a schedule for `topo` (see the module docs).
pub fn plan(
    topo: &Topology,
    threads_per_socket: Option<usize>,
    cal: &Calibration,
) -> Result<Recommendation, SimError> {
    let machine = Machine::new(topo)?;
    let layout = layout_for(&machine, threads_per_socket)?;
    let strategies = [
        Strategy::Naive,
        Strategy::Ring,
        Strategy::Random,
        Strategy::Migration,
    ];
    let rows = rows_for(&machine, layout, cal, &SimOptions::default(), &strategies)?;
    plan_from_rows(&machine.name, layout, &rows, ModelFit::of(topo))
}

/// The recommendation from an existing report (no new simulation).
pub fn plan_from_report(report: &MachineReport) -> Result<Recommendation, SimError> {
    plan_from_rows(
        &report.machine,
        report.layout,
        &report.rows,
        report.fit.clone(),
    )
}

/// The default is every hardware thread of a socket: Figure 6 reports the
/// *maximum* bandwidth each method achieved, on machines with 2-way SMT.
fn layout_for(machine: &Machine, threads_per_socket: Option<usize>) -> Result<Layout, SimError> {
    let hw_threads = (0..machine.socket_count())
        .map(|s| machine.socket(s).hw_threads)
        .min()
        .unwrap_or(1)
        .max(1);
    match threads_per_socket.unwrap_or(hw_threads) {
        0 => Err(SimError::BadOption(
            "at least one thread per socket".to_string(),
        )),
        per => Ok(Layout::new(machine.socket_count(), per)),
    }
}

fn rows_for(
    machine: &Machine,
    layout: Layout,
    cal: &Calibration,
    opts: &SimOptions,
    strategies: &[Strategy],
) -> Result<Vec<ReportRow>, SimError> {
    let mut rows = Vec::with_capacity(strategies.len() * 2);
    for &strategy in strategies {
        let schedule = Schedule::build(layout, strategy, opts.seed);
        for sync in SyncMode::ALL {
            let r = simulate_on(machine, &schedule, sync, opts, cal)?;
            rows.push(ReportRow {
                strategy,
                sync,
                gbs: r.gbs,
                seconds: r.seconds,
                bottleneck: r.bottleneck,
            });
        }
    }
    Ok(rows)
}

/// Preference among near-equal predictions (within 1%): coordinated
/// before uncoordinated, tight before loose.
fn preference(row: &ReportRow) -> usize {
    let s = match row.strategy {
        Strategy::Ring => 0,
        Strategy::Random => 1,
        _ => 2,
    };
    2 * s + usize::from(row.sync == SyncMode::Loose)
}

/// The fastest of `rows` matching `keep`, ties (within 1%) by preference.
fn best(rows: &[ReportRow], keep: impl Fn(&ReportRow) -> bool) -> Option<&ReportRow> {
    let top = rows
        .iter()
        .filter(|r| keep(r))
        .map(|r| r.gbs)
        .fold(f64::NEG_INFINITY, f64::max);
    rows.iter()
        .filter(|r| keep(r) && r.gbs >= top * 0.99)
        .min_by_key(|r| preference(r))
}

fn plan_from_rows(
    machine: &str,
    layout: Layout,
    rows: &[ReportRow],
    fit: ModelFit,
) -> Result<Recommendation, SimError> {
    let missing =
        |what: &str| SimError::BadOption(format!("no prediction for {what} to plan from"));
    let moving = |r: &ReportRow| {
        matches!(
            r.strategy,
            Strategy::Naive | Strategy::Ring | Strategy::Random
        )
    };
    let chosen = best(rows, moving).ok_or_else(|| missing("a data-moving schedule"))?;
    let naive = best(rows, |r| r.strategy == Strategy::Naive).ok_or_else(|| missing("naive"))?;
    let migration =
        best(rows, |r| r.strategy == Strategy::Migration).ok_or_else(|| missing("migration"))?;
    let migration_better = migration.gbs > chosen.gbs * 1.05;
    let why = if layout.sockets == 1 {
        format!(
            "one node: every schedule reads local memory, so all are equivalent ({:.0} GB/s predicted, limited by {}); ring (tight) by default",
            chosen.gbs, chosen.bottleneck
        )
    } else {
        let first = format!(
            "{} ({}): {:.0} GB/s predicted vs naive {:.0} GB/s; limited by {}",
            chosen.strategy, chosen.sync, chosen.gbs, naive.gbs, chosen.bottleneck
        );
        let second = if migration_better {
            format!(
                "migration ({}) would reach {:.0} GB/s (+{:.0}%) if each consumer's state is small",
                migration.sync,
                migration.gbs,
                100.0 * (migration.gbs / chosen.gbs - 1.0)
            )
        } else {
            format!(
                "migration ({}) would reach {:.0} GB/s: no better, even with a small state",
                migration.sync, migration.gbs
            )
        };
        format!("{first}\n{second}")
    };
    let why = if fit.calibrated {
        why
    } else {
        format!("{why}\n{}", fit.note)
    };
    let (strategy, sync) = if layout.sockets == 1 {
        (Strategy::Ring, SyncMode::Tight)
    } else {
        (chosen.strategy, chosen.sync)
    };
    Ok(Recommendation {
        machine: machine.to_string(),
        layout,
        strategy,
        sync,
        predicted_gbs: chosen.gbs,
        naive_gbs: naive.gbs,
        migration_sync: migration.sync,
        migration_gbs: migration.gbs,
        migration_better,
        fit,
        why,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use numakit_topology::{presets, MachineDescription};

    fn row(strategy: Strategy, sync: SyncMode, gbs: f64) -> ReportRow {
        ReportRow {
            strategy,
            sync,
            gbs,
            seconds: 1.0,
            bottleneck: "x".to_string(),
        }
    }

    #[test]
    fn near_ties_prefer_ring_and_tight() {
        let rows = [
            row(Strategy::Naive, SyncMode::Tight, 50.2),
            row(Strategy::Ring, SyncMode::Loose, 50.1),
            row(Strategy::Ring, SyncMode::Tight, 50.0),
            row(Strategy::Migration, SyncMode::Tight, 80.0),
            row(Strategy::Migration, SyncMode::Loose, 70.0),
        ];
        let calibrated = ModelFit {
            calibrated: true,
            note: String::new(),
        };
        let plan = plan_from_rows("m", Layout::new(2, 2), &rows, calibrated.clone()).unwrap();
        assert_eq!(
            (plan.strategy, plan.sync),
            (Strategy::Ring, SyncMode::Tight)
        );
        assert!(plan.migration_better && plan.migration_sync == SyncMode::Tight);
        assert!(plan.why.contains("+60%"), "{}", plan.why);
        let err = plan_from_rows("m", Layout::new(2, 2), &rows[..3], calibrated).unwrap_err();
        assert!(err.to_string().contains("migration"), "{err}");
    }

    #[test]
    fn predictions_for_machines_the_model_was_not_fitted_on_say_so() {
        let fit =
            |name: &str| ModelFit::of(&numakit_topology::presets::topology(name).expect("preset"));
        for name in ["nehalem-ex-4s", "nehalem-ex-8s", "westmere-ex-4s"] {
            assert!(fit(name).calibrated, "{name}");
        }
        for name in [
            "xeon-8480-2s",
            "opteron-istanbul-2s",
            "ultrasparc-t2plus-4c",
        ] {
            let f = fit(name);
            assert!(
                !f.calibrated && f.note.contains("directory"),
                "{name}: {f:?}"
            );
        }
        let topo = numakit_topology::presets::topology("xeon-8480-2s").expect("preset");
        let p = plan(&topo, None, &Calibration::li_nehalem()).expect("plan");
        assert!(p.why.contains("uncalibrated"), "{}", p.why);
        let report = predict_machine(&topo, None, &Calibration::li_nehalem()).expect("report");
        assert!(crate::render_report(&report).contains("uncalibrated"));
        let agg = crate::aggregation::sweep(&topo, None, &[1e3], &Default::default())
            .expect("aggregation");
        assert!(crate::aggregation::render_aggregation(&agg).contains("uncalibrated"));
        let mut undescribed = numakit_topology::presets::topology("nehalem-ex-4s").expect("preset");
        undescribed.coherence = None;
        assert!(ModelFit::of(&undescribed).note.contains("does not say"));
    }

    #[test]
    fn one_node_makes_schedules_equivalent() {
        let json = r#"{"name": "one", "description": "", "source": "",
            "nodes": [{"id": 0, "socket": 0, "cores": 2, "threads_per_core": 1,
                       "memory_bandwidth_gbs": 3.0}]}"#;
        let topo = MachineDescription::from_json(json, "test")
            .unwrap()
            .to_topology();
        let plan = plan(&topo, None, &Calibration::li_nehalem()).unwrap();
        assert_eq!(
            (plan.strategy, plan.sync),
            (Strategy::Ring, SyncMode::Tight)
        );
        assert!(plan.why.starts_with("one node"), "{}", plan.why);
        assert!(!plan.migration_better);
        // One memory: every schedule reads the same one, so they agree
        // (for each synchronization); the jitter keeps them a little below
        // the memory's 3 GB/s.
        let report = predict_machine(&topo, None, &Calibration::li_nehalem()).unwrap();
        for r in &report.rows {
            let same = report.rows.iter().find(|x| x.sync == r.sync).unwrap();
            assert!(
                (r.gbs - same.gbs).abs() < 1e-6 * same.gbs,
                "{:?}",
                report.rows
            );
            assert!(
                r.gbs <= 3.0 + 1e-9 && r.gbs > 3.0 * 0.9,
                "{:?}",
                report.rows
            );
        }
        assert!((plan.predicted_gbs - report.rows[0].gbs).abs() < 0.1);
        assert_eq!(report.sweep.len(), 2);
    }

    #[test]
    fn the_sweep_takes_every_count_on_small_sockets_and_spaced_ones_on_large() {
        assert_eq!(sweep_points(1), vec![1]);
        assert_eq!(sweep_points(16), (1..=16).collect::<Vec<_>>());
        let large = sweep_points(112);
        assert_eq!(large[..8], [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(large.last(), Some(&112));
        assert!(large.len() <= 26, "{large:?}");
        assert!(large.windows(2).all(|w| w[0] < w[1]), "{large:?}");
        let odd = sweep_points(17);
        assert_eq!(odd.last(), Some(&17));
        assert!(odd.windows(2).all(|w| w[0] < w[1]), "{odd:?}");
    }

    #[test]
    fn zero_threads_is_refused() {
        let topo = presets::topology("opteron-istanbul-2s").unwrap();
        let err = predict_machine(&topo, Some(0), &Calibration::li_nehalem()).unwrap_err();
        assert!(matches!(err, SimError::BadOption(_)));
    }
}
