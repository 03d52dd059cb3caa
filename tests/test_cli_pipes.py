"""The clnz command in pipes: `-o -` (the .npy, or the text, on standard
output and nothing else there), `-` as an input (a .npy from standard
input), and --format csv|txt against np.savetxt / np.loadtxt; their errors
(unknown format, truncated input, a full or closed standard output, a
reader that went away). Helpers from test_cli.py."""
import io
import os
import subprocess
import sys

import numpy as np
import pytest

from test_cli import CLNZ, SEED, TIMEOUT, expect_error, random_array, rng, save  # noqa: F401 (rng: a fixture)

# What --format writes for each dtype: np.savetxt with these formats.
SAVETXT_FMT = {"f": {2: "%.5g", 4: "%.9g", 8: "%.17g"}}


def savetxt_fmt(dtype):
    dt = np.dtype(dtype)
    return SAVETXT_FMT["f"][dt.itemsize] if dt.kind == "f" else "%d"


def clnz(*args, stdin=None, stdout=subprocess.PIPE, check=True):
    """clnz with bytes in and out: (returncode, stdout bytes, stderr text)."""
    p = subprocess.run([CLNZ, *map(str, args)], input=stdin, stdout=stdout,
                       stderr=subprocess.PIPE, timeout=TIMEOUT)
    if check and p.returncode != 0:
        raise AssertionError(f"clnz {' '.join(map(str, args))} failed ({p.returncode}): "
                             f"{p.stderr.decode()} [seed {SEED}]")
    return p.returncode, p.stdout, p.stderr.decode()


def npy_bytes(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def savetxt_bytes(a, delimiter):
    b = io.BytesIO()
    np.savetxt(b, np.atleast_1d(a), fmt=savetxt_fmt(a.dtype), delimiter=delimiter)
    return b.getvalue()


def test_npy_to_stdout_is_the_file_and_nothing_else(tmp_path, rng):
    x = random_array(rng, "f4", (33, 17), density=0.2)
    inp = save(tmp_path, x)
    _, out, err = clnz("nonzero", inp, "-o", "-", "--count-out", tmp_path / "n.npy")
    assert err == ""
    got = np.load(io.BytesIO(out))
    assert np.array_equal(got, np.argwhere(x)) and got.dtype == np.int64, SEED
    assert np.load(tmp_path / "n.npy") == np.count_nonzero(x)
    clnz("nonzero", inp, "-o", tmp_path / "o.npy", "--count-out", tmp_path / "n.npy")
    assert out == (tmp_path / "o.npy").read_bytes()


def test_stdin_to_stdout_in_a_shell_pipe(tmp_path, rng):
    x = random_array(rng, "u1", (40, 50), density=0.1)
    inp = save(tmp_path, x)
    check = ("import io, sys, numpy as np; a = np.load(io.BytesIO(sys.stdin.buffer.read())); "
             "print(a.shape[0], a.sum())")
    p = subprocess.run(f"cat '{inp}' | '{CLNZ}' nonzero - -o - | '{sys.executable}' -c '{check}'",
                       shell=True, capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    want = np.argwhere(x)
    assert p.stdout.split() == [str(len(want)), str(want.sum())]


def test_stdin_as_every_kind_of_input(tmp_path, rng):
    x = random_array(rng, "i2", (9, 11), density=0.5)
    m = random_array(rng, "?", (9, 11), density=0.5)
    xs, ms = save(tmp_path, x, "x.npy"), save(tmp_path, m, "m.npy")
    # a pipe
    _, out, _ = clnz("count", "-", stdin=npy_bytes(x))
    assert int(out) == np.count_nonzero(x)
    _, out, _ = clnz("select", xs, "--mask", "-", "-o", "-", stdin=npy_bytes(m))
    assert np.array_equal(np.load(io.BytesIO(out)), x[m])
    _, out, _ = clnz("where", "-", xs, 7, "-o", "-", stdin=npy_bytes(m))
    assert np.array_equal(np.load(io.BytesIO(out)), np.where(m, x, np.int16(7)))
    # a file standard input was redirected from (`clnz count - < x.npy`)
    with open(xs, "rb") as f:
        p = subprocess.run([CLNZ, "count", "-"], stdin=f, capture_output=True, timeout=TIMEOUT)
    assert p.returncode == 0 and int(p.stdout) == np.count_nonzero(x), p.stderr
    # standard input is read once
    line = expect_error(2, "where", "-", "-", 1, "-o", tmp_path / "o.npy")
    assert "only one input can be '-'" in line
    assert not (tmp_path / "o.npy").exists()
    # ... also where another input names it by a path (/dev/stdin over a pipe)
    rc, _, err = clnz("select", "-", "--mask", "/dev/stdin", "-o", tmp_path / "o.npy",
                      stdin=npy_bytes(x), check=False)
    assert rc == 2 and "'/dev/stdin' is standard input, which '-' reads already" in err, err
    assert not (tmp_path / "o.npy").exists()
    # but a regular file redirected to standard input is read anew by its path
    for x_arg, want in ((xs, x[m]), ("/dev/stdin", m[m])):
        with open(ms, "rb") as f:
            p = subprocess.run([CLNZ, "select", x_arg, "--mask", "-", "-o", "-"], stdin=f,
                               capture_output=True, timeout=TIMEOUT)
        assert p.returncode == 0, p.stderr
        assert np.array_equal(np.load(io.BytesIO(p.stdout)), want)


def test_truncated_or_empty_stdin_is_an_error(tmp_path, rng):
    data = npy_bytes(random_array(rng, "f8", (100,), density=0.5))
    for cut, says in [(len(data) - 8, "the stream ended after"), (50, "truncated header"),
                      (0, "not a .npy file")]:
        rc, out, err = clnz("nonzero", "-", "-o", "-", stdin=data[:cut], check=False)
        assert rc == 1 and out == b"", (cut, err)
        assert err.startswith("clnz: '<stdin>'") and says in err and err.count("\n") == 1, err


@pytest.mark.parametrize("fmt,delim", [("csv", ","), ("txt", " ")])
def test_text_formats_match_savetxt(tmp_path, rng, fmt, delim):
    x = random_array(rng, "i4", (6, 7, 5), density=0.3)
    inp = save(tmp_path, x)
    for layout, want in [("rows", np.argwhere(x)), ("columns", np.array(np.nonzero(x))),
                         ("flat", np.flatnonzero(x))]:
        _, out, _ = clnz("nonzero", inp, "--layout", layout, "--format", fmt, "-o", "-")
        assert out == savetxt_bytes(want, delim), layout
        assert np.array_equal(np.loadtxt(io.BytesIO(out), dtype=np.int64, delimiter=delim,
                                         ndmin=want.ndim), want)
    # every output of the run, written to files too; the 0-d count is one line
    o, n = tmp_path / "o.txt", tmp_path / "n.txt"
    clnz("nonzero", inp, "--format", fmt, "--index", "uint32", "-o", o, "--count-out", n)
    assert o.read_bytes() == savetxt_bytes(np.argwhere(x).astype(np.uint32), delim)
    assert n.read_text() == f"{np.count_nonzero(x)}\n"


@pytest.mark.parametrize("dtype", ["?", "u1", "i1", "u8", "i8", "f2", "f4", "f8"])
def test_values_as_text_read_back_exactly(tmp_path, rng, dtype):
    x = random_array(rng, dtype, (300,), density=0.8)
    if np.dtype(dtype).kind in "ui":  # the extremes of the type
        info = np.iinfo(dtype)
        x[:2] = [info.min, info.max]
    if np.dtype(dtype).kind == "f":  # specials and a subnormal
        x[:5] = [np.nan, -np.inf, np.inf, np.finfo(dtype).smallest_subnormal, -0.0]
    _, out, _ = clnz("select", save(tmp_path, x), "--pred", "ne:0", "--format", "csv", "-o", "-")
    want = x[x != 0]
    assert out == savetxt_bytes(want, ","), dtype
    back = np.loadtxt(io.BytesIO(out), dtype=np.dtype(dtype) if dtype != "?" else np.uint8,
                      ndmin=1)
    assert np.array_equal(back, want, equal_nan=want.dtype.kind == "f"), dtype


def test_where_two_d_as_txt_and_more_dims_refused(tmp_path, rng):
    c = random_array(rng, "u1", (4, 5), density=0.5)
    x = random_array(rng, "f4", (5,), density=0.9)
    cs, xs = save(tmp_path, c, "c.npy"), save(tmp_path, x, "x.npy")
    _, out, _ = clnz("where", cs, xs, -1.5, "--format", "txt", "-o", "-")
    assert out == savetxt_bytes(np.where(c, x, np.float32(-1.5)), " ")
    c3 = save(tmp_path, random_array(rng, "u1", (2, 3, 4)), "c3.npy")
    o = tmp_path / "o.csv"
    line = expect_error(2, "where", c3, 1, 0, "--format", "csv", "-o", o)  # as count's
    assert "up to 2 dimensions" in line and not o.exists()
    # the rank of an operand's, the condition's 2-D: refused before any work
    line = expect_error(2, "where", cs, save(tmp_path, random_array(rng, "f4", (3, 4, 5)), "x3.npy"),
                        0, "--format", "txt", "-o", o)
    assert "(the output has 3)" in line and not o.exists()


def test_unknown_format_touches_nothing(tmp_path):
    inp = save(tmp_path, np.ones(3, np.int8))
    o = tmp_path / "o.npy"
    o.write_bytes(b"keep")
    for cmd in (["nonzero", inp], ["select", inp], ["where", inp, 1, 0]):
        line = expect_error(2, *cmd, "-o", o, "--format", "xml")
        assert "--format 'xml'" in line
    assert o.read_bytes() == b"keep" and sorted(os.listdir(tmp_path)) == ["in.npy", "o.npy"]


def test_stdout_full_closed_or_gone_is_an_error(tmp_path):
    inp = save(tmp_path, np.arange(1000, dtype=np.int32))
    with open("/dev/full", "wb") as full:
        rc, _, err = clnz("nonzero", inp, "-o", "-", stdout=full, check=False)
    assert rc == 1 and "cannot write standard output" in err and "No space left" in err, err
    rc, _, err = clnz("nonzero", inp, "-o", "-", "--format", "csv",
                      stdout=subprocess.DEVNULL, check=False)
    assert rc == 0 and err == ""
    p = subprocess.run(f"'{CLNZ}' nonzero '{inp}' -o - >&-", shell=True, capture_output=True,
                       text=True, timeout=TIMEOUT)
    assert p.returncode == 1 and p.stderr == "clnz: standard output is closed: the output has " \
                                             "nowhere to go\n", p.stderr
    # and '-' as the input with standard input closed: said so, nothing written
    out = tmp_path / "never.npy"
    p = subprocess.run(f"'{CLNZ}' nonzero - -o '{out}' <&-", shell=True, capture_output=True,
                       text=True, timeout=TIMEOUT)
    assert p.returncode == 1 and p.stderr == "clnz: standard input is closed: '-' has " \
                                             "nothing to read\n", p.stderr
    assert not out.exists()
    r, w = os.pipe()  # a reader that went away: EPIPE, an error rather than a silent death
    os.close(r)
    try:
        rc, _, err = clnz("nonzero", inp, "-o", "-", stdout=w, check=False)
    finally:
        os.close(w)
    assert rc == 1 and "Broken pipe" in err, err
    line = expect_error(1, "nonzero", inp, "-o", "-", "--count-out", "-")
    assert "the same file" in line
