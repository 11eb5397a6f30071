"""The TA's page, command by command, exactly as written, in a fresh copy of the course.

The copy has a student's submission in submitted/ put there by hand (no
timestamp.txt, as when a TA copies files in) and no exchange folder at all: the
state a fresh clone is in. Every command of the page's code blocks runs in the
copy's root, as a TA types it, except `jupyter lab`, which starts a server
(the formgrader journey covers it) and `--collect`, which needs students who
submitted through the exchange (the lifecycle journey covers it).
The same commands, `--collect` and the LMS export included, run as written in
the demo's course folder too, as a TA trying the kit would after `make demo`.
"""

import csv
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from traitlets.config.loader import PyFileConfigLoader

from gradekit.commands.demo import demo_course, run_demo
from gradekit.core.course import CONFIG_FILE, REPO_ROOT
from gradekit.core.manifest import load_manifest
from gradekit.core.nbgrader_cli import grading_environment
from gradekit.proof.subjects import answer_sources, fill_answers, written_answer_sources

pytestmark = pytest.mark.nbgrader

TA_PAGE = REPO_ROOT / "docs" / "pages" / "ta.md"
NOTEBOOKS = ("010_history", "090_decisions")  # 090 has written answers, which wait for a TA
STUDENT = "hand-copied"
# `jupyter lab` starts a server (the formgrader journey covers it); `extend` needs the page's own student
# and dates, which tests/test_term_cohort.py runs as written on a cohort of its own; `grade --student`
# regrades a student of the demo class after a check changed, which tests/test_regrade_diff.py does.
NOT_RUN_HERE = ("jupyter lab", "-m gradekit extend", "-m gradekit grade --student")
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


def _not_run_here(words: list[str]) -> bool:
    said = " ".join(words)
    return any(said.startswith(command) or said.startswith("python " + command) for command in NOT_RUN_HERE)


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
        if _not_run_here(words):
            continue
        words = [word for word in words if word != "--collect"]
        result = subprocess.run(words, cwd=fresh_course, env=env, capture_output=True, text=True, timeout=900)
        ran.append(" ".join(words))
        assert result.returncode == 0, f"{' '.join(words)}:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
        assert "Warning" not in result.stderr or words[0] == "nbgrader", result.stderr[-2000:]
        if words[:3] == ["python", "-m", "gradekit"]:
            _the_summary_counts_what_waits_for_a_ta(fresh_course, result.stdout)
    assert ran == [
        "python -m gradekit grade",
        "python -m gradekit grade --reports-only",
        "nbgrader release_feedback autograd",
    ]
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


# The LMS export the page gives as an indented line (run in the course folder, as written).
LMS_EXPORT = re.compile(r"^\s+(python -m nbgrader export --exporter=\S+ --to=(\S+))$", re.MULTILINE)


@pytest.fixture(scope="module")
def demo_folder(course, manifest, tmp_path_factory):
    """`make demo`'s course folder, on two notebooks (090 has written answers), graded once by the demo."""
    narrow = manifest.only(list(NOTEBOOKS))
    demo = demo_course(course, narrow, tmp_path_factory.mktemp("demo") / "demo-course")
    assert run_demo(demo, narrow, jobs=2) == 0
    return demo


def test_every_command_of_the_ta_page_works_as_written_in_the_demo_course(demo_folder):
    env = grading_environment()
    for name in ("KIT_EXCHANGE_ROOT", "KIT_GRADEBOOK_URL", "PYTHONPATH"):  # a TA's shell, nothing set for the kit
        env.pop(name, None)
    root = demo_folder.root
    (lms_command, lms_file) = LMS_EXPORT.search(TA_PAGE.read_text()).groups()
    ran = []
    for words in [*page_commands(TA_PAGE), shlex.split(lms_command)]:
        if _not_run_here(words):
            continue
        result = subprocess.run(words, cwd=root, env=env, capture_output=True, text=True, timeout=900)
        ran.append(" ".join(words))
        assert result.returncode == 0, f"{' '.join(words)}:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
        if words[:3] == ["python", "-m", "gradekit"]:  # the folder's own course was graded, not the kit's
            assert f"grades:       {root / 'grades.csv'}" in result.stdout, result.stdout[-2000:]
    assert ran == [
        "python -m gradekit grade --collect",
        "python -m gradekit grade --reports-only",
        "nbgrader release_feedback autograd",
        lms_command,
    ]
    students = sorted(path.name for path in (root / "submitted").iterdir())
    released = list((root / "exchange" / demo_folder.course_id / "feedback").glob("*.html"))
    assert len(released) >= len(students), "release_feedback did not deliver every student's feedback"
    with open(root / lms_file, newline="") as table:
        rows = list(csv.DictReader(table))
    assert sorted(row["SIS Login ID"] for row in rows) == students
    assert all(row[demo_folder.assignment_id] != "" for row in rows)


def test_formgrader_in_the_demo_course_reads_the_courses_pages_and_its_own_exchange(demo_folder):
    """What formgrader started in the folder reads: the folder's course, the kit's grading page (typeset math, no
    comment box under a mark scheme) and an exchange that exists with the hub's modes, so it warns of nothing."""
    config = PyFileConfigLoader("nbgrader_config.py", path=str(demo_folder.root)).load_config()
    kit = PyFileConfigLoader(CONFIG_FILE.name, path=str(CONFIG_FILE.parent)).load_config()
    assert config.CourseDirectory.root == str(demo_folder.root)
    assert config.CourseDirectory.db_url == f"sqlite:///{demo_folder.root / 'gradebook.db'}"
    assert config.HTMLExporter.extra_template_paths == kit.HTMLExporter.extra_template_paths
    assert config.HTMLExporter.extra_template_basedirs == kit.HTMLExporter.extra_template_basedirs
    exchange = Path(config.Exchange.root)
    assert exchange == demo_folder.root / "exchange"
    assert stat.S_IMODE(exchange.stat().st_mode) == 0o1777
    assert stat.S_IMODE((exchange / demo_folder.course_id / "feedback").stat().st_mode) == 0o711
