"""Journey tests: the student, the TA and the course lead, in real JupyterLab and through a real exchange."""
