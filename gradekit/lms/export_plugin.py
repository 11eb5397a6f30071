"""An nbgrader export plugin that writes the LMS's gradebook import file.

    python -m nbgrader export --exporter=gradekit.lms.export_plugin.LmsExportPlugin

Gradebook students the roster does not list are not dropped: they are logged and written to a
second file beside the import file (see `unmatched_path`), with their scores.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.plugins import ExportPlugin
from traitlets import Bool, Dict, Enum, Unicode, default

from gradekit.core.atomic_files import atomic_write
from gradekit.lms.canvas import IDENTITY_COLUMNS as CANVAS_COLUMNS
from gradekit.lms.canvas import canvas_rows
from gradekit.lms.moodle import IDENTITY_COLUMNS as MOODLE_COLUMNS
from gradekit.lms.moodle import moodle_rows
from gradekit.lms.roster import RosterError, load_roster
from gradekit.lms.scores import ScoreTable, format_score, read_scores

LMS_COLUMNS = {"canvas": CANVAS_COLUMNS, "moodle": MOODLE_COLUMNS}


class LmsExportPlugin(ExportPlugin):
    """Writes a Canvas or Moodle gradebook import CSV for the students of a roster."""

    roster = Unicode(
        "", help="CSV roster: a student_id column (nbgrader's id) and the LMS's columns; empty turns the export off"
    ).tag(config=True)
    lms = Enum(["canvas", "moodle"], default_value="canvas", help="which LMS's import layout to write").tag(config=True)
    per_exercise = Bool(False, help="add one column per graded cell besides each assignment's total").tag(config=True)
    canvas_assignment_ids = Dict(
        {}, help="nbgrader assignment name -> Canvas assignment id, so the total fills that Canvas assignment"
    ).tag(config=True)

    @default("to")
    def _default_to(self):
        return "lms-grades.csv"

    def export(self, gradebook: Gradebook) -> None:
        if not self.roster:
            raise RosterError("no roster configured: set LmsExportPlugin.roster in nbgrader_config.py")
        roster = load_roster(Path(self.roster), LMS_COLUMNS[self.lms])
        table = read_scores(gradebook, [str(a) for a in self.assignment], self.per_exercise)
        if self.lms == "canvas":
            rows = canvas_rows(roster, table, dict(self.canvas_assignment_ids))
        else:
            rows = moodle_rows(roster, table)
        write_csv(Path(self.to), rows)
        self.log.info("Wrote the %s import file %s for %d roster students", self.lms, self.to, len(roster))
        self._report_unmatched(table, {entry.student_id for entry in roster})

    def _report_unmatched(self, table: ScoreTable, listed: set[str]) -> None:
        unmatched = sorted(set(table.scores) - listed)
        path = unmatched_path(Path(self.to))
        if not unmatched:
            path.unlink(missing_ok=True)
            return
        header = ["student_id", *(item.title for item in table.items)]
        write_csv(path, [header, *([s, *map(format_score, table.scores[s])] for s in unmatched)])
        self.log.warning(
            "%d gradebook student(s) are not in the roster, so not in the import file: %s (listed in %s)",
            len(unmatched),
            ", ".join(unmatched),
            path,
        )


def unmatched_path(import_file: Path) -> Path:
    return import_file.with_name(f"{import_file.stem}.not-in-roster.csv")


def write_csv(path: Path, rows: list[list[str]]) -> None:
    """Written whole or not at all, so a failed export never leaves half a file for the LMS."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    atomic_write(path, buffer.getvalue().encode("utf-8"))
