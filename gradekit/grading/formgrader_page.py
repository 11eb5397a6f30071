"""Where formgrader finds its grading page: the course's template first, then nbgrader's own.

The course's page (formgrader_templates/formgrade/) only swaps the MathJax address for the
one the TA's Jupyter server serves, so grading works without the network. nbgrader_config.py
loads this module by its path; like preprocessors.py it imports nothing of the kit.
"""

import os

import nbgrader

HERE = os.path.dirname(os.path.abspath(__file__))
COURSE_TEMPLATES = os.path.join(HERE, "formgrader_templates")
NBGRADER_TEMPLATES = os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates")

# Template folders searched by name ('formgrade', 'feedback'): ours shadow nbgrader's grading page.
TEMPLATE_BASEDIRS = (COURSE_TEMPLATES, NBGRADER_TEMPLATES)
# Lets the course's page extend nbgrader's by the name 'formgrade/index.html.j2'.
TEMPLATE_PATHS = (NBGRADER_TEMPLATES,)
