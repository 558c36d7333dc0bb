//! The simulation's active flows, grouped by route (source socket, socket
//! read into), each group keeping its members in order of completion.
//!
//! Max-min fair sharing gives every flow of a route the same rate, so a
//! route needs no per-member bookkeeping between events: it keeps the bytes
//! served to each of its members so far (its *virtual time*), and a member
//! that joined with `left` bytes to go finishes when that reaches the mark
//! it joined with plus `left`. An event then costs time in the number of
//! routes (at most sockets²) plus the members that finish, not in the
//! number of consumers, and a schedule of N consumers over N steps runs
//! in about N² (routes + log N) instead of N³.
//!
//! It holds no rates and no machine: [`crate::simulate`] shares the machine
//! among [`Routes::flows`] and calls [`Routes::advance`] with the result.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A member of a route: finishes when the route's served bytes reach `mark`.
#[derive(Clone, Copy, Debug)]
struct Member {
    mark: f64,
    consumer: usize,
}

impl PartialEq for Member {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Member {}

impl PartialOrd for Member {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Member {
    /// Reversed, so that the std max-heap pops the earliest mark first
    /// (ties: the lowest consumer).
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .mark
            .total_cmp(&self.mark)
            .then(other.consumer.cmp(&self.consumer))
    }
}

/// One route's members and the bytes served to each so far.
#[derive(Debug, Default)]
struct Route {
    served: f64,
    members: BinaryHeap<Member>,
}

/// The active flows of a run, by route.
#[derive(Debug)]
pub(crate) struct Routes {
    sockets: usize,
    /// Indexed `source * sockets + destination`.
    routes: Vec<Route>,
    /// Members over all routes.
    active: usize,
}

impl Routes {
    /// No flows on a machine of `sockets` sockets.
    pub(crate) fn new(sockets: usize) -> Self {
        Self {
            sockets,
            routes: (0..sockets * sockets).map(|_| Route::default()).collect(),
            active: 0,
        }
    }

    /// Consumer `consumer` starts a flow of `bytes` from socket `from`
    /// into socket `to`.
    pub(crate) fn join(&mut self, consumer: usize, (from, to): (usize, usize), bytes: f64) {
        let route = &mut self.routes[from * self.sockets + to];
        route.members.push(Member {
            mark: route.served + bytes,
            consumer,
        });
        self.active += 1;
    }

    /// Whether any flow is active.
    pub(crate) fn any(&self) -> bool {
        self.active > 0
    }

    /// The routes with members, as ((source, destination), members), in
    /// route order: what [`crate::machine::ReadTable::share`] takes.
    pub(crate) fn flows(&self) -> Vec<((usize, usize), usize)> {
        self.routes
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.members.is_empty())
            .map(|(i, r)| ((i / self.sockets, i % self.sockets), r.members.len()))
            .collect()
    }

    /// Seconds until the first member of each of [`Routes::flows`] finishes
    /// at `rates` (GB/s per flow, in the same order), and the least of them.
    pub(crate) fn next_finish(&self, rates: &[f64]) -> f64 {
        self.busy()
            .zip(rates)
            .map(|(r, &rate)| {
                r.members
                    .peek()
                    .map_or(f64::INFINITY, |m| (m.mark - r.served) / (rate * 1e9))
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// Advances every route by `dt` seconds at `rates` and returns the
    /// consumers that finish by then (within `slack` of `dt`, relatively),
    /// lowest first. Their flows end.
    pub(crate) fn advance(&mut self, rates: &[f64], dt: f64, slack: f64) -> Vec<usize> {
        let mut finished = Vec::new();
        let busy = self.routes.iter_mut().filter(|r| !r.members.is_empty());
        for (route, &rate) in busy.zip(rates) {
            let speed = rate * 1e9;
            while let Some(m) = route.members.peek() {
                if (m.mark - route.served) / speed > dt * (1.0 + slack) {
                    break;
                }
                finished.push(m.consumer);
                route.members.pop();
            }
            route.served += speed * dt;
        }
        self.active -= finished.len();
        finished.sort_unstable();
        finished
    }

    fn busy(&self) -> impl Iterator<Item = &Route> {
        self.routes.iter().filter(|r| !r.members.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_of_a_route_finish_in_order_of_their_bytes() {
        let mut routes = Routes::new(2);
        routes.join(0, (0, 1), 3e9);
        routes.join(1, (0, 1), 1e9);
        routes.join(2, (1, 1), 2e9);
        assert_eq!(routes.flows(), vec![((0, 1), 2), ((1, 1), 1)]);
        // 1 GB/s per flow: consumer 1 ends first, after 1 s.
        let rates = [1.0, 1.0];
        let dt = routes.next_finish(&rates);
        assert!((dt - 1.0).abs() < 1e-12);
        assert_eq!(routes.advance(&rates, dt, 1e-9), vec![1]);
        // A late joiner counts from the route's mark when it joins.
        routes.join(3, (0, 1), 0.5e9);
        let rates = [2.0, 1.0];
        let dt = routes.next_finish(&rates);
        assert!((dt - 0.25).abs() < 1e-12, "{dt}");
        assert_eq!(routes.advance(&rates, dt, 1e-9), vec![3]);
        let dt = routes.next_finish(&[1.0, 1.0]);
        assert!((dt - 0.75).abs() < 1e-9, "{dt}");
        assert_eq!(routes.advance(&[1.0, 1.0], dt, 1e-9), vec![2]);
        assert!(routes.any());
        let dt = routes.next_finish(&[1.0]);
        assert_eq!(routes.advance(&[1.0], dt, 1e-9), vec![0]);
        assert!(!routes.any());
    }

    #[test]
    fn equal_members_finish_at_the_same_event() {
        let mut routes = Routes::new(1);
        for c in (0..4).rev() {
            routes.join(c, (0, 0), 1e9 * (1.0 + 1e-12 * c as f64));
        }
        let dt = routes.next_finish(&[1.0]);
        assert_eq!(routes.advance(&[1.0], dt, 1e-9), vec![0, 1, 2, 3]);
    }
}
