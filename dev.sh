#!/usr/bin/env bash
# The two set-up commands of the README. Each installs what is missing,
# configures and builds by itself:
#   ./dev.sh run             builds the release binary and runs a node in the foreground on
#                            loopback (CQL 9042 and 19042), data in ./reef-data; Ctrl-C drains it
#   ./dev.sh run bench       the storage benchmarks (test/perf/storage_benchmarks.sh)
#   ./dev.sh run SUBCOMMAND ARGS...
#                            `reef SUBCOMMAND ARGS` (perf-..., sstable ..., server --help)
#   ./dev.sh test [ARGS...]  builds and runs every test suite (ARGS go to test.py)
# Test hooks (test/suites/dev_run.py): REEF_RUN_MODE=dev runs a dev build instead of release (sparing CI
# a release build), and REEF_RUN_ARGS replaces the node's options (`--workdir ./reef-data`) with its own
# (free ports, a temporary workdir).
set -euo pipefail
cd "$(dirname "$0")"

usage() {
    echo "usage: $0 run [bench | REEF SUBCOMMAND ARGS...] | test [TEST.PY ARGS...]" >&2
    exit 2
}

ensure_deps() {
    # install-dependencies.sh checks with dpkg-query first and touches apt only
    # when a package is missing (it re-runs itself with sudo when not root).
    # Running it always, not only when configure.py misses something, also
    # covers the test-only packages (java, maven, ...).
    if command -v dpkg-query >/dev/null 2>&1; then
        ./install-dependencies.sh
    fi
    ./configure.py --check-deps
    ensure_cqlsh
}

# The test-only clients the suites drive (./dev.sh test): PyPI's scylla-driver in its own virtualenv (it imports
# as `cassandra`, so beside Debian's python3-cassandra it would shadow it), and a Go toolchain for the gocql
# workload (test/drivers/gocql; its modules come from the Go module proxy at `go build`).
SCYLLA_DRIVER_VERSION=3.29.12
ensure_test_clients() {
    local venv=build/tools/scylla-driver
    if [[ ! -f $venv/.installed-$SCYLLA_DRIVER_VERSION ]]; then
        echo "dev.sh: installing scylla-driver $SCYLLA_DRIVER_VERSION from PyPI into $venv"
        rm -rf "$venv"
        /usr/bin/python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet "scylla-driver==$SCYLLA_DRIVER_VERSION"
        touch "$venv/.installed-$SCYLLA_DRIVER_VERSION"
    fi
    if ! command -v go >/dev/null 2>&1 && [[ ! -x /usr/local/go/bin/go ]]; then
        echo "dev.sh: installing Debian's golang-go for the gocql suite"
        local sudo=()
        [[ $(id -u) -eq 0 ]] || sudo=(sudo)
        "${sudo[@]}" apt-get update
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends golang-go </dev/null
    fi
}

# cqlsh from PyPI (Debian has none) in a virtualenv under build/tools, linked into /usr/local/bin when that is
# writable, so that the `cqlsh 127.0.0.1 9042` the node prints works.
CQLSH_VERSION=6.2.2
ensure_cqlsh() {
    if command -v cqlsh >/dev/null 2>&1; then
        return
    fi
    local venv=build/tools/cqlsh
    if [[ ! -x $venv/bin/cqlsh ]]; then
        echo "dev.sh: installing cqlsh $CQLSH_VERSION from PyPI into $venv"
        /usr/bin/python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet "cqlsh==$CQLSH_VERSION"
    fi
    if [[ -w /usr/local/bin ]]; then
        ln -sf "$PWD/$venv/bin/cqlsh" /usr/local/bin/cqlsh
    else
        echo "dev.sh: cqlsh is $PWD/$venv/bin/cqlsh (add $PWD/$venv/bin to PATH)"
    fi
}

[[ $# -ge 1 ]] || usage
verb=$1
shift
case "$verb" in
    run)
        ensure_deps
        mode=${REEF_RUN_MODE:-release}
        ./configure.py --mode="$mode"
        ninja -C "build/$mode" reef
        if [[ $# -ge 1 && $1 == bench ]]; then
            shift
            exec test/perf/storage_benchmarks.sh "$@"
        fi
        if [[ $# -ge 1 ]]; then
            exec "build/$mode/reef" "$@"
        fi
        # The main job: a node on loopback, its data in ./reef-data (kept across runs).
        if [[ -n ${REEF_RUN_ARGS:-} ]]; then
            # shellcheck disable=SC2086 # a list of options
            exec "build/$mode/reef" server $REEF_RUN_ARGS
        fi
        exec "build/$mode/reef" server --workdir "$PWD/reef-data"
        ;;
    test)
        ensure_deps
        ensure_test_clients
        exec ./test.py "$@"
        ;;
    *)
        usage
        ;;
esac
