//! The machine and the inputs: Table I from numakit's description of the
//! T5440 (the simulator's input), Table II from the generators, and
//! Figure 5's locality of map tasks.

use numakit_mapreduce::JobOptions;
use numakit_topology::{presets, CacheKind};

use super::apps::{self, App};
use crate::context::Context;
use crate::error::RunResult;
use crate::outcome::{Outcome, Row, Shape, Verdict};

/// numakit's preset of the paper's machine.
const T5440: &str = "ultrasparc-t2plus-4c";

/// Table I: the T5440 as numakit describes it, beside the paper's table.
pub(super) fn table_1(_ctx: &Context<'_>) -> RunResult<Outcome> {
    let d = presets::description(T5440)?;
    let clock = d.clock_ghz.ok_or("the preset gives no clock")?;
    let node = d.nodes.first().ok_or("the preset has no node")?;
    let threads: u32 = d.nodes.iter().map(|n| n.cores * n.threads_per_core).sum();
    let memory: f64 = d.nodes.iter().filter_map(|n| n.memory_gib).sum();
    let read: f64 = d.nodes.iter().filter_map(|n| n.memory_bandwidth_gbs).sum();
    let local = node
        .memory_latency_ns
        .ok_or("the preset gives no latency")?;
    let remote = d
        .links
        .first()
        .and_then(|l| l.latency_ns)
        .ok_or("the preset gives no link latency")?;
    let cache = |level: u8| {
        d.caches
            .iter()
            .find(|c| c.level == level && c.kind != CacheKind::Instruction)
            .map(|c| c.size_kib as f64)
    };
    let rows = [
        ("chips", "", Some(d.nodes.len() as f64), 4.0),
        ("cores per chip", "", Some(f64::from(node.cores)), 8.0),
        ("hardware contexts", "", Some(f64::from(threads)), 256.0),
        ("L1 data cache per core", "KiB", cache(1), 8.0),
        ("shared L2 cache per chip", "KiB", cache(2), 4096.0),
        ("memory", "GiB", Some(memory), 128.0),
        ("local memory latency", "cycles", Some(local * clock), 300.0),
        ("remote overhead", "cycles", Some(remote * clock), 100.0),
        ("read bandwidth", "GB/s", Some(read), 85.0),
    ];
    let mut out = Outcome::default();
    for (label, unit, ours, paper) in rows {
        out.rows.push(Row::new(label, unit, ours, Some(paper)));
    }
    let slower = remote / local;
    out.shapes.push(Shape::new(
        "remote DRAM accesses are 33% slower than local ones",
        Verdict::check(
            (0.30..0.37).contains(&slower),
            format!("{:.0}% slower in the preset", 100.0 * slower),
        ),
    ));
    out.notes.push(format!("preset {T5440}: {}", d.description));
    Ok(out)
}

/// Table II: the inputs numakit generates, beside the paper's.
pub(super) fn table_2(ctx: &Context<'_>) -> RunResult<Outcome> {
    let mut out = Outcome::default();
    for app in App::ALL {
        let data = apps::generate(app, ctx.scale)?;
        let (unit, ours, paper) = match &data {
            apps::Data::Text(t) => ("MB", t.len() as f64 / 1e6, text_mb(app)),
            apps::Data::Kmeans(k) => ("points", k.points().len() as f64, 500_000.0),
            apps::Data::Pca(m) => ("rows", m.rows() as f64, 3000.0),
            apps::Data::Matrices(p) => ("rows", p.side() as f64, 3000.0),
        };
        out.rows.push(Row::new(
            format!("{}: input", app.paper_name()),
            unit,
            Some(ours),
            Some(paper),
        ));
        out.notes.push(format!(
            "{}: {} ({} bytes)",
            app.paper_name(),
            data.describe(),
            data.bytes()
        ));
    }
    out.notes.push("generated as `numakit mapreduce <app>` generates them (seed 42 for text, the originals' rand() stream for the numeric ones)".into());
    Ok(out)
}

fn text_mb(app: App) -> f64 {
    match app {
        App::Histogram => 1400.0,
        App::LinearRegression => 3500.0,
        _ => 500.0,
    }
}

/// Figure 5: the share of map tasks run on their data's node.
pub(super) fn figure_5(ctx: &Context<'_>) -> RunResult<Outcome> {
    let data = apps::generate(App::StringMatch, ctx.scale)?;
    let mut out = Outcome::default();
    let mut all_located = true;
    for (threads, run) in apps::sweep(ctx, App::StringMatch, &data, &JobOptions::default())? {
        let rate = 100.0 * run.local_tasks as f64 / run.map_tasks.max(1) as f64;
        out.rows.push(Row::new(
            format!("{threads} thread(s), one node: hit rate"),
            "%",
            Some(rate),
            None,
        ));
        all_located &= run.homed_tasks == run.map_tasks as u64;
    }
    for (threads, paper) in [(64, 17.0), (128, 30.0), (256, 44.0)] {
        out.rows.push(Row::new(
            format!("{threads} threads on the T5440: hit rate"),
            "%",
            None,
            Some(paper),
        ));
    }
    out.shapes.push(Shape::new(
        "every map task's data is located and its task queued at that node",
        Verdict::check(all_located, format!("splits located: {all_located}")),
    ));
    out.shapes.push(Shape::new(
        "per-node task queues raise the hit rate as threads span more chips (17% to 44%)",
        Verdict::NotShownHere(
            "one node here: every split is local; the multi-node guests (cli/tests/numa_vm/operators.rs) place the input on every node and check each split is located there and run once".into(),
        ),
    ));
    out.notes
        .push(format!("string_match on {}", data.describe()));
    Ok(out)
}
