//! Prepared resctrl trees for the tests: the files a kernel would show, in
//! a directory of their own that is removed afterwards. A prepared tree is
//! plain files, so `mkdir` makes an empty directory and the code under test
//! writes `schemata` and `tasks` itself. Test-only; it fakes no behaviour
//! of the kernel beyond the files.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A temporary directory holding a prepared tree.
pub(crate) struct Tree {
    dir: PathBuf,
    lines: Vec<(String, String)>,
}

impl Tree {
    /// An empty directory (resctrl's mount point when nothing is mounted).
    pub(crate) fn empty() -> Self {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("numakit-resctrl-test-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("create a temporary directory");
        Self {
            dir,
            lines: Vec::new(),
        }
    }

    /// L3 CAT without CDP: `domains` caches with mask `cbm_mask`, min 1
    /// bit, 16 classes, no shareable bits.
    pub(crate) fn cat(cbm_mask: u64, domains: u32) -> Self {
        let tree = Self::empty();
        tree.cache_dir("L3", cbm_mask, 16);
        tree.write("info/last_cmd_status", "ok\n");
        tree.with_line("L3", &mask_list(cbm_mask, domains))
    }

    /// L3 CAT with CDP on: `L3CODE` and `L3DATA`, 8 classes each.
    pub(crate) fn cdp(cbm_mask: u64, domains: u32) -> Self {
        let tree = Self::empty();
        tree.cache_dir("L3CODE", cbm_mask, 8);
        tree.cache_dir("L3DATA", cbm_mask, 8);
        tree.write("info/last_cmd_status", "ok\n");
        let list = mask_list(cbm_mask, domains);
        tree.with_line("L3CODE", &list).with_line("L3DATA", &list)
    }

    /// Adds MBA over two domains with this granularity and minimum.
    pub(crate) fn with_mba(self, gran: u32, min: u32) -> Self {
        self.write("info/MB/bandwidth_gran", &format!("{gran}\n"));
        self.write("info/MB/min_bandwidth", &format!("{min}\n"));
        self.write("info/MB/num_closids", "8\n");
        self.write("info/MB/delay_linear", "1\n");
        self.with_line("MB", "0=100;1=100")
    }

    /// Adds L2 CAT over four caches.
    pub(crate) fn with_l2(self, cbm_mask: u64) -> Self {
        self.cache_dir("L2", cbm_mask, 16);
        self.with_line("L2", &mask_list(cbm_mask, 4))
    }

    /// Sets `shareable_bits` of every L3 resource.
    pub(crate) fn with_shareable(self, bits: u64) -> Self {
        self.each_l3("shareable_bits", &format!("{bits:x}\n"));
        self
    }

    /// Sets `min_cbm_bits` of every L3 resource.
    pub(crate) fn with_min_bits(self, bits: u32) -> Self {
        self.each_l3("min_cbm_bits", &format!("{bits}\n"));
        self
    }

    /// The tree's root.
    pub(crate) fn path(&self) -> &Path {
        &self.dir
    }

    /// Writes `text` to `rel`, making directories.
    pub(crate) fn write(&self, rel: &str, text: &str) {
        let path = self.dir.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create a directory");
        }
        fs::write(path, text).expect("write a file");
    }

    /// The text of `rel`.
    pub(crate) fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.dir.join(rel)).expect("read a file")
    }

    fn cache_dir(&self, name: &str, cbm_mask: u64, closids: u32) {
        self.write(&format!("info/{name}/cbm_mask"), &format!("{cbm_mask:x}\n"));
        self.write(&format!("info/{name}/min_cbm_bits"), "1\n");
        self.write(&format!("info/{name}/num_closids"), &format!("{closids}\n"));
        self.write(&format!("info/{name}/shareable_bits"), "0\n");
    }

    fn each_l3(&self, file: &str, text: &str) {
        for name in ["L3", "L3CODE", "L3DATA"] {
            if self.dir.join("info").join(name).is_dir() {
                self.write(&format!("info/{name}/{file}"), text);
            }
        }
    }

    /// Adds a root schemata line and rewrites the file the way the kernel
    /// prints it: names right-aligned, values as given.
    fn with_line(mut self, name: &str, list: &str) -> Self {
        self.lines.push((name.to_string(), list.to_string()));
        let width = self.lines.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        let text: String = self
            .lines
            .iter()
            .map(|(n, l)| format!("{n:>width$}:{l}\n"))
            .collect();
        self.write("schemata", &text);
        self
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn mask_list(mask: u64, domains: u32) -> String {
    let pairs: Vec<String> = (0..domains).map(|d| format!("{d}={mask:x}")).collect();
    pairs.join(";")
}
