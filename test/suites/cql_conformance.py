#!/usr/bin/python3
"""The CQL conformance corpus (../shared/cql-conformance, Cassandra 5.0.9's answers) against a `reef` node on free
loopback ports, through its runner (../shared/tools/cql-conformance/run.py, Debian's python driver). The cases
that fail are compared with the committed list test/suites/cql_conformance_expected_failures.txt (one case per
line: its name, then why it fails): the suite fails when a case outside the list fails, and when a listed case
passes (remove it: the list stays true). Run by test.py with REEF_BUILD_DIR (build/<mode>); the node is stopped
by its pid in a finally. It runs under /usr/bin/python3, where Debian's python3-cassandra is installed.

  cql_conformance.py [-k SUBSTRING]... [--write-expected]

--write-expected rewrites the list from this run (a new failure gets the runner's first difference as its
reason; reasons already in the list are kept)."""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from suite_util import check, free_ports

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))
BUILD = os.environ.get('REEF_BUILD_DIR', os.path.join(ROOT, 'build', 'dev'))
REEF = os.path.abspath(os.path.join(BUILD, 'reef'))
SHARED = os.path.abspath(os.path.join(ROOT, '..', 'shared'))
RUNNER = os.path.join(SHARED, 'tools', 'cql-conformance', 'run.py')
CASES = os.path.join(SHARED, 'cql-conformance', 'cases')
EXPECTED = os.path.join(HERE, 'cql_conformance_expected_failures.txt')
START_TIMEOUT = 60
STOP_TIMEOUT = 30
# The whole corpus takes about 30 s against Cassandra; debug builds are several times slower.
RUN_TIMEOUT = 900


def read_expected(path):
    """{case: reason} from the list: `name reason...` per line, # comments and blank lines ignored."""
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            name, _, reason = line.partition(' ')
            check(reason.strip(), f'{path}:{n}: {name} has no reason')
            check(name not in out, f'{path}:{n}: {name} listed twice')
            out[name] = reason.strip()
    return out


def write_expected(path, failures, old):
    lines = ['# The conformance cases a Reef node fails (test/suites/cql_conformance.py): a case name, then why.',
             '# cql_conformance.py fails when a case outside this list fails and when a listed case passes.']
    for name in sorted(failures):
        reason = old.get(name) or failures[name] or 'fails (no reason recorded)'
        lines.append(f'{name} {reason}')
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')


def parse_runner_output(text, names):
    """{case: None if it passed, else the first difference}; every case of `names` the runner did not report
    (it could not connect) fails with the runner's reason."""
    results = {}
    current = None
    for line in text.splitlines():
        m = re.match(r'^(PASS|FAIL) (\S+)', line)
        if m:
            current = m.group(2) if m.group(1) == 'FAIL' else None
            results[m.group(2)] = None if m.group(1) == 'PASS' else ''
        elif current and line.startswith('    ') and '(more differing statements' not in line:
            # The first difference: the statement (shortened), then what was expected and what came.
            part = ' '.join(line.split())
            results[current] += (' | ' if results[current] else '') + (part[:90] if not results[current] else part)
        else:
            current = None
    for name, why in results.items():
        if why:
            results[name] = why[:300]
    unreported = [n for n in names if n not in results]
    if unreported:
        why = next((l for l in text.splitlines() if l.startswith('cannot connect')), None)
        if why:
            # The server's refusal, without the run's port.
            m = re.search(r'message="([^"]*)"', why)
            why = 'the driver cannot connect: ' + (m.group(1) if m else why.split(': ', 1)[-1])
        for n in unreported:
            results[n] = (why or 'not run by the runner')[:200]
    return results


def case_names(filters):
    names = sorted(f[:-4] for f in os.listdir(CASES) if f.endswith('.cql'))
    return [n for n in names if not filters or any(k in n for k in filters)]


def run_corpus(port, filters):
    cmd = ['/usr/bin/python3', RUNNER, '--port', str(port), '--request-timeout', '30', '--connect-timeout', '15']
    for k in filters:
        cmd += ['-k', k]
    out = subprocess.run(cmd + [CASES], capture_output=True, text=True, timeout=RUN_TIMEOUT)
    return out.stdout + out.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('-k', action='append', default=[])
    ap.add_argument('--write-expected', action='store_true')
    args = ap.parse_args()
    if not os.path.exists(RUNNER) or not os.path.isdir(CASES):
        print(f'skipped: {RUNNER} or {CASES} is absent')
        return 0
    try:
        import cassandra  # noqa: F401  (the runner needs it)
    except ImportError as e:
        if os.environ.get('CI') == 'true':
            print(f'FAIL: the python driver is missing ({e}); install python3-cassandra')
            return 1
        print(f'skipped: the python driver is missing ({e}); install python3-cassandra')
        return 0
    names = case_names(args.k)
    expected = read_expected(EXPECTED) if os.path.exists(EXPECTED) else {}
    with tempfile.TemporaryDirectory(prefix='reef-conformance-', dir='/var/tmp') as tmp:
        ports = free_ports(4)
        cfg = os.path.join(tmp, 'node.yaml')
        with open(cfg, 'w') as f:
            f.write(f'cluster_name: cql_conformance\nnative_transport_port: {ports[0]}\n'
                    f'native_shard_aware_transport_port: {ports[1]}\napi_port: {ports[2]}\n'
                    f'prometheus_port: {ports[3]}\n')
        log_path = os.path.join(tmp, 'reef.log')
        with open(log_path, 'w') as log:
            proc = subprocess.Popen([REEF, '--options-file', cfg, '--workdir', os.path.join(tmp, 'work'), '--smp', '2',
                                     '--no-pin-threads'], stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)
            try:
                deadline = time.monotonic() + START_TIMEOUT
                while 'ready:' not in open(log_path).read():
                    check(proc.poll() is None, 'reef exited early:\n' + open(log_path).read())
                    check(time.monotonic() < deadline, 'reef not ready:\n' + open(log_path).read())
                    time.sleep(0.05)
                t0 = time.monotonic()
                output = run_corpus(ports[0], args.k)
                took = time.monotonic() - t0
                check(proc.poll() is None, 'reef died during the run:\n' + open(log_path).read()[-4000:])
                proc.send_signal(signal.SIGTERM)
                rc = proc.wait(timeout=STOP_TIMEOUT)
                check(rc == 0, f'reef exited with {rc} after the run:\n' + open(log_path).read()[-4000:])
            finally:
                if proc.poll() is None:
                    os.kill(proc.pid, signal.SIGKILL)
                    proc.wait()
    results = parse_runner_output(output, names)
    failures = {n: why for n, why in results.items() if why is not None}
    passed = [n for n, why in results.items() if why is None]
    print(f'{len(passed)} passed, {len(failures)} failed of {len(names)} cases in {took:.1f} s')
    if args.write_expected:
        kept = {n: r for n, r in expected.items() if n not in names}
        kept.update({n: expected.get(n, why) for n, why in failures.items()})
        write_expected(EXPECTED, kept, expected)
        print(f'wrote {EXPECTED}: {len(kept)} cases')
        return 0
    unexpected = sorted(n for n in failures if n not in expected)
    now_passing = sorted(n for n in passed if n in expected)
    for n in unexpected:
        print(f'UNEXPECTED FAIL {n}: {failures[n]}')
    for n in now_passing:
        print(f'UNEXPECTED PASS {n}: listed as failing ({expected[n]}); remove it from {EXPECTED}')
    if unexpected or now_passing:
        print(output[-6000:], file=sys.stderr)
        return 1
    print('cql_conformance: every case outside the expected failures passed')
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except AssertionError as e:
        print(f'FAILED: {e}', file=sys.stderr)
        sys.exit(1)
