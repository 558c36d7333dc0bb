#!/usr/bin/env python3
"""numakit probe against lmbench, side by side on the same machine.

Latency: lmbench's `lat_mem_rd -N 5 -t SIZE 64` (every load on another page,
the pages in one random order repeated for each line of a page, its pages
first touched while the chain is linked) against `numakit probe --only
latency --chase-order page-rounds` (the same walk, the same first touch; each the median of five),
both one thread, base pages. numakit's default chase (`--chase-order
random`: every line in one random order, pages touched in address order
before) is shown beside them; it is a different walk, so it has no
"within 10%" verdict.

Bandwidth: lmbench's `bw_mem -P T SIZE rd|wr|cp` (T processes, each over its
own SIZE MB) against `numakit probe --only bandwidth --no-sweep --threads-per-node T`
over a buffer of T x SIZE MiB (each thread a SIZE MiB share): sequential read,
write and copy with plain loads and stores, copy counted once.

Each repetition runs both tools in a fresh process, alternating which goes
first; medians and the ratio numakit / lmbench are reported.
"""

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

KERNELS = {"read": "rd", "write": "wr", "copy": "cp"}
LATENCY = {"page-rounds": "latency ns, lmbench's walk", "random": "latency ns, numakit random"}
OTHER_WALK = {LATENCY["random"]}


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"lmbench.py: {' '.join(cmd)} failed: {done.stderr.strip()}")
    return done


def lmbench_latency(tools, mib):
    # lat_mem_rd prints "size_MB ns" lines on stderr, from small sizes up.
    out = run([str(tools / "lat_mem_rd"), "-N", "5", "-t", str(mib), "64"]).stderr
    lines = [l.split() for l in out.splitlines() if len(l.split()) == 2]
    return float(lines[-1][1])


def lmbench_bandwidth(tools, threads, mib, kernel):
    # bw_mem prints "size_MB MB/s" on stderr; MB = 10^6 bytes.
    out = run([str(tools / "bw_mem"), "-P", str(threads), f"{mib}m", KERNELS[kernel]]).stderr
    return float(out.split()[1]) / 1000.0


def numakit_json(numakit, args):
    out = run([str(numakit), "probe", "--json", "--quiet", *args]).stdout
    return json.loads(out)["report"]


def numakit_latency(numakit, mib, loads, order):
    r = numakit_json(numakit, ["--only", "latency", "--no-huge-pages", "--threads-per-node", "1",
                               "--chase-order", order,
                               "--latency-mib", str(mib), "--loads", str(loads), "--reps", "5"])
    return r["latency"][0][0]["ns"]


def numakit_bandwidth(numakit, threads, mib):
    r = numakit_json(numakit, ["--only", "bandwidth", "--no-sweep", "--no-cross-traffic",
                               "--threads-per-node", str(threads), "--bandwidth-mib", str(threads * mib),
                               "--reps", "1"])
    got = {k: r[k][0][0] for k in KERNELS}
    return {k: v["gbs"] for k, v in got.items()}, got["read"]["threads"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--numakit", type=Path, required=True)
    p.add_argument("--lmbench", type=Path, required=True, help="folder with lat_mem_rd and bw_mem")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--latency-mib", type=int, default=1024)
    p.add_argument("--loads", type=int, default=2_000_000)
    p.add_argument("--bandwidth-mib", type=int, default=512, help="per thread (lmbench: per process)")
    p.add_argument("--threads", default="1,2", help="thread counts for bandwidth, comma separated")
    p.add_argument("--only", choices=["latency", "bandwidth"], help="measure only one of them")
    p.add_argument("--json", type=Path, help="also write the medians as JSON")
    a = p.parse_args()
    threads = [int(t) for t in a.threads.split(",") if t]
    if a.reps < 1 or not threads or min(threads) < 1:
        sys.exit("lmbench.py: --reps and every thread count must be at least 1")

    samples = {}  # (metric) -> {"numakit": [...], "lmbench": [...]}

    def add(metric, system, value):
        samples.setdefault(metric, {"numakit": [], "lmbench": []})[system].append(value)

    for rep in range(a.reps):
        order = ["numakit", "lmbench"] if rep % 2 == 0 else ["lmbench", "numakit"]
        for system in order if a.only != "bandwidth" else []:
            if system == "numakit":
                for chase, metric in LATENCY.items():
                    add(metric, "numakit", numakit_latency(a.numakit, a.latency_mib, a.loads, chase))
            else:
                ns = lmbench_latency(a.lmbench, a.latency_mib)
                for metric in LATENCY.values():
                    add(metric, "lmbench", ns)
        for t in threads if a.only != "latency" else []:
            for system in order:
                if system == "numakit":
                    gbs, used = numakit_bandwidth(a.numakit, t, a.bandwidth_mib)
                    if used != t:
                        sys.exit(f"lmbench.py: numakit ran {used} threads, not {t} (fewer CPUs on the node?)")
                    for k, v in gbs.items():
                        add(f"{k} GB/s, {t} thread(s)", "numakit", v)
                else:
                    for k in KERNELS:
                        add(f"{k} GB/s, {t} thread(s)", "lmbench", lmbench_bandwidth(a.lmbench, t, a.bandwidth_mib, k))
        print(f"repetition {rep + 1}/{a.reps} done", file=sys.stderr)

    rows = []
    for metric, by in samples.items():
        n, l = statistics.median(by["numakit"]), statistics.median(by["lmbench"])
        rows.append({"metric": metric, "numakit": n, "lmbench": l, "ratio": n / l,
                     "numakit_runs": by["numakit"], "lmbench_runs": by["lmbench"]})
    print(f"numakit probe vs lmbench, medians of {a.reps} alternating runs "
          f"(latency over {a.latency_mib} MiB, bandwidth over {a.bandwidth_mib} MiB per thread)")
    print(f"{'metric':30} {'numakit':>10} {'lmbench':>10} {'ratio':>7}  within 10%")
    for r in rows:
        ok = "yes" if abs(r["ratio"] - 1) <= 0.10 else "NO"
        if r["metric"] in OTHER_WALK:
            ok = "(another walk)"
        print(f"{r['metric']:30} {r['numakit']:10.2f} {r['lmbench']:10.2f} {r['ratio']:7.3f}  {ok}")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
