//! Text and charts of `numakit paper`: the catalog as a list, each rerun
//! item as a table of our figures beside the paper's, its claims checked,
//! and what differs.

use numakit_paper::{Item, ItemReport, Paper, Row, Verdict};

use crate::render::chart::{self, Bar};
use crate::render::format::table;

/// `--list`: one line per item, how it is reproduced, and the reason for
/// what is not.
pub(super) fn list(paper: Paper, items: &[Item]) -> String {
    let mut rows = vec![vec![
        "item".to_string(),
        "how".to_string(),
        "title".to_string(),
    ]];
    rows.extend(
        items
            .iter()
            .map(|i| vec![i.id.to_string(), i.how.to_string(), i.title.to_string()]),
    );
    let mut text = format!("{paper}: {}\n{}", paper.citation(), table(&rows));
    let runnable = items.iter().filter(|i| i.runnable()).count();
    text.push_str(&format!(
        "\n{runnable} of {} items rerun by `numakit paper {paper}`",
        items.len()
    ));
    for item in items.iter().filter(|i| !i.runnable()) {
        text.push_str(&format!("\n  {}: {}", item.id, item.differs));
    }
    text
}

/// Every rerun item, one after the other.
pub(super) fn reports(reports: &[ItemReport]) -> String {
    reports.iter().map(report).collect::<Vec<_>>().join("\n\n")
}

fn report(report: &ItemReport) -> String {
    let mut text = format!(
        "{}: {} ({}, {:.1} s)\n",
        report.name(),
        report.title,
        report.how,
        report.seconds
    );
    text.push_str(&figures(&report.outcome.rows));
    for shape in &report.outcome.shapes {
        let (mark, detail) = match &shape.verdict {
            Verdict::Holds(d) => ("holds", d),
            Verdict::Fails(d) => ("DOES NOT HOLD", d),
            Verdict::NotShownHere(d) => ("not shown here", d),
        };
        text.push_str(&format!("\nclaim: {} -- {mark}: {detail}", shape.claim));
    }
    for note in &report.outcome.notes {
        text.push_str(&format!("\nnote: {note}"));
    }
    text.push_str(&format!("\ndiffers: {}", report.differs));
    text.push_str(&format!("\nby hand: {}", report.commands));
    text
}

fn figures(rows: &[Row]) -> String {
    let mut cells = vec![vec![
        "figure".to_string(),
        "ours".to_string(),
        "paper".to_string(),
        "ours/paper".to_string(),
    ]];
    cells.extend(rows.iter().map(|r| {
        vec![
            r.label.clone(),
            value(r.ours, &r.unit),
            value(r.published, &r.unit),
            r.ratio()
                .map_or_else(|| "-".to_string(), |x| format!("{x:.2}x")),
        ]
    }));
    table(&cells)
}

/// A figure with its unit, to three significant digits.
fn value(figure: Option<f64>, unit: &str) -> String {
    match figure {
        None => "-".to_string(),
        Some(v) => {
            let digits = if v == 0.0 || v.abs() >= 100.0 {
                0
            } else if v.abs() >= 10.0 {
                1
            } else if v.abs() >= 1.0 {
                2
            } else {
                3
            };
            format!("{v:.digits$} {unit}").trim_end().to_string()
        }
    }
}

/// Our figure (blue) beside the paper's (orange), one pair per row; rows
/// in another unit than the first are left out (one axis per chart).
pub(super) fn chart(report: &ItemReport) -> String {
    let unit = report.outcome.rows.first().map_or("", |r| r.unit.as_str());
    let mut bars = Vec::new();
    for row in report.outcome.rows.iter().filter(|r| r.unit == unit) {
        for (figure, colour, whose) in [(row.ours, 0, "ours"), (row.published, 1, "paper")] {
            if let Some(v) = figure {
                bars.push(Bar {
                    label: format!("{} ({whose})", row.label),
                    colour,
                    min: v,
                    median: v,
                    max: v,
                });
            }
        }
    }
    let title = format!("{}: {}", report.name(), report.title);
    chart::bars(&title, unit, &bars, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_three_significant_digits() {
        assert_eq!(value(Some(70.0), "GB/s"), "70.0 GB/s");
        assert_eq!(value(Some(1.234), "x"), "1.23 x");
        assert_eq!(value(Some(0.01234), "s"), "0.012 s");
        assert_eq!(value(Some(250.4), ""), "250");
        assert_eq!(value(None, "s"), "-");
    }
}
