//! `numakit aggregate --input FILE`: the table layer's group-by of a file,
//! rendered.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use numakit_frame::aggregate::{aggregate_input, Aggregate, AggregateReport, AggregateRequest};
use numakit_frame::load::LoadStats;
use numakit_frame::Table;
use numakit_ops::aggregate::AggMethod;
use numakit_pool::Pool;
use serde::Serialize;

use crate::commands::ops::args::AggregateArgs;
use crate::commands::ops::tables::{
    describe_load, file_input, head, phases_line, run_options, write_result, RunFigures,
};
use crate::common::output;
use crate::common::progress::Spinner;

#[derive(Serialize)]
struct FileAggregateReport {
    input: Option<LoadStats>,
    /// Groups.
    rows: u64,
    #[serde(flatten)]
    figures: RunFigures,
    aggregate: AggregateReport,
    verified: bool,
}

fn method(list: &[String]) -> Result<Option<AggMethod>> {
    match list {
        [one] if one == "auto" => Ok(None),
        [one] if one != "all" => Ok(Some(one.parse().map_err(crate::common::usage::invalid)?)),
        _ => crate::usage_bail!(
            "with a file name one method (shuffle, naive-shuffle, migration, migration-copy, local, partitioned) \
             or auto; lists and `all` compare the methods on generated data"
        ),
    }
}

fn request(args: &AggregateArgs) -> Result<AggregateRequest> {
    let mut aggregates = match &args.agg {
        Some(list) => list.clone(),
        None => Vec::new(),
    };
    if let Some(value) = &args.value {
        for a in Aggregate::all_of(value) {
            if !aggregates.contains(&a) {
                aggregates.push(a);
            }
        }
    }
    if aggregates.is_empty() {
        aggregates = Aggregate::all_of("value");
    }
    Ok(AggregateRequest {
        keys: args.key.clone(),
        aggregates,
        method: method(&args.method)?,
        memory_limit: crate::common::budget::limit(),
        cost_model: crate::commands::ops::common::cost_model(args.cost_model.as_deref())?,
    })
}

/// Groups the file `path` as `args` say, on `pool`.
pub fn run(pool: &Pool, path: &Path, args: &AggregateArgs, json: bool, quiet: bool) -> Result<()> {
    let started = Instant::now();
    let request = request(args)?;
    let input = file_input(path, pool.workers(), args.common.format)?;
    let spinner = Spinner::new(quiet || json);
    spinner.set_prefix("aggregate");
    let mut outcome = aggregate_input(
        pool,
        &input,
        &request,
        &numakit_frame::RunOptions {
            stream: !args.in_memory,
            ..run_options(&args.common)
        },
        &spinner,
    )?;
    spinner.finish();
    if let Some(out) = &args.common.out {
        write_result(out, &outcome.table, &args.common.write_options(out))?;
    }
    let times = outcome.runs.iter().map(|r| r.seconds).collect();
    let last = outcome
        .runs
        .pop()
        .ok_or_else(|| anyhow::anyhow!("no group-by ran"))?;
    let report = FileAggregateReport {
        rows: last.groups,
        figures: RunFigures::new(
            times,
            started,
            &request.memory_limit,
            Some(outcome.table.schema()),
            args.common.out.as_deref(),
        ),
        input: outcome.input,
        aggregate: last,
        verified: outcome.verified,
    };
    output::report_with(json, &report, || {
        text(&report, &request, args, path, &outcome.table)
    })
}

/// The group-by's report as text, with the first groups or where they
/// went.
fn text(
    report: &FileAggregateReport,
    request: &AggregateRequest,
    args: &AggregateArgs,
    path: &Path,
    table: &Table,
) -> Result<String> {
    let a = &report.aggregate;
    let mut text = format!(
        "group-by of {} by {}: {} groups\nkeys: {}; {} ({} path): {}\n{}\n{}",
        describe_load(&report.input, &path.display().to_string()),
        request.keys.join(", "),
        report.rows,
        a.key_encoding.describe(),
        a.method.name(),
        crate::render::format::name_of(&a.path),
        a.reason,
        phases_line(&[("input", &report.input)], &a.phases),
        report.figures.line()
    );
    if report.verified {
        text.push_str("\nverified against the sequential reference");
    }
    match &args.common.out {
        None => text.push_str(&format!("\n\n{}", head(table, args.common.show)?)),
        Some(out) => text.push_str(&format!(
            "\n\n{} groups written to {}",
            report.rows,
            out.display()
        )),
    }
    Ok(text)
}
