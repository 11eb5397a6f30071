"""The load command drives the real service on a Dask cluster too, and says which engine ran."""

import concurrent.futures
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
