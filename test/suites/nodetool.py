#!/usr/bin/python3
"""`reef nodetool` against a `reef` node on free loopback ports (its REST API on api_port): data written over CQL
(Debian's python3-cassandra at connection level), then every command run and its output and effects checked:
version prints the node's release_version; flush makes sstables; compact leaves one per shard; snapshot then listsnapshots
shows the tag, the snapshot directory exists, clearsnapshot removes both; refresh loads sstables placed in upload/;
setlogginglevel then getlogginglevels shows the level; info, status, tablestats (and cfstats), compactionstats and
describecluster print their texts; a node's error is one line with its message, exit 1; a wrong command line exits
1 with nodetool's hint; drain stops writes; a stopped node gives "nodetool: cannot connect to ...", exit 1. Run by
test.py with REEF_BUILD_DIR (build/<mode>); the node is stopped by its pid in a finally."""
import glob
import http.client
import os
import shutil
import subprocess
import sys
import tempfile

from suite_util import check, free_ports, logged_process

BUILD = os.environ.get('REEF_BUILD_DIR', os.path.join(os.path.dirname(__file__), '..', '..', 'build', 'dev'))
REEF = os.path.abspath(os.path.join(BUILD, 'reef'))
START_TIMEOUT = 60
STOP_TIMEOUT = 30
SHARDS = 2

try:
    from cassandra import ConsistencyLevel
    from cassandra.connection import DefaultEndPoint
    from cassandra.io.asyncorereactor import AsyncoreConnection
    from cassandra.protocol import QueryMessage
except ImportError as e:
    if os.environ.get('CI') == 'true':
        print(f'FAIL: the python driver is missing ({e}); install python3-cassandra (./install-dependencies.sh)')
        sys.exit(1)
    print(f'skipped: the python driver is missing ({e}); install python3-cassandra')
    sys.exit(0)


def cql(port):
    AsyncoreConnection.initialize_reactor()
    return AsyncoreConnection.factory(DefaultEndPoint('127.0.0.1', port), 10, protocol_version=4, user_type_map={})


def query(conn, text):
    return conn.wait_for_response(QueryMessage(query=text, consistency_level=ConsistencyLevel.ONE), timeout=30)


def http_get(port, path):
    conn = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
    try:
        conn.request('GET', path)
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        conn.close()


class nodetool_runner:
    def __init__(self, port):
        self.port = port

    def __call__(self, *args, rc=0):
        out = subprocess.run([REEF, 'nodetool', '-p', str(self.port)] + list(args), capture_output=True, text=True,
                             timeout=120)
        check(out.returncode == rc, f'nodetool {" ".join(args)}: exit {out.returncode}, not {rc}:\n'
                                    f'{out.stdout}\n{out.stderr}')
        return out


def data_files(work, ks, table, sub=''):
    return glob.glob(os.path.join(work, 'data', ks, table + '-*', sub, '*-Data.db'))


def write_rows(conn, first, n):
    for i in range(first, first + n):
        query(conn, f"INSERT INTO ks.t (pk, v) VALUES ({i}, 'value {i}')")


def check_reports(nodetool, api_port):
    status, body = http_get(api_port, '/storage_service/release_version')
    check(status == 200, f'GET /storage_service/release_version: {status} {body}')
    out = nodetool('version')
    check(out.stdout == f'ReleaseVersion: {body.strip(chr(34))}\n', f'version: {out.stdout!r} (API: {body})')
    out = nodetool('info')
    for label in ('ID                     : ', 'Gossip active          : ', 'Load                   : ',
                  'Uptime (seconds)       : ', 'Row Cache              : entries ', 'Token                  : '):
        check(label in out.stdout, f'info lacks {label!r}:\n{out.stdout}')
    out = nodetool('status')
    check('Datacenter: ' in out.stdout and '\nUN  127.0.0.1 ' in out.stdout, f'status:\n{out.stdout}')
    out = nodetool('status', 'ks')
    check('Owns (effective)' in out.stdout and '100.0%' in out.stdout, f'status ks:\n{out.stdout}')
    out = nodetool('describecluster')
    check(out.stdout.startswith('Cluster Information:\n\tName: nodetool_suite\n'), f'describecluster:\n{out.stdout}')
    out = nodetool('compactionstats')
    check(out.stdout.startswith('pending tasks: '), f'compactionstats:\n{out.stdout}')


def check_flush_compact(nodetool, work, conn):
    before = len(data_files(work, 'ks', 't'))
    nodetool('flush', 'ks', 't')
    after = data_files(work, 'ks', 't')
    check(len(after) > before, f'flush made no sstable: {before} then {after}')
    out = nodetool('tablestats', 'ks.t')
    check('Keyspace: ks\n' in out.stdout and '\t\tTable: t\n' in out.stdout and
          f'\t\tSSTable count: {len(after)}\n' in out.stdout, f'tablestats ks.t:\n{out.stdout}')
    check(nodetool('cfstats', 'ks.t').stdout.splitlines()[:3] == out.stdout.splitlines()[:3], 'cfstats differs')
    # A second flush (everything): more sstables than shards, which a major compaction makes one per shard.
    write_rows(conn, 1000, 100)
    nodetool('flush')
    flushed = data_files(work, 'ks', 't')
    check(len(flushed) > SHARDS, f'two flushes left {flushed}')
    nodetool('compact', 'ks', 't')
    compacted = data_files(work, 'ks', 't')
    check(len(compacted) <= SHARDS, f'compact left {compacted} (before: {flushed})')


def check_snapshots(nodetool, work):
    out = nodetool('snapshot', '-t', 'tag1', 'ks')
    check(out.stdout == 'Requested creating snapshot(s) for [ks] with snapshot name [tag1] and options '
                       '{skipFlush=false}\nSnapshot directory: tag1\n', f'snapshot: {out.stdout!r}')
    dirs = glob.glob(os.path.join(work, 'data', 'ks', 't-*', 'snapshots', 'tag1'))
    check(len(dirs) == 1 and glob.glob(os.path.join(dirs[0], '*-Data.db')), f'snapshot directory: {dirs}')
    out = nodetool('listsnapshots')
    rows = [line.split() for line in out.stdout.splitlines()]
    check(out.stdout.startswith('Snapshot Details: \nSnapshot name ') and ['tag1', 'ks', 't'] in
          [r[:3] for r in rows] and '\nTotal TrueDiskSpaceUsed: ' in out.stdout, f'listsnapshots:\n{out.stdout}')
    out = nodetool('clearsnapshot', '-t', 'tag1', 'ks')
    check(out.stdout == 'Requested clearing snapshot(s) for [ks] with snapshot name [tag1]\n', out.stdout)
    check(not os.path.exists(dirs[0]), f'{dirs[0]} survives clearsnapshot')
    check(nodetool('listsnapshots').stdout == 'Snapshot Details: \nThere are no snapshots\n', 'snapshots left')
    out = nodetool('clearsnapshot', rc=1)
    check('Specify snapshot name or --all' in out.stderr, out.stderr)


def check_refresh(nodetool, work, conn):
    """sstables of another table of the same schema, copied into t2's upload/, are loaded by refresh."""
    query(conn, 'CREATE TABLE ks.t2 (pk int PRIMARY KEY, v text)')
    nodetool('snapshot', '-t', 'src', 'ks')
    src = glob.glob(os.path.join(work, 'data', 'ks', 't-*', 'snapshots', 'src'))[0]
    upload = os.path.join(glob.glob(os.path.join(work, 'data', 'ks', 't2-*'))[0], 'upload')
    os.makedirs(upload, exist_ok=True)
    for f in glob.glob(os.path.join(src, '*-*-big-*')):
        shutil.copy(f, upload)
    nodetool('refresh', 'ks', 't2')
    check(data_files(work, 'ks', 't2') and not data_files(work, 'ks', 't2', 'upload'),
          f'refresh: t2 has {data_files(work, "ks", "t2")}, upload/ {os.listdir(upload)}')
    nodetool('clearsnapshot', '--all')


def check_logging(nodetool):
    out = nodetool('getlogginglevels')
    lines = out.stdout.splitlines()
    check(lines[:2] == ['', 'Logger Name' + ' ' * 39 + ' Log Level'] and len(lines) > 2, f'getlogginglevels:\n{out.stdout}')
    logger = lines[2].split()[0]
    nodetool('setlogginglevel', logger, 'trace')
    check(f'{logger:<50}{"trace":>10}' in nodetool('getlogginglevels').stdout, f'{logger} not at trace')
    out = nodetool('setlogginglevel', 'no-such-logger', 'debug', rc=1)
    check(out.stderr == 'nodetool: Unknown logger name no-such-logger\n', f'unknown logger: {out.stderr!r}')


def main():
    with tempfile.TemporaryDirectory(prefix='reef-nodetool-', dir='/var/tmp') as tmp:
        ports = free_ports(4)
        cfg = os.path.join(tmp, 'node.yaml')
        with open(cfg, 'w') as f:
            f.write(f'cluster_name: nodetool_suite\nnative_transport_port: {ports[0]}\n'
                    f'native_shard_aware_transport_port: {ports[1]}\napi_port: {ports[2]}\n'
                    f'prometheus_port: {ports[3]}\n')
        work = os.path.join(tmp, 'work')
        node = logged_process([REEF, '--options-file', cfg, '--workdir', work, '--smp', str(SHARDS), '--no-pin-threads',
                               '--memory', '512M'], tmp, os.path.join(tmp, 'node.log'), 'node')
        try:
            node.wait_for('ready:', START_TIMEOUT)
            check(f'REST API http://127.0.0.1:{ports[2]}' in node.text(), 'the ready line names no REST API')
            status, body = http_get(ports[2], '/storage_service/keyspaces')
            check(status == 200, f'GET /storage_service/keyspaces answered {status}: {body!r}')
            nodetool = nodetool_runner(ports[2])
            conn = cql(ports[0])
            query(conn, "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
            query(conn, 'CREATE TABLE ks.t (pk int PRIMARY KEY, v text)')
            write_rows(conn, 0, 100)
            check_reports(nodetool, ports[2])
            check_flush_compact(nodetool, work, conn)
            write_rows(conn, 100, 10)
            check_snapshots(nodetool, work)
            check_refresh(nodetool, work, conn)
            check_logging(nodetool)
            out = nodetool('flush', 'nosuch', rc=1)
            check(out.stderr.startswith('nodetool: Keyspace [nosuch] does not exist.\nSee '), out.stderr)
            out = nodetool('bogus', rc=1)
            check("See 'nodetool help' or 'nodetool help <command>'." in out.stderr, out.stderr)
            nodetool('drain')
            try:
                query(conn, "INSERT INTO ks.t (pk, v) VALUES (-1, 'after drain')")
                check(False, 'a write succeeded after drain')
            except AssertionError:
                raise
            except Exception as e:
                print(f'write after drain refused: {type(e).__name__}')
            node.kill()
            out = nodetool('version', rc=1)
            # One line naming the address; "Connection refused" unless another test has taken the freed port.
            check(out.stderr.startswith('nodetool: ') and f'127.0.0.1:{ports[2]}' in out.stderr and
                  out.stderr.count('\n') == 1, f'stopped node: {out.stderr!r}')
            print('nodetool suite: every command checked')
        finally:
            node.kill()


if __name__ == '__main__':
    main()
