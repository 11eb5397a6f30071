"""Every setting a course writes in nbgrader_config.py, read from the traits that declare it.

`--help-all` prints them as nbgrader prints its own, and the docs' settings reference page is
rendered from them (`python -m gradekit settings --figures PATH`), so no list of settings is typed
by hand. A trait is the one place a setting lives: its type, default and help.
"""

from __future__ import annotations

from types import MappingProxyType

from traitlets import HasTraits, TraitType
from traitlets.config import Configurable

from gradekit.core.settings import CourseKit, Precheck
from gradekit.grading.late_policy import LatePolicy
from gradekit.grading.output_limits import LimitOutputSize
from gradekit.grading.safe_execute import SafeExecute
from gradekit.grading.warm_kernels import WarmExecute, WarmProvisioner
from gradekit.lms.export_plugin import LmsExportPlugin

# What a course may set, in the order a course lead meets them.
COURSE_SETTINGS: tuple[type[Configurable], ...] = (CourseKit, LatePolicy, Precheck, LimitOutputSize, LmsExportPlugin)

# Traits the kit itself sets on nbgrader's steps for each run (nbgrader's configuration is how a
# step is handed them); a course never writes them, so the reference leaves them out.
SET_BY_THE_KIT: MappingProxyType[type[HasTraits], str] = MappingProxyType(
    {
        SafeExecute: "the scratch grader hands each run's hidden lines and sealed sources to its Execute step",
        WarmExecute: "the scratch grader hands each Execute step the run's result sink",
        WarmProvisioner: "the scratch grader copies CourseKit.allow_unconfined onto its kernels' provisioner",
    }
)

HEADING = "Settings the kit reads from nbgrader_config.py; set each --Class.name below there as c.Class.name = value."


def settings_help() -> str:
    """The course's settings as nbgrader's --help-all shows its own: name, type, help and default."""
    return "\n\n".join([HEADING, *(kind.class_get_help() for kind in COURSE_SETTINGS)])


def settings_page() -> str:
    """The settings reference as Markdown: one section per class, one entry per setting."""
    return "\n\n".join(_class_section(kind) for kind in COURSE_SETTINGS)


def _class_section(kind: type[Configurable]) -> str:
    summary = " ".join((kind.__doc__ or "").strip().split("\n\n")[0].split())
    entries = [_trait_entry(kind.__name__, name, trait) for name, trait in sorted(_own_settings(kind).items())]
    return "\n\n".join([f"## `c.{kind.__name__}`", summary, *entries])


def _own_settings(kind: type[HasTraits]) -> dict[str, TraitType]:
    return kind.class_own_traits(config=True)


def _trait_entry(owner: str, name: str, trait: TraitType) -> str:
    help_text = _markdown_text(" ".join(trait.help.split()))
    return f"### `c.{owner}.{name}`\n\n{type(trait).__name__}, default `{trait.default_value_repr()}`.\n\n{help_text}"


def _markdown_text(text: str) -> str:
    """Help written as plain text, kept plain in Markdown: a `*` or `<` in it is a character, not markup."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace("*", "\\*")
