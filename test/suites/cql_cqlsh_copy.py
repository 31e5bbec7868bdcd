#!/usr/bin/python3
"""cqlsh's COPY TO and COPY FROM (PyPI cqlsh, build/tools/cqlsh from ./dev.sh) round trip against a `reef --smp 2`
node on free loopback ports: 400 rows of mixed types (int, bigint, text with commas, quotes, unicode, double,
boolean, uuid, timestamp, blob, set, list, map, a frozen tuple, nulls) written through Debian's python3-cassandra,
exported with `COPY ks.t TO 'file.csv' WITH HEADER = true` (cqlsh reads the ring in token ranges), the table
truncated, imported with `COPY ks.t FROM` (prepared INSERTs in batches), and read back equal to the rows written;
the CSV holds one record per row. Not in the data, as cqlsh itself does not round-trip them against Cassandra
either: an empty text (COPY FROM reads an empty field as null, its NULL option's default) and control characters
(COPY TO prints a newline or a tab escaped as the two characters \\n or \\t, which COPY FROM keeps). The node stops
with SIGTERM and exits 0. /usr/bin/python3 on purpose: the interpreter Debian's python3-cassandra is installed for."""
import csv
import datetime
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

from suite_util import check, reef_node

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
BUILD = os.environ.get('REEF_BUILD_DIR', os.path.join(ROOT, 'build', 'dev'))
REEF = os.path.abspath(os.path.join(BUILD, 'reef'))
START_TIMEOUT = 60
STOP_TIMEOUT = 30
ROWS = 400


def unavailable(why):
    if os.environ.get('CI') == 'true':
        print(f'FAIL: {why}, and CI=true; run ./dev.sh test (it installs it)')
        sys.exit(1)
    print(f'skipped: {why}')
    sys.exit(0)


def cqlsh_path():
    local = os.path.join(ROOT, 'build', 'tools', 'cqlsh', 'bin', 'cqlsh')
    if os.access(local, os.X_OK):
        return local
    found = shutil.which('cqlsh')
    if not found:
        unavailable('no cqlsh (./dev.sh installs it into build/tools/cqlsh)')
    return found


def cqlsh(port, statements, cwd):
    t0 = time.monotonic()
    out = subprocess.run([cqlsh_path(), '127.0.0.1', str(port), '--request-timeout', '60', '-e', statements],
                         capture_output=True, text=True, timeout=300, cwd=cwd)
    check(out.returncode == 0 and 'Error' not in out.stderr,
          f'cqlsh -e {statements!r}: exit {out.returncode}\n{out.stdout}\n{out.stderr}')
    return out.stdout + out.stderr, time.monotonic() - t0


def make_rows():
    base = datetime.datetime(2024, 2, 29, 12, 0, 0)
    rows = []
    for i in range(ROWS):
        rows.append((
            i % 37,                                         # pk int
            f'c{i:04d}',                                    # ck text
            (i - 200) * 10 ** 12,                           # big bigint
            [f'plain {i}', f'comma, "quote" {i}', f"'single' ; semi|pipe {i}", 'ünïcode ✓'][i % 4],  # txt text
            None if i % 11 == 0 else i / 8 - 3.25,          # dbl double
            i % 2 == 0,                                     # flag boolean
            uuid.UUID(int=i * 0x9e3779b97f4a7c15 % (1 << 128)),  # id uuid
            base + datetime.timedelta(seconds=i * 3601),    # ts timestamp
            bytes([i % 256, 0, 255]),                       # raw blob
            set(range(i % 4)) or None,                      # nums set<int>
            [f'e{j}' for j in range(i % 3)] or None,        # names list<text>
            {f'k{j}': j * i for j in range(i % 3)} or None,  # attrs map<text, int>
            (i, f'p{i}'),                                   # pair frozen<tuple<int, text>>
        ))
    return rows


COLUMNS = 'pk, ck, big, txt, dbl, flag, id, ts, raw, nums, names, attrs, pair'


def normalized(r):
    """A row as read by the driver, its collections as plain sets/lists/dicts (None when empty)."""
    r = list(r)
    r[9] = set(r[9]) if r[9] else None
    r[10] = list(r[10]) if r[10] else None
    r[11] = dict(r[11]) if r[11] else None
    r[12] = tuple(r[12]) if r[12] is not None else None
    return tuple(r)


def run(port, tmp):
    from cassandra.cluster import Cluster
    cl = Cluster(['127.0.0.1'], port=port, protocol_version=4, connect_timeout=10, control_connection_timeout=10)
    try:
        s = cl.connect()
        s.execute("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute('CREATE TABLE ks.t (pk int, ck text, big bigint, txt text, dbl double, flag boolean, id uuid, '
                  'ts timestamp, raw blob, nums set<int>, names list<text>, attrs map<text, int>, '
                  'pair frozen<tuple<int, text>>, PRIMARY KEY (pk, ck))')
        ins = s.prepare(f'INSERT INTO ks.t ({COLUMNS}) VALUES ({", ".join("?" * 13)})')
        written = make_rows()
        for r in written:
            s.execute(ins, r)
        want = sorted(normalized(r) for r in written)
        got = sorted(normalized(r) for r in s.execute(f'SELECT {COLUMNS} FROM ks.t'))
        check(got == want, 'the rows read back before COPY differ from those written')

        out, t_to = cqlsh(port, f"COPY ks.t ({COLUMNS}) TO 'file.csv' WITH HEADER = true", tmp)
        check(f'{ROWS} rows exported' in out, f'COPY TO said:\n{out}')
        with open(os.path.join(tmp, 'file.csv'), newline='') as f:
            records = list(csv.reader(f))
        check(records[0] == COLUMNS.split(', ') and len(records) == ROWS + 1,
              f'file.csv: header {records[0]}, {len(records) - 1} records')
        print(f'COPY TO: {ROWS} rows exported in {t_to:.1f} s, file.csv has {len(records) - 1} records')

        s.execute('TRUNCATE ks.t')
        check(not list(s.execute('SELECT pk FROM ks.t')), 'rows left after TRUNCATE')
        out, t_from = cqlsh(port, f"COPY ks.t ({COLUMNS}) FROM 'file.csv' WITH HEADER = true", tmp)
        check(f'{ROWS} rows imported' in out, f'COPY FROM said:\n{out}')
        got = sorted(normalized(r) for r in s.execute(f'SELECT {COLUMNS} FROM ks.t'))
        missing = [r for r in want if r not in got]
        extra = [r for r in got if r not in want]
        check(got == want, f'after the round trip: {len(got)} rows, missing {missing[:3]}, extra {extra[:3]}')
        print(f'COPY FROM: {ROWS} rows imported in {t_from:.1f} s, all equal to the rows written')
    finally:
        cl.shutdown()


def main():
    try:
        import cassandra  # noqa: F401
    except ImportError as e:
        unavailable(f'the python driver is missing ({e}); install python3-cassandra')
    cqlsh_path()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix='reef-cqlsh-copy-', dir='/var/tmp') as tmp:
        with reef_node(REEF, tmp) as node:
            node.start(START_TIMEOUT)
            run(node.cql, tmp)
            node.stop(STOP_TIMEOUT)
    print(f'cql_cqlsh_copy: all checks passed in {time.monotonic() - t0:.1f} s')


if __name__ == '__main__':
    try:
        main()
    except AssertionError as e:
        print(f'FAILED: {e}', file=sys.stderr)
        sys.exit(1)
