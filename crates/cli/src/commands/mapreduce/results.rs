//! The full results of `numakit mapreduce <app> --out FILE`, as CSV
//! with a header line: one row per word, bin, cluster or matrix row.
//!
//! Only formatting lives here; the file is written whole or not at all
//! by the caller, after the run (and its verification) succeeded.

use std::fmt::Write;

use numakit_mapreduce_apps::kmeans::Points;
use numakit_mapreduce_apps::linear_regression::Fit;
use numakit_mapreduce_apps::matrix_multiply::SquareMatrix;
use numakit_mapreduce_apps::pca::PcaOutput;
use numakit_mapreduce_apps::string_match;

/// `word,count`, most frequent first (words are letters and apostrophes,
/// so no field needs quoting).
pub fn word_counts(counts: &[(&[u8], u64)]) -> String {
    let mut out = String::from("word,count\n");
    for (word, n) in counts {
        let _ = writeln!(out, "{},{n}", String::from_utf8_lossy(word));
    }
    out
}

/// `channel,value,count`: 256 rows each of blue, green and red.
pub fn histogram(bins: &[u64]) -> String {
    let mut out = String::from("channel,value,count\n");
    for (c, channel) in ["blue", "green", "red"].iter().enumerate() {
        for (value, n) in bins.iter().skip(256 * c).take(256).enumerate() {
            let _ = writeln!(out, "{channel},{value},{n}");
        }
    }
    out
}

/// One row: the fit and the sums it came from.
pub fn regression(fit: &Fit) -> String {
    let s = &fit.sums;
    format!(
        "points,a,b,xbar,ybar,r2,sx,sy,sxx,syy,sxy\n{},{},{},{},{},{},{},{},{},{},{}\n",
        fit.n, fit.a, fit.b, fit.xbar, fit.ybar, fit.r2, s[0], s[1], s[2], s[3], s[4]
    )
}

/// `word,matches` for each of the fixed words.
pub fn string_matches(counts: &[u64]) -> String {
    let mut out = String::from("word,matches\n");
    for (word, n) in string_match::WORDS.iter().zip(counts) {
        let _ = writeln!(out, "{},{n}", String::from_utf8_lossy(word));
    }
    out
}

/// `cluster,d0,d1,...`: the final means.
pub fn means(means: &Points) -> String {
    let dims: Vec<String> = (0..means.dim()).map(|d| format!("d{d}")).collect();
    let mut out = format!("cluster,{}\n", dims.join(","));
    for c in 0..means.len() {
        let _ = writeln!(out, "{c},{}", joined(means.point(c)));
    }
    out
}

/// `row,mean,c0,c1,...`: each row's mean and its full covariance row.
pub fn pca(p: &PcaOutput) -> String {
    let n = p.rows();
    let cols: Vec<String> = (0..n).map(|j| format!("c{j}")).collect();
    let mut out = format!("row,mean,{}\n", cols.join(","));
    for i in 0..n {
        let row: Vec<i64> = (0..n).map(|j| p.covariance(i, j)).collect();
        let _ = writeln!(out, "{i},{},{}", p.means[i], joined(&row));
    }
    out
}

/// The product, one matrix row per line, no header.
pub fn matrix(m: &SquareMatrix) -> String {
    let mut out = String::new();
    for i in 0..m.side() {
        let _ = writeln!(out, "{}", joined(m.row(i)));
    }
    out
}

fn joined<T: std::fmt::Display>(values: &[T]) -> String {
    let parts: Vec<String> = values.iter().map(T::to_string).collect();
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_counts_have_a_header_and_one_row_per_word() {
        let counts: Vec<(&[u8], u64)> = vec![(b"THE", 3), (b"DON'T", 1)];
        assert_eq!(word_counts(&counts), "word,count\nTHE,3\nDON'T,1\n");
    }

    #[test]
    fn histogram_rows_name_their_channel() {
        let mut bins = vec![0u64; 768];
        bins[0] = 5;
        bins[256 + 7] = 2;
        bins[767] = 9;
        let csv = histogram(&bins);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 769);
        assert_eq!(lines[1], "blue,0,5");
        assert_eq!(lines[1 + 256 + 7], "green,7,2");
        assert_eq!(lines[768], "red,255,9");
    }

    #[test]
    fn matrix_rows_are_comma_separated() {
        let m = SquareMatrix::new(2, vec![1, -2, 3, 4]).expect("2x2");
        assert_eq!(matrix(&m), "1,-2\n3,4\n");
    }
}
