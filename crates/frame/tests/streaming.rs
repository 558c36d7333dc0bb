//! Group-bys of files run while the file is read (the streaming path):
//! several units per worker, keys of several kinds with nulls, checked
//! against the plain reference; many groups of one integer key streamed
//! in partitions, and of one string key filed by key hash; and the
//! fall-back to reading the file whole when the groups of composite keys
//! grow as fast as the rows, and of tables in memory when a worker's
//! groups outgrow its share of the cache.

use std::sync::Arc;

use numakit_frame::aggregate::{
    aggregate_input, Aggregate, AggregateOutcome, AggregatePath, AggregateRequest,
};
use numakit_frame::{Input, MemoryLimit, RunOptions};
use numakit_io::SourceOptions;
use numakit_ops::aggregate::AggMethod;
use numakit_ops::timing::Silent;
use numakit_placement::PlacementMode;
use numakit_pool::{Pool, PoolBuilder};

fn pool(threads: usize) -> Pool {
    let topology = Arc::new(numakit_topology::discover().expect("topology"));
    let threads = threads.min(topology.allowed.cpus.len().max(1));
    PoolBuilder::new(topology)
        .threads(threads)
        .placement(PlacementMode::BestEffort)
        .build()
        .expect("pool")
}

/// A CSV file of `rows` rows: a string key with nulls, an integer key, a
/// date, a float and an integer value with nulls.
fn csv(rows: usize, distinct: usize) -> tempfile::NamedTempFile {
    let mut text = String::from("name,id,day,price,qty,row\n");
    for i in 0..rows {
        let name = if i % 11 == 0 {
            String::new()
        } else {
            format!("n{}", (i * 7) % distinct)
        };
        let qty = if i % 5 == 0 {
            String::new()
        } else {
            format!("{}", i as i64 - 300)
        };
        text.push_str(&format!(
            "{name},{},2024-01-{:02},{}.5,{qty},{}\n",
            i % 13,
            1 + i % 28,
            i % 97,
            i * 7919 % rows
        ));
    }
    csv_file(&text)
}

fn request(keys: &[&str], aggs: &str) -> AggregateRequest {
    AggregateRequest {
        keys: keys.iter().map(|k| k.to_string()).collect(),
        aggregates: Aggregate::parse_list(aggs).unwrap(),
        method: None,
        memory_limit: MemoryLimit::default(),
        cost_model: None,
    }
}

/// A group-by of `input`, checked against the reference.
fn verified(pool: &Pool, input: &Input, keys: &[&str], aggs: &str) -> AggregateOutcome {
    let verify = RunOptions {
        verify: true,
        ..RunOptions::default()
    };
    let outcome = aggregate_input(pool, input, &request(keys, aggs), &verify, &Silent)
        .unwrap_or_else(|e| panic!("{keys:?} {aggs}: {e}"));
    assert!(outcome.verified, "{keys:?} {aggs}");
    outcome
}

/// The path the last run of `outcome` took.
fn path(outcome: &AggregateOutcome) -> AggregatePath {
    outcome.runs.last().unwrap().path
}

/// A CSV file holding `text`.
fn csv_file(text: &str) -> tempfile::NamedTempFile {
    let file = tempfile::Builder::new().suffix(".csv").tempfile().unwrap();
    std::fs::write(file.path(), text).unwrap();
    file
}

#[test]
fn streamed_group_bys_agree_with_the_reference() {
    let file = csv(5_000, 300);
    // Units of 4 KiB: dozens per worker.
    let options = SourceOptions {
        csv_unit_bytes: 4096,
        ..SourceOptions::default()
    };
    let input = Input::file(file.path(), &options).unwrap();
    for threads in [1, 2] {
        let pool = pool(threads);
        for (keys, aggs) in [
            (
                &["name"][..],
                "count,sum:qty,avg:price,min:day,max:qty,count:qty",
            ),
            (&["id"][..], "count,sum:price,min:price,max:day"),
            (&["name", "id"][..], "count,sum:qty"),
            (&["day", "name", "id"][..], "count,avg:qty"),
            (&["price"][..], "count"),
        ] {
            let outcome = verified(&pool, &input, keys, aggs);
            let report = outcome.runs.last().unwrap();
            assert_eq!(report.path, AggregatePath::Streaming, "{keys:?}");
            assert_eq!(report.input_rows, 5_000);
        }
    }
}

#[test]
fn many_groups_of_one_key_stream_in_partitions_and_composite_keys_read_the_file_whole() {
    let file = csv(300_000, 300_000);
    let options = SourceOptions {
        csv_unit_bytes: 1 << 16,
        ..SourceOptions::default()
    };
    let input = Input::file(file.path(), &options).unwrap();
    for threads in [1, 2] {
        let pool = pool(threads);
        // A unique key, and a key with nulls: values with nulls, floats
        // and dates travel through the partitions' buffers. A string key
        // (with nulls) files its rows by key hash.
        let cases = [
            (["row"], "count,sum:qty,avg:price,min:day,max:qty,count:qty"),
            (["qty"], "count,sum:row,min:price,max:day"),
            (["name"], "count,sum:qty,avg:price,max:day,count:qty"),
        ];
        for (keys, aggs) in cases.into_iter().skip(2 - threads) {
            let outcome = verified(&pool, &input, &keys, aggs);
            let report = outcome.runs.last().unwrap();
            assert_eq!(report.path, AggregatePath::Streaming, "{keys:?}");
            assert_eq!(report.method, AggMethod::Partitioned, "{keys:?}");
            assert_eq!(report.input_rows, 300_000);
        }
    }
    let outcome = verified(&pool(2), &input, &["name", "id"], "count,sum:qty");
    assert_ne!(path(&outcome), AggregatePath::Streaming);
}

#[test]
fn string_keys_seen_before_and_after_filing_make_one_group() {
    // Every key comes back three times, a third of the file apart: its
    // first rows are aggregated in a worker's table before the worker
    // starts filing rows by key hash, its later ones are filed.
    let file = csv(360_000, 120_000);
    let options = SourceOptions {
        csv_unit_bytes: 1 << 16,
        ..SourceOptions::default()
    };
    let input = Input::file(file.path(), &options).unwrap();
    for threads in [1, 2] {
        let outcome = verified(
            &pool(threads),
            &input,
            &["name"],
            "count,sum:qty,min:qty,max:price,count:qty",
        );
        let report = outcome.runs.last().unwrap();
        assert_eq!(report.method, AggMethod::Partitioned, "{threads} threads");
        assert!(report.reason.contains("filed"), "{}", report.reason);
        // 120K names and the null group.
        assert_eq!(outcome.table.rows(), 120_001);
    }
}

#[test]
fn min_and_max_of_strings_are_not_streamed() {
    let file = csv(2_000, 50);
    let input = Input::file(file.path(), &SourceOptions::default()).unwrap();
    let outcome = verified(&pool(2), &input, &["id"], "min:name,max:name");
    assert_ne!(path(&outcome), AggregatePath::Streaming);
}

#[test]
fn tables_in_memory_stream_few_groups_and_give_up_on_many() {
    let pool = pool(2);
    // Keys in runs of 8 rows: groups grow at an eighth of the rows' pace,
    // slowly enough that a file would keep streaming; a table in memory
    // gives up once a worker's groups outgrow its share of the cache.
    let rows = 1_200_000;
    let mut text = String::from("k,v\n");
    for i in 0..rows {
        text.push_str(&format!("{},{}\n", i / 8, i % 1000));
    }
    let file = csv_file(&text);
    let loaded = Input::file(file.path(), &SourceOptions::default()).unwrap();
    let names = vec!["k".to_string(), "v".to_string()];
    let (table, _) = loaded
        .columns(&pool, &names, &MemoryLimit::default())
        .unwrap();
    let input = Input::Table(table);
    let few = verified(&pool, &input, &["v"], "count,sum:k");
    assert_eq!(path(&few), AggregatePath::Streaming);
    let many = verified(&pool, &input, &["k"], "count,sum:v");
    assert_eq!(many.table.rows(), rows / 8);
    assert_ne!(path(&many), AggregatePath::Streaming);
}

#[test]
fn tables_in_memory_file_string_keys_that_are_nearly_all_new() {
    // 240K rows of 160K names (with nulls): a worker's first slices are
    // nearly all new names, so it files its rows by key hash.
    let file = csv(240_000, 160_000);
    for threads in [1, 2] {
        let pool = pool(threads);
        let loaded = Input::file(file.path(), &SourceOptions::default()).unwrap();
        let names = ["name", "qty", "price", "day"].map(String::from).to_vec();
        let (table, _) = loaded
            .columns(&pool, &names, &MemoryLimit::default())
            .unwrap();
        let input = Input::Table(table);
        let outcome = verified(&pool, &input, &["name"], "count,sum:qty,max:price,min:day");
        let report = outcome.runs.last().unwrap();
        assert_eq!(report.path, AggregatePath::Streaming, "{threads} threads");
        assert_eq!(report.method, AggMethod::Partitioned, "{threads} threads");
        assert!(report.reason.contains("filed"), "{}", report.reason);
    }
}

#[test]
fn keys_that_leave_the_direct_window_keep_their_groups() {
    // Close keys first (a direct window opens), then far ones (it closes
    // part-way through a worker's units), with null keys throughout.
    let mut text = String::from("k,v\n");
    for i in 0..20_000i64 {
        let k = if i % 7 == 0 {
            String::new()
        } else if i < 6_000 {
            format!("{}", 1_000 + i % 50)
        } else {
            format!("{}", (i % 300) * 1_000_003 - 40_000_000)
        };
        text.push_str(&format!("{k},{}\n", i % 11));
    }
    let file = csv_file(&text);
    let options = SourceOptions {
        csv_unit_bytes: 4096,
        ..SourceOptions::default()
    };
    let input = Input::file(file.path(), &options).unwrap();
    for threads in [1, 2] {
        let outcome = verified(&pool(threads), &input, &["k"], "count,sum:v,max:v");
        assert_eq!(path(&outcome), AggregatePath::Streaming);
        assert_eq!(outcome.table.rows(), 50 + 300 + 1);
    }
}
