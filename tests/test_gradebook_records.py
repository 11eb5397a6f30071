"""A submission's gradebook entries as plain values, and the names formgrader shows for its student."""

import pytest

from gradekit.core.course import load_course
from gradekit.grading.gradebook import open_gradebook

pytestmark = pytest.mark.unit


def test_formgrader_gets_a_name_for_each_student_and_keeps_one_someone_set(tmp_path, monkeypatch):
    from gradekit.grading import gradebook_records
    from gradekit.grading.gradebook_records import SubmissionRecord, account_names, write_record

    accounts = {"ada": "Ada King Lovelace,,,", "plain": ""}

    def getpwnam(name):
        if name not in accounts:
            raise KeyError(name)
        return type("Account", (), {"pw_gecos": accounts[name]})()

    monkeypatch.setattr(gradebook_records.pwd, "getpwnam", getpwnam)
    assert account_names("ada") == ("Ada King", "Lovelace")
    assert account_names("plain") == ("", "plain") and account_names("no-account") == ("", "no-account")

    course = load_course().at(tmp_path)
    with open_gradebook(course) as gradebook:
        gradebook.add_assignment(course.assignment_id)
        gradebook.add_student("named", first_name="Grace", last_name="Hopper")
    for student in ("ada", "no-account", "named"):
        write_record(course, SubmissionRecord(student, None, ()))
    with open_gradebook(course) as gradebook:
        names = {s.id: (s.first_name, s.last_name) for s in gradebook.students}
    assert names == {"ada": ("Ada King", "Lovelace"), "no-account": ("", "no-account"), "named": ("Grace", "Hopper")}
