//! A group-by's request: the key columns, the aggregates ([`spec`]) in
//! the order of the result's columns, the method and the memory limit.
//!
//! It checks nothing against a schema (the operator's
//! [`AggregatePlan`](crate::aggregate::AggregatePlan) does) and computes
//! nothing.

pub mod spec;

use numakit_ops::aggregate::AggMethod;

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
}
