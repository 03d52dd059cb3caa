"""`clnz select` and `clnz where` against numpy (x[mask], np.extract,
np.where with broadcasting), and their errors. Helpers from test_cli.py."""
import numpy as np
import pytest

from test_cli import DTYPES, SEED, expect_error, random_array, rng, run, save  # noqa: F401 (rng: a fixture)


def expect_equal(got, want):
    """Same dtype, shape and bits (values are copied, NaN payloads included)."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype, SEED)
    assert got.shape == want.shape, (got.shape, want.shape, SEED)
    assert got.tobytes() == want.tobytes(), f"mismatch [seed {SEED}]"


# ---- select -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_select_with_a_mask_of_any_dtype(tmp_path, rng, dtype):
    mdtype = DTYPES[rng.integers(0, len(DTYPES))]
    shape = tuple(int(s) for s in rng.integers(1, 9, rng.integers(0, 5)))
    x = random_array(rng, dtype, shape, density=0.9)
    m = random_array(rng, mdtype, shape, density=0.4)
    out = tmp_path / "o.npy"
    run("select", save(tmp_path, x, "x.npy"), "--mask", save(tmp_path, m, "m.npy"), "-o", out)
    got, want = np.load(out), x[m != 0]
    assert got.dtype == want.dtype and got.shape == want.shape, (dtype, mdtype, SEED)
    assert got.tobytes() == want.tobytes(), (dtype, mdtype, SEED)  # NaN payloads too


@pytest.mark.parametrize("n", [0, 1, 31, 33, 4097, 300001])
def test_select_lengths_and_predicates(tmp_path, rng, n):
    x = random_array(rng, "f4", (n,), density=0.7)
    inp = save(tmp_path, x)
    out = tmp_path / "o.npy"
    run("select", inp, "-o", out)
    expect_equal(np.load(out), np.extract(x != 0, x))
    run("select", inp, "--pred", "gt:0.5", "-o", out)
    expect_equal(np.load(out), x[x > np.float32(0.5)])
    m = (rng.random(n) < 0.5).astype(np.int32) * rng.integers(-3, 4, n, dtype=np.int32)
    run("select", inp, "--mask", save(tmp_path, m, "m.npy"), "--pred", "lt:0", "-o", out)
    expect_equal(np.load(out), x[m < 0])


def test_select_views_fortran_and_big_endian(tmp_path, rng):
    x = np.asfortranarray(random_array(rng, "i2", (37, 53), density=0.8))
    m = random_array(rng, "?", (37, 53), density=0.5)
    out = tmp_path / "o.npy"
    run("select", save(tmp_path, x, "x.npy"),
        "--mask", save(tmp_path, m.astype(">u2"), "m.npy"), "-o", out)
    expect_equal(np.load(out), x[m != 0])
    xb = x.astype(">i2")  # numpy's xb[m] keeps xb's byte order; text is text
    run("select", save(tmp_path, xb, "x.npy"), "-o", out)
    expect_equal(np.load(out), xb[xb != 0])
    txt = run("select", tmp_path / "x.npy", "--format", "txt", "-o", "-").stdout
    assert txt.split() == [str(v) for v in xb[xb != 0]]


def test_select_errors(tmp_path, rng):
    x = save(tmp_path, np.ones((2, 3), np.float32), "x.npy")
    m = save(tmp_path, np.ones((3, 2), np.uint8), "m.npy")
    out = tmp_path / "o.npy"
    line = expect_error(1, "select", x, "--mask", m, "-o", out)
    assert "(3, 2)" in line and "(2, 3)" in line
    assert not out.exists()
    expect_error(2, "select", x)                                   # no -o
    expect_error(2, "select", "-o", out)                           # no X
    expect_error(2, "select", x, "--pred", "gt", "-o", out)
    expect_error(2, "select", x, "--bogus", "-o", out)
    expect_error(2, "select", x, x, "-o", out)
    expect_error(1, "select", tmp_path / "missing.npy", "-o", out)
    assert not out.exists()


# ---- where -------------------------------------------------------------------

def broadcastable(rng, shape):
    """A shape that broadcasts to `shape`: leading dimensions dropped, some set to 1."""
    k = int(rng.integers(0, len(shape) + 1))
    return tuple(1 if rng.random() < 0.3 else s for s in shape[len(shape) - k:])


@pytest.mark.parametrize("dtype", DTYPES)
def test_where_arrays_broadcast(tmp_path, rng, dtype):
    shape = tuple(int(s) for s in rng.integers(1, 7, rng.integers(0, 5)))
    c = random_array(rng, DTYPES[rng.integers(0, len(DTYPES))], broadcastable(rng, shape), 0.5)
    x = random_array(rng, dtype, broadcastable(rng, shape), 0.9)
    y = random_array(rng, dtype, broadcastable(rng, shape), 0.9)
    if rng.random() < 0.5 and x.ndim >= 2:
        x = np.asfortranarray(x)
    out = tmp_path / "o.npy"
    run("where", save(tmp_path, c, "c.npy"), save(tmp_path, x, "x.npy"),
        save(tmp_path, y, "y.npy"), "-o", out)
    got, want = np.load(out), np.where(c, x, y)
    assert got.dtype == want.dtype and got.shape == want.shape, (c.shape, x.shape, y.shape)
    assert got.tobytes() == want.tobytes(), (dtype, SEED)


@pytest.mark.parametrize("dtype,scalar", [("f4", "0"), ("f4", "0.1"), ("f2", "1e-3"),
                                          ("f8", "nan"), ("f2", "-nan"), ("f4", "-inf"),
                                          ("i4", "-7"), ("u1", "255"), ("i8", "3.0"), ("?", "1"),
                                          ("u8", "18446744073709551615")])
def test_where_one_scalar_keeps_the_arrays_dtype(tmp_path, rng, dtype, scalar):
    x = random_array(rng, dtype, (40, 50), density=0.9)
    c = x != 0 if dtype != "?" else random_array(rng, "u1", (50,), 0.5)
    out = tmp_path / "o.npy"
    cp, xp = save(tmp_path, c, "c.npy"), save(tmp_path, x, "x.npy")
    value = np.array(float(scalar) if "." in scalar or "e" in scalar or scalar.endswith(("n", "f"))
                     else int(scalar)).astype(dtype)
    run("where", cp, xp, scalar, "-o", out)
    expect_equal(np.load(out), np.where(c, x, value))
    run("where", cp, scalar, xp, "-o", out)
    expect_equal(np.load(out), np.where(c, value, x))


def test_where_two_scalars(tmp_path, rng):
    c = random_array(rng, "f4", (3, 4, 5), 0.5)
    cp = save(tmp_path, c, "c.npy")
    out = tmp_path / "o.npy"
    run("where", cp, "1", "-2", "-o", out)
    expect_equal(np.load(out), np.where(c, 1, -2).astype(np.int64))
    run("where", cp, "1", "2.5", "-o", out)
    expect_equal(np.load(out), np.where(c, 1.0, 2.5))


def test_where_integers_beyond_64_bits_into_floats(tmp_path, rng):
    """A float result takes any number (the README): an integer past 64
    bits too, rounded as Python's float() rounds it, beside a float array or
    a number written as a float (it was refused as for an integer array)."""
    c = random_array(rng, "f4", (6, 7), 0.5)
    cp = save(tmp_path, c, "c.npy")
    out = tmp_path / "o.npy"
    for dtype in ("f2", "f4", "f8"):
        x = random_array(rng, dtype, (6, 7), 0.9)
        xp = save(tmp_path, x, "x.npy")
        for big in ("18446744073709551616", "-99999999999999999999999"):
            with np.errstate(over="ignore"):  # f16: inf, as numpy casts
                value = np.array(float(int(big))).astype(dtype)
            run("where", cp, xp, big, "-o", out)
            expect_equal(np.load(out), np.where(c, x, value))
            run("where", cp, big, xp, "-o", out)
            expect_equal(np.load(out), np.where(c, value, x))
    run("where", cp, "18446744073709551616", "2.5", "-o", out)
    expect_equal(np.load(out), np.where(c, float(2 ** 64), 2.5))


def test_where_large_strided(tmp_path, rng):
    c = rng.random((300, 400)) < 0.5
    x = np.asfortranarray(random_array(rng, "f4", (300, 400), 0.9))
    y = random_array(rng, "f4", (400,), 0.9)
    out = tmp_path / "o.npy"
    run("where", save(tmp_path, c, "c.npy"), save(tmp_path, x, "x.npy"),
        save(tmp_path, y, "y.npy"), "-o", out)
    assert np.load(out).tobytes() == np.where(c, x, y).tobytes()


def test_where_errors(tmp_path):
    c = save(tmp_path, np.ones((2, 3), np.uint8), "c.npy")
    x = save(tmp_path, np.ones((4,), np.float32), "x.npy")
    f64 = save(tmp_path, np.ones((2, 3), np.float64), "y.npy")
    u8 = save(tmp_path, np.ones((2, 3), np.uint8), "u8.npy")
    out = tmp_path / "o.npy"
    line = expect_error(1, "where", c, x, "0", "-o", out)
    assert "(4,)" in line and "(2, 3)" in line
    expect_error(1, "where", c, u8, f64, "-o", out, contains="u8")
    expect_error(1, "where", c, u8, "0.5", "-o", out, contains="0.5")
    expect_error(1, "where", c, u8, "256", "-o", out, contains="256")
    expect_error(1, "where", c, u8, "-1", "-o", out)
    expect_error(2, "where", c, u8, "-o", out)                     # no Y
    expect_error(2, "where", c, u8, "1", "2", "-o", out)           # one too many
    expect_error(2, "where", c, u8, "99999999999999999999999", "-o", out)
    expect_error(2, "where", c, "18446744073709551616", "1", "-o", out,  # int64 of two ints
                 contains="X '18446744073709551616': the integer is outside")
    expect_error(2, "where", c, "1", "-18446744073709551616", "-o", out, contains="Y '")
    expect_error(2, "where", c, f64, "1" + "0" * 400, "-o", out,  # float(10**400) refuses too
                 contains="too large for a float")
    expect_error(1, "where", tmp_path / "nope.npy", u8, "0", "-o", out)
    assert not out.exists()
