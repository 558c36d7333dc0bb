//! Cache and memory-bandwidth partitioning through the kernel's resctrl
//! filesystem (Intel RDT and AMD's equivalent): cache allocation (CAT),
//! code/data prioritisation (CDP) and memory bandwidth allocation (MBA).
//!
//! [`Resctrl::system`] reads what the machine offers ([`Info`]) from
//! `/sys/fs/resctrl`, or gives the one reason it offers nothing
//! ([`Unavailable`]: the CPU, the kernel, the mount or permissions). A
//! [`Share`] (cache ways or a fraction of them, a bandwidth percentage) is
//! checked against that and turned into schemata lines: a contiguous mask
//! per cache domain, placed away from other groups' masks and from the
//! `shareable_bits` where it can be, and a bandwidth rounded as the kernel
//! rounds it. A [`Group`] is a control group holding such a share: it is
//! created with `mkdir`, configured through its `schemata` file, given
//! threads through its `tasks` file and removed with `rmdir`.
//!
//! It does not mount resctrl, switch CDP on (both are mount-time choices
//! for an administrator), use the monitoring side (`mon_groups`,
//! occupancy and bandwidth counters), or pseudo-lock cache regions.
//!
//! Nor does it colour pages, the software alternative to CAT. A colour is
//! the set-index bits of a physically indexed cache that lie above the page
//! offset, and user space cannot choose them: it sees virtual addresses
//! only, Linux's page allocator has no notion of colour and hands out
//! whatever free frame it has, and even reading a frame's address from
//! `/proc/self/pagemap` needs `CAP_SYS_ADMIN`. With 2 MiB huge pages the
//! offset (bits 0-20) covers every set-index bit (bits 6-16 for a cache
//! slice of 2048 sets), so each huge page spans every colour; and Intel
//! spreads the L3 over slices by an undocumented hash of many address
//! bits, so even known frames do not map simply onto sets.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub mod error;
pub mod group;
pub mod info;
pub mod schemata;
pub mod share;

mod detect;
#[cfg(test)]
mod testing;

pub use error::{MaskProblem, ParseError, ResctrlError, Unavailable};
pub use group::Group;
pub use info::{BandwidthInfo, BandwidthScale, CacheInfo, Info};
pub use schemata::{Resource, Schemata, SchemataLine};
pub use share::{CacheShare, Share};

/// Where resctrl is mounted by convention.
pub const DEFAULT_ROOT: &str = "/sys/fs/resctrl";

/// Directories in a resctrl root that are not control groups.
const NOT_GROUPS: [&str; 3] = ["info", "mon_groups", "mon_data"];

/// A resctrl mount: what it offers and the default group's schemata.
#[derive(Clone, Debug)]
pub struct Resctrl {
    root: PathBuf,
    info: Info,
    schemata: Schemata,
}

impl Resctrl {
    /// The machine's resctrl at [`DEFAULT_ROOT`] (or wherever
    /// `/proc/mounts` says it is), or the one reason it cannot be used.
    pub fn system() -> Result<Self, ResctrlError> {
        Self::probe(Path::new(DEFAULT_ROOT), Path::new("/proc"))
    }

    /// Like [`Resctrl::system`] with another mount point and procfs (a
    /// prepared tree, a container's view): opens `root`, else a resctrl
    /// mount listed in `proc_root/mounts`, else explains from
    /// `proc_root/cpuinfo` and `proc_root/filesystems` why there is none.
    pub fn probe(root: &Path, proc_root: &Path) -> Result<Self, ResctrlError> {
        detect::probe(root, proc_root)
    }

    /// Reads the resctrl tree at `root`. A missing or empty `root` is
    /// [`Unavailable::NotMounted`].
    pub fn open(root: &Path) -> Result<Self, ResctrlError> {
        let schemata_path = root.join("schemata");
        if !root.join("info").is_dir() || !schemata_path.exists() {
            if let Err(e) = std::fs::read_dir(root) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    return Err(ResctrlError::io(root, e));
                }
            }
            return Err(ResctrlError::Unavailable(Unavailable::NotMounted {
                root: root.to_path_buf(),
            }));
        }
        let text = info::read_text(&schemata_path)?;
        let schemata =
            Schemata::parse(&text).map_err(|e| ResctrlError::parse(&schemata_path, e))?;
        let info = Info::read(root, &schemata)?;
        Ok(Self {
            root: root.to_path_buf(),
            info,
            schemata,
        })
    }

    /// The mount point.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What the machine offers.
    pub fn info(&self) -> &Info {
        &self.info
    }

    /// The default (root) group's schemata, as read when opened.
    pub fn schemata(&self) -> &Schemata {
        &self.schemata
    }

    /// The names of the control groups other than the default one.
    pub fn groups(&self) -> Result<Vec<String>, ResctrlError> {
        let entries = std::fs::read_dir(&self.root).map_err(|e| ResctrlError::io(&self.root, e))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| ResctrlError::io(&self.root, e))?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let is_group = entry.path().join("schemata").exists();
            if is_group && !NOT_GROUPS.contains(&name.as_str()) {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }

    /// The schemata a new group with `share` would get: checked against
    /// what the machine offers, with masks placed away from the other
    /// groups' masks where there is room.
    pub fn plan(&self, share: &Share) -> Result<Schemata, ResctrlError> {
        let used = |level| self.masks_in_use(level);
        share::plan(&self.info, share, &used)
    }

    /// The union, per domain, of the masks other groups hold at a cache
    /// level (code and data alike). Groups that cannot be read are skipped.
    fn masks_in_use(&self, level: u8) -> BTreeMap<u32, u64> {
        let mut used = BTreeMap::new();
        let names = self.groups().unwrap_or_else(|e| {
            log::debug!("cannot list resctrl groups: {e}");
            Vec::new()
        });
        for name in names {
            let path = self.root.join(&name).join("schemata");
            let parsed = std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|t| Schemata::parse(&t).map_err(|e| e.to_string()));
            let schemata = match parsed {
                Ok(s) => s,
                Err(e) => {
                    log::debug!("skipping resctrl group {name}: {e}");
                    continue;
                }
            };
            let lines = schemata.lines.iter();
            for line in lines.filter(|l| l.resource.cache_level() == Some(level)) {
                for (&domain, &mask) in &line.domains {
                    *used.entry(domain).or_insert(0) |= mask;
                }
            }
        }
        used
    }
}

#[cfg(test)]
mod tests {
    use super::testing::Tree;
    use super::*;

    #[test]
    fn opens_a_prepared_tree() {
        let tree = Tree::cat(0x7ff, 2).with_mba(10, 10);
        let rc = Resctrl::open(tree.path()).unwrap();
        assert_eq!(rc.root(), tree.path());
        assert_eq!(rc.info().l3.as_ref().unwrap().ways(), 11);
        assert_eq!(rc.schemata().line(&Resource::Mb).unwrap().domains[&1], 100);
        assert!(rc.groups().unwrap().is_empty());
    }

    #[test]
    fn a_missing_or_empty_root_is_not_mounted() {
        let tree = Tree::empty();
        for root in [tree.path().to_path_buf(), tree.path().join("absent")] {
            match Resctrl::open(&root) {
                Err(ResctrlError::Unavailable(Unavailable::NotMounted { root: r })) => {
                    assert_eq!(r, root)
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_malformed_root_schemata_is_an_error() {
        let tree = Tree::cat(0xff, 2);
        tree.write("schemata", "L3:0=ff;1\n");
        let e = Resctrl::open(tree.path()).unwrap_err();
        assert!(matches!(e, ResctrlError::Parse { .. }), "{e}");
        assert!(e.to_string().contains("`1` is not domain=value"), "{e}");
    }

    #[test]
    fn lists_groups_and_their_masks() {
        let tree = Tree::cat(0xff, 2);
        tree.write("a/schemata", "L3:0=f0;1=3\n");
        tree.write("b/schemata", "L3:0=c;1=garbage\n");
        tree.write("mon_groups/x/tasks", "");
        let rc = Resctrl::open(tree.path()).unwrap();
        assert_eq!(rc.groups().unwrap(), vec!["a".to_string(), "b".to_string()]);
        let used = rc.masks_in_use(3);
        assert_eq!(used, BTreeMap::from([(0, 0xf0), (1, 0x3)]));
        assert!(rc.masks_in_use(2).is_empty());
    }

    #[test]
    fn the_system_call_never_panics() {
        match Resctrl::system() {
            Ok(rc) => assert!(rc.info().classes().is_some() || rc.info().l3.is_none()),
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
}
