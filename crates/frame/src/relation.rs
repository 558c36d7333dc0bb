//! The operators' input made from a table's coded rows: a [`Relation`]
//! whose chunk w holds, for the rows of worker w's parts that have a code,
//! the tuple (code, payload), written by worker w on its node.
//!
//! The payload is what the operator carries for each row: its
//! [`RowRef`](crate::table::RowRef) (joins and sorts, which gather result
//! columns by row) or a value (the single-value aggregation).

use numakit_ops::{Chunk, Relation, Tuple};
use numakit_pool::Pool;

use crate::error::Result;
use crate::keys::PartCodes;
use crate::table::Table;

/// Bytes per relation tuple.
pub(crate) const TUPLE_BYTES: u64 = 16;

/// The relation of `table`'s rows with a code in `codes`, with payload
/// `payload(part, row)`.
pub(crate) fn relation_of(
    pool: &Pool,
    table: &Table,
    codes: &[PartCodes],
    payload: impl Fn(usize, usize) -> u64 + Sync,
) -> Result<Relation> {
    relation_with_room(pool, (table, codes), payload, 0)
}

/// [`relation_of`], each chunk with room for at least `room` tuples
/// (address space only, until written): a sort's exchange and merge reuse
/// a chunk that has room for an even share of the rows.
pub(crate) fn relation_with_room(
    pool: &Pool,
    (table, codes): (&Table, &[PartCodes]),
    payload: impl Fn(usize, usize) -> u64 + Sync,
    room: usize,
) -> Result<Relation> {
    let workers = pool.workers().max(1);
    let parts = table.parts();
    let chunks = pool.broadcast(|ctx| -> Result<Chunk> {
        let mine: Vec<usize> = (0..parts.len())
            .filter(|&p| parts[p].worker % workers == ctx.index)
            .collect();
        let len: usize = mine.iter().map(|&p| codes[p].valid_rows()).sum();
        let mut chunk = Chunk::alloc(pool, ctx.index, ctx.node, len.max(room))?;
        chunk
            .tuples
            .set_len(len)
            .map_err(numakit_ops::OpsError::from)?;
        let mut at = 0;
        for p in mine {
            let part = &codes[p];
            let mut invalid = part.invalid.iter().peekable();
            for (row, &code) in part.codes.iter().enumerate() {
                if invalid.peek() == Some(&&(row as u32)) {
                    invalid.next();
                    continue;
                }
                chunk.tuples[at] = Tuple::new(code, payload(p, row));
                at += 1;
            }
        }
        Ok(chunk)
    })?;
    Ok(Relation::from_chunks(
        chunks.into_iter().collect::<Result<Vec<_>>>()?,
    ))
}
