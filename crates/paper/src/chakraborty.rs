//! Chakraborty, "Processing Database Joins over a Shared-Nothing System
//! of Multicore Machines": its nine figures and its one table.
//!
//! What is rerun: the ring schedule of Figure 1 (printed from the schedule
//! `numakit cluster join --order ring` runs), the default parameters of
//! Table I beside numakit's, and the measurements of Figures 5-9 (loads,
//! join span, intra-node gain and speedup while the table size, the nodes
//! and the compute threads vary), each a sweep of numakit's distributed
//! join (`numakit_cluster::run_process`, what `numakit cluster join`
//! runs) with the paper's parameters: 5 processes of 2 compute threads,
//! 1200 buckets in all, PQRS keys over a domain of 800000.
//!
//! What is deliberately not: the diagrams (Figures 2-4: the threads and
//! queues of a node, the join inside a node, the events between threads),
//! which describe a design rather than a result. And the paper's five
//! dual-core virtual machines on 1 Gbit/s Ethernet are not emulated: the
//! processes here are threads of one program on one two-CPU machine,
//! talking over loopback, so they share the same two CPUs. Every claim
//! that needs the nodes' CPUs to add up (linear speedup, loads that fall
//! as nodes are added) or a slow network is reported as not shown here,
//! with our figures beside it, rather than checked.

mod cluster;
mod layout;
mod loads;
mod nodes;

use crate::catalog::{Item, ItemId, Paper, Reproduction};

/// The processes of one machine, which the measured items all say.
const ONE_MACHINE: &str = "the paper's 5 dual-core VMs on 1 Gbit/s Ethernet, C++: here 5 numakit processes as threads of one program on one 2-CPU machine over loopback, sharing its CPUs; 16-byte tuples (the paper's 128)";

/// Every item of the paper.
pub(crate) fn items() -> Vec<Item> {
    vec![
        Item::new(
            Paper::Chakraborty,
            ItemId::Figure(1),
            "Distributed joins of two tables partitioned over a shared-nothing system (the ring's phases)",
            Reproduction::Described,
            "numakit cluster join --local 5 --order ring --verify",
            "the diagram's ring schedule only, printed from the schedule numakit's ring order runs (the CLI runs it without printing it); the tables and the network are not drawn",
            Some(layout::figure_1),
        ),
        diagram(
            2,
            "Organization of threads within a node",
            "an architecture diagram (compute, listener, sender and receiver threads, three queues): nothing to measure; numakit's counterpart is numakit_cluster's structure (pool workers, timely's send and receive thread per peer, queues between them)",
        ),
        diagram(
            3,
            "Join processing within a node",
            "a diagram of the design (hash-table frames, compute records, per-thread result buffers): nothing to measure",
        ),
        diagram(
            4,
            "Event diagram showing the flow of events across the threads within a node",
            "a diagram of the paper's event protocol (partitionReady, joinExit, resultReady, exit); numakit replaces those events with timely's progress tracking, so there is no event flow of the same shape to print",
        ),
    ]
    .into_iter()
    .chain(measured())
    .collect()
}

/// Figures 5-9 and Table I: the measured items.
fn measured() -> Vec<Item> {
    vec![
        Item::new(
            Paper::Chakraborty,
            ItemId::Figure(5),
            "Computation loads, communication loads and join spans with varying table sizes",
            Reproduction::MeasuredHere,
            "numakit cluster join --local 5 --threads 2 --buckets 240 --left-keys pqrs:0.4:0.1:0.2 --right-keys pqrs:0.4:0.1:0.2 --left-rows 500K --right-rows 500K; numakit cluster join --local 5 --threads 2 --buckets 240 --left-keys pqrs:0.4:0.1:0.2 --right-keys pqrs:0.4:0.1:0.2 --left-rows 1M --right-rows 1M; numakit cluster join --local 5 --threads 2 --buckets 240 --left-keys pqrs:0.4:0.1:0.2 --right-keys pqrs:0.4:0.1:0.2 --left-rows 2M --right-rows 2M; numakit cluster join --local 5 --threads 2 --buckets 240 --left-keys pqrs:0.4:0.1:0.2 --right-keys pqrs:0.4:0.1:0.2 --left-rows 4M --right-rows 4M",
            ONE_MACHINE,
            Some(loads::figure_5),
        ),
        Item::new(
            Paper::Chakraborty,
            ItemId::Figure(6),
            "Intra-node gains with varying table sizes",
            Reproduction::MeasuredHere,
            "numakit cluster join --local 5 --threads 2 --buckets 240 --left-keys pqrs:0.4:0.1:0.2 --right-keys pqrs:0.4:0.1:0.2 --left-rows 500K --right-rows 500K; numakit cluster join --local 5 --threads 2 --buckets 240 --left-keys pqrs:0.4:0.1:0.2 --right-keys pqrs:0.4:0.1:0.2 --left-rows 1M --right-rows 1M; numakit cluster join --local 5 --threads 2 --buckets 240 --left-keys pqrs:0.4:0.1:0.2 --right-keys pqrs:0.4:0.1:0.2 --left-rows 2M --right-rows 2M; numakit cluster join --local 5 --threads 2 --buckets 240 --left-keys pqrs:0.4:0.1:0.2 --right-keys pqrs:0.4:0.1:0.2 --left-rows 4M --right-rows 4M",
            ONE_MACHINE,
            Some(loads::figure_6),
        ),
        Item::new(
            Paper::Chakraborty,
            ItemId::Figure(7),
            "Computation loads, communication loads and the join span varying nodes",
            Reproduction::MeasuredHere,
            "numakit cluster join --local 5 --sweep --threads 2 --buckets 240 --left-keys pqrs:0.4:0.1:0.2 --right-keys pqrs:0.4:0.1:0.2 --left-rows 1600K --right-rows 1600K",
            "the paper's 1 to 5 dual-core VMs on 1 Gbit/s Ethernet: here 1 to 5 processes sharing one 2-CPU machine over loopback, so adding processes adds no CPU; 240 buckets per process at every P (the paper: 1200 in all)",
            Some(nodes::figure_7),
        ),
        Item::new(
            Paper::Chakraborty,
            ItemId::Figure(8),
            "Intra-node gains and system speedup with varying nodes",
            Reproduction::MeasuredHere,
            "numakit cluster join --local 5 --sweep --threads 2 --buckets 240 --left-keys pqrs:0.4:0.1:0.2 --right-keys pqrs:0.4:0.1:0.2 --left-rows 1600K --right-rows 1600K",
            "the paper's 1 to 5 dual-core VMs on 1 Gbit/s Ethernet: here 1 to 5 processes sharing one 2-CPU machine over loopback, so the speedup cannot grow with P",
            Some(nodes::figure_8),
        ),
        Item::new(
            Paper::Chakraborty,
            ItemId::Figure(9),
            "Join spans and various workloads (CPU and communication) with varying compute threads",
            Reproduction::MeasuredHere,
            "numakit cluster join --local 5 --threads 1 --buckets 240 --left-keys pqrs:0.4:0.1:0.2 --right-keys pqrs:0.4:0.1:0.2 --left-rows 2M --right-rows 2M; numakit cluster join --local 5 --threads 2 --buckets 240 --left-keys pqrs:0.4:0.1:0.2 --right-keys pqrs:0.4:0.1:0.2 --left-rows 2M --right-rows 2M",
            "compute threads swept 1..=this machine's CPUs (2), so the paper's rise past 2 threads (context switches) is not reached; 5 processes share the 2 CPUs over loopback",
            Some(loads::figure_9),
        ),
        Item::new(
            Paper::Chakraborty,
            ItemId::Table(1),
            "Default parameters",
            Reproduction::Described,
            "numakit cluster join --help",
            "numakit's counterparts of the paper's defaults, read from its library (tuple size, key domain, buckets, threads) and from what the figures here run",
            Some(layout::table_1),
        ),
    ]
}

fn diagram(n: u32, title: &'static str, why: &'static str) -> Item {
    Item::new(
        Paper::Chakraborty,
        ItemId::Figure(n),
        title,
        Reproduction::NotReproducible,
        "",
        why,
        None,
    )
}
