#!/usr/bin/env bash
# Builds build/dist/reef_<version>_amd64.deb from a build of reef (release by default) with dpkg-deb: the
# binary, /etc/reef/reef.yaml (a conffile), the systemd unit, and maintainer scripts that create the reef
# user and /var/lib/reef (removed only on purge).
#   dist/debian/build-deb.sh [--mode release|dev] [--no-build] [--output DIR]
# Prints the path of the package it wrote on its last line.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
mode=release
build=1
out="$top/build/dist"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --mode) mode=$2; shift 2 ;;
        --no-build) build=0; shift ;;
        --output) out=$2; shift 2 ;;
        *) echo "usage: $0 [--mode release|dev] [--no-build] [--output DIR]" >&2; exit 2 ;;
    esac
done
case "$mode" in
    release|dev) ;;
    *) echo "build-deb.sh: --mode must be release or dev (debug builds carry sanitizers), not '$mode'" >&2; exit 2 ;;
esac

if [[ $build -eq 1 ]]; then
    (cd "$top" && ./configure.py --mode="$mode" >/dev/null && ninja -C "build/$mode" reef >/dev/null)
fi
binary="$top/build/$mode/reef"
[[ -x "$binary" ]] || { echo "build-deb.sh: $binary is missing (build it, or drop --no-build)" >&2; exit 1; }

# The package version: VERSION's release, then the build's commit ("0.1.0~git480f25f"; "~" sorts a snapshot
# before the release itself).
release=$(tr -d '[:space:]' < "$top/VERSION")
commit=$("$binary" --version | sed -n 's/.*(commit \([0-9a-f]*\).*/\1/p')
version="${release}~git${commit:-unknown}"
arch=$(dpkg --print-architecture)

stage=$(mktemp -d "${TMPDIR:-/tmp}/reef-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root="$stage/root"
install -d -m 0755 "$root/DEBIAN" "$root/usr/bin" "$root/etc/reef" "$root/lib/systemd/system" \
    "$root/usr/share/doc/reef" "$root/usr/share/man/man1"
install -m 0755 "$binary" "$root/usr/bin/reef"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/reef"
install -m 0644 "$top/dist/common/reef.yaml" "$root/etc/reef/reef.yaml"
install -m 0644 "$top/dist/common/systemd/reef.service" "$root/lib/systemd/system/reef.service"
install -m 0644 "$top/dist/debian/copyright" "$root/usr/share/doc/reef/copyright"
install -m 0644 "$top/README.md" "$root/usr/share/doc/reef/README.md"
gzip -9n < "$top/dist/common/reef.1" > "$root/usr/share/man/man1/reef.1.gz"
chmod 0644 "$root/usr/share/man/man1/reef.1.gz"
sed "s/@VERSION@/$version/; s/@DATE@/$(date -R -u)/" "$top/dist/debian/changelog.in" \
    | gzip -9n > "$root/usr/share/doc/reef/changelog.gz"
chmod 0644 "$root/usr/share/doc/reef/changelog.gz"
for script in postinst prerm postrm; do
    install -m 0755 "$top/dist/debian/$script" "$root/DEBIAN/$script"
done
echo /etc/reef/reef.yaml > "$root/DEBIAN/conffiles"

# The shared libraries' packages, as debhelper would find them.
mkdir -p "$stage/src/debian"
printf 'Source: reef\n\nPackage: reef\nArchitecture: any\n' > "$stage/src/debian/control"
depends=$(cd "$stage/src" && dpkg-shlibdeps -O "$root/usr/bin/reef" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
installed_size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: reef
Version: $version
Architecture: $arch
Maintainer: Reef developers <reef-dev@example.org>
Installed-Size: $installed_size
Depends: $depends, adduser
Section: database
Priority: optional
Description: wide-column database node with Cassandra-compatible SSTables
 Reef is a single-node wide-column database in the Seastar style: one thread
 per core, nothing shared between them. It speaks the CQL native protocol to
 Cassandra's and ScyllaDB's drivers and stores Cassandra-compatible SSTables,
 so its data moves to a Cassandra or ScyllaDB cluster with their own tools.
CONTROL

mkdir -p "$out"
deb="$out/reef_${version}_${arch}.deb"
fakeroot dpkg-deb --build -Zxz "$root" "$deb" >/dev/null
echo "$deb"
