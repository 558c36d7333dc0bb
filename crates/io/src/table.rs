//! The in-memory table that reading produces and writing consumes: named
//! 64-bit integer columns, each holding raw bit patterns plus whether they
//! mean signed or unsigned numbers.
//!
//! It deliberately holds nothing but non-null integers: numakit's operators
//! work on 64-bit keys and payloads, and the readers refuse anything else
//! rather than carrying it along. It does no placement on NUMA nodes; the
//! caller moves the values where they are needed.

use crate::error::{IoError, Result};

/// How a column's 64-bit patterns are meant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntKind {
    /// Two's-complement `i64`; Int8/16/32/64 columns widen to this.
    Signed,
    /// `u64`; UInt8/16/32/64 columns widen to this.
    Unsigned,
}

impl IntKind {
    /// The name used in messages and schemas ("int64" or "uint64").
    pub fn name(self) -> &'static str {
        match self {
            IntKind::Signed => "int64",
            IntKind::Unsigned => "uint64",
        }
    }
}

/// One named integer column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// The column's name.
    pub name: String,
    /// Whether `values` mean `i64` or `u64` numbers.
    pub kind: IntKind,
    /// The raw 64-bit patterns (an `i64` is stored as `value as u64`).
    pub values: Vec<u64>,
}

impl Column {
    /// A column of raw patterns with the given meaning.
    pub fn from_raw(name: impl Into<String>, kind: IntKind, values: Vec<u64>) -> Column {
        Column {
            name: name.into(),
            kind,
            values,
        }
    }

    /// A signed column.
    pub fn signed(name: impl Into<String>, values: Vec<i64>) -> Column {
        let values = values.into_iter().map(|value| value as u64).collect();
        Column::from_raw(name, IntKind::Signed, values)
    }

    /// An unsigned column.
    pub fn unsigned(name: impl Into<String>, values: Vec<u64>) -> Column {
        Column::from_raw(name, IntKind::Unsigned, values)
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the column has no values.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The values reinterpreted as `i64` (bit patterns unchanged, no copy).
    /// Meaningful as numbers when `kind` is [`IntKind::Signed`].
    pub fn as_i64(&self) -> &[i64] {
        bytemuck::cast_slice(&self.values)
    }

    /// The raw values as `u64` (no copy). Meaningful as numbers when `kind`
    /// is [`IntKind::Unsigned`]; as hash/join keys either way.
    pub fn as_u64(&self) -> &[u64] {
        &self.values
    }

    /// The numeric value at `row` according to `kind`, widened to `i128`
    /// so that both kinds compare correctly; `None` past the end.
    pub fn get(&self, row: usize) -> Option<i128> {
        let raw = *self.values.get(row)?;
        Some(match self.kind {
            IntKind::Signed => i128::from(raw as i64),
            IntKind::Unsigned => i128::from(raw),
        })
    }
}

/// A table of equally long integer columns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    /// The columns, in file (or requested) order.
    pub columns: Vec<Column>,
}

impl Table {
    /// A table of the given columns (not checked; see [`Table::validate`]).
    pub fn new(columns: Vec<Column>) -> Table {
        Table { columns }
    }

    /// The column named `name`, or an error listing the available ones.
    pub fn column(&self, name: &str) -> Result<&Column> {
        self.columns
            .iter()
            .find(|column| column.name == name)
            .ok_or_else(|| IoError::ColumnNotFound {
                column: name.to_string(),
                available: self.column_names(),
            })
    }

    /// The columns' names, in order.
    pub fn column_names(&self) -> Vec<String> {
        self.columns
            .iter()
            .map(|column| column.name.clone())
            .collect()
    }

    /// Number of rows (that of the first column; 0 without columns).
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, Column::len)
    }

    /// Checks that the columns are equally long and uniquely named, as every
    /// writer requires.
    pub fn validate(&self) -> Result<()> {
        let rows = self.rows();
        for (index, column) in self.columns.iter().enumerate() {
            if column.len() != rows {
                return Err(IoError::InvalidTable(format!(
                    "column {:?} has {} values but column {:?} has {rows}",
                    column.name,
                    column.len(),
                    self.columns[0].name
                )));
            }
            if self.columns[..index].iter().any(|c| c.name == column.name) {
                return Err(IoError::DuplicateColumn {
                    column: column.name.clone(),
                    context: "appears twice in the table to write",
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_values_keep_their_bits_and_meaning() {
        let column = Column::signed("k", vec![i64::MIN, -1, 0, i64::MAX]);
        assert_eq!(column.as_i64(), &[i64::MIN, -1, 0, i64::MAX]);
        assert_eq!(column.as_u64()[1], u64::MAX);
        assert_eq!(column.get(0), Some(i128::from(i64::MIN)));
        assert_eq!(column.get(4), None);
        let unsigned = Column::unsigned("u", vec![u64::MAX]);
        assert_eq!(unsigned.get(0), Some(i128::from(u64::MAX)));
    }

    #[test]
    fn missing_column_lists_the_available_ones() {
        let table = Table::new(vec![
            Column::unsigned("key", vec![1]),
            Column::unsigned("payload", vec![2]),
        ]);
        assert_eq!(table.rows(), 1);
        assert_eq!(table.column("payload").unwrap().values, vec![2]);
        let message = table.column("value").unwrap_err().to_string();
        assert!(message.contains("\"value\""), "{message}");
        assert!(message.contains("key, payload"), "{message}");
        let message = Table::default().column("x").unwrap_err().to_string();
        assert!(message.contains("no columns"), "{message}");
    }

    #[test]
    fn validate_refuses_ragged_or_duplicate_columns() {
        let ragged = Table::new(vec![
            Column::unsigned("a", vec![1, 2]),
            Column::unsigned("b", vec![1]),
        ]);
        assert!(ragged
            .validate()
            .unwrap_err()
            .to_string()
            .contains("\"b\" has 1"));
        let duplicate = Table::new(vec![
            Column::unsigned("a", vec![1]),
            Column::signed("a", vec![1]),
        ]);
        assert!(duplicate
            .validate()
            .unwrap_err()
            .to_string()
            .contains("twice"));
        assert!(Table::default().validate().is_ok());
    }
}
