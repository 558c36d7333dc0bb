#!/usr/bin/env bash
# numakit against DuckDB and Polars, side by side on the same data.
#
# Installs DuckDB, Polars, PyArrow and NumPy from PyPI into
# bench/compare/.venv (once), builds numakit in release mode, and runs
# compare.py with any arguments given here, e.g.
#   bench/compare/run.sh --workloads join-a-scaled,groupby-1k --reps 5
# See `bench/compare/run.sh --help`.
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
exec "$venv/bin/python" "$here/compare.py" --numakit "$root/target/release/numakit" "$@"
