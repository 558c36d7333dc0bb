//! What the machine offers: the `info/` directory of a resctrl mount.
//!
//! For each cache level with allocation (`info/L3`, or `info/L3CODE` and
//! `info/L3DATA` when code/data prioritisation is on, and the same for L2)
//! it reads `cbm_mask`, `min_cbm_bits`, `num_closids` and `shareable_bits`;
//! for memory bandwidth (`info/MB`) `bandwidth_gran`, `min_bandwidth`,
//! `num_closids` and `delay_linear`. The domain ids come from the root
//! group's schemata. This module only reads: it does not switch CDP on or
//! off (a mount option) and ignores the monitoring files (`L3_MON`).

use std::path::Path;

use super::error::{MaskProblem, ParseError, ResctrlError};
use super::schemata::{is_contiguous, Resource, Schemata};

/// Cache allocation (CAT) at one cache level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheInfo {
    /// The cache level: 3 or 2.
    pub level: u8,
    /// Whether code/data prioritisation (CDP) is on: masks are then set
    /// separately for code (`L3CODE`) and data (`L3DATA`).
    pub cdp: bool,
    /// Every way that may be allocated, as a bitmask (`cbm_mask`).
    pub cbm_mask: u64,
    /// The fewest ways a mask may have (`min_cbm_bits`).
    pub min_cbm_bits: u32,
    /// Classes of service, the default group's included (`num_closids`;
    /// halved by the kernel when CDP is on).
    pub num_closids: u32,
    /// Ways other agents (I/O, the GPU) may also fill (`shareable_bits`).
    pub shareable_bits: u64,
    /// The cache ids, one domain per cache instance.
    pub domains: Vec<u32>,
}

impl CacheInfo {
    /// How many ways may be allocated.
    pub fn ways(&self) -> u32 {
        self.cbm_mask.count_ones()
    }

    /// The schemata resources a mask of this level is written to: `L3`,
    /// or `L3CODE` and `L3DATA` with CDP on.
    pub fn resources(&self) -> Vec<Resource> {
        match (self.level, self.cdp) {
            (3, false) => vec![Resource::L3],
            (3, true) => vec![Resource::L3Code, Resource::L3Data],
            (_, false) => vec![Resource::L2],
            (_, true) => vec![Resource::L2Code, Resource::L2Data],
        }
    }

    /// Whether the hardware would take `mask`: non-empty, contiguous, at
    /// least `min_cbm_bits` ways and within `cbm_mask`.
    pub fn check_mask(&self, mask: u64) -> Result<(), MaskProblem> {
        if mask == 0 {
            return Err(MaskProblem::Empty);
        }
        if mask & !self.cbm_mask != 0 {
            return Err(MaskProblem::OutsideCbmMask {
                cbm_mask: self.cbm_mask,
            });
        }
        if !is_contiguous(mask) {
            return Err(MaskProblem::NotContiguous);
        }
        if mask.count_ones() < self.min_cbm_bits {
            return Err(MaskProblem::TooFewBits {
                bits: mask.count_ones(),
                min: self.min_cbm_bits,
            });
        }
        Ok(())
    }

    /// One clause for people: `L3 CAT: 11 ways (cbm_mask 7ff), 16 classes, CDP off`.
    pub fn summary(&self) -> String {
        let shared = if self.shareable_bits == 0 {
            String::new()
        } else {
            format!(", shareable_bits {:x}", self.shareable_bits)
        };
        format!(
            "L{} CAT: {} ways (cbm_mask {:x}{shared}), {} domain(s), {} classes, CDP {}",
            self.level,
            self.ways(),
            self.cbm_mask,
            self.domains.len(),
            self.num_closids,
            if self.cdp { "on" } else { "off" }
        )
    }
}

/// What memory bandwidth values mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BandwidthScale {
    /// A percentage of the full bandwidth (Intel MBA's default).
    Percent,
    /// An absolute amount up to `max` (MB/s with the `mba_MBps` mount
    /// option; AMD's units of 1/8 GB/s): a percentage cannot be translated.
    Absolute {
        /// The default group's value, the unthrottled maximum.
        max: u64,
    },
}

/// Memory bandwidth allocation (MBA).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BandwidthInfo {
    /// Values are multiples of this (`bandwidth_gran`).
    pub granularity: u32,
    /// The smallest value (`min_bandwidth`).
    pub min_bandwidth: u32,
    /// Classes of service (`num_closids`).
    pub num_closids: u32,
    /// Whether the throttling delay is linear (`delay_linear`); `None` when
    /// the kernel does not say.
    pub delay_linear: Option<bool>,
    /// What the values mean, judged from the default group's values.
    pub scale: BandwidthScale,
    /// The domain ids (one per L3 domain the controller sits behind).
    pub domains: Vec<u32>,
}

impl BandwidthInfo {
    /// The value the kernel will apply for `percent`: at least
    /// `min_bandwidth` (checked before rounding, as the kernel does), then
    /// rounded up to a multiple of the granularity, at most 100.
    pub fn round_percent(&self, percent: u32) -> Result<u32, ResctrlError> {
        if let BandwidthScale::Absolute { max } = self.scale {
            return Err(ResctrlError::InvalidShare(format!(
                "memory bandwidth is set in absolute units here (up to {max}), not as a percentage"
            )));
        }
        if percent == 0 || percent > 100 {
            return Err(ResctrlError::InvalidShare(format!(
                "bandwidth {percent}% is not within 1-100%"
            )));
        }
        if percent < self.min_bandwidth {
            return Err(ResctrlError::InvalidShare(format!(
                "bandwidth {percent}% is below min_bandwidth {}%",
                self.min_bandwidth
            )));
        }
        let gran = self.granularity.max(1);
        Ok((percent.div_ceil(gran) * gran).min(100))
    }

    /// One clause for people: `MBA: granularity 10%, min 10%, 8 classes`.
    pub fn summary(&self) -> String {
        let (unit, scale) = match self.scale {
            BandwidthScale::Percent => ("%", String::new()),
            BandwidthScale::Absolute { max } => ("", format!(", absolute units up to {max}")),
        };
        let delay = match self.delay_linear {
            Some(true) => ", linear delay",
            Some(false) => ", non-linear delay",
            None => "",
        };
        format!(
            "MBA: granularity {}{unit}, min {}{unit}{scale}, {} domain(s), {} classes{delay}",
            self.granularity,
            self.min_bandwidth,
            self.domains.len(),
            self.num_closids
        )
    }
}

/// Everything a resctrl mount offers for allocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Info {
    /// L3 cache allocation, if offered.
    pub l3: Option<CacheInfo>,
    /// L2 cache allocation, if offered.
    pub l2: Option<CacheInfo>,
    /// Memory bandwidth allocation, if offered.
    pub mb: Option<BandwidthInfo>,
}

impl Info {
    /// Reads `root/info`, taking domain ids from the root group's schemata.
    pub(crate) fn read(root: &Path, schemata: &Schemata) -> Result<Self, ResctrlError> {
        let info = root.join("info");
        Ok(Self {
            l3: read_cache(&info, 3, schemata)?,
            l2: read_cache(&info, 2, schemata)?,
            mb: read_bandwidth(&info, schemata)?,
        })
    }

    /// How many groups may exist at once, the default one included: the
    /// fewest classes over the offered resources (`None` if none is).
    pub fn classes(&self) -> Option<u32> {
        let caches = [&self.l3, &self.l2];
        let cache = caches
            .iter()
            .filter_map(|c| c.as_ref().map(|c| c.num_closids));
        cache.chain(self.mb.as_ref().map(|m| m.num_closids)).min()
    }

    /// The cache levels' summaries joined by `; `, or `None` without CAT.
    pub fn cache_summary(&self) -> Option<String> {
        let parts: Vec<String> = [&self.l3, &self.l2]
            .iter()
            .filter_map(|c| c.as_ref().map(CacheInfo::summary))
            .collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// The bandwidth summary, or `None` without MBA.
    pub fn bandwidth_summary(&self) -> Option<String> {
        self.mb.as_ref().map(BandwidthInfo::summary)
    }
}

fn read_cache(
    info: &Path,
    level: u8,
    schemata: &Schemata,
) -> Result<Option<CacheInfo>, ResctrlError> {
    let plain = info.join(format!("L{level}"));
    let code = info.join(format!("L{level}CODE"));
    let data = info.join(format!("L{level}DATA"));
    let (dir, cdp) = if plain.is_dir() {
        (plain, false)
    } else if code.is_dir() {
        if !data.is_dir() {
            let e = ParseError::new(&format!("L{level}CODE"), "has no DATA counterpart");
            return Err(ResctrlError::parse(info, e));
        }
        (code, true)
    } else {
        return Ok(None);
    };
    let mut cache = CacheInfo {
        level,
        cdp,
        cbm_mask: read_number(&dir.join("cbm_mask"), 16)?,
        min_cbm_bits: read_u32(&dir.join("min_cbm_bits"))?,
        num_closids: read_u32(&dir.join("num_closids"))?,
        shareable_bits: read_optional(&dir.join("shareable_bits"), 16)?.unwrap_or(0),
        domains: Vec::new(),
    };
    let first = cache.resources().remove(0);
    cache.domains = domains_of(root_schemata_path(info), schemata, &first)?;
    Ok(Some(cache))
}

fn read_bandwidth(info: &Path, schemata: &Schemata) -> Result<Option<BandwidthInfo>, ResctrlError> {
    let dir = info.join("MB");
    if !dir.is_dir() {
        return Ok(None);
    }
    let path = root_schemata_path(info);
    let domains = domains_of(path.clone(), schemata, &Resource::Mb)?;
    let max = schemata
        .line(&Resource::Mb)
        .and_then(|l| l.domains.values().copied().max())
        .unwrap_or(100);
    let scale = if max <= 100 {
        BandwidthScale::Percent
    } else {
        BandwidthScale::Absolute { max }
    };
    let delay_linear = read_optional(&dir.join("delay_linear"), 10)?.map(|v| v != 0);
    Ok(Some(BandwidthInfo {
        granularity: read_u32(&dir.join("bandwidth_gran"))?,
        min_bandwidth: read_u32(&dir.join("min_bandwidth"))?,
        num_closids: read_u32(&dir.join("num_closids"))?,
        delay_linear,
        scale,
        domains,
    }))
}

fn root_schemata_path(info: &Path) -> std::path::PathBuf {
    info.parent().unwrap_or(info).join("schemata")
}

fn domains_of(
    path: std::path::PathBuf,
    schemata: &Schemata,
    resource: &Resource,
) -> Result<Vec<u32>, ResctrlError> {
    match schemata.line(resource) {
        Some(line) => Ok(line.domains.keys().copied().collect()),
        None => {
            let e = ParseError::new(
                resource.name(),
                "offered in info/ but missing from the schemata",
            );
            Err(ResctrlError::parse(&path, e))
        }
    }
}

/// Reads a file's trimmed text.
pub(crate) fn read_text(path: &Path) -> Result<String, ResctrlError> {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .map_err(|e| ResctrlError::io(path, e))
}

fn read_number(path: &Path, radix: u32) -> Result<u64, ResctrlError> {
    let text = read_text(path)?;
    u64::from_str_radix(&text, radix).map_err(|_| {
        ResctrlError::parse(
            path,
            ParseError::new(&text, format!("not a base-{radix} number")),
        )
    })
}

fn read_u32(path: &Path) -> Result<u32, ResctrlError> {
    let value = read_number(path, 10)?;
    u32::try_from(value)
        .map_err(|_| ResctrlError::parse(path, ParseError::new(&value.to_string(), "too large")))
}

fn read_optional(path: &Path, radix: u32) -> Result<Option<u64>, ResctrlError> {
    if path.exists() {
        read_number(path, radix).map(Some)
    } else {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::Tree;
    use super::*;

    fn info_of(tree: &Tree) -> Result<Info, ResctrlError> {
        let path = tree.path().join("schemata");
        let text = read_text(&path)?;
        let schemata = Schemata::parse(&text).map_err(|e| ResctrlError::parse(&path, e))?;
        Info::read(tree.path(), &schemata)
    }

    #[test]
    fn reads_a_cat_only_tree() {
        let tree = Tree::cat(0x7ff, 2);
        let info = info_of(&tree).unwrap();
        let l3 = info.l3.as_ref().unwrap();
        assert_eq!((l3.level, l3.cdp, l3.cbm_mask), (3, false, 0x7ff));
        assert_eq!((l3.ways(), l3.min_cbm_bits, l3.num_closids), (11, 1, 16));
        assert_eq!(l3.domains, vec![0, 1]);
        assert_eq!(l3.resources(), vec![Resource::L3]);
        assert!(info.l2.is_none() && info.mb.is_none());
        assert_eq!(info.classes(), Some(16));
        assert_eq!(
            info.cache_summary().unwrap(),
            "L3 CAT: 11 ways (cbm_mask 7ff), 2 domain(s), 16 classes, CDP off"
        );
        assert_eq!(info.bandwidth_summary(), None);
    }

    #[test]
    fn reads_a_cdp_tree() {
        let tree = Tree::cdp(0xff, 2);
        let l3 = info_of(&tree).unwrap().l3.unwrap();
        assert!(l3.cdp);
        assert_eq!(l3.num_closids, 8);
        assert_eq!(l3.resources(), vec![Resource::L3Code, Resource::L3Data]);
        assert!(l3.summary().ends_with("8 classes, CDP on"));
    }

    #[test]
    fn reads_an_mba_tree() {
        let tree = Tree::cat(0xff, 2).with_mba(10, 10);
        let info = info_of(&tree).unwrap();
        let mb = info.mb.as_ref().unwrap();
        assert_eq!(
            (mb.granularity, mb.min_bandwidth, mb.num_closids),
            (10, 10, 8)
        );
        assert_eq!(
            (mb.delay_linear, mb.scale),
            (Some(true), BandwidthScale::Percent)
        );
        assert_eq!(mb.domains, vec![0, 1]);
        assert_eq!(info.classes(), Some(8));
        assert_eq!(
            info.bandwidth_summary().unwrap(),
            "MBA: granularity 10%, min 10%, 2 domain(s), 8 classes, linear delay"
        );
    }

    #[test]
    fn reads_l2_and_shareable_bits() {
        let tree = Tree::cat(0xfff, 1).with_l2(0xff).with_shareable(0xc00);
        let info = info_of(&tree).unwrap();
        assert_eq!(info.l3.as_ref().unwrap().shareable_bits, 0xc00);
        let l2 = info.l2.as_ref().unwrap();
        assert_eq!((l2.level, l2.ways()), (2, 8));
        assert_eq!(l2.domains, vec![0, 1, 2, 3]);
        let summary = info.cache_summary().unwrap();
        assert!(summary.contains("shareable_bits c00") && summary.contains("; L2 CAT: 8 ways"));
    }

    #[test]
    fn rounds_bandwidth_up_to_the_granularity() {
        let tree = Tree::cat(0xff, 2).with_mba(10, 10);
        let mb = info_of(&tree).unwrap().mb.unwrap();
        assert_eq!(mb.round_percent(35).unwrap(), 40);
        assert_eq!(mb.round_percent(10).unwrap(), 10);
        assert_eq!(mb.round_percent(100).unwrap(), 100);
        assert!(mb
            .round_percent(5)
            .unwrap_err()
            .to_string()
            .contains("min_bandwidth 10%"));
        assert!(mb.round_percent(0).is_err());
        assert!(mb.round_percent(101).is_err());
    }

    #[test]
    fn absolute_bandwidth_takes_no_percentage() {
        let tree = Tree::cat(0xff, 1).with_mba(1, 0);
        tree.write("schemata", "L3:0=ff\nMB:0=2048\n");
        let mb = info_of(&tree).unwrap().mb.unwrap();
        assert_eq!(mb.scale, BandwidthScale::Absolute { max: 2048 });
        assert!(matches!(
            mb.round_percent(50),
            Err(ResctrlError::InvalidShare(_))
        ));
        assert!(mb.summary().contains("absolute units up to 2048"));
    }

    #[test]
    fn masks_are_checked() {
        let l3 = info_of(&Tree::cat(0xff, 1).with_min_bits(2))
            .unwrap()
            .l3
            .unwrap();
        assert_eq!(l3.check_mask(0xf0), Ok(()));
        assert_eq!(l3.check_mask(0), Err(MaskProblem::Empty));
        assert_eq!(
            l3.check_mask(0xf0f),
            Err(MaskProblem::OutsideCbmMask { cbm_mask: 0xff })
        );
        assert_eq!(
            l3.check_mask(0x0f0f),
            Err(MaskProblem::OutsideCbmMask { cbm_mask: 0xff })
        );
        assert_eq!(l3.check_mask(0x33), Err(MaskProblem::NotContiguous));
        assert_eq!(
            l3.check_mask(0x8),
            Err(MaskProblem::TooFewBits { bits: 1, min: 2 })
        );
    }

    #[test]
    fn broken_trees_are_errors() {
        let tree = Tree::cat(0xff, 1);
        tree.write("info/L3/cbm_mask", "zz\n");
        assert!(matches!(info_of(&tree), Err(ResctrlError::Parse { .. })));
        let tree = Tree::cat(0xff, 1);
        std::fs::remove_file(tree.path().join("info/L3/num_closids")).unwrap();
        assert!(matches!(info_of(&tree), Err(ResctrlError::Io { .. })));
        let tree = Tree::cat(0xff, 1);
        tree.write("schemata", "MB:0=100\n");
        let e = info_of(&tree).unwrap_err().to_string();
        assert!(e.contains("missing from the schemata"), "{e}");
    }
}
