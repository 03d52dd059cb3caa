"""Reliability of the `clnz` command (issue 16): outputs written all or nothing
and only where they belong, inputs that are cut short, streams and FIFOs,
the cache folder, resource limits and signals. Each test names the issue's
item it pins; numpy and the file system are the oracle.

Run with Debian's interpreter; `make test` does. The tests that stop clnz at
a chosen call use the LD_PRELOAD library tests/fault_shim.c (CLNZ_SHIM_STOP,
CLNZ_SHIM_NO_TMPFILE).
"""
import io
import os
import resource
import signal
import stat
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from test_cli import (CLNZ, ROOT, SEED, TIMEOUT, io_quote, random_array, rng,  # noqa: F401 (rng)
                      save)

SHIM = os.environ.get("CLNZ_FAULT_SHIM", os.path.join(ROOT, "build", "fault_shim.so"))
SENTINEL = b"an output from before, which a failed command must leave alone\n"
# clnz under a sanitizer or valgrind: address-space limits break those, not clnz
INSTRUMENTED = bool(os.environ.get("ASAN_OPTIONS")) or "valgrind" in CLNZ or "asan" in CLNZ
# the wait for a FIFO's other end (IO_FIFO_WAIT_MS in host/io/io.h)
FIFO_WAIT = 5.0
needs_shim = pytest.mark.skipif(not os.path.exists(SHIM), reason=f"no {SHIM} (make test builds it)")


def clnz(*args, env=None, check=False, **kw):
    p = subprocess.run([CLNZ, *map(str, args)], capture_output=True, env=env,
                       timeout=kw.pop("timeout", TIMEOUT), **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"clnz {args} failed ({p.returncode}): {p.stderr} [seed {SEED}]")
    return p


def one_error_line(p, code=1):
    err = p.stderr.decode(errors="replace") if isinstance(p.stderr, bytes) else p.stderr
    assert p.returncode == code, (p.returncode, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("clnz: "), err
    return lines[0]


def npy_bytes(a):
    f = io.BytesIO()
    np.save(f, a)
    return f.getvalue()


def listing(d):
    return sorted(os.listdir(d))


def temporaries(d):
    return [n for n in os.listdir(d) if n.startswith(".clnz-tmp-") or "clnz-tmp" in n]


def wait_stopped(pid, timeout=60):
    """Until the process has stopped itself (the shim's SIGSTOP)."""
    end = time.time() + timeout
    while time.time() < end:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        if state == "T":
            return
        if state == "Z":
            raise AssertionError("clnz exited before it reached the stop")
        time.sleep(0.01)
    raise AssertionError("clnz never stopped")


def shim_env(**kw):
    return dict(os.environ, LD_PRELOAD=SHIM,
                ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0",
                **kw)


def expect_nonzero(out, a):
    got = np.load(out)
    assert got.dtype == np.int64 and np.array_equal(got, np.argwhere(a)), SEED


# ---- 1: two outputs, all or nothing ---------------------------------------------

def test_item1_lost_data_with_two_outputs(tmp_path, rng):
    """Item 1: -o OUT --count-out CNT where CNT cannot be written: OUT keeps
    its old bytes, CNT too, and no temporary is left, whether CNT fails at
    once (a directory, a missing folder) or only when the outputs are put in
    place (a FIFO nobody reads)."""
    a = random_array(rng, "f4", (40, 50))
    inp = save(tmp_path, a)
    out = tmp_path / "out.npy"
    (tmp_path / "cnt_dir").mkdir()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for cnt in [tmp_path / "cnt_dir", tmp_path / "missing" / "c.npy", fifo]:
        out.write_bytes(SENTINEL)
        before = listing(tmp_path)
        t0 = time.time()
        p = clnz("nonzero", inp, "-o", out, "--count-out", cnt)
        one_error_line(p)
        assert out.read_bytes() == SENTINEL, (cnt, "OUT was replaced")
        assert listing(tmp_path) == before and not temporaries(tmp_path), cnt
        assert time.time() - t0 < FIFO_WAIT + 30
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    # and when both can be written, both are
    cnt = tmp_path / "c.npy"
    clnz("nonzero", inp, "-o", out, "--count-out", cnt, check=True)
    expect_nonzero(out, a)
    assert int(np.load(cnt)) == np.count_nonzero(a)


# ---- 2: inputs cut short while they are read ------------------------------------

@pytest.mark.full  # a 256 MiB input truncated at random moments: the long tier
def test_item2_input_truncated_while_read_is_no_sigbus(tmp_path, rng):
    """Item 2: a 256 MiB input shortened by another process while clnz
    reads it: clnz either answers from what it read whole (numpy's count) or
    fails with one line; never a signal (the mapping gave SIGBUS)."""
    n = 1 << 26
    a = np.zeros(n, np.float32)
    pos = rng.integers(0, n, 1000)
    a[pos] = 1
    inp = save(tmp_path, a, name="big.npy")
    full = inp.read_bytes()
    # the mapping died when the file shrank between the size check and the
    # read: about 10 to 60 ms into a run here; later on slower machines
    delays = sorted(d + rng.uniform(0, 0.004) for d in
                    [0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.07, 0.1, 0.15, 0.25])
    outcomes = []
    for delay in delays:
        inp.write_bytes(full)
        p = subprocess.Popen([CLNZ, "count", str(inp)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        time.sleep(delay)
        os.truncate(inp, 4096)
        out, err = p.communicate(timeout=TIMEOUT)
        assert p.returncode >= 0, (f"killed by signal {-p.returncode} after {delay:.3f} s",
                                   err, SEED)
        if p.returncode == 0:
            assert int(out) == np.count_nonzero(a), (delay, SEED)
        else:
            lines = err.decode().splitlines()
            assert p.returncode == 1 and len(lines) == 1 and lines[0].startswith("clnz: "), err
        outcomes.append(p.returncode)
    print(f"truncation after {[round(d, 3) for d in delays]} s: exit {outcomes} [seed {SEED}]")


def test_item2_stream_cut_short(tmp_path):
    """Item 2: a stream that ends before the shape's bytes: a clear error."""
    data = npy_bytes(np.arange(1000, dtype=np.int64))
    p = clnz("count", "/dev/stdin", input=data[:-100])
    assert "ended after" in one_error_line(p)
    p = clnz("count", "/dev/stdin", input=data + b"x")
    assert "more bytes" in one_error_line(p)


# ---- 3: threads: tests/test_threads.c (test_issue16_item3_threads_create_call_release)

# ---- 4: outputs that are not regular files --------------------------------------

def char_device(tmp_path):
    """A device node to write to: a private null device where we may make
    one (root: a test that replaced /dev/null would break the machine),
    else /dev/null (which a non-root process cannot replace)."""
    if os.geteuid() == 0:
        node = tmp_path / "null"
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        return node
    return "/dev/null"


def test_item4_outputs_that_are_not_regular_files(tmp_path, rng):
    """Item 4: -o onto a character device or FIFO writes through it and
    leaves the node a node; a symlink is followed (the link stays, its target
    gets the result, also when the target does not exist yet); a directory
    is refused."""
    a = random_array(rng, "i2", (30, 7))
    inp = save(tmp_path, a)
    want = np.argwhere(a)

    def same(data):
        got = np.load(io.BytesIO(data))
        return got.dtype == np.int64 and np.array_equal(got, want)
    dev = char_device(tmp_path)
    clnz("nonzero", inp, "-o", dev, check=True)
    assert stat.S_ISCHR(os.stat(dev).st_mode)
    # a FIFO with a reader: the reader gets exactly the .npy
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    clnz("nonzero", inp, "-o", fifo, check=True)
    reader.join(30)
    assert len(got) == 1 and same(got[0]) and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    # a pipe as /dev/stdout
    p = subprocess.run(f"'{CLNZ}' nonzero '{inp}' -o /dev/stdout | cat", shell=True,
                       capture_output=True, timeout=TIMEOUT)
    assert p.returncode == 0 and same(p.stdout), p.stderr
    # symlinks: to an existing file, a dangling one, a chain
    target = tmp_path / "target.npy"
    target.write_bytes(SENTINEL)
    (tmp_path / "link.npy").symlink_to("target.npy")
    clnz("nonzero", inp, "-o", tmp_path / "link.npy", check=True)
    assert (tmp_path / "link.npy").is_symlink() and same(target.read_bytes())
    (tmp_path / "sub").mkdir()
    (tmp_path / "dangling.npy").symlink_to("sub/new.npy")
    (tmp_path / "chain.npy").symlink_to("dangling.npy")
    clnz("nonzero", inp, "-o", tmp_path / "chain.npy", check=True)
    assert (tmp_path / "chain.npy").is_symlink() and (tmp_path / "dangling.npy").is_symlink()
    assert same((tmp_path / "sub" / "new.npy").read_bytes())
    # refused: a directory, a loop of links
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    for bad in [tmp_path / "sub", tmp_path / "loop1", tmp_path / "sub" / ""]:
        one_error_line(clnz("nonzero", inp, "-o", str(bad) + ("/" if bad.name == "" else "")))
    assert not temporaries(tmp_path) and not temporaries(tmp_path / "sub")


# ---- 5: cache --clear removes only clnz's files ---------------------------------

def test_item5_cache_clear_removes_only_clnz_files(tmp_path, rng):
    """Item 5: files clnz did not write stay, whatever their names: a user's
    .txt and .bin, a FIFO, a symlink to a file outside that starts like a
    tuning file; clnz's own (program binaries from a run, a tuning file) go."""
    cache = tmp_path / "cache"
    env = dict(os.environ, CLNZ_CACHE_DIR=str(cache))
    inp = save(tmp_path, random_array(rng, "f4", (10, 10)))
    clnz("count", inp, env=env, check=True)
    programs = listing(cache / "programs")
    assert programs and all(n.endswith(".bin") for n in programs)
    (cache / "tuning").mkdir(exist_ok=True)
    tuned = "# clnz tuning result: written by clnz tune; the checksum covers the lines above it\n"
    (cache / "tuning" / "mine--device--driver.txt").write_text(tuned + "format 1\n")
    foreign = {cache / "tuning" / "notes.txt": b"my notes\n",
               cache / "programs" / "0123456789abcdef.bin": b"\x7fELF not clnz's\n",
               cache / "programs" / "empty.bin": b"",
               cache / "programs" / "x.tmp-123456": b"somebody's temporary\n"}
    for path, data in foreign.items():
        path.write_bytes(data)
    outside = tmp_path / "outside.txt"
    outside.write_text(tuned)
    (cache / "tuning" / "link.txt").symlink_to(outside)
    os.mkfifo(cache / "programs" / "fifo.bin")
    p = clnz("cache", "--clear", env=env, check=True, timeout=60)
    assert int(p.stdout.split()[1]) == len(programs) + 1, p.stdout
    for path, data in foreign.items():
        assert path.read_bytes() == data, path
    assert outside.read_text() == tuned and (cache / "tuning" / "link.txt").is_symlink()
    assert stat.S_ISFIFO(os.lstat(cache / "programs" / "fifo.bin").st_mode)
    assert not any((cache / "programs" / n).exists() for n in programs)
    assert not (cache / "tuning" / "mine--device--driver.txt").exists()


@needs_shim
def test_item5_cache_clear_says_what_it_could_not_remove(tmp_path, rng):
    """A folder where nothing can be removed (EROFS from the shim: root
    ignores file modes): an error, exit 1, not "removed 0 files"."""
    cache = tmp_path / "cache"
    env = dict(os.environ, CLNZ_CACHE_DIR=str(cache))
    clnz("count", save(tmp_path, random_array(rng, "f4", (10, 10))), env=env, check=True)
    programs = listing(cache / "programs")
    p = clnz("cache", "--clear", env=shim_env(CLNZ_CACHE_DIR=str(cache), CLNZ_SHIM_READ_ONLY="1"))
    assert p.returncode == 1 and not p.stdout, p
    assert "cannot clear the cache: 0 files removed from" in one_error_line(p)
    assert listing(cache / "programs") == programs
    p = clnz("cache", "--clear", env=env, check=True)
    assert p.stdout.startswith(f"removed {len(programs)} files".encode()), p.stdout
    # a file as the cache folder, or in its path: said so (it said "others could
    # not be (a read-only folder?)" and "removed 0 files"), and left alone
    f = tmp_path / "file"
    f.write_bytes(b"mine")
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nothing")
    for where in (f, f / "sub", dangling):
        if where == dangling:  # shown only: --clear of a link to nothing removes nothing
            p = clnz("cache", env=dict(os.environ, CLNZ_CACHE_DIR=str(where)))
            assert p.returncode == 1 and "is no folder: no cache is kept" in one_error_line(p)
            continue
        p = clnz("cache", "--clear", env=dict(os.environ, CLNZ_CACHE_DIR=str(where)))
        assert p.returncode == 1 and not p.stdout, p
        assert one_error_line(p) == f"clnz: cannot clear the cache: '{where}' is no folder"
        assert f.read_bytes() == b"mine"
        # shown, it is no folder either (it was printed, exit status 0)
        p = clnz("cache", env=dict(os.environ, CLNZ_CACHE_DIR=str(where)))
        assert p.returncode == 1 and not p.stdout, p
        assert one_error_line(p) == (f"clnz: the cache folder '{where}' is no folder: no cache "
                                     "is kept (set CLNZ_CACHE_DIR to a folder)")
        assert f.read_bytes() == b"mine"


# ---- 7: FIFOs and pipes as inputs, FIFOs in the cache ----------------------------

@pytest.mark.full  # waits out a FIFO without a writer (5 s): the long tier
def test_item7_stdin_and_fifo_inputs(tmp_path, rng):
    """Item 7: a pipe as /dev/stdin and a FIFO with a writer are read as
    streams (against numpy); a FIFO nobody writes fails after the wait, one
    line, no hang; a character device or a directory fails at once."""
    a = random_array(rng, "u2", (33, 17))
    out = tmp_path / "out.npy"
    maker = tmp_path / "make.py"
    maker.write_text("import sys, numpy as np\n"
                     f"np.save(sys.stdout.buffer, np.load({str(save(tmp_path, a))!r}))\n")
    p = subprocess.run(f"'{sys.executable}' '{maker}' | '{CLNZ}' nonzero /dev/stdin -o '{out}'",
                       shell=True, capture_output=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    expect_nonzero(out, a)
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    # the writer opens the FIFO a little after clnz does
    writer = threading.Thread(target=lambda: (time.sleep(0.5), fifo.write_bytes(npy_bytes(a))))
    writer.start()
    p = clnz("count", fifo)
    writer.join(30)
    assert p.returncode == 0 and int(p.stdout) == np.count_nonzero(a), p.stderr
    t0 = time.time()
    assert "no process opened the FIFO" in one_error_line(clnz("count", fifo))
    assert FIFO_WAIT - 1 < time.time() - t0 < FIFO_WAIT + 30
    for bad in ["/dev/zero", tmp_path]:
        t0 = time.time()
        one_error_line(clnz("count", bad))
        assert time.time() - t0 < 30


def test_item7_fifo_in_the_cache_does_not_hang(tmp_path, rng):
    """Item 7: every program binary in the cache replaced by a FIFO: the next
    run neither hangs nor removes them, and answers right."""
    cache = tmp_path / "cache"
    env = dict(os.environ, CLNZ_CACHE_DIR=str(cache))
    a = random_array(rng, "f4", (20, 30))
    inp = save(tmp_path, a)
    clnz("count", inp, env=env, check=True)
    names = listing(cache / "programs")
    for n in names:
        (cache / "programs" / n).unlink()
        os.mkfifo(cache / "programs" / n)
    p = clnz("count", inp, env=env, timeout=120)
    assert p.returncode == 0 and int(p.stdout) == np.count_nonzero(a), p.stderr
    assert all(stat.S_ISFIFO(os.lstat(cache / "programs" / n).st_mode) for n in names)


# ---- 8: the same file twice ----------------------------------------------------

def test_item8_same_file_for_two_outputs_is_refused(tmp_path, rng):
    """Item 8: -o and --count-out (or --offsets-out) naming one file, as the
    same string, another spelling, a symlink or a hard link, existing or
    not: refused, nothing written."""
    a = random_array(rng, "u1", (6, 9))
    inp = save(tmp_path, a)
    (tmp_path / "sub").mkdir()
    x = tmp_path / "x.npy"
    pairs = [(x, x), (x, tmp_path / "sub" / ".." / "x.npy"), (x, "./x.npy")]
    for first, second in pairs:
        for exists in (False, True):
            if exists:
                x.write_bytes(SENTINEL)
            else:
                x.unlink(missing_ok=True)
            p = clnz("nonzero", inp, "-o", first, "--count-out", second, cwd=tmp_path)
            assert "same file" in one_error_line(p), (first, second)
            assert (x.read_bytes() == SENTINEL) if exists else not x.exists()
    x.write_bytes(SENTINEL)
    (tmp_path / "sym.npy").symlink_to("x.npy")
    os.link(x, tmp_path / "hard.npy")
    for other in ["sym.npy", "hard.npy"]:
        p = clnz("nonzero", inp, "--batch", "-o", x, "--offsets-out", tmp_path / other)
        assert "same file" in one_error_line(p), other
    assert x.read_bytes() == SENTINEL and not temporaries(tmp_path)


# ---- 10: modes ------------------------------------------------------------------

@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_item10_modes_follow_umask_and_stay_on_overwrite(tmp_path, rng, umask):
    """Item 10: a new output is 0666 less the umask; an existing one keeps
    its mode (0600, 0640, 0755) when it is replaced."""
    inp = save(tmp_path, random_array(rng, "i4", (5, 5)))
    new = tmp_path / "new.npy"
    clnz("nonzero", inp, "-o", new, check=True, preexec_fn=lambda: os.umask(umask))
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o666 & ~umask
    for mode in (0o600, 0o640, 0o755):
        old = tmp_path / f"old{mode:o}.npy"
        old.write_bytes(SENTINEL)
        os.chmod(old, mode)
        clnz("nonzero", inp, "-o", old, "--count-out", tmp_path / "c.npy", check=True,
             preexec_fn=lambda: os.umask(umask))
        assert stat.S_IMODE(os.stat(old).st_mode) == mode
        assert old.read_bytes() != SENTINEL


# ---- 11: empty arrays with huge extents -------------------------------------------

def huge_empty(tmp_path, shape, descr="|u1", name="empty.npy"):
    """A .npy header as numpy writes it, for shapes numpy may refuse to make."""
    h = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape!r}, }}".encode()
    h += b" " * (64 - (10 + len(h) + 1) % 64) + b"\n"
    path = tmp_path / name
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h)
    return path


@pytest.mark.parametrize("shape", [(0, 2**62), (0, 2**63 - 1), (2**40, 0, 2**40),
                                   (3, 2**62, 0, 2**62)])
def test_item11_empty_array_with_huge_extents(tmp_path, shape):
    """Item 11: an array with no element is valid whatever its other
    extents: nonzero gives (0, rank), count 0, select an empty array."""
    inp = huge_empty(tmp_path, shape)
    if shape == (0, 2**62):  # numpy itself makes this one
        np.save(inp, np.zeros(shape, np.uint8))
    out = tmp_path / "out.npy"
    for layout, want in [("rows", (0, len(shape))), ("columns", (len(shape), 0)), ("flat", (0,))]:
        clnz("nonzero", inp, "-o", out, "--layout", layout, check=True)
        got = np.load(out)
        assert got.shape == want and got.dtype == np.int64, (layout, got.shape)
    p = clnz("count", inp, check=True)
    assert int(p.stdout) == 0
    clnz("select", inp, "-o", out, check=True)
    assert np.load(out).shape == (0,)
    p = clnz("count", huge_empty(tmp_path, shape, descr="<f8", name="f8.npy"), check=True)
    assert int(p.stdout) == 0
    counts = tmp_path / "counts.npy"  # along every axis but the first, as the batch below
    p = clnz("count", inp, "--axis", ",".join(map(str, range(1, len(shape)))), "-o", counts)
    if shape[0] < 2**20:
        assert p.returncode == 0, p.stderr
        assert np.array_equal(np.load(counts), np.zeros(shape[0], np.int64))
    else:  # one count per item, 8 TiB: refused as the offsets below
        assert "counts do not fit in memory" in one_error_line(p)
        assert not counts.exists()
    offs = tmp_path / "offs.npy"
    p = clnz("nonzero", inp, "--batch", "-o", out, "--offsets-out", offs)
    if shape[0] < 2**20:
        assert p.returncode == 0, p.stderr
        assert np.load(out).shape == (0, len(shape) - 1)
        assert np.array_equal(np.load(offs), np.zeros(shape[0] + 1, np.int64))
    else:  # one offset per item, 8 TiB: refused before any allocation, which a host
        # that overcommits grants (the H200's ran past 120 s filling it)
        assert "offsets do not fit in memory" in one_error_line(p)
        assert not offs.exists()


# ---- 12: messages ----------------------------------------------------------------

def test_item12_messages_name_paths_on_one_line(tmp_path, rng):
    """Item 12: a rename that fails names its path (it said 'into ?'); a
    newline in a path stays inside one quoted line; an output name of 255
    bytes works (the temporary's suffix used to pass NAME_MAX)."""
    inp = save(tmp_path, random_array(rng, "u1", (4, 4)))
    (tmp_path / "d").mkdir()
    line = one_error_line(clnz("nonzero", inp, "-o", tmp_path / "o.npy", "--count-out",
                               tmp_path / "d"))
    assert "'" + str(tmp_path / "d") + "'" in line and "?" not in line
    bad = tmp_path / "a\nb" / "out.npy"
    line = one_error_line(clnz("nonzero", inp, "-o", bad))
    assert str(bad).replace("\n", "\\n") in line
    line = one_error_line(clnz("count", tmp_path / "no\nsuch.npy"))
    assert "no\\nsuch.npy" in line
    for n in (254, 255):
        long = tmp_path / ("L" * (n - 4) + ".npy")
        clnz("nonzero", inp, "-o", long, "--count-out", tmp_path / ("C" * (n - 4) + ".npy"),
             check=True)
        assert long.exists()
    line = one_error_line(clnz("nonzero", inp, "-o", tmp_path / ("L" * 256)))
    assert "too long" in line
    assert not temporaries(tmp_path)


@pytest.mark.parametrize("w,h", [(2**40, 2**40), (2**33, 2**33 + 1), (3, 5)])
def test_item12_byte_counts_do_not_wrap(tmp_path, w, h):
    """Item 12: a PNM header whose size passes 2^64 bytes: the message shows
    the real size (or the dimensions), never a product that wrapped."""
    path = tmp_path / "big.ppm"
    path.write_bytes(b"P6\n%d %d\n255\n" % (w, h) + b"\0" * 7)
    line = one_error_line(clnz("count", path))
    assert "truncated" in line
    need = w * h * 3
    assert str(need) in line or (str(w) in line and str(h) in line), line


# ---- 13: too lenient ---------------------------------------------------------------

def npy_with_header(tmp_path, header: bytes, data: bytes, name="bad.npy"):
    h = header + b" " * (64 - (10 + len(header) + 1) % 64) + b"\n"
    path = tmp_path / name
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + data)
    return path


def test_item13_strict_header_env_and_predicate(tmp_path, rng):
    """Item 13: a NUL inside the descr, bytes after the header dictionary,
    CLNZ_MAX_ALLOC=12abc and --pred gt:nan(123) are errors; the well-formed
    forms of each still work."""
    data = np.arange(4, dtype="<f4").tobytes()
    ok = b"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"
    assert int(clnz("count", npy_with_header(tmp_path, ok, data), check=True).stdout) == 3
    for header in [b"{'descr': '<f4\0', 'fortran_order': False, 'shape': (4,), }",
                   b"{'descr': '<f4\0junk', 'fortran_order': False, 'shape': (4,), }",
                   ok + b" junk",
                   ok + b"}"]:
        one_error_line(clnz("count", npy_with_header(tmp_path, header, data)))
    inp = save(tmp_path, random_array(rng, "f4", (100,)))
    for bad in ["12abc", "1.5M", "-4K", "K", "99999999999999999999"]:
        env = dict(os.environ, CLNZ_MAX_ALLOC=bad)
        assert "CLNZ_MAX_ALLOC" in one_error_line(clnz("count", inp, env=env)), bad
    for good in ["64K", "1048576", "1G"]:
        clnz("count", inp, env=dict(os.environ, CLNZ_MAX_ALLOC=good), check=True)
    for bad in ["gt:nan(123)", "gt:nan()", "gt:inf(1)", "lt: 1", "lt:1 "]:
        one_error_line(clnz("count", inp, "--pred", bad), code=2)
    for good in ["gt:nan", "ne:NaN", "lt:-inf", "le:Infinity", "ge:1e3", "eq:-0.0"]:
        clnz("count", inp, "--pred", good, check=True)


def test_bad_environment_values_fail_with_the_value_quoted(tmp_path, rng):
    """Every CLNZ_* variable a context reads refuses a value it does not
    take, naming the variable and quoting the value (a line break or an
    escape in it stays one line), before any output is made: exit 1 with
    one line, the status CLNZ_ERROR_INVALID_VALUE in the library.
    CLNZ_STRATEGY=unknown was UNSUPPORTED_STRATEGY, and these messages wrote
    the value raw (the command showed a line break as '?')."""
    inp = save(tmp_path, random_array(rng, "f4", (50,)))
    out = tmp_path / "o.npy"
    takes = {"CLNZ_STRATEGY": "unknown strategy", "CLNZ_NO_COMPILE": "1 (never compile) or 0",
             "CLNZ_LOOKBACK_SPIN": "a number of reads", "CLNZ_LOOKBACK_ATOMICS": "32, or 64",
             "CLNZ_LOOKBACK_WINDOW": "a number of tile states read at once, 1 to 64",
             "CLNZ_LOOKBACK_TEST_SPARSE": "0 (off) or every how many tiles",
             "CLNZ_LOOKBACK_SCATTER": "staged, direct or hybrid",
             "CLNZ_MAX_ALLOC": "not a byte count",
             "CLNZ_STREAM_STORES": "1 (non-temporal stores where the kernel can) or 0",
             "CLNZ_COUNT_LOCKSTEP": "1 (counts along axes step their work-items together) or 0",
             # read as "no" before (only 1 tuned): CLNZ_AUTOTUNE=yes tuned nothing, silently
             "CLNZ_AUTOTUNE": "1 (tune a device on first use) or 0"}
    for name, why in takes.items():
        for value in ("warp-speed", "x\ny\x1b[1m'"):
            line = one_error_line(clnz("nonzero", inp, "-o", out, env=dict(os.environ,
                                                                          **{name: value})))
            assert line.startswith(f"clnz: {name}={io_quote(value)}: {why}"), line
            assert not out.exists()
    for name, value in (("CLNZ_LOOKBACK_WINDOW", "0"), ("CLNZ_LOOKBACK_WINDOW", "65"),
                        ("CLNZ_LOOKBACK_TEST_SPARSE", "1"), ("CLNZ_LOOKBACK_TEST_SPARSE", "01"),
                        ("CLNZ_LOOKBACK_TEST_SPARSE", "1001"), ("CLNZ_LOOKBACK_SPIN", "-0"),
                        ("CLNZ_LOOKBACK_SPIN", "1000000001"), ("CLNZ_LOOKBACK_SPIN", "5k"),
                        # strtoul skipped spaces and took a sign: " -0" passed as 0
                        ("CLNZ_LOOKBACK_SPIN", " -0"), ("CLNZ_LOOKBACK_WINDOW", " 5"),
                        ("CLNZ_LOOKBACK_WINDOW", "+5"), ("CLNZ_LOOKBACK_TEST_SPARSE", "\n5")):
        line = one_error_line(clnz("count", inp, env=dict(os.environ, **{name: value})))
        assert line.startswith(f"clnz: {name}={io_quote(value)}: {takes[name]}"), line
    # every look-back value at its longest: build options past what clnz holds, refused
    # (program_append cut them, and the cut variant was built); a spin of 1 builds (126)
    longest = {"CLNZ_STRATEGY": "lookback", "CLNZ_LOOKBACK_SCATTER": "direct",
               "CLNZ_LOOKBACK_SPIN": "1000000000", "CLNZ_LOOKBACK_WINDOW": "64",
               "CLNZ_LOOKBACK_TEST_SPARSE": "1000"}
    line = one_error_line(clnz("count", inp, env=dict(os.environ, **longest)))
    assert line.endswith("build options of kernels/lookback.cl come to 135 bytes, more than the "
                         "127 clnz holds: shorten the environment values that set them"), line
    p = clnz("count", inp, env=dict(os.environ, **dict(longest, CLNZ_LOOKBACK_SPIN="1")))
    assert p.returncode == 0 and int(p.stdout) == np.count_nonzero(np.load(inp)), p.stderr
    for name, value in (("CLNZ_LOOKBACK_WINDOW", "64"), ("CLNZ_LOOKBACK_TEST_SPARSE", "0"),
                        ("CLNZ_LOOKBACK_SCATTER", "staged"), ("CLNZ_LOOKBACK_SCATTER", "")):
        clnz("count", inp, check=True, env=dict(os.environ, **{name: value}))
    for value in ("99999999999999G", "18446744073709551616", "17179869184G"):
        line = one_error_line(clnz("count", inp, env=dict(os.environ, CLNZ_MAX_ALLOC=value)))
        assert line == f"clnz: CLNZ_MAX_ALLOC='{value}': a byte count past 2^64 - 1", line
    clnz("count", inp, check=True, env=dict(os.environ, CLNZ_MAX_ALLOC="17179869183G"))
    for name in ("CLNZ_AUTOTUNE", "CLNZ_NO_COMPILE", "CLNZ_STREAM_STORES",
                 "CLNZ_COUNT_LOCKSTEP"):  # the yes/no ones
        for value in ("0", ""):
            clnz("count", inp, check=True, env=dict(os.environ, **{name: value}))
    line = one_error_line(clnz("count", inp, env=dict(os.environ, CLNZ_DEVICE="a\nb")), code=2)
    assert line == f"clnz: CLNZ_DEVICE {io_quote('a' + chr(10) + 'b')}: no device matches " \
                   "(see clnz devices)", line


@needs_shim
def test_device_listing_quotes_odd_names():
    """`clnz devices` printed a device's name raw: a line break in it (the
    shim's CLNZ_SHIM_DEVICE_NAME) split the device over two lines. A name
    with a control character is quoted as messages quote names; a plain one
    is left as it is."""
    plain = clnz("devices", check=True).stdout.decode()
    odd = "odd\ndevice\x1b[1m it's"
    p = clnz("devices", check=True, env=shim_env(CLNZ_SHIM_DEVICE_NAME=odd))
    lines = p.stdout.decode().splitlines()
    assert len(lines) == len(plain.splitlines()), lines
    devices = [line for line in lines if not line.startswith("default ")]
    assert devices and all(f"  {io_quote(odd)}  [" in line for line in devices), lines
    assert all("'" not in line.split("  [")[0] for line in plain.splitlines()[:-1]), plain


# ---- 14: temporaries after kill -9, SIGINT and SIGTERM ------------------------------

# Signals that end a process by default and that only come from outside:
# clnz takes each as SIGINT (SIGPWR, SIGIO and the real-time ones ended it
# with its temporaries left in the folder).
FATAL_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
                 signal.SIGPWR, signal.SIGIO, signal.SIGRTMIN, signal.SIGRTMAX)


def default_signals():
    """A child's dispositions as a terminal's foreground job has them: a test
    run started in the background (nohup, `cmd &` in a script) ignores
    SIGINT and SIGHUP, exec keeps an ignored signal ignored, and clnz, as any
    program, then lives through it."""
    for s in FATAL_SIGNALS:
        signal.signal(s, signal.SIG_DFL)


def killed_at(tmp_path, args, stop, sig, **env):
    """Runs clnz until the shim stops it at `stop`, then sends sig (and
    SIGCONT, for a signal it can handle); returns the exit status."""
    p = subprocess.Popen([CLNZ, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=shim_env(CLNZ_SHIM_STOP=stop, **env), preexec_fn=default_signals)
    try:
        wait_stopped(p.pid)
        os.kill(p.pid, sig)
        os.kill(p.pid, signal.SIGCONT)
        p.communicate(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
    return p.returncode


@needs_shim
@pytest.mark.parametrize("tmpfile", ["1", "0"])
def test_item14_kill_9_leaves_no_temporaries(tmp_path, rng, tmpfile):
    """Item 14: clnz killed with SIGKILL while it writes its outputs (at the
    fsync), or between naming a temporary and renaming it: nothing is left,
    or what is left is removed by the next run in that folder; a file of the
    same kind whose writer is alive, or that is not clnz's, stays. With
    O_TMPFILE and without (CLNZ_SHIM_NO_TMPFILE)."""
    a = random_array(rng, "f4", (64, 64))
    inp = save(tmp_path, a)
    out = tmp_path / "out.npy"
    no_tmpfile = "0" if tmpfile == "1" else "1"
    for stop in ["fsync", "renameat"]:
        out.write_bytes(SENTINEL)
        before = listing(tmp_path)
        rc = killed_at(tmp_path, ["nonzero", inp, "-o", out], stop, signal.SIGKILL,
                       CLNZ_SHIM_NO_TMPFILE=no_tmpfile)
        assert rc == -signal.SIGKILL and out.read_bytes() == SENTINEL
        left = temporaries(tmp_path)
        if stop == "fsync" and tmpfile == "1":
            assert not left, left  # the temporary had no name yet
        # files that look alike but are not stale clnz temporaries
        alive = tmp_path / ".clnz-tmp-alive000"
        alive.write_bytes(b"\x93NUMPY")
        holder = subprocess.Popen([sys.executable, "-c",
                                   "import fcntl, sys; f = open(sys.argv[1]); "
                                   "fcntl.flock(f, fcntl.LOCK_EX); print(1, flush=True); "
                                   "sys.stdin.read()", str(alive)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert holder.stdout.readline() == b"1\n"
        other = tmp_path / ".clnz-tmp-notnpy00"
        other.write_bytes(b"not clnz's")
        clnz("nonzero", inp, "-o", tmp_path / "next.npy", check=True,
             env=shim_env(CLNZ_SHIM_NO_TMPFILE=no_tmpfile))
        holder.stdin.close()
        holder.wait(30)
        assert alive.exists() and other.exists()
        alive.unlink()
        other.unlink()
        (tmp_path / "next.npy").unlink()
        assert listing(tmp_path) == before, (stop, left, listing(tmp_path))


@needs_shim
@pytest.mark.parametrize("fmt", ["csv", "txt"])
def test_text_temporaries_of_a_killed_run_are_removed(tmp_path, rng, fmt):
    """A csv or txt output's named temporary, left by a run killed between
    naming it and the rename, is removed by the next run in that folder
    (it was kept: only a .npy's start counted as clnz's); a file of that
    name with other text stays."""
    a = random_array(rng, "f4", (40, 50))
    inp = save(tmp_path, a)
    out = tmp_path / f"out.{fmt}"
    before = listing(tmp_path)
    rc = killed_at(tmp_path, ["nonzero", inp, "-o", out, "--format", fmt], "renameat",
                   signal.SIGKILL, CLNZ_SHIM_NO_TMPFILE="1")
    assert rc == -signal.SIGKILL and not out.exists()
    left = temporaries(tmp_path)
    assert len(left) == 1, left
    assert np.array_equal(np.loadtxt(tmp_path / left[0], delimiter="," if fmt == "csv" else None,
                                     dtype=np.int64), np.argwhere(a))
    other = tmp_path / ".clnz-tmp-words000"
    other.write_text("1, 2 and 3\n")
    clnz("nonzero", inp, "--format", fmt, "-o", tmp_path / "next.txt", check=True)
    assert temporaries(tmp_path) == [other.name]
    other.unlink()
    (tmp_path / "next.txt").unlink()
    assert listing(tmp_path) == before


@needs_shim
@pytest.mark.parametrize("sig", FATAL_SIGNALS)
@pytest.mark.parametrize("tmpfile", ["1", "0"])
def test_item14_signals_leave_no_temporaries(tmp_path, rng, sig, tmpfile):
    """Item 14 (and the brief's SIGINT / SIGTERM): a signal while clnz
    writes its outputs kills it with that signal and leaves no temporary
    and every output as it was; a signal that arrives while the outputs are
    put in place waits for the last rename: all of them are new."""
    a = random_array(rng, "u1", (50, 60))
    inp = save(tmp_path, a)
    out, cnt = tmp_path / "out.npy", tmp_path / "cnt.npy"
    no_tmpfile = "0" if tmpfile == "1" else "1"
    for stop in ["fsync", "renameat"]:
        out.write_bytes(SENTINEL)
        cnt.write_bytes(SENTINEL)
        before = listing(tmp_path)
        rc = killed_at(tmp_path, ["nonzero", inp, "-o", out, "--count-out", cnt], stop, sig,
                       CLNZ_SHIM_NO_TMPFILE=no_tmpfile)
        assert rc == -sig, rc
        assert listing(tmp_path) == before, listing(tmp_path)
        if stop == "fsync":
            assert out.read_bytes() == SENTINEL and cnt.read_bytes() == SENTINEL
        else:
            expect_nonzero(out, a)
            assert int(np.load(cnt)) == np.count_nonzero(a)


@needs_shim
@pytest.mark.parametrize("mode", ["process", "thread", "late", "late-thread", "prof"])
def test_item14_a_profiler_s_signal_is_not_fatal(tmp_path, rng, mode):
    """A library in the process that handles a timer's signal (a sampling
    profiler's 1 ms real-time one, to the process or to the main thread, its
    handler set before main or after clnz started; gperftools' SIGPROF): the
    signal is the library's, with its own siginfo, not one that ends clnz.
    Once every real-time signal was taken as fatal, the first tick killed
    clnz (to the process) or hung it (to the main thread: the waiter never
    takes that one); SIGPROF handled before main killed it always."""
    a = random_array(rng, "u1", (1500, 1000))
    inp = save(tmp_path, a)
    out = tmp_path / "out.npy"
    p = subprocess.run([CLNZ, "nonzero", str(inp), "-o", str(out)], capture_output=True,
                       env=shim_env(CLNZ_SHIM_PROFILER=mode), timeout=TIMEOUT)
    assert p.returncode == 0, p
    expect_nonzero(out, a)
    said = p.stderr.decode().split("shim: ")[1].split()
    ticks, bad = int(said[0]), int(said[3])
    assert ticks > 0 or mode == "late-thread", p.stderr  # those wait, blocked, for the commit
    assert bad == 0, p.stderr  # a late one re-delivered with the timer's own siginfo


# ---- 17: long cache paths ----------------------------------------------------------

def long_dir(base, total):
    """A folder whose path is at least `total` bytes, of 200-byte names."""
    d = base
    while len(str(d)) < total:
        d = d / ("d" * 200)
    d.mkdir(parents=True)
    return d


def test_item17_long_cache_dir_is_not_cut(tmp_path, rng):
    """Item 17: a CLNZ_CACHE_DIR of over 1024 bytes is used whole: the cache
    lands there, `clnz cache` prints it, --clear empties it and nothing in
    the folder its first 1023 bytes name; one longer than PATH_MAX is an
    error for `clnz cache`, and --clear then removes nothing."""
    cache = long_dir(tmp_path, 1500)
    cut = tmp_path / str(cache)[len(str(tmp_path)) + 1:1023]
    env = dict(os.environ, CLNZ_CACHE_DIR=str(cache))
    inp = save(tmp_path, random_array(rng, "f4", (8, 8)))
    clnz("count", inp, env=env, check=True)
    assert listing(cache / "programs")
    p = clnz("cache", env=env, check=True)
    assert p.stdout.decode().strip() == str(cache)
    # the folder a cut-down path names holds clnz files of its own
    (cut / "programs").mkdir(parents=True, exist_ok=True)
    for n in listing(cache / "programs"):
        (cut / "programs" / n).write_bytes((cache / "programs" / n).read_bytes())
    kept = listing(cut / "programs")
    p = clnz("cache", "--clear", env=env, check=True)
    assert not listing(cache / "programs") and listing(cut / "programs") == kept
    too_long = str(cache) + "/" + "e" * 200 * 20
    env = dict(os.environ, CLNZ_CACHE_DIR=too_long)
    assert "too long" in one_error_line(clnz("cache", env=env))
    assert "too long" in one_error_line(clnz("cache", "--clear", env=env))
    assert listing(cut / "programs") == kept
    p = clnz("count", inp, env=env, check=True)  # no cache, still an answer
    assert int(p.stdout) == np.count_nonzero(np.load(inp))


# ---- 18: resource limits -----------------------------------------------------------

@pytest.mark.skipif(INSTRUMENTED, reason="a sanitizer or valgrind needs more than the limit")
@pytest.mark.parametrize("limit,words", [((resource.RLIMIT_NOFILE, 4), "open files"),
                                         ((resource.RLIMIT_AS, 200 << 20), "ulimit -v")])
def test_item18_resource_limits_are_named(tmp_path, rng, limit, words):
    """Item 18: under `ulimit -n 4` or `ulimit -v 200M`, clnz says what
    failed (the driver's status, the limit), not just 'no OpenCL device'."""
    inp = save(tmp_path, random_array(rng, "f4", (10,)))
    which, value = limit
    p = clnz("count", inp, preexec_fn=lambda: resource.setrlimit(which, (value, value)))
    if p.returncode == 0:
        pytest.skip("the driver works under this limit here")
    line = one_error_line(p)
    assert words in line, line
    assert "clGetPlatformIDs" in line or "memory" in line or "files" in line, line


# ---- beyond the list: what a hostile user tried next --------------------------------

def big_input(tmp_path, rng, name="big.npy"):
    """An input whose result takes a while to write (about 40 MB)."""
    a = (rng.random((2048, 4096)) < 0.3).astype(np.uint8)
    return a, save(tmp_path, a, name=name)


def test_hostile_signal_at_any_time_leaves_outputs_whole(tmp_path, rng):
    """SIGINT or SIGTERM at random moments of a run (reading, computing,
    writing, renaming): clnz either finishes or dies of the signal; both
    outputs are then both new or both old, and no temporary is left."""
    a, inp = big_input(tmp_path, rng)
    out, cnt = tmp_path / "out.npy", tmp_path / "cnt.npy"
    start = time.time()
    clnz("nonzero", inp, "-o", out, "--count-out", cnt, check=True)
    whole = time.time() - start
    seen = []
    for k in range(8):
        out.write_bytes(SENTINEL)
        cnt.write_bytes(SENTINEL)
        sig = (signal.SIGINT, signal.SIGTERM)[k % 2]
        delay = float(rng.uniform(0, whole * 1.2))
        p = subprocess.Popen([CLNZ, "nonzero", str(inp), "-o", str(out), "--count-out", str(cnt)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=default_signals)
        time.sleep(delay)
        p.send_signal(sig)
        p.communicate(timeout=TIMEOUT)
        assert p.returncode in (0, -sig), (p.returncode, delay, SEED)
        assert not temporaries(tmp_path), (delay, temporaries(tmp_path), SEED)
        if out.read_bytes() == SENTINEL:
            assert cnt.read_bytes() == SENTINEL, (delay, SEED)
        else:
            expect_nonzero(out, a)
            assert int(np.load(cnt)) == np.count_nonzero(a), (delay, SEED)
        seen.append((round(delay, 3), p.returncode))
    print(f"signals after (s, exit): {seen} [seed {SEED}]")


def test_hostile_concurrent_writers_of_one_output(tmp_path, rng):
    """Six runs writing the same output at once: each succeeds, the output
    is one whole result, no run removes another's live temporary."""
    a, inp = big_input(tmp_path, rng)
    out = tmp_path / "out.npy"
    procs = [subprocess.Popen([CLNZ, "nonzero", str(inp), "-o", str(out)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(6)]
    for p in procs:
        _, err = p.communicate(timeout=TIMEOUT)
        assert p.returncode == 0, err
    expect_nonzero(out, a)
    assert not temporaries(tmp_path)


@needs_shim
def test_hostile_symlinks_swapped_in_during_a_run(tmp_path, rng):
    """While clnz writes (stopped at its fsync), the output is replaced by a
    symlink to another file, and the output's folder by a symlink to another
    folder: neither target is touched; the result lands where the run
    started to write it, in place of the name."""
    a = random_array(rng, "u1", (30, 40))
    inp = save(tmp_path, a)
    victim = tmp_path / "victim.npy"
    victim.write_bytes(SENTINEL)
    out = tmp_path / "out.npy"
    out.write_bytes(SENTINEL)
    (tmp_path / "sub").mkdir()
    (tmp_path / "elsewhere").mkdir()
    for stop in ["fsync", "renameat"]:
        p = subprocess.Popen([CLNZ, "nonzero", str(inp), "-o", str(out), "--count-out",
                              str(tmp_path / "sub" / "c.npy")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=shim_env(CLNZ_SHIM_STOP=stop))
        wait_stopped(p.pid)
        out.unlink()
        out.symlink_to(victim)
        (tmp_path / "sub").rename(tmp_path / "moved")
        (tmp_path / "sub").symlink_to("elsewhere")
        os.kill(p.pid, signal.SIGCONT)
        _, err = p.communicate(timeout=TIMEOUT)
        assert p.returncode == 0, err
        assert victim.read_bytes() == SENTINEL and not out.is_symlink()
        expect_nonzero(out, a)
        assert not os.listdir(tmp_path / "elsewhere")
        assert int(np.load(tmp_path / "moved" / "c.npy")) == np.count_nonzero(a)
        (tmp_path / "sub").unlink()
        (tmp_path / "moved").rename(tmp_path / "sub")
        assert not temporaries(tmp_path) and not temporaries(tmp_path / "sub")


def test_hostile_resource_limits_on_outputs(tmp_path, rng):
    """ulimit -f below the output's size: a write error with a message, the
    old output kept, no temporary left (SIGXFSZ, whose default action kills,
    is ignored); stdout that cannot be written (/dev/full, closed): exit 1
    with a message, not 0; an output on a pipe closed early: 'Broken pipe'."""
    a, inp = big_input(tmp_path, rng)
    out = tmp_path / "out.npy"
    out.write_bytes(SENTINEL)
    limit = 1 << 20

    def limited():  # as from a login shell: SIGXFSZ's default action, which kills
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    p = clnz("nonzero", inp, "-o", out, preexec_fn=limited)
    assert "too large" in one_error_line(p)
    assert out.read_bytes() == SENTINEL and not temporaries(tmp_path)
    small = save(tmp_path, random_array(rng, "i4", (10,)), name="small.npy")
    with open("/dev/full", "w") as full:
        p = subprocess.run([CLNZ, "count", str(small)], stdout=full, stderr=subprocess.PIPE,
                           timeout=TIMEOUT)
    assert "standard output" in one_error_line(p)
    p = subprocess.run(f"'{CLNZ}' count '{small}' >&-", shell=True, capture_output=True,
                       timeout=TIMEOUT)
    assert "standard output" in one_error_line(p)
    p = subprocess.run(f"'{CLNZ}' nonzero '{inp}' -o /dev/stdout | head -c 10 > /dev/null; "
                       "exit ${PIPESTATUS[0]}", shell=True, executable="/bin/bash",
                       capture_output=True, timeout=TIMEOUT)
    assert "Broken pipe" in one_error_line(p)


def test_hostile_closed_standard_streams_do_not_take_files(tmp_path, rng):
    """Started with stdin and stdout closed, clnz's own files must not get
    descriptors 0 and 1 (where a printed count would land in them): the
    output is the result and nothing else."""
    a = random_array(rng, "f4", (20, 20))
    inp = save(tmp_path, a)
    out = tmp_path / "out.npy"
    p = subprocess.run(f"'{CLNZ}' nonzero '{inp}' -o '{out}' <&- >&-", shell=True,
                       capture_output=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    expect_nonzero(out, a)


def test_hostile_headers(tmp_path):
    """Shapes and headers built to overflow or confuse: one error line each,
    nothing allocated from them (a 2^62-element claim over a few bytes)."""
    data = b"\0" * 64
    cases = [
        b"{'descr': '<f4', 'fortran_order': False, 'shape': (" + b"1, " * 33 + b"), }",
        b"{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775808,), }",
        b"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
        b"{'descr': '<f4', 'fortran_order': False, 'shape': (2.0,), }",
        b"{'descr': '<f4', 'fortran_order': False, 'shape': ((2,),), }",
        b"{'descr': '<f4', 'fortran_order': False, 'shape': (2**62,), }",
        b"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 2), }",
        b"{'descr': '<f4', 'fortran_order': False, 'shape': (3037000500, 3037000500), }",
        b"{'descr': '<f4', 'fortran_order': 0, 'shape': (16,), }",
        b"{'descr': '<f4', 'fortran_order': False, 'shape': (16,), 'extra': 1}",
        b"{'descr': '<f4', 'fortran_order': False, 'shape': (16,)",
    ]
    for k, header in enumerate(cases):
        one_error_line(clnz("count", npy_with_header(tmp_path, header, data, name=f"h{k}.npy")))
    # a version 2 header that claims 4 GiB
    path = tmp_path / "v2.npy"
    path.write_bytes(b"\x93NUMPY\x02\x00" + (0xFFFFFFF0).to_bytes(4, "little") + b"{" * 100)
    assert "absurdly long" in one_error_line(clnz("count", path))
