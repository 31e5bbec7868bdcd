#!/usr/bin/python3
"""PyPI's scylla-driver (ScyllaDB's fork of the python driver, in its own virtualenv build/tools/scylla-driver so
that it does not shadow Debian's python3-cassandra) against a `reef --smp 3` node on free loopback ports, shard
aware: the driver reads the SCYLLA_* keys, opens one connection per shard through
native_shard_aware_transport_port (each on the shard its local port asks for: port % shards), and routes each
prepared statement to the connection of the shard owning its token. Then a workload (DDL, prepared INSERTs of
mixed types, prepared single-partition SELECTs, a BATCH, a paged SELECT, an error) checked against a model, and
the proof from the node's /metrics: scylla_storage_proxy_replica_cross_shard_ops does not move during the
token-routed prepared statements, so each was coordinated on its owner shard. The same statements sent through
one connection (a second Cluster with shard awareness off) must move it by exactly the number of statements whose
owner shard is not that connection's (the counter can fail). The node stops with SIGTERM and exits 0.

Started under /usr/bin/python3 (test.py), it re-runs itself with the virtualenv's interpreter; without the
virtualenv it is skipped (a failure under CI=true): ./dev.sh installs it."""
import http.client
import os
import re
import sys
import tempfile
import time

from suite_util import check, reef_node

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
VENV = os.path.join(ROOT, 'build', 'tools', 'scylla-driver')
BUILD = os.environ.get('REEF_BUILD_DIR', os.path.join(ROOT, 'build', 'dev'))
REEF = os.path.abspath(os.path.join(BUILD, 'reef'))
SHARDS = 3
START_TIMEOUT = 60
STOP_TIMEOUT = 30
ROWS = 300


def unavailable(why):
    if os.environ.get('CI') == 'true':
        print(f'FAIL: {why}, and CI=true; run ./dev.sh test (it installs it)')
        sys.exit(1)
    print(f'skipped: {why}')
    sys.exit(0)


def in_venv():
    python = os.path.join(VENV, 'bin', 'python3')
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    if not os.path.exists(python):
        unavailable(f'no scylla-driver virtualenv at {VENV}')
    os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])


def cross_shard_ops(prom_port):
    """scylla_storage_proxy_replica_cross_shard_ops per shard."""
    conn = http.client.HTTPConnection('127.0.0.1', prom_port, timeout=10)
    try:
        conn.request('GET', '/metrics?__name__=scylla_storage_proxy_replica_cross_shard_ops')
        r = conn.getresponse()
        text = r.read().decode()
    finally:
        conn.close()
    check(r.status == 200, f'/metrics: {r.status}')
    out = {}
    for line in text.splitlines():
        m = re.match(r'^scylla_storage_proxy_replica_cross_shard_ops\{.*shard="(\d+)".*\} (\S+)$', line)
        if m:
            out[int(m.group(1))] = int(float(m.group(2)))
    check(sorted(out) == list(range(SHARDS)), f'cross_shard_ops series: {out} from\n{text}')
    return out


def total(d):
    return sum(d.values())


def pool_of(session):
    pools = list(session.get_pools())
    check(len(pools) == 1, f'{len(pools)} host pools')
    return pools[0]


def wait_for_shard_pool(session, aware_port):
    """Until the host's pool holds a connection per shard; returns ({shard: connection}, how many of them came
    through the shard-aware port)."""
    pool = pool_of(session)
    deadline = time.monotonic() + 30
    while len(pool._connections) < SHARDS and time.monotonic() < deadline:
        time.sleep(0.1)
    conns = dict(pool._connections)
    check(sorted(conns) == list(range(SHARDS)), f'pool connections by shard: {sorted(conns)}')
    via_aware = 0
    for shard, c in conns.items():
        check(c.features.shard_id == shard, f'connection for shard {shard} reports {c.features.shard_id}')
        local = c._socket.getsockname()[1]
        remote = c._socket.getpeername()[1]
        if remote == aware_port:
            check(local % SHARDS == shard, f'shard {shard}: connected from {local} to the shard-aware port, '
                                           f'not from a port = {shard} mod {SHARDS}')
            via_aware += 1
    # The pool's first connection goes to the regular port (its shard is whichever the server picks); the driver
    # opens the others through the shard-aware port.
    check(via_aware >= SHARDS - 1, f'{via_aware} of {SHARDS} connections through the shard-aware port')
    return conns, via_aware


def run_workload(cql_port, aware_port, prom_port):
    from cassandra import InvalidRequest
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import RoundRobinPolicy, TokenAwarePolicy
    from cassandra.query import BatchStatement, SimpleStatement
    import cassandra

    routed = ExecutionProfile(load_balancing_policy=TokenAwarePolicy(RoundRobinPolicy()), request_timeout=30)
    cl = Cluster(['127.0.0.1'], port=cql_port, protocol_version=4, connect_timeout=10,
                 control_connection_timeout=10, execution_profiles={EXEC_PROFILE_DEFAULT: routed},
                 schema_event_refresh_window=0.2)
    try:
        s = cl.connect()
        host = cl.metadata.all_hosts()[0]
        info = host.sharding_info
        check(info is not None and info.shards_count == SHARDS and info.shard_aware_port == aware_port,
              f'sharding info: {info and (info.shards_count, info.shard_aware_port)}')
        conns, via_aware = wait_for_shard_pool(s, aware_port)
        print(f'scylla-driver {cassandra.__version__}: {len(conns)} pool connections, one per shard {sorted(conns)}, '
              f'{via_aware} of them to the shard-aware port from a local port = shard mod {SHARDS}')

        s.execute("CREATE KEYSPACE sd WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.set_keyspace('sd')
        s.execute('CREATE TABLE t (pk bigint, ck int, name text, score double, tags set<text>, attrs map<text, int>, '
                  'seen list<timestamp>, PRIMARY KEY (pk, ck))')
        settle_schema(cl, s)
        ins = s.prepare('INSERT INTO t (pk, ck, name, score, tags, attrs) VALUES (?, ?, ?, ?, ?, ?)')
        sel = s.prepare('SELECT ck, name, score, tags, attrs FROM t WHERE pk = ?')
        check(ins.routing_key_indexes == [0] and sel.routing_key_indexes == [0],
              f'routing key indexes {ins.routing_key_indexes} {sel.routing_key_indexes}')

        model = {}
        for i in range(ROWS):
            pk, ck = i * 7919 % 101, i
            row = (f'n{i}', i / 4, {f't{i % 5}', 'all'}, {'a': i, 'b': -i})
            model.setdefault(pk, {})[ck] = row
        owners = {pk: shard_of_key(ins, info, pk) for pk in model}
        check(set(owners.values()) == set(range(SHARDS)), f'the keys are owned by shards {set(owners.values())}')

        before = cross_shard_ops(prom_port)
        served_before = requests_served(prom_port)
        for pk, rows in model.items():
            for ck, (name, score, tags, attrs) in rows.items():
                s.execute(ins, (pk, ck, name, score, tags, attrs))
        for pk, rows in model.items():
            got = {r.ck: (r.name, r.score, set(r.tags), dict(r.attrs)) for r in s.execute(sel, (pk,))}
            check(got == rows, f'pk {pk}: {got} != {rows}')
        after = cross_shard_ops(prom_port)
        served_after = requests_served(prom_port)
        routed = ROWS + len(model)
        check(total(after) == total(before),
              f'{routed} token-routed prepared statements crossed shards: {before} -> {after}')
        per_shard = {sh: served_after[sh] - served_before[sh] for sh in served_after}
        owned = {sh: sum(len(model[pk]) + 1 for pk in model if owners[pk] == sh) for sh in range(SHARDS)}
        check(all(per_shard[sh] >= owned[sh] for sh in range(SHARDS)),
              f'requests served per shard {per_shard}, fewer than the statements each owns {owned}')
        print(f'{routed} prepared INSERTs and SELECTs routed by token: cross_shard_ops stayed {total(after)} '
              f'(per shard {after}); requests served per shard {per_shard}, owned {owned}')

        # A BATCH of one partition, a paged SELECT of everything, an error.
        b = BatchStatement()
        b.add(ins, (1000, 1, 'b1', 0.5, {'x'}, {}))
        b.add(ins, (1000, 2, 'b2', 1.5, set(), {'y': 2}))
        s.execute(b)
        model[1000] = {1: ('b1', 0.5, {'x'}, {}), 2: ('b2', 1.5, set(), {'y': 2})}
        owners[1000] = shard_of_key(ins, info, 1000)
        pages = s.execute(SimpleStatement('SELECT pk, ck, name, score, tags, attrs FROM t', fetch_size=37))
        got = {}
        for r in pages:
            got.setdefault(r.pk, {})[r.ck] = (r.name, r.score, set(r.tags or ()), dict(r.attrs or {}))
        check(got == model, f'paged SELECT differs from the model: {len(got)} partitions')
        try:
            s.execute('INSERT INTO t (pk, ck, nope) VALUES (1, 1, 1)')
            raise AssertionError('an unknown column was accepted')
        except InvalidRequest as e:
            check('nope' in str(e), f'the error does not name the column: {e}')
        # A statement nested 100000 deep (once a stack overflow that killed the node) is a syntax error.
        from cassandra.protocol import SyntaxException
        try:
            s.execute('SELECT * FROM t WHERE pk = ' + '(' * 100000)
            raise AssertionError('100000 nested ( accepted')
        except SyntaxException as e:
            check('nested more than 100 levels deep' in str(e), f'deep nesting: {e}')
        print(f'BATCH, paged SELECT ({sum(len(v) for v in got.values())} rows, pages of 37), InvalidRequest, '
              f'SyntaxException for 100000 nested (: ok')

        # The control: one connection, no shard awareness. Every statement whose owner is not that connection's
        # shard hops once.
        plain = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), request_timeout=30)
        one = Cluster(['127.0.0.1'], port=cql_port, protocol_version=4, connect_timeout=10,
                      execution_profiles={EXEC_PROFILE_DEFAULT: plain}, shard_aware_options=dict(disable=True))
        try:
            s1 = one.connect('sd')
            ins1 = s1.prepare(ins.query_string)
            sel1 = s1.prepare(sel.query_string)
            conns1 = list(pool_of(s1)._connections.values())
            check(len(conns1) == 1, f'{len(conns1)} connections with shard awareness off')
            shard1 = conns1[0].features.shard_id
            before = cross_shard_ops(prom_port)
            for pk in model:
                s1.execute(ins1, (pk, 5000, 'x', 0.0, set(), {}))
                s1.execute(sel1, (pk,))
            after = cross_shard_ops(prom_port)
            want = 2 * sum(1 for pk in model if owners[pk] != shard1)
            check(total(after) - total(before) == want,
                  f'one connection on shard {shard1}: cross_shard_ops moved {total(after) - total(before)}, '
                  f'expected {want}')
            print(f'control, shard awareness off (one connection on shard {shard1}): {2 * len(model)} statements, '
                  f'cross_shard_ops +{want} as predicted')
        finally:
            one.shutdown()
        s.execute('DROP KEYSPACE sd')
    finally:
        cl.shutdown()


def settle_schema(cl, s):
    """Until the driver's own schema refresh after the DDL is done: its reads of system_schema (single partitions,
    on the control connection's shard) hop like any statement and must not fall into a measured window."""
    s.cluster.refresh_schema_metadata()
    deadline = time.monotonic() + 20
    while 'sd' not in cl.metadata.keyspaces or 't' not in cl.metadata.keyspaces['sd'].tables:
        check(time.monotonic() < deadline, 'the driver never saw table sd.t')
        time.sleep(0.1)
    time.sleep(1.5)


def shard_of_key(ins, info, pk):
    """The owner shard of partition key pk, as the driver computes it to pick a connection."""
    from cassandra.metadata import Murmur3Token
    return info.shard_id_from_token(Murmur3Token.from_key(ins.bind((pk, 0, None, None, None, None)).routing_key).value)


def requests_served(prom_port):
    conn = http.client.HTTPConnection('127.0.0.1', prom_port, timeout=10)
    try:
        conn.request('GET', '/metrics?__name__=scylla_transport_requests_served')
        text = conn.getresponse().read().decode()
    finally:
        conn.close()
    out = {}
    for line in text.splitlines():
        m = re.match(r'^scylla_transport_requests_served\{.*shard="(\d+)".*\} (\S+)$', line)
        if m:
            out[int(m.group(1))] = int(float(m.group(2)))
    check(sorted(out) == list(range(SHARDS)), f'requests_served series: {out}')
    return out


def main():
    in_venv()
    try:
        import cassandra
        from cassandra.cluster import Cluster  # noqa: F401
    except ImportError as e:
        unavailable(f'the scylla-driver virtualenv lacks the driver ({e})')
    try:
        import cassandra.shard_info  # noqa: F401 (scylla-driver's; the DataStax driver has none)
    except ImportError:
        raise AssertionError(f'the driver in {VENV} is not scylla-driver')
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix='reef-scylla-driver-', dir='/var/tmp') as tmp:
        with reef_node(REEF, tmp, smp=SHARDS, memory='768M') as node:
            node.start(START_TIMEOUT)
            run_workload(node.cql, node.aware, node.prom)
            node.stop(STOP_TIMEOUT)
    print(f'cql_scylla_driver: all checks passed in {time.monotonic() - t0:.1f} s')


if __name__ == '__main__':
    try:
        main()
    except AssertionError as e:
        print(f'FAILED: {e}', file=sys.stderr)
        sys.exit(1)
