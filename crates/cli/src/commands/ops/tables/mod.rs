//! The operator commands on users' tables (files of any common column
//! type): each builds its request from the arguments, makes one call into
//! the table layer (`numakit_frame`), and renders what came back: the
//! first rows as a table (or the whole result written with `--out`), the
//! phases, the memory used. This module holds what the three share.

pub mod aggregate;
pub mod join;
pub mod sort;

use std::path::Path;

use anyhow::{Context, Result};
use arrow_array::RecordBatch;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::SchemaRef;
use numakit_frame::load::LoadStats;
use numakit_frame::memory::{human_bytes, peak_resident_bytes};
use numakit_frame::sink::FileSink;
use numakit_frame::{Input, MemoryLimit, Table};
use numakit_io::SourceOptions;
use numakit_ops::PhaseTime;
use serde::Serialize;

use crate::commands::ops::args::OpCommon;
use crate::commands::ops::common::format_for;
use crate::render::format::{table, Spread};
use numakit_io::{Format, WriteOptions};

/// Characters of a cell beyond which it is cut in printed rows.
const CELL_CHARS: usize = 40;

/// `--reps` and `--verify`.
pub fn run_options(common: &OpCommon) -> numakit_frame::RunOptions {
    numakit_frame::RunOptions {
        reps: common.reps,
        verify: common.verify,
        verify_limit_rows: crate::commands::ops::common::VERIFY_LIMIT_ROWS,
        ..numakit_frame::RunOptions::default()
    }
}

/// A file input (its schema read, nothing else yet).
pub fn file_input(path: &Path, threads: usize, format: Option<Format>) -> Result<Input> {
    let size = std::fs::metadata(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    // Several CSV units per worker, so that uneven ones balance out.
    let options = SourceOptions {
        csv_unit_bytes: (size / (threads.max(1) as u64 * 4)).clamp(1 << 20, 32 << 20),
        keep_dictionaries: true,
        narrow_decimals: true,
        format: format_for(path, format),
        ..SourceOptions::default()
    };
    Input::file(path, &options).with_context(|| format!("reading {}", path.display()))
}

/// Writes `result` to `path` (format from the extension), all or nothing.
pub fn write_result(path: &Path, result: &Table, options: &WriteOptions) -> Result<()> {
    numakit_io::write_batches(path, result.schema(), &result.batches(), options)
        .with_context(|| format!("writing {}", path.display()))
}

/// Completes a result written with `--out` (renames it into place) and
/// returns its schema; `None` when there was no file.
pub fn finish_file(file: Option<FileSink>) -> Result<Option<SchemaRef>> {
    let Some(file) = file else {
        return Ok(None);
    };
    let schema = file.schema().cloned();
    let path = file.path().to_path_buf();
    file.finish()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(schema)
}

/// What every table command reports besides its operator's report.
#[derive(Serialize)]
pub struct RunFigures {
    /// Operator seconds of every repetition.
    pub times: Vec<f64>,
    /// Their median.
    pub seconds: f64,
    /// The whole command so far, loading included.
    pub wall_seconds: f64,
    /// The process's peak resident memory so far (VmHWM), in bytes.
    pub peak_rss_bytes: u64,
    /// The memory limit in force (`--memory-limit` or its default), in
    /// bytes.
    pub memory_limit_bytes: u64,
    /// The result's columns.
    pub columns: Vec<String>,
    /// Where the result went.
    pub out: Option<String>,
}

impl RunFigures {
    /// The figures of a run whose repetitions took `times` seconds, begun
    /// at `started`, whose result has the schema `result` and went to `out`.
    pub fn new(
        times: Vec<f64>,
        started: std::time::Instant,
        limit: &MemoryLimit,
        result: Option<&SchemaRef>,
        out: Option<&Path>,
    ) -> Self {
        RunFigures {
            seconds: Spread::of(&times).median,
            times,
            wall_seconds: started.elapsed().as_secs_f64(),
            peak_rss_bytes: peak_resident_bytes(),
            memory_limit_bytes: limit.bytes,
            columns: result.map_or_else(Vec::new, |schema| {
                schema.fields().iter().map(|f| f.name().clone()).collect()
            }),
            out: out.map(|p| p.display().to_string()),
        }
    }

    /// `operator 0.123 s (median of 3: 0.120-0.130) | whole run 0.5 s | peak memory ...`
    pub fn line(&self) -> String {
        let spread = Spread::of(&self.times);
        let reps = if self.times.len() > 1 {
            format!(
                " (median of {}: {:.3}-{:.3})",
                self.times.len(),
                spread.min,
                spread.max
            )
        } else {
            String::new()
        };
        format!(
            "operator {:.3} s{reps} | whole run {:.3} s | peak memory {} (limit {})",
            self.seconds,
            self.wall_seconds,
            human_bytes(self.peak_rss_bytes),
            human_bytes(self.memory_limit_bytes)
        )
    }
}

/// `name 0.12 s | name 0.40 s`.
pub fn phases_line(loads: &[(&str, &Option<LoadStats>)], phases: &[PhaseTime]) -> String {
    loads
        .iter()
        .filter_map(|(what, stats)| {
            stats
                .as_ref()
                .map(|s| format!("load {what} {:.3} s", s.seconds))
        })
        .chain(
            phases
                .iter()
                .map(|p| format!("{} {:.3} s", p.name, p.seconds)),
        )
        .collect::<Vec<_>>()
        .join(" | ")
}

/// `path (rows, format, units)` of a loaded input.
pub fn describe_load(stats: &Option<LoadStats>, name: &str) -> String {
    match stats {
        Some(s) => format!("{} ({} rows)", s.path, s.rows),
        None => name.to_string(),
    }
}

/// The first `rows` rows of `result` as a text table, with a line saying
/// how many there are.
pub fn head(result: &Table, rows: usize) -> Result<String> {
    let total = result.rows();
    let mut out = String::new();
    if rows > 0 && total > 0 {
        let titles: Vec<String> = result
            .schema()
            .fields()
            .iter()
            .map(|f| format!("{} ({})", f.name(), f.data_type()))
            .collect();
        let mut lines = vec![titles];
        for batch in result.head(rows) {
            lines.extend(batch_rows(&batch)?);
        }
        out.push_str(&table(&lines));
        out.push('\n');
    }
    let shown = rows.min(total);
    out.push_str(&if shown < total {
        format!("{total} rows (first {shown} shown; --out FILE writes them all)")
    } else {
        format!("{total} rows")
    });
    Ok(out)
}

/// A column as it can be printed: timestamps in a named time zone (which
/// need a time-zone database the formatter lacks) shown in UTC.
fn printable(column: &arrow_array::ArrayRef) -> arrow_array::ArrayRef {
    use arrow_array::Array;
    match column.data_type() {
        arrow_schema::DataType::Timestamp(unit, Some(tz)) if !tz.starts_with(['+', '-']) => {
            let utc = arrow_schema::DataType::Timestamp(*unit, Some("+00:00".into()));
            arrow_cast::cast(column, &utc).unwrap_or_else(|_| column.clone())
        }
        _ => column.clone(),
    }
}

fn batch_rows(batch: &RecordBatch) -> Result<Vec<Vec<String>>> {
    let options = FormatOptions::default().with_null("null");
    let columns: Vec<arrow_array::ArrayRef> = batch.columns().iter().map(printable).collect();
    let formatters = columns
        .iter()
        .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((0..batch.num_rows())
        .map(|row| {
            formatters
                .iter()
                .map(|f| cut(f.value(row).to_string()))
                .collect()
        })
        .collect())
}

fn cut(text: String) -> String {
    let text = text.replace(['\n', '\r', '\t'], " ");
    if text.chars().count() <= CELL_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(CELL_CHARS - 1).collect();
    cut.push('…');
    cut
}
