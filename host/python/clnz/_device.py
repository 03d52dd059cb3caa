"""_device.py: the calls on pyopencl arrays, through the library's
device-resident calls. Inputs stay where they are (buffer, offset and
strides as they come), results are pyopencl arrays on the clnz context's
queue, and every step waits on the events of the one before (the arrays'
own `events` included), so nothing blocks the host. A result whose size is
the count (nonzero, select, batched) comes from the library's *_alloc
calls: one pass counts, the count (8 bytes) is read back once, and the
library allocates a buffer of exactly that size and enqueues the writing
into it; the array is made over that buffer. Imported only once a pyopencl
array is seen."""
import ctypes
import os
import threading
import weakref

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.elementwise
import pyopencl.tools

from . import _core, _lib
from ._core import L

# ---- contexts ---------------------------------------------------------------------
_wrapped = weakref.WeakKeyDictionary()  # pyopencl queue -> the clnz context around it
_wrapped_lock = threading.Lock()


def _new_wrapped_lock():
    # held across Context(queue=...) by a thread the forked child lacks (see
    # _core._new_default_lock)
    global _wrapped_lock
    _wrapped_lock = threading.Lock()


os.register_at_fork(after_in_child=_new_wrapped_lock)


def context_for(context, arrays):
    """The clnz context a call on these arrays runs on: the one given, else
    one wrapped around the first array's queue (kept as long as the queue).
    Every array must live in that context's OpenCL context."""
    if context is None:
        q = arrays[0].queue
        if q is None:
            raise ValueError("clnz: the array has no queue: pass context=clnz.Context(queue=...)")
        with _wrapped_lock:
            context = _wrapped.get(q)
            if context is None:
                context = _core.Context(queue=q)
                context._queue = weakref.ref(q)  # the cache must not keep the queue alive
                _wrapped[q] = context
    with context._use() as h:
        cl_ctx = L.clnz_context_cl_context(h)
    for a in arrays:
        if a.context.int_ptr != cl_ctx:
            raise ValueError("clnz: a pyopencl array from another OpenCL context than the clnz "
                             "context's (pass context=clnz.Context(queue=...) on its queue)")
    return context


def _scratch(ctx):
    """A small buffer to hand the library for an empty array, which pyopencl
    gives no buffer but the library wants one for."""
    if getattr(ctx, "_scratch", None) is None:
        ctx._scratch = cl.Buffer(ctx.cl_context, cl.mem_flags.READ_WRITE, 8)
    return ctx._scratch.int_ptr


def mem(a):
    """The cl_mem of an array (None for no array, or an empty one)."""
    return a.base_data.int_ptr if a is not None and a.base_data is not None else None


def native(a, what):
    """Refuses a byte-swapped array (to_device keeps a numpy array's byte
    order). The kernels read the device's own and pyopencl computes nothing
    with one either; converting it here would be a full copy the caller did
    not ask for (on the device, or through the host, which device calls
    never touch), where converting the numpy array before the upload costs
    no more than the upload."""
    dt = a.dtype
    if dt.fields is None and not dt.isnative:
        raise TypeError(f"clnz: {what}: unsupported dtype {dt} (a byte-swapped pyopencl array, "
                        f"which the device would read wrong and pyopencl cannot compute with "
                        f"either: upload it in native byte order, "
                        f"cla.to_device(q, h.astype(h.dtype.newbyteorder('='))))")
    return a


class Input:
    """A pyopencl array as the library's tensor, buffer and byte offset, and
    the events to wait for before reading it."""

    def __init__(self, ctx, a, what, view=None):
        _core.dtype_index(native(a, what).dtype, what)
        if any(s % a.dtype.itemsize for s in a.strides):
            raise ValueError(f"clnz: {what}: strides {a.strides} are not whole elements")
        self.array = a
        self.view = view or _core.View(a.dtype, a.shape,
                                       [s // a.dtype.itemsize for s in a.strides])
        self.buf = mem(a) or _scratch(ctx)
        self.offset = a.offset
        self.waits = [e.int_ptr for e in a.events]

    def as_view(self, ctx, shape, strides):
        return Input(ctx, self.array, "input", _core.View(self.array.dtype, shape, strides))


def enqueue(ctx, fn, *args, waits=()):
    """Calls a clnz_*_enqueue function with the OpenCL triple; the event of
    its last command (ours to release: pyopencl does it)."""
    waits = [w for w in waits if w]
    wl = (ctypes.c_void_p * len(waits))(*waits) if waits else None
    ev = ctypes.c_void_p()
    ctx._call(fn, *args, len(waits), wl, ctypes.byref(ev))
    return cl.Event.from_int_ptr(ev.value, retain=False) if ev.value else None


def done(ev, *arrays):
    """Marks arrays as written by ev: pyopencl's own operations wait on it."""
    if ev is not None:
        for a in arrays:
            a.add_event(ev)
    return ev


def enqueue_exact(ctx, fn, head, count_buf, waits=()):
    """Calls a clnz_*_alloc function: (the result's buffer, or None for a
    result of no bytes; the count; the event of its last command)."""
    out, z = ctypes.c_void_p(), ctypes.c_uint64()
    ev = enqueue(ctx, fn, *head, ctypes.byref(out), ctypes.byref(z), count_buf, 0, waits=waits)
    buf = cl.Buffer.from_int_ptr(out.value, retain=False) if out.value else None
    return buf, z.value, ev


def over(ctx, buf, shape, dtype):
    """A pyopencl array over a buffer the library allocated (None: the
    result has no bytes, and the array none either)."""
    if buf is None:
        return cla.empty(ctx.queue, shape, dtype)
    return cla.Array(ctx.queue, shape, dtype, data=buf)


def _entries_shape(opts, width, capacity):
    layout = opts.layout
    if layout == _lib.LAYOUTS["flat"]:
        return (capacity,)
    return (capacity, width) if layout == _lib.LAYOUTS["rows"] else (width, capacity)


# ---- the operations ---------------------------------------------------------
def nonzero(ctx, a, pred, opts, rule=None):
    """(entries, count) with the count a 0-d int64 array on the device:
    exactly z entries, or opts.size with a static size (then nothing is
    read back: the capacity form)."""
    src = Input(ctx, a, "input")
    q = ctx.queue
    rank = len(src.view.shape) - (rule is not None)
    width = L.clnz_nonzero_width(ctypes.byref(opts), max(rank, 0))
    idx = _core.INDEX_DTYPES[opts.index_type]
    count = cla.empty(q, (), np.int64)
    head = (src.view.ref(), src.buf, src.offset, ctypes.byref(pred)) + \
        (() if rule is None else (rule,)) + (ctypes.byref(opts),)
    if opts.has_size:
        out = cla.empty(q, _entries_shape(opts, width, opts.size), idx)
        fn = L.clnz_nonzero_enqueue if rule is None else L.clnz_nonzero_channels_enqueue
        done(enqueue(ctx, fn, *head, mem(out), 0, opts.size, mem(count), 0, waits=src.waits),
             out, count)
        return out, count
    fn = L.clnz_nonzero_alloc if rule is None else L.clnz_nonzero_channels_alloc
    buf, z, ev = enqueue_exact(ctx, fn, head, mem(count), src.waits)
    out = over(ctx, buf, _entries_shape(opts, width, z), idx)
    done(ev, out, count)
    return out, count


def batched(ctx, a, pred, opts):
    src = Input(ctx, a, "input")
    shape = src.view.shape
    offsets = cla.empty(ctx.queue, ((shape[0] if shape else 0) + 1,), np.int64)
    idx = _core.INDEX_DTYPES[opts.index_type]
    head = (src.view.ref(), src.buf, src.offset, ctypes.byref(pred), ctypes.byref(opts))
    buf, z, ev = enqueue_exact(ctx, L.clnz_nonzero_batched_alloc, head, mem(offsets),
                               src.waits)
    out = over(ctx, buf, (z, max(len(shape) - 1, 0)), idx)
    done(ev, out, offsets)
    return out, offsets


def count(ctx, a, pred):
    """The count as a 0-d int64 array on the device."""
    src = Input(ctx, a, "input")
    out = cla.empty(ctx.queue, (), np.int64)
    done(enqueue(ctx, L.clnz_count_enqueue, src.view.ref(), src.buf, src.offset,
                 ctypes.byref(pred), mem(out), 0, waits=src.waits), out)
    return out


def count_axes(ctx, a, counted, pred):
    """Counts over the axes `counted`: a batched count of the view with the
    kept axes first (strides permuted, no copy)."""
    src = Input(ctx, a, "input")
    shape, strides = src.view.shape, src.view.strides
    kept = [d for d in range(len(shape)) if d not in counted]
    order = kept + list(counted)
    view = src.as_view(ctx, [shape[d] for d in order], [strides[d] for d in order])
    counts = cla.empty(ctx.queue, [shape[d] for d in kept], np.int64)
    done(enqueue(ctx, L.clnz_count_batched_enqueue, view.view.ref(), view.buf, view.offset,
                 ctypes.byref(pred), len(kept), mem(counts) or _scratch(ctx), 0,
                 waits=view.waits), counts)
    return counts


def select(ctx, x, mask, pred, names=("x", "mask")):
    xs = Input(ctx, x, names[0])
    ms = Input(ctx, mask, names[1]) if mask is not None else None
    head = (xs.view.ref(), xs.buf, xs.offset, ms.view.ref() if ms else None,
            ms.buf if ms else None, ms.offset if ms else 0, ctypes.byref(pred))
    buf, z, ev = enqueue_exact(ctx, L.clnz_select_alloc, head, None,
                               xs.waits + (ms.waits if ms else []))
    out = over(ctx, buf, (z,), xs.view.dtype)
    done(ev, out)
    return out


def _operand(ctx, v, what):
    if _core.is_scalar(v):
        return _lib.Operand(None, _core.scalar(v, what)), None
    src = Input(ctx, v, what)
    return _lib.Operand(ctypes.pointer(src.view.tensor), _lib.Scalar()), src


def where(ctx, cond, x, y, pred):
    c = Input(ctx, cond, "condition")
    xo, xs = _operand(ctx, x, "x")
    yo, ys = _operand(ctx, y, "y")
    dtype, rank = ctypes.c_int(), ctypes.c_int()
    shape = (ctypes.c_int64 * _lib.MAX_RANK)()
    ctx._call(L.clnz_where_result, c.view.ref(), ctypes.byref(xo), ctypes.byref(yo),
              ctypes.byref(dtype), ctypes.byref(rank), shape)
    out = cla.empty(ctx.queue, tuple(shape[:rank.value]), _core.DTYPES[dtype.value])
    waits = c.waits + (xs.waits if xs else []) + (ys.waits if ys else [])
    done(enqueue(ctx, L.clnz_where_enqueue, c.view.ref(), c.buf, c.offset, ctypes.byref(pred),
                 ctypes.byref(xo), xs.buf if xs else None, xs.offset if xs else 0,
                 ctypes.byref(yo), ys.buf if ys else None, ys.offset if ys else 0,
                 mem(out) or _scratch(ctx), 0, waits=waits), out)
    return out


# ---- what the public layer needs besides the operations -----------------------
def contiguous(ctx, a):
    """A C-order copy of a strided array, made on the device by clnz itself:
    where(a, a, a) picks a from both sides, bit for bit."""
    if a.flags.c_contiguous:
        return a
    return where(ctx, a, a, a, _core.predicate(None))


_HALF = "__global half *"  # read and written with vload_half/vstore_half: no cl_khr_fp16 needed


def _half_kernel(ctx, src, dst):
    """An elementwise cast from or to float16, which pyopencl's own astype
    cannot map; through double where the device has it (one rounding)."""
    wide = "double" if "cl_khr_fp64" in ctx.queue.device.extensions.split() else "float"
    ctype = pyopencl.tools.dtype_to_ctype
    if src == np.float16:
        args = f"__global const ushort *s, __global {ctype(dst)} *d"
        body = f"d[i] = ({ctype(dst)})({wide})vload_half(i, (__global const half *)s)"
        if dst in (np.float32, np.float64):
            # a NaN as numpy's astype widens it, sign and payload kept bit for
            # bit (vload_half quiets a signalling one on x86, say)
            bits, exp, shift = ("uint", "0x7f800000u", 13) if dst == np.float32 else \
                ("ulong", "0x7ff0000000000000ul", 42)
            body += (f"; if ((s[i] & 0x7fff) > 0x7c00) d[i] = as_{ctype(dst)}(({bits})(s[i] >> 15)"
                     f" << {8 * dst.itemsize - 1} | {exp} | ({bits})(s[i] & 0x3ff) << {shift})")
    else:
        args = f"__global const {ctype(src)} *s, __global ushort *d"
        body = f"vstore_half_rte(({wide})s[i], i, ({_HALF})d)"
    return pyopencl.elementwise.ElementwiseKernel(ctx.cl_context, args, body, "clnz_cast_half")


def cast(ctx, a, dtype, what):
    """a as dtype on the device: bool through clnz's where (pyopencl maps no
    bool), float16 through vload_half/vstore_half, the rest pyopencl's astype."""
    native(a, what)
    if a.dtype == dtype:
        return a
    a = contiguous(ctx, a)
    if a.dtype == np.bool_:
        one = cla.to_device(ctx.queue, np.ones((), dtype))
        return where(ctx, a, one, 0, _core.predicate(None))
    if np.float16 in (a.dtype, dtype):
        out = cla.empty(ctx.queue, (a.size,), dtype)  # 1-D: pyopencl views no 0-d array
        src = a.reshape(a.size)
        src = src.view(np.uint16) if a.dtype == np.float16 else src
        dst = out.view(np.uint16) if dtype == np.float16 else out
        if a.size:
            done(_half_kernel(ctx, a.dtype, np.dtype(dtype))(src, dst), out)
        return out.reshape(a.shape)
    return a.astype(dtype)


def ravel(ctx, a):
    return contiguous(ctx, a).reshape(-1)


def upload(ctx, v):
    """A host scalar or 0-d array on the device, in native byte order (the
    library's, and what numpy's promotion gives a byte-swapped one)."""
    a = np.asarray(v)
    if a.dtype.fields is None and not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return cla.to_device(ctx.queue, a)
