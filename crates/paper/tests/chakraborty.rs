//! Chakraborty's figures and tables, rerun at a small size: every
//! reproducible item gives our figures and none of the paper's claims
//! fails on them; the deterministic ones (the ring schedule, the data a
//! node sends as nodes are added) are checked by value.

use numakit_paper::{catalog, ItemId, ItemReport, Paper, Reproduction, Scale, Selection, Verdict};

mod common;

const PAPER: Paper = Paper::Chakraborty;

fn rerun(selection: Selection, scale: Scale) -> Vec<ItemReport> {
    common::rerun(PAPER, selection, scale)
}

fn one(id: ItemId) -> ItemReport {
    common::one(PAPER, id)
}

#[test]
fn every_item_reruns_small_and_no_claim_fails() {
    common::assert_every_item_reruns_small(PAPER);
}

#[test]
fn every_figure_and_table_is_listed() {
    let items = catalog(Paper::Chakraborty);
    let ids: Vec<ItemId> = items.iter().map(|i| i.id).collect();
    let mut want: Vec<ItemId> = (1..=9).map(ItemId::Figure).collect();
    want.push(ItemId::Table(1));
    assert_eq!(ids, want);
    for i in &items {
        let diagram = matches!(i.id, ItemId::Figure(2..=4));
        assert_eq!(
            i.how == Reproduction::NotReproducible,
            diagram,
            "{}",
            i.name()
        );
        if !diagram {
            assert!(
                i.commands.starts_with("numakit cluster join"),
                "{}: {}",
                i.name(),
                i.commands
            );
        }
    }
}

#[test]
fn the_ring_schedule_is_algorithm_1s() {
    let r = one(ItemId::Figure(1));
    assert_eq!(
        r.outcome.rows.len(),
        8,
        "4 phases, a send and a receive each"
    );
    for row in &r.outcome.rows {
        assert_eq!(row.ours, row.published, "{}", row.label);
    }
    assert!(r
        .outcome
        .shapes
        .iter()
        .all(|s| matches!(s.verdict, Verdict::Holds(_))));
}

#[test]
fn a_node_sends_less_as_nodes_are_added() {
    let r = one(ItemId::Figure(7));
    let sent: Vec<f64> = r
        .outcome
        .rows
        .iter()
        .filter(|row| row.label.contains("data sent"))
        .filter_map(|row| row.ours)
        .collect();
    assert_eq!(sent.len(), 5);
    assert_eq!(sent[0], 0.0, "one node sends nothing");
    assert!(sent[1..].windows(2).all(|w| w[1] < w[0]), "{sent:?}");
    let shape = r
        .outcome
        .shapes
        .iter()
        .find(|s| s.claim.contains("data a node sends"));
    assert!(
        matches!(shape.map(|s| &s.verdict), Some(Verdict::Holds(_))),
        "{:?}",
        r.outcome.shapes
    );
}

#[test]
fn table_1_sets_the_paper_s_parameters_beside_numakit_s() {
    let r = one(ItemId::Table(1));
    let domain = r
        .outcome
        .rows
        .iter()
        .find(|row| row.label.starts_with("D:"))
        .expect("D");
    assert_eq!(domain.ratio(), Some(1.0));
    let tuple = r
        .outcome
        .rows
        .iter()
        .find(|row| row.label.starts_with("S_tup"))
        .expect("S_tup");
    assert_eq!(tuple.ours, Some(16.0));
}

/// The figures at Scale::Standard, for the README (run in release:
/// `cargo test --release -p numakit-paper --test chakraborty -- --ignored --nocapture`).
#[test]
#[ignore]
fn standard_scale_figures() {
    let reports = rerun(Selection::All, Scale::Standard);
    common::print(&reports);
    for r in &reports {
        for s in &r.outcome.shapes {
            assert!(
                !s.verdict.failed(),
                "{}: {} failed: {:?}",
                r.name(),
                s.claim,
                s.verdict
            );
        }
    }
}
