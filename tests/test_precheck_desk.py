"""The pre-check's desk: who may ask, when, how often, whose results they read, and what the audit log keeps."""

import asyncio
import dataclasses
import datetime
import json

import pytest
from precheck_fixtures import HIDDEN_LINE, NOTEBOOK, Clock, StandInGrader, desk, graded, request, run_apart

from gradekit.core.due_words import when
from gradekit.core.extensions import Extension
from gradekit.core.status import Status
from gradekit.precheck.desk import Check
from gradekit.precheck.limits import REFUNDS_PER_DAY
from gradekit.precheck.refusals import Reason, Refusal

pytestmark = pytest.mark.unit


def run(coroutine):
    return run_apart(coroutine)


async def _checked(front, student, body) -> Check | Refusal:
    taken = front.submit(student, body)
    if isinstance(taken, Check):
        await front.wait(taken, 5)
    return taken


def test_a_request_that_names_another_student_is_refused_as_forged(tmp_path):
    clock = Clock()

    async def scenario():
        front = desk(tmp_path, StandInGrader(graded(2)), clock)
        return front.submit("ana", request(clock, "n" * 16, student="ben"))

    refusal = run(scenario())
    assert isinstance(refusal, Refusal) and refusal.reason is Reason.FORGED
    assert "'ben'" in refusal.message and "'ana'" in refusal.message


def test_a_replayed_request_is_refused_and_not_graded_again(tmp_path):
    clock = Clock()
    grader = StandInGrader(graded(2))

    async def scenario():
        front = desk(tmp_path, grader, clock, cooldown_seconds=0)
        body = request(clock, "n" * 16)
        first = await _checked(front, "ana", dict(body))
        again = front.submit("ana", dict(body))
        return first, again

    first, again = run(scenario())
    assert isinstance(first, Check) and first.reply["status"] == "graded"
    assert isinstance(again, Refusal) and again.reason is Reason.REPLAYED
    assert grader.order == [("ana", NOTEBOOK)]


@pytest.mark.parametrize("name", ["999_missing.ipynb", "../010_history.ipynb", ".hidden.ipynb", 7])
def test_a_notebook_outside_the_assignment_is_refused_with_the_names_that_are(tmp_path, name):
    clock = Clock()

    async def scenario():
        return desk(tmp_path, StandInGrader(graded(2)), clock).submit("ana", request(clock, "n" * 16, notebook=name))

    refusal = run(scenario())
    assert isinstance(refusal, Refusal) and refusal.reason is Reason.UNKNOWN_NOTEBOOK
    assert f"{NOTEBOOK}.ipynb" in refusal.message


def test_the_pre_check_can_be_switched_off_for_the_course_or_the_assignment_and_closes_at_the_due_date(tmp_path):
    clock = Clock()
    due = datetime.datetime.fromtimestamp(clock.now + 60, datetime.timezone.utc)

    async def outcome(**settings):
        return desk(tmp_path, StandInGrader(graded(2)), clock, **settings).submit("ana", request(clock, "n" * 16))

    off = run(outcome(enabled=False))
    closed = run(outcome(closed_assignments=("autograd",)))
    assert isinstance(off, Refusal) and off.reason is Reason.CLOSED and "switched off" in off.message
    assert isinstance(closed, Refusal) and closed.reason is Reason.CLOSED and "autograd" in closed.message
    assert isinstance(run(outcome(due_dates=(("autograd", due),))), Check)
    clock.now += 60
    late = run(outcome(due_dates=(("autograd", due),)))
    assert isinstance(late, Refusal) and late.reason is Reason.CLOSED and "due date" in late.message


def test_one_check_in_flight_per_student_while_others_still_queue(tmp_path):
    clock = Clock()

    async def scenario():
        gate = asyncio.Event()  # the stand-in grader holds ana's check until the test lets it go
        grader = StandInGrader(graded(2), release=gate)
        front = desk(tmp_path, grader, clock)
        first = front.submit("ana", request(clock, "a" * 16))
        busy = front.submit("ana", request(clock, "b" * 16))
        other = front.submit("ben", request(clock, "c" * 16))
        await asyncio.sleep(0)
        position = front.position(other)
        gate.set()
        await front.wait(first, 5)
        await front.wait(other, 5)
        return first, busy, other, position, grader.order

    first, busy, other, position, order = run(scenario())
    assert isinstance(busy, Refusal) and busy.reason is Reason.BUSY and "still" in busy.message
    assert isinstance(other, Check) and position == 0  # next in line while ana's runs
    assert order == [("ana", NOTEBOOK), ("ben", NOTEBOOK)]
    assert first.state == other.state == "done"


def test_a_student_reads_only_their_own_results_and_another_id_looks_unknown(tmp_path):
    clock = Clock()

    async def scenario():
        front = desk(
            tmp_path, StandInGrader(graded(0, "the answer is float32 [misconception: numpy-default-dtype]")), clock
        )
        mine = await _checked(front, "ana", request(clock, "a" * 16))
        return front, mine

    front, mine = run(scenario())
    assert front.result("ana", mine.id) is mine
    theirs = front.result("ben", mine.id)
    unknown = front.result("ben", "no-such-check")
    assert isinstance(theirs, Refusal) and theirs.reason is Reason.NOT_FOUND
    assert theirs.message.replace(mine.id, "ID") == unknown.message.replace("no-such-check", "ID")


def test_the_cooldown_and_quota_apply_and_a_grader_failure_is_given_back(tmp_path):
    clock = Clock()
    failing = StandInGrader(dataclasses.replace(graded(0), status=Status.GRADER_ERROR, record=None))

    async def scenario():
        front = desk(tmp_path, failing, clock, daily_quota=1)
        lost = await _checked(front, "ana", request(clock, "a" * 16))
        retried = await _checked(front, "ana", request(clock, "b" * 16))
        front.grade = StandInGrader(graded(2))
        clock.now += 61
        counted = await _checked(front, "ana", request(clock, "c" * 16))
        clock.now += 61
        over = front.submit("ana", request(clock, "d" * 16))
        return lost, retried, counted, over

    lost, retried, counted, over = run(scenario())
    assert lost.reply["status"] == "grader error" and "not counted" in lost.reply["message"]
    assert isinstance(retried, Check)  # no cooldown, no quota spent on the grader's failure
    assert counted.reply["status"] == "graded"
    assert isinstance(over, Refusal) and over.reason is Reason.QUOTA


def test_a_cooldown_refusal_carries_the_students_own_last_answer_for_that_notebook_only(tmp_path):
    clock = Clock()
    diagnosis = "W1 was scaled after requires_grad [misconception: requires-grad-then-scale]"

    async def scenario():
        front = desk(tmp_path, StandInGrader(graded(0, diagnosis)), clock)
        first = await _checked(front, "ana", request(clock, "a" * 16))
        again = front.submit("ana", request(clock, "b" * 16))
        theirs = front.submit("ben", request(clock, "c" * 16))
        return first, again, theirs

    first, again, theirs = run(scenario())
    assert isinstance(again, Refusal) and again.reason is Reason.COOLDOWN
    body = again.as_json()
    assert body["last"] == {"taken_at": first.taken_at, "result": first.reply}
    assert "W1 was scaled after requires_grad" in json.dumps(body["last"])  # what failed stays readable
    assert isinstance(theirs, Check)  # ben's first check: nothing of ana's reaches him


def test_the_audit_log_records_who_checked_what_and_when_but_no_answer_or_diagnosis(tmp_path):
    clock = Clock()
    diagnosis = "W1 was scaled after requires_grad [misconception: requires-grad-then-scale]"

    async def scenario():
        front = desk(tmp_path, StandInGrader(graded(0, diagnosis)), clock)
        await _checked(front, "ana", request(clock, "a" * 16))
        front.submit("ana", request(clock, "b" * 16))
        front.submit("ben", request(clock, "c" * 16, student="ana"))
        return front.audit

    audit = run(scenario())
    events = [(line["student"], line["notebook"], line["event"], line.get("reason")) for line in audit.lines()]
    assert events == [
        ("ana", NOTEBOOK, "taken", None),
        ("ana", NOTEBOOK, "graded", None),
        ("ana", NOTEBOOK, "refused", "cooldown"),
        ("ben", NOTEBOOK, "refused", "forged"),
    ]
    graded_line = audit.lines()[1]
    assert graded_line["score"] == 0 and graded_line["max_score"] == 2
    assert all("time" in line for line in audit.lines())
    text = audit.path.read_text()
    assert "misconception" not in text and "cells" not in text
    assert (audit.path.stat().st_mode & 0o777) == 0o600


class TickingClock(Clock):
    """A clock that moves on at every reading, as a real one does between two lines of code."""

    def __call__(self) -> float:
        self.now += 0.001
        return self.now


def test_a_grader_failure_gives_back_the_cooldown_it_started_on_a_real_clock(tmp_path):
    clock = TickingClock()
    failing = StandInGrader(dataclasses.replace(graded(0), status=Status.GRADER_ERROR, record=None))

    async def scenario():
        front = desk(tmp_path, failing, clock)
        await _checked(front, "ana", request(clock, "a" * 16))
        return front.submit("ana", request(clock, "b" * 16))

    assert isinstance(run(scenario()), Check)


def test_a_refused_name_is_neither_written_to_the_audit_log_nor_said_back_whole(tmp_path):
    clock = Clock()
    flood = "x" * 100_000

    async def scenario():
        front = desk(tmp_path, StandInGrader(graded(2)), clock)
        return front, front.submit("ana", request(clock, "a" * 16, notebook=flood))

    front, refusal = run(scenario())
    assert isinstance(refusal, Refusal) and refusal.reason is Reason.UNKNOWN_NOTEBOOK
    assert len(refusal.message) < 400
    assert front.audit.path.stat().st_size < 400 and flood not in front.audit.path.read_text()


def test_an_audit_log_that_cannot_be_written_still_frees_the_student_and_the_worker(tmp_path, monkeypatch):
    clock = Clock()

    async def scenario():
        front = desk(tmp_path, StandInGrader(graded(2)), clock, cooldown_seconds=0)
        record = front.audit.record

        def full_disk(student, notebook, event, **fields):
            if event == "graded":
                raise OSError(28, "No space left on device")
            record(student, notebook, event, **fields)

        monkeypatch.setattr(front.audit, "record", full_disk)
        first = await _checked(front, "ana", request(clock, "a" * 16))
        second = await _checked(front, "ana", request(clock, "b" * 16))
        return front, first, second

    front, first, second = run(scenario())
    assert first.reply["status"] == "graded" and isinstance(second, Check) and second.reply["status"] == "graded"
    assert front.running == 0 and front.in_flight == {}


class WatchedNotebook(dict):
    """An uploaded notebook that notes every look at it."""

    looks: list = []

    def get(self, key, default=None):
        WatchedNotebook.looks.append(key)
        return super().get(key, default)

    def __getitem__(self, key):
        WatchedNotebook.looks.append(key)
        return super().__getitem__(key)


def test_a_request_refused_for_the_cooldown_or_a_check_in_flight_never_has_its_notebook_looked_at(tmp_path):
    clock = Clock()
    WatchedNotebook.looks = []

    async def scenario():
        gate = asyncio.Event()
        front = desk(tmp_path, StandInGrader(graded(2), release=gate), clock)
        running = front.submit("ana", request(clock, "a" * 16))
        WatchedNotebook.looks = []
        watched = WatchedNotebook(cells=[])
        busy = front.submit("ana", request(clock, "b" * 16) | {"content": watched})
        gate.set()
        await front.wait(running, 5)
        cooling = front.submit("ana", request(clock, "c" * 16) | {"content": watched})
        return busy, cooling

    busy, cooling = run(scenario())
    assert isinstance(busy, Refusal) and busy.reason is Reason.BUSY
    assert isinstance(cooling, Refusal) and cooling.reason is Reason.COOLDOWN
    assert WatchedNotebook.looks == []


def test_what_refuses_a_request_whatever_it_holds_is_told_before_the_body_is_read(tmp_path):
    clock = Clock()

    async def scenario():
        gate = asyncio.Event()
        front = desk(tmp_path, StandInGrader(graded(2), release=gate), clock)
        before = front.refusal_before_reading("ana")
        running = front.submit("ana", request(clock, "a" * 16))
        during = front.refusal_before_reading("ana")
        other = front.refusal_before_reading("ben")
        gate.set()
        await front.wait(running, 5)
        return before, during, other

    before, during, other = run(scenario())
    assert before is None and other is None
    assert isinstance(during, Refusal) and during.reason is Reason.BUSY
    closed = desk(tmp_path, StandInGrader(graded(2)), clock, enabled=False).refusal_before_reading("ana")
    assert isinstance(closed, Refusal) and closed.reason is Reason.CLOSED


def _leaking_reply(*args):
    return {"status": "graded", "message": "", "score": 0, "max_score": 2, "cells": [{"diagnosis": HIDDEN_LINE}]}


def test_a_reply_withheld_for_repeating_a_hidden_line_counts_as_a_check(tmp_path, monkeypatch):
    clock = Clock()
    monkeypatch.setattr("gradekit.precheck.desk.student_reply", _leaking_reply)

    async def scenario():
        front = desk(tmp_path, StandInGrader(graded(0)), clock)
        withheld = await _checked(front, "ana", request(clock, "a" * 16))
        return withheld, front.submit("ana", request(clock, "b" * 16))

    withheld, again = run(scenario())
    assert withheld.reply["status"] == "not shown" and "counted" in withheld.reply["message"]
    assert HIDDEN_LINE not in str(withheld.reply)
    assert isinstance(again, Refusal) and again.reason is Reason.COOLDOWN


def test_a_reply_that_cannot_be_built_from_the_notebooks_outputs_counts_as_a_check(tmp_path):
    clock = Clock()
    broken = dataclasses.replace(graded(0), files=((f"{NOTEBOOK}.ipynb", b'{"cells": [oops'),))

    async def scenario():
        front = desk(tmp_path, StandInGrader(broken), clock)
        unbuilt = await _checked(front, "ana", request(clock, "a" * 16))
        return unbuilt, front.submit("ana", request(clock, "b" * 16))

    unbuilt, again = run(scenario())
    assert unbuilt.reply["status"] == "not shown" and "counted" in unbuilt.reply["message"]
    assert isinstance(again, Refusal) and again.reason is Reason.COOLDOWN


def test_grader_failures_are_given_back_a_few_times_a_day_and_then_count(tmp_path):
    clock = Clock()
    failing = StandInGrader(dataclasses.replace(graded(0), status=Status.GRADER_ERROR, record=None))

    async def scenario():
        front = desk(tmp_path, failing, clock, daily_quota=10)
        replies = []
        for n in range(REFUNDS_PER_DAY + 1):
            taken = await _checked(front, "ana", request(clock, f"{n:016d}"))
            assert isinstance(taken, Check), taken  # the ones before were given back: no cooldown
            replies.append(taken.reply)
        return replies, front.submit("ana", request(clock, "z" * 16))

    replies, after = run(scenario())
    assert all("not counted" in reply["message"] for reply in replies[:-1])
    assert replies[-1]["status"] == "grader error" and "counted as a pre-check" in replies[-1]["message"]
    assert isinstance(after, Refusal) and after.reason is Reason.COOLDOWN


def test_a_restart_keeps_the_cooldown_the_used_nonce_and_each_students_results(tmp_path):
    clock = Clock()
    state = tmp_path / "state"
    diagnosis = "the answer is float32 [misconception: numpy-default-dtype]"

    async def before_the_restart():
        front = desk(tmp_path, StandInGrader(graded(0, diagnosis)), clock, state_dir=state)
        body = request(clock, "a" * 16)
        return body, await _checked(front, "ana", dict(body))

    body, first = run(before_the_restart())
    clock.now += 5

    async def after_the_restart():
        front = desk(tmp_path, StandInGrader(graded(2)), clock, state_dir=state)
        return front, front.submit("ana", request(clock, "b" * 16)), front.submit("ana", dict(body))

    front, cooling, replayed = run(after_the_restart())
    assert isinstance(cooling, Refusal) and cooling.reason is Reason.COOLDOWN
    assert isinstance(replayed, Refusal) and replayed.reason is Reason.REPLAYED
    found = front.result("ana", first.id)
    assert isinstance(found, Check) and found.state == "done" and found.reply == first.reply
    assert found.reply["cells"][0]["misconceptions"] == ["numpy-default-dtype"]
    theirs = front.result("ben", first.id)
    assert isinstance(theirs, Refusal) and theirs.reason is Reason.NOT_FOUND
    assert (state / "kept").stat().st_mode & 0o777 == 0o700
    assert "ana" not in " ".join(path.name for path in (state / "kept").iterdir())


def test_a_check_cut_short_by_a_restart_is_answered_as_not_run_and_not_counted(tmp_path):
    clock = Clock()
    state = tmp_path / "state"

    async def stopped_while_grading():
        front = desk(tmp_path, StandInGrader(graded(2), release=asyncio.Event()), clock, state_dir=state)
        taken = front.submit("ana", request(clock, "a" * 16))
        await asyncio.sleep(0)
        return taken

    taken = run(stopped_while_grading())

    async def after_the_restart():
        front = desk(tmp_path, StandInGrader(graded(2)), clock, state_dir=state)
        return front.result("ana", taken.id), await _checked(front, "ana", request(clock, "b" * 16))

    found, again = run(after_the_restart())
    assert isinstance(found, Check) and found.state == "done"
    assert found.reply["status"] == "not run" and "not counted" in found.reply["message"]
    assert isinstance(again, Check) and again.reply["status"] == "graded"


def test_a_damaged_state_file_is_reported_and_the_desk_starts_with_what_it_could_read(tmp_path, caplog):
    clock = Clock()
    state = tmp_path / "state"

    async def one_check():
        front = desk(tmp_path, StandInGrader(graded(2)), clock, state_dir=state)
        return await _checked(front, "ana", request(clock, "a" * 16))

    first = run(one_check())
    limits = state / "kept" / "limits.json"
    limits.write_bytes(limits.read_bytes()[:20])  # as a disk could leave it
    for path in (state / "kept").glob("results-*"):
        path.write_bytes(b"\x00garbage")
    caplog.set_level("ERROR")

    async def after_the_restart():
        front = desk(tmp_path, StandInGrader(graded(2)), clock, state_dir=state)
        return front, front.submit("ana", request(clock, "b" * 16))

    front, cooling = run(after_the_restart())
    assert isinstance(cooling, Refusal) and cooling.reason is Reason.COOLDOWN  # the previous version held it
    assert isinstance(front.result("ana", first.id), Refusal)  # nothing of the results could be read
    assert "cannot be read" in caplog.text


def test_the_nonce_of_a_refused_request_is_written_once_for_a_flood_and_kept_across_a_restart(tmp_path, monkeypatch):
    clock = Clock()
    state = tmp_path / "state"

    async def flood():
        front = desk(tmp_path, StandInGrader(graded(2)), clock, state_dir=state)
        await _checked(front, "ana", request(clock, "a" * 16))
        writes = []
        write = front.kept.write
        monkeypatch.setattr(front.kept, "write", lambda name, data: (writes.append(name), write(name, data)))
        bodies = [request(clock, f"{n:016d}") for n in range(20)]
        refused = [front.submit("ana", dict(body)) for body in bodies]
        await asyncio.sleep(1.2)  # the one write the flood makes
        return bodies, refused, writes

    bodies, refused, writes = run(flood())
    assert {refusal.reason for refusal in refused} == {Reason.COOLDOWN}
    assert writes == ["limits"]
    clock.now += 61  # the cooldown is over, the request window is not

    async def after_the_restart():
        return desk(tmp_path, StandInGrader(graded(2)), clock, state_dir=state).submit("ana", dict(bodies[-1]))

    replayed = run(after_the_restart())
    assert isinstance(replayed, Refusal) and replayed.reason is Reason.REPLAYED


def test_an_extended_student_may_pre_check_after_the_due_date_until_their_extension_and_every_reply_says_when(
    tmp_path,
):
    clock = Clock()
    due = datetime.datetime.fromtimestamp(clock.now + 60, datetime.timezone.utc)
    until = due + datetime.timedelta(days=2)
    extended = {"ben": Extension("ben", until, "ill for a week", due)}

    async def outcome(student):
        front = desk(tmp_path, StandInGrader(graded(2)), clock, extensions=extended, due_dates=(("autograd", due),))
        return await _checked(
            front, student, request(clock, f"{student}{clock.now:.0f}".ljust(16, "n"), student=student)
        )

    before = run(outcome("ana"))
    assert isinstance(before, Check) and before.reply["due"] == f"due {when(due)}, in 1 min"
    clock.now += 61
    ana, ben = run(outcome("ana")), run(outcome("ben"))
    assert isinstance(ana, Refusal) and ana.reason is Reason.CLOSED and "its due date" in ana.message
    assert isinstance(ben, Check) and ben.reply["due"] == f"due {when(until)}, in 1 day"
    clock.now += 2 * 86400
    late = run(outcome("ben"))
    assert isinstance(late, Refusal) and late.message == (
        f"the pre-check of autograd closed at your extension, {until.isoformat()}"
    )


def test_the_standing_names_the_students_own_deadline(tmp_path):
    clock = Clock()
    due = datetime.datetime(2027, 1, 15, 23, 0, tzinfo=datetime.timezone.utc)
    until = datetime.datetime(2027, 1, 18, 23, 0, tzinfo=datetime.timezone.utc)
    clock.now = (due - datetime.timedelta(days=2, hours=1)).timestamp()
    extended = {"ben": Extension("ben", until, "ill", due)}

    async def standing(student):
        return desk(
            tmp_path, StandInGrader(graded(2)), clock, extensions=extended, due_dates=(("autograd", due),)
        ).standing(student)

    ana, ben = run(standing("ana")), run(standing("ben"))
    assert (ana["due"], ana["due_line"]) == (due.isoformat(), "due Friday 15 January 2027, 23:00 UTC, in 2 days")
    assert (ben["due"], ben["due_line"]) == (until.isoformat(), "due Monday 18 January 2027, 23:00 UTC, in 5 days")
    assert ana["open"] and ben["open"]
