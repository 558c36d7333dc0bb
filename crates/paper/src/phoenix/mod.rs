//! Phoenix Rebirth (Yoo, Romano, Kozyrakis, IISWC 2009): its fourteen
//! figures and four tables, rerun on numakit's MapReduce runtime and its
//! seven applications (`numakit mapreduce <app>`).
//!
//! What is reproduced: each application's speed-up from threads (Figure
//! 4(a)) up to the CPUs this machine has; the hash-bucket sensitivity of a
//! few-key and a many-key workload (Figures 6, 7) through the runtime's
//! fixed-bucket container; the chunk size's effect on task generation
//! (Figure 8); a job reused on one pool against threads spawned per
//! iteration (Figure 9); each phase's user, system and idle time (Figures
//! 10, 13, 14); the locality of map tasks (Figure 5); small measurements
//! of lock, allocator and mmap scaling (Figures 2, 11, 12) on the pool;
//! the machine (Table I, from numakit's preset of the T5440), the inputs
//! (Table II) and the keys per bucket (Table III).
//!
//! What is deliberately not: the original Phoenix runtime (Figures 1 and
//! 4(b) compare against it; numakit implements only the optimized design),
//! the data-structure diagram (Figure 3), and the system-call counts of
//! Table IV (truss on Solaris; numakit counts no system calls). Every
//! effect the paper finds past the chip boundary (64 threads on one T2+)
//! needs several NUMA nodes and hundreds of threads: this machine has one
//! node and two CPUs, so those shapes say where they would show instead.

mod apps;
mod machine;
mod os;
mod scaling;
mod tuning;

use crate::catalog::{Item, ItemId, Paper, Reproduction};

use Reproduction::{Described, MeasuredHere, MeasuredInGuests, NotReproducible};

/// Every item of the paper.
pub(crate) fn items() -> Vec<Item> {
    let mut items = figures_1_to_7();
    items.extend(figures_8_to_14());
    items.extend(tables());
    items
}

fn figures_1_to_7() -> Vec<Item> {
    use ItemId::Figure;
    vec![
        Item::new(Paper::Phoenix, Figure(1), "Application speedup for the original Phoenix system", NotReproducible, "",
            "needs the original Phoenix release (sorted keys arrays, one global task queue, threads created per phase) on the 256-thread T5440: numakit implements only the optimized runtime", None),
        Item::new(Paper::Phoenix, Figure(2), "The latency of synchronization primitives", MeasuredHere,
            "numakit bench locks --locks std-mutex,ticket,cohort --critical-ns 100",
            "std's Mutex (pthread's, as the paper's), a ticket lock and the cohort lock, 1-2 threads on one node here; the paper's climb past 64 threads (the chip boundary) needs several chips", Some(os::figure_2)),
        Item::new(Paper::Phoenix, Figure(3), "Phoenix data structure for intermediate key / value pairs", NotReproducible, "",
            "a diagram of the original Phoenix's 2-D array of keys arrays: nothing to measure (numakit's containers are per-worker arrays or hash tables, cut into partitions for reduce)", None),
        Item::new(Paper::Phoenix, Figure(4), "Performance improvements summary: speedup of the optimized runtime", MeasuredHere,
            "numakit mapreduce histogram --sweep; numakit mapreduce kmeans --sweep; numakit mapreduce linear-regression --sweep; numakit mapreduce matrix-multiply --sweep; numakit mapreduce pca --sweep; numakit mapreduce string-match --sweep; numakit mapreduce word-count --sweep",
            "(a) only: 1-2 threads on one node here, smaller inputs than Table II, x86 instead of 256 SPARC threads; (b) compares with the original Phoenix, which numakit does not have", Some(scaling::figure_4)),
        Item::new(Paper::Phoenix, Figure(5), "Locality group hit rate improvement on string_match", MeasuredInGuests,
            "numakit mapreduce string-match --sweep --json",
            "one node here, so every split is local; the multi-node guests place the input on every node and check each split is located and run once (local or stolen); no baseline without locality queues", Some(machine::figure_5)),
        Item::new(Paper::Phoenix, Figure(6), "kmeans sensitivity to hash bucket count", MeasuredHere,
            "numakit mapreduce linear-regression --container fixed-hash:256; numakit mapreduce linear-regression --container fixed-hash:65536",
            "linear_regression (5 keys) stands in for kmeans, whose 100 means numakit keys in an array it does not let one swap; 1-2 threads, one node", Some(tuning::figure_6)),
        Item::new(Paper::Phoenix, Figure(7), "word_count sensitivity to hash bucket count", MeasuredHere,
            "numakit mapreduce word-count --container fixed-hash:256; numakit mapreduce word-count --container fixed-hash:65536",
            "1-2 threads on one node (the paper's low-thread side, where more buckets help); the reversal past 32 threads needs many more threads", Some(tuning::figure_7)),
    ]
}

fn figures_8_to_14() -> Vec<Item> {
    use ItemId::Figure;
    vec![
        Item::new(Paper::Phoenix, Figure(8), "pca execution time breakdown by input chunk size", MeasuredHere,
            "numakit mapreduce linear-regression --chunk-kib 64; numakit mapreduce linear-regression --chunk-kib 512",
            "linear_regression stands in for pca (numakit's pca cuts its own row blocks and takes no chunk size); smaller input, so fewer tasks than pca's millions", Some(tuning::figure_8)),
        Item::new(Paper::Phoenix, Figure(9), "kmeans performance improvement due to thread pool", MeasuredHere,
            "numakit mapreduce kmeans --sweep",
            "the pool side is `numakit mapreduce kmeans`; the side without a pool is the library's hand-written k-means (threads spawned per iteration, no CLI command); 1-2 threads, Linux thread stacks", Some(os::figure_9)),
        Item::new(Paper::Phoenix, Figure(10), "Execution time breakdown for non-scalable workloads", MeasuredHere,
            "numakit mapreduce histogram --sweep; numakit mapreduce linear-regression --sweep; numakit mapreduce word-count --sweep",
            "user/system/idle from getrusage at the phase boundaries, 1-2 threads on one node; the paper's system and idle growth past 64 threads needs several chips", Some(scaling::figure_10)),
        Item::new(Paper::Phoenix, Figure(11), "Memory allocator scalability comparison on word_count", MeasuredHere,
            "numakit mapreduce word-count --sweep",
            "one allocator (glibc malloc, Rust's global allocator) instead of Solaris malloc, mtmalloc, libumem and Hoard; 1-2 threads", Some(scaling::figure_11)),
        Item::new(Paper::Phoenix, Figure(12), "mmap() microbenchmark scalability results", MeasuredHere,
            "numakit mapreduce histogram --generate /tmp/phoenix.bmp; numakit mapreduce histogram --input /tmp/phoenix.bmp --input-mode mmap --sweep",
            "a file mapped unpopulated and summed by 1-2 pool threads, Linux 4 KiB pages only (Solaris page sizes not selectable); the CLI's mmap mode populates up front", Some(os::figure_12)),
        Item::new(Paper::Phoenix, Figure(13), "Ideal vs. actual speedup for non-scalable workloads", MeasuredHere,
            "numakit mapreduce histogram --sweep --json; numakit mapreduce linear-regression --sweep --json; numakit mapreduce word-count --sweep --json",
            "ideal speed-up from the user time alone (the `cpu` field), 1-2 threads on one node", Some(scaling::figure_13)),
        Item::new(Paper::Phoenix, Figure(14), "word_count performance without sbrk() and mmap() effects", MeasuredHere,
            "numakit mapreduce word-count --sweep --container hash:1024; numakit mapreduce word-count --sweep --container hash:65536",
            "the input is always read in before the job (numakit's word count never maps its text); pre-allocation is a container sized for every word; 1-2 threads", Some(scaling::figure_14)),
    ]
}

fn tables() -> Vec<Item> {
    use ItemId::Table;
    vec![
        Item::new(Paper::Phoenix, Table(1), "The characteristics of the large-scale shared-memory system", Described,
            "numakit topo --machine ultrasparc-t2plus-4c",
            "printed from numakit's description of the T5440 (the simulator's input), not measured: the machine is not here", Some(machine::table_1)),
        Item::new(Paper::Phoenix, Table(2), "The workloads used with the Phoenix MapReduce system", MeasuredHere,
            "numakit mapreduce word-count --generate words.txt --size-mib 32; numakit mapreduce kmeans --points 100000 --generate points.bin",
            "numakit's generated inputs, sized for a 2-CPU machine (the paper's are 8-60x bigger)", Some(machine::table_2)),
        Item::new(Paper::Phoenix, Table(3), "Hash table key distribution", MeasuredHere,
            "numakit mapreduce word-count --json --out counts.csv; numakit mapreduce histogram --json --out bins.csv",
            "keys and values per worker of 64 from numakit's own jobs (64 KiB map tasks, Phoenix's default; word_count run on each 64th of its text); populated buckets of 256 computed as Phoenix's hash fills them (numakit's containers do not count buckets); inputs 8-60x smaller, so fewer values per key", Some(tuning::table_3)),
        Item::new(Paper::Phoenix, Table(4), "The effect of the munmap() system call on kmeans", NotReproducible, "",
            "counts and times munmap() calls with truss on Solaris; numakit counts no system calls (strace is outside the program), and Linux thread stacks are cached by glibc", None),
    ]
}
