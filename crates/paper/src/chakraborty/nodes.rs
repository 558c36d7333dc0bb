//! Figures 7 and 8: the same join (1.6 million rows of R and of S in
//! all, as the paper's) over 1 to 5 processes: loads and span per node,
//! intra-node gain and speedup.
//!
//! The processes share one two-CPU machine, so adding one adds no CPU:
//! the speedup cannot grow as the paper's did, and the loads per process
//! (wall times on shared CPUs) need not fall. What does not depend on
//! CPUs is checked: the data a process sends, which falls as processes
//! are added (each sends (P - 1)/P of a share that is 1/P of the data).

use super::cluster::{compute_threads, measure, Point, Setup, PAPER_NODES};
use crate::context::Context;
use crate::error::RunResult;
use crate::outcome::{Outcome, Row, Shape, Verdict};

/// Rows of R (and of S) over all processes: (small, standard); the
/// paper's is 1.6 million.
const TOTAL_ROWS: (u64, u64) = (100_000, 1_600_000);

/// The sweep over 1..=5 processes.
fn node_sweep(ctx: &Context<'_>) -> RunResult<Vec<Point>> {
    let reps = ctx.scale.pick(1, 3);
    let rows = ctx.scale.pick(TOTAL_ROWS.0, TOTAL_ROWS.1);
    let threads = compute_threads(ctx);
    (1..=PAPER_NODES)
        .map(|processes| {
            measure(
                ctx,
                Setup {
                    processes,
                    threads,
                    rows,
                },
                reps,
            )
        })
        .collect()
}

fn note(points: &[Point]) -> String {
    let first = points.first();
    format!(
        "{} rows of R and of S in all, split over 1..={PAPER_NODES} processes of {} threads over loopback, {} buckets per process, {}; the run with the median span of each",
        first.map_or(0, |p| p.setup.rows),
        first.map_or(0, |p| p.setup.threads),
        first.map_or(0, |p| p.setup.buckets()),
        super::cluster::KEYS
    )
}

/// The processes' share of the CPUs, for the reasons shapes are not shown.
fn shared(ctx: &Context<'_>) -> String {
    format!(
        "one machine with {} CPU(s): the processes share them, so adding a process adds no CPU (the paper added a dual-core VM each time)",
        super::cluster::available_cpus(ctx)
    )
}

/// Figure 7: loads and span per node against the nodes.
pub(super) fn figure_7(ctx: &Context<'_>) -> RunResult<Outcome> {
    let points = node_sweep(ctx)?;
    let mut out = Outcome::default();
    for p in &points {
        let n = p.setup.processes;
        out.rows.push(Row::new(
            format!("{n} node(s): computation load per node"),
            "s",
            Some(p.compute),
            None,
        ));
        out.rows.push(Row::new(
            format!("{n} node(s): communication load per node"),
            "s",
            Some(p.communication()),
            None,
        ));
        out.rows.push(Row::new(
            format!("{n} node(s): join span (system)"),
            "s",
            Some(p.span),
            None,
        ));
        out.rows.push(Row::new(
            format!("{n} node(s): data sent per node"),
            "MB",
            Some(p.bytes_sent / 1e6),
            None,
        ));
    }
    figure_7_shapes(ctx, &points, &mut out)?;
    out.notes.push(note(&points));
    out.notes.push("the paper derives a node's volume as S_n = |R|(1 - 1/n), which grows with n although its text says it falls; with hash distribution (numakit's equi-join) a node sends (n - 1)/n of its |R|/n rows, |R|(n - 1)/n^2, which falls".into());
    Ok(out)
}

/// Figure 7's claims, checked on the sweep.
fn figure_7_shapes(ctx: &Context<'_>, points: &[Point], out: &mut Outcome) -> RunResult<()> {
    let sent: Vec<f64> = points.iter().skip(1).map(|p| p.bytes_sent).collect();
    let falls = sent.len() >= 2 && sent.windows(2).all(|w| w[1] < w[0]);
    out.shapes.push(Shape::new(
        "the data a node sends falls as nodes are added (from 2 nodes on)",
        Verdict::check(
            falls,
            format!(
                "MB sent per node for 2..={PAPER_NODES} nodes: {}",
                sent.iter()
                    .map(|b| format!("{:.2}", b / 1e6))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
    ));
    let (one, last) = (
        points.first().ok_or("no point")?,
        points.last().ok_or("no point")?,
    );
    out.shapes.push(Shape::new(
        "the computation load per node falls (about linearly) as nodes are added",
        Verdict::NotShownHere(format!(
            "{}: {:.3} s with 1 node, {:.3} s with {}",
            shared(ctx),
            one.compute,
            last.compute,
            last.setup.processes
        )),
    ));
    out.shapes.push(Shape::new(
        "the communication load falls slightly as nodes are added",
        Verdict::NotShownHere(format!(
            "loopback instead of 1 Gbit/s links, on shared CPUs: {:.3} s with 2 nodes, {:.3} s with {} (the data sent falls, see above)",
            points.get(1).map_or(0.0, Point::communication),
            last.communication(),
            last.setup.processes
        )),
    ));
    let spread = last.span / last.fastest_span.max(1e-9);
    let detail = format!(
        "with {} nodes the slowest node's span is {spread:.2}x the fastest's",
        last.setup.processes
    );
    out.shapes.push(Shape::new(
        "without barriers every node's span is close to the system's (narrow error bars)",
        if spread <= 1.5 {
            Verdict::Holds(detail)
        } else {
            Verdict::NotShownHere(format!("{detail}: processes sharing 2 CPUs finish apart"))
        },
    ));
    Ok(())
}

/// Figure 8: gain and speedup against the nodes.
pub(super) fn figure_8(ctx: &Context<'_>) -> RunResult<Outcome> {
    let points = node_sweep(ctx)?;
    let one = points.first().ok_or("no point")?.span;
    let mut out = Outcome::default();
    let mut speedups = Vec::new();
    for p in &points {
        let n = p.setup.processes;
        let speedup = numakit_cluster::metrics::speedup(one, p.span);
        speedups.push(speedup);
        out.rows.push(Row::new(
            format!("{n} node(s): intra-node gain"),
            "x",
            Some(p.gain),
            None,
        ));
        out.rows.push(Row::new(
            format!("{n} node(s): speedup over 1 node (paper: linear, text)"),
            "x",
            Some(speedup),
            Some(n as f64),
        ));
    }
    let last = points.last().ok_or("no point")?;
    out.shapes.push(Shape::new(
        "the speedup grows linearly with the nodes",
        Verdict::NotShownHere(format!(
            "{}: speedup {:.2} with {} processes; shown only where each process has machines of its own (`cluster join --hostfile`)",
            shared(ctx),
            speedups.last().copied().unwrap_or(0.0),
            last.setup.processes
        )),
    ));
    out.shapes.push(Shape::new(
        "the intra-node gain rises slightly with the nodes",
        Verdict::NotShownHere(format!(
            "{}: gain {:.2} with 1 node, {:.2} with {}",
            shared(ctx),
            points.first().map_or(0.0, |p| p.gain),
            last.gain,
            last.setup.processes
        )),
    ));
    let rows: Vec<u64> = points.iter().map(|p| p.result_rows).collect();
    out.shapes.push(Shape::new(
        "the result does not depend on the nodes (a sanity check, not the paper's claim)",
        Verdict::check(
            rows.windows(2).all(|w| w[0] == w[1]),
            format!("result rows {rows:?}"),
        ),
    ));
    out.notes.push(note(&points));
    Ok(out)
}
