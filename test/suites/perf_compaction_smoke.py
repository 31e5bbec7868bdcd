#!/usr/bin/env python3
# test.py modes: dev
"""Smoke test of `reef perf-compaction`: a short run prints every row, the compaction's output is no larger than its
input (later sstables overwrite rows of earlier ones), both throughputs are positive, and point reads were measured
with and without a compaction running; the sustained load (small: 20000 rows, a flush every 1000) prints its sstable
count over time and a write amplification of at least 1 (at most 10 at this size), its compactions ran, its sstable
count once idle is bounded and none of its reads was wrong.

Run by test.py in dev mode only (a benchmark's tool: ASan would add minutes, not coverage;
REEF_BUILD_DIR names the build); alone: test/suites/perf_compaction_smoke.py.
"""
import os
import re
import subprocess
import sys
import tempfile


def main():
    build = os.environ.get('REEF_BUILD_DIR', os.path.join(os.path.dirname(__file__), '..', '..', 'build', 'dev'))
    reef = os.path.join(build, 'reef')
    with tempfile.TemporaryDirectory(prefix='reef-perf-compaction-', dir='/var/tmp') as data:
        cmd = [reef, 'perf-compaction', '--rows', '20000', '--partitions', '2000', '--runs', '1', '--reads', '200',
               '--wa-rows', '20000', '--wa-flush-every', '1000', '--wa-checks', '200', '--data-directory', data]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        left = os.listdir(data)
    print(out.stdout)
    if out.returncode != 0:
        print(f'FAIL: {" ".join(cmd)} exited {out.returncode}\n{out.stderr}')
        return 1
    number = r'\s+([\d.]+)'
    compaction = re.search(r'^major compaction' + number * 4, out.stdout, re.M)
    copy = re.search(r'^plain read-then-write copy \(baseline\)' + number * 4, out.stdout, re.M)
    idle = re.search(r'^no compaction \(baseline\)' + number * 3, out.stdout, re.M)
    busy = re.search(r'^during a major compaction \([\d.]+ s\)' + number * 3, out.stdout, re.M)
    def figure(name):
        m = re.search(r'^' + re.escape(name) + number + r'$', out.stdout, re.M)
        return float(m.group(1)) if m else None
    progress = re.findall(r'^[ \t]+(\d+)[ \t]+(\d+)[ \t]+(\d+)(?:[ \t]+[\d.]+)+$', out.stdout, re.M)
    wa = figure('write amplification')
    flushed = figure('bytes flushed (Data.db MB)')
    written = figure('bytes written by compactions (MB)')
    compactions = figure('compactions run')
    at_most = figure('sstables at most (after a flush)')
    idle_count = figure('sstables once the manager is idle')
    checked = figure('reads checked')
    wrong = figure('reads wrong')
    sustained = [wa, flushed, written, compactions, at_most, idle_count, checked, wrong]
    if not (compaction and copy and idle and busy) or None in sustained:
        print('FAIL: rows missing')
        return 1
    checks = [
        ('the output is no larger than the input', float(compaction.group(2)) <= float(compaction.group(1)) > 0),
        ('both throughputs are positive', float(compaction.group(3)) > 0 and float(copy.group(3)) > 0),
        ('reads measured without a compaction', int(idle.group(1)) == 200 and float(idle.group(2)) > 0),
        ('reads measured during one', int(busy.group(1)) > 0 and float(busy.group(3)) > 0),
        ('the sstable count printed every 2000 rows', [int(p[0]) for p in progress] == list(range(2000, 20001, 2000))),
        ('write amplification >= 1 and sane', 1 <= wa <= 10),
        ('write amplification is (flushed + compaction-written) / flushed',
         flushed > 0 and abs(wa - (flushed + written) / flushed) < 0.02),
        ('compactions ran', compactions > 0 and written > 0),
        # Once idle, as compaction_test's sustained load bounds it: fewer than 4 per size tier (3 tiers for 20
        # flushes). The count during the load depends on how much CPU the writes leave the compactions: not checked.
        ('the sstable count once idle is bounded', 0 < idle_count <= 10 and at_most >= idle_count),
        ('the sustained load\'s reads checked, none wrong', checked >= 200 and wrong == 0),
        ('nothing left in the data directory', not left),
    ]
    failures = [name for name, ok in checks if not ok]
    for name in failures:
        print(f'FAIL: {name}')
    if not failures:
        print('perf_compaction_smoke: ok')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
