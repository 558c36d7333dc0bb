"""numakit against DuckDB and Polars on the same data, side by side.

The data is generated here with numpy from a fixed seed and written once as
Arrow IPC files. Every system loads the same files into memory first
(untimed), then runs the same operation twice with the same number of
threads; only the operation is timed. The first run is "cold" (fresh
memory: page faults, allocator growth), the second "warm" (the steady
state of a process that has run the operation before). Each (workload,
system) pair runs in --reps fresh processes, round-robin over the
systems, and medians are reported for both.

Workloads (issue 4):
  join-a-scaled   2M dense build keys x 32M foreign-key probe rows, count
  join-a          16M x 256M (Balkesen et al. workload A), count
  groupby-<G>     SUM(value) GROUP BY key over 64M rows with G distinct keys
  sort            64M int64, ascending

Usage: bench/compare/run.sh [--workloads LIST] [--reps N] [--threads N]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

WORKLOADS = {
    "join-a-scaled": ("join", 2_000_000, 32_000_000),
    "join-a": ("join", 16_000_000, 256_000_000),
    "groupby-1k": ("groupby", 64_000_000, 1_000),
    "groupby-64k": ("groupby", 64_000_000, 64_000),
    "groupby-1m": ("groupby", 64_000_000, 1_000_000),
    "groupby-16m": ("groupby", 64_000_000, 16_000_000),
    "sort": ("sort", 64_000_000, 0),
}


def write_arrow(path, columns):
    table = pa.table(columns)
    with pa.OSFile(path, "wb") as sink:
        with ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table, max_chunksize=1 << 22)


def make_data(kind, a, b, rng, folder):
    """Writes the inputs of one workload; returns their paths."""
    if kind == "join":
        build = rng.permutation(a).astype(np.int64) + 1
        probe = rng.integers(1, a + 1, size=b, dtype=np.int64)
        r, s = os.path.join(folder, "r.arrow"), os.path.join(folder, "s.arrow")
        write_arrow(r, {"key": build, "payload": np.arange(a, dtype=np.int64)})
        write_arrow(s, {"key": probe, "payload": np.arange(b, dtype=np.int64)})
        return [r, s]
    if kind == "groupby":
        t = os.path.join(folder, "t.arrow")
        keys = rng.integers(1, b + 1, size=a, dtype=np.int64)
        values = rng.integers(-1000, 1000, size=a, dtype=np.int64)
        write_arrow(t, {"key": keys, "value": values})
        return [t]
    t = os.path.join(folder, "t.arrow")
    write_arrow(t, {"key": rng.integers(-(2**63), 2**63 - 1, size=a, dtype=np.int64)})
    return [t]


def load(path):
    with pa.memory_map(path) as source:
        return ipc.open_file(source).read_all().combine_chunks()


def run_duckdb(kind, paths, threads):
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads TO {threads}")
    con.execute("SET enable_progress_bar = false")
    names = ["r", "s"] if kind == "join" else ["t"]
    for name, path in zip(names, paths):
        arrow = load(path)
        con.register("src", arrow)
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM src")
        con.unregister("src")
        del arrow
    query = {
        "join": "SELECT count(*) FROM r JOIN s ON r.key = s.key",
        "groupby": "CREATE OR REPLACE TEMP TABLE res AS SELECT key, sum(value) AS s FROM t GROUP BY key",
        "sort": "CREATE OR REPLACE TEMP TABLE res AS SELECT key FROM t ORDER BY key",
    }[kind]
    times = []
    for _ in range(2):
        start = time.perf_counter()
        result = con.execute(query).fetchall()
        times.append(time.perf_counter() - start)
    check = result[0][0] if kind == "join" else con.execute("SELECT count(*) FROM res").fetchone()[0]
    return times, int(check)


def run_polars(kind, paths, threads):
    import polars as pl

    assert pl.thread_pool_size() == threads, "POLARS_MAX_THREADS was not honoured"
    frames = [pl.from_arrow(load(p)) for p in paths]
    times = []
    for _ in range(2):
        start = time.perf_counter()
        if kind == "join":
            r, s = frames
            check = r.lazy().join(s.lazy(), on="key", how="inner").select(pl.len()).collect().item()
        elif kind == "groupby":
            res = frames[0].group_by("key").agg(pl.col("value").sum())
            check = res.height
        else:
            res = frames[0].get_column("key").sort()
            check = res.len()
        times.append(time.perf_counter() - start)
    return times, int(check)


def run_numakit(kind, paths, threads, binary):
    base = [binary, "--json", "--quiet"]
    reps = ["--reps", "2", "--show", "0", "--threads", str(threads)]
    if kind == "join":
        cmd = base + ["join", "--left", paths[0], "--right", paths[1], "--key", "key",
                      "--algorithm", "auto", "--output", "count"] + reps
    elif kind == "groupby":
        cmd = base + ["aggregate", "--input", paths[0], "--key", "key", "--agg", "sum:value",
                      "--method", "auto", "--in-memory"] + reps
    else:
        cmd = base + ["sort", "--input", paths[0], "--key", "key"] + reps
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    return report["times"], int(report["rows"])


def one_run(system, kind, paths, threads, binary):
    """Runs one measurement in a fresh process, so that systems do not
    share memory or warm caches."""
    if system == "numakit":
        return run_numakit(kind, paths, threads, binary)
    code = (
        "import json, sys; sys.path.insert(0, %r); import compare; "
        "print('RESULT', json.dumps(compare.run_%s(%r, %r, %d)))"
        % (os.path.dirname(os.path.abspath(__file__)), system, kind, paths, threads)
    )
    env = dict(os.environ, POLARS_MAX_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env).stdout
    line = [l for l in out.splitlines() if l.startswith("RESULT ")][-1]
    times, check = json.loads(line[len("RESULT "):])
    return times, check


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="join-a-scaled,groupby-1k,groupby-64k,groupby-1m,groupby-16m,sort,join-a")
    ap.add_argument("--systems", default="numakit,duckdb,polars")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--numakit", default="target/release/numakit")
    ap.add_argument("--json", help="also write the results as JSON to this file")
    args = ap.parse_args()
    systems = args.systems.split(",")
    rng = np.random.default_rng(args.seed)
    rows = []
    for name in args.workloads.split(","):
        kind, a, b = WORKLOADS[name]
        with tempfile.TemporaryDirectory(prefix="numakit-compare-") as folder:
            print(f"# {name}: generating", file=sys.stderr, flush=True)
            paths = make_data(kind, a, b, rng, folder)
            cold = {s: [] for s in systems}
            warm = {s: [] for s in systems}
            checks = {}
            for rep in range(args.reps):
                order = systems[rep % len(systems):] + systems[:rep % len(systems)]
                for system in order:
                    times, check = one_run(system, kind, paths, args.threads, args.numakit)
                    cold[system].append(times[0])
                    warm[system].append(times[-1])
                    checks[system] = check
                    print(f"# {name} {system} rep {rep}: cold {times[0]:.3f} s, warm {times[-1]:.3f} s ({check})",
                          file=sys.stderr, flush=True)
            if len(set(checks.values())) != 1:
                sys.exit(f"{name}: systems disagree on the result size: {checks}")
            rows.append({
                "workload": name,
                "rows": checks[systems[0]],
                "warm_median_seconds": {s: statistics.median(t) for s, t in warm.items()},
                "cold_median_seconds": {s: statistics.median(t) for s, t in cold.items()},
                "warm_seconds": warm,
                "cold_seconds": cold,
            })
    print(render(rows, systems, args))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


def render(rows, systems, args):
    head = "| workload | " + " | ".join(f"{s} (s)" for s in systems) + " |"
    others = [s for s in systems if s != "numakit"]
    if "numakit" in systems and others:
        head += " numakit speed-up vs the faster |"
    lines = []
    for which in ["warm", "cold"]:
        lines += [f"{which} runs (median seconds):", "", head, "|" + " --- |" * (head.count("|") - 1)]
        for r in rows:
            med = r[f"{which}_median_seconds"]
            cells = [r["workload"]] + [f"{med[s]:.3f}" for s in systems]
            if "numakit" in systems and others:
                best = min(med[s] for s in others)
                cells.append(f"{best / med['numakit']:.2f}x")
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    lines.append(f"threads {args.threads}, {args.reps} repetitions per system, medians; seed {args.seed}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
