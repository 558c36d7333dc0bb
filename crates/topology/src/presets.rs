//! Named machine descriptions of the servers in the papers numakit follows,
//! plus one current two-socket server.
//!
//! Each preset is a JSON description compiled into the binary; its `notes`
//! say which figure comes from which paper table or vendor document. The
//! presets are inputs for the simulator and for planning; they are never
//! used to pretend that the running machine looks like them.

use crate::describe::MachineDescription;
use crate::error::{Result, TopologyError};
use crate::model::Topology;

/// (name, JSON text) of every preset.
const PRESETS: &[(&str, &str)] = &[
    (
        "nehalem-ex-4s",
        include_str!("../presets/nehalem-ex-4s.json"),
    ),
    (
        "nehalem-ex-4s-4link",
        include_str!("../presets/nehalem-ex-4s-4link.json"),
    ),
    (
        "nehalem-ex-8s",
        include_str!("../presets/nehalem-ex-8s.json"),
    ),
    (
        "opteron-istanbul-2s",
        include_str!("../presets/opteron-istanbul-2s.json"),
    ),
    (
        "westmere-ex-4s",
        include_str!("../presets/westmere-ex-4s.json"),
    ),
    (
        "ultrasparc-t2plus-4c",
        include_str!("../presets/ultrasparc-t2plus-4c.json"),
    ),
    ("xeon-8480-2s", include_str!("../presets/xeon-8480-2s.json")),
];

/// Names of all presets, in a stable order.
pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|(name, _)| *name).collect()
}

/// The description of a preset.
pub fn description(name: &str) -> Result<MachineDescription> {
    let (_, text) =
        PRESETS
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| TopologyError::UnknownPreset {
                name: name.to_string(),
                known: names().join(", "),
            })?;
    MachineDescription::from_json(text, &format!("preset {name}"))
}

/// The topology of a preset.
pub fn topology(name: &str) -> Result<Topology> {
    Ok(description(name)?.to_topology())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_and_is_consistent() {
        for name in names() {
            let desc = description(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(desc.name, name, "file name and name field differ");
            let topo = desc.to_topology();
            assert!(topo.nodes.len() >= 2, "{name} should have several nodes");
            assert!(!topo.links.is_empty(), "{name} should list its links");
            for n in &topo.nodes {
                assert!(
                    n.memory_bandwidth_gbs.is_some(),
                    "{name}: node {} lacks bandwidth",
                    n.id
                );
                let order = topo.nodes_by_distance(n.id).unwrap();
                assert_eq!(order.len(), topo.nodes.len() - 1);
                for b in &topo.nodes {
                    assert!(
                        topo.hops(n.id, b.id).is_some(),
                        "{name}: {} cannot reach {}",
                        n.id,
                        b.id
                    );
                }
            }
        }
    }

    #[test]
    fn nehalem_figures_follow_li_et_al() {
        let four = topology("nehalem-ex-4s").unwrap();
        assert_eq!(four.nodes.len(), 4);
        assert_eq!(four.links.len(), 6);
        assert_eq!(four.cpus.len(), 64);
        assert!(four
            .links
            .iter()
            .all(|l| (l.bandwidth_gbs - 10.9).abs() < 1e-9));
        let ring = topology("nehalem-ex-4s-4link").unwrap();
        assert_eq!(ring.links.len(), 4);
        assert!(ring
            .nodes
            .iter()
            .any(|n| ring.nodes.iter().any(|m| ring.hops(n.id, m.id) == Some(2))));
        let eight = topology("nehalem-ex-8s").unwrap();
        assert_eq!(eight.nodes.len(), 8);
        assert_eq!(eight.links.len(), 12);
        let slow = eight
            .links
            .iter()
            .filter(|l| (l.bandwidth_gbs - 7.8).abs() < 1e-9)
            .count();
        assert_eq!(slow, 4);
    }

    #[test]
    fn unknown_preset_lists_the_known_ones() {
        let err = topology("cray-1").unwrap_err().to_string();
        assert!(
            err.contains("cray-1") && err.contains("nehalem-ex-4s"),
            "{err}"
        );
    }
}
