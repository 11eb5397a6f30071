"""The one configuration of the course: nbgrader reads it, and so does the kit's tooling.

Paths are relative to this file, so a clone works wherever it lands. Two settings
can be moved by environment variables because they differ between machines:
KIT_EXCHANGE_ROOT (the shared exchange folder) and KIT_GRADEBOOK_URL (any
SQLAlchemy URL; SQLite in the course root by default).
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))

c = get_config()  # noqa: F821  (provided by traitlets when nbgrader loads this file)

c.CourseDirectory.course_id = "autograd-course"
c.CourseDirectory.root = HERE
# Without KIT_GRADEBOOK_URL, nbgrader keeps its SQLite gradebook.db in the course root.
if os.environ.get("KIT_GRADEBOOK_URL"):
    c.CourseDirectory.db_url = os.environ["KIT_GRADEBOOK_URL"]

# The exchange lives in a folder any user can own; set KIT_EXCHANGE_ROOT to a
# directory shared by all accounts when several people use one server.
c.Exchange.root = os.environ.get("KIT_EXCHANGE_ROOT", os.path.join(HERE, "exchange"))

# Every cell of a student notebook is run in a fresh python3 kernel, whatever
# kernelspec the submission claims, and no single cell may run longer than this.
c.Execute.kernel_name = "python3"
c.Execute.timeout = 60

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# nbgrader gives a test cell zero for any stderr output. These lines are
# known to be harmless noise from the runtime, never from a student's mistake;
# an output is dropped only when every one of its lines matches.
HARMLESS_STDERR_LINES = [
    r"Matplotlib is building the font cache; this may take a moment\.",
    r"OMP: Info #\d+: .*",
]
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"\A(?:(?:%s)\s*\n?)+\Z" % "|".join(HARMLESS_STDERR_LINES)

# A runaway print loop must not blow up the autograded notebook: nbgrader cuts
# outputs by lines, LimitOutputSize (below) by characters, for one long line.
c.LimitOutput.max_lines = 1000
c.LimitOutput.max_traceback = 200
c.LimitOutputSize.max_characters = 100_000

# The kit's own settings: the one assignment of this course, and the address
# space each grading kernel may use (the kit's parallel grader enforces it, so a
# memory bomb fails its own cell instead of exhausting the machine).
c.CourseKit.assignment_id = "autograd"
c.CourseKit.kernel_memory_gb = 8

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    AssignLatePenalties, CheckCellMetadata, ClearHiddenTests, Execute, GetGrades, IgnorePattern,
    LimitOutput, NbGraderPreprocessor, SaveAutoGrades,
)
from traitlets import Integer  # noqa: E402


class LimitOutputSize(NbGraderPreprocessor):
    """Cut any text output longer than `max_characters`, saying so; a cut stderr still counts as stderr.

    Images and other binary outputs are left whole: cutting them would only break them.
    """

    max_characters = Integer(100_000).tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                output["text"] = self._cut(output.get("text", ""))
            for mime, value in list(output.get("data", {}).items()):
                if mime.startswith("text/") and isinstance(value, str):
                    output["data"][mime] = self._cut(value)
        return cell, resources

    def _cut(self, text):
        if len(text) <= self.max_characters:
            return text
        return text[: self.max_characters] + f"\n... [{len(text) - self.max_characters} more characters cut by the grader]\n"


# nbgrader's own autograde steps, in its order, with the character limit after its line limit.
c.Autograde.autograde_preprocessors = [
    Execute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, LimitOutputSize,
    SaveAutoGrades, AssignLatePenalties, CheckCellMetadata,
]

# Feedback teaches without leaking: hidden tests are cut from the test cells,
# and a failed check shows its diagnosis, not the grader's traceback.


class DiagnosesOnly(NbGraderPreprocessor):
    """Replace a graded cell's traceback by its last line, unless it is one of our diagnoses."""

    def preprocess_cell(self, cell, resources, index):
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade"):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error" and output.get("ename") != "Diagnosis":
                    output["traceback"] = [f"{output.get('ename')}: {output.get('evalue')}"]
        return cell, resources


c.GenerateFeedback.preprocessors = [ClearHiddenTests, DiagnosesOnly, GetGrades, CSSHTMLHeaderPreprocessor]
