"""The load command drives the real service on a Dask cluster too, and says which engine ran; its figures
(percentiles, verdict, printed lines) from given times."""

import concurrent.futures
import math
import os

import pytest
from distributed import Client
from services import dask_cluster

from gradekit.commands.cli import main
from gradekit.commands.figures import precheck_load_figure
from gradekit.commands.precheck_load import CohortLoad, LoadResult, load_lines, local_cluster


def _load(argv: list[str]) -> int:
    """The command in a thread of its own: it runs its own event loop, which another test's may block."""
    with concurrent.futures.ThreadPoolExecutor(1) as apart:
        return apart.submit(main, argv).result()


@pytest.mark.cluster
def test_a_local_clusters_workers_start_without_the_hub_credentials(monkeypatch):
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "the-services-token")
    monkeypatch.setenv("JPY_API_TOKEN", "the-services-token")
    with local_cluster(1) as address, Client(address, set_as_default=False) as client:
        hub_names = client.run(lambda: [name for name in os.environ if name.startswith(("JUPYTERHUB_", "JPY_"))])
    assert list(hub_names.values()) == [[]]  # one worker, and none of the service's hub variables


@pytest.mark.cluster
def test_precheck_load_on_a_local_cluster_prints_its_figures_and_names_the_engine(capsys):
    assert _load(["precheck-load", "--local-cluster", "2", "--students", "2", "--time-limit", "600"]) == 0
    printed = capsys.readouterr().out
    assert "pre-check load on 010_history: 2 checks at a time" in printed
    assert "engine: a Dask cluster at tcp://127.0.0.1:" in printed and "2 worker(s) at the start" in printed
    assert "one student alone, service warm: first result in" in printed


@pytest.mark.cluster
def test_precheck_load_on_a_running_cluster(capsys):
    with dask_cluster(workers=1) as address:
        assert _load(["precheck-load", "--scheduler", address, "--students", "2", "--time-limit", "600"]) == 0
    printed = capsys.readouterr().out
    assert f"engine: a Dask cluster at {address}, 1 worker(s) at the start" in printed


@pytest.mark.unit
def test_the_printed_lines_and_the_figure_say_which_engine_graded():
    cohort = CohortLoad(2, (1.0, 3.0), rejected_for_cooldown=2, unanswered=0, wall_seconds=4.0)
    engine = "a Dask cluster at tcp://10.0.0.5:8786, 4 worker(s) at the start"
    result = LoadResult("010_history", 4, 2, 1.2, (cohort,), engine, 0.5)
    assert f"engine: {engine}" in load_lines(result)
    assert f"4 check(s) at a time on {engine}" in precheck_load_figure(result)


def cohort_of(students, times, rejected=None, unanswered=0, busy_seconds=0.0, stolen_seconds=0.0):
    rejected = students if rejected is None else rejected
    return CohortLoad(students, tuple(times), rejected, unanswered, 12.5, busy_seconds, stolen_seconds)


@pytest.mark.unit
def test_the_percentiles_come_from_the_times_of_the_students_who_got_a_result():
    ten = cohort_of(10, [float(s) for s in range(1, 11)])
    assert ten.p50 == pytest.approx(5.5) and ten.p95 == pytest.approx(9.55)
    assert cohort_of(1, [3.0]).p50 == 3.0 == cohort_of(1, [3.0]).p95
    assert math.isnan(cohort_of(5, [], unanswered=5).p50)


@pytest.mark.unit
def test_a_run_holds_only_when_everyone_was_answered_and_every_second_request_met_the_cooldown():
    def result(*cohorts):
        return LoadResult("010_history", workers=2, cores=2, lone_first_result=1.5, cohorts=cohorts)

    assert result(cohort_of(2, [1.0, 2.0]), cohort_of(3, [1.0, 2.0, 3.0])).ok
    assert not result(cohort_of(2, [1.0], unanswered=1)).ok
    assert not result(cohort_of(2, [1.0, 2.0], rejected=1)).ok


@pytest.mark.unit
def test_the_lines_say_the_service_the_lone_student_then_one_row_per_cohort():
    cores = os.cpu_count()
    cohorts = (cohort_of(10, [1.0] * 10), cohort_of(50, [2.0] * 48, 50, 2, 12.5 * cores * 0.9, 12.5 * cores * 0.05))
    lines = load_lines(LoadResult("010_history", 2, 2, 1.234, cohorts, "the service's own processes", 0.5))
    assert lines[0] == "pre-check load on 010_history: 2 checks at a time, 2 cores, load 0.5 at the start"
    assert lines[2] == "one student alone, service warm: first result in 1.23 s"
    assert lines[4].split() == [
        "students",
        "p50",
        "s",
        "p95",
        "s",
        "rejected",
        "for",
        "cooldown",
        "unanswered",
        "wall",
        "s",
        "cores",
        "busy",
        "stolen",
    ]
    assert [line.split() for line in lines[5:]] == [
        ["10", "1.00", "1.00", "10", "0", "12.5", "not", "read", "not", "read"],  # the machine did not say
        ["50", "2.00", "2.00", "50", "2", "12.5", "90%", "5%"],
    ]


@pytest.mark.unit
def test_the_cores_busy_and_stolen_shares_are_the_machines_times_over_the_cohorts_wall_time_on_every_core():
    cores = os.cpu_count()
    assert cohort_of(3, [1.0] * 3, busy_seconds=12.5 * cores).cores_busy == pytest.approx(1.0)
    assert cohort_of(3, [1.0] * 3, busy_seconds=1.0, stolen_seconds=12.5 * cores / 10).cores_stolen == pytest.approx(
        0.1
    )
    assert cohort_of(3, [1.0] * 3, busy_seconds=12.5 * cores / 4).cores_busy == pytest.approx(0.25)
    assert math.isnan(cohort_of(3, [1.0] * 3).cores_busy) and cohort_of(3, [1.0] * 3).cores_busy_words == "not read"
    figure = precheck_load_figure(
        LoadResult("010_history", 2, 2, 1.0, (cohort_of(3, [1.0] * 3, busy_seconds=12.5 * cores),))
    )
    assert [cell.strip() for cell in figure.splitlines()[-1].split("|")[-3:-1]] == ["100%", "0%"]
