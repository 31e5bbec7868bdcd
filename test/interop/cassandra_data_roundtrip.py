#!/usr/bin/python3
# test.py modes: dev
"""Moving data between a Reef node and a real Cassandra 5.0.9 node (../shared/tools/cassandra-peer, `peer node`),
both on free loopback ports, with Cassandra's own tools, Reef driven through its REST API:

1. Reef to Cassandra: random writes (USING TIMESTAMP: inserts, collection updates, cell, row and partition
   deletions) go to a Reef table through CQL; POST /storage_service/snapshots takes a snapshot; the keyspace is
   created in Cassandra and the snapshot's schema.cql run there as is (so the table keeps Reef's id); Cassandra's
   sstableloader (org.apache.cassandra.tools.BulkLoader, the peer's jars) streams the snapshot's sstables into the
   Cassandra node. SELECT (with writetime) returns the same rows from both nodes.
2. Cassandra to Reef: random statements are written as sstables by Cassandra's own writer (`peer write`, `nb` and
   `oa`) and run on the Cassandra node too; the sstables are placed in the Reef table's upload/ directory and
   POST /storage_service/sstables/{keyspace}?cf= loads them. SELECT returns the same rows from both nodes.

Under /usr/bin/python3 (Debian's python3-cassandra). Without the peer tool, java or mvn it says so and passes;
with CI=true that is a failure. REEF_ROUNDTRIP_SEED repeats a run. Every process started is stopped by its pid in
a finally; a failing run keeps its files under testlog/<mode>/interop/cassandra_data_roundtrip/."""
import fcntl
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'suites'))
from peer_gen_diff import ROOT, PEER_SRC, say, unavailable, copy_peer  # noqa: E402
from suite_util import check, free_ports, logged_process  # noqa: E402

try:
    from cassandra.cluster import Cluster
    from cassandra.policies import WhiteListRoundRobinPolicy
except ImportError:
    Cluster = None

REEF_START_TIMEOUT = 90
CASSANDRA_START_TIMEOUT = 240
TOOL_TIMEOUT = 300

SCHEMA = ('CREATE TABLE {ks}.t (pk int, ck text, v bigint, s int static, tags set<text>, m map<int, text>, '
          'PRIMARY KEY (pk, ck)) WITH CLUSTERING ORDER BY (ck DESC)')
SELECT = 'SELECT pk, ck, v, s, tags, m, writetime(v) AS wv FROM {ks}.t'


def statements(rnd, ks, count):
    """Random CQL writes, each USING TIMESTAMP (distinct, mostly increasing), as the Cassandra node, its offline
    writer and Reef all apply them the same way."""
    out = []
    ts = 1_700_000_000_000_000
    words = ['a', 'b', 'c', "it's", 'é', 'zz']
    for _ in range(count):
        ts += rnd.randint(1, 1000)
        t = ts if rnd.random() < 0.9 else ts - rnd.randint(1000, 100000)
        pk = rnd.randint(0, 40)
        ck = rnd.choice(['k%02d' % i for i in range(12)])
        kind = rnd.random()
        if kind < 0.55:
            tags = '{' + ', '.join("'%s'" % w.replace("'", "''") for w in rnd.sample(words, rnd.randint(0, 3))) + '}'
            out.append(f"INSERT INTO {ks}.t (pk, ck, v, s, tags, m) VALUES ({pk}, '{ck}', {rnd.randint(-2**40, 2**40)}, "
                       f"{rnd.randint(0, 99)}, {tags}, {{{rnd.randint(0, 5)}: 'x{rnd.randint(0, 9)}'}}) USING TIMESTAMP {t}")
        elif kind < 0.7:
            out.append(f"UPDATE {ks}.t USING TIMESTAMP {t} SET tags = tags + {{'{rnd.choice(words[:3])}'}}, "
                       f"m[{rnd.randint(0, 5)}] = 'u' WHERE pk = {pk} AND ck = '{ck}'")
        elif kind < 0.8:
            out.append(f"DELETE v FROM {ks}.t USING TIMESTAMP {t} WHERE pk = {pk} AND ck = '{ck}'")
        elif kind < 0.92:
            out.append(f"DELETE FROM {ks}.t USING TIMESTAMP {t} WHERE pk = {pk} AND ck = '{ck}'")
        elif kind < 0.96:
            out.append(f"DELETE FROM {ks}.t USING TIMESTAMP {t} WHERE pk = {pk} AND ck > 'k03' AND ck <= 'k07'")
        else:
            out.append(f"DELETE FROM {ks}.t USING TIMESTAMP {t} WHERE pk = {pk}")
    return out


def rows_of(session, ks):
    """The table's rows as comparable tuples, sorted (the nodes' partition orders are the same ring, but the
    driver's paging may not be)."""
    out = []
    for r in session.execute(SELECT.format(ks=ks)):
        out.append((r.pk, r.ck, r.v, r.s, tuple(sorted(r.tags or ())), tuple(sorted((r.m or {}).items())), r.wv))
    return sorted(out, key=repr)


def compare(what, reef_rows, cassandra_rows):
    if reef_rows == cassandra_rows:
        say(f'{what}: {len(reef_rows)} rows equal')
        return True
    rs, cs = set(reef_rows), set(cassandra_rows)
    say(f'FAIL {what}: Reef {len(reef_rows)} rows, Cassandra {len(cassandra_rows)}')
    for r in sorted(rs - cs, key=repr)[:10]:
        say(f'  only in Reef:      {r}')
    for r in sorted(cs - rs, key=repr)[:10]:
        say(f'  only in Cassandra: {r}')
    return False


def rest(port, method, path):
    req = urllib.request.Request(f'http://127.0.0.1:{port}{path}', method=method, data=b'' if method != 'GET' else None)
    try:
        with urllib.request.urlopen(req, timeout=300) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def session_for(port):
    cluster = Cluster(['127.0.0.1'], port=port, protocol_version=4,
                      load_balancing_policy=WhiteListRoundRobinPolicy(['127.0.0.1']), connect_timeout=30)
    return cluster, cluster.connect()


def run_all(session, stmts):
    for s in stmts:
        session.execute(s)


def peer_java(peer, args, log, timeout):
    """A Cassandra class run with the peer's jars and the JVM flags Cassandra needs on Java 17 (bin/_common.sh)."""
    script = ('. "$PEER/bin/_common.sh"; exec java -Xmx1G "${PEER_OPENS[@]}" '
              '-cp "$PEER/target/c5.0.9/classes:$PEER/target/c5.0.9/lib/*" "$@"')
    with open(log, 'w') as f:
        r = subprocess.run(['bash', '-c', script, 'peer-java'] + args, env=dict(os.environ, PEER=peer),
                           stdout=f, stderr=subprocess.STDOUT, timeout=timeout)
    return r.returncode


def reef_to_cassandra(rnd, work, reef_api, reef_session, c_session, c_ports, peer):
    ks = 'reef_out'
    ddl_ks = f"CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}"
    reef_session.execute(ddl_ks)
    reef_session.execute(SCHEMA.format(ks=ks))
    run_all(reef_session, statements(rnd, ks, 600))
    status, body = rest(reef_api, 'POST', f'/storage_service/snapshots?tag=to_cassandra&kn={ks}')
    check(status == 200 and body == '', f'POST snapshots: {status} {body}')
    status, body = rest(reef_api, 'GET', '/storage_service/snapshots')
    check(status == 200 and '"to_cassandra"' in body, f'GET snapshots: {status} {body}')
    snaps = glob.glob(os.path.join(work, 'reef', '**', ks, 't-*', 'snapshots', 'to_cassandra'), recursive=True)
    check(len(snaps) == 1, f'snapshot directories: {snaps}')
    snap = snaps[0]
    manifest = json.load(open(os.path.join(snap, 'manifest.json')))
    check(set(manifest['files']) == {f for f in os.listdir(snap) if f.endswith('-Data.db')} and
          manifest['expires_at'] is None and manifest['ephemeral'] is False, f'manifest.json: {manifest}')
    # Cassandra runs the snapshot's schema.cql as is: the table gets Reef's id.
    c_session.execute(ddl_ks)
    with open(os.path.join(snap, 'schema.cql')) as f:
        for stmt in f.read().split(';'):
            if stmt.strip():
                c_session.execute(stmt)
    load_dir = os.path.join(work, 'load', ks, 't')
    os.makedirs(load_dir)
    for name in os.listdir(snap):
        if name not in ('manifest.json', 'schema.cql'):
            shutil.copy(os.path.join(snap, name), load_dir)
    start = time.monotonic()
    rc = peer_java(peer, ['org.apache.cassandra.tools.BulkLoader', '-d', '127.0.0.1', '-p', str(c_ports[0]),
                          '-sp', str(c_ports[1]), '--no-progress', load_dir],
                   os.path.join(work, 'sstableloader.log'), TOOL_TIMEOUT)
    with open(os.path.join(work, 'sstableloader.log')) as f:
        text = f.read()
    check(rc == 0, f'sstableloader exited with {rc}:\n{text[-4000:]}')
    say(f'sstableloader streamed {len(manifest["files"])} sstables in {time.monotonic() - start:.1f}s')
    return compare('Reef -> sstableloader -> Cassandra', rows_of(reef_session, ks), rows_of(c_session, ks))


def cassandra_to_reef(rnd, work, reef_api, reef_session, c_session, peer):
    ks = 'reef_in'
    ddl_ks = f"CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}"
    stmts = statements(rnd, ks, 600)
    schema_file = os.path.join(work, 'in_schema.cql')
    data_file = os.path.join(work, 'in_data.cql')
    with open(schema_file, 'w') as f:
        f.write(ddl_ks + ';\n' + SCHEMA.format(ks=ks) + ';\n')
    with open(data_file, 'w') as f:
        # Two sstables per format: the statements in two halves.
        half = len(stmts) // 2
        f.write(';\n'.join(stmts[:half]) + ';\nFLUSH;\n' + ';\n'.join(stmts[half:]) + ';\n')
    uploads = []
    for fmt in ('nb', 'oa'):
        out = os.path.join(work, 'written_' + fmt)
        start = time.monotonic()
        r = subprocess.run([os.path.join(peer, 'bin', 'peer'), 'write', '--schema', schema_file, '--cql', data_file,
                            '--out', out, '--format', fmt], capture_output=True, text=True, timeout=TOOL_TIMEOUT)
        check(r.returncode == 0, f'peer write --format {fmt}: {r.returncode}\n{r.stderr[-4000:]}')
        files = glob.glob(os.path.join(out, ks, 't', '*'))
        check(any(f.endswith('-Data.db') for f in files), f'peer write --format {fmt} wrote {files}')
        say(f'peer write --format {fmt}: {sum(f.endswith("-Data.db") for f in files)} sstables in '
            f'{time.monotonic() - start:.1f}s')
        uploads.extend(files)
    c_session.execute(ddl_ks)
    c_session.execute(SCHEMA.format(ks=ks))
    run_all(c_session, stmts)
    reef_session.execute(ddl_ks)
    reef_session.execute(SCHEMA.format(ks=ks))
    tables = glob.glob(os.path.join(work, 'reef', '**', ks, 't-*'), recursive=True)
    check(len(tables) == 1, f'table directories: {tables}')
    upload = os.path.join(tables[0], 'upload')
    os.makedirs(upload, exist_ok=True)
    for f in uploads:
        shutil.copy(f, upload)
    status, body = rest(reef_api, 'POST', f'/storage_service/sstables/{ks}?cf=t')
    check(status == 200 and body == '', f'POST sstables/{ks}?cf=t: {status} {body}')
    check(os.listdir(upload) == [], f'upload/ after the refresh: {os.listdir(upload)}')
    ok = compare('Cassandra sstables (nb, oa) -> upload/ -> refresh -> Reef', rows_of(reef_session, ks),
                 rows_of(c_session, ks))
    # The refreshed sstables are Reef's now: they survive a flush and a major compaction.
    status, body = rest(reef_api, 'POST', f'/storage_service/keyspace_compaction/{ks}?cf=t')
    check(status == 200, f'keyspace_compaction: {status} {body}')
    return compare('... after a major compaction', rows_of(reef_session, ks), rows_of(c_session, ks)) and ok


def main():
    if Cluster is None:
        unavailable('python3-cassandra is not installed for /usr/bin/python3')
    if not os.path.isdir(PEER_SRC):
        unavailable(f'the peer tool ({PEER_SRC}) is absent')
    for prog in ('java', 'mvn'):
        if shutil.which(prog) is None:
            unavailable(f'{prog} is not installed (./install-dependencies.sh installs Java 17 and Maven)')
    mode = os.environ.get('REEF_TEST_MODE', 'dev')
    build = os.environ.get('REEF_BUILD_DIR', os.path.join(ROOT, 'build', mode))
    reef = os.path.abspath(os.path.join(build, 'reef'))
    if not os.access(reef, os.X_OK):
        say(f'FAIL: {reef} is not built')
        return 1
    seed = int(os.environ.get('REEF_ROUNDTRIP_SEED') or random.SystemRandom().randrange(1, 2**31))
    say(f'seed {seed} (REEF_ROUNDTRIP_SEED={seed} repeats it), mode {mode}')
    rnd = random.Random(seed)
    work = os.path.join(ROOT, 'testlog', mode, 'interop', 'cassandra_data_roundtrip')
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    tooldir = os.path.join(ROOT, 'build', 'interop')
    os.makedirs(tooldir, exist_ok=True)
    procs, clusters, ok = [], [], False
    # One peer copy and one Cassandra JVM at a time for all modes and drivers.
    with open(os.path.join(tooldir, 'peer.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            peer = os.path.join(tooldir, 'cassandra-peer')
            copy_peer(peer)
            c_ports = free_ports(2)
            cassandra = logged_process([os.path.join(peer, 'bin', 'peer'), 'node', '--home', os.path.join(work, 'cassandra'),
                                        '--port', str(c_ports[0]), '--storage-port', str(c_ports[1])],
                                       work, os.path.join(work, 'cassandra.log'), 'the Cassandra node',
                                       env=dict(os.environ, PEER_HEAP=os.environ.get('PEER_HEAP', '1G')))
            procs.append(cassandra)
            ports = free_ports(4)
            cfg = os.path.join(work, 'reef.yaml')
            with open(cfg, 'w') as f:
                f.write(f'cluster_name: roundtrip\nnative_transport_port: {ports[0]}\n'
                        f'native_shard_aware_transport_port: {ports[1]}\napi_port: {ports[2]}\n'
                        f'prometheus_port: {ports[3]}\n')
            node = logged_process([reef, '--options-file', cfg, '--workdir', os.path.join(work, 'reef'), '--smp', '2',
                                   '--no-pin-threads', '--memory', '1G'], work, os.path.join(work, 'reef.log'),
                                  'the Reef node')
            procs.append(node)
            node.wait_for('ready:', REEF_START_TIMEOUT)
            try:
                status, body = rest(ports[2], 'GET', '/storage_service/release_version')
            except OSError as e:
                unavailable(f'this reef serves no REST API on its api_port ({e})')
            check(status == 200 and body == '"5.0.9"', f'GET release_version: {status} {body}')
            start = time.monotonic()
            cassandra.wait_for('READY cassandra=', CASSANDRA_START_TIMEOUT)
            say(f'Cassandra node ready ({time.monotonic() - start:.1f}s after Reef)')
            reef_cluster, reef_session = session_for(ports[0])
            clusters.append(reef_cluster)
            c_cluster, c_session = session_for(c_ports[0])
            clusters.append(c_cluster)
            ok = reef_to_cassandra(rnd, work, ports[2], reef_session, c_session, c_ports, peer)
            ok = cassandra_to_reef(rnd, work, ports[2], reef_session, c_session, peer) and ok
        finally:
            for c in clusters:
                c.shutdown()
            for p in reversed(procs):
                p.kill()
    if ok:
        shutil.rmtree(work, ignore_errors=True)
        say('PASS')
        return 0
    say(f'FAIL (seed {seed}); files kept in {work}')
    return 1


if __name__ == '__main__':
    sys.exit(main())
