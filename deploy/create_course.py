"""Set up one course on a JupyterHub machine: accounts from a roster, the exchange, the course folder, Jupyter settings.

Run as root, once per course, and again when the roster grows: accounts,
folders and submissions that exist are kept; permissions and settings are
written afresh. Run it with the Python the hub runs from: it checks that every
account can start that Python, and starts its IPython once for the course team.

    .venv/bin/python deploy/create_course.py roster.csv

The roster is a CSV file with the columns `username` and `role` (instructor,
ta or student) and exactly one instructor. What this makes, below --site
(default /srv/<course id>):

    hub.json                 what deploy/jupyterhub_config.py reads
    course/                  the course folder, a clone of this kit the course team shares: the
                             instructor's and the team's group's, 2770, group-writable, every folder
                             setgid; each team member reaches it by a link ~/<course id>
    exchange/                nbgrader's filesystem exchange, 1777
    exchange/<course id>/    the team's: outbound 2775, inbound 3773, feedback 2771 (students may
                             fetch, drop a submission and fetch their own feedback; any TA may collect)
    jupyter/everyone/        nbgrader settings every server reads (course id, exchange)
    jupyter/course-team/     adds the course folder (by each member's link) for formgrader, turns on
                             nbgrader's group-shared files, lets formgrader's page sit in JupyterLab,
                             turns off JupyterLab's news pop-up
    jupyter/students/        turns off formgrader, create-assignment, the course list and the news pop-up
    hub/                     the hub's own state (database, cookie secret), root only
    precheck/                home of the pre-check service's own account (<course id>-precheck), 0700:
      course/                its private clone of this kit, the hidden tests it grades with (cloned afresh each run)
      state/                 its grading template, uploads being graded, and audit.jsonl (who checked what, when)

The gradebook is SQLite inside the course folder unless --gradebook-database
names a PostgreSQL database: then deploy/shared_gradebook.py makes it, shared by
the team (each member signs in as themselves; a log says who entered each
manual score), and the hub hands its address to the team's servers only. No
student can read the course folder, the gradebook or another's submission.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import grp
import json
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
# Settings that differ by role (the docstring above says what each does), copied as they are.
ROLE_SETTINGS = Path(__file__).resolve().parent / "jupyter"
# What `make environment` adds to the environment every server runs from: the prebuilt lab extension
# (Validate's honest wording, and the Pre-check button under a hub) and Validate's honest command line.
COURSE_JUPYTER = (
    Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "kit-precheck" / "package.json",
    Path(sys.prefix) / "etc" / "jupyter" / "nbgrader_config.py",
)
# The extension's plugin that adds the button: turned off where the course has no pre-check service.
PRECHECK_BUTTON = "kit-precheck:button"
ROLES = ("instructor", "ta", "student")
COURSE_TEAM = ("instructor", "ta")

EVERYONE_CONFIG = '''"""nbgrader settings of every account of course {course_id!r} (written by deploy/create_course.py)."""
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
'''

# The course team's servers also load the course's own configuration, so formgrader grades as the TA's command does.
COURSE_TEAM_CONFIG = '''"""nbgrader settings of the team of course {course_id!r} (written by deploy/create_course.py)."""
import os

c = get_config()  # noqa: F821
load_subconfig({course_config!r})  # noqa: F821
# Formgrader serves only a course below the server's root (the member's home): each member's link.
c.CourseDirectory.root = os.path.expanduser({course_link!r})
# The team shares the course folder: what nbgrader writes there stays writable for the team's group.
c.CourseDirectory.groupshared = True
c.Exchange.root = {exchange!r}
'''


class RosterError(ValueError):
    """The roster cannot describe a course: the message says which line and why."""


@dataclasses.dataclass(frozen=True)
class Member:
    username: str
    role: str


@dataclasses.dataclass(frozen=True)
class CoursePlan:
    """Every name and folder of one course on this machine."""

    course_id: str
    members: tuple[Member, ...]
    site: Path
    homes: Path
    team_group: str
    student_group: str
    precheck_account: str | None = None  # the pre-check service's own account; None: no pre-check
    gradebook_database: str | None = None  # a PostgreSQL database the team shares; None: SQLite in the course folder
    postgres_host: str = "/var/run/postgresql"  # the PostgreSQL server's socket folder
    student_limits: dict[str, float] = dataclasses.field(default_factory=dict)  # deploy/student_limits.py's, if set

    @property
    def team(self) -> tuple[str, ...]:
        return tuple(m.username for m in self.members if m.role in COURSE_TEAM)

    @property
    def instructor(self) -> str:
        return next(m.username for m in self.members if m.role == "instructor")

    @property
    def exchange(self) -> Path:
        return self.site / "exchange"

    @property
    def course_dir(self) -> Path:
        return self.site / "course"

    @property
    def course_link(self) -> str:
        """Where each team member finds the course folder, in their own home."""
        return f"~/{self.course_id}"

    @property
    def gradebook_url(self) -> str | None:
        """The shared gradebook's address; with no user name, each member signs in as their own account."""
        if not self.gradebook_database:
            return None
        return f"postgresql:///{self.gradebook_database}?host={self.postgres_host}"

    @property
    def precheck_home(self) -> Path:
        return self.site / "precheck"

    def config_dir(self, audience: str) -> Path:
        return self.site / "jupyter" / audience

    def group_of(self, member: Member) -> str:
        return self.team_group if member.role in COURSE_TEAM else self.student_group


def read_roster(path: Path) -> tuple[Member, ...]:
    """The roster's members, checked: known roles, valid user names, no duplicates, one instructor."""
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    members = []
    for line, row in enumerate(rows, start=2):
        username, role = (row.get("username") or "").strip(), (row.get("role") or "").strip().lower()
        if not _valid_username(username):
            raise RosterError(f"{path}:{line}: {username!r} is not a valid account name")
        if role not in ROLES:
            raise RosterError(f"{path}:{line}: role {role!r} is not one of {', '.join(ROLES)}")
        members.append(Member(username, role))
    names = [m.username for m in members]
    if len(set(names)) != len(names):
        raise RosterError(f"{path}: an account is listed twice")
    if sum(m.role == "instructor" for m in members) != 1:
        raise RosterError(f"{path}: the roster needs exactly one instructor")
    return tuple(members)


def _valid_username(name: str) -> bool:
    allowed = set("abcdefghijklmnopqrstuvwxyz0123456789-_")
    return 0 < len(name) <= 32 and name[0].isalpha() and set(name) <= allowed


def create_accounts(plan: CoursePlan) -> None:
    """A group for the course team and one for the students; an account with a home folder for each member."""
    for group in (plan.team_group, plan.student_group):
        if not _exists(grp.getgrnam, group):
            _run("groupadd", group)
    plan.homes.mkdir(parents=True, exist_ok=True)
    for member in plan.members:
        if not _exists(pwd.getpwnam, member.username):
            _run("useradd", "--create-home", "--base-dir", str(plan.homes), "--shell", "/bin/bash", member.username)
        _run("usermod", "--append", "--groups", plan.group_of(member), member.username)
        home = pwd.getpwnam(member.username).pw_dir
        if not os.path.isdir(home):  # an account kept from before, whose home was moved or removed
            raise SystemExit(
                f"{member.username} has an account but its home {home} is missing: make it, owned by "
                f"{member.username}, or remove the account (userdel {member.username}), and run again"
            )
        os.chmod(home, 0o700)  # a home is private: answers live there


def _exists(lookup, name: str) -> bool:
    try:
        lookup(name)
    except KeyError:
        return False
    return True


def create_exchange(plan: CoursePlan) -> None:
    """nbgrader's filesystem exchange with the modes its multi-user setup documents, shared by the team.

    The root is world-writable (nbgrader checks for 0777) and sticky, so no
    course can remove another's folder. Inbound lets students drop a submission
    but not list the others (their names end in a random string), and sticky
    keeps a student from removing or renaming someone else's submission. The
    course's folders belong to the team's group, setgid, so every submission
    takes that group and any TA can collect it or release feedback.
    """
    plan.exchange.parent.mkdir(parents=True, exist_ok=True)
    instructor = pwd.getpwnam(plan.instructor)
    team = grp.getgrnam(plan.team_group)
    trusted = {0, instructor.pw_uid}
    own_folder(plan.exchange, 0, 0, 0o1777, trusted)
    modes = {"": 0o2775, "outbound": 0o2775, "inbound": 0o3773, "feedback": 0o2771}
    for name, mode in modes.items():
        own_folder(plan.exchange / plan.course_id / name, instructor.pw_uid, team.gr_gid, mode, trusted)


class UntrustedFolder(SystemExit):
    """A folder the script would hand out is a link, or was made by someone it should not trust."""


def own_folder(folder: Path, uid: int, gid: int, mode: int, trusted: set[int]) -> None:
    """Make `folder` (or take the one there) and give it its owner and mode, never through a link.

    The exchange's root is writable by everyone: a student could have put a link or a folder of
    their own where a course folder goes, and root following it would hand a system folder out.
    """
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder)
    try:
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        raise UntrustedFolder(f"{folder} is a link or not a folder: remove it and run again") from None
    try:
        found = os.fstat(descriptor)
        if found.st_uid not in trusted:
            raise UntrustedFolder(f"{folder} belongs to uid {found.st_uid}, not root or the instructor: remove it")
        os.fchown(descriptor, uid, gid)
        os.fchmod(descriptor, mode)
    finally:
        os.close(descriptor)


def create_course_folder(plan: CoursePlan, kit: Path = KIT) -> None:
    """Clone the kit into the site (kept if it exists), the team's to share; each member gets a link to it.

    The instructor owns it and the team's group may write everywhere in it; every
    folder is setgid, so what anyone of the team makes there stays the team's.
    Nobody else may enter it: it holds the hidden tests, submissions and grades.
    """
    if not plan.course_dir.exists():
        _run("git", "clone", "--quiet", "--no-hardlinks", str(kit), str(plan.course_dir))
    instructor = pwd.getpwnam(plan.instructor)
    _run("chown", "-R", f"{instructor.pw_uid}:{plan.team_group}", str(plan.course_dir))
    _run("chmod", "-R", "g+rwX,o-rwx", str(plan.course_dir))
    _run("find", str(plan.course_dir), "-type", "d", "-exec", "chmod", "g+s", "{}", "+")
    os.chmod(plan.course_dir, 0o2770)
    for username in plan.team:
        _link_course(plan, pwd.getpwnam(username))


def _link_course(plan: CoursePlan, account: pwd.struct_passwd) -> None:
    """~/<course id> in a team member's home, theirs, leading to the shared course folder."""
    link = Path(account.pw_dir) / plan.course_id
    if link.is_symlink() or not link.exists():
        link.unlink(missing_ok=True)
        link.symlink_to(plan.course_dir)
        os.lchown(link, account.pw_uid, account.pw_gid)
    elif link.resolve() != plan.course_dir:
        raise SystemExit(f"{link} exists and is not the link to {plan.course_dir}: move it away and run again")


def share_gradebook(plan: CoursePlan, python: str = sys.executable) -> None:
    """The team's PostgreSQL gradebook, made by deploy/shared_gradebook.py as the server's administrator.

    The script is handed on standard input: the administrator's account need not read the kit's folder.
    """
    assert plan.gradebook_database is not None
    members = [arg for username in plan.team for arg in ("--member", username)]
    script = (Path(__file__).resolve().parent / "shared_gradebook.py").read_text()
    arguments = ["--database", plan.gradebook_database, "--team", plan.team_group, "--host", plan.postgres_host]
    subprocess.run(
        ["runuser", "-u", "postgres", "--", python, "-", *arguments, *members],
        input=script,
        text=True,
        check=True,
        cwd="/",
    )


def prepare_graders(plan: CoursePlan, python: str = sys.executable) -> None:
    """Start IPython once as each member of the course team, so their IPython folder exists.

    The kit's sealed grading runs kernels that may write nowhere but a private
    temporary folder; a kernel of an account without ~/.ipython dies trying to
    create it, and every submission it grades fails.
    """
    for member in plan.members:
        if member.role in COURSE_TEAM:
            home = pwd.getpwnam(member.username).pw_dir
            _run(
                "runuser",
                "-u",
                member.username,
                "--",
                "env",
                f"HOME={home}",
                python,
                "-m",
                "IPython",
                "--quick",
                "-c",
                "pass",
            )


def create_precheck(plan: CoursePlan, kit: Path = KIT, python: str = sys.executable) -> None:
    """The pre-check's account, owning nothing of anyone else's, and its private clone of the course.

    The clone holds the hidden tests, so only that account may enter its home.
    It is cloned afresh on every run, so the service grades with the checks the
    kit holds now; its IPython folder is made once, as the graders' are.
    """
    account = plan.precheck_account
    assert account is not None
    home = plan.precheck_home
    if not _exists(pwd.getpwnam, account):
        _run("useradd", "--system", "--home-dir", str(home), "--shell", "/usr/sbin/nologin", account)
    elif pwd.getpwnam(account).pw_dir != str(home):  # an account kept from a course set up elsewhere
        _run("usermod", "--home", str(home), account)
    home.mkdir(parents=True, exist_ok=True)
    clone = home / "course"
    if clone.exists():
        shutil.rmtree(clone)
    _run("git", "clone", "--quiet", "--no-hardlinks", str(kit), str(clone))
    (home / "state").mkdir(exist_ok=True)
    owner = pwd.getpwnam(account)
    _run("chown", "-R", f"{owner.pw_uid}:{owner.pw_gid}", str(home))
    os.chmod(home, 0o700)
    os.chmod(home / "state", 0o700)
    _run("runuser", "-u", account, "--", "env", f"HOME={home}", python, "-m", "IPython", "--quick", "-c", "pass")


def write_jupyter_settings(plan: CoursePlan) -> None:
    """The settings folders the hub puts on each server's JUPYTER_CONFIG_PATH, by role."""
    for audience in ("course-team", "students"):
        if plan.config_dir(audience).exists():
            shutil.rmtree(plan.config_dir(audience))
        shutil.copytree(ROLE_SETTINGS / audience, plan.config_dir(audience))
    everyone = plan.config_dir("everyone")
    everyone.mkdir(parents=True, exist_ok=True)
    values = dict(course_id=plan.course_id, exchange=str(plan.exchange))
    (everyone / "nbgrader_config.py").write_text(EVERYONE_CONFIG.format(**values))
    if not plan.precheck_account:
        for audience in ("course-team", "students"):
            _turn_off_lab_plugin(plan.config_dir(audience), PRECHECK_BUTTON)
    team = plan.config_dir("course-team")
    course_config = str(plan.course_dir / "nbgrader_config.py")
    (team / "nbgrader_config.py").write_text(
        COURSE_TEAM_CONFIG.format(course_config=course_config, course_link=plan.course_link, **values)
    )
    for folder, _, files in os.walk(plan.site / "jupyter"):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)


def _turn_off_lab_plugin(settings: Path, plugin: str) -> None:
    page = settings / "labconfig" / "page_config.json"
    config = json.loads(page.read_text())
    config.setdefault("disabledExtensions", {})[plugin] = True
    page.write_text(json.dumps(config, indent=2) + "\n")


def missing_course_jupyter() -> list[str]:
    """The pieces of the course's Jupyter setup that the environment lacks (`make environment` installs them)."""
    return [str(path) for path in COURSE_JUPYTER if not path.is_file()]


def write_hub_settings(plan: CoursePlan) -> Path:
    """hub.json: what the hub needs to know of the course; its state folder, readable by root only."""
    state = plan.site / "hub"
    state.mkdir(parents=True, exist_ok=True)
    os.chmod(state, 0o700)
    os.chmod(plan.site, 0o755)
    settings = {
        "course_id": plan.course_id,
        "instructor": plan.instructor,
        "team_group": plan.team_group,
        "student_group": plan.student_group,
        "exchange": str(plan.exchange),
        "course_dir": str(plan.course_dir),
        "gradebook_url": plan.gradebook_url,
        "student_limits": plan.student_limits,
        "state_dir": str(state),
        "config_path": {
            "course-team": [str(plan.config_dir("course-team")), str(plan.config_dir("everyone"))],
            "students": [str(plan.config_dir("students")), str(plan.config_dir("everyone"))],
        },
    }
    if plan.precheck_account:
        settings["precheck"] = {
            "account": plan.precheck_account,
            "course_dir": str(plan.precheck_home / "course"),
            "state_dir": str(plan.precheck_home / "state"),
        }
    path = plan.site / "hub.json"
    path.write_text(json.dumps(settings, indent=2) + "\n")
    return path


def unreachable_python(plan: CoursePlan, python: str = sys.executable) -> list[str]:
    """The members who cannot start the course's Python: their servers would fail to spawn."""
    return [
        m.username
        for m in plan.members
        if subprocess.run(["runuser", "-u", m.username, "--", python, "-c", "pass"], capture_output=True).returncode
        != 0
    ]


def _run(*command: str) -> None:
    subprocess.run(command, check=True)


def course_id_of(kit: Path = KIT) -> str:
    """The course id in the kit's nbgrader_config.py, read without running the file."""
    for line in (kit / "nbgrader_config.py").read_text().splitlines():
        if line.startswith("c.CourseDirectory.course_id"):
            return line.split("=", 1)[1].strip().strip("\"'")
    raise SystemExit("nbgrader_config.py names no course id")


def student_limits_of(args: argparse.Namespace) -> dict[str, float]:
    """The limits given on the command line, by deploy/student_limits.py's names; the rest keep its defaults."""
    limits: dict[str, float] = {}
    if args.student_memory_gb is not None:
        limits["memory_bytes"] = int(args.student_memory_gb * 2**30)
    if args.student_cpus is not None:
        limits["cpu_cores"] = args.student_cpus
    return limits


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    top.add_argument("roster", type=Path, help="CSV with the columns username and role (instructor, ta, student)")
    top.add_argument("--site", type=Path, help="the course's shared folder (default: /srv/<course id>)")
    top.add_argument("--homes", type=Path, default=Path("/home"), help="where new accounts get their home folder")
    top.add_argument("--team-group", help="group of the instructor and TAs (default: <course id>-team)")
    top.add_argument("--student-group", help="group of the students (default: <course id>-students)")
    top.add_argument("--precheck-account", help="the pre-check service's account (default: <course id>-precheck)")
    top.add_argument("--no-precheck", action="store_true", help="set up no pre-check service")
    top.add_argument(
        "--student-memory-gb",
        type=float,
        help="memory of one student's server and its kernels together (default: 2)",
    )
    top.add_argument("--student-cpus", type=float, help="the most CPU cores one student may use at once (default: 1)")
    top.add_argument(
        "--gradebook-database",
        metavar="NAME",
        help="a PostgreSQL database the course team shares as its gradebook (made if missing; "
        "recommended when several people grade); default: SQLite in the course folder",
    )
    top.add_argument(
        "--postgres-host",
        metavar="SOCKETDIR",
        default="/var/run/postgresql",
        help="the PostgreSQL server's socket folder (members sign in by peer authentication)",
    )
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if os.geteuid() != 0:
        raise SystemExit("run as root: this creates accounts and sets owners")
    missing = missing_course_jupyter()
    if missing:
        raise SystemExit(f"this environment lacks {', '.join(missing)}: run `make environment` in the kit first")
    course_id = course_id_of()
    plan = CoursePlan(
        course_id=course_id,
        members=read_roster(args.roster),
        site=(args.site or Path("/srv") / course_id).resolve(),
        homes=args.homes.resolve(),
        team_group=args.team_group or f"{course_id}-team",
        student_group=args.student_group or f"{course_id}-students",
        precheck_account=None if args.no_precheck else (args.precheck_account or f"{course_id}-precheck"),
        gradebook_database=args.gradebook_database,
        postgres_host=args.postgres_host,
        student_limits=student_limits_of(args),
    )
    create_accounts(plan)
    create_exchange(plan)
    create_course_folder(plan)
    write_jupyter_settings(plan)
    stranded = unreachable_python(plan)
    if not stranded:
        prepare_graders(plan)
    if plan.gradebook_database:
        share_gradebook(plan)
    if plan.precheck_account and not stranded:
        create_precheck(plan)
    settings = write_hub_settings(plan)
    print(f"course {course_id}: {len(plan.members)} accounts, course folder {plan.course_dir}")
    print(f"start the hub with: KIT_HUB_SETTINGS={settings} jupyterhub -f {KIT / 'deploy' / 'jupyterhub_config.py'}")
    if stranded:
        print(
            f"warning: {', '.join(stranded)} cannot run {sys.executable}; install the environment where every "
            "account can read it (and each folder above it is searchable), or their servers will not start",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
