"""A small cohort for the class report tests, small enough to work its statistics out by hand.

Two notebooks: 010_x (answer_f: test_f 2 points; answer_g: test_g 3 points and
test_g2 1 point) and 020_y (answer_h: test_h 5 points). Graded students:

    student  f  g  g2  h   total   note
    ann      2  3  0   5   10
    bob      0  3  0   5    8      reordered cells
    cai      0  0  1   0    1
    dan      2  0  1   -    3      did not submit 020_y (nbgrader scores it 0), 95 minutes late

020_y also has a written answer (answer_essay, 2 points): ann's waits for a TA, bob's
was marked 1.5, cai left it blank.

eve could not be graded, fay is flagged (full marks, withheld): neither counts
in the item statistics.
"""

from __future__ import annotations

from gradekit.core.catalog import Misconception
from gradekit.core.grades import CellGrade, SubmissionGrades, WrittenGrade
from gradekit.core.manifest import Exercise, Manifest, ManualAnswer, NotebookEntry, TestCell
from gradekit.core.notes import Finding, FindingKind, Note, NoteKind
from gradekit.core.outcome import Outcome
from gradekit.core.status import Status

X, Y = "010_x", "020_y"
MANIFEST = Manifest(
    "a",
    (NotebookEntry(X, "1", "X", "r", "c"), NotebookEntry(Y, "2", "Y", "r", "c")),
    (
        Exercise(X, "answer_f", ("f",), (TestCell("test_f", 2, ("first-wrong-idea",)),)),
        Exercise(X, "answer_g", ("g",), (TestCell("test_g", 3, ("second-wrong-idea",)), TestCell("test_g2", 1, ()))),
        Exercise(Y, "answer_h", ("h",), (TestCell("test_h", 5, ()),)),
    ),
    (ManualAnswer(Y, "answer_essay", "task_essay", 2),),
)
CATALOG = {
    "first-wrong-idea": Misconception("first-wrong-idea", "first", "b1", "check the first thing"),
    "second-wrong-idea": Misconception("second-wrong-idea", "second", "b2", "check the second thing"),
}
LEFT_OUT_Y = Note(NoteKind.LEFT_OUT, "", items=(Y,))
REORDERED = Note(NoteKind.REORDERED, X)
FORGED_EQ = Finding(FindingKind.FORGING_METHOD, X, "answer_f", ("__eq__",))


def graded(
    student, f, g, g2, h, named=(), status=Status.GRADED, unsubmitted=(), notes=(), findings=(), written=(), late=0.0
):
    cells = (
        CellGrade(X, "test_f", f, 2, named[:1]),
        CellGrade(X, "test_g", g, 3, named[1:]),
        CellGrade(X, "test_g2", g2, 1),
        CellGrade(Y, "test_h", h, 5),
    )
    grades = SubmissionGrades(student, cells, unsubmitted=unsubmitted, written=written, seconds_late=late)
    return Outcome(student_id=student, status=status, message="", grades=grades, notes=notes, findings=findings)


# A written answer of notebook Y a TA has not graded yet (formgrader lists it), one they have, one left blank.
WAITING = WrittenGrade(Y, "answer_essay", None, 2)
MARKED = WrittenGrade(Y, "answer_essay", 1.5, 2)
BLANK = WrittenGrade(Y, "answer_essay", 0, 2, blank=True)


ROWS = (
    graded("ann", 2, 3, 0, 5, written=(WAITING,)),
    graded("bob", 0, 3, 0, 5, ("first-wrong-idea",), notes=(REORDERED,), written=(MARKED,)),
    graded("cai", 0, 0, 1, 0, ("first-wrong-idea", "second-wrong-idea"), written=(BLANK,)),
    graded("dan", 2, 0, 1, 0, unsubmitted=(Y,), notes=(LEFT_OUT_Y,), late=95 * 60 + 20),
    Outcome(
        student_id="eve", status=Status.FAILED, message="malformed notebook JSON", grades=None, notes=(LEFT_OUT_Y,)
    ),
    graded("fay", 2, 3, 1, 5, status=Status.FLAGGED, findings=(FORGED_EQ,)),
)
