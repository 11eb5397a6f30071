"""nbgrader's collect, with symbolic links copied as links, and no submission taken in another's name or time.

nbgrader's own collect copies each submission out of the exchange with the TA's
permissions and follows every symbolic link on the way: a link a student leaves
in the inbound (to a classmate's submission, to a course file) would reach
submitted/ as a plain copy of its target, and a link to a folder would copy
that whole folder. Kept as a link, intake refuses it when the submission is
graded.

The inbound is writable by every student, and nbgrader believes what a
submission's folder name and its timestamp.txt say. A folder named for a
classmate but owned by another account is not collected (nbgrader only warns);
and a submission that claims a time well before its folder was last changed (a
time no student can set) is collected with that change's time instead, so a
late submission cannot be backdated. Folders the collecting account owns itself
(its own tests, a restored backup) are taken as they say.

Like preprocessors.py, this module imports nothing of the kit: the
configuration loads it by its path.
"""

import datetime
import os
import pwd
import shutil
from typing import Any

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import ignore_patterns, parse_utc

TIMESTAMP = "timestamp.txt"
# nbgrader submit notes the time, copies the files, then writes timestamp.txt: the folder's last
# change follows the noted time by the copy's seconds. Anything further back is not believed.
CLAIM_TOLERANCE_SECONDS = 600


class LinkKeepingCollect(ExchangeCollect):
    def _sort_by_timestamp(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Newest first, a student's own submissions before any made in their name by another account."""
        forged = [record for record in records if self._forged(record)]
        genuine = [record for record in records if record not in forged]
        return super()._sort_by_timestamp(genuine) + super()._sort_by_timestamp(forged)

    def copy_files(self) -> None:
        for record in [record for record in self.src_records if self._forged(record)]:
            self.log.error(
                "%s is not collected: it is named for %s but another account made it",
                record["filename"],
                record["username"],
            )
            self.src_records.remove(record)
        super().copy_files()

    def _forged(self, record: dict[str, Any]) -> bool:
        """Made in the student's name by an account that is neither the student's nor the collector's."""
        owner = os.lstat(os.path.join(self.inbound_path, record["filename"])).st_uid
        if owner == os.getuid():
            return False
        try:
            return pwd.getpwuid(owner).pw_name != record["username"]
        except KeyError:
            return True

    def do_copy(self, src: str, dest: str, log: object = None) -> None:
        size = self.get_size(src)
        if size > 1000 * self.coursedir.max_dir_size:
            self.log.error("Directory size is too big")
            raise RuntimeError(
                f"Directory size is too big. Size is {size}, maximum size is {1000 * self.coursedir.max_dir_size}"
            )
        ignore = ignore_patterns(
            exclude=self.coursedir.ignore,
            include=self.coursedir.include,
            max_file_size=self.coursedir.max_file_size,
            log=self.log,
        )
        shutil.copytree(src, dest, symlinks=True, ignore=ignore)
        self._believe_no_earlier_time(src, dest)
        if self.coursedir.groupshared:
            _share_with_group(dest)

    def _believe_no_earlier_time(self, src: str, dest: str) -> None:
        """A submission of another account's that claims a time well before its folder last changed gets that change's."""
        folder = os.lstat(src)
        claimed_file = os.path.join(dest, TIMESTAMP)
        if folder.st_uid == os.getuid() or os.path.islink(claimed_file) or not os.path.isfile(claimed_file):
            return  # the collector's own, or no time a student could claim (intake judges those)
        changed = datetime.datetime.fromtimestamp(folder.st_ctime, datetime.timezone.utc)
        try:
            with open(claimed_file) as handle:
                claimed = parse_utc(handle.read(200).strip()).replace(tzinfo=datetime.timezone.utc)
        except (OSError, ValueError, OverflowError):
            return  # an unreadable claim: intake reports it on the student's own row
        if claimed < changed - datetime.timedelta(seconds=CLAIM_TOLERANCE_SECONDS):
            self.log.warning("%s claims %s but was last changed at %s: collected as %s", src, claimed, changed, changed)
            with open(claimed_file, "w") as handle:
                handle.write(changed.strftime(self.timestamp_format))


def _share_with_group(root: str) -> None:
    """What nbgrader does for a group-shared course (folders ug+rwx, files ug+rw), links left alone."""
    for folder, _, names in os.walk(root):
        _add_mode(folder, 0o2770, 0o2777)
        for name in names:
            _add_mode(os.path.join(folder, name), 0o660, 0o777)


def _add_mode(path: str, wanted: int, mask: int) -> None:
    if os.path.islink(path):
        return
    mode = os.stat(path).st_mode
    if mode & wanted != wanted:
        try:
            os.chmod(path, (mode | wanted) & mask)
        except PermissionError:
            pass
