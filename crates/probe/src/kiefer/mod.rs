//! Kiefer et al.'s synthetic memory-access benchmark (§3.2), reported in
//! the shape of their Table 1: random reads and writes of an array, in
//! four experiments that each compare two setups.
//!
//! 1. Remote access cost: one thread, a 128 MB array on its own node vs on
//!    another node.
//! 2. Thread migration cost: one thread over a 16 MB and a 128 MB array,
//!    staying put vs moved to another node every so many accesses.
//! 3. Cache migration cost: one thread per node, each with its own array;
//!    without migrations vs rotating all of them across the nodes, so that
//!    each arrival finds another thread's data in the cache.
//! 4. Cache concurrency: groups of threads, each group sharing one array;
//!    every group co-located on one node vs spread round-robin.
//!
//! On one node, experiment 1's remote column and experiment 4's
//! round-robin column cannot be measured and say so; experiments 2 and 3
//! move threads between the node's CPUs instead of between nodes (a
//! context switch and cold private caches, but one shared cache), and
//! their labels say that too. Every array's pages and every thread's CPU
//! are checked. The access kernel is [`access`]; the experiments are in
//! [`experiments`].

pub mod access;
pub mod experiments;

use numakit_placement::MemoryLimit;
use std::sync::atomic::AtomicU64;

use numakit_ops::Progress;
use numakit_placement::{AtomicWords, BufferOptions, Placement, Placer};
use numakit_topology::NodeId;
use serde::Serialize;

use crate::budget;
use crate::error::{ProbeError, Result};
use crate::latency::PageCheck;
use crate::team::{self, Seat, ThreadCheck};
pub use access::Access;

const MIB: u64 = 1 << 20;
/// The most threads an experiment starts (they share the allowed CPUs).
const MAX_THREADS: usize = 4096;

/// One of the four experiments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Experiment {
    /// 1: one thread, the large array on its own node vs the nearest
    /// other memory node.
    RemoteAccess,
    /// 2: one thread over both arrays, staying put vs migrating.
    ThreadMigration,
    /// 3: one thread per node over its own array, staying put vs all
    /// rotating across the nodes.
    CacheMigration,
    /// 4: groups of threads sharing an array, co-located vs spread
    /// round-robin over the nodes.
    CacheConcurrency,
}

impl Experiment {
    /// The four experiments in Kiefer's order.
    pub const ALL: [Experiment; 4] = [
        Experiment::RemoteAccess,
        Experiment::ThreadMigration,
        Experiment::CacheMigration,
        Experiment::CacheConcurrency,
    ];

    /// Kiefer's number for it.
    pub fn number(self) -> u8 {
        match self {
            Experiment::RemoteAccess => 1,
            Experiment::ThreadMigration => 2,
            Experiment::CacheMigration => 3,
            Experiment::CacheConcurrency => 4,
        }
    }

    /// Kiefer's name for it (`remote access cost`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Experiment::RemoteAccess => "remote access cost",
            Experiment::ThreadMigration => "thread migration cost",
            Experiment::CacheMigration => "cache migration cost",
            Experiment::CacheConcurrency => "cache concurrency",
        }
    }
}

/// Sizes and counts of the experiments (Kiefer's in brackets).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KieferOptions {
    /// The process's memory limit, checked before any array is placed.
    pub memory_limit: MemoryLimit,
    /// Random accesses per thread and setup (4 billion in all).
    pub accesses: u64,
    /// The array that fits a last-level cache (16 MB).
    pub small_bytes: u64,
    /// The array that does not (128 MB).
    pub large_bytes: u64,
    /// Migrations per run in experiments 2 and 3 (100).
    pub migrations: u32,
    /// Threads of experiment 3, one per node (4).
    pub threads: usize,
    /// Groups of experiment 4 (4), each sharing one array.
    pub groups: usize,
    /// Threads per group of experiment 4 (4).
    pub group_threads: usize,
    /// Seed of every thread's random access stream (mixed with the
    /// thread's index).
    pub seed: u64,
}

impl Default for KieferOptions {
    fn default() -> Self {
        Self {
            memory_limit: MemoryLimit::default(),
            accesses: 4_000_000,
            small_bytes: 16 * MIB,
            large_bytes: 128 * MIB,
            migrations: 100,
            threads: 4,
            groups: 4,
            group_threads: 4,
            seed: 7,
        }
    }
}

impl KieferOptions {
    fn validate(&self) -> Result<()> {
        let zero = |what| Err(ProbeError::Zero { what });
        if self.accesses == 0 {
            return zero("accesses");
        }
        if self.threads == 0 || self.group_threads == 0 {
            return zero("threads");
        }
        if self.groups == 0 {
            return zero("groups");
        }
        let seats = self
            .groups
            .saturating_mul(self.group_threads)
            .max(self.threads);
        if seats > MAX_THREADS {
            return Err(ProbeError::BadSize(format!(
                "{seats} threads (--threads, or --groups x --group-threads) is more than {MAX_THREADS}"
            )));
        }
        if self.small_bytes < 8 || self.large_bytes < 8 {
            return Err(ProbeError::BadSize(
                "an array needs at least 8 bytes".into(),
            ));
        }
        Ok(())
    }
}

/// One line of Table 1: a setup measured two ways, in nanoseconds per
/// access (the mean over the setup's threads).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KieferRow {
    /// Kiefer's number of the experiment (1 to 4).
    pub experiment: u8,
    /// What ran: `read 128 MiB`, `4 threads write 16 MiB`, ...
    pub setup: String,
    /// Whether the threads read or wrote.
    pub access: Access,
    /// Size of each array, in bytes.
    pub bytes: u64,
    /// The first column: `local`, `w/o migrations`, `co-located`.
    pub baseline: String,
    /// The first setup's wall-clock nanoseconds per random access (the
    /// mean over its threads).
    pub baseline_ns: f64,
    /// The second column: `remote (node 1)`, `100 migrations`, `round-robin`.
    pub variant: String,
    /// The second setup's nanoseconds per access (migrations included),
    /// as `baseline_ns`; `None` where this machine cannot make it.
    pub variant_ns: Option<f64>,
}

impl KieferRow {
    /// Second column over first.
    pub fn ratio(&self) -> Option<f64> {
        self.variant_ns
            .filter(|_| self.baseline_ns > 0.0)
            .map(|v| v / self.baseline_ns)
    }
}

/// The experiments' results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KieferReport {
    /// The options the experiments ran with.
    pub options: KieferOptions,
    /// The experiments run, in order.
    pub experiments: Vec<Experiment>,
    /// Table 1's lines, in the order they were measured: two for
    /// experiment 1 (read, write), four for each other (two array sizes
    /// times read and write).
    pub rows: Vec<KieferRow>,
    /// What this machine could not measure as Kiefer did, and what was
    /// done instead (one node, one CPU).
    pub notes: Vec<String>,
    /// Every array's pages, and how many lay on the node they were put on.
    pub buffers: PageCheck,
    /// Every thread, seen before and after its work and after each move.
    pub threads: ThreadCheck,
}

impl KieferReport {
    /// Every array page and every thread was where it was put.
    pub fn placement_verified(&self) -> bool {
        self.buffers.pages == self.buffers.on_node && self.threads.all_placed()
    }
}

/// Runs `experiments` in order.
///
/// # Examples
///
/// The four experiments with tiny arrays and few accesses; on one node the
/// variants that need two nodes are `None` and a note says why.
///
/// ```
/// use std::sync::Arc;
///
/// use numakit_ops::timing::Silent;
/// use numakit_placement::{PlacementMode, Placer};
/// use numakit_probe::kiefer::{self, Experiment, KieferOptions};
///
/// let topology = Arc::new(numakit_topology::discover()?);
/// let placer = Placer::new(topology, PlacementMode::BestEffort);
/// let options = KieferOptions {
///     accesses: 10_000,
///     small_bytes: 256 << 10,
///     large_bytes: 1 << 20,
///     migrations: 4,
///     threads: 2,
///     groups: 2,
///     group_threads: 2,
///     ..KieferOptions::default()
/// };
///
/// let report = kiefer::run(&placer, &Experiment::ALL, &options, &Silent)?;
/// // Experiment 1: read and write; the others: two sizes, read and write.
/// assert_eq!(report.rows.len(), 2 + 3 * 4);
/// assert!(report.rows.iter().all(|r| r.baseline_ns.is_finite() && r.baseline_ns > 0.0));
/// if placer.topology().memory_nodes().len() < 2 {
///     assert_eq!(report.rows[0].variant_ns, None, "no remote node");
///     assert!(report.notes.iter().any(|n| n.starts_with("experiment 1")));
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run(
    placer: &Placer,
    experiments: &[Experiment],
    options: &KieferOptions,
    progress: &dyn Progress,
) -> Result<KieferReport> {
    options.validate()?;
    let nodes = placer.topology().compute_nodes();
    if nodes.is_empty() {
        return Err(ProbeError::Nothing("no allowed node has CPUs".into()));
    }
    let mut bench = Bench {
        placer,
        progress,
        nodes,
        report: KieferReport {
            options: options.clone(),
            experiments: experiments.to_vec(),
            rows: Vec::new(),
            notes: Vec::new(),
            buffers: PageCheck::default(),
            threads: ThreadCheck::default(),
        },
    };
    for &experiment in experiments {
        progress.phase(&format!(
            "experiment {}: {}",
            experiment.number(),
            experiment.name()
        ));
        match experiment {
            Experiment::RemoteAccess => experiments::remote_access(&mut bench)?,
            Experiment::ThreadMigration => experiments::thread_migration(&mut bench)?,
            Experiment::CacheMigration => experiments::cache_migration(&mut bench)?,
            Experiment::CacheConcurrency => experiments::cache_concurrency(&mut bench)?,
        }
    }
    Ok(bench.report)
}

/// The experiments' shared state and tools.
pub(crate) struct Bench<'a> {
    placer: &'a Placer,
    progress: &'a dyn Progress,
    /// Allowed nodes with CPUs, ascending.
    nodes: Vec<NodeId>,
    report: KieferReport,
}

impl Bench<'_> {
    fn options(&self) -> &KieferOptions {
        &self.report.options
    }

    fn note(&mut self, note: String) {
        if !self.report.notes.contains(&note) {
            self.report.notes.push(note);
        }
    }

    /// An array of `bytes` on `node`, every page touched there and checked.
    fn array(&mut self, bytes: u64, node: NodeId) -> Result<AtomicWords> {
        budget::ensure_fits(
            &self.options().memory_limit,
            self.placer.topology(),
            Some(node),
            bytes,
            "an experiment's array",
        )?;
        let words = usize::try_from(bytes / 8)
            .map_err(|_| ProbeError::BadSize(format!("{bytes} bytes do not fit in memory")))?;
        let options = BufferOptions::new(Placement::OnNode(node));
        let array = AtomicWords::with_options(self.placer, words.max(1), options)?;
        let check = PageCheck::of(&array.pages_per_node()?, node);
        self.report.buffers.pages += check.pages;
        self.report.buffers.on_node += check.on_node;
        Ok(array)
    }

    /// The `index`-th allowed CPU of `node` (round-robin).
    fn seat(&self, node: NodeId, index: usize) -> Result<Seat> {
        let cpus: Vec<_> = self.placer.cpus_of_node(node)?.iter().collect();
        Ok(Seat {
            cpu: cpus[index % cpus.len()],
            node,
        })
    }

    /// Runs `work(i)` on every seat at once; returns the mean of the
    /// nanoseconds per access each thread reports.
    fn mean_ns<F>(&mut self, seats: &[Seat], work: F) -> Result<f64>
    where
        F: Fn(usize) -> Result<(f64, ThreadCheck)> + Sync,
    {
        let run = team::run(self.placer, seats, work)?;
        self.report.threads = self.report.threads.merge(run.check);
        let threads = run.results.len().max(1);
        let mut total = 0.0;
        for result in run.results {
            let (ns, moves) = result?;
            self.report.threads = self.report.threads.merge(moves);
            total += ns;
        }
        Ok(total / threads as f64)
    }

    fn push(&mut self, row: KieferRow) {
        self.progress.phase(&format!(
            "experiment {}: {} done",
            row.experiment, row.setup
        ));
        self.report.rows.push(row);
    }
}

/// Nanoseconds per access of `count` random accesses.
fn ns_per_access(words: &[AtomicU64], count: u64, access: Access, seed: u64) -> f64 {
    let mut random = access::Random::new(seed);
    let (taken, _) = access::random_accesses(words, count, access, &mut random);
    taken.as_nanos() as f64 / count.max(1) as f64
}

/// `1.5 GiB`-style size for setup names.
fn size(bytes: u64) -> String {
    numakit_topology::units::human_bytes(bytes)
}
