//! The frames' decisions fed pieces in adversarial orders: every pair of
//! an R piece and an S piece of a bucket joined exactly once, in both
//! modes, and inconsistent senders refused.

use super::*;

fn piece(side: Side, bucket: u32, keys: &[u64]) -> Piece {
    Piece {
        side,
        bucket,
        rows: keys.iter().map(|&k| Tuple::new(k, k)).collect(),
    }
}

#[test]
fn a_bucket_builds_once_every_sender_delivered_and_waiting_probes_follow() {
    let mut f = Frames::equi(2, 1, FrameMode::AllSenders);
    assert!(f.arrive(0, piece(Side::Left, 0, &[1])).unwrap().is_none());
    // S before its table: it waits.
    assert!(f.arrive(1, piece(Side::Right, 0, &[1])).unwrap().is_none());
    let Some(Work::Build { pieces, .. }) = f.arrive(1, piece(Side::Left, 0, &[2])).unwrap() else {
        panic!("expected a build");
    };
    assert_eq!(pieces.len(), 2);
    assert!(!f.complete());
    let refs: Vec<&[Tuple]> = pieces.iter().map(|p| &p[..]).collect();
    let probes = f
        .built(0, None, Arc::new(BuildTable::build(&refs)))
        .unwrap();
    assert_eq!(probes.len(), 1);
    assert!(matches!(
        f.arrive(0, piece(Side::Right, 0, &[2])).unwrap(),
        Some(Work::Probe { .. })
    ));
    f.end(0, Side::Left, 1).unwrap();
    f.end(1, Side::Left, 1).unwrap();
    f.end(0, Side::Right, 1).unwrap();
    assert!(!f.complete());
    f.end(1, Side::Right, 1).unwrap();
    assert!(f.complete());
}

#[test]
fn inconsistent_senders_are_errors() {
    let mut f = Frames::equi(2, 2, FrameMode::AllSenders);
    f.arrive(0, piece(Side::Left, 0, &[1])).unwrap();
    assert!(f.arrive(0, piece(Side::Left, 0, &[1])).is_err());
    assert!(f.arrive(0, piece(Side::Left, 5, &[1])).is_err());
    assert!(f.end(1, Side::Left, 3).is_err());
    assert!(f.arrive(7, piece(Side::Left, 0, &[1])).is_err());
    let mut b = Frames::broadcast(2, Side::Left);
    assert!(b.arrive(1, piece(Side::Right, 0, &[1])).is_err());
    assert!(matches!(
        b.arrive(1, piece(Side::Left, 0, &[1])).unwrap(),
        Some(Work::Broadcast { .. })
    ));
    b.end(0, Side::Left, 0).unwrap();
    b.end(1, Side::Left, 1).unwrap();
    assert!(b.complete());
}

/// Runs what the frames decide, one piece or one finished build at a
/// time, and records every (R piece, S piece) pair a probe joined.
struct Sim {
    frames: Frames,
    /// Builds asked for and not yet finished.
    builds: Vec<(u32, Option<usize>, Vec<Vec<Tuple>>)>,
    /// (R payload, S payload) of every row a probe produced.
    pairs: Vec<(u64, u64)>,
    /// Whole-bucket builds asked for.
    whole_builds: usize,
}

/// An R piece of `bucket` from `from`: one row, key `bucket`, whose
/// payload names the piece (or no rows).
fn r_piece(bucket: u32, from: usize, empty: bool) -> Piece {
    let rows = if empty {
        Vec::new()
    } else {
        vec![Tuple::new(u64::from(bucket), r_id(bucket, from))]
    };
    Piece {
        side: Side::Left,
        bucket,
        rows,
    }
}

fn s_piece(bucket: u32, from: usize) -> Piece {
    Piece {
        side: Side::Right,
        bucket,
        rows: vec![Tuple::new(u64::from(bucket), 1000 + r_id(bucket, from))],
    }
}

fn r_id(bucket: u32, from: usize) -> u64 {
    u64::from(bucket) * 100 + from as u64
}

impl Sim {
    fn new(processes: usize, buckets: u32, mode: FrameMode) -> Self {
        Self {
            frames: Frames::equi(processes, buckets, mode),
            builds: Vec::new(),
            pairs: Vec::new(),
            whole_builds: 0,
        }
    }

    fn arrive(&mut self, from: usize, piece: Piece) {
        if let Some(w) = self.frames.arrive(from, piece).unwrap() {
            self.run(w);
        }
    }

    fn run(&mut self, work: Work) {
        match work {
            Work::Build {
                bucket,
                sender,
                pieces,
            } => {
                self.whole_builds += usize::from(sender.is_none());
                self.builds.push((bucket, sender, pieces));
            }
            Work::Probe { tables, rows } => {
                for t in &tables {
                    for s in rows.iter() {
                        t.probe(s.key, |r| self.pairs.push((r.payload, s.payload)));
                    }
                }
            }
            Work::Broadcast { .. } => panic!("no broadcast in an equi-join"),
        }
    }

    /// Finishes the build asked for `k`-th among those pending.
    fn finish_build(&mut self, k: usize) {
        let (bucket, sender, pieces) = self.builds.remove(k);
        let refs: Vec<&[Tuple]> = pieces.iter().map(|p| &p[..]).collect();
        let table = Arc::new(BuildTable::build(&refs));
        for w in self.frames.built(bucket, sender, table).unwrap() {
            self.run(w);
        }
    }

    fn finish_builds(&mut self) {
        while !self.builds.is_empty() {
            self.finish_build(self.builds.len() - 1);
        }
    }

    fn end_all(&mut self, processes: usize, buckets: u32) {
        for from in 0..processes {
            for side in [Side::Left, Side::Right] {
                self.frames.end(from, side, u64::from(buckets)).unwrap();
            }
        }
    }

    /// Every pair of a non-empty R piece and an S piece of the same
    /// bucket was joined exactly once, and the frames are complete.
    fn check(mut self, processes: usize, buckets: u32, empty: &[(u32, usize)]) {
        assert!(self.frames.complete(), "nothing may wait at the end");
        let mut want = Vec::new();
        for b in 0..buckets {
            for r in (0..processes).filter(|&r| !empty.contains(&(b, r))) {
                for s in 0..processes {
                    want.push((r_id(b, r), 1000 + r_id(b, s)));
                }
            }
        }
        want.sort_unstable();
        self.pairs.sort_unstable();
        assert_eq!(self.pairs, want);
    }
}

#[test]
fn per_sender_s_before_r_is_probed_by_each_table_later() {
    let (p, buckets) = (3, 2);
    let mut sim = Sim::new(p, buckets, FrameMode::PerSender);
    for b in 0..buckets {
        for from in 0..p {
            sim.arrive(from, s_piece(b, from));
        }
    }
    assert!(sim.pairs.is_empty());
    for b in 0..buckets {
        for from in 0..p {
            sim.arrive(from, r_piece(b, from, false));
        }
    }
    assert_eq!(sim.builds.len(), 6, "a table per sender's piece");
    sim.end_all(p, buckets);
    assert!(!sim.frames.complete(), "tables are still being built");
    sim.finish_builds();
    assert_eq!(sim.whole_builds, 0);
    sim.check(p, buckets, &[]);
}

#[test]
fn per_sender_r_in_reverse_order_with_s_between_builds() {
    let (p, buckets) = (4, 1);
    let mut sim = Sim::new(p, buckets, FrameMode::PerSender);
    for from in (0..p).rev() {
        sim.arrive(from, r_piece(0, from, false));
        sim.arrive(from, s_piece(0, from));
        // Builds finish newest first, one behind the arrivals.
        if sim.builds.len() > 1 {
            sim.finish_build(0);
        }
    }
    sim.end_all(p, buckets);
    sim.finish_builds();
    sim.check(p, buckets, &[]);
}

#[test]
fn per_sender_empty_pieces_need_no_table() {
    let (p, buckets) = (3, 2);
    let mut sim = Sim::new(p, buckets, FrameMode::PerSender);
    sim.arrive(1, s_piece(0, 1));
    for b in 0..buckets {
        for from in 0..p {
            sim.arrive(from, r_piece(b, from, from == 1));
        }
    }
    assert_eq!(sim.builds.len(), 4, "no table for the empty pieces");
    sim.finish_builds();
    for b in 0..buckets {
        for from in 0..p {
            if (b, from) != (0, 1) {
                sim.arrive(from, s_piece(b, from));
            }
        }
    }
    sim.end_all(p, buckets);
    sim.check(p, buckets, &[(0, 1), (1, 1)]);
}

/// Arrivals of every piece and finished builds, interleaved in a
/// pseudo-random order (each sender sends R before S, as senders
/// do; builds finish at any later point).
fn interleaved(seed: u64, mode: FrameMode) {
    let (p, buckets) = (4, 3);
    let mut state = seed | 1;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut queues: Vec<Vec<Piece>> = (0..p)
        .map(|from| {
            let mut q: Vec<Piece> = (0..buckets)
                .map(|b| r_piece(b, from, (b as usize + from) % 5 == 0))
                .collect();
            q.extend((0..buckets).map(|b| s_piece(b, from)));
            q.reverse();
            q
        })
        .collect();
    let empty: Vec<(u32, usize)> = (0..buckets)
        .flat_map(|b| (0..p).map(move |from| (b, from)))
        .filter(|(b, from)| (*b as usize + from) % 5 == 0)
        .collect();
    let mut sim = Sim::new(p, buckets, mode);
    loop {
        let senders: Vec<usize> = (0..p).filter(|&i| !queues[i].is_empty()).collect();
        if senders.is_empty() {
            break;
        }
        if !sim.builds.is_empty() && next(3) == 0 {
            let k = next(sim.builds.len());
            sim.finish_build(k);
            continue;
        }
        let from = senders[next(senders.len())];
        if let Some(piece) = queues[from].pop() {
            sim.arrive(from, piece);
        }
    }
    sim.end_all(p, buckets);
    sim.finish_builds();
    match mode {
        FrameMode::AllSenders => {
            assert_eq!(sim.whole_builds, buckets as usize);
            // Empty pieces add no rows to a whole bucket's table.
            sim.check(p, buckets, &empty);
        }
        FrameMode::PerSender => {
            assert_eq!(sim.whole_builds, 0);
            sim.check(p, buckets, &empty);
        }
    }
}

#[test]
fn interleaved_arrivals_join_every_pair_once_in_both_modes() {
    for seed in 1..200 {
        interleaved(seed * 7919, FrameMode::PerSender);
        interleaved(seed * 7919, FrameMode::AllSenders);
    }
}

#[test]
fn a_table_nobody_asked_for_is_an_error() {
    let mut f = Frames::equi(2, 1, FrameMode::PerSender);
    let t = Arc::new(BuildTable::build(&[]));
    assert!(f.built(0, Some(0), Arc::clone(&t)).is_err(), "not arrived");
    assert!(f.built(0, None, Arc::clone(&t)).is_err(), "wrong mode");
    assert!(
        f.built(3, Some(0), Arc::clone(&t)).is_err(),
        "no such bucket"
    );
    assert!(f.arrive(0, r_piece(0, 0, false)).unwrap().is_some());
    assert!(f.arrive(0, r_piece(0, 0, false)).is_err(), "twice");
    f.built(0, Some(0), Arc::clone(&t)).unwrap();
    assert!(f.built(0, Some(0), Arc::clone(&t)).is_err(), "built twice");
    let mut a = Frames::equi(1, 1, FrameMode::AllSenders);
    assert!(a.built(0, Some(0), Arc::clone(&t)).is_err(), "wrong mode");
    assert!(a.arrive(0, r_piece(0, 0, false)).unwrap().is_some());
    a.built(0, None, Arc::clone(&t)).unwrap();
    assert!(a.built(0, None, t).is_err(), "built twice");
}

#[test]
fn frame_modes_parse_and_name_themselves() {
    for mode in [FrameMode::AllSenders, FrameMode::PerSender] {
        assert_eq!(mode.name().parse::<FrameMode>(), Ok(mode));
    }
    assert_eq!(FrameMode::default(), FrameMode::AllSenders);
    assert!("both".parse::<FrameMode>().is_err());
}
