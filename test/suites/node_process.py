#!/usr/bin/env python3
"""The node as a process: `reef --workdir DIR --smp 2` with a configuration file of free ports starts the database
(sstables loaded, commitlog replayed) and logs "ready"; a second node on the same directory is refused naming the
directory and the first node's pid; SIGTERM drains (memtables flushed, commitlog closed: no segment left) and
exits 0, and the next start loads the flushed sstables; the CQL server listens on both ports (OPTIONS answers
SUPPORTED with the shard keys; on the shard-aware port, shard = client port % shards), stops first in the drain,
and a CQL port in use stops start-up naming it; the ready line gives the REST API's and the metrics' URLs, both
answer, and a REST API port in use stops start-up naming it; with a slow drain step (the hidden
--test-drain-delay-ms) the REST API still answers during the drain, and a second SIGINT exits at once with
128 + SIGINT; a bad value in the file stops start-up naming the key, file and
line; with two data_file_directories, the flushes of two runs put sstables in both and a restart loads both.
Also `reef --version`. Run by test.py with REEF_BUILD_DIR (build/<mode>); every node started is stopped by
its pid in a finally."""
import http.client
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

from suite_util import check, free_ports, logged_process

BUILD = os.environ.get('REEF_BUILD_DIR', os.path.join(os.path.dirname(__file__), '..', '..', 'build', 'dev'))
REEF = os.path.abspath(os.path.join(BUILD, 'reef'))
# Debug builds (ASan, -O0) start slowly on a loaded machine.
START_TIMEOUT = 60
STOP_TIMEOUT = 30


def http_get(port, path):
    """(status, body text) of GET path on 127.0.0.1:port."""
    conn = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
    try:
        conn.request('GET', path)
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        conn.close()


class node(logged_process):
    def __init__(self, cwd, args, name):
        super().__init__([REEF] + args, cwd, os.path.join(cwd, name + '.log'), 'node')

    def stop(self):
        self.kill()


def cql_options(port, local_port=0):
    """OPTIONS on a raw socket (from local_port if not 0); returns the SUPPORTED frame's [string multimap]."""
    with socket.create_connection(('127.0.0.1', port), timeout=10, source_address=('127.0.0.1', local_port)) as s:
        s.sendall(bytes([4, 0, 0, 1, 5, 0, 0, 0, 0]))
        data = b''
        while len(data) < 9 or len(data) < 9 + int.from_bytes(data[5:9], 'big'):
            chunk = s.recv(65536)
            check(chunk, 'the CQL server closed the connection')
            data += chunk
    check(data[0] == 0x84 and data[4] == 0x06, f'OPTIONS answered {data[:9]!r}')
    body, pos = data[9:], 0

    def short():
        nonlocal pos
        pos += 2
        return int.from_bytes(body[pos - 2:pos], 'big')

    def string():
        nonlocal pos
        n = short()
        pos += n
        return body[pos - n:pos].decode()
    out = {}
    for _ in range(short()):
        k = string()
        out[k] = [string() for _ in range(short())]
    return out


def main():
    out = subprocess.run([REEF, '--version'], capture_output=True, text=True, timeout=30)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'VERSION')) as f:
        release = f.read().strip()
    check(out.returncode == 0 and out.stdout.startswith(f'reef {release} (commit '),
          f'reef --version: {out.returncode} {out.stdout!r} {out.stderr!r}')
    # dev and release link tcmalloc (configure.py); the sanitizer builds keep glibc's malloc.
    mode = os.path.basename(os.path.normpath(BUILD))
    allocator = 'tcmalloc ' if mode in ('dev', 'release') else 'glibc malloc'
    check(f'\nallocator: {allocator}' in out.stdout, f'reef --version ({mode} build): {out.stdout!r}')
    print(out.stdout.strip())
    out = subprocess.run([REEF, 'server', '--help'], capture_output=True, text=True, timeout=30)
    check(out.returncode == 0 and '--options-file' in out.stdout and '--native-transport-port' in out.stdout,
          f'reef server --help: {out.returncode} {out.stdout!r} {out.stderr!r}')
    out = subprocess.run([REEF, 'help'], capture_output=True, text=True, timeout=30)
    check(out.returncode == 0 and 'server ' in out.stdout and 'sstable ' in out.stdout,
          f'reef help: {out.returncode} {out.stdout!r} {out.stderr!r}')
    nodes = []
    with tempfile.TemporaryDirectory(prefix='reef-node-', dir='/var/tmp') as tmp:
        try:
            ports = free_ports(5)
            cfg = os.path.join(tmp, 'node.yaml')
            with open(cfg, 'w') as f:
                f.write(f'cluster_name: node_process\nnative_transport_port: {ports[0]}\n'
                        f'native_shard_aware_transport_port: {ports[1]}\napi_port: {ports[2]}\n'
                        f'prometheus_port: {ports[3]}\n')
            work = os.path.join(tmp, 'work')
            args = ['--options-file', cfg, '--workdir', work, '--smp', '2', '--no-pin-threads']

            first = node(tmp, args + ['--memory', '512M'], 'first')
            nodes.append(first)
            first.wait_for('ready:', START_TIMEOUT)
            text = first.text()
            for step in ('config: read ' + cfg, 'directories locked: ', 'runtime: 2 shards',
                         'memory: 256 MiB per shard, cache budget 128 MiB per shard',
                         'commitlog replay: 0 segments', 'database: ',
                         f'CQL server: listening on 127.0.0.1:{ports[0]} (least-loaded shard) and '
                         f'127.0.0.1:{ports[1]} (shard-aware'):
                check(step in text, f'start-up step {step!r} not logged:\n{text}')
            urls = f'REST API http://127.0.0.1:{ports[2]}, metrics http://127.0.0.1:{ports[3]}/metrics'
            check(urls in text, f'the ready line lacks {urls!r}:\n{text}')
            status, body = http_get(ports[2], '/system/uptime_ms')
            check(status == 200 and body.isdigit(), f'GET /system/uptime_ms: {status} {body!r}')
            status, body = http_get(ports[3], '/metrics')
            check(status == 200 and 'scylla_reactor_tasks_processed{shard="1"}' in body, f'GET /metrics: {status}')
            supported = cql_options(ports[0])
            check(supported.get('SCYLLA_NR_SHARDS') == ['2'] and supported.get('SCYLLA_SHARD_AWARE_PORT') ==
                  [str(ports[1])] and 'lz4' in supported.get('COMPRESSION', []), f'SUPPORTED: {supported}')
            # The shard-aware port: shard = client port % shards, as shard-aware drivers bind it.
            routed = 0
            for local in range(50000, 50100):
                try:
                    shard = cql_options(ports[1], local)['SCYLLA_SHARD']
                except OSError:
                    continue  # that local port is taken
                check(shard == [str(local % 2)], f'client port {local} landed on shard {shard}')
                routed += 1
                if routed == 4:
                    break
            check(routed == 4, f'only {routed} client ports could be bound')

            second = node(tmp, args, 'second')
            nodes.append(second)
            rc = second.wait_exit(START_TIMEOUT)
            text = second.text()
            check(rc == 1, f'second node on the same directory exited with {rc}:\n{text}')
            check(f'directory {work}/data is in use by another reef process (held by pid {first.proc.pid})' in text,
                  f'the refusal does not name the directory and pid {first.proc.pid}:\n{text}')

            start = time.monotonic()
            first.proc.send_signal(signal.SIGTERM)
            rc = first.wait_exit(STOP_TIMEOUT)
            text = first.text()
            check(rc == 0, f'SIGTERM: exit code {rc}:\n{text}')
            check('received SIGTERM: draining' in text and 'drain finished' in text, f'no drain logged:\n{text}')
            for step in ('draining: stop the CQL server', 'draining: flush memtables', 'draining: close the commitlog'):
                check(step in text, f'drain step {step!r} not logged:\n{text}')
            check(text.index('draining: stop the CQL server') < text.index('draining: flush memtables'),
                  f'the CQL server is not the first to stop:\n{text}')
            # A clean stop leaves nothing to replay: every segment was discarded and deleted.
            segments = [n for n in os.listdir(os.path.join(work, 'commitlog')) if n.startswith('CommitLog-')]
            check(not segments, f'commitlog segments left after SIGTERM: {segments}')
            print(f'SIGTERM to exit: {time.monotonic() - start:.2f} s')

            # The lock went with the first node: a new one starts on the same directory.
            slow = node(tmp, args + ['--test-drain-delay-ms', '600000'], 'slow')
            nodes.append(slow)
            slow.wait_for('ready:', START_TIMEOUT)
            # It found what the first one flushed, and nothing to replay.
            text = slow.text()
            for step in ('sstables loaded: system_schema.tables: ', 'commitlog replay: 0 segments'):
                check(step in text, f'restart: {step!r} not logged:\n{text}')
            slow.proc.send_signal(signal.SIGINT)
            slow.wait_for('draining: test delay', STOP_TIMEOUT)
            # The REST API stops last: it still answers during the drain.
            status, body = http_get(ports[2], '/system/uptime_ms')
            check(status == 200 and body.isdigit(), f'GET /system/uptime_ms while draining: {status} {body!r}')
            start = time.monotonic()
            slow.proc.send_signal(signal.SIGINT)
            rc = slow.wait_exit(10)
            text = slow.text()
            check(rc == 128 + signal.SIGINT, f'second SIGINT: exit code {rc}:\n{text}')
            check('received SIGINT again while draining' in text, f'second signal not logged:\n{text}')
            print(f'second SIGINT to exit: {time.monotonic() - start:.2f} s')

            # A CQL port in use: start-up stops with one line naming the address.
            # (A port of its own: a closed connection's TIME-WAIT may hold one the nodes used.)
            holder = socket.socket()
            holder.bind(('127.0.0.1', 0))
            holder.listen()
            held = holder.getsockname()[1]
            try:
                busy = node(tmp, args + ['--native-transport-port', str(held)], 'busy')
                nodes.append(busy)
                rc = busy.wait_exit(START_TIMEOUT)
                text = busy.text()
                check(rc == 1 and f'cannot start the CQL server: bind to 127.0.0.1:{held}: Address already in use'
                      in text, f'a CQL port in use: exit code {rc}:\n{text}')
            finally:
                holder.close()
            # The same for the REST API's port: the CQL server started, then everything stops.
            holder = socket.socket()
            holder.bind(('127.0.0.1', 0))
            holder.listen()
            held = holder.getsockname()[1]
            try:
                busy = node(tmp, args + ['--api-port', str(held)], 'busy-api')
                nodes.append(busy)
                rc = busy.wait_exit(START_TIMEOUT)
                text = busy.text()
                check(rc == 1 and f'cannot start the REST API: bind to 127.0.0.1:{held}: Address already in use'
                      in text, f'a REST API port in use: exit code {rc}:\n{text}')
            finally:
                holder.close()
            # Two data directories: each run's drain flushes every table once; the turn by generation sends the
            # second run's sstables to the other directory, and the third run loads both.
            dirs = [os.path.join(tmp, 'd1'), os.path.join(tmp, 'd2')]
            two = args[:args.index('--workdir')] + ['--workdir', os.path.join(tmp, 'two'), '--smp', '2',
                                                    '--no-pin-threads', '--data-file-directories', ','.join(dirs)]
            def tables_sstables():
                return [sum(1 for root, _, files in os.walk(os.path.join(d, 'system_schema'))
                            for f in files if f.endswith('-TOC.txt') and os.path.basename(root).startswith('tables-'))
                        for d in dirs]
            for run in range(3):
                before = tables_sstables()
                n = node(tmp, two, f'two-{run}')
                nodes.append(n)
                n.wait_for('ready:', START_TIMEOUT)
                text = n.text()
                check(run == 0 or f'sstables loaded: system_schema.tables: {sum(before)}\n' in text,
                      f'two directories, run {run}: not all of {before} sstables loaded:\n{text}')
                n.proc.send_signal(signal.SIGTERM)
                rc = n.wait_exit(STOP_TIMEOUT)
                check(rc == 0, f'two directories, run {run}: exit code {rc}:\n{n.text()}')
            tocs = []
            for d in dirs:
                tocs.append(sum(1 for root, _, files in os.walk(os.path.join(d, 'system_schema'))
                                for f in files if f.endswith('-TOC.txt') and '/snapshots/' not in root))
            check(all(tocs), f'two directories: sstables {tocs} (each should hold some)')
            check('only the first' not in text, f'two directories: warned:\n{text}')
            print(f'two data directories: {tocs[0]} and {tocs[1]} system_schema sstables; last run loaded '
                  f'{before} of system_schema.tables')

            bad_cfg = os.path.join(tmp, 'bad.yaml')
            with open(bad_cfg, 'w') as f:
                f.write(f'cluster_name: node_process\n\napi_port: 70000\n')
            bad = node(tmp, ['--options-file', bad_cfg, '--workdir', work, '--smp', '1'], 'bad')
            nodes.append(bad)
            rc = bad.wait_exit(START_TIMEOUT)
            text = bad.text()
            check(rc == 1 and f'{bad_cfg}:3: api_port: expected an integer in [1, 65535]' in text,
                  f'a bad value: exit code {rc}:\n{text}')
        finally:
            for n in nodes:
                n.stop()
    print('node_process: all checks passed')


if __name__ == '__main__':
    try:
        main()
    except AssertionError as e:
        print(f'FAILED: {e}', file=sys.stderr)
        sys.exit(1)
