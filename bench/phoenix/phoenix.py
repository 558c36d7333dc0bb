"""numakit's MapReduce against Phoenix++ 1.0, side by side on the same inputs.

The seven applications of the Phoenix papers run in both systems with the
same thread count. Inputs the programs read from files (word count, histogram,
linear regression, string match) are generated ONCE with
`numakit mapreduce <app> --generate FILE` and read by both systems. Kmeans
and PCA generate their data inside each program from the same parameters;
matrix multiply reads two matrix files in Phoenix++ (created once, untimed:
by Phoenix++ itself for the phoenix range, by `numakit mapreduce
matrix-multiply --generate` for the others) and generates its matrices
inside numakit.

Two Phoenix++ builds can be compared at once (build-phoenixpp.sh makes
both): `phoenixpp`, built as shipped (no -march: x86-64's baseline, SSE2),
from PHOENIXPP_DIR or --phoenixpp, and `phoenixpp-native`, built with
-O3 -march=native (AVX2, and AVX-512 where the CPU has it), from
PHOENIXPP_NATIVE_DIR or --phoenixpp-native. --systems says which run; by
default both builds whose folder is given, and numakit. numakit picks its
instruction set at run time (AVX2 where the CPU has it); its report names
the kernel that ran ("kernel" in the JSON summary of the numeric apps).

The numeric applications (kmeans, pca, matrix-multiply) run over each
value range of --value-ranges:
  phoenix  the originals' own: rand() % 1000 (kmeans), % 100 (pca),
           % 11 (matrix-multiply); small enough for numakit's 16-bit
           multiply-adds;
  wide     past 16 bits, which takes numakit onto its 32- and 64-bit
           kernels: for pca and matrix-multiply the full range,
           rand() % 2147483647 (`--value-range full`; Phoenix++'s pca gets
           `-s 2147483647`, its matrix-multiply reads matrix files numakit
           writes); for kmeans the widest grid whose squared distances fit
           the original's 32-bit unsigned sums, 37838 with 3 dimensions
           (`--value-range 37838`, `-s 37838`): past it both programs'
           distances wrap and their iterations need not end.
The other applications have one input and run once.

Every (app, range, threads, system) runs --warmup times unmeasured, then
--reps times, each in a fresh process, alternating which system goes first. Two times are kept:

  wall  the whole process, fork to exit (input load, generation of kmeans/
        PCA data, the MapReduce job, output), measured here;
  job   the MapReduce work alone as each program reports it: Phoenix++'s
        "library" line (printed when it is built with -DTIMING, as
        build-phoenixpp.sh does) and numakit's JSON "times".

Medians are printed with the ratios numakit / Phoenix++, one per build
(below 1: numakit is faster).

String match: the shipped Phoenix++ string_match does no work when built
with a modern g++ -O3 (its comparisons end in a stray `;`, nothing depends on
them, and they are deleted), so by default the comparison runs
string_match_counting, the variant build-phoenixpp.sh builds whose map
emits each match; `--string-match shipped` measures the shipped program. Usage: bench/phoenix/run.sh [--apps LIST] [--threads 1,2] [--reps N]
[--systems phoenixpp,phoenixpp-native,numakit] [--value-ranges phoenix,wide]
[--data-dir DIR] [--small] [--json FILE]
"""

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

# Reference parameters (issue 5). `file`: the input file both systems read;
# `gen`: numakit generator options; `pp`: Phoenix++ arguments after the
# program (FILE stands for the input path); `nk`: numakit run options.
REFERENCE = {
    "word-count": dict(file="word_count.txt", gen=["--size-mib", "100"], pp=["FILE"]),
    "histogram": dict(file="histogram.bmp", gen=["--size-mib", "400"], pp=["FILE"]),
    "linear-regression": dict(file="linear_regression.bin", gen=["--size-mib", "400"], pp=["FILE"]),
    "string-match": dict(file="string_match.txt", gen=["--size-mib", "100"], pp=["FILE"]),
    "kmeans": dict(pp=["-p", "500000", "-c", "100", "-d", "3"],
                   nk=["--points", "500000", "--clusters", "100", "--dims", "3"]),
    "pca": dict(pp=["-r", "1000", "-c", "1000"], nk=["--rows", "1000", "--cols", "1000"]),
    "matrix-multiply": dict(pp=["1000", "1"], nk=["--size", "1000"], matrix=1000),
}

# Small parameters for a quick check of the script itself (--small).
SMALL = {
    "word-count": dict(file="word_count.small.txt", gen=["--size-mib", "4"], pp=["FILE"]),
    "histogram": dict(file="histogram.small.bmp", gen=["--size-mib", "4"], pp=["FILE"]),
    "linear-regression": dict(file="linear_regression.small.bin", gen=["--size-mib", "4"], pp=["FILE"]),
    "string-match": dict(file="string_match.small.txt", gen=["--size-mib", "4"], pp=["FILE"]),
    "kmeans": dict(pp=["-p", "20000", "-c", "10", "-d", "3"],
                   nk=["--points", "20000", "--clusters", "10", "--dims", "3"]),
    "pca": dict(pp=["-r", "100", "-c", "100"], nk=["--rows", "100", "--cols", "100"]),
    "matrix-multiply": dict(pp=["100", "1"], nk=["--size", "100"], matrix=100),
}

# The numeric applications' value ranges: extra Phoenix++ and numakit
# arguments per range (matrix multiply's Phoenix++ reads files instead).
RANGES = ("phoenix", "wide")


def range_args(app, params, value_range):
    """(Phoenix++ arguments, numakit arguments) for a numeric app's range."""
    if value_range == "phoenix":
        return [], []
    if app == "kmeans":
        dims = int(params["nk"][params["nk"].index("--dims") + 1])
        grid = str(math.isqrt((2**32 - 1) // dims) + 1)
        return ["-s", grid], ["--value-range", grid]
    return ["-s", "2147483647"], ["--value-range", "full"]
NUMERIC = ("kmeans", "pca", "matrix-multiply")

# The Phoenix++ builds: system name -> (environment variable, option).
BUILDS = {"phoenixpp": "PHOENIXPP_DIR", "phoenixpp-native": "PHOENIXPP_NATIVE_DIR"}

PROGRAM = {
    "word-count": "word_count",
    "histogram": "histogram",
    "linear-regression": "linear_regression",
    "string-match": "string_match",
    "kmeans": "kmeans",
    "pca": "pca",
    "matrix-multiply": "matrix_multiply",
}

HOW_TO_GET_PHOENIXPP = """\
PHOENIXPP_DIR must name a built Phoenix++ 1.0 tree (the folder holding
Defines.mk, include/, src/ and tests/). To get and build one:

  git clone https://github.com/kozyraki/phoenix /some/where/phoenix
  bench/phoenix/build-phoenixpp.sh /some/where/phoenix/phoenix++-1.0
  PHOENIXPP_DIR=/some/where/phoenix/phoenix++-1.0 bench/phoenix/run.sh

and PHOENIXPP_NATIVE_DIR a second build with -O3 -march=native:

  bench/phoenix/build-phoenixpp.sh /some/where/phoenix/phoenix++-1.0 /tmp/pp-shipped
  bench/phoenix/build-phoenixpp.sh --native /some/where/phoenix/phoenix++-1.0 /tmp/pp-native
  PHOENIXPP_DIR=/tmp/pp-shipped PHOENIXPP_NATIVE_DIR=/tmp/pp-native bench/phoenix/run.sh

build-phoenixpp.sh builds with the Makefiles as shipped, adding only
-fpermissive (needed by g++ >= 4.7) and -DTIMING (so that each program
prints its own MapReduce time), with --native also -march=native, and
builds string_match_counting beside string_match; the shipped sources are
left untouched."""


class Failure(Exception):
    """A run that did not complete; the message says which and why."""


def run_timed(cmd, cwd, env, timeout):
    """Runs one fresh process; returns (wall seconds, stdout, stderr,
    rusage of that child). Output goes through files so that the child's
    own resource usage can be collected with wait4."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err)
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        killer.cancel()
        if wall >= timeout:
            raise Failure(f"{' '.join(cmd)}: no result after {timeout} s")
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    if proc.returncode != 0:
        raise Failure(f"{' '.join(cmd)} exited with {proc.returncode}:\n{stdout[-2000:]}{stderr[-2000:]}")
    return wall, stdout, stderr, usage


def phoenixpp_summary(app, stdout):
    """The result figures Phoenix++ prints, for the record and for checking
    that every repetition computed the same thing."""
    s = {}
    if app == "word-count":
        m = re.search(r"Results \(TOP \d+ of (\d+)\)", stdout)
        t = re.search(r"^Total: (\d+)", stdout, re.M)
        if m and t:
            s = {"distinct_words": int(m.group(1)), "words": int(t.group(1))}
    elif app == "histogram":
        m = re.search(r"has (\d+) bytes of image data, (\d+) pixels", stdout)
        if m:
            s = {"pixels": int(m.group(2))}
    elif app == "linear-regression":
        for key in ("SX", "SY", "SXX", "SYY", "SXY"):
            m = re.search(rf"^\t{key}\s+= (-?\d+)", stdout, re.M)
            if m:
                s[key] = int(m.group(1))
    elif app == "kmeans":
        tail = stdout.split("Final means:")[-1].splitlines()
        means = "\n".join(l.strip() for l in tail if re.fullmatch(r"\s*(-?\d+\s*)+", l))
        s = {"means_sha1": hashlib.sha1(means.encode()).hexdigest()[:12]}
    elif app == "string-match":
        m = re.search(r"String Match: (\d+) matches", stdout)
        if m:
            s = {"matches": int(m.group(1))}
    elif app == "pca":
        m = re.search(r"Covariance sum: (-?\d+)", stdout)
        if m:
            s = {"covariance_sum": int(m.group(1))}
    elif app == "matrix-multiply":
        m = re.search(r"total sum is (-?\d+)", stdout)
        if m:
            s = {"total_sum": int(m.group(1))}
    return s


def phoenixpp_program(ppdir, app, string_match):
    name = PROGRAM[app]
    if app == "string-match" and string_match == "counting":
        return os.path.join(ppdir, "tests", name, "string_match_counting")
    return os.path.join(ppdir, "tests", name, name)


def matrix_folder(data_dir, params, value_range):
    suffix = "" if value_range == "phoenix" else f"-{value_range}"
    return os.path.join(data_dir, f"matrices-{params['matrix']}{suffix}")


def run_phoenixpp(system, app, params, value_range, threads, args, data_dir):
    program = phoenixpp_program(args.builds[system], app, args.string_match)
    argv = [os.path.join(data_dir, params["file"]) if a == "FILE" else a for a in params["pp"]]
    if app in ("kmeans", "pca"):
        argv += range_args(app, params, value_range)[0]
    cwd = matrix_folder(data_dir, params, value_range) if "matrix" in params else data_dir
    env = dict(os.environ, MR_NUMTHREADS=str(threads))
    env.pop("MAPRED_NPROCESSORS", None)
    wall, stdout, _, usage = run_timed([program] + argv, cwd, env, args.timeout)
    job = re.search(r"^library : ([\d.]+)$", stdout, re.M)
    result = {"wall": wall, "job": float(job.group(1)) if job else None,
              "cpu": usage.ru_utime + usage.ru_stime, "max_rss_mib": usage.ru_maxrss / 1024,
              "summary": phoenixpp_summary(app, stdout)}
    if app == "kmeans" and job:
        # with -DTIMING every MapReduce run prints one "run time" line
        result["iterations"] = len(re.findall(r"^run time : ", stdout, re.M))
    return result


def find_key(report, key):
    """The first value stored under `key` anywhere in a JSON document."""
    if isinstance(report, dict):
        if key in report:
            return report[key]
        children = report.values()
    elif isinstance(report, list):
        children = report
    else:
        return None
    for child in children:
        found = find_key(child, key)
        if found is not None:
            return found
    return None


def run_numakit(app, params, value_range, threads, binary, data_dir, timeout):
    cmd = [binary, "mapreduce", app, "--threads", str(threads), "--reps", "1", "--json", "--quiet"]
    if "file" in params:
        cmd += ["--input", os.path.join(data_dir, params["file"])]
    cmd += params.get("nk", [])
    if app in NUMERIC:
        cmd += range_args(app, params, value_range)[1]
    wall, stdout, _, usage = run_timed(cmd, data_dir, dict(os.environ), timeout)
    try:
        report = json.loads(stdout)
    except json.JSONDecodeError as e:
        raise Failure(f"{' '.join(cmd)}: output is not JSON ({e}): {stdout[:300]}")
    times = find_key(report, "times")
    job = times[0] if isinstance(times, list) and times else None
    result = {"wall": wall, "job": job, "cpu": usage.ru_utime + usage.ru_stime,
              "max_rss_mib": usage.ru_maxrss / 1024}
    iterations = find_key(report, "iterations")
    if iterations is not None:
        result["iterations"] = iterations
    summary = find_key(report, "summary")
    if summary is not None:
        result["summary"] = summary
    return result


def prepare_inputs(apps, table, systems, ranges, binary, ppdir, data_dir, seed, timeout):
    """Generates each input file once (kept if already there) and, for
    Phoenix++'s matrix multiply, its two matrix files per value range."""
    for app in apps:
        params = table[app]
        if "file" in params:
            path = os.path.join(data_dir, params["file"])
            if not os.path.exists(path):
                if not binary:
                    raise Failure(f"{path} is missing and no numakit binary was given to generate it")
                print(f"# {app}: generating {path}", file=sys.stderr, flush=True)
                partial = f"{path}.partial"  # an interrupted run leaves no input that looks whole
                cmd = [binary, "mapreduce", app, "--generate", partial, "--seed", str(seed), "--quiet"]
                run_timed(cmd + params["gen"], data_dir, dict(os.environ), timeout)
                os.replace(partial, path)
        if "matrix" in params and any(s in BUILDS for s in systems):
            for value_range in ranges:
                if value_range != "phoenix":
                    prepare_matrices(params, value_range, binary, data_dir, timeout)
            if "phoenix" not in ranges:
                continue
            n = params["matrix"]
            folder = matrix_folder(data_dir, params, "phoenix")
            files = [os.path.join(folder, f"matrix_file_{m}.txt") for m in "AB"]
            if not all(os.path.exists(f) and os.path.getsize(f) == n * n * 4 for f in files):
                os.makedirs(folder, exist_ok=True)
                for f in files:  # Phoenix++ opens them without O_TRUNC
                    if os.path.exists(f):
                        os.remove(f)
                print(f"# {app}: Phoenix++ writes its matrix files in {folder}", file=sys.stderr, flush=True)
                program = os.path.join(ppdir, "tests", "matrix_multiply", "matrix_multiply")
                run_timed([program, str(params["matrix"]), "1", "1"], folder,
                          dict(os.environ, MR_NUMTHREADS="1"), timeout)


def prepare_matrices(params, value_range, binary, data_dir, timeout):
    """Matrix files of a value range other than Phoenix++'s own, written by
    numakit from seed 1: the matrices numakit generates for itself."""
    n = params["matrix"]
    folder = matrix_folder(data_dir, params, value_range)
    files = [os.path.join(folder, f"matrix_file_{m}.txt") for m in "AB"]
    if all(os.path.exists(f) and os.path.getsize(f) == n * n * 4 for f in files):
        return
    if not binary:
        raise Failure(f"{folder} is missing and no numakit binary was given to write it")
    print(f"# matrix-multiply: numakit writes {value_range}-range matrix files in {folder}",
          file=sys.stderr, flush=True)
    os.makedirs(folder, exist_ok=True)
    cmd = [binary, "mapreduce", "matrix-multiply", "--generate", folder, "--size", str(n),
           "--seed", "1", "--quiet"] + range_args("matrix-multiply", params, value_range)[1]
    run_timed(cmd, data_dir, dict(os.environ), timeout)


def describe_input(params, data_dir):
    if "file" in params:
        size = os.path.getsize(os.path.join(data_dir, params["file"]))
        return f"{params['file']} ({size / (1 << 20):.1f} MiB)"
    options = params.get("nk", [])
    return " ".join(f"{k.lstrip('-')}={v}" for k, v in zip(options[::2], options[1::2]))


def median_of(runs, field):
    values = [r[field] for r in runs if r.get(field) is not None]
    return statistics.median(values) if values else None


def run_one(system, app, params, value_range, threads, args, data_dir):
    if system in BUILDS:
        return run_phoenixpp(system, app, params, value_range, threads, args, data_dir)
    return run_numakit(app, params, value_range, threads, args.numakit, data_dir, args.timeout)


def build_flags(ppdir):
    """The flags build-phoenixpp.sh recorded for a build, or None."""
    try:
        with open(os.path.join(ppdir, "numakit-cflags")) as f:
            return f.read().strip()
    except OSError:
        return None


def measure(app, params, value_range, threads, systems, args, data_dir):
    # Unmeasured runs first: the first process to read an input here is often
    # several times slower (page cache, memory the VM gave back), whichever
    # system it is.
    for _ in range(args.warmup):
        for system in systems:
            run_one(system, app, params, value_range, threads, args, data_dir)
    runs = {s: [] for s in systems}
    for rep in range(args.reps):
        order = systems[rep % len(systems):] + systems[:rep % len(systems)]
        for system in order:
            r = run_one(system, app, params, value_range, threads, args, data_dir)
            runs[system].append(r)
            job = f"{r['job']:.3f}" if r["job"] is not None else "-"
            print(f"# {app} {value_range} t={threads} {system} rep {rep}: wall {r['wall']:.3f} s, job {job} s"
                  + (f", {r['iterations']} iterations" if "iterations" in r else ""),
                  file=sys.stderr, flush=True)
    row = {"app": app, "range": value_range if app in NUMERIC else None, "threads": threads,
           "input": describe_input(params, data_dir)}
    for system in systems:
        if system in BUILDS:
            ppdir = args.builds[system]
            row[f"{system}_program"] = os.path.relpath(
                phoenixpp_program(ppdir, app, args.string_match), ppdir)
            row[f"{system}_cflags"] = build_flags(ppdir)
    for system, rs in runs.items():
        summaries = {json.dumps(r.get("summary"), sort_keys=True) for r in rs}
        if len(summaries) > 1:
            print(f"# WARNING {app} {system}: repetitions disagree: {summaries}", file=sys.stderr)
        row[system] = {
            "median_wall": median_of(rs, "wall"),
            "median_job": median_of(rs, "job"),
            "median_cpu": median_of(rs, "cpu"),
            "wall": [r["wall"] for r in rs],
            "job": [r["job"] for r in rs],
            "max_rss_mib": max(r["max_rss_mib"] for r in rs),
            "summary": rs[-1].get("summary"),
        }
        if "iterations" in rs[-1]:
            row[system]["iterations"] = rs[-1]["iterations"]
    for build in (s for s in BUILDS if s in runs):
        if "numakit" not in runs:
            break
        # ratio_job: against the shipped build; ratio_job_native: against -march=native
        suffix = "" if build == "phoenixpp" else "_native"
        for field in ("wall", "job"):
            p, n = row[build][f"median_{field}"], row["numakit"][f"median_{field}"]
            row[f"ratio_{field}{suffix}"] = n / p if p and n is not None else None
        its = {s: row[s].get("iterations") for s in (build, "numakit")}
        if all(its.values()) and row[f"ratio_job{suffix}"] is not None:
            # kmeans iterates until no point moves: different data, different counts
            row[f"ratio_job_per_iteration{suffix}"] = (
                row[f"ratio_job{suffix}"] * its[build] / its["numakit"])
    return row


def fmt(value, digits=3):
    return "-" if value is None else f"{value:.{digits}f}"


SHORT = {"phoenixpp": "pp", "phoenixpp-native": "pp-native", "numakit": "nk"}


def print_table(rows, systems, out):
    ratios = [(b, "" if b == "phoenixpp" else "_native") for b in BUILDS
              if b in systems and "numakit" in systems]
    head = f"{'app':<18} {'range':<7} {'t':>2} {'input':<30}"
    for s in systems:
        head += f" {SHORT[s] + ' wall':>14} {SHORT[s] + ' job':>13}"
    for b, suffix in ratios:
        head += f" {'nk/' + SHORT[b] + ' wall':>17} {'nk/' + SHORT[b] + ' job':>16}"
    print(head, file=out)
    print("-" * len(head), file=out)
    for r in rows:
        line = f"{r['app']:<18} {r.get('range') or '-':<7} {r['threads']:>2} {r['input'][:30]:<30}"
        for s in systems:
            line += f" {fmt(r[s]['median_wall']):>14} {fmt(r[s]['median_job']):>13}"
        for b, suffix in ratios:
            line += (f" {fmt(r.get('ratio_wall' + suffix), 2):>17}"
                     f" {fmt(r.get('ratio_job' + suffix), 2):>16}")
        print(line, file=out)
    print("\nmedians in seconds; wall: whole process; job: the MapReduce work as each program "
          "reports it; nk/pp: numakit / Phoenix++ as shipped, nk/pp-native: numakit / Phoenix++ "
          "-O3 -march=native (below 1: numakit faster)", file=out)
    for r in rows:
        kernel = (r.get("numakit", {}).get("summary") or {}).get("kernel")
        if kernel:
            print(f"{r['app']} {r['range']} t={r['threads']}: numakit kernel {kernel}", file=out)
        its = {s: r[s]["iterations"] for s in systems if r[s].get("iterations")}
        if its:
            per = {s: f"{r[s]['median_job'] / n:.4f} s" for s, n in its.items() if r[s]["median_job"] is not None}
            ratio = ", ".join(f"nk/{SHORT[b]} {r['ratio_job_per_iteration' + suffix]:.2f}"
                              for b, suffix in ratios
                              if r.get("ratio_job_per_iteration" + suffix) is not None)
            print(f"{r['app']} {r['range']} t={r['threads']}: iterations {its}, job per iteration {per}"
                  + (f", ratio per iteration {ratio}" if ratio else ""), file=out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--apps", default=",".join(REFERENCE))
    ap.add_argument("--systems", default=None,
                    help="comma-separated, of phoenixpp (as shipped), phoenixpp-native "
                         "(-O3 -march=native) and numakit; default: numakit and each build "
                         "whose folder is given")
    ap.add_argument("--threads", default="2", help="thread counts, comma-separated")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1, help="unmeasured runs of each system first")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--small", action="store_true", help="small inputs, to check the script")
    ap.add_argument("--data-dir", help="keep inputs here (reused when present); default: a temporary folder")
    ap.add_argument("--value-ranges", default="phoenix,wide",
                    help="value ranges of the numeric apps (phoenix, wide; see above)")
    ap.add_argument("--phoenixpp", default=os.environ.get("PHOENIXPP_DIR"),
                    help="Phoenix++ built as shipped (default: $PHOENIXPP_DIR)")
    ap.add_argument("--phoenixpp-native", default=os.environ.get("PHOENIXPP_NATIVE_DIR"),
                    help="Phoenix++ built with --native (default: $PHOENIXPP_NATIVE_DIR)")
    ap.add_argument("--numakit", default=None, help="numakit binary")
    ap.add_argument("--string-match", choices=["counting", "shipped"], default="counting",
                    help="which Phoenix++ string match program to run (see above)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per process")
    ap.add_argument("--check", action="store_true",
                    help="only check the arguments; print 'numakit' if a numakit binary is needed")
    ap.add_argument("--json", help="also write the results as JSON to this file ('-': JSON on stdout, table on stderr)")
    args = ap.parse_args()
    dirs = {"phoenixpp": args.phoenixpp, "phoenixpp-native": args.phoenixpp_native}
    if args.systems is None:
        systems = [s for s in BUILDS if dirs[s]] + ["numakit"]
        if len(systems) == 1:
            systems.insert(0, "phoenixpp")  # and say below how to get it
    else:
        systems = args.systems.split(",")
    for s in systems:
        if s not in SHORT:
            sys.exit(f"unknown system {s!r}; systems: {', '.join(SHORT)}")
    ranges = args.value_ranges.split(",")
    for v in ranges:
        if v not in RANGES:
            sys.exit(f"unknown value range {v!r}; ranges: {', '.join(RANGES)}")
    apps = args.apps.split(",")
    table = SMALL if args.small else REFERENCE
    for a in apps:
        if a not in table:
            sys.exit(f"unknown app {a!r}; apps: {', '.join(table)}")
    args.builds = {}
    for system in (s for s in systems if s in BUILDS):
        ppdir = dirs[system]
        if not ppdir or not all(
                os.access(phoenixpp_program(ppdir, a, args.string_match), os.X_OK) for a in apps):
            print(f"no built Phoenix++ programs under {BUILDS[system]}={ppdir or '(unset)'}\n\n{HOW_TO_GET_PHOENIXPP}",
                  file=sys.stderr)
            sys.exit(2)
        args.builds[system] = os.path.abspath(ppdir)
    needs_numakit = "numakit" in systems or (
        "matrix-multiply" in apps and any(v != "phoenix" for v in ranges))
    if args.check:
        if needs_numakit:
            print("numakit")
        return
    if needs_numakit and not args.numakit:
        sys.exit("--numakit BINARY is needed to run numakit (and to write matrix files)")
    data_dir = os.path.abspath(args.data_dir) if args.data_dir else tempfile.mkdtemp(prefix="numakit-phoenix-")
    os.makedirs(data_dir, exist_ok=True)
    rows = []
    try:
        prepare_inputs(apps, table, systems, ranges, args.numakit,
                       next(iter(args.builds.values()), None), data_dir, args.seed, args.timeout)
        for app in apps:
            for value_range in (ranges if app in NUMERIC else ["phoenix"]):
                for threads in [int(t) for t in args.threads.split(",")]:
                    rows.append(measure(app, table[app], value_range, threads, systems, args, data_dir))
    except Failure as e:
        sys.exit(f"error: {e}")
    finally:
        if not args.data_dir:
            shutil.rmtree(data_dir, ignore_errors=True)
    document = {"threads": args.threads, "reps": args.reps, "systems": systems,
                "value_ranges": ranges, "small": args.small,
                "cflags": {s: build_flags(d) for s, d in args.builds.items()}, "rows": rows}
    if args.json == "-":
        print_table(rows, systems, sys.stderr)
        print(json.dumps(document, indent=2))
        return
    print_table(rows, systems, sys.stdout)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(document, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
