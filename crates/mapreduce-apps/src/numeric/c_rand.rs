//! The pseudo-random stream of the GNU C library's `rand()` after
//! `srand(seed)`: an additive lagged-Fibonacci generator (lags 3 and 31)
//! seeded by the Park-Miller minimal standard generator, whose first 310
//! outputs are thrown away.
//!
//! The Phoenix++ k-means and PCA programs draw their inputs from `rand()`
//! without ever calling `srand`, i.e. from seed 1; matrix multiply seeds it
//! from the clock. Reproducing the stream lets our generators produce, for
//! the same seed, the very inputs the originals compute on, so that their
//! outputs can be compared number for number.
//!
//! It is not a general-purpose or cryptographic generator.

/// Words of state that reach back to the longer lag (31) plus the three
/// words the seeding copies forward.
const RING: usize = 34;
/// The longer and the shorter lag of the additive generator.
const LONG_LAG: usize = 31;
const SHORT_LAG: usize = 3;
/// Outputs discarded after seeding (ten per state word).
const DISCARDED: usize = 310;
/// 2^31 - 1, the modulus of the seeding generator.
const PARK_MILLER_MODULUS: i64 = 2_147_483_647;

/// The `rand()` stream of a given seed.
#[derive(Clone, Debug)]
pub struct CRand {
    ring: [u32; RING],
    /// Index of the next word to produce, modulo [`RING`].
    next: usize,
}

impl CRand {
    /// The stream `rand()` returns after `srand(seed)`; seed 0 behaves as
    /// seed 1, as in the C library.
    pub fn new(seed: u32) -> Self {
        let mut ring = [0u32; RING];
        let mut word = if seed == 0 { 1 } else { i64::from(seed as i32) };
        ring[0] = word as u32;
        for slot in ring.iter_mut().take(LONG_LAG).skip(1) {
            word = park_miller_step(word);
            *slot = word as u32;
        }
        for i in LONG_LAG..RING {
            ring[i] = ring[i - LONG_LAG];
        }
        let mut rand = CRand { ring, next: RING };
        for _ in 0..DISCARDED {
            rand.next_word();
        }
        rand
    }

    /// The next value of `rand()`, in `0..2^31`.
    pub fn next_rand(&mut self) -> u32 {
        self.next_word() >> 1
    }

    /// `rand() % modulus`, the way the originals draw a coordinate.
    /// `modulus` must be positive (the originals reject anything else).
    pub fn below(&mut self, modulus: u32) -> u32 {
        debug_assert!(modulus > 0);
        self.next_rand() % modulus.max(1)
    }

    /// The next word of the additive generator: r[i] = r[i-31] + r[i-3].
    fn next_word(&mut self) -> u32 {
        let i = self.next;
        let word = self.ring[(i - LONG_LAG) % RING].wrapping_add(self.ring[(i - SHORT_LAG) % RING]);
        self.ring[i % RING] = word;
        self.next = RING + (i + 1) % RING;
        word
    }
}

/// One step of 16807 * x mod (2^31 - 1), by Schrage's decomposition as the
/// C library computes it (so that a negative 32-bit seed behaves alike).
fn park_miller_step(word: i64) -> i64 {
    let hi = word / 127_773;
    let lo = word % 127_773;
    let next = 16_807 * lo - 2_836 * hi;
    if next < 0 {
        next + PARK_MILLER_MODULUS
    } else {
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(seed: u32, count: usize) -> Vec<u32> {
        let mut r = CRand::new(seed);
        (0..count).map(|_| r.next_rand()).collect()
    }

    /// Values printed by the C library's own `rand()` (glibc 2.x, called
    /// through Python's ctypes) after `srand(seed)`.
    #[test]
    fn matches_the_c_library() {
        assert_eq!(first(1, 4), [1804289383, 846930886, 1681692777, 1714636915]);
        assert_eq!(first(2, 4), [1505335290, 1738766719, 190686788, 260874575]);
        assert_eq!(first(42, 4), [71876166, 708592740, 1483128881, 907283241]);
        assert_eq!(
            first(u32::MAX, 4),
            [254925627, 1205188300, 366127624, 1401405153]
        );
        assert_eq!(first(1, 400)[399], 950390868);
        assert_eq!(first(42, 400)[399], 1766340821);
    }

    #[test]
    fn seed_zero_is_seed_one() {
        assert_eq!(first(0, 50), first(1, 50));
    }

    #[test]
    fn values_stay_below_two_to_the_31() {
        let mut r = CRand::new(7);
        assert!((0..10_000).all(|_| r.next_rand() < 1 << 31));
        assert!((0..10_000).all(|_| r.below(11) < 11));
    }
}
