#!/usr/bin/env python3
# test.py modes: dev
"""Random differential test of utils/java_double_format against the JVM: JavaDoubleFormat.java (this folder) prints
Java 17's Double.toString and Float.toString for COUNT random doubles and COUNT floats from a fresh seed, and
java_double_format_test (test_jvm_vectors, reading that stream) checks that Reef prints the same text for each.

A fresh seed every run (printed; REEF_JAVA_FORMAT_SEED=S repeats it); REEF_JAVA_FORMAT_COUNT overrides the count
(default 200000 in dev, 50000 in debug). Java 19 and later print other digits (shortest ones), so this needs a Java 17
(`java` on PATH, or /usr/lib/jvm/*17*). Without one it says so and passes; with CI=true it fails.
"""
import glob
import os
import random
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def say(msg):
    print(msg, flush=True)


def unavailable(why):
    if os.environ.get('CI') == 'true':
        say(f'FAIL: {why}, and CI=true')
        sys.exit(1)
    say(f'skipped: {why}')
    sys.exit(0)


def java_major(java):
    try:
        out = subprocess.run([java, '-version'], capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2)) if major == 1 else major


def find_java17():
    candidates = [shutil.which('java')] + sorted(glob.glob('/usr/lib/jvm/*17*/bin/java'))
    for java in candidates:
        if java and java_major(java) == 17:
            return java
    return None


def main():
    java = find_java17()
    if java is None:
        unavailable('no Java 17 (./install-dependencies.sh installs it); later JDKs print other float digits')
    mode = os.environ.get('REEF_TEST_MODE', 'dev')
    build = os.environ.get('REEF_BUILD_DIR', os.path.join(HERE, '..', '..', 'build', mode))
    test = os.path.join(build, 'test', 'utils', 'java_double_format_test')
    if not os.access(test, os.X_OK):
        say(f'FAIL: {test} is not built')
        return 1
    seed = int(os.environ.get('REEF_JAVA_FORMAT_SEED') or random.SystemRandom().randrange(1, 2**62))
    count = int(os.environ.get('REEF_JAVA_FORMAT_COUNT') or (50000 if mode == 'debug' else 200000))
    say(f'seed {seed}, {count} doubles and {count} floats, {java} (REEF_JAVA_FORMAT_SEED={seed} repeats this run)')
    gen = subprocess.Popen([java, os.path.join(HERE, 'JavaDoubleFormat.java'), 'random', str(seed), str(count)],
                           stdout=subprocess.PIPE)
    check = subprocess.run([test, '--run_test=test_jvm_vectors', '--color_output=no'], stdin=gen.stdout,
                           capture_output=True, text=True, env=dict(os.environ, REEF_JAVA_FORMAT_VECTORS='/dev/stdin'))
    gen.stdout.close()
    gen_rc = gen.wait()
    say(check.stdout[-4000:] + check.stderr[-4000:])
    if gen_rc != 0:
        say(f'FAIL: the Java generator exited with {gen_rc}')
        return 1
    if check.returncode != 0:
        say(f'FAIL: Reef and Java 17 differ (seed {seed}: REEF_JAVA_FORMAT_SEED={seed} '
            f'./test.py --mode {mode} interop/java_double_format_diff)')
        return 1
    say(f'all {2 * count} texts equal (seed {seed})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
