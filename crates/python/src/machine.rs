//! The machine tools as Python functions returning plain data: the same
//! content as the CLI's `--json` of `topo`, `doctor`, `probe`, `simulate`
//! and the preset list, as JSON text the Python half turns into dicts.
//!
//! It measures and predicts nothing itself: topology discovery, the
//! placement and pool checks, the probe and the simulator do.

use std::sync::Arc;

use numakit_placement::{MemoryLimit, Placer};
use numakit_probe::{matrix, MatrixOptions};
use numakit_sim::{predict_machine, Calibration};
use numakit_topology::{presets as machine_presets, Topology};
use pyo3::prelude::*;
use serde::Serialize;

use crate::errors::{raise, ErrorKind};
use crate::interrupt;

fn json<T: Serialize>(py: Python<'_>, value: &T) -> PyResult<String> {
    serde_json::to_string(value)
        .map_err(|e| raise(py, ErrorKind::Other, &format!("writing the report: {e}")))
}

fn discover(py: Python<'_>) -> PyResult<Topology> {
    numakit_topology::discover().map_err(|e| raise(py, ErrorKind::Placement, &e.to_string()))
}

/// This machine's nodes, CPUs, caches and distances (`numakit topo --json`).
#[pyfunction]
pub(crate) fn topology(py: Python<'_>) -> PyResult<String> {
    json(py, &discover(py)?)
}

/// The placement and pool checks, verified by observation (`numakit
/// doctor --json`): `{"topology": ..., "report": ...}`.
#[pyfunction]
pub(crate) fn doctor(py: Python<'_>) -> PyResult<String> {
    let topology = Arc::new(discover(py)?);
    let report = py.detach(|| {
        numakit_placement::doctor::run(topology.clone())
            .extend(numakit_pool::checks::run(topology.clone()))
    });
    json(
        py,
        &serde_json::json!({ "topology": &*topology, "report": report }),
    )
}

/// The latency and bandwidth between every pair of nodes (`numakit probe
/// --json`): quick sizes, or the full ones.
#[pyfunction]
#[pyo3(signature = (quick, placement, memory_limit, progress))]
pub(crate) fn probe(
    py: Python<'_>,
    quick: bool,
    placement: &str,
    memory_limit: Option<u64>,
    progress: bool,
) -> PyResult<String> {
    let mode = placement
        .parse()
        .map_err(|e: String| raise(py, ErrorKind::BadInput, &format!("placement=: {e}")))?;
    let topology = Arc::new(discover(py)?);
    let placer = Placer::new(topology.clone(), mode);
    let mut options = if quick {
        MatrixOptions::quick()
    } else {
        MatrixOptions::full()
    };
    options.memory_limit = memory_limit.map_or_else(MemoryLimit::default, MemoryLimit::bytes);
    let options = options.fitted_to(&topology);
    let report = interrupt::run(py, "probe", progress, |watch| {
        matrix::run(&placer, &options, watch)
    })?
    .map_err(|e| raise(py, ErrorKind::Other, &e.to_string()))?;
    json(
        py,
        &serde_json::json!({
            "report": &report,
            "placement_verified": report.placement_verified(),
        }),
    )
}

/// The simulator's predictions of every shuffle schedule and its thread
/// sweep for a preset, a described machine's file, or this machine
/// (`numakit simulate --json`).
#[pyfunction]
#[pyo3(signature = (machine, threads))]
pub(crate) fn simulate(
    py: Python<'_>,
    machine: Option<&str>,
    threads: Option<usize>,
) -> PyResult<String> {
    let topology = match machine {
        Some(spec) => numakit_topology::load(spec)
            .map_err(|e| raise(py, ErrorKind::BadInput, &e.to_string()))?,
        None => discover(py)?,
    };
    let sockets = topology.compute_nodes().len().max(1);
    let total = threads.unwrap_or(topology.allowed.cpus.len());
    if total == 0 || total % sockets != 0 {
        return Err(raise(
            py,
            ErrorKind::BadInput,
            &format!("threads={total} do not spread evenly over {sockets} sockets"),
        ));
    }
    let report = predict_machine(
        &topology,
        Some(total / sockets),
        &Calibration::for_machine(&topology),
    )
    .map_err(|e| raise(py, ErrorKind::BadInput, &e.to_string()))?;
    json(py, &report)
}

/// The described machines numakit knows: each preset's description.
#[pyfunction]
pub(crate) fn presets(py: Python<'_>) -> PyResult<String> {
    let described = machine_presets::names()
        .into_iter()
        .map(machine_presets::description)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| raise(py, ErrorKind::Other, &e.to_string()))?;
    json(py, &described)
}
