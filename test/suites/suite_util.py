"""What the suites share (not a test itself: test.py runs only the executable files here): the failure they raise,
free loopback ports for the servers they start, and a process logged to a file."""
import os
import signal
import socket
import subprocess
import sys
import time


def check(cond, what):
    """Fails the suite with `what` unless cond holds."""
    if not cond:
        raise AssertionError(what)


def free_ports(n):
    """n loopback ports free at the moment of the call (all held at once, so they differ)."""
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(('127.0.0.1', 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class logged_process:
    """A process whose stdout and stderr go to `log_path`; `what` names it in failures. Stop it with kill() in a
    finally."""

    def __init__(self, args, cwd, log_path, what, env=None):
        self.log_path = log_path
        self.what = what
        self.log = open(log_path, 'w')
        self.proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)

    def text(self):
        with open(self.log_path) as f:
            return f.read()

    def wait_for(self, needle, timeout):
        """Until the log holds `needle`; fails if the process exits first or the time runs out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in self.text():
                return
            if self.proc.poll() is not None:
                raise AssertionError(f'{self.what} exited with {self.proc.returncode} before logging {needle!r}:\n'
                                     + self.text())
            time.sleep(0.05)
        raise AssertionError(f'no {needle!r} within {timeout} s:\n' + self.text())

    def wait_exit(self, timeout):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f'{self.what} still running {timeout} s later:\n' + self.text())

    def kill(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.log.close()


class reef_node(logged_process):
    """A Reef node with its work directory and log under `tmp`, every port free (`cql`, `aware`, `api`, `prom`);
    ready once start() returns. stop() sends SIGTERM and fails unless the drain ends with exit 0. As a context
    manager it is killed on the way out, its log printed if the block failed."""

    def __init__(self, reef, tmp, smp=2, memory='512M'):
        self.cql, self.aware, self.api, self.prom = free_ports(4)
        super().__init__([reef, '--workdir', os.path.join(tmp, 'work'), '--smp', str(smp), '--no-pin-threads',
                          '--memory', memory, '--native-transport-port', str(self.cql),
                          '--native-shard-aware-transport-port', str(self.aware), '--api-port', str(self.api),
                          '--prometheus-port', str(self.prom)], tmp, os.path.join(tmp, 'node.log'), 'node')

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        """Kills the node if it still runs; on a failure, prints its log's tail first."""
        if exc_type is not None:
            print(self.text()[-4000:], file=sys.stderr)
        self.kill()
        return False

    def start(self, timeout=60):
        self.wait_for('ready:', timeout)
        return self

    def stop(self, timeout=30):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.wait_exit(timeout)
        check(rc == 0, f'reef exited with {rc}:\n' + self.text()[-4000:])


def run_client(args, ok_text, what):
    """Runs a driver's workload program (stdout echoed); fails unless it exits 0 having printed ok_text."""
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    print(r.stdout, end='')
    check(r.returncode == 0 and ok_text in r.stdout, f'{what} exited {r.returncode}:\n{r.stderr[-6000:]}')
