"""The one configuration of the course: nbgrader reads it, and so does the kit's tooling, once per command.

Paths are relative to this file, so a clone works wherever it lands. Two settings
can be moved by environment variables because they differ between machines:
KIT_EXCHANGE_ROOT (the shared exchange folder) and KIT_GRADEBOOK_URL (any
SQLAlchemy URL; SQLite in the course root by default).
"""

import os

# The course root is the folder holding this file (or a link to it); the kit
# is where the file really lives: a scratch course may link to it.
HERE = os.path.dirname(os.path.abspath(__file__))
KIT = os.path.dirname(os.path.realpath(__file__))

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
# kernelspec the submission claims, and no single cell may run longer than this:
# in the kernel's CPU seconds under the kit's grader (with the wall clock as a
# backstop at three times as long), in wall seconds under plain nbgrader.
c.Execute.kernel_name = "python3"
c.Execute.timeout = 60

# A kernel talks to nbgrader over loopback TCP. With keys the kernel manager hands out, that
# talk is encrypted, and ipykernel stops warning, once per kernel, that it is not. Kernels the
# kit's grader forks keep plain sockets: their output is discarded already, and their sandbox
# was proven without encryption. A ZeroMQ built without CurveZMQ keeps plain TCP and the warning.
import zmq  # noqa: E402

c.KernelManager.transport_encryption = "auto" if zmq.has("curve") else "disabled"
c.WarmKernelManager.transport_encryption = "disabled"

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
# outputs by lines, LimitOutputSize (below) by characters, for one long line, and
# every output of any MIME type (images, HTML, JSON) by bytes, each and in all.
c.LimitOutput.max_lines = 1000
c.LimitOutput.max_traceback = 200
c.LimitOutputSize.max_characters = 100_000
c.LimitOutputSize.max_output_bytes = 2_000_000
c.LimitOutputSize.max_notebook_bytes = 8_000_000

# The kit's own settings (nbgrader ignores this section): the one assignment of
# this course, and the address space in GiB each grading kernel may use (the kit's
# parallel grader enforces it, so a memory bomb fails its own cell instead of
# exhausting the machine). Typed and checked by gradekit/core/settings.py;
# `python -m gradekit --help-all` lists them with their help.
c.CourseKit.assignment_id = "autograd"
c.CourseKit.kernel_memory_gb = 8

# The assignment's one due date, with its time zone: the release's headers and the pre-check show
# it, the pre-check closes at it, and grading measures lateness from it (or from a student's
# extension: `python -m gradekit extend STUDENT --until DATE --why TEXT`). Regenerate release/ after
# setting it (`make release`). Without one, nothing is late.
# c.CourseKit.due_dates = {"autograd": "2026-12-18T23:00:00+00:00"}

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    AssignLatePenalties,
    CheckCellMetadata,
    ClearHiddenTests,
    Execute,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    SaveAutoGrades,
)


def _kit_module(name):
    """A module of the kit, found beside the real file of this configuration and loaded by its path.

    Plain nbgrader may run from any folder without the kit on its import path,
    and a course folder may hold a symbolic link to this file; nothing is added
    to sys.path. A module the tooling has already imported is reused as it is.
    """
    import importlib.util
    import sys

    path = os.path.join(KIT, *name.split(".")) + ".py"
    loaded = sys.modules.get(name)
    if loaded is not None and os.path.realpath(getattr(loaded, "__file__", "")) == path:
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_preprocessors = _kit_module("gradekit.grading.preprocessors")
DiagnosesOnly = _preprocessors.DiagnosesOnly
LimitOutputSize = _kit_module("gradekit.grading.output_limits").LimitOutputSize
GradeMarkSchemes = _preprocessors.GradeMarkSchemes

# Collect copies a symbolic link in a submission as a link, where nbgrader's own would copy
# its target with the TA's permissions; grading then refuses it unread.
c.ExchangeFactory.collect = _kit_module("gradekit.grading.link_keeping_collect").LinkKeepingCollect

# Formgrader's grading page typesets math with the MathJax of the TA's own Jupyter server
# (jupyter-server-mathjax), not a CDN's: the course's page is found before nbgrader's.
_formgrader_page = _kit_module("gradekit.grading.formgrader_page")
c.HTMLExporter.extra_template_basedirs = _formgrader_page.TEMPLATE_BASEDIRS
c.HTMLExporter.extra_template_paths = _formgrader_page.TEMPLATE_PATHS
# The page carries a Content-Security-Policy that runs only formgrader's own scripts, by their hashes;
# the student's markdown is drawn as on their feedback page: no heading takes an id of the page's
# own (a score box's), no javascript: link, no tag left open for the cells below.
_feedback_page = _kit_module("gradekit.grading.feedback_page")
c.HTMLExporter.filters = {**_formgrader_page.FILTERS, "markdown2html": _feedback_page.notebook_markdown}
# The notebook it shows is the student's: their markdown and their outputs' HTML, SVG and markdown
# are sanitized (markup nested deeper than any page needs first shown as text, since the
# sanitizer's time grows with the depth's square), and their JavaScript outputs dropped, before the
# TA's browser sees them; the metadata the templates read has the shape they read it as, or the
# page would not be drawn at all.
from nbconvert.preprocessors.sanitize import SanitizeHTML  # noqa: E402

c.HTMLExporter.preprocessors = [_feedback_page.ShallowMarkup, SanitizeHTML, _feedback_page.MetadataAsTemplatesRead]

# nbgrader's own autograde steps, in its order, with the character limit after its line limit;
# a question's 0-point mark scheme is recorded as graded, so only real answers wait for a TA.
c.Autograde.autograde_preprocessors = [
    Execute,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    LimitOutputSize,
    SaveAutoGrades,
    GradeMarkSchemes,
    AssignLatePenalties,
    CheckCellMetadata,
]

# The late policy: a tenth of a notebook's score per started day after the due date (or the
# student's extension), at most half, and 0 from a week late on (the TA is told). nbgrader's
# AssignLatePenalties, above, asks it; the penalty shows on the feedback page, in the command's
# table, students.csv, the class report and the LMS export.
c.AssignLatePenalties.plugin_class = _kit_module("gradekit.grading.late_policy").LatePolicy
c.LatePolicy.per = "day"
c.LatePolicy.share_per_period = 0.1
c.LatePolicy.cap = 0.5
c.LatePolicy.cutoff_hours = 7 * 24

# Feedback teaches without leaking: hidden tests are cut from the test cells,
# and a failed check shows its diagnosis, not the grader's traceback.
c.GenerateFeedback.preprocessors = [ClearHiddenTests, DiagnosesOnly, GetGrades, CSSHTMLHeaderPreprocessor]

# Feedback pages: diagnoses wrap, the summary names what each test cell found, and math
# is typeset by the MathJax the student's Jupyter server serves (no CDN).
c.GenerateFeedback.exporter_class = _feedback_page.FeedbackPage

# Grades into the LMS: name a roster (a student_id column plus the LMS's own columns) and
# `python -m gradekit grade` also writes lms-grades.csv for Canvas or Moodle. Off without a roster.
# c.LmsExportPlugin.roster = os.path.join(HERE, "lms-roster.csv")
# c.LmsExportPlugin.lms = "canvas"  # or "moodle"
# c.LmsExportPlugin.per_exercise = False  # True adds one column per graded cell
# c.LmsExportPlugin.canvas_assignment_ids = {"autograd": "123456"}
