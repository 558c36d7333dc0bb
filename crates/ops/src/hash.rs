//! The hash function of the operators.
//!
//! One function everywhere, so that a partition number computed by the
//! radix partitioner and a bucket computed by a hash table never disagree
//! about which bits they use: partitioning takes the high bits
//! ([`radix_of`]), hash tables the low bits.

/// A 64-bit mix (the murmur3 finalizer): every input bit affects every
/// output bit, and it is a bijection, so distinct keys never collide in
/// the full 64 bits.
#[inline(always)]
pub fn hash64(key: u64) -> u64 {
    let mut h = key;
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    h
}

/// The partition of `key` for `bits` radix bits starting `shift` bits
/// below the top of the hash (pass 1 uses shift 0, pass 2 shift = bits of
/// pass 1).
#[inline(always)]
pub fn radix_of(key: u64, shift: u32, bits: u32) -> usize {
    if bits == 0 {
        return 0;
    }
    ((hash64(key) << shift) >> (64 - bits)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_uses_the_high_bits_in_passes() {
        let h = hash64(12345);
        let top = (h >> 60) as usize;
        let next = ((h >> 56) & 0xf) as usize;
        assert_eq!(radix_of(12345, 0, 4), top);
        assert_eq!(radix_of(12345, 4, 4), next);
        assert_eq!(radix_of(12345, 0, 8), (top << 4) | next);
        assert_eq!(radix_of(12345, 0, 0), 0);
    }

    #[test]
    fn hash_spreads_dense_keys() {
        let mut counts = [0usize; 16];
        for k in 0..16_000u64 {
            counts[radix_of(k, 0, 4)] += 1;
        }
        assert!(
            counts.iter().all(|&c| (800..1200).contains(&c)),
            "{counts:?}"
        );
    }
}
