//! Placement strategies for partitioned work (Kiefer et al. §4): K
//! independent partitions, one per node like one database instance per
//! socket, each served by its own workers and running numakit's own scan,
//! aggregation and join, under four strategies:
//!
//! - `default`: no binding; the kernel places threads and first touch
//!   places memory;
//! - `aligned`: each instance's threads and memory on the same node;
//! - `1-ahead`: threads on node i, memory on node i+1;
//! - `interleave`: threads bound, memory interleaved over all nodes.
//!
//! Throughput is normalized to `default`, as in Kiefer's Figures 5 and 6,
//! and a one-line recommendation names the best strategy. All instances
//! run at once, the strategies take turns within each repetition (in a
//! rotating order, so that none always goes first), and every strategy
//! must compute the same results. The instances are [`instance`]'s, the
//! work [`workload`]'s.

pub mod instance;
pub mod workload;

use numakit_placement::MemoryLimit;
use std::sync::{Arc, Barrier};
use std::time::Instant;

use numakit_ops::cache_probe::CacheProbe;
use numakit_ops::Progress;
use numakit_placement::{PlacementMode, Placer};
use numakit_pool::Pool;
use serde::Serialize;

use crate::budget;
use crate::error::{ProbeError, Result};
use crate::latency::PageCheck;
pub use instance::Seat;
pub use workload::{Sizes, Workload};

/// Where an instance's threads and memory go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum PlacementStrategy {
    /// No binding: the kernel places the threads, first touch the memory.
    #[serde(rename = "default")]
    Default,
    /// Each instance's threads and memory on its own node.
    #[serde(rename = "aligned")]
    Aligned,
    /// Threads on the instance's node, memory on the next memory node.
    #[serde(rename = "1-ahead")]
    OneAhead,
    /// Threads on the instance's node, memory interleaved over all memory
    /// nodes.
    #[serde(rename = "interleave")]
    Interleave,
}

impl PlacementStrategy {
    /// Every strategy, `default` first (the one the others are
    /// normalized to).
    pub const ALL: [PlacementStrategy; 4] = [
        PlacementStrategy::Default,
        PlacementStrategy::Aligned,
        PlacementStrategy::OneAhead,
        PlacementStrategy::Interleave,
    ];

    /// The strategy's name in options and reports (`default`, `aligned`,
    /// `1-ahead`, `interleave`).
    pub fn name(self) -> &'static str {
        match self {
            PlacementStrategy::Default => "default",
            PlacementStrategy::Aligned => "aligned",
            PlacementStrategy::OneAhead => "1-ahead",
            PlacementStrategy::Interleave => "interleave",
        }
    }

    /// What a user should do to get this strategy.
    fn advice(self) -> &'static str {
        match self {
            PlacementStrategy::Default => "leave placement to the kernel",
            PlacementStrategy::Aligned => {
                "bind each partition's threads and memory to the same node"
            }
            PlacementStrategy::OneAhead => {
                "bind threads, and put each partition's memory on the next node"
            }
            PlacementStrategy::Interleave => {
                "bind threads, and interleave the memory over all nodes"
            }
        }
    }
}

impl std::str::FromStr for PlacementStrategy {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        PlacementStrategy::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                format!("unknown strategy `{s}` (default, aligned, 1-ahead, interleave)")
            })
    }
}

/// What to run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StrategyOptions {
    /// The process's memory limit, checked before any data is placed.
    pub memory_limit: MemoryLimit,
    /// Partitions (default: one per node with CPUs).
    pub instances: Option<usize>,
    /// Rows of each instance's data.
    pub sizes: Sizes,
    /// The workloads to run, each under every strategy.
    pub workloads: Vec<Workload>,
    /// The strategies to compare (`default` among them, or nothing is
    /// normalized).
    pub strategies: Vec<PlacementStrategy>,
    /// Timed repetitions (the median is reported), after one untimed.
    pub reps: usize,
    /// How the bound strategies' pools pin (`default` never pins).
    pub mode: PlacementMode,
    /// Seed of the generated data (instance i uses `seed + i`).
    pub seed: u64,
}

impl Default for StrategyOptions {
    fn default() -> Self {
        Self {
            memory_limit: MemoryLimit::default(),
            instances: None,
            sizes: Sizes {
                rows: 4 << 20,
                groups: 1 << 16,
                build_rows: 1 << 19,
            },
            workloads: Workload::ALL.to_vec(),
            strategies: PlacementStrategy::ALL.to_vec(),
            reps: 5,
            mode: PlacementMode::Strict,
            seed: 11,
        }
    }
}

/// One strategy on one workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StrategyOutcome {
    /// Where the instances' threads and memory went.
    pub strategy: PlacementStrategy,
    /// What the instances ran.
    pub workload: Workload,
    /// Median over repetitions of all instances' rows per second together
    /// (their rows over the wall time from their common start to the last
    /// one's end).
    pub rows_per_s: f64,
    /// Slowest repetition, in rows per second.
    pub min_rows_per_s: f64,
    /// Fastest repetition, in rows per second.
    pub max_rows_per_s: f64,
    /// Throughput over `default`'s on the same workload.
    pub vs_default: Option<f64>,
    /// The base data's pages, and how many lay where the strategy put them.
    pub pages: PageCheck,
    /// A value computed from every instance's result (equal across strategies).
    pub check: u64,
}

/// Every strategy's outcome and the recommendation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StrategyReport {
    /// The options the strategies ran with.
    pub options: StrategyOptions,
    /// Where each instance ran: its node and CPUs.
    pub instances: Vec<Seat>,
    /// The allowed memory nodes the strategies placed data on.
    pub memory_nodes: Vec<numakit_topology::NodeId>,
    /// One per workload and strategy, workload by workload, strategies in
    /// the order asked.
    pub outcomes: Vec<StrategyOutcome>,
    /// Every strategy computed the same results.
    pub consistent: bool,
    /// The best strategy and what to do to get it, in one line (see
    /// [`recommend`]).
    pub recommendation: String,
    /// Caveats about the comparison on this machine (one memory node).
    pub notes: Vec<String>,
}

/// Runs every workload under every strategy.
///
/// # Examples
///
/// The scan under every strategy on 100,000 rows per instance (one
/// instance per node), one timed repetition. (The aggregation and the join
/// also measure the usable cache first, once per run, which takes a while
/// in a debug build.)
///
/// ```
/// use std::sync::Arc;
///
/// use numakit_ops::timing::Silent;
/// use numakit_placement::{PlacementMode, Placer};
/// use numakit_probe::strategies::{self, Sizes, PlacementStrategy, StrategyOptions, Workload};
///
/// let topology = Arc::new(numakit_topology::discover()?);
/// let placer = Placer::new(topology, PlacementMode::BestEffort);
/// let options = StrategyOptions {
///     sizes: Sizes { rows: 100_000, groups: 64, build_rows: 1_024 },
///     workloads: vec![Workload::Scan],
///     reps: 1,
///     mode: PlacementMode::BestEffort,
///     ..StrategyOptions::default()
/// };
///
/// let report = strategies::run(&placer, &options, &Silent)?;
/// assert_eq!(report.outcomes.len(), PlacementStrategy::ALL.len());
/// assert!(report.consistent, "every strategy computed the same sum");
/// assert!(report.outcomes.iter().all(|o| o.rows_per_s > 0.0));
/// let default = &report.outcomes[0];
/// assert_eq!((default.strategy, default.vs_default), (PlacementStrategy::Default, Some(1.0)));
/// // A strategy is named only when it beat the default beyond noise.
/// assert!(report.recommendation.contains("the default"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run(
    placer: &Placer,
    options: &StrategyOptions,
    progress: &dyn Progress,
) -> Result<StrategyReport> {
    validate(options)?;
    let topology = placer.topology();
    let instances = options.instances.unwrap_or(topology.compute_nodes().len());
    let seats = instance::seats(topology, instances)?;
    let memory_nodes = topology.memory_nodes();
    let rows = options.sizes.rows.saturating_add(options.sizes.build_rows);
    let need = rows.saturating_mul(16 * 2 * instances as u64 * options.strategies.len() as u64);
    budget::ensure_fits(
        &options.memory_limit,
        topology,
        None,
        need,
        "the strategies' data (every strategy's copy, and the operators' working memory)",
    )?;
    let mut outcomes = Vec::new();
    for &workload in &options.workloads {
        outcomes.extend(run_workload(
            topology,
            &seats,
            &memory_nodes,
            workload,
            options,
            progress,
        )?);
    }
    normalize(&mut outcomes);
    let consistent = options.workloads.iter().all(|&w| {
        let mut checks = outcomes.iter().filter(|o| o.workload == w).map(|o| o.check);
        let first = checks.next();
        checks.all(|c| Some(c) == first)
    });
    let mut notes = Vec::new();
    if memory_nodes.len() < 2 {
        notes.push("one memory node: every strategy puts the memory on it, so they differ by where the kernel runs the threads and by noise".into());
    }
    Ok(StrategyReport {
        recommendation: recommend(&outcomes, memory_nodes.len()),
        options: options.clone(),
        instances: seats,
        memory_nodes,
        outcomes,
        consistent,
        notes,
    })
}

fn validate(options: &StrategyOptions) -> Result<()> {
    if options.reps == 0 {
        return Err(ProbeError::Zero {
            what: "repetitions",
        });
    }
    if options.instances == Some(0) {
        return Err(ProbeError::Zero { what: "instances" });
    }
    if options.sizes.rows == 0 {
        return Err(ProbeError::Zero { what: "rows" });
    }
    if options.workloads.is_empty() || options.strategies.is_empty() {
        return Err(ProbeError::Nothing(
            "no workload or no strategy chosen".into(),
        ));
    }
    Ok(())
}

/// One strategy's instances: pools and data.
struct Setup {
    strategy: PlacementStrategy,
    pools: Vec<Pool>,
    data: Vec<workload::Data>,
    seconds: Vec<f64>,
    check: u64,
}

fn run_workload(
    topology: &Arc<numakit_topology::Topology>,
    seats: &[Seat],
    memory_nodes: &[numakit_topology::NodeId],
    workload: Workload,
    options: &StrategyOptions,
    progress: &dyn Progress,
) -> Result<Vec<StrategyOutcome>> {
    let mut setups = Vec::with_capacity(options.strategies.len());
    // One cache measurement for every instance's pool (measured on the
    // first, handed to the others), not one per pool at the same time.
    let mut cache: Option<Arc<CacheProbe>> = None;
    for &strategy in &options.strategies {
        progress.phase(&format!(
            "{}: placing data {}",
            workload.name(),
            strategy.name()
        ));
        let mut pools = Vec::with_capacity(seats.len());
        let mut data = Vec::with_capacity(seats.len());
        for (i, seat) in seats.iter().enumerate() {
            let pool = instance::pool(topology, seat, strategy, options.mode)?;
            // Only the group-by sizes its tables by the cache.
            if workload == Workload::Aggregate {
                match &cache {
                    None => cache = Some(numakit_ops::cache_probe::measured(&pool)),
                    Some(shared) => {
                        pool.state_or_init(|| CacheProbe::clone(shared));
                    }
                }
            }
            let placement = instance::placement(strategy, seat.node, memory_nodes);
            data.push(workload::data(
                &pool,
                workload,
                options.sizes,
                &placement,
                options.seed + i as u64,
            )?);
            pools.push(pool);
        }
        setups.push(Setup {
            strategy,
            pools,
            data,
            seconds: Vec::new(),
            check: 0,
        });
    }
    let rows: u64 = seats.len() as u64 * options.sizes.rows;
    let strategies = setups.len();
    for rep in 0..=options.reps {
        for turn in 0..strategies {
            let setup = &mut setups[(turn + rep) % strategies];
            progress.phase(&format!(
                "{}: {} (repetition {rep})",
                workload.name(),
                setup.strategy.name()
            ));
            let (seconds, check) = together(setup, workload)?;
            if rep > 0 {
                setup.seconds.push(seconds);
            }
            setup.check = check;
        }
    }
    Ok(setups
        .into_iter()
        .map(|s| outcome(s, workload, rows))
        .collect())
}

/// All instances of a setup run the workload at once; returns the time
/// from their common start to the last one's end, and the sum of their
/// check values.
fn together(setup: &Setup, workload: Workload) -> Result<(f64, u64)> {
    let start = Barrier::new(setup.pools.len() + 1);
    let (seconds, results) = std::thread::scope(|scope| {
        let handles: Vec<_> = setup
            .pools
            .iter()
            .zip(&setup.data)
            .map(|(pool, data)| {
                let start = &start;
                scope.spawn(move || {
                    start.wait();
                    workload::run(pool, workload, data)
                })
            })
            .collect();
        start.wait();
        let began = Instant::now();
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|p| ProbeError::ThreadPanicked(crate::team::panic_text(&p)))
            })
            .collect();
        (began.elapsed().as_secs_f64(), results)
    });
    let mut check = 0u64;
    for result in results {
        let (_, value) = result??;
        check = check.wrapping_add(value);
    }
    Ok((seconds, check))
}

fn outcome(setup: Setup, workload: Workload, rows: u64) -> StrategyOutcome {
    let mut rates: Vec<f64> = setup
        .seconds
        .iter()
        .map(|s| rows as f64 / s.max(1e-12))
        .collect();
    rates.sort_by(f64::total_cmp);
    let pages = setup
        .data
        .iter()
        .fold(PageCheck::default(), |acc, d| PageCheck {
            pages: acc.pages + d.pages.pages,
            on_node: acc.on_node + d.pages.on_node,
        });
    StrategyOutcome {
        strategy: setup.strategy,
        workload,
        rows_per_s: rates.get(rates.len() / 2).copied().unwrap_or(0.0),
        min_rows_per_s: rates.first().copied().unwrap_or(0.0),
        max_rows_per_s: rates.last().copied().unwrap_or(0.0),
        vs_default: None,
        pages,
        check: setup.check,
    }
}

fn normalize(outcomes: &mut [StrategyOutcome]) {
    let defaults: Vec<(Workload, f64)> = outcomes
        .iter()
        .filter(|o| o.strategy == PlacementStrategy::Default && o.rows_per_s > 0.0)
        .map(|o| (o.workload, o.rows_per_s))
        .collect();
    for o in outcomes.iter_mut() {
        o.vs_default = defaults
            .iter()
            .find(|(w, _)| *w == o.workload)
            .map(|(_, d)| o.rows_per_s / d);
    }
}

/// The strategy with the best geometric mean over the workloads of its
/// throughput relative to `default`, in one line, but only when that is
/// more than noise: on at least one workload its slowest repetition beat
/// `default`'s fastest. Otherwise the line says there is no significant
/// difference and names the spread.
pub fn recommend(outcomes: &[StrategyOutcome], memory_nodes: usize) -> String {
    let mut best: Option<(PlacementStrategy, f64)> = None;
    for strategy in PlacementStrategy::ALL {
        let ratios: Vec<f64> = outcomes
            .iter()
            .filter(|o| o.strategy == strategy)
            .filter_map(|o| o.vs_default)
            .collect();
        if ratios.is_empty() {
            continue;
        }
        let mean = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
        if best.is_none_or(|(_, b)| mean > b) {
            best = Some((strategy, mean));
        }
    }
    let Some((strategy, mean)) = best else {
        return "no recommendation: `default` was not measured, so nothing is normalized".into();
    };
    let one_node = if memory_nodes < 2 {
        " (one node here, so the strategies place memory alike; binding pays on machines with two or more nodes)"
    } else {
        ""
    };
    let beyond_noise: Vec<&str> = outcomes
        .iter()
        .filter(|o| o.strategy == strategy && strategy != PlacementStrategy::Default)
        .filter(|o| {
            outcomes.iter().any(|d| {
                d.strategy == PlacementStrategy::Default
                    && d.workload == o.workload
                    && o.min_rows_per_s > d.max_rows_per_s
            })
        })
        .map(|o| o.workload.name())
        .collect();
    if mean <= 1.0 || beyond_noise.is_empty() {
        return format!(
            "no significant difference: no strategy's slowest run beat the default's fastest on any workload (the best, {}, averaged {mean:.2}x the default within the runs' spread of {}); keep the default{one_node}",
            strategy.name(),
            spread(outcomes)
        );
    }
    let parts: Vec<String> = outcomes
        .iter()
        .filter(|o| o.strategy == strategy)
        .filter_map(|o| {
            o.vs_default
                .map(|r| format!("{} {r:.2}x", o.workload.name()))
        })
        .collect();
    format!(
        "{}: {mean:.2}x the default on average ({}; beyond the runs' spread on {}): {}{one_node}",
        strategy.name(),
        parts.join(", "),
        beyond_noise.join(", "),
        strategy.advice()
    )
}

/// The largest spread of any outcome's repetitions, as a share of its
/// median (`±7%`).
fn spread(outcomes: &[StrategyOutcome]) -> String {
    let widest = outcomes
        .iter()
        .filter(|o| o.rows_per_s > 0.0)
        .map(|o| (o.max_rows_per_s - o.min_rows_per_s) / 2.0 / o.rows_per_s)
        .fold(0.0, f64::max);
    format!("±{:.0}%", 100.0 * widest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(
        strategy: PlacementStrategy,
        workload: Workload,
        rows_per_s: f64,
    ) -> StrategyOutcome {
        StrategyOutcome {
            strategy,
            workload,
            rows_per_s,
            min_rows_per_s: rows_per_s,
            max_rows_per_s: rows_per_s,
            vs_default: None,
            pages: PageCheck::default(),
            check: 0,
        }
    }

    #[test]
    fn the_best_geometric_mean_over_default_is_recommended() {
        let mut outcomes = vec![
            outcome(PlacementStrategy::Default, Workload::Scan, 100.0),
            outcome(PlacementStrategy::Default, Workload::Join, 10.0),
            outcome(PlacementStrategy::Aligned, Workload::Scan, 175.0),
            outcome(PlacementStrategy::Aligned, Workload::Join, 11.0),
            outcome(PlacementStrategy::OneAhead, Workload::Scan, 90.0),
            outcome(PlacementStrategy::OneAhead, Workload::Join, 30.0),
        ];
        normalize(&mut outcomes);
        assert_eq!(outcomes[2].vs_default, Some(1.75));
        let line = recommend(&outcomes, 4);
        // 1-ahead: sqrt(0.9 * 3.0) = 1.64; aligned: sqrt(1.75 * 1.1) = 1.39.
        assert!(line.starts_with("1-ahead: 1.64x"), "{line}");
        assert!(line.contains("scan 0.90x, join 3.00x"), "{line}");
        assert!(line.contains("beyond the runs' spread on join"), "{line}");
        assert!(!line.contains("one node"));
        assert!(recommend(&outcomes, 1).contains("one node"));
        let unmeasured = [outcome(PlacementStrategy::Aligned, Workload::Scan, 1.0)];
        assert!(recommend(&unmeasured, 4).starts_with("no recommendation"));
    }

    #[test]
    fn differences_within_the_noise_recommend_nothing() {
        let ranged = |strategy, rows: f64, min: f64, max: f64| StrategyOutcome {
            min_rows_per_s: min,
            max_rows_per_s: max,
            ..outcome(strategy, Workload::Scan, rows)
        };
        let mut overlapping = vec![
            ranged(PlacementStrategy::Default, 100.0, 90.0, 110.0),
            ranged(PlacementStrategy::Aligned, 105.0, 95.0, 112.0),
        ];
        normalize(&mut overlapping);
        let line = recommend(&overlapping, 1);
        assert!(line.starts_with("no significant difference"), "{line}");
        assert!(line.contains("±"), "{line}");
        let mut separated = vec![
            ranged(PlacementStrategy::Default, 100.0, 90.0, 110.0),
            ranged(PlacementStrategy::Aligned, 150.0, 140.0, 160.0),
        ];
        normalize(&mut separated);
        assert!(recommend(&separated, 2).starts_with("aligned: 1.50x"));
    }

    #[test]
    fn names_round_trip() {
        for s in PlacementStrategy::ALL {
            assert_eq!(s.name().parse::<PlacementStrategy>(), Ok(s));
        }
        assert!("aligned2".parse::<PlacementStrategy>().is_err());
        assert_eq!("join".parse::<Workload>(), Ok(Workload::Join));
    }
}
