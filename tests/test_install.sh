#!/bin/sh
# test_install.sh B: make install into a temporary prefix, then, out of the
# tree, build tests/install_check.c with nothing but pkg-config (shared and
# static) and run it; check the SONAME and its links, that the shared
# library exports clnz_* only, that the man page renders cleanly, and that
# make uninstall (with DESTDIR) leaves no file behind; pip installs the
# Python module from the source tree and it loads the installed library.
set -eu
B=${1:-build}
root=$(mktemp -d /tmp/clnz-install-XXXXXX)
trap 'rm -rf "$root"' EXIT
fail() { echo "test_install: $*" >&2; exit 1; }

prefix=$root/prefix
make -s B="$B" install PREFIX="$prefix" >/dev/null
version=$(sed -n 's/^#define CLNZ_VERSION_STRING "\(.*\)"/\1/p' include/clnz.h)
# the SONAME's version: MAJOR, or MAJOR.MINOR before 1.0
so=${version%.*}
case $so in 0.*) ;; *) so=${version%%.*} ;; esac
lib=$prefix/lib
[ "$(readlink "$lib/libclnz.so")" = "libclnz.so.$so" ] || fail "libclnz.so link"
[ "$(readlink "$lib/libclnz.so.$so")" = "libclnz.so.$version" ] || fail "libclnz.so.$so link"
readelf -d "$lib/libclnz.so.$version" | grep -q "SONAME.*\[libclnz.so.$so\]" || fail "SONAME"
others=$(nm -D --defined-only "$lib/libclnz.so.$version" | awk '{print $3}' | grep -v '^clnz_' || true)
[ -z "$others" ] || fail "exports more than clnz_*: $others"
for f in bin/clnz include/clnz.h lib/libclnz.a share/man/man1/clnz.1 lib/pkgconfig/clnz.pc; do
    [ -f "$prefix/$f" ] || fail "missing $f"
done
warnings=$(groff -man -ww -z "$prefix/share/man/man1/clnz.1" 2>&1 || true)
[ -z "$warnings" ] || fail "the man page: $warnings"

# out of the tree, pkg-config only
cp tests/install_check.c "$root/"
cd "$root"
export PKG_CONFIG_PATH="$lib/pkgconfig"
[ "$(pkg-config --modversion clnz)" = "$version" ] || fail "pkg-config --modversion"
# shellcheck disable=SC2046
cc -o shared install_check.c $(pkg-config --cflags --libs clnz)
out=$(LD_LIBRARY_PATH="$lib" ./shared) || fail "the shared build: $out"
[ "$out" = "ok $version" ] || fail "the shared build printed '$out'"
LD_LIBRARY_PATH="$lib" ldd ./shared | grep -q "libclnz.so.$so => $lib/" || fail "the shared build did not load $lib"
# shellcheck disable=SC2046
cc -o static install_check.c $(pkg-config --cflags clnz) \
   "$lib/libclnz.a" $(pkg-config --static --libs clnz | sed 's/-L[^ ]*//; s/-lclnz//')
out=$(./static) || fail "the static build: $out"
[ "$out" = "ok $version" ] || fail "the static build printed '$out'"
"$prefix/bin/clnz" --version | grep -q "$version" || fail "clnz --version"
cd - >/dev/null

# the Python module, installed with pip from the source tree (no network: the
# build backend is the system's setuptools), finds the installed library
# through pkg-config's clnz.pc alone (no CLNZ_LIBRARY, not on the loader path)
py=${PYTHON:-/usr/bin/python3}
$py -m pip install -q --no-build-isolation --no-deps --no-index --target "$root/py" . \
    >"$root/pip.log" 2>&1 || fail "pip install: $(cat "$root/pip.log")"
out=$(cd "$root" && env -u CLNZ_LIBRARY PYTHONPATH="$root/py" $py -c '
import numpy as np, clnz
a = np.array([[0, 3, 0], [5, 0, 0]], np.int16)[:, ::-1]
assert np.array_equal(clnz.argwhere(a), np.argwhere(a)), clnz.argwhere(a)
print("ok", clnz.__version__, clnz.library_version(), clnz.__file__, clnz.library_path())') || fail "the pip-installed module: $out"
[ "$out" = "ok $version $version $root/py/clnz/__init__.py $lib/libclnz.so.$so" ] || fail "the pip-installed module printed '$out'"

# DESTDIR staging, then uninstall: nothing left but folders
make -s B="$B" install DESTDIR="$root/stage" PREFIX=/usr/local >/dev/null
[ -f "$root/stage/usr/local/lib/pkgconfig/clnz.pc" ] || fail "DESTDIR install"
grep -q '^prefix=/usr/local$' "$root/stage/usr/local/lib/pkgconfig/clnz.pc" || fail "clnz.pc prefix"
make -s B="$B" uninstall DESTDIR="$root/stage" PREFIX=/usr/local >/dev/null
left=$(find "$root/stage" ! -type d)
[ -z "$left" ] || fail "uninstall left: $left"
echo "test_install: install, pkg-config (shared and static), SONAME, exports, man page, uninstall, pip install of the Python module: ok"
