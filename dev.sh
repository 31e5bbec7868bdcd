#!/usr/bin/env bash
# The two set-up commands of the README. Each installs what is missing,
# configures and builds by itself:
#   ./dev.sh run [SUBCOMMAND ARGS...]
#                            builds the release binary and runs the main job (the storage
#                            benchmarks, test/perf/storage_benchmarks.sh), or `reef SUBCOMMAND ARGS`
#   ./dev.sh test [ARGS...]  builds and runs every test suite (ARGS go to test.py)
set -euo pipefail
cd "$(dirname "$0")"

usage() {
    echo "usage: $0 run [REEF SUBCOMMAND ARGS...] | test [TEST.PY ARGS...]" >&2
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
}

[[ $# -ge 1 ]] || usage
verb=$1
shift
case "$verb" in
    run)
        ensure_deps
        ./configure.py --mode=release
        ninja -C build/release reef
        if [[ $# -ge 1 ]]; then
            exec build/release/reef "$@"
        fi
        # The main job. Until the node exists: the storage benchmarks.
        exec test/perf/storage_benchmarks.sh
        ;;
    test)
        ensure_deps
        exec ./test.py "$@"
        ;;
    *)
        usage
        ;;
esac
