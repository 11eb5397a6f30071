"""Real services for the distributed tests: a PostgreSQL server and a Dask cluster, on loopback only.

A missing component is a test failure, never a skip: CI installs both.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gradekit.core.course import REPO_ROOT


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def postgres_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise RuntimeError("PostgreSQL server binaries are missing: apt-get install postgresql")
    return Path(found[-1]).parent


def _as_postgres(command: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root; run it as the postgres account then."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@contextlib.contextmanager
def postgres_server():
    """Yield the SQLAlchemy URL of an empty database on a fresh server listening on 127.0.0.1."""
    binaries, port = postgres_bin(), free_port()
    folder = Path(tempfile.mkdtemp(prefix="gradekit-pg-"))
    os.chmod(folder, 0o755)
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    data = folder / "data"
    run = lambda *cmd: subprocess.run(_as_postgres([str(c) for c in cmd]), check=True, capture_output=True, text=True)
    run(binaries / "initdb", "-D", data, "-U", "grader", "--auth=trust", "--no-sync")
    run(
        binaries / "pg_ctl",
        "-D",
        data,
        "-l",
        folder / "server.log",
        "-w",
        "-o",
        f"-h 127.0.0.1 -p {port} -k {folder}",
        "start",
    )
    try:
        run(binaries / "createdb", "-h", "127.0.0.1", "-p", port, "-U", "grader", "gradebook")
        yield f"postgresql://grader@127.0.0.1:{port}/gradebook"
    finally:
        run(binaries / "pg_ctl", "-D", data, "-m", "fast", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def postgres_on_socket():
    """Yield the socket folder of a fresh server as a hub machine runs it: no TCP, peer authentication only.

    Each account signs in as the role of its own name; the administrator is the postgres account.
    """
    binaries = postgres_bin()
    folder = Path(tempfile.mkdtemp(prefix="gradekit-pg-socket-"))
    os.chmod(folder, 0o755)  # every account reaches the socket; the data folder inside stays the server's
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    data = folder / "data"
    run = lambda *cmd: subprocess.run(_as_postgres([str(c) for c in cmd]), check=True, capture_output=True, text=True)
    run(binaries / "initdb", "-D", data, "-U", "postgres", "--auth-local=peer", "--auth-host=reject", "--no-sync")
    options = f"-c listen_addresses='' -k {folder}"
    run(binaries / "pg_ctl", "-D", data, "-l", folder / "server.log", "-w", "-o", options, "start")
    try:
        yield str(folder)
    finally:
        run(binaries / "pg_ctl", "-D", data, "-m", "fast", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def dask_cluster(workers: int = 2):
    """A real `dask scheduler` and `workers` single-threaded `dask worker` processes; yields the address."""
    dask = Path(sys.executable).parent / "dask"
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))  # workers import the kit's grading code
    scratch = Path(tempfile.mkdtemp(prefix="gradekit-dask-"))
    common = {"cwd": REPO_ROOT, "env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    processes = [
        subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], **common)
    ]
    try:
        for index in range(workers):
            processes.append(
                subprocess.Popen(
                    [
                        dask,
                        "worker",
                        address,
                        "--host",
                        "127.0.0.1",
                        "--nthreads",
                        "1",
                        "--no-dashboard",
                        "--name",
                        f"grader-{index}",
                        "--local-directory",
                        str(scratch / str(index)),
                    ],
                    **common,
                )
            )
        _wait_for_workers(address, workers)
        yield address
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(scratch, ignore_errors=True)


def _wait_for_workers(address: str, count: int) -> None:
    from distributed import Client

    deadline = time.monotonic() + 90
    while True:
        try:
            with Client(address, timeout="5s") as client:
                client.wait_for_workers(count, timeout=max(1, deadline - time.monotonic()))
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def kill_a_busy_worker(client, within: float = 600) -> str:
    """SIGKILL the process of a worker as soon as one is busy (grading); returns its address."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        busy = [address for address, keys in client.processing().items() if keys]
        if busy:
            (pid,) = client.run(os.getpid, workers=busy[:1]).values()
            os.kill(pid, signal.SIGKILL)
            return busy[0]
        time.sleep(0.2)
    raise TimeoutError(f"no worker of the cluster was busy within {within:.0f} s")
