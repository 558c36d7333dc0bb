//! The runtime end to end: jobs against plain sequential computations on
//! random and adversarial inputs, every container and order, errors and
//! panics in job code, reuse of one runtime, and file input.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use numakit_mapreduce::{
    split, Combiner, ContainerKind, Count, Emitter, Input, InputMode, Job, JobError, JobOptions,
    KeepAll, MapReduceError, Max, Min, OutputOrder, Runtime, Split, Sum,
};
use numakit_placement::PlacementMode;
use numakit_pool::{Pool, PoolBuilder};
use proptest::prelude::*;

fn pool(threads: usize) -> Pool {
    let topo = Arc::new(numakit_topology::discover().expect("topology"));
    let threads = threads.min(topo.allowed.cpus.len().max(1));
    PoolBuilder::new(topo)
        .threads(threads)
        .placement(PlacementMode::BestEffort)
        .build()
        .expect("pool")
}

/// Word count, most frequent first (ties by word).
struct WordCount;

impl<'a> Job<'a> for WordCount {
    type Record = u8;
    type Key = &'a [u8];
    type Value = u64;
    type Combiner = Sum<u64>;
    type Output = u64;

    fn split(&self, text: &'a [u8], target: usize) -> Vec<Range<usize>> {
        split::words(text, target, |b| b.is_ascii_alphabetic())
    }
    fn map(&self, s: Split<'a, u8>, out: &mut Emitter<'_, 'a, Self>) -> Result<(), JobError> {
        for w in s
            .records
            .split(|b| !b.is_ascii_alphabetic())
            .filter(|w| !w.is_empty())
        {
            out.emit(w, 1);
        }
        Ok(())
    }
    fn reduce(&self, _: &&'a [u8], c: Sum<u64>) -> Result<u64, JobError> {
        Ok(c.0)
    }
    fn compare(&self, a: &(&'a [u8], u64), b: &(&'a [u8], u64)) -> std::cmp::Ordering {
        b.1.cmp(&a.1).then(a.0.cmp(b.0))
    }
}

fn count_words(text: &[u8]) -> Vec<(Vec<u8>, u64)> {
    let mut m: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    for w in text
        .split(|b| !b.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
    {
        *m.entry(w.to_vec()).or_default() += 1;
    }
    let mut v: Vec<(Vec<u8>, u64)> = m.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

fn run_words(rt: &Runtime, text: &[u8], opts: &JobOptions) -> Vec<(Vec<u8>, u64)> {
    let out = rt.run(&WordCount, text, opts).expect("word count");
    out.pairs
        .into_iter()
        .map(|(w, n)| (w.to_vec(), n))
        .collect()
}

fn by_job(container: ContainerKind, chunk: Option<usize>) -> JobOptions {
    JobOptions {
        container: Some(container),
        chunk_records: chunk,
        order: OutputOrder::ByJob,
        ..JobOptions::default()
    }
}

#[test]
fn word_count_on_adversarial_texts() {
    let pool = pool(2);
    let rt = Runtime::new(&pool);
    let long_word = "x".repeat(10_000);
    let texts: Vec<String> = vec![
        String::new(),
        "word".into(),
        "   \n\t ".into(),
        "same same same same".into(),
        format!("a {long_word} b {long_word}"),
        "no-trailing-space".into(),
    ];
    for text in &texts {
        for container in [
            ContainerKind::default(),
            ContainerKind::FixedHash { buckets: 3 },
            ContainerKind::Array { keys: 0 },
        ] {
            let got = run_words(&rt, text.as_bytes(), &by_job(container, Some(7)));
            assert_eq!(
                got,
                count_words(text.as_bytes()),
                "{container:?} on {:.40?}",
                text
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn word_count_equals_the_reference(
        text in proptest::collection::vec(prop_oneof![Just(b' '), Just(b'\n'), b'a'..=b'd'], 0..3000),
        chunk in 1usize..400,
        parts in 1usize..9,
    ) {
        let pool = pool(2);
        let rt = Runtime::new(&pool);
        let mut opts = by_job(ContainerKind::default(), Some(chunk));
        opts.partitions = Some(parts);
        prop_assert_eq!(run_words(&rt, &text, &opts), count_words(&text));
    }
}

/// Per residue of x mod 10: min, max, count and every value.
struct Residues<C> {
    _c: std::marker::PhantomData<C>,
}

impl<'a, C: Combiner<i64> + Clone + Send + Sync + 'a> Job<'a> for Residues<C> {
    type Record = i64;
    type Key = u64;
    type Value = i64;
    type Combiner = C;
    type Output = C;
    fn map(&self, s: Split<'a, i64>, out: &mut Emitter<'_, 'a, Self>) -> Result<(), JobError> {
        for &x in s.records {
            out.emit(x.rem_euclid(10) as u64, x);
        }
        Ok(())
    }
    fn reduce(&self, _: &u64, c: C) -> Result<C, JobError> {
        Ok(c)
    }
    fn key_index(&self, key: &u64) -> Option<usize> {
        Some(*key as usize)
    }
}

fn residues<C>(rt: &Runtime, data: &[i64], container: ContainerKind) -> Vec<(u64, C)>
where
    for<'a> Residues<C>: Job<'a, Record = i64, Key = u64, Output = C>,
{
    let job = Residues {
        _c: std::marker::PhantomData,
    };
    let opts = JobOptions {
        container: Some(container),
        chunk_records: Some(97),
        order: OutputOrder::ByKey,
        ..JobOptions::default()
    };
    rt.run(&job, data, &opts).expect("residues").pairs
}

#[test]
fn integer_keys_in_every_container_with_every_combiner() {
    let pool = pool(2);
    let rt = Runtime::new(&pool);
    let data: Vec<i64> = (0..20_000i64)
        .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15u64 as i64)) >> 20)
        .chain([i64::MIN, i64::MAX, 0, -1])
        .collect();
    let mut want: BTreeMap<u64, Vec<i64>> = BTreeMap::new();
    data.iter()
        .for_each(|&x| want.entry(x.rem_euclid(10) as u64).or_default().push(x));
    for container in [
        ContainerKind::Array { keys: 10 },
        ContainerKind::Array { keys: 4 },
        ContainerKind::FixedHash { buckets: 5 },
        ContainerKind::GrowableHash { capacity: 0 },
    ] {
        let mins: Vec<(u64, i64)> = residues::<Min<i64>>(&rt, &data, container)
            .into_iter()
            .map(|(k, m)| (k, m.0))
            .collect();
        let maxs: Vec<(u64, i64)> = residues::<Max<i64>>(&rt, &data, container)
            .into_iter()
            .map(|(k, m)| (k, m.0))
            .collect();
        let counts: Vec<(u64, u64)> = residues::<Count>(&rt, &data, container)
            .into_iter()
            .map(|(k, c)| (k, c.0))
            .collect();
        let all = residues::<KeepAll<i64>>(&rt, &data, container);
        assert_eq!(
            mins,
            want.iter()
                .map(|(k, v)| (*k, *v.iter().min().unwrap()))
                .collect::<Vec<_>>(),
            "{container:?}"
        );
        assert_eq!(
            maxs,
            want.iter()
                .map(|(k, v)| (*k, *v.iter().max().unwrap()))
                .collect::<Vec<_>>(),
            "{container:?}"
        );
        assert_eq!(
            counts,
            want.iter()
                .map(|(k, v)| (*k, v.len() as u64))
                .collect::<Vec<_>>(),
            "{container:?}"
        );
        for ((k, got), (wk, wv)) in all.into_iter().zip(&want) {
            let mut got: Vec<i64> = got.into_iter().collect();
            let mut wv = wv.clone();
            got.sort();
            wv.sort();
            assert_eq!((k, got), (*wk, wv), "{container:?}");
        }
    }
}

/// Fails or panics on a chosen record, in map or in reduce.
struct Faulty {
    panic: bool,
    in_reduce: bool,
}

impl<'a> Job<'a> for Faulty {
    type Record = u32;
    type Key = u32;
    type Value = u32;
    type Combiner = Sum<u32>;
    type Output = u32;
    fn map(&self, s: Split<'a, u32>, out: &mut Emitter<'_, 'a, Self>) -> Result<(), JobError> {
        for &x in s.records {
            if x == 777 && !self.in_reduce {
                if self.panic {
                    panic!("bad record {x}");
                }
                return Err(format!("bad record {x}").into());
            }
            out.emit(x % 1000, 1);
        }
        Ok(())
    }
    fn reduce(&self, key: &u32, c: Sum<u32>) -> Result<u32, JobError> {
        if *key == 777 && self.in_reduce {
            if self.panic {
                panic!("bad key");
            }
            return Err("bad key".into());
        }
        Ok(c.0)
    }
}

#[test]
fn errors_and_panics_in_job_code_come_back_and_the_pool_survives() {
    let pool = pool(2);
    let rt = Runtime::new(&pool);
    let data: Vec<u32> = (0..10_000).collect();
    let opts = JobOptions {
        chunk_records: Some(100),
        ..JobOptions::default()
    };
    for (panic, in_reduce) in [(false, false), (true, false), (false, true), (true, true)] {
        let err = rt
            .run(&Faulty { panic, in_reduce }, &data, &opts)
            .unwrap_err();
        let phase = if in_reduce { "reduce" } else { "map" };
        match (&err, panic) {
            (MapReduceError::Panicked { phase: p, .. }, true)
            | (MapReduceError::Job { phase: p, .. }, false) => {
                assert_eq!(*p, phase, "{err}")
            }
            _ => panic!("unexpected {err:?}"),
        }
        // The same runtime still works.
        let ok = rt
            .run(
                &WordCount,
                b"still works works",
                &by_job(ContainerKind::default(), None),
            )
            .unwrap();
        assert_eq!(ok.pairs[0], (&b"works"[..], 2));
    }
}

#[test]
fn one_runtime_serves_many_runs_and_reports_phases() {
    let pool = pool(2);
    let rt = Runtime::new(&pool);
    let text = b"a b c a b a ".repeat(10_000);
    for _ in 0..50 {
        let out = rt
            .run(
                &WordCount,
                &text,
                &by_job(ContainerKind::default(), Some(4096)),
            )
            .unwrap();
        assert_eq!(out.pairs[0], (&b"a"[..], 30_000));
        let s = &out.stats;
        assert!(s.map_tasks >= text.len() / 4096);
        let ran: u64 = s.per_node.iter().map(|n| n.local + n.stolen).sum();
        assert!(ran >= s.map_tasks as u64, "every map task counted: {s:?}");
        assert!(s.seconds.total() > 0.0 && s.splits_located);
    }
}

#[test]
fn files_in_both_modes_give_the_same_counts() {
    let pool = pool(2);
    let rt = Runtime::new(&pool);
    let text: Vec<u8> = (0..300_000u32)
        .flat_map(|i| format!("w{} ", i % 1000).into_bytes())
        .collect();
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &text).unwrap();
    let want = count_words(&text);
    for mode in [
        InputMode::Read,
        InputMode::Mmap { populate: true },
        InputMode::Mmap { populate: false },
    ] {
        let input = Input::open(&pool, file.path(), mode).unwrap();
        assert_eq!(input.bytes(), &text[..], "{mode:?}");
        assert_eq!(
            run_words(&rt, input.bytes(), &by_job(ContainerKind::default(), None)),
            want
        );
    }
    let placed = Input::place(&pool, &text).unwrap();
    assert_eq!(placed.bytes(), &text[..]);
    let empty = tempfile::NamedTempFile::new().unwrap();
    for mode in [InputMode::Read, InputMode::Mmap { populate: true }] {
        assert!(Input::open(&pool, empty.path(), mode).unwrap().is_empty());
    }
    let missing = Input::open(
        &pool,
        std::path::Path::new("/nonexistent/input.txt"),
        InputMode::Read,
    );
    assert!(matches!(missing, Err(MapReduceError::Io { .. })));
}
