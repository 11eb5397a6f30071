"""A term backed up mid-term, restored on a fresh course folder and exchange, regraded to the same rows.

The commands are the course lead's page's own lines (docs/pages/course-lead.md, "Backups"), parsed
by the kit's command line and run in the folders the page says.
"""

from __future__ import annotations

import datetime
import json
import shutil

import cohort_fixtures
import pytest
from cohort_fixtures import add_first_answer, add_malformed_submission, hand_in, row_facts

from gradekit.authoring.release import new_workspace
from gradekit.commands.backup import COURSE_FOLDERS
from gradekit.commands.cli import parser
from gradekit.commands.demo_folder import complete_course_folder, state_due_date
from gradekit.commands.extend import extend
from gradekit.commands.ta_pipeline import grade_and_report, refresh_reports, report_dir
from gradekit.core.course import REPO_ROOT, load_course
from gradekit.core.extensions import read_extensions
from gradekit.core.term_archive import read_manifest
from gradekit.grading.executors import LocalExecutor

pytestmark = pytest.mark.nbgrader

NOTEBOOK = "010_history"
LEAD_PAGE = REPO_ROOT / "docs" / "pages" / "course-lead.md"
UTC = datetime.timezone.utc
DUE = datetime.datetime(2026, 11, 20, 23, 0, tzinfo=UTC)
UNCOLLECTED = "ada+{assignment}+2026-11-20 22:00:00.000000 UTC+0a1b2c/010_history.ipynb"


def page_command(start: str):
    return cohort_fixtures.page_command(LEAD_PAGE, start, section="Backups")


def graded_term(course, manifest, root):
    """A course folder of its own: four students graded (one late, one extended, one wrong, one unreadable)."""
    only = manifest.only([NOTEBOOK])
    folder = complete_course_folder(new_workspace(course, root, (NOTEBOOK,)))
    folder = state_due_date(folder, DUE)
    hand_in(folder, only, NOTEBOOK, "ben", DUE + datetime.timedelta(days=1))
    hand_in(folder, only, NOTEBOOK, "late", DUE + datetime.timedelta(days=1, seconds=1))
    add_first_answer(folder, only, NOTEBOOK, "wrong", "def float64_leaf():\n    return None")
    add_malformed_submission(folder, NOTEBOOK)
    assert extend(folder, "ben", "2026-12-22T23:00:00+00:00", "ill for a week") == 0
    uncollected = (
        folder.exchange_root / folder.course_id / "inbound" / UNCOLLECTED.format(assignment=folder.assignment_id)
    )
    uncollected.parent.mkdir(parents=True)
    uncollected.write_text('{"only copy": "before collect"}')
    return folder, only, grade_and_report(folder, only, LocalExecutor(2))


@pytest.fixture(scope="module")
def backed_up(course, manifest, tmp_path_factory):
    folder, only, result = graded_term(course, manifest, tmp_path_factory.mktemp("term") / "course")
    command = page_command("python -m gradekit backup")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder.root)
        assert command.run(command) == 0
    archive = (folder.root / command.archive).resolve()
    return folder, only, result, archive


def test_the_archive_lists_every_part_of_the_term_with_its_digest(backed_up):
    folder, _, _, archive = backed_up
    listed = read_manifest(archive).digests
    assert "gradebook/gradebook.db" in listed
    for name in (
        "nbgrader_config.py",
        "extensions.json",
        "class-report/rows.json",
        f"submitted/ben/{folder.assignment_id}/{NOTEBOOK}.ipynb",
    ):
        assert f"course/{name}" in listed, name
    assert f"exchange/inbound/{UNCOLLECTED.format(assignment=folder.assignment_id)}" in listed
    assert not any(name.startswith("course/gradekit") for name in listed)  # the folder's link to the kit


def test_a_restore_on_a_fresh_folder_and_exchange_regrades_to_identical_rows(backed_up, tmp_path):
    folder, only, result, archive = backed_up
    command = page_command("python -m gradekit restore")
    fresh = tmp_path / "fresh-course"  # beside a copy of the archive, where the page's command finds it
    fresh.mkdir()
    shutil.copyfile(archive, (fresh / command.archive).resolve())
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(fresh)
        assert command.run(command) == 0
    restored = load_course(fresh / "nbgrader_config.py")
    assert restored.root == fresh and restored.exchange_root != folder.exchange_root
    inbound = (
        restored.exchange_root / restored.course_id / "inbound" / UNCOLLECTED.format(assignment=restored.assignment_id)
    )
    assert inbound.read_text() == '{"only copy": "before collect"}'
    assert read_extensions(restored.extensions_file) == read_extensions(folder.extensions_file)
    assert json.loads((report_dir(restored) / "rows.json").read_text()) == json.loads(
        (report_dir(folder) / "rows.json").read_text()
    )
    refresh = page_command("python -m gradekit grade --reports-only")
    assert refresh.reports_only
    refreshed = refresh_reports(restored, only, refresh.jobs)  # the restored gradebook alone, nothing regraded
    assert row_facts(refreshed) == row_facts(result.rows)
    assert (restored.feedback_dir / "late" / restored.assignment_id / f"{NOTEBOOK}.html").is_file()
    regraded = grade_and_report(restored, only, LocalExecutor(2))
    assert row_facts(regraded.rows) == row_facts(result.rows)
    assert {row.status.label for row in result.rows} >= {"graded"} and len(result.rows) == 4


def fresh_with_gradebook(tmp_path, archive, folder):
    """A folder already restored once: it has a gradebook (and every file of the term)."""
    target = tmp_path / "again"
    target.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(target)
        assert parser().parse_args(["restore", str(archive)]).run(parser().parse_args(["restore", str(archive)])) == 0
    return target


def snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_folder_with_a_gradebook_is_refused_unless_replace_and_nothing_changes(backed_up, tmp_path, capsys):
    folder, _, _, archive = backed_up
    target = fresh_with_gradebook(tmp_path, archive, folder)
    (target / "submitted" / "ben" / folder.assignment_id / f"{NOTEBOOK}.ipynb").write_text("edited since")
    before = snapshot(target)
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(target)
        assert parser().parse_args(["restore", str(archive)]).run(parser().parse_args(["restore", str(archive)])) == 2
        assert "already has a gradebook" in capsys.readouterr().err
        assert snapshot(target) == before
        args = parser().parse_args(["restore", "--replace", str(archive)])
        assert args.run(args) == 0
    assert (target / "submitted" / "ben" / folder.assignment_id / f"{NOTEBOOK}.ipynb").read_bytes() == (
        folder.submitted_dir / "ben" / folder.assignment_id / f"{NOTEBOOK}.ipynb"
    ).read_bytes()


def test_a_damaged_archive_is_refused_and_the_fresh_folder_stays_empty(backed_up, tmp_path, capsys):
    _, _, _, archive = backed_up
    damaged = tmp_path / "damaged.tar.gz"
    shutil.copyfile(archive, damaged)
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    target = tmp_path / "fresh"
    target.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(target)
        args = parser().parse_args(["restore", str(damaged)])
        assert args.run(args) == 2
    assert "nothing was changed" in capsys.readouterr().err
    assert list(target.iterdir()) == []


def test_precheck_state_is_backed_up_and_restored_only_where_asked(backed_up, tmp_path):
    folder, _, _, _ = backed_up
    state = tmp_path / "precheck-state"
    (state / "audit").mkdir(parents=True)
    (state / "audit" / "audit.log").write_text("one line per check\n")
    archive = tmp_path / "with-precheck.tar.gz"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder.root)
        args = parser().parse_args(["backup", str(archive), "--precheck-state", str(state)])
        assert args.run(args) == 0
    assert "precheck/audit/audit.log" in read_manifest(archive).digests
    target, into = tmp_path / "fresh", tmp_path / "restored-state"
    target.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(target)
        args = parser().parse_args(["restore", str(archive), "--precheck-state", str(into)])
        assert args.run(args) == 0
    assert (into / "audit" / "audit.log").read_text() == "one line per check\n"
    assert sorted(COURSE_FOLDERS) == sorted(p.name for p in target.iterdir() if p.name in COURSE_FOLDERS)
