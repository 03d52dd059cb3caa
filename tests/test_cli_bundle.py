"""`clnz bundle` and `clnz warmup` against numpy: a bundle built once, then
used by processes that may not compile (CLNZ_NO_COMPILE=1) and start with an
empty program cache; what a bundle lacks, a bundle for another device, and a
damaged one are refused with one `clnz: ...` line; clnz writes a bundle
whole or not at all and replaces only a folder it made, also when the folder
changes or is loaded while it is rebuilt (the shim's CLNZ_SHIM_STOP stops
a process at the moment that matters). The building goes
through the suite's shared program cache, so the quick tier compiles each
program once."""
import os
import shutil
import signal
import subprocess

import numpy as np
import pytest

from test_cli import (CLNZ, SEED, TIMEOUT, bound_by_permissions, io_quote, random_array,  # noqa: F401
                      rng, save)
from test_cli_reliability import (SHIM, clnz, listing, needs_shim, one_error_line, shim_env,
                                  temporaries, wait_stopped)

USES = ["--dtypes", "u8,f32", "--ops", "count,nonzero"]


def fnv1a(data):
    """The manifest's checksum (FNV-1a 64, as host/core/cache.c)."""
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def edit_manifest(bundle, key, value, resign=True):
    """The line `key ...` set to `key value` (not the first line, the magic);
    resign: the checksum line made to match again."""
    path = os.path.join(bundle, "manifest.txt")
    lines = open(path, "rb").read().split(b"\n")
    for i in range(1, len(lines)):
        if lines[i].startswith(key.encode() + b" "):
            lines[i] = f"{key} {value}".encode()
            break
    if resign:
        body = b"\n".join(lines[:-2]) + b"\n"
        lines[-2] = b"checksum %016x" % fnv1a(body)
    open(path, "wb").write(b"\n".join(lines))


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    d = tmp_path_factory.mktemp("bundle") / "b"
    p = clnz("bundle", "build", "-o", d, *USES, check=True)
    assert b"programs" in p.stdout
    assert "manifest.txt" in listing(d) and not temporaries(d.parent)
    return d


def loading_env(tmp_path, bundle=None):
    """May not compile, an empty program cache of its own, the bundle."""
    env = dict(os.environ, CLNZ_NO_COMPILE="1", CLNZ_CACHE_DIR=str(tmp_path / "empty-cache"))
    os.makedirs(env["CLNZ_CACHE_DIR"], exist_ok=True)
    env.pop("CLNZ_BUNDLE", None)
    if bundle is not None:
        env["CLNZ_BUNDLE"] = str(bundle)
    return env


@pytest.mark.parametrize("dtype", ["u1", "f4"])
def test_bundle_serves_calls_without_a_compiler(tmp_path, rng, bundle, dtype):
    env = loading_env(tmp_path, bundle)
    for shape in [(7, 5), (150, 301)]:
        a = random_array(rng, dtype, shape)
        np.save(tmp_path / "a.npy", a)
        for layout, want in [("rows", np.argwhere(a)), ("columns", np.array(np.nonzero(a))),
                             ("flat", np.flatnonzero(a))]:
            clnz("nonzero", tmp_path / "a.npy", "-o", tmp_path / "o.npy", "--layout", layout,
                 env=env, check=True)
            got = np.load(tmp_path / "o.npy")
            assert got.shape == want.shape and (got == want).all(), (layout, shape, SEED)
        p = clnz("count", tmp_path / "a.npy", env=env, check=True)
        assert int(p.stdout) == np.count_nonzero(a)


def test_missing_variant_names_the_option(tmp_path, rng, bundle):
    np.save(tmp_path / "a.npy", random_array(rng, "f8", (9, 9)))
    line = one_error_line(clnz("count", tmp_path / "a.npy", env=loading_env(tmp_path, bundle)))
    assert "f64" in line and "--dtypes u8,f32,f64" in line, line
    line = one_error_line(clnz("count", tmp_path / "a.npy", env=loading_env(tmp_path)))
    assert "clnz bundle build" in line and "CLNZ_BUNDLE" in line, line


def refusal(tmp_path, bundle_dir, rng):
    np.save(tmp_path / "a.npy", random_array(rng, "u1", (9, 9)))
    return one_error_line(clnz("count", tmp_path / "a.npy",
                               env=loading_env(tmp_path, bundle_dir)))


def test_bundle_for_another_device_is_refused(tmp_path, rng, bundle):
    other = tmp_path / "other"
    shutil.copytree(bundle, other)
    edit_manifest(other, "device", "Some FPGA board")
    line = refusal(tmp_path, other, rng)
    assert "was built for device 'Some FPGA board'" in line, line
    p = clnz("bundle", "list", other)  # listing shows it: it is well formed
    assert p.returncode == 0 and b"Some FPGA board" in p.stdout


def test_bundle_built_with_other_build_options_is_refused(tmp_path, rng, bundle):
    """Its binaries are not what this process would compile (-cl-opt-disable
    ones, or -cl-fast-relaxed-math ones whose NaN compares may differ)."""
    other = tmp_path / "other"
    shutil.copytree(bundle, other)
    edit_manifest(other, "build-options", "-cl-std=CL1.2 -w -cl-fast-relaxed-math")
    line = refusal(tmp_path, other, rng)
    assert "was built with the build options '-cl-std=CL1.2 -w -cl-fast-relaxed-math'" in line
    assert "build it with the same ones" in line, line


def test_damaged_bundle_is_refused(tmp_path, rng, bundle):
    damaged = tmp_path / "damaged"
    shutil.copytree(bundle, damaged)
    name = sorted(n for n in os.listdir(damaged) if n.endswith(".bin"))[0]
    data = bytearray((damaged / name).read_bytes())
    data[len(data) // 2] ^= 1
    (damaged / name).write_bytes(data)
    line = refusal(tmp_path, damaged, rng)
    assert f"{name} does not match its checksum" in line, line
    assert "does not match its checksum" in one_error_line(clnz("bundle", "list", damaged))
    shutil.rmtree(damaged)
    shutil.copytree(bundle, damaged)
    edit_manifest(damaged, "ops", "count", resign=False)
    assert "checksum does not match" in refusal(tmp_path, damaged, rng)


def entry_file(bundle_dir, kind, options):
    """The .bin file of the bundle's entry of that kernel file and -D options."""
    lines = (bundle_dir / "manifest.txt").read_text().splitlines()
    for line in lines:
        f = line.split(" ", 6)
        if len(f) == 7 and f[0].isdigit() and f[2] == kind and f[6] == options:
            return f"{f[0]}-{f[2]}.bin"
    raise AssertionError(f"no {kind} {options} in the manifest")


def test_a_binary_added_under_another_entry_is_refused(tmp_path, rng, bundle):
    """Review: `bundle add` of the f32 nonzero binary under the u8 entry's
    number was taken for the u8 program: counts and indices of another
    dtype's code, exit 0. Its kernels' names carry their program's identity
    now: refused without a compiler, built from source with one, right."""
    other = tmp_path / "other"
    shutil.copytree(bundle, other)
    u8 = entry_file(other, "nonzero", "-DCLNZ_DTYPE=1 -DPRED_NONZERO=1")
    f32 = entry_file(other, "nonzero", "-DCLNZ_DTYPE=10 -DPRED_NONZERO=1")
    scan = entry_file(other, "scan", "-DSCAN_T=ulong")
    for wrong in (f32, scan):  # another dtype's program, another file's
        shutil.copy(bundle / wrong, tmp_path / "wrong.bin")
        clnz("bundle", "add", other, u8.split("-")[0], tmp_path / "wrong.bin", check=True)
        a = random_array(rng, "u1", (40, 50))
        np.save(tmp_path / "a.npy", a)
        line = one_error_line(clnz("count", tmp_path / "a.npy", env=loading_env(tmp_path, other)))
        assert f"clnz refused {u8} of bundle" in line, line
        assert "its kernels are not named for this program: another entry's binary" in line, line
        env = dict(loading_env(tmp_path, other), CLNZ_NO_COMPILE="0")
        p = clnz("count", tmp_path / "a.npy", env=env)
        assert p.returncode == 0 and int(p.stdout) == np.count_nonzero(a), p.stderr
        assert f"warning: clnz refused {u8} of bundle" in p.stderr.decode(), p.stderr


def test_kernels_without_their_identity_make_no_bundle(tmp_path):
    """Review: a CLNZ_KERNEL_DIR file declaring `__kernel void nz_fill(` (no
    KERNEL()) still runs, by its plain name, but a bundle of it would be
    refused entry by entry when loaded: `bundle build` says so instead."""
    kdir = tmp_path / "kernels"
    shutil.copytree(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                 "kernels"), kdir)
    fill = (kdir / "fill.cl").read_text()
    assert "KERNEL(nz_fill)" in fill
    (kdir / "fill.cl").write_text(fill.replace("KERNEL(nz_fill)", "nz_fill"))
    env = dict(os.environ, CLNZ_KERNEL_DIR=str(kdir), CLNZ_CACHE_DIR=str(tmp_path / "cache"))
    line = one_error_line(clnz("bundle", "build", "-o", tmp_path / "b", *USES, env=env))
    assert "kernels/fill.cl declares its kernels without KERNEL(name) (kernels/kname.h)" in line
    assert not (tmp_path / "b").exists()


def test_what_is_not_a_bundle_is_named(tmp_path, rng):
    """A missing folder, a file, a folder without a manifest and a manifest
    too large each get their own reason, from `bundle list` and CLNZ_BUNDLE."""
    (tmp_path / "file").write_text("x")
    (tmp_path / "empty").mkdir()
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "manifest.txt").write_bytes(b"#" * (2 << 20))
    inp = save(tmp_path, random_array(rng, "f4", (10,)))
    for name, why in (("none", "No such file or directory"),
                      ("file", "is not a folder (a bundle is a folder with manifest.txt)"),
                      ("empty", "has no manifest.txt: not a bundle"),
                      ("big", "manifest.txt is larger than 1 MiB")):
        line = one_error_line(clnz("bundle", "list", tmp_path / name))
        assert f"bundle '{tmp_path / name}'" in line and why in line, line
        env = dict(os.environ, CLNZ_BUNDLE=str(tmp_path / name))
        line = one_error_line(clnz("count", inp, env=env))
        assert line.startswith("clnz: CLNZ_BUNDLE: ") and why in line, line
    assert (tmp_path / "file").read_text() == "x"


def test_bundle_folders_are_quoted_as_paths(tmp_path):
    """Probe item 5: `bundle list` named a folder with a line break as 'x?y'
    (a '?' of its own could not be told from it); it quotes it as every
    error quotes a path: 'x\\ny', 'it\\'s'."""
    (tmp_path / "it's").mkdir()
    (tmp_path / "new\nline").mkdir()
    for name, why in (("x\ny", ": No such file or directory"), ("tab\there?", ": No such file"),
                      ("it's", " has no manifest.txt"), ("new\nline", " has no manifest.txt")):
        path = str(tmp_path / name)
        line = one_error_line(clnz("bundle", "list", path))
        assert line.startswith(f"clnz: bundle {io_quote(path)}{why}"), line
        line = one_error_line(clnz("bundle", "add", path, "0", path))
        assert io_quote(path) in line, line


def test_bundle_env_folders_are_quoted_by_the_library(tmp_path, rng, bundle):
    """CLNZ_BUNDLE's folder, in every message that names it, quoted as
    errors quote paths: the library wrote it raw, and the command showed a
    line break or an escape as '?' (a context's creation) or cut the line
    there (a call's error): a folder that is no bundle, a bundle for
    another device, a bundle without a needed program."""
    (tmp_path / "new\nline").mkdir()
    for name, why in (("x\ny", ": No such file or directory"), ("esc\x1b[1m\x7f", ": No such file"),
                      ("new\nline", " has no manifest.txt")):
        line = refusal(tmp_path, tmp_path / name, rng)
        quoted = io_quote(str(tmp_path / name))
        assert line.startswith(f"clnz: CLNZ_BUNDLE: bundle {quoted}{why}"), line
    other = tmp_path / "it's\tanother\ndevice's"
    shutil.copytree(bundle, other)
    edit_manifest(other, "device", "Some FPGA board")
    line = refusal(tmp_path, other, rng)
    assert f"bundle {io_quote(str(other))} was built for device 'Some FPGA board'" in line, line
    mine = tmp_path / "mine\tbut\nno f64"
    shutil.copytree(bundle, mine)
    np.save(tmp_path / "f.npy", random_array(rng, "f8", (9, 9)))
    line = one_error_line(clnz("count", tmp_path / "f.npy", env=loading_env(tmp_path, mine)))
    assert f"the bundle {io_quote(str(mine))} does not have it" in line, line


@needs_shim
def test_device_name_with_control_characters_round_trips(tmp_path, rng):
    """A device's name with control characters (the shim's
    CLNZ_SHIM_DEVICE_NAME) is in its bundle's manifest escaped as messages
    quote names; the bundle loads on that device and is refused on one
    whose name differs in a control character only. The manifest held '?'
    for each, so 'a\\tb' and 'a\\nb' were one device."""
    name = "Odd\tdevice\x1b[1m\x7f it's caf\u00e9"
    other = name.replace("\t", "\n")
    d = tmp_path / "b"
    clnz("bundle", "build", "-o", d, "--dtypes", "u8", "--ops", "count", check=True,
         env=shim_env(CLNZ_SHIM_DEVICE_NAME=name, CLNZ_CACHE_DIR=str(tmp_path / "cache")))
    manifest = (d / "manifest.txt").read_bytes()
    assert b"\ndevice " + io_quote(name)[1:-1].encode() + b"\n" in manifest, manifest
    a = random_array(rng, "u1", (9, 9))
    np.save(tmp_path / "a.npy", a)
    env = dict(loading_env(tmp_path, d), LD_PRELOAD=SHIM)  # as shim_env, ASan's order check off
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"
    p = clnz("count", tmp_path / "a.npy", env=dict(env, CLNZ_SHIM_DEVICE_NAME=name), check=True)
    assert int(p.stdout) == np.count_nonzero(a)
    line = one_error_line(clnz("count", tmp_path / "a.npy",
                               env=dict(env, CLNZ_SHIM_DEVICE_NAME=other)))
    assert (f"was built for device {io_quote(name)}, this context's is {io_quote(other)}"
            in line), line


def test_build_into_a_read_only_folder_is_named(tmp_path):
    """Probe item 4, for a bundle: where no folder can be made, the error
    names the bundle and the folder it would go in, before any compiling,
    and nothing is left there."""
    prefix = bound_by_permissions()
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o555)
    try:
        p = subprocess.run(prefix + [CLNZ, "bundle", "build", "-o", str(ro / "b"), *USES],
                           capture_output=True, timeout=TIMEOUT)
        line = one_error_line(p)
        assert line == (f"clnz: cannot write {io_quote(str(ro / 'b'))}: no folder can be created "
                        f"in folder {io_quote(str(ro))} (the bundle is written there first, then "
                        "renamed into place): Permission denied"), line
        assert listing(ro) == []
    finally:
        os.chmod(ro, 0o755)


def test_build_writes_only_what_clnz_made(tmp_path, bundle):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    line = one_error_line(clnz("bundle", "build", "-o", mine, *USES))
    assert "did not make" in line, line
    assert listing(mine) == ["notes.txt"] and (mine / "notes.txt").read_text() == "keep"
    (tmp_path / "file").write_text("x")
    one_error_line(clnz("bundle", "build", "-o", tmp_path / "file", *USES))
    assert (tmp_path / "file").read_text() == "x"
    again = tmp_path / "again"
    shutil.copytree(bundle, again)  # a bundle of its own is replaced whole
    clnz("bundle", "build", "-o", again, "--dtypes", "u8", "--ops", "count", check=True)
    assert b"dtypes u8\n" in (again / "manifest.txt").read_bytes()
    assert not temporaries(tmp_path)
    # a bundle folder that holds a file, or a folder, of the user's is not
    # clnz's alone: refused, untouched (it was replaced, the file deleted,
    # while the emptiness check's read hid the folder's entries); a folder
    # named as a bundle's file is the user's too (it was taken for one)
    for extra in ["NOTES.md", "sub", "9-sub.bin"]:
        mixed = tmp_path / ("mixed-" + extra)
        shutil.copytree(bundle, mixed)
        if extra != "NOTES.md":
            (mixed / extra).mkdir()
            (mixed / extra / "f").write_text("keep")
        else:
            (mixed / extra).write_text("keep")
        before = {n: (mixed / n).read_bytes() for n in listing(mixed) if (mixed / n).is_file()}
        line = one_error_line(clnz("bundle", "build", "-o", mixed, *USES))
        assert "did not make" in line, line
        assert {n: (mixed / n).read_bytes() for n in listing(mixed)
                if (mixed / n).is_file()} == before
        assert sorted(listing(mixed)) == sorted(listing(bundle) + [extra])
    assert not temporaries(tmp_path)


def run_stopped(args, stop, act, env=None):
    """clnz under the shim until it stops itself at `stop` (CLNZ_SHIM_STOP:
    FUNC or FUNC:NAME), act() while it is stopped, then on to its end: the
    CompletedProcess."""
    env = dict(env if env is not None else os.environ, LD_PRELOAD=SHIM, CLNZ_SHIM_STOP=stop)
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"
    p = subprocess.Popen([CLNZ, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env)
    try:
        wait_stopped(p.pid)
        act()
        os.kill(p.pid, signal.SIGCONT)
        out, err = p.communicate(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def files_of(d):
    return {n: (d / n).read_bytes() for n in listing(d) if (d / n).is_file()}


@needs_shim
def test_build_keeps_files_added_while_it_compiled(tmp_path, bundle):
    """Concurrency probe (t4c): a file and a folder put into a bundle folder
    while `bundle build -o` compiled were lost, exit 0: the file deleted,
    the folder moved into a hidden temporary for good. The folder was
    checked when the build began only; it is checked again after the swap,
    put back as its user left it, and the build fails naming it. The shim
    stops the build at its first fsync (after the check, before the swap)."""
    d = tmp_path / "b"
    shutil.copytree(bundle, d)
    before = files_of(d)

    def add():
        (d / "important.txt").write_text("precious")
        (d / "sub").mkdir()
        (d / "sub" / "f.txt").write_text("keep")
    p = run_stopped(["bundle", "build", "-o", d, "--dtypes", "u8", "--ops", "count"], "fsync", add)
    line = one_error_line(p)
    assert line == (f"clnz: {io_quote(str(d))} changed while the bundle was made (it holds files "
                    "clnz did not make now): it is left as it was, and a bundle replaces only an "
                    "empty folder or a bundle of its own"), line
    assert files_of(d) == dict(before, **{"important.txt": b"precious"})
    assert listing(d / "sub") == ["f.txt"] and (d / "sub" / "f.txt").read_text() == "keep"
    assert not temporaries(tmp_path)


@needs_shim
def test_build_moves_what_arrives_in_the_old_folder_into_the_new(tmp_path, bundle):
    """The window that stays: a writer that found the folder before the swap
    adds to it after its second check, while its files are deleted (the
    shim stops the build at its deletion of the old manifest.txt). Such a
    file was deleted or left in a hidden temporary; only names a bundle's
    files have are deleted now, and what else is there goes into the new
    bundle folder, where it would have gone a moment later."""
    d = tmp_path / "b"
    shutil.copytree(bundle, d)

    def add():
        [old] = temporaries(tmp_path)  # the old folder, swapped out
        (tmp_path / old / "late.txt").write_text("late")
        (tmp_path / old / "sub").mkdir()
        (tmp_path / old / "sub" / "f.txt").write_text("keep")
    p = run_stopped(["bundle", "build", "-o", d, "--dtypes", "u8", "--ops", "count"],
                    "unlinkat:manifest.txt", add)
    assert p.returncode == 0 and not p.stderr, p.stderr
    assert b"dtypes u8\n" in (d / "manifest.txt").read_bytes()
    assert (d / "late.txt").read_text() == "late" and (d / "sub" / "f.txt").read_text() == "keep"
    assert not temporaries(tmp_path)


@needs_shim
def test_bundle_rebuilt_while_it_is_loaded(tmp_path, rng, bundle):
    """Concurrency probe (t4): processes loading a bundle while `bundle
    build` rebuilt it in place failed 53 times in 768 ("2-nonzero.bin is
    missing, unreadable or larger than the manifest says"): the manifest
    came from the old folder, the files by path from the new one. The shim
    stops a loader after it read the manifest, at its first program file;
    the bundle is rebuilt with other uses meanwhile; the loader finds the
    old folder's files gone, and reads the new bundle whole."""
    d = tmp_path / "b"
    shutil.copytree(bundle, d)
    first = next(n for n in listing(d) if n.startswith("0-"))
    a = random_array(rng, "u1", (40, 30))
    np.save(tmp_path / "a.npy", a)

    def rebuild():
        clnz("bundle", "build", "-o", d, "--dtypes", "u8", "--ops", "count", check=True)
        assert first in listing(d) and listing(d) != listing(bundle)
    p = run_stopped(["count", tmp_path / "a.npy"], f"open:{first}", rebuild,
                    env=loading_env(tmp_path, d))
    assert p.returncode == 0, p.stderr
    assert int(p.stdout) == np.count_nonzero(a), SEED
    assert b"dtypes u8\n" in (d / "manifest.txt").read_bytes()


@pytest.mark.parametrize("args", [["build"], ["build", "-o"], ["build", "-o", ""],
                                  ["build", "-o", "x", "--dtypes", "u9"],
                                  ["build", "-o", "x", "--ops", ""], ["list"], ["frobnicate"],
                                  ["add", "x", "0"], ["add", "x", "-1", "y"]])
def test_bad_arguments_are_usage_errors(tmp_path, args):
    p = clnz("bundle", *args, cwd=tmp_path)
    one_error_line(p, code=2)
    assert listing(tmp_path) == []


def test_warmup_fills_the_cache_for_processes_that_follow(tmp_path, rng):
    env = loading_env(tmp_path)
    del env["CLNZ_NO_COMPILE"]
    p = clnz("warmup", "--dtypes", "u8", "--ops", "count,nonzero", env=env, check=True)
    assert b"programs ready" in p.stdout
    np.save(tmp_path / "a.npy", a := random_array(rng, "u1", (40, 30)))
    env["CLNZ_NO_COMPILE"] = "1"  # the warmed cache serves the call
    clnz("nonzero", tmp_path / "a.npy", "-o", tmp_path / "o.npy", env=env, check=True)
    assert (np.load(tmp_path / "o.npy") == np.argwhere(a)).all()
    one_error_line(clnz("warmup", "--ops", "count,bogus", env=env), code=2)
    assert not p.stderr, p.stderr
    # no cache folder at all: it works, and says that nothing is kept
    for name in ("CLNZ_CACHE_DIR", "XDG_CACHE_HOME", "HOME", "CLNZ_NO_COMPILE"):
        env.pop(name, None)
    p = clnz("warmup", "--dtypes", "u8", "--ops", "count", env=env, check=True)
    assert b"programs ready" in p.stdout
    assert p.stderr.startswith(b"clnz: warning: no cache folder") and \
        p.stderr.count(b"\n") == 1, p.stderr
