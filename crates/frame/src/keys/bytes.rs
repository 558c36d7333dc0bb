//! Byte keys for the dictionary: the values of a string or binary column
//! (any layout, dictionary-encoded included), and fixed-width byte rows
//! made from several columns' codes (composite keys that do not pack into
//! one word) or from 128-bit numbers.
//!
//! Tuple rows are ordered like their keys: each column contributes a flag
//! byte (where a null sorts) and its code in big-endian order, so byte
//! order is key order and [`Dictionary::ranks`](super::dictionary::Dictionary::ranks)
//! yields sort codes.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_buffer::NullBuffer;
use arrow_schema::DataType;

use crate::error::{FrameError, Result};
use crate::keys::dictionary::ByteKeys;
use crate::table::{row_ref, RowRef, Table};

/// One part's byte array.
enum ByteArray<'a> {
    Utf8(&'a arrow_array::StringArray),
    LargeUtf8(&'a arrow_array::LargeStringArray),
    Utf8View(&'a arrow_array::StringViewArray),
    Binary(&'a arrow_array::BinaryArray),
    LargeBinary(&'a arrow_array::LargeBinaryArray),
    BinaryView(&'a arrow_array::BinaryViewArray),
    Fixed(&'a arrow_array::FixedSizeBinaryArray),
}

impl<'a> ByteArray<'a> {
    fn of(array: &'a dyn Array) -> Result<Self> {
        Ok(match array.data_type() {
            DataType::Utf8 => ByteArray::Utf8(array.as_string()),
            DataType::LargeUtf8 => ByteArray::LargeUtf8(array.as_string()),
            DataType::Utf8View => ByteArray::Utf8View(array.as_string_view()),
            DataType::Binary => ByteArray::Binary(array.as_binary()),
            DataType::LargeBinary => ByteArray::LargeBinary(array.as_binary()),
            DataType::BinaryView => ByteArray::BinaryView(array.as_binary_view()),
            DataType::FixedSizeBinary(_) => ByteArray::Fixed(array.as_fixed_size_binary()),
            other => {
                return Err(FrameError::InvalidRequest(format!(
                    "{other} values are not strings or binaries"
                )))
            }
        })
    }

    fn len(&self) -> usize {
        match self {
            ByteArray::Utf8(a) => a.len(),
            ByteArray::LargeUtf8(a) => a.len(),
            ByteArray::Utf8View(a) => a.len(),
            ByteArray::Binary(a) => a.len(),
            ByteArray::LargeBinary(a) => a.len(),
            ByteArray::BinaryView(a) => a.len(),
            ByteArray::Fixed(a) => a.len(),
        }
    }

    #[inline]
    fn value(&self, i: usize) -> &'a [u8] {
        match self {
            ByteArray::Utf8(a) => a.value(i).as_bytes(),
            ByteArray::LargeUtf8(a) => a.value(i).as_bytes(),
            ByteArray::Utf8View(a) => a.value(i).as_bytes(),
            ByteArray::Binary(a) => a.value(i),
            ByteArray::LargeBinary(a) => a.value(i),
            ByteArray::BinaryView(a) => a.value(i),
            ByteArray::Fixed(a) => a.value(i),
        }
    }
}

/// One part of a byte column.
struct BytePart<'a> {
    values: Option<ByteArray<'a>>,
    /// For dictionary-encoded columns, each row's index into `values`.
    indices: Option<Vec<usize>>,
    nulls: Option<NullBuffer>,
    rows: usize,
    worker: usize,
}

/// The byte keys of one string or binary column of a table.
pub(crate) struct ColumnBytes<'a> {
    parts: Vec<BytePart<'a>>,
}

impl<'a> BytePart<'a> {
    fn of(array: &'a ArrayRef, worker: usize) -> Result<Self> {
        let nulls = array.logical_nulls().filter(|n| n.null_count() > 0);
        let rows = array.len();
        let (values, indices) = match array.data_type() {
            DataType::Dictionary(..) => {
                let dictionary = array.as_any_dictionary();
                if dictionary.values().is_empty() {
                    // Every row is null.
                    (None, None)
                } else {
                    (
                        Some(ByteArray::of(dictionary.values().as_ref())?),
                        Some(dictionary.normalized_keys()),
                    )
                }
            }
            _ => (Some(ByteArray::of(array.as_ref())?), None),
        };
        Ok(BytePart {
            values,
            indices,
            nulls,
            rows,
            worker,
        })
    }
}

impl<'a> ColumnBytes<'a> {
    pub(crate) fn new(table: &'a Table, column: usize) -> Result<Self> {
        let parts = table
            .parts()
            .iter()
            .map(|part| BytePart::of(part.batch.column(column), part.worker))
            .collect::<Result<Vec<_>>>()?;
        Ok(ColumnBytes { parts })
    }

    /// One array, as the only part.
    pub(crate) fn of_array(array: &'a ArrayRef) -> Result<Self> {
        Ok(ColumnBytes {
            parts: vec![BytePart::of(array, 0)?],
        })
    }
}

impl ByteKeys for ColumnBytes<'_> {
    fn parts(&self) -> usize {
        self.parts.len()
    }

    fn worker(&self, part: usize) -> usize {
        self.parts[part].worker
    }

    fn rows(&self, part: usize) -> usize {
        self.parts[part].rows
    }

    #[inline]
    fn key(&self, part: usize, row: usize) -> Option<&[u8]> {
        let p = &self.parts[part];
        if p.nulls.as_ref().is_some_and(|n| n.is_null(row)) {
            return None;
        }
        let values = p.values.as_ref()?;
        Some(match &p.indices {
            Some(indices) => values.value(indices[row]),
            None => values.value(row),
        })
    }

    fn number_by_values(
        &self,
        part: usize,
        number: &mut dyn FnMut(&[u8], RowRef) -> u32,
    ) -> Option<Vec<u32>> {
        let p = &self.parts[part];
        let (values, indices) = (p.values.as_ref()?, p.indices.as_ref()?);
        let mut numbers_of_values = vec![u32::MAX; values.len()];
        Some(
            indices
                .iter()
                .enumerate()
                .map(|(row, &i)| {
                    if p.nulls.as_ref().is_some_and(|n| n.is_null(row)) {
                        return u32::MAX;
                    }
                    if numbers_of_values[i] == u32::MAX {
                        numbers_of_values[i] = number(values.value(i), row_ref(part, row));
                    }
                    numbers_of_values[i]
                })
                .collect(),
        )
    }
}

/// Fixed-width byte rows, one buffer per part; a row is `None` when it is
/// listed as invalid.
pub(crate) struct FixedRows {
    width: usize,
    parts: Vec<FixedPart>,
}

struct FixedPart {
    bytes: Vec<u8>,
    /// Sorted rows without a key.
    invalid: Vec<u32>,
    rows: usize,
    worker: usize,
}

impl FixedRows {
    /// Rows of `width` bytes: part i has `rows[i]` rows made by
    /// `fill(part, row, out)`, which returns false for a row without a key.
    pub(crate) fn build(
        pool: &numakit_pool::Pool,
        width: usize,
        parts: &[(usize, usize)],
        fill: impl Fn(usize, usize, &mut [u8]) -> bool + Sync,
    ) -> Result<Self> {
        let built = crate::par::per_part(
            pool,
            parts.len(),
            |p| parts[p].1,
            |p| {
                let rows = parts[p].0;
                let mut bytes = vec![0u8; rows * width];
                let mut invalid = Vec::new();
                for (row, out) in bytes.chunks_exact_mut(width.max(1)).enumerate().take(rows) {
                    if !fill(p, row, out) {
                        invalid.push(row as u32);
                    }
                }
                FixedPart {
                    bytes,
                    invalid,
                    rows,
                    worker: parts[p].1,
                }
            },
        )?;
        Ok(FixedRows {
            width,
            parts: built,
        })
    }
}

impl ByteKeys for FixedRows {
    fn parts(&self) -> usize {
        self.parts.len()
    }

    fn worker(&self, part: usize) -> usize {
        self.parts[part].worker
    }

    fn rows(&self, part: usize) -> usize {
        self.parts[part].rows
    }

    #[inline]
    fn key(&self, part: usize, row: usize) -> Option<&[u8]> {
        let p = &self.parts[part];
        if !p.invalid.is_empty() && p.invalid.binary_search(&(row as u32)).is_ok() {
            return None;
        }
        Some(&p.bytes[row * self.width..(row + 1) * self.width])
    }
}
