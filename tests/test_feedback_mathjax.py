"""The copy of MathJax beside the feedback pages: made once per version, whole, and naming no remote server."""

import pytest
from test_feedback_page import REMOTE

from gradekit.grading.feedback_mathjax import FOLDER, STAMP, bundle_mathjax, mathjax_source

pytestmark = pytest.mark.unit


def test_the_copy_of_mathjax_beside_the_feedback_is_made_once_per_version_and_whole(tmp_path):
    feedback = tmp_path / "feedback"
    copy = bundle_mathjax(feedback)
    assert copy == feedback / FOLDER
    assert (copy / "MathJax.js").is_file() and (copy / "config" / "TeX-AMS-MML_HTMLorMML-full.js").is_file()
    assert (copy / "extensions" / "Safe.js").is_file() and (copy / "fonts").is_dir()
    assert not (copy / "localization").exists()
    assert [p.name for p in feedback.iterdir()] == [FOLDER]  # nothing half-made is left beside it
    (copy / "MathJax.js").write_text("kept")
    bundle_mathjax(feedback)  # the same version: left as it is
    assert (copy / "MathJax.js").read_text() == "kept"
    (copy / STAMP).write_text("0.0.1")
    bundle_mathjax(feedback)  # another version: copied again
    assert (copy / "MathJax.js").read_bytes() == (mathjax_source() / "MathJax.js").read_bytes()
    # MathJax itself names no remote server it would load from.
    assert not REMOTE.search((copy / "config" / "TeX-AMS-MML_HTMLorMML-full.js").read_text())
