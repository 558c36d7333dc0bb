//! Sorting a table by one or several key columns of any common type, each
//! ascending or descending, nulls first or last (last by default), every
//! column (or the chosen ones) carried along.
//!
//! The keys become one order-preserving code per row ([`SortKeys`]). If
//! the codes are already in order (or in reverse order) the table is not
//! sorted again: it is returned as it is (or reversed). Otherwise the
//! (code, row) relation goes through the NUMA-aware sort, and the columns
//! are gathered a window of rows at a time ([`window`]). [`run_into`]
//! hands each window on as it is made, so a result written to a file is
//! never held whole; [`run`] collects them. Rows with equal keys come in
//! no particular order.

mod window;

use std::time::Instant;

use arrow_array::{ArrayRef, RecordBatch};
use serde::Serialize;

use numakit_ops::sort::{sort_owned, SortOptions};
use numakit_ops::timing::{PhaseTime, PhaseTimer, Progress};
use numakit_pool::Pool;

use crate::error::{FrameError, Result};
use crate::input::Input;
use crate::keys::decode::gather;
use crate::keys::{KeyEncoding, PartCodes, SortKey, SortKeys};
use crate::load::LoadStats;
use crate::memory::MemoryLimit;
use crate::par::{per_part, try_per_part};
use crate::relation::{relation_with_room, TUPLE_BYTES};
use crate::sink::ResultSink;
use crate::sort_keys_only::Words;
use crate::table::{row_ref, Part, RowRef, Table};
use crate::RunOptions;

pub use crate::request::sort::{SortColumn, SortRequest};

/// The order the input was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputOrder {
    /// Already sorted: returned as it is.
    Sorted,
    /// Sorted the other way: reversed.
    Reversed,
    /// Sorted here.
    Unsorted,
}

/// What a sort did.
#[derive(Clone, Debug, Serialize)]
pub struct SortReport {
    /// Rows sorted (those of the input).
    pub rows: u64,
    /// How the key columns became codes.
    pub key_encoding: KeyEncoding,
    /// Whether the input was already in order, in reverse order, or
    /// sorted here.
    pub input_order: InputOrder,
    /// Every phase, in order: key coding, the order check, then the
    /// reversal or the sort's and gathering's phases.
    pub phases: Vec<PhaseTime>,
    /// Wall-clock time of the sort, in seconds, less the time spent
    /// handing the result on.
    pub seconds: f64,
}

/// The table a sort reads: borrowed from its caller, or owned, so that a
/// sort that no longer needs it lets it go early (the sort of one integer
/// key that is the result's only column drops it once its keys are made,
/// so the input is not held beside the sort's buffers).
pub enum SortTable<'a> {
    /// The caller keeps the table.
    Borrowed(&'a Table),
    /// The sort may drop the table when it no longer needs it.
    Owned(Table),
}

impl<'a> From<&'a Table> for SortTable<'a> {
    fn from(table: &'a Table) -> Self {
        SortTable::Borrowed(table)
    }
}

impl From<Table> for SortTable<'_> {
    fn from(table: Table) -> Self {
        SortTable::Owned(table)
    }
}

impl std::ops::Deref for SortTable<'_> {
    type Target = Table;

    fn deref(&self) -> &Table {
        match self {
            SortTable::Borrowed(table) => table,
            SortTable::Owned(table) => table,
        }
    }
}

/// The sort of one integer key that is also the result's only column,
/// handed to `deliver`. An owned table is dropped (and the heap's freed
/// pages handed back) once the words are made and found out of order.
fn keys_only(
    pool: &Pool,
    table: SortTable<'_>,
    (key, words): (&SortKey, Words),
    (limit, window_rows): (&MemoryLimit, Option<usize>),
    (mut timer, started): (PhaseTimer<'_>, Instant),
    progress: &dyn Progress,
    deliver: &mut dyn FnMut(Table) -> Result<()>,
) -> Result<SortReport> {
    timer.start("check order");
    let input_order = if in_order(pool, &table, |p| words.part(p), true)? {
        InputOrder::Sorted
    } else if in_order(pool, &table, |p| words.part(p), false)? {
        InputOrder::Reversed
    } else {
        InputOrder::Unsorted
    };
    timer.stop();
    let rows = table.rows();
    if input_order != InputOrder::Sorted {
        // The sort's spare words and a column of values as large as the
        // input's (the words themselves are already made).
        let bytes = rows as u64 * 8 + projected_bytes(&table, &[key.column]);
        limit.check("the sort", bytes)?;
    }
    let (mut phases, delivering) = match input_order {
        InputOrder::Sorted | InputOrder::Reversed => {
            drop(words);
            let output = match input_order {
                InputOrder::Sorted => table.project(&[key.column])?,
                _ => reversed(pool, &table, &[key.column])?,
            };
            let clock = Instant::now();
            deliver(output)?;
            (Vec::new(), clock.elapsed().as_secs_f64())
        }
        InputOrder::Unsorted => {
            let field = table.schema().field(key.column).clone();
            if let SortTable::Owned(table) = table {
                drop(table);
                numakit_placement::sys::release_freed_heap();
            }
            crate::sort_keys_only::sort(
                pool,
                (field, key.descending),
                words,
                (window_rows, progress),
                deliver,
            )?
        }
    };
    let mut all = timer.finish();
    all.append(&mut phases);
    Ok(SortReport {
        rows: rows as u64,
        key_encoding: KeyEncoding::Value,
        input_order,
        phases: all,
        seconds: started.elapsed().as_secs_f64() - delivering,
    })
}

/// Whether codes are non-decreasing (`ascending`) or non-increasing
/// across the parts, in part order.
fn in_order<'a>(
    pool: &Pool,
    table: &Table,
    codes: impl Fn(usize) -> &'a [u64] + Sync,
    ascending: bool,
) -> Result<bool> {
    let parts = table.parts();
    let ordered = |a: u64, b: u64| if ascending { a <= b } else { a >= b };
    let inside = per_part(
        pool,
        parts.len(),
        |p| parts[p].worker,
        |p| codes(p).windows(2).all(|w| ordered(w[0], w[1])),
    )?;
    let edges = (0..parts.len())
        .filter_map(|p| Some((*codes(p).first()?, *codes(p).last()?)))
        .collect::<Vec<_>>();
    Ok(inside.into_iter().all(|b| b) && edges.windows(2).all(|w| ordered(w[0].1, w[1].0)))
}

/// Sorts `table` (holding at least the key and result columns) as asked.
pub fn run(
    pool: &Pool,
    table: &Table,
    request: &SortRequest,
    progress: &dyn Progress,
) -> Result<(SortReport, Table)> {
    let mut parts = Vec::new();
    let mut schema = None;
    let report = run_into(pool, table, request, None, progress, &mut |piece: Table| {
        schema.get_or_insert_with(|| piece.schema().clone());
        parts.extend(piece.parts().iter().cloned());
        Ok(())
    })?;
    let schema =
        schema.ok_or_else(|| FrameError::InvalidRequest("the sort handed on no result".into()))?;
    Ok((report, Table::new("the sorted result", schema, parts)?))
}

/// Sorts `table` as asked, handing the result to `deliver` in order, in
/// one or more pieces (windows of about `window_rows` rows when it sorts;
/// `None`: about a million per worker). The report's `seconds` leave out
/// the time `deliver` takes (its own phase, `deliver result`). A table
/// given by value may be let go early ([`SortTable`]).
pub fn run_into<'a>(
    pool: &Pool,
    table: impl Into<SortTable<'a>>,
    request: &SortRequest,
    window_rows: Option<usize>,
    progress: &dyn Progress,
    deliver: &mut dyn FnMut(Table) -> Result<()>,
) -> Result<SortReport> {
    let table: SortTable<'_> = table.into();
    let started = Instant::now();
    if request.by.is_empty() {
        return Err(FrameError::InvalidRequest(
            "a sort needs a key column".into(),
        ));
    }
    let keys: Vec<SortKey> = request
        .by
        .iter()
        .map(|c| {
            Ok(SortKey {
                column: table.column_index(&c.name)?,
                descending: c.descending,
                nulls_first: c.nulls_first,
            })
        })
        .collect::<Result<_>>()?;
    let out_columns: Vec<usize> = match &request.columns {
        Some(names) => names
            .iter()
            .map(|n| table.column_index(n))
            .collect::<Result<_>>()?,
        None => (0..table.schema().fields().len()).collect(),
    };
    let mut timer = PhaseTimer::new(progress);
    timer.start("code keys");
    if let ([key], [only]) = (keys.as_slice(), out_columns.as_slice()) {
        if key.column == *only {
            if let Some(words) = crate::sort_keys_only::words(pool, &table, key)? {
                return keys_only(
                    pool,
                    table,
                    (key, words),
                    (&request.memory_limit, window_rows),
                    (timer, started),
                    progress,
                    deliver,
                );
            }
        }
    }
    let table: &Table = &table;
    let coded = SortKeys::encode(pool, table, &keys)?;
    timer.start("check order");
    let input_order = if in_order(pool, table, |p| &coded.parts[p].codes[..], true)? {
        InputOrder::Sorted
    } else if in_order(pool, table, |p| &coded.parts[p].codes[..], false)? {
        InputOrder::Reversed
    } else {
        InputOrder::Unsorted
    };
    let output = match input_order {
        InputOrder::Sorted => {
            timer.stop();
            table.project(&out_columns)?
        }
        InputOrder::Reversed => {
            timer.start("reverse");
            request
                .memory_limit
                .check("the reversed result", projected_bytes(table, &out_columns))?;
            reversed(pool, table, &out_columns)?
        }
        InputOrder::Unsorted => {
            timer.stop();
            let columns = (table, out_columns.as_slice());
            let key_encoding = coded.encoding;
            let (mut phases, delivering) = sorted(
                pool,
                columns,
                coded,
                (request, window_rows),
                progress,
                deliver,
            )?;
            let mut all = std::mem::replace(&mut timer, PhaseTimer::new(progress)).finish();
            all.append(&mut phases);
            return Ok(SortReport {
                rows: table.rows() as u64,
                key_encoding,
                input_order,
                phases: all,
                seconds: started.elapsed().as_secs_f64() - delivering,
            });
        }
    };
    let phases = timer.finish();
    let seconds = started.elapsed().as_secs_f64();
    deliver(output)?;
    Ok(SortReport {
        rows: table.rows() as u64,
        key_encoding: coded.encoding,
        input_order,
        phases,
        seconds,
    })
}

/// A sort from its input: what was loaded, every repetition's report, and
/// the last repetition's result.
pub struct SortOutcome {
    /// What loading the file did; `None` for a table in memory.
    pub input: Option<LoadStats>,
    /// One report per repetition, in order.
    pub runs: Vec<SortReport>,
    /// The result; `None` when it went to a sink.
    pub table: Option<Table>,
    /// Whether the result was checked against the reference.
    pub verified: bool,
}

/// The columns a sort reads: its keys and the result's columns.
pub fn columns_to_read(request: &SortRequest, schema: &arrow_schema::Schema) -> Vec<String> {
    let mut read: Vec<String> = Vec::new();
    let all: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    for name in request
        .by
        .iter()
        .map(|c| &c.name)
        .chain(request.columns.as_ref().unwrap_or(&all))
    {
        if !read.contains(name) {
            read.push(name.clone());
        }
    }
    read
}

/// Reads the columns the request needs and sorts `reps` times.
pub fn sort_input(
    pool: &Pool,
    input: &Input,
    request: &SortRequest,
    options: &RunOptions,
    progress: &dyn Progress,
) -> Result<SortOutcome> {
    sort_input_into(pool, input, request, options, progress, None)
}

/// [`sort_input`], the result going to `sink` when one is given. With one
/// repetition and no check against the reference, each window of the
/// result is written as soon as it is gathered and then let go; otherwise
/// the whole result is made and then written.
pub fn sort_input_into(
    pool: &Pool,
    input: &Input,
    request: &SortRequest,
    options: &RunOptions,
    progress: &dyn Progress,
    mut sink: Option<&mut dyn ResultSink>,
) -> Result<SortOutcome> {
    let schema = input.schema();
    for name in request
        .by
        .iter()
        .map(|c| &c.name)
        .chain(request.columns.iter().flatten())
    {
        if schema.index_of(name).is_err() {
            return Err(FrameError::column_not_found(&schema, name, input.name()));
        }
    }
    progress.phase("load input");
    let read = columns_to_read(request, &schema);
    let (table, stats) = input.columns(pool, &read, &request.memory_limit)?;
    options.check_verify_size(table.rows())?;
    let mut request = request.clone();
    let columns = request
        .columns
        .get_or_insert_with(|| schema.fields().iter().map(|f| f.name().clone()).collect());
    let declared_schema = input.declared_schema();
    let declared: Vec<Option<arrow_schema::DataType>> = columns
        .iter()
        .map(|name| {
            declared_schema
                .field_with_name(name)
                .ok()
                .map(|d| d.data_type().clone())
        })
        .collect();
    if let (Some(sink), true) = (sink.as_deref_mut(), options.reps <= 1 && !options.verify) {
        let mut started = false;
        let window = options.window_rows;
        let report = run_into(
            pool,
            table,
            &request,
            window,
            progress,
            &mut |piece: Table| {
                let piece = crate::input::restore_types(pool, piece, &declared)?;
                if !std::mem::replace(&mut started, true) {
                    sink.start(piece.schema())?;
                }
                piece.batches().into_iter().try_for_each(|b| sink.write(b))
            },
        )?;
        return Ok(SortOutcome {
            input: stats,
            runs: vec![report],
            table: None,
            verified: false,
        });
    }
    let mut runs = Vec::new();
    let mut result: Option<Table> = None;
    for _ in 0..options.reps.max(1) {
        let (report, sorted) = run(pool, &table, &request, progress)?;
        runs.push(report);
        match &result {
            None => result = Some(sorted),
            Some(first) => crate::reference::check_repetition(first, &sorted, "sort", true)?,
        }
    }
    let result = result.ok_or_else(|| FrameError::InvalidRequest("nothing ran".into()))?;
    if options.verify {
        crate::reference::check_sort(&table, &request, &result)?;
    }
    let result = crate::input::restore_types(pool, result, &declared)?;
    let table = match sink {
        Some(sink) => {
            crate::sink::write_table(sink, &result)?;
            None
        }
        None => Some(result),
    };
    Ok(SortOutcome {
        input: stats,
        runs,
        table,
        verified: options.verify,
    })
}

/// Sorts the coded rows and hands the gathered columns on, window by
/// window; the phases, and the seconds spent handing on.
fn sorted(
    pool: &Pool,
    (table, out_columns): (&Table, &[usize]),
    coded: SortKeys,
    (request, window_rows): (&SortRequest, Option<usize>),
    progress: &dyn Progress,
    deliver: &mut dyn FnMut(Table) -> Result<()>,
) -> Result<(Vec<PhaseTime>, f64)> {
    let mut timer = PhaseTimer::new(progress);
    timer.start("build relation");
    let rows = table.rows() as u64;
    request
        .memory_limit
        .check("the sort's tuples", rows * TUPLE_BYTES * 2)?;
    let valid: usize = coded.parts.iter().map(PartCodes::valid_rows).sum();
    let room = valid.div_ceil(pool.workers().max(1));
    let relation = relation_with_room(pool, (table, &coded.parts), row_ref, room)?;
    // The relation holds the codes now; the heap they free serves the gather.
    drop(coded);
    timer.stop();
    let result = sort_owned(pool, relation, &SortOptions::default(), progress)?;
    let mut phases = timer.finish();
    phases.extend(result.phases.iter().cloned());
    let sorted = result
        .sorted
        .ok_or_else(|| FrameError::InvalidRequest("the sort returned nothing".into()))?;
    progress.phase("gather columns");
    let bytes = projected_bytes(table, out_columns);
    let times = window::deliver_windows(
        pool,
        (table, out_columns),
        &sorted,
        (&request.memory_limit, bytes),
        window_rows,
        deliver,
    )?;
    phases.push(PhaseTime {
        name: "gather columns".into(),
        seconds: times.gather,
    });
    phases.push(PhaseTime {
        name: "deliver result".into(),
        seconds: times.deliver,
    });
    Ok((phases, times.deliver))
}

fn projected_bytes(table: &Table, columns: &[usize]) -> u64 {
    table.columns_memory_bytes(columns)
}

fn batch_of(table: &Table, columns: &[usize], rows: &[Option<RowRef>]) -> Result<RecordBatch> {
    let schema = std::sync::Arc::new(
        table
            .schema()
            .project(columns)
            .map_err(|e| FrameError::arrow("choosing columns", e))?,
    );
    let arrays: Vec<ArrayRef> = columns
        .iter()
        .map(|&c| gather(table, c, rows))
        .collect::<Result<_>>()?;
    RecordBatch::try_new(schema, arrays)
        .map_err(|e| FrameError::arrow("assembling the sort's result", e))
}

/// The table's rows in reverse order, part by part from the last.
fn reversed(pool: &Pool, table: &Table, columns: &[usize]) -> Result<Table> {
    let parts = table.parts();
    let n = parts.len();
    let batches = try_per_part(
        pool,
        n,
        |i| parts[n - 1 - i].worker,
        |i| {
            let p = n - 1 - i;
            let rows: Vec<Option<RowRef>> = (0..parts[p].batch.num_rows())
                .rev()
                .map(|r| Some(row_ref(p, r)))
                .collect();
            batch_of(table, columns, &rows)
        },
    )?;
    let schema = std::sync::Arc::new(
        table
            .schema()
            .project(columns)
            .map_err(|e| FrameError::arrow("choosing columns", e))?,
    );
    let parts = batches
        .into_iter()
        .enumerate()
        .map(|(i, batch)| Part {
            batch,
            worker: parts[n - 1 - i].worker,
        })
        .collect();
    Table::new("the sorted result", schema, parts)
}
