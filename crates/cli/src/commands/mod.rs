//! One module per command (each with its options); [`crate::dispatch`]
//! runs the one the user asked for.

pub mod bench;
pub mod cluster;
pub mod doctor;
pub mod figures;
pub mod interfere;
pub mod mapreduce;
pub mod ops;
pub mod paper;
pub mod probe;
pub mod run;
pub mod shuffle;
pub mod simulate;
pub mod topo;
