//! # numakit-mapreduce-apps
//!
//! The seven applications of the Phoenix papers on numakit's MapReduce
//! runtime, with input generators, readers and writers of their file
//! formats, and plain sequential references.
//!
pub mod histogram;
pub mod kmeans;
pub mod linear_regression;
pub mod matrix_multiply;
pub mod numeric;
pub mod pca;
pub mod string_match;
#[cfg(test)]
mod test_pool;
mod text;
pub mod word_count;
