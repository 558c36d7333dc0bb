//! Which join to run when the caller does not say: the library's answer
//! to "the best join here", with a one-line reason.
//!
//! The rule comes from measurements (`numakit join --algorithm all`, the
//! join and partition benchmarks, and `bench/compare`). Warm, the CPRL
//! radix join was fastest at every size measured (10K to 16M build rows,
//! 32M to 256M probe rows): 2-2.5x ahead of the no-partitioning join,
//! 1.1-1.3x ahead of PRO, 3-5x ahead of MPSM; across nodes its node-local
//! partitioning writes only local memory. But a radix join first writes
//! the partitioned probe side into memory the process may never have
//! touched, and page faults cost about 1 s per GiB on the machines we
//! measured (0.06-3.4 s depending on how long memory was idle). So in a
//! cold process, when that would mean gigabytes, the no-partitioning join
//! (which touches only its table) wins: at 16M x 256M rows, cold, it took
//! 3.1-3.7 s against CPRL's 5.3-8.5 s (warm 2.2 s against 1.0 s). This
//! module measures nothing itself; it asks the buffer cache how much
//! memory is already there.

use numakit_pool::Pool;

use crate::join::JoinAlgorithm;
use crate::recycle;
use crate::tuple::TUPLE_BYTES;

/// Fresh memory above which a cold radix join loses to the
/// no-partitioning join (measured: 0.5 GiB of probe partitions, cold,
/// CPRL 0.23-0.30 s and NPO 0.24 s; 4 GiB, CPRL 5.3-8.5 s and NPO 3.1-3.7 s).
const COLD_PARTITION_LIMIT_BYTES: usize = 2 << 30;

/// The recommended algorithm for joining `left_rows` build rows with
/// `right_rows` probe rows on `pool`, and why.
pub fn recommend(pool: &Pool, left_rows: usize, right_rows: usize) -> (JoinAlgorithm, String) {
    let partitions = left_rows
        .saturating_add(right_rows)
        .saturating_mul(TUPLE_BYTES);
    let fresh = partitions.saturating_sub(recycle::cached_bytes(pool));
    if fresh > COLD_PARTITION_LIMIT_BYTES {
        return (
            JoinAlgorithm::NoPartition,
            format!(
                "npo: a radix join would first touch {} of fresh memory for its partitions (about 1 s per GiB in page faults where we measured); the no-partition join touches only its hash table",
                gib(fresh)
            ),
        );
    }
    let nodes = pool.nodes().len();
    let memory = format!(
        "its partitions take {} ({} of it already mapped and reused here), below the {} of fresh memory where page faults make a cold radix join lose",
        gib(partitions),
        gib(partitions - fresh),
        gib(COLD_PARTITION_LIMIT_BYTES)
    );
    let why = if nodes > 1 {
        format!(
            "cprl: node-local partitioning (no remote writes on {nodes} nodes), then one cache-sized partition join per task at its home node; {memory}"
        )
    } else {
        format!("cprl: cache-sized partitions without a global histogram; {memory}")
    };
    (JoinAlgorithm::RadixCprl, why)
}

/// Bytes as GiB with one decimal (`2.0 GiB`).
fn gib(bytes: usize) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pool;

    #[test]
    fn recommends_cprl_unless_the_partitions_need_gigabytes_of_fresh_memory() {
        let pool = pool(2);
        let (a, why) = recommend(&pool, 2_000_000, 32_000_000);
        assert_eq!(a, JoinAlgorithm::RadixCprl);
        assert!(why.starts_with("cprl"));
        assert!(
            why.contains("0.5 GiB"),
            "the partitions' size, from this input: {why}"
        );
        let (_, bigger) = recommend(&pool, 4_000_000, 64_000_000);
        assert_ne!(why, bigger, "the reason follows the input");
        let (a, why) = recommend(&pool, 16_000_000, 256_000_000);
        assert_eq!(a, JoinAlgorithm::NoPartition, "{why}");
        assert!(why.contains("GiB"));
    }
}
