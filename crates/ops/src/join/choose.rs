//! Which join to run when the caller does not say: the library's answer
//! to "the best join here", with a one-line reason.
//!
//! The rule comes from measurements (`numakit join --algorithm all`, and
//! the join and partition benchmarks): on this project's machines the
//! CPRL radix join was fastest at every build size measured (10K to 2M
//! build rows against 32M probe rows, 1.2-1.8x ahead of the
//! no-partitioning join, 1.1-1.3x ahead of PRO, 3-5x ahead of MPSM), and
//! across nodes its node-local partitioning writes only local memory
//! while PRO scatters into every node. This module does not measure
//! anything itself.

use numakit_pool::Pool;

use crate::join::JoinAlgorithm;

/// The recommended algorithm for an equi-join on `pool`, and why.
pub fn recommend(pool: &Pool) -> (JoinAlgorithm, String) {
    let nodes = pool.nodes().len();
    let why = if nodes > 1 {
        format!(
            "cprl: node-local partitioning (no remote writes on {nodes} nodes), then one cache-sized partition join per task at its home node"
        )
    } else {
        "cprl: cache-sized partitions without a global histogram; measured fastest at every build size (10K-2M x 32M rows) on this kind of machine".to_string()
    };
    (JoinAlgorithm::RadixCprl, why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pool;

    #[test]
    fn recommends_cprl_with_a_reason() {
        let pool = pool(2);
        let (a, why) = recommend(&pool);
        assert_eq!(a, JoinAlgorithm::RadixCprl);
        assert!(why.starts_with("cprl"));
    }
}
