//! `numakit sort --input FILE`: the table layer's sort of a file,
//! rendered.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use numakit_frame::load::LoadStats;
use numakit_frame::sink::{FileSink, ResultSink};
use numakit_frame::sort::{sort_input_into, InputOrder, SortColumn, SortReport, SortRequest};
use numakit_frame::Table;
use numakit_pool::Pool;
use serde::Serialize;

use crate::commands::ops::args::SortArgs;
use crate::commands::ops::tables::{
    describe_load, file_input, finish_file, head, phases_line, run_options, RunFigures,
};
use crate::common::output;
use crate::common::progress::Spinner;

#[derive(Serialize)]
struct FileSortReport {
    input: Option<LoadStats>,
    rows: u64,
    #[serde(flatten)]
    figures: RunFigures,
    sort: SortReport,
    verified: bool,
}

/// The sort key of `--key`, `--descending` and `--nulls`.
fn sort_columns(args: &SortArgs) -> Result<Vec<SortColumn>> {
    let nulls_first = match args.nulls.as_str() {
        "first" => true,
        "last" => false,
        other => crate::usage_bail!("--nulls `{other}`: say first or last"),
    };
    args.key
        .iter()
        .map(|spec| {
            let (name, descending) = match spec.rsplit_once(':') {
                Some((name, "desc")) => (name.to_string(), true),
                Some((name, "asc")) => (name.to_string(), false),
                Some((_, other)) => {
                    crate::usage_bail!("sort key `{spec}`: `{other}` is not asc or desc")
                }
                None => (spec.clone(), args.descending),
            };
            Ok(SortColumn {
                name,
                descending,
                nulls_first,
            })
        })
        .collect()
}

fn request(args: &SortArgs) -> Result<SortRequest> {
    let by = sort_columns(args)?;
    let columns = match (&args.columns, &args.payload) {
        (Some(list), _) => Some(list.clone()),
        (None, Some(payload)) => Some(
            by.iter()
                .map(|c| c.name.clone())
                .chain(std::iter::once(payload.clone()))
                .collect(),
        ),
        (None, None) => None,
    };
    Ok(SortRequest {
        by,
        columns,
        memory_limit: crate::common::budget::limit(),
    })
}

/// Sorts the file `path` as `args` say, on `pool`.
pub fn run(pool: &Pool, path: &Path, args: &SortArgs, json: bool, quiet: bool) -> Result<()> {
    let started = Instant::now();
    let request = request(args)?;
    let input = file_input(path, pool.workers(), args.common.format)?;
    let spinner = Spinner::new(quiet || json);
    spinner.set_prefix("sort");
    // A result written to a file goes there a window at a time.
    let mut file = args
        .common
        .out
        .as_ref()
        .map(|path| FileSink::new(path, args.common.write_options(path)));
    let mut outcome = sort_input_into(
        pool,
        &input,
        &request,
        &run_options(&args.common),
        &spinner,
        file.as_mut().map(|f| f as &mut dyn ResultSink),
    )?;
    spinner.finish();
    let schema = finish_file(file)?;
    let times = outcome.runs.iter().map(|r| r.seconds).collect();
    let last = outcome
        .runs
        .pop()
        .ok_or_else(|| anyhow::anyhow!("no sort ran"))?;
    let report = FileSortReport {
        rows: last.rows,
        figures: RunFigures::new(
            times,
            started,
            &request.memory_limit,
            outcome
                .table
                .as_ref()
                .map(|t| t.schema())
                .or(schema.as_ref()),
            args.common.out.as_deref(),
        ),
        input: outcome.input,
        sort: last,
        verified: outcome.verified,
    };
    output::report_with(json, &report, || {
        text(&report, &request, args, path, outcome.table.as_ref())
    })
}

/// The sort's report as text, with the first rows or where they went.
fn text(
    report: &FileSortReport,
    request: &SortRequest,
    args: &SortArgs,
    path: &Path,
    table: Option<&Table>,
) -> Result<String> {
    let order = match report.sort.input_order {
        InputOrder::Sorted => "the input was already in order: not sorted again",
        InputOrder::Reversed => "the input was in reverse order: reversed, not sorted",
        InputOrder::Unsorted => "sorted",
    };
    let keys: Vec<String> = request
        .by
        .iter()
        .map(|c| format!("{}{}", c.name, if c.descending { " desc" } else { "" }))
        .collect();
    let mut text = format!(
        "sort of {} by {} (nulls {}): {}\nkeys: {}\n{}\n{}",
        describe_load(&report.input, &path.display().to_string()),
        keys.join(", "),
        if args.nulls == "first" {
            "first"
        } else {
            "last"
        },
        order,
        report.sort.key_encoding.describe(),
        phases_line(&[("input", &report.input)], &report.sort.phases),
        report.figures.line()
    );
    if report.verified {
        text.push_str("\nverified against the sequential reference");
    }
    match (table, &args.common.out) {
        (_, Some(out)) => text.push_str(&format!(
            "\n\n{} rows written to {}",
            report.rows,
            out.display()
        )),
        (Some(table), None) => text.push_str(&format!("\n\n{}", head(table, args.common.show)?)),
        (None, None) => {}
    }
    Ok(text)
}
