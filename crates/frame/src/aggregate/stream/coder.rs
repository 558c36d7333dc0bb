//! How a streaming worker turns one key column of a batch into codes that
//! mean the same in every batch it sees: integers are their own codes,
//! floats their total-order bits, strings and other values numbers from
//! the worker's own [`KeyTable`]. It does not combine columns (the worker
//! does) and knows nothing of other workers.

use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;

use crate::error::{FrameError, Result};
use crate::keys::dictionary::{key_hash, ByteKeys};
use crate::keys::key_table::KeyTable;
use crate::keys::numbers::{each_number, raw_signed};
use crate::keys::PartCodes;
use crate::request::aggregate::spec::{value_type, ValueType};
use crate::table::RowRef;

/// How one key column's values become codes in a worker.
pub(super) enum Coder {
    /// Integers of 32 or 64 bits: the value (sign-extended when signed).
    Raw { signed: bool },
    /// Floats: total-order bits.
    Float,
    /// Strings and binaries: numbers from the worker's table of them.
    Bytes(KeyTable),
    /// Anything else (wide decimals, booleans): numbers from a table of
    /// their 16-byte values.
    Wide(KeyTable),
}

impl Coder {
    pub(super) fn for_type(data_type: &DataType) -> Self {
        match (value_type(data_type), raw_signed(data_type)) {
            (ValueType::Float, _) => Coder::Float,
            (ValueType::Bytes, _) => Coder::Bytes(KeyTable::with_capacity(64)),
            (_, Some(signed)) => Coder::Raw { signed },
            _ => Coder::Wide(KeyTable::with_capacity(64)),
        }
    }

    /// The codes of a batch's column, nulls listed.
    pub(super) fn codes(&mut self, array: &ArrayRef) -> Result<PartCodes> {
        match self {
            Coder::Raw { .. } => crate::keys::numbers::raw_codes(array)
                .ok_or_else(|| FrameError::InvalidRequest("a key column changed type".into())),
            Coder::Float => number_codes(array.as_ref(), |v| v as u64),
            Coder::Wide(table) => {
                let mut numbers = Vec::with_capacity(array.len());
                let mut invalid = Vec::new();
                each_number(array.as_ref(), 1, |row, v| match v {
                    Some(v) => {
                        let bytes = v.to_be_bytes();
                        numbers.push(u64::from(table.insert(key_hash(&bytes), &bytes, 0)));
                    }
                    None => {
                        numbers.push(0);
                        invalid.push(row as u32);
                    }
                })?;
                Ok(PartCodes::new(numbers, invalid))
            }
            Coder::Bytes(table) => bytes_codes(table, array),
        }
    }

    /// The canonical bytes of code `code` (appended to `out`).
    pub(super) fn canonical(&self, code: u64, out: &mut Vec<u8>) {
        match self {
            Coder::Raw { .. } | Coder::Float => out.extend_from_slice(&code.to_be_bytes()),
            Coder::Bytes(table) | Coder::Wide(table) => {
                let key = table.key(code as usize);
                out.extend_from_slice(&(key.len() as u32).to_be_bytes());
                out.extend_from_slice(key);
            }
        }
    }
}

fn number_codes(array: &dyn Array, f: impl Fn(i128) -> u64) -> Result<PartCodes> {
    let mut codes = Vec::with_capacity(array.len());
    let mut invalid = Vec::new();
    each_number(array, 1, |row, v| match v {
        Some(v) => codes.push(f(v)),
        None => {
            codes.push(0);
            invalid.push(row as u32);
        }
    })?;
    Ok(PartCodes::new(codes, invalid))
}

/// A string or binary column's codes through the worker's `table`.
fn bytes_codes(table: &mut KeyTable, array: &ArrayRef) -> Result<PartCodes> {
    let keys = OneArray::new(array)?;
    let mut insert = |key: &[u8], _: RowRef| table.insert(key_hash(key), key, 0);
    let numbers = match keys.0.number_by_values(0, &mut insert) {
        Some(numbers) => numbers,
        None => (0..array.len())
            .map(|row| match keys.0.key(0, row) {
                Some(key) => insert(key, 0),
                None => u32::MAX,
            })
            .collect(),
    };
    let invalid = numbers
        .iter()
        .enumerate()
        .filter(|(_, &n)| n == u32::MAX)
        .map(|(row, _)| row as u32)
        .collect();
    Ok(PartCodes::new(
        numbers
            .into_iter()
            .map(|n| if n == u32::MAX { 0 } else { u64::from(n) })
            .collect(),
        invalid,
    ))
}

/// One array seen as the byte keys of a one-part table.
struct OneArray<'a>(crate::keys::bytes::ColumnBytes<'a>);

impl<'a> OneArray<'a> {
    fn new(array: &'a ArrayRef) -> Result<Self> {
        Ok(OneArray(crate::keys::bytes::ColumnBytes::of_array(array)?))
    }
}
