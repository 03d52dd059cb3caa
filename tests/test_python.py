"""The clnz Python module (host/python/clnz) against numpy: every call on
random arrays of every dtype, strided views, edge cases and errors.
make test runs it with CLNZ_LIBRARY=build/libclnz.so and PYTHONPATH=host/python."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import clnz

SEED = int(os.environ.get("CLNZ_TEST_SEED", np.random.SeedSequence().entropy % (1 << 32)))
DTYPES = ["bool", "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64",
          "float16", "float32", "float64"]


@pytest.fixture
def rng(request):
    # the seed is in the test's report when it fails: replay with CLNZ_TEST_SEED
    request.node.user_properties.append(("seed", SEED))
    print(f"seed {SEED} (replay with CLNZ_TEST_SEED={SEED})")
    return np.random.default_rng(SEED)


def sparse(rng, shape, dtype, density=0.3):
    """Random values of dtype, about `density` of them nonzero (NaN and -0.0
    among the floats)."""
    dtype = np.dtype(dtype)
    if dtype == bool:
        return rng.random(shape) < density
    if dtype.kind == "f":
        a = rng.standard_normal(shape).astype(dtype)
        a[rng.random(shape) >= density] = 0
        flat = a.reshape(-1)
        if flat.size > 4:
            flat[rng.integers(flat.size)] = np.nan
            flat[rng.integers(flat.size)] = -0.0
        return a
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    a[rng.random(shape) >= density] = 0
    return a


def views(rng, dtype):
    """Contiguous, Fortran, reversed, stepped and transposed views, 0-d and empty."""
    base = sparse(rng, (13, 17, 5), dtype)
    yield "c", base
    yield "fortran", np.asfortranarray(base)
    yield "reversed", base[::-1, :, ::-2]
    yield "stepped", base[1::3, ::4]
    yield "transposed", base.transpose(2, 0, 1)
    yield "broadcast (stride 0)", np.broadcast_to(base[:1, :1], (4, 3, 5))
    yield "0-d", np.asarray(base.reshape(-1)[3])
    yield "empty", base[:, :0]
    yield "1-d", sparse(rng, (1000,), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nonzero_layouts_against_numpy(rng, dtype):
    for name, a in views(rng, dtype):
        want = np.argwhere(a)
        got = clnz.nonzero(a)
        assert got.dtype == np.int64 and np.array_equal(got, want), name
        assert np.array_equal(clnz.argwhere(a), want), name
        assert np.array_equal(clnz.flatnonzero(a), np.flatnonzero(a)), name
        cols = want.T if a.ndim else np.flatnonzero(a)[None]  # a 0-d array: one column of 0s
        assert np.array_equal(clnz.nonzero(a, layout="columns"), cols), name
        assert clnz.count_nonzero(a) == np.count_nonzero(a), name
        if a.ndim:  # np.nonzero refuses 0-d arrays
            t = clnz.nonzero(a, as_tuple=True)
            assert len(t) == a.ndim and all(np.array_equal(x, y) for x, y in zip(t, np.nonzero(a)))


def test_as_tuple_of_a_0d_array_is_1d_like_torch():
    assert [x.tolist() for x in clnz.nonzero(np.float32(2.0), as_tuple=True)] == [[0]]
    assert [x.tolist() for x in clnz.nonzero(np.array(0), as_tuple=True)] == [[]]


def test_views_are_passed_with_their_strides(rng):
    base = sparse(rng, (40, 30), "float32")
    for v in (base[::-1], base[::2, 1::3], base.T):
        assert clnz._Input(v, "x").array is v  # no copy
        assert np.array_equal(clnz.nonzero(v), np.argwhere(v))
    swapped = base.astype(">f4")  # byte-swapped: the one kind that is converted
    assert np.array_equal(clnz.nonzero(swapped), np.argwhere(base))


@pytest.mark.parametrize("index", ["int64", "int32", "uint32", np.int32])
def test_index_types(rng, index):
    a = sparse(rng, (20, 30), "int16")
    got = clnz.nonzero(a, index=index)
    assert got.dtype == np.dtype(index) and np.array_equal(got, np.argwhere(a))


def test_width_and_order_xy(rng):
    a = sparse(rng, (1, 9, 11), "uint8")
    want = np.argwhere(a)
    assert np.array_equal(clnz.nonzero(a, width=2), want[:, 1:])
    assert np.array_equal(clnz.nonzero(a, width=5), np.hstack([np.zeros((len(want), 2),
                                                                         np.int64), want]))
    b = a[0]
    assert np.array_equal(clnz.nonzero(b, order="xy"), np.argwhere(b)[:, ::-1])
    with pytest.raises(clnz.Error) as e:
        clnz.nonzero(sparse(rng, (3, 4), "uint8") + 1, width=1)
    assert e.value.name == "CLNZ_ERROR_INVALID_WIDTH" and "width" in str(e.value)


OPS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
       "gt": np.greater, "ge": np.greater_equal}


@pytest.mark.parametrize("dtype", DTYPES[1:])
@pytest.mark.parametrize("op", list(OPS))
def test_predicates_against_numpy(rng, dtype, op):
    a = sparse(rng, (23, 19), dtype, density=0.7)
    values = [0, 1, -1, 0.5] if np.dtype(dtype).kind != "u" else [0, 1, 200, 0.5]
    for v in values:
        with np.errstate(invalid="ignore"):
            mask = OPS[op](a, v)
        for pred in ((op, v), clnz.Predicate(op, v)):
            assert np.array_equal(clnz.nonzero(a, pred=pred), np.argwhere(mask)), (op, v)
            assert clnz.count_nonzero(a, pred=pred) == np.count_nonzero(mask), (op, v)


def test_predicate_values_of_every_python_kind():
    a = np.array([0, 1, 2**63, 2**64 - 1], dtype=np.uint64)
    assert clnz.count_nonzero(a, pred=("ge", 2**63)) == 2      # above int64: sent as uint64
    assert clnz.count_nonzero(a, pred=("eq", np.uint64(1))) == 1
    assert clnz.count_nonzero(a, pred=("gt", 0.5)) == 3
    assert clnz.count_nonzero(a, pred="nonzero") == 3
    with pytest.raises(ValueError):
        clnz.Predicate("gt", 2**64)
    with pytest.raises(ValueError, match="unknown predicate"):
        clnz.count_nonzero(a, pred=("bigger", 1))
    with pytest.raises(TypeError):
        clnz.count_nonzero(a, pred=("gt", "1"))


def test_nonzero_static(rng):
    a = sparse(rng, (30, 40), "float64")
    want = np.argwhere(a)
    z = len(want)
    for size in (0, 1, z - 1, z, z + 7):
        got, count = clnz.nonzero_static(a, size)
        assert count == z and got.shape == (size, 2)
        assert np.array_equal(got[:min(z, size)], want[:size])
        assert (got[z:] == -1).all()
    got, count = clnz.nonzero_static(a, z + 3, fill_value=99, layout="flat", index="int32")
    assert count == z and got.dtype == np.int32
    assert np.array_equal(got[:z], np.flatnonzero(a)) and (got[z:] == 99).all()
    with pytest.raises(ValueError):
        clnz.nonzero_static(a, -1)
    with pytest.raises(clnz.Error) as e:  # a fill the index type cannot hold
        clnz.nonzero_static(a, z + 1, fill_value=1 << 40, index="int32")
    assert e.value.name == "CLNZ_ERROR_INVALID_VALUE"


@pytest.mark.parametrize("dtype", DTYPES)
def test_select_against_numpy(rng, dtype):
    for name, x in views(rng, dtype):
        assert np.array_equal(clnz.select(x), np.extract(x != 0, x), equal_nan=dtype[0] == "f"), \
            name
        mask = sparse(rng, x.shape, "int8")[...]  # a mask of another dtype
        got = clnz.select(x, mask)
        assert got.dtype == x.dtype and got.ndim == 1
        assert np.array_equal(got.view(np.uint8), x[mask != 0].view(np.uint8)), name  # bit-exact
        if dtype not in ("bool",):
            got = clnz.select(x, pred=("gt", 0))
            with np.errstate(invalid="ignore"):
                assert np.array_equal(got, x[x > 0]), name
            got = clnz.select(x, mask, pred=("lt", 0))
            assert np.array_equal(got.view(np.uint8), x[mask < 0].view(np.uint8)), name


def test_select_errors(rng):
    x = sparse(rng, (4, 5), "float32")
    with pytest.raises(clnz.Error) as e:
        clnz.select(x, np.ones((5, 4)))
    assert e.value.name == "CLNZ_ERROR_SHAPE_MISMATCH" and "(5, 4)" in str(e.value)


@pytest.mark.parametrize("dtype", DTYPES)
def test_where_broadcasting_against_numpy(rng, dtype):
    shapes = [((4, 1, 6), (1, 5, 1), (5, 6)), ((7,), (3, 7), (1,)), ((), (2, 3), ()),
              ((3, 0), (3, 1), (1, 0))]
    for cs, xs, ys in shapes:
        cond = sparse(rng, cs, "uint16")
        x, y = sparse(rng, xs, dtype), sparse(rng, ys, dtype)
        got = clnz.where(cond, x, y)
        want = np.where(cond, x, y)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), (cs, xs, ys)
    x = sparse(rng, (6, 8), dtype)[::-1, ::2]  # strided operands
    cond = sparse(rng, (8, 6), "float32").T[:, ::2]
    assert np.array_equal(clnz.where(cond, x, x[::-1]).view(np.uint8),
                          np.where(cond, x, x[::-1]).view(np.uint8))


def test_where_scalars_and_dtype_rules(rng):
    cond = sparse(rng, (5, 7), "bool")
    x = sparse(rng, (5, 7), "float32")
    got = clnz.where(cond, x, 0.0)
    assert got.dtype == np.float32
    assert np.array_equal(got, np.where(cond, x, np.float32(0)), equal_nan=True)  # x has a NaN
    i8 = sparse(rng, (5, 7), "int8")
    got = clnz.where(cond, -3, i8)
    assert got.dtype == np.int8 and np.array_equal(got, np.where(cond, np.int8(-3), i8))
    got = clnz.where(cond, 1, 2)
    assert got.dtype == np.int64 and np.array_equal(got, np.where(cond, 1, 2))
    got = clnz.where(cond, 1, 2.5)
    assert got.dtype == np.float64 and np.array_equal(got, np.where(cond, 1.0, 2.5))
    got = clnz.where(x, x, -1.0, pred=("gt", 0))
    assert np.array_equal(got, np.where(x > 0, x, np.float32(-1)))
    # numpy scalars are 0-d arrays with their dtype, np.float64 (a Python float too) included
    got = clnz.where(cond, x.astype(np.float64), np.float64(2))
    assert got.dtype == np.float64 and np.array_equal(got, np.where(cond, x, 2.0), equal_nan=True)
    with pytest.raises(clnz.Error) as e:
        clnz.where(cond, x, np.float64(2))
    assert e.value.name == "CLNZ_ERROR_DTYPE_MISMATCH"
    with pytest.raises(clnz.Error) as e:  # 0.5 does not fit an integer array
        clnz.where(cond, i8, 0.5)
    assert e.value.name == "CLNZ_ERROR_INVALID_VALUE"
    with pytest.raises(clnz.Error) as e:
        clnz.where(cond, i8, x)
    assert e.value.name == "CLNZ_ERROR_DTYPE_MISMATCH"
    with pytest.raises(clnz.Error) as e:
        clnz.where(np.ones((3, 4)), np.ones((2, 4)), 1.0)
    assert e.value.name == "CLNZ_ERROR_SHAPE_MISMATCH"
    assert "(2, 4)" in str(e.value) and "(3, 4)" in str(e.value)


def test_unsupported_inputs():
    for a in (np.ones(3, np.complex64), np.array(["a"]), np.ones(3, "V4")):
        with pytest.raises(TypeError, match="unsupported dtype"):
            clnz.nonzero(a)
    with pytest.raises(ValueError, match="layout"):
        clnz.nonzero(np.ones(3), layout="diagonal")
    with pytest.raises(ValueError, match="index type"):
        clnz.nonzero(np.ones(3), index=np.float32)


def test_results_own_their_memory(rng):
    a = sparse(rng, (300, 300), "uint8")
    keep = [clnz.nonzero(a)[10:20] for _ in range(20)]  # views outlive their parents
    want = np.argwhere(a)[10:20]
    assert all(np.array_equal(k, want) for k in keep)
    r = clnz.nonzero(a)
    r[:] = 0  # writable, like numpy's own results
    assert not r.any()


def test_contexts_and_devices():
    devs = clnz.devices()
    assert devs and sum(d.is_default for d in devs) == 1
    with clnz.Context(devs[0].selector) as ctx:
        assert ctx.device.selector == devs[0].selector
        a = np.arange(-5, 6)
        assert np.array_equal(clnz.nonzero(a, context=ctx), np.argwhere(a))
    with pytest.raises(ValueError, match="closed"):
        clnz.count_nonzero(a, context=ctx)
    with pytest.raises(clnz.Error) as e:
        clnz.Context("9:9")
    assert e.value.name == "CLNZ_ERROR_INVALID_DEVICE" and "9:9" in str(e.value)
    with pytest.raises(clnz.Error, match="PLATFORM:DEVICE"):
        clnz.Context("gpu")
    assert clnz.library_version() == clnz.__version__
    if "CLNZ_LIBRARY" in os.environ:
        assert clnz.library_path() == os.environ["CLNZ_LIBRARY"]


def test_threads_share_the_default_context(rng):
    arrays = [sparse(rng, (50 + i, 40), DTYPES[i % len(DTYPES)]) for i in range(16)]
    errors = []

    def work(i):
        for _ in range(3):
            a = arrays[(i * 5 + _) % len(arrays)]
            if not np.array_equal(clnz.nonzero(a), np.argwhere(a)):
                errors.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_library_not_found_is_a_clear_import_error(tmp_path):
    env = dict(os.environ, CLNZ_LIBRARY=str(tmp_path / "libclnz.so"))
    p = subprocess.run([sys.executable, "-c", "import clnz"], env=env, capture_output=True,
                       text=True)
    assert p.returncode != 0
    assert "ImportError: clnz: cannot load libclnz" in p.stderr and "CLNZ_LIBRARY" in p.stderr
