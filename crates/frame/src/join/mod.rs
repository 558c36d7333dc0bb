//! Equi-joins of two tables on key columns of any common type, with the
//! result's columns carried from both sides under their own names.
//!
//! A [`JoinRequest`] names the keys, the kind (inner, left outer, semi,
//! anti), the algorithm (or `auto`), the columns to carry and the memory
//! limit. [`JoinPlan::new`] checks it against the two schemas before any
//! work (unknown columns, key types that cannot meet, names that would
//! clash in the result); [`run`] then codes the keys ([`JoinKeys`]), builds
//! the (code, row) relations on the workers' nodes, runs the kernel, and
//! gathers the result columns by row, one batch per worker.
//!
//! SQL semantics: a key with a null never matches; a left outer join gives
//! unmatched left rows nulls in every right column; semi and anti joins
//! return left rows only, each once. Left rows whose key cannot match
//! (nulls, values outside the right side's range) still appear in left
//! outer and anti results. Counting a result (`count_only`) never
//! materialises it.

use std::time::Instant;

use arrow_schema::Schema;
use serde::Serialize;

use numakit_ops::join::{
    join as run_kernel, JoinAlgorithm, JoinKind, JoinOptions, JoinOutput, JoinRow,
};
use numakit_ops::timing::{PhaseTime, PhaseTimer, Progress};
use numakit_pool::Pool;

use crate::error::{FrameError, Result};
use crate::input::Input;
use crate::keys::{JoinKeys, KeyEncoding, PartCodes};
use crate::load::LoadStats;
use crate::memory::MemoryLimit;
use crate::relation::{relation_of, TUPLE_BYTES};
use crate::sink::{write_table, ResultSink};
use crate::table::{row_ref, Table};

mod gather;
mod stream;

pub use crate::request::join::{JoinPlan, JoinRequest};
pub use stream::PIECE_BYTES;

use crate::RunOptions;
use gather::{gather_result, keyless_rows};

/// What a join did.
#[derive(Clone, Debug, Serialize)]
pub struct JoinReport {
    /// The kind of join that ran.
    pub kind: JoinKind,
    /// The kernel that ran (numakit's choice when the request left it open).
    pub algorithm: JoinAlgorithm,
    /// Why `auto` chose the algorithm.
    pub auto_reason: Option<String>,
    /// How the key columns became codes.
    pub key_encoding: KeyEncoding,
    /// Rows of the left (build) table.
    pub left_rows: u64,
    /// Rows of the right (probe) table, all pieces together when it was
    /// streamed.
    pub right_rows: u64,
    /// Rows whose key cannot match (nulls; values the other side cannot hold).
    pub left_keyless: u64,
    /// Right rows whose key cannot match (nulls; values the left side
    /// cannot hold).
    pub right_keyless: u64,
    /// Result rows.
    pub rows: u64,
    /// Every phase, in order: key coding, relations, the kernel's phases,
    /// the gathering of the result.
    pub phases: Vec<PhaseTime>,
    /// When the right side was read from its file and probed a piece at a
    /// time: how many pieces (`None`: it was held whole).
    pub right_pieces: Option<usize>,
    /// The join's time; for a streamed right side, less the reading of
    /// the right file and the delivery of the result (its writing, when it
    /// is written as it is made).
    pub seconds: f64,
}

fn keyless(codes: &[PartCodes]) -> u64 {
    codes.iter().map(|p| p.invalid.len() as u64).sum()
}

/// Average bytes per row of the given columns of `table`.
fn row_bytes(table: &Table, columns: &[usize]) -> u64 {
    let rows = table.rows().max(1) as u64;
    table.columns_memory_bytes(columns) / rows + 1
}

/// Joins `left` and `right` (tables holding at least the plan's read
/// columns, by name). The result is `None` when only counting.
pub fn run(
    pool: &Pool,
    left: &Table,
    right: &Table,
    request: &JoinRequest,
    progress: &dyn Progress,
) -> Result<(JoinReport, Option<Table>)> {
    let started = Instant::now();
    let plan = JoinPlan::new(request, left.schema(), right.schema())?;
    let lkeys: Vec<usize> = request
        .left_on
        .iter()
        .map(|n| left.column_index(n))
        .collect::<Result<_>>()?;
    let rkeys: Vec<usize> = request
        .right_on
        .iter()
        .map(|n| right.column_index(n))
        .collect::<Result<_>>()?;
    let mut timer = PhaseTimer::new(progress);
    timer.start("code keys");
    let keys = JoinKeys::encode(pool, left, &lkeys, right, &rkeys)?;
    timer.start("build relations");
    let tuples = (left.rows() + right.rows()) as u64;
    request
        .memory_limit
        .check("the join's relations", tuples * TUPLE_BYTES)?;
    let lrel = relation_of(pool, left, &keys.left, row_ref)?;
    let rrel = relation_of(pool, right, &keys.right, row_ref)?;
    timer.stop();
    let (algorithm, auto_reason) = match request.algorithm {
        Some(a) => (a, None),
        None if !request.count_only => (
            JoinAlgorithm::NoPartition,
            Some(
                "npo: the result's columns are gathered by row, and the no-partition join \
                 probes the right side in order, so that gather reads mostly in order (a radix \
                 join scatters both sides and gathers at random: about 7x slower on TPC-H's \
                 orders x lineitem here)"
                    .into(),
            ),
        ),
        None => {
            let (a, why) = numakit_ops::join::choose::recommend(pool, lrel.len(), rrel.len());
            (a, Some(why))
        }
    };
    let lcols: Vec<usize> = plan
        .left_out_names()
        .iter()
        .map(|n| left.column_index(n))
        .collect::<Result<_>>()?;
    let rcols: Vec<usize> = plan
        .right_out_names()
        .iter()
        .map(|n| right.column_index(n))
        .collect::<Result<_>>()?;
    let out_row = row_bytes(left, &lcols) + row_bytes(right, &rcols);
    let row_limit = (!request.count_only).then(|| {
        request.memory_limit.headroom() / (std::mem::size_of::<JoinRow>() as u64 + out_row)
    });
    let options = JoinOptions {
        algorithm,
        kind: request.kind,
        output: if request.count_only {
            JoinOutput::Count
        } else {
            JoinOutput::Materialize
        },
        row_limit,
        merge_exchange: numakit_ops::join::RING_MERGE,
    };
    let per_row = std::mem::size_of::<JoinRow>() as u64 + out_row;
    let result = run_kernel(pool, &lrel, &rrel, &options, progress)
        .map_err(|e| kernel_error(e, "", per_row, &request.memory_limit))?;
    drop((lrel, rrel));
    let mut phases = timer.finish();
    phases.extend(result.phases.iter().cloned());
    let keeps_unmatched = matches!(request.kind, JoinKind::LeftOuter | JoinKind::Anti);
    let left_keyless = keyless(&keys.left);
    let rows = result.rows + if keeps_unmatched { left_keyless } else { 0 };
    let table = if request.count_only {
        None
    } else {
        let mut timer = PhaseTimer::new(progress);
        timer.start("gather columns");
        request
            .memory_limit
            .check("the join's result", rows.saturating_mul(out_row))?;
        let mut batches = result.materialized;
        if keeps_unmatched {
            batches.push(keyless_rows(&keys.left));
        }
        let table = gather_result(pool, left, right, &plan, (&lcols, &rcols), batches)?;
        phases.extend(timer.finish());
        Some(table)
    };
    let report = JoinReport {
        kind: request.kind,
        algorithm,
        auto_reason,
        key_encoding: keys.encoding,
        left_rows: left.rows() as u64,
        right_rows: right.rows() as u64,
        left_keyless,
        right_keyless: keyless(&keys.right),
        rows,
        phases,
        right_pieces: None,
        seconds: started.elapsed().as_secs_f64(),
    };
    Ok((report, table))
}

/// The kernel's error, its row limit turned into the memory limit it came
/// from (`which` says whose rows: "" or "a piece's ").
fn kernel_error(
    error: numakit_ops::OpsError,
    which: &str,
    per_row: u64,
    limit: &MemoryLimit,
) -> FrameError {
    match error {
        numakit_ops::OpsError::ResultTooLarge { rows, .. } => FrameError::MemoryLimit {
            what: format!("the join's result ({which}{rows} rows)"),
            need: crate::memory::human_bytes(rows.saturating_mul(per_row)),
            limit: crate::memory::human_bytes(limit.bytes),
            in_use: crate::memory::human_bytes(crate::memory::resident_bytes()),
        },
        other => FrameError::from(other),
    }
}

/// A join from its inputs: what was loaded, every repetition's report,
/// and the last repetition's result.
pub struct JoinOutcome {
    /// What loading the left file did; `None` for a table in memory.
    pub left: Option<LoadStats>,
    /// What reading the right file did (whole or streamed); `None` for a
    /// table in memory.
    pub right: Option<LoadStats>,
    /// One report per repetition, in order (one when the right side was
    /// streamed).
    pub runs: Vec<JoinReport>,
    /// The last repetition's result; `None` when only counting or when
    /// the result went to a sink.
    pub table: Option<Table>,
    /// Whether the result was checked against the reference.
    pub verified: bool,
}

/// The file to stream the right side from, when the request allows it: a
/// file input, streaming allowed, one repetition, no check against the reference (which
/// needs the whole right side) and the no-partition kernel (chosen, or
/// `auto`).
fn streamable<'a>(
    right: &'a Input,
    request: &JoinRequest,
    options: &RunOptions,
) -> Option<&'a numakit_io::Source> {
    let kernel = matches!(request.algorithm, None | Some(JoinAlgorithm::NoPartition));
    match right {
        Input::File(source) if kernel && options.stream && options.reps <= 1 && !options.verify => {
            Some(source)
        }
        _ => None,
    }
}

/// Joins the tables `reps` times (every repetition must agree); returns
/// every report and the last result.
fn repeat(
    pool: &Pool,
    (ltable, rtable): (&Table, &Table),
    request: &JoinRequest,
    options: &RunOptions,
    progress: &dyn Progress,
) -> Result<(Vec<JoinReport>, Option<Table>)> {
    let mut runs: Vec<JoinReport> = Vec::new();
    let mut table: Option<Table> = None;
    for _ in 0..options.reps.max(1) {
        let (report, result) = run(pool, ltable, rtable, request, progress)?;
        if let Some(first) = runs.first() {
            if first.rows != report.rows {
                return Err(FrameError::InvalidRequest(format!(
                    "the join gave {} rows, an earlier repetition {}",
                    report.rows, first.rows
                )));
            }
        }
        runs.push(report);
        match (&table, result) {
            (None, result) => table = result,
            (Some(first), Some(again)) => {
                crate::reference::check_repetition(first, &again, "join", false)?
            }
            (Some(_), None) => {}
        }
    }
    Ok((runs, table))
}

/// Checks the request against both inputs' schemas, reads the columns it
/// needs, and joins `reps` times (every repetition must agree). The right
/// side of a file is streamed where [`streamable`] allows.
pub fn join_inputs(
    pool: &Pool,
    left: &Input,
    right: &Input,
    request: &JoinRequest,
    options: &RunOptions,
    progress: &dyn Progress,
) -> Result<JoinOutcome> {
    join_inputs_into(pool, (left, right), request, options, progress, None)
}

/// Like [`join_inputs`], with the result handed to `sink` (when given) as
/// it is made rather than kept: a streamed join then never holds its
/// result whole, and the outcome has no table.
pub fn join_inputs_into(
    pool: &Pool,
    (left, right): (&Input, &Input),
    request: &JoinRequest,
    options: &RunOptions,
    progress: &dyn Progress,
    mut sink: Option<&mut dyn ResultSink>,
) -> Result<JoinOutcome> {
    let plan = JoinPlan::new(request, &left.schema(), &right.schema())?;
    progress.phase("load left");
    let (ltable, lstats) = left.columns(pool, &plan.left_read, &request.memory_limit)?;
    let (rtable, rstats, runs, table) = match streamable(right, request, options) {
        Some(source) => {
            let streamed = stream::StreamedRight {
                projection: source.project(Some(&plan.right_read))?,
                source,
                piece_bytes: options.piece_bytes,
            };
            let result_plan =
                JoinPlan::new(request, ltable.schema(), streamed.projection.schema())?;
            let declared = declared_types(&result_plan, left, right);
            let empty = Table::new(
                "the join's result",
                result_plan.schema().clone(),
                Vec::new(),
            )?;
            let empty = crate::input::restore_types(pool, empty, &declared)?;
            let mut parts = Vec::new();
            let mut started = false;
            let (report, rstats) =
                stream::run_streamed(pool, &ltable, &streamed, request, progress, &mut |t| {
                    let t = crate::input::restore_types(pool, t, &declared)?;
                    match sink.as_deref_mut() {
                        Some(sink) => {
                            if !std::mem::replace(&mut started, true) {
                                sink.start(empty.schema())?;
                            }
                            t.batches().into_iter().try_for_each(|b| sink.write(b))
                        }
                        None => {
                            parts.extend(t.parts().iter().cloned());
                            Ok(())
                        }
                    }
                })?;
            let table = match sink.as_deref_mut() {
                _ if request.count_only => None,
                Some(sink) => {
                    if !started {
                        sink.start(empty.schema())?;
                    }
                    None
                }
                None => Some(Table::new(
                    "the join's result",
                    empty.schema().clone(),
                    parts,
                )?),
            };
            (None, Some(rstats), vec![report], table)
        }
        None => {
            progress.phase("load right");
            let (rtable, rstats) = right.columns(pool, &plan.right_read, &request.memory_limit)?;
            options.check_verify_size(ltable.rows() + rtable.rows())?;
            let (runs, table) = repeat(pool, (&ltable, &rtable), request, options, progress)?;
            // The result's columns in the order the loaded tables give them.
            let result_plan = JoinPlan::new(request, ltable.schema(), rtable.schema())?;
            let declared = declared_types(&result_plan, left, right);
            let table = table
                .map(|t| crate::input::restore_types(pool, t, &declared))
                .transpose()?;
            (Some(rtable), rstats, runs, table)
        }
    };
    if options.verify {
        let rows = runs.last().map_or(0, |r| r.rows);
        let rtable = rtable.as_ref().ok_or_else(|| {
            FrameError::InvalidRequest("a verified join holds its right side".into())
        })?;
        crate::reference::check_join(&ltable, rtable, request, table.as_ref(), rows)?;
    }
    let table = match (sink, table) {
        (Some(sink), Some(table)) => {
            write_table(sink, &table)?;
            None
        }
        (_, table) => table,
    };
    Ok(JoinOutcome {
        left: lstats,
        right: rstats,
        runs,
        table,
        verified: options.verify,
    })
}

/// The types the inputs declare for the columns of the result of `plan`
/// (made on the loaded tables, whose column order the result follows): a
/// file's own, before reading choices such as dictionary arrays for strings.
fn declared_types(
    plan: &JoinPlan,
    left: &Input,
    right: &Input,
) -> Vec<Option<arrow_schema::DataType>> {
    let (ldeclared, rdeclared) = (left.declared_schema(), right.declared_schema());
    let type_in = |schema: &Schema, name: &String| {
        schema
            .field_with_name(name)
            .ok()
            .map(|f| f.data_type().clone())
    };
    plan.left_out_names()
        .iter()
        .map(|n| type_in(&ldeclared, n))
        .chain(
            plan.right_out_names()
                .iter()
                .map(|n| type_in(&rdeclared, n)),
        )
        .collect()
}
