#!/usr/bin/env bash
# Reef's CQL server side by side with a real Cassandra 5.0.9 on this machine, with latte: write, point read and
# slice of 10 (../shared/benchmarks/cql), each run on Reef then on Cassandra, so both see the same machine.
# Prints one table: ops/s, p50/p99, the server's CPU-seconds per 1 000 ops, errors, and the load average before
# each run. Not part of CI (latte takes about 9 minutes to install). test/perf/README.md has the figures.
#
#   LATTE=path                latte 0.29 (default /tmp/latte/bin/latte:
#                             cargo install --locked latte-cli --version 0.29.0 --root /tmp/latte)
#   REEF=path                 the binary (default build/release/reef)
#   REEF_SMP=N                Reef's shards (default 2)
#   BENCH=dir                 the workloads and bench.sh (default ../shared/benchmarks/cql)
#   PEER=dir                  the Cassandra peer tool (default ../shared/tools/cassandra-peer); copied to
#                             build/perf/cassandra-peer and built there with mvn on first use
#   DURATION=30s              each measured run
#   WARMUP=200000             a write run of that many cycles (or a time, 10s) on each server first, not reported:
#                             warms Cassandra's JVM and gives the reads keys that exist even when a write run stalls
#   REEF_ARGS="..."           more options for the Reef node (e.g. --commitlog-directory /dev/shm/x)
#   ROUNDS=1                  how many times the three workloads are run (alternating servers each time)
#   WORKLOADS="write read slice"
#   KEEP=1                    keep the servers' data and logs (build/perf/cql_vs_cassandra)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

latte=${LATTE:-/tmp/latte/bin/latte}
reef=$(readlink -f "${REEF:-build/release/reef}")
smp=${REEF_SMP:-2}
bench=$(readlink -f "${BENCH:-../shared/benchmarks/cql}")
peer_src=$(readlink -f "${PEER:-../shared/tools/cassandra-peer}")
duration=${DURATION:-30s}
warmup=${WARMUP:-200000}
rounds=${ROUNDS:-1}
workloads=${WORKLOADS:-write read slice}
work=$root/build/perf/cql_vs_cassandra

die() { echo "cql_vs_cassandra: $*" >&2; exit 1; }
[[ -x $latte ]] || die "no latte at $latte (cargo install --locked latte-cli --version 0.29.0 --root /tmp/latte)"
[[ -x $reef ]] || die "no reef at $reef (./configure.py --mode=release && ninja -C build/release reef)"
[[ -x $bench/bench.sh ]] || die "no $bench/bench.sh"
[[ -x $peer_src/bin/peer ]] || die "no Cassandra peer tool at $peer_src"
command -v java >/dev/null && command -v mvn >/dev/null || die "java and mvn are needed (./install-dependencies.sh)"

rm -rf "$work"
mkdir -p "$work/reports"
peer=$root/build/perf/cassandra-peer
# A writable copy (../shared may be read-only); modification times kept, so the peer's rebuild check works.
mkdir -p "$peer"
(cd "$peer_src" && tar --exclude=./target -cf - .) | (cd "$peer" && tar -xf -)
chmod -R u+w "$peer"

free_ports() {
    python3 -c 'import socket,sys
s=[socket.socket() for _ in range(int(sys.argv[1]))]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))' "$1"
}
read -r r_cql r_shard r_api r_prom c_cql c_storage <<<"$(free_ports 6)"

pids=()
cleanup() {
    for p in "${pids[@]}"; do
        kill -TERM "$p" 2>/dev/null || true
    done
    for p in "${pids[@]}"; do
        while kill -0 "$p" 2>/dev/null; do sleep 0.5; done
    done
    [[ -n ${KEEP:-} ]] || rm -rf "$work/reef" "$work/cassandra"
}
trap cleanup EXIT

# wait_for LOG PATTERN SECONDS PID: the first line of LOG matching PATTERN, or failure.
wait_for() {
    local log=$1 pattern=$2 left=$3 pid=$4
    while ((left > 0)); do
        if grep -m1 -E "$pattern" "$log" 2>/dev/null; then return 0; fi
        kill -0 "$pid" 2>/dev/null || { tail -20 "$log" >&2; die "the server died (log $log)"; }
        sleep 1
        left=$((left - 1))
    done
    tail -20 "$log" >&2
    die "no '$pattern' in $log"
}

cat >"$work/reef.yaml" <<EOF
cluster_name: bench
native_transport_port: $r_cql
native_shard_aware_transport_port: $r_shard
api_port: $r_api
prometheus_port: $r_prom
EOF
"$reef" --options-file "$work/reef.yaml" --workdir "$work/reef" --smp "$smp" ${REEF_ARGS:-} >"$work/reef.log" 2>&1 &
reef_pid=$!
pids+=("$reef_pid")
PEER_LOGLEVEL=WARN "$peer/bin/peer" node --home "$work/cassandra" --port "$c_cql" --storage-port "$c_storage" \
    >"$work/cassandra.log" 2>&1 &
cass_pid=$!
pids+=("$cass_pid")
wait_for "$work/reef.log" 'ready:' 120 "$reef_pid" >/dev/null
wait_for "$work/cassandra.log" '^READY cassandra=' 600 "$cass_pid" >/dev/null
echo "Reef $("$reef" --version | head -1) (pid $reef_pid, $smp shards, CQL $r_cql); Cassandra 5.0.9 (pid $cass_pid, CQL $c_cql)"
for port in "$r_cql" "$c_cql"; do
    "$latte" --log-dir "$work/reports" schema "$bench/write.rn" "127.0.0.1:$port" >"$work/schema-$port.txt" 2>&1 ||
        { cat "$work/schema-$port.txt" >&2; die "schema on port $port failed"; }
done

# run NAME SERVER WORKLOAD [latte args]: one bench.sh run; appends a row to $work/rows.
run() {
    local name=$1 server=$2 wl=$3
    shift 3
    local pid=$reef_pid port=$r_cql
    if [[ $server == cassandra ]]; then pid=$cass_pid port=$c_cql; fi
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    PORT=$port OUTDIR=$work/reports "$bench/bench.sh" "$name" "$bench/$wl.rn" "$pid" -p 64 -t 1 "$@" \
        >"$work/reports/$name.out" 2>&1 || { cat "$work/reports/$name.out" >&2; die "$name failed"; }
    python3 - "$work/reports/$name.json" "$work/reports/$name.out" "$server" "$wl" "$load" >>"$work/rows" <<'EOF'
import json, re, sys
report, out, server, wl, load = sys.argv[1:]
r = json.load(open(report))['result']
pct = [p['value'] for p in r['cycle_latency']['percentiles']]   # min, 1, 2, 5, 10, 25, 50, 75, 90, 95, 98, 99, ...
m = re.search(r'SERVER_CPU ([0-9.]+) s over ([0-9.]+) s wall = ([0-9.]+) cores; machine busy ([0-9.]+)', open(out).read())
cpu, wall, cores, busy = (float(x) for x in m.groups())
ops = r['cycle_count']
print(f"{wl} {server} {r['cycle_throughput']['value']:.0f} {pct[6]:.2f} {pct[11]:.2f} {1000 * cpu / ops:.3f} "
      f"{cores:.2f} {busy:.2f} {r['error_count']} {ops} {load}")
EOF
}

written() {  # the keys both servers hold: every write run starts at cycle 0 and wraps at 1,000,000
    awk '$1 == "write" && $10 > n[$2] { n[$2] = $10 } END { m = 1000000; for (s in n) if (n[s] < m) m = n[s]; print m }' \
        "$work/rows" "$work/warmup"
}

if [[ $warmup != 0 && $warmup != 0s ]]; then
    run warmup-reef reef write -d "$warmup"
    run warmup-cassandra cassandra write -d "$warmup"
fi
mv "$work/rows" "$work/warmup" 2>/dev/null || : >"$work/warmup"
: >"$work/rows"
for ((round = 1; round <= rounds; round++)); do
    for wl in $workloads; do
        args=(-d "$duration")
        [[ $wl == write ]] || args+=(-P "written=$(written)")
        run "$wl-$round-reef" reef "$wl" "${args[@]}"
        run "$wl-$round-cassandra" cassandra "$wl" "${args[@]}"
    done
done

python3 - "$work/rows" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1])]
print(f"\n{'workload':<8} {'server':<10} {'ops/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'CPU-s/1k ops':>12} "
      f"{'srv cores':>9} {'busy':>5} {'errors':>6} {'load':>5}")
for i, (wl, srv, ops, p50, p99, cpk, cores, busy, err, n, load) in enumerate(rows):
    print(f"{wl:<8} {srv:<10} {float(ops):>8.0f} {p50:>7} {p99:>7} {cpk:>12} {cores:>9} {busy:>5} {err:>6} {load:>5}")
    if srv == 'cassandra' and i > 0 and rows[i - 1][0] == wl and rows[i - 1][1] == 'reef':
        r = rows[i - 1]
        print(f"{'':<8} {'Reef/Cas.':<10} {float(r[2]) / float(ops):>7.2f}x {float(r[3]) / float(p50):>6.2f}x "
              f"{float(r[4]) / float(p99):>6.2f}x {float(cpk) / float(r[5]):>9.2f}x fewer CPU-s per op")
EOF
echo "(reports and logs: $work; busy: the machine's cores in use, of 2, during the run)"
