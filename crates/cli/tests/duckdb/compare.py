"""numakit's join, aggregate and sort checked against DuckDB.

The suite writes tables from fixed seeds with pyarrow, runs `numakit join`,
`numakit aggregate` and `numakit sort` on them with `--out result.parquet`,
runs the same question as SQL in DuckDB, and compares the answers:

- keys and values of every common type: int8..int64, uint8..uint64 (with
  i64::MIN and u64::MAX), decimal128 (9,3), (18,2) and (38,10) up to their
  precision limits (the first two stored as 32- and 64-bit integers in
  Parquet, the last as fixed-size binary), float32/float64 with NaN, -0.0 and +-inf, strings
  (empty, over 1 KB, long shared prefixes, unicode) as string, large_string,
  string_view and dictionary<int32, string>, binary, date32, timestamp[us]
  with and without a time zone, bool; nulls in every column;
- adversarial shapes: empty tables, one row, all-equal keys, Zipf-skewed
  keys, keys at the integer limits, an int64 key joined with a uint64 key,
  composite keys of 2 and 3 columns (two random int64 columns need more
  than 64 bits of packed code);
- inputs as Parquet (one row group and many), CSV (one byte range and
  several, with quoted line breaks) and Arrow IPC files (many batches);
- joins of all four kinds (with each join algorithm), aggregates with
  COUNT/SUM/MIN/MAX/AVG and the types numakit promises for them, sorts
  ascending and descending with nulls first and last;
- `--json --verify`: the report's fields and row count;
- where numakit refuses on purpose (a string key against an integer key,
  SUM overflowing Int64, ...), one `numakit: error:` line and exit code 1
  (the work failed; 2 is for a wrong command line);
- TPC-H from tpchgen-cli: Q1's grouping, orders joined with lineitem,
  customers semi/anti joined with orders, a group-by on o_comment and a sort
  of lineitem by l_shipdate, l_orderkey.

Joins and aggregates are compared as multisets of rows (floats of sums and
averages within a relative 1e-9; NaN equals NaN and -0.0 equals 0.0); sorts
by their key columns row by row and by their full rows as multisets. One
line per case, PASS or FAIL with a short difference and the command that
reproduces it; the exit status is 1 when any case fails.

    python compare.py --numakit target/debug/numakit --workdir /tmp/x
    python compare.py ... --suite tpch --tpch-sf 1 --only tpch/sort
    python compare.py --check      # are duckdb, pyarrow and tpchgen-cli here?
"""

import argparse
import collections
import datetime
import decimal
import json
import math
import random
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

D = decimal.Decimal
UTC = datetime.timezone.utc
KINDS = ["inner", "left", "semi", "anti"]
ALGORITHMS = ["npo", "pro", "cprl", "mpsm"]


def tpchgen_path():
    """tpchgen-cli next to this Python (a venv's bin) or on PATH."""
    beside = Path(sys.executable).parent / "tpchgen-cli"
    return str(beside) if beside.exists() else shutil.which("tpchgen-cli")


def check_environment():
    missing = []
    for module in ["duckdb", "pyarrow"]:
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if tpchgen_path() is None:
        missing.append("tpchgen-cli")
    if missing:
        print("missing: " + ", ".join(missing))
        return 1
    return 0


# Imported after --check could run without them.
if __name__ == "__main__" and "--check" in sys.argv:
    sys.exit(check_environment())

import duckdb  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.csv as pacsv  # noqa: E402
import pyarrow.ipc as paipc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402


# ---------------------------------------------------------------- tables

LONG = "x" * 1500
PREFIX = "a shared prefix that is longer than sixteen bytes: "
STRINGS = ["", "a", "A", "ab", "abc", "b", "é", "e\u0301", "日本語", "🦀 crab",
           LONG, LONG + "a", LONG + "b", PREFIX + "1", PREFIX + "2", PREFIX,
           "comma, \"quote\"", "line\nbreak", " padded ", "zzz"]

# Values each column draws from (nulls are added on top): small pools so
# that joins match, with the limits of every type among them.
POOLS = {
    "i8": ("int8", [-128, -127, -1, 126, 127] + list(range(0, 20))),
    "i16": ("int16", [-32768, -1, 255, 256, 32767] + list(range(0, 20))),
    "i32": ("int32", [-2**31, -1, 2**31 - 1] + list(range(0, 20))),
    "i64": ("int64", [-2**63, -2**63 + 1, -2**32, -1, 2**32, 2**53 + 1,
                      2**63 - 2, 2**63 - 1] + list(range(0, 20))),
    "u8": ("uint8", [127, 128, 254, 255] + list(range(0, 20))),
    "u16": ("uint16", [65534, 65535] + list(range(0, 20))),
    "u32": ("uint32", [2**31, 2**32 - 1] + list(range(0, 20))),
    "u64": ("uint64", [2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 2,
                       2**64 - 1] + list(range(0, 20))),
    "d9": (pa.decimal128(9, 3),
           [D("-999999.999"), D("999999.999"), D("-0.001"), D("0.001"), D("1.500")]
           + [D(i) for i in range(15)]),
    "d18": (pa.decimal128(18, 2),
            [D("-9999999999999999.99"), D("9999999999999999.99"), D("-1.00"),
             D("-0.01"), D("0.01"), D("0.50")] + [D(i) for i in range(15)]),
    "d38": (pa.decimal128(38, 10),
            [D("-9999999999999999999999999999.9999999999"),
             D("9999999999999999999999999999.9999999999"),
             D("0.0000000001"), D("-0.0000000001"),
             D("12345678901234567890.0123456789"), D("1.5")]
            + [D(i) for i in range(15)]),
    "f32": ("float32", [math.nan, -0.0, 0.0, math.inf, -math.inf, 1.5, -2.25,
                        3.4028234663852886e38, 1.401298464324817e-45]
            + [float(i) for i in range(1, 12)]),
    "f64": ("float64", [math.nan, -0.0, 0.0, math.inf, -math.inf, 0.1, -2.5,
                        1.7976931348623157e308, -1e308, 5e-324, 2.0**53 + 2]
            + [float(i) for i in range(1, 12)]),
    "s": ("string", STRINGS),
    "ls": ("large_string", STRINGS),
    "sv": ("string_view", STRINGS),
    "dict": ("dictionary", STRINGS),
    "bin": ("binary", [b"", b"\x00", b"\x00\x00", b"\x00\xff", b"\xff", b"a",
                       b"ab", bytes(range(256)) * 5, bytes(range(256)) * 5 + b"!"]
            + [bytes([i]) * 3 for i in range(1, 12)]),
    "date": ("date32", [datetime.date(1, 1, 1), datetime.date(1969, 12, 31),
                        datetime.date(1970, 1, 1), datetime.date(2000, 2, 29),
                        datetime.date(9999, 12, 31)]
             + [datetime.date(2024, 1, 1) + datetime.timedelta(days=i)
                for i in range(15)]),
    "ts": (pa.timestamp("us"),
           [datetime.datetime(1, 1, 1), datetime.datetime(1969, 12, 31, 23, 59, 59, 999999),
            datetime.datetime(1970, 1, 1), datetime.datetime(2262, 4, 12),
            datetime.datetime(9999, 12, 31, 23, 59, 59, 999999)]
           + [datetime.datetime(2024, 3, 1, 12, 0, i, i * 1001) for i in range(15)]),
    "tstz": (pa.timestamp("us", tz="Asia/Kolkata"),
             [datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
              datetime.datetime(1970, 1, 1, tzinfo=UTC),
              datetime.datetime(2262, 4, 12, tzinfo=UTC)]
             + [datetime.datetime(2024, 3, 1, 12, 0, i, i * 1001, tzinfo=UTC)
                for i in range(15)]),
    "b": ("bool", [True, False]),
}
# Columns that are safe to SUM on a few hundred rows (no overflow of the
# promised result type, no order-dependent float overflow).
SUMMABLE = {
    "v_i64": ("int64", list(range(-2**40, 2**40, 2**33 + 12345))),
    "v_u64": ("uint64", list(range(0, 2**41, 2**33 + 12345))),
    "v_d38": (pa.decimal128(38, 10),
              [D("-12345678901234567890.0123456789"), D("0.0000000001"),
               D("98765432109876543210.5")] + [(D(i) / 7).quantize(D("1e-10")) for i in range(20)]),
    "v_f64": ("float64", [math.nan, -0.0, math.inf, -math.inf]),
}
SUM_COLUMNS = ["i8", "i16", "i32", "u8", "u16", "u32", "d9", "d18", "f32",
               "v_i64", "v_u64", "v_d38", "v_f64"]


def arrow_type(spec):
    if spec == "dictionary":
        return pa.dictionary(pa.int32(), pa.string())
    return pa.type_for_alias(spec) if isinstance(spec, str) else spec


def column(rng, name, spec, pool, rows, null_share):
    values = []
    for _ in range(rows):
        if rng.random() < null_share:
            values.append(None)
        elif name == "v_f64" and rng.random() < 0.9:
            values.append(rng.uniform(-1e6, 1e6))
        else:
            values.append(rng.choice(pool))
    typ = arrow_type(spec)
    if pa.types.is_dictionary(typ):
        return pa.array(values, pa.string()).dictionary_encode()
    return pa.array(values, typ)


def types_table(rows, seed, null_share=0.08):
    """Every column type, from the pools, with nulls; `id` numbers the rows."""
    rng = random.Random(seed)
    data = {"id": pa.array(range(rows), pa.int64())}
    for name, (spec, pool) in list(POOLS.items()) + list(SUMMABLE.items()):
        data[name] = column(rng, name, spec, pool, rows, null_share)
    return pa.table(data)


def zipf_keys(rng, rows, distinct, s):
    weights = [1 / (i + 1) ** s for i in range(distinct)]
    return rng.choices(range(distinct), weights=weights, k=rows)


def narrow_table(keys, seed, key_type="int64", strings=STRINGS[:10]):
    """A key column and two value columns (an int and a string)."""
    rng = random.Random(seed)
    return pa.table({
        "k": pa.array(keys, key_type),
        "v": pa.array([rng.randrange(-1000, 1000) for _ in keys], pa.int64()),
        "w": pa.array([rng.choice(strings) for _ in keys], pa.string()),
    })


def wide_composite_table(rows, seed, shared):
    """Two random int64 columns (the pair needs 128 bits) plus a 3-column
    key of string, int32 and date; `shared` rows are copied from seed 0."""
    base = random.Random(0)
    rng = random.Random(seed)
    a, b = [], []
    for i in range(rows):
        src = base if i < shared else rng
        a.append(src.randrange(-2**63, 2**63))
        b.append(src.randrange(-2**63, 2**63))
    for i in range(rows // 10):  # pairs sharing one half with another row
        b[-1 - i] = b[i]
    for i in range(0, rows, 17):
        a[i] = None
    return pa.table({
        "a": pa.array(a, pa.int64()),
        "b": pa.array(b, pa.int64()),
        "s": pa.array([rng.choice(STRINGS[:8] + [None]) for _ in range(rows)]),
        "n": pa.array([rng.choice([-1, 0, 1, 2**31 - 1, None]) for _ in range(rows)], pa.int32()),
        "d": pa.array([rng.choice(POOLS["date"][1][:6]) for _ in range(rows)], pa.date32()),
        "x": pa.array(range(rows), pa.int64()),
    })


def limits_tables():
    """int64 against uint64 keys at the limits: -1 must not meet 2^64-1."""
    left = pa.table({
        "k": pa.array([-2**63, -2**63 + 1, -1, 0, 1, 2**63 - 2, 2**63 - 1, None,
                       -1, 2**63 - 1], pa.int64()),
        "lv": pa.array(range(10), pa.int64())})
    right = pa.table({
        "k": pa.array([0, 1, 2**63 - 2, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1,
                       None, 2**63 - 1, 2**64 - 1], pa.uint64()),
        "rv": pa.array(range(10), pa.int64())})
    return left, right


class Data:
    """Writes the tables (Parquet; some also CSV and Arrow IPC) and tells
    numakit and DuckDB where each one is."""

    def __init__(self, directory, db):
        self.dir = directory
        self.db = db
        self.schemas = {}

    def add(self, name, table, formats=("parquet",), row_group_rows=None):
        """Writes TABLE as NAME.parquet (in row groups of ROW_GROUP_ROWS)
        and in the other FORMATS (csv, arrow: batches of 50 rows)."""
        for fmt in formats:
            path = self.path(name, fmt)
            if fmt == "parquet":
                # Decimals of up to 18 digits as 32- or 64-bit integers, as
                # TPC-H generators and Spark write them (numakit reads those
                # without widening); wider ones as fixed-size binary.
                pq.write_table(table, path, row_group_size=row_group_rows,
                               store_decimal_as_integer=True)
            elif fmt == "csv":
                pacsv.write_csv(table, path)
            else:
                with paipc.new_file(path, table.schema) as writer:
                    writer.write_table(table, max_chunksize=50)
        self.schemas[name] = table.schema
        self.db.execute(f"CREATE VIEW {q(name)} AS SELECT * FROM read_parquet('{self.path(name)}')")
        if "csv" in formats:
            # DuckDB reads the very same CSV bytes, with the intended types.
            types = ", ".join(f"'{f.name}': '{duck_type(f.type)}'" for f in table.schema)
            self.db.execute(f"CREATE VIEW {q(name + '_csv')} AS SELECT * FROM read_csv("
                            f"'{self.path(name, 'csv')}', header=true, columns={{{types}}})")
        if "arrow" in formats:
            with paipc.open_file(self.path(name, "arrow")) as reader:
                self.db.register(name + "_arrow", reader.read_all())

    def path(self, name, fmt="parquet"):
        return str(self.dir / f"{name}.{fmt}")

    def view(self, name, fmt="parquet"):
        return q(name if fmt == "parquet" else f"{name}_{fmt}")


def duck_type(typ):
    names = {pa.int64(): "BIGINT", pa.uint64(): "UBIGINT", pa.float64(): "DOUBLE",
             pa.string(): "VARCHAR", pa.date32(): "DATE", pa.bool_(): "BOOLEAN",
             pa.int32(): "INTEGER"}
    return names[typ]


CSV_COLUMNS = ["id", "i64", "u64", "f64", "s", "date", "b", "v_i64"]


def make_data(directory, db):
    """The tables of the `types` suite, from fixed seeds."""
    data = Data(directory, db)
    data.add("types_l", types_table(240, seed=1), ("parquet", "arrow"))
    data.add("types_l_groups", types_table(240, seed=1), row_group_rows=16)
    data.add("types_r", types_table(200, seed=2))
    data.add("types_empty", types_table(0, seed=3))
    data.add("types_one", types_table(1, seed=4, null_share=0.0))
    data.add("types_allnull", types_table(50, seed=5, null_share=1.0))
    data.add("csv_l", types_table(300, seed=6).select(CSV_COLUMNS),
             ("parquet", "csv"))
    data.add("csv_r", types_table(200, seed=7).select(CSV_COLUMNS),
             ("parquet", "csv"))
    rng = random.Random(8)
    data.add("zipf_l", narrow_table(zipf_keys(rng, 3000, 2000, 1.1), seed=9), ("parquet", "csv"))
    data.add("zipf_r", narrow_table(zipf_keys(rng, 600, 2000, 1.1), seed=10))
    # Over 16 MiB of CSV: read in several byte ranges, quoted line breaks
    # and 1.5 KB strings near their boundaries.
    data.add("big_csv", narrow_table(zipf_keys(rng, 150_000, 5000, 0.8), seed=19, strings=STRINGS),
             ("parquet", "csv"))
    data.add("equal_l", narrow_table([7] * 250, seed=11))
    data.add("equal_r", narrow_table([7] * 200, seed=12))
    data.add("one_l", narrow_table([2**63 - 1], seed=13))
    data.add("one_r", narrow_table([2**63 - 1], seed=14, key_type="uint64"))
    data.add("nullkey_one", narrow_table([None], seed=15))
    left, right = limits_tables()
    data.add("limits_l", left)
    data.add("limits_r", right)
    data.add("wide_l", wide_composite_table(400, seed=16, shared=150))
    data.add("wide_r", wide_composite_table(300, seed=17, shared=120))
    # In i32 order, nulls last (pyarrow cannot `take` string_view columns).
    rows = sorted(types_table(300, seed=18).to_pylist(), key=lambda r: (r["i32"] is None, r["i32"] or 0))
    data.add("presorted", pa.Table.from_pylist(rows, schema=types_table(0, seed=18).schema))
    data.add("overflow", pa.table({"k": pa.array([1, 1, 2], pa.int64()),
                                   "i": pa.array([2**62, 2**62, 1], pa.int64()),
                                   "u": pa.array([2**63, 2**63, 1], pa.uint64()),
                                   "d": pa.array([D("9" * 28 + ".9999999999")] * 2 + [D(1)],
                                                 pa.decimal128(38, 10))}))
    return data


# ------------------------------------------------------------ comparing

def q(name):
    return '"' + name.replace('"', '""') + '"'


def norm(v):
    """A sortable, comparable form: NaN equals NaN, -0.0 equals 0.0,
    integers and decimals compare by value, instants in UTC."""
    if v is None:
        return (0,)
    if isinstance(v, bool):
        return (1, v)
    if isinstance(v, float):
        return (3,) if math.isnan(v) else (2, v + 0.0)
    if isinstance(v, (int, D)):
        return (2, v)
    if isinstance(v, str):
        return (4, v)
    if isinstance(v, bytes):
        return (5, v)
    if isinstance(v, datetime.datetime):
        return (7, v) if v.tzinfo is None else (8, v.astimezone(UTC))
    if isinstance(v, datetime.date):
        return (6, v)
    return (9, repr(v))


def rows_of(table, columns=None):
    columns = columns or table.column_names
    cols = [[norm(v) for v in table.column(c).to_pylist()] for c in columns]
    return list(zip(*cols))


def short(row):
    text = ", ".join("null" if v == (0,) else "NaN" if v == (3,) else repr(v[1]) for v in row)
    return text if len(text) < 160 else text[:157] + "..."


def names_differ(got, want):
    if got.column_names != want.column_names:
        return f"columns {got.column_names} != DuckDB's {want.column_names}"
    return None


def multiset_diff(got, want):
    """None when the two tables hold the same rows (in any order)."""
    problem = names_differ(got, want)
    if problem:
        return problem
    g, w = collections.Counter(rows_of(got)), collections.Counter(rows_of(want))
    if g == w:
        return None
    missing, extra = list((w - g).elements()), list((g - w).elements())
    parts = [f"{got.num_rows} rows, DuckDB {want.num_rows}"]
    if missing:
        parts.append(f"{len(missing)} missing, e.g. ({short(missing[0])})")
    if extra:
        parts.append(f"{len(extra)} extra, e.g. ({short(extra[0])})")
    return "; ".join(parts)


def close(a, b):
    if a == b:
        return True
    if a[0] == 2 and b[0] == 2 and (isinstance(a[1], float) or isinstance(b[1], float)):
        return math.isclose(float(a[1]), float(b[1]), rel_tol=1e-9, abs_tol=1e-9)
    return False


def groups_diff(got, want, keys):
    """Aggregates: the same groups, each with the same values (floats within
    a relative 1e-9)."""
    problem = names_differ(got, want)
    if problem:
        return problem
    nk = len(keys)
    found = {}
    for row in rows_of(got):
        if row[:nk] in found:
            return f"group ({short(row[:nk])}) appears twice"
        found[row[:nk]] = row[nk:]
    expected = {row[:nk]: row[nk:] for row in rows_of(want)}
    missing = [k for k in expected if k not in found]
    extra = [k for k in found if k not in expected]
    if missing or extra:
        return (f"{len(found)} groups, DuckDB {len(expected)}; missing {[short(k) for k in missing[:2]]}"
                f", extra {[short(k) for k in extra[:2]]}")
    names = got.column_names[nk:]
    for k, values in expected.items():
        for name, g, w in zip(names, found[k], values):
            if not close(g, w):
                return f"group ({short(k)}): {name} = {short([g])}, DuckDB {short([w])}"
    return None


def sorted_diff(got, want, keys):
    """Sorts: key columns equal row by row, the full rows as multisets."""
    problem = names_differ(got, want)
    if problem:
        return problem
    if got.num_rows != want.num_rows:
        return f"{got.num_rows} rows, DuckDB {want.num_rows}"
    g, w = rows_of(got, keys), rows_of(want, keys)
    for i, (a, b) in enumerate(zip(g, w)):
        if a != b:
            return f"row {i}: keys ({short(a)}), DuckDB ({short(b)})"
    return multiset_diff(got, want)


# ------------------------------------------------------------- running

class Suite:
    def __init__(self, numakit, workdir, only):
        self.numakit = numakit
        self.dir = workdir
        self.only = only
        self.db = duckdb.connect()
        self.db.execute("SET TimeZone = 'UTC'")
        self.failed = []
        self.passed = 0
        self.outputs = 0

    def wanted(self, name):
        return not self.only or any(part in name for part in self.only.split(","))

    def run(self, args):
        command = [self.numakit] + args
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True)
        return done, time.monotonic() - started, " ".join(shlex.quote(a) for a in command)

    def sql(self, query):
        return self.db.sql(query).to_arrow_table()

    def value(self, query):
        return self.db.execute(query).fetchall()[0][0]

    def report(self, name, problem, command, note, query=None):
        if problem is None:
            self.passed += 1
            print(f"PASS {name} ({note})", flush=True)
            return
        self.failed.append(name)
        print(f"FAIL {name} ({note}): {problem}\n     numakit: {command}", flush=True)
        if query:
            print(f"     duckdb:  {query}", flush=True)

    def case(self, name, args, query, compare):
        """Runs numakit ARGS --out FILE, DuckDB's QUERY, and COMPARE(got, want)."""
        if not self.wanted(name):
            return
        self.outputs += 1
        out = str(self.dir / f"out{self.outputs}.parquet")
        done, seconds, command = self.run(args + ["--out", out, "--quiet"])
        if done.returncode != 0:
            lines = (done.stderr.strip() or done.stdout.strip()).splitlines() or ["(nothing)"]
            self.report(name, f"exit {done.returncode}: {lines[0][:300]}", command, f"{seconds:.1f} s", query)
            return
        try:
            want = self.sql(query)
        except duckdb.Error as e:
            self.report(name, f"DuckDB failed: {str(e).splitlines()[0]}", command, f"{seconds:.1f} s", query)
            return
        got = pq.read_table(out)
        self.report(name, compare(got, want), command, f"{seconds:.1f} s", query)

    def refusal(self, name, args, code=1):
        """numakit must refuse with one `numakit: error:` line and exit
        `code`: 1 where the data cannot be used as asked, 2 where the
        command line itself is wrong."""
        if not self.wanted(name):
            return
        done, seconds, command = self.run(args + ["--quiet"])
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        problem = None
        if done.returncode != code:
            problem = f"exit {done.returncode}, want {code} (stderr: {done.stderr.strip()[:200]!r})"
        elif len(lines) != 1 or not lines[0].startswith("numakit: error:"):
            problem = f"stderr is not one `numakit: error:` line: {done.stderr.strip()[:300]!r}"
        self.report(name, problem, command, f"{seconds:.1f} s")
        if problem is None:
            print(f"     stderr: {lines[0][:200]}")


# ------------------------------------------------------------ the cases

def join_columns(data, left, right, lkeys, rkeys, kind, lcols=None, rcols=None):
    """numakit's result columns: (left column, ...) and (right column, name).
    By default the left keys come first, then the other left columns."""
    lcols = lcols or lkeys + [c for c in data.schemas[left].names if c not in lkeys]
    if kind in ("semi", "anti"):
        return lcols, []
    rcols = rcols or [c for c in data.schemas[right].names if c not in rkeys]
    return lcols, [(c, c + "_right" if c in lcols else c) for c in rcols]


def join_sql(data, left, right, lkeys, rkeys, kind, fmt="parquet", lcols=None, rcols=None):
    lcols, rcols = join_columns(data, left, right, lkeys, rkeys, kind, lcols, rcols)
    on = " AND ".join(f"l.{q(a)} = r.{q(b)}" for a, b in zip(lkeys, rkeys))
    select = ", ".join([f"l.{q(c)}" for c in lcols] + [f"r.{q(c)} AS {q(n)}" for c, n in rcols])
    lview, rview = data.view(left, fmt), data.view(right, fmt)
    if kind in ("semi", "anti"):
        exists = "EXISTS" if kind == "semi" else "NOT EXISTS"
        return f"SELECT {select} FROM {lview} l WHERE {exists} (SELECT 1 FROM {rview} r WHERE {on})"
    join = "JOIN" if kind == "inner" else "LEFT JOIN"
    return f"SELECT {select} FROM {lview} l {join} {rview} r ON {on}"


def join_case(suite, data, name, left, right, lkeys, rkeys, kind, algorithm,
              fmt="parquet", lcols=None, rcols=None, extra=()):
    args = ["join", "--left", data.path(left, fmt), "--right", data.path(right, fmt),
            "--left-key", ",".join(lkeys), "--right-key", ",".join(rkeys),
            "--kind", kind, "--algorithm", algorithm, *extra]
    if lcols:
        args += ["--left-columns", ",".join(lcols)]
    if rcols:
        args += ["--right-columns", ",".join(rcols)]
    query = join_sql(data, left, right, lkeys, rkeys, kind, fmt, lcols, rcols)
    suite.case(f"join/{name}/{kind}/{algorithm}", args, query, multiset_diff)


def join_cases(suite, data):
    """Every key type, all four kinds; each key meets every algorithm once."""
    narrow = {"b"}  # two distinct values: many result rows, so fewer columns
    for i, key in enumerate(POOLS):
        for j, kind in enumerate(KINDS):
            cols = (["id", key, "s", "f64"], ["id", "d38", "tstz"]) if key in narrow else (None, None)
            join_case(suite, data, f"key={key}", "types_l", "types_r", [key], [key], kind,
                      ALGORITHMS[(i + j) % 4], lcols=cols[0], rcols=cols[1])
    mixed = [("i64", "u64"), ("i8", "u64"), ("u8", "i16"), ("i32", "i64"), ("u32", "u64"),
             ("i64", "d18"), ("d9", "d18"), ("d18", "d38"), ("f32", "f64"), ("s", "dict"), ("ls", "sv"),
             ("dict", "s")]
    for i, (a, b) in enumerate(mixed):
        for j, kind in enumerate(KINDS):
            join_case(suite, data, f"key={a}~{b}", "types_l", "types_r", [a], [b], kind,
                      ALGORITHMS[(i + j) % 4], lcols=["id", a, "b"], rcols=["id", b])
    composite = [["i64", "u8"], ["s", "i32", "date"], ["b", "d18"], ["dict", "tstz"], ["f64", "bin"]]
    for i, keys in enumerate(composite):
        for j, kind in enumerate(KINDS):
            join_case(suite, data, f"key={'+'.join(keys)}", "types_l", "types_r", keys, keys, kind,
                      ALGORITHMS[(i + j) % 4], lcols=["id"] + keys + ["f32"], rcols=["id", "ls"])


def join_shape_cases(suite, data):
    """Empty, one row, all-equal keys, Zipf, limits, 128-bit composites,
    CSV and Arrow inputs: every kind with every algorithm."""
    shapes = [
        ("empty-left", "types_empty", "types_r", ["i64"], ["i64"], "parquet"),
        ("empty-right", "types_l", "types_empty", ["s"], ["s"], "parquet"),
        ("empty-both", "types_empty", "types_empty", ["d38"], ["d38"], "parquet"),
        ("one-row", "one_l", "one_r", ["k"], ["k"], "parquet"),
        ("null-key-one-row", "nullkey_one", "one_l", ["k"], ["k"], "parquet"),
        ("all-equal", "equal_l", "equal_r", ["k"], ["k"], "parquet"),
        ("zipf", "zipf_l", "zipf_r", ["k"], ["k"], "parquet"),
        ("int-limits", "limits_l", "limits_r", ["k"], ["k"], "parquet"),
        ("wide-composite", "wide_l", "wide_r", ["a", "b"], ["a", "b"], "parquet"),
        ("three-columns", "wide_l", "wide_r", ["s", "n", "d"], ["s", "n", "d"], "parquet"),
        ("mixed-default-columns", "types_l", "types_r", ["i64"], ["u64"], "parquet"),
        ("row-groups", "types_l_groups", "types_r", ["s"], ["ls"], "parquet"),
        ("csv", "csv_l", "csv_r", ["i64"], ["i64"], "csv"),
        ("csv-strings", "csv_l", "csv_r", ["s"], ["s"], "csv"),
    ]
    for name, left, right, lkeys, rkeys, fmt in shapes:
        for kind in KINDS:
            for algorithm in ALGORITHMS:
                join_case(suite, data, name, left, right, lkeys, rkeys, kind, algorithm, fmt)
    for kind in KINDS:
        join_case(suite, data, "arrow-ipc", "types_l", "types_l", ["u64"], ["u64"], kind, "auto",
                  fmt="arrow", lcols=["id", "u64", "dict", "tstz"], rcols=["id", "sv"])
        join_case(suite, data, "one-thread", "zipf_l", "zipf_r", ["k"], ["k"], kind, "auto",
                  extra=["--threads", "1"])


def agg_list(aggs):
    return ",".join(a if a == "count" else f"{a[0]}:{a[1]}" for a in aggs)


def agg_sql(view, keys, aggs):
    select = [q(k) for k in keys]
    for a in aggs:
        select.append('count(*) AS "count"' if a == "count"
                      else f"{a[0]}({q(a[1])}) AS {q(a[0] + '_' + a[1])}")
    return f"SELECT {', '.join(select)} FROM {view} GROUP BY {', '.join(q(k) for k in keys)}"


def promised_type(func, typ):
    """The result type numakit promises for FUNC over a column of TYP."""
    if func == "count":
        return pa.int64()
    if func == "avg":
        return pa.float64()
    if func in ("min", "max"):
        return typ
    if pa.types.is_signed_integer(typ):
        return pa.int64()
    if pa.types.is_unsigned_integer(typ):
        return pa.uint64()
    if pa.types.is_decimal(typ):
        return pa.decimal128(38, typ.scale)
    return pa.float64()


def agg_compare(schema, keys, aggs):
    """Groups as in groups_diff, and the promised result types (unless
    SCHEMA is None: CSV input, whose types numakit infers)."""
    def compare(got, want):
        problem = groups_diff(got, want, keys)
        if problem or schema is None:
            return problem
        for a in aggs:
            if a == "count":
                continue
            name, want_type = f"{a[0]}_{a[1]}", promised_type(a[0], schema.field(a[1]).type)
            if got.schema.field(name).type != want_type:
                return f"{name} is {got.schema.field(name).type}, promised {want_type}"
        return None
    return compare


def agg_case(suite, data, name, table, keys, aggs, fmt="parquet", extra=()):
    args = ["aggregate", "--input", data.path(table, fmt), "--key", ",".join(keys),
            "--agg", agg_list(aggs), *extra]
    query = agg_sql(data.view(table, fmt), keys, aggs)
    schema = data.schemas[table] if fmt != "csv" else None
    suite.case(f"aggregate/{name}", args, query, agg_compare(schema, keys, aggs))


def sums(columns):
    return ["count"] + [(f, c) for c in columns for f in ("sum", "avg")]


def extremes(columns):
    return [(f, c) for c in columns for f in ("min", "max", "count")]


def aggregate_cases(suite, data):
    """Each key type with SUM/AVG of every summable type, and with
    MIN/MAX/COUNT of every column."""
    all_columns = list(POOLS)
    for key in POOLS:
        agg_case(suite, data, f"key={key}/sum-avg", "types_l", [key], sums(SUM_COLUMNS))
        agg_case(suite, data, f"key={key}/min-max-count", "types_l", [key], extremes(all_columns))
    for keys in (["i64", "u64"], ["s", "d18", "date"], ["b", "u8"], ["dict", "tstz", "f32"]):
        agg_case(suite, data, f"key={'+'.join(keys)}", "types_l", keys,
                 sums(["i32", "d18", "f64"]) + extremes(["s", "ts"]))
    agg_case(suite, data, "key=a+b(128-bit)", "wide_l", ["a", "b"], ["count", ("sum", "x"), ("min", "s")])
    agg_case(suite, data, "key=s+n+d", "wide_l", ["s", "n", "d"], ["count", ("sum", "x"), ("max", "a")])
    agg_case(suite, data, "avg-at-limits", "types_l", ["b"], [("avg", "i64"), ("avg", "u64")])


def aggregate_shape_cases(suite, data):
    """Empty, one row, all-null values, all-equal keys, Zipf (with each
    method of the one-integer-column path), CSV and Arrow input."""
    agg_case(suite, data, "empty", "types_empty", ["i64"], sums(["i32", "d38"]) + extremes(["s"]))
    agg_case(suite, data, "one-row", "types_one", ["s"], sums(SUM_COLUMNS) + extremes(list(POOLS)))
    agg_case(suite, data, "all-null", "types_allnull", ["i64"], sums(SUM_COLUMNS) + extremes(list(POOLS)))
    agg_case(suite, data, "all-null-key-str", "types_allnull", ["s"], ["count", ("sum", "i8")])
    agg_case(suite, data, "all-equal", "equal_l", ["k"], ["count", ("sum", "v"), ("min", "w"), ("avg", "v")])
    agg_case(suite, data, "zipf", "zipf_l", ["k"], ["count", ("sum", "v"), ("max", "w")])
    for method in ["auto", "shuffle", "migration", "migration-copy", "local", "partitioned"]:
        agg_case(suite, data, f"zipf-one-int/{method}", "zipf_l", ["k"], [("sum", "v")],
                 extra=["--method", method])
    agg_case(suite, data, "zipf-one-int/one-thread", "zipf_l", ["k"], [("sum", "v")], extra=["--threads", "1"])
    agg_case(suite, data, "csv", "zipf_l", ["w"], ["count", ("sum", "v"), ("min", "k")], fmt="csv")
    agg_case(suite, data, "csv-16MiB-units", "big_csv", ["w"], ["count", ("sum", "k"), ("max", "v")], fmt="csv")
    agg_case(suite, data, "row-groups", "types_l_groups", ["dict"], sums(["i32", "v_d38"]) + extremes(["s", "tstz"]))
    agg_case(suite, data, "csv-types", "csv_l", ["s"], sums(["v_i64", "f64"]) + extremes(["u64", "date", "b"]),
             fmt="csv")
    agg_case(suite, data, "arrow-ipc", "types_l", ["dict"], sums(["v_d38", "f32"]) + extremes(["sv", "bin", "d38"]),
             fmt="arrow")


def sort_sql(view, keys, nulls, columns=None):
    order = ", ".join(f"{q(k)} {d.upper()} NULLS {nulls.upper()}" for k, d in keys)
    select = ", ".join(q(c) for c in columns) if columns else "*"
    return f"SELECT {select} FROM {view} ORDER BY {order}"


def sort_case(suite, data, name, table, keys, nulls, fmt="parquet", columns=None, extra=()):
    """KEYS: (column, 'asc' | 'desc') pairs."""
    args = ["sort", "--input", data.path(table, fmt), "--nulls", nulls,
            "--key", ",".join(f"{k}:{d}" for k, d in keys), *extra]
    if columns:
        args += ["--columns", ",".join(columns)]
    query = sort_sql(data.view(table, fmt), keys, nulls, columns)
    key_names = [k for k, _ in keys]
    suite.case(f"sort/{name}/nulls-{nulls}", args, query, lambda g, w: sorted_diff(g, w, key_names))


def sort_cases(suite, data):
    """Every column as the key, ascending and descending, nulls first and
    last; composite keys with mixed directions."""
    for key in POOLS:
        for direction in ("asc", "desc"):
            for nulls in ("first", "last"):
                sort_case(suite, data, f"key={key}:{direction}", "types_l", [(key, direction)], nulls)
    composite = [[("b", "asc"), ("s", "desc"), ("f64", "asc")],
                 [("i64", "desc"), ("u64", "asc")],
                 [("dict", "asc"), ("ts", "desc"), ("id", "asc")],
                 [("d38", "desc"), ("bin", "asc"), ("tstz", "desc")],
                 [("f32", "asc"), ("date", "desc"), ("sv", "asc")]]
    for keys in composite:
        for nulls in ("first", "last"):
            sort_case(suite, data, "key=" + ",".join(f"{k}:{d}" for k, d in keys), "types_l", keys, nulls)


def sort_shape_cases(suite, data):
    """Empty, one row, all-equal, Zipf, input already in order, 128-bit
    composite, --descending, --columns, CSV and Arrow input."""
    sort_case(suite, data, "empty", "types_empty", [("s", "asc")], "last")
    sort_case(suite, data, "one-row", "types_one", [("f64", "desc")], "first")
    sort_case(suite, data, "all-null", "types_allnull", [("i64", "asc"), ("s", "desc")], "first")
    sort_case(suite, data, "all-equal", "equal_l", [("k", "asc")], "last")
    sort_case(suite, data, "zipf", "zipf_l", [("k", "desc"), ("w", "asc")], "last")
    for direction in ("asc", "desc"):
        for nulls in ("first", "last"):
            sort_case(suite, data, f"presorted/i32:{direction}", "presorted", [("i32", direction)], nulls)
    sort_case(suite, data, "wide-composite", "wide_l", [("a", "asc"), ("b", "desc")], "first")
    sort_case(suite, data, "descending-flag", "types_l", [("s", "desc"), ("i32", "asc")], "last",
              extra=["--descending"])
    sort_case(suite, data, "columns", "types_l", [("u16", "asc")], "last", columns=["u16", "ls", "d18"])
    sort_case(suite, data, "one-thread", "types_l", [("d18", "desc")], "first", extra=["--threads", "1"])
    sort_case(suite, data, "csv", "csv_l", [("s", "asc"), ("f64", "desc")], "last", fmt="csv")
    sort_case(suite, data, "row-groups", "types_l_groups", [("f64", "desc"), ("id", "asc")], "last")
    sort_case(suite, data, "arrow-ipc", "types_l", [("tstz", "desc"), ("id", "asc")], "first", fmt="arrow")


def report_cases(suite, data):
    """`--json --verify`: one JSON document with the promised fields, its
    row count equal to DuckDB's, numakit's own reference agreeing."""
    commands = {
        "join": (["join", "--left", data.path("zipf_l"), "--right", data.path("zipf_r"), "--key", "k"],
                 join_sql(data, "zipf_l", "zipf_r", ["k"], ["k"], "inner")),
        "aggregate": (["aggregate", "--input", data.path("types_l"), "--key", "s", "--agg", "count,sum:i32"],
                      agg_sql(data.view("types_l"), ["s"], ["count", ("sum", "i32")])),
        "sort": (["sort", "--input", data.path("types_l"), "--key", "f64:desc"], "SELECT * FROM types_l"),
    }
    for command_name, (args, query) in commands.items():
        name = f"json-report/{command_name}"
        if not suite.wanted(name):
            continue
        suite.outputs += 1
        out = str(suite.dir / f"out{suite.outputs}.parquet")
        done, seconds, command = suite.run(args + ["--json", "--verify", "--out", out])
        suite.report(name, report_problem(suite, done, query), command, f"{seconds:.1f} s", query)


def report_problem(suite, done, query):
    if done.returncode != 0:
        return f"exit {done.returncode}: {done.stderr.strip()[:300]}"
    try:
        report = json.loads(done.stdout)
    except ValueError as e:
        return f"stdout is not one JSON document ({e}): {done.stdout[:200]!r}"
    missing = [f for f in ("rows", "times", "seconds", "peak_rss_bytes") if f not in report]
    if missing:
        return f"report lacks {missing}"
    want = suite.value(f"SELECT count(*) FROM ({query})")
    if report["rows"] != want:
        return f"report says {report['rows']} rows, DuckDB {want}"
    if report.get("verified") is not True:
        return f"--verify did not verify: {report.get('verified')!r}"
    return None


def refusal_cases(suite, data):
    """Where numakit refuses on purpose (DuckDB would cast or widen)."""
    tl, tr = data.path("types_l"), data.path("types_r")
    for a, b in [("s", "i64"), ("i64", "f64"), ("f64", "d18"), ("date", "ts"), ("ts", "tstz"),
                 ("s", "bin"), ("b", "i8")]:
        suite.refusal(f"refuse/join-key={a}~{b}",
                      ["join", "--left", tl, "--right", tr, "--left-key", a, "--right-key", b])
    suite.refusal("refuse/join-unknown-column", ["join", "--left", tl, "--right", tr, "--key", "nope"])
    suite.refusal("refuse/join-key-count", ["join", "--left", tl, "--right", tr,
                                            "--left-key", "i64,s", "--right-key", "i64"])
    overflow = data.path("overflow")
    suite.refusal("refuse/sum-int64-overflow", ["aggregate", "--input", overflow, "--key", "k", "--agg", "sum:i"])
    suite.refusal("refuse/sum-uint64-overflow", ["aggregate", "--input", overflow, "--key", "k", "--agg", "sum:u"])
    suite.refusal("refuse/sum-decimal38-overflow",
                  ["aggregate", "--input", overflow, "--key", "k", "--agg", "sum:d"])
    # DuckDB refuses this AVG (its HUGEINT sum overflows); numakit counts
    # the sum's 128-bit wraps, so the mean is right: checked against an
    # exact mean in DuckDB, the integer parts summed as HUGEINT and the
    # fractions as decimals (a mean of the values as doubles loses the
    # small values beside +-1e28 ones).
    suite.case("aggregate/avg-decimal38-beyond-128-bits",
               ["aggregate", "--input", tl, "--key", "b", "--agg", "avg:d38"],
               "SELECT b, (sum(trunc(d38)::HUGEINT)::DOUBLE + sum(d38 - trunc(d38))::DOUBLE) "
               f"/ count(d38) AS avg_d38 FROM {data.view('types_l', 'parquet')} GROUP BY b",
               agg_compare(data.schemas["types_l"], ["b"], [("avg", "d38")]))
    suite.refusal("refuse/sum-string", ["aggregate", "--input", tl, "--key", "i8", "--agg", "sum:s"])
    suite.refusal("refuse/avg-binary", ["aggregate", "--input", tl, "--key", "i8", "--agg", "avg:bin"])
    suite.refusal("refuse/unknown-function", ["aggregate", "--input", tl, "--key", "i8", "--agg", "median:i32"],
                  code=2)
    suite.refusal("refuse/sort-unknown-column", ["sort", "--input", tl, "--key", "nope"])
    suite.refusal("refuse/sort-bad-direction", ["sort", "--input", tl, "--key", "s:sideways"],
                  code=2)


# ---------------------------------------------------------------- TPC-H

def tpch_cases(suite, scale, tpchgen):
    """TPC-H tables from tpchgen-cli, compared in DuckDB (EXCEPT ALL both
    ways: exact multisets, without pulling millions of rows into Python)."""
    if suite.only and "tpch" not in suite.only:
        return
    directory = suite.dir / f"tpch-sf{scale}"
    directory.mkdir(exist_ok=True)
    started = time.monotonic()
    subprocess.run([tpchgen, "parquet", "-s", str(scale), "-T", "lineitem", "-T", "orders",
                    "-T", "customer", "--output-dir", str(directory), "--quiet"], check=True)
    print(f"tpchgen-cli: SF {scale} generated in {time.monotonic() - started:.1f} s", flush=True)
    table = {t: str(directory / f"{t}.parquet") for t in ("lineitem", "orders", "customer")}
    for name, path in table.items():
        suite.db.execute(f"CREATE OR REPLACE VIEW tpch_{name} AS SELECT * FROM read_parquet('{path}')")

    q1 = ["count", ("sum", "l_quantity"), ("sum", "l_extendedprice"), ("avg", "l_quantity"),
          ("avg", "l_extendedprice"), ("avg", "l_discount")]
    keys = ["l_returnflag", "l_linestatus"]
    suite.case("tpch/q1-groups", ["aggregate", "--input", table["lineitem"], "--key", ",".join(keys),
                                  "--agg", agg_list(q1)],
               agg_sql("tpch_lineitem", keys, q1),
               agg_compare(pq.read_schema(table["lineitem"]), keys, q1))

    lcols = ["o_orderkey", "o_orderpriority", "o_totalprice", "o_orderdate"]
    rcols = ["l_linenumber", "l_shipmode", "l_comment", "l_extendedprice"]
    tpch_case(suite, "tpch/orders-join-lineitem",
              ["join", "--left", table["orders"], "--right", table["lineitem"],
               "--left-key", "o_orderkey", "--right-key", "l_orderkey",
               "--left-columns", ",".join(lcols), "--right-columns", ",".join(rcols)],
              f"SELECT {', '.join(lcols + rcols)} FROM tpch_orders JOIN tpch_lineitem ON o_orderkey = l_orderkey")
    for kind, exists in (("semi", "EXISTS"), ("anti", "NOT EXISTS")):
        tpch_case(suite, f"tpch/customer-{kind}-orders",
                  ["join", "--left", table["customer"], "--right", table["orders"],
                   "--left-key", "c_custkey", "--right-key", "o_custkey", "--kind", kind],
                  f"SELECT * FROM tpch_customer WHERE {exists} "
                  "(SELECT 1 FROM tpch_orders WHERE o_custkey = c_custkey)")
    tpch_case(suite, "tpch/group-by-o_comment",
              ["aggregate", "--input", table["orders"], "--key", "o_comment",
               "--agg", "count,sum:o_totalprice,max:o_orderdate"],
              'SELECT o_comment, count(*) AS "count", sum(o_totalprice) AS sum_o_totalprice, '
              "max(o_orderdate) AS max_o_orderdate FROM tpch_orders GROUP BY o_comment")
    tpch_sort_case(suite, table["lineitem"])


def except_all(suite, got_view, want_query):
    """Rows of each side the other lacks: (missing count, extra count, example)."""
    missing = suite.sql(f"SELECT * FROM ({want_query}) EXCEPT ALL SELECT * FROM {got_view}")
    extra = suite.sql(f"SELECT * FROM {got_view} EXCEPT ALL SELECT * FROM ({want_query})")
    if missing.num_rows == 0 and extra.num_rows == 0:
        return None
    example = rows_of(missing.slice(0, 1)) or rows_of(extra.slice(0, 1))
    return f"{missing.num_rows} rows missing, {extra.num_rows} extra, e.g. ({short(example[0])})"


def tpch_case(suite, name, args, query):
    def compare(got_path):
        suite.db.execute(f"CREATE OR REPLACE VIEW got AS SELECT * FROM read_parquet('{got_path}')")
        got_names = suite.sql("DESCRIBE got").column("column_name").to_pylist()
        want_names = suite.sql(f"DESCRIBE {query}").column("column_name").to_pylist()
        if got_names != want_names:
            return f"columns {got_names} != DuckDB's {want_names}"
        got_rows = suite.value("SELECT count(*) FROM got")
        want_rows = suite.value(f"SELECT count(*) FROM ({query})")
        problem = except_all(suite, "got", query)
        if problem is None and got_rows != want_rows:
            problem = f"{got_rows} rows, DuckDB {want_rows}"
        return problem
    big_case(suite, name, args, query, compare)


def tpch_sort_case(suite, lineitem):
    keys = ["l_shipdate", "l_orderkey"]

    def compare(got_path):
        suite.db.execute("CREATE OR REPLACE VIEW got AS SELECT * FROM "
                         f"read_parquet('{got_path}', file_row_number = true)")
        want = (f"SELECT {', '.join(keys)}, row_number() OVER (ORDER BY {', '.join(keys)}) - 1 AS file_row_number "
                "FROM tpch_lineitem")
        wrong = suite.sql(f"SELECT w.file_row_number, g.l_shipdate, g.l_orderkey, w.l_shipdate AS want_date, "
                          f"w.l_orderkey AS want_key FROM ({want}) w LEFT JOIN got g USING (file_row_number) "
                          "WHERE g.l_shipdate IS DISTINCT FROM w.l_shipdate "
                          "OR g.l_orderkey IS DISTINCT FROM w.l_orderkey ORDER BY 1 LIMIT 1")
        if wrong.num_rows:
            return f"first out-of-order row: {wrong.to_pylist()[0]}"
        suite.db.execute("CREATE OR REPLACE VIEW got_rows AS SELECT * EXCLUDE (file_row_number) FROM got")
        return except_all(suite, "got_rows", "SELECT * FROM tpch_lineitem")

    big_case(suite, "tpch/sort-lineitem", ["sort", "--input", lineitem, "--key", ",".join(keys)],
             f"SELECT * FROM tpch_lineitem ORDER BY {', '.join(keys)}", compare)


def big_case(suite, name, args, query, compare):
    if not suite.wanted(name):
        return
    suite.outputs += 1
    out = str(suite.dir / f"out{suite.outputs}.parquet")
    done, seconds, command = suite.run(args + ["--out", out, "--quiet"])
    if done.returncode != 0:
        lines = (done.stderr.strip() or done.stdout.strip()).splitlines() or ["(nothing)"]
        suite.report(name, f"exit {done.returncode}: {lines[0][:300]}", command, f"{seconds:.1f} s", query)
        return
    started = time.monotonic()
    problem = compare(out)
    note = f"numakit {seconds:.1f} s, DuckDB comparison {time.monotonic() - started:.1f} s"
    suite.report(name, problem, command, note, query)


# ----------------------------------------------------------------- main

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--numakit", required=True, help="the numakit binary")
    parser.add_argument("--workdir", required=True, help="an empty directory for tables and results")
    parser.add_argument("--suite", choices=["types", "tpch", "all"], default="all")
    parser.add_argument("--tpch-sf", default="0.1", help="TPC-H scale factor (default 0.1)")
    parser.add_argument("--only", help="run only cases whose name contains one of these (comma separated)")
    parser.add_argument("--check", action="store_true", help="only check that the modules are here")
    args = parser.parse_args()

    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    suite = Suite(str(Path(args.numakit).resolve()), workdir, args.only)
    started = time.monotonic()
    if args.suite in ("types", "all"):
        data = make_data(workdir, suite.db)
        for family in (join_cases, join_shape_cases, aggregate_cases, aggregate_shape_cases,
                       sort_cases, sort_shape_cases, report_cases, refusal_cases):
            family(suite, data)
    if args.suite in ("tpch", "all"):
        tpch_cases(suite, args.tpch_sf, tpchgen_path())
    print(f"{suite.passed} passed, {len(suite.failed)} failed in {time.monotonic() - started:.0f} s")
    for name in suite.failed:
        print(f"failed: {name}")
    return 1 if suite.failed else 0


if __name__ == "__main__":
    sys.exit(main())
