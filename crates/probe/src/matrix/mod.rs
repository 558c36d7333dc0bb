//! The probe's matrices: for every pair (CPU node, memory node) of the
//! allowed topology, the dependent-load latency (with base pages and with
//! transparent huge pages), the read, write and copy bandwidth at the
//! thread count where reading saturates, the thread sweeps that found it,
//! and read bandwidth beside cross traffic.
//!
//! Quick and full differ in sizes, repetitions and sweeps: quick sweeps
//! each CPU node's reads of its own memory once and uses that thread count
//! for every pair of the row; full sweeps every pair and kernel. Every
//! buffer's pages and every thread's CPU are checked as they are used, and
//! the report says how many were where they were meant to be. Memory is
//! checked before anything is allocated. Latencies and bandwidths carry
//! their threads' hardware counters where the kernel offers them; where it
//! does not, the report says why once ([`MatrixReport::counters_unavailable`]).
//! This module assembles; the measurements are [`crate::latency`]'s and
//! [`crate::bandwidth`]'s.

use numakit_ops::Progress;
use numakit_placement::counters::CounterGroup;
use numakit_placement::{HugePages, Placement, Placer};
use numakit_topology::units::human_bytes;
use numakit_topology::{NodeId, Topology};
use serde::Serialize;

use crate::bandwidth::{self, Bandwidth, CrossFlow, CrossTraffic, Effort, Sweep};
use crate::budget;
use crate::chase::ChaseBuffer;
use crate::clock::{self, Clock};
use crate::error::{ProbeError, Result};
use crate::latency::{self, Latency, PageCheck};
use crate::stream::{Kernel, StreamBuffers};
use crate::team::{self, ThreadCheck};

mod options;

pub use options::MatrixOptions;
use options::{buffer_copies, validate};

/// Everything the probe measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MatrixReport {
    /// The rows: CPU nodes measured, in the order asked (default: every
    /// allowed node with CPUs, ascending).
    pub cpu_nodes: Vec<NodeId>,
    /// The columns: memory nodes measured, in the order asked (default:
    /// every allowed node with memory, ascending).
    pub memory_nodes: Vec<NodeId>,
    /// The options the probe ran with.
    pub options: MatrixOptions,
    /// The clock used to give latencies in cycles, if the kernel reports
    /// one.
    pub clock: Option<Clock>,
    /// `latency[i][j]`: CPU node `cpu_nodes[i]` to memory node `memory_nodes[j]`.
    pub latency: Vec<Vec<Latency>>,
    /// The same with transparent huge pages (empty when not measured).
    pub latency_huge: Vec<Vec<Latency>>,
    /// `read[i][j]`: read bandwidth of CPU node `cpu_nodes[i]` from memory
    /// node `memory_nodes[j]`, at the thread count where reading saturates
    /// (empty when bandwidth was not measured).
    pub read: Vec<Vec<Bandwidth>>,
    /// The same for writes.
    pub write: Vec<Vec<Bandwidth>>,
    /// The same for copies.
    pub copy: Vec<Vec<Bandwidth>>,
    /// The thread sweeps that found the saturating counts: each CPU node's
    /// local reads (quick), or every pair and kernel (full); none with
    /// fixed threads.
    pub sweeps: Vec<Sweep>,
    /// One entry per pair of different nodes (none on one node).
    pub cross: Vec<CrossTraffic>,
    /// Pages of every buffer, and how many lay on the node they were put on.
    pub buffers: PageCheck,
    /// Every thread, seen before and after its work.
    pub threads: ThreadCheck,
    /// Caveats about the figures on this machine (one memory node, buffers
    /// not much larger than the caches).
    pub notes: Vec<String>,
    /// Why no figure has hardware counters, in one line, when this
    /// process cannot open them (`None`: the figures carry them).
    pub counters_unavailable: Option<String>,
}

impl MatrixReport {
    /// Every page and every thread was where the probe put it.
    pub fn placement_verified(&self) -> bool {
        self.buffers.pages == self.buffers.on_node && self.threads.all_placed()
    }

    /// The matrix of one kernel.
    pub fn bandwidth(&self, kernel: Kernel) -> &[Vec<Bandwidth>] {
        match kernel {
            Kernel::Read => &self.read,
            Kernel::Write => &self.write,
            Kernel::Copy => &self.copy,
        }
    }
}

/// Which nodes a probe measures, checked against what this process may use.
pub fn resolve_nodes(
    placer: &Placer,
    options: &MatrixOptions,
) -> Result<(Vec<NodeId>, Vec<NodeId>)> {
    let topo = placer.topology();
    let cpu_nodes = match &options.cpu_nodes {
        Some(nodes) => checked(placer, nodes, true)?,
        None => topo.compute_nodes(),
    };
    let memory_nodes = match &options.memory_nodes {
        Some(nodes) => checked(placer, nodes, false)?,
        None => topo.memory_nodes(),
    };
    if cpu_nodes.is_empty() {
        return Err(ProbeError::Nothing("no allowed node has CPUs".into()));
    }
    if memory_nodes.is_empty() {
        return Err(ProbeError::Nothing("no allowed node has memory".into()));
    }
    Ok((cpu_nodes, memory_nodes))
}

fn checked(placer: &Placer, nodes: &[NodeId], need_cpus: bool) -> Result<Vec<NodeId>> {
    let mut out: Vec<NodeId> = Vec::with_capacity(nodes.len());
    for &node in nodes {
        let refused = |e: numakit_placement::PlacementError| ProbeError::BadNode {
            node,
            why: e.to_string(),
        };
        placer.check_node(node).map_err(refused)?;
        if need_cpus {
            placer.cpus_of_node(node).map_err(refused)?;
        }
        if !out.contains(&node) {
            out.push(node);
        }
    }
    Ok(out)
}

/// Runs the probe.
///
/// # Examples
///
/// The whole probe with tiny sizes (1 MiB buffers, one thread per node, no
/// sweep, no huge pages, no cross traffic): far too small for figures worth
/// reporting, but every matrix is filled.
///
/// ```
/// use std::sync::Arc;
///
/// use numakit_ops::timing::Silent;
/// use numakit_placement::{PlacementMode, Placer};
/// use numakit_probe::latency::ChaseLength;
/// use numakit_probe::{matrix, MatrixOptions};
///
/// let topology = Arc::new(numakit_topology::discover()?);
/// let placer = Placer::new(topology, PlacementMode::BestEffort);
/// let mut options = MatrixOptions::quick();
/// options.latency_bytes = 1 << 20;
/// options.chase = ChaseLength { warm: 1_000, loads: 10_000, reps: 1 };
/// options.huge_pages = false;
/// options.bandwidth_bytes = 1 << 20;
/// options.pass_bytes = 1 << 20;
/// options.reps = 1;
/// options.max_threads = Some(1);
/// options.fixed_threads = true;
/// options.cross_traffic = false;
///
/// let report = matrix::run(&placer, &options, &Silent)?;
/// assert_eq!(report.latency.len(), report.cpu_nodes.len());
/// for (row, latencies) in report.latency.iter().enumerate() {
///     assert_eq!(latencies.len(), report.memory_nodes.len());
///     assert!(latencies.iter().all(|l| l.ns.is_finite() && l.ns > 0.0));
///     assert!(report.read[row].iter().all(|b| b.gbs > 0.0 && b.threads == 1));
/// }
/// assert!(report.latency_huge.is_empty() && report.cross.is_empty());
/// // Counters beside the figures, or one reason there are none.
/// assert_eq!(report.counters_unavailable.is_none(), report.latency[0][0].counters.is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run(
    placer: &Placer,
    options: &MatrixOptions,
    progress: &dyn Progress,
) -> Result<MatrixReport> {
    validate(options)?;
    let (cpu_nodes, memory_nodes) = resolve_nodes(placer, options)?;
    let topo = placer.topology();
    let copies = buffer_copies(options, memory_nodes.len());
    for &m in &memory_nodes {
        if options.latency {
            budget::ensure_fits(
                &options.memory_limit,
                topo,
                Some(m),
                options.latency_bytes,
                "the latency buffer",
            )?;
        }
        if options.bandwidth {
            let bandwidth_bytes = options.bandwidth_bytes.saturating_mul(copies);
            budget::ensure_fits(
                &options.memory_limit,
                topo,
                Some(m),
                bandwidth_bytes,
                "the bandwidth buffers",
            )?;
        }
    }
    let threads = threads_per_node(placer, &cpu_nodes, options.max_threads)?;
    let mut probe = Probe {
        placer,
        progress,
        effort: options.effort(),
        report: MatrixReport {
            cpu_nodes,
            memory_nodes,
            options: options.clone(),
            clock: clock::read(),
            latency: Vec::new(),
            latency_huge: Vec::new(),
            read: Vec::new(),
            write: Vec::new(),
            copy: Vec::new(),
            sweeps: Vec::new(),
            cross: Vec::new(),
            buffers: PageCheck::default(),
            threads: ThreadCheck::default(),
            notes: notes(topo, options),
            counters_unavailable: CounterGroup::hardware().err().map(|e| e.reason()),
        },
    };
    if options.latency {
        probe.report.latency = probe.latency_matrix(HugePages::Never)?;
        if options.huge_pages {
            probe.report.latency_huge = probe.latency_matrix(HugePages::Transparent)?;
        }
    }
    if options.bandwidth {
        probe.bandwidth_matrices(&threads)?;
    }
    Ok(probe.report)
}

/// Threads each CPU node may use: its allowed CPUs, at most `max`.
fn threads_per_node(placer: &Placer, nodes: &[NodeId], max: Option<usize>) -> Result<Vec<usize>> {
    nodes
        .iter()
        .map(|&n| {
            let cpus = placer.cpus_of_node(n)?.len();
            Ok(max.map_or(cpus, |m| m.min(cpus)))
        })
        .collect()
}

fn notes(topo: &Topology, options: &MatrixOptions) -> Vec<String> {
    let mut notes = Vec::new();
    if topo.memory_nodes().len() < 2 {
        notes.push(
            "one memory node: every pair is local; remote latency, remote bandwidth and cross traffic need two nodes"
                .into(),
        );
    }
    let largest_cache = topo.caches.iter().map(|c| c.size_bytes).max().unwrap_or(0);
    let smallest = match (options.latency, options.bandwidth) {
        (true, true) => options.latency_bytes.min(options.bandwidth_bytes),
        (true, false) => options.latency_bytes,
        _ => options.bandwidth_bytes,
    };
    if smallest < 2 * largest_cache {
        notes.push(format!(
            "a buffer ({}) is less than twice the largest cache sysfs reports ({}); if that cache is real, part of the traffic hits it and the figures are too good",
            human_bytes(smallest),
            human_bytes(largest_cache)
        ));
    }
    notes
}

/// `columns[m][c]` into `rows[c][m]`.
fn transpose<T>(columns: Vec<Vec<T>>) -> Vec<Vec<T>> {
    let rows = columns.first().map_or(0, Vec::len);
    let mut out: Vec<Vec<T>> = (0..rows)
        .map(|_| Vec::with_capacity(columns.len()))
        .collect();
    for column in columns {
        for (row, value) in out.iter_mut().zip(column) {
            row.push(value);
        }
    }
    out
}

/// A probe under way: where it places things, how hard it measures, and
/// the report it fills.
struct Probe<'a> {
    placer: &'a Placer,
    progress: &'a dyn Progress,
    effort: Effort,
    report: MatrixReport,
}

impl Probe<'_> {
    fn count_pages(&mut self, check: PageCheck) {
        self.report.buffers.pages += check.pages;
        self.report.buffers.on_node += check.on_node;
    }

    fn count_threads(&mut self, check: ThreadCheck) {
        self.report.threads = self.report.threads.merge(check);
    }

    /// One row per CPU node: its latency to every memory node, one chase
    /// buffer at a time.
    fn latency_matrix(&mut self, huge_pages: HugePages) -> Result<Vec<Vec<Latency>>> {
        let pages = match huge_pages {
            HugePages::Never => "base pages",
            _ => "huge pages",
        };
        let options = self.report.options.clone();
        let mut columns = Vec::with_capacity(self.report.memory_nodes.len());
        for m in self.report.memory_nodes.clone() {
            self.progress
                .phase(&format!("latency to node {m} ({pages})"));
            let seed = options.seed ^ u64::from(m);
            let placement = Placement::OnNode(m);
            let buffer = ChaseBuffer::with_order(
                self.placer,
                options.latency_bytes,
                placement,
                huge_pages,
                seed,
                options.chase_order,
            )?;
            let mut column = Vec::with_capacity(self.report.cpu_nodes.len());
            for c in self.report.cpu_nodes.clone() {
                let l =
                    latency::measure(self.placer, c, m, &buffer, options.chase, self.report.clock)?;
                self.count_threads(l.threads);
                column.push(l);
            }
            self.count_pages(PageCheck::of(&buffer.pages_per_node()?, m));
            columns.push(column);
        }
        Ok(transpose(columns))
    }

    /// Bandwidth buffers on `m`, counted into the report's page check.
    fn buffers_on(&mut self, m: NodeId) -> Result<StreamBuffers> {
        let bytes = self.report.options.bandwidth_bytes;
        let buffers =
            StreamBuffers::new(self.placer, bytes, Placement::OnNode(m), HugePages::Never)?;
        let (pages, on_node) = buffers.pages_on(m)?;
        self.count_pages(PageCheck { pages, on_node });
        Ok(buffers)
    }

    fn record_sweep(&mut self, sweep: Sweep) {
        for p in &sweep.points {
            self.count_threads(p.thread_check);
        }
        self.report.sweeps.push(sweep);
    }

    /// The read, write and copy matrices, the sweeps, and cross traffic.
    /// Each memory node's buffers are made once (every node holds only
    /// its own) and serve its sweeps, its column and its cross traffic.
    fn bandwidth_matrices(&mut self, threads: &[usize]) -> Result<()> {
        let mut buffers = Vec::with_capacity(self.report.memory_nodes.len());
        for m in self.report.memory_nodes.clone() {
            self.progress
                .phase(&format!("placing bandwidth buffers on node {m}"));
            buffers.push(self.buffers_on(m)?);
        }
        let saturation = self.local_sweeps(threads, &mut buffers)?;
        let mut columns: [Vec<Vec<Bandwidth>>; 3] = Default::default();
        for (col, m) in self.report.memory_nodes.clone().into_iter().enumerate() {
            let mine = &mut buffers[col];
            let mut column: [Vec<Bandwidth>; 3] = Default::default();
            for (row, c) in self.report.cpu_nodes.clone().into_iter().enumerate() {
                for (k, kernel) in Kernel::ALL.into_iter().enumerate() {
                    let name = kernel.name();
                    self.progress
                        .phase(&format!("{name} bandwidth, node {c} -> node {m}"));
                    let at = saturation[row];
                    let point = self.pair_bandwidth((c, m), kernel, threads[row], at, mine)?;
                    self.count_threads(point.thread_check);
                    column[k].push(point);
                }
            }
            if self.report.options.cross_traffic {
                self.cross_column(m, &column[0], &saturation, mine)?;
            }
            for (all, mine) in columns.iter_mut().zip(column) {
                all.push(mine);
            }
        }
        let [read, write, copy] = columns;
        self.report.read = transpose(read);
        self.report.write = transpose(write);
        self.report.copy = transpose(copy);
        Ok(())
    }

    /// Quick mode: each CPU node's read sweep over its own memory (or the
    /// first memory node, for a node without memory); returns the
    /// saturating thread count of each row. Full mode sweeps every pair
    /// instead, so here it returns the rows' maxima.
    fn local_sweeps(
        &mut self,
        threads: &[usize],
        buffers: &mut [StreamBuffers],
    ) -> Result<Vec<usize>> {
        let o = &self.report.options;
        if o.sweep_every_pair || o.fixed_threads {
            return Ok(threads.to_vec());
        }
        let mut saturation = Vec::with_capacity(threads.len());
        for (row, c) in self.report.cpu_nodes.clone().into_iter().enumerate() {
            let col = self
                .report
                .memory_nodes
                .iter()
                .position(|&m| m == c)
                .unwrap_or(0);
            let m = self.report.memory_nodes[col];
            self.progress
                .phase(&format!("thread sweep, node {c} reading node {m}"));
            let pair = (c, m);
            let sweep = bandwidth::sweep(
                self.placer,
                pair,
                threads[row],
                &mut buffers[col],
                Kernel::Read,
                self.effort,
            )?;
            saturation.push(sweep.saturated_at);
            self.record_sweep(sweep);
        }
        Ok(saturation)
    }

    /// One matrix entry: in full mode the saturated point of the pair's
    /// own sweep, in quick mode a measurement at the row's saturating count.
    fn pair_bandwidth(
        &mut self,
        pair: (NodeId, NodeId),
        kernel: Kernel,
        max_threads: usize,
        saturated_at: usize,
        buffers: &mut StreamBuffers,
    ) -> Result<Bandwidth> {
        let o = &self.report.options;
        if !o.sweep_every_pair || o.fixed_threads {
            return bandwidth::measure(
                self.placer,
                pair,
                saturated_at,
                buffers,
                kernel,
                self.effort,
            );
        }
        let sweep = bandwidth::sweep(self.placer, pair, max_threads, buffers, kernel, self.effort)?;
        let point = sweep.saturated().cloned();
        self.record_sweep(sweep);
        point.ok_or_else(|| {
            ProbeError::Nothing(format!("no sweep point for node {} -> {}", pair.0, pair.1))
        })
    }

    /// Read bandwidth of every pair (c, m), c != m, beside a second node's
    /// reads of m; `reads[row]` is the pair's bandwidth alone.
    fn cross_column(
        &mut self,
        m: NodeId,
        reads: &[Bandwidth],
        saturation: &[usize],
        buffers: &mut StreamBuffers,
    ) -> Result<()> {
        let topo = self.placer.topology().clone();
        let cpu_nodes = self.report.cpu_nodes.clone();
        let mut theirs: Option<StreamBuffers> = None;
        for (row, &c) in cpu_nodes.iter().enumerate() {
            let partner = bandwidth::cross_node(&topo, &cpu_nodes, (c, m));
            let partner_row = partner.and_then(|p| cpu_nodes.iter().position(|&n| n == p));
            let (Some(partner), Some(partner_row), Some(alone)) =
                (partner, partner_row, reads.get(row))
            else {
                continue;
            };
            if c == m {
                continue;
            }
            if theirs.is_none() {
                theirs = Some(self.buffers_on(m)?);
            }
            let Some(their_buffers) = theirs.as_ref() else {
                continue;
            };
            self.progress.phase(&format!(
                "cross traffic: node {c} -> node {m} beside node {partner}"
            ));
            let cross = CrossFlow {
                seats: team::seats_on_node(self.placer, partner, saturation[partner_row].max(1))?,
                buffers: their_buffers,
            };
            let result = bandwidth::with_cross_traffic(
                self.placer,
                (c, m),
                alone.threads,
                buffers,
                cross,
                self.effort,
                alone.gbs,
            )?;
            self.count_threads(result.thread_check);
            self.report.cross.push(result);
        }
        Ok(())
    }
}
