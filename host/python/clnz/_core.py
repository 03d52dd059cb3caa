"""_core.py: what the host (numpy) and the device (pyopencl) halves of the
module share: the loaded library, its dtype table, errors, devices and
contexts, predicates, the checks of every integer argument, nonzero's
options, and tensor views (shape and strides in elements)."""
import contextlib
import ctypes
import operator
import os
import sys
import threading
import warnings
import weakref

import numpy as np

from . import _lib

L = _lib.load()

# numpy's dtypes in clnz_dtype's order, from the library's own table
DTYPES = [np.dtype(s) for s in _lib.dtypes(L)]
_DTYPE_INDEX = {dt: i for i, dt in enumerate(DTYPES)}
INDEX_DTYPES = {0: np.dtype(np.int64), 1: np.dtype(np.int32), 2: np.dtype(np.uint32)}
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
C_INT_MAX = (1 << 31) - 1
AxisError = getattr(getattr(np, "exceptions", np), "AxisError")


def status_name(status):
    """The constant's name of a status (CLNZ_ERROR_INVALID_VALUE, CL_...)."""
    return L.clnz_status_string(status).decode().split(":")[0]


# The statuses of an allocation that failed: the library's (a result, its own buffers), the
# device's (clCreateBuffer) and the OpenCL runtime's. Not CL_OUT_OF_RESOURCES: drivers use it
# for other limits too, and so does the library (kernels per program).
_OUT_OF_MEMORY = ("CLNZ_ERROR_OUT_OF_HOST_MEMORY", "CL_MEM_OBJECT_ALLOCATION_FAILURE",
                  "CL_OUT_OF_HOST_MEMORY")


class Error(RuntimeError):
    """A failed clnz call: `status` is the library's code (OpenCL's own codes
    pass through), `name` its constant's name. A failed allocation's is an
    OutOfMemory, shapes that do not fit a ShapeMismatch, as
    OSError(errno.ENOENT, ...) is a FileNotFoundError."""

    def __new__(cls, status, message):
        if cls is Error and status_name(status) in _OUT_OF_MEMORY:
            cls = OutOfMemory
        elif cls is Error and status_name(status) == "CLNZ_ERROR_SHAPE_MISMATCH":
            cls = ShapeMismatch
        return super().__new__(cls, status, message)

    def __init__(self, status, message):
        self.status, self._message = status, message
        self.name = status_name(status)
        super().__init__(f"clnz: {message}" if message else f"clnz: {self.name}")

    def __reduce__(self):
        # BaseException's gives the formatted message alone, which __init__ does not take:
        # unpickling failed, and an Error raised in a multiprocessing worker killed the pool
        return type(self), (self.status, self._message), self.__dict__


class OutOfMemory(Error, MemoryError):
    """A clnz.Error of an allocation that failed (CLNZ_ERROR_OUT_OF_HOST_MEMORY,
    CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_HOST_MEMORY): a MemoryError
    too, so that `except MemoryError` catches it as it catches numpy's."""


class ShapeMismatch(Error, ValueError):
    """A clnz.Error of shapes that do not fit together (CLNZ_ERROR_SHAPE_MISMATCH:
    where's operands that do not broadcast, select's mask of another shape): a
    ValueError too, so that `except ValueError` catches it as it catches
    numpy's "operands could not be broadcast together"."""


class LibraryWarning(UserWarning):
    """What the library noted on a call that succeeded without something
    (a cache folder it cannot write, so every process compiles again; tuning
    that failed; a bundle program the driver refused): issued once per
    context and message."""


def _numpy_reads(name):
    try:
        return np.dtype(name)
    except (TypeError, ValueError):
        return None


# The command line's names of the dtypes ("u8", "i16", "f32", ...). A string names a dtype
# here as np.dtype reads it, so that the same string means the same dtype to numpy and to
# clnz; the command line's names that numpy reads otherwise ("u8": uint64, "i8": int64,
# "f16": float128) would pick one of two meanings silently, and are refused with both
# (_CLASHES); the others numpy does not read at all ("f32": a hint, _CLI_ONLY).
_CLI_NAMES = dict(zip(_lib.dtype_names(L), DTYPES))
_CLASHES = {n: dt for n, dt in _CLI_NAMES.items()
            if _numpy_reads(n) is not None and _numpy_reads(n) != dt}
_CLI_ONLY = {n: dt for n, dt in _CLI_NAMES.items() if _numpy_reads(n) is None}


def _spell(dt):
    return f"np.{dt.name} or '{dt.name}'"


def known_dtype(v, what, allowed=DTYPES):
    """The numpy dtype v names, or None where numpy knows none (None itself
    too: np.dtype(None) is float64); the callers refuse it with their own
    message and exception. A name that numpy and the command line read as
    two dtypes ("u8") is a ValueError that names both, and what to write
    for each of them that is `allowed` here (None where neither is: the
    caller's refusal says enough)."""
    name = v.decode("ascii", "replace") if isinstance(v, bytes) else v
    if isinstance(name, str) and name in _CLASHES:
        ours, numpys = _CLASHES[name], np.dtype(name)
        say = [f"{_spell(dt)} for {whose}" for dt, whose in ((numpys, "numpy's"),
                                                             (ours, "the command line's"))
               if dt in allowed]
        if not say:
            return None
        raise ValueError(f"clnz: {what}: {v!r} names two dtypes, {numpys} to numpy "
                         f"(np.dtype({name!r})) and {ours} to clnz's command line (--dtypes "
                         f"{name}): write {', '.join(say)}")
    return _numpy_reads(v) if v is not None else None


def _hint(v, dt, allowed=DTYPES):
    """Why a dtype is refused, and what to write or do instead ("" if
    nothing to add)."""
    if isinstance(v, str) and v in _CLI_ONLY and _CLI_ONLY[v] in allowed:
        return f": {v!r} is the command line's name, numpy's is {_spell(_CLI_ONLY[v])}"
    if dt is not None and dt.kind == "O":
        return (": an object array holds Python objects, which the device cannot read (numpy "
                "asks each element for its truth, bool(v)); convert it first: a.astype(bool) "
                "selects what np.nonzero(a) selects, a.astype(np.float64) (or another supported "
                "dtype) keeps numbers for values and predicates")
    return ""


def dtype_index(dtype, what):
    """clnz_dtype of a numpy dtype in native byte order; TypeError otherwise
    (a name numpy does not know too, with clnz's message, not numpy's; an
    object array's with what to do instead)."""
    dt = known_dtype(dtype, what)
    i = _DTYPE_INDEX.get(dt) if dt is not None and dt.fields is None else None
    if i is None:
        raise TypeError(f"clnz: {what}: unsupported dtype {repr(dtype) if dt is None else dt}"
                        f"{_hint(dtype, dt)} (one of {', '.join(d.name for d in DTYPES)})")
    return i


def c_string(s, what):
    """A str (or bytes) as the library's NUL-terminated string: one with a
    NUL inside would end there, silently, so it is a ValueError, as in
    Python's own calls (open, os.stat)."""
    b = s.encode() if isinstance(s, str) else s
    if b"\0" in b:
        raise ValueError(f"clnz: {what}: embedded null character in {s!r}")
    return b


# ---- integer arguments --------------------------------------------------------
def integer(v, name, lo, hi, c_lo=INT64_MIN, c_hi=INT64_MAX):
    """v as an int the way numpy takes one (operator.index: no floats, no
    strings): TypeError for a non-integer, OverflowError outside the C type's
    range [c_lo, c_hi], ValueError outside the valid one [lo, hi]."""
    try:
        i = operator.index(v)
    except TypeError:
        raise TypeError(f"clnz: {name} must be an integer, not {type(v).__name__}") from None
    if not c_lo <= i <= c_hi:
        raise OverflowError(f"clnz: {name}={i} does not fit the library's argument "
                            f"(from {c_lo} to {c_hi})")
    if not lo <= i <= hi:
        raise ValueError(f"clnz: {name}={i} is out of range (from {lo} to {hi})")
    return i


def axes(axis, ndim):
    """numpy's normalisation of an axis argument (int or tuple, negative
    from the end) into a sorted tuple: AxisError out of range, ValueError for
    a repeated axis, TypeError for a non-integer, a bool or a list (numpy
    takes neither: "an integer is required"). Like numpy's reductions (and
    torch's), a 0-d array takes a lone axis 0 or -1 (not inside a tuple)
    for the whole of it: ()."""
    items = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in items:
        if isinstance(a, (bool, np.bool_)):
            raise TypeError("clnz: axis must be an integer, not bool")
        i = integer(a, "axis", INT64_MIN, INT64_MAX)
        if ndim == 0 and i in (0, -1) and not isinstance(axis, tuple):
            return ()
        if not -ndim <= i < ndim:
            raise AxisError(i, ndim)
        out.append(i % ndim if ndim else i)
    if len(set(out)) != len(out):
        raise ValueError("clnz: repeated axis in 'axis'")
    return tuple(sorted(out))


def choice(table, value, what):
    if not isinstance(value, str) or value not in table:
        raise ValueError(f"clnz: unknown {what} {value!r} (one of {', '.join(table)})")
    return table[value]


def flag(v, name):
    """A yes/no argument the way numpy takes keepdims: an integer (bools
    are), else TypeError naming it."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    try:
        return bool(operator.index(v))
    except TypeError:
        raise TypeError(f"clnz: {name} must be True or False, not {type(v).__name__}") from None


def index_type(index):
    """The library's index type of `index`: one of its names or numpy dtypes
    (int64, int32, uint32, native byte order: the results are). Anything else,
    a name numpy does not know included, is a ValueError as for every option,
    "i8" too (int64 to numpy, int8 to the command line)."""
    allowed = [np.dtype(n) for n in _lib.INDEX_TYPES]
    dt = known_dtype(index, "index", allowed)
    if dt is None or dt.name not in _lib.INDEX_TYPES or not dt.isnative:
        raise ValueError(f"clnz: unknown index type {index!r}{_hint(index, None, allowed)} "
                         f"(one of {', '.join(_lib.INDEX_TYPES)})")
    return _lib.INDEX_TYPES[dt.name]


def options(layout="rows", index="int64", width=None, order="rc", size=None, fill_value=-1):
    """clnz_nonzero_options from the Python arguments, every one checked."""
    opts = _lib.NonzeroOptions()
    L.clnz_nonzero_options_init(ctypes.byref(opts))
    opts.layout = choice(_lib.LAYOUTS, layout, "layout")
    opts.order = choice(_lib.ORDERS, order, "order")
    opts.index_type = index_type(index)
    if width is not None:
        opts.width = integer(width, "width", 0, C_INT_MAX, -C_INT_MAX - 1, C_INT_MAX)
    if size is not None:
        opts.has_size = 1
        opts.size = integer(size, "size", 0, INT64_MAX)
        opts.fill = integer(fill_value, "fill_value", INT64_MIN, INT64_MAX)
        # the library's own check: a fill the index type cannot hold (-1 as
        # uint32 excepted) is a refused argument, as the width above (the
        # check's other refusals, a width with the flat layout, stay the
        # call's clnz.Error, as in the calls without a size)
        msg = ctypes.create_string_buffer(512)
        st = L.clnz_nonzero_options_check(ctypes.byref(opts), msg, len(msg))
        if st and status_name(st) == "CLNZ_ERROR_INVALID_VALUE":
            raise ValueError(f"clnz: fill_value: {msg.value.decode(errors='replace')}")
    return opts


# ---- scalars and predicates ---------------------------------------------------
class Predicate:
    """x OP value for op in eq, ne, lt, le, gt, ge, compared the way numpy
    compares an array with a Python scalar, or "nonzero" (x != 0: no value,
    or 0). A call's `pred` may also be a tuple (op, value), ("nonzero",) or
    "nonzero". An op that compares needs its value, as the command line's
    --pred OP:VALUE, and "nonzero" takes no other: "gt" alone was x > 0 and
    ("nonzero", 5) dropped the 5, silently."""

    def __init__(self, op, value=None):
        if not isinstance(op, str) or op not in _lib.OPS:
            raise ValueError(f"clnz: unknown predicate {op!r} (one of {', '.join(_lib.OPS)})")
        if op != "nonzero" and value is None:
            raise TypeError(f"clnz: predicate {op!r} needs a value: ({op!r}, VALUE)")
        c = scalar(0 if value is None else value, "predicate value")
        if op == "nonzero" and value is not None and value != 0:
            raise TypeError(f"clnz: predicate 'nonzero' takes no value but 0, not {value!r}")
        self.op, self.value = op, value
        self._c = _lib.Predicate(_lib.OPS[op], c)

    def __repr__(self):
        return f"clnz.Predicate({self.op!r})" if self.value is None else \
            f"clnz.Predicate({self.op!r}, {self.value!r})"


def is_scalar(v):
    """A Python int, float or bool. numpy's scalars are not: they have a
    dtype, like 0-d arrays (np.float64 is a Python float too, hence the
    second test)."""
    return isinstance(v, (bool, int, float)) and not isinstance(v, np.generic)


def scalar(v, what):
    """The library's scalar of a Python or numpy scalar (or a 0-d numpy array,
    which numpy compares as one): ints exactly, floats as float64."""
    if isinstance(v, np.ndarray) and v.ndim == 0 and not is_masked(v):
        v = v[()]
    if isinstance(v, (bool, np.bool_, int, np.integer)):
        v = int(v)
        if INT64_MIN <= v <= INT64_MAX:
            return _lib.Scalar(_lib.VALUE_INT, _lib.Value(i=v))
        if INT64_MAX < v < (1 << 64):
            return _lib.Scalar(_lib.VALUE_UINT, _lib.Value(u=v))
        # below -2**63 too: c_uint64 would wrap it into a wrong value, silently
        raise ValueError(f"clnz: {what} {v} does not fit in 64 bits")
    if isinstance(v, (float, np.floating)):
        return _lib.Scalar(_lib.VALUE_FLOAT, _lib.Value(f=float(v)))
    raise TypeError(f"clnz: {what} must be an int or a float, not {type(v).__name__}")


def predicate(p):
    """The library's predicate for a call's `pred` (None: nonzero)."""
    if p is None:
        return _lib.Predicate(_lib.OPS["nonzero"], _lib.Scalar())
    if isinstance(p, str):
        p = Predicate(p)
    elif isinstance(p, tuple):
        if not 1 <= len(p) <= 2:
            raise TypeError(f"clnz: pred as a tuple is (op, value) or (\"nonzero\",), "
                            f"not {len(p)} items")
        p = Predicate(*p)
    elif not isinstance(p, Predicate):
        raise TypeError(f"clnz: pred must be a Predicate, (op, value) or \"nonzero\", "
                        f"not {type(p).__name__}")
    return p._c


# ---- tensors --------------------------------------------------------------------
class View:
    """A clnz_tensor: dtype, shape and strides in elements. The pointers it
    hands the library live as long as the view."""

    def __init__(self, dtype, shape, strides):
        self.dtype = np.dtype(dtype)
        self.shape, self.strides = tuple(shape), tuple(strides)
        n = max(len(self.shape), 1)
        self._shape = (ctypes.c_int64 * n)(*self.shape)
        self._strides = (ctypes.c_int64 * n)(*self.strides)
        self.tensor = _lib.Tensor(dtype_index(self.dtype, "input"), len(self.shape), self._shape,
                                  self._strides)

    def ref(self):
        return ctypes.byref(self.tensor)


# ---- devices and contexts -------------------------------------------------
class Device:
    """One OpenCL device as `clnz devices` lists it."""

    def __init__(self, info):
        # None for a device `clnz devices` does not list (a sub-device a
        # wrapped queue runs on)
        self.selector = f"{info.platform}:{info.device}" if info.platform >= 0 else None
        self.is_default = bool(info.is_default)
        self.platform_name = info.platform_name.decode(errors="replace")
        self.name = info.device_name.decode(errors="replace")
        self.type = info.device_type.decode()
        self.version = info.version.decode(errors="replace")
        self.global_mem_size = info.global_mem_size
        self.max_alloc_size = info.max_alloc_size
        self.why_default = info.why_default.decode(errors="replace")  # "" unless the default

    def __repr__(self):
        return f"<clnz.Device {self.selector} {self.type} {self.name!r} [{self.platform_name}]>"


def devices():
    """Every OpenCL device, in `clnz devices`' order."""
    count = ctypes.c_int()
    st = L.clnz_list_devices(None, 0, ctypes.byref(count))
    if st:
        raise Error(st, "")
    infos = (_lib.DeviceInfo * max(count.value, 1))()
    st = L.clnz_list_devices(infos, count.value, ctypes.byref(count))
    if st:
        raise Error(st, "")
    return [Device(infos[i]) for i in range(count.value)]


class _Handle:
    """A context's library handle and the calls holding it. ctypes lets go of
    the GIL during a call, so another thread may close the context meanwhile:
    the handle is released by whoever ends the last use after the close."""

    def __init__(self, h):
        self.h, self.uses, self.closed = h, 0, False
        self.lock = threading.Lock()

    def take(self):
        with self.lock:
            if self.closed:
                raise ValueError("clnz: this context is closed")
            self.uses += 1
            return self.h

    def drop(self):
        with self.lock:
            self.uses -= 1
            last = self.closed and not self.uses
        if last:
            L.clnz_context_release(self.h)

    def close(self, unless_used=False):
        # unless_used is the finalizer's: a call keeps its Context alive, so
        # a use then is a daemon thread's call at interpreter exit, and a
        # release from that thread would race the process's exit: leaked.
        with self.lock:
            if unless_used and self.uses:
                return
            now = not self.closed and not self.uses
            self.closed = True
        if now:
            L.clnz_context_release(self.h)


class Context:
    """A clnz context on one device: "P:D" as `clnz devices` lists it, a kind
    ("gpu", "cpu", "accelerator") or part of the platform's and device's
    names, or None for CLNZ_DEVICE, else the default device. With queue=
    (a pyopencl.CommandQueue) it wraps that queue and its context instead
    (clnz_context_wrap: the application's pipeline and clnz's share them).
    Programs it compiles are cached on disk. close() (or a with block)
    releases it as soon as the calls other threads are in return, and later
    calls raise ValueError; otherwise it goes with the object. One context
    may serve several threads (its calls then take turns); a context each
    runs them in parallel."""

    def __init__(self, device=None, *, queue=None):
        if device is not None and not isinstance(device, str):
            raise TypeError(f"clnz: device must be a str such as '0:0' or 'gpu', not "
                            f"{type(device).__name__}")
        handle, msg = ctypes.c_void_p(), ctypes.create_string_buffer(512)
        if queue is not None:
            if device is not None:
                raise ValueError("clnz: give a device or a queue, not both")
            st = L.clnz_context_wrap(ctypes.c_void_p(queue.context.int_ptr),
                                     ctypes.c_void_p(queue.int_ptr), ctypes.byref(handle), msg,
                                     len(msg))
        else:
            st = L.clnz_context_create(c_string(device, "device") if device else None,
                                       ctypes.byref(handle), msg, len(msg))
        if st:
            raise Error(st, msg.value.decode(errors="replace"))
        self._handle = _Handle(handle.value)
        self._warned = set()  # the warnings issued, a line each
        self._wrapped = queue is not None
        self._queue = queue  # the pyopencl queue results are made on (device arrays)
        self._lock = threading.Lock()
        self._release = weakref.finalize(self, self._handle.close, True)

    @property
    def device(self):
        """The Device this context runs on."""
        info = _lib.DeviceInfo()
        with self._use() as h:
            st = L.clnz_context_device_info(h, ctypes.byref(info))
        if st:
            raise Error(st, "")
        return Device(info)

    @property
    def queue(self):
        """The context's queue as a pyopencl.CommandQueue (pyopencl needed):
        put arrays on it to call clnz on them."""
        if self._queue is None:
            import pyopencl as cl
            with self._lock, self._use() as h:
                if self._queue is None:
                    self._queue = cl.CommandQueue.from_int_ptr(L.clnz_context_queue(h),
                                                               retain=True)
        q = self._queue
        return q() if isinstance(q, weakref.ref) else q

    @property
    def cl_context(self):
        """The context's pyopencl.Context."""
        return self.queue.context

    def close(self):
        self._release.detach()
        self._handle.close()

    def __copy__(self):
        # one handle, one owner: a copy kept using it after the original's release
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        raise TypeError("clnz: a Context cannot be pickled: its OpenCL context lives in this "
                        "process (make a clnz.Context in each process)")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        closed = self._handle.closed
        return "<clnz.Context closed>" if closed else f"<clnz.Context on {self.device!r}>"

    @contextlib.contextmanager
    def _use(self):
        """The library's handle, held for a call: a close() in another thread
        meanwhile leaves the handle's release to the end of the call."""
        h = self._handle.take()
        try:
            yield h
        finally:
            self._handle.drop()

    def _call(self, fn, *args):
        """fn(handle, *args), a library call that returns a status: Error on
        a failure, a LibraryWarning for a note on a success."""
        with self._use() as h:
            status = fn(h, *args)
            m = L.clnz_context_message(h)
        if status:
            raise Error(status, m.decode(errors="replace"))
        for line in m.split(b"\n") if m else ():  # after a success: warnings, a line each
            if line and line not in self._warned:
                self._warned.add(line)
                warnings.warn(f"clnz: {line.decode(errors='replace')}", LibraryWarning,
                              stacklevel=3)


def context_arg(context):
    """A call's `context`: a Context, or None for the default one."""
    if context is None:
        return default_context()
    if not isinstance(context, Context):
        raise TypeError(f"clnz: context must be a clnz.Context (or None for the default), not "
                        f"{type(context).__name__}")
    return context


def is_masked(v):
    ma = sys.modules.get("numpy.ma")  # no masked array exists before numpy.ma is loaded
    return ma is not None and isinstance(v, ma.MaskedArray)


def plain_array(v):
    """Refuses a numpy masked array: the library reads the data and would
    select masked entries too (a silently wrong answer next to np.ma)."""
    if is_masked(v):
        raise TypeError("clnz: masked arrays are not supported (the mask would be ignored): "
                        "pass m.filled(0) to treat masked entries as zero, as np.ma.nonzero "
                        "does, or m.data to ignore the mask")
    return v


_default = None
_default_lock = threading.Lock()


def _new_default_lock():
    # A thread of the parent may have held the lock at the fork (making the
    # default context takes seconds where it compiles or tunes); the child
    # has no such thread, and its first call would wait for ever. A fresh
    # lock there: its call then gets CLNZ_ERROR_FORKED, as every call does.
    global _default_lock
    _default_lock = threading.Lock()


os.register_at_fork(after_in_child=_new_default_lock)


def default_context():
    """The context the calls on numpy arrays use when given none, made on
    first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Context()
        return _default
