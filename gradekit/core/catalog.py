"""The misconception catalog (solutions/misconceptions.toml)."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

from gradekit.core.course import REPO_ROOT

CATALOG_FILE = REPO_ROOT / "solutions" / "misconceptions.toml"


@dataclasses.dataclass(frozen=True)
class Misconception:
    id: str
    title: str
    belief: str
    diagnosis: str
    # Phrases of advice that would lead a student into this mistake ("reduce the output"): the
    # consistency rule refuses them in the advice of another diagnosis of a notebook that tests it.
    does: tuple[str, ...] = ()


def load_catalog(path: Path = CATALOG_FILE) -> dict[str, Misconception]:
    entries = tomllib.loads(Path(path).read_text())["misconception"]
    catalog: dict[str, Misconception] = {}
    for entry in entries:
        if entry["id"] in catalog:
            raise ValueError(f"misconception {entry['id']!r} is catalogued twice")
        catalog[entry["id"]] = Misconception(**{**entry, "does": tuple(entry.get("does", ()))})
    return catalog
