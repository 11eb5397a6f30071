"""The kernel's answer server: what it replies to a request, whatever the student's code does, and what `install` sets up.

The wire itself (what crosses and how) is tested in test_crossing*.py, with this server answering.
"""

import builtins
import warnings

import pytest
import torch
from ipykernel.ipkernel import IPythonKernel

from gradekit.grading.sealed_checks import RemoteAnswer
from gradekit.sandbox import crossing
from gradekit.sandbox.answer_server import REQUEST_MESSAGE, install, respond
from gradekit.sandbox.crossing import Mirror

pytestmark = pytest.mark.unit


def reply_to(namespace, name, *args):
    """The kernel's decoded reply to a call of its `name` with `args`, both mirrors in this process."""
    kernel = Mirror("kernel", resolve_answer=namespace.__getitem__)
    grader = Mirror("grader", call=None)
    request = crossing.call_message(grader, RemoteAnswer(name, grader), args, {})
    return crossing.checked_reply(grader.incoming(respond(kernel, request, vars(crossing))))


def test_what_the_call_returns_comes_back_as_returned():
    assert reply_to({"double": lambda x: 2 * x}, "double", 21) == ("returned", 42)


def test_a_request_the_kernel_cannot_read_is_a_failed_call_not_the_students_error():
    grader = Mirror("grader", call=None)
    reply = crossing.checked_reply(grader.incoming(respond(Mirror("kernel"), b"not a message", vars(crossing))))
    assert reply[0] == "failed" and ":" in reply[1]


def test_anything_the_student_raises_comes_back_by_name_keyboard_interrupt_included():
    def stops():
        raise KeyboardInterrupt("stopped by the student")

    assert reply_to({"stops": stops}, "stops") == (
        "raised",
        "KeyboardInterrupt",
        "KeyboardInterrupt",
        "stopped by the student",
    )


def test_an_error_message_that_cannot_be_read_crosses_empty_and_a_long_one_cut():
    class Unreadable(ValueError):
        def __str__(self):
            raise RuntimeError("no words")

    def unreadable():
        raise Unreadable()

    def long():
        raise ValueError("x" * (3 * crossing.TEXT_LIMIT))

    assert reply_to({"f": unreadable}, "f") == ("raised", "Unreadable", "ValueError", "")
    assert reply_to({"f": long}, "f") == ("raised", "ValueError", "ValueError", "x" * crossing.TEXT_LIMIT)


def test_a_warning_inside_the_students_call_never_becomes_an_error():
    def warns():
        warnings.warn("a note of the student's", UserWarning, stacklevel=1)
        return 7

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert reply_to({"warns": warns}, "warns") == ("returned", 7)


def test_install_answers_a_request_from_the_mailbox_into_the_reply_and_teaches_the_kernel_its_message(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(IPythonKernel, "msg_types", list(IPythonKernel.msg_types))
    monkeypatch.setattr(IPythonKernel, "_publish_status", IPythonKernel._publish_status)  # install wraps it
    monkeypatch.delattr(builtins, "__kit_answer__", raising=False)
    monkeypatch.setattr(IPythonKernel, "kit_answer_request", None, raising=False)
    request, reply = tmp_path / "request", tmp_path / "reply"
    reply.touch()
    install(str(request), str(reply))
    assert REQUEST_MESSAGE in IPythonKernel.msg_types and callable(IPythonKernel.kit_answer_request)

    grader = Mirror("grader", call=None)
    request.write_bytes(crossing.call_message(grader, torch.add, (torch.ones(2), torch.ones(2)), {}))
    builtins.__kit_answer__()
    kind, value = crossing.checked_reply(grader.incoming(reply.read_bytes()))
    assert kind == "returned" and value.tolist() == [2.0, 2.0]


def test_the_kernel_says_busy_and_idle_around_every_message_but_the_kits_own(tmp_path, monkeypatch):
    published = []
    monkeypatch.setattr(IPythonKernel, "msg_types", list(IPythonKernel.msg_types))
    monkeypatch.setattr(IPythonKernel, "kit_answer_request", None, raising=False)
    monkeypatch.setattr(IPythonKernel, "_publish_status", lambda _, status, *__: published.append(status))
    monkeypatch.delattr(builtins, "__kit_answer__", raising=False)
    (tmp_path / "reply").touch()
    install(str(tmp_path / "request"), str(tmp_path / "reply"))
    for kind in ("execute_request", REQUEST_MESSAGE, "complete_request"):
        for status in ("busy", "idle"):
            IPythonKernel._publish_status(None, status, "shell", {"header": {"msg_type": kind}})
    assert published == ["busy", "idle", "busy", "idle"]


def test_install_refuses_a_reply_that_is_a_link(tmp_path, monkeypatch):
    monkeypatch.delattr(builtins, "__kit_answer__", raising=False)
    (tmp_path / "elsewhere").touch()
    (tmp_path / "reply").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError):
        install(str(tmp_path / "request"), str(tmp_path / "reply"))
    assert not hasattr(builtins, "__kit_answer__")
