//! [`NodeBuffer`]: memory placed on the node we choose.
//!
//! The buffer is an anonymous mapping whose policy is set before the first
//! touch, and whose first touch is made by a thread pinned to the target
//! node, so that it lands where asked under any policy. Transparent huge
//! pages are forbidden unless requested, because one 2 MiB page first
//! touched by the wrong thread (a neighbouring thread stack, say) puts
//! 512 pages on the wrong node; requested huge pages get a 2 MiB aligned
//! range of their own. The buffer holds plain-old-data only (`bytemuck::Pod`),
//! since fresh mappings are zero-filled. It does not grow past the memory
//! it was made with (its capacity): sizes are known when data is placed.
//! Within that memory its length can change and its element type can be
//! reinterpreted ([`NodeBuffer::set_len`], [`NodeBuffer::cast`]), so that
//! a cache of buffers can hand placed memory to any plain-old-data user.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use bytemuck::Pod;
use serde::{Deserialize, Serialize};

use numakit_topology::NodeId;

use crate::error::{PlacementError, Result};
use crate::pages::{self, PageLocation};
use crate::placer::Placer;
use crate::policy::Placement;
use crate::sys;

/// The size of a transparent huge page on x86-64 and most arm64 kernels.
pub const HUGE_PAGE: usize = 2 << 20;
/// Most first-touch threads used for one buffer.
const MAX_TOUCHERS: usize = 8;

/// Huge-page use of a buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HugePages {
    /// Base pages only (`MADV_NOHUGEPAGE`): placement is exact per page.
    #[default]
    Never,
    /// Transparent huge pages on a 2 MiB aligned range (`MADV_HUGEPAGE`).
    Transparent,
    /// Pages from the reserved hugetlbfs pool (`MAP_HUGETLB`).
    Reserved,
}

impl std::str::FromStr for HugePages {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "never" => Ok(Self::Never),
            "transparent" => Ok(Self::Transparent),
            "reserved" => Ok(Self::Reserved),
            other => Err(format!(
                "unknown huge-page mode `{other}` (never, transparent, reserved)"
            )),
        }
    }
}

/// How a buffer is made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferOptions {
    /// Which nodes the pages go to, and who touches them first.
    pub placement: Placement,
    /// Whether to use base pages, transparent or reserved huge pages.
    pub huge_pages: HugePages,
    /// Touch every page now (true) or leave the first touch to the user.
    pub prefault: bool,
}

impl BufferOptions {
    /// Options for `placement` with base pages only, every page touched now.
    pub fn new(placement: Placement) -> Self {
        Self {
            placement,
            huge_pages: HugePages::Never,
            prefault: true,
        }
    }
}

/// A fixed-size array of `T` placed on chosen NUMA nodes.
pub struct NodeBuffer<T> {
    data: NonNull<T>,
    len: usize,
    /// Bytes from `data` on that belong to the buffer (placed when it was
    /// made, zero-filled or since written): the most it can hold.
    capacity_bytes: usize,
    map_base: *mut u8,
    map_len: usize,
    options: BufferOptions,
    _owns: PhantomData<T>,
}

// SAFETY: the buffer exclusively owns its mapping, like a `Vec<T>`; sending
// it or sharing `&NodeBuffer` is as safe as for `Vec<T>` with the same bounds.
unsafe impl<T: Send> Send for NodeBuffer<T> {}
// SAFETY: see above; `&NodeBuffer<T>` only hands out `&[T]`.
unsafe impl<T: Sync> Sync for NodeBuffer<T> {}

impl<T: Pod> NodeBuffer<T> {
    /// `len` zeroed elements placed as asked, every page touched.
    pub fn new(placer: &Placer, len: usize, placement: Placement) -> Result<Self> {
        Self::with_options(placer, len, BufferOptions::new(placement))
    }

    /// `len` zeroed elements made as `options` say.
    pub fn with_options(placer: &Placer, len: usize, options: BufferOptions) -> Result<Self> {
        let bytes =
            len.checked_mul(std::mem::size_of::<T>())
                .ok_or(PlacementError::OutOfMemory {
                    node: None,
                    bytes: usize::MAX,
                })?;
        check_target(placer, &options.placement, bytes)?;
        if bytes == 0 {
            return Ok(Self::empty(options));
        }
        let (map_base, map_len, start) = map_region(bytes, options.huge_pages, &options.placement)?;
        let mut buffer = Self {
            // SAFETY: `start` comes from a successful mmap, so it is non-null
            // and page aligned (hence aligned for any Pod type).
            data: unsafe { NonNull::new_unchecked(start.cast()) },
            len,
            capacity_bytes: 0,
            map_base,
            map_len,
            options,
            _owns: PhantomData,
        };
        let usable = buffer.usable_bytes();
        buffer.capacity_bytes = usable;
        if let Some(policy) = buffer.options.placement.policy() {
            placer.bind_region(start, usable, &policy)?;
        }
        if buffer.options.prefault {
            let has_policy = buffer.options.placement.policy().is_some();
            touch(
                placer,
                start as usize,
                usable,
                buffer.options.placement.toucher(),
                has_policy,
            )?;
        }
        Ok(buffer)
    }

    fn empty(options: BufferOptions) -> Self {
        Self {
            data: NonNull::dangling(),
            len: 0,
            capacity_bytes: 0,
            map_base: std::ptr::null_mut(),
            map_len: 0,
            options,
            _owns: PhantomData,
        }
    }
}

impl<T: Pod> NodeBuffer<T> {
    /// Elements the buffer's memory can hold: its length at most.
    pub fn capacity(&self) -> usize {
        match std::mem::size_of::<T>() {
            0 => self.len,
            size => self.capacity_bytes / size,
        }
    }

    /// Sets the length to `len` elements, up to [`NodeBuffer::capacity`].
    /// Elements that come into view hold what was last written there (or
    /// zeros): any bytes are a valid `T`, but their values are stale.
    pub fn set_len(&mut self, len: usize) -> Result<()> {
        if len > self.capacity() {
            return Err(PlacementError::OutOfMemory {
                node: self.options.placement.nodes().first(),
                bytes: len.saturating_mul(std::mem::size_of::<T>()),
            });
        }
        self.len = len;
        Ok(())
    }

    /// The same memory (placement, huge pages and all) as elements of
    /// type `U`: as many as fit in the current length's bytes, with the
    /// capacity of the whole memory. Fails (giving the buffer back) when
    /// `U` needs a larger alignment than the memory's start has.
    pub fn cast<U: Pod>(self) -> std::result::Result<NodeBuffer<U>, Self> {
        let aligned = self.capacity_bytes == 0
            || self.data.as_ptr() as usize % std::mem::align_of::<U>() == 0;
        if !aligned || std::mem::size_of::<U>() == 0 {
            return Err(self);
        }
        let this = std::mem::ManuallyDrop::new(self);
        let data = if this.capacity_bytes == 0 {
            NonNull::dangling()
        } else {
            this.data.cast::<U>()
        };
        Ok(NodeBuffer {
            data,
            len: this.byte_len() / std::mem::size_of::<U>(),
            capacity_bytes: this.capacity_bytes,
            map_base: this.map_base,
            map_len: this.map_len,
            // SAFETY: `this` is never dropped (ManuallyDrop) and not used
            // after this read, so the options move out exactly once; the
            // mapping it owned now belongs to the new buffer alone.
            options: unsafe { std::ptr::read(&this.options) },
            _owns: PhantomData,
        })
    }
}

impl<T> NodeBuffer<T> {
    /// The placement asked for.
    pub fn placement(&self) -> &Placement {
        &self.options.placement
    }

    /// Huge-page use.
    pub fn huge_pages(&self) -> HugePages {
        self.options.huge_pages
    }

    /// Size of the data in bytes.
    pub fn byte_len(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// Bytes of the mapping the data occupies, rounded up to whole pages.
    fn usable_bytes(&self) -> usize {
        let page = match self.options.huge_pages {
            HugePages::Never => sys::page_size(),
            _ => HUGE_PAGE,
        };
        self.byte_len().div_ceil(page) * page
    }

    /// Where each base page of the buffer is.
    pub fn page_locations(&self) -> Result<Vec<PageLocation>> {
        if self.len == 0 {
            return Ok(Vec::new());
        }
        pages::page_locations(self.data.as_ptr().cast(), self.byte_len())
    }

    /// Resident base pages per node.
    pub fn pages_per_node(&self) -> Result<BTreeMap<NodeId, usize>> {
        if self.len == 0 {
            return Ok(BTreeMap::new());
        }
        pages::pages_per_node(self.data.as_ptr().cast(), self.byte_len())
    }

    /// Moves all pages to `node`; returns how many are there afterwards.
    pub fn migrate_to(&mut self, placer: &Placer, node: NodeId) -> Result<usize> {
        placer.check_node(node)?;
        if self.len == 0 {
            return Ok(0);
        }
        pages::migrate_range(self.data.as_ptr().cast(), self.byte_len(), node)
    }
}

impl<T> Deref for NodeBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `data` points to `len` initialized (zero-filled Pod or
        // since written) elements within the `capacity_bytes` of a mapping
        // we own for `self`'s lifetime (`set_len` and `cast` keep `len`
        // within them); for len 0 it may be a dangling, well-aligned
        // pointer, valid for 0 items.
        unsafe { std::slice::from_raw_parts(self.data.as_ptr(), self.len) }
    }
}

impl<T> DerefMut for NodeBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.data.as_ptr(), self.len) }
    }
}

impl<T> Drop for NodeBuffer<T> {
    fn drop(&mut self) {
        if self.map_len > 0 {
            // SAFETY: the mapping was made by `map_region` for this buffer
            // alone, and no borrow of it can outlive `self`.
            if let Err(e) = unsafe { sys::unmap(self.map_base, self.map_len) } {
                log::warn!("munmap of a {} byte buffer failed: {e}", self.map_len);
            }
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for NodeBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeBuffer")
            .field("len", &self.len)
            .field("placement", &self.options.placement)
            .field("huge_pages", &self.options.huge_pages)
            .finish()
    }
}

/// Refuses placements the topology cannot satisfy, before mapping anything.
fn check_target(placer: &Placer, placement: &Placement, bytes: usize) -> Result<()> {
    for node in placement.nodes().iter() {
        placer.check_node(node)?;
        let memory = placer.topology().node(node)?.memory_bytes;
        if memory == Some(0) {
            return Err(PlacementError::NoMemoryOnNode { node });
        }
        let share = bytes / placement.nodes().len().max(1);
        let reliable = placer.topology().node_memory_is_reliable();
        if reliable && memory.is_some_and(|m| share as u64 > m) {
            return Err(PlacementError::OutOfMemory {
                node: Some(node),
                bytes,
            });
        }
    }
    Ok(())
}

/// Maps at least `bytes`; returns (mapping base, mapping length, data start).
fn map_region(
    bytes: usize,
    huge: HugePages,
    placement: &Placement,
) -> Result<(*mut u8, usize, *mut u8)> {
    let oom = |e| PlacementError::from_os("mmap", e, placement.nodes().first(), bytes);
    match huge {
        HugePages::Never => {
            let len = bytes.div_ceil(sys::page_size()) * sys::page_size();
            let base = sys::map_anonymous(len, false).map_err(oom)?;
            // Without THP a neighbouring fault cannot pull our pages along.
            if let Err(e) = sys::advise_huge_pages(base, len, false) {
                log::debug!("MADV_NOHUGEPAGE failed: {e}");
            }
            Ok((base, len, base))
        }
        HugePages::Transparent => {
            let len = bytes.div_ceil(HUGE_PAGE) * HUGE_PAGE;
            // One extra huge page of slack to align the start; the slack is
            // never touched, so it costs address space only.
            let map_len = len + HUGE_PAGE;
            let base = sys::map_anonymous(map_len, false).map_err(oom)?;
            let start = (base as usize).div_ceil(HUGE_PAGE) * HUGE_PAGE;
            let start = start as *mut u8;
            sys::advise_huge_pages(start, len, true)
                .map_err(|e| PlacementError::from_os("madvise", e, None, bytes))?;
            Ok((base, map_len, start))
        }
        HugePages::Reserved => {
            let len = bytes.div_ceil(HUGE_PAGE) * HUGE_PAGE;
            let base = sys::map_anonymous(len, true).map_err(|e| match e.raw_os_error() {
                Some(libc::ENOMEM) => PlacementError::NoReservedHugePages { bytes },
                _ => oom(e),
            })?;
            Ok((base, len, base))
        }
    }
}

/// Writes one zero byte per page, from threads pinned to `node` when given
/// (the first touch decides where a page lands under local allocation).
fn touch(
    placer: &Placer,
    start: usize,
    len: usize,
    node: Option<NodeId>,
    placement_has_policy: bool,
) -> Result<()> {
    let page = sys::page_size();
    let cpus: Vec<u32> = match (node, placement_has_policy) {
        (None, _) => Vec::new(),
        // A bound or preferred region lands by policy, so a memory-only
        // node (no CPUs to touch from) is fine: the caller touches it.
        (Some(n), true) => match placer.cpus_of_node(n) {
            Ok(cpus) => cpus.iter().take(MAX_TOUCHERS).collect(),
            Err(PlacementError::NoCpusOnNode { .. }) => Vec::new(),
            Err(e) => return Err(e),
        },
        (Some(n), false) => placer.cpus_of_node(n)?.iter().take(MAX_TOUCHERS).collect(),
    };
    let pages = len / page;
    if cpus.is_empty() {
        touch_range(start, pages, page);
        return Ok(());
    }
    let per = pages.div_ceil(cpus.len());
    std::thread::scope(|scope| {
        let handles: Vec<_> = cpus
            .iter()
            .enumerate()
            .map(|(i, &cpu)| {
                let first = (i * per).min(pages);
                let count = per.min(pages - first);
                scope.spawn(move || {
                    placer.pin_to_cpu(cpu)?;
                    touch_range(start + first * page, count, page);
                    Ok::<(), PlacementError>(())
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().unwrap_or(Err(PlacementError::EmptyCpuSet)))
    })
}

fn touch_range(start: usize, pages: usize, page: usize) {
    for i in 0..pages {
        let p = (start + i * page) as *mut u8;
        // SAFETY: `p` lies inside a mapping this module just created and
        // that nothing else references yet; writing 0 over the kernel's zero
        // fill leaves the contents unchanged and only faults the page in.
        unsafe { std::ptr::write_volatile(p, 0) };
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::placer::PlacementMode;

    fn placer() -> Placer {
        let topo = numakit_topology::discover().unwrap();
        Placer::new(Arc::new(topo), PlacementMode::BestEffort)
    }

    #[test]
    fn length_changes_within_the_capacity_and_keeps_the_data() {
        let placer = placer();
        let mut buf = NodeBuffer::<u64>::new(&placer, 1000, Placement::Anywhere).unwrap();
        assert_eq!(buf.capacity(), sys::page_size() / 8 * 2);
        buf.iter_mut().enumerate().for_each(|(i, v)| *v = i as u64);
        buf.set_len(10).unwrap();
        assert_eq!(buf.len(), 10);
        buf.set_len(buf.capacity()).unwrap();
        assert_eq!(buf[999], 999);
        assert_eq!(buf[1000], 0);
        assert!(buf.set_len(buf.capacity() + 1).is_err());
    }

    #[test]
    fn casts_view_the_same_bytes() {
        let placer = placer();
        let mut buf = NodeBuffer::<u64>::new(&placer, 3, Placement::Anywhere).unwrap();
        buf.copy_from_slice(&[1, 2, 3]);
        let bytes = buf.cast::<u8>().unwrap();
        assert_eq!(bytes.len(), 24);
        assert_eq!(bytes[8], 2);
        let pairs = bytes.cast::<[u64; 2]>().unwrap();
        assert_eq!(&pairs[..], &[[1, 2]]);
        assert_eq!(pairs.capacity(), sys::page_size() / 16);
        let empty = NodeBuffer::<u8>::new(&placer, 0, Placement::Anywhere).unwrap();
        assert!(empty.cast::<u64>().unwrap().is_empty());
    }
}
