#!/usr/bin/env python3
# test.py modes: dev
"""Smoke test of `reef perf-fast-forward`: populate both datasets with a few rows, run the test groups with a tiny
--test-case-duration in JSON, and check every read against fragment counts computed here from its parameters (a
model of the datasets: large-part-ds1 holds rows 0..n-1 of one partition, small-part n one-row partitions), that
every case of every group is there with every column, and that the index caches are dropped before each iteration
by default (cold: the index page is missed) and kept with --keep-cache-across-test-cases (warm: hit, no miss); with
--enable-cache the same counts, and the reads of large-partition-single-key-slice inside an earlier read of their
case do no I/O (row cache hits).

Run by test.py in dev mode only (a benchmark's tool: ASan would add minutes, not coverage;
REEF_BUILD_DIR names the build); alone: test/suites/perf_fast_forward_smoke.py.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROWS = 1000

COLUMNS = ['time (s)', 'iterations', 'frags', 'frag/s', 'mad f/s', 'max f/s', 'min f/s', 'avg aio', 'aio', '(KiB)',
           'blocked', 'dropped', 'idx hit', 'idx miss', 'idx blk', 'c hit', 'c miss', 'c blk', 'allocs', 'tasks',
           'insns/f', 'cpu']

SKIPS = [(1, 0), (1, 1), (1, 8), (1, 16), (1, 32), (1, 64), (1, 256), (1, 1024), (1, 4096),
         (64, 1), (64, 8), (64, 16), (64, 32), (64, 64), (64, 256), (64, 1024), (64, 4096)]

# The groups this run checks, with the reads each must report (in order) as parameter dicts: all of them (the
# ones that read through clustering-window forwarding too, since the sstable reader has it).


def slicing_params(n):
    return [{'offset': o, 'read': r} for o in (0, n // 2) for r in (1, 32, 256, 4096)]


def expected_reads(group, n):
    """(parameters, expected fragments) of every read of the group, in order."""
    if group == 'large-partition-single-key-slice':
        return None  # checked by parsing each printed range (below)
    if group in ('large-partition-skips', 'small-partition-skips'):
        out = []
        for r, s in SKIPS:
            # Walk the rows as the benchmark does: read r, skip s.
            got = sum(min(r, n - start) for start in range(0, n, r + s))
            out.append(({'read': r, 'skip': s}, got))
        return out
    if group in ('large-partition-slicing', 'large-partition-slicing-clustering-keys',
                 'large-partition-slicing-single-key-reader', 'small-partition-slicing'):
        return [(p, len(range(p['offset'], min(n, p['offset'] + p['read'])))) for p in slicing_params(n)]
    if group == 'large-partition-select-few-rows':
        cases = [(n // 2, 1, 1), (n // 2 + 1, 1, 1), (0, n, 1), (0, n // 2, 2), (0, n // 4, 4), (0, n // 8, 8),
                 (0, n // 16, 16), (0, 2, n // 2)]
        return [({'offset': o, 'stride': s, 'rows': r}, len({o + i * s for i in range(r)} & set(range(n))))
                for o, s, r in cases]
    if group == 'large-partition-select-missing-rows':
        return [({'offset': o}, 0) for o in (0, 1, n // 3, n // 2 - 1, n // 2, n // 2 + 1, n * 2 // 3, n - 1, n, n * 2)]
    if group == 'large-partition-forwarding':
        return [({'pk-scan': 'yes'}, 2), ({'pk-scan': 'no'}, 2)]
    raise AssertionError(group)


def rows_in_printed_range(text, n):
    """How many of rows 0..n-1 the printed range ("[1, 100)", "{100}", "(-inf, 100]") holds."""
    m = re.fullmatch(r'\{(-?\d+)\}', text)
    if m:
        v = int(m.group(1))
        return 1 if 0 <= v < n else 0
    m = re.fullmatch(r'([\[(])(-inf|-?\d+), (\+inf|-?\d+)([\])])', text)
    assert m, f'unparsable range {text!r}'
    lo = 0 if m.group(2) == '-inf' else int(m.group(2)) + (0 if m.group(1) == '[' else 1)
    hi = n - 1 if m.group(3) == '+inf' else int(m.group(3)) - (0 if m.group(4) == ']' else 1)
    lo, hi = max(lo, 0), min(hi, n - 1)
    return max(0, hi - lo + 1)


# large-partition-single-key-slice: reads per case, as ScyllaDB's.
SINGLE_KEY_SLICE_READS = [2, 2, 2, 2, 2, 2, 2, 3, 2, 2, 3, 4, 5, 5]


def fail(msg):
    print(f'FAIL: {msg}', flush=True)
    sys.exit(1)


def run(reef, args, what):
    cmd = [reef, 'perf-fast-forward'] + args
    print('$ ' + ' '.join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        fail(f'{what}: exit status {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}')
    return p


def no_duplicate_keys(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        fail(f'a JSON object repeats a key: {keys}')
    return dict(pairs)


def json_objects(stdout):
    out = []
    for line in stdout.splitlines():
        if line.strip():
            out.append(json.loads(line, object_pairs_hook=no_duplicate_keys))
    return out


def check_groups(objs, groups, n, min_iterations):
    by_group = {}
    for o in objs:
        if 'error' in o:
            fail(f'{o["group"]} case {o["case"]}: {o["error"]}')
        for c in COLUMNS:
            if c not in o:
                fail(f'{o["group"]} case {o["case"]}: no column {c!r}')
        if o['iterations'] < min_iterations:
            fail(f'{o["group"]} case {o["case"]}: {o["iterations"]} iterations, at least {min_iterations} expected')
        by_group.setdefault(o['group'], []).append(o)
    if sorted(by_group) != sorted(groups):
        fail(f'groups reported: {sorted(by_group)}, expected {sorted(groups)}')
    reads = 0
    for group, got in by_group.items():
        if group == 'large-partition-single-key-slice':
            cases = {}
            for o in got:
                cases.setdefault(o['case'], []).append(o)
            if [len(cases[c]) for c in sorted(cases)] != SINGLE_KEY_SLICE_READS:
                fail(f'{group}: reads per case {[len(cases[c]) for c in sorted(cases)]}')
            for o in got:
                want = rows_in_printed_range(o['range'], n)
                if o['frags'] != want:
                    fail(f'{group} case {o["case"]} range {o["range"]}: {o["frags"]} fragments, expected {want}')
            reads += len(got)
            continue
        want = expected_reads(group, n)
        if len(got) != len(want):
            fail(f'{group}: {len(got)} reads reported, expected {len(want)}')
        for o, (params, frags) in zip(got, want):
            for k, v in params.items():
                if o.get(k) != v:
                    fail(f'{group} case {o["case"]}: parameter {k} = {o.get(k)!r}, expected {v!r}')
            if o['frags'] != frags:
                fail(f'{group} {params}: {o["frags"]} fragments, expected {frags}')
        reads += len(got)
    return reads


def main():
    mode = os.environ.get('REEF_TEST_MODE', 'dev')
    build = os.environ.get('REEF_BUILD_DIR', os.path.join(ROOT, 'build', mode))
    reef = os.path.join(build, 'reef')
    if not os.access(reef, os.X_OK):
        fail(f'{reef} is not built')
    listed = subprocess.run([reef, 'perf-fast-forward', '--list-tests'], capture_output=True, text=True, check=True)
    all_groups = [l for l in listed.stdout.splitlines() if l and not l.startswith('\t')]
    groups = all_groups
    # tmpfs when there is one: the reads then wait for no disk (a loaded machine's disk made this slow).
    data = tempfile.mkdtemp(prefix='pff-smoke-', dir='/dev/shm' if os.path.isdir('/dev/shm') else None)
    try:
        run(reef, ['--populate', '--rows', str(ROWS), '--data-directory', data], 'populate')
        # One iteration per case (--test-case-duration 0) keeps this quick in debug builds; the warm run below
        # checks the iterations a duration makes (the first, then at least 3).
        p = run(reef, ['--data-directory', data, '--test-case-duration', '0', '--output-format', 'json',
                       '--run-tests', ','.join(groups)], 'cold run')
        reads = check_groups(json_objects(p.stdout), groups, ROWS, 1)
        cold = [o for o in json_objects(p.stdout) if o['group'] == 'large-partition-select-missing-rows']
        if any(o['idx miss'] < 1 for o in cold):
            fail('cold run: a read of partition 0 did not miss the dropped index cache')
        # Warm: the index page stays cached from the first iteration, so the median one only hits.
        p = run(reef, ['--data-directory', data, '--test-case-duration', '0.001', '--output-format', 'json',
                       '--run-tests', 'large-partition-select-missing-rows', '--keep-cache-across-test-cases'],
                'warm run')
        warm = json_objects(p.stdout)
        check_groups(warm, ['large-partition-select-missing-rows'], ROWS, 4)
        if any(o['idx miss'] != 0 or o['idx hit'] < 1 for o in warm):
            fail(f'warm run: index misses {[o["idx miss"] for o in warm]}, hits {[o["idx hit"] for o in warm]}')
        # Through the row cache: the same fragments everywhere, and in large-partition-single-key-slice every read
        # inside an earlier read of its case does no I/O (the binary reports an error otherwise).
        p = run(reef, ['--data-directory', data, '--test-case-duration', '0', '--output-format', 'json',
                       '--enable-cache', '--run-tests', ','.join(groups)], 'row cache run')
        check_groups(json_objects(p.stdout), groups, ROWS, 1)
        slices = [o for o in json_objects(p.stdout) if o['group'] == 'large-partition-single-key-slice']
        hits = sum(1 for o in slices if o['aio'] == 0)
        # Cases 0, 1, 2, 4 and 6 have one such read, 10 has two, 11 three: 10 at least.
        if hits < 10:
            fail(f'row cache run: only {hits} single-key-slice reads did no I/O: {[o["aio"] for o in slices]}')
        # The text table too: a header per group and no error line.
        p = run(reef, ['--data-directory', data, '--test-case-duration', '0', '--run-tests',
                       'large-partition-select-few-rows,small-partition-slicing'], 'text run')
        if 'ERROR' in p.stdout or p.stdout.count('frag/s') != 2:
            fail(f'text run:\n{p.stdout}')
        # A group name it does not know is refused.
        bad = subprocess.run([reef, 'perf-fast-forward', '--data-directory', data, '--run-tests', 'no-such-group'],
                             capture_output=True, text=True)
        if bad.returncode != 2 or 'no-such-group' not in bad.stderr:
            fail(f'unknown group: exit {bad.returncode}, stderr {bad.stderr!r}')
        print(f'PASS: {len(groups)} groups, {reads} reads checked')
    finally:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == '__main__':
    main()
