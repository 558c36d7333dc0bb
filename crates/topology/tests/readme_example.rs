//! The README's described-machine example must load: it is what a user
//! copies first.

use numakit_topology::describe::MachineDescription;

#[test]
fn the_readme_example_machine_loads() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("the README is beside the workspace");
    let section = readme
        .split("### The described-machine format")
        .nth(1)
        .expect("the README has the described-machine section");
    let json = section
        .split("```json")
        .nth(1)
        .and_then(|block| block.split("```").next())
        .expect("the section opens with a JSON example");
    let description = MachineDescription::from_json(json, "README example")
        .unwrap_or_else(|e| panic!("the README's example does not load: {e}"));
    let topology = description.to_topology();
    assert_eq!(topology.nodes.len(), 2);
    assert_eq!(topology.cpus.len(), 32);
}
