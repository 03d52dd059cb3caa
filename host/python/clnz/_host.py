"""_host.py: the calls on numpy arrays, through the library's blocking
calls: they read an array where it lies (strided views included) and return
numpy arrays over the library's own memory, freed with them. The public
functions (__init__.py) have checked the arguments and chosen the form."""
import ctypes
import weakref

import numpy as np

from . import _core, _lib
from ._core import L


class Input:
    """A numpy array as the library's tensor: shape, strides in elements, and
    the address of logical element 0. Holds what the call needs alive."""

    def __init__(self, a, what, view=None):
        a = np.asarray(a)
        self.dtype = a.dtype  # as given: a byte-swapped one is what select returns, as numpy
        if a.dtype.fields is None and not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
        _core.dtype_index(a.dtype, what)
        if any(s % a.itemsize for s in a.strides):
            a = np.ascontiguousarray(a)
        self.array = a
        self.view = view or _core.View(a.dtype, a.shape, [s // a.itemsize for s in a.strides])
        self.data = ctypes.c_void_p(a.ctypes.data)

    def as_view(self, shape, strides):
        """The same elements as another view from logical element 0 (a
        permutation, merged dimensions)."""
        return Input(self.array, "input", _core.View(self.array.dtype, shape, strides))


def adopt(ptr, dtype, shape, free):
    """A numpy array over memory the library malloc'd; `free` runs when the
    last view of it goes."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if not ptr or nbytes == 0:
        free()
        return np.empty(shape, dtype)
    buf = (ctypes.c_char * nbytes).from_address(ptr)
    weakref.finalize(buf, free)
    return np.frombuffer(buf, dtype).reshape(shape)


def _from_result(res):
    shape = tuple(res.shape[i] for i in range(res.ndim))
    return adopt(res.indices, _core.INDEX_DTYPES[res.index_type], shape,
                 lambda r=res: L.clnz_result_free(ctypes.byref(r)))


def _from_array(out):
    shape = tuple(out.shape[i] for i in range(out.rank))
    return adopt(out.data, _core.DTYPES[out.dtype], shape,
                 lambda o=out: L.clnz_array_free(ctypes.byref(o)))


# ---- the operations ---------------------------------------------------------
def nonzero(ctx, a, pred, opts, rule=None):
    """(entries, true count) of clnz_nonzero, or of clnz_nonzero_channels
    under a channel rule."""
    src = Input(a, "input")
    res = _lib.Result()
    head = (src.view.ref(), src.data, ctypes.byref(pred)) + (() if rule is None else (rule,))
    fn = L.clnz_nonzero if rule is None else L.clnz_nonzero_channels
    ctx._call(fn, *head, ctypes.byref(opts), ctypes.byref(res))
    return _from_result(res), res.count


def _batched(ctx, src, pred, opts):
    res, offsets = _lib.Result(), _lib.Array()
    ctx._call(L.clnz_nonzero_batched, src.view.ref(), src.data, ctypes.byref(pred),
              ctypes.byref(opts), ctypes.byref(res), ctypes.byref(offsets))
    return res, _from_array(offsets)


def batched(ctx, a, pred, opts):
    res, offsets = _batched(ctx, Input(a, "input"), pred, opts)
    return _from_result(res), offsets


def count(ctx, a, pred):
    src = Input(a, "input")
    n = ctypes.c_int64()
    ctx._call(L.clnz_count, src.view.ref(), src.data, ctypes.byref(pred), ctypes.byref(n))
    return n.value


def count_axes(ctx, a, counted, pred):
    """Counts over the axes `counted` (at least one axis kept): a batched
    count of the view with the kept axes first (strides permuted, no copy)."""
    src = Input(a, "input")
    shape, strides = src.view.shape, src.view.strides
    kept = [d for d in range(len(shape)) if d not in counted]
    order = kept + list(counted)
    view = src.as_view([shape[d] for d in order], [strides[d] for d in order])
    out = _lib.Array()
    ctx._call(L.clnz_count_batched, view.view.ref(), view.data, ctypes.byref(pred),
              len(kept), ctypes.byref(out))
    return _from_array(out)


def select(ctx, x, mask, pred, names=("x", "mask")):
    src = Input(x, names[0])
    m = Input(mask, names[1]) if mask is not None else None
    out = _lib.Array()
    ctx._call(L.clnz_select, src.view.ref(), src.data, m.view.ref() if m else None,
              m.data if m else None, ctypes.byref(pred), ctypes.byref(out))
    values = _from_array(out)  # in native byte order, as the library reads and writes
    return values if values.dtype == src.dtype else values.astype(src.dtype)


def _operand(v, what):
    """A Python scalar as itself, anything else as an array."""
    if _core.is_scalar(v):
        return _lib.Operand(None, _core.scalar(v, what)), None
    src = Input(v, what)
    return _lib.Operand(ctypes.pointer(src.view.tensor), _lib.Scalar()), src


def where(ctx, cond, x, y, pred):
    c = Input(cond, "condition")
    xo, xs = _operand(x, "x")
    yo, ys = _operand(y, "y")
    out = _lib.Array()
    ctx._call(L.clnz_where, c.view.ref(), c.data, ctypes.byref(pred), ctypes.byref(xo),
              xs.data if xs else None, ctypes.byref(yo), ys.data if ys else None, ctypes.byref(out))
    return _from_array(out)


# ---- what the public layer needs besides the operations -----------------------
def cast(ctx, a, dtype, what):
    """a as dtype (what names it for _device.cast's refusals; numpy's own
    conversions refuse nothing here). A broadcast operand (zero strides) is
    cast once per distinct element and broadcast again: astype wrote every
    repeat (np.broadcast_to(np.int8(1), (2**40, 1)) against a float: 8 TiB)."""
    a = np.asarray(a)
    if a.dtype == dtype:
        return a
    if 0 in a.strides and a.size:
        distinct = a[tuple(slice(0, 1) if s == 0 else slice(None) for s in a.strides)]
        return np.broadcast_to(distinct.astype(dtype), a.shape)
    return a.astype(dtype)


def ravel(ctx, a):
    return np.ravel(a)
