//! `numakit mapreduce kmeans|pca|matrix-multiply`: the numeric Phoenix
//! applications, on data drawn from the C library's rand() stream as the
//! Phoenix++ programs draw it (so that a seed gives the same points and
//! matrices, and k-means the same iterations), or on files in their raw
//! 32-bit integer formats.

use crate::common::progress::Spinner;
use std::path::Path;

use anyhow::{Context, Result};
use numakit_mapreduce::Runtime;
use numakit_mapreduce_apps::kmeans::{self, gen::KmeansParams, KmeansInput, KmeansLimits};
use numakit_mapreduce_apps::matrix_multiply::{self, MatrixPair};
use numakit_mapreduce_apps::pca::{self, PcaMatrix};
use numakit_placement::PlacementMode;
use serde_json::json;

use crate::commands::mapreduce::args::{KmeansArgs, MapReduceApp, MatrixArgs, MrCommon, PcaArgs};
use crate::commands::mapreduce::measure::{
    build_pool, finish, measure, sweep_threads, timed, Outcome,
};
use crate::commands::mapreduce::results;
use crate::common::output;

/// The seed of the numeric apps: the Phoenix++ programs' rand() stream
/// unless asked otherwise.
fn seed(c: &MrCommon) -> Result<u32> {
    u32::try_from(c.seed.unwrap_or(1)).context("--seed must fit in 32 bits for this application")
}

/// Runs `kmeans`, `pca` or `matrix-multiply` (any other application is an
/// error): writes the input with `--generate`, or measures the job at each
/// thread count and prints the reports.
pub fn run(app: &MapReduceApp, mode: PlacementMode, json_out: bool, quiet: bool) -> Result<()> {
    let (name, c): (&'static str, &MrCommon) = match app {
        MapReduceApp::Kmeans(a) => ("kmeans", &a.common),
        MapReduceApp::Pca(a) => ("pca", &a.common),
        MapReduceApp::MatrixMultiply(a) => ("matrix-multiply", &a.common),
        _ => anyhow::bail!("not a numeric application"),
    };
    crate::usage_ensure!(c.reps() > 0, "--reps must be at least 1");
    crate::usage_ensure!(
        c.container.is_none(),
        "--container applies to word-count, histogram, linear-regression and string-match; {name} keys one slot per mean, row or cell in its own array"
    );
    check_memory(app, c)?;
    let data = load(app, c)?;
    if let Some(path) = &c.generate {
        write(&data, path)?;
        if !quiet {
            output::note(format_args!("wrote the {name} input to {}", path.display()));
        }
        return Ok(());
    }
    let spinner = Spinner::new(quiet || json_out);
    let kernel = kernel_path(&data);
    let mut reports = Vec::new();
    for t in sweep_threads(c)? {
        let pool = build_pool(c, t, mode)?;
        reports.push(measure(name, &pool, c, data.bytes(), &spinner, |rt| {
            let mut outcome = once(rt, &data, c.verify, c.output.is_some())?;
            if let Some(summary) = outcome.summary.as_object_mut() {
                summary.insert("kernel".into(), json!(kernel));
            }
            Ok(outcome)
        })?);
    }
    spinner.finish();
    finish(&reports, c, json_out, 10)
}

/// An application's input.
enum Data {
    Kmeans(KmeansInput),
    Pca(PcaMatrix),
    Matrices(MatrixPair),
}

impl Data {
    fn bytes(&self) -> usize {
        4 * match self {
            Data::Kmeans(k) => k.points().coords().len(),
            Data::Pca(m) => m.values().len(),
            Data::Matrices(p) => 2 * p.side() * p.side(),
        }
    }
}

/// Which kernel the values allow and which instruction set it runs in, as
/// the reports state it: the 16-bit pair multiply-adds while the values
/// fit (the original ranges), 32- or 64-bit words past that; AVX2 where
/// the CPU has it, else the build's baseline (SSE2 on x86-64).
fn kernel_path(data: &Data) -> String {
    let words = match data {
        Data::Kmeans(input) => {
            if kmeans::search::NearestSearch::new(input).uses_pairs() {
                "16-bit pairs"
            } else {
                "32-bit words"
            }
        }
        Data::Pca(m) => {
            let means: Vec<i64> = (0..m.rows()).map(|i| pca::row_mean(m.row(i))).collect();
            match pca::covariance::choose_arithmetic(m, &means) {
                pca::covariance::Arithmetic::Pairs => "16-bit pairs",
                pca::covariance::Arithmetic::Products32 => "32-bit values, 64-bit sums",
                pca::covariance::Arithmetic::Wide => "64-bit words",
            }
        }
        Data::Matrices(p) => {
            let fits = numakit_mapreduce_apps::numeric::pairs::fits_i16;
            if fits(p.a().values()) && fits(p.b().values()) {
                "16-bit pairs"
            } else {
                "32-bit words"
            }
        }
    };
    let isa = if numakit_mapreduce_apps::numeric::wide::available() {
        "AVX2"
    } else {
        "baseline"
    };
    format!("{words}, {isa}")
}

/// Refuses sizes whose data would not fit under the memory limit, before
/// anything is generated or read: 4-byte values, the inputs and what the
/// job builds from them (the product matrix, PCA's covariance matrix).
fn check_memory(app: &MapReduceApp, c: &MrCommon) -> Result<()> {
    use crate::common::budget::{check, times};
    let file = |path: &Path| -> Result<u64> {
        Ok(std::fs::metadata(path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .len())
    };
    match (app, c.input.as_deref()) {
        (_, Some(path)) => check(&format!("the input {}", path.display()), file(path)?),
        (MapReduceApp::Kmeans(a), None) => check(
            &format!("the points (--points {} x --dims {})", a.points, a.dims),
            times(a.points, 4).saturating_mul(a.dims as u64),
        ),
        (MapReduceApp::Pca(a), None) => check(
            &format!("the matrix (--rows {} x --cols {})", a.rows, a.cols),
            times(a.rows, 4)
                .saturating_mul(a.cols as u64)
                .saturating_add(times(a.cols, 8).saturating_mul(a.cols as u64)),
        ),
        (MapReduceApp::MatrixMultiply(a), None) => check(
            &format!("three {0} x {0} matrices (--size {0})", a.size),
            times(a.size, 12).saturating_mul(a.size as u64),
        ),
        _ => Ok(()),
    }
}

fn load(app: &MapReduceApp, c: &MrCommon) -> Result<Data> {
    let seed = seed(c)?;
    let input = c.input.as_deref();
    Ok(match app {
        MapReduceApp::Kmeans(a) => Data::Kmeans(kmeans_input(a, input, seed)?),
        MapReduceApp::Pca(a) => Data::Pca(pca_input(a, input, seed)?),
        MapReduceApp::MatrixMultiply(a) => Data::Matrices(matrix_input(a, input, seed)?),
        _ => anyhow::bail!("not a numeric application"),
    })
}

fn kmeans_input(a: &KmeansArgs, input: Option<&Path>, seed: u32) -> Result<KmeansInput> {
    let params = KmeansParams {
        points: a.points,
        dim: a.dims,
        clusters: a.clusters,
        grid_size: a.values.value_range.modulus(kmeans::gen::DEFAULT_GRID_SIZE),
    };
    Ok(match input {
        Some(path) => {
            let points = kmeans::gen::read_points(path, a.dims)?;
            kmeans::gen::with_drawn_means(points, a.clusters, params.grid_size, seed)?
        }
        None => kmeans::gen::generate(&params, seed)?,
    })
}

fn pca_input(a: &PcaArgs, input: Option<&Path>, seed: u32) -> Result<PcaMatrix> {
    Ok(match input {
        Some(path) => pca::gen::read_matrix(path, a.cols)?,
        None => pca::gen::generate(
            a.rows,
            a.cols,
            a.values.value_range.modulus(pca::gen::DEFAULT_GRID_SIZE),
            seed,
        )?,
    })
}

fn matrix_input(a: &MatrixArgs, input: Option<&Path>, seed: u32) -> Result<MatrixPair> {
    Ok(match input {
        Some(dir) => matrix_multiply::gen::read_pair(dir, Some(a.size))?,
        None => matrix_multiply::gen::generate_below(
            a.size,
            a.values
                .value_range
                .modulus(matrix_multiply::gen::VALUE_MODULUS),
            seed,
        )?,
    })
}

fn write(data: &Data, path: &Path) -> Result<()> {
    match data {
        Data::Kmeans(k) => kmeans::gen::write_points(path, k.points())?,
        Data::Pca(m) => pca::gen::write_matrix(path, m)?,
        Data::Matrices(p) => {
            std::fs::create_dir_all(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            matrix_multiply::gen::write_pair(path, p)?
        }
    }
    Ok(())
}

/// One timed run, checked against the reference when asked.
fn once(rt: &Runtime, data: &Data, verify: bool, keep: bool) -> Result<Outcome> {
    let (phases, seconds, summary, verified, result) = match data {
        Data::Kmeans(input) => {
            let ((out, phases), seconds) =
                timed(|| Ok(kmeans::run(rt, input, KmeansLimits::default())?))?;
            let verified =
                verify.then(|| kmeans::reference::kmeans(input, KmeansLimits::default()) == out);
            let summary = json!({"iterations": out.iterations, "converged": out.converged,
                "clusters": out.means.len(), "means": out.means.coords()});
            let result = keep.then(|| results::means(&out.means));
            (phases, seconds, summary, verified, result)
        }
        Data::Pca(m) => {
            let ((out, phases), seconds) = timed(|| Ok(pca::run(rt, m)?))?;
            let verified = verify.then(|| pca::reference::pca(m) == out);
            let summary = json!({"covariance_sum": out.covariance_sum(), "rows": out.rows()});
            let result = keep.then(|| results::pca(&out));
            (phases, seconds, summary, verified, result)
        }
        Data::Matrices(p) => {
            let ((product, phases), seconds) = timed(|| Ok(matrix_multiply::run(rt, p)?))?;
            let verified = verify.then(|| matrix_multiply::reference::multiply(p) == product);
            let summary = json!({"total_sum": product.total_sum(), "side": product.side()});
            let result = keep.then(|| results::matrix(&product));
            (phases, seconds, summary, verified, result)
        }
    };
    Ok(Outcome {
        seconds,
        phases,
        map_tasks: Vec::new(),
        cpu: None,
        summary,
        verified,
        result,
    })
}
