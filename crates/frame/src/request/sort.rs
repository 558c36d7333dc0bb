//! A sort's request: the key columns, each ascending or descending and
//! nulls first or last, the columns to keep and the memory limit.
//!
//! It checks nothing against a schema and sorts nothing (the operator in
//! [`sort`](crate::sort) does both).

use crate::memory::MemoryLimit;

/// One column of the sort key, by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SortColumn {
    /// The column's name in the input.
    pub name: String,
    /// Largest values first.
    pub descending: bool,
    /// Nulls before every value (else after), whatever the direction.
    pub nulls_first: bool,
}

impl SortColumn {
    /// Ascending, nulls last.
    pub fn ascending(name: &str) -> Self {
        SortColumn {
            name: name.into(),
            descending: false,
            nulls_first: false,
        }
    }
}

/// What to sort by and what to keep.
#[derive(Clone, Debug)]
pub struct SortRequest {
    /// The sort key's columns, most significant first; at least one.
    pub by: Vec<SortColumn>,
    /// The columns of the result (default: all, in table order).
    pub columns: Option<Vec<String>>,
    /// The limit loading and the sort's own memory are checked against.
    pub memory_limit: MemoryLimit,
}
