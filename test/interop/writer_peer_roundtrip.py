#!/usr/bin/env python3
# test.py modes: dev
"""Round trip of Reef's sstable writer through Cassandra: every dataset of the peer corpus (../shared/peer-sstables)
is read by Reef and written again as `me` (`reef sstable rewrite`: LZ4 where the original is compressed, plain with
CRC.db where it is not), then Cassandra 5.0.9's own sstabledump code (`bin/peer dump -t --now 1750000000`, one JVM
for all datasets) reads Reef's files; its JSON must equal its dump of the original (expected.json) as JSON values,
"position" fields aside (our partitions may sit elsewhere in Data.db than another writer's).

Without ../shared it says so and passes; with CI=true a missing ../shared, java or mvn is a failure. A failing run
keeps Reef's files under testlog/<mode>/interop/writer_roundtrip/.
"""
import fcntl
import gzip
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_gen_diff import (ROOT, PEER_SRC, say, unavailable, parse_documents, show, first_difference,  # noqa: E402
                           copy_peer)

CORPUS = os.path.normpath(os.path.join(ROOT, '..', 'shared', 'peer-sstables'))
DUMP_NOW = 1750000000
REWRITE_TIMEOUT = 600
DUMP_TIMEOUT = 900


def without_positions(v):
    if isinstance(v, dict):
        return {k: without_positions(x) for k, x in v.items() if k != 'position'}
    if isinstance(v, list):
        return [without_positions(x) for x in v]
    return v


def read_expected(dataset_dir):
    p = os.path.join(dataset_dir, 'expected.json')
    if os.path.exists(p):
        with open(p, encoding='utf-8') as f:
            return f.read()
    with gzip.open(p + '.gz', 'rt', encoding='utf-8') as f:
        return f.read()


def main():
    if not os.path.isdir(CORPUS):
        unavailable(f'the peer corpus ({CORPUS}) is absent')
    if not os.path.isdir(PEER_SRC):
        unavailable(f'the peer tool ({PEER_SRC}) is absent')
    for prog in ('java', 'mvn'):
        if shutil.which(prog) is None:
            unavailable(f'{prog} is not installed (./install-dependencies.sh installs Java 17 and Maven)')
    mode = os.environ.get('REEF_TEST_MODE', 'dev')
    build = os.environ.get('REEF_BUILD_DIR', os.path.join(ROOT, 'build', mode))
    reef = os.path.join(build, 'reef')
    if not os.access(reef, os.X_OK):
        say(f'FAIL: {reef} is not built')
        return 1
    work = os.path.join(ROOT, 'testlog', mode, 'interop', 'writer_roundtrip')
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    failures = []
    datasets = sorted(n for n in os.listdir(CORPUS) if os.path.isdir(os.path.join(CORPUS, n)) and not n.startswith('_'))
    start = time.monotonic()
    written = {}
    for name in datasets:
        src = os.path.join(CORPUS, name)
        data = sorted(os.path.join(src, f) for f in os.listdir(src) if f.endswith('-Data.db'))
        compressed = any(f.endswith('-CompressionInfo.db') for f in os.listdir(src))
        out = os.path.join(work, name)
        os.makedirs(out)
        cmd = [reef, 'sstable', 'rewrite', '--out', out] + ([] if compressed else ['--uncompressed']) + data
        r = subprocess.run(cmd, capture_output=True, timeout=REWRITE_TIMEOUT)
        if r.returncode != 0:
            failures.append(name)
            say(f'FAIL {name}: reef sstable rewrite exited with {r.returncode}: {r.stderr.decode(errors="replace")[-2000:]}')
            continue
        written[name] = len(data)
    say(f'reef rewrote {len(written)} datasets in {time.monotonic() - start:.1f}s')

    tooldir = os.path.join(ROOT, 'build', 'interop')
    os.makedirs(tooldir, exist_ok=True)
    with open(os.path.join(tooldir, 'peer.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        peer = os.path.join(tooldir, 'cassandra-peer')
        copy_peer(peer)
        cmd = [os.path.join(peer, 'bin', 'peer'), 'dump', '-t', '--now', str(DUMP_NOW), work]
        say('$ ' + ' '.join(cmd))
        start = time.monotonic()
        dump = subprocess.run(cmd, capture_output=True, timeout=DUMP_TIMEOUT,
                              env=dict(os.environ, PEER_HEAP=os.environ.get('PEER_HEAP', '1G')))
        say(f'peer dump took {time.monotonic() - start:.1f}s')
    stderr = dump.stderr.decode(errors='replace')
    if dump.returncode != 0:
        say(f'FAIL: peer dump exited with {dump.returncode}:\n{stderr[-4000:]}')
        return 1
    # The dump names each sstable on stderr ("== path ...") in the order of its JSON documents on stdout.
    # (Found anywhere in a line: the JVM's own log lines may interleave with them.)
    order = re.findall(r'== (\S+-Data\.db) format=', stderr)
    docs = parse_documents(dump.stdout.decode('utf-8'))
    if len(docs) != len(order):
        say(f'FAIL: peer dump printed {len(docs)} documents for {len(order)} sstables')
        return 1
    by_dataset = {}
    for path, doc in zip(order, docs):
        by_dataset.setdefault(os.path.basename(os.path.dirname(path)), []).append((os.path.basename(path), doc))
    for name in sorted(written):
        ours = [doc for _, doc in sorted(by_dataset.get(name, []), key=lambda x: x[0])]
        expected = parse_documents(read_expected(os.path.join(CORPUS, name)))
        diff = first_difference(without_positions(ours), without_positions(expected))
        if diff:
            failures.append(name)
            path, a, b = diff
            say(f'FAIL {name}: first difference at {path}\n    cassandra on reef\'s file: {show(a)}\n'
                f'    cassandra on the original: {show(b)}\n    files: {os.path.join(work, name)}')
            continue
        say(f'PASS {name}: {written[name]} sstables')
    if failures:
        say(f'FAIL: {len(failures)} of {len(datasets)} datasets differ: {" ".join(failures)}; kept in {work}')
        return 1
    shutil.rmtree(work, ignore_errors=True)
    say(f'all {len(datasets)} datasets equal through Cassandra')
    return 0


if __name__ == '__main__':
    sys.exit(main())
