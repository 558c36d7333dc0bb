//! A join's request (keys, kind, algorithm, the columns to carry, the
//! memory limit) and its plan: the request checked against the two
//! tables' schemas (unknown columns, names that would clash in the
//! result), saying which columns are read and under which names the
//! result carries them.
//!
//! It reads no data and joins nothing: the operator in
//! [`join`](crate::join) does.

use std::sync::Arc;

use arrow_schema::{Field, Schema, SchemaRef};
use numakit_ops::join::{JoinAlgorithm, JoinKind};

use crate::error::{FrameError, Result};
use crate::memory::MemoryLimit;

/// What to join and how.
#[derive(Clone, Debug)]
pub struct JoinRequest {
    /// Key columns of the left (build) table.
    pub left_on: Vec<String>,
    /// Key columns of the right (probe) table, pairwise with `left_on`.
    pub right_on: Vec<String>,
    /// Which rows the result holds: inner, left outer, semi or anti.
    pub kind: JoinKind,
    /// `None`: numakit's choice.
    pub algorithm: Option<JoinAlgorithm>,
    /// Count the result rows without materialising them.
    pub count_only: bool,
    /// Left columns to carry (default: all).
    pub left_columns: Option<Vec<String>>,
    /// Right columns to carry (default: all but the keys); inner and left
    /// outer joins only.
    pub right_columns: Option<Vec<String>>,
    /// Appended to a right column whose name is taken.
    pub suffix: String,
    /// The limit loading, key coding and the result are checked against;
    /// a result beyond it fails with [`FrameError::MemoryLimit`].
    pub memory_limit: MemoryLimit,
}

impl JoinRequest {
    /// An inner join on `on` (the same names on both sides).
    pub fn on(on: &[&str]) -> Self {
        let on: Vec<String> = on.iter().map(|s| s.to_string()).collect();
        JoinRequest {
            left_on: on.clone(),
            right_on: on,
            kind: JoinKind::Inner,
            algorithm: None,
            count_only: false,
            left_columns: None,
            right_columns: None,
            suffix: "_right".into(),
            memory_limit: MemoryLimit::default(),
        }
    }
}

/// The request checked against the schemas: which columns, in what order,
/// under which names.
#[derive(Clone, Debug)]
pub struct JoinPlan {
    /// Names of the left columns to read (keys first, then carried).
    pub left_read: Vec<String>,
    /// Names of the right columns to read (keys first, then carried).
    pub right_read: Vec<String>,
    /// Carried columns: (index in the read columns, output name).
    left_out: Vec<(usize, String)>,
    right_out: Vec<(usize, String)>,
    schema: SchemaRef,
}

fn position(schema: &Schema, name: &str, side: &str) -> Result<usize> {
    schema
        .index_of(name)
        .map_err(|_| FrameError::column_not_found(schema, name, format!("the {side} table")))
}

fn push_unique(list: &mut Vec<String>, name: &str) -> usize {
    match list.iter().position(|n| n == name) {
        Some(i) => i,
        None => {
            list.push(name.to_string());
            list.len() - 1
        }
    }
}

impl JoinPlan {
    /// Checks `request` against the two tables' schemas.
    pub fn new(request: &JoinRequest, left: &Schema, right: &Schema) -> Result<Self> {
        if request.left_on.is_empty() || request.left_on.len() != request.right_on.len() {
            return Err(FrameError::InvalidRequest(format!(
                "a join needs as many key columns on the left as on the right (got {} and {})",
                request.left_on.len(),
                request.right_on.len()
            )));
        }
        let mut left_read = Vec::new();
        let mut right_read = Vec::new();
        for (l, r) in request.left_on.iter().zip(&request.right_on) {
            position(left, l, "left")?;
            position(right, r, "right")?;
            push_unique(&mut left_read, l);
            push_unique(&mut right_read, r);
        }
        // By default the keys come first, then the other left columns in
        // their order (SQL's `JOIN ... USING`), whatever order the input
        // holds them in.
        let left_names: Vec<String> = match &request.left_columns {
            Some(list) => list.clone(),
            None => {
                let mut names: Vec<String> = Vec::new();
                for n in request
                    .left_on
                    .iter()
                    .chain(left.fields().iter().map(|f| f.name()))
                {
                    if !names.contains(n) {
                        names.push(n.clone());
                    }
                }
                names
            }
        };
        let mut fields = Vec::new();
        let mut left_out = Vec::new();
        for name in &left_names {
            let field = left.field(position(left, name, "left")?);
            if left_out.iter().any(|(_, n): &(usize, String)| n == name) {
                return Err(FrameError::InvalidRequest(format!(
                    "left column {name:?} is named twice in the columns to carry"
                )));
            }
            left_out.push((push_unique(&mut left_read, name), name.clone()));
            fields.push(field.clone());
        }
        let carries_right = matches!(request.kind, JoinKind::Inner | JoinKind::LeftOuter);
        let right_names: Vec<String> = match (&request.right_columns, carries_right) {
            (_, false) => Vec::new(),
            (Some(list), true) => list.clone(),
            (None, true) => right
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .filter(|n| !request.right_on.contains(n))
                .collect(),
        };
        let mut right_out = Vec::new();
        for name in &right_names {
            let field = right.field(position(right, name, "right")?);
            let taken = |n: &str| fields.iter().any(|f: &Field| f.name() == n);
            let out_name = if taken(name) {
                let renamed = format!("{name}{}", request.suffix);
                if taken(&renamed) {
                    return Err(FrameError::InvalidRequest(format!(
                        "the result would have two columns named {renamed:?} (right column {name:?} \
                         clashes with a left column and so does its renamed form); choose the \
                         columns with --left-columns/--right-columns"
                    )));
                }
                renamed
            } else {
                name.clone()
            };
            let nullable = field.is_nullable() || request.kind == JoinKind::LeftOuter;
            fields.push(
                field
                    .as_ref()
                    .clone()
                    .with_name(&out_name)
                    .with_nullable(nullable),
            );
            right_out.push((push_unique(&mut right_read, name), out_name));
        }
        Ok(JoinPlan {
            left_read,
            right_read,
            left_out,
            right_out,
            schema: Arc::new(Schema::new(fields)),
        })
    }

    /// The result's schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The left columns the result carries (their names in the left table).
    pub fn left_out_names(&self) -> Vec<String> {
        self.left_out
            .iter()
            .map(|(i, _)| self.left_read[*i].clone())
            .collect()
    }

    /// The right columns the result carries (their names in the right table).
    pub fn right_out_names(&self) -> Vec<String> {
        self.right_out
            .iter()
            .map(|(i, _)| self.right_read[*i].clone())
            .collect()
    }
}
