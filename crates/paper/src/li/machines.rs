//! Li Figure 1 (the servers), Figure 2 (the read flows, a drawing) and
//! Table 1 (bandwidth and latency of the flows on the 4-link machine).

use numakit_placement::{HugePages, Placement, Placer};
use numakit_probe::bandwidth::{self, Effort};
use numakit_probe::chase::ChaseBuffer;
use numakit_probe::latency::{self, ChaseLength};
use numakit_probe::stream::{Kernel, StreamBuffers};
use numakit_topology::{NodeId, Topology};

use super::{calibration, one_node, preset, EIGHT_SOCKETS, FOUR_LINKS, FOUR_SOCKETS};
use crate::catalog::{Item, ItemId, Paper, Reproduction};
use crate::context::Context;
use crate::error::RunResult;
use crate::outcome::{Outcome, Row, Shape, Verdict};

pub(super) fn figure_1() -> Item {
    Item::new(
            Paper::Li,
        ItemId::Figure(1),
        "Interconnect topologies for four Intel servers",
        Reproduction::Described,
        "numakit topo --machine nehalem-ex-4s; numakit topo --machine nehalem-ex-4s-4link; numakit topo --machine nehalem-ex-8s",
        "printed from numakit's described machines (the simulator's inputs), not measured; the paper's 2-socket and 4-socket (a) servers are only drawn, with no figures in the text, so they are not presets",
        Some(run_figure_1),
    )
}

pub(super) fn figure_2() -> Item {
    Item::new(
            Paper::Li,
        ItemId::Figure(2),
        "Data access pattern in a 4-socket configuration with 4 QPI links",
        Reproduction::NotReproducible,
        "",
        "a drawing of the four read flows on the 4-link ring: nothing to measure; their bandwidths are Table 1, which the simulator replays on the nehalem-ex-4s-4link preset",
        None,
    )
}

pub(super) fn table_1() -> Item {
    Item::new(
            Paper::Li,
        ItemId::Table(1),
        "Bandwidth and latency of a 4-socket Nehalem-EX system with 4 QPI links",
        Reproduction::Simulated,
        "numakit simulate --machine nehalem-ex-4s-4link; numakit probe --only bandwidth; numakit probe --only latency",
        "bandwidths replayed by the simulator, whose constants were fitted on this very table; it has no latencies. This machine (one node, another CPU) measures only flow 1, its own local read and latency",
        Some(run_table_1),
    )
}

/// Sockets, cores, links and the slowest link of a described machine.
fn shape_of(topo: &Topology) -> (f64, f64, f64, f64) {
    let slowest = topo
        .links
        .iter()
        .map(|l| l.bandwidth_gbs)
        .fold(f64::INFINITY, f64::min);
    (
        topo.nodes.len() as f64,
        topo.core_count() as f64,
        topo.links.len() as f64,
        slowest,
    )
}

fn run_figure_1(_: &Context<'_>) -> RunResult<Outcome> {
    let mut out = Outcome::default();
    // (preset, what the paper's text says: sockets, cores, links, slowest link GB/s)
    let paper = [
        (FOUR_SOCKETS, "4-socket (b)", [4.0, 32.0, 6.0, 10.9]),
        (
            FOUR_LINKS,
            "4-socket (b), two links removed",
            [4.0, 32.0, 4.0, 10.9],
        ),
        (EIGHT_SOCKETS, "8-socket", [8.0, 64.0, 12.0, 7.8]),
    ];
    let names = ["sockets", "cores", "QPI links", "slowest link"];
    let units = ["", "", "", "GB/s"];
    for (name, label, published) in paper {
        let topo = preset(name)?;
        let (s, c, l, slow) = shape_of(&topo);
        for (i, ours) in [s, c, l, slow].into_iter().enumerate() {
            out.rows.push(Row::new(
                format!("{label} ({name}): {}", names[i]),
                units[i],
                Some(ours),
                Some(published[i]),
            ));
        }
        out.notes.push(format!("{name}: {}", describe_links(&topo)));
    }
    let eight = preset(EIGHT_SOCKETS)?;
    let slow = eight
        .links
        .iter()
        .filter(|l| l.bandwidth_gbs < 10.0)
        .count();
    out.shapes.push(Shape::new(
        "the 8-socket server's links are not uniform: 4 of its 12 QPI links are slower (7.8 vs 10.9 GB/s)",
        Verdict::check(
            slow == 4 && eight.links.len() == 12,
            format!("{slow} of {} links below 10 GB/s in the preset", eight.links.len()),
        ),
    ));
    let full = preset(FOUR_SOCKETS)?;
    let pairs = full.nodes.len() * (full.nodes.len() - 1) / 2;
    out.shapes.push(Shape::new(
        "the x3850 X5 is fully connected: every socket one hop from every other",
        Verdict::check(
            full.links.len() == pairs,
            format!("{} links for {pairs} socket pairs", full.links.len()),
        ),
    ));
    Ok(out)
}

fn describe_links(topo: &Topology) -> String {
    let links: Vec<String> = topo
        .links
        .iter()
        .map(|l| format!("{}-{} {:.1}", l.a, l.b, l.bandwidth_gbs))
        .collect();
    format!("links (GB/s) {}", links.join(", "))
}

fn run_table_1(ctx: &Context<'_>) -> RunResult<Outcome> {
    let mut out = Outcome::default();
    let checks = numakit_sim::check_scenarios(&calibration())?;
    for c in &checks {
        out.rows.push(Row::new(
            format!("simulated: {}", c.name),
            "GB/s",
            Some(c.predicted_gbs),
            Some(c.measured_gbs),
        ));
    }
    let gbs = |needle: &str| {
        checks
            .iter()
            .find(|c| c.name.contains(needle))
            .map(|c| c.predicted_gbs)
            .ok_or_else(|| format!("no scenario named like {needle:?}"))
    };
    let (local, one, two, cross) = (
        gbs("flow 1")?,
        gbs("flow 2")?,
        gbs("flow 3: 2 hops")?,
        gbs("cross traffic")?,
    );
    out.shapes.extend(table_1_shapes(local, one, two, cross));
    measure_here(ctx, &mut out)?;
    out.notes.push(
        "the simulator's constants (snoop coefficient 0.285, 24.7/12 GB/s per thread) were fitted on these six figures: their agreement checks the fit, not an independent prediction"
            .into(),
    );
    Ok(out)
}

fn table_1_shapes(local: f64, one: f64, two: f64, cross: f64) -> Vec<Shape> {
    vec![
        Shape::new(
            "one QPI hop cuts the sequential bandwidth to a link's (24.7 -> 10.9 GB/s)",
            Verdict::check(
                one < local * 0.6,
                format!("simulated {one:.1} vs local {local:.1} GB/s"),
            ),
        ),
        Shape::new(
            "a second hop does not lower the sequential bandwidth further",
            Verdict::check(
                (two / one - 1.0).abs() < 0.05,
                format!("simulated 2 hops {two:.1} vs 1 hop {one:.1} GB/s"),
            ),
        ),
        Shape::new(
            "cross traffic on the shared link halves flow 3 (10.9 -> 5.3 GB/s)",
            Verdict::check(
                cross < two * 0.6,
                format!("simulated {cross:.2} vs {two:.1} GB/s alone"),
            ),
        ),
        Shape::new(
            "remote reads cost more latency per hop (150 -> 185 -> 230 ns)",
            Verdict::NotShownHere(one_node(
                "only the local latency can be measured",
                "the simulator models bandwidth, not latency",
            )),
        ),
    ]
}

/// This machine's flow 1: all CPUs of the first node reading its memory,
/// and one thread's dependent-load latency there.
fn measure_here(ctx: &Context<'_>, out: &mut Outcome) -> RunResult<()> {
    let placer = Placer::new(
        ctx.topology.clone(),
        numakit_placement::PlacementMode::BestEffort,
    );
    let node = *ctx
        .topology
        .compute_nodes()
        .first()
        .ok_or("this machine lists no node with CPUs")?;
    let mib = local_read(ctx, &placer, node, out)?;
    let chase_mib = local_latency(ctx, &placer, node, out)?;
    out.notes.push(format!(
        "measured here: {mib} MiB read buffer, {chase_mib} MiB pointer chase (random order, no huge pages)"
    ));
    Ok(())
}

/// Every CPU of `node` reading its memory (`numakit probe --only
/// bandwidth`); returns the buffer's MiB.
fn local_read(
    ctx: &Context<'_>,
    placer: &Placer,
    node: NodeId,
    out: &mut Outcome,
) -> RunResult<u64> {
    let threads = ctx.topology.allowed_cpus_of(node)?.len().max(1);
    let mib = ctx.scale.pick(32u64, 256);
    let mut buffers =
        StreamBuffers::new(placer, mib << 20, Placement::OnNode(node), HugePages::Never)?;
    let effort = Effort {
        passes: ctx.scale.pick(2, 4),
        reps: ctx.scale.pick(1, 3),
    };
    let bw = bandwidth::measure(
        placer,
        (node, node),
        threads,
        &mut buffers,
        Kernel::Read,
        effort,
    )?;
    out.rows.push(Row::new(
        format!("this machine: local read, {threads} thread(s), node {node}"),
        "GB/s",
        Some(bw.gbs),
        Some(24.7),
    ));
    Ok(mib)
}

/// One thread's dependent loads on `node`'s memory (`numakit probe --only
/// latency`); returns the chase's MiB.
fn local_latency(
    ctx: &Context<'_>,
    placer: &Placer,
    node: NodeId,
    out: &mut Outcome,
) -> RunResult<u64> {
    let chase_mib = ctx.scale.pick(64u64, 256);
    let chase = ChaseBuffer::new(
        placer,
        chase_mib << 20,
        Placement::OnNode(node),
        HugePages::Never,
        7,
    )?;
    let length = ChaseLength {
        warm: ctx.scale.pick(20_000, 200_000),
        loads: ctx.scale.pick(200_000, 2_000_000),
        reps: ctx.scale.pick(1, 3),
    };
    let lat = latency::measure(
        placer,
        node,
        node,
        &chase,
        length,
        numakit_probe::clock::read(),
    )?;
    let label = "this machine: local dependent-load latency, 1 thread";
    out.rows
        .push(Row::new(label, "ns", Some(lat.ns), Some(150.0)));
    if let Some(cycles) = lat.cycles {
        out.rows
            .push(Row::new(label, "cycles", Some(cycles), Some(340.0)));
    }
    Ok(chase_mib)
}
