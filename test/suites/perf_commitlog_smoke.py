#!/usr/bin/env python3
# test.py modes: dev
"""Smoke test of `reef perf-commitlog`: a short run prints every row, and the batch-mode figures show what the
commitlog promises: one writer gets one fdatasync per entry (at least as many syncs as entries), 128 writers in
flight share them (group commit: at least 8 entries per sync; a cycle takes every writer waiting), and periodic mode
writes some MB/s.

Run by test.py in dev mode only (a benchmark's tool: ASan would add minutes, not coverage;
REEF_BUILD_DIR names the build); alone: test/suites/perf_commitlog_smoke.py.
"""
import os
import re
import subprocess
import sys
import tempfile


def main():
    build = os.environ.get('REEF_BUILD_DIR', os.path.join(os.path.dirname(__file__), '..', '..', 'build', 'dev'))
    reef = os.path.join(build, 'reef')
    with tempfile.TemporaryDirectory(prefix='reef-perf-commitlog-', dir='/var/tmp') as data:
        cmd = [reef, 'perf-commitlog', '--duration-ms', '300', '--data-directory', data, '--periodic-writers', '16',
               '--busy-threads', '2']
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    print(out.stdout)
    if out.returncode != 0:
        print(f'FAIL: {" ".join(cmd)} exited {out.returncode}\n{out.stderr}')
        return 1
    failures = 0
    batch = {}
    for line in out.stdout.splitlines():
        m = re.match(r'commitlog, (\d+) writers\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)', line)
        if m:
            batch[int(m.group(1))] = {'entries': int(m.group(3)), 'syncs': int(m.group(4)), 'writes': int(m.group(5))}
    periodic = re.search(r'^commitlog\s+([\d.]+)\s', out.stdout, re.M)
    if sorted(batch) != [1, 16, 128] or not periodic or 'plain write+fdatasync loop' not in out.stdout \
            or 'plain sequential write' not in out.stdout:
        print('FAIL: rows missing')
        return 1
    busy = {m.group(1): float(m.group(2)) for m in
            re.finditer(r'^(O_DIRECT|page-cache) segments\s+([\d.]+)\s', out.stdout, re.M)}
    if sorted(busy) != ['O_DIRECT', 'page-cache']:
        print('FAIL: the busy-disk rows are missing')
        return 1
    checks = [
        ('one writer: a sync per entry', batch[1]['syncs'] >= batch[1]['entries'] > 0),
        ('128 writers: group commit (>= 8 entries per sync)', batch[128]['entries'] >= 8 * batch[128]['syncs'] > 0),
        ('batch mode syncs every write', all(b['syncs'] >= b['writes'] for b in batch.values())),
        ('periodic mode writes', float(periodic.group(1)) > 0),
        ('periodic mode writes beside a busy disk', min(busy.values()) > 0),
    ]
    for what, ok in checks:
        print(f'{what}: {"ok" if ok else "FAIL"}')
        failures += not ok
    print('perf_commitlog_smoke:', 'FAILED' if failures else 'passed')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
