//! `numakit.Pool`: numakit's worker pool, made once and used by any number
//! of calls, so that repeated calls do not pay for starting threads. It
//! follows the CLI's rule: `threads` is the total, spread evenly over the
//! chosen nodes (default one per allowed CPU of those nodes), and more
//! threads than CPUs is refused.
//!
//! It does not run work itself: the operator functions take a pool.

use std::sync::Arc;

use numakit_placement::PlacementMode;
use numakit_pool::PoolBuilder;
use numakit_topology::IdSet;
use pyo3::prelude::*;

use crate::errors::{pool_kind, raise, ErrorKind};

/// A NUMA-aware worker pool: threads pinned to the chosen nodes, one task
/// queue per node, work stolen nearest node first.
///
/// Pool(threads=None, nodes=None, placement="best-effort")
///
/// threads: workers in all (default: one per allowed CPU of the nodes).
/// nodes: NUMA node ids, a list such as [0, 1] or a string such as "0,2-3"
///     (default: every node this process may use).
/// placement: "strict" (refused pinning is an error), "best-effort" (a
///     warning, then the work runs unplaced) or "off" (never pin).
#[pyclass(module = "numakit._numakit", name = "Pool", frozen)]
pub(crate) struct Pool {
    pub(crate) inner: Arc<numakit_pool::Pool>,
    placement: PlacementMode,
}

/// Node ids from a list of integers or a list such as `"0,2-3"`.
fn node_set(py: Python<'_>, nodes: &Bound<'_, PyAny>) -> PyResult<IdSet> {
    if let Ok(text) = nodes.extract::<String>() {
        return IdSet::parse_list(&text)
            .map_err(|e| raise(py, ErrorKind::BadInput, &format!("nodes={text:?}: {e}")));
    }
    let ids: Vec<u32> = nodes.extract().map_err(|_| {
        raise(
            py,
            ErrorKind::BadInput,
            "nodes= must be a list of node ids or a string such as \"0,2-3\"",
        )
    })?;
    Ok(ids.into_iter().collect())
}

impl Pool {
    /// A pool of `threads` on `nodes` of this machine.
    pub(crate) fn build(
        py: Python<'_>,
        threads: Option<usize>,
        nodes: Option<&Bound<'_, PyAny>>,
        placement: &str,
    ) -> PyResult<Pool> {
        let mode: PlacementMode = placement
            .parse()
            .map_err(|e: String| raise(py, ErrorKind::BadInput, &format!("placement=: {e}")))?;
        let topology = Arc::new(
            numakit_topology::discover()
                .map_err(|e| raise(py, ErrorKind::Placement, &e.to_string()))?,
        );
        let mut builder = PoolBuilder::new(topology.clone()).placement(mode);
        if let Some(threads) = threads {
            if threads == 0 {
                return Err(raise(
                    py,
                    ErrorKind::BadInput,
                    "threads= must be at least 1",
                ));
            }
            builder = builder.threads(threads);
        }
        if let Some(nodes) = nodes {
            builder = builder.nodes(node_set(py, nodes)?);
        }
        check_cpus(py, &builder)?;
        let pool = py
            .detach(|| builder.build())
            .map_err(|e| raise(py, pool_kind(&e), &e.to_string()))?;
        Ok(Pool {
            inner: Arc::new(pool),
            placement: mode,
        })
    }
}

/// Refuses more threads than the CPUs the pool may use (the CLI's rule
/// without `--oversubscribe`).
fn check_cpus(py: Python<'_>, builder: &PoolBuilder) -> PyResult<()> {
    let plan = builder
        .plan()
        .map_err(|e| raise(py, pool_kind(&e), &e.to_string()))?;
    let cpus = plan
        .iter()
        .map(|&(_, cpu)| cpu)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    if plan.len() > cpus {
        return Err(raise(
            py,
            ErrorKind::BadInput,
            &format!(
                "threads={} is more than the {cpus} CPUs this pool may use",
                plan.len()
            ),
        ));
    }
    Ok(())
}

#[pymethods]
impl Pool {
    #[new]
    #[pyo3(signature = (threads=None, nodes=None, placement="best-effort"))]
    fn new(
        py: Python<'_>,
        threads: Option<usize>,
        nodes: Option<&Bound<'_, PyAny>>,
        placement: &str,
    ) -> PyResult<Self> {
        Pool::build(py, threads, nodes, placement)
    }

    /// Worker threads in all.
    #[getter]
    fn threads(&self) -> usize {
        self.inner.workers()
    }

    /// The NUMA nodes the workers run on.
    #[getter]
    fn nodes(&self) -> Vec<u32> {
        self.inner.nodes()
    }

    /// How placement requests are enforced.
    #[getter]
    fn placement(&self) -> &'static str {
        match self.placement {
            PlacementMode::Strict => "strict",
            PlacementMode::BestEffort => "best-effort",
            PlacementMode::Off => "off",
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "numakit.Pool(threads={}, nodes={:?}, placement={:?})",
            self.threads(),
            self.nodes(),
            self.placement()
        )
    }
}
