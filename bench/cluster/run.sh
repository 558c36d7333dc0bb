#!/bin/sh
# The distributed join's measurements for the README, side by side:
#  1. on loopback: ring order against all at once (alternating, medians),
#     and the speedup of P = 1..4 processes over one;
#  2. across network namespaces with every link shaped to 1 Gbit/s (the
#     test in crates/cli/tests/cluster_netns.rs, run as root with the
#     release binary): ring against all at once, alternating, each run's
#     per-process table and system span.
# Usage: bench/cluster/run.sh [REPS] (default 5). Needs root for part 2.
set -eu
reps=${1:-5}
cd "$(dirname "$0")/../.."
cargo build --release -p numakit-cli
bin=${CARGO_TARGET_DIR:-target}/release/numakit
echo "== loopback, 4 processes, 2M x 8M rows, ring vs all-at-once, $reps runs each"
"$bin" cluster join --local 4 --rows-r 2M --rows-s 8M --order ring,all-at-once --reps "$reps" --verify
echo "== loopback, speedup of P = 1..4 over one process"
"$bin" cluster join --local 4 --rows-r 2M --rows-s 8M --sweep --reps "$reps"
for p in 4 2; do
    i=0
    while [ "$i" -lt "$reps" ]; do
        for order in ring all-at-once; do
            echo "== network namespaces, $p processes, 1 Gbit/s links, $order, run $((i + 1))"
            NUMAKIT_NETNS_BIN="$bin" NUMAKIT_NETNS_ROWS=2M NUMAKIT_NETNS_ORDER=$order NUMAKIT_NETNS_PROCESSES=$p \
                cargo test -q --release -p numakit-cli --test cluster_netns -- --nocapture 2>&1 |
                grep -E '^(process|[0-9] |system)'
        done
        i=$((i + 1))
    done
done
