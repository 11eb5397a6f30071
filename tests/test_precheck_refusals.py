"""Why a pre-check request was not taken: one word and one HTTP status per reason, a reply body said at the edge."""

import pytest

from gradekit.precheck.refusals import Reason, Refusal

pytestmark = pytest.mark.unit


def test_each_reason_has_its_own_word_and_an_http_error_status():
    assert len({reason.word for reason in Reason}) == len(Reason)
    assert all(400 <= reason.status < 600 for reason in Reason)
    assert (Reason.COOLDOWN.word, Reason.COOLDOWN.status) == ("cooldown", 429)
    assert (Reason.NOT_SIGNED_IN.word, Reason.NOT_SIGNED_IN.status) == ("not signed in", 401)


def test_the_reply_body_says_the_reason_and_message_and_only_what_was_given_beside_them():
    assert Refusal(Reason.FORGED, "this request names another student").as_json() == {
        "error": "forged",
        "message": "this request names another student",
    }
    last = {"status": "graded", "score": 1.0}
    body = Refusal(Reason.COOLDOWN, "wait a little", retry_after=12.345, last=last).as_json()
    assert body == {"error": "cooldown", "message": "wait a little", "retry_after": 12.3, "last": last}
