//! A join whose right (probe) side is read from its file a piece at a
//! time: only the left side is held whole. The left side's keys are coded
//! and its hash table built once; then each piece of the right file (a run
//! of its units, about [`PIECE_BYTES`] decoded) is read on the pool, coded
//! into the left's code space, probed, and its result rows gathered, and
//! the piece is dropped before the next is read. Left rows that the join
//! keeps unmatched (left outer, anti) or matched once (semi) come from the
//! table's flags after the last piece.
//!
//! So a join needs the memory of its left side, its table and one piece,
//! plus the result it keeps, rather than of both inputs and both sides'
//! relations; a counted join never holds its right side at all. The
//! kernel is the no-partition join's ([`BuildSide`]), whose table can be
//! probed piece by piece; the partitioned joins need the whole right side
//! to partition it and stay on the path that loads it.
//!
//! This module does not choose between the paths (`join_inputs` does) and
//! does not write the result: each piece's result goes to the caller.

use std::time::Instant;

use numakit_io::{Projection, Source};
use numakit_ops::join::npo::BuildSide;
use numakit_ops::join::{JoinAlgorithm, JoinKind, JoinOptions, JoinOutput, JoinResult, JoinRow};
use numakit_ops::timing::{PhaseTime, PhaseTimer, Progress};
use numakit_ops::Tuple;
use numakit_pool::Pool;

use crate::error::{FrameError, Result};
use crate::join::gather::{gather_result, keyless_rows};
use crate::join::{kernel_error, keyless, row_bytes, JoinPlan, JoinReport, JoinRequest};
use crate::keys::join::JoinCoder;
use crate::keys::PartCodes;
use crate::load::{load_units, LoadStats};
use crate::relation::{relation_of, TUPLE_BYTES};
use crate::table::{row_ref, Table};

/// Decoded bytes of the right side read at a time (at least one unit per
/// worker): large enough that the pool's phases dwarf their start-up,
/// small against the inputs of the joins this path is for.
pub const PIECE_BYTES: u64 = 16 << 20;

/// The right side of a streamed join: its file and the columns read.
pub(crate) struct StreamedRight<'a> {
    pub(crate) source: &'a Source,
    pub(crate) projection: Projection,
    /// Decoded bytes to read at a time.
    pub(crate) piece_bytes: u64,
}

/// Seconds spent in the phases every piece goes through.
#[derive(Default)]
struct PieceTimes {
    read: f64,
    code: f64,
    probe: f64,
    gather: f64,
    /// Handing results to the caller (writing them, when it writes).
    deliver: f64,
}

/// The left side, ready to be probed.
struct Prepared {
    coder: JoinCoder,
    built: BuildSide,
    /// Left rows without a key, kept for joins that keep unmatched rows.
    keyless: Vec<JoinRow>,
    left_keyless: u64,
}

fn indices(schema: &arrow_schema::Schema, names: &[String]) -> Result<Vec<usize>> {
    names
        .iter()
        .map(|n| {
            schema
                .index_of(n)
                .map_err(|_| FrameError::InvalidRequest(format!("no column {n:?} was read")))
        })
        .collect()
}

/// Codes the left keys and builds the left side's table.
fn prepare(
    pool: &Pool,
    left: &Table,
    right: &StreamedRight,
    request: &JoinRequest,
    timer: &mut PhaseTimer,
) -> Result<Prepared> {
    let lkeys = indices(left.schema(), &request.left_on)?;
    let rkeys = indices(right.projection.schema(), &request.right_on)?;
    timer.start("code keys");
    let (coder, codes) = JoinCoder::new(
        pool,
        (left, &lkeys),
        (right.projection.schema(), &rkeys),
        None,
    )?;
    timer.start("build relations");
    request
        .memory_limit
        .check("the join's left relation", left.rows() as u64 * TUPLE_BYTES)?;
    let relation = relation_of(pool, left, &codes, row_ref)?;
    let keeps_unmatched = matches!(request.kind, JoinKind::LeftOuter | JoinKind::Anti);
    let keyless_rows = if keeps_unmatched {
        keyless_rows(&codes)
    } else {
        Vec::new()
    };
    let left_keyless = keyless(&codes);
    drop(codes);
    timer.start("build");
    let built = BuildSide::build(pool, &relation)?;
    timer.stop();
    Ok(Prepared {
        coder,
        built,
        keyless: keyless_rows,
        left_keyless,
    })
}

/// Joins `left` with the right side read from its file a piece at a time;
/// `emit` takes each piece's result (not called when only counting).
/// Returns the report and the right side's read figures.
pub(crate) fn run_streamed(
    pool: &Pool,
    left: &Table,
    right: &StreamedRight,
    request: &JoinRequest,
    progress: &dyn Progress,
    emit: &mut dyn FnMut(Table) -> Result<()>,
) -> Result<(JoinReport, LoadStats)> {
    let started = Instant::now();
    let plan = JoinPlan::new(request, left.schema(), right.projection.schema())?;
    let mut timer = PhaseTimer::new(progress);
    let prepared = prepare(pool, left, right, request, &mut timer)?;
    let mut phases = timer.finish();
    let rkeys = indices(right.projection.schema(), &request.right_on)?;
    let lcols = indices(left.schema(), &plan.left_out_names())?;
    let rcols = indices(right.projection.schema(), &plan.right_out_names())?;
    let left_row = row_bytes(left, &lcols);
    let mut options = JoinOptions {
        algorithm: JoinAlgorithm::NoPartition,
        kind: request.kind,
        output: if request.count_only {
            JoinOutput::Count
        } else {
            JoinOutput::Materialize
        },
        row_limit: None,
        merge_exchange: numakit_ops::join::RING_MERGE,
    };
    let source = right.source;
    let units = source.units();
    let per_piece = piece_units(right, pool.workers());
    let pieces = units.div_ceil(per_piece);
    let mut times = PieceTimes::default();
    let (mut rows, mut right_rows, mut right_keyless, mut right_bytes) = (0u64, 0u64, 0u64, 0u64);
    for (i, start) in (0..units).step_by(per_piece).enumerate() {
        progress.phase(&format!("right piece {} of {pieces}", i + 1));
        let clock = Instant::now();
        let piece = load_units(
            pool,
            source,
            &right.projection,
            start..(start + per_piece).min(units),
        )?;
        times.read += clock.elapsed().as_secs_f64();
        right_rows += piece.rows() as u64;
        right_bytes += piece.memory_bytes();
        let clock = Instant::now();
        let codes = prepared.coder.code(pool, &piece, &rkeys)?;
        right_keyless += keyless(&codes);
        times.code += clock.elapsed().as_secs_f64();
        let clock = Instant::now();
        let per_row = row_size(left_row + row_bytes(&piece, &rcols));
        options.row_limit =
            (!request.count_only).then(|| request.memory_limit.headroom() / per_row);
        let result = probe(
            pool,
            &prepared.built,
            (&piece, &codes),
            &options,
            request,
            per_row,
        )?;
        drop(codes);
        times.probe += clock.elapsed().as_secs_f64();
        rows += result.rows;
        if !request.count_only {
            let clock = Instant::now();
            let table = gather(
                pool,
                (left, &piece),
                &plan,
                (&lcols, &rcols),
                result,
                request,
            )?;
            times.gather += clock.elapsed().as_secs_f64();
            let clock = Instant::now();
            emit(table)?;
            times.deliver += clock.elapsed().as_secs_f64();
        }
    }
    let empty_right = Table::new(
        source.path().display().to_string(),
        right.projection.schema().clone(),
        Vec::new(),
    )?;
    let mut timer = PhaseTimer::new(progress);
    if request.kind != JoinKind::Inner {
        timer.start("left-outer scan");
        let mut result = prepared.built.unmatched(pool, &options)?;
        if !prepared.keyless.is_empty() {
            result.rows += prepared.keyless.len() as u64;
            if !request.count_only {
                result.materialized.push(prepared.keyless);
            }
        }
        rows += result.rows;
        if !request.count_only && result.rows > 0 {
            let table = gather(
                pool,
                (left, &empty_right),
                &plan,
                (&lcols, &rcols),
                result,
                request,
            )?;
            emit(table)?;
        }
    }
    let tail = timer.finish();
    phases.extend(
        [
            ("code right keys", times.code),
            ("probe", times.probe),
            ("gather columns", times.gather),
            ("deliver result", times.deliver),
        ]
        .into_iter()
        .filter(|(name, _)| !request.count_only || *name == "code right keys" || *name == "probe")
        .map(|(name, seconds)| PhaseTime {
            name: name.into(),
            seconds,
        }),
    );
    phases.extend(tail);
    let report = JoinReport {
        kind: request.kind,
        algorithm: JoinAlgorithm::NoPartition,
        auto_reason: Some(format!(
            "npo, right side streamed: the left side's table is built once and the right file \
             is read and probed in {pieces} piece(s), one at a time, so the right side is never held \
             whole"
        )),
        key_encoding: prepared.coder.encoding,
        left_rows: left.rows() as u64,
        right_rows,
        left_keyless: prepared.left_keyless,
        right_keyless,
        rows,
        phases,
        right_pieces: Some(pieces),
        seconds: started.elapsed().as_secs_f64() - times.read - times.deliver,
    };
    let stats = LoadStats {
        path: source.path().display().to_string(),
        format: source.format().name(),
        rows: right_rows,
        units,
        bytes: right_bytes,
        seconds: times.read,
    };
    Ok((report, stats))
}

/// Units per piece: about the piece's bytes decoded, at least one per
/// worker.
fn piece_units(right: &StreamedRight, workers: usize) -> usize {
    let units = right.source.units().max(1);
    let bytes = right.source.decoded_bytes_hint(&right.projection).max(1);
    let by_bytes = (units as u128 * right.piece_bytes as u128 / bytes as u128) as usize;
    by_bytes.max(workers).max(1)
}

/// Bytes a kept result row costs: its row references and its columns.
fn row_size(column_bytes: u64) -> u64 {
    std::mem::size_of::<JoinRow>() as u64 + column_bytes
}

/// Rows of a part probed at a time: the tuples made for them stay in cache.
const PROBE_ROWS: usize = 16 * 1024;

/// Probes the rows of `piece` that have a code, their tuples made as they
/// are probed (no relation of the piece is built).
fn probe(
    pool: &Pool,
    built: &BuildSide,
    (piece, codes): (&Table, &[PartCodes]),
    options: &JoinOptions,
    request: &JoinRequest,
    per_row: u64,
) -> Result<JoinResult> {
    let slices: Vec<(usize, usize)> = codes
        .iter()
        .enumerate()
        .flat_map(|(p, c)| {
            (0..c.codes.len())
                .step_by(PROBE_ROWS)
                .map(move |start| (p, start))
        })
        .collect();
    let parts = piece.parts();
    let home = |i: usize| parts[slices[i].0].worker;
    let fill = |i: usize, out: &mut Vec<Tuple>| {
        let (p, start) = slices[i];
        let part = &codes[p];
        let end = (start + PROBE_ROWS).min(part.codes.len());
        let mut invalid = part.invalid[part.invalid.partition_point(|&r| (r as usize) < start)..]
            .iter()
            .peekable();
        for row in start..end {
            if invalid.peek() == Some(&&(row as u32)) {
                invalid.next();
                continue;
            }
            out.push(Tuple::new(part.codes[row], row_ref(p, row)));
        }
    };
    built
        .probe_pieces(pool, slices.len(), &home, &fill, options)
        .map_err(|e| kernel_error(e, "a piece's ", per_row, &request.memory_limit))
}

fn gather(
    pool: &Pool,
    (left, right): (&Table, &Table),
    plan: &JoinPlan,
    columns: (&[usize], &[usize]),
    result: JoinResult,
    request: &JoinRequest,
) -> Result<Table> {
    let bytes = row_bytes(left, columns.0) + row_bytes(right, columns.1);
    request
        .memory_limit
        .check("the join's result", result.rows.saturating_mul(bytes))?;
    gather_result(pool, left, right, plan, columns, result.materialized)
}
