#!/usr/bin/env python3
"""Smoke test of `reef perf-compaction`: a short run prints every row, the compaction's output is no larger than its
input (later sstables overwrite rows of earlier ones), both throughputs are positive, and point reads were measured
with and without a compaction running.

Run by test.py once per mode (REEF_BUILD_DIR names the build); alone: test/suites/perf_compaction_smoke.py.
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
               '--data-directory', data]
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
    if not (compaction and copy and idle and busy):
        print('FAIL: rows missing')
        return 1
    checks = [
        ('the output is no larger than the input', float(compaction.group(2)) <= float(compaction.group(1)) > 0),
        ('both throughputs are positive', float(compaction.group(3)) > 0 and float(copy.group(3)) > 0),
        ('reads measured without a compaction', int(idle.group(1)) == 200 and float(idle.group(2)) > 0),
        ('reads measured during one', int(busy.group(1)) > 0 and float(busy.group(3)) > 0),
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
