"""Correct alternatives: right answers written differently from the reference.

Each module mirrors a reference module. An alternative is a function named
``<answer function>__<how it differs>``, marked with `correct_alternative`;
the proof puts it in the answer cell of an otherwise reference submission and
checks that it keeps full marks on every test cell. They keep the hidden tests
from growing strict enough to reject a correct answer the reference does not
happen to write (float32 arithmetic where it is exact, another traversal,
another valid reset of a gradient).
"""


def correct_alternative(why):
    """Mark a function as a correct answer, written differently for the reason `why`; it must earn full marks."""

    def mark(function):
        function.correct_alternative = {"why": why}
        return function

    return mark
