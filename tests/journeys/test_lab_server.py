"""journeys.lab_server without a browser: the command line, the settings, failing fast, stopping."""

import json
import socket
import subprocess
import sys

import pytest

from journeys.lab_server import (
    LOOPBACK,
    LabServer,
    LabServerError,
    free_loopback_port,
    lab_command,
    stop_lab,
    wait_until_answering,
    write_quiet_settings,
)


@pytest.mark.unit
def test_free_port_can_be_bound_on_loopback():
    port = free_loopback_port()
    with socket.socket() as probe:
        probe.bind((LOOPBACK, port))


@pytest.mark.unit
def test_command_serves_loopback_only_with_token_and_own_state(tmp_path):
    command = lab_command(tmp_path / "root", 8899, "secret", tmp_path / "state")
    assert f"--ServerApp.ip={LOOPBACK}" in command
    assert "--ServerApp.port=8899" in command and "--ServerApp.port_retries=0" in command
    assert "--IdentityProvider.token=secret" in command and "--no-browser" in command
    assert f"--LabApp.user_settings_dir={tmp_path / 'state' / 'settings'}" in command


@pytest.mark.unit
def test_kernels_get_transport_encryption_so_ipykernel_does_not_warn(tmp_path):
    command = lab_command(tmp_path / "root", 8899, "secret", tmp_path / "state")
    assert "--KernelManager.transport_encryption=auto" in command


@pytest.mark.unit
def test_quiet_settings_turn_off_news_and_update_checks(tmp_path):
    write_quiet_settings(tmp_path)
    written = json.loads(
        (tmp_path / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").read_text()
    )
    assert written == {"fetchNews": "false", "checkForUpdates": False}


def _server(tmp_path, code: str) -> LabServer:
    process = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    (tmp_path / "server.log").write_text("boom: the port is taken\n")
    return LabServer(tmp_path, free_loopback_port(), "token", tmp_path, process)


@pytest.mark.nbgrader
def test_a_server_that_exits_fails_with_its_log(tmp_path):
    server = _server(tmp_path, "raise SystemExit(3)")
    with pytest.raises(LabServerError, match="exited with 3(.|\n)*port is taken"):
        wait_until_answering(server, timeout=20)


@pytest.mark.nbgrader
def test_a_server_that_never_answers_times_out_and_stops(tmp_path):
    server = _server(tmp_path, "import time; time.sleep(60)")
    with pytest.raises(LabServerError, match="did not answer"):
        wait_until_answering(server, timeout=1)
    stop_lab(server, grace=5)
    assert server.process.poll() is not None
