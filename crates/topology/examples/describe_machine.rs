//! Compare this machine with a described one from the papers.
//! Run with `cargo run -p numakit-topology --example describe_machine [PRESET]`.

fn main() -> Result<(), numakit_topology::TopologyError> {
    let here = numakit_topology::discover()?;
    println!(
        "this machine: {} node(s), {} CPU(s), allowed CPUs {}",
        here.nodes.len(),
        here.cpus.len(),
        here.allowed.cpus
    );
    let name = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "nehalem-ex-4s".into());
    let paper = numakit_topology::load(&name)?;
    println!(
        "{name}: {} nodes, {} CPUs, {} links",
        paper.nodes.len(),
        paper.cpus.len(),
        paper.links.len()
    );
    for node in &paper.nodes {
        println!(
            "  node {} steals from {:?} (nearest first)",
            node.id,
            paper.nodes_by_distance(node.id)?
        );
    }
    Ok(())
}
