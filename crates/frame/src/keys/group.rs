//! Group-by keys: one code per row for one or several columns of a table,
//! equal codes exactly for equal keys, and the way back from a group's code
//! to its key columns.
//!
//! A single column's nulls are left without a code (the operator gives them
//! a group of their own); in a composite key a null is a value like any
//! other, so (1, NULL) and (1, 2) are different groups, as in SQL.

use arrow_array::ArrayRef;

use numakit_pool::Pool;

use crate::error::Result;
use crate::keys::compose::{pack, packed_layout, tuple_rows, ColumnRole, PackedColumn};
use crate::keys::decode::{gather, numbers_array};
use crate::keys::dictionary::Dictionary;
use crate::keys::{column_codes, group_column_codes, ColumnCodes, KeyEncoding, Meaning, PartCodes};
use crate::table::{RowRef, Table};

enum Layout {
    Single(Meaning),
    Packed(Vec<(PackedColumn, Meaning)>),
    /// `representatives[code]` holds the key.
    Tuple(Vec<RowRef>),
}

/// The group codes of a table's rows.
pub struct GroupKeys {
    /// Per part; a single column's null keys are listed as invalid.
    pub parts: Vec<PartCodes>,
    /// How the key columns became codes.
    pub encoding: KeyEncoding,
    /// Codes are at most this (a bound for direct-indexed tables).
    pub max_code: u64,
    columns: Vec<usize>,
    layout: Layout,
}

impl std::fmt::Debug for GroupKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupKeys")
            .field("encoding", &self.encoding)
            .field("columns", &self.columns)
            .finish()
    }
}

impl GroupKeys {
    /// Codes the key `columns` of `table`.
    pub fn encode(pool: &Pool, table: &Table, columns: &[usize]) -> Result<Self> {
        let coded: Vec<ColumnCodes> = match columns {
            [single] => vec![group_column_codes(pool, table, *single)?],
            _ => columns
                .iter()
                .map(|&c| column_codes(pool, table, c, false))
                .collect::<Result<_>>()?,
        };
        let coded = match <[ColumnCodes; 1]>::try_from(coded) {
            Ok([single]) => {
                return Ok(GroupKeys {
                    parts: single.parts,
                    encoding: single.encoding,
                    max_code: single.span,
                    columns: columns.to_vec(),
                    layout: Layout::Single(single.meaning),
                })
            }
            Err(several) => several,
        };
        let shapes: Vec<(usize, usize)> = table
            .parts()
            .iter()
            .map(|p| (p.batch.num_rows(), p.worker))
            .collect();
        let roles = vec![ColumnRole::GROUP; coded.len()];
        if let Some(layout) = packed_layout(&coded, &roles) {
            let parts = pack(pool, &shapes, &coded, &layout)?;
            let bits: u32 = layout.iter().map(|l| l.bits).sum();
            let max_code = if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            return Ok(GroupKeys {
                parts,
                encoding: KeyEncoding::Packed {
                    columns: coded.len(),
                    bits,
                },
                max_code,
                columns: columns.to_vec(),
                layout: Layout::Packed(
                    layout
                        .into_iter()
                        .zip(coded.into_iter().map(|c| c.meaning))
                        .collect(),
                ),
            });
        }
        let rows = tuple_rows(pool, &shapes, &coded, &roles)?;
        drop(coded);
        let (dictionary, parts) = Dictionary::build(pool, &rows)?;
        let distinct = dictionary.len();
        let representatives = (0..distinct)
            .map(|c| dictionary.representative(c))
            .collect();
        Ok(GroupKeys {
            parts,
            encoding: KeyEncoding::TupleDictionary {
                columns: columns.len(),
                distinct,
            },
            max_code: distinct.saturating_sub(1),
            columns: columns.to_vec(),
            layout: Layout::Tuple(representatives),
        })
    }

    /// Whether some rows have a null (single-column) key.
    pub fn has_null_keys(&self) -> bool {
        self.parts.iter().any(|p| !p.invalid.is_empty())
    }

    /// The key columns of the groups with these codes (`None`: the group
    /// of null keys).
    pub fn decode(&self, table: &Table, codes: &[Option<u64>]) -> Result<Vec<ArrayRef>> {
        match &self.layout {
            Layout::Single(meaning) => {
                Ok(vec![decode_column(table, self.columns[0], meaning, codes)?])
            }
            Layout::Packed(columns) => self
                .columns
                .iter()
                .zip(columns)
                .map(|(&column, (at, meaning))| {
                    let own: Vec<Option<u64>> =
                        codes.iter().map(|c| c.and_then(|c| at.unpack(c))).collect();
                    decode_column(table, column, meaning, &own)
                })
                .collect(),
            Layout::Tuple(representatives) => {
                let rows: Vec<Option<RowRef>> = codes
                    .iter()
                    .map(|c| c.map(|c| representatives[c as usize]))
                    .collect();
                self.columns
                    .iter()
                    .map(|&column| gather(table, column, &rows))
                    .collect()
            }
        }
    }
}

/// One column's values for its own codes (`None`: null).
pub(crate) fn decode_column(
    table: &Table,
    column: usize,
    meaning: &Meaning,
    codes: &[Option<u64>],
) -> Result<ArrayRef> {
    match meaning {
        Meaning::Raw { signed } => {
            let values = codes.iter().map(|c| {
                c.map(|c| {
                    if *signed {
                        i128::from(c as i64)
                    } else {
                        i128::from(c)
                    }
                })
            });
            numbers_array(values, table.schema().field(column).data_type())
        }
        Meaning::Offset { lo, multiplier } => {
            let values = codes
                .iter()
                .map(|c| c.map(|c| (i128::from(c) + lo) / multiplier));
            numbers_array(values, table.schema().field(column).data_type())
        }
        Meaning::Rows { representatives } => {
            let rows: Vec<Option<RowRef>> = codes
                .iter()
                .map(|c| c.map(|c| representatives[c as usize]))
                .collect();
            gather(table, column, &rows)
        }
        Meaning::Stored { keys } => keys.column(codes, table.schema().field(column).data_type()),
    }
}
