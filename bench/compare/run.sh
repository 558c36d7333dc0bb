#!/usr/bin/env bash
# numakit against DuckDB and Polars, side by side on the same data.
#
# Installs DuckDB, Polars, PyArrow and NumPy from PyPI into
# bench/compare/.venv (once), builds numakit in release mode, and runs
# compare.py with any arguments given here, e.g.
#   bench/compare/run.sh --workloads join-a-scaled,groupby-1k --reps 5
# See `bench/compare/run.sh --help`. With `tables` first it runs tables.py
# instead: users' tables (TPC-H from tpchgen-cli, random keys), the whole
# process from Parquet and the in-memory operation, with peak memory:
#   bench/compare/run.sh tables --workloads tpch-q1,groupby-rand-16 --reps 3
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
    "$venv/bin/pip" install --quiet -r "$here/requirements.txt"
fi
(cd "$root" && cargo build --release --quiet -p numakit-cli)
cd "$root"
script="$here/compare.py"
if [ "${1:-}" = "tables" ]; then
    script="$here/tables.py"
    shift
fi
exec "$venv/bin/python" "$script" --numakit "$root/target/release/numakit" "$@"
