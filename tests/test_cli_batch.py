"""`clnz nonzero --batch` against np.argwhere of each item, and its usage
errors. Helpers from test_cli.py."""
import numpy as np
import pytest

from test_cli import DTYPES, SEED, expect_error, random_array, rng, run, save  # noqa: F401 (rng: a fixture)


@pytest.mark.parametrize("shape", [(4, 37, 53), (1000, 7), (3,), (0, 5), (5, 0, 3), (17, 4096),
                                   (2, 3, 4, 5), (70000,)])
@pytest.mark.parametrize("order", ["rc", "xy"])
def test_batch_matches_argwhere_per_item(tmp_path, rng, shape, order):
    dtype = DTYPES[rng.integers(0, len(DTYPES))]
    a = random_array(rng, dtype, shape, density=0.2)
    out, offs = tmp_path / "o.npy", tmp_path / "off.npy"
    run("nonzero", save(tmp_path, a), "--batch", "-o", out, "--offsets-out", offs,
        "--order", order, "--index", "int32")
    got, off = np.load(out), np.load(offs)
    assert off.dtype == np.int64 and off.shape == (shape[0] + 1,) and off[0] == 0
    assert got.dtype == np.int32 and got.shape == (off[-1], len(shape) - 1), (got.shape, SEED)
    for b in range(shape[0]):
        want = np.argwhere(a[b])
        if order == "xy":
            want = want[:, ::-1]
        assert np.array_equal(got[off[b]:off[b + 1]], want), (dtype, b, SEED)


def test_batch_usage_errors(tmp_path):
    a = save(tmp_path, np.ones((2, 3)))
    out, offs = tmp_path / "o.npy", tmp_path / "off.npy"
    expect_error(2, "nonzero", a, "--batch", "-o", out, contains="--offsets-out")
    expect_error(2, "nonzero", a, "--offsets-out", offs, "-o", out, contains="--batch")
    # what no batch can be: refused before the input is read (this one does not exist)
    gone = tmp_path / "gone.npy"
    for extra, says in ((("--layout", "flat"), "rows only"), (("--layout", "columns"), "rows only"),
                        (("--size", "3"), "no --size")):
        expect_error(2, "nonzero", gone, "--batch", "-o", out, "--offsets-out", offs, *extra,
                     contains=says)
    # a width depends on the input's rank: refused once it is read
    expect_error(1, "nonzero", save(tmp_path, np.ones((2, 3, 4)), "r3.npy"), "--batch", "-o", out,
                 "--offsets-out", offs, "--width", "1", contains="width 1")
    expect_error(1, "nonzero", save(tmp_path, np.float32(1), "s.npy"), "--batch", "-o", out,
                 "--offsets-out", offs, contains="rank >= 1")
    assert not out.exists() and not offs.exists()
