"""`gradekit backup ARCHIVE` and `gradekit restore ARCHIVE`: the term's state in one archive, and back.

The archive holds what a course folder cannot make again: the gradebook (copied consistently while
it may be in use), the submissions (submitted/ and the exchange's inbound, whose files are the only
copy of a submission before `nbgrader collect`), what was released (the exchange's outbound,
source/ and release/), the graded copies, the extensions, the class report's records (rows.json)
and the course's configuration; with --precheck-state, the pre-check's state folder and its audit
log too. Feedback pages are made again from the gradebook by `grade --reports-only`.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

from gradekit.core.course import Course, load_course
from gradekit.core.term_archive import (
    ArchiveManifest,
    BadArchive,
    extract_members,
    files_under,
    member_bytes,
    read_manifest,
    write_archive,
)
from gradekit.grading.exchange import ensure_exchange
from gradekit.grading.gradebook_copy import (
    GradebookCopyError,
    copy_gradebook,
    gradebook_member,
    gradebook_present,
    load_gradebook,
)

CONFIG_NAME = "nbgrader_config.py"
COURSE_FILES = (CONFIG_NAME, "extensions.json", "grades.csv", "lms-roster.csv", "lms-grades.csv")
COURSE_FOLDERS = ("source", "release", "submitted", "autograded", "class-report")
EXCHANGE_FOLDERS = ("inbound", "outbound")


def term_files(course: Course, precheck_state: Path | None) -> list[tuple[str, Path | bytes]]:
    """Every member of the course's archive, by name: files of the course, the gradebook's copy, the exchange."""
    root = course.root
    members: list[tuple[str, Path | bytes]] = [
        (f"course/{name}", root / name) for name in COURSE_FILES if (root / name).is_file()
    ]
    for folder in COURSE_FOLDERS:
        members.extend(files_under(root / folder, f"course/{folder}"))
    members.append((gradebook_member(course.db_url), copy_gradebook(course.db_url)))
    for folder in EXCHANGE_FOLDERS:
        members.extend(files_under(course.exchange_root / course.course_id / folder, f"exchange/{folder}"))
    if precheck_state is not None:
        members.extend(files_under(precheck_state, "precheck"))
    return members


def backup(course: Course, archive: Path, precheck_state: Path | None = None) -> int:
    if precheck_state is not None and not precheck_state.is_dir():
        print(f"backup: --precheck-state {precheck_state} is not a folder; nothing was written", file=sys.stderr)
        return 2
    facts = {
        "course_id": course.course_id,
        "assignment_id": course.assignment_id,
        "course_root": str(course.root),
        "exchange_root": str(course.exchange_root),
    }
    try:
        manifest = write_archive(archive, term_files(course, precheck_state), facts)
    except (GradebookCopyError, OSError) as error:
        print(f"backup: {error}; nothing was written", file=sys.stderr)
        return 2
    print(f"backup of {course.course_id} written to {Path(archive).resolve()} ({manifest.written_at})")
    print(_contents(manifest))
    return 0


def _contents(manifest: ArchiveManifest) -> str:
    """One line per part of the archive with its number of files."""
    counts: dict[str, int] = {}
    for name in manifest.digests:
        parts = name.split("/")
        part = "/".join(parts[:2]) if parts[0] in ("course", "exchange") and len(parts) > 2 else parts[0]
        counts[part] = counts.get(part, 0) + 1
    return "\n".join(f"  {part:<24} {count} file(s)" for part, count in sorted(counts.items()))


class RefusedRestore(ValueError):
    """A restore that would overwrite the term or cannot place the archive; nothing was changed."""


@dataclasses.dataclass(frozen=True)
class RestorePlan:
    course: Course  # as the archive's configuration makes it in the target folder
    manifest: ArchiveManifest
    precheck_state: Path | None


def restore(target: Path, archive: Path, replace: bool = False, precheck_state: Path | None = None) -> int:
    """Restore `archive` into the course folder `target`, after every check; 2 and nothing changed if one fails."""
    try:
        plan = plan_restore(Path(target).resolve(), Path(archive), replace, precheck_state)
    except (BadArchive, RefusedRestore, GradebookCopyError) as error:
        print(f"restore: {error}; nothing was changed", file=sys.stderr)
        return 2
    carry_out(plan, Path(archive))
    course = plan.course
    print(f"restored {course.course_id} from {archive} (backed up {plan.manifest.written_at}) into {course.root}")
    print(f"exchange: {course.exchange_root / course.course_id}")
    if plan.precheck_state:
        print(f"pre-check state: {plan.precheck_state}")
    elif any(name.startswith("precheck/") for name in plan.manifest.digests):
        print("the archive also holds the pre-check's state: restore it with --precheck-state DIR")
    print("feedback pages are made again from the gradebook: python -m gradekit grade --reports-only")
    return 0


def plan_restore(target: Path, archive: Path, replace: bool, precheck_state: Path | None) -> RestorePlan:
    manifest = read_manifest(archive)
    config = member_bytes(archive, f"course/{CONFIG_NAME}")
    if config is None:
        raise BadArchive(f"{archive} holds no course/{CONFIG_NAME}")
    if not target.is_dir():
        raise RefusedRestore(f"{target} is not a folder: make the course folder first")
    course = course_as_restored(target, config)
    if gradebook_member(course.db_url) not in manifest.digests:
        raise RefusedRestore(f"the archive's gradebook is not of the kind this course uses ({course.db_url})")
    if not replace and gradebook_present(course.db_url):
        raise RefusedRestore(f"{target} already has a gradebook ({course.db_url}); give --replace to overwrite it")
    if precheck_state is not None and not replace and precheck_state.exists() and any(precheck_state.iterdir()):
        raise RefusedRestore(f"--precheck-state {precheck_state} is not empty; give --replace to overwrite it")
    return RestorePlan(course, manifest, precheck_state)


def course_as_restored(target: Path, config: bytes) -> Course:
    """The course the archive's configuration describes when it sits in `target` (read beside it, then removed)."""
    staged = target / f".restore-{os.getpid()}-{CONFIG_NAME}"
    staged.write_bytes(config)
    try:
        course = load_course(staged)
    except Exception as error:  # noqa: BLE001  (a configuration is Python: any error means it does not load here)
        raise RefusedRestore(f"the archive's {CONFIG_NAME} does not load in {target}: {error}") from None
    finally:
        staged.unlink()
    if course.root.resolve() != target:
        raise RefusedRestore(f"the archive's {CONFIG_NAME} puts the course in {course.root}, not in {target}")
    return course


def carry_out(plan: RestorePlan, archive: Path) -> None:
    course = plan.course
    extract_members(archive, "course", course.root)
    member = gradebook_member(course.db_url)
    load_gradebook(course.db_url, member_bytes(archive, member) or b"")
    ensure_exchange(course.exchange_root, course.course_id)
    for folder in EXCHANGE_FOLDERS:
        extract_members(archive, f"exchange/{folder}", course.exchange_root / course.course_id / folder)
    if plan.precheck_state is not None:
        plan.precheck_state.mkdir(parents=True, exist_ok=True)
        extract_members(archive, "precheck", plan.precheck_state)
