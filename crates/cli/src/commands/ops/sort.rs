//! `numakit sort`: the NUMA-aware sort on generated data or a file's key
//! column (alone, or with a payload column carried along), checked to be
//! sorted and complete (and against the reference with `--verify`).
//!
//! Only the operator is timed: the input is built before the first
//! repetition and each output is checked after its sort, in place, and
//! dropped before the next one, so that its memory goes back to the
//! operators' buffer cache for the next repetition to reuse.

use anyhow::{ensure, Context, Result};
use numakit_io::{Column, IntKind, Table};
use numakit_ops::datagen::{splitmix64, KeyDist};
use numakit_ops::sort::{ordered_u64_to_i64, sort, sort_keys, KeyColumn};
use numakit_ops::{reference, PhaseTime, Relation, Tuple};
use numakit_placement::PlacementMode;
use numakit_pool::Pool;
use serde::Serialize;

use crate::commands::ops::args::SortArgs;
use crate::commands::ops::common::{
    build_pool, check_verify_size, generated, median_phases, throughput_header, write_table,
    Throughput,
};
use crate::commands::ops::tables;
use crate::common::output;
use crate::common::parse::key_dist;
use crate::common::progress::Spinner;
use crate::render::format::table;

/// Everything `numakit sort` reports.
#[derive(Serialize)]
pub struct SortReport {
    /// Rows sorted (of the generated input).
    pub rows: u64,
    /// Worker threads of the pool.
    pub threads: usize,
    /// Whether 8-byte keys were sorted alone (`--keys-only`) rather than
    /// 16-byte rows of key and payload.
    pub keys_only: bool,
    /// Median seconds.
    pub seconds: f64,
    /// Seconds over the repetitions, and the rates of the median run.
    pub throughput: Throughput,
    /// Median seconds of each phase over the repetitions.
    pub phases: Vec<PhaseTime>,
    /// Whether the output was checked against the sequential reference
    /// (`--verify`; order and row count are always checked).
    pub verified: bool,
}

/// What is sorted: keys with payloads, or keys alone.
enum Data {
    Tuples(Relation),
    Keys(KeyColumn),
}

/// The input, with keys mapped to an order-preserving unsigned form.
struct Input {
    data: Data,
    key_kind: IntKind,
    payload: Option<(String, IntKind)>,
}

fn from_ordered(v: u64, kind: IntKind) -> u64 {
    match kind {
        IntKind::Signed => ordered_u64_to_i64(v) as u64,
        IntKind::Unsigned => v,
    }
}

fn generated_input(pool: &Pool, args: &SortArgs) -> Result<Input> {
    let dist = match &args.keys {
        Some(spec) => key_dist(spec, args.rows)?,
        None => KeyDist::Uniform { max: u64::MAX },
    };
    let data = if args.keys_only && args.keys.is_none() {
        let seed = splitmix64(args.common.seed);
        Data::Keys(KeyColumn::from_fn(pool, args.rows as usize, |i| {
            splitmix64(seed ^ i as u64)
        })?)
    } else {
        let rel = generated(pool, ("--rows", args.rows), dist, args.common.seed)?;
        if args.keys_only {
            let keys: Vec<u64> = rel.to_vec().iter().map(|t| t.key).collect();
            Data::Keys(KeyColumn::from_keys(pool, &keys)?)
        } else {
            Data::Tuples(rel)
        }
    };
    Ok(Input {
        data,
        key_kind: IntKind::Unsigned,
        payload: (!args.keys_only).then(|| ("row".to_string(), IntKind::Signed)),
    })
}

/// A sort's output as the operator returned it: its memory goes back to
/// the operators' buffer cache when dropped, for the next repetition.
enum Sorted {
    Tuples(Relation),
    Keys(KeyColumn),
}

impl Sorted {
    fn len(&self) -> usize {
        match self {
            Sorted::Tuples(rel) => rel.len(),
            Sorted::Keys(keys) => keys.len(),
        }
    }

    /// The (order-preserving) keys, chunk after chunk.
    fn keys(&self) -> Box<dyn Iterator<Item = u64> + '_> {
        match self {
            Sorted::Tuples(rel) => Box::new(
                rel.chunks()
                    .iter()
                    .flat_map(|c| c.tuples.iter().map(|t| t.key)),
            ),
            Sorted::Keys(keys) => {
                Box::new(keys.chunks().iter().flat_map(|c| c.keys.iter().copied()))
            }
        }
    }

    fn is_ordered(&self) -> bool {
        let mut previous = 0;
        self.keys().all(|key| {
            let ordered = previous <= key;
            previous = key;
            ordered
        })
    }

    /// What two runs of one sort must share: the keys in their order
    /// (hashed as a chain) and the rows as a multiset (a sum of row
    /// hashes; rows of equal keys may come in either order).
    fn fingerprint(&self) -> (u64, u64) {
        use numakit_ops::hash::hash64;
        let order = self.keys().fold(0u64, |h, key| hash64(h ^ key));
        let rows = match self {
            Sorted::Tuples(rel) => rel
                .chunks()
                .iter()
                .flat_map(|c| c.tuples.iter())
                .fold(0u64, |s, t| {
                    s.wrapping_add(hash64(t.key ^ hash64(t.payload)))
                }),
            Sorted::Keys(_) => 0,
        };
        (order, rows)
    }

    /// The payloads, chunk after chunk (none for keys alone).
    fn payloads(&self) -> Vec<u64> {
        match self {
            Sorted::Tuples(rel) => rel
                .chunks()
                .iter()
                .flat_map(|c| c.tuples.iter().map(|t| t.payload))
                .collect(),
            Sorted::Keys(_) => Vec::new(),
        }
    }

    /// Every row as a tuple (keys alone have payload 0).
    fn rows(&self) -> Vec<Tuple> {
        match self {
            Sorted::Tuples(rel) => rel.to_vec(),
            Sorted::Keys(_) => self.keys().map(|k| Tuple::new(k, 0)).collect(),
        }
    }
}

/// One timed sort (only the operator's phases are timed; the input is
/// built before and the output read after); returns its phases and the
/// sorted output, checked to be complete and in order.
fn sort_once(pool: &Pool, data: &Data, spinner: &Spinner) -> Result<(Vec<PhaseTime>, Sorted)> {
    let (phases, sorted) = match data {
        Data::Tuples(rel) => {
            let r = sort(pool, rel, spinner).context("sort")?;
            (r.phases, r.sorted.map(Sorted::Tuples))
        }
        Data::Keys(keys) => {
            let r = sort_keys(pool, keys, spinner).context("sort")?;
            (r.phases, r.sorted.map(Sorted::Keys))
        }
    };
    let sorted = sorted.context("the sort returned no output")?;
    let rows = rows_of(data);
    ensure!(
        sorted.len() == rows,
        "the sort returned {} rows for {rows}",
        sorted.len()
    );
    ensure!(sorted.is_ordered(), "the sort's output is out of order");
    Ok((phases, sorted))
}

fn rows_of(data: &Data) -> usize {
    match data {
        Data::Tuples(r) => r.len(),
        Data::Keys(k) => k.len(),
    }
}

fn input_rows(data: &Data) -> Vec<Tuple> {
    match data {
        Data::Tuples(rel) => rel.to_vec(),
        Data::Keys(keys) => keys
            .to_vec()
            .into_iter()
            .map(|k| Tuple::new(k, 0))
            .collect(),
    }
}

/// Runs `numakit sort`: the `--input` file through the table layer, or
/// generated data sorted `--reps` times, each output checked to be complete
/// and in order; prints the report and writes the sorted rows with `--out`.
pub fn run(args: &SortArgs, mode: PlacementMode, json: bool, quiet: bool) -> Result<()> {
    if let Some(path) = &args.input {
        let pool = build_pool(&args.common, mode)?;
        return tables::sort::run(&pool, path, args, json, quiet);
    }
    check_verify_size(args.common.verify, args.rows)?;
    let pool = build_pool(&args.common, mode)?;
    let spinner = Spinner::new(quiet || json);
    spinner.set_prefix("loading input");
    let input = generated_input(&pool, args)?;
    check_verify_size(args.common.verify, rows_of(&input.data) as u64)?;
    let mut times = Vec::new();
    let mut phases = Vec::new();
    let mut sorted = None;
    let mut first = None;
    for rep in 0..args.common.reps {
        spinner.set_prefix(format!("sort, rep {}", rep + 1));
        // The previous output's memory goes back to the buffer cache
        // first, for this repetition to reuse.
        drop(sorted.take());
        let (p, out) = sort_once(&pool, &input.data, &spinner)?;
        times.push(numakit_ops::timing::total_seconds(&p));
        phases.push(p);
        let print = out.fingerprint();
        ensure!(
            *first.get_or_insert(print) == print,
            "repetition {} of the sort gave a different result from the first",
            rep + 1
        );
        sorted = Some(out);
    }
    spinner.finish();
    let rows = rows_of(&input.data);
    let sorted = sorted.context("--reps must be at least 1")?;
    let verified = args.common.verify && verify(&input.data, &sorted)?;
    if let Some(path) = &args.common.out {
        write_table(
            path,
            &sorted_table(&sorted, &input),
            &args.common.write_options(path),
        )?;
    }
    let row_bytes = if matches!(input.data, Data::Keys(_)) {
        8
    } else {
        16
    };
    let throughput = Throughput::of_rows(&times, rows as u64, row_bytes);
    let report = SortReport {
        rows: rows as u64,
        threads: pool.workers(),
        keys_only: matches!(input.data, Data::Keys(_)),
        seconds: throughput.seconds.median,
        throughput,
        phases: median_phases(&phases),
        verified,
    };
    output::report(json, &report, || render(&report))?;
    Ok(())
}

fn verify(data: &Data, sorted: &Sorted) -> Result<bool> {
    let mut got = sorted.rows();
    got.sort_unstable();
    ensure!(
        got == reference::sort(&input_rows(data)),
        "wrong result: the sorted rows differ from the input's"
    );
    Ok(true)
}

fn sorted_table(sorted: &Sorted, input: &Input) -> Table {
    let key = Column {
        name: "key".into(),
        kind: input.key_kind,
        values: sorted
            .keys()
            .map(|k| from_ordered(k, input.key_kind))
            .collect(),
    };
    let mut columns = vec![key];
    if let Some((name, kind)) = &input.payload {
        columns.push(Column {
            name: name.clone(),
            kind: *kind,
            values: sorted.payloads(),
        });
    }
    Table { columns }
}

fn render(r: &SortReport) -> String {
    let rows = vec![throughput_header(&[]), r.throughput.cells(&r.phases)];
    let mut out = format!(
        "sort of {} {} on {} threads\n\n{}",
        r.rows,
        if r.keys_only {
            "keys"
        } else {
            "rows (key + payload)"
        },
        r.threads,
        table(&rows)
    );
    if r.verified {
        out.push_str("\nverified against the sequential reference");
    }
    out
}
