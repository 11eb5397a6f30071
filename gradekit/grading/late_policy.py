"""The course's late policy: nbgrader's late-submission plugin, stated as `c.LatePolicy.*` in nbgrader_config.py.

nbgrader's `AssignLatePenalties` asks the plugin, per notebook, what a late submission loses; lateness is
measured by nbgrader from the gradebook's due date, which includes the student's extension. A share of the
score is lost for every started period (hour or day), up to a cap; after the hard cut-off the whole score
is lost and the class report and the command's table tell the TA.

This module imports nothing of the kit: the configuration loads it by its path, so that plain nbgrader
can use it without the kit on its import path.
"""

from __future__ import annotations

import math
from types import MappingProxyType

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Bunch, Enum, Float, TraitError, validate

PERIOD_SECONDS = MappingProxyType({"hour": 3600, "day": 86400})


class LatePolicy(LateSubmissionPlugin):
    """A share of the score per started hour or day late, a cap, and a hard cut-off after which the score is 0."""

    per = Enum(
        ("hour", "day"),
        default_value="day",
        help="The period the penalty counts: each started 'hour' or 'day' after the due date (or extension).",
    ).tag(config=True)

    share_per_period = Float(
        0.0,
        help=(
            "Share of the notebook's score lost for each started period late (0.1: a tenth per started day). "
            "0 takes nothing before the cut-off."
        ),
    ).tag(config=True)

    cap = Float(
        1.0,
        help="The largest share of the score the periods may take before the cut-off (0.5: at most half).",
    ).tag(config=True)

    cutoff_hours = Float(
        0.0,
        help=(
            "Hours after the due date (or the student's extension) from which a submission scores 0; "
            "the class report and the grading command name every such student for the TA. 0: no cut-off."
        ),
    ).tag(config=True)

    @validate("share_per_period", "cap")
    def _a_share(self, proposal: Bunch) -> float:
        value = proposal["value"]
        if not 0 <= value <= 1:
            raise TraitError(f"LatePolicy.{proposal['trait'].name} must be a share between 0 and 1, got {value}")
        return value

    @validate("cutoff_hours")
    def _not_negative(self, proposal: Bunch) -> float:
        value = proposal["value"]
        if value < 0:
            raise TraitError(f"LatePolicy.cutoff_hours must not be negative, got {value}")
        return value

    def past_cutoff(self, total_seconds_late: float) -> bool:
        return bool(self.cutoff_hours) and total_seconds_late > self.cutoff_hours * 3600

    def share_lost(self, total_seconds_late: float) -> float:
        """The share of the score a submission this late loses: 0 on time, 1 past the cut-off."""
        if total_seconds_late <= 0:
            return 0.0
        if self.past_cutoff(total_seconds_late):
            return 1.0
        periods = math.ceil(total_seconds_late / PERIOD_SECONDS[self.per])
        return min(self.cap, self.share_per_period * periods)

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float) -> float:
        """What nbgrader subtracts from this notebook's score (nbgrader keeps it between 0 and the score)."""
        penalty = round(score * self.share_lost(total_seconds_late), 6)
        self.log.info("%s: %.0f s late, loses %g of %g", student_id, total_seconds_late, penalty, score)
        return penalty

    def describe(self) -> str:
        """The policy in one sentence, for the pages and the report."""
        if not self.share_per_period and not self.cutoff_hours:
            return "no late penalty"
        parts = []
        if self.share_per_period:
            parts.append(
                f"{self.share_per_period:.0%} of the score per started {self.per} late, at most {self.cap:.0%}"
            )
        if self.cutoff_hours:
            parts.append(f"0 after {self.cutoff_hours:g} h late")
        return "; ".join(parts)
