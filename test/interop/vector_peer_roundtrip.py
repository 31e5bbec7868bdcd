#!/usr/bin/env python3
# test.py modes: dev
"""vector<T, N> columns in sstables, both ways through Apache Cassandra 5.0.9 (../shared/tools/cassandra-peer):
Cassandra's own writer (`bin/peer write`, nb, uncompressed) writes tables with vectors as regular, static,
clustering (DESC) and partition key columns, of fixed-length elements (float, int, double, uuid, nested vectors)
and variable-length ones (text, smallint, frozen lists); then
- `reef sstable dump-data` of Cassandra's files must print what Cassandra's sstabledump code prints of them
  (`bin/peer dump -t`), positions included: Reef reads the VectorType class names of the serialization header
  and the cell and clustering encodings;
- `reef sstable rewrite` writes them again as `me`, and Cassandra's dump of Reef's files must equal its dump of
  its own, positions aside: Reef's writer encodes vectors as Cassandra reads them.

Without ../shared, java or mvn it says so and passes; with CI=true that is a failure. A failing run keeps the
files under testlog/<mode>/interop/vector_roundtrip/.
"""
import fcntl
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_gen_diff import (ROOT, say, peer_prerequisites, parse_documents, show, first_difference,  # noqa: E402
                           copy_peer)

NOW = 1700000000
DUMP_NOW = 1750000000
PEER_TIMEOUT = 900

# table: (schema, statements)
TABLES = {
    'c': ("CREATE TABLE ks.c (pk int, ck vector<int, 2>, vf vector<float, 3>, vt vector<text, 2>, "
          "vu vector<uuid, 1>, vd vector<double, 2>, vs vector<smallint, 3>, vl vector<frozen<list<int>>, 2>, "
          "vv vector<vector<float, 2>, 2>, sv vector<bigint, 2> static, PRIMARY KEY (pk, ck)) "
          "WITH CLUSTERING ORDER BY (ck DESC) AND compression = {'enabled': 'false'};",
          ["INSERT INTO ks.c (pk, ck, vf, vt, vu, vd, vs, vl, vv, sv) VALUES (1, [-1, 5], [1.0, -2.5, 3.25], "
           "['a', 'bcd'], [01234567-89ab-cdef-0123-456789abcdef], [1e300, -0.0], [1, -2, 300], [[1, 2], []], "
           "[[1.5, 2], [NaN, -Infinity]], [10, -20]);",
           "INSERT INTO ks.c (pk, ck, vf) VALUES (1, [0, -5], [0, 0, 0]);",
           "INSERT INTO ks.c (pk, ck, vf) VALUES (1, [-1, -5], [1, 2, 3]);",
           "INSERT INTO ks.c (pk, ck, vt) VALUES (2, [3, 3], ['', 'xyz']) USING TTL 1000;",
           "DELETE vf FROM ks.c WHERE pk = 2 AND ck = [3, 4];",
           "DELETE FROM ks.c WHERE pk = 2 AND ck > [5, 0] AND ck <= [7, 1];"]),
    'p': ("CREATE TABLE ks.p (k vector<text, 2> PRIMARY KEY, v int) WITH compression = {'enabled': 'false'};",
          ["INSERT INTO ks.p (k, v) VALUES (['x', 'y'], 1);",
           "INSERT INTO ks.p (k, v) VALUES (['', 'long text \u00e9'], 2);"]),
    'q': ("CREATE TABLE ks.q (k1 vector<float, 2>, k2 int, v vector<text, 1>, PRIMARY KEY ((k1, k2))) "
          "WITH compression = {'enabled': 'false'};",
          ["INSERT INTO ks.q (k1, k2, v) VALUES ([1.0, 2.0], 3, ['v']);",
           "INSERT INTO ks.q (k1, k2, v) VALUES ([-1.0, 0.5], -3, ['w']);"]),
}


def without_positions(v):
    if isinstance(v, dict):
        return {k: without_positions(x) for k, x in v.items() if k != 'position'}
    if isinstance(v, list):
        return [without_positions(x) for x in v]
    return v


def peer_dump(peer, path):
    """{table: [documents]} of Cassandra's dump of every sstable under path, in file name order."""
    cmd = [os.path.join(peer, 'bin', 'peer'), 'dump', '-t', '--now', str(DUMP_NOW), path]
    say('$ ' + ' '.join(cmd))
    r = subprocess.run(cmd, capture_output=True, timeout=PEER_TIMEOUT)
    stderr = r.stderr.decode(errors='replace')
    if r.returncode != 0:
        raise RuntimeError(f'peer dump exited with {r.returncode}:\n{stderr[-4000:]}')
    order = re.findall(r'== (\S+-Data\.db) format=', stderr)
    docs = parse_documents(r.stdout.decode('utf-8'))
    if len(docs) != len(order):
        raise RuntimeError(f'peer dump printed {len(docs)} documents for {len(order)} sstables')
    out = {}
    for p, doc in sorted(zip(order, docs), key=lambda x: x[0]):
        out.setdefault(os.path.basename(os.path.dirname(p)), []).append(doc)
    return out


def main():
    mode, reef = peer_prerequisites()
    work = os.path.join(ROOT, 'testlog', mode, 'interop', 'vector_roundtrip')
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    tooldir = os.path.join(ROOT, 'build', 'interop')
    os.makedirs(tooldir, exist_ok=True)
    with open(os.path.join(tooldir, 'peer.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        peer = os.path.join(tooldir, 'cassandra-peer')
        copy_peer(peer)
        originals = os.path.join(work, 'cassandra')
        for table, (schema, statements) in TABLES.items():
            d = os.path.join(work, 'input', table)
            os.makedirs(d)
            with open(os.path.join(d, 'schema.cql'), 'w') as f:
                f.write(schema + '\n')
            with open(os.path.join(d, 'data.cql'), 'w') as f:
                f.write('\n'.join(statements) + '\n')
            cmd = [os.path.join(peer, 'bin', 'peer'), 'write', '--schema', os.path.join(d, 'schema.cql'),
                   '--cql', os.path.join(d, 'data.cql'), '--out', originals, '--now', str(NOW),
                   '--timestamp', str(NOW * 1000000)]
            say('$ ' + ' '.join(cmd))
            r = subprocess.run(cmd, capture_output=True, timeout=PEER_TIMEOUT)
            if r.returncode != 0:
                say(f'FAIL: peer write of {table} exited with {r.returncode}:\n'
                    f'{r.stderr.decode(errors="replace")[-4000:]}')
                return 1
        expected = peer_dump(peer, originals)

        failures = []
        rewritten = os.path.join(work, 'reef')
        for table in TABLES:
            src = os.path.join(originals, 'ks', table)
            data = sorted(os.path.join(src, f) for f in os.listdir(src) if f.endswith('-Data.db'))
            r = subprocess.run([reef, 'sstable', 'dump-data'] + data, capture_output=True, timeout=PEER_TIMEOUT)
            if r.returncode != 0:
                failures.append(f'{table}: reef sstable dump-data exited with {r.returncode}: '
                                f'{r.stderr.decode(errors="replace")[-2000:]}')
                continue
            diff = first_difference(parse_documents(r.stdout.decode('utf-8')), expected.get(table, []))
            if diff:
                failures.append(f'{table}: reef reads Cassandra\'s file differently at {diff[0]}\n'
                                f'    reef: {show(diff[1])}\n    cassandra: {show(diff[2])}')
                continue
            say(f'PASS {table}: reef reads Cassandra\'s sstable as Cassandra does')
            out = os.path.join(rewritten, table)
            os.makedirs(out)
            r = subprocess.run([reef, 'sstable', 'rewrite', '--out', out, '--uncompressed'] + data,
                               capture_output=True, timeout=PEER_TIMEOUT)
            if r.returncode != 0:
                failures.append(f'{table}: reef sstable rewrite exited with {r.returncode}: '
                                f'{r.stderr.decode(errors="replace")[-2000:]}')
        ours = peer_dump(peer, rewritten)
    for table in TABLES:
        if any(f.startswith(f'{table}:') for f in failures):
            continue
        diff = first_difference(without_positions(ours.get(table, [])), without_positions(expected[table]))
        if diff:
            failures.append(f'{table}: Cassandra reads reef\'s file differently at {diff[0]}\n'
                            f'    on reef\'s file: {show(diff[1])}\n    on its own: {show(diff[2])}')
            continue
        say(f'PASS {table}: Cassandra reads reef\'s sstable as its own')
    if failures:
        for f in failures:
            say('FAIL ' + f)
        say(f'FAIL: kept in {work}')
        return 1
    shutil.rmtree(work, ignore_errors=True)
    say(f'all {len(TABLES)} vector tables equal through Cassandra, both ways')
    return 0


if __name__ == '__main__':
    sys.exit(main())
