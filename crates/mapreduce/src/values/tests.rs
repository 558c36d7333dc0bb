//! Tests of the chunked value buffer and its iterators.

use super::*;

fn filled(n: u64) -> ValueChunks<u64> {
    let mut c = ValueChunks::new();
    (0..n).for_each(|v| c.push(v));
    c
}

#[test]
fn chunks_grow_geometrically_and_keep_order() {
    let c = filled(100_000);
    assert_eq!(c.len(), 100_000);
    let sizes: Vec<usize> = c.chunks().map(<[u64]>::len).collect();
    assert_eq!(sizes[0], first_chunk::<u64>());
    // Each later chunk is as large as everything before it.
    let mut before = 0;
    for (i, &s) in sizes.iter().enumerate() {
        if i > 0 && i + 1 < sizes.len() {
            assert_eq!(s, before, "chunk {i} of {sizes:?}");
        }
        before += s;
    }
    assert!(sizes.len() < 20, "{sizes:?}");
    let got: Vec<u64> = c.iter().copied().collect();
    assert_eq!(got, (0..100_000).collect::<Vec<u64>>());
}

#[test]
fn stored_values_never_move() {
    let mut c = ValueChunks::new();
    c.push(0u64);
    let first = c.iter().next().map(|v| v as *const u64);
    let chunk_starts: Vec<*const u64> = {
        (1..50_000).for_each(|v| c.push(v));
        c.chunks().map(<[u64]>::as_ptr).collect()
    };
    assert_eq!(first, Some(chunk_starts[0]));
    (50_000..60_000).for_each(|v| c.push(v));
    let after: Vec<*const u64> = c.chunks().map(<[u64]>::as_ptr).collect();
    assert_eq!(after[..chunk_starts.len()], chunk_starts[..]);
}

#[test]
fn chunks_stop_growing_at_the_cap() {
    let big = 2 * MAX_CHUNK_BYTES / 8 + 10;
    let c = filled(big as u64);
    assert!(c.chunks().all(|ch| ch.len() * 8 <= MAX_CHUNK_BYTES));
    assert_eq!(c.iter().len(), big);
}

#[test]
fn empty_and_one_value() {
    let empty: ValueChunks<String> = ValueChunks::new();
    assert!(empty.is_empty());
    assert_eq!(empty.iter().next(), None);
    assert_eq!(empty.iter().next_back(), None);
    assert_eq!(empty.iter().size_hint(), (0, Some(0)));
    assert_eq!(empty.chunk_count(), 0);
    let mut one = ValueChunks::new();
    one.push("x".to_string());
    assert_eq!(one.iter().collect::<Vec<_>>(), ["x"]);
    assert_eq!(one.iter().rev().collect::<Vec<_>>(), ["x"]);
    assert_eq!(one.into_iter().collect::<Vec<_>>(), ["x"]);
}

#[test]
fn size_hint_is_exact_all_the_way() {
    for prefetch in [Prefetch::On, Prefetch::Off] {
        let c = filled(1000);
        let mut it = c.iter_with(prefetch);
        for left in (0..=1000).rev() {
            assert_eq!(it.size_hint(), (left, Some(left)));
            assert_eq!(it.len(), left);
            // Take from both ends in turn.
            let got = if left % 2 == 0 {
                it.next()
            } else {
                it.next_back()
            };
            assert_eq!(got.is_some(), left > 0);
        }
        let mut owned = c.into_iter();
        for left in (0..=1000).rev() {
            assert_eq!(owned.len(), left);
            owned.next();
        }
    }
}

#[test]
fn iterates_across_chunk_boundaries_both_ways() {
    for n in [1u64, 7, 8, 9, 16, 17, 33, 1000, 4097] {
        let c = filled(n);
        let want: Vec<u64> = (0..n).collect();
        assert_eq!(c.iter().copied().collect::<Vec<_>>(), want, "{n}");
        let mut back: Vec<u64> = c.iter().rev().copied().collect();
        back.reverse();
        assert_eq!(back, want, "{n}");
        // Meet in the middle: front and back halves join up.
        let mut it = c.iter();
        let mut front = Vec::new();
        let mut tail = Vec::new();
        while let Some(v) = it.next() {
            front.push(*v);
            if let Some(w) = it.next_back() {
                tail.push(*w);
            }
        }
        tail.reverse();
        front.extend(tail);
        assert_eq!(front, want, "{n}");
        assert_eq!(c.clone().into_iter().collect::<Vec<_>>(), want, "{n}");
    }
}

#[test]
fn prefetch_on_and_off_give_the_same_values() {
    let mut c: ValueChunks<[u64; 9]> = ValueChunks::new();
    (0..5000u64).for_each(|i| c.push([i; 9]));
    let on: Vec<[u64; 9]> = c.iter_with(Prefetch::On).copied().collect();
    let off: Vec<[u64; 9]> = c.iter_with(Prefetch::Off).copied().collect();
    assert_eq!(on, off);
    c.set_prefetch(Prefetch::Off);
    assert_eq!(c.iter().prefetch(), Prefetch::Off);
    assert_eq!(c.iter().copied().collect::<Vec<_>>(), on);
}

#[test]
fn append_moves_chunks_in_order() {
    let mut a = filled(100);
    let b: ValueChunks<u64> = (100..1000).collect();
    let b_start = b.chunks().next().map(<[u64]>::as_ptr);
    a.append(b);
    assert_eq!(a.len(), 1000);
    assert!(a.chunks().any(|ch| Some(ch.as_ptr()) == b_start));
    a.append(ValueChunks::new());
    (1000..1100).for_each(|v| a.push(v));
    assert_eq!(a, (0..1100).collect::<ValueChunks<u64>>());
    let mut empty = ValueChunks::new();
    empty.append(filled(10));
    assert_eq!(
        empty.iter().copied().collect::<Vec<_>>(),
        (0..10).collect::<Vec<_>>()
    );
}

#[test]
fn zero_sized_values_are_counted() {
    let mut c = ValueChunks::new();
    (0..10_000).for_each(|_| c.push(()));
    assert_eq!(c.iter().count(), 10_000);
    assert_eq!(c.into_iter().len(), 10_000);
}

#[test]
fn fold_and_next_agree_from_any_point() {
    for n in [0u64, 1, 9, 100, 5000] {
        let mut c = filled(n / 2);
        c.append(filled(n - n / 2).into_iter().map(|v| v + n / 2).collect());
        for prefetch in [Prefetch::On, Prefetch::Off] {
            for skip in [0usize, 1, 3, 40] {
                let mut it = c.iter_with(prefetch);
                let mut by_next = Vec::new();
                let mut front = Vec::new();
                for _ in 0..skip {
                    front.extend(it.next());
                    it.next_back();
                }
                let rest = it.clone();
                for v in it {
                    by_next.push(*v); // `for` calls `next`
                }
                let by_fold = rest.fold(Vec::new(), |mut acc, v| {
                    acc.push(*v);
                    acc
                });
                assert_eq!(by_fold, by_next, "{n} {prefetch:?} {skip}");
                let want: Vec<u64> = (0..n).collect();
                let tail = skip.min(n as usize - front.len());
                front.extend(by_fold);
                assert_eq!(front, want[..want.len() - tail], "{n} {skip}");
            }
        }
    }
}

#[test]
fn head_is_where_the_first_value_lies() {
    let at = |c: &ValueChunks<u64>| c.iter().next().map(|v| v as *const u64 as usize);
    let mut a = ValueChunks::new();
    a.prefetch_start(); // nothing stored: harmless
    a.push(7);
    assert_eq!(Some(a.head), at(&a));
    (0..1000).for_each(|v| a.push(v));
    assert_eq!(Some(a.head), at(&a));
    let mut empty = ValueChunks::new();
    empty.append(a);
    assert_eq!(Some(empty.head), at(&empty));
    empty.append(filled(50));
    assert_eq!(Some(empty.head), at(&empty));
    let from: ValueChunks<u64> = vec![3, 4].into();
    assert_eq!(Some(from.head), at(&from));
    let copy = from.clone();
    assert_eq!(Some(copy.head), at(&copy));
    empty.prefetch_start();
}
