"""Negative controls: answers written the way a student holding a misconception would.

Each module mirrors a reference module. A control is a function named
``<answer function>__<what the student did>``, marked with `negative_control`;
the proof harness renames it to the answer function, puts it in the answer
cell of an otherwise correct submission, and checks that exactly the declared
test cells lose points with the misconception named in their output.
"""


def negative_control(misconception, fails):
    """Mark a function as a negative control for `misconception` that must fail the test cells `fails`."""

    def mark(function):
        function.negative_control = {"misconception": misconception, "fails": tuple(fails)}
        return function

    return mark
