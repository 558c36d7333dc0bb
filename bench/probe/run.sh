#!/usr/bin/env bash
# numakit probe against lmbench (lat_mem_rd, bw_mem), side by side.
#
# lmbench 3 is in Debian 12's non-free archive. This script fetches its
# package into bench/probe/.lmbench (once) through a private apt state:
# the system's package sources are not changed and nothing is installed.
# It then builds numakit in release mode and runs lmbench.py with any
# arguments given here, e.g.
#   bench/probe/run.sh --reps 7 --threads 1,2
# See `bench/probe/run.sh --help`. Only Python 3's standard library is used.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tools="$here/.lmbench"
if [ ! -x "$tools/bin/lat_mem_rd" ] || [ ! -x "$tools/bin/bw_mem" ]; then
    state="$(mktemp -d)"
    trap 'rm -rf "$state"' EXIT
    suite="$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")"
    mkdir -p "$state/lists/partial" "$state/parts" "$state/archives/partial"
    printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$suite" > "$state/parts/non-free.sources"
    apt=(apt-get -qq -o Dir::State::Lists="$state/lists" -o Dir::Etc::SourceList=/dev/null
         -o Dir::Etc::SourceParts="$state/parts" -o Dir::Cache::archives="$state/archives"
         -o APT::Sandbox::User=root)
    "${apt[@]}" update
    (cd "$state" && "${apt[@]}" download lmbench)
    dpkg -x "$state"/lmbench_*.deb "$state/root"
    mkdir -p "$tools/bin"
    cp "$state"/root/usr/lib/lmbench/bin/*/lat_mem_rd "$state"/root/usr/lib/lmbench/bin/*/bw_mem "$tools/bin/"
fi
(cd "$root" && cargo build --release --quiet -p numakit-cli)
exec python3 "$here/lmbench.py" --numakit "${CARGO_TARGET_DIR:-$root/target}/release/numakit" \
    --lmbench "$tools/bin" "$@"
