//! `numakit join --left FILE --right FILE`: the table layer's join of two
//! files, rendered.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use numakit_frame::join::{join_inputs_into, JoinOutcome, JoinReport, JoinRequest};
use numakit_frame::load::LoadStats;
use numakit_frame::sink::{FileSink, ResultSink};
use numakit_ops::join::{JoinAlgorithm, JoinKind};
use numakit_pool::Pool;
use serde::Serialize;

use crate::commands::ops::args::JoinArgs;
use crate::commands::ops::tables::{
    describe_load, file_input, finish_file, head, phases_line, run_options, RunFigures,
};
use crate::common::output;
use crate::common::progress::Spinner;

/// Everything the command reports about a join of files.
#[derive(Serialize)]
struct FileJoinReport {
    left: Option<LoadStats>,
    right: Option<LoadStats>,
    /// Result rows.
    rows: u64,
    #[serde(flatten)]
    figures: RunFigures,
    /// The last repetition's report.
    join: JoinReport,
    verified: bool,
}

fn algorithm(list: &[String]) -> Result<Option<JoinAlgorithm>> {
    match list {
        [one] if one == "auto" => Ok(None),
        [one] if one == "all" => crate::usage_bail!(
            "--algorithm all compares the kernels on generated data; with files name one \
             algorithm (npo, pro, cprl, mpsm) or auto"
        ),
        [one] => Ok(Some(one.parse().map_err(crate::common::usage::invalid)?)),
        _ => crate::usage_bail!(
            "with files name one algorithm (npo, pro, cprl, mpsm) or auto, not a list"
        ),
    }
}

fn request(args: &JoinArgs) -> Result<JoinRequest> {
    let kind: JoinKind = args.kind.parse().map_err(crate::common::usage::invalid)?;
    let count_only = match (args.output.as_deref(), &args.common.out) {
        (Some("count"), Some(_)) => {
            crate::usage_bail!("--output count writes no rows; drop --out or the --output")
        }
        (Some("count"), None) => true,
        (Some("materialize") | None, _) => false,
        (Some("checksum"), _) => {
            crate::usage_bail!(
                "--output checksum is for generated inputs; with files use count or materialize"
            )
        }
        (Some(other), _) => crate::usage_bail!("unknown output `{other}` (count, materialize)"),
    };
    Ok(JoinRequest {
        left_on: args.left_key.clone().unwrap_or_else(|| args.key.clone()),
        right_on: args.right_key.clone().unwrap_or_else(|| args.key.clone()),
        kind,
        algorithm: algorithm(&args.algorithm)?,
        count_only,
        left_columns: args.left_columns.clone(),
        right_columns: args.right_columns.clone(),
        suffix: args.suffix.clone(),
        memory_limit: crate::common::budget::limit(),
    })
}

/// Joins the two files of `args` on `pool`.
pub fn run(
    pool: &Pool,
    (left, right): (&Path, &Path),
    args: &JoinArgs,
    json: bool,
    quiet: bool,
) -> Result<()> {
    let started = Instant::now();
    let request = request(args)?;
    let left_input = file_input(left, pool.workers(), args.common.format)?;
    let right_input = file_input(right, pool.workers(), args.common.format)?;
    let spinner = Spinner::new(quiet || json);
    spinner.set_prefix("join");
    // A result written to a file goes there as it is made (a streamed
    // join never holds it whole).
    let mut file = match &args.common.out {
        Some(path) if !request.count_only => {
            Some(FileSink::new(path, args.common.write_options(path)))
        }
        _ => None,
    };
    let outcome = join_inputs_into(
        pool,
        (&left_input, &right_input),
        &request,
        &run_options(&args.common),
        &spinner,
        file.as_mut().map(|f| f as &mut dyn ResultSink),
    )?;
    spinner.finish();
    let schema = finish_file(file)?;
    let JoinOutcome {
        left: lstats,
        right: rstats,
        mut runs,
        table,
        verified,
    } = outcome;
    let times = runs.iter().map(|r| r.seconds).collect();
    let last = runs.pop().ok_or_else(|| anyhow::anyhow!("no join ran"))?;
    let report = FileJoinReport {
        rows: last.rows,
        figures: RunFigures::new(
            times,
            started,
            &request.memory_limit,
            table.as_ref().map(|t| t.schema()).or(schema.as_ref()),
            args.common.out.as_deref(),
        ),
        left: lstats,
        right: rstats,
        join: last,
        verified,
    };
    output::report_with(json, &report, || {
        let outcome = match (&table, &args.common.out) {
            (Some(t), None) => head(t, args.common.show)?,
            (None, Some(path)) if !request.count_only => {
                format!("{} rows written to {}", report.rows, path.display())
            }
            (Some(_), Some(path)) => {
                format!("{} rows written to {}", report.rows, path.display())
            }
            (None, _) => format!("{} rows (counted, not materialised)", report.rows),
        };
        Ok(format!(
            "{}\n\n{outcome}",
            render(&report, &request, (left, right))
        ))
    })
}

fn render(r: &FileJoinReport, request: &JoinRequest, (left, right): (&Path, &Path)) -> String {
    let j = &r.join;
    let kind = match j.kind {
        JoinKind::Inner => "inner",
        JoinKind::LeftOuter => "left outer",
        JoinKind::Semi => "semi",
        JoinKind::Anti => "anti",
    };
    let keys: Vec<String> = request
        .left_on
        .iter()
        .zip(&request.right_on)
        .map(|(l, r)| {
            if l == r {
                l.clone()
            } else {
                format!("{l} = {r}")
            }
        })
        .collect();
    let mut out = format!(
        "{kind} join of {} and {} on {}: {} result rows\n",
        describe_load(&r.left, &left.display().to_string()),
        describe_load(&r.right, &right.display().to_string()),
        keys.join(", "),
        r.rows
    );
    out.push_str(&format!(
        "keys: {}; {} left and {} right rows cannot match (null keys or values the other side lacks)\n",
        j.key_encoding.describe(),
        j.left_keyless,
        j.right_keyless
    ));
    out.push_str(&format!("algorithm: {}", j.algorithm.name()));
    if let Some(why) = &j.auto_reason {
        out.push_str(&format!(" (auto: {why})"));
    }
    out.push('\n');
    out.push_str(&phases_line(
        &[("left", &r.left), ("right", &r.right)],
        &j.phases,
    ));
    out.push('\n');
    out.push_str(&r.figures.line());
    if r.verified {
        out.push_str("\nverified against the sequential reference");
    }
    out
}
