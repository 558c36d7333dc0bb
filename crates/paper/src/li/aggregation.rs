//! Li Figures 10 and 11: group-by aggregation by shuffling (naive, ring)
//! or by thread migration (with or without copying the table), as the
//! groups per partition grow; simulated on the paper's servers, measured
//! here.

use numakit_ops::aggregate::{aggregate, AggMethod, AggOptions, ExchangeBreakdown};
use numakit_ops::datagen::{generate, GenSpec, KeyDist};
use numakit_ops::Relation;
use numakit_pool::Pool;
use numakit_sim::aggregation::{self, AggReport, Method, MethodPrediction};

use super::{cpus, median, one_node, pool, preset, EIGHT_SOCKETS, FOUR_SOCKETS};
use crate::catalog::{Item, ItemId, Paper, Reproduction};
use crate::context::Context;
use crate::error::RunResult;
use crate::outcome::{Outcome, Row, Shape, Verdict};

pub(super) fn items() -> Vec<Item> {
    vec![
        Item::new(
            Paper::Li,
            ItemId::Figure(10),
            "Effective aggregation bandwidth of two shuffling-based and two migration-based implementations of partitioned aggregation",
            Reproduction::Simulated,
            "numakit simulate --machine nehalem-ex-4s --aggregation; numakit simulate --machine nehalem-ex-8s --aggregation; numakit aggregate --sweep --rows 4000000 --reps 3",
            "simulated on the 4- and 8-socket servers (1.6e9 rows, one partition per core); the simulator has no caches but a per-thread share of L3, so its crossover comes where tables outgrow 3 MiB. Measured here on one node, where migration moves nothing",
            Some(run_figure_10),
        ),
        Item::new(
            Paper::Li,
            ItemId::Figure(11),
            "Time breakdown for the four aggregation implementations as the distinct groups per partition increase, four-socket machine",
            Reproduction::Simulated,
            "numakit simulate --machine nehalem-ex-4s --aggregation; numakit aggregate --method shuffle,naive-shuffle,migration,migration-copy --groups 1048576 --rows 4000000 --reps 3",
            "simulated shares of read, update and copy time on the 4-socket server; measured here on one node, where no table is copied and every read is local",
            Some(run_figure_11),
        ),
    ]
}

const SIM_METHODS: [Method; 4] = [
    Method::NaiveShuffle,
    Method::RingShuffle,
    Method::Migration,
    Method::MigrationCopy,
];

fn sweep(name: &str) -> RunResult<AggReport> {
    let topo = preset(name)?;
    Ok(aggregation::sweep(
        &topo,
        None,
        &aggregation::default_keys(),
        &aggregation::AggOptions::default(),
    )?)
}

fn at(report: &AggReport, index: usize, method: Method) -> RunResult<MethodPrediction> {
    report
        .points
        .get(index)
        .and_then(|p| p.get(method))
        .copied()
        .ok_or_else(|| format!("no simulated {} at point {index}", method.name()).into())
}

fn keys_label(keys: f64) -> String {
    if keys >= 1024.0 * 1024.0 {
        format!("{}M", keys / (1024.0 * 1024.0))
    } else {
        format!("{}K", keys / 1024.0)
    }
}

fn crossover(report: &AggReport, against: Method) -> Option<f64> {
    report
        .crossovers
        .iter()
        .find(|c| c.against == against)
        .and_then(|c| c.keys_per_partition)
}

fn run_figure_10(ctx: &Context<'_>) -> RunResult<Outcome> {
    let mut out = Outcome::default();
    let four = sweep(FOUR_SOCKETS)?;
    let eight = sweep(EIGHT_SOCKETS)?;
    for p in &four.points {
        for m in &p.methods {
            let label = format!(
                "simulated 4 sockets, {}, {} keys/partition",
                m.method.name(),
                keys_label(p.keys_per_partition)
            );
            out.rows.push(Row::new(label, "GB/s", Some(m.gbs), None));
        }
    }
    for (name, report) in [("4", &four), ("8", &eight)] {
        let keys = crossover(report, Method::Migration);
        let label =
            format!("simulated {name} sockets: ring overtakes migration at (keys/partition)");
        out.rows
            .push(Row::new(label, "keys", keys, Some(512.0 * 1024.0)));
    }
    let (ring, mig) = (
        at(&four, 0, Method::RingShuffle)?,
        at(&four, 0, Method::Migration)?,
    );
    out.rows.push(Row::new(
        "simulated 4 sockets, 1K keys: migration / ring (paper: Figure 6's 94 / 70)",
        "x",
        Some(mig.gbs / ring.gbs),
        Some(94.0 / 70.0),
    ));
    figure_10_shapes(&four, &eight, &mut out)?;
    measure_sweep(ctx, &mut out)?;
    out.notes.push("simulated crossover: about 200K keys per partition on 4 sockets, 80K on 8, against the paper's 512K; beyond it the simulator leaves ring and migration within 2% (both held by the same memory controllers)".into());
    Ok(out)
}

fn figure_10_shapes(four: &AggReport, eight: &AggReport, out: &mut Outcome) -> RunResult<()> {
    let (ring, mig) = (
        at(four, 0, Method::RingShuffle)?,
        at(four, 0, Method::Migration)?,
    );
    out.shapes.push(Shape::new(
        "with few groups (small thread state), migration beats shuffling",
        Verdict::check(
            mig.gbs > ring.gbs * 1.1,
            format!(
                "simulated 1K keys: migration {:.1} vs ring {:.1} GB/s",
                mig.gbs, ring.gbs
            ),
        ),
    ));
    for (name, report) in [("4", four), ("8", eight)] {
        let keys = crossover(report, Method::Migration);
        let side = keys.is_some_and(|k| (32.0 * 1024.0..=4.0 * 1024.0 * 1024.0).contains(&k));
        out.shapes.push(Shape::new(
            format!("{name} sockets: the ring shuffle overtakes migration as the groups grow (paper: about 512K keys per partition)"),
            Verdict::check(side, format!("simulated crossover at {} keys per partition", keys.map_or("none".into(), |k| format!("{:.0}K", k / 1024.0)))),
        ));
    }
    let last = four
        .points
        .len()
        .checked_sub(1)
        .ok_or("the simulated sweep is empty")?;
    let (ring, copy) = (
        at(four, last, Method::RingShuffle)?,
        at(four, last, Method::MigrationCopy)?,
    );
    out.shapes.push(Shape::new(
        "with many groups, shuffling beats migration & copy",
        Verdict::check(
            ring.gbs > copy.gbs,
            format!(
                "simulated largest point: ring {:.1} vs migration & copy {:.1} GB/s",
                ring.gbs, copy.gbs
            ),
        ),
    ));
    Ok(())
}

/// Li's four methods, as `numakit aggregate --method` names them.
const METHODS: [AggMethod; 4] = [
    AggMethod::NaiveShuffle,
    AggMethod::Shuffle,
    AggMethod::Migration,
    AggMethod::MigrationCopy,
];

/// One measured method: median seconds and the breakdown of that run.
struct Measured {
    seconds: f64,
    breakdown: Option<ExchangeBreakdown>,
}

fn input(pool: &Pool, rows: u64, groups: u64) -> RunResult<Relation> {
    Ok(generate(
        pool,
        &GenSpec {
            rows,
            keys: KeyDist::Sparse { groups },
            seed: 42,
        },
    )?)
}

fn measure(
    ctx: &Context<'_>,
    pool: &Pool,
    rel: &Relation,
    method: AggMethod,
) -> RunResult<Measured> {
    let reps = ctx.scale.pick(1, 3);
    let mut runs = Vec::with_capacity(reps);
    for _ in 0..reps {
        let r = aggregate(pool, rel, &AggOptions::new(method), ctx.progress)?;
        runs.push((numakit_ops::timing::total_seconds(&r.phases), r.breakdown));
    }
    let seconds = median(&runs.iter().map(|r| r.0).collect::<Vec<_>>());
    let breakdown = runs.iter().find(|r| r.0 == seconds).and_then(|r| r.1);
    Ok(Measured { seconds, breakdown })
}

/// The measured sweep: Li's four methods at growing group counts.
fn measure_sweep(ctx: &Context<'_>, out: &mut Outcome) -> RunResult<()> {
    let pool = pool(ctx, cpus(ctx))?;
    // The usable cache is measured once per pool; not inside a timing.
    numakit_ops::cache_probe::measured(&pool);
    let rows = ctx.scale.pick(400_000u64, 4_000_000);
    let groups: Vec<u64> = ctx
        .scale
        .pick(vec![1 << 10, 1 << 18], vec![1 << 10, 1 << 16, 1 << 20]);
    for &g in &groups {
        let rel = input(&pool, rows, g)?;
        for method in METHODS {
            let m = measure(ctx, &pool, &rel, method)?;
            let gbs = rows as f64 * 16.0 / m.seconds / 1e9;
            let per = g as f64 / pool.workers() as f64;
            let label = format!(
                "this machine, {}, {} keys/partition",
                method.name(),
                keys_label(per)
            );
            out.rows.push(Row::new(label, "GB/s", Some(gbs), None));
        }
    }
    out.shapes.push(Shape::new(
        "the crossover between shuffling and migration, measured here",
        Verdict::NotShownHere(one_node(
            "migration moves no thread and every table is local, so the methods differ only by their order",
            "the simulator shows it on the paper's servers (above)",
        )),
    ));
    out.notes.push(format!("measured here: {rows} rows of 16 B, random 64-bit keys, on {} threads; GB/s = input bytes / time", pool.workers()));
    Ok(())
}

fn run_figure_11(ctx: &Context<'_>) -> RunResult<Outcome> {
    let mut out = Outcome::default();
    let four = sweep(FOUR_SOCKETS)?;
    for &i in &[0usize, 4, 6] {
        let p = four.points.get(i).ok_or("the simulated sweep is short")?;
        for m in SIM_METHODS {
            let s = at(&four, i, m)?;
            let keys = keys_label(p.keys_per_partition);
            for (part, share) in [
                ("read partitions", s.read_share),
                ("update hash table", s.update_share),
                ("copy state", s.copy_share),
            ] {
                out.rows.push(Row::new(
                    format!("simulated 4 sockets, {}, {keys} keys: {part}", m.name()),
                    "s",
                    Some(share * s.seconds),
                    None,
                ));
            }
        }
    }
    figure_11_shapes(&four, &mut out)?;
    measure_breakdown(ctx, &mut out)?;
    Ok(out)
}

fn read_time(m: &MethodPrediction) -> f64 {
    m.read_share * m.seconds
}

fn figure_11_shapes(four: &AggReport, out: &mut Outcome) -> RunResult<()> {
    let naive = at(four, 0, Method::NaiveShuffle)?;
    let ring = at(four, 0, Method::RingShuffle)?;
    let mig = at(four, 0, Method::Migration)?;
    let (n, r, m) = (read_time(&naive), read_time(&ring), read_time(&mig));
    out.shapes.push(Shape::new(
        "naive is bottlenecked by reading the partitions: up to 3x the ring's read time",
        Verdict::check(
            n > 1.5 * r,
            format!(
                "simulated 1K keys: naive reads {n:.2} s, ring {r:.2} s ({:.2}x)",
                n / r
            ),
        ),
    ));
    out.shapes.push(Shape::new(
        "migration reads the unaggregated data faster than the ring (by 25%)",
        Verdict::check(
            m < r,
            format!(
                "simulated 1K keys: migration reads {m:.2} s, ring {r:.2} s ({:.0}% faster)",
                100.0 * (1.0 - m / r)
            ),
        ),
    ));
    figure_11_large(four, out)
}

/// Figure 11's claims at the largest simulated point.
fn figure_11_large(four: &AggReport, out: &mut Outcome) -> RunResult<()> {
    let last = four
        .points
        .len()
        .checked_sub(1)
        .ok_or("the simulated sweep is empty")?;
    let big = at(four, last, Method::Migration)?;
    out.shapes.push(Shape::new(
        "as the thread state grows, updating the table dominates migration's time",
        Verdict::check(
            big.update_share > big.read_share,
            format!(
                "simulated largest point: update {:.0}%, read {:.0}%",
                100.0 * big.update_share,
                100.0 * big.read_share
            ),
        ),
    ));
    let (copy_big, ring_big) = (
        at(four, last, Method::MigrationCopy)?,
        at(four, last, Method::RingShuffle)?,
    );
    out.shapes.push(Shape::new(
        "migration & copy is much slower on large results, from copying the state",
        Verdict::check(
            copy_big.copy_share > 0.0 && copy_big.seconds > ring_big.seconds,
            format!(
                "simulated largest point: copy {:.0}% of its time, {:.2} s vs ring {:.2} s",
                100.0 * copy_big.copy_share,
                copy_big.seconds,
                ring_big.seconds
            ),
        ),
    ));
    Ok(())
}

/// The measured split (read, update, copy, wait) at few and many groups.
fn measure_breakdown(ctx: &Context<'_>, out: &mut Outcome) -> RunResult<()> {
    let pool = pool(ctx, cpus(ctx))?;
    numakit_ops::cache_probe::measured(&pool);
    let rows = ctx.scale.pick(400_000u64, 4_000_000);
    let mut migration_update = Vec::new();
    let groups = [1u64 << 10, 1 << 20];
    for g in groups {
        let rel = input(&pool, rows, g)?;
        for method in METHODS {
            let b = measure(ctx, &pool, &rel, method)?
                .breakdown
                .ok_or("no breakdown from an exchange-driven method")?;
            for (part, s) in [
                ("read", b.read_seconds),
                ("update", b.update_seconds),
                ("copy state", b.copy_seconds),
                ("wait", b.wait_seconds),
            ] {
                out.rows.push(Row::new(
                    format!("this machine, {}, {g} groups: {part}", method.name()),
                    "ms",
                    Some(s * 1e3),
                    None,
                ));
            }
            if method == AggMethod::Migration {
                migration_update.push(b.update_seconds);
            }
        }
    }
    let few = migration_update.first().copied().unwrap_or(0.0);
    let many = migration_update.last().copied().unwrap_or(0.0);
    out.shapes.push(Shape::new(
        "as the groups outgrow the cache, updating the table takes longer (measured here)",
        Verdict::check(
            many > 1.5 * few,
            format!(
                "migration: update {:.1} ms at {} groups, {:.1} ms at {}",
                few * 1e3,
                groups[0],
                many * 1e3,
                groups[1]
            ),
        ),
    ));
    out.shapes.push(Shape::new(
        "migration & copy pays for copying its state",
        Verdict::NotShownHere(one_node(
            "a table is copied only to another node, so the copy time is 0",
            "the simulator's copy share is above",
        )),
    ));
    out.notes.push(format!(
        "measured here: {rows} rows, times summed over {} consumers",
        pool.workers()
    ));
    Ok(())
}
