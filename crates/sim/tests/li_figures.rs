//! Predictions against Li et al. (CIDR 2013), Figures 6 and 7, and a
//! prediction for every preset. Goals the honest model misses are pinned to
//! what it does predict, with the reason (see the crate docs).

use numakit_shuffle::{Strategy, SyncMode};
use numakit_sim::{plan, plan_from_report, predict_machine, Calibration, MachineReport};
use numakit_topology::presets;

/// One thread per core, as in Figure 7's sweep (8 per socket on Nehalem-EX).
fn report(name: &str, cal: &Calibration) -> MachineReport {
    let topo = presets::topology(name).unwrap();
    let cores = topo.core_count() / topo.nodes.len();
    predict_machine(&topo, Some(cores), cal).unwrap()
}

/// Every hardware thread: the library's default, "maximum bandwidth".
fn report_all_threads(name: &str) -> MachineReport {
    let topo = presets::topology(name).unwrap();
    predict_machine(&topo, None, &Calibration::li_nehalem()).unwrap()
}

#[test]
fn figure_6_with_every_hardware_thread() {
    let four = report_all_threads("nehalem-ex-4s");
    assert_eq!(four.layout.threads(), 64);
    let naive = gbs(&four, Strategy::Naive, SyncMode::Tight);
    let ring = gbs(&four, Strategy::Ring, SyncMode::Tight);
    let migration = gbs(&four, Strategy::Migration, SyncMode::Tight);
    assert!(within(naive, 22.0, 0.15), "naive {naive}");
    assert!(within(ring, 70.0, 0.15), "ring {ring}");
    assert!(within(migration, 94.0, 0.15), "migration {migration}");
    for sync in SyncMode::ALL {
        let random = gbs(&four, Strategy::Random, sync);
        assert!(naive < random && random < ring, "random ({sync}) {random}");
    }
    let eight = report_all_threads("nehalem-ex-8s");
    assert_eq!(eight.layout.threads(), 128);
    assert!(
        gbs(&eight, Strategy::Ring, SyncMode::Tight) < ring,
        "ring lower on eight sockets"
    );
    // Migration on eight sockets: the model predicts about 56 GB/s, not the
    // paper's ~94 (see the crate docs: broadcast snoops over the slower
    // cross-chassis links). Pinned, not hidden: it is exactly the bound of
    // the chassis cut (see `eight_socket_migration_is_bound_by_the_cut`).
    let mig8 = gbs(&eight, Strategy::Migration, SyncMode::Tight);
    assert!(within(mig8, cut_bound(0.285), 0.01), "migration 8s {mig8}");
}

/// Migration on nehalem-ex-8s when each of the four 7.8 GB/s cross-chassis
/// links carries the snoop requests of one socket's reads and the snoop
/// responses of four sockets' reads, every socket reading `r` locally:
/// `5 a r = 7.8 (1 + a)`, times eight sockets.
fn cut_bound(a: f64) -> f64 {
    8.0 * 7.8 * (1.0 + a) / (5.0 * a)
}

/// Li's 8-socket wiring is not published; the preset assumes the twisted
/// cube (every socket two hops from any other). The plain cube (a socket
/// wired to the same position in the other chassis, three hops across)
/// does no better, and neither do cross links as fast as the others (the
/// in-chassis links then bind at about 65 GB/s), so the gap to the paper's
/// ~94 GB/s is not a wiring choice. With a snoop coefficient of about 0.153
/// (little more than half the 4-socket fit) the preset would give 94.
#[test]
fn eight_socket_migration_is_bound_by_the_cut() {
    let cal = Calibration::li_nehalem();
    let twisted = presets::topology("nehalem-ex-8s").unwrap();
    let mut cube = twisted.clone();
    let cross = |l: &numakit_topology::Link| (l.a < 4) != (l.b < 4);
    let mut partners = [4, 5, 6, 7].into_iter();
    for link in cube.links.iter_mut().filter(|l| cross(l)) {
        link.a = link.a.min(link.b);
        link.b = partners.next().unwrap();
    }
    assert!(cube
        .links
        .iter()
        .filter(|l| cross(l))
        .all(|l| l.b == l.a + 4));
    assert_eq!(cube.hops(0, 7), Some(3));
    assert_eq!(twisted.hops(0, 6), Some(2));
    for topo in [&twisted, &cube] {
        let r = predict_machine(topo, None, &cal).unwrap();
        let mig = gbs(&r, Strategy::Migration, SyncMode::Tight);
        assert!(mig <= cut_bound(0.285) * 1.01, "migration {mig}");
    }
    let mut fast = twisted.clone();
    fast.links.iter_mut().for_each(|l| l.bandwidth_gbs = 10.9);
    let r = predict_machine(&fast, None, &cal).unwrap();
    let mig = gbs(&r, Strategy::Migration, SyncMode::Tight);
    assert!(
        mig < 94.0 * 0.8,
        "migration with 10.9 GB/s cross links: {mig}"
    );
    let lighter = Calibration {
        coherence_request: 0.153,
        coherence_response: 0.153,
        ..cal
    };
    let r = predict_machine(&twisted, None, &lighter).unwrap();
    let mig = gbs(&r, Strategy::Migration, SyncMode::Tight);
    assert!(within(mig, 94.0, 0.03), "migration with a = 0.153: {mig}");
}

fn gbs(r: &MachineReport, strategy: Strategy, sync: SyncMode) -> f64 {
    r.row(strategy, sync).unwrap().gbs
}

fn within(predicted: f64, paper: f64, tolerance: f64) -> bool {
    (predicted / paper - 1.0).abs() <= tolerance
}

#[test]
fn every_preset_gets_a_report_and_a_plan() {
    let cal = Calibration::li_nehalem();
    for name in presets::names() {
        let r = report(name, &cal);
        assert_eq!(r.rows.len(), 10, "{name}");
        let per = r.layout.threads_per_socket;
        // Every count on sockets of up to 16 threads, about 24 on larger.
        let expected = if per <= 16 { per..=per } else { 20..=26 };
        assert!(
            expected.contains(&r.sweep.len()),
            "{name}: {}",
            r.sweep.len()
        );
        assert_eq!(r.sweep.last().map(|p| p.threads_per_socket), Some(per));
        for row in &r.rows {
            assert!(row.gbs.is_finite() && row.gbs > 0.0, "{name}: {row:?}");
        }
        let p = plan_from_report(&r).unwrap();
        assert!(p.predicted_gbs > 0.0 && !p.why.is_empty(), "{name}: {p:?}");
    }
}

#[test]
fn four_sockets_naive_ring_random_follow_figure_6() {
    let r = report("nehalem-ex-4s", &Calibration::li_nehalem());
    assert_eq!(r.layout.threads(), 32);
    let naive = gbs(&r, Strategy::Naive, SyncMode::Tight);
    let ring = gbs(&r, Strategy::Ring, SyncMode::Tight);
    assert!(within(naive, 22.0, 0.15), "naive {naive}");
    assert!(within(ring, 70.0, 0.15), "ring {ring}");
    for sync in SyncMode::ALL {
        let random = gbs(&r, Strategy::Random, sync);
        assert!(naive < random && random < ring, "random ({sync}) {random}");
    }
    assert!(
        gbs(&r, Strategy::Ring, SyncMode::Tight)
            >= gbs(&r, Strategy::Ring, SyncMode::Loose) * 0.999
    );
}

/// Missed goal: Figure 6 has migration at 94 GB/s; the per-thread cap of
/// Li §2 (24.7 / 12 GB/s) allows 32 threads at most 65.9 GB/s.
#[test]
fn four_socket_migration_is_held_by_the_thread_cap_of_section_2() {
    let cal = Calibration::li_nehalem();
    let r = report("nehalem-ex-4s", &cal);
    let migration = r.row(Strategy::Migration, SyncMode::Tight).unwrap();
    // At the cap, less what the slowest consumer of each tight step costs
    // (the pieces' assumed jitter).
    let cap = 32.0 * cal.per_thread_gbs;
    assert!(
        migration.gbs <= cap * 1.000_001
            && migration.gbs >= cap / (1.0 + numakit_sim::simulate::DEFAULT_JITTER),
        "{migration:?}"
    );
    assert_eq!(migration.bottleneck, "per-thread limit");
    assert!(migration.gbs >= gbs(&r, Strategy::Ring, SyncMode::Tight) * 0.999);
    let plan = plan(&presets::topology("nehalem-ex-4s").unwrap(), None, &cal).unwrap();
    assert_eq!(
        (plan.strategy, plan.sync),
        (Strategy::Ring, SyncMode::Tight)
    );
}

/// Ring is lower on eight sockets (met). Migration is within 15% of the
/// model's own four-socket figure ("similar on both machines") but far
/// from 94 GB/s (missed: thread cap, and snoops on the slow links).
#[test]
fn eight_sockets_ring_drops_and_migration_stays_near_four_sockets() {
    let cal = Calibration::li_nehalem();
    let four = report("nehalem-ex-4s", &cal);
    let eight = report("nehalem-ex-8s", &cal);
    assert_eq!(eight.layout.threads(), 64);
    let ring8 = gbs(&eight, Strategy::Ring, SyncMode::Tight);
    assert!(
        ring8 < gbs(&four, Strategy::Ring, SyncMode::Tight),
        "ring {ring8}"
    );
    let mig4 = gbs(&four, Strategy::Migration, SyncMode::Tight);
    let mig8 = gbs(&eight, Strategy::Migration, SyncMode::Tight);
    assert!(within(mig8, mig4, 0.15), "migration 8s {mig8} vs 4s {mig4}");
    assert!(
        within(mig8, 56.3, 0.02),
        "documented figure changed: {mig8}"
    );
    let bottleneck = &eight
        .row(Strategy::Migration, SyncMode::Tight)
        .unwrap()
        .bottleneck;
    assert!(bottleneck.contains("coherence 100%"), "{bottleneck}");
    let p = plan_from_report(&eight).unwrap();
    assert!(p.migration_better, "{p:?}");
}

/// Figure 7: naive stops at ~12 threads (met); migration never below ring
/// (met); ring linear to ~20 threads then saturating (missed: with the §2
/// thread cap ring stays linear, and ties migration, up to 32 threads).
#[test]
fn figure_7_shape_on_four_sockets() {
    let r = report("nehalem-ex-4s", &Calibration::li_nehalem());
    let at = |threads: usize| r.sweep.iter().find(|p| p.threads == threads).unwrap();
    let naive12 = at(12).naive_gbs;
    assert!(within(naive12, 22.0, 0.15), "{naive12}");
    for p in r.sweep.iter().filter(|p| p.threads >= 12) {
        assert!(within(p.naive_gbs, naive12, 0.05), "naive not flat: {p:?}");
    }
    assert!(
        at(8).naive_gbs < 0.75 * naive12,
        "naive still rising below 12 threads"
    );
    for p in &r.sweep {
        assert!(
            p.migration_gbs >= p.ring_gbs * 0.999 && p.ring_gbs >= p.naive_gbs * 0.999,
            "{p:?}"
        );
    }
    assert!(
        within(at(32).ring_gbs, 2.0 * at(16).ring_gbs, 0.01),
        "documented: ring linear to 32"
    );
}

/// Not the calibration: what the same model gives if the thread cap were
/// read off Figure 7 (94 GB/s / 32 threads) instead of §2's 12 threads.
/// Table 1 and §2 stay reproduced, and Figures 6 and 7 on four sockets
/// follow; this is why the misses above are put on the thread cap.
#[test]
fn what_if_the_thread_cap_came_from_figure_7() {
    let cal = Calibration {
        per_thread_gbs: 94.0 / 32.0,
        ..Calibration::li_nehalem()
    };
    for c in numakit_sim::check_scenarios(&cal).unwrap() {
        assert!(c.relative_error.abs() <= 0.10, "{c:?}");
    }
    let r = report("nehalem-ex-4s", &cal);
    assert!(within(gbs(&r, Strategy::Ring, SyncMode::Tight), 70.0, 0.15));
    assert!(within(
        gbs(&r, Strategy::Migration, SyncMode::Tight),
        94.0,
        0.15
    ));
    let at = |threads: usize| r.sweep.iter().find(|p| p.threads == threads).unwrap();
    let per_thread = at(4).ring_gbs / 4.0;
    assert!(
        at(20).ring_gbs >= 0.95 * 20.0 * per_thread,
        "ring linear to 20 threads"
    );
    assert!(
        at(32).ring_gbs <= 0.80 * 32.0 * per_thread,
        "ring saturates after"
    );
    assert!(
        at(32).migration_gbs > 1.2 * at(32).ring_gbs,
        "migration scales best"
    );
}
