//! Benchmark: the NUMA-aware sort of 64M plain u64 keys (uniform over the
//! full 64-bit range, the "sort 64M int64" workload; from a borrowed
//! column and in place) and of 16M tuples, medians of a few repetitions
//! (after a warm-up run) with their phases, next to the radix sort and
//! the standard library's `sort_unstable` on one thread, on the same data
//! in the same run.
//!
//! Run with `cargo bench -p numakit-ops --bench sort`. Sizes and
//! repetitions come from NUMAKIT_BENCH_KEYS (default 67108864),
//! NUMAKIT_BENCH_TUPLES (16777216) and NUMAKIT_BENCH_REPS (3); without
//! `--bench` (as under `cargo test --benches`) it runs a quick small case.

mod common;
use numakit_ops::timing::median;

use std::sync::Arc;
use std::time::Instant;

use numakit_ops::datagen::splitmix64;
use numakit_ops::sort::{
    sort, sort_keys, sort_keys_local, sort_keys_owned, sort_local, KeyColumn, SortOptions,
};
use numakit_ops::timing::{total_seconds, PhaseTime, Silent};
use numakit_ops::{Relation, Tuple};
use numakit_placement::PlacementMode;
use numakit_pool::{Pool, PoolBuilder};

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// The median run's total and its phases, as "total [phase s, ...]".
fn describe(runs: Vec<Vec<PhaseTime>>) -> (f64, String) {
    let mut runs: Vec<(f64, Vec<PhaseTime>)> =
        runs.into_iter().map(|p| (total_seconds(&p), p)).collect();
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (total, phases) = &runs[runs.len() / 2];
    let parts: Vec<String> = phases
        .iter()
        .map(|p| format!("{} {:.3}", p.name, p.seconds))
        .collect();
    (*total, format!("{total:.3}s [{}]", parts.join(", ")))
}

/// Seconds of `f` on a fresh copy of `data`, median of `reps`.
fn time_single<T: Clone>(data: &[T], reps: usize, f: impl Fn(&mut [T])) -> f64 {
    let times: Vec<f64> = (0..reps)
        .map(|_| {
            let mut copy = data.to_vec();
            let start = Instant::now();
            f(&mut copy);
            start.elapsed().as_secs_f64()
        })
        .collect();
    median(&times)
}

fn bench_keys(pool: &Pool, n: usize, reps: usize) -> Result<(), String> {
    let make = || {
        KeyColumn::from_fn(pool, n, |i| splitmix64(i as u64 ^ 0x5eed)).map_err(|e| e.to_string())
    };
    let input = make()?;
    let mut phases = Vec::new();
    // One warm-up run first: a fresh process's first large allocations
    // cost far more (on virtual machines, several times more).
    for rep in 0..=reps {
        let result = sort_keys(pool, &input, &Silent).map_err(|e| e.to_string())?;
        check_sorted(&result.sorted.ok_or("no output")?.to_vec(), n, |k| *k)?;
        if rep > 0 {
            phases.push(result.phases);
        }
    }
    let (numa, detail) = describe(phases);
    let keys = input.to_vec();
    drop(input);
    let mut owned_phases = Vec::new();
    for _ in 0..reps {
        let input = make()?;
        let result = sort_keys_owned(pool, input, &SortOptions::default(), &Silent)
            .map_err(|e| e.to_string())?;
        check_sorted(&result.sorted.ok_or("no output")?.to_vec(), n, |k| *k)?;
        owned_phases.push(result.phases);
    }
    let (owned, owned_detail) = describe(owned_phases);
    let lsd = time_single(&keys, reps.min(2), sort_keys_local);
    let std = time_single(&keys, reps.min(2), |k: &mut [u64]| k.sort_unstable());
    println!(
        "sort {n} u64 keys, {} workers: numa sort {detail}",
        pool.workers()
    );
    println!("  in place (sort_keys_owned): {owned_detail}");
    println!(
        "  one thread: radix sort {lsd:.3}s, std sort_unstable {std:.3}s; numa sort is {:.2}x ({:.2}x in place) std's one thread",
        std / numa,
        std / owned
    );
    Ok(())
}

fn bench_tuples(pool: &Pool, n: usize, reps: usize) -> Result<(), String> {
    let input = Relation::from_fn(pool, n, |i| {
        Tuple::new(splitmix64(i as u64 ^ 0x7475), i as u64)
    })
    .map_err(|e| e.to_string())?;
    let mut phases = Vec::new();
    for rep in 0..=reps {
        let result = sort(pool, &input, &Silent).map_err(|e| e.to_string())?;
        let sorted = result.sorted.ok_or("no output")?;
        check_sorted(&sorted.to_vec(), n, |t| t.key)?;
        if rep > 0 {
            phases.push(result.phases);
        }
    }
    let (numa, detail) = describe(phases);
    let rows = input.to_vec();
    drop(input);
    let lsd = time_single(&rows, reps.min(2), sort_local);
    let std = time_single(&rows, reps.min(2), |r: &mut [Tuple]| {
        r.sort_unstable_by_key(|t| t.key)
    });
    println!(
        "sort {n} tuples, {} workers: numa sort {detail}",
        pool.workers()
    );
    println!(
        "  one thread: radix sort {lsd:.3}s, std sort_unstable_by_key {std:.3}s; numa sort is {:.2}x std's one thread",
        std / numa
    );
    Ok(())
}

fn check_sorted<T>(out: &[T], n: usize, key: impl Fn(&T) -> u64) -> Result<(), String> {
    if out.len() != n || !out.windows(2).all(|w| key(&w[0]) <= key(&w[1])) {
        return Err("the sort's output is wrong".into());
    }
    Ok(())
}

fn main() {
    // `cargo test --benches` runs this without --bench: keep that quick.
    let quick = common::quick();
    let (keys, tuples, reps) = match quick {
        true => (1 << 20, 1 << 18, 1),
        false => (
            env_or("NUMAKIT_BENCH_KEYS", 64 << 20),
            env_or("NUMAKIT_BENCH_TUPLES", 16 << 20),
            env_or("NUMAKIT_BENCH_REPS", 3).max(1),
        ),
    };
    let outcome = numakit_topology::discover()
        .map_err(|e| e.to_string())
        .and_then(|topo| {
            PoolBuilder::new(Arc::new(topo))
                .placement(PlacementMode::BestEffort)
                .build()
                .map_err(|e| e.to_string())
        })
        .and_then(|pool| {
            bench_keys(&pool, keys, reps)?;
            bench_tuples(&pool, tuples, reps)
        });
    if let Err(e) = outcome {
        eprintln!("bench failed: {e}");
        std::process::exit(1);
    }
}
