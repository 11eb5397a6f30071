import pytest

from gradekit.core.notebook_script import Role, ScriptError, parse_script

pytestmark = pytest.mark.unit

SCRIPT = """# %% [markdown] intro
# # Title
#
# Some text.

# %% setup
import math


# %% demo show_pi
print(math.pi)

# %% answer answer_f
from solutions.reference.history import float64_leaf

# %% test test_f points=2 targets=first-wrong-idea,second-wrong-idea
assert math.pi > 3

# %% [markdown] task task_w points=0
# Question.

# %% [markdown] answer answer_w points=2.5
# A model answer.
"""


def test_every_role_with_its_points_and_targets():
    cells = parse_script(SCRIPT)
    assert [(c.role, c.grade_id, c.points) for c in cells] == [
        (Role.LESSON, "intro", None),
        (Role.CODE, "setup", None),
        (Role.DEMO, "show_pi", None),
        (Role.ANSWER, "answer_f", None),
        (Role.TEST, "test_f", 2),
        (Role.TASK, "task_w", 0),
        (Role.WRITTEN, "answer_w", 2.5),
    ]
    assert cells[0].body == "# Title\n\nSome text."
    assert cells[1].body == "import math"
    assert cells[4].targets == ("first-wrong-idea", "second-wrong-idea")
    assert isinstance(cells[4].points, int)


@pytest.mark.parametrize(
    "text, complaint",
    [
        ("# %% test test_f\npass\n", "needs points"),
        ("# %% setup points=1\npass\n", "has no points"),
        ("# %% [markdown] intro\nnot a comment\n", "must start with '# '"),
        ("# %% quiz q_1\npass\n", "cannot read the header"),
        ("# %% setup\npass\n# %% setup\npass\n", "used twice"),
        ("import math\n# %% setup\npass\n", "before the first"),
        ("# %% test test_f points=1 colour=red\npass\n", "not an option"),
        ("# %% demo\npass\n", "is not a grade id"),
    ],
)
def test_malformed_scripts_say_where_and_why(text, complaint):
    with pytest.raises(ScriptError, match=complaint):
        parse_script(text, "x.py")
