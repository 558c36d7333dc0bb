//! Before the exchange starts: a process cuts its rows for the peers and
//! decides what it can join at once.
//!
//! Equi-joins: R and S are cut by owner and bucket; the process's own
//! pieces go straight into its frames (a "message from itself", kept in
//! the spec's [`crate::frames::FrameMode`]), the others into the outbox,
//! R before S. Broadcasts: the stationary relation
//! is sorted with numakit's sort; the broadcast relation is cut into
//! blocks, joined locally at once (Algorithm 1's R_i ⋈ S_i) and queued for
//! every peer.

use std::sync::Arc;
use std::time::Instant;

use numakit_ops::timing::Silent;
use numakit_ops::Relation;
use numakit_pool::Pool;

use crate::credit::SendCredits;
use crate::error::Result;
use crate::frames::{Frames, Work};
use crate::join::send::{Outbox, Pieces};
use crate::join::work::Stationary;
use crate::join::JoinSpec;
use crate::message::{Piece, Side};
use crate::partition::{blocks, cut, Partitioning};

/// A process ready to exchange.
pub(super) struct Prepared {
    pub frames: Frames,
    pub outbox: Outbox,
    /// Work on this process's own rows, to start at once.
    pub local: Vec<Work>,
    pub stationary: Arc<Stationary>,
    pub compute_seconds: f64,
}

/// The peers' receive credit under `spec`'s budget.
fn credits(spec: &JoinSpec, processes: usize) -> SendCredits {
    match spec.receive_budget {
        Some(budget) => SendCredits::bounded(budget, processes),
        None => SendCredits::unbounded(),
    }
}

/// Prepares a hash-distributed equi-join.
pub(super) fn equi(
    pool: &Pool,
    me: usize,
    processes: usize,
    left: &Relation,
    right: &Relation,
    spec: &JoinSpec,
) -> Result<Prepared> {
    let layout = Partitioning {
        processes,
        buckets: spec.buckets,
    };
    let mut frames = Frames::equi(processes, spec.buckets, spec.frames);
    let mut outbox = Outbox::with_credits(spec.order, credits(spec, processes));
    let mut local = Vec::new();
    let mut compute_seconds = 0.0;
    for (side, relation) in [(Side::Left, left), (Side::Right, right)] {
        let cut = cut(pool, relation, &layout)?;
        compute_seconds += cut.compute_seconds;
        let mut per_peer: Vec<Vec<Option<Vec<_>>>> = cut
            .pieces
            .into_iter()
            .map(|buckets| buckets.into_iter().map(Some).collect())
            .collect();
        for (bucket, rows) in per_peer[me].iter_mut().enumerate() {
            let rows = rows.take().unwrap_or_default();
            let piece = Piece {
                side,
                bucket: bucket as u32,
                rows,
            };
            local.extend(frames.arrive(me, piece)?);
        }
        frames.end(me, side, u64::from(spec.buckets))?;
        outbox.add(side, Pieces::PerPeer(per_peer), me, processes);
    }
    Ok(Prepared {
        frames,
        outbox,
        local,
        stationary: Arc::new(Stationary::default()),
        compute_seconds,
    })
}

/// Prepares a broadcast (non-equi) join of `spec.broadcast`.
pub(super) fn broadcast(
    pool: &Pool,
    me: usize,
    processes: usize,
    left: &Relation,
    right: &Relation,
    spec: &JoinSpec,
) -> Result<Prepared> {
    let (moving, staying) = match spec.broadcast {
        Side::Left => (left, right),
        Side::Right => (right, left),
    };
    let start = Instant::now();
    let sorted = numakit_ops::sort::sort(pool, staying, &Silent)?;
    let stationary = match &sorted.sorted {
        Some(rel) => {
            Stationary::from_sorted(rel.chunks().iter().flat_map(|c| c.tuples.iter().copied()))
        }
        None => Stationary::default(),
    };
    // The sort runs on every worker: its wall time times the workers is
    // the load it put on them.
    let mut compute_seconds = start.elapsed().as_secs_f64() * pool.workers() as f64;
    let start = Instant::now();
    let blocks: Vec<Arc<Vec<_>>> = blocks(moving, spec.block_rows)
        .into_iter()
        .map(Arc::new)
        .collect();
    compute_seconds += start.elapsed().as_secs_f64();
    let mut frames = Frames::broadcast(processes, spec.broadcast);
    let mut local = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let piece = Piece {
            side: spec.broadcast,
            bucket: i as u32,
            rows: b.as_ref().clone(),
        };
        local.extend(frames.arrive(me, piece)?);
    }
    frames.end(me, spec.broadcast, blocks.len() as u64)?;
    let mut outbox = Outbox::with_credits(spec.order, credits(spec, processes));
    outbox.add(spec.broadcast, Pieces::Shared(blocks), me, processes);
    Ok(Prepared {
        frames,
        outbox,
        local,
        stationary: Arc::new(stationary),
        compute_seconds,
    })
}
