//! The main job's papers section: what `numakit paper` offers (items per
//! paper, how many are rerun), and Li's Figure 6 (the shuffle's schedules,
//! simulated on the paper's server and measured here) rerun at the small
//! scale with its claims checked. `numakit paper` is the real entry point;
//! this shows what it does.

use std::sync::Arc;

use anyhow::{Context as _, Result};
use numakit_paper::{catalog, ItemId, ItemReport, Paper, PaperRequest, Scale, Selection, Verdict};
use numakit_topology::Topology;
use serde::Serialize;

/// What the section found.
#[derive(Serialize)]
pub struct PapersSummary {
    /// (paper, items listed, items rerun by `numakit paper`)
    pub offered: Vec<(Paper, usize, usize)>,
    /// Li's Figure 6, rerun here.
    pub example: ItemReport,
}

/// Counts each paper's items and reruns Li's Figure 6.
pub fn papers(topology: Arc<Topology>) -> Result<PapersSummary> {
    let offered = Paper::ALL
        .into_iter()
        .map(|p| {
            let items = catalog(p);
            let rerun = items.iter().filter(|i| i.runnable()).count();
            (p, items.len(), rerun)
        })
        .collect();
    let request = PaperRequest {
        paper: Paper::Li,
        selection: Selection::One(ItemId::Figure(6)),
        scale: Scale::Small,
    };
    let mut reports = numakit_paper::run(&request, topology, &numakit_ops::timing::Silent)?;
    let example = reports.pop().context("the rerun gave no report")?;
    Ok(PapersSummary { offered, example })
}

/// Section 12's lines.
pub fn lines(s: &PapersSummary) -> Vec<String> {
    let offered = s
        .offered
        .iter()
        .map(|(p, items, rerun)| format!("{p} {rerun}/{items}"))
        .collect::<Vec<_>>()
        .join(" | ");
    let mut lines = vec![format!("12. the papers, items rerun of listed: {offered}")];
    let e = &s.example;
    let rows = e
        .outcome
        .rows
        .iter()
        .filter(|r| r.ours.is_some() && r.published.is_some())
        .take(3)
        .map(|r| {
            format!(
                "{} {:.1} vs {:.1} {}",
                r.label,
                r.ours.unwrap_or_default(),
                r.published.unwrap_or_default(),
                r.unit
            )
            .trim_end()
            .to_string()
        })
        .collect::<Vec<_>>()
        .join(" | ");
    lines.push(format!("   {} ({}): {rows}", e.name(), e.how));
    for shape in &e.outcome.shapes {
        let verdict = match &shape.verdict {
            Verdict::Holds(_) => "holds",
            Verdict::Fails(_) => "DOES NOT HOLD",
            Verdict::NotShownHere(_) => "not shown here",
        };
        lines.push(format!("   claim: {} -- {verdict}", shape.claim));
    }
    lines.push("   (numakit paper --list; numakit paper LI --figure 6 --chart fig6.svg)".into());
    lines
}
