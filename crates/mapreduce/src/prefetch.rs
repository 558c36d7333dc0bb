//! Software prefetch: the [`Prefetch`] setting and the one place the
//! prefetch instruction is issued.
//!
//! Phoenix Rebirth (§III-B) hides NUMA memory latency behind the value
//! iterator reduce reads through: while reduce works on one value, the
//! lines of values a little further on are already on their way. This
//! module holds the setting that turns that on or off (so its effect can
//! be measured) and a safe wrapper over `_mm_prefetch` on x86_64; on
//! other targets the wrapper does nothing. It does not decide *what* to
//! prefetch: that is [`crate::values`]' business.

/// Whether reduce-side iterators prefetch ahead of the value they yield.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Prefetch {
    /// Prefetch ahead (the default).
    #[default]
    On,
    /// Never prefetch: plain sequential reads.
    Off,
}

impl Prefetch {
    /// Whether prefetching is on.
    #[inline]
    pub fn is_on(self) -> bool {
        self == Self::On
    }

    /// Parses the CLI's `--prefetch`: `on` or `off`.
    pub fn parse(spec: &str) -> Result<Self, String> {
        match spec.trim() {
            "on" => Ok(Self::On),
            "off" => Ok(Self::Off),
            other => Err(format!("unknown prefetch setting `{other}` (on, off)")),
        }
    }

    /// The setting as [`Prefetch::parse`] reads it.
    pub fn name(self) -> &'static str {
        match self {
            Self::On => "on",
            Self::Off => "off",
        }
    }
}

/// Bytes in a cache line (x86_64 and most AArch64 parts).
pub(crate) const LINE: usize = 64;

/// Asks the hardware to bring the cache line holding `address` into all
/// cache levels. A hint only: any address may be given, valid or not.
#[inline(always)]
pub(crate) fn read<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is a hint: it never faults (not even on an
    // unmapped or null address), reads nothing into a register and writes
    // no memory, so no address can make it unsound. SSE, which the
    // intrinsic needs, is part of the x86_64 baseline.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// Prefetches the lines under the first `bytes` bytes from `start`.
#[inline(always)]
pub(crate) fn read_span<T>(start: *const T, bytes: usize) {
    let mut offset = 0;
    while offset < bytes {
        read(start.cast::<u8>().wrapping_add(offset));
        offset += LINE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_print_back() {
        for p in [Prefetch::On, Prefetch::Off] {
            assert_eq!(Prefetch::parse(p.name()), Ok(p));
        }
        assert!(Prefetch::parse("maybe").is_err());
        assert_eq!(Prefetch::default(), Prefetch::On);
    }

    #[test]
    fn prefetching_any_address_is_harmless() {
        let x = [1u64; 32];
        read_span(x.as_ptr(), std::mem::size_of_val(&x));
        read(std::ptr::null::<u8>());
        read(usize::MAX as *const u8);
        assert_eq!(x.iter().sum::<u64>(), 32);
    }
}
