//! The synthetic memory-access benchmark (Kiefer §3): Table 1's four
//! experiments and Figure 2b's execution times against the number of
//! migrations, measured by [`numakit_probe::kiefer`], the library behind
//! `numakit probe kiefer` and `numakit probe cache-migration`.
//!
//! The "small" array is 1 MiB here, not 16 MB: on one node the threads
//! move between CPUs that share the last-level cache, so the cache a
//! migration leaves behind is the private L2, and the array has to be
//! near its size to show the effect (the CLI takes whole MiB).

use numakit_probe::kiefer::{self, Access, Experiment, KieferOptions, KieferReport, KieferRow};

use super::{placer, row, GUESTS};
use crate::context::{Context, Scale};
use crate::error::RunResult;
use crate::outcome::{Outcome, Row, Shape, Verdict};

const MIB: u64 = 1 << 20;
/// The array near a private L2 (`--small-mib 1`).
const SMALL: u64 = MIB;

/// `kiefer::run` `runs` times, each cell the fastest of its runs: the
/// other processes on a small shared machine only ever slow a run down,
/// so the minimum is the least disturbed figure.
fn fastest_of(
    ctx: &Context<'_>,
    experiments: &[Experiment],
    options: &KieferOptions,
    runs: usize,
) -> RunResult<KieferReport> {
    let placer = placer(&ctx.topology);
    let mut best = kiefer::run(&placer, experiments, options, ctx.progress)?;
    for _ in 1..runs {
        let next = kiefer::run(&placer, experiments, options, ctx.progress)?;
        if next.rows.len() != best.rows.len() {
            return Err("two runs of the experiments gave different rows".into());
        }
        for (b, n) in best.rows.iter_mut().zip(&next.rows) {
            b.baseline_ns = b.baseline_ns.min(n.baseline_ns);
            b.variant_ns = match (b.variant_ns, n.variant_ns) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
        }
    }
    Ok(best)
}

/// Table 1's published (first column, second column) in ns, by
/// experiment, access and array (small = 16 MB, large = 128 MB).
fn published(experiment: u8, access: Access, small: bool) -> Option<(f64, f64)> {
    let read = access == Access::Read;
    Some(match (experiment, read, small) {
        (1, true, false) => (26.0, 30.8),
        (1, false, false) => (26.0, 31.0),
        (2, true, true) => (11.2, 14.6),
        (2, false, true) => (12.5, 15.2),
        (2, true, false) => (25.7, 31.6),
        (2, false, false) => (26.5, 32.3),
        (3, true, true) => (11.1, 31.8),
        (3, false, true) => (11.4, 27.0),
        (3, true, false) => (26.4, 40.9),
        (3, false, false) => (27.5, 50.3),
        (4, true, true) => (10.8, 26.3),
        (4, false, true) => (11.0, 21.3),
        (4, true, false) => (30.0, 36.2),
        (4, false, false) => (43.5, 47.5),
        _ => return None,
    })
}

fn table_1_options(scale: Scale) -> KieferOptions {
    KieferOptions {
        accesses: scale.pick(300_000, 1_000_000),
        small_bytes: SMALL,
        large_bytes: scale.pick(32, 128) * MIB,
        ..KieferOptions::default()
    }
}

/// Both rows of one line of Table 1, ours beside the paper's.
fn table_1_rows(r: &KieferRow, small: bool) -> [Row; 2] {
    let paper = published(r.experiment, r.access, small);
    let size = if small { "16MB" } else { "128MB" };
    let label = |column: &str| format!("exp {} {} (paper {size}): {column}", r.experiment, r.setup);
    [
        row(label(&r.baseline), "ns", r.baseline_ns, paper.map(|p| p.0)),
        Row::new(label(&r.variant), "ns", r.variant_ns, paper.map(|p| p.1)),
    ]
}

/// The mean second-over-first ratio of an experiment's rows on one array
/// (`None` where this machine measured no second column).
fn mean_ratio(report: &KieferReport, experiment: u8, bytes: u64) -> Option<f64> {
    let ratios: Vec<f64> = report
        .rows
        .iter()
        .filter(|r| r.experiment == experiment && r.bytes == bytes)
        .filter_map(KieferRow::ratio)
        .collect();
    (!ratios.is_empty()).then(|| ratios.iter().sum::<f64>() / ratios.len() as f64)
}

/// Table 1: the four experiments, read and write, both array sizes.
pub(crate) fn table_1(ctx: &Context<'_>) -> RunResult<Outcome> {
    let options = table_1_options(ctx.scale);
    let runs = ctx.scale.pick(2, 3);
    let report = fastest_of(ctx, &Experiment::ALL, &options, runs)?;
    let rows = report
        .rows
        .iter()
        .flat_map(|r| table_1_rows(r, r.bytes == options.small_bytes))
        .collect();
    let mut notes = vec![format!(
        "each cell the fastest of {runs} runs; {} accesses per thread and setup, arrays {} and {}, {} migrations, {} groups of {} threads; placement verified: {}",
        options.accesses,
        size(options.small_bytes),
        size(options.large_bytes),
        options.migrations,
        options.groups,
        options.group_threads,
        report.placement_verified()
    )];
    notes.extend(report.notes.iter().cloned());
    Ok(Outcome {
        rows,
        shapes: table_1_shapes(&report, &options),
        notes,
    })
}

fn table_1_shapes(report: &KieferReport, o: &KieferOptions) -> Vec<Shape> {
    let needs_nodes =
        |what: &str| Verdict::NotShownHere(format!("one node here: {what}; {GUESTS}"));
    let remote = match mean_ratio(report, 1, o.large_bytes) {
        Some(r) => Verdict::check(r > 1.0, format!("remote / local = {r:.2}x (paper 1.18x)")),
        None => needs_nodes("no remote memory to compare with"),
    };
    let small_2 = mean_ratio(report, 2, o.small_bytes);
    let migration = match small_2 {
        Some(r) => Verdict::check(
            r > 1.0,
            format!("{} migrations / none = {r:.2}x on the small array, read and write averaged (paper 1.30x read)", o.migrations),
        ),
        None => Verdict::NotShownHere("a single CPU: nothing can migrate".into()),
    };
    let (small_3, large_3) = (
        mean_ratio(report, 3, o.small_bytes),
        mean_ratio(report, 3, o.large_bytes),
    );
    let cache_migration = match small_3 {
        Some(r) => Verdict::check(
            r > 1.1,
            format!(
                "{} migrations / none = {r:.2}x on the small array (paper 2.9x read, 2.4x write)",
                o.migrations
            ),
        ),
        None => Verdict::NotShownHere("a single CPU: nothing can migrate".into()),
    };
    let smaller_for_large = match (small_3, large_3) {
        (Some(s), Some(l)) => Verdict::check(
            s > l,
            format!("small array {s:.2}x, large array {l:.2}x (paper 2.9x vs 1.5x read)"),
        ),
        _ => Verdict::NotShownHere("a single CPU: nothing can migrate".into()),
    };
    let concurrency = match mean_ratio(report, 4, o.small_bytes) {
        Some(r) => Verdict::check(
            r > 1.0,
            format!("round-robin / co-located = {r:.2}x (paper 2.4x read)"),
        ),
        None => needs_nodes("every group is co-located, round-robin needs two nodes' caches"),
    };
    vec![
        Shape::new("exp 1: remote memory access is slower than local (1.18x)", remote),
        Shape::new("exp 2: migrating a thread costs time when its data fits the cache", migration),
        Shape::new("exp 3: migrations that find another thread's data in the cache slow accesses down (2.8x)", cache_migration),
        Shape::new("exp 3: the cache-migration penalty is lower for an array that does not fit the cache", smaller_for_large),
        Shape::new("exp 4: groups co-located on one socket beat groups spread round-robin (2.4x at 16MB)", concurrency),
    ]
}

/// Figure 2b: experiment 3's execution time, relative to no migrations,
/// for a growing number of migrations (the read rows of a 1 MiB array).
pub(crate) fn figure_2(ctx: &Context<'_>) -> RunResult<Outcome> {
    let runs = ctx.scale.pick(2, 3);
    let sweep: &[u32] = ctx.scale.pick(&[3, 200], &[3, 25, 100, 200]);
    let mut rows = Vec::new();
    let mut relative = Vec::new();
    let mut notes = Vec::new();
    for &migrations in sweep {
        let options = KieferOptions {
            accesses: ctx.scale.pick(400_000, 1_000_000),
            small_bytes: SMALL,
            large_bytes: SMALL,
            migrations,
            ..KieferOptions::default()
        };
        let report = fastest_of(ctx, &[Experiment::CacheMigration], &options, runs)?;
        let ratios: Vec<f64> = report
            .rows
            .iter()
            .filter(|r| r.access == Access::Read)
            .filter_map(KieferRow::ratio)
            .collect();
        if ratios.is_empty() {
            notes.extend(report.notes.iter().cloned());
            continue;
        }
        let ratio = ratios.iter().sum::<f64>() / ratios.len() as f64;
        let paper = (migrations == 100).then_some(31.8 / 11.1);
        rows.push(row(
            format!("relative execution time, {migrations} migrations (read 1 MiB; paper 16MB, Table 1 at 100)"),
            "x",
            ratio,
            paper,
        ));
        relative.push((migrations, ratio));
        notes.extend(report.notes.iter().cloned());
    }
    rows.push(Row::new(
        "average LLC hit rate, no migrations",
        "%",
        None,
        Some(99.0),
    ));
    rows.push(Row::new(
        "average LLC hit rate, 200 migrations",
        "%",
        None,
        Some(78.0),
    ));
    notes.dedup();
    notes.push(format!("experiment 3 alone, 2 threads, each cell the fastest of {runs} runs; the two read rows (same 1 MiB array) averaged"));
    Ok(Outcome {
        rows,
        shapes: figure_2_shapes(&relative),
        notes,
    })
}

fn figure_2_shapes(relative: &[(u32, f64)]) -> Vec<Shape> {
    let growth = match (relative.first(), relative.last()) {
        (Some(&(few, a)), Some(&(many, b))) if many > few => Verdict::check(
            b > a && b > 1.2,
            format!("{a:.2}x at {few} migrations, {b:.2}x at {many}"),
        ),
        _ => Verdict::NotShownHere("a single CPU: nothing can migrate".into()),
    };
    vec![
        Shape::new("execution time grows with the number of thread migrations", growth),
        Shape::new(
            "the LLC hit rate drops after each migration (99% -> 78% on average with 200)",
            Verdict::NotShownHere(
                "numakit's experiments read no cache counters (numakit_placement::counters reads LLC misses per thread only where the PMU is visible, which it is not in this VM); and here one LLC is shared by both CPUs, so only the private caches go cold".into(),
            ),
        ),
    ]
}

fn size(bytes: u64) -> String {
    numakit_topology::units::human_bytes(bytes)
}
