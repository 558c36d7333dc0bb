//! The numeric applications (kmeans, PCA, matrix multiply): every
//! implementation — hand-written threaded baseline and MapReduce job —
//! against the plain sequential reference, on generated inputs, edge cases
//! and values at the limits of the original's integer arithmetic; and
//! Phoenix++'s own inputs (seed 1) give its published check values.

use std::num::NonZeroUsize;
use std::sync::{Arc, OnceLock};

use numakit_mapreduce::Runtime;
use numakit_mapreduce_apps::kmeans::{self, KmeansInput, KmeansLimits, Points};
use numakit_mapreduce_apps::matrix_multiply::{self, MatrixPair, SquareMatrix};
use numakit_mapreduce_apps::pca::{self, PcaMatrix};
use numakit_pool::Pool;
use proptest::prelude::*;

/// One pool for every test (three workers, more than this machine may
/// have cores, so that tasks interleave), reused run after run.
fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let topology = Arc::new(numakit_topology::discover().unwrap());
        numakit_pool::PoolBuilder::new(topology)
            .placement(numakit_placement::PlacementMode::BestEffort)
            .threads(3)
            .build()
            .unwrap()
    })
}

fn threads(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap()
}

fn kmeans_input(dim: usize, points: Vec<i32>, means: Vec<i32>) -> KmeansInput {
    KmeansInput::new(
        Points::new(dim, points).unwrap(),
        Points::new(dim, means).unwrap(),
    )
    .unwrap()
}

/// Every kmeans implementation on `input`, checked against the reference.
fn check_kmeans(input: &KmeansInput) -> kmeans::KmeansOutput {
    let limits = KmeansLimits {
        max_iterations: Some(500),
    };
    let expected = kmeans::reference::kmeans(input, limits);
    for t in [1, 2, 3] {
        assert_eq!(
            kmeans::baseline::kmeans(input, limits, threads(t)),
            expected,
            "baseline, {t} threads"
        );
    }
    let (out, _) = kmeans::run(&Runtime::new(pool()), input, limits).unwrap();
    assert_eq!(out, expected, "MapReduce job");
    expected
}

fn check_pca(matrix: &PcaMatrix) -> pca::PcaOutput {
    let expected = pca::reference::pca(matrix);
    for t in [1, 2, 5] {
        assert_eq!(
            pca::baseline::pca(matrix, threads(t)),
            expected,
            "baseline, {t} threads"
        );
    }
    let (out, _) = pca::run(&Runtime::new(pool()), matrix).unwrap();
    assert_eq!(out, expected, "MapReduce jobs");
    expected
}

fn check_product(pair: &MatrixPair) -> SquareMatrix {
    let expected = matrix_multiply::reference::multiply(pair);
    for t in [1, 2, 7] {
        assert_eq!(
            matrix_multiply::baseline::multiply(pair, threads(t)),
            expected,
            "baseline, {t} threads"
        );
    }
    let (out, _) = matrix_multiply::run(&Runtime::new(pool()), pair).unwrap();
    assert_eq!(out, expected, "MapReduce job");
    expected
}

fn square_pair(n: usize, a: Vec<i32>, b: Vec<i32>) -> MatrixPair {
    MatrixPair::new(
        SquareMatrix::new(n, a).unwrap(),
        SquareMatrix::new(n, b).unwrap(),
    )
    .unwrap()
}

#[test]
fn kmeans_generated_inputs() {
    for (points, dim, clusters, seed) in [
        (3000, 3, 20, 1),
        (2000, 2, 7, 2),
        (1500, 5, 9, 3),
        (500, 9, 4, 4),
    ] {
        let params = kmeans::gen::KmeansParams {
            points,
            dim,
            clusters,
            grid_size: 1000,
        };
        let out = check_kmeans(&kmeans::gen::generate(&params, seed).unwrap());
        assert!(out.converged);
    }
}

#[test]
fn kmeans_edge_cases() {
    // One point, one cluster.
    let out = check_kmeans(&kmeans_input(3, vec![4, 5, 6], vec![0, 0, 0]));
    assert_eq!(out.means.coords(), [4, 5, 6]);
    // k = n: every point its own cluster once the means reach them.
    let points: Vec<i32> = (0..20).map(|i| i * 100).collect();
    let out = check_kmeans(&kmeans_input(1, points.clone(), points.clone()));
    assert_eq!(out.means.coords(), &points[..]);
    assert_eq!(out.iterations, 1 + 1);
    // All points equal: one cluster takes them, the others keep their means.
    let out = check_kmeans(&kmeans_input(2, vec![7; 200], vec![0, 0, 7, 7, 100, 100]));
    assert_eq!(out.means.coords(), [0, 0, 7, 7, 100, 100]);
    assert!(out.assignment.iter().all(|&c| c == 1));
    // No points.
    let out = check_kmeans(&kmeans_input(2, vec![], vec![1, 2]));
    assert_eq!((out.iterations, out.converged), (1, true));
    // More clusters than points.
    check_kmeans(&kmeans_input(1, vec![1, 2, 3], (0..10).collect()));
}

#[test]
fn kmeans_at_the_limits_of_int_arithmetic() {
    // Squared distances and cluster sums wrap in the original's `int`s;
    // every implementation must wrap the same way.
    let mut rand = numakit_mapreduce_apps::numeric::CRand::new(8);
    let mut big = || rand.next_rand() as i32 ^ if rand.next_rand() % 2 == 0 { 0 } else { -1 };
    let points: Vec<i32> = (0..3 * 400).map(|_| big()).collect();
    let means: Vec<i32> = (0..3 * 6).map(|_| big()).collect();
    check_kmeans(&kmeans_input(3, points, means));
    let extremes = vec![
        i32::MAX,
        i32::MIN,
        i32::MAX,
        i32::MAX,
        i32::MIN,
        i32::MIN,
        0,
        -1,
    ];
    check_kmeans(&kmeans_input(
        2,
        extremes,
        vec![i32::MAX, i32::MAX, i32::MIN, 0],
    ));
    // Largest distance there is (u32::MAX) is still a distance.
    check_kmeans(&kmeans_input(
        4,
        vec![65_535, 362, 5, 1, 0, 0, 0, 0],
        vec![0, 0, 0, 0, 1, 1, 1, 1],
    ));
}

#[test]
fn pca_generated_and_edge_cases() {
    for (rows, cols, grid) in [
        (50, 60, 100),
        (33, 2, 100),
        (2, 40, 100),
        (64, 64, 1_000_000),
        (17, 9, 1),
    ] {
        check_pca(&pca::gen::generate(rows, cols, grid, 3).unwrap());
    }
    // One row, two columns; no rows; all values equal.
    check_pca(&PcaMatrix::new(1, 2, vec![3, 8]).unwrap());
    check_pca(&PcaMatrix::new(0, 5, vec![]).unwrap());
    let out = check_pca(&PcaMatrix::new(4, 4, vec![9; 16]).unwrap());
    assert!(out.covariance.iter().all(|&c| c == 0));
    // More rows than columns (the original's keys collide there).
    check_pca(&pca::gen::generate(30, 4, 100, 5).unwrap());
}

#[test]
fn pca_at_the_limits_of_long_long_arithmetic() {
    let values: Vec<i32> = (0..6 * 8)
        .map(|i| if i % 3 == 0 { i32::MIN } else { i32::MAX - i })
        .collect();
    check_pca(&PcaMatrix::new(6, 8, values).unwrap());
    // Sums just inside and just outside 32 bits (the kernel's two paths).
    check_pca(&PcaMatrix::new(2, 2, vec![0, 65_534, 65_534, 0]).unwrap());
    check_pca(&PcaMatrix::new(2, 2, vec![0, 65_535, 65_535, 0]).unwrap());
}

#[test]
fn matrix_multiply_generated_and_edge_cases() {
    for (n, seed) in [(1, 1), (2, 2), (17, 3), (64, 4), (100, 5)] {
        check_product(&matrix_multiply::gen::generate(n, seed));
    }
    assert!(check_product(&square_pair(0, vec![], vec![]))
        .values()
        .is_empty());
    assert_eq!(
        check_product(&square_pair(1, vec![-3], vec![7])).values(),
        [-21]
    );
}

#[test]
fn matrix_multiply_at_the_limits_of_int_arithmetic() {
    let n = 11;
    let limits: Vec<i32> = (0..n * n)
        .map(|i| [i32::MAX, i32::MIN, -1, 32_767, -32_768][i % 5])
        .collect();
    check_product(&square_pair(
        n,
        limits.clone(),
        limits.iter().rev().copied().collect(),
    ));
    let sixteen: Vec<i32> = (0..n * n)
        .map(|i| if i % 2 == 0 { -32_768 } else { 32_767 })
        .collect();
    check_product(&square_pair(n, sixteen.clone(), sixteen));
}

#[test]
fn seed_one_is_phoenix_inputs() {
    // Phoenix++ 1.0 `pca -r 40 -c 50` prints "Covariance sum: 29189" and
    // `kmeans -p 2000 -c 10 -d 3` ends with these means after 27
    // iterations (both run here, glibc rand()).
    let m = pca::gen::generate(40, 50, 100, 1).unwrap();
    assert_eq!(check_pca(&m).covariance_sum(), 29189);
    let params = kmeans::gen::KmeansParams {
        points: 2000,
        dim: 3,
        clusters: 10,
        grid_size: 1000,
    };
    let out = check_kmeans(&kmeans::gen::generate(&params, 1).unwrap());
    assert_eq!(out.iterations, 27);
    assert!(out
        .phoenix_dump()
        .starts_with("  511   197   552 \n  530   658   733 \n"));
    assert!(out.phoenix_dump().ends_with("  199   284   774 \n"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn products_equal_the_reference(n in 0usize..24, seed in any::<u32>(), wide in any::<bool>()) {
        let mut rand = numakit_mapreduce_apps::numeric::CRand::new(seed);
        let mut value = || if wide { rand.next_rand() as i32 ^ (rand.next_rand() << 31) as i32 } else { rand.below(21) as i32 - 10 };
        let a = (0..n * n).map(|_| value()).collect();
        let b = (0..n * n).map(|_| value()).collect();
        check_product(&square_pair(n, a, b));
    }

    #[test]
    fn covariances_equal_the_reference(rows in 0usize..20, cols in 2usize..20, grid in 1u32..100_000, seed in any::<u32>()) {
        check_pca(&pca::gen::generate(rows, cols, grid, seed).unwrap());
    }

    #[test]
    fn clusterings_equal_the_reference(points in 0usize..300, dim in 1usize..6, clusters in 1usize..12, grid in 1u32..2000, seed in any::<u32>()) {
        let params = kmeans::gen::KmeansParams { points, dim, clusters, grid_size: grid };
        check_kmeans(&kmeans::gen::generate(&params, seed).unwrap());
    }
}
