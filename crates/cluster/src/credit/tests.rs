use std::sync::Arc;

use super::*;

#[test]
fn a_sender_never_has_more_than_its_credit_out() {
    // 300 bytes over 3 processes: 150 per peer.
    let mut c = SendCredits::bounded(300, 3);
    assert_eq!(c.credit(), Some(150));
    assert!(c.take(1, 100));
    assert!(c.take(1, 50));
    assert!(!c.take(1, 1), "150 of 150 are out");
    assert!(!c.take(1, 10), "still waiting: one wait, not two");
    assert_eq!(c.waits(), 1);
    assert!(c.take(2, 150), "another peer has its own credit");
    assert_eq!(c.outstanding(1), 150);
    c.give_back(1, 100).unwrap();
    assert!(c.take(1, 100));
    assert_eq!(c.outstanding(1), 150);
    assert!(c.wait_seconds() >= 0.0);
}

#[test]
fn credits_come_back_and_too_much_back_is_an_error() {
    let mut c = SendCredits::bounded(64, 2);
    assert!(c.take(1, 64));
    c.give_back(1, 64).unwrap();
    assert_eq!(c.outstanding(1), 0);
    assert!(c.give_back(1, 1).is_err());
    assert!(c.give_back(7, 1).is_err(), "no such peer");
}

#[test]
fn a_lone_oversized_piece_still_goes() {
    let mut c = SendCredits::bounded(10, 2);
    assert!(c.take(1, 1_000), "nothing is out: the piece goes alone");
    assert!(!c.take(1, 1_000), "but not a second one");
    assert!(!c.take(1, 1));
    c.give_back(1, 1_000).unwrap();
    assert!(c.take(1, 1_000));
    assert!(c.take(1, 0), "empty pieces need no credit");
}

#[test]
fn unbounded_credits_never_wait() {
    let mut c = SendCredits::unbounded();
    assert!(!c.is_bounded());
    for _ in 0..10 {
        assert!(c.take(1, u64::MAX / 16));
    }
    assert_eq!(c.waits(), 0);
}

#[test]
fn the_ledger_gives_back_what_tables_absorbed_and_probes_dropped() {
    let mut l = ReceiveLedger::new(3);
    l.building(0, 1, 100);
    l.building(0, 2, 50);
    l.building(1, 1, 30);
    assert_eq!(l.held(), 180);
    l.built(0, None);
    assert_eq!(l.held(), 30);
    assert_eq!(l.take_owed(), vec![(1, 100), (2, 50)]);
    assert!(l.take_owed().is_empty(), "owed once");
    l.built(1, Some(2));
    assert_eq!(l.held(), 30, "sender 1's piece is still waiting");
    l.built(1, Some(1));
    assert_eq!(l.take_owed(), vec![(1, 30)]);

    let rows = Arc::new(vec![Tuple::new(1, 1); 4]);
    let probe = Arc::clone(&rows);
    l.shared(2, row_bytes(4), Arc::downgrade(&rows));
    drop(rows);
    l.poll();
    assert_eq!(l.held(), 64, "a probe still uses the rows");
    drop(probe);
    l.poll();
    assert_eq!(l.held(), 0);
    assert_eq!(l.take_owed(), vec![(2, 64)]);
    assert_eq!(l.peak(), 180);
}
