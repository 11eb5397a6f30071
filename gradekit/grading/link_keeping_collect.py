"""nbgrader's collect, with symbolic links copied as links instead of followed.

nbgrader's own collect copies each submission out of the exchange with the TA's
permissions and follows every symbolic link on the way: a link a student leaves
in the inbound (to a classmate's submission, to a course file) would reach
submitted/ as a plain copy of its target, and a link to a folder would copy
that whole folder. Kept as a link, intake refuses it when the submission is
graded. Like preprocessors.py, this module imports nothing of the kit: the
configuration loads it by its path.
"""

import os
import shutil

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import ignore_patterns


class LinkKeepingCollect(ExchangeCollect):
    def do_copy(self, src, dest, log=None):
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
        if self.coursedir.groupshared:
            _share_with_group(dest)


def _share_with_group(root):
    """What nbgrader does for a group-shared course (folders ug+rwx, files ug+rw), links left alone."""
    for folder, _, names in os.walk(root):
        _add_mode(folder, 0o2770, 0o2777)
        for name in names:
            _add_mode(os.path.join(folder, name), 0o660, 0o777)


def _add_mode(path, wanted, mask):
    if os.path.islink(path):
        return
    mode = os.stat(path).st_mode
    if mode & wanted != wanted:
        try:
            os.chmod(path, (mode | wanted) & mask)
        except PermissionError:
            pass
