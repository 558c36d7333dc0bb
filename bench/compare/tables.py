"""numakit against DuckDB and Polars on users' tables, side by side.

Two measurements per workload and system, each in fresh processes,
alternating systems, medians over --reps:
  whole     the whole process, from the Parquet file(s) to the written
            result (Parquet) or the printed count: wall seconds and peak
            resident memory (the file is in the OS page cache);
  memory    the operation alone on tables already in memory (loading is
            not timed): the first run in the process ("cold": fresh
            memory, page faults) and the second ("warm").
Polars runs both its streaming and its in-memory engine; the faster of
the two counts. Every system must produce the same number of result rows.

Workloads (--workloads, comma separated; default all):
  tpch-q1              Q1's grouping: l_returnflag, l_linestatus; count,
                       sums and averages of decimals (TPC-H, --sf)
  tpch-join            orders JOIN lineitem ON orderkey, carrying strings,
                       decimals and dates
  tpch-groupby-string  orders grouped by o_comment (a high-cardinality
                       string): count, sum of o_totalprice
  tpch-sort            lineitem sorted by l_shipdate, l_orderkey
  groupby-rand-10/16/20/24
                       SUM(value) GROUP BY key over 64M rows with 2^k
                       random 64-bit keys (not dense: no array path)
  join-rand-zipf       4M random 64-bit keys x 64M probe rows drawn from
                       them with Zipf(1.1) skew, count
  join-a-scaled        2M dense keys x 32M foreign keys, count
  sort-random          64M random int64
  sort-ordered         64M int64 already in order

Usage: bench/compare/run.sh tables [--workloads LIST] [--reps N] [--sf N]
                                   [--threads N] [--data DIR] [--json F]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

Q1_AGGS = ("count,sum:l_quantity,sum:l_extendedprice,avg:l_quantity,"
           "avg:l_extendedprice,avg:l_discount")
Q1_SQL = ("SELECT l_returnflag, l_linestatus, count(*) AS count, sum(l_quantity), "
          "sum(l_extendedprice), avg(l_quantity), avg(l_extendedprice), avg(l_discount) "
          "FROM {lineitem} GROUP BY l_returnflag, l_linestatus")
JOIN_COLUMNS = {
    "orders": ["o_orderkey", "o_orderpriority", "o_orderdate", "o_totalprice"],
    "lineitem": ["l_orderkey", "l_shipmode", "l_quantity", "l_extendedprice", "l_shipdate"],
}


def workloads(sf):
    """name -> (description, data kind, systems' commands)."""
    w = {
        "tpch-q1": dict(
            shape=f"TPC-H SF{sf} lineitem, 2 string keys (4 groups), 3 decimal columns",
            data="tpch", files=["lineitem"],
            numakit=lambda f: ["aggregate", "--input", f["lineitem"],
                               "--key", "l_returnflag,l_linestatus", "--agg", Q1_AGGS],
            sql=lambda t: Q1_SQL.format(lineitem=t["lineitem"]),
            polars=lambda pl, t: t["lineitem"].group_by("l_returnflag", "l_linestatus").agg(
                pl.len().alias("count"), pl.col("l_quantity").sum(),
                pl.col("l_extendedprice").sum(), pl.col("l_quantity").mean().alias("aq"),
                pl.col("l_extendedprice").mean().alias("ap"), pl.col("l_discount").mean()),
        ),
        "tpch-join": dict(
            shape=f"TPC-H SF{sf} orders x lineitem on orderkey (int64), carrying 2 strings, "
                  "2 dates, 3 decimals",
            data="tpch", files=["orders", "lineitem"],
            numakit=lambda f: ["join", "--left", f["orders"], "--right", f["lineitem"],
                               "--left-key", "o_orderkey", "--right-key", "l_orderkey",
                               "--left-columns", ",".join(JOIN_COLUMNS["orders"]),
                               "--right-columns", ",".join(JOIN_COLUMNS["lineitem"][1:])],
            sql=lambda t: "SELECT {} FROM {} o JOIN {} l ON o.o_orderkey = l.l_orderkey".format(
                ", ".join(JOIN_COLUMNS["orders"] + JOIN_COLUMNS["lineitem"][1:]),
                t["orders"], t["lineitem"]),
            polars=lambda pl, t: t["orders"].select(JOIN_COLUMNS["orders"]).join(
                t["lineitem"].select(JOIN_COLUMNS["lineitem"]),
                left_on="o_orderkey", right_on="l_orderkey"),
        ),
        "tpch-groupby-string": dict(
            shape=f"TPC-H SF{sf} orders grouped by o_comment (string, nearly all distinct)",
            data="tpch", files=["orders"],
            numakit=lambda f: ["aggregate", "--input", f["orders"], "--key", "o_comment",
                               "--agg", "count,sum:o_totalprice"],
            sql=lambda t: "SELECT o_comment, count(*), sum(o_totalprice) FROM {} "
                          "GROUP BY o_comment".format(t["orders"]),
            polars=lambda pl, t: t["orders"].group_by("o_comment").agg(
                pl.len(), pl.col("o_totalprice").sum()),
        ),
        "tpch-sort": dict(
            shape=f"TPC-H SF{sf} lineitem (all 16 columns) by l_shipdate, l_orderkey",
            data="tpch", files=["lineitem"],
            numakit=lambda f: ["sort", "--input", f["lineitem"], "--key", "l_shipdate,l_orderkey"],
            sql=lambda t: "SELECT * FROM {} ORDER BY l_shipdate, l_orderkey".format(t["lineitem"]),
            polars=lambda pl, t: t["lineitem"].sort("l_shipdate", "l_orderkey"),
        ),
        "join-rand-zipf": dict(
            shape="4M random 64-bit keys x 64M probe keys drawn from them, Zipf(1.1), count",
            data="join-zipf", files=["r", "s"], count=True,
            numakit=lambda f: ["join", "--left", f["r"], "--right", f["s"], "--key", "key",
                               "--output", "count"],
            sql=lambda t: "SELECT count(*) FROM {} r JOIN {} s ON r.key = s.key".format(
                t["r"], t["s"]),
            polars=lambda pl, t: t["r"].join(t["s"], on="key").select(pl.len()),
        ),
        "join-a-scaled": dict(
            shape="2M dense keys x 32M foreign keys (Balkesen's workload A, scaled), count",
            data="join-a", files=["r", "s"], count=True,
            numakit=lambda f: ["join", "--left", f["r"], "--right", f["s"], "--key", "key",
                               "--output", "count"],
            sql=lambda t: "SELECT count(*) FROM {} r JOIN {} s ON r.key = s.key".format(
                t["r"], t["s"]),
            polars=lambda pl, t: t["r"].join(t["s"], on="key").select(pl.len()),
        ),
        "sort-random": dict(
            shape="64M random int64", data="sort-random", files=["t"],
            numakit=lambda f: ["sort", "--input", f["t"], "--key", "key"],
            sql=lambda t: "SELECT key FROM {} ORDER BY key".format(t["t"]),
            polars=lambda pl, t: t["t"].sort("key"),
        ),
        "sort-ordered": dict(
            shape="64M int64 already in ascending order", data="sort-ordered", files=["t"],
            numakit=lambda f: ["sort", "--input", f["t"], "--key", "key"],
            sql=lambda t: "SELECT key FROM {} ORDER BY key".format(t["t"]),
            polars=lambda pl, t: t["t"].sort("key"),
        ),
    }
    for k in (10, 16, 20, 24):
        w[f"groupby-rand-{k}"] = dict(
            shape=f"64M rows, 2^{k} random 64-bit keys, int64 values in -1000..1000",
            data=f"groupby-{k}", files=["t"],
            numakit=lambda f: ["aggregate", "--input", f["t"], "--key", "key", "--agg", "sum:value"],
            sql=lambda t: "SELECT key, sum(value) FROM {} GROUP BY key".format(t["t"]),
            polars=lambda pl, t: t["t"].group_by("key").agg(pl.col("value").sum()),
        )
    return w


def make_data(kind, folder, sf, seed):
    """Writes the Parquet inputs of `kind` into `folder` once; returns them."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(folder, exist_ok=True)
    if kind == "tpch":
        files = {t: os.path.join(folder, f"{t}.parquet") for t in ("lineitem", "orders")}
        if not all(os.path.exists(p) for p in files.values()):
            subprocess.run([os.path.join(os.path.dirname(sys.executable), "tpchgen-cli"),
                            "parquet", "-s", str(sf), "--tables=lineitem,orders",
                            f"--output-dir={folder}"], check=True)
        return files
    rng = np.random.default_rng(seed)
    names = {"join-zipf": ["r", "s"], "join-a": ["r", "s"]}.get(kind, ["t"])
    files = {n: os.path.join(folder, f"{n}.parquet") for n in names}
    if all(os.path.exists(p) for p in files.values()):
        return files
    write = lambda name, cols: pq.write_table(pa.table(cols), files[name])
    n = 64_000_000
    if kind.startswith("groupby-"):
        g = 1 << int(kind.split("-")[1])
        keys = rng.integers(-(2**63), 2**63 - 1, size=g, dtype=np.int64)
        write("t", {"key": keys[rng.integers(0, g, size=n)],
                    "value": rng.integers(-1000, 1000, size=n, dtype=np.int64)})
    elif kind == "join-zipf":
        build = np.unique(rng.integers(-(2**63), 2**63 - 1, size=4_100_000, dtype=np.int64))
        build = rng.permutation(build)[:4_000_000]
        ranks = rng.zipf(1.1, size=n)
        ranks = ranks[ranks <= len(build)]
        while len(ranks) < n:
            more = rng.zipf(1.1, size=n - len(ranks))
            ranks = np.concatenate([ranks, more[more <= len(build)]])
        write("r", {"key": build, "payload": np.arange(len(build), dtype=np.int64)})
        write("s", {"key": build[ranks[:n] - 1], "payload": np.arange(n, dtype=np.int64)})
    elif kind == "join-a":
        a, b = 2_000_000, 32_000_000
        write("r", {"key": rng.permutation(a).astype(np.int64) + 1,
                    "payload": np.arange(a, dtype=np.int64)})
        write("s", {"key": rng.integers(1, a + 1, size=b, dtype=np.int64),
                    "payload": np.arange(b, dtype=np.int64)})
    elif kind == "sort-random":
        write("t", {"key": rng.integers(-(2**63), 2**63 - 1, size=n, dtype=np.int64)})
    elif kind == "sort-ordered":
        write("t", {"key": np.sort(rng.integers(-(2**40), 2**40, size=n, dtype=np.int64))})
    return files


def make_data_apart(kind, folder, sf, seed):
    """make_data in a process of its own: a child forked from a parent that
    holds gigabytes of generated data would report the parent's size as its
    own peak (Linux keeps the peak across fork and exec)."""
    code = ("import json, sys; sys.path.insert(0, %r); import tables; "
            "print('RESULT', json.dumps(tables.make_data(%r, %r, %r, %r)))"
            % (HERE, kind, folder, sf, seed))
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.split("RESULT ", 1)[1])


def run_measured(cmd, env=None):
    """Runs `cmd` and returns (wall seconds, peak RSS bytes, stdout)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out_file, tempfile.TemporaryFile("w+") as err_file:
        proc = subprocess.Popen(cmd, stdout=out_file, stderr=err_file, text=True, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out_file.seek(0)
        err_file.seek(0)
        out, err = out_file.read(), err_file.read()
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err[-2000:]}")
    return wall, usage.ru_maxrss * 1024, out


PEER = r"""
import json, os, sys, time
sys.path.insert(0, {here!r})
import tables
print("RESULT", json.dumps(tables.{fn}({args})))
"""


def peer(fn, args, threads):
    code = PEER.format(here=HERE, fn=fn, args=", ".join(repr(a) for a in args))
    env = dict(os.environ, POLARS_MAX_THREADS=str(threads))
    return [sys.executable, "-c", code], env


def duckdb_whole(name, files, out, threads, sf):
    import duckdb
    w = workloads(sf)[name]
    con = duckdb.connect()
    con.execute(f"SET threads TO {threads}")
    con.execute("SET enable_progress_bar = false")
    t = {k: f"read_parquet('{v}')" for k, v in files.items()}
    if w.get("count"):
        return int(con.execute(w["sql"](t)).fetchone()[0])
    con.execute(f"COPY ({w['sql'](t)}) TO '{out}' (FORMAT PARQUET)")
    return int(con.execute(f"SELECT count(*) FROM read_parquet('{out}')").fetchone()[0])


def polars_whole(name, files, out, threads, sf, engine):
    import polars as pl
    w = workloads(sf)[name]
    t = {k: pl.scan_parquet(v) for k, v in files.items()}
    query = w["polars"](pl, t)
    if w.get("count"):
        return int(query.collect(engine=engine).item())
    if engine == "streaming":
        query.sink_parquet(out)
    else:
        query.collect(engine="in-memory").write_parquet(out)
    return pl.scan_parquet(out).select(pl.len()).collect().item()


def duckdb_memory(name, files, threads, sf):
    import duckdb
    w = workloads(sf)[name]
    con = duckdb.connect()
    con.execute(f"SET threads TO {threads}")
    con.execute("SET enable_progress_bar = false")
    for k, v in files.items():
        con.execute(f"CREATE TABLE {k} AS SELECT * FROM read_parquet('{v}')")
    query = w["sql"]({k: k for k in files})
    times = []
    for _ in range(2):
        start = time.perf_counter()
        if w.get("count"):
            rows = con.execute(query).fetchone()[0]
        else:
            con.execute(f"CREATE OR REPLACE TEMP TABLE res AS {query}")
        times.append(time.perf_counter() - start)
    if not w.get("count"):
        rows = con.execute("SELECT count(*) FROM res").fetchone()[0]
    return times, int(rows)


def polars_memory(name, files, threads, sf, engine):
    import polars as pl
    w = workloads(sf)[name]
    frames = {k: pl.read_parquet(v) for k, v in files.items()}
    times = []
    for _ in range(2):
        start = time.perf_counter()
        res = w["polars"](pl, {k: f.lazy() for k, f in frames.items()}).collect(engine=engine)
        times.append(time.perf_counter() - start)
    rows = res.item() if w.get("count") else res.height
    return times, int(rows)


def numakit_cmd(binary, name, files, threads, sf, extra):
    return [binary, "--quiet"] + workloads(sf)[name]["numakit"](files) + [
        "--threads", str(threads)] + extra


def measure(name, files, args, tmp):
    """Both measurements of every system for one workload."""
    w = workloads(args.sf)[name]
    out = os.path.join(tmp, "out.parquet")
    systems = args.systems.split(",")
    whole = {s: [] for s in systems}
    memory = {s: [] for s in systems}
    rows = {}
    for rep in range(args.reps):
        order = systems[rep % len(systems):] + systems[:rep % len(systems)]
        for s in order:
            if os.path.exists(out):
                os.remove(out)
            if s == "numakit":
                extra = [] if w.get("count") else ["--out", out]
                wall, rss, _ = run_measured(numakit_cmd(args.numakit, name, files, args.threads, args.sf, extra))
                in_memory = ["--in-memory"] if w["numakit"](files)[0] == "aggregate" else []
                _, _, text = run_measured(numakit_cmd(args.numakit, name, files, args.threads, args.sf,
                                                       ["--json", "--reps", "2", "--show", "0"] + in_memory))
                report = json.loads(text)
                times, count = report["times"], int(report["rows"])
            else:
                best = None
                engines = [None] if s == "duckdb" else ["streaming", "in-memory"]
                for engine in engines:
                    fn_args = [name, files, out, args.threads, args.sf] + ([engine] if engine else [])
                    cmd, env = peer(f"{s}_whole", fn_args, args.threads)
                    wall_e, rss_e, text = run_measured(cmd, env)
                    count_e = json.loads(text.split("RESULT ", 1)[1])
                    mem_args = [name, files, args.threads, args.sf] + ([engine] if engine else [])
                    cmd, env = peer(f"{s}_memory", mem_args, args.threads)
                    _, _, text = run_measured(cmd, env)
                    times_e, _ = json.loads(text.split("RESULT ", 1)[1])
                    if best is None or wall_e < best[0]:
                        best = (wall_e, rss_e, count_e, times_e, engine)
                wall, rss, count, times, _ = best
            whole[s].append((wall, rss))
            memory[s].append(times)
            rows[s] = count
            print(f"# {name} {s} rep {rep}: whole {wall:.3f} s, {rss / 2**20:.0f} MiB; "
                  f"memory cold {times[0]:.3f} warm {times[-1]:.3f} s ({count} rows)",
                  file=sys.stderr, flush=True)
    if len(set(rows.values())) != 1:
        sys.exit(f"{name}: systems disagree on the result size: {rows}")
    med = lambda xs: statistics.median(xs)
    return {
        "workload": name, "shape": w["shape"], "rows": rows[systems[0]],
        "whole_seconds": {s: med([x[0] for x in v]) for s, v in whole.items()},
        "peak_mib": {s: med([x[1] for x in v]) / 2**20 for s, v in whole.items()},
        "cold_seconds": {s: med([t[0] for t in v]) for s, v in memory.items()},
        "warm_seconds": {s: med([t[-1] for t in v]) for s, v in memory.items()},
    }


def render(results, args):
    systems = args.systems.split(",")
    others = [s for s in systems if s != "numakit"]
    lines = []
    for key, title in [("whole_seconds", "whole process, Parquet file to written result (s)"),
                       ("cold_seconds", "in memory, cold (s)"),
                       ("warm_seconds", "in memory, warm (s)"),
                       ("peak_mib", "peak memory of the whole process (MiB)")]:
        lines += [f"{title}:", "",
                  "| workload | " + " | ".join(systems) + " | numakit vs the better peer |",
                  "| --- |" + " --- |" * (len(systems) + 1)]
        for r in results:
            m = r[key]
            best = min(m[s] for s in others) if others else None
            if key == "peak_mib":
                ratio = f"{m['numakit'] / best:.2f}x the memory" if best else ""
                cells = [f"{m[s]:.0f}" for s in systems]
            else:
                ratio = f"{best / m['numakit']:.2f}x faster" if best else ""
                cells = [f"{m[s]:.3f}" for s in systems]
            lines.append(f"| {r['workload']} | " + " | ".join(cells) + f" | {ratio} |")
        lines.append("")
    lines.append("inputs:")
    lines += [f"- {r['workload']}: {r['shape']}; {r['rows']} result rows" for r in results]
    lines.append(f"\nthreads {args.threads}; {args.reps} repetitions per system in fresh "
                 "processes, alternating; medians")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="all")
    ap.add_argument("--systems", default="numakit,duckdb,polars")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sf", type=int, default=5)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--data", default=os.path.join(HERE, ".data"),
                    help="where generated inputs are kept between runs")
    ap.add_argument("--numakit", default="target/release/numakit")
    ap.add_argument("--json", help="also write the results as JSON to this file")
    args = ap.parse_args()
    every = workloads(args.sf)
    names = list(every) if args.workloads == "all" else args.workloads.split(",")
    results = []
    with tempfile.TemporaryDirectory(prefix="numakit-tables-") as tmp:
        for name in names:
            w = every[name]
            folder = os.path.join(args.data, w["data"] + (f"-sf{args.sf}" if w["data"] == "tpch" else ""))
            print(f"# {name}: preparing {folder}", file=sys.stderr, flush=True)
            files = make_data_apart(w["data"], folder, args.sf, args.seed)
            results.append(measure(name, {k: files[k] for k in w["files"]}, args, tmp))
    print(render(results, args))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
