"""A course on a real JupyterHub for the hub journey: real accounts, deploy/'s setup script and configuration.

The accounts are real (useradd, passwords through chpasswd, PAM at the login
page), so the test must run as root; they carry unusual names and are removed
afterwards with their homes and every process they still run. The course's
Python must be runnable by every account: where a folder above the interpreter
is closed to others (a Python built in root's home), the journey opens it for
searching only, for its duration, and restores its mode afterwards.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import grp
import http.client
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

from gradekit.core.course import REPO_ROOT
from journeys.lab_server import LOOPBACK, free_loopback_port

INSTRUCTOR = "kit-instructor"
TA = "kit-ta"  # a TA who is not the instructor, with an account of their own
TEAM = (INSTRUCTOR, TA)
GRADEBOOK_DATABASE = "kit_gradebook"  # the team's PostgreSQL gradebook, where the journey asks for one
STUDENTS = ("kit-student-a", "kit-student-b")
TEAM_GROUP, STUDENT_GROUP = "kit-team", "kit-students"
PRECHECK_ACCOUNT = "kit-precheck"  # the pre-check service's own account
# The account names are fixed, so two runs of the journey on one machine take turns.
TURN_LOCK = Path(tempfile.gettempdir()) / "kit-hub-journey.lock"
HUB_CONFIG = REPO_ROOT / "deploy" / "jupyterhub_config.py"
CREATE_COURSE = REPO_ROOT / "deploy" / "create_course.py"


# The hub runs through this: SIGINT and SIGQUIT back to their defaults, then the hub in its place.
# A service manager starts the hub so; a background job of a script, or a worker of a test run
# started by one, has them ignored, and every process the hub starts inherits that. The hub stops
# a service with SIGINT and waits 30 s before SIGTERM: the idle culler, which stops at SIGINT only
# by default, then outlived the hub, and so did the proxy the hub stops after its services.
INTERRUPTS_DELIVERED = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "signal.signal(signal.SIGQUIT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
)


class HubError(RuntimeError):
    """The hub did not answer in time or exited early; the message carries its log tail."""


@dataclasses.dataclass(frozen=True)
class HubCourse:
    """One course made by deploy/create_course.py: its settings (hub.json) and each account's password."""

    settings: dict
    passwords: dict[str, str]

    @property
    def course_dir(self) -> Path:
        return Path(self.settings["course_dir"])

    @property
    def precheck(self) -> dict:
        """The pre-check service's account and folders (its private course clone, its state and audit log)."""
        return self.settings["precheck"]

    @property
    def exchange(self) -> Path:
        return Path(self.settings["exchange"]) / self.settings["course_id"]

    @property
    def gradebook_url(self) -> str | None:
        """The team's PostgreSQL gradebook, or None where the course keeps SQLite in its folder."""
        return self.settings.get("gradebook_url")

    def home(self, username: str) -> Path:
        return Path(pwd.getpwnam(username).pw_dir)

    def environment(self, username: str) -> dict[str, str]:
        """What a terminal of `username`'s server on the hub sees: the same variables jupyterhub_config.py sets."""
        role = "course-team" if username in TEAM else "students"
        account = pwd.getpwnam(username)
        shared_gradebook = (
            {"KIT_GRADEBOOK_URL": self.gradebook_url} if role == "course-team" and self.gradebook_url else {}
        )
        return shared_gradebook | {
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
            "HOME": account.pw_dir,
            "USER": username,
            "LOGNAME": username,
            "LANG": "C.UTF-8",
            "JUPYTER_CONFIG_PATH": os.pathsep.join(self.settings["config_path"][role]),
            "KIT_EXCHANGE_ROOT": self.settings["exchange"],
        }


def run_as(
    course: HubCourse,
    username: str,
    *command: str,
    cwd: Path | None = None,
    timeout: float = 120,
    extra_env: dict[str, str] | None = None,
):
    """Run `command` as `username` (their uid, groups and environment), as they would in a terminal on the hub.

    `extra_env` adds what that terminal's server would also hand it (its hub token, the pre-check's address).
    """
    account = pwd.getpwnam(username)
    groups = [g.gr_gid for g in grp.getgrall() if username in g.gr_mem]
    return subprocess.run(
        command,
        cwd=cwd or account.pw_dir,
        env=course.environment(username) | (extra_env or {}),
        user=account.pw_uid,
        group=account.pw_gid,
        extra_groups=groups,
        umask=0o007 if username in TEAM else 0o022,  # as the hub's spawner sets it
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@contextlib.contextmanager
def searchable_interpreter() -> Iterator[list[Path]]:
    """Let every account search the folders above this Python (execute bit for others), then put each mode back.

    Both the environment's own folders (a clone may sit in a private temporary folder) and those
    above the interpreter its `python` links to.
    """
    changed = []
    above = {*Path(sys.prefix).parents, Path(sys.prefix), *Path(os.path.realpath(sys.executable)).parents}
    for folder in sorted(above, key=lambda f: len(f.parts)):
        mode = folder.stat().st_mode
        if not mode & stat.S_IXOTH:
            changed.append((folder, stat.S_IMODE(mode)))
            os.chmod(folder, stat.S_IMODE(mode) | stat.S_IXOTH)
    try:
        yield [folder for folder, _ in changed]
    finally:
        for folder, mode in changed:
            os.chmod(folder, mode)


@contextlib.contextmanager
def one_journey_at_a_time() -> Iterator[None]:
    with open(TURN_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@contextlib.contextmanager
def journey_artifacts(folder: Path) -> Iterator[Path]:
    """The journey's artifact folder, emptied first; held by this run until it ends (the accounts too)."""
    with one_journey_at_a_time():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        yield folder


def require_hub_tools() -> None:
    """A hub journey fails, never skips, where it cannot make accounts or start the proxy."""
    if os.geteuid() != 0:
        raise RuntimeError(
            "the hub journey creates real accounts and runs JupyterHub as root: run it as root (CI does)"
        )
    if shutil.which("configurable-http-proxy") is None:
        raise RuntimeError("the hub journey needs configurable-http-proxy (npm install -g configurable-http-proxy)")


@contextlib.contextmanager
def created_course(log_dir: Path, postgres_host: str | None = None) -> Iterator[HubCourse]:
    """The course set up by deploy/create_course.py in a scratch folder; accounts and groups removed afterwards.

    With `postgres_host` (a server's socket folder) the team shares a PostgreSQL gradebook there.
    """
    # A run stopped before its clean-up leaves the accounts, their homes gone with its scratch folder.
    remove_accounts((*TEAM, *STUDENTS, PRECHECK_ACCOUNT), (TEAM_GROUP, STUDENT_GROUP))
    scratch = Path(tempfile.mkdtemp(prefix="kit-hub-"))
    os.chmod(scratch, 0o755)  # homes and the site live below it
    roster = scratch / "roster.csv"
    members = f"{INSTRUCTOR},instructor\n{TA},ta\n" + "".join(f"{s},student\n" for s in STUDENTS)
    roster.write_text("username,role\n" + members)
    passwords = {name: f"Kit-{name}-{os.urandom(6).hex()}" for name in (*TEAM, *STUDENTS)}
    gradebook = (
        [f"--gradebook-database={GRADEBOOK_DATABASE}", f"--postgres-host={postgres_host}"] if postgres_host else []
    )
    try:
        setup = subprocess.run(
            [
                sys.executable,
                str(CREATE_COURSE),
                str(roster),
                f"--site={scratch / 'site'}",
                f"--homes={scratch / 'home'}",
                f"--team-group={TEAM_GROUP}",
                f"--student-group={STUDENT_GROUP}",
                f"--precheck-account={PRECHECK_ACCOUNT}",
                *gradebook,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        (log_dir / "create_course.log").write_text(setup.stdout + setup.stderr)
        if setup.returncode != 0:
            raise HubError(f"create_course.py exited with {setup.returncode}:\n{setup.stdout}{setup.stderr}")
        subprocess.run(["chpasswd"], input="".join(f"{n}:{p}\n" for n, p in passwords.items()), text=True, check=True)
        yield HubCourse(json.loads((scratch / "site" / "hub.json").read_text()), passwords)
    finally:
        try:
            remove_accounts((*TEAM, *STUDENTS, PRECHECK_ACCOUNT), (TEAM_GROUP, STUDENT_GROUP))
        finally:  # the folder holds the hidden tests and the gradebook: it goes even if an account stays
            subprocess.run(["rm", "-rf", "--one-file-system", str(scratch)], check=False)


def remove_accounts(usernames, groups) -> None:
    """End what each test account still runs, delete the account and its home, then the groups.

    userdel refuses an account that still runs a process, and a killed process runs until it is
    reaped: each account's processes are killed until none is left, and an account that stays is an error.
    """
    for name in usernames:
        with contextlib.suppress(KeyError):
            _end_processes(pwd.getpwnam(name).pw_uid)
            subprocess.run(["userdel", "--remove", name], capture_output=True, check=False)
    for group in groups:
        subprocess.run(["groupdel", group], capture_output=True, check=False)
    left = [name for name in usernames if _account_exists(name)]
    if left:
        raise HubError(f"the test accounts {', '.join(left)} could not be removed")


def _end_processes(uid: int, patience: float = 10.0) -> None:
    deadline = time.monotonic() + patience
    while (pids := processes_of(uid)) and time.monotonic() < deadline:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


def _account_exists(name: str) -> bool:
    return _uid_of(name) is not None


def processes_of(uid: int) -> list[int]:
    """The process ids the account `uid` runs now."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    pids.append(int(entry.name))
    return pids


@dataclasses.dataclass(frozen=True)
class Hub:
    """A running JupyterHub on loopback."""

    port: int
    process: subprocess.Popen
    log_path: Path

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


@contextlib.contextmanager
def running_hub(course: HubCourse, log_dir: Path, timeout: float = 90) -> Iterator[Hub]:
    """deploy/jupyterhub_config.py served by a real `jupyterhub` as root; stopped (with its users' servers) afterwards."""
    ports = {name: str(free_loopback_port()) for name in ("KIT_HUB_PORT", "KIT_HUB_API_PORT", "KIT_PROXY_API_PORT")}
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    env.update(ports, KIT_HUB_SETTINGS=str(Path(course.settings["state_dir"]).parent / "hub.json"))
    log_path = log_dir / "jupyterhub.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                INTERRUPTS_DELIVERED,
                str(Path(sys.executable).parent / "jupyterhub"),
                "-f",
                str(HUB_CONFIG),
            ],
            cwd=course.settings["state_dir"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    hub = Hub(int(ports["KIT_HUB_PORT"]), process, log_path)
    try:
        _wait_until_answering(hub, timeout)
        yield hub
    finally:
        try:
            _stop(process)
        finally:
            strays = _end_strays(ports)
    # Reached when the body returned, which a fixture's teardown always does: a journey that failed
    # is told of what its hub left as well.
    if strays:
        raise HubError(f"the hub left processes running after it stopped (ended now): {strays}")


def _end_strays(ports: dict[str, str], patience: float = 5.0) -> list[str]:
    """What this hub started (its proxy, its services, its users' servers and kernels) and left running
    `patience` seconds after it stopped: killed, and each one's command line returned."""
    deadline = time.monotonic() + patience
    while (strays := _started_by(ports)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in strays:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return list(strays.values())


def _started_by(ports: dict[str, str]) -> dict[int, str]:
    """The processes the hub on `ports` started, by process id: its proxy, all that were given its API's
    address (the culler runs as nobody), and whatever the journey's own accounts run (the pre-check's
    kernels start without the hub's variables)."""
    proxy = ["--api-port", ports["KIT_PROXY_API_PORT"]]
    hub_api = f"JUPYTERHUB_API_URL=http://{LOOPBACK}:{ports['KIT_HUB_API_PORT']}/".encode()
    accounts = {_uid_of(name) for name in (*TEAM, *STUDENTS, PRECHECK_ACCOUNT)} - {None}
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            arguments = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            environment = (entry / "environ").read_bytes().split(b"\0")
            is_proxy = any(arguments[i : i + 2] == proxy for i in range(len(arguments)))
            is_the_hubs = any(variable.startswith(hub_api) for variable in environment)
            if is_proxy or is_the_hubs or entry.stat().st_uid in accounts:
                found[int(entry.name)] = " ".join(arguments)[:120]
    return found


def _uid_of(name: str) -> int | None:
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


def _wait_until_answering(hub: Hub, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if hub.process.poll() is not None:
            raise HubError(f"jupyterhub exited with {hub.process.returncode}:\n{hub.log_tail()}")
        with contextlib.suppress(urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError):
            with urllib.request.urlopen(hub.url("hub/api"), timeout=2) as response:
                if response.status == 200:
                    return
        time.sleep(0.3)
    raise HubError(f"jupyterhub did not answer within {timeout:.0f} s:\n{hub.log_tail()}")


def _stop(process: subprocess.Popen, grace: float = 30) -> None:
    """SIGTERM the hub's process group (the hub stops its users' servers first), SIGKILL after `grace` seconds."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(grace)
