//! Group-by aggregation: every method over growing group counts (Li
//! Figure 10), median of repetitions, in rows per second, and where the
//! best method changes.
//!
//! The data is the comparison workload's: uniform keys in 1..=G, values
//! uniform in -1000..1000. Run with
//! `cargo bench -p numakit-ops --bench aggregate -- [--rows N] [--full]
//! [--reps R] [--groups 1k,64k,1m,16m] [--methods auto,local,...]`
//! (`--full` is 64M rows, the comparison's size; the default is 16M).

use std::sync::Arc;
use std::time::Instant;

use numakit_ops::aggregate::{aggregate, AggMethod, AggOptions, AggResult};
use numakit_ops::datagen::splitmix64;
use numakit_ops::timing::Silent;
use numakit_ops::{Relation, Tuple};
use numakit_placement::PlacementMode;
use numakit_pool::{Pool, PoolBuilder};

struct Config {
    rows: usize,
    reps: usize,
    groups: Vec<u64>,
    methods: Vec<AggMethod>,
    threads: usize,
}

fn parse_count(s: &str) -> u64 {
    let s = s.to_ascii_lowercase().replace('_', "");
    let (num, mult) = match s.chars().last() {
        Some('k') => (&s[..s.len() - 1], 1_000),
        Some('m') => (&s[..s.len() - 1], 1_000_000),
        _ => (&s[..], 1),
    };
    num.parse::<u64>().expect("a count like 64k or 16m") * mult
}

fn config() -> Config {
    let mut c = Config {
        rows: 16_000_000,
        reps: 3,
        groups: vec![1_000, 64_000, 1_000_000, 16_000_000],
        methods: AggMethod::ALL.to_vec(),
        threads: 0,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--rows" => c.rows = parse_count(&value) as usize,
            "--full" => {
                c.rows = 64_000_000;
                i -= 1;
            }
            "--reps" => c.reps = value.parse().expect("--reps N"),
            "--threads" => c.threads = value.parse().expect("--threads N"),
            "--groups" => c.groups = value.split(',').map(parse_count).collect(),
            "--methods" => {
                c.methods = value
                    .split(',')
                    .map(|m| m.parse().expect("a method"))
                    .collect()
            }
            _ => i -= 1, // `--bench` from cargo, and anything else
        }
        i += 2;
    }
    c
}

fn pool(threads: usize) -> Pool {
    let topo = Arc::new(numakit_topology::discover().expect("topology"));
    let mut b = PoolBuilder::new(topo).placement(PlacementMode::BestEffort);
    if threads > 0 {
        b = b.threads(threads);
    }
    b.build().expect("pool")
}

fn input(pool: &Pool, rows: usize, groups: u64) -> Relation {
    Relation::from_fn(pool, rows, |i| {
        let r = splitmix64(i as u64 ^ 0x5eed);
        let value = (splitmix64(r) % 2000) as i64 - 1000;
        Tuple::new(r % groups + 1, value as u64)
    })
    .expect("input")
}

/// Stop repeating a method once its runs took this long (the slow
/// methods at 16M groups would otherwise blow the time budget).
const SECONDS_PER_METHOD: f64 = 1.0;

/// (median seconds, the median run's result) of up to `reps` runs.
fn measure(pool: &Pool, rel: &Relation, method: AggMethod, reps: usize) -> (f64, AggResult) {
    let opts = AggOptions::new(method);
    let mut runs: Vec<(f64, AggResult)> = Vec::new();
    let mut spent = 0.0;
    while runs.len() < reps.max(1) && (runs.is_empty() || spent < SECONDS_PER_METHOD) {
        let t = Instant::now();
        let r = aggregate(pool, rel, &opts, &Silent).expect("aggregate");
        let secs = t.elapsed().as_secs_f64();
        spent += secs;
        runs.push((secs, r));
    }
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mid = runs.len() / 2;
    runs.swap_remove(mid)
}

/// One untimed run of the most memory-hungry method at the largest size:
/// the first run in a process pays for fresh memory (page faults, and on
/// a virtual machine the host backing it), which would otherwise land on
/// whichever method happens to run first.
fn warm_up(pool: &Pool, c: &Config) {
    let Some(&largest) = c.groups.iter().max() else {
        return;
    };
    let rel = input(pool, c.rows, largest);
    let opts = AggOptions::new(AggMethod::Migration);
    aggregate(pool, &rel, &opts, &Silent).expect("warm-up");
}

/// (groups, total count, total sum): equal for every method.
fn fingerprint(r: &AggResult) -> (usize, u64, i128) {
    let all = r.groups.iter().flatten();
    let count = all.clone().map(|g| g.count).sum();
    (r.group_count(), count, all.map(|g| g.sum).sum())
}

fn main() {
    let c = config();
    let pool = pool(c.threads);
    println!(
        "# group-by: {} rows, {} workers, median of up to {} (Mrows/s and ms; higher rate is better)",
        c.rows,
        pool.workers(),
        c.reps
    );
    print!("{:>10}", "groups");
    c.methods.iter().for_each(|m| print!(" {:>15}", m.name()));
    println!("  best");
    let mut best_per_g = Vec::new();
    for (i, &g) in c.groups.iter().enumerate() {
        let rel = input(&pool, c.rows, g);
        if i == 0 {
            warm_up(&pool, &c);
        }
        let mut rates = Vec::new();
        let mut check = None;
        let mut auto_note = String::new();
        print!("{g:>10}");
        for &m in &c.methods {
            let (secs, r) = measure(&pool, &rel, m, c.reps);
            let fp = fingerprint(&r);
            assert_eq!(*check.get_or_insert(fp), fp, "{} disagrees", m.name());
            let rate = c.rows as f64 / secs / 1e6;
            print!(" {:>9.1} {:>5}", rate, format!("{:.0}ms", secs * 1e3));
            if m == AggMethod::Auto {
                auto_note = format!(
                    "  auto ran {}: {}\n  phases: {}",
                    r.method.map_or("?", AggMethod::name),
                    r.reason,
                    r.phases
                        .iter()
                        .map(|p| format!("{} {:.0}ms", p.name, p.seconds * 1e3))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            rates.push((m, rate));
        }
        let best = rates
            .iter()
            .filter(|(m, _)| *m != AggMethod::Auto)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(m, _)| *m);
        println!("  {}", best.map_or("-", AggMethod::name));
        if !auto_note.is_empty() {
            println!("{auto_note}");
        }
        best_per_g.push((g, best, rates));
    }
    print_crossovers(&best_per_g);
}

/// Per group count: the best method and every method's Mrows/s.
type Sweep = [(u64, Option<AggMethod>, Vec<(AggMethod, f64)>)];

/// Where the winner changes, and where shuffling overtakes migration.
fn print_crossovers(results: &Sweep) {
    let rate = |rates: &[(AggMethod, f64)], m| rates.iter().find(|r| r.0 == m).map(|r| r.1);
    for w in results.windows(2) {
        if w[0].1 != w[1].1 {
            println!(
                "crossover: {} is best up to {} groups, {} from {} groups",
                w[0].1.map_or("-", AggMethod::name),
                w[0].0,
                w[1].1.map_or("-", AggMethod::name),
                w[1].0
            );
        }
    }
    for (g, _, rates) in results {
        let pairs = [
            (AggMethod::Local, AggMethod::Partitioned),
            (AggMethod::MigrationCopy, AggMethod::Shuffle),
        ];
        let notes: Vec<String> = pairs
            .iter()
            .filter_map(|&(a, b)| Some((a, b, rate(rates, a)?, rate(rates, b)?)))
            .map(|(a, b, ra, rb)| format!("{}/{} = {:.2}", a.name(), b.name(), ra / rb))
            .collect();
        if !notes.is_empty() {
            println!("{g:>10} groups: {}", notes.join(", "));
        }
    }
}
