"""deploy/install_lock.py: pip's sources, read from what `pip config list` prints, handed to uv.

The install itself (uv from the lock, on Debian's own python3) is `test_system_python_environment.py`.
"""

import importlib.util

import pytest

from gradekit.core.course import REPO_ROOT

pytestmark = pytest.mark.unit


def _load_module():
    """Loaded by path, as the Makefile runs it."""
    spec = importlib.util.spec_from_file_location("install_lock_under_test", REPO_ROOT / "deploy" / "install_lock.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


install_lock = _load_module()

LISTING = """\
:env:.default-timeout='180'
:env:.find-links='/srv/wheels'
global.cert='/etc/ssl/certs/ca-certificates.crt'
global.extra-index-url='https://mirror.example/simple file:///srv/more/simple'
global.find-links='/elsewhere'
install.index-url='https://install.example/simple'
global.index-url='https://global.example/simple'
"""


def test_the_most_specific_value_of_each_setting_wins_a_variable_over_a_section_over_global():
    settings = install_lock.pip_settings(LISTING)
    assert settings["find-links"] == "/srv/wheels"
    assert settings["index-url"] == "https://install.example/simple"
    assert settings["extra-index-url"] == "https://mirror.example/simple file:///srv/more/simple"
    assert settings["default-timeout"] == "180"


def test_each_source_becomes_uvs_option_and_any_source_may_offer_the_best_version():
    options = install_lock.uv_options(install_lock.pip_settings(LISTING))
    assert options[:2] == ["--index-strategy", "unsafe-best-match"]
    pairs = list(zip(options[2::2], options[3::2]))
    assert pairs == [
        ("--index-url", "https://install.example/simple"),
        ("--extra-index-url", "https://mirror.example/simple"),
        ("--extra-index-url", "file:///srv/more/simple"),
        ("--find-links", "/srv/wheels"),
    ]


def test_no_index_is_kept_and_a_machine_without_settings_uses_uvs_defaults():
    assert install_lock.uv_options(install_lock.pip_settings("global.no-index='true'\n"))[-1] == "--no-index"
    assert install_lock.uv_options(install_lock.pip_settings("")) == ["--index-strategy", "unsafe-best-match"]


def test_pips_certificate_bundle_is_uvs_and_nothing_else_of_the_environment_changes(monkeypatch):
    monkeypatch.setenv("KEPT", "1")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    environment = install_lock.uv_environment(install_lock.pip_settings(LISTING))
    assert environment["SSL_CERT_FILE"] == "/etc/ssl/certs/ca-certificates.crt"
    assert environment["KEPT"] == "1"
    assert "SSL_CERT_FILE" not in install_lock.uv_environment({})
