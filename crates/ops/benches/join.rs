//! Benchmark: Balkesen et al.'s workload A, scaled (a dense build side of
//! 2M rows joined with a 32M-row foreign-key probe side, every probe row
//! matching once), counted, on 2 workers, for the no-partitioning hash
//! join and the MPSM sort-merge join. Prints the median time of a few
//! repetitions, input rows per second, and the median of every phase.
//!
//! Run with `cargo bench -p numakit-ops --bench join`. Options through the
//! environment: NUMAKIT_BENCH_BUILD (rows, default 2M), NUMAKIT_BENCH_PROBE
//! (default 32M), NUMAKIT_BENCH_THREADS (default 2), NUMAKIT_BENCH_REPS
//! (default 5), NUMAKIT_BENCH_ALGOS (default `npo,mpsm`). Without
//! `--bench` (as under `cargo test --benches`) it runs a tiny smoke size.

mod common;
use numakit_ops::timing::median;

use std::sync::Arc;
use std::time::Instant;

use numakit_ops::datagen::{generate, GenSpec, KeyDist};
use numakit_ops::join::{join, JoinAlgorithm, JoinKind, JoinOptions, JoinOutput};
use numakit_ops::timing::Silent;
use numakit_ops::Relation;
use numakit_placement::PlacementMode;
use numakit_pool::{Pool, PoolBuilder};

struct Settings {
    build_rows: u64,
    probe_rows: u64,
    threads: usize,
    reps: usize,
    algorithms: Vec<JoinAlgorithm>,
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

fn settings() -> Settings {
    let quick = common::quick();
    let algorithms = env_or("NUMAKIT_BENCH_ALGOS", "npo,mpsm".to_string())
        .split(',')
        .filter_map(|a| a.trim().parse().ok())
        .collect();
    Settings {
        build_rows: if quick {
            1 << 12
        } else {
            env_or("NUMAKIT_BENCH_BUILD", 2 << 20)
        },
        probe_rows: if quick {
            1 << 16
        } else {
            env_or("NUMAKIT_BENCH_PROBE", 32 << 20)
        },
        threads: env_or("NUMAKIT_BENCH_THREADS", 2),
        reps: if quick {
            1
        } else {
            env_or("NUMAKIT_BENCH_REPS", 5)
        },
        algorithms,
    }
}

/// CPU seconds this process has used (user + system), from /proc; 0 where
/// unavailable. With other programs on the machine, CPU time says more about
/// the join's own cost than wall time.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i).and_then(|f| f.parse::<f64>().ok()))
        .sum();
    ticks / 100.0
}

/// Runs `algorithm` `reps` times; prints the median time and phases.
fn measure(pool: &Pool, r: &Relation, s: &Relation, algorithm: JoinAlgorithm, reps: usize) {
    let opts = JoinOptions {
        algorithm,
        kind: JoinKind::Inner,
        output: JoinOutput::Count,
        row_limit: None,
        merge_exchange: numakit_ops::join::RING_MERGE,
    };
    let mut totals = Vec::new();
    let mut cpu = Vec::new();
    let mut phases: Vec<(String, Vec<f64>)> = Vec::new();
    let mut rows = 0;
    for _ in 0..reps.max(1) {
        let (start, cpu_start) = (Instant::now(), cpu_seconds());
        let result = match join(pool, r, s, &opts, &Silent) {
            Ok(result) => result,
            Err(e) => {
                eprintln!("{}: join failed: {e}", algorithm.name());
                std::process::exit(1);
            }
        };
        totals.push(start.elapsed().as_secs_f64());
        cpu.push(cpu_seconds() - cpu_start);
        rows = result.rows;
        for (i, p) in result.phases.iter().enumerate() {
            if phases.len() <= i {
                phases.push((p.name.clone(), Vec::new()));
            }
            phases[i].1.push(p.seconds);
        }
    }
    let seconds = median(&totals);
    let input = (r.len() + s.len()) as f64;
    let breakdown: Vec<String> = phases
        .into_iter()
        .map(|(name, times)| format!("{name} {:.3}s", median(&times)))
        .collect();
    println!(
        "{:>5}: {seconds:.3} s  {:.1} M input rows/s  cpu {:.2} s  ({rows} result rows; {})",
        algorithm.name(),
        input / seconds / 1e6,
        median(&cpu),
        breakdown.join(", ")
    );
}

fn data(pool: &Pool, settings: &Settings) -> Result<(Relation, Relation), String> {
    let build = GenSpec {
        rows: settings.build_rows,
        keys: KeyDist::Dense,
        seed: 1,
    };
    let probe = GenSpec {
        rows: settings.probe_rows,
        keys: KeyDist::ForeignKey {
            build_rows: settings.build_rows,
        },
        seed: 2,
    };
    let r = generate(pool, &build).map_err(|e| e.to_string())?;
    let s = generate(pool, &probe).map_err(|e| e.to_string())?;
    Ok((r, s))
}

fn main() {
    let settings = settings();
    let pool = numakit_topology::discover()
        .map_err(|e| e.to_string())
        .and_then(|topo| {
            PoolBuilder::new(Arc::new(topo))
                .threads(settings.threads)
                .placement(PlacementMode::BestEffort)
                .build()
                .map_err(|e| e.to_string())
        });
    let (pool, (r, s)) = match pool.and_then(|p| data(&p, &settings).map(|d| (p, d))) {
        Ok(ready) => ready,
        Err(e) => {
            eprintln!("bench setup failed: {e}");
            std::process::exit(1);
        }
    };
    println!(
        "workload A: {} build x {} probe rows, {} workers, count, median of {}",
        r.len(),
        s.len(),
        pool.workers(),
        settings.reps
    );
    for &algorithm in &settings.algorithms {
        measure(&pool, &r, &s, algorithm, settings.reps);
    }
}
