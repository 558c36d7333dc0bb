//! # numakit-mapreduce-apps
//!
//! The seven applications of the Phoenix papers on numakit's MapReduce
//! runtime, with input generators, readers and writers of their file
//! formats, and plain sequential references.
//!
//! (Work in progress.)
pub mod kmeans;
pub mod matrix_multiply;
pub mod numeric;
pub mod pca;
