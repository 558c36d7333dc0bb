//! The OS side: lock latency (Figure 2, numakit's lock benchmark), a job
//! reused on one pool against threads spawned per iteration (Figure 9)
//! and mapped input faulted in by several threads (Figure 12). Figure 12
//! is a small measurement written here on numakit's pool and its mapped
//! [`Input`] (numakit has no mmap benchmark); Figure 9 runs the library's
//! k-means both ways.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use numakit_mapreduce::{Input, InputMode, Runtime};
use numakit_mapreduce_apps::kmeans::{self, KmeansLimits};
use numakit_placement::{PlacementMode, Placer};
use numakit_sync::bench::{LockBenchRequest, LockKind};

use super::apps::{self, App, Data};
use super::scaling::speedup_verdict;
use crate::context::Context;
use crate::error::RunResult;
use crate::outcome::{Outcome, Row, Shape, Verdict};

/// A claim that only several chips can show.
fn one_chip(claim: &str) -> Shape {
    Shape::new(
        claim,
        Verdict::NotShownHere(
            "one node and 2 CPUs here: the paper's climb starts past 64 threads, across the T5440's chips".into(),
        ),
    )
}

/// Each lock's latency at every thread count of the sweep, from the lock
/// benchmark behind `numakit bench locks` (critical sections of 100 ns,
/// none outside: the paper's tight loop of acquisitions): (lock, threads,
/// nanoseconds per acquisition as each thread sees it).
fn lock_latencies(ctx: &Context<'_>) -> RunResult<Vec<(LockKind, usize, f64)>> {
    let placer = Placer::new(ctx.topology.clone(), PlacementMode::BestEffort);
    let request = LockBenchRequest {
        locks: vec![LockKind::StdMutex, LockKind::Ticket, LockKind::Cohort],
        threads: apps::sweep_threads(ctx),
        nodes: ctx.topology.compute_nodes(),
        critical_ns: 100,
        outside_ns: 0,
        duration: Duration::from_millis(ctx.scale.pick(20, 200)),
        reps: ctx.scale.pick(1, 3),
        cohort_bound: numakit_sync::DEFAULT_COHORT_BOUND,
        uncontended_pairs: 0,
    };
    let report = numakit_sync::bench::run(&placer, &request, &|_| {})?;
    Ok(report
        .contended
        .iter()
        .map(|p| {
            (
                p.lock,
                p.threads,
                p.threads as f64 / p.acquisitions_per_s.median * 1e9,
            )
        })
        .collect())
}

/// Figure 2: the latency of a lock acquisition as threads are added.
pub(super) fn figure_2(ctx: &Context<'_>) -> RunResult<Outcome> {
    let mut out = Outcome::default();
    for (lock, threads, ns) in lock_latencies(ctx)? {
        out.rows.push(Row::new(
            format!("{lock}, {threads} thread(s): per acquisition"),
            "ns",
            Some(ns),
            None,
        ));
    }
    out.shapes.push(one_chip(
        "the cost of synchronization climbs drastically past the chip boundary",
    ));
    out.notes.push("numakit's lock benchmark (`numakit bench locks`): 100 ns critical sections back to back, medians; a thread's latency is threads / acquisitions per second".into());
    Ok(out)
}

/// k-means on one pool (the pool built and the runtime reused for every
/// iteration) and the hand-written k-means that spawns its threads anew
/// each iteration: (seconds with the pool, seconds without, iterations).
fn kmeans_both(
    ctx: &Context<'_>,
    input: &kmeans::KmeansInput,
    threads: usize,
) -> RunResult<(f64, f64, u32)> {
    let started = Instant::now();
    let pool = apps::pool(ctx, threads)?;
    let (clustering, _) = kmeans::run(&Runtime::new(&pool), input, KmeansLimits::default())?;
    let pooled = started.elapsed().as_secs_f64();
    let n = NonZeroUsize::new(threads).ok_or("no threads")?;
    let started = Instant::now();
    let spawned = kmeans::baseline::kmeans(input, KmeansLimits::default(), n);
    let unpooled = started.elapsed().as_secs_f64();
    if spawned.means != clustering.means {
        return Err("the two k-means disagree".into());
    }
    Ok((pooled, unpooled, clustering.iterations))
}

/// Figure 9: k-means with and without a thread pool.
pub(super) fn figure_9(ctx: &Context<'_>) -> RunResult<Outcome> {
    let Data::Kmeans(input) = apps::generate(App::Kmeans, ctx.scale)? else {
        return Err("k-means input expected".into());
    };
    let mut out = Outcome::default();
    let mut created = (0usize, 0usize);
    for threads in apps::sweep_threads(ctx) {
        let (pooled, spawned, iterations) = kmeans_both(ctx, &input, threads)?;
        out.rows.push(Row::new(
            format!("{threads} thread(s): with the pool"),
            "s",
            Some(pooled),
            None,
        ));
        out.rows.push(Row::new(
            format!("{threads} thread(s): threads spawned per iteration"),
            "s",
            Some(spawned),
            None,
        ));
        created = (threads, threads * iterations as usize);
        out.notes
            .push(format!("{iterations} iterations at {threads} thread(s)"));
    }
    out.shapes.push(Shape::new(
        "a thread pool cuts the threads created (and stacks unmapped) to one set for all iterations",
        Verdict::check(created.1 > created.0, format!("{} threads with the pool, {} without", created.0, created.1)),
    ));
    out.shapes.push(one_chip(
        "the pool improves kmeans' speed-up at 128-256 threads, where munmap() slows",
    ));
    out.notes.push(format!("{}; the side without a pool is numakit's hand-written k-means (std::thread::scope per iteration)", input.points().len()));
    Ok(out)
}

/// A file that removes itself.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Seconds to map `path` unpopulated and sum its bytes with the pool's
/// workers, each streaming one contiguous share (faulting its pages in).
fn mapped_sum(ctx: &Context<'_>, path: &std::path::Path, threads: usize) -> RunResult<(f64, u64)> {
    let pool = apps::pool(ctx, threads)?;
    let started = Instant::now();
    let input = Input::open(&pool, path, InputMode::Mmap { populate: false })?;
    let bytes = input.bytes();
    let share = bytes.len().div_ceil(threads).max(1);
    let sums: Vec<Mutex<u64>> = (0..threads).map(|_| Mutex::new(0)).collect();
    pool.scope(|scope| {
        for (chunk, slot) in bytes.chunks(share).zip(&sums) {
            scope.spawn(move |_| {
                let sum = chunk.iter().map(|&b| u64::from(b)).sum::<u64>();
                *slot.lock().unwrap_or_else(PoisonError::into_inner) = sum;
            });
        }
    })?;
    let total = sums
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(PoisonError::into_inner))
        .sum();
    Ok((started.elapsed().as_secs_f64(), total))
}

/// Figure 12: the mmap microbenchmark.
pub(super) fn figure_12(ctx: &Context<'_>) -> RunResult<Outcome> {
    let mib = ctx.scale.pick(16usize, 256);
    let file = TempFile(
        std::env::temp_dir().join(format!("numakit-phoenix-mmap-{}.bin", std::process::id())),
    );
    let data: Vec<u8> = (0..mib << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(&file.0, &data)?;
    let want: u64 = data.iter().map(|&b| u64::from(b)).sum();
    drop(data);
    let mut out = Outcome::default();
    let mut runs = Vec::new();
    for threads in apps::sweep_threads(ctx) {
        let mut best = f64::INFINITY;
        for _ in 0..apps::reps(ctx.scale) {
            let (seconds, sum) = mapped_sum(ctx, &file.0, threads)?;
            if sum != want {
                return Err(format!("the mapped sum is {sum}, not {want}").into());
            }
            best = best.min(seconds);
        }
        out.rows.push(Row::new(
            format!("{threads} thread(s): map and sum {mib} MiB"),
            "GB/s",
            Some((mib << 20) as f64 / best / 1e9),
            None,
        ));
        runs.push((threads, best));
    }
    let speedup = match (runs.first(), runs.last()) {
        (Some(a), Some(b)) if b.0 > a.0 => Some((b.0, a.1 / b.1, a.1)),
        _ => None,
    };
    out.shapes.push(Shape::new(
        "faulting a mapped file in speeds up with threads within one chip",
        speedup_verdict(ctx, speedup, "map and sum"),
    ));
    out.shapes.push(one_chip(
        "mmap() serializes as threads cross the chip boundary, whatever the page size",
    ));
    out.notes.push("a temporary file in the page cache (warm, as the paper's), mapped without populating; 4 KiB pages only".into());
    Ok(out)
}
