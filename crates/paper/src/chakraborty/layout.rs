//! Figure 1's ring schedule and Table I's parameters: neither is timed.
//! The schedule is the one numakit's ring order sends by
//! ([`numakit_cluster::schedule::phases`]); the parameters are numakit's
//! own defaults and the values the figures here run with.

use numakit_cluster::schedule::{phases, SendOrder};
use numakit_cluster::{JoinSpec, Predicate};
use numakit_ops::datagen::PQRS_DOMAIN;
use numakit_ops::Tuple;

use super::cluster::{compute_threads, PAPER_BUCKETS, PAPER_NODES};
use super::loads::TABLE_ROWS;
use crate::context::Context;
use crate::error::RunResult;
use crate::outcome::{Outcome, Row, Shape, Verdict};

/// Who process `me` of `n` sends to in each ring phase, and who sends to
/// it, from the schedule every process runs.
fn ring(me: usize, n: usize) -> RunResult<Vec<(usize, usize)>> {
    let all: Vec<Vec<usize>> = (0..n)
        .map(|i| {
            phases(SendOrder::Ring, i, n, 1)
                .iter()
                .map(|p| p.first().map_or(i, |s| s.to))
                .collect()
        })
        .collect();
    let mine = all.get(me).ok_or("no such process")?;
    mine.iter()
        .enumerate()
        .map(|(k, &to)| {
            let from = all.iter().position(|sends| sends.get(k) == Some(&me));
            Ok((to, from.ok_or("nobody sends to this process in a phase")?))
        })
        .collect()
}

/// Figure 1: node 0's phases among 5 nodes, beside Algorithm 1's.
pub(super) fn figure_1(_ctx: &Context<'_>) -> RunResult<Outcome> {
    let n = PAPER_NODES;
    let mut out = Outcome::default();
    for (k, (to, from)) in ring(0, n)?.into_iter().enumerate() {
        let phase = k + 1;
        let paper_to = phase % n;
        let paper_from = (n - phase) % n;
        out.rows.push(Row::new(
            format!("phase {phase}: node 0 sends to node"),
            "node",
            Some(to as f64),
            Some(paper_to as f64),
        ));
        out.rows.push(Row::new(
            format!("phase {phase}: node 0 receives from node"),
            "node",
            Some(from as f64),
            Some(paper_from as f64),
        ));
    }
    let mut follows = true;
    let mut one_each = true;
    for i in 0..n {
        for (k, (to, from)) in ring(i, n)?.into_iter().enumerate() {
            follows &= to == (i + k + 1) % n && from == (i + n - k - 1) % n;
        }
    }
    for k in 0..n - 1 {
        let mut receivers: Vec<usize> = (0..n)
            .filter_map(|i| ring(i, n).ok()?.get(k).map(|p| p.0))
            .collect();
        receivers.sort_unstable();
        receivers.dedup();
        one_each &= receivers.len() == n;
    }
    out.shapes.push(Shape::new(
        "in phase k node i sends to (i + k) mod N and receives from (i - k) mod N, N - 1 phases (Algorithm 1)",
        Verdict::check(follows, format!("every node of {n}, every one of the {} phases of numakit's ring order", n - 1)),
    ));
    out.shapes.push(Shape::new(
        "in each phase every node receives from exactly one sender",
        Verdict::check(one_each, format!("{n} distinct receivers in each phase")),
    ));
    out.notes.push("the schedule of numakit_cluster::schedule::phases (ring order), which every process of `cluster join --order ring` sends by; the paper's Algorithm 1 gives the published column".into());
    out.notes.push("the paper's prose lists phase 3 as 'sends to 2 and receives from 2' and phase 4 as '3 the receiver and 0 the sender': misprints; Algorithm 1 (and the figure's ring) give sends to 3 / receives from 2 and sends to 4 / receives from 1".into());
    Ok(out)
}

/// Table I: the paper's defaults beside numakit's.
/// Table I's parameters, numakit's counterpart beside each.
fn parameters(ctx: &Context<'_>, spec: &JoinSpec) -> Vec<Row> {
    let threads = compute_threads(ctx);
    let peers = PAPER_NODES - 1;
    vec![
        Row::new(
            "p: page size (numakit sends whole bucket pieces, no pages)",
            "KB",
            None,
            Some(8.0),
        ),
        Row::new(
            "R_i: partition size of R, tuples per node (as Figures 5, 6, 9 run here)",
            "tuples",
            Some(ctx.scale.pick(TABLE_ROWS.0, TABLE_ROWS.1) as f64),
            Some(400_000.0),
        ),
        Row::new(
            "D: domain of the join attribute (numakit's pqrs default)",
            "keys",
            Some(PQRS_DOMAIN as f64),
            Some(800_000.0),
        ),
        Row::new(
            "N_B: total buckets, as the figures here run (240 per process x 5)",
            "buckets",
            Some(f64::from(PAPER_BUCKETS.div_ceil(PAPER_NODES as u32)) * PAPER_NODES as f64),
            Some(f64::from(PAPER_BUCKETS)),
        ),
        Row::new(
            "N_B: numakit's default buckets per process x 5 processes",
            "buckets",
            Some(f64::from(spec.buckets) * PAPER_NODES as f64),
            Some(f64::from(PAPER_BUCKETS)),
        ),
        Row::new(
            "S_tup: size of a tuple (numakit: 8-byte key, 8-byte payload)",
            "bytes",
            Some(std::mem::size_of::<Tuple>() as f64),
            Some(128.0),
        ),
        Row::new(
            "N: nodes (processes, as the figures here run)",
            "nodes",
            Some(PAPER_NODES as f64),
            Some(5.0),
        ),
        Row::new(
            "n_c: compute threads per node (pool workers, at most this machine's CPUs)",
            "threads",
            Some(threads as f64),
            Some(2.0),
        ),
        Row::new(
            "n_com: communication threads per node (timely: a send and a receive thread per peer)",
            "threads",
            Some((2 * peers) as f64),
            Some(2.0),
        ),
        Row::new(
            "n_lis: listener threads (numakit: one accepting thread, while connecting)",
            "threads",
            Some(1.0),
            Some(1.0),
        ),
    ]
}

pub(super) fn table_1(ctx: &Context<'_>) -> RunResult<Outcome> {
    let spec = JoinSpec::new(Predicate::Equal);
    let rows = parameters(ctx, &spec);
    let mut out = Outcome {
        rows,
        ..Outcome::default()
    };
    out.shapes.push(Shape::new(
        "the figures run with the paper's N, N_B and D",
        Verdict::check(
            PQRS_DOMAIN == 800_000 && PAPER_NODES == 5 && PAPER_BUCKETS == 1200,
            format!("N = {PAPER_NODES}, N_B = {PAPER_BUCKETS}, D = {PQRS_DOMAIN}"),
        ),
    ));
    out.notes.push(format!(
        "numakit's own defaults (`cluster join --help`): {} buckets per process, ring order, blocks of {} rows for broadcasts; the paper's p, q, r, s of PQRS are not given: the figures use {}",
        spec.buckets,
        spec.block_rows,
        super::cluster::KEYS
    ));
    out.notes.push("numakit keeps one connection per pair of processes for the whole join (the paper opens a socket per send event) and overlaps with timely's per-peer threads instead of n_com shared sender/receiver threads".into());
    Ok(out)
}
