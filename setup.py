"""setup.py: where `pip install .` gets libclnz from (pyproject.toml holds the
rest). The module is pure Python over libclnz with ctypes; at install time:
- a libclnz of this ABI (MAJOR.MINOR before 1.0) that pkg-config finds, as
  `make install` leaves one: nothing is bundled, the module loads that one;
- else libclnz is built here (make, into build/; it needs what scripts/deps
  installs) and a copy goes into the package, which the module loads first.
The version is the header's (include/clnz.h), so there is one."""
import os
import re
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))
VERSION = re.search(r'#define CLNZ_VERSION_STRING "(.*)"',
                    open(os.path.join(ROOT, "include", "clnz.h")).read()).group(1)
MAJOR, MINOR = VERSION.split(".")[:2]
SOVERSION = f"{MAJOR}.{MINOR}" if MAJOR == "0" else MAJOR
LIBNAME = f"libclnz.so.{SOVERSION}"


def pkg_config(*args):
    try:
        p = subprocess.run(["pkg-config", *args, "clnz"], capture_output=True, text=True,
                           timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def installed():
    """The libclnz with this ABI (its SONAME's file) in pkg-config's libdir."""
    libdir = pkg_config("--variable=libdir")
    path = os.path.join(libdir, LIBNAME) if libdir else None
    return path if path and os.path.exists(path) else None


BUNDLE = installed() is None


class BuildWithLibrary(build_py):
    """build_py, plus libclnz built and copied into the package when no
    installed one will do."""

    def run(self):
        super().run()
        copy = os.path.join(self.build_lib, "clnz", LIBNAME)
        if not BUNDLE:
            if os.path.exists(copy):  # an earlier build's: build_lib outlives a build
                os.remove(copy)
            return
        subprocess.run(["make", "-C", ROOT, "B=build", "build/libclnz.so"], check=True)
        shutil.copy(os.path.join(ROOT, "build", "libclnz.so"), copy)


class MaybeBinary(Distribution):
    """A wheel with libclnz in it is for this platform only."""

    def has_ext_modules(self):
        return BUNDLE


# setuptools' own build folders go under build/python, beside make's output
os.makedirs(os.path.join(ROOT, "build", "python"), exist_ok=True)
setup(version=VERSION, cmdclass={"build_py": BuildWithLibrary}, distclass=MaybeBinary,
      options={"build": {"build_base": "build/python"},
               "egg_info": {"egg_base": "build/python"}})
