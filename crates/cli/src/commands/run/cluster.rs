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

use crate::commands::cluster::args::ClusterJoinArgs;
use crate::commands::cluster::local::run_once;
use crate::commands::cluster::report::SinkOutput;

const PROCESSES: usize = 2;

/// What the section measured.
#[derive(Serialize)]
pub struct ClusterSummary {
    /// Local processes that ran the join.
    pub processes: usize,
    /// Rows of R over all processes.
    pub left_rows: u64,
    /// Rows of S over all processes.
    pub right_rows: u64,
    /// Rows of the join's result.
    pub result_rows: u64,
    /// The system's join span (the slowest process's), in seconds.
    pub span_seconds: f64,
    /// Intra-node gain of each process.
    pub gains: Vec<f64>,
    /// Whether the result equals numakit's single-machine join.
    pub verified: bool,
}

/// The section's options: R of `rows` rows (a primary key), S of four
/// times as many (foreign keys), 16 buckets, verified; everything else is
/// `cluster join`'s own default (parsed, so that the two cannot drift).
pub fn args(rows: u64) -> Result<ClusterJoinArgs> {
    #[derive(clap::Parser)]
    struct Section {
        #[command(flatten)]
        join: ClusterJoinArgs,
    }
    let (r, s) = (rows.to_string(), rows.saturating_mul(4).to_string());
    let local = PROCESSES.to_string();
    let line = [
        "run",
        "--local",
        &local,
        "--left-rows",
        &r,
        "--right-rows",
        &s,
        "--sink",
        "sum",
        "--buckets",
        "16",
        "--verify",
    ];
    Ok(<Section as clap::Parser>::try_parse_from(line)?.join)
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
    match run_once(&args(rows_for(size_mib))?, PROCESSES, SendOrder::Ring, mode) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_takes_cluster_joins_defaults_but_its_sizes() {
        let a = args(1000).unwrap();
        assert_eq!((a.rows_r, a.rows_s, a.buckets), (1000, 4000, 16));
        assert_eq!(a.local, Some(PROCESSES));
        assert!(a.verify && a.sink.as_deref() == Some("sum"));
        assert!(a.peer_timeout > 0.0 && a.connect_timeout > 0.0);
    }
}
