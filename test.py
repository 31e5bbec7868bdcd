#!/usr/bin/env python3
"""Reef's test runner.

Configures and builds each mode, then runs every Boost.Test case of every unit
test binary under build/<mode>/test/ as its own process, in parallel, each with
a time limit, plus every executable file in test/interop/ and test/suites/ as
one test. Each
test's output goes to testlog/<mode>/. The last line printed is always
"N passed, N failed"; the exit code is non-zero when anything failed or when
no test ran.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.abspath(__file__))
TAIL_LINES = 60
# Folders of test drivers (executable files) and the modes they run in (None: every mode). The fuzzers run
# once, in the debug pass, on the fuzz build (clang, ASan + UBSan) that test.py builds along with debug.
SCRIPT_FOLDERS = {'interop': None, 'suites': None, 'fuzz': 'debug'}
# A script that names its modes in its first lines ("# test.py modes: dev") runs only in those: the checks of
# bytes and protocols against Cassandra's and the drivers' own code, where ASan would add minutes and no coverage.
MODES_MARK = '# test.py modes:'


def script_modes(path):
    """The modes a script asks to run in, or None for every mode."""
    with open(path, errors='replace') as f:
        for _, line in zip(range(15), f):
            if line.startswith(MODES_MARK):
                return line[len(MODES_MARK):].split()
    return None
FUZZ_COMPILER = os.environ.get('REEF_FUZZ_CXX', 'clang++-16')


class Test:
    def __init__(self, mode, name, cmd, log, env=None):
        self.mode = mode
        self.name = name          # "room/binary::suite/case" or "suites/script"
        self.cmd = cmd
        self.log = log
        self.env = env or {}


def log(msg):
    print(f'test.py: {msg}', flush=True)


def run_build(mode):
    """Configures and builds one mode; returns True on success."""
    for cmd in ([sys.executable, './configure.py', f'--mode={mode}'],
                ['ninja', '-C', f'build/{mode}']):
        log(' '.join(cmd))
        if subprocess.run(cmd, cwd=ROOT).returncode != 0:
            log(f'build of mode {mode} failed: {" ".join(cmd)}')
            return False
    return True


def built_tests(mode):
    """The test binaries build.ninja knows of (so stale ones are skipped), or None."""
    try:
        out = subprocess.run(['ninja', '-C', f'build/{mode}', '-t', 'query', 'tests'],
                             cwd=ROOT, capture_output=True, text=True)
    except OSError:
        return None
    if out.returncode != 0:
        return None
    known, in_inputs = set(), False
    for line in out.stdout.splitlines():   # "tests:\n  input: phony\n    test/a/b\n  outputs:..."
        if line.startswith('    '):
            if in_inputs:
                known.add(line.strip())
        else:
            in_inputs = line.strip().startswith('input:')
    return known


def find_binaries(mode):
    base = os.path.join(ROOT, 'build', mode, 'test')
    known = built_tests(mode)
    found = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for f in sorted(filenames):
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, base)
            if not os.access(path, os.X_OK) or '.' in f:
                continue
            if known is not None and 'test/' + rel not in known:
                continue
            found.append((path, rel))
    return found


LIST_LINE = re.compile(r'^( *)(\S.*?)([* ])(?:: .*)?$')


def list_cases(binary):
    """Parses Boost.Test's `--list_content` (HRF, on stderr) into enabled case
    paths like "suite/nested/case". Raises RuntimeError when listing fails."""
    out = subprocess.run([binary, '--list_content'], capture_output=True, text=True,
                         timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f'--list_content exited with {out.returncode}:\n{out.stderr}{out.stdout}')
    entries = []
    for line in out.stderr.splitlines():
        m = LIST_LINE.match(line)
        if m:
            entries.append((len(m.group(1)), m.group(2), m.group(3) == '*'))
    cases, stack = [], []   # stack of (indent, name, enabled) for open suites
    for i, (indent, name, enabled) in enumerate(entries):
        while stack and stack[-1][0] >= indent:
            stack.pop()
        is_suite = i + 1 < len(entries) and entries[i + 1][0] > indent
        if is_suite:
            stack.append((indent, name, enabled))
        elif enabled and all(s[2] for s in stack):
            cases.append('/'.join([s[1] for s in stack] + [name]))
    return cases


def safe(s):
    return re.sub(r'[^A-Za-z0-9_.+-]', '.', s)


def collect(mode, filters, repeat):
    """Returns (tests, list_failures) for one mode."""
    logdir = os.path.join(ROOT, 'testlog', mode)
    tests, failures = [], []
    env = {'REEF_TEST_MODE': mode, 'REEF_BUILD_DIR': os.path.join(ROOT, 'build', mode)}

    def add(name, cmd, logbase):
        if filters and not any(f in name for f in filters):
            return
        for r in range(repeat):
            suffix = f'.{r + 1}' if repeat > 1 else ''
            tests.append(Test(mode, name, cmd, os.path.join(logdir, logbase + suffix + '.log'), env))

    for path, rel in find_binaries(mode):
        room, binary = os.path.split(rel)
        prefix = f'{room}/{binary}' if room else binary
        try:
            cases = list_cases(path)
        except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
            if not filters or any(f in prefix or prefix in f for f in filters):
                failures.append((mode, f'{prefix} (listing test cases)', str(e)))
            continue
        for case in cases:
            add(f'{prefix}::{case}',
                [path, f'--run_test={case}', '--report_level=short',
                 '--log_level=message', '--color_output=no'],
                safe(f'{room}.{binary}.{case.replace("/", ".")}'.lstrip('.')))
    # Drivers that are not Boost.Test binaries (test/interop/ against Cassandra's code, test/suites/): each
    # executable file is one test, run once per mode with REEF_TEST_MODE and REEF_BUILD_DIR set.
    for folder, only_mode in SCRIPT_FOLDERS.items():
        scripts = os.path.join(ROOT, 'test', folder)
        if not os.path.isdir(scripts) or (only_mode and only_mode != mode):
            continue
        for f in sorted(os.listdir(scripts)):
            path = os.path.join(scripts, f)
            if os.path.isfile(path) and os.access(path, os.X_OK) and mode in (script_modes(path) or [mode]):
                add(f'{folder}/{f}', [path], safe(f'{folder}.{f}'))
    return tests, failures


class Runner:
    def __init__(self, timeout, verbose, total):
        self.timeout = timeout
        self.verbose = verbose
        self.total = total
        self.done = 0
        self.lock = threading.Lock()
        self.running = set()
        self.stopping = False

    def run(self, t):
        """Runs one test; returns (test, status, seconds)."""
        os.makedirs(os.path.dirname(t.log), exist_ok=True)
        env = dict(os.environ, **t.env)
        env.setdefault('UBSAN_OPTIONS', 'halt_on_error=1:print_stacktrace=1')
        start = time.monotonic()
        with open(t.log, 'w') as out:
            out.write(f'$ {" ".join(t.cmd)}\n')
            out.flush()
            with self.lock:
                if self.stopping:
                    return t, 'SKIP', 0.0
                p = subprocess.Popen(t.cmd, cwd=ROOT, env=env, stdout=out,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
                self.running.add(p)
            try:
                rc = p.wait(timeout=self.timeout)
                status = 'PASS' if rc == 0 else 'FAIL'
            except subprocess.TimeoutExpired:
                status = 'TIMEOUT'
            finally:
                kill_group(p)
                p.wait()
                with self.lock:
                    self.running.discard(p)
            elapsed = time.monotonic() - start
            if status == 'TIMEOUT':
                out.write(f'\ntest.py: TIMEOUT after {self.timeout}s, process group killed\n')
            elif status == 'FAIL':
                out.write(f'\ntest.py: exit code {p.returncode}\n')
        self.report(t, status, elapsed)
        return t, status, elapsed

    def report(self, t, status, elapsed):
        with self.lock:
            self.done += 1
            print(f'[{self.done}/{self.total}] {status} {t.mode} {t.name} ({elapsed:.2f}s)', flush=True)
            if status != 'PASS' or self.verbose:
                with open(t.log, errors='replace') as f:
                    lines = f.readlines()
                if status != 'PASS':
                    lines = lines[-TAIL_LINES:]
                    print(f'--- last {len(lines)} lines of {os.path.relpath(t.log, ROOT)}:')
                sys.stdout.write(''.join(lines))
                print('---', flush=True)

    def stop_all(self):
        with self.lock:
            self.stopping = True
            for p in self.running:
                kill_group(p)


def kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def interrupted(signum, frame):
    raise KeyboardInterrupt()


def load_durations(mode):
    try:
        with open(os.path.join(ROOT, 'testlog', mode, 'durations.json')) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def save_durations(mode, results):
    durations = load_durations(mode)
    durations.update({t.name: s for t, status, s in results if t.mode == mode and status == 'PASS'})
    os.makedirs(os.path.join(ROOT, 'testlog', mode), exist_ok=True)
    with open(os.path.join(ROOT, 'testlog', mode, 'durations.json'), 'w') as f:
        json.dump(durations, f, indent=0, sort_keys=True)


def main():
    p = argparse.ArgumentParser(description='Build and run Reef tests.')
    p.add_argument('--mode', action='append', choices=['debug', 'dev', 'release'],
                   help='build mode to test (repeatable; default: dev and debug, the latter with ASan and UBSan)')
    p.add_argument('-j', '--jobs', type=int, default=os.cpu_count() or 1,
                   help='tests run in parallel (default: number of CPUs)')
    p.add_argument('--timeout', type=float, default=300, help='seconds per test (default 300)')
    p.add_argument('--no-build', action='store_true', help='do not configure and build first')
    p.add_argument('-v', '--verbose', action='store_true', help="print every test's output")
    p.add_argument('--repeat', type=int, default=1, help='run each test N times')
    p.add_argument('names', nargs='*',
                   help='run only tests whose "room/binary::case" contains one of these')
    args = p.parse_args()
    modes = args.mode or ['dev', 'debug']
    os.chdir(ROOT)
    signal.signal(signal.SIGTERM, interrupted)

    build_times = []
    if not args.no_build:
        # Without clang the fuzz driver says so (and fails under CI=true).
        build_modes = modes + (['fuzz'] if 'debug' in modes and shutil.which(FUZZ_COMPILER) else [])
        for mode in build_modes:
            began = time.monotonic()
            if not run_build(mode):
                print(f'FAIL {mode} build')
                print('0 passed, 1 failed')
                return 1
            build_times.append(f'{mode} {time.monotonic() - began:.0f}s')

    tests, list_failures = [], []
    for mode in modes:
        t, f = collect(mode, args.names, max(args.repeat, 1))
        durations = load_durations(mode)
        # Longest first (unknown ones count as long), so the slowest test does not start last.
        t.sort(key=lambda x: -durations.get(x.name, float('inf')))
        tests += t
        list_failures += f
    for mode, name, err in list_failures:
        print(f'FAIL {mode} {name}\n{err.rstrip()}')
    if not tests and not list_failures:
        where = ', '.join(f'build/{m}/test/' for m in modes) + ' and test/interop/, test/suites/'
        why = f'no test matched {" ".join(args.names)}' if args.names else 'no tests found'
        log(f'{why} (looked in {where})')
        print('0 passed, 0 failed')
        return 1

    runner = Runner(args.timeout, args.verbose, len(tests))
    results = []
    start = time.monotonic()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(args.jobs, 1))
    try:
        futures = [pool.submit(runner.run, t) for t in tests]
        for fut in concurrent.futures.as_completed(futures):
            results.append(fut.result())
    except KeyboardInterrupt:
        runner.stop_all()
        pool.shutdown(wait=True, cancel_futures=True)
        print('\ninterrupted')
        print(f'{sum(r[1] == "PASS" for r in results)} passed, '
              f'{sum(r[1] != "PASS" for r in results) + 1} failed')
        return 130
    pool.shutdown()
    for mode in modes:
        save_durations(mode, results)

    failed = [(t, s) for t, s, _ in results if s != 'PASS']
    passed = len(results) - len(failed)
    nfailed = len(failed) + len(list_failures)
    if nfailed:
        print('\nfailed tests:')
        for t, s in sorted(failed, key=lambda x: (x[0].mode, x[0].name)):
            print(f'  {s} {t.mode} {t.name}  (log: {os.path.relpath(t.log, ROOT)})')
        for mode, name, _ in list_failures:
            print(f'  FAIL {mode} {name}')
    if build_times:
        print(f'builds took: {", ".join(build_times)}')
    print(f'took {time.monotonic() - start:.1f}s')
    print(f'{passed} passed, {nfailed} failed')
    return 1 if nfailed else 0


if __name__ == '__main__':
    sys.exit(main())
