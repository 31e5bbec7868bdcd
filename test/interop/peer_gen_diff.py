#!/usr/bin/env python3
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
import re
import shutil
import struct
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


# Differences we know and have not fixed yet: printed and counted by the test, not failures.
# Java 17's Float.toString / Double.toString (FloatingDecimal, before JDK 19's shortest-digits fix) sometimes prints
# more digits than the shortest that round-trip (5.62598385E17 where the shortest is 5.625984E17); Reef prints the
# shortest until utils/java_double_format ports JDK 17's algorithm.
JAVA17_DIGITS = 'Java 17 non-shortest float digits'
JAVA_FLOAT = re.compile(r'-?[0-9]+\.[0-9]+(E-?[0-9]+)?')


def significant_digits(text):
    mantissa = text.lower().split('e')[0].lstrip('-').replace('.', '').lstrip('0').rstrip('0')
    return len(mantissa)


def known_difference(ours, expected):
    """The reason of a known difference between two leaf values, or None."""
    # JSON numbers (values) or strings (partition keys, cell paths, as getString prints them) of Java's form.
    if not (isinstance(ours, str) and isinstance(expected, str) and type(ours) is type(expected)):
        return None
    if not (JAVA_FLOAT.fullmatch(ours) and JAVA_FLOAT.fullmatch(expected)):
        return None
    # Java 17 adds digits, it never drops them: Reef's text is the shorter one.
    if significant_digits(expected) <= significant_digits(ours):
        return None
    # Java's floats always hold a '.', and extra digits do not move the exponent: "1" vs "1.0" or "1.0E10" vs
    # "10000000000.0" are real differences.
    if '.' not in ours or '.' not in expected:
        return None
    if ours.upper().partition('E')[2] != expected.upper().partition('E')[2]:
        return None
    try:
        a, b = float(ours), float(expected)
    except ValueError:
        return None
    if a != a or b != b or a in (float('inf'), float('-inf')):
        return None
    if a == b:
        return JAVA17_DIGITS                    # the same double: only the digits differ
    # A float column: both texts are float digits (at most 9 significant) and name the same float32.
    if significant_digits(ours) <= 9 and significant_digits(expected) <= 9:
        try:
            if struct.pack('>f', a) == struct.pack('>f', b):
                return JAVA17_DIGITS
        except OverflowError:
            return None
    return None


def first_difference(ours, expected, path='$', known=None):
    """(path, ours, expected) of the first place two JSON values differ, or None. Known differences are appended
    to `known` as (reason, path, ours, expected) and are not differences."""
    if known is None:
        known = []
    if type(ours) is not type(expected):
        return path, ours, expected
    if isinstance(ours, dict):
        # Object keys are texts too (a frozen map<float, ...> value): a key of ours that is a known difference
        # from one of Cassandra's stands for it.
        extra = [k for k in ours if k not in expected]
        renamed = {}
        for k in expected:
            if k not in ours:
                for o in extra:
                    reason = known_difference(o, k)
                    if reason and o not in renamed.values():
                        known.append((reason, f'{path} (object key)', o, k))
                        renamed[k] = o
                        break
        for k in expected:
            o = renamed.get(k, k)
            if o not in ours:
                return f'{path}.{k}', '<missing>', expected[k]
            d = first_difference(ours[o], expected[k], f'{path}.{k}', known)
            if d:
                return d
        for k in extra:
            if k not in renamed.values():
                return f'{path}.{k}', ours[k], '<missing>'
        return None
    if isinstance(ours, list):
        for i, (a, b) in enumerate(zip(ours, expected)):
            d = first_difference(a, b, f'{path}[{i}]', known)
            if d:
                return d
        if len(ours) != len(expected):
            n = min(len(ours), len(expected))
            return (f'{path}[{n}]', ours[n] if n < len(ours) else '<missing>',
                    expected[n] if n < len(expected) else '<missing>')
        return None
    if ours == expected:
        return None
    reason = known_difference(ours, expected)
    if reason:
        known.append((reason, path, ours, expected))
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


def main():
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
    seed = int(os.environ.get('REEF_PEER_SEED') or random.SystemRandom().randrange(1, 2**31))
    tables = int(os.environ.get('REEF_PEER_TABLES', '10'))
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
    known_total = {}
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
        known = []
        diff = first_difference(ours, parse_documents(expected_text), known=known)
        for reason, path, a, b in known[:3]:
            say(f'  known difference in {name} ({reason}) at {path}: reef {show(a)}, cassandra {show(b)}')
        for reason, *_ in known:
            known_total[reason] = known_total.get(reason, 0) + 1
        if diff:
            failures.append(name)
            path, a, b = diff
            say(f'FAIL {name} (seed {seed}): first difference at {path}\n'
                f'    reef:      {show(a)}\n    cassandra: {show(b)}\n'
                f'    files: {tdir} ({summaries.get(name, "")})')
            continue
        note = '' if ours_text == expected_text else ' (equal values, different text)'
        if known:
            note += f' ({len(known)} known differences)'
        say(f'PASS {name}: {len(data)} sstables{note}')
    say(f'reef dumps took {time.monotonic() - start:.1f}s')
    for reason, n in sorted(known_total.items()):
        say(f'known differences, not failures: {n} x {reason}')
    if failures:
        say(f'FAIL: {len(failures)} of {len(names)} tables differ (seed {seed}: '
            f'REEF_PEER_SEED={seed} ./test.py --mode {mode} interop/peer_gen_diff); kept in {work}')
        return 1
    shutil.rmtree(work, ignore_errors=True)
    say(f'all {len(names)} tables equal (seed {seed})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
