"""Modules that run inside the student's grading kernel, or start it.

The kernel loads them by path, before any student code runs, so none imports
gradekit at run time (imports under TYPE_CHECKING are for the type checker
only). The box, the guard, its seccomp filter and the answer server use the
standard library alone; the wire (crossing.py) also imports torch and numpy,
and the zygote imports ahead what every grading kernel loads (IPython, the
kernel's channels, torch, numpy), so that a forked kernel starts warm."""
