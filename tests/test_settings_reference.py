"""Every setting a course may write is declared once, as a trait, and every list of settings is read from the traits."""

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest
from traitlets import HasTraits

import gradekit
from gradekit.commands.cli import main
from gradekit.commands.figures import write_figure
from gradekit.commands.settings_reference import COURSE_SETTINGS, SET_BY_THE_KIT, settings_page
from gradekit.core.settings import CourseKit

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "pages" / "figures" / "settings.md"
# The kernel's side is loaded by path inside kernels and declares no settings.
NOT_WALKED = ("gradekit.sandbox",)


def configurables_of_the_kit() -> set[type[HasTraits]]:
    """Every class of the package that declares a configurable trait of its own."""
    found = set()
    for info in pkgutil.walk_packages(gradekit.__path__, "gradekit."):
        if info.name.startswith(NOT_WALKED) or info.ispkg:
            continue
        module = importlib.import_module(info.name)
        for _, kind in inspect.getmembers(module, inspect.isclass):
            if issubclass(kind, HasTraits) and kind.__module__ == info.name and kind.class_own_traits(config=True):
                found.add(kind)
    return found


def test_every_configurable_trait_is_in_the_reference_or_set_by_the_kit_for_a_reason():
    listed = set(COURSE_SETTINGS) | set(SET_BY_THE_KIT)
    missing = sorted(kind.__qualname__ for kind in configurables_of_the_kit() - listed)
    assert not missing, f"add these to COURSE_SETTINGS, or to SET_BY_THE_KIT with why: {missing}"
    assert all(reason.strip() for reason in SET_BY_THE_KIT.values())
    assert not set(COURSE_SETTINGS) & set(SET_BY_THE_KIT)


def test_the_committed_reference_page_is_what_the_traits_declare(tmp_path):
    fresh = tmp_path / "settings.md"
    write_figure(fresh, "settings", settings_page())
    committed = PAGE.read_text().split("\n", 1)[1]
    assert committed == fresh.read_text().split("\n", 1)[1], (
        "the settings changed: python -m gradekit settings --figures docs/pages/figures/settings.md"
    )


def test_the_page_has_one_entry_per_setting_with_its_type_default_and_help():
    page = settings_page()
    for kind in COURSE_SETTINGS:
        for name, trait in kind.class_own_traits(config=True).items():
            entry = page.split(f"### `c.{kind.__name__}.{name}`\n\n", 1)[1].split("\n\n###", 1)[0]
            assert entry.startswith(f"{type(trait).__name__}, default `{trait.default_value_repr()}`.")
            assert trait.help.split()[0] in entry


def test_help_text_stays_text_in_markdown():
    page = settings_page()
    assert "c.LatePolicy.\\*" in page  # not the start of emphasis
    assert "<" not in page.replace("<!--", "")


def test_help_all_lists_every_setting_with_type_default_and_help(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--help-all"])
    assert exit.value.code == 0
    shown = capsys.readouterr().out
    for name, trait in CourseKit.class_traits(config=True).items():
        shape = "key-1>=<value-1>..." if type(trait).__name__ == "Dict" else f"{type(trait).__name__}>"
        assert f"--CourseKit.{name}=<{shape}" in shown
        assert trait.help.split()[0] in shown
    assert "Default: 8.0" in shown and "Default: 'autograd'" in shown
    assert "--LmsExportPlugin.roster=<Unicode>" in shown
    assert "--LatePolicy.cutoff_hours=<Float>" in shown and "--CourseKit.due_dates=<key-1>=<value-1>..." in shown
    assert "--LimitOutputSize.max_characters=<Int>" in shown
    assert "--help-all" in shown and "--verbose" in shown
