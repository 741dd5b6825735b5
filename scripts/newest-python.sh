#!/usr/bin/env bash
# Build the newest CPython that ragloom supports into .python/<version>, for `make test-newest`.
#
# Uses pythonX.Y from PATH when there is one. Otherwise it builds CPython from Debian's source
# package (apt-get source, from the Debian release that carries that version, through the Debian
# mirror this machine's apt already uses), with the build libraries from this machine's release.
# Nothing else is downloaded. Needs root (apt-get) and a C compiler; takes a few minutes.
set -euo pipefail
VERSION="${1:-3.13}"
SUITE="${NEWEST_PYTHON_SUITE:-trixie}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PREFIX="$ROOT/.python/$VERSION"

if "python$VERSION" -c "import sys" >/dev/null 2>&1; then  # a working one (not a bare pyenv shim)
  mkdir -p "$PREFIX/bin" && ln -sf "$(command -v "python$VERSION")" "$PREFIX/bin/python$VERSION"
  exit 0
fi
[ -x "$PREFIX/bin/python$VERSION" ] && exit 0

work="$(mktemp -d)"
chmod 0755 "$work"  # apt's download user reads and writes there
trap 'rm -rf "$work"' EXIT
mirror="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)"
[ -n "$mirror" ] || mirror="$(awk '$1 == "deb" && $0 !~ /security/ {print $2; exit}' /etc/apt/sources.list)"
[ -n "$mirror" ] || { echo "no Debian mirror configured for apt" >&2; exit 1; }

mkdir -p "$work/lists/partial" "$work/src"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $SUITE main" > "$work/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
          -o "Dir::State::Lists=$work/lists" -o "APT::Get::Only-Source=true")
apt-get "${apt_opts[@]}" update -qq
# the build libraries CPython's optional modules need (ssl, ctypes, sqlite3, bz2, lzma, zlib, readline)
if [ "$(id -u)" = 0 ]; then
  apt-get install -y -qq build-essential libssl-dev libffi-dev zlib1g-dev libbz2-dev liblzma-dev \
    libsqlite3-dev libreadline-dev >/dev/null
fi
(cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only -qq "python$VERSION")
tarball="$(ls "$work"/src/python"$VERSION"_*.orig.tar.* | head -1)"
tar -xf "$tarball" -C "$work/src"
cd "$work"/src/Python-"$VERSION".*/
./configure --prefix="$PREFIX" --with-ensurepip=install -q >/dev/null
make -j"$(nproc)" -s >/dev/null 2>"$work/make.log" || { tail -50 "$work/make.log" >&2; exit 1; }
make -s install >/dev/null 2>&1
"$PREFIX/bin/python$VERSION" -c "import ssl, sqlite3, ctypes, bz2, lzma, zlib; import sys; print(sys.version)"
