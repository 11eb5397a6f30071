"""`gradekit new-exercise NOTEBOOK NAME`: the skeleton of a new exercise, in every file that needs one.

It appends a reference function, the exercise's cells in the notebook script
(lesson text, answer, test with a placeholder misconception), a catalog entry
and a negative control. Every placeholder fails on purpose: the reference
raises, the hidden test cannot pass, the control names nothing, so `gradekit
check` reports the exercise until the course lead has written all of it.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from gradekit.core.manifest import Manifest

HEADER = re.compile(r"^# %%")
TEST_HEADER = re.compile(r"^# %% test ")
EXERCISE_HEADING = re.compile(r"^# ### Exercise (\d+)\b", re.MULTILINE)
PLACEHOLDER = "TODO"


def exercise_files(manifest: Manifest, notebook: str, solutions_dir: Path) -> dict[str, Path]:
    """Where the pieces of one notebook's exercises live, in the order they are written."""
    entry = manifest.notebook(notebook)
    return {
        "reference": solutions_dir / _module_file(entry.reference),
        "script": solutions_dir / "notebooks" / f"{notebook}.py",
        "catalog": solutions_dir / "misconceptions.toml",
        "controls": solutions_dir / _module_file(entry.controls),
    }


def _module_file(module: str) -> Path:
    """`solutions.reference.history` -> `reference/history.py`, relative to the solutions folder."""
    return Path(*module.split(".")[1:]).with_suffix(".py")


def misconception_id(name: str) -> str:
    """A placeholder catalog id of at least three hyphenated words, to be renamed by the author."""
    return f"todo-{name.replace('_', '-')}-misconception"


def add_exercise(files: dict[str, Path], reference_module: str, name: str, points: int = 1) -> list[Path]:
    """Append the new exercise's skeleton to each of `exercise_files`; return the files changed."""
    if not name.isidentifier() or keyword.iskeyword(name) or "__" in name:
        raise ValueError(f"{name!r} is not a plain function name (letters, digits, single underscores)")
    if f"answer_{name}" in files["script"].read_text():
        raise ValueError(f"{files['script'].name} already has an exercise {name}")
    mistake = misconception_id(name)
    number = next_exercise_number(files["script"].read_text())
    _append(files["reference"], _reference_stub(name))
    _insert_cells(files["script"], _script_cells(reference_module, name, points, mistake, number))
    _append(files["catalog"], _catalog_entry(mistake))
    _append(files["controls"], _control_stub(name, mistake))
    return list(files.values())


def next_exercise_number(script: str) -> int:
    """The number after the notebook's highest "### Exercise N" heading (1 in a notebook with none)."""
    return max((int(found) for found in EXERCISE_HEADING.findall(script)), default=0) + 1


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text().rstrip("\n") + "\n" + text)


def _insert_cells(script: Path, cells: str) -> None:
    """Put the cells after the notebook's last test cell, before any closing text."""
    lines = script.read_text().rstrip("\n").split("\n")
    tests = [i for i, line in enumerate(lines) if TEST_HEADER.match(line)]
    after = [i for i, line in enumerate(lines) if HEADER.match(line) and tests and i > tests[-1]]
    at = after[0] if after else len(lines)
    block = cells.rstrip("\n").split("\n") + [""]
    if at == len(lines):
        block = [""] + block[:-1]
    lines[at:at] = block
    script.write_text("\n".join(lines) + "\n")


def _reference_stub(name: str) -> str:
    return f'''

def {name}(x):
    """{PLACEHOLDER}: what {name} returns, in the student's words; this docstring is shown in the answer cell."""
    raise NotImplementedError("{PLACEHOLDER}: write the reference solution of {name}")
'''


def _script_cells(reference_module: str, name: str, points: int, mistake: str, number: int) -> str:
    return f'''# %% [markdown] md_{name}
# ### Exercise {number} ({points} point{"s" if points != 1 else ""})
#
# {PLACEHOLDER}: the idea in our own words, with the lesson's facts, and what `{name}` must do.

# %% answer answer_{name}
from {reference_module} import {name}

# %% test test_{name} points={points} targets={mistake}
# The test runs beside the grader, the answer in the student's kernel: plain data crosses between them.
# A tensor with a graph, a module or an optimizer the answer receives is built in the kernel, by a
# function of autograd_checks.py: `x = in_kernel(checks.builder, data...)`. One built here cannot cross.
result = call_answer({name}, None)  # {PLACEHOLDER}: the page's own example; check every property the text states
print("Checked on the page's example: {PLACEHOLDER}. The grader also tests other inputs.")

### BEGIN HIDDEN TESTS
expect(False, "{PLACEHOLDER}: the hidden checks of {name}, each saying what went wrong", "{mistake}")
### END HIDDEN TESTS
'''


def _catalog_entry(mistake: str) -> str:
    return f'''
[[misconception]]
id = "{mistake}"
title = "{PLACEHOLDER}"
belief = "{PLACEHOLDER}: what the student believes."
diagnosis = "{PLACEHOLDER}: what the feedback tells them to do instead."
'''


def _control_stub(name: str, mistake: str) -> str:
    return f'''

@negative_control("{mistake}", fails=["test_{name}"])
def {name}__{PLACEHOLDER.lower()}(x):
    """{PLACEHOLDER}: {name} written the way a student holding the misconception would write it."""
    raise NotImplementedError("{PLACEHOLDER}: the wrong answer this control stands for")
'''
