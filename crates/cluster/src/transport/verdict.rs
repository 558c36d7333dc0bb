//! Whom to blame when a join loses a peer.
//!
//! When one process of a join is lost, the others do not all learn it the
//! same way: a peer that noticed first gives up, and its own connections
//! then close too, so a process that only looked at closed connections
//! would blame that bystander. Every process that gives up therefore says
//! whom it lost on the control connections before it leaves (see
//! [`crate::transport::heartbeat`]), and the verdict weighs the evidence:
//!
//! 1. direct evidence about a peer that neither gave up nor said goodbye
//!    (a peer that said goodbye finished: every message was delivered,
//!    so how its connections end no longer matters): it went silent, its
//!    control connection ended, or its data connection broke; the
//!    earliest such peer is blamed. A broken data connection alone is
//!    weighed only once the control connection has had `settle` to
//!    explain it (a peer that gave up closes both);
//! 2. otherwise the peer that a peer which gave up named (or that peer
//!    itself, when it named nobody or this process).
//!
//! This module decides from evidence; it does not gather it.

use std::time::{Duration, Instant};

use crate::transport::heartbeat::News;

/// What this process knows about one peer.
#[derive(Clone, Debug, Default)]
pub struct Evidence {
    /// The peer's process index.
    pub peer: usize,
    /// When and why the data connection broke (not: closed properly).
    pub data_lost: Option<(Instant, String)>,
    /// What the control connection revealed, and when.
    pub news: Option<(Instant, News)>,
}

/// The peer to name, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blame {
    /// The process blamed for the loss.
    pub peer: usize,
    /// The evidence against it, in words.
    pub why: String,
}

/// Whom process `me` blames, if anyone yet.
pub fn blame(me: usize, evidence: &[Evidence], now: Instant, settle: Duration) -> Option<Blame> {
    direct(evidence, now, settle).or_else(|| reported(me, evidence))
}

fn direct(evidence: &[Evidence], now: Instant, settle: Duration) -> Option<Blame> {
    evidence
        .iter()
        .filter_map(|e| {
            let (at, why) = match (&e.news, &e.data_lost) {
                // A peer that finished (every message delivered) or gave
                // up is not blamed for how its connections ended.
                (Some((_, News::GaveUp { .. } | News::Left)), _) => return None,
                (Some((at, News::Silent(d))), _) => (
                    *at,
                    format!(
                        "it sent nothing for {:.1} s (stopped, hung or cut off)",
                        d.as_secs_f64()
                    ),
                ),
                (Some((at, News::Closed(why))), _) => (*at, why.clone()),
                (None, Some((at, why))) => {
                    if now.saturating_duration_since(*at) < settle {
                        return None;
                    }
                    (*at, why.clone())
                }
                (None, None) => return None,
            };
            Some((at, Blame { peer: e.peer, why }))
        })
        .min_by_key(|(at, _)| *at)
        .map(|(_, b)| b)
}

fn reported(me: usize, evidence: &[Evidence]) -> Option<Blame> {
    evidence
        .iter()
        .filter_map(|e| match &e.news {
            Some((at, News::GaveUp { blamed, why })) => Some((*at, e.peer, *blamed, why)),
            _ => None,
        })
        .min_by_key(|(at, ..)| *at)
        .map(|(_, by, blamed, why)| match blamed {
            Some(b) if b != me && b != by => Blame {
                peer: b,
                why: format!("process {by} lost it: {why}"),
            },
            _ => Blame {
                peer: by,
                why: format!("it gave up: {why}"),
            },
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SETTLE: Duration = Duration::from_millis(500);

    fn at(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    fn quiet(peer: usize) -> Evidence {
        Evidence {
            peer,
            ..Evidence::default()
        }
    }

    #[test]
    fn nothing_wrong_blames_nobody() {
        let t0 = Instant::now();
        // A peer that finished may reset its data connection as it exits.
        let left = Evidence {
            peer: 2,
            news: Some((t0, News::Left)),
            data_lost: Some((t0, "connection reset by peer".into())),
        };
        assert_eq!(blame(0, &[quiet(1), left], at(t0, 10_000), SETTLE), None);
    }

    #[test]
    fn a_silent_peer_is_blamed_not_the_bystander_that_gave_up_first() {
        // Process 2 noticed process 1's silence first, said so, and left:
        // its data connection broke at process 0 too.
        let t0 = Instant::now();
        let silent_one = Evidence {
            peer: 1,
            news: Some((at(t0, 300), News::Silent(Duration::from_secs(3)))),
            ..Evidence::default()
        };
        let bystander = Evidence {
            peer: 2,
            data_lost: Some((at(t0, 100), "the connection was closed".into())),
            news: Some((
                at(t0, 90),
                News::GaveUp {
                    blamed: Some(1),
                    why: "it sent nothing for 3.0 s".into(),
                },
            )),
        };
        let now = at(t0, 1000);
        let b = blame(0, &[silent_one.clone(), bystander.clone()], now, SETTLE).unwrap();
        assert_eq!(b.peer, 1);
        assert!(b.why.contains("sent nothing for 3.0 s"), "{}", b.why);
        // Before process 0 noticed the silence itself, the report names 1.
        let b = blame(0, &[quiet(1), bystander], now, SETTLE).unwrap();
        assert_eq!(b.peer, 1);
        assert!(b.why.contains("process 2 lost it"), "{}", b.why);
    }

    #[test]
    fn a_broken_data_connection_waits_for_the_control_connection() {
        let t0 = Instant::now();
        let broken = Evidence {
            peer: 2,
            data_lost: Some((t0, "the connection was closed".into())),
            news: None,
        };
        assert_eq!(
            blame(0, std::slice::from_ref(&broken), at(t0, 100), SETTLE),
            None
        );
        let b = blame(0, std::slice::from_ref(&broken), at(t0, 600), SETTLE).unwrap();
        assert_eq!(b.peer, 2);
        // Killed: both connections end; blamed at once.
        let killed = Evidence {
            news: Some((at(t0, 1), News::Closed("the connection was closed".into()))),
            ..broken
        };
        let b = blame(0, &[killed], at(t0, 2), SETTLE).unwrap();
        assert_eq!(b.peer, 2);
        assert_eq!(b.why, "the connection was closed");
    }

    #[test]
    fn the_earliest_direct_evidence_wins_and_self_blame_names_the_reporter() {
        let t0 = Instant::now();
        let later = Evidence {
            peer: 1,
            news: Some((at(t0, 50), News::Closed("reset".into()))),
            ..Evidence::default()
        };
        let earlier = Evidence {
            peer: 3,
            news: Some((at(t0, 10), News::Silent(Duration::from_secs(1)))),
            ..Evidence::default()
        };
        assert_eq!(
            blame(0, &[later, earlier], at(t0, 60), SETTLE)
                .unwrap()
                .peer,
            3
        );
        // Peer 2 says it lost process 0 (this one): from here, 2 is lost.
        let cut_off = Evidence {
            peer: 2,
            news: Some((
                t0,
                News::GaveUp {
                    blamed: Some(0),
                    why: "it sent nothing".into(),
                },
            )),
            ..Evidence::default()
        };
        let b = blame(0, &[cut_off], at(t0, 1), SETTLE).unwrap();
        assert_eq!(b.peer, 2);
        assert!(b.why.starts_with("it gave up"), "{}", b.why);
    }
}
