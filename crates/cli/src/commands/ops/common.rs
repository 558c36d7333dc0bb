//! What the operator commands (`join`, `aggregate`, `sort`) share: the
//! pool, input loading (generated or from files), repetitions with
//! min/median/max, phase summaries and result files.

use std::path::Path;

use anyhow::{ensure, Context, Result};
use numakit_io::{Column, Format, IntKind, Table};
use numakit_ops::datagen::{generate, GenSpec, KeyDist};
use numakit_ops::{PhaseTime, Relation, Tuple};
use numakit_placement::PlacementMode;
use numakit_pool::Pool;
use serde::Serialize;

use crate::commands::ops::args::OpCommon;
use crate::render::format::Spread;

/// Inputs larger than this are not checked against the reference.
pub const VERIFY_LIMIT_ROWS: usize = 50_000_000;

/// Refuses `--verify` on inputs too big for the sequential reference,
/// before any work is done.
pub fn check_verify_size(verify: bool, rows: u64) -> Result<()> {
    crate::usage_ensure!(
        !verify || rows <= VERIFY_LIMIT_ROWS as u64,
        "--verify is limited to {VERIFY_LIMIT_ROWS} input rows (the reference is sequential); this run has {rows}"
    );
    Ok(())
}

/// A pool for an operator command.
pub fn build_pool(common: &OpCommon, mode: PlacementMode) -> Result<Pool> {
    common.pool.build(mode)
}

/// The machine `--cost-model` names (a preset or a JSON description),
/// loaded once for every run of the automatic aggregation choice.
pub fn cost_model(
    spec: Option<&str>,
) -> Result<Option<std::sync::Arc<numakit_topology::Topology>>> {
    spec.map(|spec| {
        numakit_topology::load(spec)
            .map(std::sync::Arc::new)
            .with_context(|| format!("--cost-model {spec}"))
    })
    .transpose()
}

/// Refuses work that needs more memory than the limit leaves.
pub fn ensure_memory(need: u64, what: &str) -> Result<()> {
    crate::common::budget::check(what, need)
}

/// Generates a relation of `rows` rows (given by `option`), checking
/// first that it fits.
pub fn generated(
    pool: &Pool,
    (option, rows): (&str, u64),
    keys: KeyDist,
    seed: u64,
) -> Result<Relation> {
    ensure_memory(
        rows.saturating_mul(16),
        &format!("the generated input ({option} {rows})"),
    )?;
    Ok(generate(pool, &GenSpec { rows, keys, seed })?)
}

/// Reads the named columns of a file (format from the extension).
pub fn read_columns(path: &Path, columns: &[String]) -> Result<Table> {
    crate::usage_ensure!(
        !columns.is_empty(),
        "no column named for {}",
        path.display()
    );
    let size = std::fs::metadata(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    ensure_memory(
        size.saturating_mul(2),
        &format!("reading {}", path.display()),
    )?;
    numakit_io::read(path, None, Some(columns))
        .with_context(|| format!("reading {}", path.display()))
}

/// The key of every row of each table: a single key column as it is, or
/// for composite keys a dense code (the same code for equal key tuples in
/// every table, so codes can be joined and grouped).
pub fn key_codes(tables: &[(&Table, &[String])]) -> Result<Vec<Vec<u64>>> {
    let single = tables.iter().all(|(_, cols)| cols.len() == 1);
    let columns = tables
        .iter()
        .map(|(t, cols)| {
            cols.iter()
                .map(|c| t.column(c))
                .collect::<Result<Vec<_>, _>>()
        })
        .collect::<Result<Vec<Vec<&Column>>, _>>()?;
    if single {
        return Ok(columns.iter().map(|c| c[0].values.clone()).collect());
    }
    let width = tables[0].1.len();
    ensure!(
        tables.iter().all(|(_, c)| c.len() == width),
        "composite keys need the same number of columns on both sides"
    );
    let mut dictionary: std::collections::HashMap<Vec<u64>, u64> = Default::default();
    Ok(columns
        .iter()
        .map(|cols| {
            let rows = cols.first().map_or(0, |c| c.values.len());
            (0..rows)
                .map(|r| {
                    let key: Vec<u64> = cols.iter().map(|c| c.values[r]).collect();
                    let next = dictionary.len() as u64;
                    *dictionary.entry(key).or_insert(next)
                })
                .collect()
        })
        .collect())
}

/// A relation of `keys` with payload `payload(i)` for row i.
pub fn relation_of(
    pool: &Pool,
    keys: &[u64],
    payload: impl Fn(usize) -> u64 + Sync,
) -> Result<Relation> {
    Ok(Relation::from_fn(pool, keys.len(), |i| {
        Tuple::new(keys[i], payload(i))
    })?)
}

/// Writes `table` to `path` (format from the extension), never leaving a
/// partial file behind.
pub fn write_table(path: &Path, table: &Table, options: &numakit_io::WriteOptions) -> Result<()> {
    numakit_io::write_with(path, table, options)
        .with_context(|| format!("writing {}", path.display()))
}

impl OpCommon {
    /// How `--out` at `path` is written: `--format` where its extension
    /// says nothing, and `--compression`.
    pub fn write_options(&self, path: &Path) -> numakit_io::WriteOptions {
        numakit_io::WriteOptions {
            format: format_for(path, self.format),
            parquet_compression: self.compression,
            ..numakit_io::WriteOptions::default()
        }
    }
}

/// The `--format` given, for a `path` whose extension names no format;
/// `None` (the extension decides) otherwise.
pub fn format_for(path: &Path, given: Option<Format>) -> Option<Format> {
    Format::from_path(path).is_err().then_some(given).flatten()
}

/// A signed 64-bit column.
pub fn signed_column(name: &str, values: Vec<u64>) -> Column {
    Column {
        name: name.to_string(),
        kind: IntKind::Signed,
        values,
    }
}

/// The median time of each phase over repetitions (phases matched by
/// position; all repetitions of one operator have the same phases).
pub fn median_phases(runs: &[Vec<PhaseTime>]) -> Vec<PhaseTime> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    first
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let times: Vec<f64> = runs
                .iter()
                .filter_map(|r| r.get(i).map(|q| q.seconds))
                .collect();
            PhaseTime {
                name: p.name.clone(),
                seconds: Spread::of(&times).median,
            }
        })
        .collect()
}

/// Phases as `build 0.12 s, probe 0.40 s`.
pub fn phase_line(phases: &[PhaseTime]) -> String {
    phases
        .iter()
        .map(|p| format!("{} {:.3} s", p.name, p.seconds))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Throughput figures of one operator run.
#[derive(Clone, Debug, Serialize)]
pub struct Throughput {
    /// Seconds of one run, over the repetitions.
    pub seconds: Spread,
    /// Every repetition's seconds, in order (the first is the cold run:
    /// fresh memory, page faults).
    pub times: Vec<f64>,
    /// Input rows per second (median time).
    pub rows_per_second: f64,
    /// Input bytes per second, in GB/s (median time).
    pub gb_per_second: f64,
}

impl Throughput {
    /// Rows of 16 bytes (a key and a payload).
    pub fn of(times: &[f64], input_rows: u64) -> Self {
        Self::of_rows(times, input_rows, 16)
    }

    /// Rows of `row_bytes` bytes.
    pub fn of_rows(times: &[f64], input_rows: u64, row_bytes: u64) -> Self {
        let seconds = Spread::of(times);
        Self {
            times: times.to_vec(),
            rows_per_second: input_rows as f64 / seconds.median,
            gb_per_second: (input_rows * row_bytes) as f64 / seconds.median / 1e9,
            seconds,
        }
    }
}

/// Column titles of [`Throughput::cells`].
pub const THROUGHPUT_TITLES: [&str; 6] = [
    "median s",
    "min s",
    "max s",
    "input rows/s",
    "GB/s",
    "phases (median)",
];

impl Throughput {
    /// The table cells under [`THROUGHPUT_TITLES`].
    pub fn cells(&self, phases: &[PhaseTime]) -> Vec<String> {
        vec![
            format!("{:.3}", self.seconds.median),
            format!("{:.3}", self.seconds.min),
            format!("{:.3}", self.seconds.max),
            rate(self.rows_per_second),
            format!("{:.2}", self.gb_per_second),
            phase_line(phases),
        ]
    }
}

/// A table header: `first` titles, then the throughput titles.
pub fn throughput_header(first: &[&str]) -> Vec<String> {
    first
        .iter()
        .chain(THROUGHPUT_TITLES.iter())
        .map(|s| s.to_string())
        .collect()
}

/// `12.3 M rows/s` style.
pub fn rate(rows_per_second: f64) -> String {
    if rows_per_second >= 1e9 {
        format!("{:.2} G rows/s", rows_per_second / 1e9)
    } else {
        format!("{:.1} M rows/s", rows_per_second / 1e6)
    }
}
