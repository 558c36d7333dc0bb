//! What the papers' tests share: a rerun of a paper's items (one at a
//! time, so that no rerun slows another's measurement on a two-CPU
//! machine), one item, and a report as text for failure messages and the
//! ignored standard-scale printouts.

#![allow(dead_code)] // each test file uses what it needs

use std::sync::{Arc, Mutex, PoisonError};

use numakit_paper::{run, ItemId, ItemReport, Paper, PaperRequest, Scale, Selection};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Reruns `selection` of `paper` at `scale` on this machine.
pub(crate) fn rerun(paper: Paper, selection: Selection, scale: Scale) -> Vec<ItemReport> {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let topology = Arc::new(numakit_topology::discover().expect("this machine's topology"));
    let request = PaperRequest {
        paper,
        selection,
        scale,
    };
    run(&request, topology, &numakit_ops::timing::Silent).expect("the rerun")
}

/// One item of `paper`, rerun small.
pub(crate) fn one(paper: Paper, id: ItemId) -> ItemReport {
    let mut reports = rerun(paper, Selection::One(id), Scale::Small);
    assert_eq!(reports.len(), 1, "one report for {paper} {id}");
    reports.remove(0)
}

/// A report as text: figures, claims and notes.
pub(crate) fn show(report: &ItemReport) -> String {
    let mut text = format!(
        "== {} ({}, {:.2} s): {}\n",
        report.name(),
        report.how,
        report.seconds,
        report.title
    );
    for row in &report.outcome.rows {
        let ours = row.ours.map_or("-".into(), |v| format!("{v:.4}"));
        let paper = row.published.map_or("-".into(), |v| format!("{v}"));
        let ratio = row
            .ratio()
            .map_or(String::new(), |v| format!("  (x{v:.2})"));
        text.push_str(&format!(
            "   {:<80} {ours:>12} {paper:>10} {}{ratio}\n",
            row.label, row.unit
        ));
    }
    for shape in &report.outcome.shapes {
        text.push_str(&format!(
            "   shape: {} -> {:?}\n",
            shape.claim, shape.verdict
        ));
    }
    for note in &report.outcome.notes {
        text.push_str(&format!("   note: {note}\n"));
    }
    text
}

/// Prints every report (the ignored standard-scale tests).
pub(crate) fn print(reports: &[ItemReport]) {
    for report in reports {
        print!("{}", show(report));
    }
}

/// Reruns every item of `paper` at the small size and checks what every
/// paper's items must give: one report per runnable item, each with a
/// figure of ours, and no claim of the paper failed on our figures.
pub(crate) fn assert_every_item_reruns_small(paper: Paper) {
    let started = std::time::Instant::now();
    let reports = rerun(paper, Selection::All, Scale::Small);
    print(&reports);
    let runnable = numakit_paper::catalog(paper)
        .iter()
        .filter(|i| i.runnable())
        .count();
    assert_eq!(
        reports.len(),
        runnable,
        "{paper}: one report per runnable item"
    );
    for report in &reports {
        assert!(
            report.outcome.rows.iter().any(|r| r.ours.is_some()),
            "no figure of ours:\n{}",
            show(report)
        );
        for shape in &report.outcome.shapes {
            assert!(!shape.verdict.failed(), "a claim failed:\n{}", show(report));
        }
    }
    println!(
        "{paper} at the small size: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
