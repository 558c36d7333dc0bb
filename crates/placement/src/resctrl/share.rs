//! A share: how much cache and memory bandwidth a group may use, and the
//! schemata lines that grant it.
//!
//! Cache is asked for as a number of ways, a fraction of the ways, or an
//! explicit mask; bandwidth as a percentage. Planning checks the request
//! against [`Info`] (contiguous masks of at least `min_cbm_bits` ways inside
//! `cbm_mask`; bandwidth at least `min_bandwidth`, rounded up to the
//! granularity) and, for a number of ways, picks one run per cache domain:
//! the run overlapping the fewest ways of other groups and of
//! `shareable_bits`, the highest such run on a tie. With CDP on, code and
//! data get the same mask. Every domain gets the same share; planning
//! neither writes files nor guarantees exclusivity (other groups may later
//! take the same ways).

use std::collections::BTreeMap;

use super::error::ResctrlError;
use super::info::{CacheInfo, Info};
use super::schemata::{run_mask, Resource, Schemata, SchemataLine};

/// How much of a cache level to ask for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CacheShare {
    /// This many ways (at least `min_cbm_bits`, at most all of them).
    Ways(u32),
    /// This fraction of the ways, in (0, 1], rounded to the nearest way
    /// and raised to `min_cbm_bits`.
    Fraction(f64),
    /// Exactly this capacity bitmask in every domain.
    Mask(u64),
}

/// What a control group may use; `None` leaves a resource at the kernel's
/// default for new groups.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Share {
    /// L3 cache.
    pub cache: Option<CacheShare>,
    /// L2 cache.
    pub l2_cache: Option<CacheShare>,
    /// Memory bandwidth, as a percentage (1-100).
    pub bandwidth_percent: Option<u32>,
}

impl Share {
    /// `ways` ways of L3.
    pub fn ways(ways: u32) -> Self {
        Self::cache(CacheShare::Ways(ways))
    }

    /// A fraction of the L3 ways.
    pub fn fraction(fraction: f64) -> Self {
        Self::cache(CacheShare::Fraction(fraction))
    }

    /// This much of L3.
    pub fn cache(cache: CacheShare) -> Self {
        Self {
            cache: Some(cache),
            ..Self::default()
        }
    }

    /// Only a bandwidth percentage.
    pub fn bandwidth(percent: u32) -> Self {
        Self {
            bandwidth_percent: Some(percent),
            ..Self::default()
        }
    }

    /// This share with a bandwidth percentage as well.
    pub fn with_bandwidth(mut self, percent: u32) -> Self {
        self.bandwidth_percent = Some(percent);
        self
    }

    /// This share with some L2 as well.
    pub fn with_l2(mut self, cache: CacheShare) -> Self {
        self.l2_cache = Some(cache);
        self
    }
}

/// The schemata lines granting `share`; `used` gives, per cache level, the
/// union of other groups' masks per domain.
pub(crate) fn plan(
    info: &Info,
    share: &Share,
    used: &dyn Fn(u8) -> BTreeMap<u32, u64>,
) -> Result<Schemata, ResctrlError> {
    let mut schemata = Schemata::default();
    let levels = [
        (&info.l3, share.cache, "L3 cache allocation"),
        (&info.l2, share.l2_cache, "L2 cache allocation"),
    ];
    for (cache, want, resource) in levels {
        let Some(want) = want else { continue };
        let cache = cache
            .as_ref()
            .ok_or(ResctrlError::NotOffered { resource })?;
        for line in cache_lines(cache, want, &used(cache.level))? {
            schemata.set(line);
        }
    }
    if let Some(percent) = share.bandwidth_percent {
        let mb = info.mb.as_ref().ok_or(ResctrlError::NotOffered {
            resource: "memory bandwidth allocation",
        })?;
        let value = mb.round_percent(percent)?;
        schemata.set(SchemataLine::uniform(
            Resource::Mb,
            &mb.domains,
            u64::from(value),
        ));
    }
    Ok(schemata)
}

/// The lines for one cache level (two with CDP), one mask per domain.
fn cache_lines(
    cache: &CacheInfo,
    want: CacheShare,
    used: &BTreeMap<u32, u64>,
) -> Result<Vec<SchemataLine>, ResctrlError> {
    let ways = match want {
        CacheShare::Mask(_) => 0,
        _ => ways_for(cache, want)?,
    };
    let mut masks = BTreeMap::new();
    for &domain in &cache.domains {
        let mask = match want {
            CacheShare::Mask(mask) => mask,
            _ => {
                let other = used.get(&domain).copied().unwrap_or(0);
                choose_run(cache, ways, other).ok_or_else(|| {
                    ResctrlError::InvalidShare(format!(
                        "no run of {ways} ways fits in cbm_mask {:x}",
                        cache.cbm_mask
                    ))
                })?
            }
        };
        cache
            .check_mask(mask)
            .map_err(|problem| ResctrlError::InvalidMask {
                resource: format!("L{}", cache.level),
                mask,
                problem,
            })?;
        masks.insert(domain, mask);
    }
    let lines = cache.resources().into_iter().map(|resource| SchemataLine {
        resource,
        domains: masks.clone(),
    });
    Ok(lines.collect())
}

/// How many ways a ways or fraction request comes to.
fn ways_for(cache: &CacheInfo, want: CacheShare) -> Result<u32, ResctrlError> {
    let total = cache.ways();
    let least = cache.min_cbm_bits.max(1);
    let ways = match want {
        CacheShare::Ways(ways) => ways,
        CacheShare::Fraction(f) if f > 0.0 && f <= 1.0 => {
            let rounded = (f * f64::from(total)).round() as u32;
            rounded.clamp(least.min(total), total)
        }
        CacheShare::Fraction(f) => {
            return Err(ResctrlError::InvalidShare(format!(
                "cache fraction {f} is not within (0, 1]"
            )))
        }
        CacheShare::Mask(mask) => mask.count_ones(),
    };
    if ways < least {
        return Err(ResctrlError::InvalidShare(format!(
            "{ways} L{} way(s) is fewer than min_cbm_bits {least}",
            cache.level
        )));
    }
    if ways > total {
        return Err(ResctrlError::InvalidShare(format!(
            "{ways} L{} ways asked for, the cache has {total} (cbm_mask {:x})",
            cache.level, cache.cbm_mask
        )));
    }
    Ok(ways)
}

/// The run of `ways` bits inside `cbm_mask` that overlaps the fewest ways
/// of `other` and of the shareable bits (shareable overlap breaking ties,
/// then the highest run).
fn choose_run(cache: &CacheInfo, ways: u32, other: u64) -> Option<u64> {
    let mut best: Option<((u32, u32), u64)> = None;
    for low in (0..64).rev() {
        let Some(run) = run_mask(ways, low) else {
            continue;
        };
        if run & !cache.cbm_mask != 0 {
            continue;
        }
        let shared = (run & cache.shareable_bits).count_ones();
        let cost = ((run & other).count_ones() + shared, shared);
        if best.is_none_or(|(b, _)| cost < b) {
            best = Some((cost, run));
        }
    }
    best.map(|(_, run)| run)
}

#[cfg(test)]
mod tests {
    use super::super::error::MaskProblem;
    use super::super::testing::Tree;
    use super::super::Resctrl;
    use super::*;

    fn plan_on(tree: &Tree, share: Share) -> Result<String, ResctrlError> {
        Resctrl::open(tree.path())?
            .plan(&share)
            .map(|s| s.to_string())
    }

    #[test]
    fn picks_the_highest_free_run() {
        let tree = Tree::cat(0xff, 2).with_mba(10, 10);
        let plan = plan_on(&tree, Share::ways(4).with_bandwidth(50)).unwrap();
        assert_eq!(plan, "L3:0=f0;1=f0\nMB:0=50;1=50\n");
    }

    #[test]
    fn avoids_shareable_bits_and_other_groups() {
        let tree = Tree::cat(0x7ff, 2).with_shareable(0x600);
        assert_eq!(plan_on(&tree, Share::ways(3)).unwrap(), "L3:0=1c0;1=1c0\n");
        tree.write("other/schemata", "L3:0=1c0;1=7\n");
        assert_eq!(plan_on(&tree, Share::ways(3)).unwrap(), "L3:0=38;1=1c0\n");
        assert_eq!(plan_on(&tree, Share::ways(11)).unwrap(), "L3:0=7ff;1=7ff\n");
    }

    #[test]
    fn sets_code_and_data_with_cdp() {
        let tree = Tree::cdp(0xff, 2);
        let plan = plan_on(&tree, Share::ways(2)).unwrap();
        assert_eq!(plan, "L3CODE:0=c0;1=c0\nL3DATA:0=c0;1=c0\n");
        tree.write("g/schemata", "L3CODE:0=c0;1=c0\nL3DATA:0=30;1=30\n");
        let plan = plan_on(&tree, Share::ways(2)).unwrap();
        assert_eq!(plan, "L3CODE:0=c;1=c\nL3DATA:0=c;1=c\n");
    }

    #[test]
    fn fractions_round_to_ways() {
        let tree = Tree::cat(0x7ff, 1).with_min_bits(2);
        assert_eq!(plan_on(&tree, Share::fraction(0.5)).unwrap(), "L3:0=7e0\n");
        assert_eq!(plan_on(&tree, Share::fraction(0.01)).unwrap(), "L3:0=600\n");
        assert_eq!(plan_on(&tree, Share::fraction(1.0)).unwrap(), "L3:0=7ff\n");
        for bad in [0.0, -0.5, 1.5, f64::NAN] {
            let e = plan_on(&tree, Share::fraction(bad)).unwrap_err();
            assert!(matches!(e, ResctrlError::InvalidShare(_)), "{e}");
        }
    }

    #[test]
    fn explicit_masks_are_checked() {
        let tree = Tree::cat(0xff, 2).with_min_bits(2);
        let ok = plan_on(&tree, Share::cache(CacheShare::Mask(0x3c))).unwrap();
        assert_eq!(ok, "L3:0=3c;1=3c\n");
        let problem = |mask| match plan_on(&tree, Share::cache(CacheShare::Mask(mask))) {
            Err(ResctrlError::InvalidMask { problem, .. }) => problem,
            other => panic!("{other:?}"),
        };
        assert_eq!(problem(0x33), MaskProblem::NotContiguous);
        assert_eq!(problem(0x10), MaskProblem::TooFewBits { bits: 1, min: 2 });
        assert_eq!(
            problem(0x1f0),
            MaskProblem::OutsideCbmMask { cbm_mask: 0xff }
        );
        assert_eq!(problem(0), MaskProblem::Empty);
    }

    #[test]
    fn too_few_or_too_many_ways_are_rejected() {
        let tree = Tree::cat(0xff, 2).with_min_bits(2);
        let few = plan_on(&tree, Share::ways(1)).unwrap_err().to_string();
        assert!(few.contains("fewer than min_cbm_bits 2"), "{few}");
        let many = plan_on(&tree, Share::ways(9)).unwrap_err().to_string();
        assert!(many.contains("the cache has 8"), "{many}");
        assert!(plan_on(&tree, Share::ways(0)).is_err());
    }

    #[test]
    fn bandwidth_is_rounded_and_bounded() {
        let tree = Tree::cat(0xff, 2).with_mba(10, 10);
        assert_eq!(
            plan_on(&tree, Share::bandwidth(35)).unwrap(),
            "MB:0=40;1=40\n"
        );
        assert_eq!(
            plan_on(&tree, Share::bandwidth(91)).unwrap(),
            "MB:0=100;1=100\n"
        );
        for bad in [0, 5, 101] {
            let e = plan_on(&tree, Share::bandwidth(bad)).unwrap_err();
            assert!(matches!(e, ResctrlError::InvalidShare(_)), "{bad}: {e}");
        }
    }

    #[test]
    fn missing_resources_are_not_offered() {
        let cat = Tree::cat(0xff, 2);
        let e = plan_on(&cat, Share::bandwidth(50)).unwrap_err();
        assert!(matches!(e, ResctrlError::NotOffered { .. }), "{e}");
        let e = plan_on(&cat, Share::ways(2).with_l2(CacheShare::Ways(2))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "this machine's resctrl offers no L2 cache allocation"
        );
        let l2 = Tree::cat(0xff, 1).with_l2(0xf);
        let plan = plan_on(&l2, Share::ways(2).with_l2(CacheShare::Ways(1))).unwrap();
        assert_eq!(plan, "L3:0=c0\nL2:0=8;1=8;2=8;3=8\n");
        assert_eq!(plan_on(&l2, Share::default()).unwrap(), "");
    }
}
