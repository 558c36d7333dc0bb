//! `numakit topo`: the machine, richer than `numactl --hardware`.

use anyhow::Result;
use clap::Args;
use numakit_topology::{presets, CacheKind, Origin, Topology};

use crate::common::output;
use crate::render::format::{bytes, opt, table};

/// Runs `numakit topo`: prints this machine (or the described one), or the
/// list of presets with `--list-presets`.
pub fn run(args: &TopoArgs, json: bool) -> Result<()> {
    if args.list_presets {
        return list_presets(json);
    }
    let topo = match &args.machine {
        Some(spec) => numakit_topology::load(spec)?,
        None => numakit_topology::discover()?,
    };
    output::report(json, &topo, || render(&topo))?;
    Ok(())
}

fn list_presets(json: bool) -> Result<()> {
    let descriptions = presets::names()
        .into_iter()
        .map(presets::description)
        .collect::<Result<Vec<_>, _>>()?;
    output::report(json, &descriptions, || {
        let mut rows = vec![vec![
            "preset".to_string(),
            "nodes".into(),
            "description".into(),
        ]];
        for d in &descriptions {
            rows.push(vec![
                d.name.clone(),
                d.nodes.len().to_string(),
                d.description.clone(),
            ]);
        }
        table(&rows)
    })?;
    Ok(())
}

/// The text form of a topology.
pub fn render(topo: &Topology) -> String {
    let mut out = Vec::new();
    out.push(match &topo.origin {
        Origin::Discovered { root } => format!("machine: this one (discovered from {root})"),
        Origin::Described {
            name,
            description,
            source,
        } => {
            format!("machine: {name} (described): {description}\nsource: {source}")
        }
    });
    out.push(summary(topo));
    out.push(format!(
        "allowed: CPUs {} | memory nodes {}",
        topo.allowed.cpus, topo.allowed.nodes
    ));
    out.push(String::new());
    out.push(nodes_table(topo));
    out.push(String::new());
    out.push(distances(topo));
    if !topo.caches.is_empty() {
        out.push(String::new());
        out.push(caches(topo));
    }
    if !topo.links.is_empty() {
        out.push(String::new());
        out.push(links(topo));
    }
    if !topo.notes.is_empty() {
        out.push(String::new());
        out.push("notes:".into());
        out.extend(topo.notes.iter().map(|n| format!("  - {n}")));
    }
    out.join("\n")
}

/// One line: nodes, CPUs, cores, sockets, memory.
pub fn summary(topo: &Topology) -> String {
    format!(
        "{} node(s), {} CPU(s), {} core(s), {} socket(s), {} memory",
        topo.nodes.len(),
        topo.cpus.len(),
        topo.core_count(),
        topo.sockets().len(),
        opt(topo.mem_total_bytes.map(bytes))
    )
}

fn nodes_table(topo: &Topology) -> String {
    let mut rows = vec![[
        "node", "socket", "cpus", "allowed", "memory", "free", "GB/s", "latency",
    ]
    .map(String::from)
    .to_vec()];
    for n in &topo.nodes {
        let allowed_cpus = n.cpus.intersection(&topo.allowed.cpus);
        let allowed = match (topo.allowed.nodes.contains(n.id), allowed_cpus.is_empty()) {
            (false, _) => "no".to_string(),
            (true, true) if n.cpus.is_empty() => "memory only".to_string(),
            (true, true) => "memory, no CPUs".to_string(),
            (true, false) if allowed_cpus == n.cpus => "yes".to_string(),
            (true, false) => format!("CPUs {allowed_cpus}"),
        };
        let cpus = if n.cpus.is_empty() {
            "-".to_string()
        } else {
            n.cpus.to_string()
        };
        rows.push(vec![
            n.id.to_string(),
            opt(n.socket),
            cpus,
            allowed,
            opt(n.memory_bytes.map(bytes)),
            opt(n.memory_free_bytes.map(bytes)),
            opt(n.memory_bandwidth_gbs.map(|b| format!("{b:.1}"))),
            opt(n.memory_latency_ns.map(|l| format!("{l:.0} ns"))),
        ]);
    }
    table(&rows)
}

fn distances(topo: &Topology) -> String {
    let kind = match (&topo.origin, topo.distances_reported) {
        (_, true) => "SLIT",
        (Origin::Described { .. }, false) => "derived from link hops",
        (Origin::Discovered { .. }, false) => "assumed: no table",
    };
    let mut rows = vec![std::iter::once(format!("distances ({kind})"))
        .chain(topo.nodes.iter().map(|n| n.id.to_string()))
        .collect::<Vec<_>>()];
    for (i, n) in topo.nodes.iter().enumerate() {
        rows.push(
            std::iter::once(format!("  {}", n.id))
                .chain(topo.distances[i].iter().map(u32::to_string))
                .collect(),
        );
    }
    table(&rows)
}

fn caches(topo: &Topology) -> String {
    let mut rows = vec![["cache", "size", "instances", "CPUs per instance", "line"]
        .map(String::from)
        .to_vec()];
    let mut kinds: Vec<(u8, CacheKind)> = topo.caches.iter().map(|c| (c.level, c.kind)).collect();
    kinds.dedup();
    for (level, kind) in kinds {
        let same: Vec<_> = topo
            .caches
            .iter()
            .filter(|c| c.level == level && c.kind == kind)
            .collect();
        let suffix = match kind {
            CacheKind::Data => "d",
            CacheKind::Instruction => "i",
            CacheKind::Unified => "",
        };
        let shared = if same.len() <= 4 {
            same.iter()
                .map(|c| c.cpus.to_string())
                .collect::<Vec<_>>()
                .join(" | ")
        } else {
            format!("{} each", same[0].cpus.len())
        };
        rows.push(vec![
            format!("L{level}{suffix}"),
            bytes(same[0].size_bytes),
            same.len().to_string(),
            shared,
            opt(same[0].line_bytes.map(|l| format!("{l} B"))),
        ]);
    }
    let mut text = table(&rows);
    text.push_str("\n(sysfs sizes; the usable share of a shared cache can be far smaller: size partitions by measurement)");
    text
}

fn links(topo: &Topology) -> String {
    let mut rows = vec![["link", "GB/s per direction", "added latency"]
        .map(String::from)
        .to_vec()];
    for l in &topo.links {
        rows.push(vec![
            format!("{} - {}", l.a, l.b),
            format!("{:.1}", l.bandwidth_gbs),
            opt(l.latency_ns.map(|x| format!("{x:.0} ns"))),
        ]);
    }
    table(&rows)
}

/// The options of `numakit topo`.
#[derive(Debug, Args)]
pub struct TopoArgs {
    /// A described machine instead of this one: a preset name (see
    /// --list-presets) or a JSON description file.
    #[arg(long, value_name = "PRESET|FILE")]
    pub machine: Option<String>,

    /// List the built-in machine presets and exit.
    #[arg(long)]
    pub list_presets: bool,
}
