#!/usr/bin/env python3
# test.py modes: dev
"""Round trip of Reef's `me` writer through Cassandra for random tables: `peer gen` (../shared/tools/cassandra-peer,
Cassandra 5.0.9) invents a fresh batch of tables (a new seed every run, printed; REEF_PEER_SEED=S repeats it) and
writes them as nb with Cassandra's own writer; `reef sstable upgrade` reads each sstable and writes it as `me`; then
Cassandra's sstabledump code (`bin/peer dump -t --now 1750000000`, one JVM for the batch) reads Reef's files and
must print JSON equal to its dump of the originals (gen's expected.json, dumped at the same clock), sstable by
sstable, "position" fields aside (our partitions may sit elsewhere in Data.db than Cassandra's writer put them).

REEF_PEER_TABLES tables (default 8) of at most REEF_PEER_STATEMENTS statements (default 800: the run stays
within about 3 minutes on the 2-core VM, JVM start-ups included). test.py runs it once per mode with that mode's reef (REEF_BUILD_DIR). Without
../shared it says so and passes; with CI=true a missing ../shared, java or mvn is a failure. A failing run keeps
the tables and Reef's files under testlog/<mode>/interop/writer_gen_<seed>/.
"""
import fcntl
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_gen_diff import (ROOT, peer_run_setup, say, parse_documents, show, first_difference,  # noqa: E402
                           copy_peer)
from writer_peer_roundtrip import without_positions  # noqa: E402

# The corpus' dump clock; gen writes an hour before it, so that about half of its TTL'd data has expired by then.
DUMP_NOW = 1750000000
NOW = DUMP_NOW - 3600
GEN_TIMEOUT = 600       # the first run in a clone builds the peer with mvn
UPGRADE_TIMEOUT = 300
DUMP_TIMEOUT = 300


def main():
    mode, reef, seed, tables = peer_run_setup('REEF_PEER_TABLES', 8)
    say(f'seed {seed}, {tables} tables, mode {mode} (REEF_PEER_SEED={seed} repeats this run)')

    work = os.path.join(ROOT, 'testlog', mode, 'interop', f'writer_gen_{seed}')
    gen_dir = os.path.join(work, 'gen')
    ours_dir = os.path.join(work, 'reef')
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(ours_dir)
    tooldir = os.path.join(ROOT, 'build', 'interop')
    os.makedirs(tooldir, exist_ok=True)
    peer = os.path.join(tooldir, 'cassandra-peer')
    # One peer copy and one JVM at a time for all modes and drivers.
    with open(os.path.join(tooldir, 'peer.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        copy_peer(peer)
        cmd = [os.path.join(peer, 'bin', 'peer'), 'gen', '--seed', str(seed), '--tables', str(tables),
               '--now', str(NOW), '--dump-now', str(DUMP_NOW), '--out', gen_dir, '--keep-going',
               '--max-statements', os.environ.get('REEF_PEER_STATEMENTS', '800')]
        say('$ ' + ' '.join(cmd))
        start = time.monotonic()
        gen = subprocess.run(cmd, capture_output=True, text=True, timeout=GEN_TIMEOUT,
                             env=dict(os.environ, PEER_HEAP=os.environ.get('PEER_HEAP', '1G')))
        say(f'peer gen took {time.monotonic() - start:.1f}s')
    summaries = {}
    for line in gen.stdout.splitlines():
        say('  ' + line)
        if line.startswith('t') and ' ' in line:
            summaries[line.split(' ', 1)[0]] = line
    if gen.returncode != 0:
        say(f'FAIL: peer gen exited with {gen.returncode} (seed {seed}):\n{gen.stderr[-4000:]}')
        return 1

    failures = []
    names = sorted(n for n in os.listdir(gen_dir) if os.path.isdir(os.path.join(gen_dir, n)))
    if len(names) != tables:
        say(f'FAIL: peer gen wrote {len(names)} tables, not {tables}')
        return 1
    written = {}
    start = time.monotonic()
    for name in names:
        tdir = os.path.join(gen_dir, name)
        if 'FAILED' in summaries.get(name, 'FAILED'):
            failures.append(name)
            say(f'FAIL {name}: peer gen could not write this table (seed {seed}): {summaries.get(name)}')
            continue
        data = sorted(os.path.join(tdir, f) for f in os.listdir(tdir) if f.endswith('-Data.db'))
        out = os.path.join(ours_dir, name)
        cmd = [reef, 'sstable', 'upgrade', '--all', '--output', out] + data
        r = subprocess.run(cmd, capture_output=True, timeout=UPGRADE_TIMEOUT)
        if r.returncode != 0:
            failures.append(name)
            say(f'FAIL {name} (seed {seed}): reef sstable upgrade exited with {r.returncode}: '
                f'{r.stderr.decode(errors="replace")[-2000:]}')
            continue
        mine = sorted(f for f in os.listdir(out) if f.endswith('-Data.db'))
        if len(mine) != len(data) or not all(f.startswith('me-') for f in mine):
            failures.append(name)
            say(f'FAIL {name}: reef wrote {mine} for {len(data)} sstables')
            continue
        written[name] = data
    say(f'reef upgraded {len(written)} tables in {time.monotonic() - start:.1f}s')
    if not written:
        say('FAIL: nothing to dump')
        return 1

    with open(os.path.join(tooldir, 'peer.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        copy_peer(peer)
        cmd = [os.path.join(peer, 'bin', 'peer'), 'dump', '-t', '--now', str(DUMP_NOW), ours_dir]
        say('$ ' + ' '.join(cmd))
        start = time.monotonic()
        dump = subprocess.run(cmd, capture_output=True, timeout=DUMP_TIMEOUT,
                              env=dict(os.environ, PEER_HEAP=os.environ.get('PEER_HEAP', '1G')))
        say(f'peer dump took {time.monotonic() - start:.1f}s')
    stderr = dump.stderr.decode(errors='replace')
    if dump.returncode != 0:
        say(f'FAIL: peer dump exited with {dump.returncode} (seed {seed}):\n{stderr[-4000:]}')
        return 1
    order = re.findall(r'== (\S+-Data\.db) format=', stderr)
    docs = parse_documents(dump.stdout.decode('utf-8'))
    if len(docs) != len(order):
        say(f'FAIL: peer dump printed {len(docs)} documents for {len(order)} sstables')
        return 1
    by_table = {}
    for path, doc in zip(order, docs):
        by_table.setdefault(os.path.basename(os.path.dirname(path)), []).append((os.path.basename(path), doc))
    for name in sorted(written):
        # upgrade keeps each generation, so Reef's files sort as the originals do.
        ours = [doc for _, doc in sorted(by_table.get(name, []), key=lambda x: x[0])]
        with open(os.path.join(gen_dir, name, 'expected.json'), encoding='utf-8') as f:
            expected = parse_documents(f.read())
        diff = first_difference(without_positions(ours), without_positions(expected))
        if diff:
            failures.append(name)
            path, a, b = diff
            say(f'FAIL {name} (seed {seed}): first difference at {path}\n'
                f'    cassandra on reef\'s file: {show(a)}\n    cassandra on the original: {show(b)}\n'
                f'    files: {os.path.join(ours_dir, name)} ({summaries.get(name, "")})')
            continue
        say(f'PASS {name}: {len(written[name])} sstables')
    if failures:
        say(f'FAIL: {len(failures)} of {len(names)} tables differ (seed {seed}: '
            f'REEF_PEER_SEED={seed} ./test.py --mode {mode} interop/writer_peer_gen_roundtrip); kept in {work}')
        return 1
    shutil.rmtree(work, ignore_errors=True)
    say(f'all {len(names)} tables equal through Cassandra (seed {seed})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
