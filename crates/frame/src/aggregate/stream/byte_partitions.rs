//! A streamed group-by of one string or binary key whose distinct keys
//! outgrow a worker's table: the worker stops numbering keys and files each
//! row (its key's bytes and its values) into one of `1 << PARTITION_BITS`
//! partitions by the top bits of the key's hash. When the file is read,
//! every partition (all workers' rows of it) is numbered by a table of its
//! own, small enough for the cache, aggregated, and freed; its groups' key
//! column is built from that table's copies of the keys.
//!
//! So the input is never held whole and no table of every distinct key is
//! built: at most the compact rows of the projected columns are held
//! (length, bytes and values per row), and each partition's table lives
//! only while that partition is aggregated. The groups a worker made
//! before it switched are merged into their partitions at the end.
//!
//! Integer keys do not come here: their codes mean the same on every
//! worker, so they go to partition owners as they are read (see
//! `numakit_ops::aggregate::columns::radix`). This module does not decide
//! when to switch (the streaming worker does).

use arrow_array::ArrayRef;
use arrow_buffer::BooleanBufferBuilder;
use arrow_schema::DataType;

use numakit_ops::aggregate::columns::{
    AggSpec, Groups, Partial, Segment, Validity, ValueColumn, Values,
};
use numakit_pool::Pool;

use super::coder::Coder;
use crate::error::{FrameError, Result};
use crate::keys::bytes::ColumnBytes;
use crate::keys::dictionary::{key_hash, ByteKeys};
use crate::keys::key_table::KeyTable;
use crate::keys::stored::StoredKeys;
use crate::par::{try_per_item, try_per_part};

/// Rows are filed into `1 << PARTITION_BITS` partitions: with 2^23
/// distinct keys, 32K (about 2 MiB with their table) in each.
pub(super) const PARTITION_BITS: u32 = 8;

/// The partition of a key's hash.
#[inline]
fn partition_of(hash: u64) -> usize {
    (hash >> (64 - PARTITION_BITS)) as usize
}

/// The values of one value column's rows in one partition.
#[derive(Debug, Default)]
enum LaneValues {
    /// No values (yet, or a column counted only by its validity).
    #[default]
    None,
    I64(Vec<i64>),
    I128(Vec<i128>),
    F64(Vec<f64>),
}

/// One value column's rows in one partition.
#[derive(Debug, Default)]
struct LaneRows {
    values: LaneValues,
    /// Made at the first null: one bit per row (set: valid).
    valid: Option<BooleanBufferBuilder>,
    rows: usize,
    /// The rows expected in all: the room the values get at once.
    expected: usize,
}

impl LaneRows {
    /// Appends row `row` of `column`. A lane of 64-bit integers widens to
    /// 128 bits when a batch of the column needs them (an unsigned column
    /// with values beyond `i64::MAX`).
    fn push(&mut self, column: &ValueColumn<'_>, row: usize) {
        if let (LaneValues::I64(v), Values::I128(_)) = (&self.values, column.values) {
            self.values = LaneValues::I128(v.iter().map(|&x| i128::from(x)).collect());
        }
        if let (LaneValues::None, true) = (&self.values, self.rows == 0) {
            let room = self.expected;
            self.values = match column.values {
                Values::I64(_) => LaneValues::I64(Vec::with_capacity(room)),
                Values::I128(_) => LaneValues::I128(Vec::with_capacity(room)),
                Values::F64(_) => LaneValues::F64(Vec::with_capacity(room)),
                Values::None => LaneValues::None,
            };
        }
        match (&mut self.values, column.values) {
            (LaneValues::I64(v), Values::I64(s)) => v.push(s[row]),
            (LaneValues::I128(v), Values::I128(s)) => v.push(s[row]),
            (LaneValues::I128(v), Values::I64(s)) => v.push(i128::from(s[row])),
            (LaneValues::F64(v), Values::F64(s)) => v.push(s[row]),
            _ => {}
        }
        let valid = column.valid.is_none_or(|v| v.get(row));
        match &mut self.valid {
            Some(bits) => bits.append(valid),
            None if !valid => {
                let mut bits = BooleanBufferBuilder::new(self.rows + 1);
                bits.append_n(self.rows, true);
                bits.append(false);
                self.valid = Some(bits);
            }
            None => {}
        }
        self.rows += 1;
    }

    /// The rows as the kernels read them.
    fn column(&self) -> ValueColumn<'_> {
        let values = match &self.values {
            LaneValues::None => Values::None,
            LaneValues::I64(v) => Values::I64(v),
            LaneValues::I128(v) => Values::I128(v),
            LaneValues::F64(v) => Values::F64(v),
        };
        ValueColumn {
            values,
            valid: self.valid.as_ref().map(|b| Validity::new(b.as_slice(), 0)),
        }
    }
}

/// One worker's rows of one partition.
#[derive(Debug, Default)]
struct PartitionRows {
    /// Each row's key length (0 for a row without a key).
    lengths: Vec<u32>,
    /// The keys' bytes, end to end.
    bytes: Vec<u8>,
    /// Rows without a key, in order (partition 0 holds them).
    keyless: Vec<u32>,
    lanes: Vec<LaneRows>,
}

impl PartitionRows {
    fn rows(&self) -> usize {
        self.lengths.len()
    }

    /// The next row's number, which must fit 32 bits.
    fn next_row(&self) -> Result<u32> {
        u32::try_from(self.rows()).map_err(|_| {
            FrameError::InvalidRequest(
                "one partition of the string group-by outgrew 2^32 rows on one worker".into(),
            )
        })
    }

    /// The code of each row's key in `table` (rows without a key: 0).
    fn codes(&self, table: &mut KeyTable) -> Vec<u64> {
        let mut keyless = self.keyless.iter().peekable();
        let mut start = 0usize;
        (0..self.rows())
            .map(|row| {
                if keyless.peek() == Some(&&(row as u32)) {
                    keyless.next();
                    return 0;
                }
                let key = &self.bytes[start..start + self.lengths[row] as usize];
                start += key.len();
                u64::from(table.insert(key_hash(key), key, 0))
            })
            .collect()
    }
}

/// One worker's rows, filed by partition.
#[derive(Debug)]
pub(super) struct BytePartitions {
    partitions: Vec<PartitionRows>,
    /// The partition of each row of the batch being filed.
    targets: Vec<u16>,
}

impl BytePartitions {
    /// No rows yet, for `lanes` value columns, with room made at once for
    /// about `rows` more rows of keys about `key_len` bytes long (a
    /// partition's lists then rarely grow, so their bytes are rarely
    /// copied; room not used is never touched).
    pub(super) fn new(lanes: usize, rows: usize, key_len: usize) -> Self {
        // A little above the mean, as partitions differ in size.
        let per_partition = (rows >> PARTITION_BITS) * 9 / 8;
        let partitions = (0..1usize << PARTITION_BITS)
            .map(|_| PartitionRows {
                lengths: Vec::with_capacity(per_partition),
                bytes: Vec::with_capacity(per_partition * key_len),
                keyless: Vec::new(),
                lanes: (0..lanes)
                    .map(|_| LaneRows {
                        expected: per_partition,
                        ..LaneRows::default()
                    })
                    .collect(),
            })
            .collect();
        BytePartitions {
            partitions,
            targets: Vec::new(),
        }
    }

    /// Files the rows of `keys` (a string or binary column) with their
    /// values `columns`.
    pub(super) fn add(&mut self, keys: &ArrayRef, columns: &[ValueColumn<'_>]) -> Result<()> {
        let bytes = ColumnBytes::of_array(keys)?;
        self.targets.clear();
        for row in 0..keys.len() {
            let target = match bytes.key(0, row) {
                Some(key) => {
                    let p = partition_of(key_hash(key));
                    let part = &mut self.partitions[p];
                    part.next_row()?;
                    let length = u32::try_from(key.len()).map_err(|_| {
                        FrameError::InvalidRequest("a group key is longer than 4 GiB".into())
                    })?;
                    part.lengths.push(length);
                    part.bytes.extend_from_slice(key);
                    p
                }
                None => {
                    let part = &mut self.partitions[0];
                    let next = part.next_row()?;
                    part.keyless.push(next);
                    part.lengths.push(0);
                    0
                }
            };
            self.targets.push(target as u16);
        }
        for (l, column) in columns.iter().enumerate() {
            for (row, &p) in self.targets.iter().enumerate() {
                self.partitions[p as usize].lanes[l].push(column, row);
            }
        }
        Ok(())
    }
}

/// A worker's groups from before it filed rows (or of a worker that never
/// did), with the coder whose table holds their keys.
pub(super) struct Earlier<'a> {
    pub(super) partial: &'a Partial,
    pub(super) coder: &'a Coder,
}

impl Earlier<'_> {
    /// The groups with rows, listed by the partition of their key (the
    /// null group in partition 0).
    fn by_partition(&self) -> Vec<Vec<u32>> {
        let mut lists = vec![Vec::new(); 1 << PARTITION_BITS];
        for g in 0..self.partial.groups() {
            if self.partial.rows(g) == 0 {
                continue;
            }
            let p = match self.key(g) {
                Some(key) => partition_of(key_hash(key)),
                None => 0,
            };
            lists[p].push(g as u32);
        }
        lists
    }

    /// The key of group `g` (`None`: the null group).
    fn key(&self, g: usize) -> Option<&[u8]> {
        self.partial.code(g).and_then(|c| self.coder.key(c))
    }
}

/// The groups of every partition: each partition's rows from every worker
/// in `filed` and its earlier groups from every worker in `earlier`, with
/// their key column of `data_type`, one output per partition that has
/// groups.
pub(super) fn finish(
    pool: &Pool,
    data_type: &DataType,
    specs: &[AggSpec],
    filed: Vec<BytePartitions>,
    earlier: &[Earlier<'_>],
) -> Result<(Vec<Groups>, Vec<Vec<ArrayRef>>)> {
    let workers = pool.workers().max(1);
    let lists = try_per_part(
        pool,
        earlier.len(),
        |w| w % workers,
        |w| Ok(earlier[w].by_partition()),
    )?;
    let partitions = 1usize << PARTITION_BITS;
    let mut by_partition: Vec<Vec<PartitionRows>> = (0..partitions).map(|_| Vec::new()).collect();
    for worker in filed {
        for (p, rows) in worker.partitions.into_iter().enumerate() {
            if rows.rows() > 0 {
                by_partition[p].push(rows);
            }
        }
    }
    let outputs = try_per_item(pool, by_partition, |p, rows| {
        let earlier: Vec<(&Earlier<'_>, &[u32])> = earlier
            .iter()
            .zip(&lists)
            .map(|(e, l)| (e, l[p].as_slice()))
            .collect();
        aggregate_partition(rows, &earlier, data_type, specs)
    })?;
    Ok(outputs.into_iter().flatten().unzip())
}

/// One partition's groups and key column (`None` without groups): its
/// keys numbered by a table of their own, its rows aggregated by those
/// numbers (then freed), and its earlier groups merged in.
fn aggregate_partition(
    rows: Vec<PartitionRows>,
    earlier: &[(&Earlier<'_>, &[u32])],
    data_type: &DataType,
    specs: &[AggSpec],
) -> Result<Option<(Groups, Vec<ArrayRef>)>> {
    let expected = rows.iter().map(PartitionRows::rows).sum::<usize>()
        + earlier.iter().map(|(_, l)| l.len()).sum::<usize>();
    if expected == 0 {
        return Ok(None);
    }
    // Slots grow with the distinct keys (rows may repeat few keys); the
    // keys and their bytes get room for every row's at once.
    let mut table = KeyTable::with_capacity(expected.min(1 << 15));
    let bytes = rows.iter().map(|r| r.bytes.len()).sum::<usize>();
    table.reserve(expected.min(1 << 20), bytes.min(64 << 20));
    let codes: Vec<Vec<u64>> = rows.iter().map(|r| r.codes(&mut table)).collect();
    let earlier_codes: Vec<Vec<Option<u64>>> = earlier
        .iter()
        .map(|(e, list)| {
            list.iter()
                .map(|&g| {
                    e.key(g as usize)
                        .map(|key| u64::from(table.insert(key_hash(key), key, 0)))
                })
                .collect()
        })
        .collect();
    let keys = table.len();
    // Codes 0..keys index their groups directly, and the null group is
    // `keys`; a partition of null keys alone has the null group only.
    let mut partial = match keys {
        0 => Partial::new(specs, None, 1),
        _ => Partial::new(specs, Some(keys as u64 - 1), 0),
    };
    for (r, c) in rows.iter().zip(&codes) {
        let segment = Segment {
            codes: c,
            keyless: &r.keyless,
            columns: r.lanes.iter().map(LaneRows::column).collect(),
        };
        partial.add(&segment, specs)?;
    }
    drop(rows);
    for ((e, list), codes) in earlier.iter().zip(&earlier_codes) {
        for (&g, &code) in list.iter().zip(codes) {
            partial.merge_group_as(code, e.partial, g as usize, specs)?;
        }
    }
    let mut groups = partial.into_groups();
    if keys > 0 && groups.rows.get(keys) == Some(&0) {
        truncate(&mut groups, keys);
    }
    let stored = StoredKeys::new(vec![table.into_stored()]);
    let column = key_column(&stored, &groups.codes, data_type)?;
    Ok(Some((groups, vec![column])))
}

/// Whether a key column of `data_type` can be rebuilt from its stored
/// keys (plain and view strings and binaries, or cast from them).
pub(super) fn rebuilds(data_type: &DataType) -> bool {
    match data_type {
        DataType::Dictionary(_, values) => StoredKeys::decodes(values),
        other => StoredKeys::decodes(other),
    }
}

/// Keeps the first `len` groups.
fn truncate(groups: &mut Groups, len: usize) {
    groups.codes.truncate(len);
    groups.rows.truncate(len);
    for state in &mut groups.states {
        state.truncate(len);
    }
}

/// The key column of `data_type` for `codes`, from the stored keys (a
/// dictionary-encoded column built as its values and then encoded).
fn key_column(
    stored: &StoredKeys,
    codes: &[Option<u64>],
    data_type: &DataType,
) -> Result<ArrayRef> {
    match data_type {
        DataType::Dictionary(_, values) => {
            let plain = stored.column(codes, values)?;
            arrow_cast::cast(&plain, data_type)
                .map_err(|e| FrameError::arrow("rebuilding a key column", e))
        }
        other => stored.column(codes, other),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use arrow_array::cast::AsArray;
    use arrow_array::types::Int32Type;
    use arrow_array::{Array, DictionaryArray, Int32Array, Int64Array, StringViewArray};
    use numakit_ops::aggregate::columns::Func;

    use super::*;

    fn validity(bits: &[bool]) -> Vec<u8> {
        let mut bytes = vec![0u8; bits.len().div_ceil(8)];
        for (i, &b) in bits.iter().enumerate() {
            if b {
                bytes[i / 8] |= 1 << (i % 8);
            }
        }
        bytes
    }

    #[test]
    fn a_lane_widens_to_128_bits_and_keeps_its_nulls() {
        let mut lane = LaneRows::default();
        let narrow = [5i64, -7];
        let bits = validity(&[true, false]);
        let first = ValueColumn {
            values: Values::I64(&narrow),
            valid: Some(Validity::new(&bits, 0)),
        };
        lane.push(&first, 0);
        lane.push(&first, 1);
        let wide = [i128::from(u64::MAX)];
        lane.push(
            &ValueColumn {
                values: Values::I128(&wide),
                valid: None,
            },
            0,
        );
        lane.push(&first, 0);
        let column = lane.column();
        let Values::I128(values) = column.values else {
            panic!("the lane widened")
        };
        assert_eq!(values, &[5, -7, i128::from(u64::MAX), 5]);
        let valid = column.valid.expect("a null was pushed");
        assert_eq!(
            (0..4).map(|i| valid.get(i)).collect::<Vec<_>>(),
            [true, false, true, true]
        );
    }

    /// COUNT(*) and SUM of one integer column per key, from the groups
    /// and key columns of [`finish`].
    fn sums(groups: &[Groups], keys: &[Vec<ArrayRef>]) -> BTreeMap<Option<String>, (u64, i128)> {
        let mut out = BTreeMap::new();
        for (g, k) in groups.iter().zip(keys) {
            let strings = arrow_cast::cast(&k[0], &DataType::Utf8).unwrap();
            let strings = strings.as_string::<i32>();
            assert_eq!(strings.len(), g.len());
            for i in 0..g.len() {
                let key = strings.is_valid(i).then(|| strings.value(i).to_string());
                let sum = g.states[0].exact_sum(i).unwrap_or(0);
                assert!(out.insert(key, (g.rows[i], sum)).is_none(), "a key twice");
            }
        }
        out
    }

    #[test]
    fn filed_rows_and_earlier_groups_come_back_as_one_group_per_key() {
        let specs = [AggSpec {
            column: 0,
            func: Func::Sum,
            float: false,
        }];
        // Keys sharing a long prefix, short ones, an empty one and nulls,
        // as views and as a dictionary, filed over two batches.
        let names: Vec<Option<String>> = (0..3000)
            .map(|i| match i % 13 {
                0 => None,
                1 => Some(String::new()),
                _ => Some(format!("{}{}", "a shared prefix ".repeat(i % 3), i % 700)),
            })
            .collect();
        let values = Int64Array::from_iter_values(0..3000);
        let mut filed = BytePartitions::new(1, 0, 0);
        let views: ArrayRef = Arc::new(StringViewArray::from_iter(names[..2000].iter().cloned()));
        let lane = crate::aggregate::values::PartLane::in_place(
            &(Arc::new(values.slice(0, 2000)) as ArrayRef),
        );
        let kind = crate::aggregate::values::LaneKind::Int;
        filed.add(&views, &[lane.column(kind)]).unwrap();
        let keys = Int32Array::from_iter(
            (2000..3000).map(|i| names[i].as_ref().map(|_| (i - 2000) as i32)),
        );
        let dictionary: ArrayRef = Arc::new(
            DictionaryArray::<Int32Type>::try_new(
                keys,
                Arc::new(StringViewArray::from_iter(names[2000..].iter().cloned())),
            )
            .unwrap(),
        );
        let rest: ArrayRef = Arc::new(values.slice(2000, 1000));
        let lane = crate::aggregate::values::PartLane::in_place(&rest);
        filed.add(&dictionary, &[lane.column(kind)]).unwrap();
        // Groups made before filing: every key of the first 500 rows
        // once more, with one row each of value 1.
        let mut coder = Coder::for_type(&DataType::Utf8);
        let mut partial = Partial::dense(&specs);
        let early: ArrayRef = Arc::new(arrow_array::StringArray::from_iter(
            names[..500].iter().cloned(),
        ));
        let codes = coder.codes(&early).unwrap();
        let ones = vec![1i64; 500];
        partial
            .add(
                &Segment {
                    codes: &codes.codes,
                    keyless: &codes.invalid,
                    columns: vec![ValueColumn {
                        values: Values::I64(&ones),
                        valid: None,
                    }],
                },
                &specs,
            )
            .unwrap();
        let earlier = [Earlier {
            partial: &partial,
            coder: &coder,
        }];
        let mut expected: BTreeMap<Option<String>, (u64, i128)> = BTreeMap::new();
        for (i, name) in names.iter().enumerate() {
            let e = expected.entry(name.clone()).or_default();
            e.0 += 1;
            e.1 += i as i128;
        }
        for name in &names[..500] {
            let e = expected.get_mut(name).unwrap();
            e.0 += 1;
            e.1 += 1;
        }
        for threads in [1, 2] {
            let pool = crate::testing::pool(threads);
            let mut again = BytePartitions::new(1, 0, 0);
            std::mem::swap(&mut again, &mut filed);
            let (groups, keys) =
                finish(&pool, &DataType::Utf8View, &specs, vec![again], &earlier).unwrap();
            assert!(keys.iter().all(|k| k[0].data_type() == &DataType::Utf8View));
            assert_eq!(sums(&groups, &keys), expected, "{threads} threads");
            // Filed again for the next round.
            let lane = crate::aggregate::values::PartLane::in_place(
                &(Arc::new(values.clone()) as ArrayRef),
            );
            let all: ArrayRef = Arc::new(StringViewArray::from_iter(names.iter().cloned()));
            filed = BytePartitions::new(1, 0, 0);
            filed.add(&all, &[lane.column(kind)]).unwrap();
        }
    }
}
