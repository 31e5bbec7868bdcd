#!/usr/bin/python3
"""/metrics of a running node (`reef --smp 2` on free ports) read by two real third-party parsers: Debian's
`promtool check metrics` (prometheus 2.42) reports no error, its only lints being the `_total` suffix ScyllaDB's
counter names draw (and `_count` on ScyllaDB's scylla_transport_cql_requests_count, `_total` on its gauge
scylla_cache_bytes_total), and python3-prometheus-client's
parser reads every family the TYPE lines announce; every sample has a shard label, ScyllaDB's names are there with
one series per shard (scylla_database_total_writes, which Scylla Manager counts shards by, when it exists), and
ScyllaDB's filters work (__name__ exact and prefix*, __help__=false, a label regex). The node stops with SIGTERM
and exits 0. /usr/bin/python3 on purpose: the interpreter Debian's python3-prometheus-client is installed for."""
import http.client
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

from suite_util import check, free_ports, logged_process

BUILD = os.environ.get('REEF_BUILD_DIR', os.path.join(os.path.dirname(__file__), '..', '..', 'build', 'dev'))
REEF = os.path.abspath(os.path.join(BUILD, 'reef'))
START_TIMEOUT = 60
STOP_TIMEOUT = 30
# ScyllaDB's names that Reef has a value for, each with one series per shard.
EXPECTED = ['scylla_reactor_tasks_processed', 'scylla_reactor_tasks_pending', 'scylla_transport_requests_served',
            'scylla_transport_current_connections', 'scylla_transport_cql_connections', 'scylla_cache_bytes_used',
            'scylla_database_requests_blocked_memory']
# promtool's lints that ScyllaDB's own names draw (its gauge scylla_cache_bytes_total included).
ALLOWED_LINT = [re.compile(r'^\S+ counter metrics should have "_total" suffix$'),
                re.compile(r'^scylla_cache_bytes_total non-counter metrics should not have "_total" suffix$'),
                re.compile(r'^scylla_transport_cql_requests_count non-histogram and non-summary metrics should not '
                           r'have "_count" suffix$')]


def unavailable(why):
    if os.environ.get('CI') == 'true':
        print(f'FAIL: {why}, and CI=true; install it (./install-dependencies.sh)')
        sys.exit(1)
    print(f'skipped: {why}')
    sys.exit(0)


def http_get(port, path):
    conn = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
    try:
        conn.request('GET', path)
        r = conn.getresponse()
        return r.status, r.getheader('Content-Type'), r.read().decode()
    finally:
        conn.close()


def families_of(text):
    return [line.split()[2] for line in text.splitlines() if line.startswith('# TYPE ')]


def main():
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError as e:
        unavailable(f'python3-prometheus-client is missing ({e})')
    promtool = shutil.which('promtool')
    if not promtool:
        unavailable('promtool (Debian package prometheus) is missing')
    with tempfile.TemporaryDirectory(prefix='reef-prometheus-', dir='/var/tmp') as tmp:
        cql, aware, api, prom = free_ports(4)
        node = logged_process([REEF, '--workdir', os.path.join(tmp, 'work'), '--smp', '2', '--no-pin-threads',
                               '--memory', '512M', '--native-transport-port', str(cql),
                               '--native-shard-aware-transport-port', str(aware), '--api-port', str(api),
                               '--prometheus-port', str(prom)], tmp, os.path.join(tmp, 'node.log'), 'node')
        try:
            node.wait_for('ready:', START_TIMEOUT)
            status, ctype, text = http_get(prom, '/metrics')
            check(status == 200 and ctype.startswith('text/plain; version=0.0.4'), f'/metrics: {status} {ctype}')
            with open(os.path.join(tmp, 'metrics.txt'), 'w') as f:
                f.write(text)

            r = subprocess.run([promtool, 'check', 'metrics'], input=text, capture_output=True, text=True,
                               timeout=60)
            complaints = [l for l in (r.stdout + r.stderr).splitlines() if l.strip()]
            unexpected = [l for l in complaints if not any(p.match(l) for p in ALLOWED_LINT)]
            check(r.returncode in (0, 3) and not unexpected,
                  f'promtool check metrics exited {r.returncode}: ' + '\n'.join(unexpected or complaints))
            print(f'promtool: {len(complaints)} lints, all on the suffixes of ScyllaDB\'s names')

            announced = families_of(text)
            parsed = {}
            for fam in text_string_to_metric_families(text):
                parsed[fam.name] = fam
            # The client drops a counter's _total and keeps the rest of the name as the family.
            for name in announced:
                check(name in parsed or name.removesuffix('_total') in parsed,
                      f'prometheus-client did not read family {name}')
            shards = {}
            for fam in parsed.values():
                for s in fam.samples:
                    check(s.labels.get('shard') in ('0', '1'), f'{s.name} {s.labels}: no shard label')
                    shards.setdefault(fam.name, set()).add(s.labels['shard'])
            for name in EXPECTED + (['scylla_database_total_writes'] if 'scylla_database_total_writes' in announced
                                    else []):
                check(name in announced, f'{name} is not exported')
                check(shards.get(name) == {'0', '1'}, f'{name}: series for shards {shards.get(name)}')
            print(f'prometheus-client: {len(parsed)} families, {sum(len(f.samples) for f in parsed.values())} '
                  f'samples')

            _, _, one = http_get(prom, '/metrics?__name__=scylla_reactor_tasks_processed')
            check(families_of(one) == ['scylla_reactor_tasks_processed'], f'__name__ exact: {families_of(one)}')
            _, _, bare = http_get(prom, '/metrics?__name__=reactor_tasks_processed')
            check(families_of(bare) == ['scylla_reactor_tasks_processed'], f'__name__ bare: {families_of(bare)}')
            _, _, pre = http_get(prom, '/metrics?__name__=scylla_transport_*&__name__=scylla_reactor_tasks_pending')
            names = families_of(pre)
            check(names and all(n.startswith('scylla_transport_') or n == 'scylla_reactor_tasks_pending'
                                for n in names) and 'scylla_reactor_tasks_pending' in names,
                  f'__name__ prefix: {names}')
            _, _, nohelp = http_get(prom, '/metrics?__help__=false')
            check('# HELP' not in nohelp and families_of(nohelp) == announced, '__help__=false')
            _, _, shard1 = http_get(prom, '/metrics?shard=1')
            check('shard="0"' not in shard1 and 'shard="1"' in shard1, 'shard=1 filter')
            status, _, body = http_get(prom, '/metrics?shard=(')
            check(status == 400 and '"code":400' in body, f'a bad regex: {status} {body}')
            status, _, body = http_get(api, '/metrics')
            check(status == 404, f'/metrics on the REST API port: {status}')

            node.proc.send_signal(signal.SIGTERM)
            rc = node.wait_exit(STOP_TIMEOUT)
            check(rc == 0, f'SIGTERM: exit code {rc}:\n{node.text()}')
        finally:
            node.kill()
    print('prometheus_metrics: all checks passed')


if __name__ == '__main__':
    main()
