#!/usr/bin/env python3
"""Checks the rooms' include order: a room (a top-level folder) includes only rooms listed before it in
configure.py's ROOMS, the one list of the order, and Boost only in api/'s .cc files (tests are exempt: test/ and
main.cc are not scanned); and ARCHITECTURE.md's room table lists the rooms in that order, then test/ and dist/.
Each violation is printed as file:line with both rooms; the exit code is 1 if any.

Before scanning the tree it checks itself: it builds a small tree in a temporary folder with one include of a
later room and one Boost include, and fails unless both are caught (and a clean tree passes), so a checker that
cannot fail fails here. Needs no build; runs in well under a second.

Run by test.py once per mode; alone: test/suites/check_rooms.py [--root DIR] (DIR defaults to this checkout).
"""
import argparse
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"/]+)/[^"]*"')
BOOST = re.compile(r'^\s*#\s*include\s*[<"]boost/')
TABLE_ROW = re.compile(r'^\| `([a-z_]+)/` \|')
# Folders that come after every room: anything there may include any room, no room may include them.
AFTER_ROOMS = ['test', 'dist']


def load_rooms(root):
    """ROOMS from configure.py under root (imported, so that configure.py stays the single source)."""
    sys.dont_write_bytecode = True
    sys.path.insert(0, root)
    try:
        import configure
    finally:
        sys.path.pop(0)
    return list(configure.ROOMS)


def sources(root, room):
    base = os.path.join(root, room)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(('.hh', '.cc')):
                yield os.path.join(dirpath, name)


def check(root, rooms):
    """Returns the violations under root as printable lines, given the room order."""
    order = {room: i for i, room in enumerate(rooms + AFTER_ROOMS)}
    problems = []
    for room in rooms:
        for path in sources(root, room):
            rel = os.path.relpath(path, root)
            with open(path, encoding='utf-8', errors='replace') as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if m and m.group(1) in order and order[m.group(1)] > order[room]:
                        problems.append(f'{rel}:{lineno}: room {room}/ includes {m.group(1)}/, which comes after '
                                        f'it in configure.py ROOMS: {line.strip()}')
                    if BOOST.match(line) and (room != 'api' or path.endswith('.hh')):
                        where = 'an api/ header' if room == 'api' else f'room {room}/'
                        problems.append(f'{rel}:{lineno}: Boost included in {where} (Boost only in api/ .cc files '
                                        f'and tests): {line.strip()}')
    problems += check_table(root, rooms)
    return problems


def check_table(root, rooms):
    """ARCHITECTURE.md's room table must list rooms + AFTER_ROOMS in that order (nothing to check without the file)."""
    path = os.path.join(root, 'ARCHITECTURE.md')
    if not os.path.exists(path):
        return []
    with open(path, encoding='utf-8') as f:
        rows = [(lineno, m.group(1)) for lineno, line in enumerate(f, 1) if (m := TABLE_ROW.match(line))]
    expected = rooms + AFTER_ROOMS
    if [r for _, r in rows] == expected:
        return []
    for i, (lineno, room) in enumerate(rows):
        if i >= len(expected) or room != expected[i]:
            want = expected[i] if i < len(expected) else 'no more rows'
            return [f'ARCHITECTURE.md:{lineno}: the room table has {room}/ where configure.py ROOMS (then '
                    f'{", ".join(AFTER_ROOMS)}) puts {want}']
    return [f'ARCHITECTURE.md: the room table ends before {expected[len(rows)]}/ (configure.py ROOMS, then '
            f'{", ".join(AFTER_ROOMS)})']


def self_test():
    """Builds trees with known violations and checks that each is caught; returns the failures."""
    rooms = ['runtime', 'mutation', 'db', 'api']
    table = '| folder | owns |\n|---|---|\n' + ''.join(f'| `{r}/` | x |\n' for r in rooms + AFTER_ROOMS)
    files = {
        'ARCHITECTURE.md': table,
        'runtime/a.hh': '#pragma once\n#include <vector>\n',
        'mutation/b.hh': '#pragma once\n#include "runtime/a.hh"\n',
        'db/c.cc': '#include "mutation/b.hh"\n#include "db/c.hh"\n',
        'api/d.cc': '#include "db/c.hh"\n#include <boost/beast.hpp>\n',
    }
    injected = {
        'mutation/bad.cc': ('#include "runtime/a.hh"\n  #  include "db/c.hh"\n', 'mutation/bad.cc:2: room mutation/ '
                            'includes db/'),
        'runtime/bad.hh': ('#include "test/lib/x.hh"\n', 'runtime/bad.hh:1: room runtime/ includes test/'),
        'db/boost.cc': ('#include <boost/range.hpp>\n', 'db/boost.cc:1: Boost included in room db/'),
        'api/bad.hh': ('#include "boost/asio.hpp"\n', 'api/bad.hh:1: Boost included in an api/ header'),
        'ARCHITECTURE.md': (table.replace('| `mutation/` |', '| `tmp/` |').replace('| `db/` |', '| `mutation/` |')
                            .replace('| `tmp/` |', '| `db/` |'), 'ARCHITECTURE.md:4: the room table has db/'),
    }
    failures = []

    def build(tmp, extra):
        for rel, text in list(files.items()) + list(extra.items()):
            os.makedirs(os.path.join(tmp, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(tmp, rel), 'w') as f:
                f.write(text)

    with tempfile.TemporaryDirectory(prefix='check_rooms_') as tmp:
        build(tmp, {})
        clean = check(tmp, rooms)
        if clean:
            failures.append(f'a clean tree gave violations: {clean}')
    for rel, (text, expected) in injected.items():
        with tempfile.TemporaryDirectory(prefix='check_rooms_') as tmp:
            build(tmp, {rel: text})
            got = check(tmp, rooms)
            if len(got) != 1 or not got[0].startswith(expected):
                failures.append(f'injected {rel}: expected one violation "{expected}...", got {got}')
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--root', default=ROOT, help='the tree to check (default: this checkout)')
    args = ap.parse_args()

    failures = self_test()
    for f in failures:
        print(f'check_rooms: self-test failed: {f}')
    if failures:
        return 1
    print('check_rooms: self-test passed (upward includes, Boost outside api/ .cc files, a misordered room '
          'table are caught)')

    rooms = load_rooms(args.root)
    problems = check(args.root, rooms)
    for p in problems:
        print(p)
    present = [r for r in rooms if os.path.isdir(os.path.join(args.root, r))]
    print(f'check_rooms: {len(present)} rooms ({", ".join(present)}), {len(problems)} violation(s)')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
