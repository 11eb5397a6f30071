"""Tooling of the autograd course kit: build the release, prove the grading, grade cohorts."""
