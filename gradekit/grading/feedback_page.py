"""The feedback page a student reads: nbgrader's page, with diagnoses that wrap, a summary line
per graded cell naming what its check found, and math typeset without the network.

nbgrader_config.py makes this nbgrader's feedback exporter. Like preprocessors.py, the module
imports nothing of the kit: the configuration loads it by its path.
"""

import os
import re

import nbgrader
from nbconvert.exporters import HTMLExporter

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATES = os.path.join(HERE, "feedback_templates")
PAGE_STYLE = os.path.join(TEMPLATES, "feedback_page", "page.css")
NBGRADER_TEMPLATES = os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates")

# How our checks open a diagnosis: "[misconception: <id>] <what went wrong>".
MISCONCEPTION_TAG = re.compile(r"\A\[misconception: ([^\]]+)\]\s*")
STDERR_FINDING = "wrote to stderr, which nbgrader scores as a failed test"


def diagnosis_line(cell) -> str:
    """What a graded cell that lost points found, on one line; empty when it lost none or says nothing."""
    grading = cell.get("metadata", {}).get("nbgrader", {})
    if (grading.get("score") or 0) >= (grading.get("points") or 0):
        return ""
    outputs = cell.get("outputs", [])
    findings = [_error_finding(output) for output in outputs if output.get("output_type") == "error"]
    if not findings and any(output.get("name") == "stderr" for output in outputs):
        findings = [STDERR_FINDING]
    return " ".join(" ".join(finding.split()) for finding in findings)


def _error_finding(error) -> str:
    """`<misconception>: <message>` for our diagnoses, `<error type>: <message>` for anything else."""
    message = error.get("evalue", "")
    tag = MISCONCEPTION_TAG.match(message)
    if tag:
        return f"{tag.group(1)}: {message[tag.end() :]}"
    return f"{error.get('ename', 'Error')}: {message}"


class FeedbackPage(HTMLExporter):
    """nbgrader's feedback page drawn by the course's template (gradekit/grading/feedback_templates)."""

    def __init__(self, **kwargs):
        # nbgrader names its own template in the HTMLExporter section (its API insists on it);
        # keyword arguments outrank the configuration, so the page's own template is named here.
        kwargs.update(template_name="feedback_page", extra_template_basedirs=[TEMPLATES, NBGRADER_TEMPLATES])
        super().__init__(**kwargs)
        # Lets our template extend nbgrader's by the name 'feedback/index.html.j2'; the search
        # path was worked out while the exporter started, so it is worked out again.
        self.extra_template_paths = [*self.extra_template_paths, NBGRADER_TEMPLATES]
        self.template_paths = self._template_paths()

    def default_filters(self):
        yield from super().default_filters()
        yield ("diagnosis_line", diagnosis_line)

    def _preprocess(self, nb, resources):
        """After nbgrader's steps, add the page's own styles to those its template inlines."""
        nb, resources = super()._preprocess(nb, resources)
        with open(PAGE_STYLE) as style:
            resources.setdefault("inlining", {}).setdefault("css", []).append(style.read())
        return nb, resources
