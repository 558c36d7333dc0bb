//! A control group: a directory under the resctrl root whose `schemata`
//! grants a [`Share`] and whose `tasks` lists the threads that get it.
//!
//! [`Group::create`] plans the share, makes the directory and writes the
//! schemata (only the planned lines: the kernel keeps the others at their
//! defaults); [`Group::assign`] moves a thread in; removing the group (or
//! dropping it) removes the directory, and the kernel moves its threads
//! back to the default group. Threads a member creates later inherit the
//! group. It does not adopt or change groups it did not create, create
//! monitoring groups, or set a group's `mode` (shareable or exclusive).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::error::{ParseError, ResctrlError};
use super::schemata::Schemata;
use super::share::Share;
use super::{Resctrl, NOT_GROUPS};

/// A resctrl control group made by this process; removed on drop unless
/// [`Group::keep`] is called.
#[derive(Debug)]
pub struct Group {
    name: String,
    path: PathBuf,
    root: PathBuf,
    schemata: Schemata,
    keep: bool,
}

impl Group {
    /// Makes group `name` under `resctrl`'s root and writes the schemata
    /// planned for `share` (see [`Resctrl::plan`]). Nothing is created when
    /// the name or the share is refused.
    pub fn create(resctrl: &Resctrl, name: &str, share: &Share) -> Result<Self, ResctrlError> {
        check_name(name)?;
        let schemata = resctrl.plan(share)?;
        let root = resctrl.root().to_path_buf();
        let path = root.join(name);
        fs::create_dir(&path).map_err(|e| match e.raw_os_error() {
            Some(libc::EEXIST) => ResctrlError::GroupExists { path: path.clone() },
            Some(libc::ENOSPC) => ResctrlError::NoFreeClass { root: root.clone() },
            _ => ResctrlError::io(&path, e),
        })?;
        let group = Self {
            name: name.to_string(),
            path,
            root,
            schemata,
            keep: false,
        };
        if !group.schemata.is_empty() {
            // On failure `group` is dropped here, which removes the directory.
            group.write("schemata", &group.schemata.to_string(), false)?;
        }
        Ok(group)
    }

    /// The group's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The group's directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schemata lines written when it was created.
    pub fn schemata(&self) -> &Schemata {
        &self.schemata
    }

    /// Moves one thread (a thread id; a process id moves only its main
    /// thread) into the group.
    pub fn assign(&self, tid: u32) -> Result<(), ResctrlError> {
        self.write("tasks", &format!("{tid}\n"), true)
    }

    /// Moves every thread of process `pid` into the group; returns how many.
    pub fn assign_process(&self, pid: u32) -> Result<usize, ResctrlError> {
        let dir = PathBuf::from(format!("/proc/{pid}/task"));
        let entries = fs::read_dir(&dir).map_err(|e| ResctrlError::io(&dir, e))?;
        let mut moved = 0;
        for entry in entries {
            let entry = entry.map_err(|e| ResctrlError::io(&dir, e))?;
            let Some(tid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            self.assign(tid)?;
            moved += 1;
        }
        Ok(moved)
    }

    /// Moves the calling thread into the group.
    pub fn assign_current_thread(&self) -> Result<(), ResctrlError> {
        let link = Path::new("/proc/thread-self");
        let target = fs::read_link(link).map_err(|e| ResctrlError::io(link, e))?;
        let text = target.file_name().and_then(|s| s.to_str()).unwrap_or("");
        let tid = text.parse().map_err(|_| {
            let shown = target.display().to_string();
            ResctrlError::parse(link, ParseError::new(&shown, "no thread id at its end"))
        })?;
        self.assign(tid)
    }

    /// The threads in the group, as the `tasks` file lists them.
    pub fn tasks(&self) -> Result<Vec<u32>, ResctrlError> {
        let path = self.path.join("tasks");
        let text = match fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            other => other.map_err(|e| ResctrlError::io(&path, e))?,
        };
        let ids = text.split_whitespace().map(|t| {
            t.parse()
                .map_err(|_| ResctrlError::parse(&path, ParseError::new(t, "not a thread id")))
        });
        ids.collect()
    }

    /// Removes the group; its threads go back to the default group.
    pub fn remove(mut self) -> Result<(), ResctrlError> {
        self.keep = true;
        remove_dir(&self.path)
    }

    /// Leaves the group in place when this value is dropped (for threads
    /// that outlive the process); returns its directory.
    pub fn keep(mut self) -> PathBuf {
        self.keep = true;
        self.path.clone()
    }

    /// Writes `text` to `file` in the group in one write.
    fn write(&self, file: &str, text: &str, append: bool) -> Result<(), ResctrlError> {
        let path = self.path.join(file);
        let mut options = fs::OpenOptions::new();
        options.create(true);
        if append {
            options.append(true);
        } else {
            options.write(true).truncate(true);
        }
        options
            .open(&path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| refusal(&self.root, &path, e))
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.keep {
            if let Err(e) = remove_dir(&self.path) {
                log::warn!("cannot remove resctrl group {}: {e}", self.name);
            }
        }
    }
}

/// Refuses names resctrl would reject or that are not groups.
fn check_name(name: &str) -> Result<(), ResctrlError> {
    let reason = if name.is_empty() {
        Some("it is empty")
    } else if name.contains('/') {
        Some("it contains `/`")
    } else if NOT_GROUPS.contains(&name) {
        Some("resctrl reserves it")
    } else if name.starts_with('.') {
        Some("it starts with `.`")
    } else if name.len() > 255 {
        Some("it is longer than 255 bytes")
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        Some("only letters, digits, `-`, `_` and `.` are allowed")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(ResctrlError::InvalidName {
            name: name.to_string(),
            reason,
        }),
        None => Ok(()),
    }
}

/// A failed write: the kernel's own explanation from `info/last_cmd_status`
/// when it refused the value (EINVAL, ESRCH, ENOSPC), else the I/O error.
fn refusal(root: &Path, path: &Path, e: std::io::Error) -> ResctrlError {
    match e.raw_os_error() {
        Some(libc::EINVAL) | Some(libc::ESRCH) | Some(libc::ENOSPC) => {
            let status = fs::read_to_string(root.join("info/last_cmd_status"))
                .map(|s| s.trim().to_string())
                .ok()
                .filter(|s| !s.is_empty() && s != "ok")
                .unwrap_or_else(|| e.to_string());
            ResctrlError::Rejected {
                path: path.to_path_buf(),
                status,
            }
        }
        _ => ResctrlError::io(path, e),
    }
}

/// Removes a group directory. On resctrl one `rmdir` does it; a prepared
/// tree of plain files holds the files this module wrote, which are
/// removed before a second try.
fn remove_dir(path: &Path) -> Result<(), ResctrlError> {
    match fs::remove_dir(path) {
        Err(e) if e.raw_os_error() == Some(libc::ENOTEMPTY) => {
            for file in ["schemata", "tasks"] {
                match fs::remove_file(path.join(file)) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(ResctrlError::io(path, e))
                    }
                    _ => {}
                }
            }
            fs::remove_dir(path).map_err(|e| ResctrlError::io(path, e))
        }
        other => other.map_err(|e| ResctrlError::io(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Tree;
    use super::*;

    fn open(tree: &Tree) -> Resctrl {
        Resctrl::open(tree.path()).unwrap()
    }

    #[test]
    fn writes_the_schemata_the_kernel_expects() {
        let tree = Tree::cat(0xff, 2).with_mba(10, 10);
        let group =
            Group::create(&open(&tree), "job1", &Share::ways(4).with_bandwidth(50)).unwrap();
        assert_eq!(group.name(), "job1");
        assert_eq!(group.path(), tree.path().join("job1"));
        assert_eq!(tree.read("job1/schemata"), "L3:0=f0;1=f0\nMB:0=50;1=50\n");
        assert_eq!(group.schemata().to_string(), tree.read("job1/schemata"));
    }

    #[test]
    fn writes_code_and_data_with_cdp() {
        let tree = Tree::cdp(0xfff, 2);
        let _group = Group::create(&open(&tree), "cdp", &Share::ways(3)).unwrap();
        assert_eq!(
            tree.read("cdp/schemata"),
            "L3CODE:0=e00;1=e00\nL3DATA:0=e00;1=e00\n"
        );
    }

    #[test]
    fn groups_are_placed_apart() {
        let tree = Tree::cat(0xff, 2);
        let rc = open(&tree);
        let a = Group::create(&rc, "a", &Share::ways(4)).unwrap();
        let b = Group::create(&rc, "b", &Share::ways(4)).unwrap();
        assert_eq!(tree.read("a/schemata"), "L3:0=f0;1=f0\n");
        assert_eq!(tree.read("b/schemata"), "L3:0=f;1=f\n");
        assert_eq!(rc.groups().unwrap(), vec!["a".to_string(), "b".to_string()]);
        drop((a, b));
    }

    #[test]
    fn writes_tasks() {
        let tree = Tree::cat(0xff, 2);
        let group = Group::create(&open(&tree), "t", &Share::ways(2)).unwrap();
        assert!(group.tasks().unwrap().is_empty());
        group.assign(1234).unwrap();
        group.assign(5678).unwrap();
        assert_eq!(tree.read("t/tasks"), "1234\n5678\n");
        assert_eq!(group.tasks().unwrap(), vec![1234, 5678]);
    }

    #[test]
    fn assigns_a_process_and_the_current_thread() {
        let tree = Tree::cat(0xff, 1);
        let group = Group::create(&open(&tree), "p", &Share::ways(2)).unwrap();
        let pid = std::process::id();
        let moved = group.assign_process(pid).unwrap();
        let tasks = group.tasks().unwrap();
        assert!(moved >= 1 && tasks.len() == moved && tasks.contains(&pid));
        group.assign_current_thread().unwrap();
        let tid = *group.tasks().unwrap().last().unwrap();
        assert!(Path::new(&format!("/proc/{pid}/task/{tid}")).exists());
    }

    #[test]
    fn names_are_checked() {
        let tree = Tree::cat(0xff, 1);
        let rc = open(&tree);
        let long = "x".repeat(256);
        for bad in [
            "",
            "a/b",
            "info",
            "mon_groups",
            "mon_data",
            ".",
            "..",
            ".hidden",
            "a b",
            "é",
            long.as_str(),
        ] {
            let e = Group::create(&rc, bad, &Share::ways(2)).unwrap_err();
            assert!(
                matches!(e, ResctrlError::InvalidName { .. }),
                "{bad:?}: {e}"
            );
        }
        assert!(Group::create(&rc, "job-1_a.b", &Share::ways(2)).is_ok());
    }

    #[test]
    fn refused_shares_create_nothing_and_names_are_unique() {
        let tree = Tree::cat(0xff, 1).with_min_bits(2);
        let rc = open(&tree);
        assert!(Group::create(&rc, "small", &Share::ways(1)).is_err());
        assert!(!tree.path().join("small").exists());
        let _first = Group::create(&rc, "same", &Share::ways(2)).unwrap();
        let e = Group::create(&rc, "same", &Share::ways(2)).unwrap_err();
        assert!(matches!(e, ResctrlError::GroupExists { .. }), "{e}");
    }

    #[test]
    fn remove_drop_and_keep() {
        let tree = Tree::cat(0xff, 1);
        let rc = open(&tree);
        let group = Group::create(&rc, "r", &Share::ways(2)).unwrap();
        group.assign(1).unwrap();
        group.remove().unwrap();
        assert!(!tree.path().join("r").exists());
        drop(Group::create(&rc, "d", &Share::ways(2)).unwrap());
        assert!(!tree.path().join("d").exists());
        let kept = Group::create(&rc, "k", &Share::ways(2)).unwrap().keep();
        assert!(kept.join("schemata").exists());
    }

    #[test]
    fn refusals_carry_the_kernels_status() {
        let tree = Tree::cat(0xff, 1);
        tree.write("info/last_cmd_status", "Mask out of range\n");
        let path = tree.path().join("g/schemata");
        let e = refusal(
            tree.path(),
            &path,
            std::io::Error::from_raw_os_error(libc::EINVAL),
        );
        assert!(e.to_string().ends_with(": Mask out of range"), "{e}");
        tree.write("info/last_cmd_status", "ok\n");
        let e = refusal(
            tree.path(),
            &path,
            std::io::Error::from_raw_os_error(libc::EINVAL),
        );
        assert!(matches!(e, ResctrlError::Rejected { .. }), "{e}");
        let e = refusal(
            tree.path(),
            &path,
            std::io::Error::from_raw_os_error(libc::EIO),
        );
        assert!(matches!(e, ResctrlError::Io { .. }), "{e}");
    }
}
