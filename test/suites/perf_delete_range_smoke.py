#!/usr/bin/env python3
# test.py modes: dev
"""reef perf-delete-range at a small scale, both engines, every variant, a width of 0, and with a major
compaction after the load: the row counts each engine prints (--output-format json) must be the same for both and
equal to this file's own model of ../shared/benchmarks/delete-range.md (a bitmap of live rows), so that both engines
provably ran the workload.
Run by test.py in dev mode only, with REEF_BUILD_DIR (build/<mode>);
the model alone is also checked against delete-range.md's
1M-row figures when run with --documented-scale (a few seconds of Python)."""
import json
import os
import subprocess
import sys
import tempfile

M64 = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.s = seed & M64

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & M64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)


def model(n, p, t, w, variant, ops, long_ops):
    """The counts delete-range.md's workload gives: get found, (scan10 rows, first found),
    (scan1000 rows, first found), fullscan rows."""
    r = n // p
    perm = list(range(n))
    rng = SplitMix64(1)
    for k in range(n - 1, 0, -1):
        j = rng.next() % (k + 1)
        perm[k], perm[j] = perm[j], perm[k]
    written = [0] * n
    for at, i in enumerate(perm, start=1):
        written[i] = at
    live = bytearray([1]) * n
    b = n // 10 * 9
    e = (n - b) // t if t else 0
    trng = SplitMix64(2)
    for d in range(1, t + 1):
        at = b + d * e
        part = trng.next() % p
        c = trng.next() % (r - w + 1)
        if variant == 'none':
            continue
        for ck in range(c, c + w):
            i = part * r + ck
            if written[i] <= at:   # a deletion covers only rows already written
                live[i] = 0
    rng = SplitMix64(1001)
    out = {'get': {'found': sum(live[rng.next() % n] for _ in range(ops))}}
    for name, seed, limit, count in (('scan10', 1002, 10, ops), ('scan1000', 1003, 1000, long_ops)):
        rng = SplitMix64(seed)
        rows = first = 0
        for _ in range(count):
            i = rng.next() % n
            first += live[i]
            end = (i // r + 1) * r
            got = 0
            while i < end and got < limit:
                got += live[i]
                i += 1
            rows += got
        out[name] = {'rows': rows, 'first_found': first}
    out['fullscan'] = {'rows': sum(live)}
    return out


def counts(run):
    ph = run['phases']
    return {'get': {'found': ph['get']['found']},
            'scan10': {k: ph['scan10'][k] for k in ('rows', 'first_found')},
            'scan1000': {k: ph['scan1000'][k] for k in ('rows', 'first_found')},
            'fullscan': {'rows': ph['fullscan']['rows']}}


def documented_scale():
    want = {'get': {'found': 82601}, 'scan10': {'rows': 999851, 'first_found': 82752},
            'scan1000': {'rows': 9902965, 'first_found': 8211}, 'fullscan': {'rows': 828112}}
    for v in ('range', 'scan'):
        got = model(1000000, 20, 2000, 100, v, 100000, 10000)
        assert got == want, (v, got)
    got = model(1000000, 20, 2000, 100, 'none', 100000, 10000)
    assert got == {'get': {'found': 100000}, 'scan10': {'rows': 999895, 'first_found': 100000},
                   'scan1000': {'rows': 9913161, 'first_found': 10000}, 'fullscan': {'rows': 1000000}}, got
    print('model = delete-range.md at 1M rows')


def main():
    if '--documented-scale' in sys.argv:
        documented_scale()
        return 0
    build = os.environ.get('REEF_BUILD_DIR', os.path.join(os.path.dirname(__file__), '..', '..', 'build', 'dev'))
    reef = os.path.join(build, 'reef')
    # Deletions overlap (40 of 25 rows in 4 partitions of 500) and the scans cross deleted ranges and partition ends.
    n, p, t, ops, long_ops, width = 2000, 4, 40, 300, 30, 25
    # Reef flushes every ~100 rows: reads merge many sstables, newer ones' range tombstones over older data.
    memtable = 48 * 1024
    if os.environ.get('REEF_TEST_MODE') == 'debug':   # ASan: a quarter of it
        n, t, ops, long_ops, width = 800, 16, 80, 10, 10
    failures = 0
    # tmpfs where there is one: the flushes' fsyncs cost nothing there.
    where = '/dev/shm' if os.path.isdir('/dev/shm') and os.access('/dev/shm', os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix='reef-delete-range-', dir=where) as data:
        for variant, width, compact in (('range', width, False), ('scan', width, False), ('none', width, False),
                                        ('range', 0, False), ('range', width, True)):
            cmd = [reef, 'perf-delete-range', '--engine', 'both', '--output-format', 'json', '--rows', str(n),
                   '--partitions', str(p), '--tombstones', str(t), '--width', str(width), '--variant', variant,
                   '--ops', str(ops), '--long-ops', str(long_ops), '--data-directory', data,
                   '--reef-memtable-bytes', str(memtable)] + (['--major-compaction'] if compact else [])
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            runs = [json.loads(line) for line in out.stdout.splitlines() if line.startswith('{')]
            want = model(n, p, t, width, variant, ops, long_ops)
            print(f'{variant} width {width}{" major compaction" if compact else ""}: model {want}')
            if out.returncode != 0 or [r['engine'] for r in runs] != ['reef', 'rocksdb']:
                print(f'FAIL: {" ".join(cmd)} exited {out.returncode}\n{out.stdout}\n{out.stderr}')
                failures += 1
                continue
            for r in runs:
                got = counts(r)
                assert r['variant'] == variant and r['rows'] == n
                ok = got == want
                failures += not ok
                print(f'  {r["engine"]}: {"ok" if ok else "FAIL " + json.dumps(got)}')
    print('perf_delete_range_smoke:', 'FAILED' if failures else 'passed')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
