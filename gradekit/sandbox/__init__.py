"""Modules that run inside the student's grading kernel.

Standard library only: the kernel loads them by path, before any student code runs.
Nothing here may import gradekit or a third-party package."""
