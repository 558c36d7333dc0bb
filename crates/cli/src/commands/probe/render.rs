//! What `numakit probe` prints: its matrices as tables (rows are CPU
//! nodes, columns memory nodes), the sweeps and cross traffic in a line
//! each, Kiefer's Table 1, the strategies normalized to default, and the
//! heat maps. Hardware counters, where the report has them, stand in the
//! cells beside the figures they explain (LLC misses per load or per
//! 64-byte line, IPC); where it has none, one line says why. Rendering
//! only: every figure comes from the probe's report.

use std::fmt::Write;

use numakit_placement::counters::Counts;
use numakit_probe::bandwidth::Bandwidth;
use numakit_probe::kiefer::KieferReport;
use numakit_probe::latency::Latency;
use numakit_probe::strategies::{PlacementStrategy, StrategyReport};
use numakit_probe::stream::Kernel;
use numakit_probe::MatrixReport;
use numakit_topology::NodeId;

use crate::render::format::{bytes, table};
use crate::render::heatmap::{heatmaps, Heatmap};

/// A matrix as a table: a header row of memory nodes, one row per CPU node.
fn grid<T>(report: &MatrixReport, cells: &[Vec<T>], cell: impl Fn(&T) -> String) -> String {
    let mut rows = vec![std::iter::once("cpu \\ memory".to_string())
        .chain(report.memory_nodes.iter().map(|m| format!("node {m}")))
        .collect::<Vec<_>>()];
    for (c, row) in report.cpu_nodes.iter().zip(cells) {
        rows.push(
            std::iter::once(format!("node {c}"))
                .chain(row.iter().map(&cell))
                .collect(),
        );
    }
    indent(&table(&rows))
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// What the counters say about one figure: LLC misses per unit of work
/// and IPC, after a bar; empty without counters.
fn counters_beside(counts: Option<&Counts>) -> String {
    let Some(c) = counts else {
        return String::new();
    };
    let mut parts = Vec::new();
    if let (Some(misses), Some(work)) = (c.llc_misses_per_unit(), c.work) {
        parts.push(format!("{misses:.2} LLC miss/{}", work.unit));
    }
    if let Some(ipc) = c.ipc() {
        parts.push(format!("IPC {ipc:.2}"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" | {}", parts.join(", "))
    }
}

fn latency_cell(l: &Latency) -> String {
    let figure = match l.cycles {
        Some(cy) => format!("{:.0} ns / {cy:.0} cy", l.ns),
        None => format!("{:.0} ns", l.ns),
    };
    figure + &counters_beside(l.counters.as_ref())
}

fn bandwidth_cell(b: &Bandwidth) -> String {
    format!("{:.1} ({} thr)", b.gbs, b.threads) + &counters_beside(b.counters.as_ref())
}

/// One line on the counters: why there are none, or what the cells show.
fn counters_line(report: &MatrixReport) -> Option<String> {
    if let Some(reason) = &report.counters_unavailable {
        return Some(format!("hardware counters: unavailable ({reason})"));
    }
    let counted = report
        .latency
        .iter()
        .flatten()
        .any(|l| l.counters.is_some())
        || report.read.iter().flatten().any(|b| b.counters.is_some());
    counted.then(|| {
        "hardware counters of the measuring threads beside each figure: LLC misses per load (latency) or per 64-byte line (bandwidth), and IPC".to_string()
    })
}

/// The matrices, sweeps, cross traffic, placement check and notes.
pub fn matrix_text(report: &MatrixReport, full: bool) -> String {
    let mut out = format!(
        "numakit probe ({}): {} CPU node(s) x {} memory node(s)",
        if full { "full" } else { "quick" },
        report.cpu_nodes.len(),
        report.memory_nodes.len()
    );
    match report.clock {
        Some(c) => writeln!(out, ", clock {:.2} GHz ({})", c.ghz, c.source),
        None => writeln!(out, ", clock unknown (latency in ns only)"),
    }
    .ok();
    if let Some(line) = counters_line(report) {
        let _ = writeln!(out, "{line}");
    }
    if !report.latency.is_empty() {
        latency_section(&mut out, report);
    }
    if !report.read.is_empty() {
        bandwidth_section(&mut out, report);
    }
    let _ = writeln!(
        out,
        "\nplacement: {}/{} pages on the node they were put on, {}/{} thread checks on their node: {}",
        report.buffers.on_node,
        report.buffers.pages,
        report.threads.on_node,
        report.threads.threads,
        if report.placement_verified() { "verified" } else { "NOT verified" }
    );
    for note in &report.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

fn latency_section(out: &mut String, report: &MatrixReport) {
    let o = &report.options;
    let _ = writeln!(
        out,
        "\nlatency: one thread, {} dependent loads through {} in random order (median of {})",
        o.chase.loads,
        bytes(o.latency_bytes),
        o.chase.reps
    );
    out.push_str("  base pages\n");
    out.push_str(&indent(&grid(report, &report.latency, latency_cell)));
    if !report.latency_huge.is_empty() {
        out.push_str("  transparent huge pages\n");
        out.push_str(&indent(&grid(report, &report.latency_huge, latency_cell)));
    }
}

fn bandwidth_section(out: &mut String, report: &MatrixReport) {
    let _ = writeln!(
        out,
        "\nbandwidth, GB/s: {} buffers, median of {}; threads per node where reading saturates",
        bytes(report.options.bandwidth_bytes),
        report.options.reps
    );
    for kernel in Kernel::ALL {
        let copied = if kernel == Kernel::Copy {
            " (bytes copied)"
        } else {
            ""
        };
        let _ = writeln!(out, "  {}{copied}", kernel.name());
        out.push_str(&indent(&grid(
            report,
            report.bandwidth(kernel),
            bandwidth_cell,
        )));
    }
    sweeps(out, report);
    cross(out, report);
}

fn sweeps(out: &mut String, report: &MatrixReport) {
    out.push_str("\nthread sweeps (GB/s):\n");
    for s in &report.sweeps {
        let points: Vec<String> = s
            .points
            .iter()
            .map(|p| format!("{}: {:.1}", p.threads, p.gbs))
            .collect();
        let _ = writeln!(
            out,
            "  {} node {} -> node {}: {} | saturated at {} thread(s)",
            s.kernel.name(),
            s.cpu_node,
            s.memory_node,
            points.join(" | "),
            s.saturated_at
        );
    }
}

fn cross(out: &mut String, report: &MatrixReport) {
    if report.cross.is_empty() {
        return;
    }
    out.push_str("\ncross traffic (read, GB/s; Li's flow 3 beside flow 4):\n");
    for c in &report.cross {
        let _ = writeln!(
            out,
            "  node {} -> node {}: alone {:.1} | beside node {}'s reads of node {} {:.1} ({:.0}%), which got {:.1}",
            c.cpu_node,
            c.memory_node,
            c.alone_gbs,
            c.cross_node,
            c.memory_node,
            c.with_cross_gbs,
            100.0 * c.with_cross_gbs / c.alone_gbs.max(1e-9),
            c.cross_gbs
        );
    }
}

/// Heat maps of every matrix.
pub fn matrix_chart(report: &MatrixReport) -> String {
    let names = |ids: &[NodeId]| ids.iter().map(|n| format!("node {n}")).collect::<Vec<_>>();
    let map = |title: &str, unit: &str, values: Vec<Vec<Option<f64>>>, high_is_good| Heatmap {
        title: title.into(),
        unit: unit.into(),
        rows: names(&report.cpu_nodes),
        columns: names(&report.memory_nodes),
        values,
        high_is_good,
    };
    let latency = |m: &[Vec<Latency>]| {
        m.iter()
            .map(|r| r.iter().map(|l| Some(l.ns)).collect())
            .collect()
    };
    let mut maps = vec![map(
        "latency, base pages (CPU node x memory node)",
        "ns",
        latency(&report.latency),
        false,
    )];
    if !report.latency_huge.is_empty() {
        maps.push(map(
            "latency, huge pages",
            "ns",
            latency(&report.latency_huge),
            false,
        ));
    }
    for kernel in Kernel::ALL {
        let values = report
            .bandwidth(kernel)
            .iter()
            .map(|r| r.iter().map(|b| Some(b.gbs)).collect())
            .collect();
        maps.push(map(
            &format!("{} bandwidth", kernel.name()),
            "GB/s",
            values,
            true,
        ));
    }
    if !report.cross.is_empty() {
        let values = report
            .cpu_nodes
            .iter()
            .map(|&c| {
                report
                    .memory_nodes
                    .iter()
                    .map(|&m| {
                        report
                            .cross
                            .iter()
                            .find(|x| x.cpu_node == c && x.memory_node == m)
                            .map(|x| x.with_cross_gbs)
                    })
                    .collect()
            })
            .collect();
        maps.push(map(
            "read bandwidth beside cross traffic",
            "GB/s",
            values,
            true,
        ));
    }
    heatmaps("numakit probe: latency and bandwidth between nodes", &maps)
}

/// Kiefer's Table 1 with this machine's figures.
pub fn kiefer_text(report: &KieferReport) -> String {
    let o = &report.options;
    let mut out = format!(
        "Kiefer et al. Table 1 on this machine: ns per random access (mean over threads), {} accesses per thread and setup\n",
        o.accesses
    );
    let mut rows = vec![vec![
        "experiment".to_string(),
        "setup".into(),
        "first".into(),
        "ns".into(),
        "second".into(),
        "ns".into(),
        "second/first".into(),
    ]];
    for r in &report.rows {
        rows.push(vec![
            r.experiment.to_string(),
            r.setup.clone(),
            r.baseline.clone(),
            format!("{:.1}", r.baseline_ns),
            r.variant.clone(),
            r.variant_ns.map_or("-".into(), |v| format!("{v:.1}")),
            r.ratio().map_or("-".into(), |x| format!("{x:.2}x")),
        ]);
    }
    out.push_str(&table(&rows));
    out.push('\n');
    let _ = writeln!(
        out,
        "placement: {}/{} array pages on their node, {}/{} thread checks on their node: {}",
        report.buffers.on_node,
        report.buffers.pages,
        report.threads.on_node,
        report.threads.threads,
        if report.placement_verified() {
            "verified"
        } else {
            "NOT verified"
        }
    );
    for note in &report.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// Throughput per workload and strategy, normalized to default.
pub fn strategies_text(report: &StrategyReport) -> String {
    let o = &report.options;
    let seats: Vec<String> = report
        .instances
        .iter()
        .map(|s| format!("node {} ({} CPU)", s.node, s.cpus.len()))
        .collect();
    let mut out = format!(
        "placement strategies (Kiefer §4): {} instance(s): {}; {} rows each; median of {} repetitions\n",
        report.instances.len(),
        seats.join(", "),
        o.sizes.rows,
        o.reps
    );
    let strategies: Vec<PlacementStrategy> = PlacementStrategy::ALL
        .into_iter()
        .filter(|s| report.outcomes.iter().any(|o| o.strategy == *s))
        .collect();
    let mut rows = vec![std::iter::once("workload".to_string())
        .chain(strategies.iter().map(|s| s.name().to_string()))
        .collect::<Vec<_>>()];
    for workload in &o.workloads {
        let mut row = vec![workload.name().to_string()];
        for s in &strategies {
            let cell = report
                .outcomes
                .iter()
                .find(|x| x.workload == *workload && x.strategy == *s)
                .map_or("-".into(), |x| match (x.strategy, x.vs_default) {
                    (PlacementStrategy::Default, _) | (_, None) => {
                        format!("{:.0} M rows/s", x.rows_per_s / 1e6)
                    }
                    (_, Some(r)) => format!("{r:.2}x"),
                });
            row.push(cell);
        }
        rows.push(row);
    }
    out.push_str(&table(&rows));
    out.push('\n');
    let _ = writeln!(out, "recommendation: {}", report.recommendation);
    for note in &report.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// `probe all-remote`: both scenarios, per node, and the ratio.
pub fn all_remote_text(r: &numakit_probe::all_remote::AllRemoteReport) -> String {
    let mut rows = vec![vec![
        "scenario".to_string(),
        "GB/s (median)".to_string(),
        "min-max".to_string(),
        "per reading node".to_string(),
    ]];
    for s in std::iter::once(&r.all_local).chain(r.all_remote.as_ref()) {
        let nodes: Vec<String> = s
            .nodes
            .iter()
            .map(|n| {
                let memory: Vec<String> = n.memory_nodes.iter().map(u32::to_string).collect();
                format!("{}->{} {:.1}", n.cpu_node, memory.join("+"), n.gbs)
            })
            .collect();
        rows.push(vec![
            s.name.clone(),
            format!("{:.1}", s.gbs),
            format!("{:.1}-{:.1}", s.min_gbs, s.max_gbs),
            nodes.join(", "),
        ]);
    }
    let (pages, placed) = r.pages;
    format!(
        "every node reading at once (Li §2), {} thread(s) per node, {} MiB per node, {} repetition(s)\n\n{}\n{}\nbuffers: {placed} of {pages} pages on the node they were placed on",
        r.all_local.nodes.first().map_or(0, |n| n.threads),
        r.options.buffer_bytes >> 20,
        r.options.reps,
        crate::render::format::table(&rows),
        r.note
    )
}

#[cfg(test)]
mod tests {
    use numakit_probe::latency::PageCheck;
    use numakit_probe::team::ThreadCheck;
    use numakit_probe::MatrixOptions;

    use super::*;

    fn report(counters: Option<Counts>, unavailable: Option<&str>) -> MatrixReport {
        let latency = Latency {
            cpu_node: 0,
            memory_node: 0,
            ns: 100.0,
            min_ns: 90.0,
            max_ns: 110.0,
            cycles: None,
            buffer: PageCheck::default(),
            threads: ThreadCheck::default(),
            counters: counters.map(|c| c.with_work(10.0, "load")),
        };
        MatrixReport {
            cpu_nodes: vec![0],
            memory_nodes: vec![0],
            options: MatrixOptions::quick(),
            clock: None,
            latency: vec![vec![latency]],
            latency_huge: Vec::new(),
            read: Vec::new(),
            write: Vec::new(),
            copy: Vec::new(),
            sweeps: Vec::new(),
            cross: Vec::new(),
            buffers: PageCheck::default(),
            threads: ThreadCheck::default(),
            notes: Vec::new(),
            counters_unavailable: unavailable.map(String::from),
        }
    }

    #[test]
    fn counters_stand_beside_the_figures_or_one_line_says_why_not() {
        let counts = Counts {
            cycles: Some(2000),
            instructions: Some(500),
            llc_misses: Some(9),
            ..Counts::default()
        };
        let text = matrix_text(&report(Some(counts), None), false);
        assert!(
            text.contains("100 ns | 0.90 LLC miss/load, IPC 0.25"),
            "{text}"
        );
        assert!(!text.contains("unavailable"), "{text}");

        let text = matrix_text(&report(None, Some("no PMU here (ENOENT)")), false);
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("hardware counters"))
            .collect();
        assert_eq!(
            lines,
            ["hardware counters: unavailable (no PMU here (ENOENT))"]
        );
        assert!(!text.contains("LLC"), "{text}");
    }
}
