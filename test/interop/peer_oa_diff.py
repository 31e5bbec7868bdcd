#!/usr/bin/env python3
# test.py modes: dev
"""Random differential test of Reef's oa (Cassandra 5.0) reading: `peer gen` invents random tables (written as nb),
each table's statements are replayed with `bin/peer write --format oa` (the replay line gen puts in data.cql), the
oa sstables are dumped by Cassandra's sstabledump code (`bin/peer dump -t`) and by `reef sstable dump-data`, and the
JSON values must be equal; `reef sstable validate` must pass on them too.

A fresh seed every run (printed; REEF_PEER_SEED=S repeats it), REEF_PEER_OA_TABLES tables (default 1: each costs two
JVM starts, about 40 s on two cores; the seeds change, so runs add up). Skips and fails like peer_gen_diff.py (CI=true turns a missing ../shared, java or mvn into a failure).
"""
import fcntl
import glob
import os
import shlex
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_gen_diff import (ROOT, peer_run_setup, NOW, DUMP_NOW, GEN_TIMEOUT, DUMP_TIMEOUT, say,  # noqa: E402
                           parse_documents, show, first_difference, copy_peer)


def replay_args(data_cql):
    """The options of gen's `-- replay: bin/peer write ...` line, less the paths."""
    with open(data_cql, encoding='utf-8') as f:
        for line in f:
            if line.startswith('-- replay:'):
                args = shlex.split(line[len('-- replay:'):])
                out, skip = [], False
                for a in args[2:]:  # after "bin/peer write"
                    if skip:
                        skip = False
                        continue
                    if a in ('--schema', '--cql', '--out'):
                        skip = True
                        continue
                    out.append(a)
                return out
    raise RuntimeError(f'{data_cql} has no replay line')


def main():
    mode, reef, seed, tables = peer_run_setup('REEF_PEER_OA_TABLES', 1)
    say(f'seed {seed}, {tables} tables as oa, mode {mode} (REEF_PEER_SEED={seed} repeats this run)')
    tooldir = os.path.join(ROOT, 'build', 'interop')
    os.makedirs(tooldir, exist_ok=True)
    work = os.path.join(ROOT, 'testlog', mode, 'interop', f'peer_oa_{seed}')
    shutil.rmtree(work, ignore_errors=True)
    failures = []
    with open(os.path.join(tooldir, 'peer.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        peer_dir = os.path.join(tooldir, 'cassandra-peer')
        copy_peer(peer_dir)
        peer = os.path.join(peer_dir, 'bin', 'peer')
        gen_out = os.path.join(work, 'gen')
        start = time.monotonic()
        gen = subprocess.run([peer, 'gen', '--seed', str(seed), '--tables', str(tables), '--now', str(NOW),
                              '--dump-now', str(DUMP_NOW), '--out', gen_out, '--keep-going'],
                             capture_output=True, text=True, timeout=GEN_TIMEOUT,
                             env=dict(os.environ, PEER_HEAP=os.environ.get('PEER_HEAP', '1G')))
        if gen.returncode != 0:
            say(f'FAIL: peer gen exited with {gen.returncode} (seed {seed}):\n{gen.stderr[-4000:]}')
            return 1
        names = sorted(n for n in os.listdir(gen_out) if os.path.isdir(os.path.join(gen_out, n)))
        for name in names:
            src = os.path.join(gen_out, name)
            out = os.path.join(work, 'oa', name)
            w = subprocess.run([peer, 'write', '--schema', 'schema.cql', '--cql', 'data.cql', '--out', out]
                               + replay_args(os.path.join(src, 'data.cql')) + ['--format', 'oa'],
                               cwd=src, capture_output=True, text=True, timeout=GEN_TIMEOUT)
            if w.returncode != 0:
                failures.append(name)
                say(f'FAIL {name}: peer write --format oa exited with {w.returncode}: {w.stderr[-2000:]}')
                continue
            d = subprocess.run([peer, 'dump', '-t', '--now', str(DUMP_NOW), out], capture_output=True, text=True,
                               timeout=GEN_TIMEOUT)
            if d.returncode != 0:
                failures.append(name)
                say(f'FAIL {name}: peer dump exited with {d.returncode}: {d.stderr[-2000:]}')
                continue
            with open(os.path.join(out, 'expected.json'), 'w', encoding='utf-8') as f:
                f.write(d.stdout)
        say(f'peer gen, oa writes and dumps took {time.monotonic() - start:.1f}s')
    for name in names:
        if name in failures:
            continue
        out = os.path.join(work, 'oa', name)
        data = sorted(glob.glob(os.path.join(out, '*', '*', '*-Data.db')))
        if not data or not all(os.path.basename(p).startswith('oa-') for p in data):
            failures.append(name)
            say(f'FAIL {name}: no oa sstables in {out}')
            continue
        with open(os.path.join(out, 'expected.json'), encoding='utf-8') as f:
            expected = parse_documents(f.read())
        dump = subprocess.run([reef, 'sstable', 'dump-data', '--now', str(DUMP_NOW)] + data,
                              capture_output=True, timeout=DUMP_TIMEOUT)
        if dump.returncode != 0:
            failures.append(name)
            say(f'FAIL {name} (seed {seed}): reef sstable dump-data: {dump.stderr.decode(errors="replace")[-2000:]}')
            continue
        diff = first_difference(parse_documents(dump.stdout.decode('utf-8', errors='replace')), expected)
        if diff:
            failures.append(name)
            path, a, b = diff
            say(f'FAIL {name} (seed {seed}): first difference at {path}\n    reef:      {show(a)}\n'
                f'    cassandra: {show(b)}\n    files: {out}')
            continue
        v = subprocess.run([reef, 'sstable', 'validate'] + data, capture_output=True, text=True, timeout=DUMP_TIMEOUT)
        if v.returncode != 0:
            failures.append(name)
            say(f'FAIL {name} (seed {seed}): reef sstable validate: {v.stdout}{v.stderr}')
            continue
        say(f'PASS {name}: {len(data)} oa sstables')
    if failures:
        say(f'FAIL: {len(failures)} of {len(names)} tables (seed {seed}: REEF_PEER_SEED={seed} '
            f'./test.py --mode {mode} interop/peer_oa_diff); kept in {work}')
        return 1
    shutil.rmtree(work, ignore_errors=True)
    say(f'all {len(names)} oa tables equal (seed {seed})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
