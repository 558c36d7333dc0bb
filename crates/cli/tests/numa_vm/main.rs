//! Multi-node proof, in Linux guests with 2, 4 and 8 emulated NUMA nodes
//! (and memory-only nodes, and allowed node ids with gaps) booted by the
//! shared numa-vm harness: the topology and the doctor, the shuffle, the
//! operators, MapReduce, the main job, the memory probe, the locks and
//! interference, each checked inside the guest for its results and for
//! where its threads and pages really are.
//!
//! The harness lives at `../shared/numa-vm/run` beside the checkout (or
//! wherever `NUMA_VM_RUN` points). Without it the tests say so and pass,
//! except under CI (`CI` set), where a missing harness is a failure: CI
//! must prove the multi-node paths.
//!
//! One test binary, so that the tests share one limit on guests booted
//! side by side ([`guest::in_guest`]).

mod guest;
mod locks_and_interference;
mod operators;
mod paths;
mod probe;
