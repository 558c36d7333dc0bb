//! Li Figures 3 to 5: the first steps of the naive and the ring schedule
//! on a 4-socket machine with 4 threads per socket, printed from the
//! schedules numakit runs, with the memory channels and QPI links each
//! step uses, and the simulator's bandwidth of both on the paper's server.

use numakit_shuffle::{Layout, Schedule, Strategy};

use super::{preset, simulated_tight, FOUR_SOCKETS};
use crate::catalog::{Item, ItemId, Paper, Reproduction};
use crate::context::Context;
use crate::error::RunResult;
use crate::outcome::{Outcome, Row, Shape, Verdict};

/// Figures 3 and 4: 4 sockets, 4 threads each (16 threads).
const LAYOUT: Layout = Layout {
    sockets: 4,
    threads_per_socket: 4,
};
/// Directed links of a fully connected 4-socket machine.
const DIRECTED_LINKS: usize = 12;

pub(super) fn items() -> Vec<Item> {
    vec![
        Item::new(
            Paper::Li,
            ItemId::Figure(3),
            "The uncoordinated, naive shuffling method (first three steps)",
            Reproduction::Simulated,
            "numakit simulate --machine nehalem-ex-4s --threads 16",
            "the steps are printed from the naive schedule numakit runs (4 sockets x 4 threads); the QPI activity is counted from it and its bandwidth simulated, not measured",
            Some(run_figure_3),
        ),
        Item::new(
            Paper::Li,
            ItemId::Figure(4),
            "The NUMA-aware, coordinated, ring shuffling method (first three steps)",
            Reproduction::Simulated,
            "numakit simulate --machine nehalem-ex-4s --threads 16",
            "the steps are printed from the ring schedule numakit runs (4 sockets x 4 threads); the QPI activity is counted from it and its bandwidth simulated, not measured",
            Some(run_figure_4),
        ),
        Item::new(
            Paper::Li,
            ItemId::Figure(5),
            "Ring shuffling, an example of a coordinated data shuffling policy",
            Reproduction::Described,
            "numakit simulate --machine nehalem-ex-4s --threads 16",
            "the two rings are printed from the ring schedule numakit runs (4 sockets x 4 threads): a schedule, not a measurement",
            Some(run_figure_5),
        ),
    ]
}

/// `s1.p2` for thread (or `d` for a partition) `t`.
fn name(t: usize, letter: char) -> String {
    let p = LAYOUT.threads_per_socket;
    format!("s{}.{letter}{}", t / p, t % p)
}

/// One line per step: what every consumer reads.
fn step_line(schedule: &Schedule, k: usize) -> String {
    let reads: Vec<String> = schedule.steps[k]
        .iter()
        .enumerate()
        .map(|(c, a)| format!("{}<-{}", name(c, 'p'), name(a.producer, 'd')))
        .collect();
    format!("step {k}: {}", reads.join(" "))
}

/// Memory channels (sockets whose memory is read) and directed links used
/// at step `k`, and the most transfers on one link.
fn activity(schedule: &Schedule, k: usize) -> (usize, usize, usize) {
    let mut read_from = vec![false; schedule.layout.sockets];
    for a in &schedule.steps[k] {
        read_from[schedule.layout.socket_of(a.producer)] = true;
    }
    let loads = schedule.link_loads(k);
    let busiest = loads.values().copied().max().unwrap_or(0);
    (
        read_from.iter().filter(|&&r| r).count(),
        loads.len(),
        busiest,
    )
}

/// The first three steps of `strategy`: notes, and rows of the channels
/// and links each step uses beside the paper's (Figures 3(b), 4(b)).
fn first_steps(strategy: Strategy, paper: (f64, f64), out: &mut Outcome) -> RunResult<Schedule> {
    let schedule = Schedule::build(LAYOUT, strategy, 42);
    schedule.validate()?;
    for k in 0..3.min(schedule.len()) {
        out.notes.push(step_line(&schedule, k));
        let (channels, links, _) = activity(&schedule, k);
        out.rows.push(Row::new(
            format!("step {k}: memory channels read (of 4)"),
            "",
            Some(channels as f64),
            Some(paper.0),
        ));
        out.rows.push(Row::new(
            format!("step {k}: directed QPI links used (of {DIRECTED_LINKS})"),
            "",
            Some(links as f64),
            Some(paper.1),
        ));
    }
    Ok(schedule)
}

/// Simulated GB/s of `strategy` (tight) with 16 threads on the paper's
/// 4-socket server.
fn simulated(strategy: Strategy) -> RunResult<f64> {
    let topo = preset(FOUR_SOCKETS)?;
    simulated_tight(&topo, &Schedule::build(LAYOUT, strategy, 42))
}

fn run_figure_3(_: &Context<'_>) -> RunResult<Outcome> {
    let mut out = Outcome::default();
    let schedule = first_steps(Strategy::Naive, (1.0, 3.0), &mut out)?;
    let one_partition = (0..3).all(|k| {
        let readers = schedule.readers_per_producer(k);
        readers.iter().filter(|&&r| r > 0).count() == 1
    });
    out.shapes.push(Shape::new(
        "naive: all threads pull the same partition at each step",
        Verdict::check(one_partition, "one partition read per step in steps 0-2"),
    ));
    let (channels, links, _) = activity(&schedule, 0);
    out.shapes.push(Shape::new(
        "naive uses 1/4 of the memory channels and 3 of the 12 QPI links",
        Verdict::check(
            channels == 1 && links == 3,
            format!("{channels} channel(s), {links} directed links at step 0"),
        ),
    ));
    let (naive, ring) = (simulated(Strategy::Naive)?, simulated(Strategy::Ring)?);
    out.rows.push(Row::new(
        "simulated naive (tight), 16 threads, nehalem-ex-4s",
        "GB/s",
        Some(naive),
        None,
    ));
    out.shapes.push(Shape::new(
        "so naive is held by one socket's memory bandwidth (24.7 GB/s)",
        Verdict::check(
            naive <= 24.7 * 1.05,
            format!("simulated {naive:.1} GB/s (ring: {ring:.1})"),
        ),
    ));
    Ok(out)
}

fn run_figure_4(_: &Context<'_>) -> RunResult<Outcome> {
    let mut out = Outcome::default();
    let schedule = first_steps(Strategy::Ring, (4.0, 12.0), &mut out)?;
    let one_reader =
        (0..schedule.len()).all(|k| schedule.readers_per_producer(k).iter().all(|&r| r == 1));
    out.shapes.push(Shape::new(
        "ring: each partition is accessed by only one thread at each step",
        Verdict::check(
            one_reader,
            format!(
                "every step of {} has one reader per partition",
                schedule.len()
            ),
        ),
    ));
    let all_used = (0..schedule.len()).all(|k| {
        let (channels, links, _) = activity(&schedule, k);
        channels == 4 && links == DIRECTED_LINKS
    });
    out.shapes.push(Shape::new(
        "ring uses all QPI links and all memory channels in each step",
        Verdict::check(all_used, "4 channels and 12 directed links at every step"),
    ));
    let (naive, ring) = (simulated(Strategy::Naive)?, simulated(Strategy::Ring)?);
    out.rows.push(Row::new(
        "simulated ring (tight), 16 threads, nehalem-ex-4s",
        "GB/s",
        Some(ring),
        None,
    ));
    out.shapes.push(Shape::new(
        "so the ring gets higher bandwidth than naive",
        Verdict::check(
            ring > naive * 1.1,
            format!("simulated ring {ring:.1} vs naive {naive:.1} GB/s"),
        ),
    ));
    Ok(out)
}

fn run_figure_5(_: &Context<'_>) -> RunResult<Outcome> {
    let mut out = Outcome::default();
    let schedule = Schedule::build(LAYOUT, Strategy::Ring, 42);
    schedule.validate()?;
    let n = LAYOUT.threads();
    let inner: Vec<String> = (0..n)
        .map(|c| name(schedule.steps[0][c].producer, 'd'))
        .collect();
    let outer: Vec<String> = (0..n).map(|c| name(c, 'p')).collect();
    out.notes.push(format!(
        "inner ring (partitions, fixed): {}",
        inner.join(" ")
    ));
    out.notes.push(format!(
        "outer ring (threads, rotating): {}",
        outer.join(" ")
    ));
    let read = |c: usize| schedule.steps[0][c].producer;
    out.rows.push(Row::new(
        "step 0: s0.p1 reads partition s1.d0 (producer number)",
        "",
        Some(read(1) as f64),
        Some(4.0),
    ));
    let busiest = (0..n).map(|k| activity(&schedule, k).2).max().unwrap_or(0);
    let bound = LAYOUT.threads_per_socket.div_ceil(LAYOUT.sockets);
    out.rows.push(Row::new(
        "most transfers on one link in a step (paper: ceil(P/S))",
        "",
        Some(busiest as f64),
        Some(bound as f64),
    ));
    out.shapes.push(Shape::new(
        "inner ring ordered by thread then socket: s0.d0, s1.d0, s2.d0, ...",
        Verdict::check(
            inner[..4] == ["s0.d0", "s1.d0", "s2.d0", "s3.d0"],
            format!("step 0 reads {}", inner[..4].join(", ")),
        ),
    ));
    out.shapes.push(Shape::new(
        "a full rotation visits every partition once, and no link carries more than ceil(P/S) transfers per step",
        Verdict::check(busiest <= bound, format!("schedule valid; busiest link {busiest} (bound {bound})")),
    ));
    Ok(out)
}
