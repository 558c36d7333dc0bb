//! Sort keys: one order-preserving code per row for one or several
//! columns, each ascending or descending with its nulls first or last, so
//! that sorting the codes sorts the rows.
//!
//! Every column's codes keep its order (values by value, floats in total
//! order with NaN last, strings and binaries by their bytes through the
//! dictionary's ranks); a descending column's codes are inverted; nulls
//! take the code below or above all values. The columns are then packed,
//! or ranked as byte rows when they do not fit one word.

use numakit_pool::Pool;

use crate::error::Result;
use crate::keys::compose::{pack, packed_layout, tuple_rows, ColumnRole};
use crate::keys::dictionary::Dictionary;
use crate::keys::{column_codes, remap, ColumnCodes, KeyEncoding, PartCodes};
use crate::table::Table;

/// One column of a sort key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortKey {
    /// Index of the column in the table's schema.
    pub column: usize,
    /// Largest values first.
    pub descending: bool,
    /// Nulls before every value (else after), whatever the direction.
    pub nulls_first: bool,
}

/// The sort codes of a table's rows (every row has one).
#[derive(Debug)]
pub struct SortKeys {
    /// Per part, one code per row; none is invalid (nulls have codes).
    pub parts: Vec<PartCodes>,
    /// How the key columns became codes.
    pub encoding: KeyEncoding,
}

impl SortKeys {
    /// Codes the sort key `keys` of `table`.
    pub fn encode(pool: &Pool, table: &Table, keys: &[SortKey]) -> Result<Self> {
        let coded: Vec<ColumnCodes> = keys
            .iter()
            .map(|k| column_codes(pool, table, k.column, true))
            .collect::<Result<_>>()?;
        let roles: Vec<ColumnRole> = keys
            .iter()
            .map(|k| ColumnRole {
                descending: k.descending,
                keep_nulls: true,
                nulls_first: k.nulls_first,
            })
            .collect();
        let shapes: Vec<(usize, usize)> = table
            .parts()
            .iter()
            .map(|p| (p.batch.num_rows(), p.worker))
            .collect();
        if let Some(layout) = packed_layout(&coded, &roles) {
            let encoding = match coded.as_slice() {
                [single] => single.encoding,
                _ => KeyEncoding::Packed {
                    columns: coded.len(),
                    bits: layout.iter().map(|l| l.bits).sum(),
                },
            };
            return Ok(SortKeys {
                parts: pack(pool, &shapes, &coded, &layout)?,
                encoding,
            });
        }
        let rows = tuple_rows(pool, &shapes, &coded, &roles)?;
        drop(coded);
        let (dictionary, mut parts) = Dictionary::build(pool, &rows)?;
        let ranks = dictionary.ranks(pool)?;
        remap(pool, &mut parts, &ranks)?;
        Ok(SortKeys {
            parts,
            encoding: KeyEncoding::TupleDictionary {
                columns: keys.len(),
                distinct: dictionary.len(),
            },
        })
    }
}
