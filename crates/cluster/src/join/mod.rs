//! One process's part of the distributed join (Chakraborty §II-IV).
//!
//! Equi-joins go by hash distribution: every process cuts R and S by
//! owner and bucket and sends each owner its pieces (all-to-all
//! personalized exchange); an owner builds a bucket's table once every
//! sender's R piece of it is in and probes S pieces as they arrive, or
//! (per-sender frames, [`FrameMode::PerSender`]) builds a table of each
//! sender's R piece as it arrives and probes every S piece against each
//! of the bucket's tables exactly once.
//! Non-equi joins broadcast one relation (the smaller, as the paper
//! does): every process sorts the relation that stays, and joins each
//! arriving block of the other against it. In both, a process joins its
//! own rows first, sends in ring order or all at once, turns every
//! arriving piece into a pool task immediately, and needs no global
//! barrier. Why build-then-probe for equi-joins: each S row is probed
//! once against one table, so the work is that of a single-machine hash
//! join (per-sender frames probe every S row against up to P tables, in
//! exchange for building before the slowest sender's R piece is in);
//! sending R before S keeps the tables ready when S arrives.
//!
//! With a receive budget ([`JoinSpec::receive_budget`]) the pieces a
//! process holds from its peers are bounded: senders wait for credit
//! that the receiver gives back as it releases pieces
//! ([`crate::credit`]).
//!
//! This module runs the join of one process on a [`Transport`] that
//! carries its [`Message`]s; the sink's gathering of results is
//! [`crate::run`]'s.

mod drive;
pub mod send;
mod setup;
pub mod work;

use std::time::{Duration, Instant};

use numakit_ops::Relation;
use numakit_pool::Pool;
use serde::{Deserialize, Serialize};

use crate::error::{ClusterError, Result};
use crate::frames::FrameMode;
use crate::message::{Message, ProcessReport, Side};
use crate::metrics::ProcessMetrics;
use crate::predicate::Predicate;
use crate::schedule::SendOrder;
use crate::sink::{Collector, Output, PartialResult, ResultRow};
use crate::transport::Transport;
use work::TaskEnv;

/// How the join runs. Every process of a join must use the same spec.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JoinSpec {
    /// Which pairs of R x S match; equality goes by hash distribution,
    /// the others by broadcast.
    pub predicate: Predicate,
    /// The order in which each process sends to its peers.
    pub order: SendOrder,
    /// Buckets per process (equi-joins): the unit of a piece and a task.
    pub buckets: u32,
    /// How a receiver turns a bucket's R pieces into tables
    /// (equi-joins). It is the receiver's own affair: processes that
    /// differ in it still join correctly, so the fingerprint leaves it
    /// out.
    #[serde(default)]
    pub frames: FrameMode,
    /// Rows per block of the broadcast relation (non-equi joins).
    pub block_rows: usize,
    /// The relation non-equi joins broadcast.
    pub broadcast: Side,
    /// What the result keeps beyond its row count.
    pub output: Output,
    /// Extra time per task, to make a join slow on purpose (tests).
    pub task_delay: Duration,
    /// Bytes of peers' pieces each process may hold received and not yet
    /// processed (row bytes; see [`crate::credit`]): senders wait for
    /// credit instead. `None`: unbounded. Every process must use the
    /// same, so the fingerprint includes it.
    #[serde(default)]
    pub receive_budget: Option<u64>,
}

impl JoinSpec {
    /// The defaults for `predicate`: ring order, 64 buckets, all-senders
    /// frames, blocks of 64K rows, R broadcast, a checksummed result.
    pub fn new(predicate: Predicate) -> Self {
        Self {
            predicate,
            order: SendOrder::Ring,
            buckets: 64,
            frames: FrameMode::AllSenders,
            block_rows: 65_536,
            broadcast: Side::Left,
            output: Output::Checksum,
            task_delay: Duration::ZERO,
            receive_budget: None,
        }
    }

    /// A number that differs between specs that would join differently
    /// (processes compare it when they connect).
    pub fn fingerprint(&self) -> u64 {
        let mut text = format!(
            "{:?}|{:?}|{}|{}|{:?}|{:?}",
            self.predicate, self.order, self.buckets, self.block_rows, self.broadcast, self.output
        );
        if let Some(budget) = self.receive_budget {
            text.push_str(&format!("|budget {budget}"));
        }
        text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    fn check(&self) -> Result<()> {
        if self.receive_budget == Some(0) {
            return Err(ClusterError::InvalidArgument(
                "a receive budget must be at least 1 byte".into(),
            ));
        }
        if self.buckets == 0 || self.block_rows == 0 {
            return Err(ClusterError::InvalidArgument(
                "buckets and block rows must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

/// What a process's join produced.
pub struct ProcessOutcome {
    /// This process's partial result and metrics (its part not yet
    /// delivered).
    pub report: ProcessReport,
    /// The rows themselves, in blocks ([`Output::Rows`] only).
    pub rows: Vec<Vec<ResultRow>>,
    /// Other processes' reports that arrived during the join.
    pub early_reports: Vec<ProcessReport>,
}

/// Joins this process's `left` and `right` with every peer's.
pub fn join(
    pool: &Pool,
    transport: &mut dyn Transport<Message>,
    left: &Relation,
    right: &Relation,
    spec: &JoinSpec,
) -> Result<ProcessOutcome> {
    spec.check()?;
    let (me, processes) = (transport.process(), transport.processes());
    let start = Instant::now();
    let prepared = if spec.predicate.is_equi() {
        setup::equi(pool, me, processes, left, right, spec)?
    } else {
        setup::broadcast(pool, me, processes, left, right, spec)?
    };
    let collector = Collector::new(spec.output);
    let env = TaskEnv {
        predicate: spec.predicate,
        collector: &collector,
        broadcast: spec.broadcast,
        stationary: prepared.stationary,
        task_delay: spec.task_delay,
        cancelled: std::sync::atomic::AtomicBool::new(false),
    };
    let driven = drive::drive(
        pool,
        transport,
        prepared.frames,
        prepared.outbox,
        prepared.local,
        &env,
    )?;
    let span_seconds = start.elapsed().as_secs_f64();
    drop(env);
    let (result, rows): (PartialResult, _) = collector.finish();
    let mut metrics = ProcessMetrics {
        process: me,
        threads: pool.workers(),
        left_rows: left.len() as u64,
        right_rows: right.len() as u64,
        result_rows: result.rows,
        pieces_received: driven.pieces_received,
        compute_seconds: prepared.compute_seconds + driven.compute_seconds,
        span_seconds,
        sender_waits: driven.sender_waits,
        sender_wait_seconds: driven.sender_wait_seconds,
        peak_held_bytes: driven.peak_held_bytes,
        ..ProcessMetrics::default()
    };
    metrics.set_links(transport.traffic(), transport.codec_seconds());
    Ok(ProcessOutcome {
        report: ProcessReport {
            process: me,
            result,
            metrics,
            part: None,
        },
        rows,
        early_reports: driven.reports,
    })
}
