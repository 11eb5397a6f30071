"""The gradebook schema's version read in this process is the one nbgrader's own `alembic heads` gives."""

import nbgrader.api
import pytest
from gradebook_fixtures import ASKED_OF_A_PROCESS, schema_version
from sqlalchemy import text

pytestmark = pytest.mark.nbgrader


def test_the_version_read_in_process_is_the_one_alembic_prints():
    assert ASKED_OF_A_PROCESS is not schema_version  # the comparison is with nbgrader's own, not with itself
    assert schema_version() == ASKED_OF_A_PROCESS()


def test_every_new_gradebook_of_the_session_is_stamped_with_it(tmp_path):
    assert nbgrader.api.get_alembic_version is schema_version
    with nbgrader.api.Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        stamped = gradebook.db.execute(text("SELECT version_num FROM alembic_version")).scalar()
    assert stamped == ASKED_OF_A_PROCESS()
