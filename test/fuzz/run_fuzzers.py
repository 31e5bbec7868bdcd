#!/usr/bin/env python3
"""Runs the libFuzzer targets of test/fuzz/ (built by `./configure.py --mode=fuzz`: clang, ASan + UBSan) for a
bounded time each, seeded from the peer corpus (../shared/peer-sstables), after replaying every committed
regression input (test/fuzz/regressions/<target>/<dataset>/). test.py runs this once, in the debug pass.

Any crash, sanitizer report, uncaught exception other than malformed_sstable_exception, leak or timeout fails
the test; libFuzzer's reproducer is kept under testlog/debug/fuzz/<target>/<dataset>/ (replay it with
`REEF_FUZZ_DATASET=<dataset folder> build/fuzz/<target> <file>`). REEF_FUZZ_SECONDS sets each run's time
(default 25; 9 runs). Without ../shared it says so and passes; with CI=true a missing corpus or fuzz build fails.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.normpath(os.path.join(ROOT, '..', 'shared', 'peer-sstables'))
FUZZ_BUILD = os.path.join(ROOT, 'build', 'fuzz')
REGRESSIONS = os.path.join(ROOT, 'test', 'fuzz', 'regressions')
LOGS = os.path.join(ROOT, 'testlog', 'debug', 'fuzz')
VERSIONS = ['mc', 'md', 'me', 'na', 'nb']   # fuzz_statistics' first byte, in this order

# (target, dataset whose header and version it parses with). Data: uncompressed datasets with collections,
# range tombstones, static rows and every type; Index: the ones with promoted indexes.
RUNS = [
    ('fuzz_statistics', None),
    ('fuzz_index', 'scylla_skip_using_index_rows'),
    ('fuzz_index', 'gen_me_large_partition_uncompressed'),
    ('fuzz_data', 'gen_nb_all_types_uncompressed'),
    ('fuzz_data', 'scylla_collections'),
    ('fuzz_data', 'scylla_range_tombstones_simple'),
    ('fuzz_data', 'scylla_filtering_and_forwarding'),
    ('fuzz_cql_frame', None),
    ('fuzz_cql_statement', None),
    ('fuzz_http_request', None),
]
CONFORMANCE = os.path.normpath(os.path.join(ROOT, '..', 'shared', 'cql-conformance', 'cases'))


def say(msg):
    print(msg, flush=True)


def unavailable(why):
    if os.environ.get('CI') == 'true':
        say(f'FAIL: {why}, and CI=true (CI must run the fuzzers)')
        sys.exit(1)
    say(f'skipped: {why}')
    sys.exit(0)


def files(dataset, suffix):
    d = os.path.join(CORPUS, dataset)
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(suffix))


def write_seeds(target, dataset, out):
    """The seed inputs, in each target's input format."""
    os.makedirs(out, exist_ok=True)
    n = 0

    def seed(data):
        nonlocal n
        with open(os.path.join(out, f'seed{n:04d}'), 'wb') as f:
            f.write(data)
        n += 1
    if target == 'fuzz_cql_frame':
        for data in cql_frame_seeds():
            seed(data)
    elif target == 'fuzz_cql_statement':
        for data in cql_statement_seeds():
            seed(data)
    elif target == 'fuzz_http_request':
        for data in http_request_seeds():
            seed(data)
    elif target == 'fuzz_statistics':
        for ds in sorted(os.listdir(CORPUS)):
            if not os.path.isdir(os.path.join(CORPUS, ds)):
                continue
            for p in files(ds, '-Statistics.db'):
                v = os.path.basename(p)[:2]
                if v in VERSIONS:
                    with open(p, 'rb') as f:
                        seed(bytes([VERSIONS.index(v)]) + f.read())
    elif target == 'fuzz_index':
        for p in files(dataset, '-Index.db'):
            with open(p, 'rb') as f:
                seed(f.read())
    else:
        for p in files(dataset, '-Data.db'):
            with open(p, 'rb') as f:
                body = f.read()
            for chunk_byte in (0, 3, 200):   # 1-byte, 4-byte and 6400-byte buffers
                seed(bytes([chunk_byte]) + body)
    return n


def cql_frame(op, stream, body, flags=0):
    return bytes([4, flags]) + stream.to_bytes(2, 'big', signed=True) + bytes([op]) + len(body).to_bytes(4, 'big') + body


def cql_frame_seeds():
    """Streams of CQL request frames (fuzz_cql_frame's input): every request opcode, with and without flags."""
    def string(s):
        return len(s).to_bytes(2, 'big') + s.encode()

    def long_string(s):
        return len(s).to_bytes(4, 'big') + s.encode()
    startup = (2).to_bytes(2, 'big') + string('CQL_VERSION') + string('3.0.0') + string('COMPRESSION') + string('lz4')
    register = (1).to_bytes(2, 'big') + string('SCHEMA_CHANGE')
    options = (b'\x00\x01' + bytes([0x3f]) + (1).to_bytes(2, 'big') + (4).to_bytes(4, 'big') + b'\x00\x00\x00\x01'
               + (100).to_bytes(4, 'big') + (2).to_bytes(4, 'big') + b'\x01\x02' + b'\x00\x08' + (42).to_bytes(8, 'big'))
    query = long_string('SELECT * FROM ks.t WHERE pk = ?') + options
    execute = (16).to_bytes(2, 'big') + bytes(16) + options
    batch = (b'\x01' + (2).to_bytes(2, 'big') + b'\x00' + long_string('INSERT INTO t (a) VALUES (?)')
             + (1).to_bytes(2, 'big') + (1).to_bytes(4, 'big') + b'\x07' + b'\x01' + (16).to_bytes(2, 'big') + bytes(16)
             + (0).to_bytes(2, 'big') + b'\x00\x04' + b'\x20' + (5).to_bytes(8, 'big'))
    payload = (1).to_bytes(2, 'big') + string('k') + (1).to_bytes(4, 'big') + b'\x09'
    return [
        cql_frame(5, 0, b'') + cql_frame(1, 1, startup) + cql_frame(11, 2, register),
        cql_frame(7, 3, query) + cql_frame(9, 4, long_string('SELECT 1')) + cql_frame(10, 5, execute),
        cql_frame(13, 6, batch),
        cql_frame(7, 7, payload + query, 0x04 | 0x02),
        cql_frame(7, 8, query[:20]) + cql_frame(0x33, 9, b'xyz') + cql_frame(7, 10, query),
        bytes([3, 0, 0, 1, 5, 0, 0, 0, 0]),
    ]


def cql_statement_seeds():
    """Every statement of ../shared/cql-conformance's cases (fuzz_cql_statement's input: one statement's text),
    split as its runner splits them (a statement ends at a line ending in ';', a batch at APPLY BATCH),
    {ks} replaced."""
    out = []
    if not os.path.isdir(CONFORMANCE):
        return [b'SELECT * FROM ks.t WHERE pk = ?']
    for name in sorted(os.listdir(CONFORMANCE)):
        if not name.endswith('.cql'):
            continue
        cur = []
        with open(os.path.join(CONFORMANCE, name)) as f:
            for line in f:
                if not cur and (not line.strip() or line.lstrip().startswith(('--', '//'))):
                    continue
                cur.append(line)
                in_batch = cur[0].lstrip().upper().startswith('BEGIN') and not line.strip().upper().startswith('APPLY')
                if line.rstrip().endswith(';') and not in_batch:
                    out.append(''.join(cur).rstrip().rstrip(';').replace('{ks}', 'ks').encode())
                    cur = []
    return sorted(set(out))


def http_request_seeds():
    """HTTP request streams (fuzz_http_request's input: a piece-size byte, then the bytes): pipelined requests
    to every kind of route, chunked bodies, filters, and the errors."""
    streams = [
        b'GET /api-doc HTTP/1.1\r\nHost: localhost:10000\r\n\r\nGET /api-doc/system/ HTTP/1.1\r\n\r\n',
        b'POST /storage_service/keyspace_flush/ks1?cf=t1%2Ct2 HTTP/1.1\r\nContent-Length: 0\r\n\r\n'
        b'POST /storage_service/keyspace_flush/nosuch HTTP/1.1\r\n\r\n',
        b'GET /system/logger/x HTTP/1.1\r\n\r\nPOST /system/logger/x?level=debug&flag=true HTTP/1.1\r\n\r\n',
        b'DELETE /system/boom HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4;a=b\r\nabcd\r\n0\r\n\r\n',
        b'GET /metrics?__name__=scylla_cache*&__help__=false&shard=1 HTTP/1.1\r\n\r\n'
        b'GET /metrics?kind=(Q|E)UERY HTTP/1.0\r\nConnection: keep-alive\r\n\r\n',
        b'GET /nowhere HTTP/1.1\r\n\r\nBREW /api-doc HTTP/1.1\r\n\r\nPOST /x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc',
    ]
    return [bytes([piece]) + s for s in streams for piece in (0, 7, 255)]


def fuzz_env(dataset):
    env = dict(os.environ)
    env.setdefault('ASAN_OPTIONS', 'detect_leaks=1')
    env.setdefault('UBSAN_OPTIONS', 'halt_on_error=1:print_stacktrace=1')
    if dataset:
        env['REEF_FUZZ_DATASET'] = os.path.join(CORPUS, dataset)
    return env


def tail(text, n=60):
    return '\n'.join(text.splitlines()[-n:])


def main():
    if not os.path.isdir(CORPUS):
        unavailable(f'the peer corpus ({CORPUS}) is absent')
    missing = [t for t, _ in RUNS if not os.access(os.path.join(FUZZ_BUILD, 'fuzz', t), os.X_OK)]
    if missing:
        unavailable(f'the fuzz build lacks {", ".join(sorted(set(missing)))} (./configure.py --mode=fuzz && '
                    f'ninja -C build/fuzz; needs clang-16 and libclang-rt-16-dev)')
    seconds = int(os.environ.get('REEF_FUZZ_SECONDS', '15'))
    failures = []
    for target, dataset in RUNS:
        if dataset and not os.path.isdir(os.path.join(CORPUS, dataset)):
            failures.append(f'{target}/{dataset}')
            say(f'FAIL {target} {dataset}: the dataset is not in the corpus')
            continue
        binary = os.path.join(FUZZ_BUILD, 'fuzz', target)
        label = f'{target}/{dataset or "all"}'
        env = fuzz_env(dataset)
        # Findings committed as regression inputs first: each must now parse or fail cleanly.
        reg = os.path.join(REGRESSIONS, target, dataset or 'all')
        if os.path.isdir(reg) and os.listdir(reg):
            inputs = sorted(os.path.join(reg, f) for f in os.listdir(reg))
            r = subprocess.run([binary] + inputs, env=env, capture_output=True, text=True, timeout=300)
            if r.returncode != 0:
                failures.append(label)
                say(f'FAIL {label}: a regression input crashes again:\n{tail(r.stderr)}')
                continue
            say(f'PASS {label}: {len(inputs)} regression inputs')
        artifacts = os.path.join(LOGS, target, dataset or 'all')
        shutil.rmtree(artifacts, ignore_errors=True)
        os.makedirs(artifacts)
        with tempfile.TemporaryDirectory(prefix=f'reef-{target}-') as work:
            seeds = os.path.join(work, 'seeds')
            found = os.path.join(work, 'found')
            os.makedirs(found)
            nseeds = write_seeds(target, dataset, seeds)
            cmd = [binary, f'-max_total_time={seconds}', '-timeout=20', '-rss_limit_mb=2048', '-print_final_stats=1',
                   f'-artifact_prefix={artifacts}/', found, seeds]
            start = time.monotonic()
            r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=seconds + 120)
            took = time.monotonic() - start
        stats = [l for l in r.stderr.splitlines() if l.startswith('stat::number_of_executed_units')]
        runs = stats[0].split(':')[-1].strip() if stats else '?'
        if r.returncode != 0:
            failures.append(label)
            kept = sorted(os.listdir(artifacts))
            say(f'FAIL {label}: libFuzzer exited with {r.returncode} after {took:.0f}s; reproducer(s) in '
                f'{artifacts}: {", ".join(kept)}\n$ {" ".join(cmd)}\n{tail(r.stderr)}')
        else:
            shutil.rmtree(artifacts, ignore_errors=True)
            say(f'PASS {label}: {runs} inputs in {took:.0f}s from {nseeds} seeds')
    if failures:
        say(f'FAIL: {len(failures)} of {len(RUNS)} fuzz runs found something: {", ".join(failures)}')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
