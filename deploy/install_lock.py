"""Install a complete lock into the environment that runs this script, with uv, from pip's own sources.

pip spends about 0.4 s of CPU on each of the lock's two hundred packages, one after another;
uv installs the same files in a fraction of that. The machine's package sources stay pip's
settings (its configuration files and PIP_* variables: indexes, find-links, certificate), so a
machine that installs with pip installs the same with this, and the same rule picks a version:
the best one any source offers (pip's), not the first source's (uv's default).

    python deploy/install_lock.py requirements.lock
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

# Where pip reads a setting, least specific first: an `install` section overrides `global`, a variable both.
SECTIONS = ("global", "install", ":env:")
# pip's settings that say where packages come from, and uv's option for each.
SOURCE_OPTIONS = {"index-url": "--index-url", "extra-index-url": "--extra-index-url", "find-links": "--find-links"}


def pip_listing(python: str = sys.executable) -> str:
    """What `pip config list` prints: one `section.name='value'` line per setting pip found, files and variables."""
    return subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True).stdout


def pip_settings(listing: str) -> dict[str, str]:
    """pip's configuration as it applies to an install: each name's most specific value."""
    found: dict[str, dict[str, str]] = {}
    for line in listing.splitlines():
        key, _, value = line.partition("=")
        section, _, name = key.rpartition(".")
        if section in SECTIONS and value:
            found.setdefault(name, {})[section] = ast.literal_eval(value)  # pip prints each value's repr
    return {name: values[max(values, key=SECTIONS.index)] for name, values in found.items()}


def uv_options(settings: dict[str, str]) -> list[str]:
    """uv's options for pip's sources; pip's values may hold several, split by white space."""
    options = ["--index-strategy", "unsafe-best-match"]
    for name, option in SOURCE_OPTIONS.items():
        for value in settings.get(name, "").split():
            options += [option, value]
    if settings.get("no-index", "").lower() in ("1", "true", "yes", "on"):
        options.append("--no-index")
    return options


def uv_environment(settings: dict[str, str]) -> dict[str, str]:
    """This process's variables, with pip's certificate bundle (if it names one) as uv's."""
    environment = dict(os.environ)
    if settings.get("cert"):
        environment["SSL_CERT_FILE"] = settings["cert"]
    return environment


def main(lock: str) -> int:
    settings = pip_settings(pip_listing())
    uv = Path(sys.executable).with_name("uv")
    command = [str(uv), "pip", "install", "--quiet", "--no-deps", "--python", sys.executable, *uv_options(settings)]
    return subprocess.run([*command, "-r", lock], env=uv_environment(settings)).returncode


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
