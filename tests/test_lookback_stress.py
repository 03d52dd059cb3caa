"""test_lookback_stress.py: the look-back strategy over inputs of many
tiles, in every variant of what its tiles exchange while the kernel runs,
each call made more than once, against numpy (make test-full; on a lent
GPU, scripts/gpu-check at a larger size).

Where work-groups run at once and in any order (a GPU), tiles find their
predecessors unpublished, read two-word states while their owners move
from aggregate to prefix, give up waiting, count a predecessor themselves
and offer that count to the tiles behind them; the order differs from one
run to the next, so each call is repeated. On PoCL, whose work-groups run
nearly in order, test_strategies forces those paths with silent tiles
(CLNZ_LOOKBACK_TEST_SPARSE); here the device takes its own order. The
variants: 64- and 32-bit states, a spin of 0 (fall back at the first
unpublished read: the most fallbacks and offers), windows of 1 and 4
states, and the three ways a tile writes its entries. CLNZ_STRESS_N sets
the size (default 2^20 + 37: 86 tiles of the default 256 x 48), and
CLNZ_STRESS_REPEATS how many times each call runs."""
import os

import numpy as np
import pytest

from test_cli import SEED, save
from test_cli_reliability import clnz

N = int(os.environ.get("CLNZ_STRESS_N", str((1 << 20) + 37)))
REPEATS = int(os.environ.get("CLNZ_STRESS_REPEATS", "2"))
VARIANTS = {
    "64-bit": {},
    "32-bit": {"CLNZ_LOOKBACK_ATOMICS": "32"},
    "spin-0": {"CLNZ_LOOKBACK_SPIN": "0"},
    "32-bit-spin-0": {"CLNZ_LOOKBACK_ATOMICS": "32", "CLNZ_LOOKBACK_SPIN": "0"},
    "32-bit-spin-0-window-4": {"CLNZ_LOOKBACK_ATOMICS": "32", "CLNZ_LOOKBACK_SPIN": "0",
                               "CLNZ_LOOKBACK_WINDOW": "4"},
    "direct-spin-0": {"CLNZ_LOOKBACK_SCATTER": "direct", "CLNZ_LOOKBACK_SPIN": "0"},
    "hybrid-32-bit": {"CLNZ_LOOKBACK_SCATTER": "hybrid", "CLNZ_LOOKBACK_ATOMICS": "32"},
}


def segments(rng, n):
    """f32 of n elements in runs of random length, each of one density
    (none, sparse, some, half, all), so that tiles of every count meet, and
    empty and full tiles sit beside each other."""
    a = np.zeros(n, np.float32)
    at = 0
    while at < n:
        run = min(n - at, int(rng.integers(1, 40000)))
        d = rng.choice([0.0, 0.001, 0.1, 0.5, 1.0])
        a[at:at + run] = (rng.random(run) < d) * rng.integers(1, 9, run)
        at += run
    return a


def lookback(env_extra, *args):
    env = dict(os.environ, CLNZ_STRATEGY="lookback", **env_extra)
    return clnz(*args, env=env, check=True).stdout


@pytest.mark.full
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_many_tiles_in_any_order(tmp_path, variant):
    env = VARIANTS[variant]
    rng = np.random.default_rng([SEED, N, len(variant)])
    x = segments(rng, N)
    xs = save(tmp_path, x, "x.npy")
    img = (rng.random((N // 1024 + 1, 1024)) < 0.1).astype(np.uint8) * rng.integers(
        1, 256, (N // 1024 + 1, 1024), dtype=np.uint8)
    ims = save(tmp_path, img, "img.npy")
    b = 7
    batched = x[:N - N % b].reshape(b, -1)
    bs = save(tmp_path, batched, "b.npy")
    flat, z = np.flatnonzero(x), np.count_nonzero(x)
    out, cnt, offs = tmp_path / "o.npy", tmp_path / "z.npy", tmp_path / "off.npy"
    for r in range(REPEATS):
        why = f"{variant}, run {r}, seed {SEED}"
        lookback(env, "nonzero", xs, "-o", out, "--layout", "flat")
        assert np.array_equal(np.load(out), flat), why
        lookback(env, "nonzero", ims, "-o", out)
        assert np.array_equal(np.load(out), np.argwhere(img)), why
        # a capacity below the count: the first entries and the true count
        lookback(env, "nonzero", xs, "-o", out, "--layout", "flat", "--size", z // 2,
                 "--count-out", cnt)
        assert np.array_equal(np.load(out), flat[:z // 2]) and int(np.load(cnt)) == z, why
        assert int(lookback(env, "count", xs)) == z, why
        lookback(env, "select", xs, "-o", out)
        assert np.array_equal(np.load(out), x[x != 0]), why
        # batched: each item's offset comes out of the look-back too
        lookback(env, "nonzero", bs, "--batch", "-o", out, "--offsets-out", offs)
        per_item = [np.argwhere(item) for item in batched]
        want_offs = np.concatenate([[0], np.cumsum([len(c) for c in per_item])])
        assert np.array_equal(np.load(offs), want_offs), why
        assert np.array_equal(np.load(out), np.concatenate(per_item)), why
