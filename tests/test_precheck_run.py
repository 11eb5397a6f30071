"""The pre-check as the hub runs it: `gradekit precheck-serve`, stopped by the hub's SIGTERM."""

import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.nbgrader

REPO_ROOT = Path(__file__).resolve().parents[1]
READY = "ready on"
STOP_SECONDS = 60  # a bound on the wait, not a measured target: the hub waits a few seconds, then kills


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _started_service(state: Path) -> tuple[subprocess.Popen, list[str], threading.Event]:
    env = {**os.environ, "JUPYTERHUB_SERVICE_URL": f"http://127.0.0.1:{_free_port()}"}
    command = [sys.executable, "-m", "gradekit", "precheck-serve", "--state", str(state)]
    service = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stderr=subprocess.PIPE, text=True)
    said: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert service.stderr is not None
        for line in service.stderr:
            said.append(line)
            if READY in line:
                ready.set()
        ready.set()  # the service ended before it was ready: the test reads why

    threading.Thread(target=read, daemon=True).start()
    return service, said, ready


@pytest.mark.parametrize("when", ["ready", "warming up"])
def test_sigterm_ends_the_service_and_every_grading_process_without_a_traceback(tmp_path, when):
    service, said, ready = _started_service(tmp_path / "state")
    try:
        if when == "ready":
            assert ready.wait(timeout=600) and service.poll() is None, "".join(said)
        else:
            while service.poll() is None and not psutil.Process(service.pid).children(recursive=True):
                ready.wait(timeout=0.2)  # the grading processes are being started: stop it now
        processes = psutil.Process(service.pid).children(recursive=True)
        service.send_signal(signal.SIGTERM)
        returncode = service.wait(timeout=STOP_SECONDS)
    finally:
        if service.poll() is None:
            service.kill()
    _, alive = psutil.wait_procs(processes, timeout=5)
    left_running = [process.cmdline() for process in alive]
    for process in alive:  # a failing run must not leave graders behind to confuse the next test
        process.kill()
    output = "".join(said)
    assert returncode == 0, output
    assert "Traceback" not in output, output
    assert "stopped; its grading processes have ended" in output, output
    assert left_running == []
