//! Finding resctrl, and the one reason when it cannot be found.
//!
//! The reasons are tried from the bottom up: a CPU without any allocation
//! flag in `cpuinfo` (the usual case in virtual machines), then a kernel
//! without the filesystem (`filesystems`), then a filesystem that is not
//! mounted (nothing in `mounts`). A resctrl mounted somewhere other than the
//! expected root is used where it is. Permission refusals come back from
//! the reads themselves. This module reads procfs only; it never mounts.

use std::path::{Path, PathBuf};

use super::error::{ResctrlError, Unavailable};
use super::Resctrl;

/// The `/proc/cpuinfo` flags of cache and bandwidth allocation (Intel's
/// `rdt_a`; the per-feature flags Intel and AMD both set).
const ALLOCATION_FLAGS: [&str; 7] = [
    "rdt_a", "cat_l3", "cat_l2", "cdp_l3", "cdp_l2", "mba", "smba",
];

/// Opens `root`, else a resctrl mount listed in `proc_root/mounts`, else
/// returns the reason there is none.
pub(crate) fn probe(root: &Path, proc_root: &Path) -> Result<Resctrl, ResctrlError> {
    match Resctrl::open(root) {
        Err(ResctrlError::Unavailable(Unavailable::NotMounted { .. })) => {}
        other => return other,
    }
    if let Some(mounted) = mount_point(proc_root) {
        if mounted != root {
            return Resctrl::open(&mounted);
        }
    }
    Err(ResctrlError::Unavailable(reason(root, proc_root)))
}

/// Why resctrl is absent, given that nothing is mounted at `root`.
fn reason(root: &Path, proc_root: &Path) -> Unavailable {
    if let Ok(cpuinfo) = std::fs::read_to_string(proc_root.join("cpuinfo")) {
        let flags = cpu_flags(&cpuinfo);
        if !flags.iter().any(|f| ALLOCATION_FLAGS.contains(f)) {
            return Unavailable::NoRdt {
                virtual_machine: flags.contains(&"hypervisor"),
            };
        }
    }
    if let Ok(filesystems) = std::fs::read_to_string(proc_root.join("filesystems")) {
        let known = filesystems
            .lines()
            .any(|l| l.split_whitespace().last() == Some("resctrl"));
        if !known {
            return Unavailable::NoKernelSupport;
        }
    }
    Unavailable::NotMounted {
        root: root.to_path_buf(),
    }
}

/// The flags of the first processor in a `cpuinfo` text.
fn cpu_flags(cpuinfo: &str) -> Vec<&str> {
    cpuinfo
        .lines()
        .find_map(|l| {
            let (key, value) = l.split_once(':')?;
            (key.trim() == "flags").then_some(value)
        })
        .map(|v| v.split_whitespace().collect())
        .unwrap_or_default()
}

/// Where `proc_root/mounts` says resctrl is mounted (the first such mount;
/// octal escapes such as `\040` for a space are decoded).
fn mount_point(proc_root: &Path) -> Option<PathBuf> {
    let mounts = std::fs::read_to_string(proc_root.join("mounts")).ok()?;
    mounts.lines().find_map(|line| {
        let mut fields = line.split_whitespace();
        let (_, at, kind) = (fields.next()?, fields.next()?, fields.next()?);
        (kind == "resctrl").then(|| PathBuf::from(unescape(at)))
    })
}

/// Decodes the `\ooo` octal escapes the kernel writes in mount points.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|d| {
            let text = std::str::from_utf8(d).ok()?;
            u8::from_str_radix(text, 8).ok()
        });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::super::testing::Tree;
    use super::*;

    fn proc_tree(flags: &str, filesystems: &str, mounts: &str) -> Tree {
        let proc = Tree::empty();
        proc.write(
            "cpuinfo",
            &format!("processor\t: 0\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {flags}\n"),
        );
        proc.write("filesystems", filesystems);
        proc.write("mounts", mounts);
        proc
    }

    fn reason_of(root: &Path, proc: &Tree) -> Unavailable {
        match probe(root, proc.path()) {
            Err(ResctrlError::Unavailable(reason)) => reason,
            other => panic!("{other:?}"),
        }
    }

    const FS: &str = "nodev\tsysfs\nnodev\ttmpfs\n";
    const FS_RESCTRL: &str = "nodev\tsysfs\nnodev\tresctrl\n";

    #[test]
    fn a_cpu_without_rdt_is_the_reason() {
        let empty = Tree::empty();
        let proc = proc_tree("fpu sse2 hypervisor", FS, "");
        let vm = Unavailable::NoRdt {
            virtual_machine: true,
        };
        assert_eq!(reason_of(empty.path(), &proc), vm);
        let proc = proc_tree("fpu sse2 rdt_a_not", FS, "");
        let bare = Unavailable::NoRdt {
            virtual_machine: false,
        };
        assert_eq!(reason_of(&empty.path().join("absent"), &proc), bare);
    }

    #[test]
    fn a_kernel_without_resctrl_is_the_reason() {
        let empty = Tree::empty();
        let proc = proc_tree("fpu cat_l3 cdp_l3 mba", FS, "");
        assert_eq!(reason_of(empty.path(), &proc), Unavailable::NoKernelSupport);
    }

    #[test]
    fn otherwise_it_is_not_mounted() {
        let empty = Tree::empty();
        let proc = proc_tree("fpu rdt_a cat_l3", FS_RESCTRL, "proc /proc proc rw 0 0\n");
        let expected = Unavailable::NotMounted {
            root: empty.path().to_path_buf(),
        };
        assert_eq!(reason_of(empty.path(), &proc), expected);
    }

    #[test]
    fn a_mount_elsewhere_is_used() {
        let tree = Tree::cat(0xff, 2);
        let empty = Tree::empty();
        let at = tree.path().display().to_string();
        let mounts = format!("sysfs /sys sysfs rw 0 0\nresctrl {at} resctrl rw,relatime,cdp 0 0\n");
        let proc = proc_tree("rdt_a cat_l3", FS_RESCTRL, &mounts);
        let rc = probe(empty.path(), proc.path()).unwrap();
        assert_eq!(rc.root(), tree.path());
    }

    #[test]
    fn a_mounted_root_needs_no_procfs() {
        let tree = Tree::cat(0xff, 2);
        let rc = probe(tree.path(), &tree.path().join("no-proc")).unwrap();
        assert_eq!(rc.info().l3.as_ref().unwrap().ways(), 8);
    }

    #[test]
    fn mount_points_are_unescaped() {
        assert_eq!(unescape("/mnt/a\\040b"), "/mnt/a b");
        assert_eq!(unescape("/plain"), "/plain");
        assert_eq!(unescape("/odd\\"), "/odd\\");
    }
}
