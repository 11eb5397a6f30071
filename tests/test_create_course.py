"""deploy/create_course.py without root: the roster is checked and the plan names every folder and group.

What it does to a machine (accounts, modes, owners) is walked by the hub journey.
"""

import importlib.util
import os
import stat
import sys
from pathlib import Path

import pytest

from gradekit.core.course import REPO_ROOT, load_course

pytestmark = pytest.mark.unit


def _load_script():
    """The script is run by path on a hub machine, so it is loaded by path here too."""
    spec = importlib.util.spec_from_file_location("create_course_under_test", REPO_ROOT / "deploy" / "create_course.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


create_course = _load_script()


def _roster(tmp_path, text: str) -> Path:
    path = tmp_path / "roster.csv"
    path.write_text(text)
    return path


def test_a_roster_lists_members_with_their_roles(tmp_path):
    path = _roster(tmp_path, "username,role\nlovelace,instructor\nhopper,TA\ns1234,student\n")
    members = create_course.read_roster(path)
    assert [(m.username, m.role) for m in members] == [
        ("lovelace", "instructor"),
        ("hopper", "ta"),
        ("s1234", "student"),
    ]


@pytest.mark.parametrize(
    "rows, complaint",
    [
        ("lovelace,instructor\nhopper,teacher\n", "role 'teacher'"),
        ("lovelace,instructor\n../etc,student\n", "not a valid account name"),
        ("lovelace,instructor\nhopper,student\nhopper,student\n", "listed twice"),
        ("hopper,student\n", "exactly one instructor"),
        ("lovelace,instructor\nbabbage,instructor\n", "exactly one instructor"),
    ],
)
def test_a_roster_that_cannot_describe_a_course_is_refused(tmp_path, rows, complaint):
    with pytest.raises(create_course.RosterError, match=complaint):
        create_course.read_roster(_roster(tmp_path, "username,role\n" + rows))


def test_the_plan_puts_the_course_folder_in_the_site_for_the_team_and_splits_the_groups(tmp_path):
    members = create_course.read_roster(
        _roster(tmp_path, "username,role\nhopper,ta\nlovelace,instructor\ns1,student\n")
    )
    plan = create_course.CoursePlan("c1", members, tmp_path / "site", tmp_path / "home", "c1-team", "c1-students")
    assert plan.instructor == "lovelace"
    assert plan.team == ("hopper", "lovelace")
    assert plan.course_dir == tmp_path / "site" / "course"
    assert plan.course_link == "~/c1"
    assert plan.gradebook_url is None
    assert plan.exchange == tmp_path / "site" / "exchange"
    assert {m.username: plan.group_of(m) for m in members} == {
        "hopper": "c1-team",
        "lovelace": "c1-team",
        "s1": "c1-students",
    }


def test_the_course_id_is_the_one_nbgrader_reads():
    assert create_course.course_id_of() == load_course().course_id


# JupyterLab's plugin that asks "get notified about official Jupyter news?" and fetches news from the internet.
NEWS_PLUGIN = "@jupyterlab/apputils-extension:announcements"


def test_nobody_is_asked_about_jupyter_news():
    import json

    for role in ("students", "course-team"):
        page = REPO_ROOT / "deploy" / "jupyter" / role / "labconfig" / "page_config.json"
        assert json.loads(page.read_text())["disabledExtensions"][NEWS_PLUGIN] is True, role


def test_students_lose_the_course_teams_tools_in_lab_and_on_the_server():
    import json

    students = REPO_ROOT / "deploy" / "jupyter" / "students"
    disabled = json.loads((students / "labconfig" / "page_config.json").read_text())["disabledExtensions"]
    assert {name for name, off in disabled.items() if off} == {
        "@jupyter/nbgrader:formgrader",
        "@jupyter/nbgrader:create-assignment",
        "@jupyter/nbgrader:course-list",
        NEWS_PLUGIN,
    }
    server = json.loads((students / "jupyter_server_config.json").read_text())["ServerApp"]["jpserver_extensions"]
    assert server == {"nbgrader.server_extensions.formgrader": False, "nbgrader.server_extensions.course_list": False}


def _written_settings(tmp_path, precheck_account):
    members = (create_course.Member("ines", "instructor"), create_course.Member("sam", "student"))
    plan = create_course.CoursePlan(
        "c1", members, tmp_path / "site", tmp_path / "home", "c1-team", "c1-students", precheck_account
    )
    create_course.write_jupyter_settings(plan)
    return plan


def _disabled_plugins(plan, audience: str) -> set[str]:
    import json

    page = plan.config_dir(audience) / "labconfig" / "page_config.json"
    return {name for name, off in json.loads(page.read_text())["disabledExtensions"].items() if off}


def test_without_a_precheck_service_the_button_is_off_and_validates_wording_stays(tmp_path):
    plan = _written_settings(tmp_path, None)
    for audience in ("students", "course-team"):
        assert create_course.PRECHECK_BUTTON in _disabled_plugins(plan, audience), audience
        assert "kit-precheck:validate-wording" not in _disabled_plugins(plan, audience), audience


def test_with_a_precheck_service_the_button_is_on(tmp_path):
    plan = _written_settings(tmp_path, "c1-precheck")
    for audience in ("students", "course-team"):
        assert create_course.PRECHECK_BUTTON not in _disabled_plugins(plan, audience), audience


def test_this_environment_holds_the_courses_jupyter_pieces():
    # `make test` installs them (make environment); a hub machine is refused without them.
    assert create_course.missing_course_jupyter() == []
    assert (REPO_ROOT / "deploy" / "precheck-lab" / "lib" / "index.js").read_text().count(
        create_course.PRECHECK_BUTTON
    ) == 1


def test_a_shared_gradebook_is_reached_by_each_member_through_the_servers_socket(tmp_path):
    members = (create_course.Member("ines", "instructor"),)
    plan = create_course.CoursePlan(
        "c1", members, tmp_path / "site", tmp_path / "home", "c1-team", "c1-students", None, "c1_grades", "/run/pg"
    )
    # No user name in the address: each member's server signs in as its own account.
    assert plan.gradebook_url == "postgresql:///c1_grades?host=/run/pg"


def test_the_teams_servers_open_the_course_by_their_own_link_and_share_what_nbgrader_writes(tmp_path):
    plan = _written_settings(tmp_path, None)
    config = (plan.config_dir("course-team") / "nbgrader_config.py").read_text()
    assert "c.CourseDirectory.root = os.path.expanduser('~/c1')" in config
    assert "c.CourseDirectory.groupshared = True" in config
    assert "groupshared" not in (plan.config_dir("everyone") / "nbgrader_config.py").read_text()


def test_a_link_where_a_course_folder_goes_is_refused_and_its_target_keeps_its_mode(tmp_path):
    target = tmp_path / "system-folder"
    target.mkdir(mode=0o755)
    (tmp_path / "inbound").symlink_to(target)
    with pytest.raises(create_course.UntrustedFolder, match="is a link"):
        create_course.own_folder(tmp_path / "inbound", os.getuid(), os.getgid(), 0o3773, {os.getuid()})
    assert stat.S_IMODE(target.stat().st_mode) == 0o755


def test_a_folder_someone_untrusted_made_is_refused(tmp_path):
    planted = tmp_path / "feedback"
    planted.mkdir(mode=0o700)
    with pytest.raises(create_course.UntrustedFolder, match="belongs to uid"):
        create_course.own_folder(planted, os.getuid(), os.getgid(), 0o2771, {os.getuid() + 1})
    assert stat.S_IMODE(planted.stat().st_mode) == 0o700


def test_a_folder_is_made_with_its_owner_and_mode(tmp_path):
    folder = tmp_path / "outbound"
    create_course.own_folder(folder, os.getuid(), os.getgid(), 0o2775, {os.getuid()})
    assert stat.S_IMODE(folder.stat().st_mode) == 0o2775


def test_an_account_kept_from_before_without_its_home_is_named_with_what_to_do(tmp_path, monkeypatch):
    """Re-run for a roster whose account exists but whose home has gone: a plain refusal, not a traceback."""
    members = (create_course.Member("lovelace", "instructor"), create_course.Member("s1", "student"))
    plan = create_course.CoursePlan("c1", members, tmp_path / "site", tmp_path / "home", "c1-team", "c1-students")
    ran = []
    monkeypatch.setattr(create_course, "_run", lambda *command: ran.append(command))
    monkeypatch.setattr(create_course, "_exists", lambda lookup, name: True)
    gone = tmp_path / "old-homes" / "lovelace"

    class Account:
        pw_dir = str(gone)

    monkeypatch.setattr(create_course.pwd, "getpwnam", lambda name: Account)
    with pytest.raises(SystemExit, match=f"lovelace has an account but its home {gone} is missing: make it"):
        create_course.create_accounts(plan)
    assert not any(command[0] == "useradd" for command in ran)  # the account is the course lead's to mend
