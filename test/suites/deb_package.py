#!/usr/bin/env python3
"""The Debian package (dist/debian/build-deb.sh): it builds from this mode's binary; lintian reports no error; it
installs with dpkg (the reef user, /var/lib/reef owned by it, the conffile, the unit, which `systemd-analyze verify`
accepts); the installed binary, run as the reef user with the installed configuration (ports moved to free test
ports), tells systemd READY=1 through NOTIFY_SOCKET, serves cqlsh (a keyspace and a table created, rows written and
read), drains on SIGTERM (exit 0, no commitlog segment left) and starts again on the same data, whose rows cqlsh
reads back; `dpkg -r` keeps the data and the conffile, `dpkg -P` removes both and the user.
Needs root (dpkg). Runs in dev mode only: a debug build carries sanitizers, which a package must not (the debug
pass prints that and passes). Every node started is stopped by its pid in a finally."""
import glob
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from suite_util import check, free_ports

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
BUILD = os.path.abspath(os.environ.get('REEF_BUILD_DIR', os.path.join(TOP, 'build', 'dev')))
MODE = os.path.basename(BUILD.rstrip('/'))
START_TIMEOUT = 60
STOP_TIMEOUT = 60


def run(args, **kw):
    out = subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)
    check(out.returncode == 0, f'{" ".join(args)}: exit {out.returncode}\n{out.stdout}\n{out.stderr}')
    return out.stdout


def installed():
    out = subprocess.run(['dpkg-query', '-W', '-f=${Status}', 'reef'], capture_output=True, text=True)
    return out.returncode == 0 and 'installed' in out.stdout and 'not-installed' not in out.stdout


def user_exists(name):
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


class installed_node:
    """/usr/bin/reef as the reef user with /etc/reef/reef.yaml, its ports moved to free ones."""

    def __init__(self, tmp, name):
        self.notify_path = os.path.join(tmp, name + '.notify')
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(self.notify_path)
        os.chmod(self.notify_path, 0o777)
        self.notify.settimeout(START_TIMEOUT)
        self.log_path = os.path.join(tmp, name + '.log')
        self.log = open(self.log_path, 'w')
        cql, shard_aware, api, prom = free_ports(4)
        self.cql_port = cql
        args = ['/usr/bin/reef', 'server', '--options-file', '/etc/reef/reef.yaml',
                '--smp', '1', '--no-pin-threads', '--memory', '512M', '--native-transport-port', str(cql),
                '--native-shard-aware-transport-port', str(shard_aware), '--api-port', str(api),
                '--prometheus-port', str(prom)]
        env = dict(os.environ, NOTIFY_SOCKET=self.notify_path)
        # As the unit runs it: the reef user and group, no others (runuser would stand between the signals and
        # the node).
        self.proc = subprocess.Popen(args, cwd='/', env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, user='reef', group='reef', extra_groups=[])

    def text(self):
        with open(self.log_path) as f:
            return f.read()

    def expect_notify(self, what):
        try:
            msg = self.notify.recv(4096).decode()
        except socket.timeout:
            raise AssertionError(f'no {what} from the node within {START_TIMEOUT} s:\n' + self.text())
        check(what in msg.split('\n'), f'expected {what} from the node, got {msg!r}')

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.expect_notify('STOPPING=1')
        rc = self.proc.wait(timeout=STOP_TIMEOUT)
        check(rc == 0, f'SIGTERM: exit {rc}\n' + self.text())

    def kill(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.log.close()
        self.notify.close()


def cqlsh(port, statements):
    """cqlsh from PyPI, which ./dev.sh installs (on PATH, or in build/tools/cqlsh)."""
    path = shutil.which('cqlsh') or os.path.join(TOP, 'build', 'tools', 'cqlsh', 'bin', 'cqlsh')
    check(os.access(path, os.X_OK), 'cqlsh is not installed (./dev.sh test installs it)')
    out = subprocess.run([path, '127.0.0.1', str(port), '-e', statements], capture_output=True, text=True,
                         timeout=120)
    check(out.returncode == 0, f'cqlsh -e {statements!r}: exit {out.returncode}\n{out.stdout}\n{out.stderr}')
    return out.stdout


def main():
    if MODE != 'dev':
        print(f'deb_package: the package is built and tested from the dev build only (this is {MODE})')
        return
    if os.geteuid() != 0:
        # dpkg needs root: run again through sudo, as install-dependencies.sh does.
        if shutil.which('sudo') and subprocess.run(['sudo', '-n', 'true'], capture_output=True).returncode == 0:
            os.execvp('sudo', ['sudo', '-n', '-E', sys.executable, os.path.abspath(__file__)])
        raise AssertionError('deb_package needs root or passwordless sudo (dpkg -i)')
    deb = run([os.path.join(TOP, 'dist', 'debian', 'build-deb.sh'), '--mode', 'dev', '--no-build',
               '--output', os.path.join(BUILD, 'dist')]).strip().split('\n')[-1]
    check(deb.endswith('.deb') and os.path.exists(deb), f'build-deb.sh printed {deb!r}')
    print('built', os.path.basename(deb))
    lint = subprocess.run(['lintian', '--allow-root', deb], capture_output=True, text=True, timeout=600)
    errors = [l for l in lint.stdout.splitlines() if l.startswith('E:')]
    check(not errors, 'lintian errors:\n' + lint.stdout)
    print('lintian: no errors,', sum(1 for l in lint.stdout.splitlines() if l.startswith('W:')), 'warnings')

    keys = re.findall(r'\(YAML key (\w+)', run([os.path.join(BUILD, 'reef'), 'server', '--help']))
    with open(os.path.join(TOP, 'dist', 'common', 'reef.yaml')) as f:
        yaml_text = f.read()
    missing = [k for k in keys if not re.search(rf'^#? ?{k}:', yaml_text, re.M)]
    check(keys and not missing, f'dist/common/reef.yaml lacks the keys {missing}')
    if installed():
        run(['dpkg', '-P', 'reef'])
    nodes = []
    try:
        run(['dpkg', '-i', deb])
        check(os.access('/usr/bin/reef', os.X_OK), '/usr/bin/reef is not installed')
        check(user_exists('reef'), 'the reef user was not created')
        st = os.stat('/var/lib/reef')
        check(st.st_uid == pwd.getpwnam('reef').pw_uid, '/var/lib/reef is not owned by reef')
        check('/etc/reef/reef.yaml' in run(['dpkg-query', '-W', '-f=${Conffiles}', 'reef']),
              '/etc/reef/reef.yaml is not a conffile')
        run(['systemd-analyze', 'verify', '/lib/systemd/system/reef.service'])
        print('installed; systemd-analyze verify accepts reef.service')
        version = run(['/usr/bin/reef', '--version'])
        check(version.startswith('reef '), f'/usr/bin/reef --version: {version!r}')

        with tempfile.TemporaryDirectory(prefix='reef-deb-') as tmp:
            os.chmod(tmp, 0o755)
            for name in ('first', 'second'):
                n = installed_node(tmp, name)
                nodes.append(n)
                n.expect_notify('READY=1')
                if name == 'first':
                    cqlsh(n.cql_port, "CREATE KEYSPACE pkg WITH replication = {'class': 'SimpleStrategy', "
                                      "'replication_factor': 1}; CREATE TABLE pkg.t (k int PRIMARY KEY, v text); "
                                      "INSERT INTO pkg.t (k, v) VALUES (1, 'installed'); "
                                      "INSERT INTO pkg.t (k, v) VALUES (2, 'package');")
                rows = cqlsh(n.cql_port, 'SELECT k, v FROM pkg.t;')
                check('installed' in rows and 'package' in rows and '(2 rows)' in rows,
                      f'{name} run: cqlsh SELECT gave:\n{rows}')
                n.stop()
                segments = glob.glob('/var/lib/reef/commitlog/*.log')
                check(not segments, f'{name} run: commitlog segments left after the drain: {segments}')
                owners = {os.stat(p).st_uid for p in glob.glob('/var/lib/reef/**', recursive=True)}
                check(owners == {pwd.getpwnam('reef').pw_uid}, f'files under /var/lib/reef not owned by reef')
                print(f'{name} run as reef: READY=1, cqlsh read 2 rows, SIGTERM drained, exit 0, no segment left')

        run(['dpkg', '-r', 'reef'])
        check(not os.path.exists('/usr/bin/reef'), 'dpkg -r left /usr/bin/reef')
        check(os.path.isdir('/var/lib/reef/data'), 'dpkg -r removed the data')
        check(os.path.exists('/etc/reef/reef.yaml'), 'dpkg -r removed the conffile')
        run(['dpkg', '-P', 'reef'])
        check(not os.path.exists('/var/lib/reef'), 'dpkg -P left /var/lib/reef')
        check(not os.path.exists('/etc/reef/reef.yaml'), 'dpkg -P left the conffile')
        check(not user_exists('reef'), 'dpkg -P left the reef user')
        print('removed (data kept), then purged (data, conffile and user gone)')
    finally:
        for n in nodes:
            n.kill()
        if installed():
            subprocess.run(['dpkg', '-P', 'reef'], capture_output=True)
    print('deb_package: all checks passed')


if __name__ == '__main__':
    try:
        main()
    except AssertionError as e:
        print('FAIL:', e)
        sys.exit(1)
