"""The command line: its verbosity, the course and manifest it reads once, and the course folder it works in."""

import logging

import pytest
from traitlets.config.loader import PyFileConfigLoader

from gradekit.commands.cli import main
from gradekit.core.course import load_course

pytestmark = pytest.mark.unit


def test_the_cli_sets_the_level_from_v_before_or_after_the_command(kit_logger, monkeypatch, tmp_path):
    import gradekit.authoring.release

    monkeypatch.setattr(gradekit.authoring.release, "publish_release", lambda course: tmp_path)
    levels = {}
    for argv in (["release"], ["-v", "release"], ["release", "-vv"]):
        assert main(argv) == 0
        levels[" ".join(argv)] = kit_logger.level
    assert levels == {"release": logging.WARNING, "-v release": logging.INFO, "release -vv": logging.DEBUG}


def test_help_documents_the_verbose_option(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "-v, --verbose" in capsys.readouterr().out


def test_a_command_reads_the_configuration_file_once_for_its_course_and_manifest(monkeypatch):
    from gradekit.commands.cli import _course_and_manifest

    reads = []
    real_load = PyFileConfigLoader.load_config
    monkeypatch.setattr(PyFileConfigLoader, "load_config", lambda loader: reads.append(1) or real_load(loader))
    course, manifest = _course_and_manifest()
    assert manifest.assignment == course.assignment_id
    assert len(reads) == 1


def test_release_typed_in_a_course_folder_of_its_own_releases_that_folders_course(tmp_path, monkeypatch, capsys):
    from gradekit.authoring import release
    from gradekit.commands.demo_folder import complete_course_folder

    course = load_course()
    (tmp_path / "source" / course.assignment_id).mkdir(parents=True)
    complete_course_folder(course.at(tmp_path))
    released = []
    monkeypatch.setattr(release, "publish_release", lambda course: released.append(course) or course.release_dir)
    monkeypatch.chdir(tmp_path)
    assert main(["release"]) == 0
    assert [course.root for course in released] == [tmp_path.resolve()]
    assert f"release written to {tmp_path.resolve() / 'release'}" in capsys.readouterr().out


def test_benchmark_with_phases_prints_the_phase_table_and_writes_it_under_its_own_command(
    monkeypatch, tmp_path, capsys
):
    from gradekit.commands import benchmark
    from gradekit.commands.benchmark_phases import PhaseTable
    from gradekit.grading.phase_clock import Phase, PhaseTimes

    asked = {}

    def measured(course, manifest, jobs, controls_per_notebook, phases):
        asked.update(controls=controls_per_notebook, phases=phases)
        table = PhaseTable(PhaseTimes({Phase.KERNEL_START: 2.0, Phase.OTHER: 1.0}), 3, 0.5)
        return benchmark.BenchmarkResult(2, 3, jobs, 30.0, 10.0, True, {"010_history": 0.5}, table)

    monkeypatch.setattr(benchmark, "run_benchmark", measured)
    figure = tmp_path / "benchmark.md"
    assert main(["benchmark", "--phases", "--controls-per-notebook", "0", "--figures", str(figure)]) == 0
    assert asked == {"controls": 0, "phases": True}
    printed = capsys.readouterr().out
    assert Phase.KERNEL_START.value in printed and "2.00x the floor" in printed
    written = figure.read_text()
    assert written.startswith(f"<!-- written by: python -m gradekit benchmark --phases --figures {figure.as_posix()}")
    assert f"| {Phase.KERNEL_START.value} | 2.0 s |" in written
