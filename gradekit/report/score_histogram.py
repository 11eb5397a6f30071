"""The histogram of the cohort's scores, drawn as PNG bytes for the page to embed."""

from __future__ import annotations

import io
from typing import Sequence

BINS = [i * 10 for i in range(11)]  # 0-10 %, ..., 90-100 % of the points


def histogram_png(percentages: Sequence[float]) -> bytes:
    import matplotlib

    matplotlib.use("Agg")  # no display: the report is written on a server
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7.5, 2.6))
    try:
        axes.hist(list(percentages), bins=BINS, color="#4c72b0", edgecolor="white")
        axes.set_xlim(0, 100)
        axes.set_xlabel("score (% of the assignment's points)")
        axes.set_ylabel("students")
        # The stubs give Locator.set_params no arguments; the default locator (MaxNLocator) takes `integer`.
        axes.yaxis.get_major_locator().set_params(integer=True)  # type: ignore[call-arg]
        axes.spines[["top", "right"]].set_visible(False)
        figure.tight_layout()
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=100)
        return buffer.getvalue()
    finally:
        plt.close(figure)
