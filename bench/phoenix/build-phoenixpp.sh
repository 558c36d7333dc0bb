#!/usr/bin/env bash
# Builds a Phoenix++ 1.0 tree for bench/phoenix/run.sh.
#
#   git clone https://github.com/kozyraki/phoenix /some/where/phoenix
#   bench/phoenix/build-phoenixpp.sh /some/where/phoenix/phoenix++-1.0
#
# Uses the tree's own Makefiles and leaves its sources untouched. Two flags
# are given on make's command line (it replaces Defines.mk's Linux CFLAGS,
# which are otherwise kept as shipped: -g -Wall -O3 -D_LINUX_ -DMMAP_POPULATE
# -fstrict-aliasing):
#   -fpermissive  g++ >= 4.7 rejects the unqualified calls to members of a
#                 dependent base (start_workers in MapReduceSort) and the
#                 const-qualified calls to split() in map_reduce.h;
#   -DTIMING      the switch stddefines.h leaves commented out: each program
#                 then prints its own phase times, and "library : S" is the
#                 MapReduce time the comparison reports as "job".
set -euo pipefail
dir="${1:?usage: build-phoenixpp.sh PHOENIX++-1.0-DIR}"
if [[ ! -f "$dir/Defines.mk" || ! -f "$dir/include/map_reduce.h" ]]; then
    echo "$dir does not look like a Phoenix++ 1.0 tree (no Defines.mk, include/map_reduce.h)" >&2
    exit 2
fi
if [[ "$(uname -s)" != Linux ]]; then
    echo "only Linux builds are set up here" >&2
    exit 2
fi
mkdir -p "$dir/lib"   # src/Makefile copies libphoenix.a there
make -C "$dir" clean >/dev/null 2>&1 || true
make -C "$dir" CFLAGS="-g -Wall -O3 -D_LINUX_ -DMMAP_POPULATE -fstrict-aliasing -fpermissive -DTIMING"
for app in histogram kmeans linear_regression matrix_multiply pca string_match word_count; do
    test -x "$dir/tests/$app/$app" || { echo "tests/$app/$app was not built" >&2; exit 1; }
done
echo "Phoenix++ built in $dir; run: PHOENIXPP_DIR=$dir bench/phoenix/run.sh"
