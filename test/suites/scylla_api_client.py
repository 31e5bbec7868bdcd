#!/usr/bin/python3
# test.py modes: dev
"""PyPI's scylla-api-client 1.1 (a real third-party client of ScyllaDB's REST API) against a `reef` node on free
loopback ports: `-lm` lists every module /api-doc lists, `-lmc` a module's commands, and every operation every
module documents is called through the client (GETs first, then POSTs and DELETEs, drain last) with its required
parameters filled from a keyspace and table the suite created over CQL; each must answer 200 with stdout of the
shape its doc's type says (void: an empty line; string, long, double, boolean, array: that JSON). Then a few values
are checked against what the suite knows (the table listed, its writes counted, host id, tokens, datacenter).

The client is installed from PyPI into build/tools/scylla-api-client (a venv, as dev.sh installs cqlsh): without
PyPI or Debian's python3-cassandra (to create the table) the suite says it is skipped, or fails under CI=true. Run by
test.py with REEF_BUILD_DIR (build/<mode>); the node is stopped by its pid in a finally."""
import json
import os
import subprocess
import sys
import tempfile
import urllib.request

from suite_util import check, free_ports, logged_process

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
BUILD = os.environ.get('REEF_BUILD_DIR', os.path.join(ROOT, 'build', 'dev'))
REEF = os.path.abspath(os.path.join(BUILD, 'reef'))
VENV = os.path.join(ROOT, 'build', 'tools', 'scylla-api-client')
CLIENT = os.path.join(VENV, 'bin', 'scylla-api-client')
VERSION = '1.1'
START_TIMEOUT = 60


def skip_or_fail(why):
    if os.environ.get('CI') == 'true':
        print(f'FAIL: {why}')
        sys.exit(1)
    print(f'skipped: {why}')
    sys.exit(0)


def ensure_client():
    if os.path.exists(CLIENT):
        return
    try:
        subprocess.run(['/usr/bin/python3', '-m', 'venv', VENV], check=True, capture_output=True, timeout=300)
        subprocess.run([os.path.join(VENV, 'bin', 'pip'), 'install', '--quiet', f'scylla-api-client=={VERSION}'],
                       check=True, capture_output=True, timeout=600)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        skip_or_fail(f'scylla-api-client {VERSION} could not be installed from PyPI into {VENV}: '
                     f'{getattr(e, "stderr", b"").decode(errors="replace")[-500:]}')


def cql_setup(port):
    """ks.t with three rows, over the python driver's connection level."""
    try:
        from cassandra import ConsistencyLevel
        from cassandra.connection import DefaultEndPoint
        from cassandra.io.asyncorereactor import AsyncoreConnection
        from cassandra.protocol import QueryMessage
    except ImportError as e:
        skip_or_fail(f'the python driver is missing ({e}); install python3-cassandra')
    AsyncoreConnection.initialize_reactor()
    conn = AsyncoreConnection.factory(DefaultEndPoint('127.0.0.1', port), 10, protocol_version=4,
                                      user_type_map={})
    try:
        for q in ["CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                  'CREATE TABLE ks.t (pk int, ck int, v text, PRIMARY KEY (pk, ck))',
                  "INSERT INTO ks.t (pk, ck, v) VALUES (1, 1, 'a')",
                  "INSERT INTO ks.t (pk, ck, v) VALUES (2, 1, 'b')",
                  "INSERT INTO ks.t (pk, ck, v) VALUES (3, 1, 'c')"]:
            conn.wait_for_response(QueryMessage(query=q, consistency_level=ConsistencyLevel.ONE), timeout=30)
    finally:
        conn.close()


class api:
    def __init__(self, port):
        self.port = port

    def get_json(self, path):
        with urllib.request.urlopen(f'http://127.0.0.1:{self.port}{path}', timeout=30) as r:
            check(r.status == 200, f'GET {path}: {r.status}')
            return json.loads(r.read() or b'null')

    def client(self, *args):
        out = subprocess.run([CLIENT, '-a', '127.0.0.1', '-p', str(self.port)] + list(args), capture_output=True,
                             text=True, timeout=120)
        check(out.returncode == 0 and 'Traceback' not in out.stderr,
              f'scylla-api-client {" ".join(args)}: exit {out.returncode}\n{out.stdout}\n{out.stderr}')
        return out.stdout


def value_for(module, param, loggers):
    """A value for a required parameter: the suite's keyspace and table, this node's address, an existing logger."""
    name = param['name']
    if param.get('enum'):
        return param['enum'][0]
    if name == 'name':
        return 'ks:t' if module == 'column_family' else loggers[0]
    by_name = {'keyspace': 'ks', 'cf': 't', 'table': 't', 'kn': 'ks', 'key': '1', 'host': '127.0.0.1',
               'endpoint': '127.0.0.1', 'level': 'info', 'tag': 'api_suite', 'type': 'all'}
    if name in by_name:
        return by_name[name]
    return {'boolean': 'false', 'long': '0', 'double': '0'}.get(param.get('type'), 'x')


def check_shape(what, kind, stdout):
    check(stdout.endswith('\n'), f'{what}: stdout {stdout!r} lacks its newline')
    text = stdout[:-1]
    check(not text.startswith("{'message'"), f'{what}: an error: {text}')
    if kind == 'void':
        check(text == '', f'{what} (void): stdout {stdout!r}')
        return None
    value = json.loads(text)
    expected = {'string': str, 'long': int, 'double': (int, float), 'boolean': bool, 'array': list}.get(kind)
    if expected is not None:
        check(isinstance(value, expected) and not (kind == 'long' and isinstance(value, bool)),
              f'{what}: {kind} expected, got {text}')
    return value


def main():
    if not os.path.exists(REEF):
        print(f'FAIL: no {REEF}')
        sys.exit(1)
    ensure_client()
    with tempfile.TemporaryDirectory(prefix='reef-api-client-', dir='/var/tmp') as tmp:
        ports = free_ports(4)
        cfg = os.path.join(tmp, 'node.yaml')
        with open(cfg, 'w') as f:
            f.write(f'cluster_name: api_client\nnative_transport_port: {ports[0]}\n'
                    f'native_shard_aware_transport_port: {ports[1]}\napi_port: {ports[2]}\n'
                    f'prometheus_port: {ports[3]}\n')
        node = logged_process([REEF, '--options-file', cfg, '--workdir', os.path.join(tmp, 'work'), '--smp', '2',
                               '--no-pin-threads', '--memory', '512M'], tmp, os.path.join(tmp, 'node.log'), 'node')
        try:
            node.wait_for('ready:', START_TIMEOUT)
            cql_setup(ports[0])
            a = api(ports[2])
            try:
                top = a.get_json('/api-doc')
            except OSError as e:
                skip_or_fail(f'the node serves no REST API on port {ports[2]} ({e})')
            modules = [m['path'].strip('/') for m in top['apis']]
            for m in ('storage_service', 'column_family', 'cache_service', 'gossiper', 'snitch', 'system'):
                check(m in modules, f'/api-doc lacks module {m}: {modules}')

            listed = a.client('-lm')
            check(listed.startswith('Available modules:'), f'-lm: {listed}')
            for m in modules:
                check(f'\n{m}' in listed or f' {m}' in listed, f'-lm does not list {m}:\n{listed}')
            commands = a.client('-lmc', 'column_family')
            check('metrics/read/{name}' in commands and 'GET' in commands, f'-lmc column_family:\n{commands}')

            loggers = a.get_json('/system/logger') if 'system' in modules else []
            loggers = loggers or ['api']
            calls = []
            for m in modules:
                for entry in a.get_json(f'/api-doc/{m}/')['apis']:
                    command = entry['path'].strip('/')
                    command = command[len(m) + 1:] if command.startswith(m) else command
                    for op in entry['operations']:
                        calls.append((m, command or '/', op))
            order = {'GET': 0, 'POST': 1, 'DELETE': 1}

            def last(call):
                m, command, op = call
                return (command == 'drain' and op['method'] == 'POST', order[op['method']])
            calls.sort(key=last)
            values = {}
            for m, command, op in calls:
                args = [m, command, op['method']]
                for p in op['parameters']:
                    if p.get('required'):
                        args += [f'--{p["name"]}', value_for(m, p, loggers)]
                what = ' '.join(args)
                values[(m, command, op['method'])] = check_shape(what, op.get('type', 'void'), a.client(*args))
            print(f'scylla-api-client: {len(calls)} operations of {len(modules)} modules answered as documented')

            # A few values the suite knows.
            check('ks:t' in values[('column_family', 'name', 'GET')], 'ks:t is not among the tables')
            check(values[('column_family', 'metrics/write/{name}', 'GET')] == 3, 'ks:t did not count 3 writes')
            check(values[('snitch', 'datacenter', 'GET')] == 'datacenter1', 'datacenter')
            check(values[('gossiper', 'endpoint/live', 'GET')] == ['127.0.0.1'], 'live endpoints')
            host_id = values[('storage_service', 'hostid/local', 'GET')]
            check(values[('storage_service', 'host_id', 'GET')] == [{'key': '127.0.0.1', 'value': host_id}],
                  'host_id map')
            with open(os.path.join(ROOT, 'VERSION')) as f:
                release = f.read().strip()
            check(values[('storage_service', 'scylla_release_version', 'GET')] == release, 'scylla_release_version')
            check(values[('storage_service', 'native_transport', 'GET')] is True, 'native_transport before drain')
            if ('storage_service', 'drain', 'POST') in values:
                off = a.client('storage_service', 'native_transport', 'GET')
                check(off == 'false\n', f'native_transport after drain: {off!r}')
            tokens = values[('storage_service', 'tokens', 'GET')]
            check(len(tokens) == 1 and values[('storage_service', 'tokens_endpoint', 'GET')] ==
                  [{'key': tokens[0], 'value': '127.0.0.1'}], 'tokens')
        finally:
            node.kill()


if __name__ == '__main__':
    main()
