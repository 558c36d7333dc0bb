//! A dictionary's distinct keys kept as its own copies, without its hash
//! tables: the way back from a group-by's codes to a string or binary key
//! column.
//!
//! The [`Dictionary`](super::dictionary::Dictionary) copies every distinct
//! key into an arena per hash partition, in code order. A group-by's result
//! lists its groups largely in code order, so building its key column from
//! these arenas reads memory in sequence, where gathering each group's row
//! from the input would jump across it (with millions of distinct keys,
//! one cache miss per group for the row's view and another for its bytes;
//! a result column of views into the input also leaves those misses to
//! whoever reads it next, such as the Parquet writer).
//!
//! The column comes back in the input's own type, for plain and view
//! strings and binaries ([`StoredKeys::decodes`]); other types keep
//! gathering rows. This module does not code keys (the dictionary does).

use std::sync::Arc;

use arrow_array::builder::make_view;
use arrow_array::types::{BinaryType, ByteArrayType, LargeBinaryType, LargeUtf8Type, Utf8Type};
use arrow_array::{ArrayRef, BinaryViewArray, GenericByteArray};
use arrow_buffer::{ArrowNativeType, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::DataType;

use crate::error::{FrameError, Result};

/// One hash partition's keys: key `i` is `bytes[ends[i - 1]..ends[i]]`.
pub(crate) struct StoredPartition {
    ends: Vec<usize>,
    bytes: Buffer,
}

impl StoredPartition {
    /// The keys `bytes` holds end to end, each ending where `ends` says.
    pub(crate) fn new(ends: Vec<usize>, bytes: Vec<u8>) -> Self {
        StoredPartition {
            ends,
            bytes: Buffer::from_vec(bytes),
        }
    }

    /// Where key `index` starts and ends in `bytes`.
    #[inline]
    fn span(&self, index: usize) -> (usize, usize) {
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        (start, self.ends[index])
    }

    #[inline]
    fn key(&self, index: usize) -> &[u8] {
        let (start, end) = self.span(index);
        &self.bytes[start..end]
    }
}

/// Every code's key: partition `p` holds the codes `offsets[p]..`.
pub(crate) struct StoredKeys {
    offsets: Vec<u64>,
    partitions: Vec<StoredPartition>,
}

impl std::fmt::Debug for StoredKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredKeys")
            .field("keys", &self.len())
            .field(
                "bytes",
                &self.partitions.iter().map(|p| p.bytes.len()).sum::<usize>(),
            )
            .finish()
    }
}

impl StoredKeys {
    /// The keys of consecutive code ranges, one per partition, in order.
    pub(crate) fn new(partitions: Vec<StoredPartition>) -> Self {
        let mut offsets = Vec::with_capacity(partitions.len());
        let mut next = 0u64;
        for p in &partitions {
            offsets.push(next);
            next += p.ends.len() as u64;
        }
        StoredKeys {
            offsets,
            partitions,
        }
    }

    /// Number of keys (codes are `0..len`).
    pub(crate) fn len(&self) -> u64 {
        self.partitions.iter().map(|p| p.ends.len() as u64).sum()
    }

    /// Whether a column of `data_type` comes back from its stored keys.
    pub(crate) fn decodes(data_type: &DataType) -> bool {
        matches!(
            data_type,
            DataType::Utf8
                | DataType::LargeUtf8
                | DataType::Utf8View
                | DataType::Binary
                | DataType::LargeBinary
                | DataType::BinaryView
        )
    }

    /// The partition and index of each code (`None`: null), looked up
    /// with a cursor that stays in a partition while the codes do.
    fn locate<'a>(
        &'a self,
        codes: &'a [Option<u64>],
    ) -> impl Iterator<Item = Option<(usize, usize)>> + 'a {
        let mut partition = 0usize;
        let mut range = self.range(0);
        codes.iter().map(move |code| {
            let code = (*code)?;
            if !range.contains(&code) {
                partition = self
                    .offsets
                    .partition_point(|&o| o <= code)
                    .saturating_sub(1);
                range = self.range(partition);
            }
            let index = (code - range.start) as usize;
            self.partitions
                .get(partition)
                .filter(|p| index < p.ends.len())
                .map(|_| (partition, index))
        })
    }

    /// The key of each code (`None`: null).
    fn keys<'a>(&'a self, codes: &'a [Option<u64>]) -> impl Iterator<Item = Option<&'a [u8]>> + 'a {
        self.locate(codes)
            .map(|at| at.map(|(p, i)| self.partitions[p].key(i)))
    }

    fn range(&self, partition: usize) -> std::ops::Range<u64> {
        match (self.offsets.get(partition), self.partitions.get(partition)) {
            (Some(&start), Some(p)) => start..start + p.ends.len() as u64,
            _ => 0..0,
        }
    }

    /// The column of `data_type` holding the key of each code.
    pub(crate) fn column(&self, codes: &[Option<u64>], data_type: &DataType) -> Result<ArrayRef> {
        let len = self.len();
        if let Some(code) = codes.iter().flatten().find(|&&c| c >= len) {
            return Err(FrameError::InvalidRequest(format!(
                "group code {code} is not in the key dictionary of {len} keys"
            )));
        }
        let nulls = NullBuffer::from_iter(codes.iter().map(Option::is_some));
        let nulls = (nulls.null_count() > 0).then_some(nulls);
        let array: ArrayRef = match data_type {
            DataType::Utf8 => Arc::new(self.plain::<Utf8Type>(codes, nulls)?),
            DataType::LargeUtf8 => Arc::new(self.plain::<LargeUtf8Type>(codes, nulls)?),
            DataType::Binary => Arc::new(self.plain::<BinaryType>(codes, nulls)?),
            DataType::LargeBinary => Arc::new(self.plain::<LargeBinaryType>(codes, nulls)?),
            DataType::BinaryView => Arc::new(self.views(codes, nulls)?),
            DataType::Utf8View => Arc::new(
                self.views(codes, nulls)?
                    .to_string_view()
                    .map_err(|e| FrameError::arrow("decoding string keys", e))?,
            ),
            other => {
                return Err(FrameError::InvalidRequest(format!(
                    "{other} keys are not decoded from their stored bytes"
                )))
            }
        };
        Ok(array)
    }

    /// An offsets-and-values array of the keys (validated as UTF-8 for
    /// strings).
    fn plain<T: ByteArrayType>(
        &self,
        codes: &[Option<u64>],
        nulls: Option<NullBuffer>,
    ) -> Result<GenericByteArray<T>> {
        let total: usize = self.keys(codes).flatten().map(<[u8]>::len).sum();
        let too_big = || {
            FrameError::InvalidRequest(format!(
                "the group-by's keys hold {total} bytes, beyond what a {} column can",
                T::DATA_TYPE
            ))
        };
        T::Offset::from_usize(total).ok_or_else(too_big)?;
        let mut values = Vec::with_capacity(total);
        let mut offsets = Vec::with_capacity(codes.len() + 1);
        offsets.push(T::Offset::usize_as(0));
        for key in self.keys(codes) {
            values.extend_from_slice(key.unwrap_or_default());
            offsets.push(T::Offset::usize_as(values.len()));
        }
        let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
        GenericByteArray::<T>::try_new(offsets, Buffer::from_vec(values), nulls)
            .map_err(|e| FrameError::arrow("decoding byte keys", e))
    }

    /// A view array of the keys, its views pointing into the partitions'
    /// own bytes (shared, not copied): a partition is one data buffer.
    fn views(&self, codes: &[Option<u64>], nulls: Option<NullBuffer>) -> Result<BinaryViewArray> {
        let mut views = Vec::with_capacity(codes.len());
        let mut blocks: Vec<Buffer> = Vec::new();
        // The data buffer index of each partition, once it has one.
        let mut block_of = vec![u32::MAX; self.partitions.len()];
        for at in self.locate(codes) {
            let Some((p, i)) = at else {
                views.push(0);
                continue;
            };
            let partition = &self.partitions[p];
            let (start, end) = partition.span(i);
            let key = &partition.bytes[start..end];
            if key.len() <= 12 {
                views.push(make_view(key, 0, 0));
                continue;
            }
            if block_of[p] == u32::MAX {
                block_of[p] = u32::try_from(blocks.len()).map_err(|_| too_long(p))?;
                blocks.push(partition.bytes.clone());
            }
            let offset = u32::try_from(start).map_err(|_| too_long(p))?;
            views.push(make_view(key, block_of[p], offset));
        }
        BinaryViewArray::try_new(ScalarBuffer::from(views), blocks, nulls)
            .map_err(|e| FrameError::arrow("decoding byte keys", e))
    }
}

fn too_long(partition: usize) -> FrameError {
    FrameError::InvalidRequest(format!(
        "the keys of dictionary partition {partition} outgrow a view column's 4 GiB buffer"
    ))
}

#[cfg(test)]
mod tests {
    use arrow_array::cast::AsArray;
    use arrow_array::Array;

    use super::*;

    fn stored(partitions: &[&[&str]]) -> StoredKeys {
        StoredKeys::new(
            partitions
                .iter()
                .map(|keys| {
                    let (mut ends, mut bytes) = (Vec::new(), Vec::new());
                    for k in *keys {
                        bytes.extend_from_slice(k.as_bytes());
                        ends.push(bytes.len());
                    }
                    StoredPartition::new(ends, bytes)
                })
                .collect(),
        )
    }

    #[test]
    fn codes_come_back_as_their_keys_in_every_byte_type() {
        let long = "a key long enough not to be inlined in a view";
        let keys = stored(&[&["", "x"], &[], &[long, "yy"]]);
        assert_eq!(keys.len(), 4);
        let codes = [Some(3), None, Some(2), Some(0), Some(1), Some(2)];
        let want = [
            Some("yy"),
            None,
            Some(long),
            Some(""),
            Some("x"),
            Some(long),
        ];
        for dt in [DataType::Utf8, DataType::LargeUtf8, DataType::Utf8View] {
            let array = keys.column(&codes, &dt).unwrap();
            assert_eq!(array.data_type(), &dt);
            let got: Vec<Option<String>> = match &dt {
                DataType::Utf8 => array
                    .as_string::<i32>()
                    .iter()
                    .map(|v| v.map(str::to_string))
                    .collect(),
                DataType::LargeUtf8 => array
                    .as_string::<i64>()
                    .iter()
                    .map(|v| v.map(str::to_string))
                    .collect(),
                _ => array
                    .as_string_view()
                    .iter()
                    .map(|v| v.map(str::to_string))
                    .collect(),
            };
            let want: Vec<Option<String>> = want.iter().map(|v| v.map(str::to_string)).collect();
            assert_eq!(got, want, "{dt}");
        }
        for dt in [
            DataType::Binary,
            DataType::LargeBinary,
            DataType::BinaryView,
        ] {
            let array = keys.column(&codes, &dt).unwrap();
            let got: Vec<Option<Vec<u8>>> = match &dt {
                DataType::Binary => array
                    .as_binary::<i32>()
                    .iter()
                    .map(|v| v.map(<[u8]>::to_vec))
                    .collect(),
                DataType::LargeBinary => array
                    .as_binary::<i64>()
                    .iter()
                    .map(|v| v.map(<[u8]>::to_vec))
                    .collect(),
                _ => array
                    .as_binary_view()
                    .iter()
                    .map(|v| v.map(<[u8]>::to_vec))
                    .collect(),
            };
            let want: Vec<Option<Vec<u8>>> = want
                .iter()
                .map(|v| v.map(|s| s.as_bytes().to_vec()))
                .collect();
            assert_eq!(got, want, "{dt}");
        }
    }

    #[test]
    fn a_code_beyond_the_keys_is_an_error() {
        let keys = stored(&[&["a"]]);
        assert!(keys.column(&[Some(1)], &DataType::Utf8).is_err());
        assert!(!StoredKeys::decodes(&DataType::FixedSizeBinary(4)));
    }
}
