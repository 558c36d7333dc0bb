//! Max-min fair sharing of resources among flows by progressive filling
//! (water-filling), with per-flow caps and per-resource coefficients.
//!
//! Every unfrozen flow grows at the same rate. A flow uses resource `j` at
//! `coef × rate` (a memory controller or a link carries data at coefficient
//! 1 and snoop traffic at the coherence coefficients), so resource `j` of
//! capacity `C` saturates when `Σ count_f × coef_fj × rate_f = C`. When a
//! resource saturates, every flow using it freezes at its current rate; a
//! flow also freezes when it reaches its own cap. Filling stops when every
//! flow is frozen. Identical flows are grouped (`count`) so that the cost
//! depends on the number of distinct flows, not on the number of threads.
//!
//! This module only shares rates at one instant; it knows nothing of
//! machines, schedules or time (see `machine` and `simulate`).

/// How strongly one flow loads one resource per GB/s of its rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Use {
    /// Index of the resource.
    pub resource: usize,
    /// Load from the flow's own data (memory read, links on its route).
    pub data: f64,
    /// Load from coherence snoops caused by the flow's reads.
    pub snoop: f64,
}

impl Use {
    /// The coefficient that counts for sharing.
    pub fn coef(&self) -> f64 {
        self.data + self.snoop
    }
}

/// `count` identical flows.
#[derive(Clone, Copy, Debug)]
pub struct Group<'a> {
    /// Number of flows in the group (threads, usually).
    pub count: f64,
    /// Most that one flow of the group can carry, in GB/s.
    pub cap: f64,
    /// The resources each flow of the group loads.
    pub uses: &'a [Use],
}

/// What stopped a group from growing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// The group's own per-flow cap.
    Cap,
    /// A saturated resource (its index).
    Resource(usize),
}

/// The rate of each flow of a group and what limits it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Allocation {
    /// GB/s of each flow of the group.
    pub rate: f64,
    /// What froze the group at that rate: its own cap or a saturated resource.
    pub limit: Limit,
}

/// Relative slack under which a resource counts as saturated.
const SLACK: f64 = 1e-9;

/// Shares `capacity` (GB/s per resource) among `groups`, max-min fairly.
///
/// A group with no use and no finite cap would grow without bound; it is
/// given its cap (infinite), which callers avoid by always capping flows.
pub fn fair_share(capacity: &[f64], groups: &[Group<'_>]) -> Vec<Allocation> {
    let mut done: Vec<Option<Allocation>> = vec![None; groups.len()];
    let mut frozen_load = vec![0.0; capacity.len()];
    let mut growth = vec![0.0; capacity.len()];
    loop {
        growth.iter_mut().for_each(|g| *g = 0.0);
        let mut level = f64::INFINITY;
        for (g, _) in groups.iter().zip(&done).filter(|(_, d)| d.is_none()) {
            level = level.min(g.cap);
            for u in g.uses {
                growth[u.resource] += g.count * u.coef();
            }
        }
        if done.iter().all(Option::is_some) {
            break;
        }
        let headroom = |j: usize| (capacity[j] - frozen_load[j]).max(0.0) / growth[j];
        for j in (0..capacity.len()).filter(|&j| growth[j] > 0.0) {
            level = level.min(headroom(j));
        }
        let saturated: Vec<bool> = (0..capacity.len())
            .map(|j| growth[j] > 0.0 && headroom(j) <= level * (1.0 + SLACK))
            .collect();
        for (g, slot) in groups.iter().zip(done.iter_mut()) {
            if slot.is_some() {
                continue;
            }
            let by_resource = g
                .uses
                .iter()
                .find(|u| u.coef() > 0.0 && saturated[u.resource]);
            let limit = match by_resource {
                Some(u) => Limit::Resource(u.resource),
                None if g.cap <= level * (1.0 + SLACK) => Limit::Cap,
                None => continue,
            };
            *slot = Some(Allocation { rate: level, limit });
            for u in g.uses {
                frozen_load[u.resource] += g.count * u.coef() * level;
            }
        }
    }
    done.into_iter()
        .map(|d| {
            d.unwrap_or(Allocation {
                rate: 0.0,
                limit: Limit::Cap,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{prop_assert, proptest};

    fn uses(list: &[(usize, f64)]) -> Vec<Use> {
        list.iter()
            .map(|&(resource, data)| Use {
                resource,
                data,
                snoop: 0.0,
            })
            .collect()
    }

    #[test]
    fn equal_flows_split_a_resource() {
        let u = uses(&[(0, 1.0)]);
        let g = [Group {
            count: 1.0,
            cap: f64::INFINITY,
            uses: &u,
        }; 2];
        let a = fair_share(&[10.0], &g);
        assert!((a[0].rate - 5.0).abs() < 1e-9 && (a[1].rate - 5.0).abs() < 1e-9);
        assert_eq!(a[0].limit, Limit::Resource(0));
    }

    #[test]
    fn coefficients_count_and_caps_free_capacity_for_others() {
        let heavy = uses(&[(0, 2.0)]);
        let light = uses(&[(0, 1.0)]);
        let g = [
            Group {
                count: 1.0,
                cap: f64::INFINITY,
                uses: &heavy,
            },
            Group {
                count: 1.0,
                cap: f64::INFINITY,
                uses: &light,
            },
        ];
        let a = fair_share(&[9.0], &g);
        assert!((a[0].rate - 3.0).abs() < 1e-9, "3t = 9");
        let g = [
            Group {
                count: 1.0,
                cap: 1.0,
                uses: &heavy,
            },
            Group {
                count: 1.0,
                cap: f64::INFINITY,
                uses: &light,
            },
        ];
        let a = fair_share(&[9.0], &g);
        assert_eq!(a[0].limit, Limit::Cap);
        assert!(
            (a[1].rate - 7.0).abs() < 1e-9,
            "9 - 2 x 1 left for the light flow"
        );
    }

    #[test]
    fn counts_multiply_the_load() {
        let u = uses(&[(0, 1.0), (1, 1.0)]);
        let other = uses(&[(1, 1.0)]);
        let g = [
            Group {
                count: 4.0,
                cap: 10.0,
                uses: &u,
            },
            Group {
                count: 1.0,
                cap: 10.0,
                uses: &other,
            },
        ];
        let a = fair_share(&[8.0, 100.0], &g);
        assert!((a[0].rate - 2.0).abs() < 1e-9);
        assert_eq!(a[1].limit, Limit::Cap);
    }

    proptest! {
        #[test]
        fn shares_are_feasible_and_max_min(
            caps in proptest::collection::vec(0.5f64..20.0, 1..6),
            flows in proptest::collection::vec((1usize..4, 0.5f64..30.0, 0usize..64, 0.0f64..1.5), 1..8),
        ) {
            let table: Vec<Vec<Use>> = flows.iter().map(|&(_, _, mask, snoop)| {
                (0..caps.len()).filter(|j| mask & (1 << j) != 0 || *j == mask % caps.len())
                    .map(|j| Use { resource: j, data: 1.0, snoop }).collect()
            }).collect();
            let groups: Vec<Group> = flows.iter().zip(&table)
                .map(|(&(count, cap, _, _), u)| Group { count: count as f64, cap, uses: u }).collect();
            let alloc = fair_share(&caps, &groups);
            let mut load = vec![0.0; caps.len()];
            for (g, a) in groups.iter().zip(&alloc) {
                for u in g.uses { load[u.resource] += g.count * u.coef() * a.rate; }
            }
            for (l, c) in load.iter().zip(&caps) {
                prop_assert!(*l <= c * (1.0 + 1e-6), "load {} over capacity {}", l, c);
            }
            for (g, a) in groups.iter().zip(&alloc) {
                match a.limit {
                    Limit::Cap => prop_assert!((a.rate - g.cap).abs() <= 1e-6 * g.cap),
                    Limit::Resource(j) => {
                        prop_assert!(load[j] >= caps[j] * (1.0 - 1e-6), "limit {} not saturated", j);
                        // max-min: no flow on j got more than this one
                        for (h, b) in groups.iter().zip(&alloc) {
                            if h.uses.iter().any(|u| u.resource == j) {
                                prop_assert!(b.rate <= a.rate * (1.0 + 1e-6));
                            }
                        }
                    }
                }
            }
        }
    }
}
