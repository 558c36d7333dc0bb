//! A whole process of the distributed join: join, deliver this process's
//! rows (the caller writes them, for instance to a file part), report to
//! the sink (process 0), close the connections. The sink merges every
//! process's partial result and metrics into the join's result
//! (Chakraborty §IV-B's result collection) and collects the records of
//! the delivered parts, so that the caller can publish them only when
//! every part is complete; the other processes return their own report.
//!
//! This module does not write anything itself; delivering is the
//! caller's closure.

use std::time::Duration;

use numakit_ops::Relation;
use numakit_pool::Pool;
use serde::{Deserialize, Serialize};

use crate::error::{ClusterError, Result};
use crate::join::{join, JoinSpec};
use crate::message::{Message, ProcessReport};
use crate::metrics::{system_span, ProcessMetrics};
use crate::sink::{Output, PartOutcome, PartRecord, PartialResult, ResultRow};
use crate::transport::Transport;

/// The join's result as the sink has it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusterResult {
    /// Every process's partial result merged: the join's count, checksum
    /// and sample.
    pub result: PartialResult,
    /// Every process's metrics, in process order.
    pub processes: Vec<ProcessMetrics>,
    /// The system's join span (the slowest process).
    pub span_seconds: f64,
    /// Every process's delivered part, in process order (empty when the
    /// rows were not delivered anywhere).
    pub parts: Vec<PartRecord>,
}

/// What one process ends with.
pub struct ProcessRun {
    /// This process's own report: its partial result, metrics and part.
    pub own: ProcessReport,
    /// This process's rows ([`Output::Rows`] only).
    pub rows: Vec<Vec<ResultRow>>,
    /// At the sink: the whole join's result.
    pub cluster: Option<ClusterResult>,
}

/// Delivers a process's rows after its join: `None` when they go nowhere,
/// else the delivered part or why it failed.
pub type Deliver<'a> = dyn FnMut(&[Vec<ResultRow>]) -> Option<PartOutcome> + 'a;

/// Runs this process's part of the join on `transport` and closes it,
/// waiting at most `finish_timeout` for the peers to close theirs.
///
/// # Examples
///
/// A join of one process (the [`Solo`](crate::transport::solo::Solo)
/// transport: no peers): R holds keys 0..100 once and S holds them twice,
/// so the equi-join has 200 rows and the band join `|r - s| <= 1` has 2 x
/// 298 (each key matches itself and its neighbours, 0 and 99 one fewer).
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// use numakit_cluster::transport::solo::Solo;
/// use numakit_cluster::{run_process, JoinSpec, Output, Predicate};
/// use numakit_ops::{Relation, Tuple};
/// use numakit_placement::PlacementMode;
/// use numakit_pool::PoolBuilder;
///
/// let topology = Arc::new(numakit_topology::discover()?);
/// let pool = PoolBuilder::new(topology).placement(PlacementMode::Off).threads(2).build()?;
/// let r: Vec<Tuple> = (0..100).map(|k| Tuple::new(k, k)).collect();
/// let s: Vec<Tuple> = (0..200).map(|i| Tuple::new(i % 100, i)).collect();
/// let (left, right) = (Relation::from_tuples(&pool, &r)?, Relation::from_tuples(&pool, &s)?);
///
/// for (predicate, rows) in [(Predicate::Equal, 200), (Predicate::Band { width: 1 }, 2 * 298)] {
///     let mut spec = JoinSpec::new(predicate);
///     spec.output = Output::Count;
///     let solo = Box::new(Solo::new());
///     let run = run_process(&pool, solo, &left, &right, &spec, Duration::from_secs(5))?;
///     let cluster = run.cluster.expect("the only process is the sink");
///     assert_eq!(cluster.result.rows, rows, "{}", predicate.describe());
///     assert_eq!(cluster.processes[0].result_rows, rows);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run_process(
    pool: &Pool,
    transport: Box<dyn Transport<Message>>,
    left: &Relation,
    right: &Relation,
    spec: &JoinSpec,
    finish_timeout: Duration,
) -> Result<ProcessRun> {
    run_process_delivering(
        pool,
        transport,
        left,
        right,
        spec,
        finish_timeout,
        &mut |_| None,
    )
}

/// [`run_process`], with this process's rows handed to `deliver` after
/// its join and before its report: the report carries the part's record
/// (or failure) to the sink, whose merge fails when any part failed. A
/// process whose own part failed still reports (so the sink learns it at
/// once), then returns the failure.
pub fn run_process_delivering(
    pool: &Pool,
    mut transport: Box<dyn Transport<Message>>,
    left: &Relation,
    right: &Relation,
    spec: &JoinSpec,
    finish_timeout: Duration,
    deliver: &mut Deliver<'_>,
) -> Result<ProcessRun> {
    let mut outcome = match join(pool, transport.as_mut(), left, right, spec) {
        Ok(outcome) => outcome,
        Err(e) => {
            transport.give_up(&e.to_string());
            return Err(e);
        }
    };
    outcome.report.part = deliver(&outcome.rows);
    let me = transport.process();
    let processes = transport.processes();
    if me != 0 {
        let report = Message::Report(Box::new(outcome.report.clone()));
        transport.send(0, report)?;
    }
    let (_, late) = transport.finish(finish_timeout)?;
    if let Some(Err(why)) = &outcome.report.part {
        return Err(ClusterError::Part {
            process: me,
            why: why.clone(),
        });
    }
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
    let parts = parts(&reports)?;
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
        parts,
    })
}

/// Every process's part: all delivered, or none delivered anywhere; a
/// failed or missing part is an error naming its process.
fn parts(reports: &[ProcessReport]) -> Result<Vec<PartRecord>> {
    if reports.iter().all(|r| r.part.is_none()) {
        return Ok(Vec::new());
    }
    reports
        .iter()
        .map(|r| match &r.part {
            Some(Ok(part)) if part.process == r.process => Ok(part.clone()),
            Some(Ok(part)) => Err(ClusterError::Part {
                process: r.process,
                why: format!("it reported process {}'s part", part.process),
            }),
            Some(Err(why)) => Err(ClusterError::Part {
                process: r.process,
                why: why.clone(),
            }),
            None => Err(ClusterError::Part {
                process: r.process,
                why: "it delivered no part (started with another --sink?)".into(),
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(process: usize, part: Option<PartOutcome>) -> ProcessReport {
        ProcessReport {
            process,
            result: PartialResult {
                rows: 10,
                checksum: 1,
                sample: Vec::new(),
            },
            metrics: ProcessMetrics {
                process,
                ..ProcessMetrics::default()
            },
            part,
        }
    }

    fn record(process: usize) -> PartRecord {
        PartRecord {
            process,
            file: format!("part-{process}.csv"),
            rows: 10,
            checksum: 1,
            bytes: 100,
        }
    }

    #[test]
    fn the_sink_merges_parts_only_when_every_one_is_there() {
        let all = vec![
            report(1, Some(Ok(record(1)))),
            report(0, Some(Ok(record(0)))),
        ];
        let merged = merge(all, 2, Output::Rows).unwrap();
        assert_eq!(merged.result.rows, 20);
        assert_eq!(merged.parts, vec![record(0), record(1)]);
        let none = vec![report(0, None), report(1, None)];
        assert!(merge(none, 2, Output::Rows).unwrap().parts.is_empty());
        let failed = vec![
            report(0, Some(Ok(record(0)))),
            report(1, Some(Err("disk full".into()))),
        ];
        let err = merge(failed, 2, Output::Rows).unwrap_err();
        assert!(
            matches!(err, ClusterError::Part { process: 1, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("disk full"), "{err}");
        let missing = vec![report(0, Some(Ok(record(0)))), report(1, None)];
        let err = merge(missing, 2, Output::Rows).unwrap_err();
        assert!(
            matches!(err, ClusterError::Part { process: 1, .. }),
            "{err}"
        );
        let short = vec![report(0, Some(Ok(record(0))))];
        assert!(merge(short, 2, Output::Rows).is_err());
    }
}
