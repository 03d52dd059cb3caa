"""Programs ahead of the first call: warm-up, bundles, and the counters
that show whether a call compiled (clnz_warmup, clnz_context_use_bundle,
clnz_context_stats)."""
import ctypes
import os

import numpy as np

from . import _core, _lib

L = _core.L


def _names(v, what):
    """A list argument as clnz_uses_parse takes it: "a,b", or a sequence of names."""
    if isinstance(v, str):
        return v
    try:
        items = list(v)
    except TypeError:
        raise TypeError(f"clnz: {what} must be a str or a sequence of str, not "
                        f"{type(v).__name__}") from None
    if not all(isinstance(x, str) for x in items):
        raise TypeError(f"clnz: {what} must name each entry with a str")
    return ",".join(items)


def _dtype_bits(dtypes):
    """clnz_uses.dtypes of numpy dtypes (or their names, as np.dtype reads
    them), or "all". An empty list is a ValueError, as clnz_uses_parse makes
    it for every axis: the library's 0, every dtype, is what None asks for.
    The command line's names are not numpy's: "u8" is a ValueError (uint64
    to numpy, uint8 there), "f32" a TypeError that gives numpy's name."""
    if isinstance(dtypes, bytes):  # one name, as np.dtype takes it (not a list of its bytes)
        dtypes = dtypes.decode("ascii", "replace")
    if isinstance(dtypes, str) and dtypes == "all":
        return (1 << len(_core.DTYPES)) - 1
    if isinstance(dtypes, str) and "," in dtypes:  # "u8" is uint64 to numpy, uint8 to the CLI
        raise TypeError(f"clnz: dtypes: give a list of numpy dtypes such as [np.uint8, "
                        f"np.float32], not the command line's {dtypes!r}")
    if isinstance(dtypes, (str, type, np.dtype)):
        items = [] if isinstance(dtypes, str) and not dtypes else [dtypes]
    else:
        try:
            items = list(dtypes)
        except TypeError:
            raise TypeError(f"clnz: dtypes must be a numpy dtype or a sequence of them, not "
                            f"{type(dtypes).__name__}") from None
    if not items:
        raise ValueError("clnz: dtypes: an empty list of dtypes (None: every dtype)")
    bits = 0
    for dt in items:
        bits |= 1 << _core.dtype_index(dt, "warmup dtypes")
    return bits


def uses(dtypes=None, ops=None, predicates=None, strategies=None):
    """A clnz_uses from Python arguments: dtypes as numpy dtypes (or their
    names, "all"); ops, predicates and strategies as the command line's
    names. None takes the library's default; an empty list, of any of them,
    is a ValueError."""
    u = _lib.Uses()
    if dtypes is not None:
        u.dtypes = _dtype_bits(dtypes)
    for axis, v in (("ops", ops), ("predicates", predicates), ("strategies", strategies)):
        if v is None:
            continue
        msg = ctypes.create_string_buffer(600)
        names = _core.c_string(_names(v, axis), axis)
        if L.clnz_uses_parse(ctypes.byref(u), axis.encode(), names, msg, len(msg)):
            raise ValueError(f"clnz: {axis}: {msg.value.decode(errors='replace')}")
    return u


def warmup(dtypes=None, ops=None, predicates=None, strategies=None, context=None):
    """Builds (or loads from a bundle or the program cache) every program
    the named uses need, so that their calls compile nothing: a service
    calls it at start. dtypes: numpy dtypes or their numpy names (default:
    all twelve): np.uint8 or "uint8", not the command line's "u8", which
    numpy reads as uint64 (a ValueError that says so; "i8" and "f16" too,
    int64 and float128 to numpy; "f32" and the other command-line names
    numpy does not know are a TypeError that gives numpy's name); ops:
    "count", "nonzero", "batched", "select", "where", "mask", "scan",
    "channels", "image2d" (default: count and nonzero); predicates:
    "nonzero", "compare" or an op name (default: nonzero); strategies:
    "single-tile", "two-pass", "lookback", "stream" (default: the ones the
    device's calls pick). An empty list (or "") is a ValueError, as in
    clnz_uses_parse: None is the way to ask for the default. Returns how many
    programs are ready."""
    ctx = _core.context_arg(context)
    u = uses(dtypes, ops, predicates, strategies)
    n = ctypes.c_int()
    ctx._call(L.clnz_warmup, ctypes.byref(u), ctypes.byref(n))
    return n.value


def use_bundle(path, context=None):
    """Makes the context load programs from the bundle folder `path` (made
    by `clnz bundle build`) before it would compile; None: no bundle. A
    bundle for another device or driver, or a damaged one, raises
    clnz.Error."""
    ctx = _core.context_arg(context)
    try:
        # str, bytes or a path object
        folder = None if path is None else _core.c_string(os.fsencode(path), "path")
    except TypeError:
        raise TypeError(f"clnz: path must be a str, bytes or os.PathLike (or None), not "
                        f"{type(path).__name__}") from None
    ctx._call(L.clnz_context_use_bundle, folder)


def stats(context=None):
    """The context's counters: programs compiled ("programs_from_source"),
    loaded from the on-disk cache ("programs_from_cache"), cache files
    rejected, and calls run by each strategy ("strategy_runs", by name)."""
    ctx = _core.context_arg(context)
    s = _lib.Stats()
    ctx._call(L.clnz_context_stats, ctypes.byref(s))
    return {"programs_from_source": s.programs_from_source,
            "programs_from_cache": s.programs_from_cache,
            "cache_files_rejected": s.cache_files_rejected,
            "strategy_runs": dict(zip(_lib.STRATEGIES, s.strategy_runs))}
