//! A whole process of the distributed join: join, report to the sink
//! (process 0), close the connections. The sink merges every process's
//! partial result and metrics into the join's result (Chakraborty §IV-B's
//! result collection); the other processes return their own report.

use std::time::Duration;

use numakit_ops::Relation;
use numakit_pool::Pool;
use serde::{Deserialize, Serialize};

use crate::error::{ClusterError, Result};
use crate::join::{join, JoinSpec};
use crate::message::{Message, ProcessReport};
use crate::metrics::{system_span, ProcessMetrics};
use crate::sink::{Output, PartialResult, ResultRow};
use crate::transport::Transport;

/// The join's result as the sink has it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusterResult {
    pub result: PartialResult,
    /// Every process's metrics, in process order.
    pub processes: Vec<ProcessMetrics>,
    /// The system's join span (the slowest process).
    pub span_seconds: f64,
}

/// What one process ends with.
pub struct ProcessRun {
    pub own: ProcessReport,
    /// This process's rows ([`Output::Rows`] only).
    pub rows: Vec<Vec<ResultRow>>,
    /// At the sink: the whole join's result.
    pub cluster: Option<ClusterResult>,
}

/// Runs this process's part of the join on `transport` and closes it,
/// waiting at most `finish_timeout` for the peers to close theirs.
pub fn run_process(
    pool: &Pool,
    mut transport: Box<dyn Transport>,
    left: &Relation,
    right: &Relation,
    spec: &JoinSpec,
    finish_timeout: Duration,
) -> Result<ProcessRun> {
    let outcome = join(pool, transport.as_mut(), left, right, spec)?;
    let me = transport.process();
    let processes = transport.processes();
    if me != 0 {
        let report = Message::Report(Box::new(outcome.report.clone()));
        transport.send(0, report)?;
    }
    let (_, late) = transport.finish(finish_timeout)?;
    let cluster = (me == 0)
        .then(|| {
            let mut reports = outcome.early_reports;
            reports.extend(late.into_iter().filter_map(|(_, m)| match m {
                Message::Report(r) => Some(*r),
                _ => None,
            }));
            reports.push(outcome.report.clone());
            merge(reports, processes, spec.output)
        })
        .transpose()?;
    Ok(ProcessRun {
        own: outcome.report,
        rows: outcome.rows,
        cluster,
    })
}

/// The sink's merge of every process's report.
fn merge(
    mut reports: Vec<ProcessReport>,
    processes: usize,
    output: Output,
) -> Result<ClusterResult> {
    reports.sort_by_key(|r| r.process);
    reports.dedup_by_key(|r| r.process);
    if reports.len() != processes {
        return Err(ClusterError::Transport(format!(
            "the sink has reports from {} of {processes} processes",
            reports.len()
        )));
    }
    let sample = match output {
        Output::Sample(n) => n,
        _ => 0,
    };
    let mut result = PartialResult::default();
    for r in &reports {
        result.merge(&r.result, sample);
    }
    let processes: Vec<ProcessMetrics> = reports.into_iter().map(|r| r.metrics).collect();
    Ok(ClusterResult {
        result,
        span_seconds: system_span(&processes),
        processes,
    })
}
