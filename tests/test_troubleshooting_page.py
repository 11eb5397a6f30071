"""The TA's troubleshooting page covers every status, every kind of note and every kind of finding."""

from pathlib import Path

import pytest

from gradekit.core.failures import GraderCause
from gradekit.core.notes import FindingKind, NoteKind
from gradekit.core.status import Status

pytestmark = pytest.mark.unit

PAGE = (Path(__file__).resolve().parent.parent / "docs" / "pages" / "troubleshooting.md").read_text()


@pytest.mark.parametrize("status", list(Status), ids=lambda status: status.name)
def test_every_status_has_a_row(status):
    assert f"| `{status.label}` |" in PAGE


@pytest.mark.parametrize("kind", [*NoteKind, *FindingKind], ids=lambda kind: kind.name)
def test_every_kind_of_note_and_finding_is_explained_in_the_words_the_class_report_uses(kind):
    assert kind.phrase in PAGE, f"add '{kind.phrase}' ({kind.name}) to docs/pages/troubleshooting.md"


@pytest.mark.parametrize("cause", list(GraderCause), ids=lambda cause: cause.name)
def test_every_cause_of_a_grader_error_is_explained(cause):
    assert f"| `{cause.name.lower()}` |" in PAGE
