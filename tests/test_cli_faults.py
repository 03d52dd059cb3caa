"""Command-line fault injection: the k-th OpenCL call of a `clnz` process
(buffer, kernel, program, context, queue, enqueue, read, map, unmap, wait,
finish) fails, through the LD_PRELOAD library tests/fault_shim.c, for every k
along a whole command. Each time the command either fails cleanly (exit 1,
one `clnz: ` line, every output file exactly as it was before, no temporary
file left) or, where clnz has a fallback, succeeds with numpy's answer.
"""
import os
import subprocess

import numpy as np
import pytest

from test_cli import CLNZ, ROOT, SEED, TIMEOUT, random_array, rng, save  # noqa: F401 (rng: a fixture)

SHIM = os.environ.get("CLNZ_FAULT_SHIM", os.path.join(ROOT, "build", "fault_shim.so"))
SENTINEL = b"an output from before, which a failed command must leave alone\n"

# fault injection over every OpenCL call of each command: the long tier
pytestmark = [pytest.mark.full,
              pytest.mark.skipif(not os.path.exists(SHIM), reason=f"no {SHIM} (make test builds it)")]


def run_faulted(args, k, report):
    env = dict(os.environ, LD_PRELOAD=SHIM, CLNZ_FAULT_AT=str(k), CLNZ_FAULT_REPORT=str(report),
               # a sanitized clnz (make test-asan): the shim is preloaded before ASan's runtime
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
    return subprocess.run([CLNZ, *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=TIMEOUT)


def every_point(tmp_path, args, outputs, check_outputs):
    """Runs args with a fault at every point in turn; returns how many there were."""
    report = tmp_path / "fired"
    files_before = None
    for k in range(1, 1000):
        for o in outputs:
            o.write_bytes(SENTINEL)
        files_before = sorted(os.listdir(tmp_path))
        report.unlink(missing_ok=True)
        p = run_faulted(args, k, report)
        if not report.exists():  # past the last OpenCL call: the command ran whole
            assert p.returncode == 0, (k, p.stderr, SEED)
            check_outputs()
            return k - 1
        victim = report.read_text().strip()
        report.unlink()
        if p.returncode == 0:  # a fallback absorbed it (a program cache it cannot load)
            check_outputs()
            continue
        assert p.returncode == 1, (k, victim, p.returncode, p.stderr, SEED)
        lines = p.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("clnz: "), (k, victim, p.stderr)
        for o in outputs:
            assert o.read_bytes() == SENTINEL, (k, victim, f"{o.name} was touched")
        assert sorted(os.listdir(tmp_path)) == files_before, (k, victim, "files left behind")
    raise AssertionError("more than 999 OpenCL calls")


def test_nonzero_outputs_untouched(tmp_path, rng):
    a = random_array(rng, "f4", (37, 1001))
    inp = save(tmp_path, a)
    out, cnt = tmp_path / "out.npy", tmp_path / "count.npy"

    def check():
        np.testing.assert_array_equal(np.load(out), np.argwhere(a))
        assert np.load(cnt) == np.count_nonzero(a)

    n = every_point(tmp_path, ["nonzero", inp, "-o", out, "--count-out", cnt], [out, cnt], check)
    print(f"faults: nonzero {n} points")
    assert n >= 8


def test_batch_outputs_untouched(tmp_path, rng):
    a = random_array(rng, "u1", (6, 50, 40))
    inp = save(tmp_path, a)
    out, off = tmp_path / "out.npy", tmp_path / "off.npy"

    def check():
        items = [np.argwhere(x) for x in a]
        np.testing.assert_array_equal(np.load(out), np.concatenate(items))
        np.testing.assert_array_equal(np.load(off), np.cumsum([0] + [len(i) for i in items]))

    n = every_point(tmp_path, ["nonzero", inp, "--batch", "-o", out, "--offsets-out", off],
                    [out, off], check)
    print(f"faults: batch {n} points")
    assert n >= 8


def test_select_output_untouched(tmp_path, rng):
    a = random_array(rng, "i2", (300, 77))
    inp = save(tmp_path, a)
    out = tmp_path / "out.npy"

    def check():
        np.testing.assert_array_equal(np.load(out), a[a > 3])

    n = every_point(tmp_path, ["select", inp, "--pred", "gt:3", "-o", out], [out], check)
    print(f"faults: select {n} points")
    assert n >= 8


def test_where_output_untouched(tmp_path, rng):
    c = random_array(rng, "u1", (120, 333))
    x = random_array(rng, "f8", (333,))
    cp, xp = save(tmp_path, c, "c.npy"), save(tmp_path, x, "x.npy")
    out = tmp_path / "out.npy"

    def check():
        np.testing.assert_array_equal(np.load(out), np.where(c, x, -1.5))

    n = every_point(tmp_path, ["where", cp, xp, "-1.5", "-o", out], [out], check)
    print(f"faults: where {n} points")
    assert n >= 5


def test_count_fails_cleanly(tmp_path, rng):
    a = random_array(rng, "i8", (5000,))
    inp = save(tmp_path, a)
    report = tmp_path / "fired"
    for k in range(1, 1000):
        report.unlink(missing_ok=True)
        p = run_faulted(["count", inp], k, report)
        if not report.exists():
            break
        if p.returncode == 0:
            assert int(p.stdout) == np.count_nonzero(a)
        else:
            assert p.returncode == 1 and p.stdout == "", (k, p.stdout, p.stderr)
            assert len(p.stderr.splitlines()) == 1, p.stderr
    assert p.returncode == 0 and int(p.stdout) == np.count_nonzero(a)
    print(f"faults: count {k - 1} points")


def test_count_along_axes_output_untouched(tmp_path, rng):
    """count --axis both ways of clnz_count_batched: per item (along the
    outer axis of 1040 columns) and the batched counting pass (axis 1)."""
    a = random_array(rng, "u1", (6, 1040))
    inp = save(tmp_path, a)
    out = tmp_path / "counts.npy"
    for axis in (0, 1):
        def check():
            np.testing.assert_array_equal(np.load(out), np.count_nonzero(a, axis=axis))

        n = every_point(tmp_path, ["count", inp, "--axis", str(axis), "-o", out], [out], check)
        print(f"faults: count --axis {axis}: {n} points")
        assert n >= 3
