//! Placement on this machine (one node here; the multi-node behaviour is
//! proven in guests by the CLI's numa_vm test) and every refusal path.

use std::sync::Arc;

use numakit_placement::{
    current_affinity, BufferOptions, HugePages, MemPolicy, NodeBuffer, Outcome, PageLocation,
    Placement, PlacementError, PlacementMode, Placer,
};
use numakit_topology::{CpuSet, MachineDescription, NodeSet, Topology};

fn here(mode: PlacementMode) -> Placer {
    Placer::new(Arc::new(numakit_topology::discover().unwrap()), mode)
}

fn first_node(p: &Placer) -> u32 {
    p.topology().memory_nodes()[0]
}

#[test]
fn a_bound_buffer_is_zeroed_usable_and_on_its_node() {
    let placer = here(PlacementMode::Strict);
    let node = first_node(&placer);
    let mut buf = NodeBuffer::<u64>::new(&placer, 100_000, Placement::OnNode(node)).unwrap();
    assert_eq!(buf.len(), 100_000);
    assert!(buf.iter().all(|&v| v == 0));
    buf.iter_mut().enumerate().for_each(|(i, v)| *v = i as u64);
    assert_eq!(buf.iter().sum::<u64>(), 99_999 * 100_000 / 2);
    let counts = buf.pages_per_node().unwrap();
    assert_eq!(counts.len(), 1);
    assert_eq!(
        counts.get(&node).copied(),
        Some(buf.byte_len().div_ceil(4096))
    );
    assert_eq!(
        buf.migrate_to(&placer, node).unwrap(),
        buf.byte_len().div_ceil(4096)
    );
}

#[test]
fn untouched_pages_are_not_present_until_written() {
    let placer = here(PlacementMode::Strict);
    let mut options = BufferOptions::new(Placement::Anywhere);
    options.prefault = false;
    let mut buf = NodeBuffer::<u8>::with_options(&placer, 4 * 4096, options).unwrap();
    assert!(buf
        .page_locations()
        .unwrap()
        .iter()
        .all(|l| *l == PageLocation::NotPresent));
    buf[0] = 1;
    let locs = buf.page_locations().unwrap();
    assert!(matches!(locs[0], PageLocation::Node(_)));
    assert_eq!(locs[1], PageLocation::NotPresent);
}

#[test]
fn empty_buffers_and_huge_page_alignment() {
    let placer = here(PlacementMode::Strict);
    let node = first_node(&placer);
    let empty = NodeBuffer::<u32>::new(&placer, 0, Placement::OnNode(node)).unwrap();
    assert!(empty.is_empty());
    assert!(empty.page_locations().unwrap().is_empty());
    let mut options = BufferOptions::new(Placement::OnNode(node));
    options.huge_pages = HugePages::Transparent;
    let huge = NodeBuffer::<u8>::with_options(&placer, 3 << 20, options).unwrap();
    assert_eq!(
        huge.as_ptr() as usize % (2 << 20),
        0,
        "THP buffers start on a 2 MiB boundary"
    );
    assert!(huge.pages_per_node().unwrap().keys().all(|&n| n == node));
}

#[test]
fn interleave_and_preferred_on_one_node() {
    let placer = here(PlacementMode::Strict);
    let nodes: NodeSet = placer.topology().memory_nodes().into_iter().collect();
    let buf =
        NodeBuffer::<u8>::new(&placer, 64 * 4096, Placement::Interleave(nodes.clone())).unwrap();
    assert!(buf
        .pages_per_node()
        .unwrap()
        .keys()
        .all(|n| nodes.contains(*n)));
    let preferred =
        NodeBuffer::<u8>::new(&placer, 4096, Placement::Preferred(first_node(&placer))).unwrap();
    assert_eq!(
        preferred.pages_per_node().unwrap().values().sum::<usize>(),
        1
    );
}

#[test]
fn thread_policies_and_pinning_apply() {
    let placer = here(PlacementMode::Strict);
    let node = first_node(&placer);
    let p = placer.clone();
    std::thread::spawn(move || {
        assert_eq!(
            p.set_thread_policy(&MemPolicy::Bind(NodeSet::single(node)))
                .unwrap(),
            Outcome::Applied
        );
        assert_eq!(
            p.set_thread_policy(&MemPolicy::Interleave(NodeSet::single(node)))
                .unwrap(),
            Outcome::Applied
        );
        assert_eq!(
            p.set_thread_policy(&MemPolicy::Local).unwrap(),
            Outcome::Applied
        );
        let cpu = p.topology().allowed.cpus.first().unwrap();
        assert_eq!(p.pin_to_cpu(cpu).unwrap(), Outcome::Applied);
        assert_eq!(current_affinity().unwrap(), CpuSet::single(cpu));
        assert_eq!(p.pin_to_node(node).unwrap(), Outcome::Applied);
    })
    .join()
    .unwrap();
}

#[test]
fn bad_requests_are_typed_errors() {
    let placer = here(PlacementMode::Strict);
    let missing = placer.topology().nodes.iter().map(|n| n.id).max().unwrap() + 1;
    let err = NodeBuffer::<u8>::new(&placer, 4096, Placement::OnNode(missing)).unwrap_err();
    assert!(
        matches!(err, PlacementError::UnknownNode { node, .. } if node == missing),
        "{err}"
    );
    assert!(matches!(
        placer.pin_to_cpus(&CpuSet::new()),
        Err(PlacementError::EmptyCpuSet)
    ));
    assert!(matches!(
        placer.pin_to_cpu(60_000),
        Err(PlacementError::DisallowedCpus { .. })
    ));
    assert!(matches!(
        placer.pin_to_node(missing),
        Err(PlacementError::UnknownNode { .. })
    ));
    assert!(placer
        .set_thread_policy(&MemPolicy::Bind(NodeSet::new()))
        .is_err());
    // A described node of 1 GiB (sizes that add up): 2 GiB is refused
    // before anything is mapped.
    let small = Placer::new(restricted_all_allowed(), PlacementMode::Off);
    let err = NodeBuffer::<u8>::new(&small, 2 << 30, Placement::OnNode(0)).unwrap_err();
    assert!(
        matches!(err, PlacementError::OutOfMemory { node: Some(0), .. }),
        "{err}"
    );
    assert!(NodeBuffer::<u64>::new(&placer, usize::MAX / 4, Placement::Anywhere).is_err());
}

fn restricted_all_allowed() -> Arc<Topology> {
    let json = r#"{"name":"t","description":"","source":"","nodes":[
        {"id":0,"socket":0,"cores":1,"threads_per_core":1,"memory_gib":1}]}"#;
    Arc::new(
        MachineDescription::from_json(json, "t")
            .unwrap()
            .to_topology(),
    )
}

fn restricted() -> Arc<Topology> {
    let json = r#"{"name":"t","description":"","source":"","nodes":[
        {"id":0,"socket":0,"cores":1,"threads_per_core":1,"memory_gib":1},
        {"id":1,"socket":1,"cores":1,"threads_per_core":1,"memory_gib":0}]}"#;
    let mut topo = MachineDescription::from_json(json, "t")
        .unwrap()
        .to_topology();
    topo.allowed.nodes = NodeSet::single(1);
    Arc::new(topo)
}

#[test]
fn disallowed_and_memoryless_nodes_are_refused() {
    let placer = Placer::new(restricted(), PlacementMode::Off);
    let err = NodeBuffer::<u8>::new(&placer, 4096, Placement::OnNode(0)).unwrap_err();
    assert!(
        matches!(err, PlacementError::DisallowedNode { node: 0, .. }),
        "{err}"
    );
    let err = NodeBuffer::<u8>::new(&placer, 4096, Placement::OnNode(1)).unwrap_err();
    assert!(
        matches!(err, PlacementError::NoMemoryOnNode { node: 1 }),
        "{err}"
    );
    assert!(err.to_string().contains("node 1"));
}

#[test]
fn off_mode_skips_every_system_call() {
    let placer = here(PlacementMode::Off);
    let node = first_node(&placer);
    let before = current_affinity().unwrap();
    let cpu = placer.topology().allowed.cpus.first().unwrap();
    assert_eq!(placer.pin_to_cpu(cpu).unwrap(), Outcome::Skipped);
    assert_eq!(current_affinity().unwrap(), before);
    assert_eq!(
        placer
            .set_thread_policy(&MemPolicy::Bind(NodeSet::single(node)))
            .unwrap(),
        Outcome::Skipped
    );
    let buf = NodeBuffer::<u32>::new(&placer, 1000, Placement::OnNode(node)).unwrap();
    assert_eq!(buf.len(), 1000);
    assert!(!placer.degraded());
}
