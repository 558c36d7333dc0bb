//! Li et al. §4.3 (Figure 10) predicted: partitioned group-by aggregation
//! (`SELECT key, SUM(value) ... GROUP BY key`, 8-byte keys and values) by
//! shuffling the data to the threads (naive or ring), by moving the threads
//! to the data with their tables left home (migration), or with their
//! tables copied along (migration & copy), as the number of distinct keys
//! per partition grows. One partition, and one consumer thread, per core.
//!
//! Each method runs the shuffle's own schedule ([`Schedule`]: naive and
//! ring for shuffling, migration, migration-copy); at every step a consumer
//! copies its table (migration & copy), reads its piece (remote when
//! shuffling, local when migrating), and fetches the table lines its
//! updates miss, from its home memory (remote when migrating without a
//! copy). The submodule `work` says what misses and why (the hash-table
//! and cache model); `engine` shares the machine among the transfers with
//! the flow model of [`crate::simulate()`].
//!
//! ## Constants
//!
//! Only the calibration ([`Calibration::li_nehalem`]), the preset (memory
//! and link bandwidths, latencies, cache sizes) and Li's text (16-byte
//! rows and groups; one partition per core). Nothing is fitted to Figure
//! 10. Two choices are the model's own and are stated:
//!
//! * The per-thread cap is scaled by local/remote latency
//!   ([`Calibration::latency_scaled_remote_cap`], off for the shuffle
//!   report): the hash-table misses are costed as lines a thread keeps in
//!   flight (2.06 GB/s x 150 ns / 64 B = 4.8 lines), and a remote read with
//!   as many lines in flight over a longer latency is slower. Without it,
//!   32 threads read remote and local memory equally fast and migration
//!   has no edge for small tables, while Li Figure 11 reports migration
//!   reading 25% faster than the ring.
//! * The data size is not given in §4.3; the default is 1.6 billion rows
//!   (the scale of §4.1 and §4.2). It matters for migration & copy (the
//!   table moves at every step) and for migration's cold caches: on
//!   nehalem-ex-8s the crossover moves from 79K keys per partition at
//!   1.6e9 rows to about 200K at 6.4e9.
//! * Table misses keep as many lines in flight as a stream
//!   ([`AggOptions::update_lines_in_flight`] changes it). With 4.8 lines,
//!   large tables on nehalem-ex-4s are held by the memory controllers for
//!   shuffling and migration alike (each serves its threads' misses and
//!   write-backs wherever they run), so the two tie there; with 4 lines or
//!   fewer the misses are latency-bound and the ring leads by 7-25%. The
//!   crossover itself stays at 190-280K keys per partition for any of
//!   them, given enough rows: where a table outgrows its thread's share
//!   of the last-level cache.
//!
//! It predicts the methods' *relative* bandwidth; absolute figures are
//! upper bounds, since hashing and adding cost nothing here.

mod engine;
mod render;
#[cfg(test)]
mod tests;
mod work;

use numakit_shuffle::{Layout, Schedule, Strategy, SyncMode};
use numakit_topology::Topology;
use serde::Serialize;

use crate::calibration::{Calibration, ModelFit};
use crate::error::SimError;
use crate::machine::Machine;

pub use render::render_aggregation;
pub use work::ROW_BYTES;

/// One implementation of Li Figure 10.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Shuffle the pieces in the naive order; tables stay home.
    NaiveShuffle,
    /// Shuffle the pieces in ring order; tables stay home.
    RingShuffle,
    /// Threads move to the data; tables stay home (remote updates).
    Migration,
    /// Threads move to the data and copy their tables along.
    MigrationCopy,
}

impl Method {
    /// Every method: naive, ring, migration, migration & copy.
    pub const ALL: [Method; 4] = [
        Method::NaiveShuffle,
        Method::RingShuffle,
        Method::Migration,
        Method::MigrationCopy,
    ];

    /// The name reports print (`migration & copy`).
    pub fn name(self) -> &'static str {
        match self {
            Method::NaiveShuffle => "naive shuffle",
            Method::RingShuffle => "ring shuffle",
            Method::Migration => "migration",
            Method::MigrationCopy => "migration & copy",
        }
    }

    /// The shuffle schedule it runs.
    pub fn strategy(self) -> Strategy {
        match self {
            Method::NaiveShuffle => Strategy::Naive,
            Method::RingShuffle => Strategy::Ring,
            Method::Migration => Strategy::Migration,
            Method::MigrationCopy => Strategy::MigrationCopy,
        }
    }
}

/// What to aggregate, and how.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct AggOptions {
    /// Rows aggregated in all (16 bytes each).
    pub rows: f64,
    /// Barriers between steps (Li's aggregation: not said; tight default).
    pub sync: SyncMode,
    /// The model constants (by default Li's, with the remote cap scaled by latency).
    pub calibration: Calibration,
    /// Table lines one thread keeps in flight while its updates miss.
    /// `None`: as many as a streamed read (per-thread cap x local latency
    /// / line, 4.8 on Nehalem-EX). Li gives no figure for independent
    /// random accesses; Table 1's latencies are for dependent ones (1).
    pub update_lines_in_flight: Option<f64>,
    /// Cache room of one thread, in bytes. `None`: its share of the
    /// topology's largest data cache as reported; a caller that measured
    /// what is really usable (the operators do) passes that instead.
    pub cache_bytes_per_thread: Option<f64>,
}

impl Default for AggOptions {
    fn default() -> Self {
        Self {
            rows: 1.6e9,
            sync: SyncMode::Tight,
            calibration: Calibration {
                latency_scaled_remote_cap: true,
                ..Calibration::li_nehalem()
            },
            update_lines_in_flight: None,
            cache_bytes_per_thread: None,
        }
    }
}

/// One method at one number of keys.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MethodPrediction {
    /// The method predicted.
    pub method: Method,
    /// Effective aggregation bandwidth: input bytes / time, 1e9 B/s.
    pub gbs: f64,
    /// Input rows aggregated per second.
    pub rows_per_s: f64,
    /// Simulated time of the whole aggregation, in seconds.
    pub seconds: f64,
    /// Shares of the consumers' busy time (Li Figure 11): reading the
    /// pieces, fetching missed table lines, copying the table.
    pub read_share: f64,
    /// Share of busy time spent fetching table lines the updates missed.
    pub update_share: f64,
    /// Share of busy time spent copying tables (migration & copy only; 0 otherwise).
    pub copy_share: f64,
}

/// Every method at one number of distinct keys per partition.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AggPoint {
    /// Distinct keys each partition's rows are drawn from (uniformly).
    pub keys_per_partition: f64,
    /// Bytes of one partition's final table.
    pub table_bytes: f64,
    /// One prediction per method run, in the order asked.
    pub methods: Vec<MethodPrediction>,
}

impl AggPoint {
    /// The prediction of `method`, if it was run.
    pub fn get(&self, method: Method) -> Option<&MethodPrediction> {
        self.methods.iter().find(|m| m.method == method)
    }
}

/// Where the ring shuffle overtakes a migration method.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Crossover {
    /// The migration method the ring shuffle is compared with.
    pub against: Method,
    /// Keys per partition from which the ring shuffle is faster; `None`
    /// when the sweep shows no crossover (see `note`).
    pub keys_per_partition: Option<f64>,
    /// The same as distinct groups of the whole query (keys x partitions).
    pub total_groups: Option<f64>,
    /// Lowest ring shuffle / `against` bandwidth at the sweep's points
    /// beyond the crossover (below 1: `against` catches up again); `None`
    /// without a crossover.
    pub lowest_ratio_after: Option<f64>,
    /// One line for people: where each method wins, or why there is no crossover.
    pub note: String,
}

/// A sweep over keys per partition on one machine.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AggReport {
    /// The machine's name ([`Machine::name`]).
    pub machine: String,
    /// Sockets and consumer threads per socket (one per core by default).
    pub layout: Layout,
    /// Partitions = consumer threads.
    pub partitions: usize,
    /// The options every point was predicted with.
    pub options: AggOptions,
    /// Cache room of one thread, in bytes: its share of the largest data or
    /// unified cache (the smallest over sockets).
    pub cache_bytes_per_thread: f64,
    /// Cache line size in bytes (64 when the topology does not say).
    pub line_bytes: f64,
    /// One point per keys-per-partition value of the sweep, in the order given.
    pub points: Vec<AggPoint>,
    /// Where the ring shuffle overtakes migration, then migration & copy.
    pub crossovers: Vec<Crossover>,
    /// Whether the model's constants apply to this machine.
    pub fit: ModelFit,
}

/// 1K to 64M keys per partition, by powers of 4.
pub fn default_keys() -> Vec<f64> {
    (0..9).map(|i| 1024.0 * 4f64.powi(i)).collect()
}

/// Every method at `keys_per_partition`, default options; one thread per
/// core unless `threads_per_socket` says otherwise.
pub fn predict(
    topo: &Topology,
    threads_per_socket: Option<usize>,
    keys_per_partition: f64,
) -> Result<AggPoint, SimError> {
    predict_with(
        topo,
        threads_per_socket,
        keys_per_partition,
        &AggOptions::default(),
    )
}

/// [`predict`] with explicit options.
pub fn predict_with(
    topo: &Topology,
    threads_per_socket: Option<usize>,
    keys_per_partition: f64,
    opts: &AggOptions,
) -> Result<AggPoint, SimError> {
    predict_methods(
        topo,
        threads_per_socket,
        keys_per_partition,
        &Method::ALL,
        opts,
    )
}

/// [`predict_with`] for `methods` only, in that order (the operators'
/// automatic choice weighs the three it can run).
pub fn predict_methods(
    topo: &Topology,
    threads_per_socket: Option<usize>,
    keys_per_partition: f64,
    methods: &[Method],
    opts: &AggOptions,
) -> Result<AggPoint, SimError> {
    let setup = Setup::new(topo, threads_per_socket, opts)?;
    setup.point(keys_per_partition, methods)
}

/// Every method at each of `keys` (keys per partition), and where the
/// ring shuffle overtakes each migration method.
pub fn sweep(
    topo: &Topology,
    threads_per_socket: Option<usize>,
    keys: &[f64],
    opts: &AggOptions,
) -> Result<AggReport, SimError> {
    let setup = Setup::new(topo, threads_per_socket, opts)?;
    let points = keys
        .iter()
        .map(|&k| setup.point(k, &Method::ALL))
        .collect::<Result<Vec<_>, _>>()?;
    let crossovers = [Method::Migration, Method::MigrationCopy]
        .into_iter()
        .map(|against| setup.crossover(&points, against))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(AggReport {
        machine: setup.machine.name.clone(),
        layout: setup.layout,
        partitions: setup.layout.threads(),
        options: *opts,
        cache_bytes_per_thread: setup.cache_bytes,
        line_bytes: setup.line_bytes,
        points,
        crossovers,
        fit: ModelFit::of(topo),
    })
}

/// A machine, a layout and options, ready to run.
struct Setup {
    machine: Machine,
    layout: Layout,
    opts: AggOptions,
    cache_bytes: f64,
    line_bytes: f64,
    /// Per socket: an update's per-thread cap over a streamed read's.
    update_scale: Vec<f64>,
}

impl Setup {
    fn new(
        topo: &Topology,
        threads_per_socket: Option<usize>,
        opts: &AggOptions,
    ) -> Result<Self, SimError> {
        opts.calibration.validate()?;
        if !(opts.rows.is_finite() && opts.rows >= 1.0) {
            let why = format!("rows must be at least 1, got {}", opts.rows);
            return Err(SimError::BadOption(why));
        }
        let machine = Machine::new(topo)?;
        let cores = (0..machine.socket_count())
            .map(|s| machine.socket(s).cores)
            .min()
            .unwrap_or(1);
        let per = threads_per_socket.unwrap_or(cores.max(1));
        if per == 0 {
            let why = "at least one thread per socket".to_string();
            return Err(SimError::BadOption(why));
        }
        let (reported_cache, line_bytes) = work::cache_per_thread(topo, &machine, per);
        let cache_bytes = match opts.cache_bytes_per_thread {
            Some(bytes) if bytes.is_finite() && bytes > 0.0 => bytes,
            Some(bytes) => {
                let why = format!("cache bytes per thread must be positive, got {bytes}");
                return Err(SimError::BadOption(why));
            }
            None => reported_cache,
        };
        let update_scale = update_scale(&machine, opts, line_bytes)?;
        Ok(Self {
            layout: Layout::new(machine.socket_count(), per),
            machine,
            opts: *opts,
            cache_bytes,
            line_bytes,
            update_scale,
        })
    }

    fn point(&self, keys: f64, methods: &[Method]) -> Result<AggPoint, SimError> {
        if !(keys.is_finite() && keys >= 1.0) {
            let why = format!("keys per partition must be at least 1, got {keys}");
            return Err(SimError::BadOption(why));
        }
        let sizes = work::Sizes {
            rows: self.opts.rows,
            keys,
            cache_bytes: self.cache_bytes,
            line_bytes: self.line_bytes,
        };
        let per_partition = self.opts.rows / self.layout.threads() as f64;
        let methods = methods
            .iter()
            .map(|&m| self.run(m, &sizes))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(AggPoint {
            keys_per_partition: keys,
            table_bytes: work::distinct_groups(keys, per_partition) * ROW_BYTES,
            methods,
        })
    }

    fn run(&self, method: Method, sizes: &work::Sizes) -> Result<MethodPrediction, SimError> {
        let schedule = Schedule::build(self.layout, method.strategy(), 1);
        let tasks = work::build(&schedule, sizes);
        let cal = &self.opts.calibration;
        let out = engine::run(
            &self.machine,
            cal,
            self.opts.sync,
            &self.update_scale,
            &tasks,
        )?;
        let busy: f64 = out
            .thread_seconds
            .iter()
            .sum::<f64>()
            .max(f64::MIN_POSITIVE);
        Ok(MethodPrediction {
            method,
            gbs: sizes.rows * ROW_BYTES / out.seconds / 1e9,
            rows_per_s: sizes.rows / out.seconds,
            seconds: out.seconds,
            read_share: out.thread_seconds[0] / busy,
            update_share: out.thread_seconds[1] / busy,
            copy_share: out.thread_seconds[2] / busy,
        })
    }

    /// ln(ring shuffle / `against`) at `keys`.
    fn margin(&self, keys: f64, against: Method) -> Result<f64, SimError> {
        let p = self.point(keys, &[Method::RingShuffle, against])?;
        Ok((p.methods[0].gbs / p.methods[1].gbs).ln())
    }

    /// The first sweep interval where the ring shuffle overtakes
    /// `against`, narrowed by bisection on log(keys).
    fn crossover(&self, points: &[AggPoint], against: Method) -> Result<Crossover, SimError> {
        let margins: Vec<(f64, f64)> = points
            .iter()
            .filter_map(|p| {
                let ring = p.get(Method::RingShuffle)?.gbs;
                Some((p.keys_per_partition, (ring / p.get(against)?.gbs).ln()))
            })
            .collect();
        let found = |keys: Option<f64>, note: String| Crossover {
            against,
            keys_per_partition: keys,
            total_groups: keys.map(|k| k * self.layout.threads() as f64),
            lowest_ratio_after: None,
            note,
        };
        let Some(&(first, m0)) = margins.first() else {
            return Ok(found(None, "no points".to_string()));
        };
        if m0 >= 0.0 {
            let why = format!("ring shuffle at least as fast from {first} keys on");
            return Ok(found(None, why));
        }
        let Some(i) = margins
            .windows(2)
            .position(|w| w[0].1 < 0.0 && w[1].1 >= 0.0)
        else {
            let why = format!("{} faster over the whole sweep", against.name());
            return Ok(found(None, why));
        };
        let keys = self.bisect(margins[i].0, margins[i + 1].0, against)?;
        let lowest = margins[i + 1..]
            .iter()
            .map(|&(_, m)| m.exp())
            .fold(f64::INFINITY, f64::min);
        let name = against.name();
        let why = if lowest >= 1.0 {
            format!("{name} faster below, ring shuffle above")
        } else {
            let by = 100.0 * (1.0 / lowest - 1.0);
            format!("{name} faster below, ring shuffle just above; further up {name} is ahead again, by up to {by:.0}%")
        };
        Ok(Crossover {
            lowest_ratio_after: Some(lowest),
            ..found(Some(keys), why)
        })
    }

    /// Where ring shuffle and `against` are equally fast between `below`
    /// (against faster) and `above` keys, by bisection on log(keys).
    fn bisect(&self, below: f64, above: f64, against: Method) -> Result<f64, SimError> {
        let (mut lo, mut hi) = (below.ln(), above.ln());
        for _ in 0..12 {
            let mid = 0.5 * (lo + hi);
            if self.margin(mid.exp(), against)? < 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok((0.5 * (lo + hi)).exp())
    }
}

/// Per socket: the cap of a thread's table misses over its streamed reads'
/// (`update_lines_in_flight` over the lines a stream keeps in flight; 1
/// when not set, or when the socket's memory latency is not described).
fn update_scale(machine: &Machine, opts: &AggOptions, line: f64) -> Result<Vec<f64>, SimError> {
    let Some(lines) = opts.update_lines_in_flight else {
        return Ok(vec![1.0; machine.socket_count()]);
    };
    if !(lines.is_finite() && lines > 0.0) {
        let why = format!("update lines in flight must be positive, got {lines}");
        return Err(SimError::BadOption(why));
    }
    let per_thread = opts.calibration.per_thread_gbs;
    Ok((0..machine.socket_count())
        .map(|s| match machine.socket(s).memory_latency_ns {
            // GB/s is bytes per ns: lines in flight = rate x latency / line.
            Some(ns) if ns > 0.0 => lines / (per_thread * ns / line),
            _ => 1.0,
        })
        .collect())
}
