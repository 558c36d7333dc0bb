//! Kiefer et al.'s items: every runnable one reruns at a small size with
//! our figures and no failed claim, and the deterministic claims (the
//! presets, the strategies' placements, the simulator's directions) hold.

use numakit_paper::{catalog, ItemId, ItemReport, Paper, Reproduction, Scale, Selection, Verdict};

mod common;

const PAPER: Paper = Paper::Kiefer;

fn rerun(selection: Selection, scale: Scale) -> Vec<ItemReport> {
    common::rerun(PAPER, selection, scale)
}

fn one(id: ItemId) -> ItemReport {
    common::one(PAPER, id)
}

fn holds(report: &ItemReport, claim_starts: &str) {
    let shape = report
        .outcome
        .shapes
        .iter()
        .find(|s| s.claim.starts_with(claim_starts))
        .unwrap_or_else(|| panic!("{}: no claim {claim_starts:?}: {report:#?}", report.name()));
    assert!(
        matches!(shape.verdict, Verdict::Holds(_)),
        "{}: {shape:?}",
        report.name()
    );
}

#[test]
fn every_item_is_listed_with_its_reason() {
    let items = catalog(Paper::Kiefer);
    let ids: Vec<ItemId> = items.iter().map(|i| i.id).collect();
    let mut expected: Vec<ItemId> = (1..=8).map(ItemId::Figure).collect();
    expected.extend([ItemId::Table(1), ItemId::Table(2)]);
    assert_eq!(ids, expected);
    for item in &items {
        let reproducible = item.how != Reproduction::NotReproducible;
        assert_eq!(reproducible, item.runnable(), "{}", item.name());
        assert_eq!(reproducible, !item.commands.is_empty(), "{}", item.name());
        assert!(!item.differs.is_empty(), "{}", item.name());
    }
    for n in [3, 7, 8] {
        let item = items.iter().find(|i| i.id == ItemId::Figure(n)).unwrap();
        assert_eq!(item.how, Reproduction::NotReproducible, "Figure {n}");
    }
}

#[test]
fn every_runnable_item_reruns_small_with_figures_and_no_failed_claim() {
    common::assert_every_item_reruns_small(PAPER);
}

#[test]
fn the_presets_are_table_2_and_figure_1() {
    let table = one(ItemId::Table(2));
    holds(&table, "numakit's presets describe");
    assert!(
        table.outcome.rows.iter().all(|r| r.ratio() == Some(1.0)),
        "{table:#?}"
    );
    let figure = one(ItemId::Figure(1));
    holds(&figure, "four CPUs fully connected");
    holds(&figure, "each CPU has its own memory");
}

#[test]
fn the_strategies_place_as_figure_4_draws() {
    let report = one(ItemId::Figure(4));
    holds(&report, "threads bound");
    // 2 instances on the AMD machine, 4 on the Intel one, three strategies.
    assert_eq!(report.outcome.rows.len(), 3 * (2 + 4));
    assert!(report
        .outcome
        .rows
        .iter()
        .all(|r| r.ratio() == Some(1.0) || r.published == Some(0.0)));
}

#[test]
fn the_simulator_shows_the_remote_direction_on_the_papers_machines() {
    let amd = one(ItemId::Figure(5));
    holds(&amd, "1-ahead (memory on the other socket) degrades");
    holds(&amd, "interleave degrades less than 1-ahead");
    let intel = one(ItemId::Figure(6));
    holds(&intel, "interleave lies between aligned and 1-ahead");
    holds(
        &intel,
        "1-ahead puts the most pressure on a single QPI link",
    );
}

/// The Standard-scale reports, printed (run with `--ignored --nocapture`
/// in release to fill the README's table; `KIEFER_SCALE=small` prints the
/// small ones instead).
#[test]
#[ignore = "Standard scale: a minute or two in release"]
fn standard_scale_reports() {
    let scale = match std::env::var("KIEFER_SCALE").as_deref() {
        Ok("small") => Scale::Small,
        _ => Scale::Standard,
    };
    for report in rerun(Selection::All, scale) {
        println!(
            "== {} ({:.1} s): {}",
            report.name(),
            report.seconds,
            report.title
        );
        for row in &report.outcome.rows {
            let ours = row.ours.map_or("-".to_string(), |v| format!("{v:.3}"));
            let paper = row.published.map_or("-".to_string(), |v| format!("{v:.3}"));
            let ratio = row.ratio().map_or(String::new(), |r| format!(" ({r:.2}x)"));
            println!("  {}: {ours} vs {paper} {}{ratio}", row.label, row.unit);
        }
        for shape in &report.outcome.shapes {
            println!("  shape: {}: {:?}", shape.claim, shape.verdict);
        }
        for note in &report.outcome.notes {
            println!("  note: {note}");
        }
    }
}
