"""clnz: nonzero, count_nonzero, select and where of numpy arrays on an OpenCL
device (any GPU, or the CPU through PoCL), over libclnz with ctypes.

    import numpy as np, clnz
    a = np.random.rand(1000, 1000) > 0.9
    clnz.nonzero(a)                  # (z, 2) int64, like torch.nonzero / np.argwhere
    clnz.nonzero(a, as_tuple=True)   # like np.nonzero
    clnz.count_nonzero(a, pred=("gt", 0))
    clnz.where(a, 1.0, 0.0)

Arrays go in as they are: a strided view is passed with its strides, not
copied (only a byte-swapped array, or one whose strides are not whole
elements, is copied first). Results are numpy arrays that own the library's
memory, with no copy. Calls use a context on the default device (CLNZ_DEVICE,
else the first GPU, else the first device), made on first use; pass
context=clnz.Context("P:D") for another. Failures raise clnz.Error with the
library's message.
"""
import ctypes
import threading
import weakref

import numpy as np

from . import _lib

__version__ = "0.2.0"
__all__ = ["Error", "Context", "Predicate", "devices", "default_context", "nonzero", "argwhere",
           "flatnonzero", "nonzero_static", "count_nonzero", "select", "where", "library_version",
           "library_path"]

_L = _lib.load()


class Error(RuntimeError):
    """A failed clnz call: `status` is the library's code (OpenCL's own codes
    pass through), `name` its constant's name."""

    def __init__(self, status, message):
        self.status = status
        self.name = _L.clnz_status_string(status).decode().split(":")[0]
        super().__init__(f"clnz: {message}" if message else f"clnz: {self.name}")


def library_version():
    """The version of the libclnz this module loaded."""
    return _L.clnz_version_string().decode()


def library_path():
    """How this module found libclnz: CLNZ_LIBRARY's path, the path from
    pkg-config, or the name the loader resolved."""
    return _L._name


# ---- devices and contexts -------------------------------------------------
class Device:
    """One OpenCL device as `clnz devices` lists it."""

    def __init__(self, info):
        self.selector = f"{info.platform}:{info.device}"
        self.is_default = bool(info.is_default)
        self.platform_name = info.platform_name.decode(errors="replace")
        self.name = info.device_name.decode(errors="replace")
        self.type = info.device_type.decode()
        self.version = info.version.decode(errors="replace")
        self.global_mem_size = info.global_mem_size
        self.max_alloc_size = info.max_alloc_size

    def __repr__(self):
        return f"<clnz.Device {self.selector} {self.type} {self.name!r} [{self.platform_name}]>"


def devices():
    """Every OpenCL device, in `clnz devices`' order."""
    count = ctypes.c_int()
    st = _L.clnz_list_devices(None, 0, ctypes.byref(count))
    if st:
        raise Error(st, "")
    infos = (_lib.DeviceInfo * max(count.value, 1))()
    st = _L.clnz_list_devices(infos, count.value, ctypes.byref(count))
    if st:
        raise Error(st, "")
    return [Device(infos[i]) for i in range(count.value)]


class Context:
    """A clnz context on one device: "P:D" as `clnz devices` lists it, or None
    for CLNZ_DEVICE, else the first GPU, else the first device. Programs it
    compiles are cached on disk. close() (or a with block) releases it now;
    otherwise it goes with the object. One context may serve several threads
    (its calls then take turns); a context each runs them in parallel."""

    def __init__(self, device=None):
        handle, msg = ctypes.c_void_p(), ctypes.create_string_buffer(512)
        sel = device.encode() if device is not None else None
        st = _L.clnz_context_create(sel, ctypes.byref(handle), msg, len(msg))
        if st:
            raise Error(st, msg.value.decode(errors="replace"))
        self._handle = handle.value
        self._selector = device
        self._release = weakref.finalize(self, _L.clnz_context_release, handle.value)

    @property
    def device(self):
        """The Device this context runs on."""
        for d in devices():
            if (d.selector == self._selector) if self._selector else d.is_default:
                return d
        return None

    def close(self):
        self._release()
        self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<clnz.Context on {self.device!r}>" if self._handle else "<clnz.Context closed>"

    def _check(self, status):
        if status:
            raise Error(status, _L.clnz_context_message(self._handle).decode(errors="replace"))

    def _h(self):
        if self._handle is None:
            raise ValueError("clnz: this context is closed")
        return self._handle


_default = None
_default_lock = threading.Lock()


def default_context():
    """The context the calls use when given none, made on first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Context()
        return _default


# ---- arguments --------------------------------------------------------------
class Predicate:
    """x OP value for op in nonzero, eq, ne, lt, le, gt, ge, compared the way
    numpy compares an array with a Python scalar. A call's `pred` may also be
    a tuple (op, value) or just "nonzero"."""

    def __init__(self, op, value=0):
        if op not in _lib.OPS:
            raise ValueError(f"clnz: unknown predicate {op!r} (one of {', '.join(_lib.OPS)})")
        self.op, self.value = op, value
        self._c = _lib.Predicate(_lib.OPS[op], _value(value, "predicate value"))

    def __repr__(self):
        return f"clnz.Predicate({self.op!r}, {self.value!r})"


def _value(v, what):
    """The library's scalar of a Python or numpy scalar: ints exactly, floats
    as float64."""
    if isinstance(v, (bool, np.bool_, int, np.integer)):
        v = int(v)
        if -(1 << 63) <= v < (1 << 63):
            return _lib.Scalar(_lib.VALUE_INT, _lib.Value(i=v))
        if v < (1 << 64):
            return _lib.Scalar(_lib.VALUE_UINT, _lib.Value(u=v))
        raise ValueError(f"clnz: {what} {v} does not fit in 64 bits")
    if isinstance(v, (float, np.floating)):
        return _lib.Scalar(_lib.VALUE_FLOAT, _lib.Value(f=float(v)))
    raise TypeError(f"clnz: {what} must be an int or a float, not {type(v).__name__}")


def _predicate(p):
    """The library's predicate for a call's `pred` (None: nonzero)."""
    if p is None:
        return _lib.Predicate(_lib.OPS["nonzero"], _lib.Scalar())
    if isinstance(p, str):
        p = Predicate(p)
    elif isinstance(p, tuple):
        p = Predicate(*p)
    elif not isinstance(p, Predicate):
        raise TypeError(f"clnz: pred must be a Predicate, (op, value) or an op name, "
                        f"not {type(p).__name__}")
    return p._c


class _Input:
    """A numpy array as the library's tensor: shape, strides in elements, and
    the address of logical element 0. Holds what the call needs alive."""

    def __init__(self, a, what):
        a = np.asarray(a)
        if a.dtype.name not in _lib.DTYPES or a.dtype.fields is not None:
            raise TypeError(f"clnz: {what}: unsupported dtype {a.dtype} "
                            f"(one of {', '.join(_lib.DTYPES)})")
        if not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
        if any(s % a.itemsize for s in a.strides):
            a = np.ascontiguousarray(a)
        self.array = a
        n = max(a.ndim, 1)
        self._shape = (ctypes.c_int64 * n)(*a.shape)
        self._strides = (ctypes.c_int64 * n)(*(s // a.itemsize for s in a.strides))
        self.tensor = _lib.Tensor(_lib.DTYPES.index(a.dtype.name), a.ndim, self._shape,
                                  self._strides)
        self.data = ctypes.c_void_p(a.ctypes.data)


def _adopt(ptr, dtype, shape, free):
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


def _index_type(index):
    name = np.dtype(index).name
    if name not in _lib.INDEX_TYPES:
        raise ValueError(f"clnz: index type {name} (one of {', '.join(_lib.INDEX_TYPES)})")
    return _lib.INDEX_TYPES[name]


def _choice(table, value, what):
    if value not in table:
        raise ValueError(f"clnz: unknown {what} {value!r} (one of {', '.join(table)})")
    return table[value]


# ---- nonzero ----------------------------------------------------------------
_INDEX_DTYPES = {0: np.int64, 1: np.int32, 2: np.uint32}


def _nonzero(a, layout, index, width, order, pred, size, fill_value, context):
    ctx = context or default_context()
    src = _Input(a, "input")
    opts = _lib.NonzeroOptions()
    _L.clnz_nonzero_options_init(ctypes.byref(opts))
    opts.layout = _choice(_lib.LAYOUTS, layout, "layout")
    opts.order = _choice(_lib.ORDERS, order, "order")
    opts.index_type = _index_type(index)
    opts.width = 0 if width is None else int(width)
    if size is not None:
        if int(size) < 0:
            raise ValueError(f"clnz: size must be >= 0, not {size}")
        opts.has_size, opts.size, opts.fill = 1, int(size), int(fill_value)
    res = _lib.Result()
    ctx._check(_L.clnz_nonzero(ctx._h(), ctypes.byref(src.tensor), src.data,
                               ctypes.byref(_predicate(pred)), ctypes.byref(opts),
                               ctypes.byref(res)))
    shape = tuple(res.shape[i] for i in range(res.ndim))
    out = _adopt(res.indices, _INDEX_DTYPES[res.index_type], shape,
                 lambda r=res: _L.clnz_result_free(ctypes.byref(r)))
    return out, res.count


def nonzero(a, as_tuple=False, layout="rows", index="int64", width=None, order="rc", pred=None,
            context=None):
    """The coordinates of the selected elements (pred, default nonzero), in C
    order: rows (z, ndim) like torch.nonzero; layout="columns" (ndim, z);
    layout="flat" (z,) flat indices; as_tuple=True a tuple of ndim 1-D arrays
    like np.nonzero (a 0-d array counts as 1-d there, as in torch). index:
    int64, int32 or uint32; width: coordinates per entry (>= the rank without
    leading 1s; extra leading columns are 0); order="xy" reverses each entry
    ((x, y) = (column, row), cv::findNonZero)."""
    if as_tuple:
        cols, _ = _nonzero(a, "columns", index, width, order, pred, None, -1, context)
        return tuple(cols[i] for i in range(cols.shape[0]))
    return _nonzero(a, layout, index, width, order, pred, None, -1, context)[0]


def argwhere(a, pred=None, context=None):
    """np.argwhere: (z, ndim) int64."""
    return nonzero(a, pred=pred, context=context)


def flatnonzero(a, pred=None, context=None):
    """np.flatnonzero: flat C-order indices of the selected elements, int64."""
    return nonzero(a, layout="flat", pred=pred, context=context)


def nonzero_static(a, size, fill_value=-1, layout="rows", index="int64", width=None, order="rc",
                   pred=None, context=None):
    """torch.nonzero_static: exactly `size` entries, the first min(z, size)
    real and the rest fill_value; returns (entries, z) with the true count z."""
    return _nonzero(a, layout, index, width, order, pred, size, fill_value, context)


# ---- count, select, where ---------------------------------------------------
def count_nonzero(a, pred=None, context=None):
    """The number of selected elements (np.count_nonzero with no axis)."""
    ctx = context or default_context()
    src = _Input(a, "input")
    count = ctypes.c_int64()
    ctx._check(_L.clnz_count(ctx._h(), ctypes.byref(src.tensor), src.data,
                             ctypes.byref(_predicate(pred)), ctypes.byref(count)))
    return count.value


def _from_array(out):
    shape = tuple(out.shape[i] for i in range(out.rank))
    return _adopt(out.data, np.dtype(_lib.DTYPES[out.dtype]), shape,
                  lambda o=out: _L.clnz_array_free(ctypes.byref(o)))


def select(x, mask=None, pred=None, context=None):
    """The values of x where pred (default nonzero) holds on mask (an array of
    x's shape, any dtype) or on x itself, in C order: x[mask != 0],
    np.extract, torch.masked_select. 1-D, x's dtype."""
    ctx = context or default_context()
    src = _Input(x, "x")
    m = _Input(mask, "mask") if mask is not None else None
    out = _lib.Array()
    ctx._check(_L.clnz_select(ctx._h(), ctypes.byref(src.tensor), src.data,
                              ctypes.byref(m.tensor) if m else None, m.data if m else None,
                              ctypes.byref(_predicate(pred)), ctypes.byref(out)))
    return _from_array(out)


def _operand(v, what):
    """An array (numpy scalars count as 0-d arrays: they have a dtype) or a
    Python int or float."""
    # np.float64 is a Python float too: check for numpy's scalars first
    if isinstance(v, (bool, int, float)) and not isinstance(v, np.generic):
        return _lib.Operand(None, _value(v, what)), None
    src = _Input(v, what)
    return _lib.Operand(ctypes.pointer(src.tensor), _lib.Scalar()), src


def where(cond, x, y, pred=None, context=None):
    """x where pred (default nonzero) holds on cond, else y, with numpy's
    broadcasting. x and y: arrays of one dtype, or Python scalars: with one
    scalar the result has the array's dtype (the scalar must fit it exactly),
    with two it is float64 if either is a float, else int64 (torch.where)."""
    ctx = context or default_context()
    c = _Input(cond, "cond")
    xo, xs = _operand(x, "x")
    yo, ys = _operand(y, "y")
    out = _lib.Array()
    ctx._check(_L.clnz_where(ctx._h(), ctypes.byref(c.tensor), c.data,
                             ctypes.byref(_predicate(pred)), ctypes.byref(xo),
                             xs.data if xs else None, ctypes.byref(yo), ys.data if ys else None,
                             ctypes.byref(out)))
    return _from_array(out)
