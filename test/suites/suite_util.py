"""What the suites share (not a test itself: test.py runs only the executable files here): the failure they raise,
and free loopback ports for the servers they start."""
import socket


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
