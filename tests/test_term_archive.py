"""The term's archive: what it writes, and every archive it refuses before writing anything."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile

import pytest

from gradekit.core.term_archive import (
    MANIFEST,
    BadArchive,
    extract_members,
    files_under,
    member_bytes,
    read_manifest,
    write_archive,
)

pytestmark = pytest.mark.unit


def crafted(path, members, manifest_files=None, extra=()):
    """A tar.gz of `members` (name -> bytes) with a manifest listing `manifest_files` (default: their digests)."""
    listed = (
        manifest_files if manifest_files is not None else {n: hashlib.sha256(d).hexdigest() for n, d in members.items()}
    )
    body = {"format": 1, "written_at": "2026-12-03T08:00:00+00:00", "facts": {}, "files": listed}
    with tarfile.open(path, "w:gz") as archive:
        for name, data in [*members.items(), (MANIFEST, json.dumps(body).encode())]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for info in extra:
            archive.addfile(info)
    return path


def test_an_archive_round_trips_with_its_manifest_and_leaves_links_out(tmp_path):
    folder = tmp_path / "course"
    (folder / "submitted" / "ada").mkdir(parents=True)
    (folder / "submitted" / "ada" / "010.ipynb").write_text("{}")
    (folder / "submitted" / "link").symlink_to(tmp_path)
    members = [*files_under(folder / "submitted", "course/submitted"), ("gradebook/gradebook.db", b"db")]
    archive = tmp_path / "term.tar.gz"
    written = write_archive(archive, members, {"course_id": "autograd"})
    assert sorted(written.digests) == ["course/submitted/ada/010.ipynb", "gradebook/gradebook.db"]
    assert read_manifest(archive) == written
    assert written.facts == {"course_id": "autograd"}
    assert member_bytes(archive, "gradebook/gradebook.db") == b"db"
    restored = tmp_path / "restored"
    assert extract_members(archive, "course", restored) == [(restored / "submitted/ada/010.ipynb").resolve()]
    assert (restored / "submitted/ada/010.ipynb").read_text() == "{}"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left behind


def test_a_failed_write_leaves_no_archive_and_no_temporary(tmp_path):
    archive = tmp_path / "term.tar.gz"
    with pytest.raises(FileNotFoundError):
        write_archive(archive, [("course/x", tmp_path / "absent")], {})
    assert list(tmp_path.iterdir()) == []


def test_an_archive_whose_digest_does_not_match_is_refused(tmp_path):
    archive = crafted(tmp_path / "a.tar.gz", {"course/x": b"changed"}, {"course/x": hashlib.sha256(b"x").hexdigest()})
    with pytest.raises(BadArchive, match="course/x: its digest does not match"):
        read_manifest(archive)


def test_a_file_missing_from_the_archive_or_missing_from_the_manifest_is_refused(tmp_path):
    missing = crafted(tmp_path / "m.tar.gz", {}, {"course/x": "0" * 64})
    with pytest.raises(BadArchive, match="listed in the manifest, absent"):
        read_manifest(missing)
    unlisted = crafted(tmp_path / "u.tar.gz", {"course/x": b"x"}, {})
    with pytest.raises(BadArchive, match="in the archive, not in the manifest"):
        read_manifest(unlisted)


@pytest.mark.parametrize("name", ["../outside", "/etc/passwd", "course/../../outside"])
def test_a_path_that_escapes_the_folder_is_refused(tmp_path, name):
    archive = crafted(tmp_path / "a.tar.gz", {name: b"x"})
    with pytest.raises(BadArchive, match="escapes the folder"):
        read_manifest(archive)


@pytest.mark.parametrize(
    ("kind", "said"), [(tarfile.SYMTYPE, "is a link"), (tarfile.LNKTYPE, "is a link"), (tarfile.CHRTYPE, "device")]
)
def test_a_link_or_a_device_in_the_archive_is_refused(tmp_path, kind, said):
    special = tarfile.TarInfo("course/special")
    special.type = kind
    special.linkname = "/etc/passwd" if kind != tarfile.CHRTYPE else ""
    archive = crafted(tmp_path / "a.tar.gz", {}, extra=[special])
    with pytest.raises(BadArchive, match=said):
        read_manifest(archive)


def test_an_archive_without_a_manifest_or_not_an_archive_is_refused(tmp_path):
    bare = tmp_path / "bare.tar.gz"
    with tarfile.open(bare, "w:gz"):
        pass
    with pytest.raises(BadArchive, match="has no manifest.json"):
        read_manifest(bare)
    text = tmp_path / "text.tar.gz"
    text.write_text("not an archive")
    with pytest.raises(BadArchive, match="not a readable tar.gz"):
        read_manifest(text)
