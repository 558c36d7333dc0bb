//! Map-only jobs: each map task writes its split's piece of one output in
//! place ([`SplitSlots`]) and emits nothing, so reduce and merge have no
//! pairs to handle — how matrix multiply fills the product's rows and
//! PCA's covariance job fills the triangle, as their Phoenix++ originals'
//! maps write their rows and leave the containers empty.
//!
//! [`run`] builds the job around the caller's blocks and fill function,
//! runs it on the runtime (an empty array container, one partition, no
//! output order) and reports its phases. It knows nothing of what is
//! computed.

use std::marker::PhantomData;
use std::ops::Range;

use numakit_mapreduce::{
    ContainerKind, Count, Emitter, Job, JobError, JobOptions, OutputOrder, PhaseSeconds, Runtime,
    Split,
};

use crate::numeric::slots::SplitSlots;

/// A job whose map writes its split's piece of the output with `fill`.
struct InPlaceJob<'s, R, T, F> {
    slots: SplitSlots<'s, T>,
    fill: F,
    records: PhantomData<fn(&R)>,
}

impl<'a, R, T, F> Job<'a> for InPlaceJob<'_, R, T, F>
where
    R: Sync + 'a,
    T: Send,
    F: Fn(Split<'a, R>, &mut [T]) + Sync,
{
    type Record = R;
    type Key = u32;
    type Value = ();
    type Combiner = Count;
    type Output = u64;

    /// The blocks the output slots were cut for (whatever `target`).
    fn split(&self, _input: &'a [R], _target: usize) -> Vec<Range<usize>> {
        self.slots.ranges()
    }

    fn map(&self, split: Split<'a, R>, _out: &mut Emitter<'_, 'a, Self>) -> Result<(), JobError> {
        self.slots
            .with(split.start, |piece| (self.fill)(split, piece))?;
        Ok(())
    }

    fn reduce(&self, _key: &u32, emitted: Count) -> Result<u64, JobError> {
        Ok(emitted.0)
    }
}

/// Runs a map-only job on `rt`: `input` is split into `blocks` (sorted,
/// disjoint record ranges), and the map task of block `i` calls
/// `fill(split, piece)` on the `i`-th consecutive piece of `out`,
/// `lengths[i]` long. Returns the job's phase times, with `prepared`
/// seconds (the caller's set-up before the run) added to the split phase.
///
/// # Panics
/// If there is not one length per block or they do not add up to
/// `out.len()` (see [`SplitSlots::new`]).
pub(crate) fn run<'a, R, T, F>(
    rt: &Runtime,
    input: &'a [R],
    (blocks, lengths): (Vec<Range<usize>>, &[usize]),
    out: &mut [T],
    prepared: f64,
    fill: F,
) -> numakit_mapreduce::Result<PhaseSeconds>
where
    R: Sync,
    T: Send,
    F: Fn(Split<'a, R>, &mut [T]) + Sync,
{
    let job = InPlaceJob {
        slots: SplitSlots::new(blocks, out, lengths),
        fill,
        records: PhantomData,
    };
    let opts = JobOptions {
        container: Some(ContainerKind::Array { keys: 0 }),
        chunk_records: None,
        partitions: Some(1),
        order: OutputOrder::Unordered,
        ..JobOptions::default()
    };
    let mut seconds = rt.run(&job, input, &opts)?.stats.seconds;
    seconds.split += prepared;
    Ok(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_pool::pool;

    #[test]
    fn every_block_fills_its_piece() {
        let pool = pool(2);
        let rt = Runtime::new(&pool);
        let input: Vec<i32> = (0..10).collect();
        let mut out = vec![0i64; 5];
        let seconds = run(
            &rt,
            &input,
            (vec![0..4, 4..6, 6..10], &[2, 1, 2]),
            &mut out,
            1.5,
            |split, piece| {
                let sum: i64 = split.records.iter().map(|&r| i64::from(r)).sum();
                piece.fill(sum + split.start as i64 * 100);
            },
        )
        .unwrap();
        assert_eq!(out, [6, 6, 409, 630, 630]);
        assert!(seconds.split >= 1.5);
    }
}
