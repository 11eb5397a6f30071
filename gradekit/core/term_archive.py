"""A term's archive: one tar.gz of regular files and folders, with a manifest of every file's SHA-256.

Writing reads each file once and stores exactly the bytes it hashed, so a file that changes while
the archive is written is still stored whole and with its own digest. Reading checks the whole
archive before anything is written: every member a plain file or folder under a relative path that
stays inside the target, every file listed in the manifest with the digest it has, nothing listed
that is missing. Only then are members extracted.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import io
import json
import os
import tarfile
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath

MANIFEST = "manifest.json"
FORMAT = 1


class BadArchive(ValueError):
    """An archive that will not be restored; nothing was written."""


@dataclasses.dataclass(frozen=True)
class ArchiveManifest:
    written_at: str  # ISO 8601, UTC
    facts: dict[str, str]  # what the writer records of the term: course id, gradebook kind, ...
    digests: dict[str, str]  # member name -> SHA-256 of its bytes

    def as_json(self) -> bytes:
        body = {"format": FORMAT, "written_at": self.written_at, "facts": self.facts, "files": self.digests}
        return (json.dumps(body, indent=1, sort_keys=True) + "\n").encode()


def files_under(folder: Path, prefix: str) -> Iterator[tuple[str, Path]]:
    """(member name, path) of every regular file under `folder`; links and special files are left out."""
    if not folder.is_dir():
        return
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink() and not _inside_link(path, folder):
            yield f"{prefix}/{path.relative_to(folder).as_posix()}", path


def _inside_link(path: Path, folder: Path) -> bool:
    return any(parent.is_symlink() for parent in path.relative_to(folder).parents if parent != Path("."))


def write_archive(target: Path, files: Iterable[tuple[str, Path | bytes]], facts: dict[str, str]) -> ArchiveManifest:
    """Write `files` (member name -> a path or the bytes themselves) and their manifest to `target`, atomically."""
    target = Path(target).resolve()
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    os.close(handle)
    try:
        digests: dict[str, str] = {}
        with tarfile.open(temporary, "w:gz") as archive:
            for name, source in files:
                _check_name(name)
                data = source if isinstance(source, bytes) else Path(source).read_bytes()
                digests[name] = hashlib.sha256(data).hexdigest()
                _add(archive, name, data)
            written_at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
            manifest = ArchiveManifest(written_at, dict(facts), digests)
            _add(archive, MANIFEST, manifest.as_json())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return manifest


def _add(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    info.mtime = int(datetime.datetime.now(datetime.timezone.utc).timestamp())
    archive.addfile(info, io.BytesIO(data))


def read_manifest(source: Path) -> ArchiveManifest:
    """The manifest of the archive at `source`, after checking every member against it; BadArchive if any fails."""
    try:
        with tarfile.open(source, "r:gz") as archive:
            found, manifest_bytes = _member_digests(archive)
    except (OSError, tarfile.TarError, EOFError) as error:
        raise BadArchive(f"{source} is not a readable tar.gz archive: {error}") from None
    if manifest_bytes is None:
        raise BadArchive(f"{source} has no {MANIFEST}: it was not written by `gradekit backup`")
    manifest = _parse_manifest(manifest_bytes, source)
    _compare(manifest.digests, found, source)
    return manifest


def _member_digests(archive: tarfile.TarFile) -> tuple[dict[str, str], bytes | None]:
    found: dict[str, str] = {}
    manifest_bytes = None
    for member in archive:
        _check_member(member)
        if not member.isfile():
            continue
        stream = archive.extractfile(member)
        data = stream.read() if stream else b""
        if member.name == MANIFEST:
            manifest_bytes = data
        else:
            found[member.name] = hashlib.sha256(data).hexdigest()
    return found, manifest_bytes


def _check_member(member: tarfile.TarInfo) -> None:
    if member.issym() or member.islnk():
        raise BadArchive(f"{member.name!r} is a link ({member.linkname!r}); an archive of the term holds none")
    if not (member.isfile() or member.isdir()):
        raise BadArchive(f"{member.name!r} is a device, pipe or other special file; an archive of the term holds none")
    _check_name(member.name)


def _check_name(name: str) -> None:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or not path.parts or "\\" in name:
        raise BadArchive(f"{name!r} is a path that escapes the folder it is restored into")


def _parse_manifest(data: bytes, source: Path) -> ArchiveManifest:
    try:
        body = json.loads(data)
        if body["format"] != FORMAT:
            raise BadArchive(f"{source}: archive format {body['format']!r}; this kit reads format {FORMAT}")
        return ArchiveManifest(str(body["written_at"]), dict(body["facts"]), dict(body["files"]))
    except (ValueError, KeyError, TypeError) as error:
        if isinstance(error, BadArchive):
            raise
        raise BadArchive(f"{source}: its {MANIFEST} does not read: {error}") from None


def _compare(listed: dict[str, str], found: dict[str, str], source: Path) -> None:
    changed = sorted(name for name in listed.keys() & found.keys() if listed[name] != found[name])
    missing = sorted(listed.keys() - found.keys())
    unlisted = sorted(found.keys() - listed.keys())
    problems = [
        *(f"{name}: its digest does not match the manifest's" for name in changed),
        *(f"{name}: listed in the manifest, absent from the archive" for name in missing),
        *(f"{name}: in the archive, not in the manifest" for name in unlisted),
    ]
    if problems:
        raise BadArchive(f"{source} does not match its manifest: " + "; ".join(problems[:5]))


def extract_members(source: Path, prefix: str, folder: Path) -> list[Path]:
    """Write every file of the (checked) archive under `prefix`/ into `folder`, each atomically; the files written."""
    written = []
    folder = Path(folder).resolve()
    with tarfile.open(source, "r:gz") as archive:
        for member in archive:
            if not member.isfile() or not member.name.startswith(f"{prefix}/"):
                continue
            _check_member(member)
            target = (folder / member.name[len(prefix) + 1 :]).resolve()
            if not target.is_relative_to(folder):  # a folder of the target that is a link pointing out
                raise BadArchive(f"{member.name!r} would be written outside {folder}")
            target.parent.mkdir(parents=True, exist_ok=True)
            stream = archive.extractfile(member)
            _write_whole(target, stream.read() if stream else b"")
            written.append(target)
    return written


def member_bytes(source: Path, name: str) -> bytes | None:
    """One member's bytes, or None when the archive has no such file."""
    with tarfile.open(source, "r:gz") as archive:
        try:
            stream = archive.extractfile(name)
        except KeyError:
            return None
        return stream.read() if stream else None


def _write_whole(target: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
