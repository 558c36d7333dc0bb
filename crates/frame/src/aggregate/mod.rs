//! Group-by aggregation of a table: key columns of any common type, any
//! number of aggregates (COUNT(*), and COUNT, SUM, MIN, MAX, AVG of
//! columns), SQL's null rules, results named like SQL engines name them.
//!
//! The keys become group codes ([`GroupKeys`]); then one of two paths runs:
//! - *one value column* of 64-bit integers without nulls (or none at all):
//!   the operators' aggregation methods on (code, value) tuples, so
//!   `--method` (shuffle, migration, local, partitioned, auto) applies, as
//!   in Li's experiments;
//! - *anything else* (several value columns, nulls, floats, wide decimals,
//!   MIN/MAX of strings): the many-column aggregation of
//!   `numakit_ops::aggregate::columns`, each worker over its own parts.
//!
//! Null keys form one group; aggregates skip null values; COUNT(*) counts
//! rows; a group whose values are all null has a null SUM, AVG, MIN and
//! MAX. The report says which path ran and why. Result rows come in no
//! particular order.

mod estimate;
pub mod output;
mod stream;
pub(crate) mod values;
mod window;

use std::sync::Arc;
use std::time::Instant;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema, SchemaRef};

use serde::Serialize;

use numakit_ops::aggregate::columns::{
    self, AggSpec, ColumnsOptions, Func, Groups, Segment, State, Tally, Values,
};
use numakit_ops::aggregate::source::{ColumnSegment, ColumnSource};
use numakit_ops::aggregate::{self as kernels, AggMethod, AggOptions};
use numakit_ops::timing::{PhaseTime, PhaseTimer, Progress};
use numakit_pool::Pool;

use crate::error::{FrameError, Result};
use crate::input::Input;
use crate::keys::{GroupKeys, KeyEncoding, PartCodes};
use crate::load::LoadStats;
use crate::par::try_per_item;
use crate::relation::TUPLE_BYTES;
use crate::table::Table;
use crate::RunOptions;

pub use crate::request::aggregate::spec;
pub use crate::request::aggregate::{AggFunc, Aggregate, AggregateRequest};
use values::{lane, Lane, LaneKind};

/// Which path computed the groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AggregatePath {
    /// The operators' methods on (code, value) tuples.
    OneValue,
    /// The many-column aggregation.
    Columns,
    /// The many-column aggregation on each batch of a file as it is read.
    Streaming,
}

/// What a group-by did.
#[derive(Clone, Debug, Serialize)]
pub struct AggregateReport {
    /// Rows of the input (rows read, when the file was streamed).
    pub input_rows: u64,
    /// Groups found: the result's rows, a null key's group included.
    pub groups: u64,
    /// How the key columns became codes.
    pub key_encoding: KeyEncoding,
    /// Which path computed the groups.
    pub path: AggregatePath,
    /// The method that ran (the one-value path's choice, or `local`).
    pub method: AggMethod,
    /// Why this path and method.
    pub reason: String,
    /// The one-value path's estimate of the groups.
    pub estimated_groups: Option<u64>,
    /// The many-column path: whether codes indexed the groups directly.
    pub direct_index: Option<bool>,
    /// Time of every phase, in order, from the coding of the keys (or the
    /// reading of a streamed file) to the building of the result.
    pub phases: Vec<PhaseTime>,
    /// Wall-clock time of the group-by, in seconds (reading included
    /// when the file was streamed).
    pub seconds: f64,
}

/// The request checked against a schema.
#[derive(Clone, Debug)]
pub struct AggregatePlan {
    /// The columns to read: keys, then value columns.
    pub read: Vec<String>,
    keys: usize,
    /// Per aggregate: its value column's index in `read` (none for COUNT(*)).
    inputs: Vec<Option<usize>>,
    fields: Vec<Field>,
}

impl AggregatePlan {
    /// Checks `request` against `schema` (names, types, clashes).
    pub fn new(request: &AggregateRequest, schema: &Schema) -> Result<Self> {
        if request.keys.is_empty() {
            return Err(FrameError::InvalidRequest(
                "a group-by needs a key column".into(),
            ));
        }
        if request.aggregates.is_empty() {
            return Err(FrameError::InvalidRequest(
                "a group-by needs an aggregate".into(),
            ));
        }
        let find = |name: &str| {
            schema
                .index_of(name)
                .map_err(|_| FrameError::column_not_found(schema, name, "the input".into()))
        };
        let mut read: Vec<String> = Vec::new();
        let mut fields = Vec::new();
        for key in &request.keys {
            let field = schema.field(find(key)?);
            if read.contains(key) {
                return Err(FrameError::InvalidRequest(format!(
                    "key column {key:?} is named twice"
                )));
            }
            crate::keys::family::family_of(field.data_type()).map_err(|why| {
                FrameError::UnsupportedType {
                    column: key.clone(),
                    data_type: field.data_type().to_string(),
                    role: "a group-by key",
                    why: format!(": {why}"),
                }
            })?;
            read.push(key.clone());
            fields.push(field.clone().with_nullable(true));
        }
        let keys = read.len();
        let mut inputs = Vec::new();
        for aggregate in &request.aggregates {
            let input = match &aggregate.column {
                None => None,
                Some(c) => {
                    find(c)?;
                    Some(match read[keys..].iter().position(|r| r == c) {
                        Some(i) => keys + i,
                        None => {
                            read.push(c.clone());
                            read.len() - 1
                        }
                    })
                }
            };
            let field = input.map(|i| schema.field(find(&read[i]).unwrap_or(0)));
            let out = spec::output_field(aggregate, field)?;
            if fields.iter().any(|f: &Field| f.name() == out.name()) {
                return Err(FrameError::InvalidRequest(format!(
                    "the result would have two columns named {:?}; drop the repeated aggregate \
                     or rename the key column",
                    out.name()
                )));
            }
            fields.push(out);
            inputs.push(input);
        }
        Ok(AggregatePlan {
            read,
            keys,
            inputs,
            fields,
        })
    }

    /// The result's schema.
    pub fn schema(&self) -> SchemaRef {
        Arc::new(Schema::new(self.fields.clone()))
    }
}

/// The kernel states a group-by needs: one per distinct (column,
/// function), so that SUM and AVG of a column share one sum.
struct Kernels {
    unique: Vec<AggSpec>,
    /// Per aggregate, its state in `unique` (none for COUNT(*)).
    of: Vec<Option<usize>>,
}

fn kernel_specs(
    request: &AggregateRequest,
    plan: &AggregatePlan,
    is_float: impl Fn(usize) -> bool,
) -> Kernels {
    let mut unique: Vec<AggSpec> = Vec::new();
    let of = request
        .aggregates
        .iter()
        .zip(&plan.inputs)
        .map(|(aggregate, input)| {
            let column = input.map(|i| i - plan.keys)?;
            let func = match aggregate.func {
                AggFunc::CountRows => return None,
                AggFunc::Count => Func::Count,
                AggFunc::Sum | AggFunc::Avg => Func::Sum,
                AggFunc::Min => Func::Min,
                AggFunc::Max => Func::Max,
            };
            let spec = AggSpec {
                column,
                func,
                float: is_float(column),
            };
            Some(match unique.iter().position(|u| *u == spec) {
                Some(i) => i,
                None => {
                    unique.push(spec);
                    unique.len() - 1
                }
            })
        })
        .collect();
    Kernels { unique, of }
}

/// Groups `table` (holding at least the plan's read columns) as asked.
pub fn run(
    pool: &Pool,
    table: &Table,
    request: &AggregateRequest,
    progress: &dyn Progress,
) -> Result<(AggregateReport, Table)> {
    let started = Instant::now();
    let plan = AggregatePlan::new(request, table.schema())?;
    let columns: Vec<usize> = plan
        .read
        .iter()
        .map(|n| table.column_index(n))
        .collect::<Result<_>>()?;
    if streamable(request, &plan, table.schema()) {
        if let Some(done) = in_place(pool, table, &plan, &columns, request, progress)? {
            return Ok(done);
        }
    }
    let mut timer = PhaseTimer::new(progress);
    timer.start("code keys");
    let keys = GroupKeys::encode(pool, table, &columns[..plan.keys])?;
    timer.start("prepare values");
    let lanes: Vec<Lane> = columns[plan.keys..]
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let needs_values = request
                .aggregates
                .iter()
                .zip(&plan.inputs)
                .any(|(a, input)| *input == Some(plan.keys + i) && a.func != AggFunc::Count);
            lane(pool, table, c, needs_values)
        })
        .collect::<Result<_>>()?;
    let specs = kernel_specs(request, &plan, |c| lanes[c].kind.is_float());
    let mut phases = timer.finish();
    let one_value = lanes.len() <= 1
        && lanes
            .iter()
            .all(|l| l.kind == LaneKind::Int && l.parts.iter().all(|p| !p.has_nulls()));
    let estimated = estimate::estimate_groups(&keys);
    let per_group = 64 + 24 * specs.unique.len() as u64;
    let budget = numakit_ops::aggregate::choose::cache_budget(pool).per_worker_bytes();
    let kernels = match request.method {
        Some(m) if m != AggMethod::Auto => {
            if !one_value && m != AggMethod::Local {
                return Err(FrameError::InvalidRequest(format!(
                    "--method {} works on one integer value column without nulls; this group-by \
                     has {} value column(s) of other kinds, which only the local method handles",
                    m.name(),
                    lanes.len()
                )));
            }
            one_value
        }
        _ => one_value && estimated.saturating_mul(per_group) > budget,
    };
    let computed = if kernels {
        one_value_path(pool, table, &keys, lanes.first(), &specs, request, progress)?
    } else {
        request.memory_limit.check(
            "the group-by's per-worker tables",
            estimated
                .saturating_mul(per_group)
                .saturating_mul(pool.workers() as u64),
        )?;
        let mut computed = columns_path(pool, table, &keys, &lanes, &specs.unique, progress)
            .map_err(|e| name_overflow(e, request, &specs))?;
        computed.estimated_groups = Some(estimated);
        if one_value {
            computed.reason = format!(
                "~{estimated} groups (sampled): per-worker tables of about {} fit the cache \
                 budget of {} per worker, so every worker aggregates its own parts in place and \
                 the tables merge (no rows move), groups {}",
                crate::memory::human_bytes(estimated.saturating_mul(per_group)),
                crate::memory::human_bytes(budget),
                if computed.direct == Some(true) {
                    "indexed directly by their codes"
                } else {
                    "in hash tables"
                }
            );
        }
        computed
    };
    phases.extend(computed.phases);
    let mut timer = PhaseTimer::new(progress);
    timer.start("build result");
    let slots = slots(table, &plan, request, &lanes, &specs);
    let result = result_table(pool, table, &plan, &slots, computed.groups, |_, g| {
        keys.decode(table, &g.codes)
    })?;
    phases.extend(timer.finish());
    let report = AggregateReport {
        input_rows: table.rows() as u64,
        groups: result.rows() as u64,
        key_encoding: keys.encoding,
        path: computed.path,
        method: computed.method,
        reason: computed.reason,
        estimated_groups: computed.estimated_groups,
        direct_index: computed.direct,
        phases,
        seconds: started.elapsed().as_secs_f64(),
    };
    Ok((report, result))
}

/// A group-by from its input: what was loaded, every repetition's report,
/// and the last repetition's result.
pub struct AggregateOutcome {
    /// What loading the file did; `None` for a table in memory or a
    /// streamed file.
    pub input: Option<LoadStats>,
    /// One report per repetition, in order.
    pub runs: Vec<AggregateReport>,
    /// The last repetition's result: the key columns, then one column
    /// per aggregate.
    pub table: Table,
    /// Whether the result was checked against the reference.
    pub verified: bool,
}

/// Checks the request against the input's schema, reads the columns it
/// needs, and groups `reps` times (every repetition must agree).
pub fn aggregate_input(
    pool: &Pool,
    input: &Input,
    request: &AggregateRequest,
    options: &RunOptions,
    progress: &dyn Progress,
) -> Result<AggregateOutcome> {
    let plan = AggregatePlan::new(request, &input.schema())?;
    if let (Input::File(source), true) = (input, options.stream) {
        if let Some(mut outcome) = stream_input(pool, source, &plan, request, options, progress)? {
            if options.verify {
                let (table, _) = input.columns(pool, &plan.read, &request.memory_limit)?;
                options.check_verify_size(table.rows())?;
                crate::reference::check_aggregate(&table, request, &outcome.table)?;
                outcome.verified = true;
            }
            outcome.table = restore_output(pool, outcome.table, request, &plan, input)?;
            return Ok(outcome);
        }
    }
    progress.phase("load input");
    let (table, stats) = input.columns(pool, &plan.read, &request.memory_limit)?;
    options.check_verify_size(table.rows())?;
    let mut runs: Vec<AggregateReport> = Vec::new();
    let mut result: Option<Table> = None;
    for _ in 0..options.reps.max(1) {
        let (report, groups) = run(pool, &table, request, progress)?;
        match &result {
            None => result = Some(groups),
            Some(first) => crate::reference::check_repetition(first, &groups, "group-by", false)?,
        }
        runs.push(report);
    }
    let result = result.ok_or_else(|| FrameError::InvalidRequest("nothing ran".into()))?;
    if options.verify {
        crate::reference::check_aggregate(&table, request, &result)?;
    }
    let result = restore_output(pool, result, request, &plan, input)?;
    Ok(AggregateOutcome {
        input: stats,
        runs,
        table: result,
        verified: options.verify,
    })
}

/// A kernel's sum overflow, said with the aggregate's name.
fn name_overflow(error: FrameError, request: &AggregateRequest, kernels: &Kernels) -> FrameError {
    let FrameError::Ops(numakit_ops::OpsError::SumOverflow { aggregate }) = error else {
        return error;
    };
    let named = request
        .aggregates
        .iter()
        .zip(&kernels.of)
        .find(|(_, of)| **of == Some(aggregate))
        .map(|(a, _)| {
            format!(
                "{} of column {:?}",
                a.func.name().to_uppercase(),
                a.column.as_deref().unwrap_or("*")
            )
        })
        .unwrap_or_else(|| format!("aggregate {aggregate}"));
    FrameError::Overflow(format!(
        "{named} leaves 128 bits while adding up some group (numakit adds decimals exactly in \
         128 bits)"
    ))
}

/// The result with key, MIN and MAX columns in the types the input declares.
fn restore_output(
    pool: &Pool,
    result: Table,
    request: &AggregateRequest,
    plan: &AggregatePlan,
    input: &Input,
) -> Result<Table> {
    let declared = input.declared_schema();
    let type_of = |name: &str| {
        declared
            .field_with_name(name)
            .ok()
            .map(|f| f.data_type().clone())
    };
    let types: Vec<Option<arrow_schema::DataType>> = plan.read[..plan.keys]
        .iter()
        .map(|k| type_of(k))
        .chain(
            request
                .aggregates
                .iter()
                .map(|a| match (a.func, &a.column) {
                    (AggFunc::Min | AggFunc::Max, Some(c)) => type_of(c),
                    _ => None,
                }),
        )
        .collect();
    crate::input::restore_types(pool, result, &types)
}

/// Whether a group-by can run batch by batch (while its file is read):
/// no MIN or MAX of strings (they need every value's rank), no column read
/// twice, and no method asked for by name (`--method local` means the
/// operators' local method).
fn streamable(request: &AggregateRequest, plan: &AggregatePlan, schema: &Schema) -> bool {
    let unique = plan
        .read
        .iter()
        .enumerate()
        .all(|(i, n)| !plan.read[..i].contains(n));
    let byte_extremes = request.aggregates.iter().any(|a| {
        matches!(a.func, AggFunc::Min | AggFunc::Max)
            && a.column.as_ref().is_some_and(|c| {
                schema
                    .field_with_name(c)
                    .is_ok_and(|f| spec::value_type(f.data_type()) == spec::ValueType::Bytes)
            })
    });
    let named_method = request.method.is_some_and(|m| m != AggMethod::Auto);
    unique && !byte_extremes && !named_method
}

/// The groups of `feed` through the streaming engine: the groups, their
/// key columns (per output) and the rows read; `None` when it gave up.
/// The last item is how the groups were split into partitions, if they
/// were.
type StreamedGroups = (Vec<Groups>, Vec<Vec<ArrayRef>>, u64, Option<stream::Split>);

fn streamed(
    pool: &Pool,
    feed: &stream::Feed<'_>,
    plan: &AggregatePlan,
    kernels: &Kernels,
    request: &AggregateRequest,
) -> Result<Option<StreamedGroups>> {
    let streamed = stream::stream(
        pool,
        feed,
        plan.keys,
        &kernels.unique,
        &request.memory_limit,
    )
    .map_err(|e| name_overflow(e, request, kernels))?;
    Ok(match streamed {
        stream::Streamed::Done {
            groups,
            keys,
            rows,
            split,
        } => Some((groups, keys, rows, split)),
        stream::Streamed::TooManyGroups => None,
    })
}

/// The group-by of a table in memory through the streaming engine, each
/// worker over its own parts: no codes are made for the whole table first.
/// `None` when it gives up for too many groups.
fn in_place(
    pool: &Pool,
    table: &Table,
    plan: &AggregatePlan,
    columns: &[usize],
    request: &AggregateRequest,
    progress: &dyn Progress,
) -> Result<Option<(AggregateReport, Table)>> {
    let started = Instant::now();
    let projected = table.project(columns)?;
    let schema = projected.schema().clone();
    let kernels = kernel_specs(request, plan, |c| {
        spec::value_type(schema.field(plan.keys + c).data_type()) == spec::ValueType::Float
    });
    let empty = Table::new(table.name().to_string(), schema.clone(), Vec::new())?;
    let mut timer = PhaseTimer::new(progress);
    timer.start("aggregate in place");
    let feed = stream::Feed::Table(&projected);
    let Some((groups, keys, rows, split)) = streamed(pool, &feed, plan, &kernels, request)? else {
        return Ok(None);
    };
    timer.start("build result");
    let slots = slots(&empty, plan, request, &[], &kernels);
    let result = result_table(pool, &empty, plan, &slots, groups, |i, _| {
        Ok(keys[i].clone())
    })?;
    let report = AggregateReport {
        input_rows: rows,
        groups: result.rows() as u64,
        key_encoding: KeyEncoding::PerWorker { columns: plan.keys },
        path: AggregatePath::Streaming,
        method: match split {
            Some(_) => AggMethod::Partitioned,
            None => AggMethod::Local,
        },
        reason: match split {
            Some(stream::Split::Filed(p)) => format!(
                "every worker numbers the string keys of its own parts; once they were nearly \
                 all new it filed its rows (key bytes and values) into {p} partitions by key \
                 hash, and each partition was then numbered and aggregated on its own"
            ),
            _ => "every worker aggregates its own parts batch by batch into its own groups, \
                  which then merge by key"
                .into(),
        },
        estimated_groups: None,
        direct_index: Some(false),
        phases: timer.finish(),
        seconds: started.elapsed().as_secs_f64(),
    };
    Ok(Some((report, result)))
}

/// The group-by streamed from `source`, `options.reps` times; `None` when
/// it cannot stream (see [`streamable`]) or gives up for too many groups.
fn stream_input(
    pool: &Pool,
    source: &numakit_io::Source,
    plan: &AggregatePlan,
    request: &AggregateRequest,
    options: &RunOptions,
    progress: &dyn Progress,
) -> Result<Option<AggregateOutcome>> {
    let file_schema = source.schema();
    if !streamable(request, plan, &file_schema) {
        return Ok(None);
    }
    let projection = source.project(Some(&plan.read))?;
    let schema = projection.schema().clone();
    let empty = Table::new(
        source.path().display().to_string(),
        schema.clone(),
        Vec::new(),
    )?;
    let kernels = kernel_specs(request, plan, |c| {
        spec::value_type(schema.field(plan.keys + c).data_type()) == spec::ValueType::Float
    });
    let slots = slots(&empty, plan, request, &[], &kernels);
    let mut runs = Vec::new();
    let mut result: Option<Table> = None;
    for _ in 0..options.reps.max(1) {
        let started = Instant::now();
        let mut timer = PhaseTimer::new(progress);
        timer.start("read and aggregate");
        let feed = stream::Feed::File {
            source,
            projection: &projection,
        };
        let Some((groups, keys, rows, split)) = streamed(pool, &feed, plan, &kernels, request)?
        else {
            return Ok(None);
        };
        timer.start("build result");
        let table = result_table(pool, &empty, plan, &slots, groups, |i, _| {
            Ok(keys[i].clone())
        })?;
        let phases = timer.finish();
        runs.push(AggregateReport {
            input_rows: rows,
            groups: table.rows() as u64,
            key_encoding: KeyEncoding::PerWorker { columns: plan.keys },
            path: AggregatePath::Streaming,
            method: match split {
                Some(_) => AggMethod::Partitioned,
                None => AggMethod::Local,
            },
            reason: streaming_reason(split),
            estimated_groups: None,
            direct_index: Some(false),
            phases,
            seconds: started.elapsed().as_secs_f64(),
        });
        match &result {
            None => result = Some(table),
            Some(first) => crate::reference::check_repetition(first, &table, "group-by", false)?,
        }
    }
    let table = result.ok_or_else(|| FrameError::InvalidRequest("nothing ran".into()))?;
    Ok(Some(AggregateOutcome {
        input: None,
        runs,
        table,
        verified: false,
    }))
}

/// Why the streaming engine ran as it did.
fn streaming_reason(split: Option<stream::Split>) -> String {
    match split {
        None => "every worker aggregates the batches it decodes into its own groups, which \
                 then merge by key; the file is never held whole"
            .into(),
        Some(stream::Split::Owners(p)) => format!(
            "every worker aggregates the batches it decodes; once its groups outgrew its cache it \
             sent its rows, a buffer at a time, to {p} partitions by key hash, each owned by one \
             worker, so every group is held once; the file is never held whole"
        ),
        Some(stream::Split::Filed(p)) => format!(
            "every worker numbers the string keys it decodes; once they were nearly all new it \
             filed its rows (key bytes and values) into {p} partitions by key hash, and each \
             partition was then numbered and aggregated on its own; neither the file nor a table \
             of every key is held whole"
        ),
    }
}

struct Computed {
    groups: Vec<Groups>,
    path: AggregatePath,
    method: AggMethod,
    reason: String,
    estimated_groups: Option<u64>,
    direct: Option<bool>,
    phases: Vec<PhaseTime>,
}

fn one_value_path(
    pool: &Pool,
    table: &Table,
    keys: &GroupKeys,
    lane: Option<&Lane>,
    kernels: &Kernels,
    request: &AggregateRequest,
    progress: &dyn Progress,
) -> Result<Computed> {
    let slices: Vec<&[i64]> = match lane {
        Some(l) => l
            .parts
            .iter()
            .map(|p| match p.column(l.kind).values {
                Values::I64(v) => v,
                _ => &[],
            })
            .collect(),
        None => Vec::new(),
    };
    let value =
        |p: usize, r: usize| -> i64 { slices.get(p).and_then(|v| v.get(r)).copied().unwrap_or(0) };
    request
        .memory_limit
        .check("the group-by's tuples", table.rows() as u64 * TUPLE_BYTES)?;
    let source = column_source(pool, table, &keys.parts, &slices)?;
    let options = AggOptions {
        cost_model: request.cost_model.clone(),
        ..AggOptions::new(request.method.unwrap_or(AggMethod::Auto))
    };
    let mut result = kernels::aggregate_columns(pool, &source, &options, progress)?;
    let mut phases = std::mem::take(&mut result.phases);
    let mut timer = PhaseTimer::new(progress);
    timer.start("convert groups");
    let mut groups = groups_of_lists(pool, std::mem::take(&mut result.groups), &kernels.unique)?;
    phases.extend(timer.finish());
    if keys.has_null_keys() {
        let (mut count, mut sum, mut min, mut max) = (0u64, 0i128, i64::MAX, i64::MIN);
        for (p, part) in keys.parts.iter().enumerate() {
            for &r in &part.invalid {
                let v = value(p, r as usize);
                count += 1;
                sum += i128::from(v);
                min = min.min(v);
                max = max.max(v);
            }
        }
        let null_group = kernels::Group {
            key: 0,
            count,
            sum,
            min,
            max,
        };
        let mut null_groups = groups_of_list(&kernels.unique, vec![null_group]);
        null_groups.codes = vec![None];
        groups.push(null_groups);
    }
    Ok(Computed {
        groups,
        path: AggregatePath::OneValue,
        method: result.method.unwrap_or(AggMethod::Auto),
        reason: if result.reason.is_empty() {
            "one integer value column without nulls: the operators' aggregation methods".into()
        } else {
            result.reason
        },
        estimated_groups: result.estimated_groups,
        direct: None,
        phases,
    })
}

/// The kernels' input read in place: worker w's segments are the key codes
/// and values (`slices[p]`, empty for COUNT(*) alone) of the parts it
/// holds, in part order, rows without a key left out.
fn column_source<'a>(
    pool: &Pool,
    table: &Table,
    codes: &'a [PartCodes],
    slices: &[&'a [i64]],
) -> Result<ColumnSource<'a>> {
    let workers = pool.workers().max(1);
    let mut segments: Vec<Vec<ColumnSegment<'a>>> = vec![Vec::new(); workers];
    for (p, part) in table.parts().iter().enumerate() {
        segments[part.worker % workers].push(ColumnSegment {
            keys: &codes[p].codes,
            values: slices.get(p).copied(),
            keyless: &codes[p].invalid,
        });
    }
    Ok(ColumnSource::new(segments)?)
}

/// The kernels' lists of groups as [`Groups`], one per list, converted on
/// the pool and each list freed once converted.
fn groups_of_lists(
    pool: &Pool,
    lists: Vec<Vec<kernels::Group>>,
    specs: &[AggSpec],
) -> Result<Vec<Groups>> {
    let workers = pool.workers().max(1);
    let cells: Vec<std::sync::Mutex<Vec<kernels::Group>>> =
        lists.into_iter().map(std::sync::Mutex::new).collect();
    crate::par::per_part(
        pool,
        cells.len(),
        |i| i % workers,
        |i| {
            let list = cells[i]
                .lock()
                .map(|mut l| std::mem::take(&mut *l))
                .unwrap_or_default();
            groups_of_list(specs, list)
        },
    )
}

/// One kernel list as [`Groups`], in one pass over the list (it is read
/// from memory once, not once per column).
fn groups_of_list(specs: &[AggSpec], list: Vec<kernels::Group>) -> Groups {
    let n = list.len();
    let mut codes = Vec::with_capacity(n);
    let mut rows = Vec::with_capacity(n);
    let mut sums = Vec::with_capacity(if wants(specs, Func::Sum) { n } else { 0 });
    let mut mins = Vec::with_capacity(if wants(specs, Func::Min) { n } else { 0 });
    let mut maxes = Vec::with_capacity(if wants(specs, Func::Max) { n } else { 0 });
    for g in &list {
        codes.push(Some(g.key));
        rows.push(g.count);
        if sums.capacity() > 0 {
            sums.push(g.sum);
        }
        if mins.capacity() > 0 {
            mins.push(i128::from(g.min));
        }
        if maxes.capacity() > 0 {
            maxes.push(i128::from(g.max));
        }
    }
    drop(list);
    // Each list goes to the last spec that wants it; earlier ones copy it
    // (the specs are unique, so with one value column there are none).
    let hand = |values: &mut Vec<i128>, k: usize| {
        if specs[k + 1..].iter().any(|s| s.func == specs[k].func) {
            values.clone()
        } else {
            std::mem::take(values)
        }
    };
    let states = (0..specs.len())
        .map(|k| {
            let nulls = Tally::zeros(n);
            match specs[k].func {
                Func::Count => State::Count { nulls },
                Func::Sum => State::SumInt {
                    sum: hand(&mut sums, k),
                    carry: Tally::zeros(n),
                    nulls,
                },
                Func::Min => State::MinInt {
                    v: hand(&mut mins, k),
                    nulls,
                },
                Func::Max => State::MaxInt {
                    v: hand(&mut maxes, k),
                    nulls,
                },
            }
        })
        .collect();
    Groups {
        codes,
        rows,
        states,
    }
}

fn wants(specs: &[AggSpec], func: Func) -> bool {
    specs.iter().any(|s| s.func == func)
}

fn columns_path(
    pool: &Pool,
    table: &Table,
    keys: &GroupKeys,
    lanes: &[Lane],
    specs: &[AggSpec],
    progress: &dyn Progress,
) -> Result<Computed> {
    let workers = pool.workers().max(1);
    let mut segments: Vec<Vec<Segment<'_>>> = vec![Vec::new(); workers];
    for (p, part) in table.parts().iter().enumerate() {
        segments[part.worker % workers].push(Segment {
            codes: &keys.parts[p].codes,
            keyless: &keys.parts[p].invalid,
            columns: lanes.iter().map(|l| l.parts[p].column(l.kind)).collect(),
        });
    }
    let options = ColumnsOptions {
        max_code: Some(keys.max_code),
        expected_groups: (table.rows() / 8).clamp(16, 1 << 16),
    };
    let result = columns::aggregate(pool, &segments, specs, &options, progress)?;
    Ok(Computed {
        groups: result.groups,
        path: AggregatePath::Columns,
        method: AggMethod::Local,
        reason: format!(
            "{} value column(s) with nulls, floats, wide numbers or strings: the many-column \
             local aggregation, groups {}",
            lanes.len(),
            if result.direct {
                "indexed directly by their codes"
            } else {
                "in hash tables"
            }
        ),
        estimated_groups: None,
        direct: Some(result.direct),
        phases: result.phases,
    })
}

/// Where each aggregate's input and state are.
fn slots<'a>(
    table: &Table,
    plan: &AggregatePlan,
    request: &'a AggregateRequest,
    lanes: &'a [Lane],
    kernels: &Kernels,
) -> Vec<output::Slot<'a>> {
    request
        .aggregates
        .iter()
        .zip(&plan.inputs)
        .enumerate()
        .map(|(i, (aggregate, input))| {
            let lane_index = input.map(|i| i - plan.keys);
            let column = input.and_then(|i| table.column_index(&plan.read[i]).ok());
            let input_scale = column.map_or(0, |c| match table.schema().field(c).data_type() {
                arrow_schema::DataType::Decimal32(_, s)
                | arrow_schema::DataType::Decimal64(_, s)
                | arrow_schema::DataType::Decimal128(_, s) => i32::from(*s),
                _ => 0,
            });
            output::Slot {
                aggregate,
                field: plan.fields[plan.keys + i].clone(),
                column,
                lane: lane_index.and_then(|l| lanes.get(l)),
                state: kernels.of[i],
                input_scale,
            }
        })
        .collect()
}

/// The result table: per output of groups, its key columns (`keys(i, g)`
/// for output `i`'s groups `g`) and every aggregate's column. Each output's
/// groups are freed as soon as its columns are built, so the groups and
/// the result are not held whole at once.
fn result_table(
    pool: &Pool,
    table: &Table,
    plan: &AggregatePlan,
    slots: &[output::Slot<'_>],
    groups: Vec<Groups>,
    keys: impl Fn(usize, &Groups) -> Result<Vec<ArrayRef>> + Sync,
) -> Result<Table> {
    let schema = plan.schema();
    let workers = pool.workers().max(1);
    let batches = try_per_item(pool, groups, |i, g| {
        let mut arrays: Vec<ArrayRef> = keys(i, &g)?;
        for slot in slots {
            arrays.push(output::column(table, &g, slot)?);
        }
        drop(g);
        RecordBatch::try_new(schema.clone(), arrays)
            .map_err(|e| FrameError::arrow("assembling the group-by's result", e))
    })?;
    let outputs = batches.into_iter().map(|b| vec![b]).collect();
    Table::of_outputs("the group-by's result", schema, outputs, workers)
}
