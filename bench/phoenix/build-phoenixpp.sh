#!/usr/bin/env bash
# Builds a Phoenix++ 1.0 tree for bench/phoenix/run.sh.
#
#   git clone https://github.com/kozyraki/phoenix /some/where/phoenix
#   bench/phoenix/build-phoenixpp.sh /some/where/phoenix/phoenix++-1.0
#
# or, for the two builds bench/phoenix/run.sh compares against, two copies
# of one checkout (the checkout itself is left as it is):
#   bench/phoenix/build-phoenixpp.sh /some/where/phoenix/phoenix++-1.0 /opt/phoenixpp-shipped
#   bench/phoenix/build-phoenixpp.sh --native /some/where/phoenix/phoenix++-1.0 /opt/phoenixpp-native
#
# usage: build-phoenixpp.sh [--native] PHOENIX++-1.0-DIR [BUILD-DIR]
#   BUILD-DIR  copy the tree there (replacing what a previous build left)
#              and build the copy instead of the tree itself;
#   --native   add -march=native: the compiler may use every instruction
#              set of this machine's CPU (AVX2, AVX-512 where it has them).
#              Without it the build is as shipped: no -march, so x86-64's
#              baseline, SSE2.
#
# Uses the tree's own Makefiles and leaves its sources untouched. Two flags
# (three with --native) are given on make's command line (it replaces
# Defines.mk's Linux CFLAGS, which are otherwise kept as shipped: -g -Wall
# -O3 -D_LINUX_ -DMMAP_POPULATE -fstrict-aliasing):
#   -fpermissive  g++ >= 4.7 rejects the unqualified calls to members of a
#                 dependent base (start_workers in MapReduceSort) and the
#                 const-qualified calls to split() in map_reduce.h;
#   -DTIMING      the switch stddefines.h leaves commented out: each program
#                 then prints its own phase times, and "library : S" is the
#                 MapReduce time the comparison reports as "job".
# The flags used are written to BUILD-DIR/numakit-cflags, where phoenix.py
# reads them to say which build each figure comes from.
#
# It also builds tests/string_match/string_match_counting, a variant of
# string_match whose map does the work it was written for. In the shipped
# program each comparison with an encrypted word ends in a stray `;`
# (`if(!strcmp(...));`) before a dprintf that is compiled out, so nothing
# depends on the hashing and the comparisons and g++ -O3 deletes them: its
# map phase does no work at all (no strcmp call is left in the binary). The
# variant emits (word number, 1) for each match and prints the number of
# matches; everything else is the shipped file. phoenix.py uses it for
# string-match unless told `--string-match shipped`.
set -euo pipefail
usage="usage: build-phoenixpp.sh [--native] PHOENIX++-1.0-DIR [BUILD-DIR]"
native=0
if [[ "${1:-}" == --native ]]; then
    native=1
    shift
fi
src="${1:?$usage}"
if [[ $# -gt 2 ]]; then
    echo "$usage" >&2
    exit 2
fi
if [[ ! -f "$src/Defines.mk" || ! -f "$src/include/map_reduce.h" ]]; then
    echo "$src does not look like a Phoenix++ 1.0 tree (no Defines.mk, include/map_reduce.h)" >&2
    exit 2
fi
if [[ "$(uname -s)" != Linux ]]; then
    echo "only Linux builds are set up here" >&2
    exit 2
fi
dir="$src"
if [[ $# -eq 2 ]]; then
    dir="$2"
    if [[ "$(cd "$src" && pwd -P)" == "$(mkdir -p "$dir" && cd "$dir" && pwd -P)" ]]; then
        echo "BUILD-DIR must differ from the source tree" >&2
        exit 2
    fi
    # Only the files the build needs, copied fresh over the folder.
    for part in Defines.mk Makefile include src tests; do
        rm -rf "${dir:?}/$part"
        cp -R "$src/$part" "$dir/$part"
    done
fi
mkdir -p "$dir/lib"   # src/Makefile copies libphoenix.a there
make -C "$dir" clean >/dev/null 2>&1 || true
cflags="-g -Wall -O3 -D_LINUX_ -DMMAP_POPULATE -fstrict-aliasing -fpermissive -DTIMING"
if [[ $native == 1 ]]; then
    cflags="-g -Wall -O3 -march=native -D_LINUX_ -DMMAP_POPULATE -fstrict-aliasing -fpermissive -DTIMING"
fi
make -C "$dir" CFLAGS="$cflags"
sm="$dir/tests/string_match"
sed -e 's/if(!strcmp(key\([1-4]\)_final, cur_word_final));/if(!strcmp(key\1_final, cur_word_final)) emit_intermediate(out, \1, 1);/' \
    -e 's/^\( *\)CHECK_ERROR (mr.run(out) < 0);/&\n\1printf("String Match: %lu matches\\n", (unsigned long)out.size());/' \
    "$sm/string_match.cpp" > "$sm/string_match_counting.cpp"
if [[ "$(grep -c 'emit_intermediate(out, [1-4], 1)' "$sm/string_match_counting.cpp")" != 4 ]] \
    || ! grep -q 'matches' "$sm/string_match_counting.cpp"; then
    echo "string_match.cpp is not the Phoenix++ 1.0 file this script knows; no counting variant" >&2
    exit 1
fi
# shellcheck disable=SC2086  # cflags is a list of flags
g++ $cflags -I"$dir/include" -o "$sm/string_match_counting" "$sm/string_match_counting.cpp" \
    -L"$dir/lib" -lphoenix -lpthread -lrt
for prog in histogram/histogram kmeans/kmeans linear_regression/linear_regression \
    matrix_multiply/matrix_multiply pca/pca string_match/string_match \
    string_match/string_match_counting word_count/word_count; do
    test -x "$dir/tests/$prog" || { echo "tests/$prog was not built" >&2; exit 1; }
done
echo "$cflags" > "$dir/numakit-cflags"
if [[ $native == 1 ]]; then
    echo "Phoenix++ built with -march=native in $dir; run: PHOENIXPP_NATIVE_DIR=$dir bench/phoenix/run.sh"
else
    echo "Phoenix++ built in $dir; run: PHOENIXPP_DIR=$dir bench/phoenix/run.sh"
fi
