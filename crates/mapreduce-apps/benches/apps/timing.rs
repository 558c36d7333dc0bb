//! Timing the two sides: alternating runs, medians and spreads, the
//! rows printed against the goal. It runs nothing itself.

use numakit_ops::timing::median;
use std::time::Instant;

use numakit_mapreduce::PhaseSeconds;

use crate::GOAL;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    App,
    Baseline,
}

/// One timed run: its seconds, the app's phases, and its result.
pub(crate) struct Sample<T> {
    pub(crate) seconds: f64,
    pub(crate) phases: Option<PhaseSeconds>,
    pub(crate) result: T,
}

impl<T> Sample<T> {
    pub(crate) fn app(started: Instant, phases: PhaseSeconds, result: T) -> Self {
        let seconds = started.elapsed().as_secs_f64();
        Self {
            seconds,
            phases: Some(phases),
            result,
        }
    }

    pub(crate) fn baseline(started: Instant, result: T) -> Self {
        let seconds = started.elapsed().as_secs_f64();
        Self {
            seconds,
            phases: None,
            result,
        }
    }
}

/// One app's figures: seconds of every run of each side, the app's phases.
pub(crate) struct Row {
    app: &'static str,
    mib: usize,
    app_times: Vec<f64>,
    base_times: Vec<f64>,
    pub(crate) phases: Vec<PhaseSeconds>,
}

/// Runs each side once untimed (their results must agree), then `reps`
/// times alternately. `run` times its own call (so that building the
/// result to compare is not timed).
pub(crate) fn measure<T: PartialEq + std::fmt::Debug>(
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

pub(crate) fn print_rows(rows: &mut [Row]) {
    println!(
        "{:<18} {:>5} {:>24} {:>24} {:>7}  goal {GOAL}",
        "app", "MiB", "app s (min-max)", "baseline s (min-max)", "ratio"
    );
    for r in rows.iter_mut() {
        r.app_times.sort_by(f64::total_cmp);
        r.base_times.sort_by(f64::total_cmp);
        let (am, bm) = (median(&r.app_times), median(&r.base_times));
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
        let phase =
            |f: fn(&PhaseSeconds) -> f64| median(&r.phases.iter().map(f).collect::<Vec<_>>()) * 1e3;
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
