"""The TA's page, command by command, exactly as written, in a fresh copy of the course.

The copy has a student's submission in submitted/ put there by hand (no
timestamp.txt, as when a TA copies files in) and no exchange folder at all: the
state a fresh clone is in. Every command of the page's code blocks runs in the
copy's root, as a TA types it, except `jupyter lab`, which starts a server
(the formgrader journey covers it) and `--collect`, which needs students who
submitted through the exchange (the lifecycle journey covers it).
"""

import csv
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from gradekit.core.course import REPO_ROOT
from gradekit.core.manifest import load_manifest
from gradekit.core.nbgrader_cli import grading_environment
from gradekit.proof.subjects import answer_sources, fill_answers, written_answer_sources

pytestmark = pytest.mark.nbgrader

TA_PAGE = REPO_ROOT / "docs" / "pages" / "ta.md"
NOTEBOOKS = ("010_history", "090_decisions")  # 090 has written answers, which wait for a TA
STUDENT = "hand-copied"
NOT_RUN_HERE = ("jupyter lab",)
HUB_SECTION = "## On the course's JupyterHub"  # the same commands on the hub: the hub journey walks them
BLOCK = re.compile(r"^```\n(.*?)^```", re.MULTILINE | re.DOTALL)


def page_commands(page: Path) -> list[list[str]]:
    """The shell commands of the page's plain code blocks before its hub section, in order, without their comments."""
    commands = []
    for block in BLOCK.findall(page.read_text().split(HUB_SECTION)[0]):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] in ("python", "nbgrader", "jupyter"):
                commands.append(words)
    return commands


def test_the_page_lists_the_grade_and_feedback_commands():
    commands = [" ".join(words) for words in page_commands(TA_PAGE)]
    assert "python -m gradekit grade --collect" in commands
    assert "nbgrader release_feedback autograd" in commands


@pytest.fixture
def fresh_course(tmp_path):
    """The repository as a clean clone has it (committed files plus this working tree's), no exchange, one student."""
    copy = tmp_path / "course"
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=REPO_ROOT, capture_output=True, check=True).stdout
    copy.mkdir()
    subprocess.run(["tar", "-x", "-C", str(copy)], input=archive, check=True)
    for changed in ("gradekit", "solutions", "source", "release", "docs"):
        shutil.rmtree(copy / changed)
        shutil.copytree(REPO_ROOT / changed, copy / changed, ignore=shutil.ignore_patterns("__pycache__", "site"))
    manifest = load_manifest()
    folder = copy / "submitted" / STUDENT / manifest.assignment
    folder.mkdir(parents=True)
    for name in NOTEBOOKS:
        release = copy / "release" / manifest.assignment / f"{name}.ipynb"
        written = written_answer_sources(manifest, name, copy / "source" / manifest.assignment / f"{name}.ipynb")
        answers = answer_sources(manifest, name, None) | written
        nbformat.write(fill_answers(release, answers), folder / f"{name}.ipynb")
    assert not (copy / "exchange").exists()
    return copy


def test_every_command_of_the_ta_page_works_in_order_on_a_fresh_clone(fresh_course):
    env = grading_environment()
    for name in ("KIT_EXCHANGE_ROOT", "KIT_GRADEBOOK_URL"):  # the course's defaults, as on a fresh clone
        env.pop(name, None)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]])
    ran = []
    for words in page_commands(TA_PAGE):
        if " ".join(words[:2]) in NOT_RUN_HERE:
            continue
        words = [word for word in words if word != "--collect"]
        result = subprocess.run(words, cwd=fresh_course, env=env, capture_output=True, text=True, timeout=900)
        ran.append(" ".join(words))
        assert result.returncode == 0, f"{' '.join(words)}:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
        assert "Warning" not in result.stderr or words[0] == "nbgrader", result.stderr[-2000:]
        if words[:3] == ["python", "-m", "gradekit"]:
            _the_summary_counts_what_waits_for_a_ta(fresh_course, result.stdout)
    assert ran == ["python -m gradekit grade", "nbgrader release_feedback autograd"]
    released = list((fresh_course / "exchange" / "autograd-course" / "feedback").glob("*.html"))
    assert released, "release_feedback delivered nothing to the exchange"


def _the_summary_counts_what_waits_for_a_ta(course: Path, said: str) -> None:
    manifest = load_manifest()
    written = [answer for answer in manifest.manual if answer.notebook in NOTEBOOKS]
    points = sum(answer.points for answer in written)
    assert f"written answers waiting for a TA: {len(written)} in 1 submission(s), {points:g} points" in said, said
    with open(course / "class-report" / "students.csv", newline="") as table:
        (row,) = csv.DictReader(table)
    assert int(row["waiting_for_ta"]) == len(written) and float(row["written_max"]) == points
    assert "not handed in through the exchange" in row["notes"]
