"""Measured figures for the documentation, written by the commands that measure them.

The docs site includes these Markdown files (docs/pages/figures/), so no figure
in the docs is a hand copy: rerun the command with `--figures PATH` and the page
follows. Each file's first line says which command wrote it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from gradekit.commands.benchmark import BenchmarkResult
from gradekit.commands.benchmark_phases import PhaseTable
from gradekit.commands.kernel_load import KernelLoadResult, activity_words
from gradekit.commands.precheck_load import LoadResult as PrecheckLoad
from gradekit.commands.soak import SoakResult
from gradekit.core.atomic_files import atomic_write
from gradekit.mutation.adequacy import Adequacy
from gradekit.mutation.blind import BlindResult, BlindSet, Judgement
from gradekit.mutation.report import score_rows
from gradekit.proof.check_course import CheckResult
from gradekit.proof.coverage import KNOWN_GAPS_FILE, coverage_table
from gradekit.proof.rules import ProofResult
from gradekit.proof.visible import SHARE_COLUMNS, share_table

MUTANT_COLUMNS = ("notebook", "mutants", "killed", "equivalent", "tolerated", "score")


def write_figure(path: Path, command: str, body: str, option: str = "--figures") -> None:
    """`body` under a line naming the command (`command` is its arguments after `gradekit`, `option` the flag)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = f"<!-- written by: python -m gradekit {command} {option} {path.as_posix()} -->"
    atomic_write(path, f"{header}\n\n{body.rstrip()}\n".encode())


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = [_row(header), _row(["---"] * len(header)), *(_row(row) for row in rows)]
    return "\n".join(lines)


def _row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def machine() -> str:
    """The cores, and how busy they were when the figure was written (a loaded machine explains a slow figure)."""
    return f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"


def seconds_text(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def proof_figure(result: ProofResult, jobs: int, wall_seconds: float) -> str:
    controls = sum(1 for subject in result.subjects if subject.kind == "control")
    alternatives = sum(1 for subject in result.subjects if subject.kind == "alternative")
    header = ["subjects", "submissions", "negative controls", "correct alternatives", "violations"]
    header += ["workers", "wall time", "machine"]
    row: list[object] = [len(result.subjects), len(result.students), controls, alternatives, len(result.violations)]
    row += [jobs, seconds_text(wall_seconds), machine()]
    return markdown_table(header, [row])


def check_figure(result: CheckResult) -> str:
    header = ["`gradekit check`: every notebook, in process", "subjects", "violations", "machine"]
    return markdown_table(
        header, [[seconds_text(result.seconds), len(result.subjects), len(result.violations), machine()]]
    )


def visible_figure(result: CheckResult) -> str:
    """Per notebook, the negative controls a student's visible checks already stop, and the ones they miss."""
    table = markdown_table(SHARE_COLUMNS, share_table(result.visible))
    missed = [
        f"- `{control}`: {reason or 'no reason recorded'}"
        for share in result.visible
        for control, reason in share.missed_reasons
    ]
    note = "Not stopped before submitting (only the grader's hidden tests catch them), each with why the page cannot show it:"
    return f"{table}\n\n{note}" + ("\n\n" + "\n".join(missed) if missed else " none.")


def coverage_figure(result: CheckResult) -> str:
    """Per exercise whose text states its inputs' dtypes or shapes, which of them its test cells pass."""
    note = f"A gap fails `check` unless `{KNOWN_GAPS_FILE}` declares it with a reason."
    return f"{coverage_table(result.coverage)}\n{note}"


def mutants_figure(result: Adequacy) -> str:
    rows = [(*row[:5], row[6]) for row in score_rows(result.scores)]
    table = markdown_table(MUTANT_COLUMNS, rows)
    return f"{table}\n\nAll {len(result.results)} mutants graded in process in {seconds_text(result.seconds)} on {machine()}."


def digits_figure(loss: float, accuracy: float, seconds: float) -> str:
    header = ["test accuracy", "test loss", "training time", "threads", "machine"]
    return markdown_table(header, [[f"{accuracy:.3f}", f"{loss:.3f}", f"{seconds:.1f} s", 1, machine()]])


def benchmark_figure(result: BenchmarkResult) -> str:
    cohort = (
        f"Cohort: {result.submissions} submissions (the reference, the blank stubs and the first controls of each"
        f" notebook), {result.notebooks} notebooks in all; {machine()}."
    )
    rates = markdown_table(
        ["", "wall time", "submissions/min"],
        [
            ["serial `nbgrader autograde`", f"{result.serial_seconds:.1f} s", f"{result.serial_rate:.1f}"],
            [f"`gradekit grade` ({result.jobs} workers)", f"{result.our_seconds:.1f} s", f"{result.our_rate:.1f}"],
        ],
    )
    slowest = max(result.floors, key=result.floors.__getitem__)
    floors = markdown_table(
        ["speed-up", "grades", "per-notebook floor", "slowest notebook", "floor, all notebooks"],
        [
            [
                f"{result.speed_up:.2f}x",
                "identical" if result.identical else "DIFFERENT",
                f"{min(result.floors.values()):.1f} s to {max(result.floors.values()):.1f} s",
                f"`{slowest}`",
                f"{sum(result.floors.values()):.1f} s",
            ]
        ],
    )
    return f"{cohort}\n\n{rates}\n\n{floors}" + (f"\n\n{phases_figure(result.phases)}" if result.phases else "")


def phases_figure(table: PhaseTable) -> str:
    """Where the engine's time went, phase by phase, and its ratio to the in-process floor."""
    rows = [
        [phase.value, f"{seconds:.1f} s", f"{mean:.3f} s", f"{share:.1%}"]
        for phase, seconds, mean, share in table.rows()
    ]
    rows.append(["**engine, all phases**", f"{table.engine_seconds:.1f} s", f"{table.per_notebook:.3f} s", "100%"])
    header = ["phase", "over the cohort", "per notebook", "share of engine time"]
    ratio = (
        f"Engine time per notebook {table.per_notebook:.2f} s (seconds of a worker or the coordinator, feedback"
        f" pages included), in-process floor per notebook {table.floor_per_notebook:.2f} s (reference answers):"
        f" **{table.floor_ratio:.2f}x** the floor (the target is within 3x)."
    )
    return f"{markdown_table(header, rows)}\n\n{ratio}"


def demo_figure(students: int, jobs: int, wall_seconds: float) -> str:
    header = ["students", "workers", "wall time (digits training included)", "machine"]
    return markdown_table(header, [[students, jobs, seconds_text(wall_seconds), machine()]])


def soak_figure(result: SoakResult) -> str:
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(result.notebook_kinds.items()))
    cohort = f"Cohort: {result.students} submissions, {result.notebooks} notebooks ({kinds}); {machine()}."
    runs = markdown_table(
        ["", "wall time", "load"],
        [
            ["quiet run", seconds_text(result.quiet_seconds), "none"],
            [
                "loaded run",
                seconds_text(result.loaded_seconds),
                f"{result.hogs} CPU hogs, {result.memory_bytes // 2**20} MB held, {len(result.faults)} faults",
            ],
        ],
    )
    faults = markdown_table(
        ["after", "fault", "target"],
        [[f"{fault.seconds:.0f} s", fault.kind.value, fault.target] for fault in result.faults],
    )
    verdict = markdown_table(
        ["workers", "retries", "rows with nothing graded under load", "rows that differ from the quiet run"],
        [[result.jobs, result.retries, result.grader_errors, f"{result.differing} of {result.students}"]],
    )
    return f"{cohort}\n\n{runs}\n\n{faults}\n\n{verdict}"


def precheck_load_figure(result: PrecheckLoad) -> str:
    rows = [
        (
            c.students,
            f"{c.p50:.2f} s",
            f"{c.p95:.2f} s",
            c.rejected_for_cooldown,
            c.unanswered,
            f"{c.wall_seconds:.0f} s",
            c.cores_busy_words,
            c.cores_stolen_words,
        )
        for c in result.cohorts
    ]
    return (
        f"Every simulated student pre-checks `{result.notebook}` (the reference answers), waits for the result, "
        f"then asks again at once; the service grades {result.workers} check(s) at a time on {result.engine}, with "
        f"{result.cores} cores (load {result.load_average:.1f} when the run began), on loopback. One student alone on the warm service: first result in "
        f"{result.lone_first_result:.2f} s. Cores busy: the share of the machine's cores' time spent on any "
        "work while the cohort ran (service, students and grading alike); stolen by the host: the share a virtual "
        "machine's host gave to others meanwhile, by which the cores ran slower than a quiet machine's.\n\n"
        + markdown_table(
            (
                "students",
                "p50 to result",
                "p95 to result",
                "rejected for cooldown",
                "unanswered",
                "wall time",
                "cores busy",
                "stolen by the host",
            ),
            rows,
        )
    )


def kernel_load_figure(result: KernelLoadResult) -> str:
    """The classes' kernels at the stated activity, then what the largest class says a core and a GiB hold."""
    rows = [
        (
            c.students,
            f"{c.kernel_cores:.3f}",
            f"{c.students_per_core:.0f}",
            f"{c.mean_kernel_bytes / 2**20:.0f} MiB",
            f"{sum(c.kernel_bytes) / 2**30:.1f} GiB",
            f"{c.cell_p50:.2f} s",
            f"{c.cell_p95:.2f} s",
            f"{c.start_p95:.1f} s",
            len(c.cell_seconds),
            len(c.failed_cells),
        )
        for c in result.classes
    ]
    header = (
        *("students", "cores the kernels used", "students per core", "memory per kernel (PSS)", "memory, all kernels"),
        *("cell p50", "cell p95", "start and first cell, p95", "cells run", "failed cells"),
    )
    largest = max(result.classes, key=lambda c: c.students)
    return (
        f"Every simulated student is a kernel of the course's environment running the code cells of one of the "
        f"{len(result.notebooks)} notebooks (reference answers) top to bottom and again, "
        f"{activity_words(result.plan)}; the figures are read over {result.plan.window_seconds:g} s once every kernel "
        f"had started, on {result.cores} cores and {result.memory_bytes / 2**30:.1f} GiB (load "
        f"{result.load_average:.1f} when the run began).\n\n"
        + markdown_table(header, rows)
        + f"\n\nAt this activity the largest class used {largest.kernel_cores / largest.students:.4f} of a core "
        f"per student (a core holds about {largest.students_per_core:.0f} such students) and "
        f"{largest.mean_kernel_bytes / 2**20:.0f} MiB per kernel (a GiB holds about {largest.students_per_gib:.1f})."
    )


def blind_figure(result: BlindSet) -> str:
    """What the checks said to answers written blind: the counts, then every answer that needs work."""
    sections = [
        _blind_summary(result),
        "## Correct answers that lost points (grader bugs)",
        _blind_table(("notebook", "cell", "answer", "points", "what the check said"), result.correct_that_lost, result),
        "## Wrong answers that kept full marks",
        _blind_table(("notebook", "cell", "answer", "the mistake"), result.wrong_that_kept, result),
        "## Wrong answers caught with no misconception named",
        _blind_table(BLIND_JUDGED_COLUMNS, result.caught_unnamed, result),
        "## Wrong answers caught under another mistake's name",
        _blind_table(
            ("notebook", "cell", "answer", "named", *BLIND_JUDGED_COLUMNS[3:]), result.caught_misnamed, result
        ),
    ]
    return "\n\n".join(sections)


BLIND_JUDGED_COLUMNS = ("notebook", "cell", "answer", "catalog entry for the mistake", "why", "what the check said")


def _blind_summary(result: BlindSet) -> str:
    answers = [r.answer for r in result.results]
    wrong = sum(not a.correct for a in answers)
    caught, unnamed = len(result.caught), len(result.caught_unnamed)
    known = sum(1 for r in result.caught_unnamed if (j := result.judged(r)) and j.catalog)
    header = ["answers", "correct", "wrong", "correct that lost points", "wrong that kept full marks"]
    header += ["wrong caught", "named", "named, another mistake's name", "unnamed", "unnamed, in the catalog"]
    row = [len(answers), len(answers) - wrong, wrong, len(result.correct_that_lost), len(result.wrong_that_kept)]
    row += [caught, caught - unnamed, len(result.caught_misnamed), unnamed, known]
    exercises = len({(a.notebook, a.exercise) for a in answers})
    collateral = sum(bool(r.collateral) for r in result.results)
    note = (
        f"{exercises} exercises; every answer graded in process beside the reference's other answers, visible and "
        f"hidden checks together, in {seconds_text(result.seconds)} on {machine()}. Answers that failed another "
        f"exercise's cell: {collateral}. 'In the catalog': the mistake has a catalog entry that the checks did not name."
    )
    return f"{markdown_table(header, [row])}\n\n{note}"


def _blind_table(header: Sequence[str], results: Sequence[BlindResult], blind: BlindSet) -> str:
    if not results:
        return "None."
    return markdown_table(header, [_blind_row(header, r, blind) for r in results])


def _blind_row(header: Sequence[str], result: BlindResult, blind: BlindSet) -> list[object]:
    judged = blind.judged(result) or Judgement("", "not judged")
    values = {
        "notebook": result.answer.notebook,
        "cell": f"test_{result.answer.exercise}",
        "answer": f"`{result.answer.id}`",
        "points": f"{result.kept:g} of {result.possible:g}",
        "named": ", ".join(f"`{name}`" for name in result.named),
        "the mistake": result.answer.mistake,
        "catalog entry for the mistake": f"`{judged.catalog}`" if judged.catalog else "none",
        "why": judged.reason,
        "what the check said": result.said,
    }
    return [str(values[column]).replace("|", "\\|") for column in header]
