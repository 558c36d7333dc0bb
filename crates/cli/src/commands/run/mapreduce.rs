//! The main job's MapReduce section: word count and linear regression on
//! generated input placed on the pool's nodes, each checked against its
//! sequential reference, with the time of each phase.

use anyhow::{ensure, Result};
use numakit_mapreduce::{Input, JobOptions, PhaseSeconds, Runtime};
use numakit_mapreduce_apps::{linear_regression, word_count};
use numakit_pool::Pool;
use serde::Serialize;

use crate::render::format::bytes;

/// What the section measured.
#[derive(Serialize)]
pub struct MapReduceSummary {
    /// Bytes of generated input of each application.
    pub input_bytes: usize,
    /// Seconds of the word-count job, its four phases together.
    pub word_count_seconds: f64,
    /// Seconds of each phase of the word count: split, map, reduce, merge.
    pub word_count_phases: PhaseSeconds,
    /// Distinct words the word count found.
    pub distinct_words: usize,
    /// The three most frequent words and their counts.
    pub top_words: Vec<(String, u64)>,
    /// Seconds of the linear-regression job, its four phases together.
    pub linear_regression_seconds: f64,
    /// The fitted line's slope `b` (of y = a + b x).
    pub slope: f64,
    /// Map tasks run on the node holding their split, and stolen.
    pub map_tasks_local: u64,
    /// Map tasks (of both jobs) that a worker took from another node's
    /// queue.
    pub map_tasks_stolen: u64,
    /// Always true: a result that differs from its sequential reference
    /// fails the section instead.
    pub verified: bool,
}

/// Input size for a main job over `size_mib` MiB: a sixteenth, at least 1 MiB.
pub fn input_bytes(size_mib: u64) -> usize {
    ((size_mib / 16).max(1) << 20) as usize
}

/// Runs word count and linear regression on `size` bytes of generated input
/// each, placed on `pool`'s nodes, and checks both against their sequential
/// references.
pub fn mapreduce(pool: &Pool, size: usize) -> Result<MapReduceSummary> {
    let rt = Runtime::new(pool);
    let text = word_count::generate(size, 7);
    let want = word_count::reference(&text);
    let mut placed = Input::place(pool, &text)?;
    let bytes_mut = placed
        .bytes_mut()
        .ok_or_else(|| anyhow::anyhow!("placed input is writable"))?;
    let got = word_count::run(&rt, bytes_mut, &word_count::default_options())?;
    ensure!(
        got.counts.len() == want.len()
            && got
                .counts
                .iter()
                .zip(&want)
                .all(|(g, w)| g.0 == w.0 && g.1 == w.1),
        "word count disagrees with the reference"
    );
    let points = linear_regression::generate(size, 8);
    let placed_points = Input::place(pool, &points)?;
    let (fit, lr_stats) =
        linear_regression::run(&rt, placed_points.bytes(), &JobOptions::default())?;
    ensure!(
        fit.sums == linear_regression::reference(&points).sums,
        "linear regression disagrees with the reference"
    );
    let tasks = got.stats.per_node.iter().chain(&lr_stats.per_node);
    let (local, stolen) = tasks.fold((0, 0), |(l, s), n| (l + n.local, s + n.stolen));
    Ok(MapReduceSummary {
        input_bytes: size,
        word_count_seconds: got.stats.seconds.total(),
        word_count_phases: got.stats.seconds,
        distinct_words: got.counts.len(),
        top_words: got
            .counts
            .iter()
            .take(3)
            .map(|(w, n)| (String::from_utf8_lossy(w).into_owned(), *n))
            .collect(),
        linear_regression_seconds: lr_stats.seconds.total(),
        slope: fit.b,
        map_tasks_local: local,
        map_tasks_stolen: stolen,
        verified: true,
    })
}

/// The section's lines in the main job's text output.
pub fn lines(m: &MapReduceSummary) -> Vec<String> {
    let p = &m.word_count_phases;
    let top: Vec<String> = m
        .top_words
        .iter()
        .map(|(w, n)| format!("{w} {n}"))
        .collect();
    vec![
        format!(
            "7. MapReduce (Phoenix applications) on {} of generated input each, checked against the sequential references:",
            bytes(m.input_bytes as u64)
        ),
        format!(
            "   word count {:.3} s (split {:.3} | map {:.3} | reduce {:.3} | merge {:.3}): {} distinct words, most frequent {}",
            m.word_count_seconds,
            p.split,
            p.map,
            p.reduce,
            p.merge,
            m.distinct_words,
            top.join(", ")
        ),
        format!(
            "   linear regression {:.3} s: slope {:.3}; map tasks {} on their data's node, {} stolen",
            m.linear_regression_seconds, m.slope, m.map_tasks_local, m.map_tasks_stolen
        ),
        "   (numakit mapreduce <app> for the other applications, --sweep for the speedup)".to_string(),
    ]
}
