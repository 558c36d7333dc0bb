"""The operators' results against DuckDB's and Polars' on the same inputs:
integer, string and composite keys, nulls, empty strings, mixed widths and
signedness, every join kind, several aggregates, multi-column sorts."""

import math

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pytest

import numakit


def rows(table):
    """A table's rows as a sorted list of tuples (None and NaN comparable)."""
    if not isinstance(table, pa.Table):
        table = pa.table(table)
    cols = [table.column(i).to_pylist() for i in range(table.num_columns)]
    out = list(zip(*cols)) if cols else []

    def key(row):
        return tuple((v is None, "" if v is None else (str(v) if not isinstance(v, (int, float)) else v)) for v in row)

    return sorted(out, key=key)


def duck(sql, **tables):
    con = duckdb.connect()
    for name, t in tables.items():
        con.register(name, t)
    return con.sql(sql).arrow().read_all() if hasattr(con.sql(sql).arrow(), "read_all") else con.sql(sql).arrow()


def close(a, b):
    assert len(a) == len(b), (len(a), len(b))
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            if isinstance(u, float) and isinstance(v, float):
                assert math.isclose(u, v, rel_tol=1e-9, abs_tol=1e-9), (x, y)
            else:
                assert u == v, (x, y)


def string_tables(seed=7, n_left=3000, n_right=9000):
    rng = np.random.default_rng(seed)
    words = ["", "a", "ab", "abc", "x" * 40, "x" * 39 + "y", "ünï", "shared-prefix-" * 5]
    words += [f"k{i}" for i in range(300)]

    def column(n):
        picks = rng.integers(0, len(words) + 1, n)
        return [None if p == len(words) else words[p] for p in picks]

    left = pa.table({"name": column(n_left), "lv": rng.integers(-5, 5, n_left)})
    right = pa.table({"name": column(n_right), "rv": rng.normal(size=n_right)})
    return left, right


@pytest.mark.parametrize("how,sql", [
    ("inner", "select l.name, l.lv, r.rv from l join r on l.name = r.name"),
    ("left", "select l.name, l.lv, r.rv from l left join r on l.name = r.name"),
    ("semi", "select l.name, l.lv from l semi join r on l.name = r.name"),
    ("anti", "select l.name, l.lv from l anti join r on l.name = r.name"),
])
def test_string_key_joins_equal_duckdb(how, sql):
    left, right = string_tables()
    got = numakit.join(left, right, on="name", how=how)
    assert got.column_names[:2] == ["name", "lv"]
    close(rows(got), rows(duck(sql, l=left, r=right)))


def test_join_equals_polars_on_polars_frames():
    left, right = string_tables(seed=3)
    pl_left, pl_right = pl.from_arrow(left), pl.from_arrow(right)
    got = numakit.join(pl_left, pl_right, on="name")
    expected = pl_left.join(pl_right, on="name", how="inner").to_arrow()
    close(rows(got), rows(expected))


def test_composite_keys_and_left_on_right_on():
    rng = np.random.default_rng(11)
    n = 5000
    left = pa.table({
        "a": rng.integers(0, 20, n), "b": [f"s{i % 7}" if i % 13 else None for i in range(n)],
        "x": rng.integers(0, 1000, n)})
    right = pa.table({
        "a2": rng.integers(0, 20, n).astype(np.int32), "b2": [f"s{i % 5}" for i in range(n)],
        "y": rng.integers(0, 1000, n)})
    got = numakit.join(left, right, left_on=["a", "b"], right_on=["a2", "b2"])
    expected = duck("select l.a, l.b, l.x, r.y from l join r on l.a = r.a2 and l.b = r.b2", l=left, r=right)
    close(rows(got.select(["a", "b", "x", "y"])), rows(expected))


def test_mixed_signedness_compares_by_value():
    left = pa.table({"k": pa.array([-1, 0, 5, 2**62], pa.int64())})
    right = pa.table({"k": pa.array([2**64 - 1, 0, 5, 2**62], pa.uint64()), "r": [1, 2, 3, 4]})
    got = numakit.join(left, right, on="k")
    # -1 never equals 2^64 - 1.
    assert sorted(got.column("r").to_pylist()) == [2, 3, 4]


def test_empty_and_one_row_inputs():
    empty = pa.table({"k": pa.array([], pa.int64()), "v": pa.array([], pa.string())})
    one = pa.table({"k": [7], "w": ["x"]})
    assert numakit.join(empty, one, on="k").num_rows == 0
    assert numakit.join(one, empty, on="k", how="left").to_pylist() == [{"k": 7, "w": "x", "v": None}]
    assert numakit.aggregate(empty, "k", ["count"]).num_rows == 0
    assert numakit.sort(one, "k").to_pylist() == [{"k": 7, "w": "x"}]


def sales(seed=5, n=20000):
    rng = np.random.default_rng(seed)
    region = [None if i % 17 == 0 else ["north", "south", "", "east"][i % 4] for i in range(n)]
    price = pa.array([None if i % 11 == 0 else float(v) for i, v in enumerate(rng.normal(50, 20, n))])
    qty = pa.array(rng.integers(-(2**40), 2**40, n))
    return pa.table({"region": region, "store": rng.integers(0, 50, n), "price": price, "qty": qty})


def test_aggregates_equal_duckdb_with_null_keys_and_values():
    t = sales()
    got = numakit.aggregate(
        t, ["region", "store"],
        ["count", "count:price", "sum:price", "avg:price", "min:price", "max:price", "sum:qty", "min:region"])
    assert got.column_names == [
        "region", "store", "count", "count_price", "sum_price", "avg_price",
        "min_price", "max_price", "sum_qty", "min_region"]
    expected = duck(
        "select region, store, count(*), count(price), sum(price), avg(price), min(price), max(price), "
        "sum(qty)::bigint, min(region) from t group by region, store", t=t)
    close(rows(got), rows(expected))


def test_aggregate_dict_form_and_group_by_equal_polars():
    t = sales(seed=9)
    df = pl.from_arrow(t)
    got = numakit.group_by(df, "region").agg({"qty": ["sum", "max"]}, price="avg")
    expected = df.group_by("region").agg(
        pl.col("qty").sum().alias("sum_qty"), pl.col("qty").max().alias("max_qty"),
        pl.col("price").mean().alias("avg_price")).to_arrow()
    close(rows(got), rows(expected))


def test_integer_sum_overflow_is_an_error_not_a_wrong_result():
    t = pa.table({"g": [1, 1], "v": pa.array([2**62, 2**62], pa.int64())})
    try:
        got = numakit.aggregate(t, "g", ["sum:v"])
    except numakit.BadInputError as e:
        assert "sum" in str(e).lower()
    else:
        # Widened: the exact value.
        assert got.column("sum_v").to_pylist() == [2**63]


def test_sorts_equal_duckdb():
    rng = np.random.default_rng(2)
    n = 30000
    t = pa.table({
        "s": [None if i % 9 == 0 else f"w{v}" for i, v in enumerate(rng.integers(0, 500, n))],
        "f": pa.array([float("nan") if i % 23 == 0 else (-0.0 if i % 29 == 0 else float(v))
                       for i, v in enumerate(rng.normal(size=n))]),
        "u": pa.array(rng.integers(0, 2**63, n, dtype=np.uint64) * 2, pa.uint64()),
        "i": np.arange(n)})
    got = numakit.sort(t, ["s", "u"], descending=[False, True])
    expected = duck("select * from t order by s asc nulls last, u desc, i", t=t)
    assert got.column("s").to_pylist() == expected.column("s").to_pylist()
    assert got.column("u").to_pylist() == expected.column("u").to_pylist()
    got = numakit.sort(t, "f", nulls_last=False, columns=["f", "i"])
    assert got.column_names == ["f", "i"]
    values = got.column("f").to_pylist()
    finite = [v for v in values if not math.isnan(v)]
    assert finite == sorted(finite)
    assert all(math.isnan(v) for v in values[len(finite):]), "NaN sorts last ascending"


def test_inputs_of_every_kind_give_the_same_result():
    import pandas as pd

    left, right = string_tables(seed=21, n_left=500, n_right=800)
    expected = rows(numakit.join(left, right, on="name"))
    con = duckdb.connect()
    con.register("l", left)
    for kind in (
        pl.from_arrow(left),
        left.to_pandas(),
        con.sql("select * from l"),
        pa.RecordBatchReader.from_batches(left.schema, left.to_batches(max_chunksize=100)),
    ):
        got = numakit.join(kind, right, on="name")
        assert rows(got) == expected, type(kind)
    assert isinstance(left.to_pandas(), pd.DataFrame)


def test_reports_name_the_algorithm_and_phases():
    left, right = string_tables(seed=1, n_left=100, n_right=100)
    table, report = numakit.join(left, right, on="name", algorithm="mpsm", report=True)
    assert report["algorithm"] == "mpsm"
    assert report["rows"] == table.num_rows
    assert [p["name"] for p in report["phases"]][0] == "code keys"
    _, report = numakit.aggregate(left, "name", report=True)
    assert report["groups"] > 0 and report["phases"]
    _, report = numakit.sort(left, "lv", report=True)
    assert report["rows"] == left.num_rows
