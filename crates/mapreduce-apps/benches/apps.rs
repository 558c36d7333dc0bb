//! The runtime's overhead on the byte-input applications: per
//! application, the MapReduce app (`word_count::run`, `histogram::run`,
//! `linear_regression::run`, `string_match::run` on a `Runtime` over a
//! numakit pool) against a hand-written, single-purpose threaded program
//! for the same task (`std::thread::scope`, per-thread state merged at the
//! end, no runtime), on the same input and the same number of threads.
//!
//! Each input is generated once with the app's generator and placed on
//! the pool's nodes with `Input::place`. The two sides run alternately
//! (the order swapping every repetition) after one untimed run of each
//! whose results must be equal. Prints each side's median and spread,
//! the ratio of medians app / baseline against the goal (at most
//! 1.15), and the app's median phase times.
//!
//! Run with `cargo bench -p numakit-mapreduce-apps --bench apps --
//! [--reps R] [--mib M] [--threads T] [--seed S]
//! [--apps word-count,histogram,linear-regression,string-match]`.
//! Defaults: 9 repetitions, 2 threads, the reference sizes (word
//! count 100 MiB, histogram 400 MiB, linear regression 400 MiB, string
//! match 100 MiB). `MR_BENCH_MIB` (or `--mib`) sets every input to that
//! many MiB for a quick run; `MR_BENCH_REPS` sets the repetitions.
//!
//! The baselines are deliberately not tuned beyond what a careful
//! programmer would write for the one task: they share only the work
//! queue below, and none of the runtime's code.

use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use numakit_mapreduce::{Input, JobOptions, PhaseSeconds, Runtime};
use numakit_mapreduce_apps::{histogram, linear_regression, string_match, word_count};
use numakit_pool::{Pool, PoolBuilder};

/// The goal: each app within 15% of its baseline.
const GOAL: f64 = 1.15;
const MIB: usize = 1 << 20;

struct Config {
    reps: usize,
    threads: usize,
    mib: Option<usize>,
    seed: u64,
    apps: Vec<String>,
}

fn env_number(name: &str) -> Option<usize> {
    let value = std::env::var(name).ok()?;
    Some(value.parse().unwrap_or_else(|_| panic!("{name}: a number")))
}

fn config() -> Config {
    let mut c = Config {
        reps: env_number("MR_BENCH_REPS").unwrap_or(9),
        threads: 2,
        mib: env_number("MR_BENCH_MIB"),
        seed: 42,
        apps: [
            "word-count",
            "histogram",
            "linear-regression",
            "string-match",
        ]
        .map(String::from)
        .to_vec(),
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--reps" => c.reps = value.parse().expect("--reps N"),
            "--threads" => c.threads = value.parse().expect("--threads N"),
            "--mib" => c.mib = Some(value.parse().expect("--mib M")),
            "--seed" => c.seed = value.parse().expect("--seed S"),
            "--apps" => c.apps = value.split(',').map(String::from).collect(),
            _ => i -= 1, // `--bench` from cargo, and anything else
        }
        i += 2;
    }
    c
}

fn pool(threads: usize) -> Pool {
    let topology = Arc::new(numakit_topology::discover().expect("topology"));
    PoolBuilder::new(topology)
        .placement(numakit_placement::PlacementMode::BestEffort)
        .threads(threads)
        .build()
        .expect("pool")
}

// ---------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    App,
    Baseline,
}

/// One timed run: its seconds, the app's phases, and its result.
struct Sample<T> {
    seconds: f64,
    phases: Option<PhaseSeconds>,
    result: T,
}

impl<T> Sample<T> {
    fn app(started: Instant, phases: PhaseSeconds, result: T) -> Self {
        let seconds = started.elapsed().as_secs_f64();
        Self {
            seconds,
            phases: Some(phases),
            result,
        }
    }

    fn baseline(started: Instant, result: T) -> Self {
        let seconds = started.elapsed().as_secs_f64();
        Self {
            seconds,
            phases: None,
            result,
        }
    }
}

/// One app's figures: seconds of every run of each side, the app's phases.
struct Row {
    app: &'static str,
    mib: usize,
    app_times: Vec<f64>,
    base_times: Vec<f64>,
    phases: Vec<PhaseSeconds>,
}

/// Runs each side once untimed (their results must agree), then `reps`
/// times alternately. `run` times its own call (so that building the
/// result to compare is not timed).
fn measure<T: PartialEq + std::fmt::Debug>(
    app: &'static str,
    mib: usize,
    reps: usize,
    mut run: impl FnMut(Side) -> Sample<T>,
) -> Row {
    let (a, b) = (run(Side::App).result, run(Side::Baseline).result);
    assert!(a == b, "{app}: the app and the baseline disagree");
    let mut row = Row {
        app,
        mib,
        app_times: Vec::new(),
        base_times: Vec::new(),
        phases: Vec::new(),
    };
    for rep in 0..reps.max(1) {
        let order = if rep % 2 == 0 {
            [Side::App, Side::Baseline]
        } else {
            [Side::Baseline, Side::App]
        };
        for side in order {
            let sample = run(side);
            std::hint::black_box(&sample.result);
            match side {
                Side::App => row.app_times.push(sample.seconds),
                Side::Baseline => row.base_times.push(sample.seconds),
            }
            row.phases.extend(sample.phases);
        }
    }
    row
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn print_rows(rows: &mut [Row]) {
    println!(
        "{:<18} {:>5} {:>24} {:>24} {:>7}  goal {GOAL}",
        "app", "MiB", "app s (min-max)", "baseline s (min-max)", "ratio"
    );
    for r in rows.iter_mut() {
        let (am, bm) = (median(&mut r.app_times), median(&mut r.base_times));
        let spread = |t: &[f64]| format!("({:.3}-{:.3})", t[0], t[t.len() - 1]);
        let ratio = am / bm;
        println!(
            "{:<18} {:>5} {am:>8.4} {:>15} {bm:>8.4} {:>15} {ratio:>7.3}  {}",
            r.app,
            r.mib,
            spread(&r.app_times),
            spread(&r.base_times),
            if ratio <= GOAL { "PASS" } else { "MISS" }
        );
    }
    println!("\n# the app's phases, median of each (ms)");
    println!(
        "{:<18} {:>8} {:>8} {:>8} {:>8}",
        "app", "split", "map", "reduce", "merge"
    );
    for r in rows.iter() {
        let phase = |f: fn(&PhaseSeconds) -> f64| {
            median(&mut r.phases.iter().map(f).collect::<Vec<_>>()) * 1e3
        };
        println!(
            "{:<18} {:>8.2} {:>8.2} {:>8.2} {:>8.2}",
            r.app,
            phase(|p| p.split),
            phase(|p| p.map),
            phase(|p| p.reduce),
            phase(|p| p.merge)
        );
    }
}

// ---------------------------------------------------------------------
// The baselines' one shared piece: a queue of input pieces
// ---------------------------------------------------------------------

/// Pieces of about this many bytes: enough per thread to balance when
/// the machine is busy, large enough that taking one costs nothing.
fn piece_bytes(len: usize, threads: usize) -> usize {
    (len / (threads.max(1) * 16)).clamp(256 << 10, 8 * MIB)
}

/// Cuts `bytes` into pieces of about `target` bytes, each cut moved
/// forward to the first position `i` where `boundary(i)` holds.
fn cut(len: usize, target: usize, boundary: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut end = 0;
    while end < len {
        end = (end + target.max(1)).min(len);
        while end < len && !boundary(end) {
            end += 1;
        }
        ends.push(end);
    }
    ends
}

/// Runs `threads` scoped threads; each starts from `init()`, takes pieces
/// from the queue until it is empty, folding each into its state with
/// `work`, and hands its state back.
fn fan_out<P: Send, S: Send>(
    pieces: Vec<P>,
    threads: usize,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, P) + Sync,
) -> Vec<S> {
    let queue = Mutex::new(pieces.into_iter());
    let (queue, init, work) = (&queue, &init, &work);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.max(1))
            .map(|_| {
                s.spawn(move || {
                    let mut state = init();
                    loop {
                        let next = queue.lock().unwrap_or_else(PoisonError::into_inner).next();
                        match next {
                            Some(piece) => work(&mut state, piece),
                            None => return state,
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a baseline thread panicked"))
            .collect()
    })
}

/// Splits `bytes` at `ends` (from [`cut`]) into shared pieces.
fn pieces_of<'a>(bytes: &'a [u8], ends: &[usize]) -> Vec<&'a [u8]> {
    let mut start = 0;
    ends.iter()
        .map(|&end| {
            let piece = &bytes[start..end];
            start = end;
            piece
        })
        .collect()
}

// ---------------------------------------------------------------------
// Word count
// ---------------------------------------------------------------------

/// A hash for short byte strings: eight bytes at a time (the last eight
/// overlapping), each folded in by a 128-bit multiply.
#[derive(Default)]
struct WordHasher(u64);

const SEED: u64 = 0x9e37_79b9_7f4a_7c15;

#[inline(always)]
fn fold(h: u64, v: u64) -> u64 {
    let wide = (h ^ v) as u128 * SEED as u128;
    (wide as u64) ^ ((wide >> 64) as u64)
}

fn load8(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
}

fn load4(b: &[u8], at: usize) -> u64 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or([0; 4])) as u64
}

impl Hasher for WordHasher {
    #[inline]
    fn write(&mut self, b: &[u8]) {
        let n = b.len();
        let mut h = self.0;
        if n > 8 {
            let mut at = 0;
            while at + 8 < n {
                h = fold(h, load8(b, at));
                at += 8;
            }
            h = fold(h, load8(b, n - 8));
        } else if n >= 4 {
            h = fold(h, (load4(b, 0) << 32) | load4(b, n - 4));
        } else if n > 0 {
            h = fold(
                h,
                ((b[0] as u64) << 16) | ((b[n / 2] as u64) << 8) | b[n - 1] as u64,
            );
        }
        self.0 = h;
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.0 = fold(self.0, n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

type Counts<'a> = std::collections::HashMap<&'a [u8], u64, BuildHasherDefault<WordHasher>>;

/// Bytes that belong to a word before upper-casing.
fn wordish(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'\''
}

/// Upper-cases `piece` in place and counts its words into `counts`.
fn count_words<'a>(counts: &mut Counts<'a>, piece: &'a mut [u8]) {
    piece.make_ascii_uppercase();
    let text: &'a [u8] = piece;
    let n = text.len();
    let mut at = 0;
    loop {
        while at < n && !text[at].is_ascii_uppercase() {
            at += 1;
        }
        if at == n {
            return;
        }
        let start = at;
        at += 1;
        while at < n && (text[at].is_ascii_uppercase() || text[at] == b'\'') {
            at += 1;
        }
        *counts.entry(&text[start..at]).or_insert(0) += 1;
    }
}

/// Word count by hand: pieces cut between words, each upper-cased and
/// counted by whichever thread takes it; the threads' tables merged and
/// sorted most frequent first, ties by word.
fn word_count_baseline(text: &mut [u8], threads: usize) -> Vec<(&[u8], u64)> {
    let ends = cut(text.len(), piece_bytes(text.len(), threads), |i| {
        !wordish(text[i])
    });
    let mut pieces = Vec::with_capacity(ends.len());
    let mut rest = text;
    let mut start = 0;
    for end in ends {
        let (piece, tail) = std::mem::take(&mut rest).split_at_mut(end - start);
        pieces.push(piece);
        rest = tail;
        start = end;
    }
    let mut tables = fan_out(pieces, threads, Counts::default, count_words);
    tables.sort_by_key(|t| std::cmp::Reverse(t.len()));
    let mut rest = tables.into_iter();
    let mut all = rest.next().unwrap_or_default();
    for table in rest {
        for (word, n) in table {
            *all.entry(word).or_insert(0) += n;
        }
    }
    let mut counts: Vec<(&[u8], u64)> = all.into_iter().collect();
    counts.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    counts
}

fn bench_word_count(pool: &Pool, rt: &Runtime, c: &Config, mib: usize) -> Row {
    let mut input = Input::place(pool, &word_count::generate(mib * MIB, c.seed)).expect("place");
    let text = input.bytes_mut().expect("placed input is writable");
    let opts = word_count::default_options();
    let owned = |counts: &[(&[u8], u64)]| -> Vec<(Vec<u8>, u64)> {
        counts.iter().map(|(w, n)| (w.to_vec(), *n)).collect()
    };
    measure("word-count", mib, c.reps, |side| {
        // The owned copy of the counts (for comparing the sides) is made
        // after the clock is read, on both sides.
        let t = Instant::now();
        match side {
            Side::App => {
                let out = word_count::run(rt, text, &opts).expect("word count");
                let timed = Sample::app(t, out.stats.seconds, ());
                Sample {
                    result: owned(&out.counts),
                    seconds: timed.seconds,
                    phases: timed.phases,
                }
            }
            Side::Baseline => {
                let out = word_count_baseline(text, c.threads);
                let timed = Sample::baseline(t, ());
                Sample {
                    result: owned(&out),
                    seconds: timed.seconds,
                    phases: None,
                }
            }
        }
    })
}

// ---------------------------------------------------------------------
// Histogram
// ---------------------------------------------------------------------

/// Histogram by hand: pieces of whole rows, each thread counting into its
/// own 768 bins, the bins added up at the end.
fn histogram_baseline(file: &[u8], threads: usize) -> Vec<u64> {
    let l = histogram::layout(file).expect("a BMP");
    let pixels = &file[l.offset..l.offset + l.row_bytes * l.height as usize];
    let rows = (piece_bytes(pixels.len(), threads) / l.row_bytes.max(1)).max(1);
    let pieces: Vec<&[u8]> = pixels.chunks(rows * l.row_bytes.max(1)).collect();
    let used = l.width as usize * 3;
    let counted = fan_out(
        pieces,
        threads,
        || vec![0u64; histogram::BINS],
        |bins, piece| {
            let (blue, rest) = bins.split_at_mut(256);
            let (green, red) = rest.split_at_mut(256);
            for row in piece.chunks(l.row_bytes.max(1)) {
                for px in row[..used].chunks_exact(3) {
                    blue[px[0] as usize] += 1;
                    green[px[1] as usize] += 1;
                    red[px[2] as usize] += 1;
                }
            }
        },
    );
    let mut bins = vec![0u64; histogram::BINS];
    for thread in counted {
        bins.iter_mut().zip(thread).for_each(|(b, n)| *b += n);
    }
    bins
}

fn bench_histogram(pool: &Pool, rt: &Runtime, c: &Config, mib: usize) -> Row {
    let input = Input::place(pool, &histogram::generate(mib * MIB, c.seed)).expect("place");
    let file = input.bytes();
    let opts = JobOptions::default();
    measure("histogram", mib, c.reps, |side| {
        let t = Instant::now();
        match side {
            Side::App => {
                let out = histogram::run(rt, file, &opts).expect("histogram");
                Sample::app(t, out.stats.seconds, out.bins)
            }
            Side::Baseline => Sample::baseline(t, histogram_baseline(file, c.threads)),
        }
    })
}

// ---------------------------------------------------------------------
// Linear regression
// ---------------------------------------------------------------------

/// Points per block whose sums are exact in 32 bits: a product of two
/// signed bytes is at most 2^14 in magnitude, so 2^16 of them fit.
const POINTS_PER_BLOCK: usize = 1 << 16;
/// Points handled side by side (one 32-bit accumulator each per sum).
const WIDTH: usize = 8;

/// SX, SY, SXX, SYY, SXY of one block of points: sums in 32-bit lanes,
/// eight points at a time, which the compiler turns into vector code.
#[inline(always)]
fn block_sums(block: &[u8]) -> [i64; 5] {
    let points: &[[u8; 2]] = bytemuck::cast_slice(block);
    let mut lanes = [[0i32; WIDTH]; 5];
    let groups = points.chunks_exact(WIDTH);
    let tail = groups.remainder();
    for group in groups {
        for (l, &[x, y]) in group.iter().enumerate() {
            let (x, y) = (x as i8 as i32, y as i8 as i32);
            lanes[0][l] += x;
            lanes[1][l] += y;
            lanes[2][l] += x * x;
            lanes[3][l] += y * y;
            lanes[4][l] += x * y;
        }
    }
    let mut sums = lanes.map(|l| l.iter().map(|&v| v as i64).sum::<i64>());
    for &[x, y] in tail {
        let (x, y) = (x as i8 as i64, y as i8 as i64);
        let terms = [x, y, x * x, y * y, x * y];
        sums.iter_mut().zip(terms).for_each(|(s, t)| *s += t);
    }
    sums
}

#[inline(always)]
fn piece_sums_portable(piece: &[u8]) -> [i64; 5] {
    let mut sums = [0i64; 5];
    for block in piece.chunks(2 * POINTS_PER_BLOCK) {
        let b = block_sums(block);
        sums.iter_mut()
            .zip(b)
            .for_each(|(s, v)| *s = s.wrapping_add(v));
    }
    sums
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn piece_sums_avx2(piece: &[u8]) -> [i64; 5] {
    piece_sums_portable(piece)
}

/// The sums of `piece` (whole points), with AVX2 where the CPU has it.
fn piece_sums(piece: &[u8]) -> [i64; 5] {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { piece_sums_avx2(piece) };
        }
    }
    piece_sums_portable(piece)
}

/// Linear regression by hand: pieces of whole points, per-thread sums
/// (wrapping, as the original's), added up at the end. Returns the point
/// count and SX, SY, SXX, SYY, SXY.
fn linear_regression_baseline(bytes: &[u8], threads: usize) -> (u64, [i64; 5]) {
    let points = &bytes[..bytes.len() / 2 * 2];
    let piece = piece_bytes(points.len(), threads) / 2 * 2;
    let pieces: Vec<&[u8]> = points.chunks(piece.max(2)).collect();
    let per_thread = fan_out(
        pieces,
        threads,
        || [0i64; 5],
        |sums, piece| {
            let p = piece_sums(piece);
            sums.iter_mut()
                .zip(p)
                .for_each(|(s, v)| *s = s.wrapping_add(v));
        },
    );
    let mut sums = [0i64; 5];
    for p in per_thread {
        sums.iter_mut()
            .zip(p)
            .for_each(|(s, v)| *s = s.wrapping_add(v));
    }
    ((points.len() / 2) as u64, sums)
}

fn bench_linear_regression(pool: &Pool, rt: &Runtime, c: &Config, mib: usize) -> Row {
    let input = Input::place(pool, &linear_regression::generate(mib * MIB, c.seed)).expect("place");
    let bytes = input.bytes();
    let opts = JobOptions::default();
    measure("linear-regression", mib, c.reps, |side| {
        let t = Instant::now();
        match side {
            Side::App => {
                let (fit, stats) = linear_regression::run(rt, bytes, &opts).expect("regression");
                Sample::app(t, stats.seconds, (fit.n, fit.sums))
            }
            Side::Baseline => Sample::baseline(t, linear_regression_baseline(bytes, c.threads)),
        }
    })
}

// ---------------------------------------------------------------------
// String match
// ---------------------------------------------------------------------

fn is_line_end(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

/// String match by hand: pieces cut after line ends; every non-empty line
/// is encrypted (each byte plus 5) and compared with the encrypted words;
/// per-thread counts added up at the end.
fn string_match_baseline(keys: &[u8], threads: usize) -> [u64; 4] {
    let encrypted: Vec<Vec<u8>> = string_match::WORDS
        .iter()
        .map(|w| w.iter().map(|b| b.wrapping_add(5)).collect())
        .collect();
    let ends = cut(keys.len(), piece_bytes(keys.len(), threads), |i| {
        is_line_end(keys[i - 1])
    });
    let encrypted = &encrypted;
    let per_thread = fan_out(
        pieces_of(keys, &ends),
        threads,
        || ([0u64; 4], Vec::with_capacity(64)),
        |(found, line_encrypted), piece| {
            for line in piece.split(|&b| is_line_end(b)) {
                if line.is_empty() {
                    continue;
                }
                line_encrypted.clear();
                line_encrypted.extend(line.iter().map(|b| b.wrapping_add(5)));
                if let Some(i) = encrypted.iter().position(|e| e == line_encrypted) {
                    found[i] += 1;
                }
            }
        },
    );
    let mut found = [0u64; 4];
    for (f, _) in per_thread {
        found.iter_mut().zip(f).for_each(|(a, n)| *a += n);
    }
    found
}

fn bench_string_match(pool: &Pool, rt: &Runtime, c: &Config, mib: usize) -> Row {
    let input = Input::place(pool, &string_match::generate(mib * MIB, c.seed)).expect("place");
    let keys = input.bytes();
    let opts = JobOptions::default();
    measure("string-match", mib, c.reps, |side| {
        let t = Instant::now();
        match side {
            Side::App => {
                let (found, stats) = string_match::run(rt, keys, &opts).expect("string match");
                Sample::app(t, stats.seconds, found)
            }
            Side::Baseline => Sample::baseline(t, string_match_baseline(keys, c.threads)),
        }
    })
}

fn main() {
    let c = config();
    let pool = pool(c.threads);
    let rt = Runtime::new(&pool);
    println!(
        "# byte apps: MapReduce app vs hand-written threads, {} threads, median of {} alternating runs (s; ratio = app / baseline)",
        pool.workers(),
        c.reps
    );
    let mut rows = Vec::new();
    for app in &c.apps {
        let size = |default: usize| c.mib.unwrap_or(default);
        rows.push(match app.as_str() {
            "word-count" => bench_word_count(&pool, &rt, &c, size(100)),
            "histogram" => bench_histogram(&pool, &rt, &c, size(400)),
            "linear-regression" => bench_linear_regression(&pool, &rt, &c, size(400)),
            "string-match" => bench_string_match(&pool, &rt, &c, size(100)),
            other => {
                eprintln!("unknown app {other:?} (word-count, histogram, linear-regression, string-match)");
                continue;
            }
        });
    }
    print_rows(&mut rows);
}
