#!/usr/bin/env python3
"""The crash test: `reef crash-writer` (test/drivers/crash_writer.cc) writes random inserts, updates, row, range and
partition deletes and now and then a TRUNCATE (each one alone, snapshotted in even cycles) to a database with 2 shards, 64 KiB memtables and 64 KiB commitlog segments (flushes, segment
switches, discards and back-pressure all the time), with a major compaction on every shard about every 150 ms
(purging the long-expired tombstones), appending each acknowledged write to an ack file; it is killed
with SIGKILL at a random moment (mostly while writing, half of those inside a compaction's swap: once its swap log
appears, after a random 0-30 ms; sometimes during start-up and replay), and after each kill
`reef crash-writer --verify` replays the commitlog and compares every row with the ack file's model: 0 rows lost,
resurrected (truncated data coming back included, or data whose tombstone a compaction purged) or phantom, and the
data directory holds no temporary file (TOC.txt.tmp, swap log) once it has started. 20 cycles in batch mode, 4 in periodic mode (acknowledged after the write, before the
fdatasync: a process crash loses nothing either, the page cache survives it); fewer in debug builds.
REEF_CRASH_SEED repeats a run; REEF_CRASH_CYCLES and REEF_CRASH_PERIODIC_CYCLES set the cycles. Run by test.py with REEF_BUILD_DIR (build/<mode>); every process started is killed
by its pid in a finally."""
import os
import random
import re
import subprocess
import sys
import tempfile
import time

from suite_util import check

BUILD = os.environ.get('REEF_BUILD_DIR', 'build/dev')
REEF = os.path.join(BUILD, 'reef')
DEBUG = 'debug' in os.path.basename(os.path.normpath(BUILD))
START_TIMEOUT = 120 if DEBUG else 60
VERIFY = re.compile(r'verify: (\d+) acked writes, (\d+) in flight, (\d+) torn lines; (\d+) live rows; '
                    r'lost (\d+) resurrected (\d+) phantom (\d+) .*replay: (\d+) segments, (\d+) replayed, '
                    r'(\d+) skipped, (\d+) corrupt')
TRUNCATES = re.compile(r'(\d+) truncates acked, (\d+) in flight')
SWAPS = re.compile(r'interrupted compaction swaps: (\d+) completed, (\d+) rolled back, (\d+) unstarted')
PARTIAL = re.compile(r'removed the partial sstable')
# A major compaction on every shard about this often while writing (crash-writer --compact-ms).
COMPACT_MS = 150


def writer_args(work, mode, seed, acks):
    return [REEF, 'crash-writer', '--workdir', work, '--smp', '2', '--no-pin-threads', '--commitlog-sync', mode,
            '--seed', str(seed), '--ack-file', acks, '--dirty-memory-limit', '65536', '--segment-kb', '64']


def swap_logs(work):
    """The swap logs of ks.t's compactions under way (data/ks/t-<id>/pending_delete/)."""
    out = []
    ks = os.path.join(work, 'data', 'ks')
    if os.path.isdir(ks):
        for t in os.listdir(ks):
            pd = os.path.join(ks, t, 'pending_delete')
            if os.path.isdir(pd):
                out += [os.path.join(pd, n) for n in os.listdir(pd)]
    return out


def wait_for_swap(work, proc, timeout):
    """Polls until a compaction's swap is under way; False if none came (or the writer ended)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if swap_logs(work):
                return True
        except FileNotFoundError:
            pass  # a log or directory went away while listed
        time.sleep(0.001)
    return False


def temporary_files(work):
    """What a finished start-up must not leave in the data directory: temporary TOCs and swap logs."""
    out = []
    for root, dirs, files in os.walk(os.path.join(work, 'data')):
        dirs[:] = [d for d in dirs if d != 'snapshots']
        for f in files:
            if f.endswith('.tmp') or os.path.basename(root) == 'pending_delete':
                out.append(os.path.join(root, f))
    return out


def count_recoveries(text, totals):
    for m in SWAPS.finditer(text):
        totals['swaps_completed'] += int(m.group(1))
        totals['swaps_rolled_back'] += int(m.group(2)) + int(m.group(3))
    totals['partials'] += len(PARTIAL.findall(text))


def wait_for_text(path, needle, proc, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(path, errors='replace') as f:
            if needle in f.read():
                return True
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    return False


def run_cycles(tmp, mode, cycles, seed, rng, procs):
    work = os.path.join(tmp, mode)
    acks = os.path.join(tmp, f'{mode}.acks')
    totals = {'kills': 0, 'early': 0, 'in_swap': 0, 'acked': 0, 'replayed': 0, 'skipped': 0, 'segments': 0,
              'truncates': 0, 'swaps_completed': 0, 'swaps_rolled_back': 0, 'partials': 0}
    for cycle in range(cycles):
        out_path = os.path.join(tmp, f'{mode}-{cycle}.out')
        with open(out_path, 'w') as out:
            p = subprocess.Popen(writer_args(work, mode, seed, acks) +
                                 ['--cycle', str(cycle), '--compact-ms', str(COMPACT_MS)], stdout=out,
                                 stderr=subprocess.STDOUT)
        procs.append(p)
        if rng.random() < 0.2:
            # During start-up: the last cycle's replay, its flushes and segment deletions.
            time.sleep(rng.uniform(0.0, 0.4))
            totals['early'] += 1
        else:
            started = wait_for_text(out_path, ' writing ', p, START_TIMEOUT)
            with open(out_path, errors='replace') as f:
                text = f.read()
            check(started, f'{mode} cycle {cycle}: the writer did not start writing:\n{text[-4000:]}')
            time.sleep(rng.uniform(0.05, 1.5))
            # Half the time the kill waits for a compaction's swap (its log in pending_delete/) and lands at a
            # random point of it: writing the output, committing, deleting the inputs.
            if rng.random() < 0.5 and wait_for_swap(work, p, 5.0):
                time.sleep(rng.uniform(0.0, 0.03))
                totals['in_swap'] += 1
        if p.poll() is None:
            p.kill()
            totals['kills'] += 1
        p.wait(timeout=30)
        with open(out_path, errors='replace') as f:
            written = f.read()
        check(p.returncode in (0, -9), f'{mode} cycle {cycle}: the writer exited with {p.returncode}:\n{written[-4000:]}')
        count_recoveries(written, totals)
        v = subprocess.run(writer_args(work, mode, seed, acks) + ['--verify'], capture_output=True, text=True,
                           timeout=START_TIMEOUT * 2)
        text = v.stdout + v.stderr
        count_recoveries(text, totals)
        m = VERIFY.search(text)
        check(m is not None, f'{mode} cycle {cycle}: no verify line (exit {v.returncode}):\n{text[-6000:]}')
        acked, flying, torn, live, lost, resurrected, phantom, segs, replayed, skipped, corrupt = map(int, m.groups())
        t = TRUNCATES.search(text)
        check(t is not None, f'{mode} cycle {cycle}: no truncate counts in the verify line:\n{text[-2000:]}')
        truncates, truncates_flying = map(int, t.groups())
        print(f'{mode} cycle {cycle}: {acked} acked, {flying} in flight, {live} live rows, {truncates} truncates '
              f'({truncates_flying} in flight), replay {segs} segments '
              f'{replayed} replayed {skipped} skipped {corrupt} corrupt; lost {lost} resurrected {resurrected} '
              f'phantom {phantom}', flush=True)
        problems = '\n'.join(l for l in text.splitlines() if l.startswith(('LOST', 'RESURRECTED', 'PHANTOM')))
        check(v.returncode == 0 and lost == 0 and resurrected == 0 and phantom == 0,
              f'{mode} cycle {cycle}: verify exit {v.returncode}, seed {seed}:\n{problems[:6000]}')
        left = temporary_files(work)
        check(not left, f'{mode} cycle {cycle}: temporary files left after a restart: {left[:10]}')
        totals['acked'] = acked
        totals['truncates'] = truncates
        totals['replayed'] += replayed
        totals['skipped'] += skipped
        totals['segments'] += segs
    return totals


def main():
    seed = int(os.environ.get('REEF_CRASH_SEED', random.randrange(1, 1 << 30)))
    rng = random.Random(seed)
    batch_cycles, periodic_cycles = (6, 2) if DEBUG else (20, 4)
    # A longer run by hand: REEF_CRASH_CYCLES=100 (batch), REEF_CRASH_PERIODIC_CYCLES=N.
    batch_cycles = int(os.environ.get('REEF_CRASH_CYCLES', batch_cycles))
    periodic_cycles = int(os.environ.get('REEF_CRASH_PERIODIC_CYCLES', periodic_cycles))
    print(f'crash_test: seed {seed} (REEF_CRASH_SEED repeats it), {REEF}', flush=True)
    procs = []
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix='reef-crash-', dir='/var/tmp') as tmp:
        try:
            results = {}
            for mode, cycles in (('batch', batch_cycles), ('periodic', periodic_cycles)):
                results[mode] = (cycles, run_cycles(tmp, mode, cycles, seed, rng, procs))
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
    parts = [f'{mode}: {cycles} cycles, {t["kills"]} kills ({t["early"]} during start-up, {t["in_swap"]} in a '
             f'compaction\'s swap), swaps recovered: {t["swaps_completed"]} completed, {t["swaps_rolled_back"]} '
             f'rolled back, {t["partials"]} partial sstables removed; {t["acked"]} acked writes, '
             f'{t["truncates"]} truncates, {t["replayed"]} replayed, {t["skipped"]} skipped, {t["segments"]} segments'
             for mode, (cycles, t) in results.items()]
    print(f'crash_test: 0 lost, 0 resurrected, 0 phantom; {"; ".join(parts)}; '
          f'{time.monotonic() - start:.1f} s')


if __name__ == '__main__':
    try:
        main()
    except AssertionError as e:
        print(f'FAILED: {e}', file=sys.stderr)
        sys.exit(1)
