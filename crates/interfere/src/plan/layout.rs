//! A grouping made concrete: the machine's nodes and CPUs given to the
//! groups, each job named, and the choice explained in words. The k-th
//! largest group of a wave gets the k-th largest node (ties in node
//! order), and a group's jobs take its node's allowed CPUs in order.
//!
//! It lays out and explains; the search ([`crate::plan::search`]) decides.

use numakit_topology::{CpuId, NodeId, Topology};
use serde::Serialize;

use crate::error::{InterfereError, Result};
use crate::plan::predict::{Predictor, Source};
use crate::plan::search::{self, Grouping};
use crate::workload::Workload;

/// A node and the CPUs of it this process may use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeCpus {
    /// The node.
    pub node: NodeId,
    /// Its allowed CPUs, in order.
    pub cpus: Vec<CpuId>,
}

/// The nodes a plan may use, largest first (ties in node order).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Machine {
    /// Every node with at least one allowed CPU.
    pub nodes: Vec<NodeCpus>,
}

impl Machine {
    /// The allowed nodes and CPUs of `topology`.
    pub fn of(topology: &Topology) -> Self {
        let allowed = &topology.allowed.cpus;
        let nodes = topology
            .compute_nodes()
            .into_iter()
            .map(|node| NodeCpus {
                node,
                cpus: topology
                    .cpus
                    .iter()
                    .filter(|c| c.node == Some(node) && allowed.contains(c.id))
                    .map(|c| c.id)
                    .collect(),
            })
            .collect();
        Self::new(nodes)
    }

    /// A machine of these nodes.
    pub fn new(mut nodes: Vec<NodeCpus>) -> Self {
        nodes.retain(|n| !n.cpus.is_empty());
        nodes.sort_by(|a, b| b.cpus.len().cmp(&a.cpus.len()).then(a.node.cmp(&b.node)));
        Machine { nodes }
    }

    fn cpus(&self) -> usize {
        self.nodes.iter().map(|n| n.cpus.len()).sum()
    }
}

/// One job where the plan puts it.
#[derive(Clone, Debug, Serialize)]
pub struct PlacedJob {
    /// Index of the job in the request.
    pub index: usize,
    /// The job's name (its workload, numbered when it appears twice).
    pub job: String,
    /// Its workload.
    pub workload: Workload,
    /// The CPU it runs on.
    pub cpu: CpuId,
    /// Its predicted slowdown beside the rest of its group.
    pub predicted_slowdown: f64,
}

/// The jobs of one wave on one node.
#[derive(Clone, Debug, Serialize)]
pub struct NodeGroup {
    /// The node.
    pub node: NodeId,
    /// Its jobs.
    pub jobs: Vec<PlacedJob>,
}

/// Jobs that run at the same time.
#[derive(Clone, Debug, Serialize)]
pub struct Wave {
    /// One group per node used.
    pub groups: Vec<NodeGroup>,
}

/// Where every job runs, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// The waves, run one after another.
    pub waves: Vec<Wave>,
    /// Predicted time in units of one job's time alone: the sum over
    /// waves of the slowest job's slowdown.
    pub predicted_time: f64,
    /// The reasons, one line each.
    pub explanation: Vec<String>,
}

/// Each job's name: its workload, numbered when several jobs share it.
pub fn job_names(jobs: &[Workload]) -> Vec<String> {
    jobs.iter()
        .enumerate()
        .map(|(i, w)| {
            let same = jobs.iter().filter(|&x| x == w).count();
            if same > 1 {
                let nth = jobs[..=i].iter().filter(|&x| x == w).count();
                format!("{w}#{nth}")
            } else {
                w.to_string()
            }
        })
        .collect()
}

/// The least-interference plan for `jobs` on `machine`.
pub fn make(jobs: &[Workload], machine: &Machine, predictor: &Predictor) -> Result<Plan> {
    if jobs.is_empty() {
        return Err(InterfereError::BadRequest("name at least one job".into()));
    }
    if machine.nodes.is_empty() {
        return Err(InterfereError::BadRequest(
            "this process may use no CPU to place jobs on".into(),
        ));
    }
    let capacities: Vec<usize> = machine.nodes.iter().map(|n| n.cpus.len()).collect();
    let (grouping, score) = search::best(jobs, &capacities, predictor);
    let names = job_names(jobs);
    let slowdowns = search::slowdowns(jobs, &grouping, predictor);
    let waves = lay_out(&grouping, machine, jobs, &names, &slowdowns);
    let explanation = explain(
        jobs, &names, machine, &grouping, &waves, predictor, score.time,
    );
    Ok(Plan {
        waves,
        predicted_time: score.time,
        explanation,
    })
}

fn lay_out(
    grouping: &Grouping,
    machine: &Machine,
    jobs: &[Workload],
    names: &[String],
    slowdowns: &[f64],
) -> Vec<Wave> {
    grouping
        .iter()
        .map(|wave| {
            let mut groups: Vec<&Vec<usize>> = wave.iter().collect();
            groups.sort_by_key(|g| std::cmp::Reverse(g.len()));
            let mut groups: Vec<NodeGroup> = groups
                .into_iter()
                .zip(&machine.nodes)
                .map(|(group, node)| NodeGroup {
                    node: node.node,
                    jobs: group
                        .iter()
                        .zip(&node.cpus)
                        .map(|(&j, &cpu)| PlacedJob {
                            index: j,
                            job: names[j].clone(),
                            workload: jobs[j],
                            cpu,
                            predicted_slowdown: slowdowns[j],
                        })
                        .collect(),
                })
                .collect();
            groups.sort_by_key(|g| g.node);
            Wave { groups }
        })
        .collect()
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn explain(
    jobs: &[Workload],
    names: &[String],
    machine: &Machine,
    grouping: &Grouping,
    waves: &[Wave],
    predictor: &Predictor,
    time: f64,
) -> Vec<String> {
    let mut lines = vec![overview(jobs.len(), machine, waves)];
    for (w, wave) in waves.iter().enumerate() {
        for group in &wave.groups {
            lines.push(group_line(w, waves.len(), group, predictor));
        }
    }
    lines.extend(kept_apart(jobs, names, grouping, predictor));
    lines.push(format!(
        "predicted time: {time:.2} job-times (each job alone takes 1; {} wave{} back to back)",
        waves.len(),
        if waves.len() == 1 { "" } else { "s" }
    ));
    lines
}

fn overview(jobs: usize, machine: &Machine, waves: &[Wave]) -> String {
    let shape = format!(
        "{} on {} with {}",
        plural(jobs, "job", "jobs"),
        plural(machine.nodes.len(), "node", "nodes"),
        plural(machine.cpus(), "CPU", "CPUs")
    );
    let every_own = waves.len() == 1 && waves[0].groups.iter().all(|g| g.jobs.len() == 1);
    if every_own && machine.nodes.len() >= jobs {
        format!("{shape}: each job gets a node of its own, nothing to share")
    } else if waves.len() == 1 {
        format!("{shape}: one wave, every job at once; jobs that share a node chosen to hurt each other least")
    } else {
        format!(
            "{shape}: {} waves one after another (more jobs than CPUs, or neighbours that would more than double each other's time); each wave's jobs chosen to hurt each other least",
            waves.len()
        )
    }
}

fn group_line(w: usize, waves: usize, group: &NodeGroup, predictor: &Predictor) -> String {
    let wave = if waves > 1 {
        format!("wave {}, ", w + 1)
    } else {
        String::new()
    };
    let cpus: Vec<String> = group.jobs.iter().map(|j| j.cpu.to_string()).collect();
    let head = format!("{wave}node {} (CPU {})", group.node, cpus.join(", "));
    if group.jobs.len() == 1 {
        return format!("{head}: {} alone on its node", group.jobs[0].job);
    }
    let each: Vec<String> = group
        .jobs
        .iter()
        .map(|j| {
            let sources: Vec<Source> = group
                .jobs
                .iter()
                .filter(|o| o.index != j.index)
                .map(|o| predictor.slowdown(j.workload, o.workload).1)
                .collect();
            let source = if sources.iter().all(|&s| s == Source::Measured) {
                "measured"
            } else if sources.iter().all(|&s| s == Source::Declared) {
                "declared"
            } else {
                "measured and declared"
            };
            format!("{} {:.2}x ({source})", j.job, j.predicted_slowdown)
        })
        .collect();
    let names: Vec<&str> = group.jobs.iter().map(|j| j.job.as_str()).collect();
    format!(
        "{head}: {} together, predicted {}",
        names.join(" + "),
        each.join(", ")
    )
}

/// The pairs the plan kept apart that would have hurt most together.
fn kept_apart(
    jobs: &[Workload],
    names: &[String],
    grouping: &Grouping,
    predictor: &Predictor,
) -> Vec<String> {
    // Jobs of the same two workloads that do share a node make the pair
    // not "kept apart", whichever copies they are.
    let together = |a: usize, b: usize| {
        grouping.iter().flatten().any(|g| {
            g.iter()
                .any(|&x| jobs[x] == jobs[a] && g.iter().any(|&y| y != x && jobs[y] == jobs[b]))
        })
    };
    let mut pairs = Vec::new();
    for a in 0..jobs.len() {
        for b in a + 1..jobs.len() {
            if together(a, b) {
                continue;
            }
            let (ab, source) = predictor.slowdown(jobs[a], jobs[b]);
            let (ba, _) = predictor.slowdown(jobs[b], jobs[a]);
            if ab + ba - 2.0 > 0.05 {
                pairs.push((ab + ba, a, b, ab, ba, source));
            }
        }
    }
    pairs.sort_by(|x, y| y.0.total_cmp(&x.0));
    pairs
        .into_iter()
        .take(3)
        .map(|(_, a, b, ab, ba, source)| {
            format!(
                "kept apart: {} and {} would run {ab:.2}x and {ba:.2}x slower beside each other ({})",
                names[a],
                names[b],
                source.name()
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Workload::*;

    fn machine(nodes: &[(NodeId, &[CpuId])]) -> Machine {
        Machine::new(
            nodes
                .iter()
                .map(|&(node, cpus)| NodeCpus {
                    node,
                    cpus: cpus.to_vec(),
                })
                .collect(),
        )
    }

    #[test]
    fn duplicate_workloads_are_numbered() {
        assert_eq!(
            job_names(&[Scan, Probe, Scan]),
            vec!["scan#1", "probe", "scan#2"]
        );
    }

    #[test]
    fn groups_get_nodes_and_distinct_cpus_and_the_plan_says_why() {
        let m = machine(&[(0, &[0, 1]), (1, &[2, 3])]);
        let jobs = [Scan, Scan, Probe, Compute];
        let plan = make(&jobs, &m, &Predictor::declared()).unwrap();
        assert_eq!(plan.waves.len(), 1);
        let groups = &plan.waves[0].groups;
        assert_eq!(groups.iter().map(|g| g.node).collect::<Vec<_>>(), [0, 1]);
        let mut cpus: Vec<CpuId> = groups
            .iter()
            .flat_map(|g| g.jobs.iter().map(|j| j.cpu))
            .collect();
        cpus.sort_unstable();
        assert_eq!(cpus, [0, 1, 2, 3]);
        for g in groups {
            let node_cpus = &m.nodes.iter().find(|n| n.node == g.node).unwrap().cpus;
            assert!(g.jobs.iter().all(|j| node_cpus.contains(&j.cpu)));
            let scans = g.jobs.iter().filter(|j| j.workload == Scan).count();
            assert_eq!(scans, 1, "{plan:?}");
        }
        let text = plan.explanation.join("\n");
        assert!(text.contains("kept apart: scan#1 and scan#2"), "{text}");
        assert!(text.contains("declared"), "{text}");
    }

    #[test]
    fn four_nodes_isolate_four_jobs_and_an_empty_request_is_refused() {
        let m = machine(&[(0, &[0]), (1, &[1]), (2, &[2]), (3, &[3])]);
        let plan = make(&[Scan, Scan, Probe, Compute], &m, &Predictor::declared()).unwrap();
        let nodes: Vec<NodeId> = plan.waves[0].groups.iter().map(|g| g.node).collect();
        assert_eq!(nodes, [0, 1, 2, 3]);
        assert!(
            plan.explanation[0].contains("a node of its own"),
            "{plan:?}"
        );
        assert_eq!(plan.predicted_time, 1.0);
        assert!(make(&[], &m, &Predictor::declared()).is_err());
        assert!(make(&[Scan], &machine(&[]), &Predictor::declared()).is_err());
    }

    #[test]
    fn the_larger_group_takes_the_larger_node() {
        let m = machine(&[(0, &[0]), (1, &[1, 2, 3])]);
        let plan = make(&[Compute, Compute, Compute], &m, &Predictor::declared()).unwrap();
        let big = plan.waves[0]
            .groups
            .iter()
            .max_by_key(|g| g.jobs.len())
            .unwrap();
        assert_eq!(big.node, 1);
        assert_eq!(plan.waves.len(), 1);
    }
}
