//! Memory policies: where the kernel takes pages from when they are first
//! touched.
//!
//! [`MemPolicy`] is the value (local, bind, preferred, interleave, default);
//! [`Placement`] is what a buffer asks for, in the words users think in
//! ("on node 2", "interleaved over all nodes"). Applying them is the
//! [`crate::Placer`]'s job, which validates node ids first.

use serde::{Deserialize, Serialize};

use numakit_topology::{NodeId, NodeSet};

use crate::sys;

/// A Linux memory policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemPolicy {
    /// The system default (for a thread: local allocation).
    Default,
    /// Allocate on the node of the CPU that touches the page first.
    Local,
    /// Allocate only on these nodes; fail rather than spill elsewhere.
    Bind(NodeSet),
    /// Allocate on this node while it has memory, elsewhere after.
    Preferred(NodeId),
    /// Spread pages round-robin over these nodes.
    Interleave(NodeSet),
}

impl MemPolicy {
    /// The kernel mode and node mask of this policy.
    pub(crate) fn kernel_args(&self) -> (i32, NodeSet) {
        match self {
            Self::Default => (sys::MPOL_DEFAULT, NodeSet::new()),
            Self::Local => (sys::MPOL_LOCAL, NodeSet::new()),
            Self::Bind(nodes) => (sys::MPOL_BIND, nodes.clone()),
            Self::Preferred(node) => (sys::MPOL_PREFERRED, NodeSet::single(*node)),
            Self::Interleave(nodes) => (sys::MPOL_INTERLEAVE, nodes.clone()),
        }
    }

    /// The nodes the policy names (empty for default and local).
    pub fn nodes(&self) -> NodeSet {
        self.kernel_args().1
    }
}

/// Where a buffer's memory should live.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Bound to one node, and first touched by a thread of that node.
    OnNode(NodeId),
    /// Preferably on one node, spilling elsewhere when it is full.
    Preferred(NodeId),
    /// Page i on the i-th node of the set, round-robin.
    Interleave(NodeSet),
    /// No policy; first touched by a thread pinned to this node, so the
    /// kernel's local allocation puts it there.
    FirstTouch(NodeId),
    /// No policy and no pinned first touch: wherever the kernel likes.
    Anywhere,
}

impl Placement {
    /// The policy to set on the region before first touch, if any.
    pub fn policy(&self) -> Option<MemPolicy> {
        match self {
            Self::OnNode(n) => Some(MemPolicy::Bind(NodeSet::single(*n))),
            Self::Preferred(n) => Some(MemPolicy::Preferred(*n)),
            Self::Interleave(nodes) => Some(MemPolicy::Interleave(nodes.clone())),
            Self::FirstTouch(_) | Self::Anywhere => None,
        }
    }

    /// The node whose thread should touch the pages first, if any.
    pub fn toucher(&self) -> Option<NodeId> {
        match self {
            Self::OnNode(n) | Self::Preferred(n) | Self::FirstTouch(n) => Some(*n),
            Self::Interleave(_) | Self::Anywhere => None,
        }
    }

    /// Every node the placement names.
    pub fn nodes(&self) -> NodeSet {
        match self {
            Self::Interleave(nodes) => nodes.clone(),
            Self::Anywhere => NodeSet::new(),
            other => other.toucher().map(NodeSet::single).unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placements_map_to_policies_and_touchers() {
        assert_eq!(
            Placement::OnNode(3).policy(),
            Some(MemPolicy::Bind(NodeSet::single(3)))
        );
        assert_eq!(Placement::OnNode(3).toucher(), Some(3));
        assert_eq!(Placement::FirstTouch(1).policy(), None);
        assert_eq!(Placement::FirstTouch(1).toucher(), Some(1));
        let all = NodeSet::first_n(4);
        assert_eq!(Placement::Interleave(all.clone()).nodes(), all);
        assert_eq!(Placement::Anywhere.nodes(), NodeSet::new());
        assert_eq!(
            MemPolicy::Preferred(2).kernel_args(),
            (sys::MPOL_PREFERRED, NodeSet::single(2))
        );
        assert_eq!(MemPolicy::Local.kernel_args().0, sys::MPOL_LOCAL);
    }
}
