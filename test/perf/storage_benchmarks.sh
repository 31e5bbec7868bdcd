#!/usr/bin/env bash
# The storage benchmarks, one after another, each printing its own table: what `./dev.sh run` runs with no
# arguments. Every figure is measured here and now, side by side with its baseline (RocksDB, or the cold cache).
#
#   REEF=path/to/reef         the binary (default build/release/reef; dev.sh builds it)
#   REEF_BENCH_DIR=DIR        where perf-fast-forward's datasets live (default /var/tmp/reef-bench; written once,
#                             about 250 MB on disk, reused by later runs)
#   REEF_BENCH_QUICK=1        smaller runs (100,000 rows; for a smoke test of this script, not for figures)
set -euo pipefail
cd "$(dirname "$0")/../.."

reef=${REEF:-build/release/reef}
dir=${REEF_BENCH_DIR:-/var/tmp/reef-bench}
quick=${REEF_BENCH_QUICK:-}

rows=1000000
runs=3
pff_duration=1
if [[ -n "$quick" ]]; then
    rows=100000
    runs=1
    pff_duration=0.1
fi

# Peak RSS of one command, from /usr/bin/time (installed by install-dependencies.sh).
peak_rss() {
    local what=$1
    shift
    local out
    out=$(mktemp)
    /usr/bin/time -f '%M' -o "$out" "$@" >/dev/null
    printf '%-40s %8d MiB\n' "$what" $(($(tail -n 1 "$out") / 1024))
    rm -f "$out"
}

section() {
    printf '\n==== %s\n\n' "$*"
}

section "reef perf-sstable-scan: full scans of one sstable from memory, against RocksDB"
"$reef" perf-sstable-scan --rows "$rows" --runs $((runs * 2 + 1))

section "reef perf-delete-range: RocksDB's DeleteRange workload on Reef and on RocksDB, run by run"
"$reef" perf-delete-range --engine both --variant range --rows "$rows" --runs "$runs"

section "peak RSS of perf-delete-range, one engine at a time (/usr/bin/time)"
peak_rss "perf-delete-range --engine reef" "$reef" perf-delete-range --engine reef --variant range --rows "$rows"
peak_rss "perf-delete-range --engine rocksdb" "$reef" perf-delete-range --engine rocksdb --variant range --rows "$rows"

pff="$dir/pff-$rows"
if [[ ! -f "$pff/perf_fast_forward.conf" ]]; then
    section "reef perf-fast-forward --populate into $pff (once)"
    mkdir -p "$pff"
    "$reef" perf-fast-forward --populate --rows "$rows" --data-directory "$pff"
fi

section "reef perf-fast-forward: every test group, cold index caches (then its peak RSS)"
/usr/bin/time -f 'perf-fast-forward peak RSS: %M KiB' \
    "$reef" perf-fast-forward --data-directory "$pff" --test-case-duration "$pff_duration"

section "reef perf-fast-forward: large-partition-slicing, warm index caches"
"$reef" perf-fast-forward --data-directory "$pff" --test-case-duration "$pff_duration" \
    --keep-cache-across-test-cases --run-tests large-partition-slicing

section "reef perf-fast-forward: the single-key slices with the row cache (the second read of each pair does no I/O)"
/usr/bin/time -f 'perf-fast-forward --enable-cache peak RSS: %M KiB' \
    "$reef" perf-fast-forward --data-directory "$pff" --test-case-duration "$pff_duration" --enable-cache \
    --run-tests large-partition-single-key-slice
