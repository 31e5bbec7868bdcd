#!/usr/bin/env python3
"""Writes build/<mode>/build.ninja for Reef, like ScyllaDB's configure.py.

Sources are found by walking the rooms (see ARCHITECTURE.md); adding a .cc file
to a room needs no edit here. Each build.ninja re-runs this script when the
script changes or when a file is added to a source folder.
"""
import argparse
import functools
import os
import re
import shlex
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))

# Rooms whose .cc files form libreef.a, in ARCHITECTURE.md's order.
ROOMS = ['runtime', 'utils', 'schema', 'mutation', 'reader', 'cache', 'index',
         'sstables', 'commitlog', 'compaction', 'db', 'cql', 'transport', 'api', 'node', 'tools']

MODES = {
    'debug': {
        'cxxflags': '-O0 -g -fsanitize=address,undefined -fno-omit-frame-pointer -DREEF_DEBUG',
        'ldflags': '-fsanitize=address,undefined',
    },
    'dev': {
        'cxxflags': '-O1 -foptimize-sibling-calls -g1 -DREEF_DEV',
        'ldflags': '',
        'tcmalloc': True,
    },
    # No hot/cold function splitting: g++ 12 at -O3 left a throw moved to a function's cold part without its
    # handler (std::terminate; reader/combined_reader_test::test_combined_whole_partition_sources).
    'release': {
        'cxxflags': '-O3 -fno-reorder-blocks-and-partition -g1 -DNDEBUG',
        'ldflags': '',
        'tcmalloc': True,
    },
    # libFuzzer targets (test/fuzz/*.cc), with the debug build's sanitizers. libFuzzer needs clang; everything
    # else builds with g++. Only the sources a target includes (and their .cc files) are compiled. Clang 16 leaves
    # C++14's sized deallocation off unless asked (g++ has it on); the frame pool frees by size. -O0: clang's -O1
    # with the sanitizers compiles the coroutine-heavy sources 2 to 10 times slower, for a run of seconds.
    'fuzz': {
        'cxxflags': '-O0 -g -fsanitize=address,undefined,fuzzer-no-link -fno-omit-frame-pointer -fsized-deallocation -DREEF_DEBUG',
        'ldflags': '-fsanitize=address,undefined,fuzzer',
    },
}
# 'tcmalloc': the binaries link gperftools' tcmalloc, which then serves malloc and operator new for the whole process
# from per-thread caches (as Seastar's own allocator does for ScyllaDB): glibc's malloc was a third of a batched
# read's CPU. Not under the sanitizers, which bring their own. runtime/memory.cc is told (REEF_TCMALLOC) and names
# it. (Debian's mimalloc 2.0.9 misaligns aligned_alloc(512, 512): runtime/memory_test.)
TCMALLOC_LIB = '-ltcmalloc_minimal'
# The modes `./configure.py` writes when given none.
DEFAULT_MODES = ['debug', 'dev', 'release']
FUZZ_COMPILER = os.environ.get('REEF_FUZZ_CXX', 'clang++-16')
# LLVM's linker (Debian's lld-16) when installed: it links a debug test binary (70 MB) in about a third of GNU ld's
# time, and the build links about 150 of them per mode. GNU ld otherwise.
LLD_DIR = '/usr/lib/llvm-16/bin'
# The headers most unit tests include, precompiled once per mode (pch/test_pch.hh, made here) and given to every
# test/unit/ source with -include in the dev and debug modes: parsing them was about a quarter of a test's compile.
# A test still includes what it uses.
TEST_PCH_HEADERS = ['<boost/test/unit_test.hpp>', '"test/lib/reef_test.hh"', '"test/lib/random_mutation.hh"',
                    '"test/lib/mutation_model.hh"', '"test/lib/tmpdir.hh"', '"test/lib/simple_keys.hh"',
                    '"runtime/reactor.hh"', '<algorithm>', '<filesystem>', '<map>', '<random>', '<set>', '<string>',
                    '<vector>']


def linker_flags(mode):
    if not os.path.exists(os.path.join(LLD_DIR, 'ld.lld')):
        return ''
    return '-fuse-ld=lld' if mode == 'fuzz' else f'-B{LLD_DIR} -fuse-ld=lld'

# (pkg-config name, Debian package)
PKG_CONFIG_DEPS = [
    ('liburing', 'liburing-dev'),
    ('fmt', 'libfmt-dev'),
    ('liblz4', 'liblz4-dev'),
    ('libxxhash', 'libxxhash-dev'),
    ('yaml-cpp', 'libyaml-cpp-dev'),
    ('libzstd', 'libzstd-dev'),
    ('zlib', 'zlib1g-dev'),
]

# (header that must exist, library to link or None, Debian package)
HEADER_DEPS = [
    ('libaio.h', '-laio', 'libaio-dev'),
    ('snappy.h', '-lsnappy', 'libsnappy-dev'),
    ('gperftools/tcmalloc.h', None, 'libgoogle-perftools-dev'),
    ('boost/version.hpp', None, 'libboost1.81-dev'),
    ('boost/json.hpp', None, 'libboost-json1.81-dev'),
    ('boost/test/unit_test.hpp', None, 'libboost-test1.81-dev'),
]

# Programs the build needs: (program, Debian package)
PROGRAM_DEPS = [
    ('ninja', 'ninja-build'),
    ('pkg-config', 'pkg-config'),
]


def fail(msg):
    print(f'configure.py: {msg}', file=sys.stderr)
    sys.exit(1)


def pkg_config(name, what):
    out = subprocess.run(['pkg-config', what, name], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return out.stdout.strip()


def header_exists(cxx, header):
    probe = subprocess.run([cxx, '-std=c++20', '-x', 'c++', '-fsyntax-only', '-'],
                           input=f'#include <{header}>\n', capture_output=True, text=True)
    return probe.returncode == 0


def detect_deps(cxx):
    """Returns (cflags, libs). Exits with a one-line error naming the Debian
    package when something is missing."""
    for prog, pkg in PROGRAM_DEPS:
        if shutil.which(prog) is None:
            fail(f'missing program {prog}: install the Debian package {pkg} (or run ./install-dependencies.sh)')
    if shutil.which(cxx) is None:
        fail(f'missing compiler {cxx}: install the Debian package g++ (or run ./install-dependencies.sh)')
    cflags, libs = [], []
    for name, pkg in PKG_CONFIG_DEPS:
        c = pkg_config(name, '--cflags')
        l = pkg_config(name, '--libs')
        if c is None or l is None:
            fail(f'missing dependency {name}: install the Debian package {pkg} (or run ./install-dependencies.sh)')
        cflags.append(c)
        libs.append(l)
    for header, lib, pkg in HEADER_DEPS:
        if not header_exists(cxx, header):
            fail(f'missing header <{header}>: install the Debian package {pkg} (or run ./install-dependencies.sh)')
        if lib:
            libs.append(lib)
    return ' '.join(x for x in cflags if x), ' '.join(x for x in libs if x)


def find_sources(folder, suffix='.cc'):
    found = []
    base = os.path.join(ROOT, folder)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for f in sorted(filenames):
            if f.endswith(suffix):
                found.append(os.path.relpath(os.path.join(dirpath, f), ROOT))
    return found


def source_dirs():
    dirs = []
    for top in ROOMS + ['test']:
        base = os.path.join(ROOT, top)
        if os.path.isdir(base):
            for dirpath, dirnames, _ in os.walk(base):
                dirnames.sort()
                dirs.append(os.path.relpath(dirpath, ROOT))
    return dirs


@functools.lru_cache(maxsize=None)
def source_text(path):
    with open(os.path.join(ROOT, path), errors='replace') as fh:
        return fh.read()


def include_closure(start):
    """The .cc files a source needs: its own, plus the .cc of every project header it includes, transitively."""
    seen, todo, out = set(), [start], []
    while todo:
        f = todo.pop()
        if f in seen or not os.path.exists(os.path.join(ROOT, f)):
            continue
        seen.add(f)
        if f.endswith('.cc'):
            out.append(f)
        elif f.endswith('.hh'):
            todo.append(f[:-len('.hh')] + '.cc')
            # A room may define one header's functions in several .cc files (schema/types.hh's in
            # type_printing.cc, db/schema_tables.hh's in system_table_schemas.cc, reader_permit's in
            # reader_concurrency_semaphore.cc): take every .cc of the folder that includes the header.
            folder = os.path.dirname(f)
            for c in (find_sources(folder) if folder in ROOMS or folder == 'test/lib' else []):
                if f'#include "{f}"' in source_text(c):
                    todo.append(c)
        for line in source_text(f).splitlines():
            line = line.strip()
            if line.startswith('#include "'):
                todo.append(line[len('#include "'):].split('"')[0])
            elif f.endswith('.hh') and line.startswith('//'):
                # A header whose functions live in another room's .cc says so: "Defined in cql/cql_lexer.cc".
                todo += re.findall(r'[Dd]efined in ([\w/]+\.cc)', line)
    return sorted(out)


def git_output(*args):
    try:
        out = subprocess.run(['git', *args], cwd=ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


def write_version(path):
    """Writes the header `reef --version` prints from: the release in the VERSION file and the commit (short,
    with -dirty for uncommitted changes; "unknown" outside git). The build runs this every time; the file is
    rewritten only when its text changes, so that nothing is recompiled for a build of the same commit (the rule
    has restat)."""
    with open(os.path.join(ROOT, 'VERSION')) as f:
        version = f.read().strip()
    commit = git_output('describe', '--always', '--dirty', '--abbrev=7', '--exclude=*') or 'unknown'
    text = ('// Generated by configure.py --write-version; do not edit.\n#pragma once\n'
            f'#define REEF_VERSION "{version}"\n#define REEF_COMMIT "{commit}"\n')
    write_if_changed(path, text)


def write_if_changed(path, text):
    """Writes text to path unless it holds it already (so that ninja sees no change)."""
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except OSError:
        pass
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)


def obj_name(src):
    return 'obj/' + src[:-len('.cc')] + '.o'


def write_ninja(mode, args, dep_cflags, dep_libs):
    builddir = os.path.join(ROOT, 'build', mode)
    os.makedirs(builddir, exist_ok=True)
    top = os.path.relpath(ROOT, builddir)  # "../.."

    def src(p):
        return f'{top}/{p}'

    cxx = FUZZ_COMPILER if mode == 'fuzz' else args.compiler
    ccache = shutil.which('ccache') if not args.no_ccache else None
    # ccache caches compiles that use a precompiled header only when told that its defines and time macros are fine.
    # Sources are named relative to the build directory, so leaving the working directory out of the hash lets a
    # fresh clone elsewhere (CI's) hit the objects built here; -g's comp_dir then names the first clone, which
    # nothing reads. Three modes' objects pass ccache's default 5 GB, which would evict one mode per build.
    ccache_env = 'CCACHE_SLOPPINESS=pch_defines,time_macros CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=20G'
    cxx_cmd = f'{ccache_env} {ccache} {cxx}' if ccache else cxx
    m = MODES[mode]
    warnings = '-Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers'
    cxxflags = (f'-std=c++20 {warnings} {m["cxxflags"]} -I{top} {dep_cflags} '
                f'{args.cflags}').strip()
    ldflags = f'{linker_flags(mode)} {m["ldflags"]} {args.ldflags}'.strip()

    lib_sources = []
    for room in ROOMS:
        lib_sources += find_sources(room)
    main_sources = ['main.cc'] + find_sources('test/perf') + find_sources('test/drivers')
    test_lib_sources = find_sources('test/lib')
    unit_tests = [s for s in find_sources('test/unit') if s.endswith('_test.cc')]

    lines = []
    w = lines.append
    w(f'# Generated by configure.py --mode={mode}; do not edit.')
    w('ninja_required_version = 1.10')
    w(f'cxx = {cxx_cmd}')
    w(f'cxxflags = {cxxflags}')
    w(f'ldflags = {ldflags}')
    w(f'libs = {TCMALLOC_LIB + " " if m.get("tcmalloc") else ""}{dep_libs} -lpthread')
    w(f'test_libs = -lboost_unit_test_framework')
    w('')
    w('rule cxx')
    w('  command = $cxx -MD -MF $out.d $cxxflags $extra_cxxflags -c $in -o $out')
    w('  depfile = $out.d')
    w('  deps = gcc')
    w('  description = CXX $out')
    w('rule pch')
    # A .gch records each header's checksum, so a cache hit must mean the same header bytes: ccache's depend mode
    # hashes the headers themselves, where its preprocessor mode would take a comment-only edit for no change and
    # return a .gch whose #pragma once no longer matches (every header then included twice).
    w('  command = CCACHE_DEPEND=true $cxx -MD -MF $out.d $cxxflags $extra_cxxflags -x c++-header $in -o $out')
    w('  depfile = $out.d')
    w('  deps = gcc')
    w('  description = PCH $out')
    w('rule ar')
    # Thin: the archive names the objects instead of copying them (700 MB in debug mode).
    w('  command = rm -f $out && ar rcsT $out $in')
    w('  description = AR $out')
    w('rule link')
    w('  command = $cxx $ldflags -o $out $in $link_libs')
    w('  description = LINK $out')
    w('rule write_version')
    w(f'  command = {sys.executable} {top}/configure.py --write-version $out')
    w('  restat = 1')
    w('  description = VERSION $out')
    w('rule configure')
    w(f'  command = cd {top} && {sys.executable} configure.py {" ".join(shlex.quote(a) for a in args.original_argv_for(mode))}')
    w('  generator = 1')
    w('  description = CONFIGURE')
    w('')
    w('build build.ninja: configure | ' + ' '.join(
        [src('configure.py')] + [src(d) for d in source_dirs()]))
    w('')

    emitted = set()

    # `reef --version`'s text, refreshed by every build (always_dirty has no inputs and is never made).
    w('build always_dirty: phony')
    w('build gen/reef_version.hh: write_version | always_dirty')
    w('')

    def compile_all(sources, extra='', implicit=''):
        objs = []
        for s in sources:
            o = obj_name(s)
            if o not in emitted:   # fuzz targets share objects
                emitted.add(o)
                # main.cc prints the version: it includes the generated header (-Igen), made before it compiles.
                order_only = ' || gen/reef_version.hh' if s == 'main.cc' else ''
                w(f'build {o}: cxx {src(s)}{" | " + implicit if implicit else ""}{order_only}')
                flags = (extra + ' -Igen').strip() if s == 'main.cc' else extra
                if s == 'runtime/memory.cc' and m.get('tcmalloc'):
                    flags = (flags + ' -DREEF_TCMALLOC').strip()
                if flags:
                    w(f'  extra_cxxflags = {flags}')
            objs.append(o)
        return objs

    if mode == 'fuzz':
        fuzzers = []
        for t in find_sources('test/fuzz'):
            objs = compile_all(include_closure(t))
            exe = 'fuzz/' + os.path.basename(t)[:-len('.cc')]
            w(f'build {exe}: link {" ".join(objs)}')
            w('  link_libs = $libs')
            fuzzers.append(exe)
        w(f'build all: phony {" ".join(fuzzers)}')
        w('default all')
        with open(os.path.join(builddir, 'build.ninja'), 'w') as f:
            f.write('\n'.join(lines) + '\n')
        return

    lib_objs = compile_all(lib_sources)
    w(f'build libreef.a: ar {" ".join(lib_objs)}')
    # The RocksDB baselines (perf-sstable-scan, perf-delete-range, perf-multiget), where librocksdb-dev is installed: reef alone
    # links it.
    rocksdb_sources = ['test/perf/perf_sstable_scan.cc', 'test/perf/delete_range_rocksdb.cc',
                       'test/perf/multiget_rocksdb.cc']
    have_rocksdb = os.path.exists('/usr/include/rocksdb/db.h')
    main_objs = compile_all([s for s in main_sources
                             if os.path.exists(os.path.join(ROOT, s)) and s not in rocksdb_sources])
    for s in rocksdb_sources:
        if s in main_sources:
            main_objs += compile_all([s], '-DREEF_HAVE_ROCKSDB' if have_rocksdb else '')
    w(f'build reef: link {" ".join(main_objs)} libreef.a')
    w('  link_libs = $libs' + (' -lrocksdb' if have_rocksdb else ''))
    test_flags = '-DBOOST_TEST_DYN_LINK'
    test_lib_objs = compile_all(test_lib_sources, test_flags)
    unit_flags, unit_implicit = test_flags, ''
    if mode != 'release':  # release compiles the tests without it: a missing include shows there
        write_if_changed(os.path.join(builddir, 'pch', 'test_pch.hh'),
                         '// Generated by configure.py (TEST_PCH_HEADERS); do not edit.\n' +
                         ''.join(f'#include {h}\n' for h in TEST_PCH_HEADERS))
        w('build pch/test_pch.hh.gch: pch pch/test_pch.hh')
        w(f'  extra_cxxflags = {test_flags}')
        unit_flags, unit_implicit = f'{test_flags} -include pch/test_pch.hh -Winvalid-pch', 'pch/test_pch.hh.gch'
    tests = []
    for t in unit_tests:
        (o,) = compile_all([t], unit_flags, unit_implicit)
        exe = 'test/' + os.path.relpath(t, 'test/unit')[:-len('.cc')]
        w(f'build {exe}: link {o} {" ".join(test_lib_objs)} libreef.a')
        w('  link_libs = $libs $test_libs')
        tests.append(exe)
    w(f'build tests: phony {" ".join(tests)}')
    w('build all: phony reef tests')
    w('default all')
    with open(os.path.join(builddir, 'build.ninja'), 'w') as f:
        f.write('\n'.join(lines) + '\n')


def main():
    p = argparse.ArgumentParser(description='Configure the Reef build.')
    p.add_argument('--mode', action='append', choices=sorted(MODES),
                   help='build mode (repeatable; default: all modes)')
    p.add_argument('--compiler', default=os.environ.get('CXX', 'g++'))
    p.add_argument('--cflags', default='', help='extra compiler flags')
    p.add_argument('--ldflags', default='', help='extra linker flags')
    p.add_argument('--no-ccache', action='store_true')
    p.add_argument('--check-deps', action='store_true',
                   help='only check that every dependency is installed')
    p.add_argument('--write-version', metavar='FILE', help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.write_version:
        write_version(args.write_version)
        return
    dep_cflags, dep_libs = detect_deps(args.compiler)
    if args.check_deps:
        return
    modes = args.mode or DEFAULT_MODES
    if 'fuzz' in modes and shutil.which(FUZZ_COMPILER) is None:
        fail(f'missing compiler {FUZZ_COMPILER} for --mode=fuzz: install the Debian packages clang-16 and '
             'libclang-rt-16-dev (or run ./install-dependencies.sh)')

    def original_argv_for(mode):
        out = [f'--mode={mode}', f'--compiler={args.compiler}']
        if args.cflags:
            out.append(f'--cflags={args.cflags}')
        if args.ldflags:
            out.append(f'--ldflags={args.ldflags}')
        if args.no_ccache:
            out.append('--no-ccache')
        return out
    args.original_argv_for = original_argv_for
    for mode in modes:
        write_ninja(mode, args, dep_cflags, dep_libs)
        print(f'configure.py: wrote build/{mode}/build.ninja')


if __name__ == '__main__':
    main()
