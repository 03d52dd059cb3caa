"""The imaging example (scripts/threshold_example.c) against numpy: the points
it writes are np.argwhere(image > threshold) and its picture marks exactly
them; bad input fails with one line and leaves no output; the README's
pictures are what `make example` makes today."""
import os
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

from test_cli import SEED, rng  # noqa: F401 (rng: a fixture)
from test_cli_image import write_png

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.environ.get("CLNZ_EXAMPLE", os.path.join(ROOT, "build", "threshold_example"))
TIMEOUT = float(os.environ.get("CLNZ_TEST_TIMEOUT", "600"))


def run(*args):
    return subprocess.run([EXAMPLE, *map(str, args)], capture_output=True, text=True,
                          timeout=TIMEOUT)


def read_png(path):
    """An 8-bit gray or RGB PNG as (H, W) or (H, W, 3), row filters undone."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    assert depth == 8 and ctype in (0, 2) and interlace == 0, ihdr
    bpp = 3 if ctype == 2 else 1
    raw, stride = zlib.decompress(idat), w * bpp
    out, prev = np.zeros((h, stride), np.uint8), np.zeros(stride, np.int32)
    for y in range(h):
        f, line = raw[y * (stride + 1)], np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1)
        cur = line.astype(np.int32)
        for x in range(stride) if f in (1, 3, 4) else ():
            a = cur[x - bpp] if x >= bpp else 0
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                cur[x] = (cur[x] + a) & 255
            elif f == 3:
                cur[x] = (cur[x] + (a + prev[x]) // 2) & 255
            else:
                p = a + prev[x] - c
                pa, pb, pc = abs(p - a), abs(p - prev[x]), abs(p - c)
                pred = a if pa <= pb and pa <= pc else prev[x] if pb <= pc else c
                cur[x] = (cur[x] + pred) & 255
        if f == 2:
            cur = (cur + prev) & 255
        out[y], prev = cur, cur
    return out.reshape(h, w, 3) if bpp == 3 else out


def read_points(path):
    lines = open(path).read().splitlines()
    assert lines[0] == "row,column"
    return np.array([[int(v) for v in ln.split(",")] for ln in lines[1:]],
                     np.int64).reshape(-1, 2)


def marked_of(points, shape):
    m = np.zeros(shape, bool)
    m[points[:, 0], points[:, 1]] = True
    return m


@pytest.mark.parametrize("shape", [(1, 1), (7, 13), (64, 64), (123, 301)])
@pytest.mark.parametrize("threshold", [0, 100, 254, 255])
def test_points_are_argwhere_above_the_threshold(tmp_path, rng, shape, threshold):
    img = rng.integers(0, 256, size=shape, dtype=np.uint8)
    write_png(tmp_path / "in.png", img)
    p = run(tmp_path / "in.png", threshold, tmp_path / "pts.csv", tmp_path / "out.png")
    assert p.returncode == 0, p.stderr
    want = np.argwhere(img > threshold)
    got = read_points(tmp_path / "pts.csv")
    assert np.array_equal(got, want), f"seed {SEED}"
    assert p.stdout.startswith(f"{len(want)} pixels above {threshold} in {shape[1]} x {shape[0]}")
    pic = read_png(tmp_path / "out.png")
    red = (pic == [255, 0, 0]).all(axis=2)
    assert np.array_equal(red, img > threshold)
    assert np.array_equal(pic[~red], np.repeat((img[~red] // 2)[:, None], 3, axis=1))


@pytest.mark.parametrize("kind", ["rgb", "gray16"])
def test_other_pngs_are_read_as_gray_and_marked_consistently(tmp_path, rng, kind):
    if kind == "rgb":
        img = rng.integers(0, 256, size=(40, 50, 3), dtype=np.uint8)
    else:
        img = rng.integers(0, 65536, size=(40, 50), dtype=np.uint16)
    write_png(tmp_path / "in.png", img)
    p = run(tmp_path / "in.png", 128, tmp_path / "pts.csv", tmp_path / "out.png")
    assert p.returncode == 0, p.stderr
    pts = read_points(tmp_path / "pts.csv")
    assert 0 < len(pts) < 40 * 50
    red = (read_png(tmp_path / "out.png") == [255, 0, 0]).all(axis=2)
    assert np.array_equal(red, marked_of(pts, (40, 50)))


def test_bad_input_fails_cleanly(tmp_path, rng):
    img = rng.integers(0, 256, size=(20, 30), dtype=np.uint8)
    good = write_png(tmp_path / "good.png", img)
    truncated = tmp_path / "truncated.png"
    truncated.write_bytes(good.read_bytes()[:60])
    cases = [
        ([tmp_path / "missing.png", 10], "missing.png"),
        ([truncated, 10], "truncated.png"),
        ([good, 256], "threshold '256'"),
        ([good, "ten"], "threshold 'ten'"),
    ]
    for args, text in cases:
        p = run(*args, tmp_path / "pts.csv", tmp_path / "out.png")
        assert p.returncode == 1, (args, p.stderr)
        lines = p.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("threshold_example: ") and text in lines[0]
        assert sorted(os.listdir(tmp_path)) == ["good.png", "truncated.png"]
    p = run(good, 10, tmp_path / "no" / "pts.csv", tmp_path / "out.png")
    assert p.returncode == 1 and "cannot write" in p.stderr
    assert sorted(os.listdir(tmp_path)) == ["good.png", "truncated.png"]
    p = subprocess.run([EXAMPLE], capture_output=True, text=True)
    assert p.returncode == 1 and "usage" in p.stderr


def test_readme_pictures_are_what_make_example_makes(tmp_path):
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "example-input"),
                    tmp_path / "sky.png"], check=True)
    committed_in = os.path.join(ROOT, "scripts", "threshold_example_in.png")
    assert np.array_equal(read_png(tmp_path / "sky.png"), read_png(committed_in))
    p = run(committed_in, 120, tmp_path / "pts.csv", tmp_path / "out.png")
    assert p.returncode == 0, p.stderr
    committed = read_png(os.path.join(ROOT, "scripts", "threshold_example_out.png"))
    assert np.array_equal(read_png(tmp_path / "out.png"), committed)
