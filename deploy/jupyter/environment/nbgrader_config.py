"""nbgrader settings every command and server of the course's environment loads (`make` installs this file).

nbgrader 0.9.6 ends a validation in which no cell failed with "Success! Your
notebook passes all the tests.", a line no setting reaches. In a student's
notebook only the visible checks ran, so the line promises what the hidden tests
have not said; the course prints what is true instead. JupyterLab's Validate
dialog draws its own copy of that line: the course's lab extension rewords it.
"""

from textwrap import fill

from nbgrader.validator import Validator

NO_CELL_FAILED = (
    "No test cell failed. In a student's notebook those are the visible checks: they test the "
    "page's own examples only, and the grader also tests other inputs (on the course's hub, "
    "Pre-check runs those before you submit)."
)


def _honest_print_num_failed(self, num_failed: int, nbgraders_own=Validator._print_num_failed) -> None:
    if num_failed:
        nbgraders_own(self, num_failed)
    else:
        self.stream.write(fill(NO_CELL_FAILED, width=self.width) + "\n")


# A server reads its configuration afresh for every Validate, so the line is replaced once only.
if not getattr(Validator._print_num_failed, "says_what_ran", False):
    _honest_print_num_failed.says_what_ran = True  # type: ignore[attr-defined]
    Validator._print_num_failed = _honest_print_num_failed  # type: ignore[method-assign]
