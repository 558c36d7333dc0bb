//! Plumbing shared by the three numeric applications (k-means, PCA, matrix
//! multiply): the C library's `rand()` stream their Phoenix++ originals
//! draw their inputs from, the raw integer file format, the dispatch to
//! wide vector instructions, and the packed integer matrix product that
//! matrix multiply and PCA's covariance both reduce to.
//!
//! It holds no application logic and no MapReduce code.

pub mod c_rand;
pub mod gemm;
pub mod int_file;
pub mod pairs;
pub mod wide;

pub use c_rand::CRand;
pub use int_file::IntFileError;
