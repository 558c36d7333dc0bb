//! Plumbing shared by the byte-input applications (word count, string
//! match, histogram, linear regression): seeded generators of random
//! words, and the order the text apps report in.

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

/// A seeded generator.
pub(crate) fn rng(seed: u64) -> SmallRng {
    SmallRng::seed_from_u64(seed)
}

/// A random lower-case word of 2 to 12 letters.
pub(crate) fn random_word(rng: &mut SmallRng) -> Vec<u8> {
    let len = rng.random_range(2..=12);
    (0..len).map(|_| rng.random_range(b'a'..=b'z')).collect()
}
