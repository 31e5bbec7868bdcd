#!/usr/bin/env python3
"""The README's run command: `./dev.sh run` (with the test hooks REEF_RUN_MODE=dev, sparing CI a release build, and
REEF_RUN_ARGS moving the node to free ports and a temporary workdir) installs what is missing (cqlsh from PyPI
included), builds, and starts a node in the foreground that logs how to connect; the cqlsh it installed creates a
keyspace and a table, writes and reads rows; SIGINT drains the node (exit 0, no commitlog segment left); a second
run reads the same rows. Runs in dev mode only (the debug pass prints that and passes); the node is stopped by its
pid in a finally."""
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile

from suite_util import check, free_ports, logged_process

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
BUILD = os.path.abspath(os.environ.get('REEF_BUILD_DIR', os.path.join(TOP, 'build', 'dev')))
MODE = os.path.basename(BUILD.rstrip('/'))
# ./dev.sh run checks the dependencies and runs ninja (nothing to build after test.py's build) before starting.
START_TIMEOUT = 300


def cqlsh_path():
    found = shutil.which('cqlsh')
    if found:
        return found
    local = os.path.join(TOP, 'build', 'tools', 'cqlsh', 'bin', 'cqlsh')
    check(os.access(local, os.X_OK), './dev.sh run did not install cqlsh')
    return local


def cqlsh(port, statements):
    out = subprocess.run([cqlsh_path(), '127.0.0.1', str(port), '-e', statements], capture_output=True, text=True,
                         timeout=120)
    check(out.returncode == 0, f'cqlsh -e {statements!r}: exit {out.returncode}\n{out.stdout}\n{out.stderr}')
    return out.stdout


class dev_run(logged_process):
    def __init__(self, tmp, name, workdir, ports):
        args = (f'--workdir {workdir} --smp 2 --no-pin-threads --memory 1G --native-transport-port {ports[0]} '
                f'--native-shard-aware-transport-port {ports[1]} --api-port {ports[2]} --prometheus-port {ports[3]}')
        env = dict(os.environ, REEF_RUN_MODE='dev', REEF_RUN_ARGS=args)
        # dev.sh execs the node: this pid is the node's once it runs.
        super().__init__([os.path.join(TOP, 'dev.sh'), 'run'], TOP, os.path.join(tmp, name + '.log'),
                         './dev.sh run', env)

    def interrupt(self):
        self.proc.send_signal(signal.SIGINT)
        rc = self.proc.wait(timeout=60)
        check(rc == 0, f'SIGINT: exit {rc}\n' + self.text())


def main():
    if MODE != 'dev':
        print(f'dev_run: ./dev.sh run is tested with the dev build only (this is {MODE})')
        return
    runs = []
    with tempfile.TemporaryDirectory(prefix='reef-dev-run-', dir='/var/tmp') as tmp:
        workdir = os.path.join(tmp, 'data')
        try:
            ports = free_ports(4)
            first = dev_run(tmp, 'first', workdir, ports)
            runs.append(first)
            first.wait_for(f'connect with: cqlsh 127.0.0.1 {ports[0]}', START_TIMEOUT)
            cqlsh(ports[0], "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', "
                            "'replication_factor': 1}; CREATE TABLE ks.t (k int, c int, v text, PRIMARY KEY (k, c));"
                            "INSERT INTO ks.t (k, c, v) VALUES (1, 1, 'one'); "
                            "INSERT INTO ks.t (k, c, v) VALUES (1, 2, 'two'); "
                            "INSERT INTO ks.t (k, c, v) VALUES (2, 1, 'deux');")
            rows = cqlsh(ports[0], 'SELECT k, c, v FROM ks.t WHERE k = 1;')
            check('one' in rows and 'two' in rows and 'deux' not in rows and '(2 rows)' in rows,
                  f'cqlsh SELECT gave:\n{rows}')
            first.interrupt()
            segments = glob.glob(os.path.join(workdir, 'commitlog', '*.log'))
            check(not segments, f'commitlog segments left after SIGINT: {segments}')
            print('first run: cqlsh wrote and read ks.t; SIGINT drained, exit 0, no segment left')

            ports = free_ports(4)
            second = dev_run(tmp, 'second', workdir, ports)
            runs.append(second)
            second.wait_for(f'connect with: cqlsh 127.0.0.1 {ports[0]}', START_TIMEOUT)
            rows = cqlsh(ports[0], 'SELECT k, c, v FROM ks.t;')
            check(all(v in rows for v in ('one', 'two', 'deux')) and '(3 rows)' in rows,
                  f'after the restart cqlsh SELECT gave:\n{rows}')
            second.interrupt()
            print('second run: the same 3 rows; SIGINT drained, exit 0')
        finally:
            for r in runs:
                r.kill()
    print('dev_run: all checks passed')


if __name__ == '__main__':
    try:
        main()
    except AssertionError as e:
        print('FAIL:', e)
        sys.exit(1)
