"""The digest of everything the pre-check lab extension is built from; the built bundle records it.

`make precheck-lab` rebuilds the bundle and writes this digest beside it
(labextension/build-inputs.sha256); a unit test recomputes it from the sources,
so a source edited without a rebuild fails the tests, with no node needed to tell.
"""

import hashlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
INPUTS = ("package.json", "package-lock.json", "lib", "style")
RECORD = HERE / "labextension" / "build-inputs.sha256"


def inputs_digest(folder: Path = HERE) -> str:
    digest = hashlib.sha256()
    for name in INPUTS:
        entry = folder / name
        for path in sorted(entry.rglob("*")) if entry.is_dir() else [entry]:
            if path.is_file():
                digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


if __name__ == "__main__":
    RECORD.write_text(inputs_digest() + "\n")
    sys.exit(0)
