//! The four experiments of Kiefer et al.'s Table 1, each a function that
//! measures its setups and adds its rows to the report. The shared tools
//! (arrays, seats, teams) are [`super::Bench`]'s.

use std::sync::atomic::AtomicU64;
use std::sync::Barrier;

use numakit_placement::{AtomicWords, Placer};
use numakit_topology::NodeId;

use super::{ns_per_access, size, Access, Bench, KieferRow};
use crate::error::Result;
use crate::team::{self, Seat, ThreadCheck};

/// Experiment 1: one thread, the large array on its own node and on the
/// nearest other node.
pub(crate) fn remote_access(bench: &mut Bench<'_>) -> Result<()> {
    let home = bench.nodes[0];
    let remote = nearest_other_memory_node(bench.placer, home);
    if remote.is_none() {
        bench.note("experiment 1: one memory node, so the remote column needs two nodes".into());
    }
    let (bytes, count, seed) = (
        bench.options().large_bytes,
        bench.options().accesses,
        bench.options().seed,
    );
    let seat = [bench.seat(home, 0)?];
    for access in Access::BOTH {
        let local = bench.array(bytes, home)?;
        let local_ns = one_thread(bench, &seat, &local, access, count, seed)?;
        drop(local);
        let remote_ns = match remote {
            Some(node) => {
                let far = bench.array(bytes, node)?;
                Some(one_thread(bench, &seat, &far, access, count, seed)?)
            }
            None => None,
        };
        bench.push(KieferRow {
            experiment: 1,
            setup: format!("{} {}", access.name(), size(bytes)),
            access,
            bytes,
            baseline: format!("local (node {home})"),
            baseline_ns: local_ns,
            variant: remote.map_or("remote".into(), |n| format!("remote (node {n})")),
            variant_ns: remote_ns,
        });
    }
    Ok(())
}

fn nearest_other_memory_node(placer: &Placer, home: NodeId) -> Option<NodeId> {
    let topo = placer.topology();
    let memory = topo.memory_nodes();
    topo.nodes_by_distance(home)
        .ok()?
        .into_iter()
        .find(|n| *n != home && memory.contains(n))
}

fn one_thread(
    bench: &mut Bench<'_>,
    seat: &[Seat],
    array: &AtomicWords,
    access: Access,
    count: u64,
    seed: u64,
) -> Result<f64> {
    let words = array.words();
    bench.mean_ns(seat, |_| {
        Ok((
            ns_per_access(words, count, access, seed),
            ThreadCheck::default(),
        ))
    })
}

/// The seats a migrating thread visits: the first CPU of every node, or
/// with one node its CPUs (then the note says so). Fewer than two seats:
/// no migration is possible.
fn migration_route(bench: &mut Bench<'_>, experiment: u8, most: usize) -> Result<Vec<Seat>> {
    if bench.nodes.len() >= 2 {
        let nodes: Vec<NodeId> = bench.nodes.iter().copied().take(most).collect();
        return nodes.into_iter().map(|n| bench.seat(n, 0)).collect();
    }
    let home = bench.nodes[0];
    let cpus = bench.placer.cpus_of_node(home)?.len().min(most);
    bench.note(format!(
        "experiment {experiment}: one node, so threads move between the CPUs of node {home} (a context switch and cold private caches; the last-level cache stays shared)"
    ));
    (0..cpus).map(|i| bench.seat(home, i)).collect()
}

/// Experiment 2: one thread, both array sizes, staying on its node vs
/// moved round the route `migrations` times.
pub(crate) fn thread_migration(bench: &mut Bench<'_>) -> Result<()> {
    let route = migration_route(bench, 2, usize::MAX)?;
    let o = bench.options().clone();
    for bytes in [o.small_bytes, o.large_bytes] {
        for access in Access::BOTH {
            let array = bench.array(bytes, route[0].node)?;
            let still = one_thread(bench, &route[..1], &array, access, o.accesses, o.seed)?;
            let moving = if route.len() >= 2 {
                let words = array.words();
                let placer = bench.placer;
                let walk = Walk {
                    route: &route,
                    start: 0,
                    migrations: o.migrations,
                    barrier: None,
                };
                Some(bench.mean_ns(&route[..1], |_| {
                    walk.run(placer, words, access, o.accesses, o.seed)
                })?)
            } else {
                bench.note("experiment 2: a single CPU, so nothing can migrate".into());
                None
            };
            let setup = format!("{} {}", access.name(), size(bytes));
            bench.push(migration_row(
                2,
                setup,
                access,
                bytes,
                o.migrations,
                still,
                moving,
            ));
        }
    }
    Ok(())
}

/// A thread's walk along a route: its accesses cut into `migrations + 1`
/// slices, moving one seat on between slices (after a barrier, when
/// several threads walk together).
struct Walk<'a> {
    route: &'a [Seat],
    /// Where on the route this thread starts.
    start: usize,
    migrations: u32,
    barrier: Option<&'a Barrier>,
}

impl Walk<'_> {
    /// Nanoseconds per access over the whole walk, migrations included,
    /// and where the thread was seen after each move; the thread ends on
    /// its starting seat.
    fn run(
        &self,
        placer: &Placer,
        words: &[AtomicU64],
        access: Access,
        count: u64,
        seed: u64,
    ) -> Result<(f64, ThreadCheck)> {
        let slices = u64::from(self.migrations) + 1;
        let per_slice = (count / slices).max(1);
        let mut random = super::access::Random::new(seed ^ self.start as u64);
        let mut moves = ThreadCheck::default();
        let started = std::time::Instant::now();
        for slice in 0..slices {
            if slice > 0 {
                if let Some(barrier) = self.barrier {
                    barrier.wait();
                }
                let seat = self.route[(self.start + slice as usize) % self.route.len()];
                let placed = team::take_seat(placer, seat)?;
                moves = moves.merge(ThreadCheck {
                    threads: 1,
                    on_node: usize::from(placed),
                });
            }
            super::access::random_accesses(words, per_slice, access, &mut random);
        }
        let ns = started.elapsed().as_nanos() as f64 / (per_slice * slices) as f64;
        // Home again (untimed), so that the thread ends where its team
        // seated it, as the shuffle's migrating consumers do.
        let home = self.route[self.start % self.route.len()];
        let placed = team::take_seat(placer, home)?;
        moves = moves.merge(ThreadCheck {
            threads: 1,
            on_node: usize::from(placed),
        });
        Ok((ns, moves))
    }
}

/// Experiment 3: one thread per node (up to `threads`), each over its own
/// array on its node, without migrations vs all rotating along the nodes.
pub(crate) fn cache_migration(bench: &mut Bench<'_>) -> Result<()> {
    let o = bench.options().clone();
    let route = migration_route(bench, 3, o.threads)?;
    let threads = route.len();
    for bytes in [o.small_bytes, o.large_bytes] {
        for access in Access::BOTH {
            let arrays = route
                .iter()
                .map(|s| bench.array(bytes, s.node))
                .collect::<Result<Vec<_>>>()?;
            let still = bench.mean_ns(&route, |t| {
                Ok((
                    ns_per_access(arrays[t].words(), o.accesses, access, o.seed ^ t as u64),
                    ThreadCheck::default(),
                ))
            })?;
            let moving = if threads >= 2 {
                let barrier = Barrier::new(threads);
                let placer = bench.placer;
                let (route, arrays, barrier) = (&route, &arrays, &barrier);
                Some(bench.mean_ns(route, |t| {
                    let walk = Walk {
                        route,
                        start: t,
                        migrations: o.migrations,
                        barrier: Some(barrier),
                    };
                    walk.run(
                        placer,
                        arrays[t].words(),
                        access,
                        o.accesses,
                        o.seed ^ t as u64,
                    )
                })?)
            } else {
                bench.note("experiment 3: a single CPU, so nothing can migrate".into());
                None
            };
            let setup = format!("{threads} threads {} {}", access.name(), size(bytes));
            bench.push(migration_row(
                3,
                setup,
                access,
                bytes,
                o.migrations,
                still,
                moving,
            ));
        }
    }
    Ok(())
}

/// Experiment 4: groups of threads, each group sharing one array on its
/// node; every group's threads on that node vs spread over all nodes.
pub(crate) fn cache_concurrency(bench: &mut Bench<'_>) -> Result<()> {
    let o = bench.options().clone();
    let nodes = bench.nodes.clone();
    let spread = nodes.len() >= 2;
    if !spread {
        bench.note(
            "experiment 4: one node, so every group is co-located; round-robin needs two nodes"
                .into(),
        );
    }
    let home = |g: usize| nodes[g % nodes.len()];
    let (groups, per_group) = (o.groups, o.group_threads);
    let colocated = (0..groups * per_group)
        .map(|i| bench.seat(home(i / per_group), i % per_group))
        .collect::<Result<Vec<_>>>()?;
    let round_robin = (0..groups * per_group)
        .map(|i| bench.seat(nodes[(i % per_group) % nodes.len()], i / per_group))
        .collect::<Result<Vec<_>>>()?;
    for bytes in [o.small_bytes, o.large_bytes] {
        for access in Access::BOTH {
            let arrays = (0..groups)
                .map(|g| bench.array(bytes, home(g)))
                .collect::<Result<Vec<_>>>()?;
            let work = |i: usize| {
                let words = arrays[i / per_group].words();
                Ok((
                    ns_per_access(words, o.accesses, access, o.seed ^ i as u64),
                    ThreadCheck::default(),
                ))
            };
            let together = bench.mean_ns(&colocated, work)?;
            let apart = if spread {
                Some(bench.mean_ns(&round_robin, work)?)
            } else {
                None
            };
            bench.push(KieferRow {
                experiment: 4,
                setup: format!("{groups} groups {} {}", access.name(), size(bytes)),
                access,
                bytes,
                baseline: "co-located".into(),
                baseline_ns: together,
                variant: "round-robin".into(),
                variant_ns: apart,
            });
        }
    }
    Ok(())
}

/// A row of experiment 2 or 3: without migrations, then with them.
fn migration_row(
    experiment: u8,
    setup: String,
    access: Access,
    bytes: u64,
    migrations: u32,
    still: f64,
    moving: Option<f64>,
) -> KieferRow {
    KieferRow {
        experiment,
        setup,
        access,
        bytes,
        baseline: "w/o migrations".into(),
        baseline_ns: still,
        variant: format!("{migrations} migrations"),
        variant_ns: moving,
    }
}
