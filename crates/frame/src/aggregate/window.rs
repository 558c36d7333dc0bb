//! A direct index for one integer key whose values stay close together:
//! a streaming worker's groups indexed by `key - base` for keys within
//! [`WINDOW`] of the first batch's smallest, with no hashing. Keys 1..G,
//! dates, small categories: the common shapes of a group-by key.
//!
//! The window is decided on a worker's first batch; the first key outside
//! it turns the worker's groups into a hash index under their real codes
//! (`Partial::recode`), and so does the end of streaming, so the merge
//! only ever sees real codes. It does not widen or move the window.

use numakit_ops::aggregate::columns::{AggSpec, Partial};

use crate::keys::PartCodes;

/// Keys within this many of the base are indexed directly: 2^16 groups,
/// whose aggregates fit a worker's share of the cache.
pub(crate) const WINDOW: u64 = 1 << 16;

/// Where a worker stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyWindow {
    /// No batch seen yet.
    Undecided,
    /// Groups are indexed by `code - base`.
    Direct { base: u64 },
    /// Groups are hashed by their codes; `unused` of them have no rows
    /// (numbers a closed window left behind).
    Off { unused: usize },
}

impl KeyWindow {
    /// Fits a batch's `codes` (integer keys as their own codes) to the
    /// window, turning `partial` into a direct or a hashed index as the
    /// codes require; the codes to add to `partial`.
    pub(crate) fn fit(
        &mut self,
        partial: &mut Partial,
        codes: PartCodes,
        specs: &[AggSpec],
    ) -> PartCodes {
        // Off stays off: its batches are not scanned for their range.
        if let KeyWindow::Off { .. } = self {
            return codes;
        }
        let range = valid_range(&codes);
        match *self {
            KeyWindow::Off { .. } => codes,
            KeyWindow::Undecided => match range {
                Some((lo, hi)) if hi - lo < WINDOW => {
                    *partial = Partial::new(specs, Some(WINDOW - 1), 0);
                    *self = KeyWindow::Direct { base: lo };
                    shifted(codes, lo)
                }
                // No key at all (or keys far apart): hashed from the start,
                // so the rows added now are never dropped with the index.
                _ => {
                    *self = KeyWindow::Off { unused: 0 };
                    codes
                }
            },
            KeyWindow::Direct { base } => match range {
                Some((lo, hi)) if lo < base || hi - base >= WINDOW => {
                    self.close(partial);
                    codes
                }
                _ => shifted(codes, base),
            },
        }
    }

    /// Whether groups are indexed directly (they are then never more than
    /// [`WINDOW`], however many numbers the index spans).
    pub(crate) fn is_direct(&self) -> bool {
        matches!(self, KeyWindow::Direct { .. })
    }

    /// Groups without rows that the index counts: a direct window's
    /// unused numbers, which keep their places once it closes.
    pub(crate) fn unused(&self, partial: &Partial) -> usize {
        match *self {
            KeyWindow::Direct { .. } => (0..partial.groups())
                .filter(|&g| partial.rows(g) == 0)
                .count(),
            KeyWindow::Off { unused } => unused,
            KeyWindow::Undecided => 0,
        }
    }

    /// Gives `partial` its groups' real codes (a hash index), if direct.
    pub(crate) fn close(&mut self, partial: &mut Partial) {
        let KeyWindow::Direct { base } = *self else {
            return;
        };
        let unused = self.unused(partial);
        {
            let direct = std::mem::replace(partial, Partial::dense(&[]));
            *partial =
                direct.recode(|g| (g < WINDOW as usize).then(|| base.wrapping_add(g as u64)));
            *self = KeyWindow::Off { unused };
        }
    }
}

/// The smallest and largest code of the rows that have a key.
fn valid_range(codes: &PartCodes) -> Option<(u64, u64)> {
    let mut invalid = codes.invalid.iter().peekable();
    let mut range: Option<(u64, u64)> = None;
    if codes.invalid.is_empty() {
        let lo = codes.codes.iter().copied().min()?;
        let hi = codes.codes.iter().copied().max()?;
        return Some((lo, hi));
    }
    for (row, &c) in codes.codes.iter().enumerate() {
        if invalid.peek() == Some(&&(row as u32)) {
            invalid.next();
            continue;
        }
        range = Some(range.map_or((c, c), |(lo, hi)| (lo.min(c), hi.max(c))));
    }
    range
}

/// The codes less `base` (rows without a key keep a code of 0).
fn shifted(codes: PartCodes, base: u64) -> PartCodes {
    let mut out: Vec<u64> = codes.codes.iter().map(|c| c.wrapping_sub(base)).collect();
    for &row in &codes.invalid {
        out[row as usize] = 0;
    }
    PartCodes::new(out, codes.invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_skip_rows_without_keys() {
        let codes = PartCodes::new(vec![5, 0, 9, 7], vec![1]);
        assert_eq!(valid_range(&codes), Some((5, 9)));
        assert_eq!(valid_range(&PartCodes::new(vec![0], vec![0])), None);
        assert_eq!(
            valid_range(&PartCodes::new(vec![3, 1], vec![])),
            Some((1, 3))
        );
    }

    #[test]
    fn the_window_opens_on_close_keys_and_closes_on_a_far_one() {
        let mut window = KeyWindow::Undecided;
        let mut partial = Partial::dense(&[]);
        let near = window.fit(
            &mut partial,
            PartCodes::new(vec![100, 105, 0], vec![2]),
            &[],
        );
        assert_eq!(window, KeyWindow::Direct { base: 100 });
        assert_eq!(near.codes.to_vec(), vec![0, 5, 0]);
        let far = window.fit(
            &mut partial,
            PartCodes::new(vec![100 + WINDOW], vec![]),
            &[],
        );
        assert!(matches!(window, KeyWindow::Off { .. }));
        assert_eq!(far.codes.to_vec(), vec![100 + WINDOW]);
        let mut wide = KeyWindow::Undecided;
        wide.fit(&mut partial, PartCodes::new(vec![0, WINDOW], vec![]), &[]);
        assert_eq!(wide, KeyWindow::Off { unused: 0 });
    }
}
