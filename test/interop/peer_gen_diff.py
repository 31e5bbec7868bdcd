#!/usr/bin/env python3
# test.py modes: dev
"""Random differential test against Apache Cassandra: `peer gen` (../shared/tools/cassandra-peer, Cassandra
5.0.9 in one JVM) invents random tables, writes them with Cassandra's own writer and dumps them with Cassandra's
sstabledump code (expected.json); `reef sstable dump-data` must print the same JSON values for every table.

A fresh seed every run (printed; REEF_PEER_SEED=S repeats it), REEF_PEER_TABLES tables (default 10). test.py runs
it once per mode with that mode's reef (REEF_BUILD_DIR). Without ../shared it says so and passes (a clone outside
the team's setting); with CI=true a missing ../shared, java or mvn is a failure. A failing run keeps the generated
tables under testlog/<mode>/interop/ (each table's data.cql holds the `bin/peer write` replay command).
"""
import fcntl
import json
import os
import random
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEER_SRC = os.path.normpath(os.path.join(ROOT, '..', 'shared', 'tools', 'cassandra-peer'))
# gen's clocks, fixed so that the "expired" flags are the same on both sides: writes at NOW, the dump at DUMP_NOW
# (gen's TTLs make about half of the TTL'd data expire before DUMP_NOW).
NOW = 1700000000
DUMP_NOW = NOW + 3600
GEN_TIMEOUT = 600      # the first run in a clone builds the peer with mvn (jars from Maven Central)
DUMP_TIMEOUT = 120


def say(msg):
    print(msg, flush=True)


def unavailable(why):
    """Skips (exit 0) outside CI, fails under CI=true."""
    if os.environ.get('CI') == 'true':
        say(f'FAIL: {why}, and CI=true (CI must run the peer differential test)')
        sys.exit(1)
    say(f'skipped: {why}')
    sys.exit(0)


class Number(str):
    """A JSON number kept as its text: 5.62598385E17 and 5.625984E17 are different answers from sstabledump."""


def parse_documents(text):
    """Every JSON document of a text (a dump holds one array per sstable, one after the other)."""
    dec = json.JSONDecoder(parse_float=Number, parse_int=Number, parse_constant=Number)
    docs, pos = [], 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return docs
        doc, pos = dec.raw_decode(text, pos)
        docs.append(doc)


def show(v):
    s = f'{v}' if isinstance(v, Number) else json.dumps(v, ensure_ascii=False)
    return s if len(s) <= 300 else s[:300] + '...'


def first_difference(ours, expected, path='$'):
    """(path, ours, expected) of the first place two JSON values differ, or None. Numbers compare as their text
    (Java 17's float digits included: utils/java_double_format prints them as the JVM does)."""
    if type(ours) is not type(expected):
        return path, ours, expected
    if isinstance(ours, dict):
        for k in expected:
            if k not in ours:
                return f'{path}.{k}', '<missing>', expected[k]
            d = first_difference(ours[k], expected[k], f'{path}.{k}')
            if d:
                return d
        for k in ours:
            if k not in expected:
                return f'{path}.{k}', ours[k], '<missing>'
        return None
    if isinstance(ours, list):
        for i, (a, b) in enumerate(zip(ours, expected)):
            d = first_difference(a, b, f'{path}[{i}]')
            if d:
                return d
        if len(ours) != len(expected):
            n = min(len(ours), len(expected))
            return (f'{path}[{n}]', ours[n] if n < len(ours) else '<missing>',
                    expected[n] if n < len(expected) else '<missing>')
        return None
    if ours == expected:
        return None
    return path, ours, expected


def copy_peer(dest):
    """The peer tool, copied next to the build (../shared may be read-only, and each clone builds its own
    target/ with mvn). Modification times are kept, so the peer's own rebuild check still works."""
    shutil.copytree(PEER_SRC, dest, dirs_exist_ok=True, copy_function=shutil.copy2,
                    ignore=shutil.ignore_patterns('target'))
    for dirpath, dirnames, filenames in os.walk(dest):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | 0o200)


def peer_prerequisites():
    """What every driver of the peer tool starts with: skips (unavailable) without the peer tool, Java or Maven;
    fails when this mode's reef is not built. Returns (mode, reef)."""
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
        sys.exit(1)
    return mode, reef


def peer_run_setup(tables_env, default_tables):
    """peer_prerequisites for a fresh `peer gen` batch. Returns (mode, reef, seed, tables): the seed is fresh each
    run unless REEF_PEER_SEED repeats one; the table count comes from the environment variable tables_env."""
    mode, reef = peer_prerequisites()
    seed = int(os.environ.get('REEF_PEER_SEED') or random.SystemRandom().randrange(1, 2**31))
    return mode, reef, seed, int(os.environ.get(tables_env, str(default_tables)))


def main():
    mode, reef, seed, tables = peer_run_setup('REEF_PEER_TABLES', 10)
    say(f'seed {seed}, {tables} tables, mode {mode} (REEF_PEER_SEED={seed} repeats this run)')

    # One peer copy and one JVM at a time for all modes: the JVM wants 2 GB and the first run builds with mvn.
    tooldir = os.path.join(ROOT, 'build', 'interop')
    os.makedirs(tooldir, exist_ok=True)
    work = os.path.join(ROOT, 'testlog', mode, 'interop', f'peer_gen_{seed}')
    shutil.rmtree(work, ignore_errors=True)
    with open(os.path.join(tooldir, 'peer.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        peer = os.path.join(tooldir, 'cassandra-peer')
        copy_peer(peer)
        cmd = [os.path.join(peer, 'bin', 'peer'), 'gen', '--seed', str(seed), '--tables', str(tables),
               '--now', str(NOW), '--dump-now', str(DUMP_NOW), '--out', work, '--keep-going']
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

    failures, start = [], time.monotonic()
    names = sorted(n for n in os.listdir(work) if os.path.isdir(os.path.join(work, n)))
    if len(names) != tables:
        say(f'FAIL: peer gen wrote {len(names)} tables, not {tables}')
        return 1
    for name in names:
        tdir = os.path.join(work, name)
        if 'FAILED' in summaries.get(name, 'FAILED'):
            failures.append(name)
            say(f'FAIL {name}: peer gen could not write this table (seed {seed}): {summaries.get(name)}')
            continue
        data = sorted(os.path.join(tdir, f) for f in os.listdir(tdir) if f.endswith('-Data.db'))
        with open(os.path.join(tdir, 'expected.json'), encoding='utf-8') as f:
            expected_text = f.read()
        dump = subprocess.run([reef, 'sstable', 'dump-data', '--now', str(DUMP_NOW)] + data,
                              capture_output=True, timeout=DUMP_TIMEOUT)
        ours_text = dump.stdout.decode('utf-8', errors='replace')
        if dump.returncode != 0:
            failures.append(name)
            say(f'FAIL {name} (seed {seed}): reef sstable dump-data exited with {dump.returncode}: '
                f'{dump.stderr.decode(errors="replace")[-2000:]}')
            continue
        try:
            ours = parse_documents(ours_text)
        except ValueError as e:
            failures.append(name)
            say(f'FAIL {name} (seed {seed}): reef printed invalid JSON: {e}')
            continue
        diff = first_difference(ours, parse_documents(expected_text))
        if diff:
            failures.append(name)
            path, a, b = diff
            say(f'FAIL {name} (seed {seed}): first difference at {path}\n'
                f'    reef:      {show(a)}\n    cassandra: {show(b)}\n'
                f'    files: {tdir} ({summaries.get(name, "")})')
            continue
        note = '' if ours_text == expected_text else ' (equal values, different text)'
        say(f'PASS {name}: {len(data)} sstables{note}')
    say(f'reef dumps took {time.monotonic() - start:.1f}s')
    if failures:
        say(f'FAIL: {len(failures)} of {len(names)} tables differ (seed {seed}: '
            f'REEF_PEER_SEED={seed} ./test.py --mode {mode} interop/peer_gen_diff); kept in {work}')
        return 1
    shutil.rmtree(work, ignore_errors=True)
    say(f'all {len(names)} tables equal (seed {seed})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
