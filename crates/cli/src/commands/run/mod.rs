//! `numakit run`: the main job on built-in data. It shows what numakit can
//! do in one command; each capability adds a short section here.

pub mod args;
pub mod cluster;
pub mod interfere;
pub mod locks;
pub mod mapreduce;
pub mod ops;
pub mod papers;
pub mod probe;

use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use numakit_placement::PlacementMode;
use numakit_pool::{stats, NodeStats, Pool};
use numakit_shuffle::{Strategy, SyncMode};
use numakit_topology::{NodeId, Topology};
use serde::Serialize;

use crate::commands::run::args::RunArgs;
use crate::commands::shuffle::{quick_report, ShuffleReport};
use crate::commands::{doctor, topo};
use crate::common::output;
use crate::common::parallel_sum;
use crate::common::progress::Spinner;
use crate::render::format::{bytes, table};
use numakit_ops::Progress;
use ops::OperatorSummary;

#[derive(Serialize)]
struct RunOutput {
    topology: TopologySummary,
    doctor: DoctorSummary,
    reduction: Reduction,
    shuffle: Option<ShuffleReport>,
    shuffle_skipped: Option<String>,
    simulated: Simulated,
    operators: Option<OperatorSummary>,
    operators_skipped: Option<String>,
    mapreduce: Option<mapreduce::MapReduceSummary>,
    mapreduce_skipped: Option<String>,
    probe: Option<probe::ProbeSummary>,
    probe_skipped: Option<String>,
    cluster: Option<cluster::ClusterSummary>,
    cluster_skipped: Option<String>,
    locks: Option<locks::LocksSummary>,
    locks_skipped: Option<String>,
    interference: Option<interfere::InterfereSummary>,
    interference_skipped: Option<String>,
    papers: Option<papers::PapersSummary>,
    papers_skipped: Option<String>,
    /// Wall seconds of each section, in the order they ran.
    section_seconds: Vec<(&'static str, f64)>,
}

/// Wall time of each section of the main job.
#[derive(Default)]
struct SectionClock {
    seconds: Vec<(&'static str, f64)>,
}

impl SectionClock {
    /// Runs one section under `name` and the spinner's phase of that name.
    fn time<T>(&mut self, spinner: &Spinner, name: &'static str, section: impl FnOnce() -> T) -> T {
        spinner.phase(name);
        let started = Instant::now();
        let out = section();
        self.seconds.push((name, started.elapsed().as_secs_f64()));
        out
    }
}

/// The simulator's view of Li's four-socket machine.
#[derive(Serialize)]
struct Simulated {
    machine: String,
    threads: usize,
    /// (schedule, tight GB/s predicted, Li Figure 6 GB/s)
    predictions: Vec<(Strategy, f64, f64)>,
    recommendation: String,
}

const SIMULATED_PRESET: &str = "nehalem-ex-4s";

fn simulated() -> Result<Simulated> {
    let topo = numakit_topology::presets::topology(SIMULATED_PRESET)?;
    let report = numakit_sim::predict_schedules(
        &topo,
        None,
        &numakit_sim::Calibration::li_nehalem(),
        &Default::default(),
    )?;
    let plan = numakit_sim::plan_from_report(&report)?;
    let paper = [
        (Strategy::Naive, 22.0),
        (Strategy::Ring, 70.0),
        (Strategy::Migration, 94.0),
    ];
    let predictions = paper
        .iter()
        .filter_map(|&(k, fig6)| report.row(k, SyncMode::Tight).map(|r| (k, r.gbs, fig6)))
        .collect();
    Ok(Simulated {
        machine: SIMULATED_PRESET.into(),
        threads: report.layout.threads(),
        predictions,
        recommendation: plan.why,
    })
}

#[derive(Serialize)]
struct TopologySummary {
    summary: String,
    nodes: Vec<NodeId>,
    allowed_cpus: String,
    allowed_nodes: String,
}

#[derive(Serialize)]
struct DoctorSummary {
    pass: usize,
    fail: usize,
    unavailable: usize,
    failed_checks: Vec<String>,
}

#[derive(Serialize)]
struct Reduction {
    bytes: u64,
    workers: usize,
    placement_mode: PlacementMode,
    parts: Vec<PartPlacement>,
    fill_seconds: f64,
    sum_seconds: f64,
    gb_per_second: f64,
    sum: u64,
    verified: bool,
    per_node: Vec<NodeStats>,
}

#[derive(Serialize)]
struct PartPlacement {
    worker_node: NodeId,
    memory_node: NodeId,
    bytes: u64,
    pages_on_node: usize,
    pages: usize,
}

/// Runs the main job: every section in turn on one pool, then the report.
/// A section that may be skipped here (the shuffle, the distributed join)
/// says why; the reduction, operators, MapReduce, probe and locks must succeed, or
/// the command fails after printing the report.
pub fn run(args: &RunArgs, mode: PlacementMode, json: bool, quiet: bool) -> Result<()> {
    let spinner = Spinner::new(quiet || json);
    spinner.set_prefix("main job");
    let mut clock = SectionClock::default();
    let (topo_summary, report, topology) = clock.time(&spinner, "topology and doctor", || {
        numakit_topology::discover().map(|topology| {
            let topology = Arc::new(topology);
            let report = doctor::checks(topology.clone());
            (topology_summary(&topology), report, topology)
        })
    })?;
    let doctor_summary = doctor_summary(&report);
    let (reduction, pool) =
        clock.time(&spinner, "parallel sum", || reduction(topology, args, mode))?;
    let (shuffle, shuffle_skipped) = clock.time(&spinner, "shuffle", || {
        skipped_on_error(quick_report(&pool, args.size_mib.max(8)))
    });
    let (operators, operators_skipped) = clock.time(&spinner, "operators", || {
        skipped_on_error(ops::operators(&pool, ops::probe_rows(args.size_mib)))
    });
    let (mapreduce, mapreduce_skipped) = clock.time(&spinner, "MapReduce", || {
        skipped_on_error(mapreduce::mapreduce(
            &pool,
            mapreduce::input_bytes(args.size_mib),
        ))
    });
    let (probe, probe_skipped) = clock.time(&spinner, "memory probe", || {
        skipped_on_error(probe::probe(pool.placer(), args.size_mib))
    });
    let (cluster, cluster_skipped) = match clock.time(&spinner, "distributed join", || {
        cluster::cluster(args.size_mib, mode)
    })? {
        Ok(summary) => (Some(summary), None),
        Err(why) => (None, Some(why)),
    };
    let (locks, locks_skipped) = clock.time(&spinner, "locks", || {
        skipped_on_error(locks::locks(pool.placer()))
    });
    let (interference, interference_skipped) = clock.time(&spinner, "interference", || {
        let cache_bytes = numakit_ops::cache_probe::measured(&pool).usable_bytes;
        match interfere::interfere(pool.placer(), cache_bytes) {
            Ok(Ok(summary)) => (Some(summary), None),
            Ok(Err(why)) => (None, Some(why)),
            Err(e) => (None, Some(format!("{e:#}"))),
        }
    });
    let (papers, papers_skipped) = clock.time(&spinner, "papers", || {
        skipped_on_error(papers::papers(pool.placer().topology().clone()))
    });
    let simulated = clock.time(&spinner, "simulated", simulated)?;
    let out = RunOutput {
        topology: topo_summary,
        doctor: doctor_summary,
        reduction,
        shuffle,
        shuffle_skipped,
        simulated,
        operators,
        operators_skipped,
        mapreduce,
        mapreduce_skipped,
        probe,
        probe_skipped,
        cluster,
        cluster_skipped,
        locks,
        locks_skipped,
        interference,
        interference_skipped,
        papers,
        papers_skipped,
        section_seconds: clock.seconds,
    };
    spinner.finish();
    output::report(json, &out, || render(&out, &report))?;
    failures(&out)
}

/// A section's summary, or why it has none.
fn skipped_on_error<T>(result: Result<T>) -> (Option<T>, Option<String>) {
    match result {
        Ok(summary) => (Some(summary), None),
        Err(e) => (None, Some(format!("{e:#}"))),
    }
}

fn topology_summary(topology: &Topology) -> TopologySummary {
    TopologySummary {
        summary: topo::summary(topology),
        nodes: topology.nodes.iter().map(|n| n.id).collect(),
        allowed_cpus: topology.allowed.cpus.to_string(),
        allowed_nodes: topology.allowed.nodes.to_string(),
    }
}

fn doctor_summary(report: &numakit_placement::doctor::Report) -> DoctorSummary {
    DoctorSummary {
        pass: report.passed,
        fail: report.failed,
        unavailable: report.unavailable,
        failed_checks: report
            .checks
            .iter()
            .filter(|c| c.status == numakit_placement::doctor::Status::Fail)
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect(),
    }
}

/// The main job fails when a section that must work here did not (the
/// shuffle and the distributed join may be skipped with a reason).
fn failures(out: &RunOutput) -> Result<()> {
    anyhow::ensure!(out.reduction.verified, "the reduction's result is wrong");
    if let Some(why) = &out.operators_skipped {
        anyhow::bail!("the operators failed: {why}");
    }
    if let Some(why) = &out.locks_skipped {
        anyhow::bail!("the locks failed: {why}");
    }
    if let Some(why) = &out.mapreduce_skipped {
        anyhow::bail!("the MapReduce applications failed: {why}");
    }
    if let Some(why) = &out.probe_skipped {
        anyhow::bail!("the memory probe failed: {why}");
    }
    if let Some(why) = &out.papers_skipped {
        anyhow::bail!("the papers section failed: {why}");
    }
    Ok(())
}

fn reduction(
    topology: Arc<Topology>,
    args: &RunArgs,
    mode: PlacementMode,
) -> Result<(Reduction, Pool)> {
    crate::usage_ensure!(args.size_mib > 0, "--size-mib must be at least 1");
    crate::common::budget::check(
        &format!("the main job's data (--size-mib {})", args.size_mib),
        crate::common::budget::times(args.size_mib, 1 << 20),
    )?;
    let pool = args.pool.build_on(&topology, mode)?;
    let data =
        parallel_sum::place_and_fill(&pool, args.size_mib * (1 << 20) / 8, args.sum.huge_pages)?;
    pool.reset_stats();
    let start = Instant::now();
    let sum = parallel_sum::pool_sum(&pool, &data, args.sum.morsel_kib)?;
    let sum_seconds = start.elapsed().as_secs_f64();
    let parts = parallel_sum::placement_report(&data)?
        .into_iter()
        .zip(&data.parts)
        .map(
            |((memory_node, pages_on_node, pages), part)| PartPlacement {
                worker_node: part.worker_node,
                memory_node,
                bytes: part.buffer.len() as u64 * 8,
                pages_on_node,
                pages,
            },
        )
        .collect();
    let reduction = Reduction {
        bytes: data.bytes(),
        workers: pool.workers(),
        placement_mode: mode,
        parts,
        fill_seconds: data.fill_time.as_secs_f64(),
        sum_seconds,
        gb_per_second: data.bytes() as f64 / sum_seconds / 1e9,
        sum,
        verified: sum == data.expected_sum(),
        per_node: stats::per_node(&pool.stats()),
    };
    Ok((reduction, pool))
}

fn render(out: &RunOutput, report: &numakit_placement::doctor::Report) -> String {
    let mut lines = vec![
        "numakit main job (built-in data)".to_string(),
        String::new(),
        format!("1. topology: {}", out.topology.summary),
        format!(
            "   allowed CPUs {} | memory nodes {}   (numakit topo for more)",
            out.topology.allowed_cpus, out.topology.allowed_nodes
        ),
        format!(
            "2. {}   (numakit doctor for details)",
            doctor::verdict(report)
        ),
    ];
    lines.extend(
        out.doctor
            .failed_checks
            .iter()
            .map(|c| format!("   FAIL {c}")),
    );
    lines.extend(reduction_lines(&out.reduction));
    lines.extend(shuffle_lines(out));
    lines.extend(section(
        &out.operators,
        &out.operators_skipped,
        ops::lines,
        "6. operators failed",
    ));
    lines.extend(section(
        &out.mapreduce,
        &out.mapreduce_skipped,
        mapreduce::lines,
        "7. MapReduce failed",
    ));
    lines.extend(section(
        &out.probe,
        &out.probe_skipped,
        probe::lines,
        "8. memory probe failed",
    ));
    lines.extend(section(
        &out.cluster,
        &out.cluster_skipped,
        cluster::lines,
        "9. distributed join skipped",
    ));
    lines.extend(section(
        &out.locks,
        &out.locks_skipped,
        locks::lines,
        "10. locks failed",
    ));
    lines.extend(section(
        &out.interference,
        &out.interference_skipped,
        interfere::lines,
        "11. interference skipped",
    ));
    lines.extend(section(
        &out.papers,
        &out.papers_skipped,
        papers::lines,
        "12. papers failed",
    ));
    lines.join("\n")
}

/// A section's lines, or one line saying why it has none.
fn section<T>(
    summary: &Option<T>,
    skipped: &Option<String>,
    lines: impl Fn(&T) -> Vec<String>,
    failed: &str,
) -> Vec<String> {
    match summary {
        Some(s) => lines(s),
        None => vec![format!("{failed}: {}", skipped.as_deref().unwrap_or("?"))],
    }
}

/// Section 3: where the reduction's data lay, its result, the pool's work.
fn reduction_lines(r: &Reduction) -> Vec<String> {
    let mut lines = vec![format!(
        "3. parallel sum of {} of u64 placed node by node, {} workers, placement {}",
        bytes(r.bytes),
        r.workers,
        crate::render::format::name_of(&r.placement_mode)
    )];
    for p in &r.parts {
        lines.push(format!(
            "   node {} data: {} on node {}: {}/{} pages there",
            p.worker_node,
            bytes(p.bytes),
            p.memory_node,
            p.pages_on_node,
            p.pages
        ));
    }
    lines.push(format!(
        "   fill {:.3} s | sum {:.3} s = {:.1} GB/s | result {} {}",
        r.fill_seconds,
        r.sum_seconds,
        r.gb_per_second,
        r.sum,
        if r.verified { "(verified)" } else { "(WRONG)" }
    ));
    let mut rows = vec![[
        "   node",
        "workers",
        "local tasks",
        "stolen tasks",
        "busy ms",
    ]
    .map(String::from)
    .to_vec()];
    for n in &r.per_node {
        rows.push(vec![
            format!("   {}", n.node),
            n.workers.to_string(),
            n.tasks_local.to_string(),
            n.tasks_stolen.to_string(),
            format!("{:.1}", n.busy_ns as f64 / 1e6),
        ]);
    }
    lines.push(table(&rows));
    lines
}

fn shuffle_lines(out: &RunOutput) -> Vec<String> {
    let Some(s) = &out.shuffle else {
        let why = out.shuffle_skipped.as_deref().unwrap_or("not run");
        return vec![format!("4. shuffle skipped: {why}")];
    };
    let mut lines = vec![format!(
        "4. shuffle (Li et al. 4.1): {} over {} threads ({} node(s) x {}), median of {} runs, every result verified",
        bytes(s.bytes),
        s.threads,
        s.sockets,
        s.threads_per_socket,
        s.reps
    )];
    let mut parts = vec![format!("plain read {:.1} GB/s", s.plain_read_gbs.median)];
    parts.extend(s.results.iter().map(|r| {
        format!(
            "{} ({}) {:.1} GB/s = {:.2}x",
            r.schedule, r.sync, r.gbs.median, r.vs_plain_read
        )
    }));
    lines.push(format!("   {}", parts.join(" | ")));
    lines.push("   (numakit shuffle for all schedules, --sweep, --chart)".into());
    let sim = &out.simulated;
    lines.push(format!(
        "5. simulated on {} ({} threads), predicted vs Li Figure 6: {}",
        sim.machine,
        sim.threads,
        sim.predictions
            .iter()
            .map(|(k, gbs, paper)| format!("{k} {gbs:.0} vs {paper:.0} GB/s"))
            .collect::<Vec<_>>()
            .join(" | ")
    ));
    lines.extend(sim.recommendation.lines().map(|l| format!("   {l}")));
    lines.push("   (numakit simulate --all-presets, numakit shuffle --plan)".into());
    lines
}
