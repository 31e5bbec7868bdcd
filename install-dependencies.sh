#!/usr/bin/env bash
# Installs every build and test dependency of Reef from Debian 12's packages.
# Run as root (re-runs itself with sudo otherwise). Idempotent: when every
# package is already installed it does nothing and does not touch apt.
set -euo pipefail

PACKAGES=(
    g++
    ninja-build
    ccache
    pkg-config
    python3
    libboost1.81-dev
    libboost-json1.81-dev
    libboost-test1.81-dev
    liburing-dev
    libaio-dev
    libfmt-dev
    liblz4-dev
    libxxhash-dev
    ragel
    libyaml-cpp-dev
    libsnappy-dev
    libzstd-dev
    zlib1g-dev
    libgoogle-perftools-dev  # tcmalloc, the allocator of the dev and release builds
    openjdk-17-jdk-headless  # interop tests against Cassandra's jars
    maven
    clang-16                 # the libFuzzer targets (./configure.py --mode=fuzz); g++ builds everything else
    libclang-rt-16-dev       # libFuzzer and clang's sanitizer runtimes
    lld-16                   # LLVM's linker: links the ~150 test binaries of a mode about 3 times faster than ld
    time                     # /usr/bin/time -v in benchmarks
    librocksdb-dev           # benchmark baseline
    dpkg-dev                 # dist/debian/build-deb.sh: dpkg-shlibdeps
    fakeroot                 # dist/debian/build-deb.sh: root-owned files in the package
    lintian                  # the package test
    systemd                  # ... its systemd-analyze verify of the unit
    adduser                  # ... the package's maintainer scripts
    python3-cassandra        # the CQL conformance runner, test/suites/cql_python_driver.py (driver 3.25)
    python3-lz4              # ... and its lz4 and snappy compression
    python3-snappy
    python3-venv             # cqlsh from PyPI in build/tools (dev.sh)
    prometheus               # promtool check metrics, test/suites/prometheus_metrics.py
    python3-prometheus-client  # ... and its exposition parser
)

missing=()
for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    if [[ "$status" != "install ok installed" ]]; then
        missing+=("$pkg")
    fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "install-dependencies.sh: all ${#PACKAGES[@]} packages are installed"
    exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        exec sudo -- "$0" "$@"
    fi
    echo "install-dependencies.sh: must run as root (missing: ${missing[*]})" >&2
    exit 1
fi

echo "install-dependencies.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
# openjdk's post-install script expects this man page folder on slim images.
mkdir -p /usr/share/man/man1
apt-get install -y --no-install-recommends "${missing[@]}" </dev/null
echo "install-dependencies.sh: done"
