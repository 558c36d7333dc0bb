#!/usr/bin/env bash
# numakit's MapReduce against Phoenix++ 1.0, side by side on the same inputs.
#
# Needs PHOENIXPP_DIR: a Phoenix++ 1.0 tree built with build-phoenixpp.sh
# (how to get one is printed when it is missing), and compares with a second
# build made with `build-phoenixpp.sh --native` (-O3 -march=native) too when
# PHOENIXPP_NATIVE_DIR names one. Builds numakit in release mode, generates
# the reference inputs once with `numakit mapreduce <app> --generate FILE`,
# and runs phoenix.py with any arguments given here; the numeric apps run
# over both value ranges (--value-ranges phoenix,wide), e.g.
#   PHOENIXPP_DIR=/opt/phoenix++-1.0 bench/phoenix/run.sh --reps 5 --json out.json
#   PHOENIXPP_DIR=/opt/pp-shipped PHOENIXPP_NATIVE_DIR=/opt/pp-native bench/phoenix/run.sh --threads 1,2
#   bench/phoenix/run.sh --systems phoenixpp --threads 1,2 --data-dir /tmp/ref
# See `bench/phoenix/run.sh --help`. Only Python 3's standard library is used.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# Arguments and PHOENIXPP_DIR are checked before the (slow) cargo build.
needs="$(python3 "$here/phoenix.py" --check "$@")"
numakit=()
if [[ "$needs" == numakit ]]; then
    (cd "$root" && cargo build --release --quiet -p numakit-cli)
    numakit=(--numakit "${CARGO_TARGET_DIR:-$root/target}/release/numakit")
fi
exec python3 "$here/phoenix.py" "${numakit[@]}" "$@"
