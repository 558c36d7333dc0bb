//! The PQRS model of Wang, Ailamaki and Faloutsos ("Capturing the
//! spatio-temporal behavior of real traffic data", 2002), the generator
//! Chakraborty et al. draw their join attributes from.
//!
//! PQRS describes events in a square of time x address (here: row order x
//! key domain) by recursive subdivision: at every level each of the four
//! quadrants receives a fixed share of the events of its parent, `p`, `q`,
//! `r` and `s` (summing to 1). Our convention for the quadrants: `p` is
//! (first half of time, first half of the domain), `q` (first half of
//! time, second half of the domain), `r` (second half of time, first half
//! of the domain), `s` (second halves of both). Equal shares give uniform
//! keys; unequal ones give bursts in time and hot ranges of the domain,
//! nested at every scale (self-similar), which is what the model was made
//! to capture.
//!
//! Rows are events in time order: row `i` of `n` sits at the time quantile
//! `(i + 1/2) / n` of the model's time marginal, which fixes its time
//! half at each level (probability `p + q` for the first); given the time
//! half, the domain half is drawn with the model's conditional share
//! (`p / (p + q)` or `r / (r + s)`) from the row's own random stream. So a
//! row is still a function of (seed, row) alone, any slice of the relation
//! can be generated on its own, and the relation in row order follows the
//! model's joint distribution. The `2^levels` cells of the domain are
//! scaled onto the keys `1..=domain`.
//!
//! Chakraborty et al. give neither their p, q, r, s nor their recursion
//! depth; the defaults the CLI documents are ours.

use super::splitmix64;

/// A uniform number in [0, 1) from the 53 high bits of a mixed word.
fn unit(word: u64) -> f64 {
    (word >> 11) as f64 / (1u64 << 53) as f64
}

/// The four quadrant shares and the key domain.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Pqrs {
    /// Share of (first half of time, first half of the domain).
    pub p: f64,
    /// Share of (first half of time, second half of the domain).
    pub q: f64,
    /// Share of (second half of time, first half of the domain).
    pub r: f64,
    /// Keys are `1..=domain`.
    pub domain: u64,
}

impl Pqrs {
    /// The share of (second half of time, second half of the domain).
    pub fn s(&self) -> f64 {
        1.0 - self.p - self.q - self.r
    }

    /// Why the shares or the domain cannot be used, if they cannot.
    pub fn problem(&self) -> Option<&'static str> {
        let shares = [self.p, self.q, self.r];
        if !shares.iter().all(|x| x.is_finite() && *x >= 0.0) {
            return Some("pqrs shares must be finite and at least 0");
        }
        if self.s() < -1e-12 {
            return Some("pqrs shares P, Q and R must add up to at most 1 (S is the rest)");
        }
        if self.domain == 0 {
            return Some("pqrs needs a domain of at least 1 key");
        }
        None
    }

    /// Levels of subdivision: enough cells to tell every key apart.
    fn levels(&self) -> u32 {
        (64 - self.domain.saturating_sub(1).leading_zeros()).max(1)
    }

    /// The key of row `row` of `rows`, drawn from the stream `seed`.
    pub fn key(&self, row: u64, rows: u64, seed: u64) -> u64 {
        let levels = self.levels();
        let first_time = self.p + self.q;
        let mut time = (row as f64 + 0.5) / rows.max(1) as f64;
        let mut cell = 0u64;
        for level in 0..u64::from(levels) {
            let low_share = if time < first_time {
                time /= first_time;
                self.p / first_time
            } else {
                let second_time = (1.0 - first_time).max(f64::MIN_POSITIVE);
                time = ((time - first_time) / second_time).min(1.0 - f64::EPSILON);
                self.r / second_time
            };
            let draw = unit(splitmix64(seed ^ level.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
            let high = draw >= low_share;
            cell = (cell << 1) | u64::from(high);
        }
        // Cell c of 2^levels covers keys proportionally: c * domain / 2^levels.
        ((u128::from(cell) * u128::from(self.domain)) >> levels) as u64 + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(model: Pqrs, rows: u64) -> Vec<u64> {
        (0..rows).map(|i| model.key(i, rows, i ^ 0xabc)).collect()
    }

    fn low_share(keys: &[u64], domain: u64) -> f64 {
        keys.iter().filter(|&&k| k <= domain / 2).count() as f64 / keys.len() as f64
    }

    #[test]
    fn equal_shares_give_uniform_keys_in_the_domain() {
        let domain = 1000;
        let model = Pqrs {
            p: 0.25,
            q: 0.25,
            r: 0.25,
            domain,
        };
        let got = keys(model, 100_000);
        assert!(got.iter().all(|&k| (1..=domain).contains(&k)));
        let mut counts = [0u64; 10];
        for k in &got {
            counts[((k - 1) * 10 / domain) as usize] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn skewed_shares_make_hot_ranges_at_every_scale() {
        let domain = 1 << 16;
        let model = Pqrs {
            p: 0.6,
            q: 0.1,
            r: 0.2,
            domain,
        };
        let got = keys(model, 200_000);
        // The first half of the domain gets p + r = 0.8 of the keys, and
        // the first quarter 0.8^2 of them.
        assert!((low_share(&got, domain) - 0.8).abs() < 0.01);
        let quarter = got.iter().filter(|&&k| k <= domain / 4).count() as f64 / got.len() as f64;
        assert!((quarter - 0.64).abs() < 0.01, "{quarter}");
    }

    #[test]
    fn time_order_carries_the_model_s_locality() {
        let domain = 1 << 12;
        let model = Pqrs {
            p: 0.45,
            q: 0.05,
            r: 0.05,
            domain,
        };
        let rows = 100_000;
        let got = keys(model, rows);
        // The first p + q = half of the rows (the first half of time) lie
        // in the first half of the domain with share p / (p + q) = 0.9,
        // the second half of the rows with share r / (r + s) = 0.1.
        let half = rows as usize / 2;
        assert!((low_share(&got[..half], domain) - 0.9).abs() < 0.01);
        assert!((low_share(&got[half..], domain) - 0.1).abs() < 0.01);
    }

    #[test]
    fn degenerate_shares_and_domains_stay_in_range() {
        for model in [
            Pqrs {
                p: 1.0,
                q: 0.0,
                r: 0.0,
                domain: 7,
            },
            Pqrs {
                p: 0.0,
                q: 0.0,
                r: 0.0,
                domain: 7,
            },
            Pqrs {
                p: 0.0,
                q: 0.5,
                r: 0.5,
                domain: 1,
            },
        ] {
            assert!(model.problem().is_none(), "{model:?}");
            for k in keys(model, 1000) {
                assert!((1..=model.domain).contains(&k), "{model:?}: {k}");
            }
        }
        assert_eq!(
            keys(
                Pqrs {
                    p: 1.0,
                    q: 0.0,
                    r: 0.0,
                    domain: 7
                },
                100
            ),
            vec![1; 100]
        );
        assert_eq!(
            keys(
                Pqrs {
                    p: 0.0,
                    q: 0.0,
                    r: 0.0,
                    domain: 8
                },
                100
            ),
            vec![8; 100]
        );
        assert!(Pqrs {
            p: 0.6,
            q: 0.6,
            r: 0.0,
            domain: 7
        }
        .problem()
        .is_some());
        assert!(Pqrs {
            p: -0.1,
            q: 0.6,
            r: 0.0,
            domain: 7
        }
        .problem()
        .is_some());
        assert!(Pqrs {
            p: 0.1,
            q: 0.1,
            r: 0.1,
            domain: 0
        }
        .problem()
        .is_some());
    }
}
