//! Discovery against prepared sysfs/procfs trees: the odd machines that
//! containers, Slurm and unusual firmware produce.

use std::fs;
use std::path::Path;

use numakit_topology::{discover_at, CacheKind, IdSet};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// CPUs 0..n, two hardware threads per core (siblings i and i^1), the socket
/// given by `socket_of`, one L1d per core and one L3 per socket.
fn write_cpus(root: &Path, n: u32, socket_of: impl Fn(u32) -> u32) {
    write(
        root,
        "sys/devices/system/cpu/online",
        &format!("0-{}\n", n - 1),
    );
    for cpu in 0..n {
        let base = format!("sys/devices/system/cpu/cpu{cpu}");
        let core = cpu / 2;
        let pair = format!("{}-{}", core * 2, core * 2 + 1);
        write(
            root,
            &format!("{base}/topology/core_id"),
            &format!("{core}\n"),
        );
        write(
            root,
            &format!("{base}/topology/physical_package_id"),
            &format!("{}\n", socket_of(cpu)),
        );
        write(
            root,
            &format!("{base}/topology/thread_siblings_list"),
            &format!("{pair}\n"),
        );
        let l1 = format!("{base}/cache/index0");
        write(root, &format!("{l1}/level"), "1\n");
        write(root, &format!("{l1}/type"), "Data\n");
        write(root, &format!("{l1}/size"), "48K\n");
        write(root, &format!("{l1}/shared_cpu_list"), &format!("{pair}\n"));
        write(root, &format!("{l1}/coherency_line_size"), "64\n");
        let socket = socket_of(cpu);
        let socket_cpus: Vec<u32> = (0..n).filter(|&c| socket_of(c) == socket).collect();
        let l3 = format!("{base}/cache/index3");
        write(root, &format!("{l3}/level"), "3\n");
        write(root, &format!("{l3}/type"), "Unified\n");
        write(root, &format!("{l3}/size"), "32768K\n");
        let list: IdSet = socket_cpus.into_iter().collect();
        write(root, &format!("{l3}/shared_cpu_list"), &format!("{list}\n"));
    }
}

fn write_node(root: &Path, id: u32, cpulist: &str, mem_kib: u64, distance: Option<&str>) {
    let base = format!("sys/devices/system/node/node{id}");
    write(root, &format!("{base}/cpulist"), &format!("{cpulist}\n"));
    write(
        root,
        &format!("{base}/meminfo"),
        &format!(
            "Node {id} MemTotal:       {mem_kib} kB\nNode {id} MemFree:        {} kB\n",
            mem_kib / 2
        ),
    );
    if let Some(d) = distance {
        write(root, &format!("{base}/distance"), &format!("{d}\n"));
    }
}

fn write_status(root: &Path, cpus: &str, mems: &str) {
    write(
        root,
        "proc/self/status",
        &format!("Name:\ttest\nCpus_allowed_list:\t{cpus}\nMems_allowed_list:\t{mems}\n"),
    );
}

#[test]
fn sparse_ids_memory_only_node_and_restricted_process() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_cpus(root, 8, |c| c / 4);
    write(root, "sys/devices/system/node/online", "0,2-3\n");
    write_node(root, 0, "0-3", 4 << 20, Some("10 21 31"));
    write_node(root, 2, "4-7", 4 << 20, Some("21 10 31"));
    write_node(root, 3, "", 8 << 20, Some("31 31 10"));
    write(
        root,
        "proc/meminfo",
        &format!("MemTotal:       {} kB\n", 16u64 << 20),
    );
    write_status(root, "0-5", "0,2");

    let topo = discover_at(root).unwrap();
    assert_eq!(topo.node_ids().to_list_string(), "0,2-3");
    assert!(
        topo.node(3).unwrap().cpus.is_empty(),
        "node 3 is memory-only"
    );
    assert_eq!(topo.node(3).unwrap().memory_bytes, Some(8 << 30));
    assert!(
        topo.node_memory_is_reliable(),
        "16 GiB of nodes, 16 GiB MemTotal"
    );
    assert_eq!(topo.distance(2, 3).unwrap(), 31);
    assert!(topo.distances_reported);
    assert_eq!(topo.nodes_by_distance(0).unwrap(), vec![2, 3]);
    assert_eq!(topo.node_of_cpu(5), Some(2));
    assert_eq!(topo.node(2).unwrap().socket, Some(1));
    assert_eq!(topo.cpus[3].siblings.to_list_string(), "2-3");
    assert_eq!(topo.core_count(), 4);
    assert_eq!(topo.sockets(), vec![0, 1]);
    assert_eq!(topo.allowed.cpus.to_list_string(), "0-5");
    assert_eq!(topo.allowed.nodes.to_list_string(), "0,2");
    assert_eq!(topo.compute_nodes(), vec![0, 2]);
    assert_eq!(topo.memory_nodes(), vec![0, 2]);
    assert_eq!(topo.allowed_cpus_of(2).unwrap().to_list_string(), "4-5");
    assert!(topo.node(1).is_err(), "node 1 does not exist");
    let l3: Vec<_> = topo.caches.iter().filter(|c| c.level == 3).collect();
    assert_eq!(l3.len(), 2);
    assert_eq!(l3[1].cpus.to_list_string(), "4-7");
    assert_eq!(l3[0].size_bytes, 32 << 20);
    assert_eq!(
        topo.caches
            .iter()
            .filter(|c| c.kind == CacheKind::Data)
            .count(),
        4
    );
    assert!(topo.notes.iter().any(|n| n.contains("CPUs 0-5")));
    assert!(topo.notes.iter().any(|n| n.contains("nodes 0,2")));
}

#[test]
fn missing_distance_table_assumes_linux_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_cpus(root, 4, |c| c / 2);
    write_node(root, 0, "0-1", 1 << 20, None);
    write_node(root, 1, "2-3", 1 << 20, None);
    let topo = discover_at(root).unwrap();
    assert!(!topo.distances_reported);
    assert_eq!(topo.distance(0, 1).unwrap(), 20);
    assert_eq!(topo.distance(1, 1).unwrap(), 10);
    assert!(topo
        .notes
        .iter()
        .any(|n| n.contains("no usable distance table")));
    // Without a status file the whole machine is allowed.
    assert_eq!(topo.allowed.cpus.to_list_string(), "0-3");
}

#[test]
fn no_node_directory_means_one_node() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_cpus(root, 2, |_| 0);
    write(root, "proc/meminfo", "MemTotal:       2048 kB\n");
    let topo = discover_at(root).unwrap();
    assert_eq!(topo.nodes.len(), 1);
    assert_eq!(topo.nodes[0].cpus.to_list_string(), "0-1");
    assert_eq!(topo.nodes[0].memory_bytes, Some(2048 * 1024));
    assert_eq!(topo.compute_nodes(), vec![0]);
}

#[test]
fn cpu_only_node_and_memory_that_does_not_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_cpus(root, 4, |c| c / 2);
    write_node(root, 0, "0-1", 1 << 20, Some("10 20"));
    write_node(root, 1, "2-3", 0, Some("20 10"));
    write(
        root,
        "proc/meminfo",
        &format!("MemTotal:       {} kB\n", 4u64 << 20),
    );
    let topo = discover_at(root).unwrap();
    assert_eq!(topo.node(1).unwrap().memory_bytes, Some(0));
    assert_eq!(
        topo.memory_nodes(),
        vec![0],
        "a CPU-only node holds no buffers"
    );
    assert_eq!(topo.compute_nodes(), vec![0, 1]);
    assert!(
        topo.notes.iter().any(|n| n.contains("MemTotal")),
        "{:?}",
        topo.notes
    );
}

#[test]
fn cgroup_cpuset_narrows_what_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_cpus(root, 4, |c| c / 2);
    write_node(root, 0, "0-1", 1 << 20, Some("10 20"));
    write_node(root, 1, "2-3", 1 << 20, Some("20 10"));
    write_status(root, "0-3", "0-1");
    write(root, "proc/self/cgroup", "0::/slurm/job42\n");
    write(
        root,
        "sys/fs/cgroup/slurm/job42/cpuset.cpus.effective",
        "2-3\n",
    );
    write(
        root,
        "sys/fs/cgroup/slurm/job42/cpuset.mems.effective",
        "1\n",
    );
    let topo = discover_at(root).unwrap();
    assert_eq!(topo.allowed.cpus.to_list_string(), "2-3");
    assert_eq!(topo.allowed.nodes.to_list_string(), "1");
    assert_eq!(topo.compute_nodes(), vec![1]);
}

#[test]
fn malformed_files_give_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_cpus(root, 2, |_| 0);
    write_node(root, 0, "0-x", 1 << 20, Some("10"));
    let err = discover_at(root).unwrap_err().to_string();
    assert!(err.contains("0-x"), "{err}");
}

#[test]
fn this_machine_is_discovered() {
    let topo = numakit_topology::discover().unwrap();
    assert!(!topo.nodes.is_empty());
    assert!(!topo.cpus.is_empty());
    assert!(!topo.allowed.cpus.is_empty());
    assert!(!topo.compute_nodes().is_empty());
    let n = topo.nodes.len();
    assert_eq!(topo.distances.len(), n);
}
