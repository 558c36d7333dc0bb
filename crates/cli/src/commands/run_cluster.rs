//! The main job's distributed-join section: two processes of this
//! program, started on this machine and talking over loopback, join small
//! generated relations (hash distribution, ring order), and the sink
//! checks the result against numakit's single-machine join. Where two
//! processes cannot talk (no loopback, no way to start a copy of this
//! program), the section is skipped with the reason; a wrong result is
//! never skipped. `numakit cluster join` is the real thing.

use anyhow::Result;
use numakit_cluster::SendOrder;
use numakit_placement::PlacementMode;
use serde::Serialize;

use crate::cluster_args::ClusterJoinArgs;
use crate::commands::cluster_local::run_once;
use crate::commands::cluster_report::SinkOutput;

const PROCESSES: usize = 2;

/// What the section measured.
#[derive(Serialize)]
pub struct ClusterSummary {
    pub processes: usize,
    pub left_rows: u64,
    pub right_rows: u64,
    pub result_rows: u64,
    pub span_seconds: f64,
    /// Intra-node gain of each process.
    pub gains: Vec<f64>,
    pub verified: bool,
}

/// The section's options: R of `rows` rows (a primary key), S of four
/// times as many (foreign keys).
pub fn args(rows: u64) -> ClusterJoinArgs {
    ClusterJoinArgs {
        local: Some(PROCESSES),
        hostfile: None,
        addresses: None,
        process: None,
        port: 7400,
        rows_r: rows,
        rows_s: rows * 4,
        keys: "foreign-key".into(),
        zipf: 1.0,
        seed: 42,
        left: None,
        right: None,
        key: "key".into(),
        payload: None,
        predicate: "eq".into(),
        order: "ring".into(),
        sink: Some("sum".into()),
        broadcast: "auto".into(),
        threads: None,
        buckets: 16,
        block_rows: 65_536,
        verify: true,
        sweep: false,
        reps: 1,
        chart: None,
        connect_timeout: 20.0,
        peer_timeout: 10.0,
        fail_part_write: None,
        task_delay_ms: 0,
    }
}

/// Rows of R for a main job over `size_mib` MiB (20K to 250K).
pub fn rows_for(size_mib: u64) -> u64 {
    (size_mib * 1000).clamp(20_000, 250_000)
}

/// Runs the section: `Ok(Err(why))` when it cannot run here, `Err` when
/// it ran and the result is wrong.
pub fn cluster(size_mib: u64, mode: PlacementMode) -> Result<Result<ClusterSummary, String>> {
    if let Err(e) = numakit_cluster::launch::check_loopback() {
        return Ok(Err(e.to_string()));
    }
    match run_once(&args(rows_for(size_mib)), PROCESSES, SendOrder::Ring, mode) {
        Ok(sink) => summarize(&sink).map(Ok),
        Err(e) => {
            let why = format!("{e:#}");
            if why.contains("wrong result") {
                return Err(e);
            }
            Ok(Err(why))
        }
    }
}

fn summarize(s: &SinkOutput) -> Result<ClusterSummary> {
    anyhow::ensure!(
        s.verified == Some(true),
        "the distributed join was not verified: {}",
        s.verify_note
    );
    Ok(ClusterSummary {
        processes: s.processes,
        left_rows: s.left_rows,
        right_rows: s.right_rows,
        result_rows: s.result.rows,
        span_seconds: s.span_seconds,
        gains: s.per_process.iter().map(|p| p.intra_node_gain).collect(),
        verified: true,
    })
}

/// The section's lines.
pub fn lines(c: &ClusterSummary) -> Vec<String> {
    vec![
        format!(
            "9. distributed join: {} processes over loopback (timely), {} x {} rows by hash distribution in ring order: {} result rows, join span {:.3} s, intra-node gain {}; the same as numakit's single-machine join (verified)",
            c.processes,
            c.left_rows,
            c.right_rows,
            c.result_rows,
            c.span_seconds,
            c.gains.iter().map(|g| format!("{g:.2}")).collect::<Vec<_>>().join(" / ")
        ),
        "   (numakit cluster join --local 4 --verify; --hostfile for machines; --order ring,all-at-once; --sweep)".into(),
    ]
}
