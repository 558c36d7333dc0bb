//! A first look: join, group and sort a small table with strings, decimals,
//! dates and nulls, printing the results.

use std::sync::Arc;

use arrow_array::{Date32Array, Decimal128Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use numakit_frame::aggregate::{self, AggFunc, Aggregate, AggregateRequest};
use numakit_frame::join::{self, JoinRequest};
use numakit_frame::sort::{self, SortColumn, SortRequest};
use numakit_frame::{MemoryLimit, Table};
use numakit_ops::timing::Silent;
use numakit_pool::PoolBuilder;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let topology = Arc::new(numakit_topology::discover()?);
    let pool = PoolBuilder::new(topology).build()?;
    let schema = Arc::new(Schema::new(vec![
        Field::new("name", DataType::Utf8, true),
        Field::new("amount", DataType::Decimal128(10, 2), true),
        Field::new("day", DataType::Date32, true),
        Field::new("id", DataType::Int64, false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from(vec![
                Some("bob"),
                Some("alice"),
                None,
                Some("bob"),
                Some(""),
            ])),
            Arc::new(
                Decimal128Array::from(vec![Some(1050), None, Some(-25), Some(300), Some(1)])
                    .with_precision_and_scale(10, 2)?,
            ),
            Arc::new(Date32Array::from(vec![
                Some(19000),
                Some(19001),
                None,
                Some(18999),
                Some(19000),
            ])),
            Arc::new(Int64Array::from(vec![1, 2, 3, 4, 5])),
        ],
    )?;
    let table = Table::from_batches(
        "t",
        schema,
        Table::split_for(vec![batch], 2),
        pool.workers(),
    )?;
    let request = AggregateRequest {
        keys: vec!["name".into()],
        aggregates: vec![
            Aggregate::count_rows(),
            Aggregate::of(AggFunc::Sum, "amount"),
            Aggregate::of(AggFunc::Avg, "amount"),
            Aggregate::of(AggFunc::Min, "day"),
            Aggregate::of(AggFunc::Max, "name"),
        ],
        method: None,
        memory_limit: MemoryLimit::default(),
        cost_model: None,
    };
    let (report, groups) = aggregate::run(&pool, &table, &request, &Silent)?;
    println!("{report:?}");
    for b in groups.batches() {
        println!("{b:?}");
    }
    let (report, joined) = join::run(&pool, &table, &table, &JoinRequest::on(&["name"]), &Silent)?;
    println!("{report:?}\n{:?}", joined.map(|t| t.batches()));
    let request = SortRequest {
        by: vec![
            SortColumn::ascending("name"),
            SortColumn {
                name: "day".into(),
                descending: true,
                nulls_first: false,
            },
        ],
        columns: None,
        memory_limit: MemoryLimit::default(),
    };
    let (report, sorted) = sort::run(&pool, &table, &request, &Silent)?;
    println!("{report:?}");
    for b in sorted.batches() {
        println!("{b:?}");
    }
    Ok(())
}
