"""The pre-check's JupyterLab button ships prebuilt: the committed bundle is built from the committed sources."""

import importlib.util
import json

import pytest

from gradekit.core.course import REPO_ROOT

pytestmark = pytest.mark.unit
LAB = REPO_ROOT / "deploy" / "precheck-lab"


def _digest_module():
    spec = importlib.util.spec_from_file_location("precheck_lab_digest", LAB / "inputs_digest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_bundle_was_built_from_the_sources_as_they_are_now():
    digest = _digest_module()
    recorded = digest.RECORD.read_text().strip()
    assert recorded == digest.inputs_digest(), (
        "deploy/precheck-lab changed since its bundle was built: make precheck-lab"
    )


def test_the_bundle_is_a_prebuilt_extension_whose_entry_point_is_there():
    built = json.loads((LAB / "labextension" / "package.json").read_text())
    assert built["name"] == "kit-precheck"
    assert (LAB / "labextension" / built["jupyterlab"]["_build"]["load"]).is_file()


def test_every_text_from_the_service_is_shown_as_text_not_markup():
    source = (LAB / "lib" / "index.js").read_text()
    assert "innerHTML" not in source and "textContent" in source
