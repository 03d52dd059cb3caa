"""Inputs larger than one device allocation: with CLNZ_MAX_ALLOC lowered to a
few KiB, every command cuts its input into slices (host/slices/); the
results must still equal numpy's, bit for bit. Helpers from test_cli.py."""
import os
import subprocess
import time

import numpy as np
import pytest

from test_cli import CLNZ, SEED, TIMEOUT, random_array, rng, run, save  # noqa: F401 (rng: a fixture)

SHAPES = [(20000,), (37, 531), (3, 41, 97), (2, 3, 5, 700), (1, 9000), (0, 5000)]


@pytest.fixture(autouse=True)
def small_device(monkeypatch):
    monkeypatch.setenv("CLNZ_MAX_ALLOC", "8K")


def expect(got, want, what):
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.shape, want.shape, SEED)
    assert got.tobytes() == want.tobytes(), (what, SEED)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("density", [0.02, 0.5, 1.0])
def test_nonzero_and_count_in_slices(tmp_path, rng, shape, density):
    a = random_array(rng, "f4", shape, density)
    if rng.random() < 0.5:
        a = np.asfortranarray(a)
    inp, out = save(tmp_path, a), tmp_path / "o.npy"
    ref = np.argwhere(a)
    for layout, want in [("rows", ref), ("columns", ref.T), ("flat", np.flatnonzero(a))]:
        run("nonzero", inp, "-o", out, "--layout", layout)
        expect(np.load(out), want, layout)
    run("nonzero", inp, "-o", out, "--order", "xy", "--index", "int32")
    expect(np.load(out), ref[:, ::-1].astype(np.int32), "xy")
    run("nonzero", inp, "-o", out, "--size", 77, "--fill", -3)
    padded = np.full((77, a.ndim), -3, dtype=np.int64)
    padded[:min(77, len(ref))] = ref[:77]
    expect(np.load(out), padded, "size")
    assert int(run("count", inp).stdout) == np.count_nonzero(a)


@pytest.mark.parametrize("shape", SHAPES)
def test_select_and_where_in_slices(tmp_path, rng, shape):
    x = random_array(rng, "f8", shape, density=0.9)
    m = random_array(rng, "u1", shape, density=0.4)
    y = random_array(rng, "f8", shape[-1:], density=0.9)
    xs, ms, ys = save(tmp_path, x, "x.npy"), save(tmp_path, m, "m.npy"), save(tmp_path, y, "y.npy")
    out = tmp_path / "o.npy"
    run("select", xs, "--mask", ms, "-o", out)
    expect(np.load(out), x[m != 0], "select")
    run("where", ms, xs, ys, "-o", out)
    expect(np.load(out), np.where(m, x, y), "where")
    run("where", ms, "2.5", ys, "-o", out)
    expect(np.load(out), np.where(m, 2.5, y), "where scalar")


@pytest.mark.parametrize("shape", [(40, 90, 3), (7, 2000, 4), (2, 1, 3000, 2)])
@pytest.mark.parametrize("rule", ["any", "all"])
def test_channel_rule_in_slices(tmp_path, rng, shape, rule):
    a = random_array(rng, "u2", shape, density=0.6)
    inp, out = save(tmp_path, a), tmp_path / "o.npy"
    sel = (a != 0).any(axis=-1) if rule == "any" else (a != 0).all(axis=-1)
    run("nonzero", inp, "-o", out, "--channels", rule)
    expect(np.load(out), np.argwhere(sel), rule)
    assert int(run("count", inp, "--channels", rule).stdout) == np.count_nonzero(sel)


@pytest.mark.parametrize("shape", [(300, 4, 5), (6, 50, 70), (3, 5000)])
def test_batches_in_slices(tmp_path, rng, shape):
    # many items to a slice, and items larger than the limit (cut on their own)
    a = random_array(rng, "f4", shape, density=0.3)
    inp, out, off = save(tmp_path, a), tmp_path / "o.npy", tmp_path / "off.npy"
    run("nonzero", inp, "-o", out, "--batch", "--offsets-out", off)
    items = [np.argwhere(a[b]) for b in range(shape[0])]
    expect(np.load(out), np.concatenate(items), "entries")
    expect(np.load(off), np.concatenate([[0], np.cumsum([len(i) for i in items])]).astype(np.int64),
           "offsets")


def memory_test(test):
    """A peak-memory test, in C and Fortran order: the long tier, and not
    under a checking allocator, which keeps freed memory out of reuse."""
    test = pytest.mark.parametrize("order", ["C", "F"])(test)
    test = pytest.mark.skipif("ASAN_OPTIONS" in os.environ or "valgrind" in CLNZ,
                              reason="a checking allocator keeps freed memory out of reuse")(test)
    return pytest.mark.full(test)


def peak_mib(tmp_path, *args, max_alloc=None):
    """The peak resident memory (MiB) of one clnz command, from its own rusage."""
    env = dict(os.environ)
    env.pop("CLNZ_MAX_ALLOC")
    if max_alloc:
        env["CLNZ_MAX_ALLOC"] = max_alloc
    with open(tmp_path / "stderr", "w+") as err:
        p = subprocess.Popen([CLNZ, *map(str, args)], env=env, stdout=subprocess.DEVNULL,
                             stderr=err)
        deadline = time.monotonic() + TIMEOUT
        while True:  # os.wait4, not Popen's wait: it gives this process's own usage
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                p.kill()
            time.sleep(0.02)
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        assert p.returncode == 0, (args, max_alloc, err.read())
    return usage.ru_maxrss / 1024


@memory_test
def test_sliced_results_cost_about_what_whole_ones_do(tmp_path, order):
    # Regression: the slices' results were gathered as full-rank int64 rows
    # (24 bytes an element here), doubled while growing, before taking their
    # layout or values: a sliced select of a (512, 512, 256) u8 array peaked
    # 1.5 GiB above the same call unsliced. Now a key of 8 bytes an entry
    # stays only where slices interleave (a Fortran-order input), and in C
    # order select and flat nonzero need nothing beside their result.
    a = np.asarray(np.ones((256, 512, 256), np.uint8), order=order)  # 32 MiB, all selected
    inp, out = save(tmp_path, a), tmp_path / "o.npy"
    keys_mib = 8 * a.size / 2**20 if order == "F" else 0
    for args in [("select", inp), ("nonzero", inp, "--layout", "flat")]:
        whole = peak_mib(tmp_path, *args, "-o", out)
        sliced = peak_mib(tmp_path, *args, "-o", out, max_alloc="16M")
        assert sliced - whole < 48 + keys_mib, (args, order, whole, sliced)
    assert np.load(out).shape == (a.size,)


@memory_test
def test_a_static_size_in_slices_keeps_only_its_keys(tmp_path, order):
    # Regression: --size under slicing kept every selected element's 8-byte
    # key (256 MiB here) before taking the first S. Now a slice keeps at most
    # S keys, and C-order slices none once S are kept; the count stays whole.
    a = np.asarray(np.ones((256, 512, 256), np.uint8), order=order)  # 32 MiB, all selected
    a[0, 0, :3] = 0
    inp, out, cnt = save(tmp_path, a), tmp_path / "o.npy", tmp_path / "c.npy"
    args = ("nonzero", inp, "--size", 5, "-o", out, "--count-out", cnt)
    whole = peak_mib(tmp_path, *args)
    sliced = peak_mib(tmp_path, *args, max_alloc="16M")
    assert sliced - whole < 48, (order, whole, sliced)
    assert np.array_equal(np.load(out), np.argwhere(a)[:5])
    assert int(np.load(cnt)) == a.size - 3
