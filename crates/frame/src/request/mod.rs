//! What the table operators are asked to do: a group-by's, a join's and a
//! sort's request (with the aggregates a group-by computes, and a join's
//! plan: its request checked against the two schemas).
//!
//! They live here, below both the operators ([`join`](crate::join),
//! [`aggregate`](crate::aggregate), [`sort`](crate::sort)) and the plain
//! reference ([`reference`](crate::reference)) that verifies them, so the
//! reference reads the requests without depending on the operators. Each
//! operator's module re-exports its types under their usual names
//! (`numakit_frame::join::JoinRequest`, ...).
//!
//! Nothing here reads data or runs an operator.

pub(crate) mod aggregate;
pub(crate) mod join;
pub(crate) mod sort;
