"""Image inputs of the command line (PNG through libpng, PGM, PPM), the
channel rule and --order xy, against numpy. The images are encoded here
from random numpy arrays (PNG with Python's zlib, following the PNG
specification), so the arrays themselves are the reference decode.
Helpers from test_cli.py."""
import struct
import zlib

import numpy as np
import pytest

from test_cli import SEED, expect_error, rng, run, save  # noqa: F401 (rng: a fixture)

COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> PNG colour type


def png_chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def png_bytes(rows, width, height, depth, color_type, extra=b"", filter_up=False):
    """A PNG of already packed rows (bytes per row), filter None or Up."""
    raw, prev = bytearray(), bytes(len(rows[0]))
    for row in rows:
        if filter_up:
            raw += b"\x02" + bytes((a - b) & 255 for a, b in zip(row, prev))
        else:
            raw += b"\x00" + row
        prev = row
    ihdr = struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + extra
            + png_chunk(b"IDAT", zlib.compress(bytes(raw))) + png_chunk(b"IEND", b""))


def write_png(path, a, filter_up=False):
    """a: (H, W) or (H, W, C) u8 or u16."""
    h, w = a.shape[:2]
    c = 1 if a.ndim == 2 else a.shape[2]
    depth = 16 if a.dtype == np.uint16 else 8
    big = a.astype(">u2") if depth == 16 else a
    rows = [big[y].tobytes() for y in range(h)]
    path.write_bytes(png_bytes(rows, w, h, depth, COLOR_TYPES[c], filter_up=filter_up))
    return path


def write_pnm(path, a, maxval=None, comment=True):
    c = 1 if a.ndim == 2 else 3
    maxval = maxval or (65535 if a.dtype == np.uint16 else 255)
    head = f"P{5 if c == 1 else 6}\n" + ("# made by test_cli_image\n" if comment else "")
    head += f"{a.shape[1]} {a.shape[0]}\n{maxval}\n"
    body = a.astype(">u2").tobytes() if maxval > 255 else a.astype(np.uint8).tobytes()
    path.write_bytes(head.encode() + body)
    return path


def random_image(rng, shape, dtype, density=0.3):
    hi = 65535 if dtype == np.uint16 else 255
    a = rng.integers(1, hi + 1, shape).astype(dtype)
    a[rng.random(shape) >= density] = 0
    return a


def nonzero_of(path, tmp_path, *args):
    out = tmp_path / "o.npy"
    run("nonzero", path, "-o", out, *args)
    return np.load(out)


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_png_decodes_to_the_array(tmp_path, rng, channels, dtype):
    shape = (int(rng.integers(1, 90)), int(rng.integers(1, 130)))
    if channels > 1:
        shape += (channels,)
    a = random_image(rng, shape, dtype)
    png = write_png(tmp_path / "a.png", a, filter_up=bool(rng.integers(0, 2)))
    got = nonzero_of(png, tmp_path)
    assert np.array_equal(got, np.argwhere(a)), SEED
    out = tmp_path / "s.npy"  # select returns the decoded values themselves
    run("select", png, "-o", out)
    got = np.load(out)
    assert got.dtype == a.dtype and np.array_equal(got, a[a != 0]), SEED


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_low_bit_gray_png_becomes_8_bit(tmp_path, rng, depth):
    h, w = 23, 37
    a = rng.integers(0, 2 ** depth, (h, w)).astype(np.uint8)
    rows = []
    for y in range(h):
        bits = np.unpackbits(a[y, :, None], axis=1)[:, 8 - depth:].ravel()
        rows.append(np.packbits(bits).tobytes())
    (tmp_path / "g.png").write_bytes(png_bytes(rows, w, h, depth, 0))
    out = tmp_path / "s.npy"
    run("select", tmp_path / "g.png", "-o", out)
    scaled = a * np.uint8(255 // (2 ** depth - 1))  # as libpng (and viewers) expand them
    assert np.array_equal(np.load(out), scaled[scaled != 0]), SEED


@pytest.mark.parametrize("transparency", [False, True])
def test_palette_png_becomes_rgb(tmp_path, rng, transparency):
    h, w, n = 31, 41, 7
    palette = rng.integers(0, 256, (n, 3)).astype(np.uint8)
    palette[0] = 0
    alpha = rng.integers(0, 256, n - 2).astype(np.uint8)  # entries past tRNS are opaque
    idx = rng.integers(0, n, (h, w)).astype(np.uint8)
    extra = png_chunk(b"PLTE", palette.tobytes())
    want = palette[idx]
    if transparency:
        extra += png_chunk(b"tRNS", alpha.tobytes())
        full = np.concatenate([alpha, np.full(2, 255, np.uint8)])
        want = np.concatenate([want, full[idx][..., None]], axis=2)
    (tmp_path / "p.png").write_bytes(png_bytes([r.tobytes() for r in idx], w, h, 8, 3, extra))
    got = nonzero_of(tmp_path / "p.png", tmp_path, "--channels", "any")
    assert np.array_equal(got, np.argwhere(want.any(axis=2))), SEED
    out = tmp_path / "s.npy"
    run("select", tmp_path / "p.png", "-o", out)
    assert np.array_equal(np.load(out), want[want != 0]), SEED


@pytest.mark.parametrize("colour", [False, True])
@pytest.mark.parametrize("maxval", [255, 1000, 65535])
def test_pgm_and_ppm(tmp_path, rng, colour, maxval):
    shape = (int(rng.integers(1, 60)), int(rng.integers(1, 80))) + ((3,) if colour else ())
    a = rng.integers(0, maxval + 1, shape)
    a[rng.random(shape) < 0.6] = 0
    a = a.astype(np.uint16 if maxval > 255 else np.uint8)
    path = write_pnm(tmp_path / ("a.ppm" if colour else "a.pgm"), a, maxval)
    out = tmp_path / "s.npy"
    run("select", path, "-o", out)
    got = np.load(out)
    assert got.dtype == a.dtype and np.array_equal(got, a[a != 0]), SEED
    assert np.array_equal(nonzero_of(path, tmp_path), np.argwhere(a)), SEED


def test_pnm_comments_right_after_numbers(tmp_path, rng):
    """Netpbm reads a comment anywhere in the header, right after a number
    too ("7#c"), as the line break that ends it; \r ends a comment as \n."""
    a = random_image(rng, (5, 7), np.uint8)
    path = tmp_path / "c.pgm"
    path.write_bytes(b"P5#kind\r7#w\n 5 #h\n255#maxval\n" + a.tobytes())
    assert np.array_equal(nonzero_of(path, tmp_path), np.argwhere(a)), SEED
    a[(a == 10) | (a == 13)] = 0  # no line break in the pixels either: all of them are comment
    path.write_bytes(b"P5\n7 5\n255#no line break" + a.tobytes())
    expect_error(1, "count", path, contains="malformed")


@pytest.mark.parametrize("rule", ["any", "all"])
def test_channel_rule_and_predicate(tmp_path, rng, rule):
    a = random_image(rng, (64, 96, 3), np.uint8, density=0.7)
    png = write_png(tmp_path / "c.png", a)
    sel = a > 100
    want = sel.any(axis=2) if rule == "any" else sel.all(axis=2)
    got = nonzero_of(png, tmp_path, "--channels", rule, "--pred", "gt:100")
    assert np.array_equal(got, np.argwhere(want)), SEED
    assert int(run("count", png, "--channels", rule, "--pred", "gt:100").stdout) == want.sum()
    # the same rule on a .npy whose last dimension is not contiguous
    f = np.asfortranarray(a)
    got = nonzero_of(save(tmp_path, f), tmp_path, "--channels", rule, "--pred", "gt:100")
    assert np.array_equal(got, np.argwhere(want)), SEED


def test_pixels_of_no_channels(tmp_path):
    """A last dimension of 0: no channel holds the predicate (any: no pixel
    is selected) and every one of none does (all: every pixel is), as numpy's
    any and all over an empty axis. Empty inputs may have any other extents
    (numpy's header reader takes (2^62, 2, 0)): 'any' is empty however many pixels
    there are; 'all' cannot list more than 2^62 and says why (both gave the
    generic shape error)."""
    a = np.zeros((4, 5, 0), np.uint8)
    inp = save(tmp_path, a)
    for rule, want in (("any", a.any(axis=2)), ("all", a.all(axis=2))):
        got = nonzero_of(inp, tmp_path, "--channels", rule)
        assert got.shape == (want.sum(), 2) and np.array_equal(got, np.argwhere(want)), rule
        assert int(run("count", inp, "--channels", rule).stdout) == want.sum()
    # a leading 1 stays leading: --width 1 fits the pixels (1, 5) under both rules
    one = save(tmp_path, np.zeros((1, 5, 0), np.uint8), name="one.npy")
    for rule, want in (("any", np.zeros((0, 1))), ("all", np.arange(5)[:, None])):
        assert np.array_equal(nonzero_of(one, tmp_path, "--channels", rule, "--width", "1"), want)
    huge = tmp_path / "huge.npy"
    h = b"{'descr': '|u1', 'fortran_order': False, 'shape': (4611686018427387904, 2, 0), }"
    h += b" " * (63 - (10 + len(h)) % 64) + b"\n"
    huge.write_bytes(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h)
    with open(huge, "rb") as f:  # a header numpy reads (np.load's reshape overflows)
        np.lib.format.read_magic(f)
        assert np.lib.format.read_array_header_1_0(f)[0] == (2 ** 62, 2, 0)
    got = nonzero_of(huge, tmp_path, "--channels", "any")
    assert got.shape == (0, 2) and got.dtype == np.int64
    assert run("count", huge, "--channels", "any").stdout == "0\n"
    out = tmp_path / "untouched.npy"
    expect_error(1, "nonzero", huge, "-o", out, "--channels", "all",
                 contains="more than 2^62, and CLNZ_CHANNELS_ALL selects every pixel")
    expect_error(1, "count", huge, "--channels", "all", contains="more than 2^62")
    assert not out.exists()


def test_order_xy_is_find_non_zero(tmp_path, rng):
    """cv::findNonZero: (x, y) points, row after row."""
    a = random_image(rng, (50, 70), np.uint8)
    png = write_png(tmp_path / "g.png", a)
    got = nonzero_of(png, tmp_path, "--order", "xy")
    ys, xs = np.nonzero(a)
    assert np.array_equal(got, np.stack([xs, ys], axis=1)), SEED
    got = nonzero_of(png, tmp_path, "--order", "xy", "--layout", "columns")
    assert np.array_equal(got, np.stack([xs, ys])), SEED


def test_bad_images_are_errors(tmp_path, rng):
    a = random_image(rng, (40, 50, 3), np.uint8)
    good = write_png(tmp_path / "a.png", a).read_bytes()
    out = tmp_path / "o.npy"
    (tmp_path / "t.png").write_bytes(good[:len(good) // 2])
    expect_error(1, "nonzero", tmp_path / "t.png", "-o", out, contains="PNG error")
    broken = bytearray(good)
    broken[20] ^= 0xFF  # inside IHDR: its CRC no longer matches
    (tmp_path / "c.png").write_bytes(bytes(broken))
    expect_error(1, "nonzero", tmp_path / "c.png", "-o", out, contains="PNG error")
    pgm = write_pnm(tmp_path / "a.pgm", a[..., 0]).read_bytes()
    (tmp_path / "t.pgm").write_bytes(pgm[:-10])
    expect_error(1, "nonzero", tmp_path / "t.pgm", "-o", out, contains="truncated")
    (tmp_path / "ascii.pgm").write_bytes(b"P2\n2 2\n255\n0 1 2 3\n")
    expect_error(1, "count", tmp_path / "ascii.pgm", contains="P2 is not supported")
    (tmp_path / "big.pgm").write_bytes(b"P5\n100000 100000\n255\n\0\0")
    expect_error(1, "count", tmp_path / "big.pgm", contains="truncated")
    (tmp_path / "bad.pgm").write_bytes(b"P5\n-3 2\n255\n\0\0")
    expect_error(1, "count", tmp_path / "bad.pgm", contains="malformed")
    # a sample above maxval, 8- and 16-bit (the image's last sample; maxval itself is fine)
    over = a[..., 0] % 101
    over[-1, -1] = 101
    write_pnm(tmp_path / "over.pgm", over, maxval=100)
    expect_error(1, "nonzero", tmp_path / "over.pgm", "-o", out,
                 contains="sample 101 at pixel (39, 49) is above maxval 100")
    over16 = (a % 8).astype(np.uint16) * 100
    over16[3, 7, 2] = 1001
    write_pnm(tmp_path / "over.ppm", over16, maxval=1000)
    expect_error(1, "count", tmp_path / "over.ppm", contains="sample 1001 at pixel (3, 7)")
    # a header that claims 10^10 pixels in a file of 80 bytes: refused before any allocation
    huge = bytearray(png_bytes([b"\0" * 3], 1, 1, 8, 2))
    huge[16:33] = png_chunk(b"IHDR", struct.pack(">IIBBBBB", 100000, 100000, 8, 2, 0, 0, 0))[8:]
    (tmp_path / "huge.png").write_bytes(bytes(huge))
    expect_error(1, "count", tmp_path / "huge.png", contains="cannot come out of")
    expect_error(2, "count", tmp_path / "a.png", "--channels", "some", contains="any or all")
    expect_error(1, "nonzero", save(tmp_path, np.float32(1), "s.npy"), "--channels", "any",
                 "-o", out, contains="rank >= 1")
    assert not out.exists()


def test_regression_fuzz_newline_in_header_stays_one_line(tmp_path):
    """fuzz_array found it: a .npy descr holding a newline was quoted into the
    error message as is, which then took two lines. (A line break inside a
    string is Python's syntax error, and np.load's: refused as such, the
    header after it quoted with the break escaped.)"""
    head = b"{'descr': '<if82\n', 'fortran_order': False, 'shape': (2, 3), }"
    head += b" " * (63 - len(head) % 64) + b"\n"
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"\x93NUMPY\x01\x00" + len(head).to_bytes(2, "little") + head)
    with pytest.raises(Exception):  # ValueError, or what another numpy or Python raises
        np.load(bad)
    line = expect_error(1, "count", bad, contains="(a line break inside a string) at byte 16: '\\n")
    assert "\n" not in line
