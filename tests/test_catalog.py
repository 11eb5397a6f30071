import re

import pytest

from gradekit.core.catalog import load_catalog

pytestmark = pytest.mark.unit

ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+){2,}$")


def test_catalog_entries_are_complete():
    catalog = load_catalog()
    assert catalog
    for misconception in catalog.values():
        assert ID.match(misconception.id), misconception.id
        assert misconception.title and misconception.belief and misconception.diagnosis


def test_a_repeated_id_is_rejected(tmp_path):
    path = tmp_path / "catalog.toml"
    entry = '[[misconception]]\nid = "x-y-z"\ntitle = "t"\nbelief = "b"\ndiagnosis = "d"\n'
    path.write_text(entry + entry)
    with pytest.raises(ValueError, match="twice"):
        load_catalog(path)


def test_what_a_mistake_does_is_read_as_phrases(tmp_path):
    path = tmp_path / "catalog.toml"
    path.write_text('[[misconception]]\nid = "x-y-z"\ntitle = "t"\nbelief = "b"\ndiagnosis = "d"\ndoes = ["sum()"]\n')
    assert load_catalog(path)["x-y-z"].does == ("sum()",)
    assert load_catalog()["sum-replaces-cotangent"].does
