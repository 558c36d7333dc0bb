//! Benchmark: parallel radix partitioning (PRO and CPRL) against the
//! memory-bandwidth bound measured in the same run, and the radix joins on
//! Balkesen et al.'s workload A, scaled.
//!
//! The bound is a parallel copy of the same bytes: every worker copies its
//! own chunk (N*16 bytes read, N*16 written in all) into a buffer on its
//! node. Partitioning moves the same bytes (plus a histogram pass), so
//! its time against the copy's says how close to the memory it runs.
//! A third reference, the floor, is the parallel histogram alone: every
//! worker computes each of its tuples' partition number and counts it,
//! moving no tuples. Any one-pass partitioner does at least that much
//! work per tuple, so where the floor alone takes most of the copy's
//! time, the partitioner is bound by the CPU, not by the memory.
//! Methods alternate their order from repetition to repetition, and the
//! medians are compared. Output buffers come from the partitioner's
//! buffer cache for every method alike (`partition::recycle`): the first,
//! unmeasured repetition pays the page faults; the cold times are printed
//! too.
//!
//! Run with `cargo bench -p numakit-ops --bench partition -- [options]`:
//! `--rows N` (tuples to partition, default 32M = 512 MiB), `--bits B`
//! (radix bits, default 11), `--threads T` (default: all CPUs), `--reps R`
//! (default 7), `--build N` (join build rows, default 2M; the probe side
//! is the partitioned relation), `--target-kib K` (the join's target
//! partition size), `--no-join`, `--no-partition`. Without `--bench` (as under
//! `cargo test --benches`) it runs a tiny smoke size.

mod common;
use numakit_ops::timing::median;

use std::sync::Arc;
use std::time::Instant;

use numakit_ops::datagen::{generate, GenSpec, KeyDist};
use numakit_ops::join::radix::{join_with, RadixConfig};
use numakit_ops::join::{JoinAlgorithm, JoinKind, JoinOptions, JoinOutput};
use numakit_ops::partition::{histogram, partition_relation, recycle, PassPlan, Radix, Variant};
use numakit_ops::timing::Silent;
use numakit_ops::Relation;
use numakit_placement::PlacementMode;
use numakit_pool::{Pool, PoolBuilder};

struct Settings {
    rows: u64,
    bits: u32,
    threads: usize,
    reps: usize,
    build_rows: u64,
    join: bool,
    /// Radix join target partition size in KiB (None: the default).
    target_kib: Option<u64>,
    no_partition: bool,
}

fn settings() -> Result<Settings, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = !args.iter().any(|a| a == "--bench");
    let value = |name: &str| -> Result<Option<u64>, String> {
        match args.iter().position(|a| a == name) {
            None => Ok(None),
            Some(i) => args
                .get(i + 1)
                .and_then(|v| v.replace('_', "").parse().ok())
                .map(Some)
                .ok_or_else(|| format!("{name} needs a number")),
        }
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    Ok(Settings {
        rows: if quick {
            1 << 16
        } else {
            value("--rows")?.unwrap_or(32 << 20)
        },
        bits: value("--bits")?.unwrap_or(11) as u32,
        threads: value("--threads")?.map_or(cpus, |t| t as usize),
        reps: if quick {
            1
        } else {
            value("--reps")?.unwrap_or(7) as usize
        },
        build_rows: if quick {
            1 << 12
        } else {
            value("--build")?.unwrap_or(2 << 20)
        },
        join: !args.iter().any(|a| a == "--no-join"),
        target_kib: value("--target-kib")?,
        no_partition: args.iter().any(|a| a == "--no-partition"),
    })
}

/// CPU seconds of the whole process (all workers); the main thread sleeps
/// while workers run. Under other load on the machine this says more
/// about an operator's own cost than wall time.
fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Minor page faults of this process so far (0 where /proc is missing).
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit(')').next().unwrap_or("");
    after_name
        .split_whitespace()
        .nth(7)
        .and_then(|f| f.parse().ok())
        .unwrap_or(0)
}

#[derive(Clone, Copy, PartialEq)]
enum Method {
    Copy,
    /// Partition numbers computed and counted, no tuple moved.
    Floor,
    Partition(Variant),
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Method::Copy => "copy (bound)",
            Method::Floor => "histogram (floor)",
            Method::Partition(v) => v.name(),
        }
    }
}

/// Every worker copies its chunk into a buffer on its node.
fn parallel_copy(pool: &Pool, rel: &Relation) -> Result<(), String> {
    let chunks = rel.chunks();
    let done = pool
        .broadcast(|ctx| -> Result<(), String> {
            let input = &chunks[ctx.index].tuples;
            let mut out = recycle::take(pool, ctx.node, input.len()).map_err(|e| e.to_string())?;
            out[..input.len()].copy_from_slice(input);
            std::hint::black_box(&out);
            recycle::give_back(pool, ctx.node, out);
            Ok(())
        })
        .map_err(|e| e.to_string())?;
    done.into_iter().collect()
}

/// Every worker computes the partition number of each tuple of its chunk
/// and counts it (the histogram pass of PRO), moving no tuples.
fn parallel_histogram(pool: &Pool, rel: &Relation, bits: u32) -> Result<(), String> {
    let radix = Radix::top(bits).map_err(|e| e.to_string())?;
    let chunks = rel.chunks();
    let counts = pool
        .broadcast(|ctx| histogram(&chunks[ctx.index].tuples, radix))
        .map_err(|e| e.to_string())?;
    std::hint::black_box(counts);
    Ok(())
}

/// One run: (wall seconds, CPU seconds, minor page faults).
fn run_once(pool: &Pool, rel: &Relation, method: Method, bits: u32) -> Result<[f64; 3], String> {
    let (faults, cpu, start) = (minor_faults(), cpu_seconds(), Instant::now());
    let parts = match method {
        Method::Copy => {
            parallel_copy(pool, rel)?;
            None
        }
        Method::Floor => {
            parallel_histogram(pool, rel, bits)?;
            None
        }
        Method::Partition(variant) => Some(
            partition_relation(pool, rel, PassPlan::one(bits), variant)
                .map_err(|e| e.to_string())?,
        ),
    };
    let wall = start.elapsed().as_secs_f64();
    let measured = [wall, cpu_seconds() - cpu, (minor_faults() - faults) as f64];
    drop(std::hint::black_box(parts));
    Ok(measured)
}

/// Partitioning against the copy bound, alternating order, medians.
fn bench_partitioning(pool: &Pool, rel: &Relation, s: &Settings) -> Result<(), String> {
    let methods = [
        Method::Copy,
        Method::Floor,
        Method::Partition(Variant::Pro),
        Method::Partition(Variant::Cprl),
    ];
    let cold: Vec<[f64; 3]> = methods
        .iter()
        .map(|&m| run_once(pool, rel, m, s.bits))
        .collect::<Result<_, _>>()?;
    // runs[method][measure] = one value per repetition
    let mut runs = vec![vec![Vec::new(); 3]; methods.len()];
    for rep in 0..s.reps.max(1) {
        for k in 0..methods.len() {
            let i = (rep + k) % methods.len();
            let i = if rep % 2 == 1 {
                methods.len() - 1 - i
            } else {
                i
            };
            let measured = run_once(pool, rel, methods[i], s.bits)?;
            for (values, v) in runs[i].iter_mut().zip(measured) {
                values.push(v);
            }
        }
    }
    let med: Vec<[f64; 3]> = runs
        .iter()
        .map(|r| [median(&r[0]), median(&r[1]), median(&r[2])])
        .collect();
    print_partitioning(pool, rel, s, &methods, &med, &cold);
    Ok(())
}

/// Prints the medians (wall, cpu, faults) and cold times of every method.
fn print_partitioning(
    pool: &Pool,
    rel: &Relation,
    s: &Settings,
    methods: &[Method],
    med: &[[f64; 3]],
    cold: &[[f64; 3]],
) {
    println!(
        "partition {} tuples ({} MiB), {} bits, {} workers, median of {}; \
         cold = first run (page faults); cpu = CPU time of all workers",
        rel.len(),
        rel.bytes() >> 20,
        s.bits,
        pool.workers(),
        s.reps
    );
    let bytes = 2.0 * rel.bytes() as f64;
    let [bound_wall, bound_cpu, _] = med[0];
    for (i, m) in methods.iter().enumerate() {
        let [wall, cpu, faults] = med[i];
        println!(
            "  {:>17}: {:7.1} ms {:6.2} GB/s {:5.1}% of copy | cpu {:7.1} ms {:5.1}% of copy | cold {:7.1} ms | {faults} faults",
            m.name(),
            wall * 1e3,
            bytes / wall / 1e9,
            100.0 * bound_wall / wall,
            cpu * 1e3,
            100.0 * bound_cpu / cpu.max(1e-9),
            cold[i][0] * 1e3,
        );
    }
    if let Some(floor) = methods.iter().position(|&m| m == Method::Floor) {
        println!(
            "  the histogram alone (partition numbers counted, no tuple moved) takes {:.0}% of the copy's time",
            100.0 * med[floor][0] / bound_wall
        );
    }
}

/// Workload A scaled: dense build side joined with the fk probe side.
fn bench_join(pool: &Pool, r: &Relation, s_rel: &Relation, s: &Settings) -> Result<(), String> {
    let algorithms = [JoinAlgorithm::RadixPro, JoinAlgorithm::RadixCprl];
    let mut config = RadixConfig::default();
    if let Some(kib) = s.target_kib {
        config.target_partition_bytes = kib << 10;
    }
    let mut totals = vec![Vec::new(); 2];
    let mut cpu = vec![Vec::new(); 2];
    let mut phases: Vec<Vec<(String, Vec<f64>)>> = vec![Vec::new(); 2];
    let mut rows = [0u64; 2];
    for rep in 0..s.reps.max(1) + 1 {
        for k in 0..2 {
            let i = (rep + k) % 2;
            let opts = JoinOptions {
                algorithm: algorithms[i],
                kind: JoinKind::Inner,
                output: JoinOutput::Count,
                row_limit: None,
                merge_exchange: numakit_ops::join::RING_MERGE,
            };
            let (start, cpu_start) = (Instant::now(), cpu_seconds());
            let result =
                join_with(pool, r, s_rel, &opts, &config, &Silent).map_err(|e| e.to_string())?;
            if rep == 0 {
                continue; // warm-up: page faults of fresh buffers
            }
            totals[i].push(start.elapsed().as_secs_f64());
            cpu[i].push(cpu_seconds() - cpu_start);
            rows[i] = result.rows;
            for (j, p) in result.phases.iter().enumerate() {
                if phases[i].len() <= j {
                    phases[i].push((p.name.clone(), Vec::new()));
                }
                phases[i][j].1.push(p.seconds);
            }
        }
    }
    println!(
        "radix join, workload A: {} build x {} probe rows, count, target partition {} KiB, median of {}",
        r.len(),
        s_rel.len(),
        config.target_partition_bytes >> 10,
        s.reps
    );
    for i in 0..2 {
        let t = median(&totals[i]);
        let breakdown: Vec<String> = phases[i]
            .iter()
            .map(|(name, v)| format!("{name} {:.1} ms", median(v) * 1e3))
            .collect();
        println!(
            "  {:>5}: {:7.1} ms  cpu {:7.1} ms  {:6.1} M input rows/s  ({} rows; {})",
            algorithms[i].name(),
            t * 1e3,
            median(&cpu[i]) * 1e3,
            (r.len() + s_rel.len()) as f64 / t / 1e6,
            rows[i],
            breakdown.join(", ")
        );
    }
    Ok(())
}

fn run() -> Result<(), String> {
    let s = settings()?;
    let topo = numakit_topology::discover().map_err(|e| e.to_string())?;
    let pool = PoolBuilder::new(Arc::new(topo))
        .threads(s.threads)
        .placement(PlacementMode::BestEffort)
        .build()
        .map_err(|e| e.to_string())?;
    let gen = |rows, keys, seed| {
        generate(&pool, &GenSpec { rows, keys, seed }).map_err(|e| e.to_string())
    };
    let probe = gen(
        s.rows,
        KeyDist::ForeignKey {
            build_rows: s.build_rows,
        },
        2,
    )?;
    if !s.no_partition {
        bench_partitioning(&pool, &probe, &s)?;
    }
    if s.join {
        let build = gen(s.build_rows, KeyDist::Dense, 1)?;
        bench_join(&pool, &build, &probe, &s)?;
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("partition bench failed: {e}");
        std::process::exit(1);
    }
}
