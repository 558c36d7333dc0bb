//! The raw system calls behind placement, and the one file-system call
//! that the layers above need and the standard library lacks
//! ([`rename_exchange`], `renameat2(RENAME_EXCHANGE)`, which the
//! distributed join uses to publish a result directory in one step).
//! numakit keeps its syscalls here so the crates above can forbid unsafe
//! code.
//!
//! Every `unsafe` block of the placement layer lives here, each with a
//! `// SAFETY:` note; the functions exported are safe to call and return
//! `std::io::Error` carrying the kernel's errno. They do not validate node
//! ids against a topology or decide policies: `policy`, `pin` and `buffer`
//! do that. Linux only (glibc or musl through the `libc` crate), so that no
//! system NUMA library is needed. The performance-counter calls
//! ([`perf_event_open`], [`perf_event_ioctl`]) are here too; which events
//! to open and what the counts mean is [`crate::counters`]'s.

use std::io;

use numakit_topology::IdSet;

// Kernel memory-policy modes (`include/uapi/linux/mempolicy.h`).
/// Policy mode: fall back to the thread's policy, or local allocation.
pub const MPOL_DEFAULT: i32 = 0;
/// Policy mode: allocate on the one node in the mask while it has memory.
pub const MPOL_PREFERRED: i32 = 1;
/// Policy mode: allocate only on the nodes of the mask.
pub const MPOL_BIND: i32 = 2;
/// Policy mode: spread pages round-robin over the nodes of the mask.
pub const MPOL_INTERLEAVE: i32 = 3;
/// Policy mode: allocate on the node of the CPU that faults the page in.
pub const MPOL_LOCAL: i32 = 4;
/// `mbind` flag: fail when existing pages do not follow the policy.
pub const MPOL_MF_STRICT: u32 = 1;
/// `mbind`/`move_pages` flag: move pages that are mapped only by us.
pub const MPOL_MF_MOVE: u32 = 1 << 1;
/// `get_mempolicy` flags.
const MPOL_F_NODE: u64 = 1;
const MPOL_F_ADDR: u64 = 1 << 1;

/// The size of a base page.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as usize
    } else {
        4096
    }
}

/// Node mask words and the `maxnode` argument the kernel expects for them.
/// The kernel reads `maxnode - 1` bits, so one more than the bit count.
fn mask_args(nodes: &IdSet) -> (Vec<u64>, u64) {
    let mut words = nodes.as_words().to_vec();
    if words.is_empty() {
        words.push(0);
    }
    let maxnode = words.len() as u64 * 64 + 1;
    (words, maxnode)
}

fn check(ret: libc::c_long) -> io::Result<libc::c_long> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// The process's address-space limit (`ulimit -v`, RLIMIT_AS) in bytes,
/// or `None` when there is none.
pub fn address_space_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the valid, owned struct.
    let ret = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) };
    (ret == 0 && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

/// Hands the C allocator's freed memory back to the kernel
/// (`malloc_trim(0)`, glibc only): after a large structure built from many
/// heap allocations is dropped, its pages would otherwise stay resident in
/// the heap until reused. Returns whether any memory was released (always
/// `false` on other C libraries, where it does nothing).
pub fn release_freed_heap() -> bool {
    #[cfg(target_env = "gnu")]
    {
        // SAFETY: malloc_trim only walks the allocator's own free lists under
        // its locks and advises the kernel about whole free pages; it takes
        // no pointers from us and is safe to call from any thread.
        unsafe { libc::malloc_trim(0) != 0 }
    }
    #[cfg(not(target_env = "gnu"))]
    {
        false
    }
}

/// The CPU time the whole process has used so far, every thread
/// included: (user, system) seconds (`getrusage(RUSAGE_SELF)`).
pub fn process_cpu_seconds() -> io::Result<(f64, f64)> {
    // SAFETY: rusage is plain integers, for which all-zero is valid.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes one rusage into the valid, owned struct.
    let ret = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if ret != 0 {
        return Err(io::Error::last_os_error());
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Ok((seconds(usage.ru_utime), seconds(usage.ru_stime)))
}

/// Restricts the calling thread to `cpus`.
pub fn set_thread_affinity(cpus: &IdSet) -> io::Result<()> {
    let words = cpus.as_words();
    if words.is_empty() {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: the pointer and byte length describe `words`, which lives for
    // the whole call; the kernel only reads it. pid 0 is the calling thread.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_sched_setaffinity,
            0,
            std::mem::size_of_val(words),
            words.as_ptr(),
        )
    };
    check(ret).map(drop)
}

/// The calling thread's affinity mask.
pub fn thread_affinity() -> io::Result<IdSet> {
    let mut words = vec![0u64; 16];
    loop {
        // SAFETY: the kernel writes at most `size_of_val(words)` bytes into
        // the buffer we own; on EINVAL (mask too small) we grow and retry.
        let ret = unsafe {
            libc::syscall(
                libc::SYS_sched_getaffinity,
                0,
                std::mem::size_of_val(words.as_slice()),
                words.as_mut_ptr(),
            )
        };
        match check(ret) {
            Ok(written) => {
                words.truncate((written as usize).div_ceil(8));
                return Ok(IdSet::from_words(words));
            }
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && words.len() < 4096 => {
                words.resize(words.len() * 2, 0)
            }
            Err(e) => return Err(e),
        }
    }
}

/// The CPU and node the calling thread runs on right now.
pub fn current_cpu_and_node() -> io::Result<(u32, u32)> {
    let (mut cpu, mut node) = (0u32, 0u32);
    // SAFETY: getcpu writes one u32 to each of the two pointers, both point
    // to locals that outlive the call; the third argument is unused (NULL).
    let ret = unsafe {
        libc::syscall(
            libc::SYS_getcpu,
            &mut cpu as *mut u32,
            &mut node as *mut u32,
            std::ptr::null_mut::<libc::c_void>(),
        )
    };
    check(ret).map(|_| (cpu, node))
}

/// Sets the calling thread's memory policy.
pub fn set_mempolicy(mode: i32, nodes: &IdSet) -> io::Result<()> {
    let (words, maxnode) = mask_args(nodes);
    let (ptr, maxnode) = if nodes.is_empty() {
        (std::ptr::null(), 0)
    } else {
        (words.as_ptr(), maxnode)
    };
    // SAFETY: `ptr` is NULL or points to `words`, which holds
    // `maxnode - 1` bits and lives through the call; the kernel only reads it.
    let ret = unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, maxnode) };
    check(ret).map(drop)
}

/// Sets the memory policy of `len` bytes at `addr` (page aligned).
// The kernel validates the range and never writes through `addr`, so this
// is safe for any address (a bad one gives EFAULT/ENOMEM).
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn mbind(addr: *mut u8, len: usize, mode: i32, nodes: &IdSet, flags: u32) -> io::Result<()> {
    let (words, maxnode) = mask_args(nodes);
    let (ptr, maxnode) = if nodes.is_empty() {
        (std::ptr::null(), 0)
    } else {
        (words.as_ptr(), maxnode)
    };
    // SAFETY: mbind only changes the policy of the range (and, with
    // MPOL_MF_MOVE, moves pages without changing their contents); it never
    // writes through `addr`. The mask pointer is NULL or valid as above. A
    // range that is not mapped makes the kernel return EFAULT/ENOMEM.
    let ret = unsafe { libc::syscall(libc::SYS_mbind, addr, len, mode, ptr, maxnode, flags) };
    check(ret).map(drop)
}

/// The node that holds the page containing `addr` (faulting it in if it was
/// never touched, as `get_mempolicy(MPOL_F_NODE|MPOL_F_ADDR)` does).
// The kernel only looks the address up; a bad one gives EFAULT.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn node_of_address(addr: *const u8) -> io::Result<u32> {
    let mut node: libc::c_int = 0;
    // SAFETY: the kernel writes one int to `node`, a local; the mask pointer
    // is NULL with maxnode 0; `addr` is only looked up, not dereferenced by us.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut node as *mut libc::c_int,
            std::ptr::null_mut::<u64>(),
            0u64,
            addr,
            MPOL_F_NODE | MPOL_F_ADDR,
        )
    };
    check(ret).map(|_| node as u32)
}

/// `move_pages` for the calling process: with `targets` it moves each page
/// to its target node, without it it only reports where each page is. Each
/// status entry becomes a node id or a negative errno (`-ENOENT`: not yet
/// touched).
pub fn move_pages(
    pages: &[*mut u8],
    targets: Option<&[i32]>,
    status: &mut [i32],
) -> io::Result<()> {
    if status.len() != pages.len() || targets.is_some_and(|t| t.len() != pages.len()) {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let nodes_ptr = targets.map_or(std::ptr::null(), |t| t.as_ptr());
    // SAFETY: `pages`, `targets` and `status` all hold `pages.len()`
    // entries (checked above) and outlive the call; the kernel reads the
    // first two and writes only `status`. Page contents are not changed.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0,
            pages.len() as libc::c_ulong,
            pages.as_ptr(),
            nodes_ptr,
            status.as_mut_ptr(),
            MPOL_MF_MOVE as libc::c_int,
        )
    };
    check(ret).map(drop)
}

/// Maps `len` bytes of zeroed anonymous memory, optionally from the
/// hugetlbfs pool.
pub fn map_anonymous(len: usize, hugetlb: bool) -> io::Result<*mut u8> {
    let mut flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
    if hugetlb {
        flags |= libc::MAP_HUGETLB;
    }
    // SAFETY: a fresh anonymous private mapping at an address the kernel
    // chooses cannot alias any existing Rust object.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        Err(io::Error::last_os_error())
    } else {
        Ok(ptr.cast())
    }
}

/// Unmaps a range obtained from [`map_anonymous`].
///
/// # Safety
/// `addr..addr+len` must be (part of) a mapping made by [`map_anonymous`]
/// that no live reference points into.
pub unsafe fn unmap(addr: *mut u8, len: usize) -> io::Result<()> {
    // SAFETY: the caller guarantees the range is ours and unreferenced.
    let ret = unsafe { libc::munmap(addr.cast(), len) };
    check(ret as libc::c_long).map(drop)
}

/// Asks for (`true`) or forbids (`false`) transparent huge pages in a
/// mapped range.
pub fn advise_huge_pages(addr: *mut u8, len: usize, want: bool) -> io::Result<()> {
    let advice = if want {
        libc::MADV_HUGEPAGE
    } else {
        libc::MADV_NOHUGEPAGE
    };
    // SAFETY: MADV_HUGEPAGE and MADV_NOHUGEPAGE change only how future
    // faults are served, never the contents of the range.
    let ret = unsafe { libc::madvise(addr.cast(), len, advice) };
    check(ret as libc::c_long).map(drop)
}

/// Swaps the paths `a` and `b` (both existing, on one file system) in one
/// step (`renameat2(RENAME_EXCHANGE)`): at no moment is either missing.
/// Relative paths resolve against the working directory. Fails with
/// `ErrorKind::Unsupported` where the kernel or the file system cannot
/// exchange (ENOSYS, EINVAL), so that the caller can fall back to two
/// renames; with `InvalidInput` for a path holding a NUL byte.
pub fn rename_exchange(a: &std::path::Path, b: &std::path::Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let a = CString::new(a.as_os_str().as_bytes())?;
    let b = CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: both pointers are NUL-terminated strings that live until the
    // call returns; AT_FDCWD resolves relative paths as std does.
    let ret = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    match check(ret as libc::c_long) {
        Ok(_) => Ok(()),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) => {
            Err(io::ErrorKind::Unsupported.into())
        }
        Err(e) => Err(e),
    }
}

/// `perf_event_attr` as the kernel first published it
/// (`PERF_ATTR_SIZE_VER0`, 64 bytes; every later kernel accepts it). Only
/// counting is done, so the sampling fields stay zero.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

/// `perf_event_open(2)` flag: the new descriptor is close-on-exec.
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
/// `ioctl` argument: apply the request to every event of the group.
const PERF_IOC_FLAG_GROUP: libc::c_ulong = 1;

/// One event to open with [`perf_event_open`]: the kernel's `type` and
/// `config`, the `read_format` bits and the attribute bit field
/// (`disabled`, `exclude_kernel`, ...), as `linux/perf_event.h` numbers
/// them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerfEvent {
    /// `PERF_TYPE_*`.
    pub kind: u32,
    /// The event within its type (`PERF_COUNT_HW_*`, `PERF_COUNT_SW_*`).
    pub config: u64,
    /// `PERF_FORMAT_*` bits.
    pub read_format: u64,
    /// The attribute bit field (bit 0 `disabled`, bit 5 `exclude_kernel`,
    /// bit 6 `exclude_hv`, ...).
    pub flags: u64,
}

/// Opens `event` for the calling thread on whichever CPU it runs (pid 0,
/// cpu -1), as a member of `group` (its leader's descriptor) or as a new
/// group's leader. The descriptor is close-on-exec.
pub fn perf_event_open(
    event: PerfEvent,
    group: Option<std::os::fd::BorrowedFd<'_>>,
) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd};
    let mut attr = PerfEventAttr {
        kind: event.kind,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config: event.config,
        read_format: event.read_format,
        flags: event.flags,
        ..PerfEventAttr::default()
    };
    let group_fd = group.map_or(-1, |fd| fd.as_raw_fd());
    // SAFETY: the kernel reads `attr.size` bytes of `attr`, a local that
    // lives through the call (on E2BIG it writes the size it expects into
    // `attr.size`, within the struct); the other arguments are integers:
    // pid 0 (this thread), cpu -1 (any), `group_fd` a descriptor borrowed
    // for the call or -1, and the flags.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &mut attr as *mut PerfEventAttr,
            0 as libc::c_long,
            -1 as libc::c_long,
            libc::c_long::from(group_fd),
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    let fd = check(ret)?;
    let fd = libc::c_int::try_from(fd).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?;
    // SAFETY: a successful perf_event_open returns a new descriptor that
    // nothing else owns; the OwnedFd closes it once.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// What [`perf_event_ioctl`] asks of a whole event group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerfRequest {
    /// `PERF_EVENT_IOC_ENABLE`: start counting.
    Enable,
    /// `PERF_EVENT_IOC_DISABLE`: stop counting (the counts stay).
    Disable,
    /// `PERF_EVENT_IOC_RESET`: set the counts to zero.
    Reset,
}

/// Applies `request` to the group whose leader is `leader`.
pub fn perf_event_ioctl(
    leader: std::os::fd::BorrowedFd<'_>,
    request: PerfRequest,
) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // _IO('$', n): no argument to copy, so the number is 0x2400 + n.
    let number: libc::Ioctl = match request {
        PerfRequest::Enable => 0x2400,
        PerfRequest::Disable => 0x2401,
        PerfRequest::Reset => 0x2403,
    };
    // SAFETY: these three requests take an integer argument (the group
    // flag), not a pointer; the descriptor is borrowed for the call.
    let ret = unsafe { libc::ioctl(leader.as_raw_fd(), number, PERF_IOC_FLAG_GROUP) };
    check(ret as libc::c_long).map(drop)
}
