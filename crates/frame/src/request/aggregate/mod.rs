//! A group-by's request: the key columns, the aggregates ([`spec`]) in
//! the order of the result's columns, the method and the memory limit.
//!
//! It checks nothing against a schema (the operator's
//! [`AggregatePlan`](crate::aggregate::AggregatePlan) does) and computes
//! nothing.

pub mod spec;

use std::sync::Arc;

use numakit_ops::aggregate::AggMethod;
use numakit_topology::Topology;

use crate::memory::MemoryLimit;

pub use spec::{AggFunc, Aggregate};

/// What to group and compute.
#[derive(Clone, Debug)]
pub struct AggregateRequest {
    /// Group-by key columns.
    pub keys: Vec<String>,
    /// The aggregates, in the order of the result's columns after the keys.
    pub aggregates: Vec<Aggregate>,
    /// The method of the one-value-column path (`None`: automatic). The
    /// many-column path has one method and refuses another.
    pub method: Option<AggMethod>,
    /// The limit loading and the per-worker tables are checked against.
    pub memory_limit: MemoryLimit,
    /// The machine the automatic choice predicts Li's methods on when the
    /// pool spans several nodes (`None`: the pool's topology, with assumed
    /// figures); see [`numakit_ops::aggregate::AggOptions::cost_model`].
    pub cost_model: Option<Arc<Topology>>,
}
