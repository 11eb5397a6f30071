"""Where formgrader finds its grading page, and the Content-Security-Policy that page carries.

The course's page (formgrader_templates/formgrade/) swaps the MathJax address for the one the
TA's Jupyter server serves, so grading works without the network, and puts a policy first in
its head. nbgrader_config.py loads this module by its path; like preprocessors.py it imports
nothing of the kit.

Why the template and not a server extension: formgrader draws the page with a plain
HTMLExporter made from the course's configuration, so the template and its filters travel with
nbgrader_config.py to every server that grades this course (the TA's, the hub's), with nothing
to install or enable; a server extension would have to be enabled on each of them.
"""

import base64
import hashlib
import os
import re
from types import MappingProxyType

import nbgrader

HERE = os.path.dirname(os.path.abspath(__file__))
COURSE_TEMPLATES = os.path.join(HERE, "formgrader_templates")
NBGRADER_TEMPLATES = os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates")

# Template folders searched by name ('formgrade', 'feedback'): ours shadow nbgrader's grading page.
TEMPLATE_BASEDIRS = (COURSE_TEMPLATES, NBGRADER_TEMPLATES)
# What the grading page and the feedback page draw alike (an output's image, an output's HTML).
SHARED_TEMPLATES = os.path.join(HERE, "page_templates")
# Lets the course's page extend nbgrader's by the name 'formgrade/index.html.j2' and import
# the shared macros.
TEMPLATE_PATHS = (NBGRADER_TEMPLATES, SHARED_TEMPLATES)

INLINE_SCRIPT = re.compile(r"<script(?: type=\"text/javascript\")?>(.*?)</script>", re.DOTALL)
# nbgrader's navigation bar shows and hides the student's name with onclick handlers of its own.
INLINE_HANDLER = re.compile(r"<[a-z][^<>]*?\son[a-z]+=\"([^\"]*)\"", re.IGNORECASE)
# Formgrader's scripts, styles and fonts come from the TA's own server; the grades are saved to it
# through its API. MathJax 2 runs its configuration block with eval and sets inline styles.
# An inline script or handler runs only if the page drawn from no student content holds it too
# ('unsafe-hashes' admits nbgrader's own handlers by their hashes, never a student's new one).
POLICY = (
    "default-src 'none'; script-src 'self' 'unsafe-eval' 'unsafe-hashes' {hashes}; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'none'"
)


def source_hash(source: str) -> str:
    """The policy's name for one inline script or handler: its SHA-256, as CSP spells it."""
    digest = hashlib.sha256(source.encode()).digest()
    return "'sha256-" + base64.b64encode(digest).decode() + "'"


def page_policy(own_markup: str) -> str:
    """The grading page's policy: what may run is what `own_markup` (drawn from formgrader's
    resources alone, never from the notebook) holds inline, and scripts of the TA's server."""
    sources = INLINE_SCRIPT.findall(own_markup) + INLINE_HANDLER.findall(own_markup)
    return POLICY.format(hashes=" ".join(sorted({source_hash(source) for source in sources})))


# The Jinja filters the course's grading page uses, added to the exporter by nbgrader_config.py.
FILTERS = MappingProxyType({"page_policy": page_policy})
