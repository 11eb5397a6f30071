"""Reference solutions, the misconception catalog and the negative controls.

This package is course-staff material. Grading kernels run with the submission
folder as their working directory and without this repository on their path,
so a student cannot import it; the guard below also refuses the import inside
any nbgrader execution, in case a course installs the repository as a package.
"""
import os

if os.environ.get("NBGRADER_EXECUTION"):
    raise ImportError("the reference solutions are not available to graded notebooks")
