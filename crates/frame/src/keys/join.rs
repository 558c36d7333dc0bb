//! Join keys: the key columns of both sides coded in one code space, so
//! that equal codes mean equal keys across the tables.
//!
//! The code space is the left (build) side's: a [`JoinCoder`] is made from
//! the left table and the right side's types, and then codes any right
//! table (the whole right side, or the pieces of a right side read a piece
//! at a time) into it. Per column pair: numbers are coded by value over the
//! left side's range, narrowed to the right side's when it is known (a value
//! outside it cannot match and gets no code); strings and binaries through
//! a dictionary of the left side's keys, which the right side only looks
//! up. Composite keys are packed or, when too wide, their left rows form a
//! second dictionary that the right rows look up. A null anywhere in a
//! row's key leaves it without a code.

use arrow_schema::Schema;
use numakit_pool::Pool;

use crate::error::{FrameError, Result};
use crate::keys::bytes::ColumnBytes;
use crate::keys::compose::{pack, packed_layout, tuple_rows, ColumnRole, PackedColumn};
use crate::keys::dictionary::Dictionary;
use crate::keys::family::{common_family, family_of, multiplier, Family};
use crate::keys::{numbers, span_of, wide_rows, ColumnCodes, KeyEncoding, Meaning, PartCodes};
use crate::table::Table;

/// Both sides' key codes.
#[derive(Debug)]
pub struct JoinKeys {
    /// The left (build) table's codes, per part; rows with a null in
    /// their key, or a value the right side does not hold, are invalid.
    pub left: Vec<PartCodes>,
    /// The right (probe) table's codes in the left's code space, per
    /// part; rows with a null or a key the left side cannot hold are
    /// invalid.
    pub right: Vec<PartCodes>,
    /// How the key columns became codes.
    pub encoding: KeyEncoding,
}

impl JoinKeys {
    /// Codes `left`'s columns `lcols` and `right`'s `rcols` (pairwise).
    pub fn encode(
        pool: &Pool,
        left: &Table,
        lcols: &[usize],
        right: &Table,
        rcols: &[usize],
    ) -> Result<Self> {
        let (coder, left_codes) =
            JoinCoder::new(pool, (left, lcols), (right.schema(), rcols), Some(right))?;
        let right_codes = coder.code(pool, right, rcols)?;
        Ok(JoinKeys {
            left: left_codes,
            right: right_codes,
            encoding: coder.encoding,
        })
    }
}

fn shapes(table: &Table) -> Vec<(usize, usize)> {
    table
        .parts()
        .iter()
        .map(|p| (p.batch.num_rows(), p.worker))
        .collect()
}

/// Every row without a code (a pair whose ranges do not meet).
fn no_codes(table: &Table) -> Vec<PartCodes> {
    table
        .parts()
        .iter()
        .map(|p| {
            PartCodes::new(
                vec![0; p.batch.num_rows()],
                (0..p.batch.num_rows() as u32).collect(),
            )
        })
        .collect()
}

fn column(parts: Vec<PartCodes>, span: u64, encoding: KeyEncoding) -> ColumnCodes {
    ColumnCodes {
        parts,
        span,
        meaning: Meaning::Offset {
            lo: 0,
            multiplier: 1,
        },
        encoding,
    }
}

/// Raw codes (the values themselves) of a column, part by part.
fn raw_column(pool: &Pool, table: &Table, column: usize) -> Result<Vec<PartCodes>> {
    let parts = table.parts();
    crate::par::per_part(
        pool,
        parts.len(),
        |p| parts[p].worker,
        |p| numbers::raw_codes(parts[p].batch.column(column)),
    )?
    .into_iter()
    .collect::<Option<Vec<_>>>()
    .ok_or_else(|| FrameError::InvalidRequest("a raw key column changed type".into()))
}

/// How the right side's values of one key column get the left's codes.
enum ColumnCoder {
    /// 64-bit integers of the same sign on both sides: the values.
    Raw,
    /// No right value can match (the left has no values, or none in the
    /// right side's range).
    Never,
    /// `value - lo` in the family's common unit, for values in `lo..=hi`.
    Offset { family: Family, lo: i128, hi: i128 },
    /// Strings and binaries: looked up in the left's dictionary.
    Bytes(Dictionary),
    /// Numbers whose range is wider than 64 bits: their 16-byte forms
    /// looked up in the left's dictionary.
    Wide {
        family: Family,
        dictionary: Dictionary,
    },
}

/// One column's coder, span and encoding.
struct CodedColumn {
    coder: ColumnCoder,
    span: u64,
    encoding: KeyEncoding,
}

/// How the columns' codes make a key's code.
enum Composition {
    Single,
    Packed(Vec<PackedColumn>),
    /// Byte rows of the column codes, looked up in the left's dictionary.
    Tuples(Dictionary),
}

/// The left side's code space, ready to code right tables into.
pub(crate) struct JoinCoder {
    columns: Vec<CodedColumn>,
    composition: Composition,
    pub encoding: KeyEncoding,
}

impl std::fmt::Debug for JoinCoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinCoder")
            .field("encoding", &self.encoding)
            .finish()
    }
}

fn family_at(schema: &Schema, column: usize) -> Result<Family> {
    let field = schema.field(column);
    family_of(field.data_type()).map_err(|why| FrameError::UnsupportedType {
        column: field.name().clone(),
        data_type: field.data_type().to_string(),
        role: "a key",
        why: format!(": {why}"),
    })
}

impl JoinCoder {
    /// Codes `left`'s key columns `lcols` for a right side with
    /// `right_schema`, keys `rcols` (pairwise); returns the coder and the
    /// left's codes. `right_table`, when the whole right side is at hand,
    /// narrows the numeric ranges to the values both sides hold.
    pub(crate) fn new(
        pool: &Pool,
        (left, lcols): (&Table, &[usize]),
        (right_schema, rcols): (&Schema, &[usize]),
        right_table: Option<&Table>,
    ) -> Result<(Self, Vec<PartCodes>)> {
        if lcols.len() != rcols.len() || lcols.is_empty() {
            return Err(FrameError::InvalidRequest(format!(
                "a join needs as many key columns on the left as on the right (got {} and {})",
                lcols.len(),
                rcols.len()
            )));
        }
        let single = lcols.len() == 1;
        let mut columns = Vec::with_capacity(lcols.len());
        let mut lcoded = Vec::with_capacity(lcols.len());
        for (&lc, &rc) in lcols.iter().zip(rcols) {
            let right = (right_schema, rc, right_table);
            let (coded, codes) = column_coder(pool, (left, lc), right, single)?;
            columns.push(coded);
            lcoded.push(codes);
        }
        if single {
            let encoding = columns[0].encoding;
            let coder = JoinCoder {
                columns,
                composition: Composition::Single,
                encoding,
            };
            return Ok((coder, lcoded.remove(0).parts));
        }
        let roles = vec![ColumnRole::JOIN; lcoded.len()];
        let lshapes = shapes(left);
        if let Some(layout) = packed_layout(&lcoded, &roles) {
            let bits = layout.iter().map(|l| l.bits).sum();
            let codes = pack(pool, &lshapes, &lcoded, &layout)?;
            let encoding = KeyEncoding::Packed {
                columns: lcoded.len(),
                bits,
            };
            let composition = Composition::Packed(layout);
            return Ok((
                JoinCoder {
                    columns,
                    composition,
                    encoding,
                },
                codes,
            ));
        }
        let lrows = tuple_rows(pool, &lshapes, &lcoded, &roles)?;
        drop(lcoded);
        let (dictionary, codes) = Dictionary::build(pool, &lrows)?;
        let encoding = KeyEncoding::TupleDictionary {
            columns: lcols.len(),
            distinct: dictionary.len(),
        };
        let composition = Composition::Tuples(dictionary);
        Ok((
            JoinCoder {
                columns,
                composition,
                encoding,
            },
            codes,
        ))
    }

    /// The codes of `right`'s key columns `rcols` (of the types the coder
    /// was made for) in the left's code space.
    pub(crate) fn code(
        &self,
        pool: &Pool,
        right: &Table,
        rcols: &[usize],
    ) -> Result<Vec<PartCodes>> {
        if rcols.len() != self.columns.len() {
            return Err(FrameError::InvalidRequest(format!(
                "the join was planned for {} key columns, not {}",
                self.columns.len(),
                rcols.len()
            )));
        }
        let mut coded = Vec::with_capacity(rcols.len());
        for (column, &rc) in self.columns.iter().zip(rcols) {
            let parts = column.coder.code(pool, right, rc)?;
            coded.push(ColumnCodes {
                parts,
                span: column.span,
                meaning: Meaning::Offset {
                    lo: 0,
                    multiplier: 1,
                },
                encoding: column.encoding,
            });
        }
        let shapes = shapes(right);
        match &self.composition {
            Composition::Single => Ok(coded.remove(0).parts),
            Composition::Packed(layout) => pack(pool, &shapes, &coded, layout),
            Composition::Tuples(dictionary) => {
                let roles = vec![ColumnRole::JOIN; coded.len()];
                let rows = tuple_rows(pool, &shapes, &coded, &roles)?;
                dictionary.lookup(pool, &rows)
            }
        }
    }
}

impl ColumnCoder {
    fn code(&self, pool: &Pool, table: &Table, column: usize) -> Result<Vec<PartCodes>> {
        match self {
            ColumnCoder::Raw => raw_column(pool, table, column),
            ColumnCoder::Never => Ok(no_codes(table)),
            ColumnCoder::Offset { family, lo, hi } => {
                numbers::offset_codes(pool, table, column, *family, (*lo, *hi))
            }
            ColumnCoder::Bytes(dictionary) => {
                dictionary.lookup(pool, &ColumnBytes::new(table, column)?)
            }
            ColumnCoder::Wide { family, dictionary } => {
                dictionary.lookup(pool, &wide_rows(pool, table, column, *family)?)
            }
        }
    }
}

/// One column pair's coder and the left column's codes; `single` when it
/// is the whole key (then values that are their own codes need no range).
fn column_coder(
    pool: &Pool,
    (left, lc): (&Table, usize),
    (right_schema, rc, right_table): (&Schema, usize, Option<&Table>),
    single: bool,
) -> Result<(CodedColumn, ColumnCodes)> {
    let (lf, rf) = (family_at(left.schema(), lc)?, family_at(right_schema, rc)?);
    let family = common_family(lf, rf).map_err(|why| {
        let (l, r) = (left.schema().field(lc), right_schema.field(rc));
        FrameError::KeyMismatch {
            left: l.name().clone(),
            left_type: l.data_type().to_string(),
            right: r.name().clone(),
            right_type: r.data_type().to_string(),
            why,
        }
    })?;
    if let Family::Bytes { .. } = family {
        let (dictionary, codes) = Dictionary::build(pool, &ColumnBytes::new(left, lc)?)?;
        return Ok(dictionary_column(ColumnCoder::Bytes, dictionary, codes));
    }
    let (lt, rt) = (
        left.schema().field(lc).data_type(),
        right_schema.field(rc).data_type(),
    );
    let same_raw = numbers::raw_signed(lt).is_some()
        && numbers::raw_signed(lt) == numbers::raw_signed(rt)
        && multiplier(lt, family) == 1
        && multiplier(rt, family) == 1;
    let coded = |coder, parts, span| {
        let encoding = KeyEncoding::Value;
        let coded = CodedColumn {
            coder,
            span,
            encoding,
        };
        (coded, column(parts, span, encoding))
    };
    if single && same_raw {
        let parts = raw_column(pool, left, lc)?;
        return Ok(coded(ColumnCoder::Raw, parts, u64::MAX));
    }
    let left_range = numbers::range(pool, left, lc, family)?;
    let right_range = match right_table {
        Some(table) => numbers::range(pool, table, rc, family)?,
        None => Some((i128::MIN, i128::MAX)),
    };
    let meet = match (left_range, right_range) {
        (Some((llo, lhi)), Some((rlo, rhi))) => Some((llo.max(rlo), lhi.min(rhi))),
        _ => None,
    };
    let Some((lo, hi)) = meet.filter(|(lo, hi)| lo <= hi) else {
        return Ok(coded(ColumnCoder::Never, no_codes(left), 0));
    };
    if let Some(span) = span_of(lo, hi) {
        let parts = numbers::offset_codes(pool, left, lc, family, (lo, hi))?;
        return Ok(coded(ColumnCoder::Offset { family, lo, hi }, parts, span));
    }
    let (dictionary, codes) = Dictionary::build(pool, &wide_rows(pool, left, lc, family)?)?;
    let wide = |dictionary| ColumnCoder::Wide { family, dictionary };
    Ok(dictionary_column(wide, dictionary, codes))
}

/// A column coded by a dictionary of the left's keys.
fn dictionary_column(
    coder: impl FnOnce(Dictionary) -> ColumnCoder,
    dictionary: Dictionary,
    codes: Vec<PartCodes>,
) -> (CodedColumn, ColumnCodes) {
    let distinct = dictionary.len();
    let span = distinct.saturating_sub(1);
    let encoding = KeyEncoding::Dictionary { distinct };
    let coded = CodedColumn {
        coder: coder(dictionary),
        span,
        encoding,
    };
    (coded, column(codes, span, encoding))
}
