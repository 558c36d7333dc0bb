//! What `numakit cluster join` reports: each process's metrics
//! (Chakraborty §V) and, at the sink, the whole join's result, as tables
//! and JSON. The local launcher reads the sink's JSON back, so these
//! types go both ways.

use numakit_cluster::metrics::ProcessMetrics;
use numakit_cluster::{ClusterResult, JoinSpec, Output, PartialResult};
use serde::{Deserialize, Serialize};

use crate::render::format::{bytes, table};

/// One process's metrics and what it wrote.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProcessOutput {
    /// Loads (computation, sending, receiving), span and result rows.
    #[serde(flatten)]
    pub metrics: ProcessMetrics,
    /// Total load / join span.
    pub intra_node_gain: f64,
    /// Result files it wrote (`--sink files:DIR`).
    pub files: Vec<String>,
}

impl ProcessOutput {
    /// The output of the process that sent `report` and wrote `files`.
    pub fn of(report: &numakit_cluster::message::ProcessReport, files: Vec<String>) -> Self {
        Self {
            intra_node_gain: report.metrics.intra_node_gain(),
            metrics: report.metrics.clone(),
            files,
        }
    }
}

/// The sink's report of the whole join.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SinkOutput {
    /// Processes (P) in the join.
    pub processes: usize,
    /// The join predicate (`eq`, `band:W`, `lt`).
    pub predicate: String,
    /// Hash distribution or broadcast of which relation.
    pub distribution: String,
    /// The send order (ring or all-at-once).
    pub order: String,
    /// Bytes of peers' pieces each process may hold (`--receive-budget`;
    /// `None`: unbounded).
    #[serde(default)]
    pub receive_budget: Option<u64>,
    /// What the sink keeps: count, checksum, a sample or the rows.
    pub output: Output,
    /// Rows of R over all processes.
    pub left_rows: u64,
    /// Rows of S over all processes.
    pub right_rows: u64,
    /// The merged result (rows, checksum, sample).
    pub result: PartialResult,
    /// The system's join span: the slowest process's.
    pub span_seconds: f64,
    /// Every process's output, by process index.
    pub per_process: Vec<ProcessOutput>,
    /// Checked against numakit's single-machine join (`--verify`).
    pub verified: Option<bool>,
    /// What `--verify` compared, or why it was not run.
    pub verify_note: String,
}

impl SinkOutput {
    /// The sink's report of `cluster`, the join of `spec` over `processes`.
    pub fn new(spec: &JoinSpec, processes: usize, cluster: &ClusterResult) -> Self {
        let distribution = if spec.predicate.is_equi() {
            format!(
                "hash distribution (all-to-all personalized), {} frames",
                spec.frames.name()
            )
        } else {
            format!(
                "broadcast of {} (all-to-all broadcast)",
                crate::render::format::name_of(&spec.broadcast)
            )
        };
        Self {
            processes,
            predicate: spec.predicate.describe(),
            distribution,
            order: spec.order.name().to_string(),
            receive_budget: spec.receive_budget,
            output: spec.output,
            left_rows: cluster.processes.iter().map(|p| p.left_rows).sum(),
            right_rows: cluster.processes.iter().map(|p| p.right_rows).sum(),
            result: cluster.result.clone(),
            span_seconds: cluster.span_seconds,
            per_process: cluster
                .processes
                .iter()
                .map(|m| ProcessOutput {
                    intra_node_gain: m.intra_node_gain(),
                    metrics: m.clone(),
                    files: Vec::new(),
                })
                .collect(),
            verified: None,
            verify_note: String::new(),
        }
    }
}

fn mb(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / 1e6)
}

/// The per-process table (Chakraborty Figure 5's quantities).
pub fn metrics_table(per_process: &[ProcessOutput]) -> String {
    let mut rows = vec![[
        "process",
        "threads",
        "R rows",
        "S rows",
        "result rows",
        "compute s",
        "send s",
        "receive s",
        "span s",
        "gain",
        "sent MB",
        "received MB",
    ]
    .map(String::from)
    .to_vec()];
    for p in per_process {
        let m = &p.metrics;
        rows.push(vec![
            m.process.to_string(),
            m.threads.to_string(),
            m.left_rows.to_string(),
            m.right_rows.to_string(),
            m.result_rows.to_string(),
            format!("{:.3}", m.compute_seconds),
            format!("{:.3}", m.send_seconds),
            format!("{:.3}", m.receive_seconds),
            format!("{:.3}", m.span_seconds),
            format!("{:.2}", p.intra_node_gain),
            mb(m.bytes_sent),
            mb(m.bytes_received),
        ]);
    }
    table(&rows)
}

/// The backpressure of a receive budget, per process: how often and how
/// long its pieces waited for credit, and the most bytes of its peers'
/// pieces it held.
pub fn backpressure_table(budget: u64, per_process: &[ProcessOutput]) -> String {
    let mut rows = vec![vec![
        "process".to_string(),
        "sender waits".to_string(),
        "wait s".to_string(),
        format!("peak held (budget {})", bytes(budget)),
    ]];
    for p in per_process {
        let m = &p.metrics;
        rows.push(vec![
            m.process.to_string(),
            m.sender_waits.to_string(),
            format!("{:.3}", m.sender_wait_seconds),
            bytes(m.peak_held_bytes),
        ]);
    }
    table(&rows)
}

/// The result in words.
pub fn result_line(output: Output, r: &PartialResult) -> String {
    match output {
        Output::Count => format!("{} result rows", r.rows),
        _ => format!("{} result rows, checksum {:#018x}", r.rows, r.checksum),
    }
}

/// The sink's report as text: result, per-process table, sample, verdict.
pub fn render_sink(s: &SinkOutput) -> String {
    let mut out = format!(
        "distributed join of R ({} rows) and S ({} rows) over {} processes: {}, {}, {} order\n{}\n\n{}\nsystem join span {:.3} s (the slowest process); gain = (compute + send + receive) / span",
        s.left_rows,
        s.right_rows,
        s.processes,
        s.predicate,
        s.distribution,
        s.order,
        result_line(s.output, &s.result),
        metrics_table(&s.per_process),
        s.span_seconds
    );
    if let Some(budget) = s.receive_budget {
        out.push_str(&format!(
            "\n\nreceive budget {} per process (senders wait for credit):\n{}",
            bytes(budget),
            backpressure_table(budget, &s.per_process)
        ));
    }
    if !s.result.sample.is_empty() {
        out.push_str("\nsample (smallest rows: key, left payload, right payload):");
        for r in &s.result.sample {
            out.push_str(&format!("\n  {} {} {}", r.key, r.left, r.right));
        }
    }
    match s.verified {
        Some(true) => out.push_str(&format!("\nverified: {}", s.verify_note)),
        Some(false) => out.push_str(&format!("\nWRONG: {}", s.verify_note)),
        None => {}
    }
    out
}

/// One (non-sink) process's report as text.
pub fn render_process(p: &ProcessOutput, processes: usize) -> String {
    let mut out = format!(
        "process {} of {processes}: {} result rows, join span {:.3} s, intra-node gain {:.2} (the sink, process 0, has the whole result)",
        p.metrics.process, p.metrics.result_rows, p.metrics.span_seconds, p.intra_node_gain
    );
    for f in &p.files {
        out.push_str(&format!("\nwrote {f}"));
    }
    out
}
