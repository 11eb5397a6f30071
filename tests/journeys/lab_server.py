"""A real `jupyter lab` server on a free loopback port, started, awaited and stopped.

The server listens on 127.0.0.1 only, with a random token, and never opens a
browser. Its log, user settings and workspaces live in a state folder of its
own, so a failing journey can show the log and no run inherits another's
layout. Settings silence JupyterLab's news prompt and update check, which
would otherwise reach for the network and cover part of the page.
"""

from __future__ import annotations

import contextlib
import dataclasses
import http.client
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

LOOPBACK = "127.0.0.1"

# JupyterLab user settings written for every server: no news, no update checks.
QUIET_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


class LabServerError(RuntimeError):
    """The server did not answer in time or exited early; the message carries its log tail."""


@dataclasses.dataclass(frozen=True)
class LabServer:
    """One running JupyterLab server serving `root`."""

    root: Path
    port: int
    token: str
    state_dir: Path
    process: subprocess.Popen

    @property
    def log_path(self) -> Path:
        return self.state_dir / "server.log"

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def url(self, path: str = "lab") -> str:
        """The address of `path` on this server, carrying the token."""
        separator = "&" if "?" in path else "?"
        return f"{self.base_url}/{path.lstrip('/')}{separator}token={self.token}"

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def free_loopback_port() -> int:
    """A TCP port that nothing listens on at this moment, on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


def lab_command(root: Path, port: int, token: str, state_dir: Path) -> list[str]:
    """The `jupyter lab` command line: loopback only, no browser, settings and workspaces in `state_dir`."""
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        f"--ServerApp.ip={LOOPBACK}",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={token}",
        "--ServerApp.terminals_enabled=False",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        f"--LabApp.user_settings_dir={state_dir / 'settings'}",
        f"--LabApp.workspaces_dir={state_dir / 'workspaces'}",
        # Kernels get CurveZMQ keys, as nbgrader's do in nbgrader_config.py: encrypted, and no warning.
        "--KernelManager.transport_encryption=auto",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--ServerApp.allow_root=True")
    return command


def write_quiet_settings(settings_dir: Path) -> None:
    """Write QUIET_SETTINGS as JupyterLab user settings files below `settings_dir`."""
    for relative, values in QUIET_SETTINGS.items():
        path = settings_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values, indent=2))


def start_lab(root: Path, env: dict[str, str], state_dir: Path, timeout: float = 60) -> LabServer:
    """Start `jupyter lab` in `root` with `env` and return once its REST API answers."""
    root, state_dir = Path(root).resolve(), Path(state_dir).resolve()
    port, token = free_loopback_port(), secrets.token_hex(16)
    write_quiet_settings(state_dir / "settings")
    with open(state_dir / "server.log", "wb") as log:
        process = subprocess.Popen(
            lab_command(root, port, token, state_dir),
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = LabServer(root, port, token, state_dir, process)
    try:
        wait_until_answering(server, timeout)
    except BaseException:
        stop_lab(server)
        raise
    return server


def wait_until_answering(server: LabServer, timeout: float) -> None:
    """Poll the server's /api/status until it answers 200; fail if it exits or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise LabServerError(f"jupyter lab exited with {server.process.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(server.url("api/status"), timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError):
            pass
        time.sleep(0.3)
    raise LabServerError(f"jupyter lab did not answer within {timeout:.0f} s:\n{server.log_tail()}")


def shutdown_kernels(server: LabServer) -> None:
    """Ask the server to shut down every kernel it runs (kernels live in process groups of their own)."""
    with contextlib.suppress(OSError, ValueError):
        with urllib.request.urlopen(server.url("api/kernels"), timeout=10) as response:
            kernels = json.load(response)
        for kernel in kernels:
            request = urllib.request.Request(server.url(f"api/kernels/{kernel['id']}"), method="DELETE")
            with contextlib.suppress(OSError):
                urllib.request.urlopen(request, timeout=30).close()


def stop_lab(server: LabServer, grace: float = 20) -> None:
    """Stop the server: shut its kernels down, SIGTERM its process group, SIGKILL after `grace` seconds."""
    if server.process.poll() is not None:
        return
    shutdown_kernels(server)
    _signal_group(server.process, signal.SIGTERM)
    try:
        server.process.wait(grace)
    except subprocess.TimeoutExpired:
        _signal_group(server.process, signal.SIGKILL)
        server.process.wait(grace)


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signum)


@contextlib.contextmanager
def running_lab(root: Path, env: dict[str, str], state_dir: Path, timeout: float = 60) -> Iterator[LabServer]:
    """A JupyterLab server for the duration of a `with` block; always stopped afterwards."""
    server = start_lab(root, env, state_dir, timeout)
    try:
        yield server
    finally:
        stop_lab(server)
