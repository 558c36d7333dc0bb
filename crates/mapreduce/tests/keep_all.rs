//! KeepAll jobs end to end: the chunked, prefetching value iterator gives
//! reduce the same values as the plain vector KeepAll used to hold, with
//! prefetch on or off, in every container.

use std::collections::BTreeMap;
use std::sync::Arc;

use numakit_mapreduce::{
    Combiner, ContainerKind, Emitter, Job, JobError, JobOptions, KeepAll, OutputOrder, Prefetch,
    Runtime, Split,
};
use numakit_placement::PlacementMode;
use numakit_pool::{Pool, PoolBuilder};

fn pool(threads: usize) -> Pool {
    let topo = Arc::new(numakit_topology::discover().expect("topology"));
    let threads = threads.min(topo.allowed.cpus.len().max(1));
    PoolBuilder::new(topo)
        .threads(threads)
        .placement(PlacementMode::BestEffort)
        .build()
        .expect("pool")
}

/// The combiner KeepAll was before the chunked buffer: one vector.
#[derive(Clone, Debug)]
struct VecAll(Vec<i64>);

impl Combiner<i64> for VecAll {
    fn start(value: i64) -> Self {
        VecAll(vec![value])
    }
    fn add(&mut self, value: i64) {
        self.0.push(value);
    }
    fn merge(&mut self, mut other: Self) {
        self.0.append(&mut other.0);
    }
}

/// Per key (x mod `keys`), the values reduce saw, in the order it saw
/// them, and what it read walking them back to front.
struct Gather<C> {
    keys: u64,
    _c: std::marker::PhantomData<C>,
}

trait Walk {
    fn walk(&self) -> (Vec<i64>, Vec<i64>);
}

impl Walk for KeepAll<i64> {
    fn walk(&self) -> (Vec<i64>, Vec<i64>) {
        let it = self.iter();
        assert_eq!(it.len(), self.len());
        (it.copied().collect(), self.iter().rev().copied().collect())
    }
}

impl Walk for VecAll {
    fn walk(&self) -> (Vec<i64>, Vec<i64>) {
        (self.0.clone(), self.0.iter().rev().copied().collect())
    }
}

impl<'a, C: Combiner<i64> + Walk + Sync + 'a> Job<'a> for Gather<C> {
    type Record = i64;
    type Key = u64;
    type Value = i64;
    type Combiner = C;
    type Output = (Vec<i64>, Vec<i64>);
    fn map(&self, s: Split<'a, i64>, out: &mut Emitter<'_, 'a, Self>) -> Result<(), JobError> {
        for &x in s.records {
            out.emit(x.rem_euclid(self.keys as i64) as u64, x);
        }
        Ok(())
    }
    fn reduce(&self, _: &u64, c: C) -> Result<Self::Output, JobError> {
        Ok(c.walk())
    }
    fn key_index(&self, key: &u64) -> Option<usize> {
        Some(*key as usize)
    }
}

type Seen = Vec<(u64, (Vec<i64>, Vec<i64>))>;

fn gather<C>(rt: &Runtime, data: &[i64], keys: u64, opts: &JobOptions) -> Seen
where
    C: Combiner<i64> + Walk + Sync,
{
    let job = Gather::<C> {
        keys,
        _c: std::marker::PhantomData,
    };
    rt.run(&job, data, opts).expect("gather").pairs
}

fn data(n: i64) -> Vec<i64> {
    (0..n)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15u64 as i64) >> 24)
        .collect()
}

fn sorted(mut seen: Seen) -> Seen {
    for (_, (fwd, back)) in &mut seen {
        back.reverse();
        assert_eq!(fwd, back, "front to back and back to front disagree");
        fwd.sort_unstable();
        back.sort_unstable();
    }
    seen
}

#[test]
fn one_worker_sees_values_in_emission_order() {
    let pool = pool(1);
    let rt = Runtime::new(&pool);
    let data = data(50_000);
    for prefetch in [Prefetch::On, Prefetch::Off] {
        let opts = JobOptions {
            chunk_records: Some(data.len()), // one map task: one order
            order: OutputOrder::ByKey,
            prefetch,
            ..JobOptions::default()
        };
        let got = gather::<KeepAll<i64>>(&rt, &data, 7, &opts);
        let mut want: BTreeMap<u64, Vec<i64>> = BTreeMap::new();
        data.iter()
            .for_each(|&x| want.entry(x.rem_euclid(7) as u64).or_default().push(x));
        assert_eq!(got.len(), want.len());
        for ((k, (fwd, back)), (wk, wv)) in got.into_iter().zip(want) {
            assert_eq!((k, &fwd), (wk, &wv), "{prefetch:?}");
            assert_eq!(back, wv.into_iter().rev().collect::<Vec<_>>());
        }
    }
}

#[test]
fn keep_all_gives_what_the_vector_gave_in_every_container() {
    let pool = pool(2);
    let rt = Runtime::new(&pool);
    let data = data(40_000);
    for container in [
        ContainerKind::Array { keys: 100 },
        ContainerKind::Array { keys: 10 },
        ContainerKind::FixedHash { buckets: 7 },
        ContainerKind::GrowableHash { capacity: 0 },
    ] {
        let base = JobOptions {
            container: Some(container),
            chunk_records: Some(513),
            order: OutputOrder::ByKey,
            ..JobOptions::default()
        };
        let want = sorted(gather::<VecAll>(&rt, &data, 100, &base));
        for prefetch in [Prefetch::On, Prefetch::Off] {
            let opts = JobOptions {
                prefetch,
                ..base.clone()
            };
            let got = sorted(gather::<KeepAll<i64>>(&rt, &data, 100, &opts));
            assert_eq!(got, want, "{container:?} {prefetch:?}");
        }
    }
}
