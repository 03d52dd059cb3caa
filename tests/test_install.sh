#!/bin/sh
# test_install.sh B: make install into a temporary prefix, then, out of the
# tree, build tests/install_check.c with nothing but pkg-config (shared and
# static) and run it, and tests/install_opencl_check.c (a program that calls
# OpenCL itself, with its own CL_TARGET_OPENCL_VERSION) with pkg-config alone
# and with CMake's find_package(clnz), and the README's C example (its
# stated result checked: tests/readme_example.py); check the SONAME and its links, that
# the shared library exports clnz_* only, that the man pages (clnz(1), a
# section 3 page for every function of clnz.h) render cleanly, and that
# make uninstall (with DESTDIR) leaves no file behind; pip installs the
# Python module in a venv as the README says, before make install (it
# bundles a libclnz it builds) and after (it loads the installed one).
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
for f in bin/clnz include/clnz.h lib/libclnz.a share/man/man1/clnz.1 lib/pkgconfig/clnz.pc \
         lib/cmake/clnz/clnzConfig.cmake lib/cmake/clnz/clnzConfigVersion.cmake; do
    [ -f "$prefix/$f" ] || fail "missing $f"
done
warnings=$(groff -man -ww -z "$prefix/share/man/man1/clnz.1" 2>&1 || true)
[ -z "$warnings" ] || fail "the man page: $warnings"

# section 3: every function of the header has a page (its family's, or a .so
# link to it) that renders without a warning, and every page's synopsis
# names only what the header declares (scripts/manpage3 warns otherwise)
warnings=$(${PYTHON:-/usr/bin/python3} scripts/manpage3 include/clnz.h scripts/man "$root/man3" 2>&1 >/dev/null)
[ -z "$warnings" ] || fail "$warnings"
for fn in clnz $(sed -n 's/^[a-z_ ]*[ *]\(clnz_[a-z0-9_]*\)(.*/\1/p' include/clnz.h); do
    page=$prefix/share/man/man3/$fn.3
    [ -f "$page" ] || fail "no man page for $fn"
    warnings=$(cd "$prefix/share/man" && groff -man -ww -z "man3/$fn.3" 2>&1 || true)
    [ -z "$warnings" ] || fail "man3/$fn.3: $warnings"
    (cd "$prefix/share/man" && groff -man -Tutf8 "man3/$fn.3" 2>/dev/null) | grep -q "$fn" \
        || fail "man3/$fn.3 does not render $fn"
done

# out of the tree, pkg-config only (-Werror: clnz.h's CL_TARGET_OPENCL_VERSION
# keeps the CL headers quiet, and a program's own is kept without a warning)
cp tests/install_check.c tests/install_opencl_check.c "$root/"
src=$PWD
cd "$root"
export PKG_CONFIG_PATH="$lib/pkgconfig"
[ "$(pkg-config --modversion clnz)" = "$version" ] || fail "pkg-config --modversion"
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror -o shared install_check.c $(pkg-config --cflags --libs clnz)
out=$(LD_LIBRARY_PATH="$lib" ./shared) || fail "the shared build: $out"
[ "$out" = "ok $version" ] || fail "the shared build printed '$out'"
LD_LIBRARY_PATH="$lib" ldd ./shared | grep -q "libclnz.so.$so => $lib/" || fail "the shared build did not load $lib"
# shellcheck disable=SC2046
cc -o static install_check.c $(pkg-config --cflags clnz) \
   "$lib/libclnz.a" $(pkg-config --static --libs clnz | sed 's/-L[^ ]*//; s/-lclnz//')
out=$(./static) || fail "the static build: $out"
[ "$out" = "ok $version" ] || fail "the static build printed '$out'"

# the README's C example, its stated result turned into checks
${PYTHON:-/usr/bin/python3} "$src/tests/readme_example.py" "$src/README.md" readme_example.c
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror -o readme_example readme_example.c $(pkg-config --cflags --libs clnz) \
    2>"$root/cc.log" || fail "the README's C example does not build: $(cat "$root/cc.log")"
out=$(LD_LIBRARY_PATH="$lib" ./readme_example) || fail "the README's C example: $out"
[ "$out" = "ok" ] || fail "the README's C example printed '$out'"

# a program that calls OpenCL itself links with pkg-config's flags alone
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror -o opencl install_opencl_check.c $(pkg-config --cflags --libs clnz) \
    2>"$root/cc.log" || fail "the OpenCL program with pkg-config: $(cat "$root/cc.log")"
out=$(LD_LIBRARY_PATH="$lib" ./opencl) || fail "the OpenCL program: $out"
[ "$out" = "ok $version" ] || fail "the OpenCL program printed '$out'"

# and with CMake: find_package(clnz CONFIG REQUIRED) + clnz::clnz (and the
# static target); a request of another ABI (0.x: another minor) is refused
mkdir cmake-app
cat >cmake-app/CMakeLists.txt <<'CMAKE'
cmake_minimum_required(VERSION 3.10)
project(clnz_app C)
find_package(clnz ${WANT} CONFIG REQUIRED)
add_executable(app install_opencl_check.c)
target_link_libraries(app clnz::clnz)
add_executable(app_static install_opencl_check.c)
target_link_libraries(app_static clnz::clnz_static)
target_compile_options(app PRIVATE -Wall -Wextra -Werror)
CMAKE
cp install_opencl_check.c cmake-app/
want_major=${version%%.*}
want_minor=${version#*.}; want_minor=${want_minor%%.*}
if cmake -S cmake-app -B cmake-no -DCMAKE_PREFIX_PATH="$prefix" \
        -DWANT="$want_major.$((want_minor + 1))" >"$root/cmake.log" 2>&1; then
    fail "CMake accepted clnz $version for a request of $want_major.$((want_minor + 1))"
fi
cmake -S cmake-app -B cmake-build -DCMAKE_PREFIX_PATH="$prefix" -DWANT="$want_major.$want_minor" \
    >"$root/cmake.log" 2>&1 || fail "cmake: $(cat "$root/cmake.log")"
cmake --build cmake-build >"$root/cmake.log" 2>&1 || fail "cmake --build: $(cat "$root/cmake.log")"
for app in app app_static; do
    out=$(./cmake-build/$app) || fail "the CMake build ($app): $out"
    [ "$out" = "ok $version" ] || fail "the CMake build ($app) printed '$out'"
done
"$prefix/bin/clnz" --version | grep -q "$version" || fail "clnz --version"
cd - >/dev/null

# the Python module as the README installs it on Debian 12: a venv that sees
# Debian's numpy (--system-site-packages), then pip install . (offline here:
# --no-index --no-build-isolation, the venv's setuptools builds it). With no
# clnz for pkg-config, pip builds libclnz and bundles it (and the module
# loads that copy); once make install has put one where pkg-config finds it,
# nothing is bundled and the module loads the installed one (through
# clnz.pc: it is not on the loader's path here). No CLNZ_LIBRARY either way.
py=${PYTHON:-/usr/bin/python3}
$py -m venv --system-site-packages "$root/venv" >"$root/venv.log" 2>&1 \
    || fail "python3 -m venv: $(cat "$root/venv.log")"
mkdir "$root/no-pc"
pip_install() { # "$@": the pkg-config settings pip's build sees
    env -u PYTHONPATH "$root/venv/bin/pip" uninstall -q -y clnz >/dev/null 2>&1 || true
    env -u PYTHONPATH "$@" "$root/venv/bin/pip" install -q --no-index --no-build-isolation . \
        >"$root/pip.log" 2>&1 || fail "pip install: $(cat "$root/pip.log")"
}
module_loads() { # prints "ok VERSION LIBVERSION LIBRARY-PATH" from the venv's python
    (cd "$root" && env -u CLNZ_LIBRARY -u PYTHONPATH "$root/venv/bin/python" -c '
import os, numpy as np, clnz
a = np.array([[0, 3, 0], [5, 0, 0]], np.int16)[:, ::-1]
assert all(np.array_equal(x, y) for x, y in zip(clnz.nonzero(a), np.nonzero(a)))
assert np.array_equal(clnz.count_nonzero(a, axis=0), np.count_nonzero(a, axis=0))
print("ok", clnz.__version__, clnz.library_version(), clnz.library_path())')
}
pip_install PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR="$root/no-pc" # no clnz.pc (nor any other)
bundled=$(cd "$root" && env -u PYTHONPATH -u CLNZ_LIBRARY "$root/venv/bin/python" -c \
    'import os, clnz; print(os.path.dirname(clnz.__file__))')
out=$(module_loads) || fail "the module pip bundled libclnz with: $out"
[ "$out" = "ok $version $version $bundled/libclnz.so.$so" ] || fail "the bundled module printed '$out'"
pip_install PKG_CONFIG_PATH="$lib/pkgconfig"
[ ! -e "$bundled/libclnz.so.$so" ] || fail "pip bundled libclnz though clnz.pc names an installed one"
out=$(module_loads) || fail "the pip-installed module: $out"
[ "$out" = "ok $version $version $lib/libclnz.so.$so" ] || fail "the pip-installed module printed '$out'"

# DESTDIR staging, then uninstall: nothing left but folders
make -s B="$B" install DESTDIR="$root/stage" PREFIX=/usr/local >/dev/null
[ -f "$root/stage/usr/local/lib/pkgconfig/clnz.pc" ] || fail "DESTDIR install"
grep -q '^prefix=/usr/local$' "$root/stage/usr/local/lib/pkgconfig/clnz.pc" || fail "clnz.pc prefix"
make -s B="$B" uninstall DESTDIR="$root/stage" PREFIX=/usr/local >/dev/null
left=$(find "$root/stage" ! -type d)
[ -z "$left" ] || fail "uninstall left: $left"
# where pkg-config knows no OpenCL.pc, clnz.pc puts -lOpenCL in Libs
make -s B="$B" install PREFIX="$root/nopc" PC_OPENCL= >/dev/null
grep -q '^Libs: .* -lOpenCL$' "$root/nopc/lib/pkgconfig/clnz.pc" || fail "clnz.pc without OpenCL.pc"
# shellcheck disable=SC2046
(cd "$root" && cc -Werror -o opencl-nopc install_opencl_check.c \
    $(PKG_CONFIG_PATH="$root/nopc/lib/pkgconfig" pkg-config --cflags --libs clnz)) \
    || fail "the OpenCL program with a clnz.pc that names -lOpenCL"

echo "test_install: install, pkg-config (shared, static, a program calling OpenCL), CMake package, SONAME, exports, man pages, uninstall, pip install of the Python module (bundled, then installed libclnz): ok"
