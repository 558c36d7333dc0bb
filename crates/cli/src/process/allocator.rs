//! How the C allocator keeps memory between one batch and the next, and
//! gives large blocks transparent huge pages.
//!
//! numakit decodes files batch by batch and drops each batch once it is
//! used; glibc would serve each batch's megabyte-sized buffers with fresh
//! `mmap`s and hand them back with `munmap`, so every batch paid its page
//! faults again (a third of a streamed group-by's time on our VMs). Raising
//! the mmap threshold to glibc's maximum and the trim threshold well above
//! it keeps freed buffers in the allocator's heaps for the next batch.
//!
//! The large structures of an operator (a group-by's groups, a result's
//! columns, its output lists) come from the C allocator too, and their
//! first touch cost one page fault per 4 KiB. glibc (2.35 on) asks the
//! kernel for transparent huge pages on its heaps and large blocks when
//! its tunable `glibc.malloc.hugetlb=1` is set, which it reads only when a
//! program starts; so [`restart_with_huge_pages`] starts numakit again
//! (the same process, by `exec`) with the tunable added to
//! `GLIBC_TUNABLES`. Measured on a group-by of 64M rows into 16M random
//! keys, in memory, three runs each: warm 4.4-4.6 s -> 3.4-3.7 s, cold
//! 4.6-5.1 s -> 4.1-4.3 s, loading 0.83-0.96 s -> 0.65-0.73 s, peak memory
//! the same (about 4.0 GB). Memory placed on a chosen node (`NodeBuffer`)
//! is mapped by numakit itself and keeps its own page policy. A user's own
//! setting of the tunable is left as it is (`glibc.malloc.hugetlb=0`
//! turns this off).
//!
//! None of this changes how much memory is used at the peak, and it does
//! nothing on other C libraries.

/// The tunable that turns glibc's huge pages on.
const HUGE_PAGES_TUNABLE: &str = "glibc.malloc.hugetlb";
/// Set in the environment of the restarted process, so that it does not
/// restart again (whatever the C library did with `GLIBC_TUNABLES`).
const RESTARTED: &str = "NUMAKIT_ALLOCATOR_TUNED";

/// Starts the program again with glibc's huge pages turned on, unless
/// they are set already (by the user or a first start), or the C library
/// is not glibc. Returns only when it does not restart (or the restart
/// failed: the program then goes on with base pages). Call first thing in
/// `main`, before any thread exists.
pub fn restart_with_huge_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt;
        if std::env::var_os(RESTARTED).is_some() {
            return;
        }
        let current = std::env::var("GLIBC_TUNABLES").ok();
        let Some(tunables) = tunables_with_huge_pages(current.as_deref()) else {
            return;
        };
        let mut args = std::env::args_os();
        let Some(program) = args.next() else {
            return;
        };
        // `exec` returns only on failure (no /proc, say): then numakit goes
        // on in this process, with base pages.
        let _failed = std::process::Command::new("/proc/self/exe")
            .arg0(program)
            .args(args)
            .env("GLIBC_TUNABLES", tunables)
            .env(RESTARTED, "1")
            .exec();
    }
}

/// `GLIBC_TUNABLES` with the huge-page tunable added to `current`, or
/// `None` when `current` sets that tunable already.
fn tunables_with_huge_pages(current: Option<&str>) -> Option<String> {
    let setting = format!("{HUGE_PAGES_TUNABLE}=1");
    match current.map(str::trim).filter(|c| !c.is_empty()) {
        None => Some(setting),
        Some(c)
            if c.split(':')
                .any(|t| t.split('=').next() == Some(HUGE_PAGES_TUNABLE)) =>
        {
            None
        }
        Some(c) => Some(format!("{c}:{setting}")),
    }
}

/// glibc's ceiling for the mmap threshold on 64-bit machines.
const MMAP_THRESHOLD: libc::c_int = 32 << 20;
/// Freed memory at the top of a heap is returned past this.
const TRIM_THRESHOLD: libc::c_int = 1 << 30;

/// Tunes the allocator; call once, first thing in `main`.
pub fn keep_freed_memory() {
    #[cfg(target_env = "gnu")]
    {
        // SAFETY: mallopt only sets the allocator's tuning parameters; it is
        // called before any other thread exists, and a refused value leaves
        // the default in place (its return value says so; either is fine).
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_huge_page_tunable_is_added_unless_the_user_set_it() {
        assert_eq!(
            tunables_with_huge_pages(None).as_deref(),
            Some("glibc.malloc.hugetlb=1")
        );
        assert_eq!(
            tunables_with_huge_pages(Some("")).as_deref(),
            Some("glibc.malloc.hugetlb=1")
        );
        assert_eq!(
            tunables_with_huge_pages(Some("glibc.malloc.arena_max=2")).as_deref(),
            Some("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1")
        );
        assert_eq!(
            tunables_with_huge_pages(Some("glibc.malloc.hugetlb=0")),
            None
        );
        assert_eq!(
            tunables_with_huge_pages(Some("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2")),
            None
        );
        assert!(tunables_with_huge_pages(Some("glibc.malloc.hugetlbx=1")).is_some());
    }
}
