//! Li et al.'s figures and table, rerun at a small size: every reproducible
//! item gives our figures and none of the paper's claims fails on them; the
//! deterministic ones (the schedules of Figures 3 to 5, the simulator's
//! ring above naive and the aggregation crossover) are checked by value.
//! The Standard-scale rerun that fills the README is an ignored test:
//! `cargo test --release -p numakit-paper --test li -- --ignored --nocapture`.

use std::time::Instant;

use numakit_paper::{catalog, ItemId, ItemReport, Paper, Reproduction, Scale, Selection, Verdict};

mod common;

const PAPER: Paper = Paper::Li;

fn rerun(selection: Selection, scale: Scale) -> Vec<ItemReport> {
    common::rerun(PAPER, selection, scale)
}

fn one(id: ItemId) -> ItemReport {
    common::one(PAPER, id)
}

fn ours(report: &ItemReport, label: &str) -> f64 {
    report
        .outcome
        .rows
        .iter()
        .find(|r| r.label.starts_with(label))
        .and_then(|r| r.ours)
        .unwrap_or_else(|| panic!("{}: no row {label:?}", report.name()))
}

fn holds(report: &ItemReport, claim: &str) -> bool {
    report
        .outcome
        .shapes
        .iter()
        .any(|s| s.claim.contains(claim) && matches!(s.verdict, Verdict::Holds(_)))
}

#[test]
fn every_item_reruns_small_and_no_claim_fails() {
    common::assert_every_item_reruns_small(PAPER);
}

#[test]
fn every_figure_and_the_table_are_listed() {
    let items = catalog(Paper::Li);
    let ids: Vec<ItemId> = items.iter().map(|i| i.id).collect();
    let mut want: Vec<ItemId> = (1..=11).map(ItemId::Figure).collect();
    want.push(ItemId::Table(1));
    assert_eq!(ids, want);
    let figure_2 = items
        .iter()
        .find(|i| i.id == ItemId::Figure(2))
        .expect("Figure 2");
    assert_eq!(figure_2.how, Reproduction::NotReproducible);
    for i in items.iter().filter(|i| i.runnable()) {
        assert!(
            i.commands.starts_with("numakit "),
            "{}: {}",
            i.name(),
            i.commands
        );
    }
}

#[test]
fn the_simulated_ring_beats_naive_on_the_four_socket_server() {
    let r = one(ItemId::Figure(6));
    let naive = ours(&r, "simulated 4 sockets, naive (tight)");
    let ring = ours(&r, "simulated 4 sockets, ring (tight)");
    let migration = ours(&r, "simulated 4 sockets, migration (tight)");
    assert!(ring > 2.0 * naive, "ring {ring} vs naive {naive}");
    assert!(migration > ring, "migration {migration} vs ring {ring}");
    assert!(
        (naive / 22.0 - 1.0).abs() < 0.15,
        "naive {naive} vs the paper's 22"
    );
    assert!(
        (ring / 70.0 - 1.0).abs() < 0.15,
        "ring {ring} vs the paper's 70"
    );
}

#[test]
fn the_schedules_use_the_channels_and_links_the_paper_draws() {
    let naive = one(ItemId::Figure(3));
    assert_eq!(ours(&naive, "step 0: memory channels"), 1.0);
    assert_eq!(ours(&naive, "step 0: directed QPI links"), 3.0);
    let ring = one(ItemId::Figure(4));
    for k in 0..3 {
        assert_eq!(ours(&ring, &format!("step {k}: memory channels")), 4.0);
        assert_eq!(ours(&ring, &format!("step {k}: directed QPI links")), 12.0);
    }
    let rings = one(ItemId::Figure(5));
    assert_eq!(ours(&rings, "step 0: s0.p1 reads partition s1.d0"), 4.0);
    assert!(rings
        .outcome
        .notes
        .iter()
        .any(|n| n.contains("s0.d0 s1.d0 s2.d0 s3.d0")));
}

#[test]
fn the_aggregation_crossover_lies_on_the_papers_side_in_the_simulator() {
    let r = one(ItemId::Figure(10));
    assert!(
        holds(&r, "migration beats shuffling"),
        "{:?}",
        r.outcome.shapes
    );
    assert!(
        holds(&r, "4 sockets: the ring shuffle overtakes migration"),
        "{:?}",
        r.outcome.shapes
    );
    let keys = ours(&r, "simulated 4 sockets: ring overtakes migration");
    assert!(
        (32.0 * 1024.0..=4.0 * 1024.0 * 1024.0).contains(&keys),
        "crossover at {keys}"
    );
}

#[test]
fn table_1_is_replayed_within_three_percent() {
    let r = one(ItemId::Table(1));
    for row in r
        .outcome
        .rows
        .iter()
        .filter(|row| row.label.starts_with("simulated"))
    {
        let ratio = row.ratio().expect("a published figure");
        assert!((ratio - 1.0).abs() <= 0.03, "{}: x{ratio:.3}", row.label);
    }
}

/// The figures of the README: every item at Scale::Standard. Slow; run
/// with `--release -- --ignored --nocapture`.
#[test]
#[ignore]
fn standard_scale_report() {
    let started = Instant::now();
    let reports = rerun(Selection::All, Scale::Standard);
    common::print(&reports);
    println!(
        "whole paper at Scale::Standard: {:.1} s",
        started.elapsed().as_secs_f64()
    );
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
