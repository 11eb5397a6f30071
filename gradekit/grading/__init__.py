"""Grading: intake, warm guarded kernels, parallel workers, the gradebook; the TA's pipeline."""
