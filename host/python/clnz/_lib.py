"""_lib.py: finds libclnz and declares the part of include/clnz.h that the
module calls, as ctypes types and prototypes. Nothing here knows numpy."""
import ctypes
import ctypes.util
import os
import subprocess

# The library this module was written for: its SONAME's version (MAJOR, or
# MAJOR.MINOR before 1.0, when every minor release may change the ABI).
VERSION = (0, 2)
SOVERSION = "0.2"
MAX_RANK = 32

OPS = {"nonzero": 0, "eq": 1, "ne": 2, "lt": 3, "le": 4, "gt": 5, "ge": 6}
VALUE_INT, VALUE_UINT, VALUE_FLOAT = 0, 1, 2
LAYOUTS = {"rows": 0, "columns": 1, "flat": 2}
INDEX_TYPES = {"int64": 0, "int32": 1, "uint32": 2}
ORDERS = {"rc": 0, "xy": 1}
CHANNEL_RULES = {"any": 0, "all": 1}

c_int64_p = ctypes.POINTER(ctypes.c_int64)


class Tensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("rank", ctypes.c_int), ("shape", c_int64_p),
                ("strides", c_int64_p)]


class Value(ctypes.Union):
    _fields_ = [("i", ctypes.c_int64), ("u", ctypes.c_uint64), ("f", ctypes.c_double)]


class Scalar(ctypes.Structure):
    """clnz_scalar: kind and an anonymous union."""
    _anonymous_ = ("v",)
    _fields_ = [("kind", ctypes.c_int), ("v", Value)]


class Predicate(ctypes.Structure):
    _fields_ = [("op", ctypes.c_int), ("value", Scalar)]


class NonzeroOptions(ctypes.Structure):
    _fields_ = [("layout", ctypes.c_int), ("order", ctypes.c_int),
                ("index_type", ctypes.c_int), ("width", ctypes.c_int), ("has_size", ctypes.c_int),
                ("size", ctypes.c_int64), ("fill", ctypes.c_int64)]


class Result(ctypes.Structure):
    _fields_ = [("indices", ctypes.c_void_p), ("ndim", ctypes.c_int),
                ("shape", ctypes.c_int64 * 2), ("count", ctypes.c_int64),
                ("index_type", ctypes.c_int)]


class Array(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.c_int64 * MAX_RANK)]


class Operand(ctypes.Structure):
    _fields_ = [("array", ctypes.POINTER(Tensor)), ("value", Scalar)]


class DeviceInfo(ctypes.Structure):
    _fields_ = [("platform", ctypes.c_int), ("device", ctypes.c_int), ("is_default", ctypes.c_int),
                ("platform_name", ctypes.c_char * 128), ("device_name", ctypes.c_char * 128),
                ("device_type", ctypes.c_char * 16), ("version", ctypes.c_char * 128),
                ("global_mem_size", ctypes.c_uint64), ("max_alloc_size", ctypes.c_uint64),
                ("tuning", ctypes.c_int), ("why_default", ctypes.c_char * 160)]


class Uses(ctypes.Structure):
    """clnz_uses: bit sets of dtypes, operations, predicate classes, strategies."""
    _fields_ = [("dtypes", ctypes.c_uint32), ("ops", ctypes.c_uint32),
                ("predicates", ctypes.c_uint32), ("strategies", ctypes.c_uint32)]


STRATEGIES = ["auto", "single-tile", "two-pass", "lookback", "stream"]  # clnz_strategy's order


class Stats(ctypes.Structure):
    _fields_ = [("programs_from_source", ctypes.c_uint64), ("programs_from_cache", ctypes.c_uint64),
                ("cache_files_rejected", ctypes.c_uint64),
                ("strategy_runs", ctypes.c_uint64 * len(STRATEGIES))]


def _pkg_config_libdir():
    """The libdir of an installed clnz.pc, for a prefix the loader does not search."""
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", "clnz"], capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


def bundled():
    """The libclnz that `pip install .` built into the package when it found
    no installed one (setup.py), or None."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"libclnz.so.{SOVERSION}")
    return path if os.path.exists(path) else None


def _candidates():
    env = os.environ.get("CLNZ_LIBRARY")
    if env:  # the user's choice is the only one tried: a wrong path is an error, not a fallback
        return [env]
    names = [p for p in [bundled()] if p] + [f"libclnz.so.{SOVERSION}"]
    libdir = _pkg_config_libdir()
    if libdir:
        names.append(os.path.join(libdir, f"libclnz.so.{SOVERSION}"))
    found = ctypes.util.find_library("clnz")
    if found:
        names.append(found)
    return names


def load():
    tried = []
    for name in _candidates():
        try:
            lib = ctypes.CDLL(name)
        except OSError as e:
            tried.append(f"{name} ({e})")
            continue
        _declare(lib)
        number = lib.clnz_version_number()
        if (number // 10000, number // 100 % 100)[:len(VERSION)] != VERSION:
            raise ImportError(f"clnz: {name} is libclnz {lib.clnz_version_string().decode()}, "
                              f"this module needs version {SOVERSION}")
        return lib
    raise ImportError("clnz: cannot load libclnz: tried " + "; ".join(tried) +
                      ". Install it (make install) or set CLNZ_LIBRARY to libclnz.so's path.")


def dtypes(lib):
    """numpy's names of the library's dtypes, in clnz_dtype's order, from
    clnz_dtype_numpy (the library's one table)."""
    names = []
    while lib.clnz_dtype_numpy(len(names)):
        names.append(lib.clnz_dtype_numpy(len(names)).decode())
    return names


def dtype_names(lib):
    """The command line's names of the same dtypes, in the same order, from
    clnz_dtype_name: "u8" is uint8 there ("--dtypes u8,f32"), uint64 to numpy."""
    names = []
    while lib.clnz_dtype_name(len(names)):
        names.append(lib.clnz_dtype_name(len(names)).decode())
    return names


def _declare(lib):
    P, c_int, c_void_p, c_char_p = ctypes.POINTER, ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p
    c_size_t, c_uint64, c_uint = ctypes.c_size_t, ctypes.c_uint64, ctypes.c_uint
    ctx = mem = c_void_p
    # the OpenCL triple closing every enqueue call: num_events, wait_list, out_event
    triple = [c_uint, P(c_void_p), P(c_void_p)]
    protos = {
        "clnz_version_string": (c_char_p, []),
        "clnz_version_number": (c_int, []),
        "clnz_status_string": (c_char_p, [c_int]),
        "clnz_dtype_numpy": (c_char_p, [c_int]),
        "clnz_dtype_name": (c_char_p, [c_int]),
        "clnz_context_create": (c_int, [c_char_p, P(c_void_p), c_char_p, c_size_t]),
        "clnz_context_wrap": (c_int, [c_void_p, c_void_p, P(c_void_p), c_char_p, c_size_t]),
        "clnz_context_release": (None, [ctx]),
        "clnz_context_message": (c_char_p, [ctx]),
        "clnz_context_device": (c_void_p, [ctx]),
        "clnz_context_cl_context": (c_void_p, [ctx]),
        "clnz_context_queue": (c_void_p, [ctx]),
        "clnz_list_devices": (c_int, [P(DeviceInfo), c_int, P(c_int)]),
        "clnz_context_device_info": (c_int, [ctx, P(DeviceInfo)]),
        "clnz_context_stats": (c_int, [ctx, P(Stats)]),
        "clnz_uses_parse": (c_int, [P(Uses), c_char_p, c_char_p, c_char_p, c_size_t]),
        "clnz_warmup": (c_int, [ctx, P(Uses), P(c_int)]),
        "clnz_context_use_bundle": (c_int, [ctx, c_char_p]),
        "clnz_nonzero_options_init": (None, [P(NonzeroOptions)]),
        "clnz_nonzero_width": (c_int, [P(NonzeroOptions), c_int]),
        "clnz_nonzero_options_check": (c_int, [P(NonzeroOptions), c_char_p, c_size_t]),
        "clnz_nonzero": (c_int, [ctx, P(Tensor), c_void_p, P(Predicate), P(NonzeroOptions),
                                 P(Result)]),
        "clnz_result_free": (None, [P(Result)]),
        "clnz_count": (c_int, [ctx, P(Tensor), c_void_p, P(Predicate), P(ctypes.c_int64)]),
        "clnz_select": (c_int, [ctx, P(Tensor), c_void_p, P(Tensor), c_void_p, P(Predicate),
                                P(Array)]),
        "clnz_where": (c_int, [ctx, P(Tensor), c_void_p, P(Predicate), P(Operand), c_void_p,
                               P(Operand), c_void_p, P(Array)]),
        "clnz_array_free": (None, [P(Array)]),
        "clnz_nonzero_batched": (c_int, [ctx, P(Tensor), c_void_p, P(Predicate),
                                         P(NonzeroOptions), P(Result), P(Array)]),
        "clnz_nonzero_channels": (c_int, [ctx, P(Tensor), c_void_p, P(Predicate), c_int,
                                          P(NonzeroOptions), P(Result)]),
        "clnz_count_batched": (c_int, [ctx, P(Tensor), c_void_p, P(Predicate), c_int,
                                       P(Array)]),
        # device-resident calls: buffers are cl_mem handles, offsets in bytes
        "clnz_nonzero_enqueue": (c_int, [ctx, P(Tensor), mem, c_size_t, P(Predicate),
                                         P(NonzeroOptions), mem, c_size_t, c_uint64, mem,
                                         c_size_t] + triple),
        "clnz_count_enqueue": (c_int, [ctx, P(Tensor), mem, c_size_t, P(Predicate), mem,
                                       c_size_t] + triple),
        "clnz_mask_enqueue": (c_int, [ctx, P(Tensor), mem, c_size_t, P(Predicate), c_int, mem,
                                      c_size_t] + triple),
        "clnz_select_enqueue": (c_int, [ctx, P(Tensor), mem, c_size_t, P(Tensor), mem, c_size_t,
                                        P(Predicate), mem, c_size_t, c_uint64, mem,
                                        c_size_t] + triple),
        "clnz_where_result": (c_int, [ctx, P(Tensor), P(Operand), P(Operand), P(c_int), P(c_int),
                                      c_int64_p]),
        "clnz_where_enqueue": (c_int, [ctx, P(Tensor), mem, c_size_t, P(Predicate), P(Operand),
                                       mem, c_size_t, P(Operand), mem, c_size_t, mem,
                                       c_size_t] + triple),
        "clnz_nonzero_batched_enqueue": (c_int, [ctx, P(Tensor), mem, c_size_t, P(Predicate),
                                                 P(NonzeroOptions), mem, c_size_t, c_uint64, mem,
                                                 c_size_t] + triple),
        "clnz_count_batched_enqueue": (c_int, [ctx, P(Tensor), mem, c_size_t, P(Predicate),
                                               c_int, mem, c_size_t] + triple),
        "clnz_nonzero_channels_enqueue": (c_int, [ctx, P(Tensor), mem, c_size_t, P(Predicate),
                                                  c_int, P(NonzeroOptions), mem, c_size_t,
                                                  c_uint64, mem, c_size_t] + triple),
        # the exact-size forms: the library allocates the result (a cl_mem, or NULL for no
        # bytes) once it has read the count back
        "clnz_nonzero_alloc": (c_int, [ctx, P(Tensor), mem, c_size_t, P(Predicate),
                                       P(NonzeroOptions), P(c_void_p), P(c_uint64), mem,
                                       c_size_t] + triple),
        "clnz_nonzero_channels_alloc": (c_int, [ctx, P(Tensor), mem, c_size_t, P(Predicate),
                                                c_int, P(NonzeroOptions), P(c_void_p),
                                                P(c_uint64), mem, c_size_t] + triple),
        "clnz_nonzero_batched_alloc": (c_int, [ctx, P(Tensor), mem, c_size_t, P(Predicate),
                                               P(NonzeroOptions), P(c_void_p), P(c_uint64), mem,
                                               c_size_t] + triple),
        "clnz_select_alloc": (c_int, [ctx, P(Tensor), mem, c_size_t, P(Tensor), mem, c_size_t,
                                      P(Predicate), P(c_void_p), P(c_uint64), mem,
                                      c_size_t] + triple),
    }
    for name, (res, args) in protos.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
