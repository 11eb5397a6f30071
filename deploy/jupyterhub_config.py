"""JupyterHub for one course made by deploy/create_course.py: real accounts, each server run as its user.

    KIT_HUB_SETTINGS=/srv/<course id>/hub.json jupyterhub -f deploy/jupyterhub_config.py

Run the hub as root (it switches to each user to start their server) from the
course's Python environment; every account must be able to run that
environment's Python. The hub listens on 127.0.0.1 only: put a TLS-terminating
web server in front of it to serve a class. Ports can be moved with
KIT_HUB_PORT (the page, 8000), KIT_HUB_API_PORT (8081) and KIT_PROXY_API_PORT (8001).
"""

import grp
import importlib.util
import json
import logging
import os
import pwd
import sys

from jupyterhub.spawner import LocalProcessSpawner

LOOPBACK = "127.0.0.1"
SETTINGS = json.load(open(os.environ.get("KIT_HUB_SETTINGS", "/srv/autograd-course/hub.json")))
ENVIRONMENT_BIN = os.path.dirname(sys.executable)  # the hub's own environment serves every user
HERE = os.path.dirname(os.path.abspath(__file__))


def _load_beside(name: str):
    """A module of deploy/, loaded by its path: the hub imports nothing of the kit."""
    spec = importlib.util.spec_from_file_location(f"kit_{name}", os.path.join(HERE, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


student_limits = _load_beside("student_limits")
# Each student's server and kernels in a cgroup of their account: memory, tasks, a CPU quota, a lower priority.
STUDENT_LIMITS = student_limits.StudentLimits(**SETTINGS.get("student_limits", {}))
try:
    STUDENT_GROUPS = student_limits.find_groups()
except OSError as error:
    STUDENT_GROUPS = None
    logging.getLogger("JupyterHub").warning("students' servers start without per-student limits: %s", error)

c = get_config()  # noqa: F821  (provided by traitlets when JupyterHub loads this file)

c.JupyterHub.bind_url = f"http://{LOOPBACK}:{os.environ.get('KIT_HUB_PORT', '8000')}"
c.JupyterHub.hub_ip = LOOPBACK
c.JupyterHub.hub_port = int(os.environ.get("KIT_HUB_API_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = f"http://{LOOPBACK}:{os.environ.get('KIT_PROXY_API_PORT', '8001')}"
c.ConfigurableHTTPProxy.pid_file = os.path.join(SETTINGS["state_dir"], "proxy.pid")
c.JupyterHub.db_url = "sqlite:///" + os.path.join(SETTINGS["state_dir"], "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = os.path.join(SETTINGS["state_dir"], "cookie_secret")

# Real accounts and their passwords. Sessions are not opened: containers rarely run a session
# manager, and a server needs none.
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.open_sessions = False
c.Authenticator.allowed_groups = {SETTINGS["team_group"], SETTINGS["student_group"]}
c.Authenticator.admin_users = {SETTINGS["instructor"]}
# The course team as a hub group too (nbgrader's multiple-grader setup), so the hub's admin page shows who grades.
c.JupyterHub.load_groups = {SETTINGS["team_group"]: {"users": sorted(grp.getgrnam(SETTINGS["team_group"]).gr_mem)}}


def is_course_team(username: str) -> bool:
    """A member of the team's group, as a supplementary group or as the account's own primary one."""
    team = grp.getgrnam(SETTINGS["team_group"])
    return username in team.gr_mem or pwd.getpwnam(username).pw_gid == team.gr_gid


def jupyter_config_path(spawner) -> str:
    """The settings folders of the user's role: the course team's show formgrader, the students' hide it."""
    role = "course-team" if is_course_team(spawner.user.name) else "students"
    return os.pathsep.join(SETTINGS["config_path"][role])


class CourseSpawner(LocalProcessSpawner):
    """Each server as its user; the course team's share the course folder and, if there is one, the gradebook.

    A team member's server makes what it writes group-writable (umask 0007), so the
    next TA can work on it; only the team's servers learn the shared gradebook's address.
    A student's server joins its account's cgroup (deploy/student_limits.py) before it
    becomes the student, so it and every kernel it starts stay within the student's limits.
    """

    def get_env(self):
        env = super().get_env()
        if SETTINGS.get("gradebook_url") and is_course_team(self.user.name):
            env["KIT_GRADEBOOK_URL"] = SETTINGS["gradebook_url"]
        return env

    def make_preexec_fn(self, name):
        become_user = super().make_preexec_fn(name)
        team = is_course_team(name)
        groups = () if team or STUDENT_GROUPS is None else STUDENT_GROUPS.prepare(name, STUDENT_LIMITS)

        def preexec():
            if groups:
                student_limits.join(groups, STUDENT_LIMITS.niceness)
            become_user()
            if team:
                os.umask(0o007)

        return preexec


# Each server runs as its user (the hub is root), from their home, with JupyterLab of this environment.
c.JupyterHub.spawner_class = CourseSpawner
c.Spawner.ip = LOOPBACK
c.Spawner.cmd = [os.path.join(ENVIRONMENT_BIN, "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.environment = {
    "PATH": os.pathsep.join([ENVIRONMENT_BIN, "/usr/local/bin", "/usr/bin", "/bin"]),
    "JUPYTER_CONFIG_PATH": jupyter_config_path,
    "KIT_EXCHANGE_ROOT": SETTINGS["exchange"],  # the course's own nbgrader_config.py reads it
}
# No news or update checks: they reach for the network and cover part of the page.
c.Spawner.args = ["--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
# A busy machine starts JupyterLab slowly; fail late rather than spuriously.
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120

# Servers idle for an hour are stopped (jupyterhub-idle-culler, a hub service with only the scopes it needs),
# so a class's forgotten tabs do not hold memory all night. KIT_IDLE_TIMEOUT moves the hour.
IDLE_CULLER_SCOPES = ["list:users", "read:users:activity", "read:servers", "delete:servers"]
c.JupyterHub.services = [
    {
        "name": "idle-culler",
        "command": [
            sys.executable,
            "-m",
            "jupyterhub_idle_culler",
            f"--timeout={os.environ.get('KIT_IDLE_TIMEOUT', '3600')}",
            "--cull-every=60",
        ],
        "user": "nobody",  # it needs the hub's API and its token, nothing of root's
        "display": False,
    }
]
c.JupyterHub.load_roles = [{"name": "idle-culler", "scopes": IDLE_CULLER_SCOPES, "services": ["idle-culler"]}]

# The sealed pre-check (gradekit/precheck/, docs/pages/deployment.md): a service the hub starts as its
# own account, from that account's private copy of the course, which grades a student's saved notebook
# on the boxed engine. Its settings (cooldown, daily quota, switches) are c.Precheck.* in
# that copy's nbgrader_config.py. Students reach it at /services/precheck/ with their hub token: the
# page's token (JupyterLab's pre-check button) and their server's own (the support module's
# precheck() helper) may use the service, and nothing else of the hub.
PRECHECK = SETTINGS.get("precheck")
if PRECHECK:
    PRECHECK_SCOPE = "access:services!service=precheck"
    c.JupyterHub.services += [
        {
            "name": "precheck",
            "url": f"http://{LOOPBACK}:{os.environ.get('KIT_PRECHECK_PORT', '8002')}",
            "command": [sys.executable, "-m", "gradekit", "precheck-serve", "--state", PRECHECK["state_dir"]],
            "cwd": PRECHECK["course_dir"],
            "user": PRECHECK["account"],
            "environment": {"PATH": os.pathsep.join([ENVIRONMENT_BIN, "/usr/local/bin", "/usr/bin", "/bin"])},
            "oauth_no_confirm": True,
            "display": False,
        }
    ]
    c.JupyterHub.load_roles += [
        {"name": "user", "scopes": ["self", PRECHECK_SCOPE]},
        {"name": "server", "scopes": ["users:activity!user", "access:servers!server", PRECHECK_SCOPE]},
    ]
    c.Spawner.oauth_client_allowed_scopes = [PRECHECK_SCOPE]
    c.Spawner.environment["KIT_PRECHECK_URL"] = c.JupyterHub.bind_url.rstrip("/") + "/services/precheck/"
