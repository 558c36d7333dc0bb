//! Sorting a table by one or several key columns of any common type, each
//! ascending or descending, nulls first or last (last by default), every
//! column (or the chosen ones) carried along.
//!
//! The keys become one order-preserving code per row ([`SortKeys`]). If
//! the codes are already in order (or in reverse order) the table is not
//! sorted again: it is returned as it is (or reversed). Otherwise the
//! (code, row) relation goes through the NUMA-aware sort, and each worker
//! gathers the columns of its sorted run. Rows with equal keys come in no
//! particular order.

use std::time::Instant;

use arrow_array::{ArrayRef, RecordBatch};
use serde::Serialize;

use numakit_ops::sort::{sort_owned, SortOptions};
use numakit_ops::timing::{PhaseTime, PhaseTimer, Progress};
use numakit_pool::Pool;

use crate::error::{FrameError, Result};
use crate::input::Input;
use crate::keys::decode::{gather, Gatherer, GATHER_ROWS};
use crate::keys::{KeyEncoding, PartCodes, SortKey, SortKeys};
use crate::load::LoadStats;
use crate::memory::MemoryLimit;
use crate::par::{per_part, try_per_part};
use crate::relation::{relation_of, TUPLE_BYTES};
use crate::table::{row_ref, Part, RowRef, Table};
use crate::RunOptions;

/// One column of the sort key, by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SortColumn {
    pub name: String,
    pub descending: bool,
    pub nulls_first: bool,
}

impl SortColumn {
    /// Ascending, nulls last.
    pub fn ascending(name: &str) -> Self {
        SortColumn {
            name: name.into(),
            descending: false,
            nulls_first: false,
        }
    }
}

/// What to sort by and what to keep.
#[derive(Clone, Debug)]
pub struct SortRequest {
    pub by: Vec<SortColumn>,
    /// The columns of the result (default: all, in table order).
    pub columns: Option<Vec<String>>,
    pub memory_limit: MemoryLimit,
}

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
    pub rows: u64,
    pub key_encoding: KeyEncoding,
    pub input_order: InputOrder,
    pub phases: Vec<PhaseTime>,
    pub seconds: f64,
}

/// The sort of one integer key that is also the result's only column.
fn keys_only(
    pool: &Pool,
    table: &Table,
    (key, words): (&SortKey, &[PartCodes]),
    limit: &MemoryLimit,
    mut timer: PhaseTimer<'_>,
    started: Instant,
    progress: &dyn Progress,
) -> Result<(SortReport, Table)> {
    timer.start("check order");
    let input_order = if in_order(pool, table, words, true)? {
        InputOrder::Sorted
    } else if in_order(pool, table, words, false)? {
        InputOrder::Reversed
    } else {
        InputOrder::Unsorted
    };
    timer.stop();
    if input_order != InputOrder::Sorted {
        // The words sorted and a column of values as large as the input's.
        let bytes = table.rows() as u64 * 8 * 2 + projected_bytes(table, &[key.column]);
        limit.check("the sort", bytes)?;
    }
    let (mut phases, output) = match input_order {
        InputOrder::Sorted => (Vec::new(), table.project(&[key.column])?),
        InputOrder::Reversed => (Vec::new(), reversed(pool, table, &[key.column])?),
        InputOrder::Unsorted => crate::sort_keys_only::sort(pool, table, key, words, progress)?,
    };
    let mut all = timer.finish();
    all.append(&mut phases);
    Ok((
        SortReport {
            rows: table.rows() as u64,
            key_encoding: KeyEncoding::Value,
            input_order,
            phases: all,
            seconds: started.elapsed().as_secs_f64(),
        },
        output,
    ))
}

/// Whether codes are non-decreasing (`ascending`) or non-increasing
/// across the parts, in part order.
fn in_order(pool: &Pool, table: &Table, codes: &[PartCodes], ascending: bool) -> Result<bool> {
    let parts = table.parts();
    let ordered = |a: u64, b: u64| if ascending { a <= b } else { a >= b };
    let inside = per_part(
        pool,
        codes.len(),
        |p| parts[p].worker,
        |p| codes[p].codes.windows(2).all(|w| ordered(w[0], w[1])),
    )?;
    let edges = codes
        .iter()
        .filter_map(|p| Some((*p.codes.first()?, *p.codes.last()?)))
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
            if let Some(words) = crate::sort_keys_only::words(pool, table, key)? {
                let limit = &request.memory_limit;
                return keys_only(pool, table, (key, &words), limit, timer, started, progress);
            }
        }
    }
    let coded = SortKeys::encode(pool, table, &keys)?;
    timer.start("check order");
    let input_order = if in_order(pool, table, &coded.parts, true)? {
        InputOrder::Sorted
    } else if in_order(pool, table, &coded.parts, false)? {
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
            let (mut phases, out) = sorted(pool, table, &coded, &out_columns, request, progress)?;
            let mut all = std::mem::replace(&mut timer, PhaseTimer::new(progress)).finish();
            all.append(&mut phases);
            let report = SortReport {
                rows: table.rows() as u64,
                key_encoding: coded.encoding,
                input_order,
                phases: all,
                seconds: started.elapsed().as_secs_f64(),
            };
            return Ok((report, out));
        }
    };
    let report = SortReport {
        rows: table.rows() as u64,
        key_encoding: coded.encoding,
        input_order,
        phases: timer.finish(),
        seconds: started.elapsed().as_secs_f64(),
    };
    Ok((report, output))
}

/// A sort from its input: what was loaded, every repetition's report, and
/// the last repetition's result.
pub struct SortOutcome {
    pub input: Option<LoadStats>,
    pub runs: Vec<SortReport>,
    pub table: Table,
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
    let schema = input.schema();
    for name in request
        .by
        .iter()
        .map(|c| &c.name)
        .chain(request.columns.iter().flatten())
    {
        if schema.index_of(name).is_err() {
            return Err(FrameError::ColumnNotFound {
                column: name.clone(),
                table: input.name(),
                available: schema
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    progress.phase("load input");
    let read = columns_to_read(request, &schema);
    let (table, stats) = input.columns(pool, &read, &request.memory_limit)?;
    options.check_verify_size(table.rows())?;
    let mut request = request.clone();
    if request.columns.is_none() {
        request.columns = Some(schema.fields().iter().map(|f| f.name().clone()).collect());
    }
    let mut runs = Vec::new();
    let mut result = None;
    for _ in 0..options.reps.max(1) {
        drop(result.take());
        let (report, sorted) = run(pool, &table, &request, progress)?;
        runs.push(report);
        result = Some(sorted);
    }
    let result = result.ok_or_else(|| FrameError::InvalidRequest("nothing ran".into()))?;
    if options.verify {
        crate::reference::check_sort(&table, &request, &result)?;
    }
    let declared_schema = input.declared_schema();
    let declared: Vec<Option<arrow_schema::DataType>> = result
        .schema()
        .fields()
        .iter()
        .map(|f| {
            declared_schema
                .field_with_name(f.name())
                .ok()
                .map(|d| d.data_type().clone())
        })
        .collect();
    let result = crate::input::restore_types(pool, result, &declared)?;
    Ok(SortOutcome {
        input: stats,
        runs,
        table: result,
        verified: options.verify,
    })
}

fn sorted(
    pool: &Pool,
    table: &Table,
    coded: &SortKeys,
    out_columns: &[usize],
    request: &SortRequest,
    progress: &dyn Progress,
) -> Result<(Vec<PhaseTime>, Table)> {
    let mut timer = PhaseTimer::new(progress);
    timer.start("build relation");
    let rows = table.rows() as u64;
    request
        .memory_limit
        .check("the sort's tuples", rows * TUPLE_BYTES * 2)?;
    let relation = relation_of(pool, table, &coded.parts, row_ref)?;
    timer.stop();
    let result = sort_owned(pool, relation, &SortOptions::default(), progress)?;
    let mut phases = timer.finish();
    phases.extend(result.phases.iter().cloned());
    let sorted = result
        .sorted
        .ok_or_else(|| FrameError::InvalidRequest("the sort returned nothing".into()))?;
    let mut timer = PhaseTimer::new(progress);
    timer.start("gather columns");
    request
        .memory_limit
        .check("the sorted result", projected_bytes(table, out_columns))?;
    let chunks = sorted.chunks();
    let schema = std::sync::Arc::new(
        table
            .schema()
            .project(out_columns)
            .map_err(|e| FrameError::arrow("choosing columns", e))?,
    );
    let nulls = Gatherer::nulls(table, out_columns);
    let batches = try_per_part(
        pool,
        chunks.len(),
        |c| chunks[c].worker,
        |c| {
            let mut gatherer = Gatherer::new(table, out_columns, &nulls);
            chunks[c]
                .tuples
                .chunks(GATHER_ROWS)
                .map(|run| {
                    let arrays = gatherer.gather(run.iter().map(|t| Some(t.payload)))?;
                    RecordBatch::try_new(schema.clone(), arrays)
                        .map_err(|e| FrameError::arrow("assembling the sort's result", e))
                })
                .collect::<Result<Vec<_>>>()
        },
    )?;
    drop(sorted);
    let workers = pool.workers();
    phases.extend(timer.finish());
    Ok((
        phases,
        Table::of_outputs("the sorted result", schema, batches, workers)?,
    ))
}

fn projected_bytes(table: &Table, columns: &[usize]) -> u64 {
    table
        .parts()
        .iter()
        .flat_map(|p| {
            columns
                .iter()
                .map(|&c| p.batch.column(c).get_array_memory_size() as u64)
        })
        .sum()
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
