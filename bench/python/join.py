#!/usr/bin/env python3
"""The README's Python example timed against Polars' own join.

Joins TPC-H orders and lineitem (o_orderkey = l_orderkey, every column of
both carried) held as Polars DataFrames, with numakit.join (the result
turned back into a Polars DataFrame, as the example does) and with
DataFrame.join, each repetition in a fresh process, alternating which
system goes first. In each process the tables are read from Parquet
(untimed), then the join runs twice: cold (the first in the process) and
warm (the second). Prints medians and the ratio Polars / numakit (above 1:
numakit is faster), and the processes' peak resident memory.

    bench/python/join.py --data-dir /tmp/tpch-sf1 --reps 5 --threads 2

Without --data-dir, TPC-H at --scale is generated with tpchgen-cli into a
temporary folder. Needs numakit (pip install ./crates/python), polars and
tpchgen-cli in this Python.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, os, resource, sys, time
threads = sys.argv[3]
os.environ["POLARS_MAX_THREADS"] = threads
import polars as pl
import numakit
orders = pl.read_parquet(os.path.join(sys.argv[2], "orders.parquet"))
lineitem = pl.read_parquet(os.path.join(sys.argv[2], "lineitem.parquet"))
pool = numakit.Pool(threads=int(threads))
times, rows = [], 0
for _ in range(2):
    started = time.perf_counter()
    if sys.argv[1] == "numakit":
        result = pl.from_arrow(numakit.join(orders, lineitem, left_on="o_orderkey", right_on="l_orderkey", pool=pool))
    else:
        result = orders.join(lineitem, left_on="o_orderkey", right_on="l_orderkey", how="inner")
    times.append(time.perf_counter() - started)
    rows = result.height
    del result
print(json.dumps({"cold": times[0], "warm": times[1], "rows": rows,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def generate(scale, into):
    subprocess.run(
        ["tpchgen-cli", "-s", str(scale), "--format", "parquet", "--tables", "orders,lineitem",
         "--output-dir", into], check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", help="a folder with orders.parquet and lineitem.parquet")
    parser.add_argument("--scale", type=float, default=1, help="TPC-H scale factor to generate (default 1)")
    parser.add_argument("--reps", type=int, default=5, help="fresh processes per system (default 5)")
    parser.add_argument("--threads", type=int, default=2, help="threads of both systems (default 2)")
    parser.add_argument("--json", help="write the medians here as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        data = args.data_dir
        if data is None:
            data = scratch
            generate(args.scale, data)
        runs = {"numakit": [], "polars": []}
        for rep in range(args.reps):
            order = ["numakit", "polars"] if rep % 2 == 0 else ["polars", "numakit"]
            for system in order:
                out = subprocess.run([sys.executable, "-c", CHILD, system, data, str(args.threads)],
                                     check=True, capture_output=True, text=True).stdout
                runs[system].append(json.loads(out.strip().splitlines()[-1]))
    rows = {s: {r["rows"] for r in runs[s]} for s in runs}
    if rows["numakit"] != rows["polars"]:
        sys.exit(f"the systems disagree on the result's rows: {rows}")
    summary = {}
    for system, results in runs.items():
        summary[system] = {k: statistics.median(r[k] for r in results) for k in ("cold", "warm", "peak_mib")}
    print(f"orders x lineitem on o_orderkey = l_orderkey, {rows['numakit'].pop()} rows, "
          f"{args.threads} threads, medians of {args.reps} fresh processes each")
    print(f"{'':10} {'cold s':>8} {'warm s':>8} {'peak MiB':>9}")
    for system, m in summary.items():
        print(f"{system:10} {m['cold']:8.3f} {m['warm']:8.3f} {m['peak_mib']:9.0f}")
    for phase in ("cold", "warm"):
        print(f"Polars / numakit, {phase}: {summary['polars'][phase] / summary['numakit'][phase]:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()
