//! `numakit paper`: one figure or table of Li, Kiefer, Chakraborty or
//! Phoenix Rebirth rerun by numakit's own library calls, our figures
//! beside the published ones; `--list` shows what each paper offers and
//! how each item is reproduced. The catalog and the reruns are
//! `numakit_paper`'s; this module parses, calls and renders.

mod render;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result};
use clap::Args;
use numakit_paper::{catalog, ItemId, ItemReport, Paper, PaperRequest, Scale, Selection};
use serde::Serialize;

use crate::common::output;
use crate::common::progress::Spinner;

/// The options of `numakit paper`.
#[derive(Debug, Args)]
pub struct PaperArgs {
    /// The paper: LI (data shuffling), KIEFER (NUMA effects on a DBMS),
    /// CHAKRABORTY (the distributed join) or PHOENIX (Phoenix Rebirth).
    /// Without --figure or --table, every item of the paper that a program
    /// can produce is rerun.
    #[arg(value_name = "PAPER", required_unless_present = "list")]
    pub paper: Option<String>,

    /// Rerun one figure, by its number in the paper.
    #[arg(long, value_name = "N", conflicts_with = "table")]
    pub figure: Option<String>,

    /// Rerun one table, by its number in the paper (arabic or roman: 4 or
    /// IV).
    #[arg(long, value_name = "N")]
    pub table: Option<String>,

    /// List every figure and table (of PAPER, or of all four papers) and
    /// how each is reproduced: measured here, measured in multi-node
    /// guests, simulated on the paper's machine, or not at all (and why).
    #[arg(long, conflicts_with_all = ["figure", "table"])]
    pub list: bool,

    /// Small sizes: a second or two per item, enough to see each claim's
    /// direction (what the test suite runs). Default: sizes that give
    /// stable figures (up to about half a minute per item).
    #[arg(long)]
    pub small: bool,

    /// Write an SVG chart of our figures beside the paper's. With several
    /// items, one chart each: `fig.svg` becomes `fig-li-figure-6.svg`.
    #[arg(long, value_name = "FILE")]
    pub chart: Option<PathBuf>,
}

#[derive(Serialize)]
struct ListOutput {
    paper: Paper,
    citation: &'static str,
    items: Vec<numakit_paper::Item>,
}

/// Runs `numakit paper`.
pub fn run(args: &PaperArgs, json: bool, quiet: bool) -> Result<()> {
    let paper = args.paper.as_deref().map(str::parse::<Paper>).transpose()?;
    if args.list {
        return list(paper, json);
    }
    let paper =
        paper.context("name a paper (LI, KIEFER, CHAKRABORTY or PHOENIX), or give --list")?;
    let request = PaperRequest {
        paper,
        selection: selection(args)?,
        scale: if args.small {
            Scale::Small
        } else {
            Scale::Standard
        },
    };
    let topology = Arc::new(numakit_topology::discover()?);
    let spinner = Spinner::new(quiet || json);
    spinner.set_prefix(format!("paper {paper}"));
    let reports = numakit_paper::run(&request, topology, &spinner);
    spinner.finish();
    let reports = reports?;
    if let Some(path) = &args.chart {
        write_charts(path, &reports)?;
    }
    output::report(json, &reports, || render::reports(&reports))
}

fn selection(args: &PaperArgs) -> Result<Selection> {
    Ok(match (&args.figure, &args.table) {
        (Some(n), _) => Selection::One(ItemId::Figure(ItemId::parse_number(n)?)),
        (None, Some(n)) => Selection::One(ItemId::Table(ItemId::parse_number(n)?)),
        (None, None) => Selection::All,
    })
}

fn list(paper: Option<Paper>, json: bool) -> Result<()> {
    let papers: Vec<Paper> = paper.map_or_else(|| Paper::ALL.to_vec(), |p| vec![p]);
    let lists: Vec<ListOutput> = papers
        .into_iter()
        .map(|paper| ListOutput {
            paper,
            citation: paper.citation(),
            items: catalog(paper),
        })
        .collect();
    output::report(json, &lists, || {
        lists
            .iter()
            .map(|l| render::list(l.paper, &l.items))
            .collect::<Vec<_>>()
            .join("\n\n")
    })
}

fn write_charts(path: &Path, reports: &[ItemReport]) -> Result<()> {
    for report in reports {
        let target = if reports.len() == 1 {
            path.to_path_buf()
        } else {
            chart_path(path, report)
        };
        std::fs::write(&target, render::chart(report))
            .with_context(|| format!("writing {}", target.display()))?;
    }
    Ok(())
}

/// `fig.svg` -> `fig-li-figure-6.svg`.
fn chart_path(path: &Path, report: &ItemReport) -> PathBuf {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("chart");
    let ext = path.extension().and_then(|s| s.to_str()).unwrap_or("svg");
    let item = report.name().to_lowercase().replace(' ', "-");
    path.with_file_name(format!("{stem}-{item}.{ext}"))
}
