"""The clnz Python module (host/python/clnz) against numpy: every call on
random arrays of every dtype, strided views, edge cases and errors.
make test runs it with CLNZ_LIBRARY=build/libclnz.so and PYTHONPATH=host/python."""
import copy
import gc
import os
import pickle
import struct
import subprocess
import sys
import threading
import warnings

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
        got = clnz.argwhere(a)
        assert got.dtype == np.int64 and np.array_equal(got, want), name
        assert np.array_equal(clnz.nonzero(a, as_tuple=False), want), name  # torch.nonzero
        assert np.array_equal(clnz.flatnonzero(a), np.flatnonzero(a)), name
        cols = want.T if a.ndim else np.flatnonzero(a)[None]  # a 0-d array: one column of 0s
        assert np.array_equal(clnz.nonzero(a, layout="columns"), cols), name
        assert clnz.count_nonzero(a) == np.count_nonzero(a), name
        if a.ndim:  # np.nonzero refuses 0-d arrays
            for t in (clnz.nonzero(a), clnz.nonzero(a, as_tuple=True), clnz.where(a)):
                assert type(t) is tuple and len(t) == a.ndim, name
                assert all(x.dtype == np.intp and np.array_equal(x, y)
                           for x, y in zip(t, np.nonzero(a))), name


def test_as_tuple_of_a_0d_array_is_1d_like_torch():
    assert [x.tolist() for x in clnz.nonzero(np.float32(2.0), as_tuple=True)] == [[0]]
    assert [x.tolist() for x in clnz.nonzero(np.array(0), as_tuple=True)] == [[]]


def test_views_are_passed_with_their_strides(rng):
    base = sparse(rng, (40, 30), "float32")
    for v in (base[::-1], base[::2, 1::3], base.T):
        assert clnz._host.Input(v, "x").array is v  # no copy
        assert np.array_equal(clnz.argwhere(v), np.argwhere(v))
    swapped = base.astype(">f4")  # byte-swapped: the one kind that is converted
    assert np.array_equal(clnz.argwhere(swapped), np.argwhere(base))


@pytest.mark.parametrize("index", ["int64", "int32", "uint32", np.int32])
def test_index_types(rng, index):
    a = sparse(rng, (20, 30), "int16")
    got = clnz.argwhere(a, index=index)
    assert got.dtype == np.dtype(index) and np.array_equal(got, np.argwhere(a))
    got = clnz.nonzero(a, index=index)
    assert all(x.dtype == np.dtype(index) and np.array_equal(x, y)
               for x, y in zip(got, np.nonzero(a)))


def test_width_and_order_xy(rng):
    a = sparse(rng, (1, 9, 11), "uint8")
    want = np.argwhere(a)
    assert np.array_equal(clnz.argwhere(a, width=2), want[:, 1:])
    wide = np.hstack([np.zeros((len(want), 2), np.int64), want])
    assert np.array_equal(clnz.argwhere(a, width=5), wide)
    assert np.array_equal(np.stack(clnz.nonzero(a, width=5)), wide.T)  # numpy's form, 5 arrays
    b = a[0]
    assert np.array_equal(clnz.argwhere(b, order="xy"), np.argwhere(b)[:, ::-1])
    assert all(np.array_equal(x, y) for x, y in zip(clnz.nonzero(b, order="xy"),
                                                    np.nonzero(b)[::-1]))
    with pytest.raises(clnz.Error) as e:
        clnz.argwhere(sparse(rng, (3, 4), "uint8") + 1, width=1)
    assert e.value.name == "CLNZ_ERROR_INVALID_WIDTH" and "width" in str(e.value)
    with pytest.raises(clnz.Error, match="flat has one index per entry") as e:
        clnz.nonzero(a, layout="flat", width=3)  # refused, never ignored
    assert e.value.name == "CLNZ_ERROR_INVALID_WIDTH"


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
            assert np.array_equal(clnz.argwhere(a, pred=pred), np.argwhere(mask)), (op, v)
            assert clnz.count_nonzero(a, pred=pred) == np.count_nonzero(mask), (op, v)


@pytest.mark.parametrize("dtype", DTYPES)
def test_predicates_on_whole_chunks(rng, dtype):
    """Every dtype's elements are tested in lanes of their own width, the
    predicate's range cast to the lane type (kernels/element.cl), and
    counted lane by lane (chunk.cl): every operation at values on, beside
    and past the ends of the type (one-byte types: all of them), on inputs
    of whole counting chunks and a ragged end, counted, compacted and
    counted along an axis."""
    shape = (37, 1031)  # 38147 elements: whole chunks at any launch, and a rest
    dt = np.dtype(dtype)
    if dt.itemsize == 1:
        raw = rng.integers(0, 4 if dt == bool else 256, shape, dtype=np.uint8)
        a = raw.view(dt)  # bool: bytes 2 and 3 are true, as any byte but 0
        ref = raw != 0 if dt == bool else a
        values = [-300, -129, -128, -127, -1, 0, 1, 2, 126, 127, 128, 254, 255, 256, 300, 0.5,
                  -0.5, 127.5, 255.5]
    else:
        a = ref = sparse(rng, shape, dt, density=0.7)
        if dt.kind == "f":  # NaN of either sign, infinities, subnormals, -0.0 and the ends
            tiny = np.finfo(dt).smallest_subnormal
            special = np.array([np.nan, -np.nan, np.inf, -np.inf, tiny, -tiny, -0.0,
                                np.finfo(dt).max, -np.finfo(dt).max], dt)
            special[1] = np.copysign(special[1], -1)
            a.reshape(-1)[rng.choice(a.size, 40 * special.size, replace=False)] = \
                np.tile(special, 40)
        ends = [float(np.finfo(dt).max), -float(np.finfo(dt).max), float("inf")] \
            if dt.kind == "f" else [int(np.iinfo(dt).max), int(np.iinfo(dt).max) - 1,
                                   int(np.iinfo(dt).min), int(np.iinfo(dt).min) + 1]
        values = [0, 1, -1, 0.5, -0.0, 2**64 - 1, -2**63] + ends
    for op in OPS:
        for v in values:
            with np.errstate(invalid="ignore", over="ignore"):
                mask = OPS[op](ref, v)
            pred = (op, v)
            assert clnz.count_nonzero(a, pred=pred) == np.count_nonzero(mask), pred
            assert np.array_equal(clnz.flatnonzero(a, pred=pred), np.flatnonzero(mask)), pred
            assert np.array_equal(clnz.count_nonzero(a, axis=0, pred=pred),
                                  np.count_nonzero(mask, axis=0)), pred


def test_predicate_values_of_every_python_kind():
    a = np.array([0, 1, 2**63, 2**64 - 1], dtype=np.uint64)
    assert clnz.count_nonzero(a, pred=("ge", 2**63)) == 2      # above int64: sent as uint64
    assert clnz.count_nonzero(a, pred=("eq", np.uint64(1))) == 1
    assert clnz.count_nonzero(a, pred=("gt", 0.5)) == 3
    assert clnz.count_nonzero(a, pred="nonzero") == 3
    assert clnz.count_nonzero(a, pred=("nonzero",)) == 3
    assert clnz.count_nonzero(a, pred=("nonzero", 0)) == 3  # what the repr printed before
    assert clnz.count_nonzero(a, pred=clnz.Predicate("nonzero")) == 3
    assert repr(clnz.Predicate("nonzero")) == "clnz.Predicate('nonzero')"
    with pytest.raises(ValueError):
        clnz.Predicate("gt", 2**64)
    for below in (-2**63 - 1, -2**64, -2**64 + 5):  # c_uint64 wrapped these into wrong values
        with pytest.raises(ValueError, match="does not fit in 64 bits"):
            clnz.count_nonzero(a, pred=("gt", below))
    assert clnz.count_nonzero(a, pred=("gt", -2**63)) == 4  # int64's own minimum is fine
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
    # a fill the index type cannot hold is a refused argument, as the module
    # says of them (it was clnz.Error, the library's status), before any work
    for fill, index in ((1 << 40, "int32"), (-5, "uint32"), (1 << 32, "uint32")):
        with pytest.raises(ValueError, match=f"fill_value: fill value {fill} does not fit {index}"):
            clnz.nonzero_static(a, z + 1, fill_value=fill, index=index)
    got, _ = clnz.nonzero_static(a, z + 1, fill_value=-1, index="uint32")  # numpy's -1 as uint32
    assert got[-1, 0] == 2**32 - 1
    with pytest.raises(clnz.Error) as e:  # the check's other refusals stay the call's, as without a size
        clnz.nonzero_static(a, z + 1, layout="flat", width=2)
    assert e.value.name == "CLNZ_ERROR_INVALID_WIDTH"


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


def same(got, want):
    """Same dtype, shape and bits (NaN payloads and -0.0 included)."""
    return got.dtype == want.dtype and got.shape == want.shape and \
        np.array_equal(np.ascontiguousarray(got).view(np.uint8),
                       np.ascontiguousarray(want).view(np.uint8))


# Python and numpy scalars of every kind numpy's promotion treats apart, and
# NaNs of either sign with payloads (a float16 result keeps the sign and the
# payload's top bits, as numpy casts them; they all came out 0x7e00)
SCALARS = [0, -3, 300, 2**40, 2**63, 0.5, -0.0, 1e300, True, np.int8(-3), np.uint16(7),
           np.float32(2.5), np.float64(2), np.float16(1)] + \
    [struct.unpack("<d", struct.pack("<Q", bits))[0]
     for bits in (0xfff8000000000000, 0x7ff0000000000001, 0x7ffc000000000000, 0xfff4000000000000)]


def test_where_promotes_as_numpy(rng):
    cond = sparse(rng, (5, 7), "bool")
    arrays = {d: sparse(rng, (5, 7), d) for d in DTYPES}
    arrays["int8 0-d"] = np.array(-4, np.int8)
    values = list(arrays.values()) + SCALARS
    for x in values:
        for y in values:
            with np.errstate(all="ignore"):
                want = np.where(cond, x, y)
            assert same(clnz.where(cond, x, y), want), (x, y)
    got = clnz.where(arrays["float32"], arrays["float32"], -1.0, pred=("gt", 0))
    with np.errstate(invalid="ignore"):
        assert same(got, np.where(arrays["float32"] > 0, arrays["float32"], np.float32(-1)))


def test_where_casts_a_broadcast_operand_once():
    # a broadcast operand cast to the result's dtype is cast per distinct
    # element and broadcast again: astype wrote every repeat (8 TiB here,
    # numpy's MemoryError, where numpy gives an empty result)
    huge = np.broadcast_to(np.int8(1), (2**40, 1, 1))
    r = clnz.where(np.zeros((3, 0)), huge, 0.5)
    assert r.shape == (2**40, 3, 0) and r.dtype == np.float64
    row = np.broadcast_to(np.arange(-3, 4, dtype=np.int8), (5, 7))
    cond = np.arange(35).reshape(5, 7) % 3 == 0
    for x, y in ((row, 0.25), (2.5, row), (row, row.T[:1].T * np.float32(1.5))):
        want = np.where(cond, x, y)
        got = clnz.where(cond, x, y)
        assert got.dtype == want.dtype and np.array_equal(got, want)


def test_where_errors():
    with pytest.raises(clnz.Error) as e:
        clnz.where(np.ones((3, 4)), np.ones((2, 4)), 1.0)
    assert e.value.name == "CLNZ_ERROR_SHAPE_MISMATCH"
    assert "(2, 4)" in str(e.value) and "(3, 4)" in str(e.value)
    with pytest.raises(TypeError, match="unsupported dtype"):  # numpy: object
        clnz.where(np.ones(3, bool), np.ones(3, np.int64), 2**70)
    with pytest.raises(TypeError, match="unsupported dtype"):
        clnz.where(np.ones(3, bool), np.ones(3, np.complex64), 0)
    with pytest.raises(ValueError, match="both or neither"):
        clnz.where(np.ones(3), np.ones(3))


def test_where_one_argument_is_nonzero(rng):
    a = sparse(rng, (6, 9), "float32")
    for got, want in ((clnz.where(a), np.where(a)), (clnz.where(a, pred=("lt", 0)),
                                                     np.where(a < 0))):
        assert len(got) == 2 and all(np.array_equal(g, w) for g, w in zip(got, want))


def test_numpy_and_torch_forms(rng):
    a = sparse(rng, (4, 6, 5), "int32")
    got = clnz.nonzero(a)
    assert type(got) is tuple and np.array_equal(a[got], a[np.nonzero(a)])  # the numpy idiom
    assert np.array_equal(clnz.nonzero(a, as_tuple=False), np.argwhere(a))  # torch.nonzero
    assert np.array_equal(clnz.nonzero(a, layout="columns"), np.stack(np.nonzero(a)))
    assert np.array_equal(clnz.nonzero(a, layout="flat"), np.flatnonzero(a))
    with pytest.raises(ValueError, match="0d"):  # as numpy >= 2.1 (1.x: deprecated)
        clnz.nonzero(np.array(3))
    with pytest.raises(ValueError, match="0d"):
        clnz.where(np.array(3))
    with pytest.raises(ValueError, match="layout"):
        clnz.nonzero(a, as_tuple=True, layout="rows")
    with pytest.raises(TypeError, match="as_tuple"):
        clnz.nonzero(a, as_tuple="yes")


def with_pred(a, pred):
    """numpy's mask for a clnz predicate."""
    if pred is None:
        return a != 0
    with np.errstate(invalid="ignore"):
        return OPS[pred[0]](a, pred[1])


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "float32", "float64"])
def test_count_nonzero_axis_against_numpy(rng, dtype):
    base = sparse(rng, (4, 5, 6, 3), dtype)
    # (3, 64, 32) and (2, 1030) along axis 0: counted 16 items a work-item (count_batched.c),
    # with 16-item loads and without; (3, 5, 8, 9) along (0, 2, 3): inner runs of 72 and an
    # outer axis at once (a split counting pass)
    arrays = [base, np.asfortranarray(base), base[::-1, 1::2, :, ::-1], base.transpose(2, 0, 3, 1),
              base[:, :0], sparse(rng, (7,), dtype), np.asarray(base.reshape(-1)[5]),
              sparse(rng, (3, 64, 32), dtype), sparse(rng, (2, 1030), dtype)[:, ::-1],
              sparse(rng, (3, 5, 8, 9), dtype)]
    for a in arrays:
        n = a.ndim
        axes = [None, (), tuple(range(n))] + list(range(-n, n))
        if n >= 2:
            axes += [(0, n - 1), (n - 1, 0)]
        if n >= 3:
            axes += [(0, 2), (1, 2), (-3, -1)]
        if n == 4:
            axes += [(0, 2, 3), (0, 3)]
        for axis in axes:
            for pred in (None, ("gt", 0)):
                mask = with_pred(a, pred)
                for keepdims in (False, True):
                    got = clnz.count_nonzero(a, axis, keepdims=keepdims, pred=pred)
                    want = np.count_nonzero(mask, axis=axis, keepdims=keepdims)
                    assert type(got) is type(want), (a.shape, axis, keepdims)
                    assert np.shape(got) == np.shape(want), (a.shape, axis, keepdims)
                    assert np.array_equal(got, want), (a.shape, axis, pred, keepdims)


def test_count_nonzero_axis_errors():
    a = np.ones((2, 3))
    with pytest.raises(np.AxisError):
        clnz.count_nonzero(a, axis=2)
    with pytest.raises(np.AxisError):
        clnz.count_nonzero(a, axis=(0, -3))
    with pytest.raises(ValueError, match="repeated"):
        clnz.count_nonzero(a, axis=(1, -1))
    for bad in (1.0, True, np.bool_(False), [0, 1], (0, True)):  # numpy: TypeError for each
        with pytest.raises(TypeError):
            np.count_nonzero(a, axis=bad)
        with pytest.raises(TypeError, match="axis"):
            clnz.count_nonzero(a, axis=bad)


def test_count_nonzero_axis_of_0d():
    # numpy's reductions (and torch's) take a lone axis 0 or -1 on a 0-d array for the whole
    # of it; any other axis, or one inside a tuple, is an AxisError
    for v in (np.array(7), np.array(0.0), np.float32(-0.0), 3):
        for axis in (0, -1, np.int64(-1)):
            for keepdims in (False, True):
                got = clnz.count_nonzero(v, axis=axis, keepdims=keepdims)
                want = np.count_nonzero(v, axis=axis, keepdims=keepdims)
                assert type(got) is type(want) and got == want, (v, axis, keepdims)
        for axis in (1, -2, (0,), (-1,)):
            with pytest.raises(np.AxisError):
                np.count_nonzero(v, axis=axis)
            with pytest.raises(np.AxisError):
                clnz.count_nonzero(v, axis=axis)


@pytest.mark.parametrize("dtype", ["bool", "int8", "float32"])
def test_extract_against_numpy(rng, dtype):
    arr = sparse(rng, (6, 7), dtype)
    cond = sparse(rng, (6, 7), "uint8")
    for c, a in ((cond, arr), (cond.T, arr.T), (cond[::-1], arr), (cond.ravel()[:20], arr),
                 (cond[:3], arr[::2]), (np.append(cond, [0, 0, 0]), arr), ([1, 0, 1], arr[0]),
                 (cond * 0, arr[:0])):
        want = np.extract(c, a)
        assert same(clnz.extract(c, a), want), (np.shape(c), np.shape(a))
    assert same(clnz.extract(arr, arr, pred=("ne", 0)), np.extract(arr != 0, arr))
    with pytest.raises(IndexError, match="index 44 is out of bounds for axis 0 with size 42"):
        clnz.extract(np.append(cond, [0, 0, 1]), arr)
    with pytest.raises(IndexError, match="index 44 is out of bounds for axis 0 with size 42"):
        np.extract(np.append(cond, [0, 0, 1]), arr)


def test_batched_and_channels_against_numpy(rng):
    a = sparse(rng, (9, 5, 7), "float32", density=0.2)
    coords, offsets = clnz.nonzero_batched(a)
    assert offsets.dtype == np.int64 and offsets.shape == (10,)
    for b in range(9):
        assert np.array_equal(coords[offsets[b]:offsets[b + 1]], np.argwhere(a[b]))
    coords, offsets = clnz.nonzero_batched(a[:, ::-1], pred=("lt", 0), index="int32", order="xy")
    assert coords.dtype == np.int32
    for b in range(9):
        assert np.array_equal(coords[offsets[b]:offsets[b + 1]],
                              np.argwhere(a[b, ::-1] < 0)[:, ::-1])
    img = sparse(rng, (11, 13, 3), "uint8", density=0.4)
    for rule, reduce in (("any", np.any), ("all", np.all)):
        for pred in (None, ("gt", 100)):
            mask = reduce(with_pred(img, pred), axis=-1)
            got = clnz.nonzero_channels(img, rule, pred=pred)
            assert all(np.array_equal(g, w) for g, w in zip(got, np.nonzero(mask)))
            assert np.array_equal(clnz.nonzero_channels(img, rule, as_tuple=False, pred=pred),
                                  np.argwhere(mask))
    with pytest.raises(ValueError, match="channel rule"):
        clnz.nonzero_channels(img, "most")


def test_integer_arguments_are_checked():
    """Issue 16 items 9 and 16: no wrapping, no truncation (operator.index)."""
    a = np.array([[0, 1, 2], [3, 0, 5]], np.int16)
    for call, name in ((lambda: clnz.argwhere(a, width=2**32 + 2), "width"),
                       (lambda: clnz.nonzero(a, width=-2**31 - 1), "width"),
                       (lambda: clnz.nonzero_static(a, 2**64), "size"),
                       (lambda: clnz.nonzero_static(a, 2**63), "size"),
                       (lambda: clnz.nonzero_static(a, 3, fill_value=2**64 - 1), "fill_value"),
                       (lambda: clnz.nonzero_static(a, 3, fill_value=-2**63 - 1), "fill_value")):
        with pytest.raises(OverflowError, match=name):
            call()
    for call, name in ((lambda: clnz.nonzero_static(a, 2.5), "size"),
                       (lambda: clnz.nonzero_static(a, "3"), "size"),
                       (lambda: clnz.nonzero_static(a, np.float64(3)), "size"),
                       (lambda: clnz.argwhere(a, width=2.7), "width"),
                       (lambda: clnz.nonzero_static(a, 3, fill_value=0.5), "fill_value"),
                       (lambda: clnz.count_nonzero(a, axis="0"), "axis")):
        with pytest.raises(TypeError, match=name):
            call()
    for call, name in ((lambda: clnz.nonzero_static(a, -1), "size"),
                       (lambda: clnz.argwhere(a, width=-1), "width")):
        with pytest.raises(ValueError, match=name):
            call()
    # numpy's integers are integers
    got, z = clnz.nonzero_static(a, np.uint8(5), fill_value=np.int64(-7), width=np.int32(2))
    assert z == 4 and got.tolist() == [[0, 1], [0, 2], [1, 0], [1, 2], [-7, -7]]


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
    keep = [clnz.argwhere(a)[10:20] for _ in range(20)]  # views outlive their parents
    want = np.argwhere(a)[10:20]
    assert all(np.array_equal(k, want) for k in keep)
    rows = clnz.nonzero(a)[1]  # one array of the tuple outlives the others
    assert np.array_equal(rows, np.nonzero(a)[1])
    r = clnz.argwhere(a)
    r[:] = 0  # writable, like numpy's own results
    assert not r.any()


def test_contexts_and_devices():
    devs = clnz.devices()
    assert devs and sum(d.is_default for d in devs) == 1
    with clnz.Context(devs[0].selector) as ctx:
        assert ctx.device.selector == devs[0].selector
        a = np.arange(-5, 6)
        assert np.array_equal(clnz.argwhere(a, context=ctx), np.argwhere(a))
    # a kind, a part of a name and the default name their device too (it
    # was None for any selector but "P:D")
    default = next(d for d in devs if d.is_default)
    for sel, want in [(None, default), (default.type.lower(), None),
                      (default.name[:4].swapcase(), None)]:
        with clnz.Context(sel) as c:
            got = c.device
            assert got is not None and got.selector in [d.selector for d in devs]
            if want is not None:
                assert got.selector == want.selector and got.is_default
            if sel == default.type.lower():
                assert got.type == default.type
            if sel == default.name[:4].swapcase():
                assert sel.lower() in (got.name + got.platform_name).lower()
            assert got.selector in repr(c)
    with pytest.raises(ValueError, match="closed"):
        clnz.count_nonzero(a, context=ctx)
    with pytest.raises(clnz.Error) as e:
        clnz.Context("9:9")
    assert e.value.name == "CLNZ_ERROR_INVALID_DEVICE" and "9:9" in str(e.value)
    with pytest.raises(clnz.Error, match="no device matches") as e:  # a kind or a name part
        clnz.Context("no such device")
    assert e.value.name == "CLNZ_ERROR_INVALID_DEVICE"
    assert [bool(d.why_default) for d in devs] == [d.is_default for d in devs]
    with pytest.raises(TypeError, match="device must be a str"):
        clnz.Context(0)
    assert clnz.library_version() == clnz.__version__
    if "CLNZ_LIBRARY" in os.environ:
        assert clnz.library_path() == os.environ["CLNZ_LIBRARY"]


def test_a_context_copies_as_itself_and_does_not_pickle():
    """Regression (hostile-user pass): copy.copy(ctx) shared the handle but
    not its release: once the original went, the copy called on a freed
    context (a hang). A copy, deep too, is the context itself now; pickle
    refuses it with a TypeError that says why."""
    ctx = clnz.Context()
    assert copy.copy(ctx) is ctx and copy.deepcopy([ctx])[0] is ctx
    with pytest.raises(TypeError, match="^clnz: a Context cannot be pickled"):
        pickle.dumps(ctx)
    c2 = copy.copy(ctx)
    del ctx
    gc.collect()
    assert clnz.count_nonzero(np.eye(3), context=c2) == 3
    c2.close()


def test_errors_pickle_and_copy_with_their_status():
    """Regression (hostile-user pass): a clnz.Error could not be unpickled
    (BaseException's pickle gives __init__ the message alone), so one raised
    in a multiprocessing worker killed the pool's result handler and r.get()
    waited for ever. Now it comes back whole, and so does a note on it."""
    with pytest.raises(clnz.Error) as e:
        clnz.where(np.ones((2, 3)), np.ones(4), 0)
    e.value.__notes__ = ["a note"]  # what add_note (Python 3.11) sets; pyproject says 3.8
    for got in (pickle.loads(pickle.dumps(e.value)), copy.copy(e.value), copy.deepcopy(e.value)):
        assert type(got) is clnz.ShapeMismatch and got.__notes__ == ["a note"]
        assert (got.status, got.name, str(got)) == (e.value.status, e.value.name, str(e.value))
    assert e.value.name == "CLNZ_ERROR_SHAPE_MISMATCH"
    empty = pickle.loads(pickle.dumps(clnz.Error(e.value.status, "")))
    assert str(empty) == "clnz: CLNZ_ERROR_SHAPE_MISMATCH"


def test_a_failed_allocation_is_a_memory_error():
    """Regression (hostile-user pass): a result the library could not
    allocate was a clnz.Error alone, which `except MemoryError` missed where
    it catches numpy's own. It is a clnz.OutOfMemory now, a clnz.Error and a
    MemoryError; so are the device's and the OpenCL runtime's failed
    allocations, by status, and not the statuses of other limits."""
    with pytest.raises(MemoryError) as e:
        clnz.nonzero_static(np.eye(3), 2**58)  # 2**62 bytes of entries: no malloc gives them
    assert type(e.value) is clnz.OutOfMemory and isinstance(e.value, clnz.Error)
    assert e.value.name == "CLNZ_ERROR_OUT_OF_HOST_MEMORY" and "cannot allocate" in str(e.value)
    back = pickle.loads(pickle.dumps(e.value))
    assert type(back) is clnz.OutOfMemory and str(back) == str(e.value)
    for status, name, oom in ((-4, "CL_MEM_OBJECT_ALLOCATION_FAILURE", True),
                              (-6, "CL_OUT_OF_HOST_MEMORY", True),
                              (-5, "CL_OUT_OF_RESOURCES", False),
                              (-2007, "CLNZ_ERROR_TOO_LARGE", False)):
        err = clnz.Error(status, "")
        assert err.name == name and isinstance(err, MemoryError) == oom, name


def test_shapes_that_do_not_fit_are_a_value_error():
    """Regression (hostile-user pass): where's operands that do not broadcast
    and select's mask of another shape raised a clnz.Error alone, which
    `except ValueError` missed where it catches numpy's own. They are a
    clnz.ShapeMismatch now, a clnz.Error and a ValueError; other statuses
    are not."""
    x = np.arange(4.0)
    with pytest.raises(ValueError):
        np.where(np.ones(3) > 0, x, 0)  # numpy's own, for the same call
    for call in (lambda: clnz.where(np.ones(3) > 0, x, 0),
                 lambda: clnz.select(x, np.ones(3) > 0)):
        with pytest.raises(ValueError) as e:
            call()
        assert type(e.value) is clnz.ShapeMismatch and isinstance(e.value, clnz.Error)
        assert e.value.name == "CLNZ_ERROR_SHAPE_MISMATCH" and str(e.value).startswith("clnz: ")
    for status, mismatch in ((-2010, True), (-2011, False), (-2000, False)):
        assert isinstance(clnz.Error(status, ""), ValueError) == mismatch, status


def test_a_forked_pool_worker_s_error_reaches_the_parent():
    # README: with multiprocessing's fork, a worker's call raises clnz.Error
    # (CLNZ_ERROR_FORKED, OpenCL being in use here); it hung the pool instead
    import multiprocessing
    assert clnz.count_nonzero(np.eye(2)) == 2
    with multiprocessing.get_context("fork").Pool(1) as pool:
        with pytest.raises(clnz.Error) as e:
            pool.apply_async(clnz.count_nonzero, (np.eye(2),)).get(timeout=10)
    assert e.value.name == "CLNZ_ERROR_FORKED"


def test_strings_with_a_nul_inside_are_refused():
    """Regression (hostile-user pass): the library reads C strings, so
    Context("cpu\\x00gpu") was Context("cpu"), silently; a device, a warmup
    list or a bundle path with a NUL inside is a ValueError now, as Python's
    own calls make it (open("a\\x00b"))."""
    for call in (lambda: clnz.Context("cpu\x00gpu"), lambda: clnz.warmup(ops="count\x00frob"),
                 lambda: clnz.use_bundle("no\x00such"), lambda: clnz.use_bundle(b"no\x00such")):
        with pytest.raises(ValueError, match="embedded null character"):
            call()


def test_stats_after_a_failed_call_warns_nothing():
    # clnz_context_stats clears the last call's message as every call does:
    # the failure before it was read as a fresh warning (LibraryWarning)
    with clnz.Context() as ctx:
        with pytest.raises(clnz.Error, match="width"):
            clnz.argwhere(np.ones((3, 4), np.uint8), width=1, context=ctx)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert clnz.stats(ctx)["programs_from_source"] >= 0


def test_a_forked_child_gets_an_error_not_a_hang():
    # OpenCL is in use here: a child of fork() (multiprocessing's default on
    # Linux before Python 3.14) would hang in the driver; it gets
    # CLNZ_ERROR_FORKED at once, and its exit (finalizers) returns
    a = np.arange(10) % 3
    assert clnz.count_nonzero(a) == np.count_nonzero(a)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report through the pipe, never return into pytest
        os.close(r)
        import signal
        signal.alarm(30)
        out = []
        for call in (lambda: clnz.count_nonzero(a), clnz.devices, lambda: clnz.Context("0:0")):
            try:
                call()
                out.append("no error")
            except clnz.Error as e:
                out.append(e.name + (" why" if "forked after OpenCL" in str(e) else ""))
        clnz.default_context().close()  # a release that must not wait on the driver
        os.write(w, "|".join(out).encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        said = f.read()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert said.split("|") == ["CLNZ_ERROR_FORKED why", "CLNZ_ERROR_FORKED",
                               "CLNZ_ERROR_FORKED why"]
    assert clnz.count_nonzero(a) == np.count_nonzero(a)  # the parent goes on


def test_a_child_forked_while_the_default_context_is_made_does_not_hang():
    # a thread of the parent holds the default context's lock (making it)
    # at the fork: the child's default_context() waited for ever on a lock
    # no thread of its own would release; it gets a fresh lock (and its
    # call, CLNZ_ERROR_FORKED or the parent's context, at once)
    # (the lock around contexts wrapped about pyopencl queues alike)
    from clnz import _core
    pytest.importorskip("pyopencl")
    from clnz import _device
    saved = _core._default
    _core._default = None  # not made yet, as in a fresh process
    try:
        with _core._default_lock, _device._wrapped_lock:
            pid = os.fork()
            if pid == 0:
                import signal
                signal.alarm(20)
                if not _device._wrapped_lock.acquire(timeout=5):
                    os._exit(3)
                try:
                    clnz.default_context()
                    os._exit(1)
                except clnz.Error as e:
                    os._exit(0 if e.name == "CLNZ_ERROR_FORKED" else 2)
    finally:
        _core._default = saved
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


def test_a_thread_that_ends_after_the_library_is_closed():
    # a thread that used a context ends after the library was dlclose'd: its
    # message tag's destructor is the library's code, which must still be
    # there (linked -z nodelete); the process crashed at the thread's exit
    code = r"""
import ctypes, _ctypes, os, threading
lib = ctypes.CDLL(os.environ["CLNZ_LIBRARY"])
lib.clnz_context_create.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                                    ctypes.c_char_p, ctypes.c_size_t]
lib.clnz_context_message.argtypes = [ctypes.c_void_p]
lib.clnz_context_release.argtypes = [ctypes.c_void_p]
ctx = ctypes.c_void_p()
assert lib.clnz_context_create(None, ctypes.byref(ctx), None, 0) == 0
go, used = threading.Event(), threading.Event()
def work():
    lib.clnz_context_message(ctx)  # the thread's tag
    used.set()
    go.wait()
t = threading.Thread(target=work)
t.start()
used.wait()
lib.clnz_context_release(ctx)
_ctypes.dlclose(lib._handle)
go.set()
t.join()
print("ended")
"""
    lib = clnz.library_path()
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, CLNZ_LIBRARY=lib))
    assert p.returncode == 0 and p.stdout == "ended\n", p


def test_threads_share_the_default_context(rng):
    arrays = [sparse(rng, (50 + i, 40), DTYPES[i % len(DTYPES)]) for i in range(16)]
    errors = []

    def work(i):
        for _ in range(3):
            a = arrays[(i * 5 + _) % len(arrays)]
            if not np.array_equal(clnz.argwhere(a), np.argwhere(a)):
                errors.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_close_lets_the_calls_other_threads_are_in_finish():
    """Regression (hostile-user pass): close() released the context under a
    call another thread was in (ctypes lets go of the GIL), a segfault in
    clnz_nonzero. Now that call ends first and the thread's next one raises
    ValueError. In a subprocess, so that a crash fails the test."""
    code = r"""
import threading, time, numpy as np, clnz
a = np.ones((300, 300), np.float32)
for _ in range(5):
    ctx = clnz.Context()
    said, started = [], threading.Event()

    def work():
        try:
            while True:
                clnz.argwhere(a, context=ctx)
                started.set()
        except ValueError as e:
            said.append(str(e))

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    time.sleep(0.02)
    ctx.close()
    t.join()
    assert said == ["clnz: this context is closed"], said
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])


def test_exit_leaves_the_default_context_to_daemon_threads_in_calls():
    """Regression (hostile-user pass): at interpreter exit the default
    context's finalizer released it under the calls daemon threads were in:
    a segfault in 11 of 12 runs. Now it leaves it to the process's exit.
    Three runs, each a subprocess."""
    code = r"""
import threading, time, numpy as np, clnz
a = np.ones((300, 300), np.float32)
clnz.argwhere(a)

def forever():
    while True:
        clnz.argwhere(a)

for _ in range(2):
    threading.Thread(target=forever, daemon=True).start()
time.sleep(0.1)
"""
    runs = [subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
            for _ in range(3)]
    for p in runs:
        err = p.communicate(timeout=60)[1]
        assert p.returncode == 0, (p.returncode, err[-2000:])


def test_non_temporal_stores_follow_the_output_size_and_its_pages():
    """The writing pass stores non-temporally (kernels/nt_store.cl) on a CPU
    device where its input and the entries it can write come to 128 MiB
    (STREAM_MIN_BYTES), but not into a blocking call's fresh result pages
    (the system zeroes them into the cache on first touch: streaming there
    cost 127 -> 175 ms for a 1 GiB result). A result given back is kept
    for the next call (core/result_mem.c), whose pages are then warm. (The
    second call on an input makes its result before the count, ops/ahead.c,
    in a block an eighth larger than the first's: fresh again, "deep ahead";
    the third takes that one back.)
    64 MiB of entries stream from a 64 MiB input ("deep") but not from a
    16 MiB one ("small"): the input counts. CLNZ_DEBUG=1 logs each such
    writing pass; CLNZ_STREAM_STORES=0 turns them off. Every result against
    numpy."""
    code = r"""
import sys, numpy as np, clnz
ctx = clnz.Context()
if ctx.device.type != "CPU":
    print("not a CPU device"); sys.exit(0)
big = np.ones((2100, 4096), np.float32)  # rows: 16 bytes per entry, 131 MiB
big[5, 7] = 0
deep = np.zeros(1 << 24, np.float32)  # 64 MiB in, 64 MiB of 8-byte entries
deep[::2] = 1
small = np.ones((1024, 4096), np.float32)  # 16 MiB in, 64 MiB of entries
# deep first: its 64 MiB result then finds no kept block to take (big's
# would serve a result of half its size or more)
cases = (("deep fresh", deep), ("deep ahead", deep), ("deep", deep), ("fresh", big),
         ("kept", big), ("small", small))
for what, a in cases:
    print("== " + what, file=sys.stderr, flush=True)
    r = clnz.argwhere(a, context=ctx)
    assert np.array_equal(r, np.argwhere(a)), what
    del r
"""
    logs = {}
    for setting in ("", "0"):
        env = dict(os.environ, CLNZ_DEBUG="1", CLNZ_STREAM_STORES=setting)
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr[-2000:]
        if "not a CPU device" in p.stdout:
            pytest.skip("the default device is not a CPU")
        parts = p.stderr.split("== ")[1:]
        logs[setting] = {part.split("\n")[0]: part.count("nz_write: non-temporal stores")
                         for part in parts}
    assert logs[""] == {"fresh": 0, "kept": 1, "deep fresh": 0, "deep ahead": 0, "deep": 1,
                        "small": 0}, logs
    assert logs["0"] == dict.fromkeys(logs[""], 0), logs


def test_library_not_found_is_a_clear_import_error(tmp_path):
    env = dict(os.environ, CLNZ_LIBRARY=str(tmp_path / "libclnz.so"))
    p = subprocess.run([sys.executable, "-c", "import clnz"], env=env, capture_output=True,
                       text=True)
    assert p.returncode != 0
    assert "ImportError: clnz: cannot load libclnz" in p.stderr and "CLNZ_LIBRARY" in p.stderr


# ---- odd input: what a hostile user tried ------------------------------------------
# Each argument value the README documents has its exception type and a "clnz:"
# message; an input clnz cannot answer the way numpy does is refused, never
# answered wrong.
def test_bad_option_values_are_value_errors_with_clnz_messages(rng):
    a = sparse(rng, (6, 7), "int16")
    for index in ("foo", None, np.float32, ">i4", [1], ""):  # '>i4': results are native
        with pytest.raises(ValueError, match="^clnz: unknown index type"):
            clnz.argwhere(a, index=index)
        with pytest.raises(ValueError, match="^clnz: unknown index type"):
            clnz.nonzero_batched(a, index=index)
    got = clnz.argwhere(a, index=np.dtype("=u4"))  # native byte order spelled out is fine
    assert got.dtype == np.uint32 and np.array_equal(got, np.argwhere(a))
    for call in (lambda: clnz.nonzero(a, layout=1), lambda: clnz.nonzero(a, order=None),
                 lambda: clnz.nonzero_channels(a, None), lambda: clnz.argwhere(a, pred="GT"),
                 lambda: clnz.select(a, pred=("bigger", 0))):
        with pytest.raises(ValueError, match="^clnz: unknown"):
            call()
    for call in (lambda: clnz.argwhere(a, pred=("gt", 1, 2)),  # Predicate's arity, not Python's
                 # an op that compares needs a value, nonzero takes none (as --pred): "gt"
                 # was x > 0 and ("nonzero", 5) dropped the 5
                 lambda: clnz.argwhere(a, pred="gt"), lambda: clnz.argwhere(a, pred=("le",)),
                 lambda: clnz.count_nonzero(a, pred=("nonzero", 5)),
                 lambda: clnz.Predicate("eq"), lambda: clnz.Predicate("nonzero", 0.5),
                 lambda: clnz.nonzero(a, as_tuple=1), lambda: clnz.nonzero(a, as_tuple=a[0] > 0),
                 lambda: clnz.count_nonzero(a, 0, keepdims="no"),
                 lambda: clnz.nonzero_static(a, None)):  # None was silently no static size
        with pytest.raises(TypeError, match="^clnz: "):
            call()
    with pytest.raises(TypeError):  # numpy refuses that keepdims too
        np.count_nonzero(a, 0, keepdims="no")
    got = clnz.count_nonzero(a, 1, keepdims=np.True_)
    assert np.array_equal(got, np.count_nonzero(a, 1, keepdims=True))


def test_context_of_the_wrong_type_is_a_type_error(rng, tmp_path):
    a = sparse(rng, (5, 4), "float32")
    calls = [lambda c: clnz.nonzero(a, context=c), lambda c: clnz.argwhere(a, context=c),
             lambda c: clnz.flatnonzero(a, context=c), lambda c: clnz.count_nonzero(a, context=c),
             lambda c: clnz.nonzero_static(a, 3, context=c),
             lambda c: clnz.nonzero_batched(a, context=c),
             lambda c: clnz.nonzero_channels(a, context=c), lambda c: clnz.select(a, context=c),
             lambda c: clnz.extract(a, a, context=c), lambda c: clnz.where(a, context=c),
             lambda c: clnz.where(a, a, 0, context=c),
             lambda c: clnz.warmup(np.uint8, context=c), lambda c: clnz.stats(c),
             lambda c: clnz.use_bundle(None, context=c)]
    for wrong in ("0:0", 0, clnz.default_context, clnz.devices()[0]):
        for call in calls:
            with pytest.raises(TypeError, match="^clnz: context must be a clnz.Context"):
                call(wrong)
    with pytest.raises(TypeError, match="^clnz: path must be"):
        clnz.use_bundle(5)
    with pytest.raises(clnz.Error) as e:  # bytes were the path "b'...'"
        clnz.use_bundle(os.fsencode(tmp_path / "none"))
    assert str(tmp_path / "none") in str(e.value) and "b'" not in str(e.value)


def test_nonzero_channels_of_a_1d_array_names_the_rank_it_needs(rng):
    a = sparse(rng, (9,), "uint8")  # one pixel of 9 channels: its pixel array is 0-d
    with pytest.raises(ValueError, match="^clnz: nonzero_channels' tuple needs an array of at "
                                         "least 2 dimensions .*not a 1-d one") as e:
        clnz.nonzero_channels(a)
    assert "0d arrays is not allowed" not in str(e.value)
    for rule, reduce in (("any", np.any), ("all", np.all)):
        pixels = reduce(a != 0, axis=-1)  # 0-d
        assert np.array_equal(clnz.nonzero_channels(a, rule, as_tuple=False), np.argwhere(pixels))
        got = clnz.nonzero_channels(a, rule, as_tuple=True)  # torch: a 0-d input counts as 1-d
        assert [x.tolist() for x in got] == [np.flatnonzero(pixels).tolist()]
        img = a.reshape(9, 1)  # what the message proposes: 9 pixels of one channel
        got = clnz.nonzero_channels(img, rule)
        assert len(got) == 1 and np.array_equal(got[0], np.nonzero(reduce(img != 0, -1))[0])
    with pytest.raises(clnz.Error, match="channel rule needs rank >= 1"):  # 0-d: no channels
        clnz.nonzero_channels(np.asarray(a[0]), as_tuple=False)


def swapped(a):
    """a in the other byte order: same values, other bytes."""
    return a.astype(a.dtype.newbyteorder("S"))


@pytest.mark.parametrize("dtype", ["int16", "float32", "float64"])
def test_byte_swapped_inputs_match_numpy(rng, dtype):
    """Values of every call, and the dtype where it flows to the result: numpy
    keeps a byte-swapped dtype in x[m] and np.extract, and gives native byte
    order from np.where."""
    base = sparse(rng, (7, 6, 4), dtype)
    for a, native in ((swapped(base), base), (swapped(base)[::-1, ::2], base[::-1, ::2])):
        assert not a.dtype.isnative and np.array_equal(a, native, equal_nan=True)
        m = swapped(sparse(rng, a.shape, dtype))
        assert all(np.array_equal(x, y) for x, y in zip(clnz.nonzero(a), np.nonzero(a)))
        assert np.array_equal(clnz.argwhere(a, pred=("gt", 0)), np.argwhere(a > 0))
        assert np.array_equal(clnz.flatnonzero(a), np.flatnonzero(a))
        for axis in (None, 1, (0, 2)):
            assert np.array_equal(clnz.count_nonzero(a, axis, keepdims=True),
                                  np.count_nonzero(a, axis, keepdims=True))
        got, z = clnz.nonzero_static(a, 5)
        assert z == np.count_nonzero(a) and np.array_equal(got[:z], np.argwhere(a)[:5])
        coords, offsets = clnz.nonzero_batched(a)
        for b in range(a.shape[0]):
            assert np.array_equal(coords[offsets[b]:offsets[b + 1]], np.argwhere(a[b]))
        assert np.array_equal(clnz.nonzero_channels(a, "all", as_tuple=False),
                              np.argwhere((a != 0).all(axis=-1)))
        assert same(clnz.select(a), a[a != 0])
        assert same(clnz.select(a, m), a[m != 0])
        with np.errstate(invalid="ignore"):
            assert same(clnz.select(a, pred=("gt", 0)), a[a > 0])
        assert same(clnz.extract(m, a), np.extract(m, a))
        assert same(clnz.extract(m.ravel()[:50], a), np.extract(m.ravel()[:50], a))
        for x, y in ((a, m), (a, 0), (native, a), (a, 2.5)):
            assert same(clnz.where(m, x, y), np.where(m, x, y))
    h = sparse(rng, (40,), "float16")
    assert same(clnz.select(swapped(h)), swapped(h)[h != 0])


def test_masked_arrays_are_refused(rng):
    """numpy.ma reads masked entries as zero (np.ma.nonzero) or keeps the mask
    (indexing, np.ma.where); the library would read the data under the mask:
    every call refuses a masked array wherever it goes, never answering as if
    there were no mask."""
    data = sparse(rng, (5, 6), "float32", density=0.8)
    m = np.ma.array(data, mask=sparse(rng, data.shape, "bool", density=0.5))
    assert np.count_nonzero(m.data) != np.count_nonzero(m.filled(0))  # the mask matters here
    calls = [lambda v: clnz.nonzero(v), lambda v: clnz.argwhere(v), lambda v: clnz.flatnonzero(v),
             lambda v: clnz.count_nonzero(v), lambda v: clnz.count_nonzero(v, axis=0),
             lambda v: clnz.nonzero_static(v, 3), lambda v: clnz.nonzero_batched(v),
             lambda v: clnz.nonzero_channels(v), lambda v: clnz.where(v),
             lambda v: clnz.select(v), lambda v: clnz.select(data, v),
             lambda v: clnz.select(v, data), lambda v: clnz.extract(v, data),
             lambda v: clnz.extract(data, v), lambda v: clnz.where(v, data, 0),
             lambda v: clnz.where(data, v, 0), lambda v: clnz.where(data, 1.0, v),
             lambda v: clnz.where(data > 0, v[0], np.ma.masked)]
    for call in calls:
        with pytest.raises(TypeError, match="^clnz: masked arrays are not supported"):
            call(m)
    with pytest.raises(TypeError, match="^clnz: "):
        clnz.count_nonzero(data, pred=("gt", np.ma.masked))
    # what the message proposes gives numpy.ma's answer
    assert all(np.array_equal(x, y) for x, y in zip(clnz.nonzero(m.filled(0)), np.ma.nonzero(m)))


def test_other_odd_inputs_answer_as_numpy(rng):
    a = sparse(rng, (8, 9), "float32")
    # a 0-d array as a predicate value compares as numpy compares with it
    for v in (np.array(0.5), np.array(-1, np.int8), np.array(True)):
        assert np.array_equal(clnz.argwhere(a, pred=("gt", v)), np.argwhere(a > v))
    with pytest.raises(TypeError, match="^clnz: predicate value"):
        clnz.argwhere(a, pred=("gt", np.array([0.5])))
    # where with a str: numpy makes strings, which clnz has not: its TypeError, its words
    assert np.where(a, "x", 0).dtype.kind == "U"
    for y in ("x", "f4", np.array(["x"])):
        with pytest.raises(TypeError, match="^clnz: where's result: unsupported dtype"):
            clnz.where(a, a, y)
    # Python lists, numpy's bools and int subclasses as numpy takes them
    lst = a.tolist()
    assert np.array_equal(clnz.count_nonzero(lst, axis=0), np.count_nonzero(lst, axis=0))
    assert np.array_equal(clnz.argwhere([True, False, True]), np.argwhere([True, False, True]))
    c = a > 0
    for y in (np.True_, np.False_, True):
        assert same(clnz.where(c, a, y), np.where(c, a, y))
        assert same(clnz.where(c, y, np.int8(3)), np.where(c, y, np.int8(3)))
    assert same(clnz.where(c, np.True_, np.False_), np.where(c, np.True_, np.False_))
    assert clnz.count_nonzero(a, pred=("ge", np.True_)) == np.count_nonzero(a >= np.True_)
    # an object array: refused as a dtype, not read as pointers
    with pytest.raises(TypeError, match="^clnz: .*unsupported dtype object"):
        clnz.flatnonzero(np.array([1, 0, None], object))
    # a view whose data is not aligned to its element size
    raw = np.zeros(4 * 50 + 1, np.uint8)
    raw[1:] = sparse(rng, (50,), "float32").view(np.uint8)
    un = np.frombuffer(raw.data, np.float32, offset=1)
    assert not un.flags.aligned
    assert np.array_equal(clnz.flatnonzero(un), np.flatnonzero(un))
    assert same(clnz.select(un), un[un != 0])


def test_object_arrays_are_refused_with_what_to_do(rng):
    """numpy asks each element of an object array for its truth; the device
    cannot read Python objects: every call refuses one wherever it goes with
    a TypeError that says so and what to pass instead, never a ctypes error
    or a read of the pointers. where(c, x, None) is a value, as in np.where
    (an object result), not a missing y."""
    o = np.array([[1, 0, None], [2.5, "", [0]]], object)
    c = sparse(rng, o.shape, "float32")
    calls = [lambda v: clnz.nonzero(v), lambda v: clnz.argwhere(v), lambda v: clnz.flatnonzero(v),
             lambda v: clnz.count_nonzero(v), lambda v: clnz.count_nonzero(v, axis=0),
             lambda v: clnz.nonzero_static(v, 3), lambda v: clnz.nonzero_batched(v),
             lambda v: clnz.nonzero_channels(v), lambda v: clnz.where(v),
             lambda v: clnz.where(v, c, 0), lambda v: clnz.select(v), lambda v: clnz.select(c, v),
             lambda v: clnz.extract(v, c), lambda v: clnz.extract(c, v),
             lambda v: clnz.extract(v.ravel()[:4], c), lambda v: clnz.argwhere([1, None, 0]),
             lambda v: clnz.count_nonzero(np.array(None, object))]
    for call in calls:
        with pytest.raises(TypeError, match=r"^clnz: \w+: unsupported dtype object: an object "
                                            r"array holds Python objects.*a\.astype\(bool\)"):
            call(o)
    for x, y in ((o, 0), (c, o), (c, None), (None, None), (c, 2**70)):
        assert np.where(c, x, y).dtype == object
        with pytest.raises(TypeError, match=r"^clnz: where's result: unsupported dtype object "
                                            r"\(np.result_type of x and y"):
            clnz.where(c, x, y)
    with pytest.raises(ValueError, match="either both or neither"):
        clnz.where(c, c)
    # what the message proposes selects what numpy selects
    assert all(np.array_equal(g, w) for g, w in zip(clnz.nonzero(o.astype(bool)), np.nonzero(o)))


def test_matrix_inputs_answer_as_numpy(rng):
    """np.nonzero, np.argwhere, np.flatnonzero, np.where and np.extract
    return ndarrays for a np.matrix; x[m] a (1, z) matrix, and so does
    clnz.select; np.count_nonzero counts a matrix whole only (TypeError
    along axes or with keepdims), and so does clnz."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        m = np.asmatrix(sparse(rng, (6, 7), "float32"))
    a = np.asarray(m)

    def alike(got, want):
        return type(got) is type(want) and same(got, want)

    for g, w in zip(clnz.nonzero(m), np.nonzero(m)):
        assert alike(g, w)
    for g, w in zip(clnz.where(m), np.where(m)):
        assert alike(g, w)
    assert alike(clnz.argwhere(m), np.argwhere(m))
    assert alike(clnz.flatnonzero(m), np.flatnonzero(m))
    assert alike(clnz.where(m, m, 0), np.where(m, m, 0))
    assert alike(clnz.where(a, m, np.float32(1)), np.where(a, m, np.float32(1)))
    assert alike(clnz.extract(m, m), np.extract(m, m))
    assert alike(clnz.extract(a > 0, m), np.extract(a > 0, m))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # x[m] warns nothing: no PendingDeprecationWarning either
        assert alike(clnz.select(m), m[m != 0])
    assert alike(clnz.select(m, a > 0), m[a > 0])
    assert alike(clnz.select(m, pred=("gt", 0)), m[m > 0])
    assert alike(clnz.select(m, pred=("gt", 1e9)), m[m > 1e9])  # (1, 0)
    assert alike(clnz.select(a, m > 0), a[m > 0])  # the mask's type does not count
    assert clnz.count_nonzero(m) == np.count_nonzero(m)
    for kw in ({"axis": 0}, {"axis": 1}, {"axis": (0, 1)}, {"axis": None, "keepdims": True}):
        with pytest.raises(TypeError):
            np.count_nonzero(m, **kw)
        with pytest.raises(TypeError, match="^clnz: count_nonzero of a np.matrix counts it whole"):
            clnz.count_nonzero(m, **kw)
    # what the message proposes: an ndarray of counts, or the matrix m.sum(axis) would give
    assert np.array_equal(clnz.count_nonzero(a, 1), np.count_nonzero(a, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        got = np.asmatrix(clnz.count_nonzero(a, 1, keepdims=True))
    assert type(got) is np.matrix and np.array_equal(got, (m != 0).sum(axis=1))


# ---- device arrays (pyopencl) ---------------------------------------------------
# Every call on pyopencl arrays against the same call on the host arrays and
# numpy; skipped where pyopencl is not installed.
@pytest.fixture(scope="module")
def cl():
    return pytest.importorskip("pyopencl")


@pytest.fixture(scope="module")
def queue(cl):
    return clnz.default_context().queue  # a pyopencl queue on clnz's own default context


def dev(queue, a):
    import pyopencl.array as cla
    return cla.to_device(queue, np.array(a, order="C"))  # 0-d stays 0-d


def dev_views(queue, rng, dtype):
    """Device arrays and the host arrays they hold: contiguous, offset and
    stepped (pyopencl views), transposed, 0-d and empty."""
    base = sparse(rng, (9, 8, 5), dtype)
    d = dev(queue, base)
    yield "c", d, base
    yield "offset and stepped", d[2:, ::3], base[2:, ::3]
    yield "transposed", d.transpose((2, 0, 1)), base.transpose(2, 0, 1)
    yield "0-d", dev(queue, base.reshape(-1)[7]), base.reshape(-1)[7]
    yield "empty", dev(queue, base[:0]), base[:0]
    yield "no nonzero", dev(queue, np.zeros_like(base)), np.zeros_like(base)


def host(d):
    return d.get() if hasattr(d, "get") else d


def is_dev(a, queue):
    import pyopencl.array as cla
    return isinstance(a, cla.Array) and a.queue == queue


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "float32", "float64"])
def test_device_calls_match_host_and_numpy(rng, queue, dtype):
    for name, d, a in dev_views(queue, rng, dtype):
        if a.ndim:
            got = clnz.nonzero(d)
            assert all(is_dev(g, queue) for g in got), name
            assert all(np.array_equal(g.get(), w) for g, w in zip(got, np.nonzero(a))), name
        for f in (clnz.argwhere, clnz.flatnonzero):
            got = f(d, pred=("gt", 0))
            assert is_dev(got, queue) and np.array_equal(got.get(), f(a, pred=("gt", 0))), name
        n = clnz.count_nonzero(d)
        assert is_dev(n, queue) and n.shape == () and n.get() == np.count_nonzero(a), name
        for axis in range(a.ndim):
            got = clnz.count_nonzero(d, axis, keepdims=True)
            assert is_dev(got, queue), name
            assert np.array_equal(got.get(), np.count_nonzero(a, axis, keepdims=True)), name
        got = clnz.select(d, pred=("lt", 0))
        assert is_dev(got, queue) and same(got.get(), clnz.select(a, pred=("lt", 0))), name
        assert same(clnz.extract(d, d).get(), np.extract(a, a)), name
        if a.ndim:  # numpy 1.x promotes a 0-d array by its value, a device array by its dtype
            got = clnz.where(d, d, 7)
            assert is_dev(got, queue) and same(got.get(), np.where(a, a, 7)), name
        entries, count = clnz.nonzero_static(d, 5, fill_value=-2, layout="columns")
        want, z = clnz.nonzero_static(a, 5, fill_value=-2, layout="columns")
        assert is_dev(count, queue) and count.get() == z and np.array_equal(entries.get(), want)
        if a.ndim:
            coords, offsets = clnz.nonzero_batched(d, order="xy")
            want = clnz.nonzero_batched(a, order="xy")
            assert np.array_equal(coords.get(), want[0]) and np.array_equal(offsets.get(),
                                                                            want[1]), name
            for rule in ("any", "all"):
                got = clnz.nonzero_channels(d, rule, as_tuple=False)
                assert np.array_equal(got.get(), clnz.nonzero_channels(a, rule, as_tuple=False))


def test_device_count_axis_against_numpy(rng, queue):
    base = sparse(rng, (4, 5, 6), "float32")
    d = dev(queue, base)
    wide = sparse(rng, (3, 1040), "float32")  # axis 0: one work-item per item
    # the kept axes of (0, 2) cannot be walked with one stride: the strides are permuted
    for v, a in ((d, base), (d.transpose((1, 0, 2)), base.transpose(1, 0, 2)),
                 (dev(queue, wide), wide)):
        axes = (0, 1, 2, (0, 1), (0, 2), (1, 2), -1, ()) if v.ndim == 3 else (0, 1, -1, (0, 1))
        for axis in axes:
            for pred in (None, ("ge", 0.5)):
                got = clnz.count_nonzero(v, axis, pred=pred)
                assert is_dev(got, queue)
                assert np.array_equal(got.get(), np.count_nonzero(with_pred(a, pred), axis))
    assert clnz.count_nonzero(d, keepdims=True).get().shape == (1, 1, 1)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "float16", "float32"])
def test_device_where_promotes_as_numpy(rng, queue, dtype):
    cond = sparse(rng, (3, 4), "uint8")
    x = sparse(rng, (3, 4), dtype)
    for y in [sparse(rng, (4,), d) for d in ("bool", "int8", "float16", "float64")] + \
            [0, -1.5, True, np.float32(3)]:
        dy = y if np.ndim(y) == 0 else dev(queue, y)
        got = clnz.where(dev(queue, cond), dev(queue, x), dy)
        with np.errstate(all="ignore"):
            want = np.where(cond, x, y)
        assert is_dev(got, queue) and same(got.get(), want), (dtype, y)


def test_device_where_widens_float16_bit_for_bit(queue):
    """Every float16 pattern widened on the device as numpy's astype does:
    signalling NaNs stay signalling, payloads and signs kept."""
    h = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    cond = np.ones(h.shape, bool)
    for wide, bits in ((np.float32, np.uint32), (np.float64, np.uint64)):
        y = np.zeros(1, wide)
        got = clnz.where(dev(queue, cond), dev(queue, h), dev(queue, y)).get()
        want = np.where(cond, h, y)
        assert got.dtype == want.dtype and np.array_equal(got.view(bits), want.view(bits)), wide


def test_device_results_read_only_their_count(rng, queue, cl, monkeypatch, capfd):
    """No host round trip: the calls whose result size is not the count read
    nothing back, the others one 8-byte count (inside the library's *_alloc
    calls, which CLNZ_DEBUG=1 makes log every host read), and Python itself
    reads nothing."""
    a = sparse(rng, (50, 40), "int32")
    d = dev(queue, a)
    queue.finish()
    monkeypatch.setenv("CLNZ_DEBUG", "1")  # read when a context is made
    ctx = clnz.Context(queue=cl.CommandQueue(queue.context))
    reads = []
    real = cl.enqueue_copy

    def copy(q, dest, src, **kw):
        if isinstance(dest, np.ndarray):
            reads.append(dest.nbytes)
        return real(q, dest, src, **kw)

    monkeypatch.setattr(cl, "enqueue_copy", copy)
    import pyopencl.array as cla
    get = cla.Array.get
    monkeypatch.setattr(cla.Array, "get", lambda self, *a, **k: reads.append(self.nbytes) or
                        get(self, *a, **k))

    def library_reads():
        return [line for line in capfd.readouterr().err.splitlines() if "host read" in line]

    for f in (clnz.argwhere, clnz.select):
        f(d, context=ctx)  # the first calls build or load programs: their logs go
    library_reads()
    for call in (lambda: clnz.count_nonzero(d, context=ctx),
                 lambda: clnz.count_nonzero(d, axis=0, context=ctx),
                 lambda: clnz.where(d, d, 0, context=ctx),
                 lambda: clnz.nonzero_static(d, 9, context=ctx)):
        call()
        assert reads == [] and library_reads() == []
    for call in (lambda: clnz.nonzero(d, context=ctx), lambda: clnz.argwhere(d, context=ctx),
                 lambda: clnz.select(d, context=ctx),
                 lambda: clnz.nonzero_batched(d, context=ctx),
                 lambda: clnz.nonzero_channels(d, context=ctx)):
        call()
        assert reads == []
        assert library_reads() == ["clnz-debug: host read of 8 bytes"]
    monkeypatch.undo()
    ctx.close()


@pytest.mark.parametrize("strategy", ["two-pass", "lookback"])
def test_blocking_results_made_ahead(rng, monkeypatch, capfd, strategy):
    """A blocking call makes its result before the count where it knows the
    size (nonzero_static) or, on a CPU device, can guess it from the
    context's last calls, and reads the count with it: one host round trip.
    The first call of a context counts first; a count past the guess has
    its entries written again. Each way against numpy, and which way each
    call went from CLNZ_DEBUG's log (read when a context is made)."""
    monkeypatch.setenv("CLNZ_DEBUG", "1")
    monkeypatch.setenv("CLNZ_STRATEGY", strategy)
    ctx = clnz.Context()
    cpu = ctx.device.type == "CPU"

    def ways():
        log = capfd.readouterr().err.splitlines()
        return (any("made before the count (the last calls' densities)" in l for l in log),
                any("passed them: written again" in l for l in log),
                any("made before the count (its static size)" in l for l in log))

    ways()
    # 300 x 400 f32: every result below is past the 256 KiB read at once with its count
    for density, want in ((0.3, (False, False)), (0.3, (cpu, False)), (0.9, (cpu, cpu)),
                          (0.9, (cpu, False)), (0.01, (cpu, False))):
        a = sparse(rng, (300, 400), "float32", density)
        got = clnz.argwhere(a, context=ctx)
        assert got.dtype == np.int64 and np.array_equal(got, np.argwhere(a)), density
        assert ways()[:2] == want, (density, want)
        for g, w in zip(clnz.nonzero(a, index="int32", context=ctx), np.nonzero(a)):
            assert np.array_equal(g, w), density
        assert np.array_equal(clnz.flatnonzero(a, context=ctx), np.flatnonzero(a)), density
        sel = clnz.select(a, context=ctx)  # NaN among them: compared by their bits
        assert np.array_equal(sel.view(np.uint32), a[a != 0].view(np.uint32)), density
        made, count = clnz.nonzero_static(a, 50000, fill_value=-5, context=ctx)
        w = np.argwhere(a)
        assert count == len(w) and made.shape == (50000, 2), density
        assert np.array_equal(made[:len(w)], w[:50000]) and (made[len(w):] == -5).all(), density
        assert ways()[2], density
    ctx.close()


def test_device_events_chain_on_an_out_of_order_queue(rng, cl):
    import pyopencl.array as cla
    ctx = clnz.default_context().cl_context
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    a = sparse(rng, (300, 200), "float32")
    for _ in range(3):
        d = cla.to_device(q, a) * 1  # written by a kernel: the array carries its event
        got = clnz.argwhere(d)
        assert got.queue == q  # a context wrapped around the array's queue
        assert np.array_equal((got + 0).get(), np.argwhere(a))
        assert clnz.count_nonzero(d * 2).get() == np.count_nonzero(a)


def test_device_contexts(rng, queue, cl):
    import pyopencl.array as cla
    a = sparse(rng, (6, 7), "uint8")
    own = cl.CommandQueue(queue.context)
    with clnz.Context(queue=own) as ctx:  # clnz_context_wrap of the application's queue
        assert ctx.queue is own and ctx.cl_context == queue.context
        assert ctx.device.name == own.device.name
        got = clnz.argwhere(dev(queue, a), context=ctx)
        assert got.queue == own and np.array_equal(got.get(), np.argwhere(a))
        got = clnz.argwhere(a, context=ctx)  # a host array on a wrapped context: blocking call
        assert isinstance(got, np.ndarray) and np.array_equal(got, np.argwhere(a))
    other = cl.Context(queue.context.devices)
    with pytest.raises(ValueError, match="another OpenCL context"):
        clnz.argwhere(dev(queue, a), context=clnz.Context(queue=cl.CommandQueue(other)))
    with pytest.raises(TypeError, match="host array"):
        clnz.select(dev(queue, a), a)
    with pytest.raises(clnz.Error) as e:  # the library's own checks, on the device path too
        clnz.select(dev(queue, a), dev(queue, a.T))
    assert e.value.name == "CLNZ_ERROR_SHAPE_MISMATCH"
    with pytest.raises(OverflowError, match="size"):
        clnz.nonzero_static(dev(queue, a), 2**64)
    assert clnz.where(dev(queue, a), 1, np.int8(0)).dtype == np.where(a, 1, np.int8(0)).dtype
    empty = cla.empty(queue, (0, 4), np.float32)
    assert [x.shape for x in clnz.nonzero(empty)] == [(0,), (0,)]


def test_device_odd_inputs(rng, queue):
    a = sparse(rng, (4, 6), "float32")
    d = dev(queue, a)
    # a byte-swapped 0-d host array next to device arrays goes up in native order
    y = np.array(-2.5, ">f4")
    assert same(clnz.where(d, d, y).get(), np.where(a, a, y))
    with pytest.raises(TypeError, match="^clnz: masked arrays"):
        clnz.where(d, d, np.ma.masked)
    with pytest.raises(TypeError, match="^clnz: context must be a clnz.Context"):
        clnz.argwhere(d, context=queue)  # a queue is clnz.Context(queue=q)'s argument


def test_device_byte_swapped_arrays_are_refused_everywhere(rng, queue):
    """to_device keeps a numpy array's byte order, which pyopencl itself
    cannot compute with ("unable to map dtype"): every call refuses one
    with clnz's TypeError and the upload that fixes it (converting it would
    be a hidden copy, on the device or through the host), where's x and y
    included, which pyopencl's astype used to meet first."""
    a = sparse(rng, (4, 6), "float32")
    s, d = dev(queue, swapped(a)), dev(queue, a)
    calls = [lambda: clnz.nonzero(s), lambda: clnz.argwhere(s), lambda: clnz.flatnonzero(s),
             lambda: clnz.count_nonzero(s), lambda: clnz.count_nonzero(s, axis=1),
             lambda: clnz.nonzero_static(s, 3), lambda: clnz.nonzero_batched(s),
             lambda: clnz.nonzero_channels(s), lambda: clnz.where(s),
             lambda: clnz.where(s, d, 0), lambda: clnz.where(d, s, 0), lambda: clnz.where(d, d, s),
             lambda: clnz.where(d, s, s), lambda: clnz.select(s), lambda: clnz.select(d, s),
             lambda: clnz.extract(s, d), lambda: clnz.extract(d, s),
             lambda: clnz.extract(s.reshape(24)[:5], d)]
    for call in calls:
        with pytest.raises(TypeError, match=r"^clnz: \w+: unsupported dtype >f4 \(a byte-swapped "
                                            r"pyopencl array.*newbyteorder\('='\)"):
            call()
    with pytest.raises(TypeError, match="^clnz: condition: "):  # extract's names, not select's
        clnz.extract(s, d)
    # the upload the message proposes
    h = swapped(a)
    fixed = dev(queue, h.astype(h.dtype.newbyteorder("=")))
    assert same(clnz.where(d, fixed, 0).get(), np.where(a, h, 0))


# ---- warm-up -------------------------------------------------------------------
def test_library_warning_once_per_context(rng, tmp_path, monkeypatch):
    """A cache folder that cannot be made (under a regular file): the calls
    still answer, and the library's warning is a clnz.LibraryWarning, once
    per context and message."""
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("CLNZ_CACHE_DIR", str(tmp_path / "file" / "cache"))
    a = sparse(rng, (30, 40), np.float32)
    with clnz.Context() as ctx:
        with pytest.warns(clnz.LibraryWarning, match="cannot write the program cache in .*"
                                                     "Not a directory"):
            assert clnz.count_nonzero(a, context=ctx) == np.count_nonzero(a)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the same warning again would raise here
            assert (clnz.argwhere(a, context=ctx) == np.argwhere(a)).all()
    assert (tmp_path / "file").read_text() == "x"


def test_warmup_leaves_nothing_to_compile(rng, tmp_path, monkeypatch):
    monkeypatch.setenv("CLNZ_CACHE_DIR", str(tmp_path))  # cold: an empty program cache
    with clnz.Context() as ctx:
        n = clnz.warmup([np.uint8, np.float32], ops=["count", "nonzero"], context=ctx)
        assert n > 0
        before = clnz.stats(ctx)
        for dt in (np.uint8, np.float32):
            a = sparse(rng, (60, 70), dt)
            assert (clnz.argwhere(a, context=ctx) == np.argwhere(a)).all()
            assert clnz.count_nonzero(a, context=ctx) == np.count_nonzero(a)
        after = clnz.stats(ctx)
        assert after["programs_from_source"] == before["programs_from_source"]
        assert after["programs_from_cache"] == before["programs_from_cache"]
        with pytest.raises(ValueError, match="unknown name 'cnt'"):
            clnz.warmup(ops="cnt", context=ctx)
        with pytest.raises(TypeError):
            clnz.warmup([np.complex64], context=ctx)
        with pytest.raises(clnz.Error, match="bundle .*none.: No such file or directory"):
            clnz.use_bundle(tmp_path / "none", context=ctx)


def test_warmup_empty_lists_are_value_errors():
    """As clnz_uses_parse (and `clnz warmup --ops ''`) makes them for every
    axis; dtypes=[] asked the library for its 0, every dtype, while ops=[]
    was refused. None is the way to ask for the default. Nothing compiles."""
    before = clnz.stats()
    for axis in ("dtypes", "ops", "predicates", "strategies"):
        for empty in ([], (), ""):
            kw = {"dtypes": [np.uint8], axis: empty}
            with pytest.raises(ValueError, match=f"^clnz: {axis}: an empty list of {axis}"):
                clnz.warmup(**kw)
    for dtypes in ("u8,f32", 5, ["foo"], [None], [np.uint8, np.complex64]):
        with pytest.raises(TypeError, match="^clnz: .*dtype"):
            clnz.warmup(dtypes, ops="count")
    assert clnz.stats() == before



def test_dtype_names_numpy_and_the_command_line_read_apart_are_refused():
    """`clnz warmup --dtypes u8` is uint8, np.dtype("u8") uint64 ("i8": int8
    and int64, "f16": float16 and float128): a string names a dtype as
    np.dtype reads it, and one that the command line reads otherwise is a
    ValueError naming both, in every argument that takes a dtype's name,
    never one of the two silently. The command line's other names, which
    numpy does not read, get numpy's name in their refusal; numpy's own
    unambiguous spellings work as before. Nothing compiles."""
    from clnz import _programs  # the dtype bits warmup would ask for, without compiling
    before = clnz.stats()
    a = np.array([[0, 3], [4, 0]], np.int16)

    def bits(*dts):
        return sum(1 << clnz._core.DTYPES.index(np.dtype(dt)) for dt in dts)

    clashes = [("u8", "uint64", "uint8"), ("i8", "int64", "int8")]
    try:
        clashes.append(("f16", np.dtype("f16").name, "float16"))  # float128 where long double is
    except TypeError:
        pass
    for name, numpys, ours in clashes:
        want = (rf"^clnz: warmup dtypes: {name!r} names two dtypes, {numpys} to numpy .*"
                rf"and {ours} to clnz's command line .*np\.{ours} or '{ours}'")
        for dtypes in (name, [np.float32, name], name.encode()):
            with pytest.raises(ValueError, match=want):
                clnz.warmup(dtypes, ops="count")
        with pytest.raises(ValueError, match=f"^clnz: (index: {name!r} names two dtypes|unknown "
                                             f"index type)"):
            clnz.argwhere(a, index=name)
    with pytest.raises(ValueError, match="^clnz: index: 'i8' names two dtypes, int64 to numpy "
                                         ".*int8 to clnz's command line .*: write np.int64 or "
                                         "'int64' for numpy's$"):
        clnz.argwhere(a, index="i8")
    # the command line's names numpy does not read: refused with numpy's name
    for name, numpys in (("u16", "uint16"), ("i32", "int32"), ("f32", "float32"),
                         ("u64", "uint64"), ("f64", "float64")):
        with pytest.raises(TypeError, match=rf"^clnz: warmup dtypes: unsupported dtype {name!r}: "
                                            rf"{name!r} is the command line's name, numpy's is "
                                            rf"np\.{numpys} or '{numpys}'"):
            clnz.warmup([name], ops="count")
    with pytest.raises(ValueError, match="^clnz: unknown index type 'i32': 'i32' is the command "
                                         "line's name, numpy's is np.int32 or 'int32'"):
        clnz.argwhere(a, index="i32")
    assert clnz.stats() == before
    # numpy's unambiguous spellings, and dtype objects (already read), as numpy reads them
    for dtypes, want in (("uint8", bits(np.uint8)), ("<u8", bits(np.uint64)),
                         ("=i8", bits(np.int64)), (np.dtype("u8"), bits(np.uint64)),
                         (["float16", "f4", "e"], bits(np.float16, np.float32)),
                         (b"uint16", bits(np.uint16))):
        assert _programs.uses(dtypes).dtypes == want, dtypes
    for index, dt in (("int64", np.int64), ("=i8", np.int64), (np.dtype("i8"), np.int64),
                      ("<i4", np.int32), ("uint32", np.uint32)):
        assert same(clnz.argwhere(a, index=index), np.argwhere(a).astype(dt))
