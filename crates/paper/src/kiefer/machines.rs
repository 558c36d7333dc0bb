//! The paper's machines (Figure 1 and Table 2), printed from numakit's
//! described-machine presets, the same descriptions `numakit topo
//! --machine` prints and the simulator reasons about. Nothing here is
//! measured; this machine is noted beside them.

use numakit_topology::describe::{MachineDescription, SharedBy};
use numakit_topology::{presets, CacheKind, Topology};

use super::{row, AMD, INTEL};
use crate::context::Context;
use crate::error::RunResult;
use crate::outcome::{Outcome, Shape, Verdict};

/// The size in KiB of the preset's cache of `level` (data or unified).
fn cache_kib(d: &MachineDescription, level: u8) -> Option<f64> {
    d.caches
        .iter()
        .find(|c| c.level == level && c.kind != CacheKind::Instruction)
        .map(|c| c.size_kib as f64)
}

/// Figure 1: four Westmere-EX sockets, each with its memory, a shared LLC
/// and three QPI links to the others: fully connected, one hop anywhere.
pub(crate) fn figure_1(ctx: &Context<'_>) -> RunResult<Outcome> {
    let d = presets::description(INTEL)?;
    let topo = d.to_topology();
    let sockets = topo.compute_nodes().len();
    let (fewest_links, most_hops) = wiring(&topo)?;
    let llc_mib = cache_kib(&d, 3).unwrap_or(0.0) / 1024.0;
    let rows = vec![
        row(format!("{INTEL}: sockets"), "", sockets as f64, Some(4.0)),
        row(
            "QPI links from each socket to other CPUs",
            "links",
            fewest_links as f64,
            Some(3.0),
        ),
        row(
            "most hops between two sockets",
            "hops",
            f64::from(most_hops),
            Some(1.0),
        ),
        row("LLC shared by a socket's cores", "MiB", llc_mib, Some(24.0)),
    ];
    let llc_shared = d
        .caches
        .iter()
        .any(|c| c.level == 3 && c.shared_by == SharedBy::Socket);
    let memories = topo.memory_nodes().len();
    let shapes = vec![
        Shape::new(
            "four CPUs fully connected: every remote memory one QPI hop away",
            Verdict::check(
                most_hops == 1 && fewest_links + 1 == sockets,
                format!("{sockets} sockets, at least {fewest_links} links each, at most {most_hops} hop(s)"),
            ),
        ),
        Shape::new(
            "each CPU has its own memory (IMC) and an LLC shared by its cores",
            Verdict::check(
                llc_shared && memories == sockets,
                format!("{memories} memory nodes for {sockets} sockets; L3 shared by the socket: {llc_shared}"),
            ),
        ),
    ];
    Ok(Outcome {
        rows,
        shapes,
        notes: vec![d.description.clone(), this_machine(&ctx.topology)],
    })
}

/// The fewest links any socket has, and the most hops between two sockets.
fn wiring(topo: &Topology) -> RunResult<(usize, u32)> {
    let sockets = topo.compute_nodes();
    let mut fewest_links = usize::MAX;
    let mut most_hops = 0u32;
    for &a in &sockets {
        let links = topo.links.iter().filter(|l| l.a == a || l.b == a).count();
        fewest_links = fewest_links.min(links);
        for &b in &sockets {
            let hops = topo.hops(a, b).ok_or("a socket the links do not reach")?;
            most_hops = most_hops.max(hops);
        }
    }
    Ok((fewest_links, most_hops))
}

/// Table 2's figures of one machine, (label, unit, ours, paper's).
fn table_2_rows(
    d: &MachineDescription,
    paper: [f64; 9],
) -> RunResult<Vec<(String, &'static str, f64, f64)>> {
    let node = d.nodes.first().ok_or("a preset without nodes")?;
    let link = d.links.first().ok_or("a preset without links")?;
    let ours = [
        d.nodes.len() as f64,
        f64::from(node.cores),
        f64::from(node.threads_per_core),
        d.clock_ghz.unwrap_or(0.0),
        node.memory_gib.unwrap_or(0.0),
        cache_kib(d, 1).unwrap_or(0.0),
        cache_kib(d, 2).unwrap_or(0.0),
        cache_kib(d, 3).unwrap_or(0.0) / 1024.0,
        link.bandwidth_gbs,
    ];
    let what = [
        ("CPUs", ""),
        ("cores per CPU", ""),
        ("HW threads per core", ""),
        ("clock", "GHz"),
        ("main memory per socket", "GB"),
        ("L1 (data) per core", "KB"),
        ("L2 per core", "KB"),
        ("LLC per socket", "MB"),
        ("link (HyperTransport / QPI)", "GB/s"),
    ];
    Ok(what
        .iter()
        .zip(ours.iter().zip(paper))
        .map(|((label, unit), (&o, p))| (format!("{}: {label}", d.name), *unit, o, p))
        .collect())
}

/// Table 2: the AMD and the Intel machine, from the presets.
pub(crate) fn table_2(ctx: &Context<'_>) -> RunResult<Outcome> {
    let amd = presets::description(AMD)?;
    let intel = presets::description(INTEL)?;
    let mut lines = table_2_rows(&amd, [2.0, 6.0, 1.0, 2.6, 16.0, 64.0, 512.0, 6.0, 9.6])?;
    lines.extend(table_2_rows(
        &intel,
        [4.0, 8.0, 2.0, 2.13, 32.0, 32.0, 256.0, 24.0, 12.8],
    )?);
    let differing: Vec<String> = lines
        .iter()
        .filter(|(_, _, o, p)| (o - p).abs() > 1e-9)
        .map(|(label, _, o, p)| format!("{label}: {o} vs {p}"))
        .collect();
    let rows = lines
        .into_iter()
        .map(|(label, unit, o, p)| row(label, unit, o, Some(p)))
        .collect();
    let shapes = vec![Shape::new(
        "numakit's presets describe the paper's two machines as Table 2 does",
        Verdict::check(
            differing.is_empty(),
            if differing.is_empty() {
                "all 18 figures agree".to_string()
            } else {
                differing.join("; ")
            },
        ),
    )];
    Ok(Outcome {
        rows,
        shapes,
        notes: vec![
            "GB and MB in the paper are read as GiB and MiB, as the presets store them".into(),
            this_machine(&ctx.topology),
        ],
    })
}

/// One line on the machine the rerun ran on.
fn this_machine(topo: &Topology) -> String {
    let llc = topo
        .caches
        .iter()
        .filter(|c| c.kind != CacheKind::Instruction)
        .max_by_key(|c| c.level)
        .map(|c| {
            format!(
                ", L{} {}",
                c.level,
                numakit_topology::units::human_bytes(c.size_bytes)
            )
        })
        .unwrap_or_default();
    format!(
        "this machine: {} node(s), {} CPU(s) allowed{llc}",
        topo.nodes.len(),
        topo.allowed.cpus.len()
    )
}
