//! The byte-input applications against their sequential references, on
//! generated inputs and edge cases.

use std::sync::Arc;

use numakit_mapreduce::{JobOptions, Runtime};
use numakit_mapreduce_apps::{histogram, linear_regression, string_match, word_count};
use numakit_placement::PlacementMode;
use numakit_pool::{Pool, PoolBuilder};

fn pool() -> Pool {
    let topo = Arc::new(numakit_topology::discover().expect("topology"));
    PoolBuilder::new(topo)
        .threads(2.min(num_cpus()))
        .placement(PlacementMode::BestEffort)
        .build()
        .expect("pool")
}

fn num_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn small_chunks() -> JobOptions {
    JobOptions {
        chunk_records: Some(1000),
        ..word_count::default_options()
    }
}

fn counted(rt: &Runtime, text: &[u8], opts: &JobOptions) -> Vec<(Vec<u8>, u64)> {
    let mut owned = text.to_vec();
    let got = word_count::run(rt, &mut owned, opts).expect("word count");
    got.counts.iter().map(|(w, n)| (w.to_vec(), *n)).collect()
}

#[test]
fn word_count_matches_the_reference() {
    let pool = pool();
    let rt = Runtime::new(&pool);
    let long = "Z".repeat(5000);
    let cases: Vec<Vec<u8>> = vec![
        word_count::generate(300_000, 1),
        Vec::new(),
        b"word".to_vec(),
        b"Don't stop, don't! O'Neil's 99 red-balloons \xff\xfeCAFE".to_vec(),
        format!("a {long} b {long}'s").into_bytes(),
        b"''' '' x'''".to_vec(),
    ];
    for text in &cases {
        for opts in [word_count::default_options(), small_chunks()] {
            assert_eq!(
                counted(&rt, text, &opts),
                word_count::reference(text),
                "{:.60?}",
                String::from_utf8_lossy(text)
            );
        }
    }
    let text = word_count::generate(200_000, 2);
    let got = counted(&rt, &text, &small_chunks());
    assert!(
        got.windows(2).all(|w| w[0].1 >= w[1].1),
        "most frequent first"
    );
    assert!(got[0].1 > 10 * got[got.len() / 2].1, "Zipf-skewed counts");
}

#[test]
fn histogram_matches_the_reference_and_refuses_bad_files() {
    let pool = pool();
    let rt = Runtime::new(&pool);
    for (w, h) in [(4096, 30), (3, 5), (1, 1), (7, 0), (5, 300)] {
        let file = histogram::bmp(w, h, 9);
        let got = histogram::run(
            &rt,
            &file,
            &JobOptions {
                chunk_records: Some(64),
                ..JobOptions::default()
            },
        )
        .unwrap();
        assert_eq!(got.bins, histogram::reference(&file).unwrap(), "{w}x{h}");
        assert_eq!(got.bins[..256].iter().sum::<u64>(), w as u64 * h as u64);
    }
    let good = histogram::bmp(10, 10, 1);
    let truncated = &good[..good.len() - 1];
    for (bad, want) in [
        (&good[..30], "header cut short"),
        (truncated, "truncated BMP"),
        (&b"PK\x03\x04 not a bmp"[..], "not a BMP"),
    ] {
        let err = histogram::run(&rt, bad, &JobOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{err}");
    }
    let mut overlapping = good.clone();
    overlapping[10] = 20;
    let mut negative_width = good.clone();
    negative_width[18..22].copy_from_slice(&(-10i32).to_le_bytes());
    for bad in [overlapping, negative_width] {
        let err = histogram::run(&rt, &bad, &JobOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("bad BMP header"), "{err}");
    }
    // The largest header a file can declare (2^31-1 by 2^31-1 pixels)
    // is refused as truncated, its size computed without wrapping.
    let mut huge = good.clone();
    huge[18..22].copy_from_slice(&i32::MAX.to_le_bytes());
    huge[22..26].copy_from_slice(&i32::MAX.to_le_bytes());
    let err = histogram::layout(&huge).unwrap_err();
    assert!(err.to_string().contains("truncated BMP"), "{err}");
    let mut top_down = good.clone();
    top_down[22..26].copy_from_slice(&(-10i32).to_le_bytes());
    let got = histogram::run(&rt, &top_down, &JobOptions::default()).unwrap();
    assert_eq!(got.bins, histogram::reference(&good).unwrap());
    let mut eight_bit = good.clone();
    eight_bit[28] = 8;
    let err = histogram::run(&rt, &eight_bit, &JobOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("24-bit"), "{err}");
}

#[test]
fn linear_regression_matches_the_reference() {
    let pool = pool();
    let rt = Runtime::new(&pool);
    let mut wild: Vec<u8> = (0..=255u8).cycle().take(100_001).collect();
    wild.extend([0x80, 0x7f, 0xff]);
    for bytes in [
        linear_regression::generate(400_001, 3),
        wild,
        vec![7],
        Vec::new(),
        vec![1, 2],
    ] {
        let (got, _) = linear_regression::run(
            &rt,
            &bytes,
            &JobOptions {
                chunk_records: Some(999),
                ..JobOptions::default()
            },
        )
        .unwrap();
        let want = linear_regression::reference(&bytes);
        assert_eq!(
            (got.n, got.sums, got.ignored_bytes),
            (want.n, want.sums, want.ignored_bytes)
        );
        assert!(got.b.to_bits() == want.b.to_bits() || (got.b.is_nan() && want.b.is_nan()));
    }
    let fit = linear_regression::reference(&linear_regression::generate(200_000, 4));
    assert!(
        (fit.b - 0.5).abs() < 0.05 && (fit.a - 10.0).abs() < 1.0,
        "{fit:?}"
    );
    // Signed bytes, as the original: 0xff is -1.
    assert_eq!(
        linear_regression::reference(&[0xff, 0xff]).sums,
        [-1, -1, 1, 1, 1]
    );
}

#[test]
fn string_match_matches_the_reference() {
    let pool = pool();
    let rt = Runtime::new(&pool);
    let generated = string_match::generate(500_000, 5);
    let edge = b"ferrari\r\nferrari\n\nferrar\nHelloworld\rhowareyou \nwhotheman".to_vec();
    for keys in [generated, edge, Vec::new(), b"ferrari".to_vec()] {
        let (got, _) = string_match::run(
            &rt,
            &keys,
            &JobOptions {
                chunk_records: Some(100),
                ..JobOptions::default()
            },
        )
        .unwrap();
        assert_eq!(got, string_match::reference(&keys));
    }
    let (got, _) = string_match::run(
        &rt,
        b"ferrari\r\nferrari\n\nHelloworld\rwhotheman",
        &JobOptions::default(),
    )
    .unwrap();
    assert_eq!(got, [1, 0, 2, 1]);
    let generated = string_match::generate(500_000, 5);
    assert!(string_match::reference(&generated).iter().all(|&n| n > 0));
}
