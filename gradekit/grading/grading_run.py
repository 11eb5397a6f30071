"""One grading run as a typed value: what the coordinator decided, handed to every worker.

The coordinator builds it once from the course (`GradingRun.of`) and writes it
beside the run's template; each worker, on this machine or another, reads it
back (`GradingRun.read`) and grades exactly as the coordinator asked. The
kit's settings are every `c.CourseKit.*` trait, taken by iterating over the
traits and checked by them again when read: a new setting is one trait with
help, and it travels with nothing else to change. The late policy's
`c.LatePolicy.*` travels the same way, so that a worker penalises as the
coordinator's course says.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Mapping

from gradekit.core.course import Course, kit_settings
from gradekit.core.settings import CourseKit
from gradekit.grading.late_policy import LatePolicy

RUN_FILE = "grading-settings.json"
DEFAULT_CELL_SECONDS = 60  # the course configuration's Execute.timeout, for a template no run wrote


@dataclasses.dataclass(frozen=True)
class GradingRun:
    """The settings of one grading run, the same in the coordinator and in every worker."""

    kit: CourseKit  # every c.CourseKit.* setting, as the coordinator's course had it
    cell_timeout: int  # seconds each cell may run (Execute.timeout, or the run's override)
    protected_roots: tuple[str, ...]  # folders no kernel may read: the course's root and its exchange
    late_policy: Mapping[str, object] = dataclasses.field(default_factory=dict)  # c.LatePolicy.*, by trait name

    @classmethod
    def of(cls, course: Course, cell_timeout: int | None = None) -> GradingRun:
        """The run the coordinator of `course` grades; `cell_timeout` overrides the course's limit."""
        return cls(
            kit=CourseKit(**kit_settings(course)),
            cell_timeout=int(cell_timeout or course.cell_timeout),
            protected_roots=tuple(str(Path(root).resolve()) for root in (course.root, course.exchange_root)),
            late_policy=late_policy_settings(LatePolicy(config=course.nbgrader_config)),
        )

    @property
    def attempts(self) -> int:
        """Tries of a submission whose grading failed for the grader's own reason."""
        return self.kit.grader_attempts

    @property
    def first_wait(self) -> float:
        """Seconds before the second try; each later try waits twice as long."""
        return self.kit.retry_backoff_seconds

    def applied_to(self, course: Course) -> Course:
        """`course` (a worker's own) with this run's kit settings and late policy."""
        config = copy.deepcopy(course.nbgrader_config)
        for name, value in self.late_policy.items():
            config.LatePolicy[name] = value
        return dataclasses.replace(course, nbgrader_config=config, **kit_settings(self.kit))  # type: ignore[arg-type]

    def write(self, template_root: Path) -> None:
        values = {"cell_timeout": self.cell_timeout, "protected_roots": list(self.protected_roots)}
        stated = {"kit": kit_settings(self.kit), "late_policy": dict(self.late_policy)}
        (Path(template_root) / RUN_FILE).write_text(json.dumps({**values, **stated}))

    @classmethod
    def read(cls, template_root: Path, course: Course | None = None) -> GradingRun:
        """The run that wrote `template_root`, its settings checked by their traits.

        A template no run wrote is graded as `course` says, or with the settings' defaults.
        """
        run_file = Path(template_root) / RUN_FILE
        if not run_file.exists():
            return cls.of(course) if course else cls(CourseKit(), DEFAULT_CELL_SECONDS, ())
        values = json.loads(run_file.read_text())
        return cls(
            kit=CourseKit(**values["kit"]),
            cell_timeout=int(values["cell_timeout"]),
            protected_roots=tuple(values["protected_roots"]),
            late_policy=late_policy_settings(LatePolicy(**values.get("late_policy", {}))),  # checked by its traits
        )


def late_policy_settings(policy: LatePolicy) -> dict[str, object]:
    """The `c.LatePolicy.*` settings of `policy` as plain values, by trait name."""
    return {name: getattr(policy, name) for name in sorted(LatePolicy.class_own_traits(config=True))}
