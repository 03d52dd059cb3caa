"""clnz: numpy's nonzero family on an OpenCL device (any GPU, or the CPU
through PoCL), over libclnz with ctypes, for numpy arrays and, with
pyopencl, for arrays that stay on the device.

    import numpy as np, clnz
    a = np.random.rand(1000, 1000)
    a[clnz.nonzero(a > 0.9)]               # np.nonzero: a tuple of index arrays
    clnz.count_nonzero(a > 0.5, axis=1)    # counted on the device
    clnz.where(a > 0.5, a, 0)              # numpy's dtype promotion: float64

numpy / torch -> clnz (arguments as numpy's unless said):

    np.nonzero(a), a.nonzero()            clnz.nonzero(a)
    np.argwhere(a)                        clnz.argwhere(a)
    np.flatnonzero(a)                     clnz.flatnonzero(a)
    np.count_nonzero(a, axis, keepdims=)  clnz.count_nonzero(a, axis, keepdims=)
    np.where(c)                           clnz.where(c)
    np.where(c, x, y)                     clnz.where(c, x, y)
    np.extract(c, a)                      clnz.extract(c, a)
    a[m] (m of a's shape)                 clnz.select(a, m)
    a[a > v], np.argwhere(a > v)          clnz.select(a, pred=("gt", v)), clnz.argwhere(a, pred=...)
    torch.nonzero(t)                      clnz.nonzero(a, as_tuple=False)  (= clnz.argwhere)
    torch.nonzero(t, as_tuple=True)       clnz.nonzero(a, as_tuple=True)   (0-d counts as 1-d)
    torch.nonzero_static(t, size=S, fill_value=F)
                                          clnz.nonzero_static(a, S, F)[0]  ([1]: the true count)
    jnp.nonzero(a, size=S, fill_value=F)  clnz.nonzero_static(a, S, F, layout="columns")[0]
    torch.count_nonzero(t, dim)           clnz.count_nonzero(a, dim)
    torch.where(c), torch.where(c, x, y)  clnz.where(c), clnz.where(c, x, y)
    torch.masked_select(x, m)             clnz.select(x, m)
    cv2.findNonZero(img)                  clnz.argwhere(img, order="xy")
    [np.argwhere(x) for x in a]           clnz.nonzero_batched(a): (coordinates, CSR offsets)
    np.nonzero((a != 0).any(axis=-1))     clnz.nonzero_channels(a, "any")

Every call also takes pred= (a Predicate, (op, value) or "nonzero": the
elements selected are those where `a OP value` holds, default nonzero) and
context= (a Context; default: one on CLNZ_DEVICE, else the first GPU, else
the first device, made on first use). The nonzero calls take index=
(int64, int32, uint32); those that write coordinates take order="xy"
(each entry reversed), and width= (coordinates per entry) where the
entries are not an item's own (not flatnonzero, nor nonzero_batched).
Integer arguments are checked as numpy checks them (operator.index:
TypeError for a float or a string; OverflowError or ValueError, naming
the argument, out of range).

numpy arrays go in as they are: a strided view is passed with its strides,
not copied (only a byte-swapped array, or one whose strides are not whole
elements, is copied first); results are numpy arrays over the library's own
memory. A np.matrix gets numpy's answer: ndarrays from the nonzero calls,
where and extract, a (1, z) matrix from select (as x[m]), and a count of the
whole (count_nonzero along axes or with keepdims is numpy's TypeError). An
object array is a TypeError: numpy asks each element for its truth, the
device cannot read Python objects; a.astype(bool) selects the same elements.
pyopencl.array.Array inputs stay on the device: results are
pyopencl arrays on the same queue (counts too: a 0-d int64 array), chained
by events; a result whose size is the count reads that count (8 bytes) once.
A byte-swapped pyopencl array is a TypeError (pyopencl cannot compute with
one either; converting it would copy it behind the caller's back): upload
it in native byte order.

A dtype named by a string (warmup's dtypes, index=) means what np.dtype
reads it as: np.uint8 or "uint8" for uint8, never the command line's "u8",
which numpy reads as uint64. The three command-line names numpy reads as another dtype
("u8", "i8", "f16": uint64, int64, float128 to numpy; uint8, int8, float16
to `clnz warmup --dtypes`) are a ValueError naming both, so that neither
reader is surprised; the others ("f32") are refused with numpy's name.

Failures raise clnz.Error with the library's message (a failed allocation
clnz.OutOfMemory, a MemoryError too; shapes that do not broadcast or
match clnz.ShapeMismatch, a ValueError too); a refused argument
raises ValueError (an unknown option value: layout, order, index="foo"; a
dtype name with two meanings) or TypeError (a wrong kind of argument, an
unsupported dtype, a numpy masked array, whose mask the library cannot
see), each with a "clnz:" message.
What the library notes on a call that succeeds anyway (a cache folder it
cannot write, so every process compiles again) is a clnz.LibraryWarning,
once per context and warning (a message of several warns once for each).

Each program (a kernel file for one dtype and predicate class) compiles on
its first call; clnz.warmup(dtypes, ops) builds the ones a service needs at
start, and clnz.use_bundle(dir) (or CLNZ_BUNDLE=dir) loads them from a
bundle that `clnz bundle build` made; clnz.stats() shows what compiled.
"""
import sys

import numpy as np

from . import _core, _host, _lib
from ._programs import stats, use_bundle, warmup  # noqa: F401
from ._core import (Context, Device, Error, LibraryWarning, OutOfMemory,  # noqa: F401
                    Predicate, ShapeMismatch, default_context, devices)

__version__ = "0.2.0"
__all__ = ["Error", "OutOfMemory", "ShapeMismatch", "LibraryWarning", "Context", "Device", "Predicate", "devices",
           "default_context", "nonzero", "argwhere", "flatnonzero", "nonzero_static",
           "nonzero_batched", "nonzero_channels", "count_nonzero", "select", "extract", "where",
           "warmup", "use_bundle", "stats", "library_version", "library_path"]

_L = _core.L


def library_version():
    """The version of the libclnz this module loaded."""
    return _L.clnz_version_string().decode()


def library_path():
    """How this module found libclnz: CLNZ_LIBRARY's path, the copy that
    pip built into the package, the path from pkg-config, or the name the
    loader resolved."""
    return _L._name


# ---- host or device -----------------------------------------------------------
def _is_device(a):
    m = sys.modules.get("pyopencl.array")  # only a program that made one has it loaded
    return m is not None and isinstance(a, m.Array)


def _backend(context, *args):
    """The half that runs a call (_device as soon as one argument is a
    pyopencl array) and its clnz context. Checks what every call checks: the
    context's type, and no masked array among the arguments."""
    ctx = None if context is None else _core.context_arg(context)
    for a in args:
        _core.plain_array(a)
    on_device = [a for a in args if _is_device(a)]
    if not on_device:
        return _host, ctx or default_context()
    from . import _device
    return _device, _device.context_for(context, on_device)


def _on(be, ctx, v, what):
    """An array argument where the call runs: a numpy 0-d array or scalar is
    uploaded for a device call (a few bytes); a larger host array is not."""
    if be is _host or v is None or _is_device(v) or _core.is_scalar(v):
        return v
    if np.ndim(v) == 0:
        return be.upload(ctx, v)
    raise TypeError(f"clnz: {what} is a host array in a call on pyopencl arrays: put it on the "
                    f"device first (pyopencl.array.to_device)")


def _host_int(v):
    """An int from a host count, or from a device array of one (a read)."""
    return int(v.get().reshape(-1)[0] if _is_device(v) else np.reshape(v, -1)[0])


def _form(as_tuple, layout):
    """numpy's tuple, torch's tuple, or an array in a layout."""
    if as_tuple is not None and not isinstance(as_tuple, (bool, np.bool_)):
        raise TypeError(f"clnz: as_tuple must be True, False or None, not {as_tuple!r}")
    if layout is not None:
        if as_tuple:
            raise ValueError("clnz: as_tuple=True returns a tuple: it takes no layout")
        return layout
    return "numpy" if as_tuple is None else "torch" if as_tuple else "rows"


def _coordinates(a, rule, as_tuple, layout, index, width, order, pred, context):
    """nonzero and nonzero_channels: the form, then one call."""
    form = _form(as_tuple, layout)
    be, ctx = _backend(context, a)
    p = _core.predicate(pred)
    if form == "numpy" and rule is None and np.ndim(a) == 0:
        raise ValueError("clnz: calling nonzero on 0d arrays is not allowed (as numpy >= 2.1): "
                         "use clnz.nonzero(np.atleast_1d(a)), or as_tuple=True as torch does")
    if form == "numpy" and rule is not None and np.ndim(a) == 1:
        # the pixels are every dimension but the last: none here, and numpy's tuple of a 0-d
        # pixel array is refused as nonzero's is (the library itself refuses rank 0)
        raise ValueError("clnz: nonzero_channels' tuple needs an array of at least 2 dimensions "
                         "(pixels, then channels), not a 1-d one (one pixel, a 0d array): "
                         "reshape it to (n, 1) for n pixels, or pass as_tuple=True")
    if form in ("numpy", "torch"):
        cols, _ = be.nonzero(ctx, a, p, _core.options("columns", index, width, order), rule)
        return tuple(cols[i] for i in range(cols.shape[0]))
    return be.nonzero(ctx, a, p, _core.options(form, index, width, order), rule)[0]


# ---- nonzero ------------------------------------------------------------------
def nonzero(a, as_tuple=None, layout=None, index="int64", width=None, order="rc", pred=None,
            context=None):
    """numpy.nonzero: a tuple of ndim index arrays (a 0-d input is an error,
    as in numpy >= 2.1). torch's forms, named: as_tuple=False the (z, ndim)
    array of torch.nonzero (np.argwhere), as_tuple=True torch's tuple (a 0-d
    input counts as 1-d). layout="rows" (z, width), "columns" (width, z) or
    "flat" (z,) returns that array. width: coordinates per entry (>= the rank
    without leading 1s; the extra leading ones are 0); order="xy" reverses
    each entry ((x, y) = (column, row), cv::findNonZero). Until clnz 0.2 the
    default was the (z, ndim) array: pass as_tuple=False for it. index:
    a numpy dtype or its numpy name ("int32", "<i4"; "i8" is a ValueError:
    int64 to numpy, int8 to clnz's command line)."""
    return _coordinates(a, None, as_tuple, layout, index, width, order, pred, context)


def argwhere(a, index="int64", width=None, order="rc", pred=None, context=None):
    """np.argwhere: (z, ndim) coordinates in C order."""
    return nonzero(a, False, None, index, width, order, pred, context)


def flatnonzero(a, index="int64", pred=None, context=None):
    """np.flatnonzero: flat C-order indices of the selected elements."""
    return nonzero(a, None, "flat", index, None, "rc", pred, context)


def nonzero_static(a, size, fill_value=-1, layout="rows", index="int64", width=None, order="rc",
                   pred=None, context=None):
    """torch.nonzero_static: exactly `size` entries, the first min(z, size)
    real and the rest fill_value; returns (entries, z) with the true count z
    (on the device, as a 0-d array, for a pyopencl input: nothing is read)."""
    be, ctx = _backend(context, a)
    if size is None:  # options() reads None as no static size: not what this call is for
        raise TypeError("clnz: size must be an integer, not NoneType")
    opts = _core.options(layout, index, width, order, size, fill_value)
    return be.nonzero(ctx, a, _core.predicate(pred), opts)


def nonzero_batched(a, pred=None, index="int64", order="rc", context=None):
    """Dimension 0 is a batch: (coordinates, offsets) as CSR, item b's
    entries coordinates[offsets[b]:offsets[b + 1]], each the coordinates of
    the other ndim - 1 dimensions (np.argwhere of each item, concatenated);
    offsets int64 (B + 1,), offsets[B] the total. One pipeline for the whole
    batch."""
    be, ctx = _backend(context, a)
    return be.batched(ctx, a, _core.predicate(pred), _core.options("rows", index, None, order))


def nonzero_channels(a, rule="any", as_tuple=None, layout=None, index="int64", width=None,
                     order="rc", pred=None, context=None):
    """nonzero over pixels: the last dimension holds each pixel's channels,
    and a pixel is selected when pred holds on any (rule="any") or all
    (rule="all") of them: np.nonzero(pred(a).any(axis=-1)), or .all(...).
    The forms and options are nonzero's. A np.matrix is read as the ndarray
    it holds (np.asarray(m)), here and in nonzero_static and
    nonzero_batched, which numpy has not."""
    r = _core.choice(_lib.CHANNEL_RULES, rule, "channel rule")
    return _coordinates(a, r, as_tuple, layout, index, width, order, pred, context)


# ---- count --------------------------------------------------------------------
def count_nonzero(a, axis=None, *, keepdims=False, pred=None, context=None):
    """np.count_nonzero: the count of selected elements (an int), or with
    axis (an int or a tuple, negative from the end) the counts along those
    axes (int64), counted on the device; keepdims keeps the counted axes as
    1s. For a pyopencl input every count stays on the device (an int64
    pyopencl array, 0-d for axis=None). A np.matrix is counted whole only
    (an int), as numpy counts one: along axes, or with keepdims, numpy
    raises TypeError, and so does clnz (a matrix would keep 2 dimensions
    where an ndarray drops them: say which you want). Until clnz 0.2 the
    second argument was pred: pass pred= by name."""
    be, ctx = _backend(context, a)
    keepdims = _core.flag(keepdims, "keepdims")
    if isinstance(a, np.matrix) and (axis is not None or keepdims):
        raise TypeError("clnz: count_nonzero of a np.matrix counts it whole (numpy's own "
                        "raises TypeError along axes or with keepdims, as matrix.sum takes no "
                        "keepdims): pass np.asarray(m) for an ndarray of counts, or "
                        "np.asmatrix(clnz.count_nonzero(np.asarray(m), axis, keepdims=True)) "
                        "for a matrix, as m.sum(axis) keeps 2 dimensions")
    p = _core.predicate(pred)
    ndim, shape = np.ndim(a), np.shape(a)
    counted = tuple(range(ndim)) if axis is None else _core.axes(axis, ndim)
    if len(counted) < ndim:
        counts = be.count_axes(ctx, a, counted, p)
    else:
        n = be.count(ctx, a, p)
        counts = n if axis is None or be is not _host else np.intp(n)
        if not keepdims:
            return counts
        if be is _host:
            counts = np.asarray(counts, np.intp)
    if keepdims:
        counts = counts.reshape(tuple(1 if d in counted else shape[d] for d in range(ndim)))
    return counts[()] if be is _host and counts.ndim == 0 else counts  # numpy's 0-d: a scalar


# ---- select, extract, where -------------------------------------------------
def select(x, mask=None, pred=None, context=None):
    """The values of x where pred (default nonzero) holds on mask (an array of
    x's shape, any dtype) or on x itself, in C order: x[mask != 0],
    torch.masked_select(x, mask). 1-D, x's dtype; for a np.matrix x a
    (1, z) matrix, as x[mask] gives. (np.extract takes the condition
    first: clnz.extract.)"""
    be, ctx = _backend(context, x, mask)
    values = be.select(ctx, x, _on(be, ctx, mask, "mask"), _core.predicate(pred))
    return values.view(np.matrix) if isinstance(x, np.matrix) else values  # (1, z)


def extract(condition, arr, pred=None, context=None):
    """np.extract: the elements of arr where condition is nonzero (or pred
    holds on it), both taken flat in C order; a condition of arr's shape is
    read where it lies. Like numpy, a shorter condition covers the first
    elements of arr, and a longer one must select nothing past arr's end
    (IndexError)."""
    be, ctx = _backend(context, condition, arr)
    if be is _host:
        condition, arr = np.asarray(condition), np.asarray(arr)
    condition = _on(be, ctx, condition, "condition")
    p = _core.predicate(pred)
    names = ("arr", "condition")
    if tuple(condition.shape) == tuple(arr.shape):
        return be.select(ctx, arr, condition, p, names)
    c, v = be.ravel(ctx, condition), be.ravel(ctx, arr)
    if c.size > v.size:
        past = c[v.size:]
        if _host_int(count_nonzero(past, pred=pred, context=ctx)):  # numpy's error, its words
            first = _host_int(flatnonzero(past, pred=pred, context=ctx)[:1])
            raise IndexError(f"index {first + v.size} is out of bounds for axis 0 with size "
                             f"{v.size}")
        c = c[:v.size]
    return be.select(ctx, v[:c.size], c, p, names)


def _result_dtype(be, x, y):
    """np.result_type of where's two values. A pyopencl array promotes by its
    dtype alone (its values stay on the device); numpy applies its own rules
    to host arrays, numpy scalars and Python scalars."""
    def proxy(v):
        return np.empty(1, v.dtype) if _is_device(v) else v if _core.is_scalar(v) else \
            np.asarray(v)
    px, py = proxy(x), proxy(y)
    try:
        dt = np.result_type(px, py)
    except TypeError:  # numpy finds no common dtype (a str and a number): none clnz has
        names = [type(v).__name__ if _core.is_scalar(v) else str(v.dtype) for v in (px, py)]
        raise TypeError(f"clnz: where's result: unsupported dtypes {names[0]} and {names[1]} "
                        f"(one of {', '.join(d.name for d in _core.DTYPES)})") from None
    if dt.kind == "O":  # the message of an object array would not say where this one came from
        raise TypeError("clnz: where's result: unsupported dtype object (np.result_type of x "
                        "and y: None, an int beyond 64 bits, or an object array among them): "
                        "the device holds no Python objects; give x and y a numeric dtype, "
                        "e.g. np.asarray(x, np.float64)")
    _core.dtype_index(dt, "where's result")
    return dt


def _promote(be, ctx, x, y):
    """x and y cast to numpy's result dtype. A Python scalar stays one (the
    library writes it in the other operand's dtype), except where two
    scalars would give the library's int64/float64 and numpy another dtype
    (two bools: bool): then x becomes a 0-d array of that dtype."""
    dt = _result_dtype(be, x, y)
    if _core.is_scalar(x) and _core.is_scalar(y):
        natural = np.float64 if isinstance(x, float) or isinstance(y, float) else np.int64
        if dt != natural:
            x = _on(be, ctx, np.asarray(x, dt), "x")
        return x, y
    return tuple(v if _core.is_scalar(v) else be.cast(ctx, _on(be, ctx, v, what), dt, what)
                 for v, what in ((x, "x"), (y, "y")))


class _NotGiven:
    """where's x and y when they are not given: None is a value there, as
    in np.where (an object one, which clnz refuses)."""

    def __repr__(self):
        return "<not given>"


_NOT_GIVEN = _NotGiven()


def where(condition, x=_NOT_GIVEN, y=_NOT_GIVEN, pred=None, context=None):
    """np.where. With one argument: np.nonzero(condition) (pred as nonzero's).
    With three: x where pred (default nonzero) holds on condition, else y,
    broadcast as numpy does, in numpy's result dtype (np.result_type(x, y):
    arrays are cast, Python scalars written in it exactly). A result numpy
    would make of dtype object (None, an int beyond 64 bits, an object
    array among x and y) is a TypeError."""
    if x is _NOT_GIVEN and y is _NOT_GIVEN:
        return nonzero(condition, pred=pred, context=context)
    if x is _NOT_GIVEN or y is _NOT_GIVEN:
        raise ValueError("clnz: either both or neither of x and y should be given")
    be, ctx = _backend(context, condition, x, y)
    x, y = _promote(be, ctx, x, y)
    return be.where(ctx, _on(be, ctx, condition, "condition"), x, y, _core.predicate(pred))
