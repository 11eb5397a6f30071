"""The stages only look down (.importlinter): the contract holds, and it fails when an upward import is added."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.nbgrader

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(tree: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(tree / ".importlinter")],
        cwd=tree,
        capture_output=True,
        text=True,
        env={"PATH": str(LINT_IMPORTS.parent), "PYTHONPATH": str(tree)},
    )


def test_every_stage_imports_only_the_stages_below_it():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    "module, upward",
    [
        ("core/status.py", "gradekit.grading.cohort"),  # core reaching into the engine
        ("grading/cohort.py", "gradekit.report.tables"),  # the engine reaching into the report
        ("report/tables.py", "gradekit.proof.matrix"),  # one sibling reaching into another
        ("sandbox/answer_server.py", "gradekit.core.course"),  # the kernel's side importing the kit
    ],
)
def test_an_upward_import_breaks_the_contract(tmp_path, module, upward):
    shutil.copytree(ROOT / "gradekit", tmp_path / "gradekit", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    with open(tmp_path / "gradekit" / module, "a") as source:
        source.write(f"\nimport {upward}  # noqa: E402\n")
    result = _lint_imports(tmp_path)
    assert result.returncode != 0 and "BROKEN" in result.stdout, result.stdout
