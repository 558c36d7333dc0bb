//! The placement strategies of Kiefer §4 (Figures 4, 5 and 6): one
//! instance per socket, its threads and memory placed `default`,
//! `aligned`, `1-ahead` or `interleave`.
//!
//! Figure 4 prints the seats and memory placements that
//! [`numakit_probe::strategies::instance`] computes, on the paper's two
//! machines. Figures 5 and 6 measure numakit's scan, aggregation and join
//! under the four strategies on this machine
//! ([`numakit_probe::strategies::run`], behind `numakit probe
//! strategies`), and replay the same placements as steady read flows in
//! the interconnect simulator on the paper's machine: each instance's
//! threads (one per core or hardware thread, as the paper's connections)
//! read their data from the nodes the strategy put it on. The simulator
//! models links, memory controllers and snoops, not caches, so it can show
//! the remote-memory direction and the link loads (Figure 7c), but not the
//! cache effect of binding that makes 1-ahead beat `default` on the Intel
//! machine.

use std::sync::Arc;

use numakit_placement::PlacementMode;
use numakit_probe::strategies::{
    self, instance, PlacementStrategy, Sizes, StrategyOptions, StrategyReport, Workload,
};
use numakit_sim::machine::{Machine, ReadTable};
use numakit_sim::{Calibration, ModelFit};
use numakit_topology::{presets, Topology};

use super::{geomean, placer, row, AMD, GUESTS, INTEL};
use crate::context::{Context, Scale};
use crate::error::RunResult;
use crate::outcome::{Outcome, Row, Shape, Verdict};

/// The strategies that bind threads (Figure 4 draws these three).
const BOUND: [PlacementStrategy; 3] = [
    PlacementStrategy::Aligned,
    PlacementStrategy::OneAhead,
    PlacementStrategy::Interleave,
];

/// Figure 4: where each instance's threads and memory go, on both machines.
pub(crate) fn figure_4(ctx: &Context<'_>) -> RunResult<Outcome> {
    let mut rows = Vec::new();
    let mut wrong = Vec::new();
    for preset in [AMD, INTEL] {
        assignment(preset, &mut rows, &mut wrong)?;
    }
    let here = instance::seats(&ctx.topology, ctx.topology.compute_nodes().len())?;
    let detail = if wrong.is_empty() {
        "every instance's threads on its socket; memory on it (aligned), on socket id + 1 mod sockets (1-ahead), over all sockets (interleave)".to_string()
    } else {
        wrong.join("; ")
    };
    Ok(Outcome {
        rows,
        shapes: vec![Shape::new(
            "threads bound to the instance's socket; memory on the same socket, the next one, or interleaved over all",
            Verdict::check(wrong.is_empty(), detail),
        )],
        notes: vec![
            "the published column is the paper's rule (Sec. 4.2 and footnote 5: the next socket is the id + 1 modulo the sockets)".into(),
            format!("this machine: {} instance(s), on node(s) {:?}", here.len(), here.iter().map(|s| s.node).collect::<Vec<_>>()),
        ],
    })
}

/// The rows of one machine's assignment, each instance's memory node (or
/// the number of interleave nodes) beside the paper's rule; what breaks
/// the rule goes to `wrong`.
fn assignment(preset: &str, rows: &mut Vec<Row>, wrong: &mut Vec<String>) -> RunResult<()> {
    let topo = presets::topology(preset)?;
    let memory = topo.memory_nodes();
    let seats = instance::seats(&topo, topo.compute_nodes().len())?;
    for strategy in BOUND {
        for (i, seat) in seats.iter().enumerate() {
            let name = strategy.name();
            let nodes = instance::placement(strategy, seat.node, &memory).nodes();
            let bound = topo.allowed_cpus_of(seat.node)?;
            if !seat.cpus.iter().all(|c| bound.contains(c)) {
                wrong.push(format!("{preset} {name}: instance {i}'s CPUs off its node"));
            }
            let (ours, expected, what) = match strategy {
                PlacementStrategy::Interleave => (nodes.len(), memory.len(), "memory nodes"),
                _ => {
                    let node = nodes.iter().next().ok_or("a placement without a node")? as usize;
                    let rule = match strategy {
                        PlacementStrategy::OneAhead => (seat.node as usize + 1) % memory.len(),
                        _ => seat.node as usize,
                    };
                    (node, rule, "memory node")
                }
            };
            if ours != expected {
                wrong.push(format!(
                    "{preset} {name}: instance {i}: {ours}, expected {expected}"
                ));
            }
            rows.push(row(
                format!(
                    "{preset}, {name}: instance {i} (threads on node {}), {what}",
                    seat.node
                ),
                "",
                ours as f64,
                Some(expected as f64),
            ));
        }
    }
    Ok(())
}

/// One strategy replayed by the simulator on a paper's machine.
struct Simulated {
    strategy: PlacementStrategy,
    /// All instances' read bandwidth together, GB/s.
    gbs: f64,
    /// The most data any directed link carries, GB/s (snoops left out:
    /// the paper's single-link figure shows no traffic under aligned).
    busiest_link: f64,
    /// Every link's load together, data and snoops, GB/s.
    all_links: f64,
}

/// Every instance's threads read from the nodes `strategy` puts its data
/// on, all at once, shared by the simulator's max-min fair model.
fn simulate(topo: &Topology, strategy: PlacementStrategy) -> RunResult<Simulated> {
    let machine = Machine::new(topo)?;
    let table = ReadTable::new(&machine, &Calibration::for_machine(topo));
    let memory = topo.memory_nodes();
    let socket = |node| {
        machine
            .socket_of_node(node)
            .ok_or("memory on a node without CPUs")
    };
    let mut flows = Vec::new();
    for seat in instance::seats(topo, topo.compute_nodes().len())? {
        let on = socket(seat.node)?;
        let sources = instance::placement(strategy, seat.node, &memory).nodes();
        let threads = (machine.socket(on).hw_threads / sources.len().max(1)).max(1);
        for from in sources.iter() {
            flows.push(((socket(from)?, on), threads));
        }
    }
    let shares = table.share(&flows);
    let mut load = vec![0.0; machine.resource_count()];
    let mut data = vec![0.0; machine.resource_count()];
    let mut gbs = 0.0;
    for (&((from, on), threads), share) in flows.iter().zip(&shares) {
        let rate = threads as f64 * share.rate;
        gbs += rate;
        for u in table.uses(from, on) {
            load[u.resource] += rate * u.coef();
            data[u.resource] += rate * u.data;
        }
    }
    let links = (0..load.len()).filter(|&r| !machine.is_memory(r));
    Ok(Simulated {
        strategy,
        gbs,
        busiest_link: links.clone().map(|r| data[r]).fold(0.0, f64::max),
        all_links: links.map(|r| load[r]).sum(),
    })
}

fn simulated(preset: &str) -> RunResult<(Vec<Simulated>, String)> {
    let topo = presets::topology(preset)?;
    let points = BOUND
        .iter()
        .map(|&s| simulate(&topo, s))
        .collect::<RunResult<Vec<_>>>()?;
    let fit = ModelFit::of(&topo);
    let note = format!(
        "simulator on {preset}: every instance's threads (one per hardware thread) read their data where the strategy put it, all at once; `default` is not modelled (the kernel's placement is not known){}",
        if fit.calibrated { String::new() } else { format!("; {}", fit.note) }
    );
    Ok((points, note))
}

fn gbs_of(points: &[Simulated], strategy: PlacementStrategy) -> f64 {
    points
        .iter()
        .find(|p| p.strategy == strategy)
        .map_or(0.0, |p| p.gbs)
}

/// The strategies measured on this machine.
fn measure(ctx: &Context<'_>) -> RunResult<StrategyReport> {
    let options = StrategyOptions {
        sizes: ctx.scale.pick(
            Sizes {
                rows: 200_000,
                groups: 1 << 10,
                build_rows: 1 << 14,
            },
            StrategyOptions::default().sizes,
        ),
        workloads: match ctx.scale {
            Scale::Small => vec![Workload::Scan, Workload::Join],
            Scale::Standard => Workload::ALL.to_vec(),
        },
        reps: ctx.scale.pick(1, 5),
        mode: PlacementMode::BestEffort,
        ..StrategyOptions::default()
    };
    Ok(strategies::run(
        &placer(&Arc::clone(&ctx.topology)),
        &options,
        ctx.progress,
    )?)
}

/// Our figures: every strategy over default on every workload, then the
/// aligned summary beside the paper's.
fn measured_rows(
    report: &StrategyReport,
    best: Option<f64>,
    mean: Option<f64>,
) -> (Vec<Row>, Vec<f64>) {
    let mut rows = Vec::new();
    let mut aligned = Vec::new();
    for o in report
        .outcomes
        .iter()
        .filter(|o| o.strategy != PlacementStrategy::Default)
    {
        if o.strategy == PlacementStrategy::Aligned {
            aligned.extend(o.vs_default);
        }
        rows.push(Row::new(
            format!(
                "{}: {} / default (this machine)",
                o.workload.name(),
                o.strategy.name()
            ),
            "x",
            o.vs_default,
            None,
        ));
    }
    let most = aligned
        .iter()
        .copied()
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    rows.push(Row::new(
        "aligned / default, best workload (paper: best query)",
        "x",
        most,
        best,
    ));
    rows.push(Row::new(
        "aligned / default, mean over workloads (paper: on average)",
        "x",
        geomean(&aligned),
        mean,
    ));
    (rows, aligned)
}

/// Whether aligned kept up with default where memory nodes differ.
fn aligned_verdict(report: &StrategyReport, aligned: &[f64], preset: &str) -> Verdict {
    match geomean(aligned) {
        Some(mean) if report.memory_nodes.len() >= 2 => {
            Verdict::check(mean >= 0.95, format!("aligned / default = {mean:.2}x over the workloads"))
        }
        _ => Verdict::NotShownHere(format!(
            "one memory node here: every strategy puts the memory on it, so they differ only by where the kernel runs the threads and by noise; {GUESTS}; the simulator's rows show the remote direction on {preset}"
        )),
    }
}

fn sim_rows(preset: &str, points: &[Simulated], links: bool) -> Vec<Row> {
    let mut rows = Vec::new();
    for p in points {
        rows.push(row(
            format!("simulator {preset}: {} read bandwidth", p.strategy.name()),
            "GB/s",
            p.gbs,
            None,
        ));
    }
    if links {
        for p in points {
            rows.push(row(
                format!(
                    "simulator {preset}: {} busiest QPI link, data (Fig. 7c)",
                    p.strategy.name()
                ),
                "GB/s",
                p.busiest_link,
                None,
            ));
            rows.push(row(
                format!(
                    "simulator {preset}: {} all QPI links, data and snoops (Fig. 7d)",
                    p.strategy.name()
                ),
                "GB/s",
                p.all_links,
                None,
            ));
        }
    }
    rows
}

/// Figure 5: the AMD machine (aligned up to 18% faster, 10-15% on
/// average; 1-ahead often slower; interleave never slower).
pub(crate) fn figure_5(ctx: &Context<'_>) -> RunResult<Outcome> {
    let report = measure(ctx)?;
    let (mut rows, aligned) = measured_rows(&report, Some(1.18), Some(1.125));
    let (points, sim_note) = simulated(AMD)?;
    rows.extend(sim_rows(AMD, &points, false));
    let (a, one, inter) = (
        gbs_of(&points, PlacementStrategy::Aligned),
        gbs_of(&points, PlacementStrategy::OneAhead),
        gbs_of(&points, PlacementStrategy::Interleave),
    );
    let shapes = vec![
        Shape::new(
            "aligned is as fast as default or faster (up to 18%, 10-15% on average)",
            aligned_verdict(&report, &aligned, AMD),
        ),
        Shape::new(
            "1-ahead (memory on the other socket) degrades throughput against aligned",
            Verdict::check(
                one < a,
                format!("simulator {AMD}: 1-ahead {one:.1} vs aligned {a:.1} GB/s"),
            ),
        ),
        Shape::new(
            "interleave degrades less than 1-ahead",
            Verdict::check(
                inter > one,
                format!("simulator {AMD}: interleave {inter:.1} vs 1-ahead {one:.1} GB/s"),
            ),
        ),
    ];
    Ok(Outcome {
        rows,
        shapes,
        notes: notes(&report, sim_note),
    })
}

/// Figure 6: the Intel machine (aligned up to 75% faster; 1-ahead often
/// slightly faster than default; interleave between aligned and 1-ahead).
pub(crate) fn figure_6(ctx: &Context<'_>) -> RunResult<Outcome> {
    let report = measure(ctx)?;
    let (mut rows, aligned) = measured_rows(&report, Some(1.75), None);
    let (points, sim_note) = simulated(INTEL)?;
    rows.extend(sim_rows(INTEL, &points, true));
    let (a, one, inter) = (
        gbs_of(&points, PlacementStrategy::Aligned),
        gbs_of(&points, PlacementStrategy::OneAhead),
        gbs_of(&points, PlacementStrategy::Interleave),
    );
    let link = |s: PlacementStrategy| {
        points
            .iter()
            .find(|p| p.strategy == s)
            .map_or(0.0, |p| p.busiest_link)
    };
    let (la, l1, li) = (
        link(PlacementStrategy::Aligned),
        link(PlacementStrategy::OneAhead),
        link(PlacementStrategy::Interleave),
    );
    let shapes = vec![
        Shape::new("aligned improves throughput over default, by as much as 75%", aligned_verdict(&report, &aligned, INTEL)),
        Shape::new(
            "interleave lies between aligned and 1-ahead",
            Verdict::check(a > inter && inter > one, format!("simulator {INTEL}: aligned {a:.1}, interleave {inter:.1}, 1-ahead {one:.1} GB/s")),
        ),
        Shape::new(
            "even 1-ahead does not degrade against default (binding each instance to one socket's LLC)",
            Verdict::NotShownHere("a cache effect of binding: one node and one LLC here, and the simulator models no caches".into()),
        ),
        Shape::new(
            "1-ahead puts the most pressure on a single QPI link, interleave less, aligned least (Fig. 7c)",
            Verdict::check(l1 > li && li > la, format!("simulator {INTEL}: the busiest link carries {l1:.1}, {li:.1} and {la:.1} GB/s of data (snoops left out)")),
        ),
    ];
    Ok(Outcome {
        rows,
        shapes,
        notes: notes(&report, sim_note),
    })
}

fn notes(report: &StrategyReport, sim_note: String) -> Vec<String> {
    let o = &report.options;
    let mut notes = vec![
        format!(
            "measured: {} instance(s), {} rows each ({} groups, {} build rows), workloads {}, {} timed repetition(s); every strategy computed the same results: {}",
            report.instances.len(),
            o.sizes.rows,
            o.sizes.groups,
            o.sizes.build_rows,
            o.workloads.iter().map(|w| w.name()).collect::<Vec<_>>().join(", "),
            o.reps,
            report.consistent
        ),
        format!("recommendation here: {}", report.recommendation),
        sim_note,
    ];
    notes.extend(report.notes.iter().cloned());
    notes
}
