#!/usr/bin/python3
# test.py modes: dev
"""The DataStax Java driver 4.x (com.datastax.oss:java-driver-core 4.17.0 from Maven Central, pinned by
test/drivers/java-driver/pom.xml) against a `reef --smp 2` node on free loopback ports: Maven resolves the
driver's classpath (`mvn dependency:build-classpath`, cached in ~/.m2), javac compiles
test/drivers/java-driver/src into build/java-driver, and the workload runs: connect (the driver's control
connection reads system.local, system.peers and system_schema), DDL, prepared inserts of sets, maps and blobs
(partition key indices [0]), a logged batch, a select paged by hand through the paging state equal to the model,
InvalidQueryException naming the column and SyntaxError. The node stops with SIGTERM and exits 0. Without Java 17
or Maven it is skipped (a failure under CI=true; install-dependencies.sh installs both)."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

from suite_util import check, reef_node, run_client

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
BUILD = os.environ.get('REEF_BUILD_DIR', os.path.join(ROOT, 'build', 'dev'))
REEF = os.path.abspath(os.path.join(BUILD, 'reef'))
SOURCE = os.path.join(ROOT, 'test', 'drivers', 'java-driver')
OUT = os.path.join(ROOT, 'build', 'java-driver')
START_TIMEOUT = 60
STOP_TIMEOUT = 30


def unavailable(why):
    if os.environ.get('CI') == 'true':
        print(f'FAIL: {why}, and CI=true; install it (./install-dependencies.sh)')
        sys.exit(1)
    print(f'skipped: {why}')
    sys.exit(0)


def build():
    """The workload's classes and classpath; returns the classpath to run it with."""
    mvn, javac = shutil.which('mvn'), shutil.which('javac')
    if not mvn or not javac:
        unavailable('no mvn or javac')
    t0 = time.monotonic()
    os.makedirs(OUT, exist_ok=True)
    cp_file = os.path.join(OUT, 'classpath.txt')
    r = subprocess.run([mvn, '-q', '-B', 'dependency:build-classpath', f'-Dmdep.outputFile={cp_file}'], cwd=SOURCE,
                       capture_output=True, text=True, timeout=1200)
    check(r.returncode == 0, f'mvn dependency:build-classpath: exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr}')
    with open(cp_file) as f:
        deps = f.read().strip()
    classes = os.path.join(OUT, 'classes')
    srcs = []
    for d, _, files in os.walk(os.path.join(SOURCE, 'src')):
        srcs += [os.path.join(d, f) for f in files if f.endswith('.java')]
    r = subprocess.run([javac, '--release', '17', '-d', classes, '-cp', deps] + srcs, capture_output=True, text=True,
                       timeout=600)
    check(r.returncode == 0, f'javac: exit {r.returncode}\n{r.stdout}\n{r.stderr}')
    print(f'mvn + javac: {time.monotonic() - t0:.1f} s')
    return classes + os.pathsep + deps


def main():
    cp = build()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix='reef-java-driver-', dir='/var/tmp') as tmp:
        with reef_node(REEF, tmp) as node:
            node.start(START_TIMEOUT)
            run_client(['java', '-cp', cp, 'reef.Workload', str(node.cql), '400', 'datacenter1'],
                       'java driver workload: ok', 'java workload')
            node.stop(STOP_TIMEOUT)
    print(f'cql_java_driver: all checks passed in {time.monotonic() - t0:.1f} s (build excluded)')


if __name__ == '__main__':
    try:
        main()
    except AssertionError as e:
        print(f'FAILED: {e}', file=sys.stderr)
        sys.exit(1)
