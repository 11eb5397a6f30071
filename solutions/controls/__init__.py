"""Negative controls: answers written the way a student holding a misconception would.

Each module mirrors a reference module. A control is a function named
``<answer function>__<what the student did>``, marked with `negative_control`;
the proof harness renames it to the answer function, puts it in the answer
cell of an otherwise correct submission, and checks that exactly the declared
test cells lose points with the misconception named in their output.

A control that no visible check can stop, because nothing the page states or
shows contradicts its mistake, says why in `hidden_only` (one line); the
visible figures print that reason beside it.
"""


def negative_control(misconception, fails, hidden_only=""):
    """Mark a function as a negative control for `misconception` that must fail the test cells `fails`.

    `hidden_only`: why only the hidden tests can catch it (empty when a visible check should).
    """

    def mark(function):
        function.negative_control = {"misconception": misconception, "fails": tuple(fails), "hidden_only": hidden_only}
        return function

    return mark
