"""Command-line tests: `clnz` against numpy, the reference oracle.

Run with an interpreter that has numpy (Debian's: /usr/bin/python3 -m pytest
tests/test_cli.py); `make test` does. CLNZ_TEST_SEED replays a run; the seed
is printed on failure.
"""
import os
import re
import shutil
import subprocess
import warnings

import numpy as np
import pytest

from conftest import FULL

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLNZ = os.environ.get("CLNZ", os.path.join(ROOT, "build", "clnz"))
# seconds per command; make test-valgrind raises it (memcheck is ~50x slower)
TIMEOUT = float(os.environ.get("CLNZ_TEST_TIMEOUT", "120"))
# the running numpy's, for the few verdicts that differ between versions
NUMPY_VERSION = np.lib.NumpyVersion(np.__version__)
SEED = int(os.environ.get("CLNZ_TEST_SEED", np.random.SeedSequence().entropy % 2**32))

DTYPES = ["?", "u1", "i1", "u2", "i2", "u4", "i4", "u8", "i8", "f2", "f4", "f8"]
INDEX = {"int64": np.int64, "int32": np.int32, "uint32": np.uint32}


def pytest_report_header(config):
    return f"clnz CLI tests, seed {SEED}"


@pytest.fixture
def rng(request):
    # one stream per test, derived from the run's seed and the test's name
    name = request.node.name.encode()
    return np.random.default_rng([SEED, int.from_bytes(name[:8].ljust(8, b"\0"), "little")])


def run(*args, check=True):
    p = subprocess.run([CLNZ, *map(str, args)], capture_output=True, text=True, timeout=TIMEOUT)
    if check and p.returncode != 0:
        raise AssertionError(f"clnz {' '.join(map(str, args))} failed ({p.returncode}): "
                             f"{p.stderr} [seed {SEED}]")
    return p


def random_array(rng, dtype, shape, density=0.3):
    """Random values of a dtype with about `density` nonzero, specials included."""
    n = int(np.prod(shape, dtype=np.int64))
    dt = np.dtype(dtype)
    if dt.kind == "b":
        raw = rng.integers(0, 256, n, dtype=np.uint8)
        raw[rng.random(n) >= density] = 0
        return raw.view(np.bool_).reshape(shape)  # bytes other than 0/1 are true too
    if dt.kind == "f":
        a = rng.integers(-6, 7, n).astype(dt) / 2
        specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0,
                             np.finfo(dt).tiny / 2, -np.finfo(dt).tiny / 4,
                             np.finfo(dt).max, np.finfo(dt).smallest_subnormal], dtype=dt)
        pick = rng.random(n) < 0.1
        a[pick] = specials[rng.integers(0, len(specials), pick.sum())]
    else:
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        small = rng.random(n) < 0.5
        a[small] = rng.integers(max(info.min, -5), 6, small.sum()).astype(dt)
    a[rng.random(n) >= density] = 0
    return a.reshape(shape)


def save(tmp_path, a, name="in.npy", **kw):
    path = tmp_path / name
    if kw:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, a, **kw)
    else:
        np.save(path, a)
    return path


def nonzero(tmp_path, a, *opts, **save_kw):
    inp = save(tmp_path, a, **save_kw)
    out = tmp_path / "out.npy"
    cnt = tmp_path / "count.npy"
    run("nonzero", inp, "-o", out, "--count-out", cnt, *opts)
    return np.load(out), np.load(cnt)


def expect_equal(got, want):
    assert got.dtype == want.dtype, (got.dtype, want.dtype, SEED)
    assert got.shape == want.shape, (got.shape, want.shape, SEED)
    assert np.array_equal(got, want), f"mismatch [seed {SEED}]"


# ---- nonzero against numpy ------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rank", range(0, 9))
def test_every_dtype_and_rank(tmp_path, rng, dtype, rank):
    shape = tuple(int(x) for x in rng.integers(1, 5 if rank > 3 else 12, rank))
    if rank >= 2 and rng.random() < 0.2:
        shape = shape[:1] + (0,) + shape[2:]  # an empty dimension
    a = random_array(rng, dtype, shape, density=rng.random())
    got, count = nonzero(tmp_path, a)
    want = np.argwhere(a) if rank > 0 else np.zeros((int(bool(a)), 0), np.int64)
    expect_equal(got, want.astype(np.int64))
    assert count.shape == () and count.dtype == np.int64
    assert int(count) == np.count_nonzero(a)


def test_rank_32(tmp_path, rng):
    shape = tuple(3 if d % 7 == 3 else 1 for d in range(31)) + (5,)
    a = random_array(rng, "i8", shape, density=0.5)
    got, count = nonzero(tmp_path, a)
    expect_equal(got, np.argwhere(a))
    got, _ = nonzero(tmp_path, a, "--layout", "columns")
    expect_equal(got, np.array(np.nonzero(a)))


@pytest.mark.parametrize("layout", ["rows", "columns", "flat"])
@pytest.mark.parametrize("index", ["int64", "int32", "uint32"])
def test_layouts_and_index_types(tmp_path, rng, layout, index):
    a = random_array(rng, "f4", (7, 13, 5), density=0.4)
    got, _ = nonzero(tmp_path, a, "--layout", layout, "--index", index)
    want = {"rows": np.argwhere(a), "columns": np.array(np.nonzero(a)),
            "flat": np.flatnonzero(a)}[layout]
    expect_equal(got, want.astype(INDEX[index]))


@pytest.mark.parametrize("layout", ["rows", "columns", "flat"])
def test_zero_d_input(tmp_path, layout):
    for value in (0.0, -0.0, 3.0, np.nan):
        a = np.array(value, np.float64)
        got, count = nonzero(tmp_path, a, "--layout", layout)
        z = int(np.count_nonzero(a))
        want = {"rows": np.zeros((z, 0)), "columns": np.array(np.nonzero(np.atleast_1d(a))),
                "flat": np.flatnonzero(a)}[layout]
        expect_equal(got, want.astype(np.int64))
        assert int(count) == z


def test_fortran_big_endian_and_format_versions(tmp_path, rng):
    for dtype in ["<f4", ">f4", ">i8", ">u2", ">f2", "<f8", ">f8", "|u1"]:
        a = random_array(rng, dtype.lstrip("<>|"), (6, 9, 4)).astype(dtype)
        for order in ("C", "F"):
            b = np.asarray(a, order=order)
            for version in [(1, 0), (2, 0), (3, 0)]:
                got, _ = nonzero(tmp_path, b, version=version)
                expect_equal(got, np.argwhere(b))


def test_large_random(tmp_path, rng):
    a = random_array(rng, "u1", (1013, 1537), density=0.05)
    got, count = nonzero(tmp_path, a)
    expect_equal(got, np.argwhere(a))
    assert int(count) == np.count_nonzero(a)


@pytest.mark.parametrize("width", [2, 3, 5])
@pytest.mark.parametrize("layout", ["rows", "columns"])
def test_width(tmp_path, rng, width, layout):
    a = random_array(rng, "i4", (1, 6, 8), density=0.5)  # effective rank 2
    got, _ = nonzero(tmp_path, a, "--width", width, "--layout", layout)
    coords = np.argwhere(a)
    if width >= 3:
        want = np.concatenate([np.zeros((len(coords), width - 3), np.int64), coords], axis=1)
    else:
        want = coords[:, 3 - width:]
    if layout == "columns":
        want = want.T
    expect_equal(got, want.astype(np.int64))


@pytest.mark.parametrize("size", [0, 3, 17, 200])
@pytest.mark.parametrize("index,fill", [("int64", None), ("int32", 7), ("uint32", None),
                                        ("uint32", 0)])
def test_static_size_and_fill(tmp_path, rng, size, index, fill):
    a = random_array(rng, "f8", (9, 11), density=0.2)
    opts = ["--size", size, "--index", index] + ([] if fill is None else ["--fill", fill])
    for layout in ("rows", "columns", "flat"):
        got, count = nonzero(tmp_path, a, "--layout", layout, *opts)
        assert int(count) == np.count_nonzero(a)  # the true count, even when truncated
        full = np.argwhere(a) if layout != "flat" else np.flatnonzero(a)[:, None]
        f = -1 if fill is None else fill
        pad = np.full((max(size - len(full), 0), full.shape[1]), f, np.int64)
        want = np.concatenate([full[:size], pad]).astype(np.int64)
        want = want.astype(INDEX[index])  # -1 as uint32 is 4294967295
        want = {"rows": want, "columns": want.T, "flat": want[:, 0]}[layout]
        expect_equal(got, want)


# ---- predicates: compared as numpy compares with a Python scalar ------------

OPS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
       "gt": np.greater, "ge": np.greater_equal}
VALUES = ["0", "1", "-1", "2", "-3", "127", "128", "255", "256", "300", "2049", "65535",
          "16777217", "2147483648", "-2147483649", "9223372036854775807",
          "9223372036854775808", "18446744073709551615",
          "0.0", "-0.0", "0.5", "-2.5", "0.1", "300.1", "1e-10", "64999.9", "65010.3",
          "-65100.7", "65504.0", "65519.0", "65520.0", "70000.0", "3.3999e38", "3.40282e38",
          "-3.4e38", "1e39", "3.4028235e38", "inf", "-inf", "nan"]


def py_value(text):
    try:
        return int(text)
    except ValueError:
        return float(text)


def numpy1_compare(op, a, v):
    """a OP v as numpy 1.x compares a float array with a Python int or float
    (clnz's rule, README's Predicates), whichever numpy runs: numpy 2 (NEP
    50) rounds v to the array's type. Other arrays as the running numpy
    compares them (the same in 1.x and 2 for the values these tests hold;
    1.24 compares int64 against 2^63 inexactly). With numpy 1.x, the float
    rule is checked against numpy's own result."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if a.dtype.kind != "f":
            return OPS[op](a, v)
        # an int as float64; a float in the wider of the array's type and the
        # smallest numpy deems to hold v
        t = (np.dtype(np.float64) if isinstance(v, int)
             else np.result_type(a.dtype, np.min_scalar_type(v)))
        mask = OPS[op](a.astype(t), np.array(v, t))
        if NUMPY_VERSION < "2.0.0":
            assert np.array_equal(mask, OPS[op](a, v)), (a.dtype, op, v)
    return mask


# one dtype of each family in the quick tier (bool, unsigned, signed, the
# three floats' first two), every dtype in the long one
QUICK_DTYPES = ("?", "u1", "i2", "f2", "f4")


@pytest.mark.parametrize("dtype", [d if d in QUICK_DTYPES else pytest.param(d, marks=pytest.mark.full)
                                   for d in DTYPES])
def test_predicates_match_numpy(tmp_path, rng, dtype):
    a = random_array(rng, dtype, (500,), density=0.8)
    if dtype == "f2":  # every half pattern once
        a = np.arange(65536, dtype=np.uint16).view(np.float16)
    elif a.dtype.kind == "f":  # and each value as the array's type rounds it, where it differs
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = np.concatenate([a, np.array([float(v) for v in VALUES], a.dtype)])
    inp = save(tmp_path, a)
    out = tmp_path / "o.npy"
    # each value under two operators in the long tier, one in the quick one (a
    # process a comparison: half this test's time)
    for k, text in enumerate(VALUES):
        for op in (list(OPS)[k % 6], list(OPS)[(k + 3) % 6])[:2 if FULL else 1]:
            try:
                mask = numpy1_compare(op, a, py_value(text))
            except OverflowError:
                continue
            run("nonzero", inp, "-o", out, "--layout", "flat", "--pred", f"{op}:{text}")
            got = np.load(out)
            want = np.flatnonzero(mask)
            assert np.array_equal(got, want), (dtype, op, text, SEED)
            if k % 4 == 0:
                c = run("count", inp, "--pred", f"{op}:{text}").stdout
                assert int(c) == len(want), (dtype, op, text)


def test_count_command(tmp_path, rng):
    a = random_array(rng, "f4", (300, 301), density=0.3)
    inp = save(tmp_path, a)
    assert run("count", inp).stdout == f"{np.count_nonzero(a)}\n"
    assert int(run("count", inp, "--pred=ge:0.5").stdout) == np.count_nonzero(a >= 0.5)



@pytest.mark.parametrize("dtype", ["f2", pytest.param("?", marks=pytest.mark.full),
                                   pytest.param("i8", marks=pytest.mark.full)])
def test_count_along_axes_is_np_count_nonzero(tmp_path, rng, dtype):
    """--axis against np.count_nonzero(a, axis, keepdims) for every set of
    axes of a 3-D input, C and Fortran order, to a file (npy, csv) and
    printed; the count alone as a 0-d array with -o."""
    a = random_array(rng, dtype, (3, 40, 17), density=0.4)
    axes_sets = [(0,), (1,), (2,), (-1,), (0, 1), (2, 0), (1, 2), (0, 1, 2)]
    for order in ("C", "F"):
        inp = save(tmp_path, np.asarray(a, order=order), name=f"in{order}.npy")
        for axes in axes_sets:
            text = ",".join(map(str, axes))
            for keep in (False, True) if order == "C" else (False,):
                out = tmp_path / "counts.npy"
                run("count", inp, "--axis", text, "-o", out, *(["--keepdims"] if keep else []))
                want = np.asarray(np.count_nonzero(a, axis=axes, keepdims=keep), np.int64)
                expect_equal(np.load(out), want)
            want = np.count_nonzero(a, axis=axes)
            if np.ndim(want) <= 2 and order == "C":
                printed = run("count", inp, f"--axis={text}").stdout
                assert np.array_equal(np.loadtxt(printed.splitlines(), np.int64, ndmin=np.ndim(want)),
                                      want), (axes, order)
                run("count", inp, "--axis", text, "--format", "csv", "-o", tmp_path / "c.csv")
                got = np.loadtxt(tmp_path / "c.csv", np.int64, delimiter=",", ndmin=np.ndim(want))
                assert np.array_equal(got, want), (axes, order)
    out = tmp_path / "n.npy"
    run("count", inp, "--pred", "gt:0", "-o", out)
    expect_equal(np.load(out), np.asarray(np.count_nonzero(a > 0), np.int64))
    run("count", inp, "--keepdims", "-o", out)
    expect_equal(np.load(out), np.asarray(np.count_nonzero(a, keepdims=True), np.int64))
    # a predicate along an axis, and a rank-1 input
    run("count", inp, "--axis", "1", "--pred", "ge:1", "-o", out)
    expect_equal(np.load(out), np.count_nonzero(a >= 1, axis=1).astype(np.int64))
    flat = save(tmp_path, a.ravel(), name="flat.npy")
    assert int(run("count", flat, "--axis", "0").stdout) == np.count_nonzero(a)


def test_count_along_axes_errors(tmp_path, rng):
    """numpy's axis rules (out of bounds, twice), a bad list, --axis beside
    --channels, counts that text cannot hold: exit 2, the output untouched."""
    a = random_array(rng, "f4", (2, 3, 4, 5))
    inp = save(tmp_path, a)
    out = tmp_path / "out.npy"
    out.write_bytes(b"precious")
    cases = [(["--axis", "4"], "out of bounds for an input of 4 dimensions"),
             (["--axis", "-5"], "--axis -5 is out of bounds"),
             (["--axis", "1,-3"], "names dimension 1 twice"),
             (["--axis", "x"], "use integers"),
             (["--axis", "1,"], "use integers"),
             (["--axis", ""], "--axis needs a value"),
             (["--axis", "99"], "use integers"),
             (["--axis", "+1"], "use integers"),
             (["--axis", "1, 2"], "use integers"),
             (["--axis", "0", "--axis", "1"], "--axis given twice"),
             (["--axis", "0", "--format", "csv"], "--format csv writes up to 2 dimensions"),
             (["--axis", "0", "--channels", "any"], "--axis and --channels"),
             (["--keepdims", "--channels", "all"], "--keepdims and --channels")]
    for extra, why in cases:
        p = run("count", inp, *extra, "-o", out, check=False)
        assert p.returncode == 2 and why in p.stderr, (extra, p.stderr)
        assert p.stdout == "" and out.read_bytes() == b"precious", extra
    p = run("count", inp, "--axis", "0", check=False)  # 3-D counts, printed
    assert p.returncode == 2 and "-o COUNTS.npy" in p.stderr and p.stdout == "", p.stderr
    scalar = save(tmp_path, np.float32(2), name="s.npy")  # a lone 0 or -1: counted whole
    for axis in ("0", "-1"):
        assert run("count", scalar, "--axis", axis).stdout == "1\n"
    for axis in ("1", "0,-1"):
        p = run("count", scalar, "--axis", axis, check=False)
        assert p.returncode == 2 and "0 dimensions" in p.stderr, p.stderr
    p = run("nonzero", inp, "-o", out, "--axis", "0", check=False)  # count's only
    assert p.returncode == 2 and "unknown option '--axis'" in p.stderr


def test_options_given_twice_and_the_end_of_options(tmp_path, rng):
    """Every option at most once: two -o wrote only the last file, two
    --pred kept the last predicate (read by a user as both: a silent wrong
    answer). Exit 2 before any output. And '--' ends the options, so a file
    whose name starts with '-' can be an input."""
    a = random_array(rng, "f4", (6, 7))
    inp = save(tmp_path, a)
    out, other = tmp_path / "out.npy", tmp_path / "other.npy"
    out.write_bytes(b"precious")
    for cmd, extra, why in (
            (["nonzero", inp], ["-o", out, "-o", other], "-o given twice"),
            (["nonzero", inp], ["-o", out, "--output", other], "--output given twice"),
            (["nonzero", inp, "-o", out], ["--pred", "gt:0", "--pred", "lt:1"], "--pred given twice"),
            (["nonzero", inp, "-o", out], ["--index", "int32", "--index=int64"], "--index given twice"),
            (["count", inp], ["--format", "csv", "--format", "txt", "-o", out], "--format given twice"),
            (["select", inp, "-o", out], ["--mask", inp, "--mask", inp], "--mask given twice"),
            (["where", inp, "1", "2"], ["-o", out, "-o", other], "-o given twice"),
            (["tune", "--quick"], ["--device", "0:0", "--device=0:0"], "--device given twice"),
            (["warmup"], ["--dtypes", "f32", "--dtypes=u8"], "--dtypes given twice"),
            (["bundle", "build", "--ops", "count"], ["-o", tmp_path / "b1", "-o", tmp_path / "b2"],
             "-o given twice")):
        p = run(*cmd, *extra, check=False)
        assert p.returncode == 2 and why in p.stderr, (cmd, extra, p.stderr)
        assert out.read_bytes() == b"precious" and not other.exists(), (cmd, extra)
        assert not (tmp_path / "b1").exists() and not (tmp_path / "b2").exists()
    save(tmp_path, a, name="-in.npy")

    def here(*args):  # in tmp_path, where "-in.npy" names the file
        return subprocess.run([CLNZ, *map(str, args)], capture_output=True, text=True,
                              timeout=TIMEOUT, cwd=tmp_path)
    p = here("count", "-in.npy")  # without '--': an option clnz does not know
    assert p.returncode == 2 and "unknown option '-in.npy'" in p.stderr, p.stderr
    assert here("count", "--", "-in.npy").stdout == f"{np.count_nonzero(a)}\n"
    assert here("nonzero", "-o", out, "--", "-in.npy").returncode == 0
    assert np.array_equal(np.load(out), np.argwhere(a))
    assert here("where", "-o", out, "--", "-in.npy", "-1", "-2").returncode == 0
    assert np.array_equal(np.load(out), np.where(a, -1, -2))
    for cmd in (["nonzero", inp, "-o", out, "-o", other], ["select", inp, "-o", out, "-o", other]):
        p = run(*cmd, "--help")  # --help before any '--' wins, as for every command
        assert p.stdout.startswith(f"usage: clnz {cmd[0]}"), p.stdout
    p = run("count", "--", inp, "--help", check=False)  # after '--' even --help is an input
    assert p.returncode == 2 and "one INPUT only" in p.stderr, p.stderr


# ---- help, devices ---------------------------------------------------------

def test_help_and_version():
    for args in (["--help"], ["nonzero", "--help"], ["count", "--help"], ["devices", "--help"]):
        p = run(*args)
        assert p.stdout.startswith("usage: clnz")
    assert run("--version").stdout.startswith("clnz ")
    for args in (["--version", "extra"], ["--version", "--bogus"], ["--help", "nonzero"]):
        expect_error(2, *args, contains=f"unexpected argument '{args[1]}' for {args[0]}")


def test_bench_refuses_what_it_does_not_take():
    """scripts/bench runs for minutes (a lent GPU's time is short): a typo or
    a mode's option given to another mode stops it at once, before any
    build or measurement, and --help prints the usage (all three ran the
    whole benchmark before)."""
    import sys
    bench = [sys.executable, os.path.join(ROOT, "scripts", "bench")]
    # plain text: Python 3.14's argparse colours its messages where the
    # environment asks for it (FORCE_COLOR), which would split these strings
    env = dict(os.environ, NO_COLOR="1", PYTHON_COLORS="0")
    env.pop("FORCE_COLOR", None)
    for args, why in ((["--quik"], "unrecognized arguments: --quik"),
                      (["--gpu", "--axes"], "not allowed with"),
                      (["--axes", "--no-tune"], "--no-tune belongs to the full run"),
                      (["--overhead", "--out", "x"], "--out belongs to"),
                      (["--out"], "expected one argument")):
        p = subprocess.run(bench + args, capture_output=True, text=True, timeout=60, env=env)
        assert p.returncode == 2 and why in p.stderr and p.stdout == "", (args, p.stderr)
    p = subprocess.run(bench + ["--help"], capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 0 and "scripts/bench --gpu [--quick] [--out DIR]" in p.stdout


def test_devices_marks_the_default():
    lines = run("devices").stdout.splitlines()
    assert lines and sum(line.startswith("*") for line in lines) == 1
    star = next(line for line in lines if line.startswith("*")).split()[1]
    assert lines[-1].startswith(f"default {star}: the first")  # and why


OCLGRIND_ICD = "/usr/lib/oclgrind/liboclgrind-rt-icd.so"


@pytest.mark.skipif(not os.path.exists(OCLGRIND_ICD), reason="no oclgrind (scripts/deps)")
def test_a_simulator_beside_a_real_device_is_not_the_default(tmp_path, rng):
    """Oclgrind calls itself a GPU (and a CPU, and an accelerator): with its ICD
    listed first, beside the system's, the default is still the real device,
    and a kind or a name picks among them, real devices first."""
    vendors = tmp_path / "vendors"
    vendors.mkdir()
    (vendors / "0-oclgrind.icd").write_text(OCLGRIND_ICD + "\n")
    for icd in os.listdir("/etc/OpenCL/vendors"):
        (vendors / icd).write_text(open(os.path.join("/etc/OpenCL/vendors", icd)).read())
    env = dict(os.environ, OCL_ICD_VENDORS=str(vendors))
    env.pop("CLNZ_DEVICE", None)

    def devices(**extra):
        p = subprocess.run([CLNZ, "devices"], capture_output=True, text=True,
                           env=dict(env, **extra), timeout=TIMEOUT)
        assert p.returncode == 0, p.stderr
        return p.stdout.splitlines()

    lines = devices()
    sim = next(line for line in lines if "Oclgrind" in line)
    assert not sim.startswith("*"), lines  # listed, never the default
    assert "not a simulator" in lines[-1], lines[-1]
    # a kind only the simulator has picks it, saying so; a name picks by name
    assert "Oclgrind" in next(line for line in devices(CLNZ_DEVICE="oclgrind") if
                              line.startswith("*"))
    a = random_array(rng, "f4", (300,))
    inp = save(tmp_path, a)
    for sel in ("oclgrind", "OCLGRIND"):
        p = subprocess.run([CLNZ, "count", str(inp), "--device", sel], capture_output=True,
                           text=True, env=env, timeout=TIMEOUT)
        assert p.returncode == 0 and int(p.stdout) == np.count_nonzero(a), p.stderr
    p = subprocess.run([CLNZ, "count", str(inp), "--device", "no-such-device"],
                       capture_output=True, text=True, env=env, timeout=TIMEOUT)
    assert p.returncode == 2 and "no device matches" in p.stderr, p.stderr


def test_device_option(tmp_path, rng):
    a = random_array(rng, "i2", (50,))
    inp = save(tmp_path, a)
    assert int(run("count", inp, "--device", "0:0").stdout) == np.count_nonzero(a)
    env = dict(os.environ, CLNZ_DEVICE="0:0")
    p = subprocess.run([CLNZ, "count", str(inp)], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and int(p.stdout) == np.count_nonzero(a)


# ---- errors: exit status, one line on stderr, nothing written ------------------

def expect_error(code, *args, contains=None):
    p = run(*args, check=False)
    assert p.returncode == code, (args, p.returncode, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("clnz: "), p.stderr
    if contains:
        assert contains in lines[0], lines[0]
    return lines[0]


def test_usage_errors(tmp_path):
    inp = save(tmp_path, np.ones(3, np.int8))
    out = tmp_path / "o.npy"
    expect_error(2)
    expect_error(2, "frobnicate")
    expect_error(2, "nonzero", inp)  # no -o
    expect_error(2, "nonzero", "-o", out)  # no input
    expect_error(2, "nonzero", inp, "-o", out, "--bogus")
    expect_error(2, "nonzero", inp, "-o", out, "--layout", "diagonal")
    expect_error(2, "nonzero", inp, "-o", out, "--index", "int16")
    expect_error(2, "nonzero", inp, "-o", out, "--pred", "gt")
    expect_error(2, "nonzero", inp, "-o", out, "--pred", "xx:1")
    expect_error(2, "nonzero", inp, "-o", out, "--pred", "gt:one")
    expect_error(2, "nonzero", inp, "-o", out, "--pred", "gt:99999999999999999999999")
    expect_error(2, "nonzero", inp, "-o", out, "--width", "-1")
    # 0 is the API's "the rank", which the command says by leaving --width out
    expect_error(2, "nonzero", inp, "-o", out, "--width", "0", contains="1..32")
    expect_error(2, "nonzero", inp, "-o", out, "--width", "33")
    expect_error(2, "nonzero", inp, "-o", out, "--size", "-4")
    expect_error(2, "nonzero", inp, "-o", out, "--index", "int32", "--fill", "4294967296")
    expect_error(2, "nonzero", inp, "-o", out, "--index", "uint32", "--fill", "-2")
    expect_error(2, "nonzero", inp, "-o", out, "--size")  # no value
    # digits and a '-' only, as --axis: strtoll alone took blanks and a '+'
    for opt, v in (("--size", "\t5"), ("--size", "+5"), ("--size", " 5"), ("--width", " 2"),
                   ("--width", "+2"), ("--fill", " -3"), ("--fill", "+3"), ("--fill", "-")):
        extra = ["--size", "2"] if opt == "--fill" else []
        expect_error(2, "nonzero", inp, "-o", out, *extra, opt, v, contains=f"{opt} '")
    # options that would change nothing: refused, never ignored
    expect_error(2, "nonzero", inp, "-o", out, "--layout", "flat", "--width", "3")
    expect_error(2, "nonzero", inp, "-o", out, "--layout", "flat", "--order", "xy")
    expect_error(2, "nonzero", inp, "-o", out, "--fill", "5")
    expect_error(2, "nonzero", inp, inp, "-o", out)
    expect_error(2, "count", inp, "--layout", "rows")  # a nonzero option
    expect_error(2, "count", inp, "--device", "banana")
    expect_error(2, "count", inp, "--device", "9:0")
    # an empty value means nothing: no file named '', no default device by accident
    for args in (("nonzero", inp, "-o="), ("nonzero", inp, "-o", ""),
                 ("nonzero", inp, "-o", out, "--count-out="), ("count", inp, "--device="),
                 ("select", inp, "-o="), ("tune", "--device="), ("warmup", "--device=")):
        expect_error(2, *args, contains="needs a value")
    assert not out.exists()


def test_clnz_device_that_matches_nothing(tmp_path):
    """CLNZ_DEVICE naming no device is a usage error as --device is (exit 2);
    `clnz devices` still lists them, marks none and says why (exit 1)."""
    inp = save(tmp_path, np.ones(3, np.int8))
    env = dict(os.environ, CLNZ_DEVICE="9:9")
    p = subprocess.run([CLNZ, "count", str(inp)], capture_output=True, text=True, env=env,
                       timeout=TIMEOUT)
    assert p.returncode == 2 and "CLNZ_DEVICE '9:9'" in p.stderr, p.stderr
    p = subprocess.run([CLNZ, "devices"], capture_output=True, text=True, env=env,
                       timeout=TIMEOUT)
    listed = run("devices").stdout.splitlines()[:-1]  # without CLNZ_DEVICE: the list and why
    assert p.returncode == 1, p
    assert p.stdout.splitlines() == [" " + line[1:] for line in listed]  # none marked
    assert p.stderr.startswith("clnz: CLNZ_DEVICE '9:9': no platform 9"), p.stderr


def header_only(tmp_path, header, data=b"", name="bad.npy"):
    path = tmp_path / name
    h = header.encode()
    pad = 64 - (10 + len(h) + 1) % 64
    h = h + b" " * pad + b"\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + data)
    return path


def test_malformed_inputs(tmp_path):
    good = save(tmp_path, np.arange(12, dtype=np.int32).reshape(3, 4), name="good.npy")
    raw = good.read_bytes()
    cases = {
        "missing": tmp_path / "nope.npy",
        "empty": tmp_path / "empty.npy",
        "truncated data": tmp_path / "trunc.npy",
        "truncated header": tmp_path / "trunch.npy",
        "bad magic": tmp_path / "magic.npy",
        "bad version": tmp_path / "version.npy",
    }
    cases["empty"].write_bytes(b"")
    cases["truncated data"].write_bytes(raw[:-5])
    cases["truncated header"].write_bytes(raw[:40])
    cases["bad magic"].write_bytes(b"\x93NUMPX" + raw[6:])
    cases["bad version"].write_bytes(raw[:6] + b"\x07" + raw[7:])
    cases["directory"] = tmp_path
    cases["extra data"] = tmp_path / "extra.npy"
    cases["extra data"].write_bytes(raw + b"xx")
    headers = {
        "complex": "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }",
        "object": "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }",
        "structured": "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (2,), }",
        "string": "{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }",
        "not a dict": "[1, 2]",
        "no shape": "{'descr': '<i4', 'fortran_order': False, }",
        "bad shape": "{'descr': '<i4', 'fortran_order': False, 'shape': (2, -1), }",
        "absurd shape": "{'descr': '<i4', 'fortran_order': False, "
                        "'shape': (4294967296, 4294967296, 4294967296), }",
        "too many dims": "{'descr': '<i4', 'fortran_order': False, 'shape': (" + "1, " * 33 + "), }",
        "bad order": "{'descr': '<i4', 'fortran_order': maybe, 'shape': (2,), }",
        "shape vs data": "{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }",
    }
    for name, header in headers.items():
        cases[name] = header_only(tmp_path, header, b"\0" * 8, name=name.replace(" ", "_") + ".npy")
    out = tmp_path / "out.npy"
    out.write_bytes(b"precious")
    for name, path in cases.items():
        expect_error(1, "nonzero", path, "-o", out)
        expect_error(1, "count", path)
        assert out.read_bytes() == b"precious", name  # untouched
    leftovers = [p.name for p in tmp_path.iterdir() if "clnz-tmp" in p.name]
    assert leftovers == []


def test_other_files_name_the_formats_clnz_reads(tmp_path):
    """A file that is none of .npy, PNG or PNM was "not a .npy file (bad
    magic)", as if .npy were all clnz reads. A file cut inside a PNG
    signature is too short; a .npy cut inside its magic keeps the .npy
    reader's message."""
    cases = {b"hello\n": "bad magic", b"\xff\xd8\xff\xe0\x00\x10JFIF": "bad magic",
             b"hi": "bad magic", b"\x89PN": "too short", b"P": "too short"}
    for data, why in cases.items():
        path = tmp_path / "f.dat"
        path.write_bytes(data)
        line = expect_error(1, "count", path)
        assert line == f"clnz: {io_quote(str(path))} is not a .npy, PNG or PNM (PGM, PPM) file " \
                       f"({why})", (data, line)
    (tmp_path / "cut.npy").write_bytes(b"\x93NUM")
    expect_error(1, "count", tmp_path / "cut.npy", contains="is not a .npy file (too short)")


# ---- .npy headers against np.load ------------------------------------------------

def npy_file(path, header, data=b"", version=1):
    """A .npy of format version.0 whose header is exactly `header` (no padding)."""
    h = header.encode("latin1")
    size = len(h).to_bytes(2 if version == 1 else 4, "little")
    path.write_bytes(b"\x93NUMPY" + bytes([version, 0]) + size + h + data)
    return path


def io_quote(text):
    """A path or name as clnz's messages quote it (io_quote in host/io/input.c,
    and the library's own quote_name in host/core/quote.c: one rule)."""
    esc = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "'": "\\'", "\\": "\\\\"}
    return "'" + "".join(esc.get(c, c if 0x20 <= ord(c) != 0x7f else "\\x%02x" % ord(c))
                         for c in text) + "'"


def np_reads(path):
    """np.load's array, or None where np.load refuses the file."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy 1.x's FutureWarning on '1i4'
        try:
            return np.load(path)
        except Exception:
            return None


def header_read(path, tmp_path):
    """Whether clnz reads the file's header, and its error line if not. Quick:
    with no OpenCL platform to be had (an empty OCL_ICD_VENDORS), a file
    that is read fails only for want of a device; one that is not is a
    one-line error that names the file."""
    env = dict(os.environ, OCL_ICD_VENDORS=str(tmp_path / "no-vendors"))
    p = subprocess.run([CLNZ, "count", str(path)], capture_output=True, text=True, env=env,
                       timeout=TIMEOUT)
    if p.returncode == 0 or "no OpenCL" in p.stderr:
        return True, None
    lines = p.stderr.splitlines()
    assert p.returncode == 1 and len(lines) == 1, p.stderr
    assert lines[0].startswith(f"clnz: {io_quote(str(path))}: "), lines[0]
    return False, lines[0]


def descr_file(tmp_path, name, descr_literal, dtype, shape=(3,), values=None):
    """A .npy whose descr is written descr_literal, of numpy's `dtype` (data
    for it; 8 bytes an element when numpy has none)."""
    n = int(np.prod(shape))
    if values is None:
        data = b"\x01" * (n * (dtype.itemsize if dtype is not None else 8))
    else:
        data = values.tobytes()
    header = "{'descr': %s, 'fortran_order': False, 'shape': %s, }" % (descr_literal, repr(shape))
    return npy_file(tmp_path / name, header, data)


NPY_DTYPES = {np.dtype(d).newbyteorder(o) for d in DTYPES for o in "<>"}

# descr strings that np.dtype reads as one of clnz's dtypes, spelled every way
# numpy takes: byte order or none, type codes (and type numbers as control
# characters), kind and size as strtol reads the size, names, '()' repeats
DESCR_READ = ["|?", "?", "b1", ">b1", "=?", "bool", "bool_", "i4", "<i", ">i", "|i4", "=i4",
              "int32", "intc", "l", "q", "p", "L", "Q", "P", "long", "ulong", "int", "uint",
              "int_", "intp", "uintp", "b", "B", "byte", "ubyte", "h", ">H", "short", "ushort",
              "I", "uintc", "e", ">e", "half", "f", "single", "d", ">d", "double", "float",
              "f2", ">f8", "u1", ">u8", "i 4", "i\t4", ">i+04", "b01", "u\x0b8", "\x07",
              ">\x07", "\x17", "|\x01", "()i4", ">()i4", "() >f8", "<()int32", "()b1"]
# aliases numpy 2 dropped (it refuses them): read as numpy 1.x reads them
DESCR_NUMPY1_NAMES = {"bool8": "?", "int0": "p", "uint0": "P", "float_": "d"}
# what np.dtype refuses, or reads as a dtype clnz does not have
DESCR_REFUSED = ["", "<", "|", "x", "i3", "i0", "i-4", "f16", "g", "c8", "O", "U3", "S1",
                 "M8[ns]", "V4", ">int32", "<bool", "Int32", " i4", "i4 ", "i 4 ", "!i4",
                 "?1", "b2", "()()i4", "( )i4", "2i4", "(2,)i4", "01i4", "i4,i4", "\x18"]
# numpy 1.x reads these as a plain dtype and numpy 2 does not (structured, a
# subarray, an error): refused, with the reason
DESCR_NUMPY2 = {"i4,": "a comma makes a structured dtype", "<f8, ": "a comma makes",
                "1i4": "a repeat count of 1", ">1f4": "a repeat count of 1",
                "i4294967300": "unsupported dtype"}
# one spelling of each way, read for real (select) and compared with numpy
DESCR_SELECT = ["|?", "i4", ">d", "b1", "\x07", "int32", "uint", ">i+04", ">()i4", "e", ">H"]


def test_descr_spellings_as_numpy_reads_them(tmp_path):
    """Probe item 2: a descr is read wherever np.dtype reads it as one of clnz's
    dtypes ('|?' and 'i4' were refused), as that dtype, and refused otherwise
    with a message that quotes it."""
    numpy1 = int(np.__version__.split(".")[0]) < 2
    read_by_clnz = DESCR_READ + list(DESCR_NUMPY1_NAMES)
    for i, descr in enumerate(read_by_clnz + DESCR_REFUSED + list(DESCR_NUMPY2)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                dt = np.dtype(descr)
            except Exception:
                dt = None
        ours = dt is not None and dt.shape == () and dt.names is None and dt in NPY_DTYPES
        if descr in DESCR_NUMPY2 or descr in DESCR_NUMPY1_NAMES:
            assert ours or not numpy1, descr  # what numpy 1.x reads
            assert descr not in DESCR_NUMPY1_NAMES or not ours or dt == DESCR_NUMPY1_NAMES[descr]
        else:  # the lists say what numpy says
            assert ours == (descr in DESCR_READ), (descr, dt)
        if descr in DESCR_NUMPY1_NAMES:  # numpy 1.x's dtype, whichever numpy runs the test
            dt, ours = np.dtype(DESCR_NUMPY1_NAMES[descr]), True
        path = descr_file(tmp_path, f"d{i}.npy", "'%s'" % descr, dt if ours else None)
        a = np_reads(path)
        assert ((a is not None and a.dtype in NPY_DTYPES) == ours or descr in DESCR_NUMPY2
                or (descr in DESCR_NUMPY1_NAMES and not numpy1)), descr
        read, line = header_read(path, tmp_path)
        assert read == (descr in read_by_clnz), (descr, line)
        if not read:
            assert f"unsupported dtype {io_quote(descr)}" in line, line
            assert DESCR_NUMPY2.get(descr, "clnz reads bool, u8..u64") in line, line
    for i, descr in enumerate(DESCR_SELECT):
        dt = np.dtype(descr)
        a = np.array([0, 1, 0, 3, 100, -2 if dt.kind in "if" else 2]).astype(dt)
        path = descr_file(tmp_path, f"s{i}.npy", "'%s'" % descr, dt, (6,), a)
        run("select", path, "-o", tmp_path / "o.npy")
        expect_equal(np.load(tmp_path / "o.npy"), a[a != 0])  # x's byte order, as numpy


def test_descr_tuples_as_numpy_reads_them(tmp_path):
    """descr (dtype, ()) is dtype to numpy, nested too; other shapes make
    subarray dtypes (1: plain in numpy 1.x, shape (1,) in numpy 2)."""
    for i, (literal, want, why) in enumerate([
            ("('<i4', ())", "<i4", None), ("(('>u2', ( )), (),)", ">u2", None),
            ("('<i4', 1)", None, "a repeat count of 1"), ("('<i4', (1))", None, "a repeat count of 1"),
            ("('<i4', (2,))", None, "a subarray dtype"), ("('<i4',)", None, "not (dtype, shape)"),
            ("[('a', '<i4')]", None, "structured dtypes are not supported")]):
        dt = np.dtype(want) if want else None
        values = np.arange(3).astype(dt) if want else None
        path = descr_file(tmp_path, f"t{i}.npy", literal, dt, values=values)
        if want:
            assert np_reads(path).dtype == dt
            assert int(run("count", path).stdout) == 2
        else:
            read, line = header_read(path, tmp_path)
            assert not read and why in line, (literal, line)


def test_long_descr_is_named_clearly(tmp_path):
    """Probe item 3: a descr of over 63 bytes was 'not a string'; it is an
    unsupported dtype, quoted (cut after 40 bytes) with its length."""
    descr = "<" + "x" * 80
    path = descr_file(tmp_path, "long.npy", "'%s'" % descr, None)
    assert np_reads(path) is None
    read, line = header_read(path, tmp_path)
    assert not read
    assert f"unsupported dtype {io_quote(descr[:40])}... (a descr of 81 bytes; " in line, line


def test_shape_written_as_an_int_is_refused(tmp_path):
    """Probe item 1: 'shape': (3) is the int 3 to Python, which np.load
    refuses; clnz read it as (3,). It is refused as np.load refuses it, with
    exit status 1 as for any malformed input, and nothing written."""
    out = tmp_path / "out.npy"
    for i, shape in enumerate(["(3)", "( 3 )", "(0)"]):
        path = npy_file(tmp_path / f"int{i}.npy", "{'descr': '<i8', 'fortran_order': False, "
                        "'shape': %s, }" % shape, np.arange(3, dtype="<i8").tobytes())
        assert np_reads(path) is None
        line = expect_error(1, "nonzero", path, "-o", out)
        assert f"the header's shape {io_quote(shape)} is an int, not a tuple" in line, line
        assert not out.exists()
    path = npy_file(tmp_path / "tuple.npy", "{'descr': '<i8', 'fortran_order': False, "
                    "'shape': (3,), }", np.arange(3, dtype="<i8").tobytes())
    assert int(run("count", path).stdout) == np.count_nonzero(np.load(path)) == 2


# (name, header, format version, verdict): True, read by np.load and clnz
# alike; False, refused by both; a string, read by np.load but refused by
# clnz, which says this (Python syntax numpy's writer never makes)
HEADERS = [
    ("repeated keys: the last counts", "{'descr': '<c8', 'shape': (3), 'descr': '<i4', "
     "'fortran_order': True, 'shape': (3,), 'fortran_order': False}", 1, True),
    ("double quotes, no trailing comma", '{"descr": "<i2", "fortran_order": False, "shape": (2, 3)}',
     1, True),
    ("whitespace between tokens", " \t\n{\x0c'descr'\r\n:\\\n'<u2',\n'fortran_order': False,"
     "   'shape' : ( 2 , 3 , ) ,\n  }  \n", 1, True),
    ("a lone CR in format 3.0", "{'descr':\r'<i4', 'fortran_order': False, 'shape': (3,), }", 3, True),
    ("Python 2's L in format 1.0", "{'descr': '<i8', 'fortran_order': False, 'shape': (3L, 2 L), }",
     1, True),
    ("Python 2's L in format 2.0", "{'descr': '<i8', 'fortran_order': False, 'shape': (3L,), }",
     2, True),
    ("00 and -0", "{'descr': '<i8', 'fortran_order': True, 'shape': (00, -0, 4), }", 1, True),
    ("Fortran order, rank 3", "{'descr': '>f4', 'fortran_order': True, 'shape': (2, 3, 4), }", 3,
     True),
    ("a shape that is an int", "{'descr': '<i4', 'fortran_order': False, 'shape': (3), }", 1, False),
    ("Python 2's L in format 3.0", "{'descr': '<i8', 'fortran_order': False, 'shape': (3L,), }",
     3, False),
    ("a leading zero", "{'descr': '<i8', 'fortran_order': False, 'shape': (03,), }", 1, False),
    ("a lone CR in format 2.0", "\r{ 'fortran_order' : False, 'descr' : '<i4', 'shape' : (3,)  }",
     2, False),
    ("a vertical tab between tokens", "{'descr':\x0b'<i4', 'fortran_order': False, 'shape': (3,), }",
     1, False),
    ("a NUL after the dictionary", "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }\0",
     1, False),
    ("a byte after the dictionary", "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }\xe9",
     1, False),
    ("a repeated key whose last value is bad",
     "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), 'descr': 'i3'}", 1, False),
    ("an indented dictionary", "\n {'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 1,
     False),
    ("a line joined to nothing", "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }\\\n",
     3, False),
    ("fortran_order 1", "{'descr': '<i4', 'fortran_order': 1, 'shape': (3,), }", 1, False),
    ("a list shape", "{'descr': '<i4', 'fortran_order': False, 'shape': [3], }", 1, False),
    ("a missing key", "{'descr': '<i4', 'shape': (3,), }", 1, False),
    ("a key too many", "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), 'x': 1}", 1, False),
    ("an empty header", "", 1, False),
    ("a comment", "{'descr': '<i4', # mine\n'fortran_order': False, 'shape': (3,), }", 1,
     "the header dictionary is malformed at byte 17: '# mine\\n"),
    ("an escape", "{'descr': '<i\\x34', 'fortran_order': False, 'shape': (3,), }", 1,
     "a backslash escape"),
    ("parentheses around a value", "{'descr': '<i4', 'fortran_order': (False), 'shape': (3,), }", 1,
     "fortran_order is not True or False at byte 34: '(False)"),
    ("a digit separator", "{'descr': '<i4', 'fortran_order': False, 'shape': (3_0,), }", 1,
     "the header's shape is not a tuple of integers at byte 52: '_0,)"),
    ("a negative dimension", "{'descr': '<i4', 'fortran_order': False, 'shape': (-3,), }", 1,
     "has a negative dimension"),
]


# the verdicts are numpy 1.24's (Debian's), which clnz follows; numpy 1.25
# reads a lone CR before format 2.0's dictionary (it tries ast.literal_eval
# first) and numpy 2.4 refuses a negative dimension, so with another numpy
# only clnz's side of these is checked
NUMPY_1_24_VERDICTS = {"a lone CR in format 2.0", "a negative dimension"}


@pytest.mark.parametrize("name,header,version,verdict", HEADERS, ids=[h[0] for h in HEADERS])
def test_headers_as_numpy_reads_them(tmp_path, name, header, version, verdict):
    """The header parser read as a hostile user would: each header is read
    where np.load reads it (and as np.load reads it), refused where np.load
    refuses it, and the few Python spellings clnz does not take are refused
    saying where."""
    want = None
    for size in range(257):  # the data np.load wants, if it reads the header
        path = npy_file(tmp_path / "h.npy", header, b"\x01" * size, version)
        want = np_reads(path)
        if want is not None:
            break
    if NUMPY_VERSION < "1.25.0" or name not in NUMPY_1_24_VERDICTS:
        assert (want is not None) == (verdict is not False), name
    if verdict is False:  # the data a lax reader would want (3 elements), so that only
        # the header can be why clnz refuses
        path = npy_file(tmp_path / "h.npy", header, b"\x01" * (24 if "<i8" in header else 12),
                        version)
    if verdict is True:  # the same array as numpy's
        out = tmp_path / "o.npy"
        run("nonzero", path, "-o", out)
        expect_equal(np.load(out), np.argwhere(want))
    else:
        read, line = header_read(path, tmp_path)
        assert not read, name
        if verdict:
            assert verdict in line, line


def test_format_versions_other_than_numpys_are_refused(tmp_path):
    """numpy reads format 1.0, 2.0 and 3.0 only; clnz took 1.1 as 1.0."""
    good = save(tmp_path, np.arange(4, dtype=np.int16), name="good.npy")
    raw = good.read_bytes()
    for major, minor in ((1, 1), (2, 5), (3, 255), (4, 0)):
        path = tmp_path / f"v{major}{minor}.npy"
        path.write_bytes(raw[:6] + bytes([major, minor]) + raw[8:])
        assert np_reads(path) is None
        read, line = header_read(path, tmp_path)
        assert not read and f"unsupported .npy format version {major}.{minor}" in line, line


@pytest.mark.full  # reads a 2 GiB (sparse) input; test_api checks the error itself
def test_index_overflow_is_an_error_before_any_work(tmp_path):
    # a sparse file: 2^31 + 1 bytes of zeros that never touch the disk
    n = 2**31 + 1
    path = header_only(tmp_path, "{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), }" % n)
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size + n)
    out = tmp_path / "out.npy"
    expect_error(1, "nonzero", path, "-o", out, "--index", "int32", contains="int32")
    assert not out.exists()


def test_width_below_effective_rank(tmp_path, rng):
    inp = save(tmp_path, random_array(rng, "u1", (1, 4, 5)))
    out = tmp_path / "out.npy"
    expect_error(1, "nonzero", inp, "-o", out, "--width", "1", contains="effective rank 2")
    assert not out.exists()


def test_unwritable_output(tmp_path, rng):
    inp = save(tmp_path, random_array(rng, "u1", (4, 5)))
    expect_error(1, "nonzero", inp, "-o", tmp_path / "no" / "such" / "dir.npy")
    cnt = tmp_path / "c.npy"
    out = tmp_path / "out.npy"
    # the coordinates are fine but the count cannot be written: neither appears
    expect_error(1, "nonzero", inp, "-o", out, "--count-out", tmp_path / "missing" / "c.npy")
    assert not out.exists() and not cnt.exists()


def bound_by_permissions():
    """The command prefix of a clnz that folder permissions bind: none for a
    user; for root, setpriv without CAP_DAC_OVERRIDE (root passes them by)."""
    if os.geteuid() != 0:
        return []
    cmd = [shutil.which("setpriv") or "setpriv", "--bounding-set=-dac_override,-dac_read_search"]
    try:
        ok = subprocess.run(cmd + ["true"], capture_output=True, timeout=TIMEOUT).returncode == 0
    except OSError:
        ok = False
    if not ok:
        pytest.skip("root, and no setpriv to give up CAP_DAC_OVERRIDE with")
    return cmd


def test_read_only_folder_is_named(tmp_path, rng):
    """Probe item 4: an output in a folder where no file can be created fails
    saying so and naming the folder, also when it would replace a file clnz
    may write (the temporary goes in the folder); the folder is left as it
    was, and a folder that is not there is named too."""
    prefix = bound_by_permissions()
    inp = save(tmp_path, random_array(rng, "u1", (4, 5)))
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "old.npy").write_bytes(b"precious")
    os.chmod(ro / "old.npy", 0o666)
    os.chmod(ro, 0o555)
    try:
        for name in ("new.npy", "old.npy"):
            for fmt in ("npy", "csv"):
                p = subprocess.run(prefix + [CLNZ, "nonzero", str(inp), "-o", str(ro / name),
                                             "--format", fmt],
                                   capture_output=True, text=True, timeout=TIMEOUT)
                assert p.returncode == 1, p
                assert p.stderr == (f"clnz: cannot write {io_quote(str(ro / name))}: no file can "
                                    f"be created in folder {io_quote(str(ro))} (the output is "
                                    "written there first, then renamed into place): Permission "
                                    "denied\n"), p.stderr
        assert os.listdir(ro) == ["old.npy"] and (ro / "old.npy").read_bytes() == b"precious"
    finally:
        os.chmod(ro, 0o755)
    missing = tmp_path / "no" / "such"
    line = expect_error(1, "nonzero", inp, "-o", missing / "x.npy")
    assert line.endswith(f"folder {io_quote(str(missing))}: No such file or directory"), line


# ---- strategies ----------------------------------------------------------------

def test_lookback_reads_aligned_c_order_inputs_as_vectors(tmp_path, rng):
    """CLNZ_STRATEGY=lookback: a C-order input (whose element 0 the command
    holds on a 16-byte boundary) is read 16 bytes per load, a small
    Fortran-order one element by element, as CLNZ_DEBUG's launch log shows;
    on a CPU device a Fortran-order one of 4096 elements or more
    (RELAYOUT_MIN_ELEMS) is read from its C-order copy, 16 bytes per load
    again. `clnz count` runs lb_count alone (no look-back), 16 bytes per
    load in every order (a count reads a dense array in its memory order).
    Every answer is numpy's."""
    env = dict(os.environ, CLNZ_STRATEGY="lookback", CLNZ_DEBUG="1")
    default = next(line for line in run("devices").stdout.splitlines() if line.startswith("*"))
    on_cpu = default.split()[2] == "CPU"  # the copy is made for CPU devices only
    for order, shape, vectors in (("C", (300, 70), True), ("F", (60, 50), False),
                                  ("F", (300, 70), on_cpu)):
        a = random_array(rng, "u1", shape)
        inp, out = save(tmp_path, np.asarray(a, order=order)), tmp_path / "o.npy"
        p = subprocess.run([CLNZ, "nonzero", str(inp), "-o", str(out)], capture_output=True,
                           text=True, env=env)
        assert p.returncode == 0, p.stderr
        assert "clnz-debug: lb_run" in p.stderr, p.stderr
        assert ("lb_run (16-byte loads)" in p.stderr) == vectors, p.stderr
        assert np.array_equal(np.load(out), np.argwhere(a))
        p = subprocess.run([CLNZ, "count", str(inp)], capture_output=True, text=True, env=env)
        assert p.returncode == 0 and "lb_run" not in p.stderr, p.stderr
        assert "lb_count (16-byte loads)" in p.stderr, p.stderr
        assert int(p.stdout) == np.count_nonzero(a)


def test_lookback_scatter_reaches_the_program(tmp_path, rng):
    """CLNZ_LOOKBACK_SCATTER builds the look-back with LB_SCATTER (the
    values of abi.h's ABI_LB_SCATTER_*: direct 1, hybrid 2); staged, the
    default, and an empty value build the program without it. Every mode
    gives numpy's entries (test_strategies checks them at many launch
    shapes; this checks that the mode took effect)."""
    a = random_array(rng, "f4", (70, 90))
    inp, out = save(tmp_path, a), tmp_path / "o.npy"
    for value, define in (("direct", "-DLB_SCATTER=1"), ("hybrid", "-DLB_SCATTER=2"),
                          ("staged", None), ("", None)):
        env = dict(os.environ, CLNZ_STRATEGY="lookback", CLNZ_DEBUG="1",
                   CLNZ_LOOKBACK_SCATTER=value)
        p = subprocess.run([CLNZ, "nonzero", str(inp), "-o", str(out)], capture_output=True,
                           text=True, env=env)
        assert p.returncode == 0, p.stderr
        programs = [line for line in p.stderr.splitlines()
                    if line.startswith("clnz-debug: program lookback ")]
        assert programs, p.stderr
        for line in programs:
            assert ("-DLB_SCATTER=" in line) == (define is not None), line
            assert define is None or define in line, line
        assert np.array_equal(np.load(out), np.argwhere(a))


# ---- caches ----------------------------------------------------------------

def test_second_process_uses_the_program_cache(tmp_path, rng):
    inp = save(tmp_path, random_array(rng, "f4", (64, 64)))
    env = dict(os.environ, CLNZ_CACHE_DIR=str(tmp_path / "cache"), CLNZ_DEBUG="1")
    logs = []
    for _ in range(2):
        p = subprocess.run([CLNZ, "nonzero", str(inp), "-o", str(tmp_path / "o.npy")],
                           capture_output=True, text=True, env=env)
        assert p.returncode == 0, p.stderr
        logs.append(p.stderr)
    assert "built from source" in logs[0]
    assert "built from source" not in logs[1]  # the compiler was not called
    assert "loaded from the cache" in logs[1]


# ---- tuning -------------------------------------------------------------------

def tuning_files(cache):
    d = cache / "tuning"
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def default_device_line(env):
    out = subprocess.run([CLNZ, "devices"], capture_output=True, text=True, env=env).stdout
    return next(line for line in out.splitlines() if line.startswith("*"))


@pytest.mark.full  # a whole tuning run, twice: the long tier
def test_tune_two_processes_at_once_then_clear(tmp_path):
    cache = tmp_path / "cache"
    env = dict(os.environ, CLNZ_CACHE_DIR=str(cache))
    assert default_device_line(env).endswith(", defaults")
    procs = [subprocess.Popen([CLNZ, "tune", "--quick"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        kernels = (["two-pass"], ["scan"], ["mask"], ["lookback"])
        rows = [line.split() for line in out.splitlines()[1:] if line.split()[:1] in kernels]
        assert len(rows) >= 8 and "WRONG" not in out
        assert out.count("<- winner") == 4 and out.count("default") >= 4
        assert re.search(r"^strategy for inputs of many tiles: (two-pass|lookback)$", out, re.M)
        assert all(float(r[3]) > 0 and float(r[4]) > 0 for r in rows)
    files = tuning_files(cache)
    assert len(files) == 2 and files[-1].startswith("vendor--"), files  # no temporary files
    for name in files:
        text = (cache / "tuning" / name).read_text()
        assert text.startswith("# clnz tuning result") and "\nchecksum " in text
    assert default_device_line(env).endswith(", tuned")
    p = run("cache", check=False)  # the default folder is not touched by this test
    assert p.returncode == 0
    p = subprocess.run([CLNZ, "cache", "--clear"], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and p.stdout.startswith("removed ")
    assert int(p.stdout.split()[1]) >= 2
    assert tuning_files(cache) == []
    assert default_device_line(env).endswith(", defaults")


@pytest.mark.full  # a tuning run: the long tier
def test_autotune_on_first_use(tmp_path, rng):
    cache = tmp_path / "cache"
    a = random_array(rng, "f4", (100, 100))
    inp = save(tmp_path, a)
    env = dict(os.environ, CLNZ_CACHE_DIR=str(cache), CLNZ_AUTOTUNE="1")
    p = subprocess.run([CLNZ, "count", str(inp)], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and int(p.stdout) == np.count_nonzero(a)
    files = tuning_files(cache)
    assert len(files) == 2
    stamp = (cache / "tuning" / files[0]).stat().st_mtime_ns
    p = subprocess.run([CLNZ, "count", str(inp)], capture_output=True, text=True, env=env)
    assert p.returncode == 0  # a tuned device is not tuned again
    assert (cache / "tuning" / files[0]).stat().st_mtime_ns == stamp


def test_cache_it_cannot_write_is_a_warning(tmp_path, rng):
    """A cache folder that cannot be made (its parent is a regular file)
    costs the cache, not the answer: the command succeeds, its output is
    right, and stderr says once why every run will compile again."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    env = dict(os.environ, CLNZ_CACHE_DIR=str(blocker / "cache"))
    a = random_array(rng, "f4", (30, 40))
    inp, out = save(tmp_path, a), tmp_path / "o.npy"
    for args in (["count", str(inp)], ["nonzero", str(inp), "-o", str(out)]):
        p = subprocess.run([CLNZ] + args, capture_output=True, text=True, env=env)
        assert p.returncode == 0, p.stderr
        lines = p.stderr.splitlines()
        assert len(lines) == 1, p.stderr
        assert lines[0].startswith("clnz: warning: cannot write the program cache in "), p.stderr
        assert lines[0].endswith("Not a directory"), p.stderr
    assert int(subprocess.run([CLNZ, "count", str(inp)], capture_output=True, text=True,
                              env=env).stdout) == np.count_nonzero(a)
    assert np.array_equal(np.load(out), np.argwhere(a))
    assert blocker.read_text() == "x"


def test_cache_warnings_quote_the_folder(tmp_path, rng):
    """A CLNZ_CACHE_DIR with a line break and an escape: the warnings that
    name the folder (program cache here, tuning result below) quote it as
    errors quote paths, whole. The library wrote it raw, and the command, which shows a
    library message's first line only, cut the warning at the line break."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cache = blocker / "ca\nche\x1b[1m"
    env = dict(os.environ, CLNZ_CACHE_DIR=str(cache))
    inp = save(tmp_path, random_array(rng, "u1", (30, 40)))
    p = subprocess.run([CLNZ, "count", str(inp)], capture_output=True, text=True, env=env,
                       timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    assert p.stderr == (f"clnz: warning: cannot write the program cache in "
                        f"{io_quote(str(cache / 'programs'))}: Not a directory\n"), p.stderr


@pytest.mark.full  # two tuning runs with empty caches (30 s on PoCL): the long tier
def test_tuning_warnings_quote_the_folder(tmp_path):
    """The same for the tuning result, and the folder it was stored in."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cache = blocker / "ca\nche\x1b[1m"
    p = subprocess.run([CLNZ, "tune", "--quick"], capture_output=True, text=True,
                       env=dict(os.environ, CLNZ_CACHE_DIR=str(cache)), timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    assert p.stderr == (f"clnz: warning: cannot write the program cache in "
                        f"{io_quote(str(cache / 'programs'))}: Not a directory\n"
                        f"clnz: warning: cannot store the tuning result in "
                        f"{io_quote(str(cache / 'tuning'))}: Not a directory\n"), p.stderr
    # it said "stored in" its folder, raw, though nothing was
    assert p.stdout.endswith("\nnot stored (see the warning)\n"), p.stdout
    ok = tmp_path / "ca\nche"
    p = subprocess.run([CLNZ, "tune", "--quick"], capture_output=True, text=True, timeout=TIMEOUT,
                       env=dict(os.environ, CLNZ_CACHE_DIR=str(ok)))
    assert p.returncode == 0 and not p.stderr, p.stderr
    assert p.stdout.endswith(f"\nstored in {io_quote(str(ok / 'tuning'))}\n"), p.stdout
    assert (ok / "tuning").is_dir()
    # the program cache blocked, the tuning folder not: stored, though it warned (review:
    # "not stored (see the warning)" for any warning at all)
    part = tmp_path / "part"
    part.mkdir()
    (part / "programs").write_text("x")
    p = subprocess.run([CLNZ, "tune", "--quick"], capture_output=True, text=True, timeout=TIMEOUT,
                       env=dict(os.environ, CLNZ_CACHE_DIR=str(part)))
    assert p.returncode == 0 and "cannot write the program cache" in p.stderr, p.stderr
    assert p.stdout.endswith(f"\nstored in {part / 'tuning'}\n"), p.stdout  # a plain path
    assert len(tuning_files(part)) == 2


def test_autotune_that_cannot_store_does_not_tune(tmp_path, rng):
    """Review: CLNZ_AUTOTUNE=1 with a tuning folder that cannot be made tuned
    in every process (5 s each on PoCL for a count of 1000 elements), the
    result lost each time. It warns now, tunes nothing, and answers."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "tuning").write_text("x")  # a file where the folder goes
    a = random_array(rng, "f4", (10, 100))
    inp = save(tmp_path, a)
    env = dict(os.environ, CLNZ_CACHE_DIR=str(cache), CLNZ_AUTOTUNE="1")
    p = subprocess.run([CLNZ, "count", str(inp)], capture_output=True, text=True, env=env,
                       timeout=TIMEOUT)
    assert p.returncode == 0 and int(p.stdout) == np.count_nonzero(a), p.stderr
    assert p.stderr == (f"clnz: warning: CLNZ_AUTOTUNE: not tuning, the result could not be "
                        f"stored in {io_quote(str(cache / 'tuning'))} (Not a directory) and every "
                        f"process would tune again: make the cache folder writable, or run "
                        f"'clnz tune' where it is\n"), p.stderr
    assert (cache / "tuning").read_text() == "x"
    # and with the program cache blocked too, both warnings, a line each (review: the one
    # message slot kept the last, so the autotune warning was never seen)
    shutil.rmtree(cache / "programs")  # the first run's
    (cache / "programs").write_text("x")
    p = subprocess.run([CLNZ, "count", str(inp)], capture_output=True, text=True, env=env,
                       timeout=TIMEOUT)
    assert p.returncode == 0 and int(p.stdout) == np.count_nonzero(a), p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 2, p.stderr
    assert lines[0].startswith("clnz: warning: CLNZ_AUTOTUNE: not tuning"), p.stderr
    assert lines[1].startswith("clnz: warning: cannot write the program cache in "), p.stderr


def test_tune_says_why_a_kernel_has_no_candidates(tmp_path):
    """Review: a kernel that does not build left "no tuning candidates: " with
    the reason cleared; it names the kernel and the build's first line now."""
    kdir = tmp_path / "kernels"
    shutil.copytree(os.path.join(ROOT, "kernels"), kdir)
    with open(kdir / "nonzero.cl", "a") as f:
        f.write("\n#error broken on purpose\n")
    p = subprocess.run([CLNZ, "tune", "--quick"], capture_output=True, text=True, timeout=TIMEOUT,
                       env=dict(os.environ, CLNZ_KERNEL_DIR=str(kdir),
                                CLNZ_CACHE_DIR=str(tmp_path / "cache")))
    assert p.returncode == 1, p.stderr
    line = [x for x in p.stderr.splitlines() if x.startswith("clnz: ")]  # the compiler's own too
    assert len(line) == 1, p.stderr
    assert line[0].startswith("clnz: tune: no tuning candidates for two-pass: building "
                              "kernels/nonzero.cl with "), p.stderr
    assert line[0].endswith("failed: CL_BUILD_PROGRAM_FAILURE: kernel build failed"), p.stderr


def test_cache_folder_is_printed_unambiguously(tmp_path):
    """Probe item 5: `clnz cache` printed its folder raw, so a line break or
    a trailing space in it could not be told from the end of the output. A
    plain path is printed as is (for $(clnz cache)); any other is quoted as
    error messages quote paths, and so is the folder --clear names."""
    for name in ("plain-dir.x", "a b", "line\nbreak", "tab\t", "it's", "back\\slash", "caf\u00e9",
                 "bell\x07"):
        cache = str(tmp_path / name)
        shown = cache if name in ("plain-dir.x",) else io_quote(cache)
        env = dict(os.environ, CLNZ_CACHE_DIR=cache)
        p = subprocess.run([CLNZ, "cache"], capture_output=True, env=env, timeout=TIMEOUT)
        assert p.returncode == 0 and p.stdout == os.fsencode(shown + "\n"), (name, p)
        p = subprocess.run([CLNZ, "cache", "--clear"], capture_output=True, env=env,
                           timeout=TIMEOUT)
        assert p.returncode == 0, p
        assert p.stdout == os.fsencode(f"removed 0 files from {shown}\n"), (name, p)


def test_cache_folder_order_of_the_variables(tmp_path):
    """CLNZ_CACHE_DIR, else XDG_CACHE_HOME/clnz when absolute (the XDG spec
    ignores a relative one: it was used, from wherever clnz ran), else HOME."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("CLNZ_CACHE_DIR", "XDG_CACHE_HOME", "HOME")}
    home, xdg = str(tmp_path / "home"), str(tmp_path / "xdg")
    for extra, want in (({"HOME": home, "XDG_CACHE_HOME": xdg}, xdg + "/clnz"),
                        ({"HOME": home, "XDG_CACHE_HOME": "rel/cache"}, home + "/.cache/clnz"),
                        ({"HOME": home}, home + "/.cache/clnz"),
                        ({"HOME": home, "XDG_CACHE_HOME": xdg, "CLNZ_CACHE_DIR": "c"}, "c")):
        p = subprocess.run([CLNZ, "cache"], capture_output=True, text=True, timeout=TIMEOUT,
                           env=dict(base, **extra), cwd=tmp_path)
        assert p.returncode == 0 and p.stdout == want + "\n", (extra, p)


def test_cache_dir_relative_to_the_working_directory(tmp_path):
    """A relative CLNZ_CACHE_DIR is a path from the working directory (README):
    here rel/c, a link to a cache that one absolute run has just filled, whose
    program the run from tmp_path then loads rather than builds."""
    env = {k: v for k, v in os.environ.items() if k not in ("CLNZ_BUNDLE", "CLNZ_NO_COMPILE")}
    warm = os.path.abspath(env.get("CLNZ_CACHE_DIR") or tmp_path / "cache")
    inp = save(tmp_path, np.eye(3, dtype=np.float32))
    for cache in (warm, "rel/c"):
        p = subprocess.run([CLNZ, "count", str(inp)], capture_output=True, text=True,
                           timeout=TIMEOUT, cwd=tmp_path,
                           env=dict(env, CLNZ_CACHE_DIR=cache, CLNZ_DEBUG="1"))
        assert p.returncode == 0 and p.stdout == "3\n", p
        if cache == warm:
            (tmp_path / "rel").mkdir()
            (tmp_path / "rel" / "c").symlink_to(warm)
    assert "loaded from the cache" in p.stderr, p.stderr


def test_cache_temporaries_of_killed_runs_are_removed(tmp_path, rng):
    """Probe items 4 and 5: a run killed between its cache temporary and the
    rename left it for good (an empty one, killed before its first write,
    even survived `cache --clear`), and `cache --clear` removed a live
    writer's temporary, whose rename then failed. A writer locks its
    temporary: the next run that writes in the folder and `cache --clear`
    remove the unlocked ones, of any size, and leave a locked one."""
    import fcntl
    cache = tmp_path / "cache"
    progs, tuning = cache / "programs", cache / "tuning"
    progs.mkdir(parents=True)
    tuning.mkdir()
    dead = [progs / "00000000000000aa.bin.tmp-AbC123", progs / "00000000000000bb.bin.tmp-Xy9z00"]
    dead[0].write_bytes(b"")
    dead[1].write_bytes(b"CLNZBIN1\nkey\n5\nhello")
    dead_tuning = tuning / "dev--x--y.txt.tmp-Qq1234"
    dead_tuning.write_bytes(b"")
    live = progs / "00000000000000cc.bin.tmp-L1ve00"
    live.write_bytes(b"CLNZBIN1\n")
    env = dict(os.environ, CLNZ_CACHE_DIR=str(cache))
    inp = save(tmp_path, random_array(rng, "u1", (30, 40)))
    with open(live, "rb") as writer:
        fcntl.flock(writer, fcntl.LOCK_EX)  # a writer of another process, still at work
        p = subprocess.run([CLNZ, "count", str(inp)], capture_output=True, text=True, env=env,
                           timeout=TIMEOUT)
        assert p.returncode == 0 and not p.stderr, p.stderr
        assert not any(d.exists() for d in dead) and live.exists()
        assert dead_tuning.exists()  # nothing was written in that folder
        stored = [f for f in progs.iterdir() if f.name.endswith(".bin")]
        assert stored
        p = subprocess.run([CLNZ, "cache", "--clear"], capture_output=True, text=True, env=env,
                           timeout=TIMEOUT)
        assert p.returncode == 0, p.stderr
        assert p.stdout.startswith(f"removed {len(stored) + 1} files from "), p.stdout
        assert live.exists() and not dead_tuning.exists()
    p = subprocess.run([CLNZ, "cache", "--clear"], capture_output=True, text=True, env=env,
                       timeout=TIMEOUT)
    assert p.returncode == 0 and p.stdout.startswith("removed 1 files from "), p.stdout
    assert sorted(progs.iterdir()) == [] and sorted(tuning.iterdir()) == []


def test_tune_and_cache_usage_errors():
    expect_error(2, "tune", "--slow")
    expect_error(2, "tune", "--device", "3:3")
    expect_error(2, "cache", "--all")


def test_tune_under_a_tiny_allocation_limit_says_why(tmp_path):
    """Under a CLNZ_MAX_ALLOC below the tuning problem's buffers every call
    failed, and `clnz tune` said that no candidate gave correct results, as
    if the kernels were wrong. It now passes on the first failed call's
    reason, and stores no tuning file."""
    env = dict(os.environ, CLNZ_MAX_ALLOC="8K", CLNZ_CACHE_DIR=str(tmp_path / "cache"))
    p = subprocess.run([CLNZ, "tune", "--quick"], capture_output=True, text=True, env=env)
    assert p.returncode == 1, p.stderr
    line = p.stderr.strip().splitlines()[-1]
    assert line.startswith("clnz: tune: no candidate of the ") and "ran on the tuning problem" \
        in line and "(8192 bytes: its own limit or CLNZ_MAX_ALLOC)" in line, line
    assert not (tmp_path / "cache" / "tuning").exists() or \
        not list((tmp_path / "cache" / "tuning").iterdir())


def test_one_tile_is_one_launch_and_one_read(tmp_path, rng):
    """An input that fits one tile: one kernel launch and one host read."""
    default = [l for l in run("devices").stdout.splitlines() if l.startswith("*")]
    on_cpu = len(default) == 1 and default[0].split()[2] == "CPU"
    for shape, many, strategy in (((50, 60), False, None), ((1000, 1000), True, None),
                                  ((1000, 1000), True, "lookback")):
        env = dict(os.environ, CLNZ_DEBUG="1")
        if strategy:  # else the one the environment names, if any
            env["CLNZ_STRATEGY"] = strategy
        a = random_array(rng, "f4", shape, density=0.3)
        inp = save(tmp_path, a)
        out = tmp_path / "o.npy"
        p = subprocess.run([CLNZ, "nonzero", str(inp), "-o", str(out)], capture_output=True,
                           text=True, env=env)
        assert p.returncode == 0, p.stderr
        expect_equal(np.load(out), np.argwhere(a))
        launches = [l for l in p.stderr.splitlines() if " global " in l]
        reads = [l for l in p.stderr.splitlines() if "host read" in l]
        if many and "lb_" in p.stderr:  # lookback (auto on a GPU): lb_count, then lb_run
            assert len(launches) == 2 and len(reads) == 2, p.stderr
            assert "lb_count" in launches[0] and "lb_run" in launches[1], p.stderr
        elif many:
            assert len(launches) >= 3 and len(reads) == 2, p.stderr
        else:  # single-tile's nz_write; on a GPU lookback's lb_run too, where two-pass's
            # tuned tile is smaller than the input and lookback's is not (the H200's)
            assert len(launches) == 1, p.stderr
            assert "nz_write" in launches[0] or (not on_cpu and "lb_run" in launches[0]), \
                p.stderr
            assert len(reads) == 1, p.stderr
