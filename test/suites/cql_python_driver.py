#!/usr/bin/python3
"""Debian's python3-cassandra (the DataStax python driver 3.25) against a `reef` node on free loopback ports, at
the driver's connection level: protocol v4 negotiated (a v5 attempt is refused the way the driver understands, so
it would downgrade), OPTIONS with ScyllaDB's shard keys and connections spread over the shards, STARTUP with no,
lz4 and snappy compression, CREATE/ALTER/DROP KEYSPACE|TABLE|TYPE, USE, TRUNCATE, the errors the driver maps to
its exceptions (AlreadyExists with its keyspace and table, SyntaxException, InvalidRequest), PREPARE and EXECUTE,
REGISTER and the SCHEMA_CHANGE events another connection's DDL causes, many requests in flight at once.

Then, when the node serves SELECT (the control connection reads system.local, system.peers and system_schema with
it), the driver's Cluster/Session: connect, schema metadata, DDL, a prepared INSERT routed by its partition key,
a BATCH, SELECTs paged and sliced, values of a UDT and a map read back. Without SELECT that part says it is
skipped (checked first: a SELECT answered by anything but a Syntax_error must work). Run by test.py with
REEF_BUILD_DIR (build/<mode>); the node is stopped by its pid in a finally. It runs under /usr/bin/python3, the
interpreter Debian's python3-cassandra is installed for (another python3 first on PATH would not see it)."""
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

from suite_util import check, free_ports

BUILD = os.environ.get('REEF_BUILD_DIR', os.path.join(os.path.dirname(__file__), '..', '..', 'build', 'dev'))
REEF = os.path.abspath(os.path.join(BUILD, 'reef'))
START_TIMEOUT = 60
STOP_TIMEOUT = 30

try:
    from cassandra import AlreadyExists, ConsistencyLevel, InvalidRequest
    from cassandra.connection import DefaultEndPoint, ProtocolVersionUnsupported
    from cassandra.io.asyncorereactor import AsyncoreConnection
    from cassandra.protocol import (RESULT_KIND_PREPARED, RESULT_KIND_SCHEMA_CHANGE, RESULT_KIND_SET_KEYSPACE,
                                    RESULT_KIND_VOID, ExecuteMessage, OptionsMessage, PrepareMessage, QueryMessage,
                                    SyntaxException)
except ImportError as e:
    if os.environ.get('CI') == 'true':
        print(f'FAIL: the python driver is missing ({e}); install python3-cassandra (./install-dependencies.sh)')
        sys.exit(1)
    print(f'skipped: the python driver is missing ({e}); install python3-cassandra')
    sys.exit(0)


def connect(port, compression=False, protocol_version=4, control=False):
    """control: the driver reads a connection with nothing in flight (events) only if it is its control one."""
    AsyncoreConnection.initialize_reactor()
    # user_type_map: what Cluster passes; the driver needs a dict to decode a UDT in result metadata.
    return AsyncoreConnection.factory(DefaultEndPoint('127.0.0.1', port), 10, protocol_version=protocol_version,
                                      compression=compression, is_control_connection=control, user_type_map={})


def query(conn, text):
    return conn.wait_for_response(QueryMessage(query=text, consistency_level=ConsistencyLevel.ONE), timeout=30)


def expect_error(conn, text, exc, needle):
    """The driver's exception for an ERROR, read without failing the connection (wait_for_response would mark it
    defunct on any error)."""
    ok, e = conn.wait_for_response(QueryMessage(query=text, consistency_level=ConsistencyLevel.ONE), timeout=30,
                                   fail_on_error=False)
    check(not ok and isinstance(e, exc), f'{text!r} did not raise {exc.__name__}: {e!r}')
    check(needle in str(e), f'{text!r}: {type(e).__name__} {e} lacks {needle!r}')
    return e


def run_checks(port, aware_port):
    # A v5 STARTUP is refused with the text drivers look for: they downgrade and reconnect at v4.
    try:
        connect(port, protocol_version=5).close()
        raise AssertionError('protocol v5 accepted')
    except ProtocolVersionUnsupported as e:
        print(f'v5 refused as the driver expects: {e}')

    conns = [connect(port, control=(i == 1)) for i in range(4)]
    shards = []
    for c in conns:
        sup = c.wait_for_response(OptionsMessage(), timeout=10)
        opts = sup.options
        check(opts.get('SCYLLA_NR_SHARDS') == ['2'] and opts.get('SCYLLA_SHARDING_IGNORE_MSB') == ['12'] and
              opts.get('SCYLLA_PARTITIONER') == ['org.apache.cassandra.dht.Murmur3Partitioner'] and
              opts.get('SCYLLA_SHARD_AWARE_PORT') == [str(aware_port)], f'SUPPORTED: {opts}')
        shards.append(opts['SCYLLA_SHARD'][0])
    check(sorted(shards) == ['0', '0', '1', '1'], f'4 connections on 2 shards landed on {shards}')
    print(f'4 connections on shards {shards}')

    c = conns[0]
    listener = conns[1]
    events = []
    got_event = threading.Event()

    def on_event(e):
        events.append(e)
        got_event.set()
    listener.register_watchers({'SCHEMA_CHANGE': on_event}, register_timeout=10)

    r = query(c, "CREATE KEYSPACE drv WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    check(r.kind == RESULT_KIND_SCHEMA_CHANGE and r.schema_change_event['keyspace'] == 'drv',
          f'CREATE KEYSPACE answered {vars(r)}')
    check(got_event.wait(10), 'no SCHEMA_CHANGE event on the registered connection')
    check(events[0]['change_type'] == 'CREATED' and events[0]['target_type'] == 'KEYSPACE' and
          events[0]['keyspace'] == 'drv', f'event {events[0]}')

    e = expect_error(c, "CREATE KEYSPACE drv WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                     AlreadyExists, 'drv')
    check(e.keyspace == 'drv' and not e.table, f'AlreadyExists fields: {e.keyspace!r} {e.table!r}')
    expect_error(c, 'CREATE KEYSPAC nope', SyntaxException, '')
    expect_error(c, 'CREATE TABLE nope.t (a int PRIMARY KEY)', InvalidRequest, 'nope')

    r = query(c, 'USE drv')
    check(r.kind == RESULT_KIND_SET_KEYSPACE and r.new_keyspace == 'drv', f'USE answered {vars(r)}')
    got_event.clear()
    query(c, 'CREATE TYPE addr (street text, zip int)')
    query(c, 'CREATE TABLE t (pk int, ck text, v frozen<addr>, m map<text, int>, PRIMARY KEY (pk, ck)) '
             'WITH CLUSTERING ORDER BY (ck DESC)')
    e = expect_error(c, 'CREATE TABLE t (a int PRIMARY KEY)', AlreadyExists, 't')
    check(e.keyspace == 'drv' and e.table == 't', f'AlreadyExists fields: {e.keyspace!r} {e.table!r}')
    query(c, 'ALTER TABLE t ADD w bigint')
    query(c, 'TRUNCATE t')
    check(got_event.wait(10), 'no event for the type and table')
    deadline = time.monotonic() + 10
    while len(events) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    seen = [(ev['change_type'], ev['target_type'], ev.get('table') or ev.get('type') or ev.get('name'))
            for ev in events[1:]]
    for want in [('CREATED', 'TYPE', 'addr'), ('CREATED', 'TABLE', 't'), ('UPDATED', 'TABLE', 't')]:
        check(want in seen, f'event {want} missing from {seen}')

    # PREPARE and EXECUTE a statement; an unknown id is the driver's unprepared error.
    prepared = c.wait_for_response(PrepareMessage(query='CREATE TABLE IF NOT EXISTS t2 (a int PRIMARY KEY)'),
                                   timeout=10)
    check(prepared.kind == RESULT_KIND_PREPARED and len(prepared.query_id) == 16, f'PREPARE: {vars(prepared)}')
    r = c.wait_for_response(ExecuteMessage(prepared.query_id, [], ConsistencyLevel.ONE), timeout=10)
    check(r.kind in (RESULT_KIND_SCHEMA_CHANGE, RESULT_KIND_VOID), f'EXECUTE answered {r.kind}')

    # Many requests in flight on one connection at once.
    results = c.wait_for_responses(*[QueryMessage(query=f'CREATE TABLE IF NOT EXISTS drv.many{i} (a int PRIMARY KEY)',
                                                  consistency_level=ConsistencyLevel.ONE) for i in range(40)],
                                   timeout=60)
    check(len(results) == 40, f'{len(results)} of 40 answers')

    # Compression both ways.
    for algo in ('lz4', 'snappy'):
        z = connect(port, compression=algo)
        check(z.compressor is not None, f'{algo} not negotiated')
        query(z, f'CREATE TABLE drv.z_{algo} (a int PRIMARY KEY, b text)')
        expect_error(z, f'CREATE TABLE drv.z_{algo} (a int PRIMARY KEY)', AlreadyExists, f'z_{algo}')
        z.close()
        print(f'{algo}: negotiated, DDL and errors through it')

    query(c, 'DROP TABLE t')
    query(c, 'DROP TYPE addr')
    query(c, 'DROP KEYSPACE drv')
    expect_error(c, 'USE drv', InvalidRequest, 'drv')
    for conn in conns:
        conn.close()


def serves_select(port):
    c = connect(port)
    ok, r = c.wait_for_response(QueryMessage(query="SELECT key FROM system.local",
                                             consistency_level=ConsistencyLevel.ONE), timeout=30, fail_on_error=False)
    c.close()
    if not ok and isinstance(r, SyntaxException):
        return False
    check(ok, f'SELECT FROM system.local: {r!r}')
    return True


def run_cluster_checks(port):
    from cassandra.cluster import Cluster
    from cassandra.query import BatchStatement, SimpleStatement
    cl = Cluster(['127.0.0.1'], port=port, protocol_version=4, connect_timeout=10, control_connection_timeout=10,
                 compression=True)
    try:
        s = cl.connect()
        check(cl.metadata.partitioner == 'org.apache.cassandra.dht.Murmur3Partitioner',
              f'partitioner {cl.metadata.partitioner}')
        s.execute("CREATE KEYSPACE cl WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.set_keyspace('cl')
        s.execute('CREATE TYPE a (x int, y text)')
        s.execute('CREATE TABLE t (pk int, ck text, v frozen<a>, m map<text, int>, PRIMARY KEY (pk, ck))')
        ins = s.prepare('INSERT INTO t (pk, ck, v, m) VALUES (?, ?, ?, ?)')
        check(ins.routing_key_indexes == [0], f'routing key indexes {ins.routing_key_indexes}')
        model = {}
        for i in range(300):
            key = (i % 7, 'c%03d' % i)
            s.execute(ins, (key[0], key[1], (i, 'y'), {'k': i}))
            model[key] = i
        b = BatchStatement()
        b.add(ins, (100, 'b1', (1, 'z'), {}))
        b.add(SimpleStatement("INSERT INTO t (pk, ck) VALUES (101, 'b2')"))
        s.execute(b)
        rows = list(s.execute(SimpleStatement('SELECT * FROM t', fetch_size=50)))
        check(len(rows) == 302, f'{len(rows)} rows, not 302')
        for r in rows:
            if r.pk < 100:
                i = model[(r.pk, r.ck)]
                check(r.v.x == i and r.v.y == 'y' and dict(r.m) == {'k': i}, f'row {r}')
        got = [r.ck for r in s.execute("SELECT ck FROM t WHERE pk = 3 AND ck >= 'c100' ORDER BY ck DESC LIMIT 3")]
        want = sorted([ck for (pk, ck) in model if pk == 3 and ck >= 'c100'], reverse=True)[:3]
        check(got == want, f'slice {got} != {want}')
        cl.refresh_schema_metadata()
        check(set(cl.metadata.keyspaces['cl'].tables['t'].columns) == {'pk', 'ck', 'v', 'm'},
              f'metadata columns {list(cl.metadata.keyspaces["cl"].tables["t"].columns)}')
        print('Cluster/Session: connect, metadata, DDL, prepared INSERT, BATCH, paged and sliced SELECT')
    finally:
        cl.shutdown()


def main():
    with tempfile.TemporaryDirectory(prefix='reef-driver-', dir='/var/tmp') as tmp:
        ports = free_ports(4)
        cfg = os.path.join(tmp, 'node.yaml')
        with open(cfg, 'w') as f:
            f.write(f'native_transport_port: {ports[0]}\nnative_shard_aware_transport_port: {ports[1]}\n'
                    f'api_port: {ports[2]}\nprometheus_port: {ports[3]}\n')
        log_path = os.path.join(tmp, 'reef.log')
        with open(log_path, 'w') as log:
            proc = subprocess.Popen([REEF, '--options-file', cfg, '--workdir', os.path.join(tmp, 'work'), '--smp', '2',
                                     '--no-pin-threads'], stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)
            try:
                deadline = time.monotonic() + START_TIMEOUT
                while 'ready:' not in open(log_path).read():
                    check(proc.poll() is None, 'reef exited early:\n' + open(log_path).read())
                    check(time.monotonic() < deadline, 'reef not ready:\n' + open(log_path).read())
                    time.sleep(0.05)
                try:
                    run_checks(ports[0], ports[1])
                    if serves_select(ports[0]):
                        run_cluster_checks(ports[0])
                    else:
                        print('Cluster/Session part skipped: the node does not serve SELECT yet')
                except BaseException:
                    print(open(log_path).read()[-4000:], file=sys.stderr)
                    raise
                proc.send_signal(signal.SIGTERM)
                rc = proc.wait(timeout=STOP_TIMEOUT)
                check(rc == 0, f'reef exited with {rc}:\n' + open(log_path).read())
            finally:
                if proc.poll() is None:
                    os.kill(proc.pid, signal.SIGKILL)
                    proc.wait()
    print('cql_python_driver: all checks passed')


if __name__ == '__main__':
    try:
        main()
    except AssertionError as e:
        print(f'FAILED: {e}', file=sys.stderr)
        sys.exit(1)
