#!/usr/bin/python3
"""gocql as ScyllaDB's fork (github.com/scylladb/gocql v1.14.4: the `replace` in test/drivers/gocql/go.mod, pinned
by go.sum; the newest release Debian's Go 1.19 builds) against a `reef --smp 3` node on free loopback ports: `go
build` of test/drivers/gocql into build/gocql-workload (modules through the Go proxy, cached in the Go module
cache), then the workload: DDL, the table read back through the driver's schema metadata, prepared inserts of lists
and maps, prepared single-partition selects, a logged batch with an UPDATE, a paged select (pages of 37, resumed by
paging state) equal to the model, one partition in clustering order, and the two errors the driver maps to its
RequestError codes (invalid 0x2200 naming the column, syntax 0x2000).

Shard awareness, shown by the workload: gocql reads the SCYLLA_* keys of SUPPORTED and keeps a connection per
shard, those it opens to native_shard_aware_transport_port on the shard their source port names (port mod 3, read
back from each connection's SUPPORTED); its token-routed prepared inserts and selects leave the node's
scylla_storage_proxy_replica_cross_shard_ops unchanged and each shard serves at least the statements it owns (the
owner computed from the node's token() of each key); the same selects routed by another shard's key move the
counter by exactly one each. The node stops with SIGTERM and exits 0. Without Go (/usr/local/go/bin/go or go on
PATH) it is skipped (a failure under CI=true)."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

from suite_util import check, reef_node, run_client

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
BUILD = os.environ.get('REEF_BUILD_DIR', os.path.join(ROOT, 'build', 'dev'))
REEF = os.path.abspath(os.path.join(BUILD, 'reef'))
SOURCE = os.path.join(ROOT, 'test', 'drivers', 'gocql')
BINARY = os.path.join(ROOT, 'build', 'gocql-workload')
SHARDS = 3
START_TIMEOUT = 60
STOP_TIMEOUT = 30


def unavailable(why):
    if os.environ.get('CI') == 'true':
        print(f'FAIL: {why}, and CI=true; run ./dev.sh test (it installs it)')
        sys.exit(1)
    print(f'skipped: {why}')
    sys.exit(0)


def go_build():
    go = shutil.which('go') or ('/usr/local/go/bin/go' if os.access('/usr/local/go/bin/go', os.X_OK) else None)
    if not go:
        unavailable('no Go toolchain (go on PATH or /usr/local/go/bin/go)')
    t0 = time.monotonic()
    env = dict(os.environ, GOFLAGS='-mod=readonly')
    r = subprocess.run([go, 'build', '-o', BINARY, '.'], cwd=SOURCE, env=env, capture_output=True, text=True,
                       timeout=1200)
    check(r.returncode == 0, f'go build in {SOURCE}: exit {r.returncode}\n{r.stdout}\n{r.stderr}')
    print(f'go build: {BINARY} in {time.monotonic() - t0:.1f} s')


def main():
    go_build()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix='reef-gocql-', dir='/var/tmp') as tmp:
        with reef_node(REEF, tmp, smp=SHARDS, memory='768M') as node:
            node.start(START_TIMEOUT)
            run_client([BINARY, '-port', str(node.cql), '-aware-port', str(node.aware), '-prom', str(node.prom),
                        '-shards', str(SHARDS)], 'gocql workload: ok', 'gocql workload')
            node.stop(STOP_TIMEOUT)
    print(f'cql_gocql: all checks passed in {time.monotonic() - t0:.1f} s (build excluded)')


if __name__ == '__main__':
    try:
        main()
    except AssertionError as e:
        print(f'FAILED: {e}', file=sys.stderr)
        sys.exit(1)
