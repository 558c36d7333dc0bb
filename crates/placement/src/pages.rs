//! Where pages really are, and moving them.
//!
//! A policy is a wish; `move_pages` tells the truth. These functions query
//! or migrate every base page of an address range, in batches. They do not
//! read or write the memory itself, so they are safe for any address (the
//! kernel reports unmapped pages as errors per page).

use std::collections::BTreeMap;

use numakit_topology::NodeId;

use crate::error::{PlacementError, Result};
use crate::sys;

/// Pages per `move_pages` call.
const BATCH: usize = 4096;

/// Where one page is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageLocation {
    /// Resident on this node.
    Node(NodeId),
    /// Never touched, so not backed by memory yet.
    NotPresent,
    /// The kernel reported this errno for the page.
    Error(i32),
}

fn page_addresses(addr: *const u8, len: usize) -> Vec<*mut u8> {
    let page = sys::page_size();
    let start = addr as usize / page * page;
    let end = addr as usize + len;
    (start..end).step_by(page).map(|a| a as *mut u8).collect()
}

/// The location of every base page overlapping `addr..addr+len`.
pub fn page_locations(addr: *const u8, len: usize) -> Result<Vec<PageLocation>> {
    let pages = page_addresses(addr, len);
    let mut out = Vec::with_capacity(pages.len());
    for batch in pages.chunks(BATCH) {
        let mut status = vec![0i32; batch.len()];
        sys::move_pages(batch, None, &mut status)
            .map_err(|e| PlacementError::from_os("move_pages", e, None, len))?;
        out.extend(status.into_iter().map(|s| match s {
            s if s >= 0 => PageLocation::Node(s as NodeId),
            s if s == -libc::ENOENT => PageLocation::NotPresent,
            s => PageLocation::Error(-s),
        }));
    }
    Ok(out)
}

/// How many resident pages of the range each node holds.
pub fn pages_per_node(addr: *const u8, len: usize) -> Result<BTreeMap<NodeId, usize>> {
    let mut counts = BTreeMap::new();
    for loc in page_locations(addr, len)? {
        if let PageLocation::Node(n) = loc {
            *counts.entry(n).or_insert(0) += 1;
        }
    }
    Ok(counts)
}

/// Moves every resident page of the range to `node`; returns how many pages
/// are on `node` afterwards.
pub fn migrate_range(addr: *const u8, len: usize, node: NodeId) -> Result<usize> {
    let pages = page_addresses(addr, len);
    let mut on_target = 0;
    for batch in pages.chunks(BATCH) {
        let targets = vec![node as i32; batch.len()];
        let mut status = vec![0i32; batch.len()];
        sys::move_pages(batch, Some(&targets), &mut status)
            .map_err(|e| PlacementError::from_os("move_pages", e, Some(node), len))?;
        on_target += status.iter().filter(|&&s| s == node as i32).count();
    }
    Ok(on_target)
}
