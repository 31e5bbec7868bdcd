#!/usr/bin/env python3
"""Malformed HTTP thrown at a running node's REST API (api_port) and metrics endpoint (prometheus_port): random
garbage, truncated requests, bad methods and versions, bad percent-encoding, bad JSON bodies, oversized bodies,
huge and numerous headers, bad chunked bodies, and slowloris clients trickling bytes. Every request must be
answered (an HTTP/1.1 status line; an error carries the JSON {"message", "code"} body) or its connection closed
within a bounded wait; afterwards the node still serves both ports, and SIGTERM drains it to exit code 0.
REEF_MALFORMED_SEED replays a run (the seed is printed)."""
import json
import os
import random
import signal
import socket
import sys
import tempfile
import threading
import time

from suite_util import check, free_ports, logged_process

BUILD = os.environ.get('REEF_BUILD_DIR', os.path.join(os.path.dirname(__file__), '..', '..', 'build', 'dev'))
REEF = os.path.abspath(os.path.join(BUILD, 'reef'))
START_TIMEOUT = 60
STOP_TIMEOUT = 30
# The server's request timeout is 10 s: a client that never finishes is cut off by then.
WAIT = 20
REQUESTS_PER_PORT = 250
PATHS = ['/system/uptime_ms', '/system/logger', '/system/logger/api', '/api-doc', '/api-doc/system/', '/metrics',
         '/storage_service/keyspaces', '/nowhere']


def read_answer(sock, deadline):
    """('answered', status, headers, body) for one response, or ('closed', ...) when the server closes first.
    Fails when neither happens before the deadline."""
    buf = b''
    while True:
        end = buf.find(b'\r\n\r\n')
        if end >= 0:
            head = buf[:end].decode('latin-1')
            lines = head.split('\r\n')
            check(lines[0].startswith('HTTP/1.1 '), f'bad status line {lines[0]!r}')
            status = int(lines[0][9:12])
            headers = {}
            for line in lines[1:]:
                k, _, v = line.partition(':')
                headers[k.strip().lower()] = v.strip()
            length = int(headers.get('content-length', '0'))
            if len(buf) >= end + 4 + length:
                return 'answered', status, headers, buf[end + 4:end + 4 + length]
        left = deadline - time.monotonic()
        check(left > 0, f'neither answered nor closed within {WAIT} s; got {buf[:200]!r}')
        sock.settimeout(left)
        try:
            got = sock.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            got = b''
        except socket.timeout:
            continue
        if not got:
            check(not buf, f'closed in the middle of a response: {buf[:200]!r}')
            return 'closed', None, None, None
        buf += got


def check_answer(kind, status, headers, body, what):
    if kind == 'closed':
        return
    check(200 <= status <= 599, f'{what}: status {status}')
    if status >= 400:
        check(headers.get('content-type') == 'application/json', f'{what}: {status} with {headers}')
        doc = json.loads(body)
        check(isinstance(doc.get('message'), str) and doc.get('code') == status, f'{what}: error body {body!r}')


def send_and_check(port, data, what, shut_write=False, pieces=None):
    with socket.create_connection(('127.0.0.1', port), timeout=WAIT) as s:
        deadline = time.monotonic() + WAIT
        try:
            if pieces:
                for p in pieces:
                    s.sendall(p)
            else:
                s.sendall(data)
            if shut_write:
                s.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before reading it all (a 431 or 413)
        kind, status, headers, body = read_answer(s, deadline)
        check_answer(kind, status, headers, body, what)
        return kind, status


def valid_request(rng, path=None):
    path = path or rng.choice(PATHS)
    method = rng.choice(['GET', 'GET', 'POST', 'DELETE'])
    return f'{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n'.encode()


def malformed(rng):
    """(label, bytes, shut_write) of one random malformed request."""
    kind = rng.randrange(12)
    path = rng.choice(PATHS)
    if kind == 0:
        return 'garbage', bytes(rng.randrange(256) for _ in range(rng.randrange(1, 3000))) + b'\r\n\r\n', False
    if kind == 1:
        word = ''.join(rng.choice('ABCDEFGHIJKLMNOPQRSTUVWXYZ!#-(') for _ in range(rng.randrange(1, 12)))
        return 'bad method', f'{word} {path} HTTP/1.1\r\nHost: x\r\n\r\n'.encode(), False
    if kind == 2:
        return 'bad version', f'GET {path} HTTP/{rng.choice(["0.9", "2.0", "1.x", "11"])}\r\n\r\n'.encode(), False
    if kind == 3:
        full = valid_request(rng)
        return 'truncated', full[:rng.randrange(1, len(full) - 1)], True
    if kind == 4:
        n = rng.choice([1_048_577, 2_000_000, 10**12])
        return 'oversized body', (f'POST {path} HTTP/1.1\r\nContent-Length: {n}\r\n\r\n'.encode()
                                  + b'x' * rng.choice([1000, 300_000])), False
    if kind == 5:
        return 'huge header', (f'GET {path} HTTP/1.1\r\nX-Big: ' + 'h' * rng.randrange(17_000, 60_000) +
                               '\r\n\r\n').encode(), False
    if kind == 6:
        hs = ''.join(f'X-{i}: {"v" * 50}\r\n' for i in range(rng.randrange(300, 1000)))
        return 'many headers', f'GET {path} HTTP/1.1\r\n{hs}\r\n'.encode(), False
    if kind == 7:
        body = rng.choice(['{bad', '{"level": }', '[1, 2', '\x00\xff', 'null' * 100, '{"a":' * 500])
        data = body.encode('utf-8', 'surrogateescape')
        return 'bad JSON body', (f'POST /system/logger/api?level=info HTTP/1.1\r\nContent-Type: application/json\r\n'
                                 f'Content-Length: {len(data)}\r\n\r\n').encode() + data, False
    if kind == 8:
        bad = rng.choice(['%', '%zz', '%4', '/%00/', '?a=%G1', '?level=%'])
        return 'bad percent-encoding', f'GET /system/logger{bad} HTTP/1.1\r\n\r\n'.encode(), False
    if kind == 9:
        chunks = rng.choice(['zz\r\nab\r\n0\r\n\r\n', '5\r\nab\r\n', '-1\r\n\r\n', 'ffffffffffffffffff\r\n',
                             '0' * 20000 + '\r\n\r\n', '3\r\nabcdef\r\n0\r\n\r\n'])
        return 'bad chunked body', (f'POST /system/logger HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n'
                                    + chunks).encode(), rng.random() < 0.5
    if kind == 10:
        junk = rng.choice(['Bad Header\r\n', 'X: a\rb\r\n', 'X\x00Y: z\r\n', ': empty\r\n', 'Content-Length: -5\r\n',
                           'Content-Length: 1\r\nContent-Length: 2\r\n', 'Transfer-Encoding: gzip\r\n'])
        return 'bad header', f'GET {path} HTTP/1.1\r\n{junk}\r\n'.encode('latin-1'), False
    # A valid request cut at a random place, then garbage.
    full = valid_request(rng)
    return 'spliced', full[:rng.randrange(len(full))] + bytes(rng.randrange(256) for _ in range(50)), True


def slowloris(port, rng_seed, results, i):
    rng = random.Random(rng_seed)
    data = f'GET /system/uptime_ms HTTP/1.1\r\nX-Slow: {"s" * 200}'.encode()
    try:
        with socket.create_connection(('127.0.0.1', port), timeout=WAIT) as s:
            start = time.monotonic()
            closed = False
            for b in data:
                try:
                    s.sendall(bytes([b]))
                except (BrokenPipeError, ConnectionResetError):
                    closed = True
                    break
                time.sleep(rng.uniform(0.05, 0.3))
                if time.monotonic() - start > WAIT:
                    break
            if not closed:
                kind, status, headers, body = read_answer(s, start + 2 * WAIT)
                check(kind == 'closed', f'slowloris: answered {status}')
            results[i] = time.monotonic() - start
    except Exception as e:  # noqa: BLE001 (reported by the main thread)
        results[i] = e


def serves(api, prom):
    kind, status = send_and_check(api, b'GET /system/uptime_ms HTTP/1.1\r\n\r\n', 'uptime')
    check(kind == 'answered' and status == 200, f'GET /system/uptime_ms after the storm: {kind} {status}')
    kind, status = send_and_check(prom, b'GET /metrics HTTP/1.1\r\n\r\n', 'metrics')
    check(kind == 'answered' and status == 200, f'GET /metrics after the storm: {kind} {status}')


def main():
    seed = int(os.environ.get('REEF_MALFORMED_SEED', str(random.randrange(1 << 30))))
    print(f'seed {seed} (REEF_MALFORMED_SEED replays it)')
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix='reef-malformed-', dir='/var/tmp') as tmp:
        cql, aware, api, prom = free_ports(4)
        node = logged_process([REEF, '--workdir', os.path.join(tmp, 'work'), '--smp', '2', '--no-pin-threads',
                               '--memory', '512M', '--native-transport-port', str(cql),
                               '--native-shard-aware-transport-port', str(aware), '--api-port', str(api),
                               '--prometheus-port', str(prom)], tmp, os.path.join(tmp, 'node.log'), 'node')
        try:
            node.wait_for('ready:', START_TIMEOUT)
            # Slow clients run alongside the rest.
            slow = [None] * 6
            threads = [threading.Thread(target=slowloris, args=([api, prom][i % 2], seed + i, slow, i))
                       for i in range(len(slow))]
            for t in threads:
                t.start()
            counts = {}
            for port in (api, prom):
                for n in range(REQUESTS_PER_PORT):
                    label, data, shut = malformed(rng)
                    pieces = None
                    if rng.random() < 0.2 and len(data) > 2:
                        cuts = sorted(rng.sample(range(1, len(data)), min(5, len(data) - 1)))
                        pieces = [data[a:b] for a, b in zip([0] + cuts, cuts + [len(data)])]
                    what = f'{label} #{n} to port {port}: {data[:80]!r}'
                    kind, status = send_and_check(port, data, what, shut, pieces)
                    key = f'{label}: {status if kind == "answered" else "closed"}'
                    counts[key] = counts.get(key, 0) + 1
                    if n % 50 == 0:
                        serves(api, prom)
            for t in threads:
                t.join(3 * WAIT)
            for i, r in enumerate(slow):
                check(isinstance(r, float), f'slowloris client {i}: {r}')
            print(f'slowloris clients cut off after {min(slow):.1f} to {max(slow):.1f} s')
            for key in sorted(counts):
                print(f'  {key}: {counts[key]}')
            serves(api, prom)
            check(node.proc.poll() is None, 'the node died:\n' + node.text())
            node.proc.send_signal(signal.SIGTERM)
            rc = node.wait_exit(STOP_TIMEOUT)
            check(rc == 0, f'SIGTERM: exit code {rc}:\n{node.text()}')
        finally:
            node.kill()
    print('rest_api_malformed: all checks passed')


if __name__ == '__main__':
    sys.exit(main())
