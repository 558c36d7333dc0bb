//! Figures 5, 6 and 9: one node's loads, join span and intra-node gain
//! in a 5-process join while the table size (Figures 5, 6) or the compute
//! threads (Figure 9) vary.
//!
//! The gain is (computation + send + receive load) / join span, per
//! process, averaged over the processes. Its loads are wall times of
//! threads that here share two CPUs with four other processes, so a gain
//! above 1 shows that the loads overlap, but its size is not the paper's
//! (the paper's nodes each had their own two cores).

use super::cluster::{compute_threads, measure, timed, timed_at, Point, Setup, PAPER_NODES};
use crate::context::Context;
use crate::error::RunResult;
use crate::outcome::{Outcome, Row, Shape, Verdict};

/// Rows of R (and of S) per process of Figure 9 and of Table I's R_i:
/// (small, standard); the paper's is 400000.
pub(super) const TABLE_ROWS: (u64, u64) = (40_000, 400_000);

/// Rows per process of Figures 5 and 6: (small, standard).
const SIZES: (&[u64], &[u64]) = (&[10_000, 40_000], &[100_000, 200_000, 400_000, 800_000]);

/// The paper's gain for partitions of 400K rows and more (§V-A).
const PAPER_GAIN: f64 = 3.6;

/// Figure 5's and 6's sweep: 5 processes, 2 threads each, per-process
/// sizes growing.
fn size_sweep(ctx: &Context<'_>) -> RunResult<Vec<Point>> {
    let reps = ctx.scale.pick(1, 3);
    let threads = compute_threads(ctx);
    ctx.scale
        .pick(SIZES.0, SIZES.1)
        .iter()
        .map(|&per| {
            let setup = Setup {
                processes: PAPER_NODES,
                threads,
                rows: per * PAPER_NODES as u64,
            };
            measure(ctx, setup, reps)
        })
        .collect()
}

fn per_process(p: &Point) -> u64 {
    p.setup.rows / p.setup.processes.max(1) as u64
}

fn ends(points: &[Point]) -> RunResult<(&Point, &Point)> {
    Ok((
        points.first().ok_or("no point")?,
        points.last().ok_or("no point")?,
    ))
}

fn sweep_note(points: &[Point], what: &str) -> String {
    let p = points.first().map_or(0, |p| p.setup.processes);
    let t = points.first().map_or(0, |p| p.setup.threads);
    format!(
        "{p} processes x {t} threads over loopback, {} buckets per process, {}; {what}",
        points.first().map_or(0, |p| p.setup.buckets()),
        super::cluster::KEYS
    )
}

/// Figure 5: loads and join span per node against the table size.
pub(super) fn figure_5(ctx: &Context<'_>) -> RunResult<Outcome> {
    let points = size_sweep(ctx)?;
    let mut out = Outcome::default();
    for p in &points {
        let size = per_process(p);
        out.rows.push(Row::new(
            format!("{size} rows/node: computation load"),
            "s",
            Some(p.compute),
            None,
        ));
        out.rows.push(Row::new(
            format!("{size} rows/node: communication load (send + receive)"),
            "s",
            Some(p.communication()),
            None,
        ));
        out.rows.push(Row::new(
            format!("{size} rows/node: join span (system)"),
            "s",
            Some(p.span),
            None,
        ));
    }
    figure_5_shapes(&points, &mut out)?;
    out.notes.push(sweep_note(
        &points,
        "loads are means per process, of the run with the median span",
    ));
    Ok(out)
}

/// Figure 5's claims, checked on the sweep.
fn figure_5_shapes(points: &[Point], out: &mut Outcome) -> RunResult<()> {
    let (small, large) = ends(points)?;
    out.shapes.push(Shape::new(
        "loads and span grow with the table size",
        timed(
            large.compute / small.compute.max(1e-9),
            format!(
                "computation load {:.3} s at {} rows/node, {:.3} s at {}; span {:.3} s to {:.3} s",
                small.compute,
                per_process(small),
                large.compute,
                per_process(large),
                small.span,
                large.span
            ),
        ),
    ));
    out.shapes.push(Shape::new(
        "the loads overlap: the join span is well below computation + communication load",
        timed_at(
            per_process(large),
            (large.compute + large.communication()) / large.span.max(1e-9),
            format!(
                "at {} rows/node: loads {:.3} + {:.3} s, span {:.3} s",
                per_process(large),
                large.compute,
                large.communication(),
                large.span
            ),
        ),
    ));
    out.shapes.push(Shape::new(
        "the join span is about half the computation load (2 compute threads) and half the communication load",
        Verdict::NotShownHere(format!(
            "one 2-CPU machine: the 5 processes' {} compute threads share 2 CPUs, so a process's computation load is stretched by waiting for a CPU, and loopback makes communication cheap ({:.3} s against a span of {:.3} s, computation {:.3} s); the paper's nodes had 2 cores each and 1 Gbit/s links",
            PAPER_NODES * large.setup.threads, large.communication(), large.span, large.compute
        )),
    ));
    Ok(())
}

/// Figure 6: intra-node gain against the table size.
pub(super) fn figure_6(ctx: &Context<'_>) -> RunResult<Outcome> {
    let points = size_sweep(ctx)?;
    let mut out = Outcome::default();
    for p in &points {
        let size = per_process(p);
        let published = (size >= 400_000).then_some(PAPER_GAIN);
        let label = if published.is_some() {
            format!("{size} rows/node: intra-node gain (paper: about 3.6 above 400K, text)")
        } else {
            format!("{size} rows/node: intra-node gain")
        };
        out.rows.push(Row::new(label, "x", Some(p.gain), published));
    }
    let (small, large) = ends(&points)?;
    out.shapes.push(Shape::new(
        "the gain is above 1: computation and communication run side by side",
        timed_at(
            per_process(large),
            large.gain,
            format!("gain {:.2} at {} rows/node", large.gain, per_process(large)),
        ),
    ));
    out.shapes.push(Shape::new(
        "the gain is lower for small partitions (connection setup and waits weigh more)",
        timed_at(
            per_process(small),
            large.gain / small.gain.max(1e-9),
            format!(
                "gain {:.2} at {} rows/node, {:.2} at {}",
                small.gain,
                per_process(small),
                large.gain,
                per_process(large)
            ),
        ),
    ));
    out.shapes.push(Shape::new(
        "the gain saturates around 3.6 (2 compute + 1 send + 1 receive thread per node)",
        Verdict::NotShownHere(format!(
            "one 2-CPU machine shared by 5 processes, loopback links: the gain measures overlap on shared CPUs, not on a node's own ({:.2} here at {} rows/node)",
            large.gain,
            per_process(large)
        )),
    ));
    out.notes.push(sweep_note(
        &points,
        "gains are means over the processes of the run with the median span",
    ));
    Ok(out)
}

/// Figure 9's rows: span and both loads at each compute-thread count.
fn thread_rows(points: &[Point]) -> Vec<Row> {
    let mut rows = Vec::new();
    for p in points {
        let t = p.setup.threads;
        rows.push(Row::new(
            format!("{t} compute thread(s): join span (system)"),
            "s",
            Some(p.span),
            None,
        ));
        rows.push(Row::new(
            format!("{t} compute thread(s): computation load"),
            "s",
            Some(p.compute),
            None,
        ));
        rows.push(Row::new(
            format!("{t} compute thread(s): communication load"),
            "s",
            Some(p.communication()),
            None,
        ));
    }
    rows
}

/// Figure 9: span and loads against the compute threads per process.
pub(super) fn figure_9(ctx: &Context<'_>) -> RunResult<Outcome> {
    let reps = 3;
    let per = ctx.scale.pick(TABLE_ROWS.0, TABLE_ROWS.1);
    let most = super::cluster::available_cpus(ctx);
    let points = (1..=most)
        .map(|threads| {
            let setup = Setup {
                processes: PAPER_NODES,
                threads,
                rows: per * PAPER_NODES as u64,
            };
            measure(ctx, setup, reps)
        })
        .collect::<RunResult<Vec<_>>>()?;
    let mut out = Outcome {
        rows: thread_rows(&points),
        ..Outcome::default()
    };
    let (one, two) = (points.first().ok_or("no point")?, points.get(1));
    match two {
        Some(two) => {
            out.shapes.push(Shape::new(
                "the join span falls from 1 to 2 compute threads",
                timed_at(
                    per,
                    one.span / two.span.max(1e-9),
                    format!(
                        "span {:.3} s with 1 thread, {:.3} s with 2",
                        one.span, two.span
                    ),
                ),
            ));
            out.shapes.push(Shape::new(
                "the communication load falls from 1 to 2 compute threads (senders and receivers block less)",
                Verdict::NotShownHere(format!(
                    "{:.3} s with 1 thread, {:.3} s with 2: the paper's drop came from receivers blocked on an exhausted frame pool, and numakit's receivers hold no such pool by default (no receive budget); on 2 shared CPUs more compute threads rather stretch the communication threads' wall time",
                    one.communication(),
                    two.communication()
                )),
            ));
        }
        None => out.shapes.push(Shape::new(
            "the join span falls from 1 to 2 compute threads",
            Verdict::NotShownHere("this machine gives its pools one CPU".into()),
        )),
    }
    out.shapes.push(Shape::new(
        "past 2 threads the span rises again (context switches on a dual-core node)",
        Verdict::NotShownHere(format!(
            "threads swept only up to this machine's {most} CPU(s)"
        )),
    ));
    out.notes.push(format!(
        "{PAPER_NODES} processes of 1..={most} threads over loopback, {} buckets per process, {}; {per} rows of R and of S per process; the median span of {reps} runs",
        one.setup.buckets(),
        super::cluster::KEYS
    ));
    Ok(out)
}
